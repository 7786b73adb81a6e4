"""lancefile: read and write Lance v2 columnar files from Python.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "example.lance")
    >>> lancefile.write_table(pa.table({"id": [1, 2, 3]}), path)
    >>> lancefile.read_table(path).column("id").to_pylist()
    [1, 2, 3]
"""

from .api import iter_batches, read_metadata, read_schema, read_table, write_table
from .errors import (
    ChecksumError,
    ColumnNotFoundError,
    CommitConflictError,
    CorruptFileError,
    InvalidInputError,
    LanceError,
    LanceIOError,
    NotALanceFileError,
    SchemaMismatchError,
    StorageTypeWarning,
    UnsupportedEncodingError,
    UnsupportedTypeError,
    UnsupportedVersionError,
)
from .reader import LanceFileReader
from .results import FileMetadata, ReaderResults
from .writer import LanceFileWriter, WriterOptions
from .verification import VerifyReport, verify
from .datasets import LanceDataset, LanceFragment, dataset, write_dataset

__version__ = "0.1.0"

__all__ = [
    "LanceFileReader",
    "LanceFileWriter",
    "ReaderResults",
    "FileMetadata",
    "WriterOptions",
    "read_table",
    "write_table",
    "iter_batches",
    "read_schema",
    "read_metadata",
    "LanceError",
    "LanceIOError",
    "NotALanceFileError",
    "CorruptFileError",
    "ChecksumError",
    "StorageTypeWarning",
    "verify",
    "VerifyReport",
    "UnsupportedVersionError",
    "UnsupportedEncodingError",
    "UnsupportedTypeError",
    "InvalidInputError",
    "SchemaMismatchError",
    "ColumnNotFoundError",
    "CommitConflictError",
    "LanceDataset",
    "LanceFragment",
    "dataset",
    "write_dataset",
]
