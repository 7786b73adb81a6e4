"""pyarrow.parquet-style functions: :func:`read_table`, :func:`write_table`, :func:`iter_batches`.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.lance")
    >>> lancefile.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), path)
    >>> lancefile.read_table(path, columns=["b"]).to_pydict()
    {'b': ['x', 'y']}
    >>> [len(b) for b in lancefile.iter_batches(path, batch_size=1)]
    [1, 1]
"""

from __future__ import annotations

from typing import Iterator, Sequence

import pyarrow as pa

from .errors import InvalidInputError
from .reader import DEFAULT_BATCH_SIZE, LanceFileReader
from .writer import LanceFileWriter

__all__ = ["read_table", "write_table", "iter_batches"]


def read_table(source, columns: Sequence[str] | None = None, *, batch_size: int = 64 * 1024,
               filters=None, verify_checksums: bool = True) -> pa.Table:
    """Read a whole Lance file (or the given columns) into a Table.

    ``filters``: a ``pyarrow.compute.Expression`` or pyarrow.parquet's DNF form
    (``[("a", ">", 5), ("b", "in", {"x", "y"})]``, a list of such lists for OR); only
    matching rows are returned, in file order, and zones the file's statistics rule out are
    never read. ``verify_checksums``: see :class:`LanceFileReader`.
    """
    with LanceFileReader(source, columns=columns, verify_checksums=verify_checksums) as reader:
        return reader.read_all(batch_size=batch_size, filter=filters).to_table()


def iter_batches(source, batch_size: int = DEFAULT_BATCH_SIZE, columns: Sequence[str] | None = None, *,
                 filters=None, verify_checksums: bool = True) -> Iterator[pa.RecordBatch]:
    """Stream a Lance file as record batches of at most ``batch_size`` rows (see :func:`read_table` for
    ``filters`` and ``verify_checksums``)."""
    with LanceFileReader(source, columns=columns, verify_checksums=verify_checksums) as reader:
        yield from reader.read_all(batch_size=batch_size, filter=filters)


def write_table(table, where, **options) -> None:
    """Write a Table, RecordBatch or RecordBatchReader to ``where``.

    ``options`` are those of :class:`LanceFileWriter` (``version``, ``max_page_bytes``,
    ``data_cache_bytes``, ``alignment``) plus ``schema_metadata`` (a dict added to the
    file's schema metadata). On any failure nothing is left at ``where``.
    """
    extra = options.pop("schema_metadata", None) or {}
    if isinstance(table, pa.RecordBatchReader):
        schema, batches = table.schema, table
    elif isinstance(table, (pa.Table, pa.RecordBatch)):
        schema, batches = table.schema, [table]
    else:
        raise InvalidInputError(f"write_table takes a pyarrow Table, RecordBatch or RecordBatchReader, not {type(table).__name__}")
    with LanceFileWriter(where, schema, **options) as writer:
        for b in batches:
            writer.write_batch(b)
        for k, v in extra.items():
            writer.add_schema_metadata(k, v)
