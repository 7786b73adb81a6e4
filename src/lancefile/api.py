"""pyarrow.parquet-style functions: :func:`read_table`, :func:`write_table`, :func:`iter_batches`.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.lance")
    >>> lancefile.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), path)
    >>> lancefile.read_table(path, columns=["b"]).to_pydict()
    {'b': ['x', 'y']}
    >>> [len(b) for b in lancefile.iter_batches(path, batch_size=1)]
    [1, 1]
    >>> lancefile.read_schema(path).names
    ['a', 'b']
    >>> lancefile.read_metadata(path).num_rows
    2
"""

from __future__ import annotations

from typing import Iterator, Sequence

import pyarrow as pa

from .errors import InvalidInputError
from .readahead import DEFAULT_BATCH_READAHEAD
from .reader import DEFAULT_BATCH_SIZE, FileMetadata, LanceFileReader
from .writer import LanceFileWriter

__all__ = ["read_table", "write_table", "iter_batches", "read_schema", "read_metadata"]


def read_table(source, columns: Sequence[str] | None = None, *, batch_size: int = 64 * 1024,
               filters=None, verify_checksums: bool = True, storage_options: dict | None = None,
               filesystem=None) -> pa.Table:
    """Read a whole Lance file (or the given columns) into a Table.

    ``filters``: a ``pyarrow.compute.Expression``, pyarrow.parquet's DNF form
    (``[("a", ">", 5), ("b", "in", {"x", "y"})]``, a list of such lists for OR) or SQL text
    as pylance takes it (``"a > 5 AND b IN ('x', 'y')"``, see :mod:`lancefile.sqlfilter`); only
    matching rows are returned, in file order, and zones the file's statistics rule out are
    never read. ``verify_checksums``, ``storage_options`` and ``filesystem``: see :class:`LanceFileReader`.

    Example::

        >>> import pyarrow as pa, lancefile
        >>> lancefile.write_table(pa.table({"a": [1, 2, 3]}), "memory://doc/rt.lance")
        >>> lancefile.read_table("memory://doc/rt.lance", filters=[("a", ">", 1)]).to_pydict()
        {'a': [2, 3]}
    """
    with LanceFileReader(source, storage_options, columns, verify_checksums=verify_checksums,
                         filesystem=filesystem) as reader:
        return reader.read_all(batch_size=batch_size, filter=filters).to_table()


def iter_batches(source, columns: Sequence[str] | None = None, *, batch_size: int = DEFAULT_BATCH_SIZE,
                 batch_readahead: int = DEFAULT_BATCH_READAHEAD, filters=None, verify_checksums: bool = True,
                 storage_options: dict | None = None, filesystem=None) -> Iterator[pa.RecordBatch]:
    """Stream a Lance file as record batches of at most ``batch_size`` rows.

    Arguments as :func:`read_table` (``columns`` second, the rest keyword-only);
    with ``batch_readahead`` > 0 (0: none) the next batches are decoded ahead of the consumer on a
    background thread (a scan's a decoded chunk at a time, a take's up to that many batches).

    Example::

        >>> import pyarrow as pa, lancefile
        >>> lancefile.write_table(pa.table({"a": [1, 2, 3]}), "memory://doc/it.lance")
        >>> [b.num_rows for b in lancefile.iter_batches("memory://doc/it.lance", ["a"], batch_size=2)]
        [2, 1]
    """
    if isinstance(columns, int):
        raise InvalidInputError(f"{source}: iter_batches(source, columns, *, batch_size=...) takes the batch size "
                                f"as a keyword: iter_batches(source, batch_size={columns})")
    with LanceFileReader(source, storage_options, columns, verify_checksums=verify_checksums,
                         filesystem=filesystem) as reader:
        yield from reader.read_all(batch_size=batch_size, batch_readahead=batch_readahead, filter=filters)


def read_schema(source, *, storage_options: dict | None = None, filesystem=None) -> pa.Schema:
    """The Arrow schema of a Lance file (as ``pyarrow.parquet.read_schema``); only the file's tail is read.

    Example::

        >>> import pyarrow as pa, lancefile
        >>> lancefile.write_table(pa.table({"a": [1]}), "memory://doc/s.lance")
        >>> lancefile.read_schema("memory://doc/s.lance")
        a: int64
    """
    with LanceFileReader(source, storage_options, filesystem=filesystem) as reader:
        return reader.schema


def read_metadata(source, *, storage_options: dict | None = None, filesystem=None) -> FileMetadata:
    """A Lance file's :class:`FileMetadata` (version, rows, sizes, columns' pages), as ``pyarrow.parquet.read_metadata``.

    Example::

        >>> import pyarrow as pa, lancefile
        >>> lancefile.write_table(pa.table({"a": [1, 2]}), "memory://doc/m.lance")
        >>> m = lancefile.read_metadata("memory://doc/m.lance")
        >>> (m.version, m.num_rows)
        ('2.2', 2)
    """
    with LanceFileReader(source, storage_options, filesystem=filesystem) as reader:
        return reader.metadata()


def write_table(table, where, **options) -> None:
    """Write a Table, RecordBatch or RecordBatchReader to ``where``.

    ``options`` are those of :class:`LanceFileWriter` (``version``, ``max_page_bytes``,
    ``data_cache_bytes``, ``alignment``, ``storage_options``, ``filesystem``) plus
    ``schema_metadata`` (a dict added to the file's schema metadata). ``where`` may be a path, an
    object-store URI or a writable binary file object. On any failure nothing is left at ``where``.

    Example::

        >>> import io, pyarrow as pa, lancefile
        >>> buf = io.BytesIO()
        >>> lancefile.write_table(pa.table({"a": [1, 2]}), buf)
        >>> lancefile.read_table(buf.getvalue()).num_rows
        2
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
