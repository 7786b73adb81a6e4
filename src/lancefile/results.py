"""What a :class:`lancefile.LanceFileReader` hands out: the file's metadata
(:class:`FileMetadata`, as ``lance.file.LanceFileMetadata``) and the lazy result of a read
(:class:`ReaderResults`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa

from .format.container import BufferRef
from .readahead import readahead

__all__ = ["ReaderResults", "FileMetadata", "ColumnMetadata", "PageMetadata"]


@dataclass(frozen=True)
class PageMetadata:
    length: int
    buffers: tuple[BufferRef, ...]
    encoding: str  # a readable summary of the page's encoding tree
    priority: int


@dataclass(frozen=True)
class ColumnMetadata:
    index: int
    pages: tuple[PageMetadata, ...]
    column_buffers: tuple[BufferRef, ...]

    @property
    def num_bytes(self) -> int:
        return sum(b.size for p in self.pages for b in p.buffers) + sum(b.size for b in self.column_buffers)


@dataclass(frozen=True)
class FileMetadata:
    """What :meth:`LanceFileReader.metadata` returns (mirrors ``lance.file.LanceFileMetadata``).

    Example::

        >>> import pyarrow as pa, lancefile, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "fm.lance")
        >>> lancefile.write_table(pa.table({"a": [1.5, 2.5]}), path)
        >>> meta = lancefile.read_metadata(path)
        >>> meta.schema.names, meta.num_rows, meta.columns[0].index
        (['a'], 2, 0)
    """

    schema: pa.Schema
    num_rows: int
    major_version: int
    minor_version: int
    version: str
    file_size: int
    num_data_bytes: int
    num_column_metadata_bytes: int
    num_global_buffer_bytes: int
    global_buffers: tuple[BufferRef, ...]
    columns: tuple[ColumnMetadata, ...] = field(repr=False)


class ReaderResults:
    """The result of a read: iterate it for record batches, or collect it.

    Nothing is read until it is iterated or collected. Iterating it (and ``to_reader()``,
    ``__arrow_c_stream__``) decodes ahead of the consumer on a background thread when
    ``batch_readahead`` > 0 (:mod:`lancefile.readahead`): a scan's next decoded chunk (its batches
    handed over together), a filtered read's or a take's up to ``batch_readahead`` batches. It implements the Arrow PyCapsule
    stream protocol (``__arrow_c_stream__``), so ``pa.table(results)``, DuckDB and Polars
    consume it directly.

    Example::

        >>> import pyarrow as pa, lancefile, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "r.lance")
        >>> lancefile.write_table(pa.table({"a": [1, 2, 3]}), path)
        >>> pa.table(lancefile.LanceFileReader(path).read_all()).column("a").to_pylist()
        [1, 2, 3]
    """

    def __init__(self, make_batches, schema: pa.Schema, batch_readahead: int = 0, grouped: bool = False) -> None:
        self._make = make_batches  # batches, or (grouped) lists of batches: a decoded chunk's
        self.schema = schema
        self._readahead = batch_readahead
        self._grouped = grouped

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return readahead(self._make, self._readahead, self._grouped)

    def to_batches(self) -> list[pa.RecordBatch]:
        """Every batch of the result, read now."""
        if self._grouped:
            return [b for group in self._make() for b in group]
        return list(self._make())

    def to_table(self) -> pa.Table:
        """The whole result as one table, read now."""
        return pa.Table.from_batches(self.to_batches(), schema=self.schema)

    def to_reader(self) -> pa.RecordBatchReader:
        """A ``pyarrow.RecordBatchReader`` that reads the batches as they are pulled."""
        return pa.RecordBatchReader.from_batches(self.schema, iter(self))

    def __arrow_c_stream__(self, requested_schema=None):
        return self.to_reader().__arrow_c_stream__(requested_schema)
