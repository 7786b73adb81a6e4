"""Reading Lance files: :class:`LanceFileReader`.

The reader opens a file with one read of its tail (footer, offset tables, column metadata
and schema), then reads only the byte ranges that a request needs: a projection touches
only its columns, a range only the pages (and parts of pages) holding those rows, a take
only the bytes of the wanted rows.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.lance")
    >>> lancefile.write_table(pa.table({"id": [1, 2, 3], "name": ["a", "b", None]}), path)
    >>> reader = lancefile.LanceFileReader(path, columns=["name"])
    >>> reader.num_rows()
    3
    >>> reader.take_rows([2, 0]).to_table().column("name").to_pylist()
    [None, 'a']
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np
import pyarrow as pa

from . import fieldtasks
from ._gcpause import gc_paused
from ._jit import numba_loaded
from .checks import check_decoded
from .encodings.arrowutil import unslice
from .encodings.selection import Selection
from .encodings.structural.fields import read_together
from .encodings.v2_0.plain import PlainColumns
from .encodings.versions import codec_for
from .errors import ColumnNotFoundError, CorruptFileError, InvalidInputError, LanceError, LanceIOError
from .format.container import FileLayout, read_layout
from .format.schema import LanceField
from .format.walked import load_columns
from .io import ByteSource, open_source
from .filtered_reads import filtered_batches
from .predicate import check_filter, to_expression
from .prefetch import prefetch_pages
from .projection import resolve as resolve_projection
from .readahead import DEFAULT_BATCH_READAHEAD, check_readahead, group_batches, grouped_depth
from .readplan import ReadPlan, chunk_end
from .results import ColumnMetadata, FileMetadata, PageMetadata, ReaderResults
from .file_statistics import FileStatistics

__all__ = ["LanceFileReader", "ReaderResults", "FileMetadata", "ColumnMetadata", "PageMetadata"]

DEFAULT_BATCH_SIZE = 1024
# Scan chunks and takes of at least this many rows decode their fields on the read pool (a
# 10,000-row take of the nested table, alternating: 164 -> 119 ms; 100-row takes gain nothing).
PARALLEL_MIN_ROWS = 8192
PARALLEL_MAX_FIELDS = 64
# A row range of at most this many Arrow bytes (estimated), in at most fieldtasks.INLINE_TASKS
# tasks, decodes in the caller's thread: on the pool a 1% read_range of the bench tables (2 MB)
# took 1.13-1.49x the serial time, a 5% one 0.95-1.19x; at 40 MB the pool wins (0.84-0.94x).
INLINE_READ_BYTES = 16 * 1024 * 1024


class LanceFileReader:
    """Reads a Lance file (versions 2.0, 2.1 and 2.2), mirroring ``lance.file.LanceFileReader``.

    Parameters
    ----------
    path:
        A file path or URI (``s3://``, ``gs://``, ``az://``, ``memory://``, ``file://``), bytes,
        a seekable binary file object, or a :class:`lancefile.io.ByteSource`.
    storage_options:
        Options for an object store, with pylance's keys (``aws_access_key_id``,
        ``aws_region``, ``aws_endpoint``, ``allow_http``...); see :func:`lancefile.io.open_source`.
    columns:
        Optional projection: top-level names or dotted nested names (``"st.a"``).
    verify_checksums:
        Check what is read against the checksums lancefile writes (the default; files without
        them, such as the reference's, are read unchecked). A mismatch raises
        :class:`~lancefile.ChecksumError`. ``False`` reads damaged files as they are.
    filesystem:
        A ``pyarrow.fs.FileSystem`` to read ``path`` from (instead of inferring one from a URI).

    Example::

        >>> import pyarrow as pa, lancefile, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "f.lance")
        >>> lancefile.write_table(pa.table({"id": [1, 2], "s": ["a", "b"]}), path)
        >>> with lancefile.LanceFileReader(path, None, ["s"]) as reader:
        ...     reader.read_all().to_table().to_pydict()
        {'s': ['a', 'b']}
    """

    def __init__(self, path, storage_options: dict | None = None, columns: Sequence[str] | None = None, *,
                 verify_checksums: bool = True, filesystem=None) -> None:
        if not isinstance(verify_checksums, bool):
            raise InvalidInputError(f"verify_checksums must be True or False, not {verify_checksums!r}")
        if storage_options is not None and not isinstance(storage_options, dict):
            raise InvalidInputError(f"{path}: storage_options must be a dict, not {type(storage_options).__name__} "
                                    f"(pass a projection as columns=[...])")
        self._closed = False
        self._source: ByteSource = open_source(path, storage_options=storage_options, filesystem=filesystem)
        self.path = self._source.name
        self._layout: FileLayout = read_layout(self._source)
        # lancefile's checksums, when the file has them: the tail is checked now, the schema
        # below, and from here on every read of the file (lancefile.format.checksums)
        self._verify_checksums = verify_checksums
        checksums = self._layout.use_checksums() if verify_checksums else None
        gb0 = self._layout.global_buffers[0]
        raw_schema = bytes(self._layout.read_buffer(gb0))
        if checksums is not None:
            checksums.check_schema(raw_schema)
        self._codec = codec_for(self._layout.version)
        (self._lance_schema, self._num_rows, self._columns, self._storage_full,
         self._full_schema) = self._codec.open_schema(raw_schema, self.path)
        self._stats: FileStatistics | None = None  # lancefile's statistics, found on first use
        self._layout.num_rows = self._num_rows
        if len(self._columns) != self._layout.num_columns:
            raise CorruptFileError(
                f"{self.path}: the schema needs {len(self._columns)} columns (as Lance {self._layout.version.name} "
                f"lays fields out) but the file has {self._layout.num_columns}"
            )
        self._projection = self._resolve_projection(columns)
        self._readers: list | None = None  # built on first read: opening touches no column metadata
        self._plain: PlainColumns | None = None  # a 2.0 read's plain columns (made with the readers)
        self._readers_lock = threading.Lock()
        self.schema: pa.Schema = self._projected_schema()
        # Fields are decoded on several threads if the source can take that and there are
        # few of them: many small fields are Python-bound, and threads only contend for the GIL.
        self._parallel = (fieldtasks.READ_THREADS > 1 and bool(getattr(self._source, "thread_safe", False))
                          and len(self._projection) <= PARALLEL_MAX_FIELDS)
        self._tasks = len(self._projection)  # tasks a parallel read splits into (leaves, once readers exist)
        if self.schema.equals(self._storage_schema, check_metadata=True):
            self._storage_schema = self.schema
        self._plan = ReadPlan(self._layout, self._projection, self._columns, self._storage_schema, self._num_rows)

    # -- projection -------------------------------------------------------------------
    def _resolve_projection(self, columns):
        """[(top-level field, keep-tree or None)] in the requested order (see :mod:`lancefile.projection`)."""
        try:
            return resolve_projection(self._lance_schema, columns)
        except ColumnNotFoundError as exc:
            raise ColumnNotFoundError(f"{self.path}: {exc}") from None

    def _projected_schema(self) -> pa.Schema:
        """The user-facing schema (extension types restored); sets the storage schema.

        A whole field's types come from the schema; a partly projected field's from its reader
        (built now; the others are built on first read, see :attr:`_field_readers`).
        """
        self._partial = {}
        if len(self._projection) == len(self._lance_schema.fields) and all(
                keep is None and p is f for (p, keep), f in zip(self._projection, self._lance_schema.fields)):
            self._storage_schema = self._storage_full  # every field, whole
            return self._full_schema
        storage, user = [], []
        names = self._full_schema.names
        index = {n: i for i, n in enumerate(names)}
        index.update({n: -1 for n in names if names.count(n) > 1} if len(index) < len(names) else {})
        for f, keep in self._projection:
            # index: what Schema.get_field_index gives (-1 for a duplicated name), without its linear search
            i = index.get(f.name, -1)
            if keep is None:
                storage.append(self._storage_full.field(i) if i >= 0 else f.to_arrow())
                user.append(self._full_schema.field(i) if i >= 0 else storage[-1])
                continue
            reader = self._partial[f.id] = self._codec.build_reader(self._layout, f, self._columns, keep)
            base = f.to_arrow()
            storage.append(pa.field(f.name, reader.dtype, base.nullable, base.metadata))
            user.append(storage[-1])
        md = self._full_schema.metadata
        self._storage_schema = pa.schema(storage, metadata=md)
        return pa.schema(user, metadata=md)

    @property
    def _field_readers(self) -> list:
        """One reader per projected field, built once (every read reuses them with its own page cache)."""
        if self._readers is None:
            # thousands of metadata messages and nodes for a wide file, no cycles among them:
            # the collections they would trigger (a full one 30-60 ms) are not needed
            with self._readers_lock, gc_paused():
                if self._readers is None:
                    self._layout.prefetch_columns(self._plan.columns())  # one request for their metadata
                    if self._layout.version.grammar is not None:  # 2.1+: a wide table's in one compiled walk
                        load_columns(self._layout, self._plan.columns())
                    self._readers = [self._partial.get(f.id) or self._codec.build_reader(self._layout, f,
                                                                                         self._columns, keep)
                                     for f, keep in self._projection]
                    self._tasks = sum(getattr(r, "task_count", 1) for r in self._readers)
        return self._readers

    def _plain_columns(self) -> PlainColumns:
        """The 2.0 fields' plain columns, read together (made once, with the field readers)."""
        got = self._plain
        if got is None:
            got = self._plain = PlainColumns(self._field_readers)
        return got

    # -- public API -------------------------------------------------------------------
    def num_rows(self) -> int:
        """The number of rows in the file (as pylance's ``LanceFileReader.num_rows()``)."""
        return self._num_rows

    @property
    def version(self) -> str:
        """The file's Lance version: ``"2.0"``, ``"2.1"`` or ``"2.2"``."""
        return self._layout.version.name

    @property
    def has_checksums(self) -> bool:
        """Whether the file holds lancefile's checksums (checked on every read unless ``verify_checksums=False``)."""
        if self._layout.checksums is not None:
            return True
        try:
            return self._layout.find_checksums() is not None
        except LanceError:  # a damaged checksum buffer is still one
            return True

    def column_owners(self) -> dict[int, LanceField]:
        """column index -> the Lance field that owns it."""
        by_id = {f.id: f for f in self._lance_schema.walk()}
        return {col: by_id[fid] for fid, col in self._columns.items()}

    def field_paths(self) -> dict[int, str]:
        """field id -> dotted path of every field (``"ls.item.x"``), as projections name them."""
        out: dict[int, str] = {}

        def walk(f: LanceField, prefix: str) -> None:
            out[f.id] = prefix + f.name
            for c in f.children:
                walk(c, out[f.id] + ".")

        for f in self._lance_schema.fields:
            walk(f, "")
        return out

    def read_global_buffer(self, index: int) -> bytes:
        """The bytes of global buffer ``index`` (0 holds the schema)."""
        self._check_open()
        gbs = self._layout.global_buffers
        if not 0 <= index < len(gbs):
            raise InvalidInputError(f"{self.path}: no global buffer {index} (the file has {len(gbs)})")
        return bytes(self._layout.read_buffer(gbs[index]))

    def metadata(self) -> FileMetadata:
        """The file's schema, version, rows, columns, pages and global buffers, without reading data.

        Example::

            >>> import pyarrow as pa, lancefile, tempfile, os
            >>> path = os.path.join(tempfile.mkdtemp(), "m.lance")
            >>> lancefile.write_table(pa.table({"a": [1, 2, 3]}), path)
            >>> meta = lancefile.LanceFileReader(path).metadata()
            >>> meta.num_rows, meta.major_version, meta.minor_version, len(meta.columns)
            (3, 2, 2, 1)
        """
        from .format.container import unpack_any

        url, message = self._codec.page_encoding_url, self._codec.page_encoding_message
        describe = self._codec.describe_page

        cols = []
        data_bytes = 0
        described: dict[bytes, str] = {}  # a wide table's pages share a few encodings byte for byte
        self._layout.prefetch_columns(range(self._layout.num_columns))
        if numba_loaded():  # the walk is compiled: not worth numba's first call (~0.5 s) to a process without it
            load_columns(self._layout, range(self._layout.num_columns))
        for i in range(self._layout.num_columns):
            info = self._layout.column(i)
            pages = []
            for j, p in enumerate(info.pages):
                enc = described.get(p.encoding)
                if enc is None:
                    try:
                        enc = described[p.encoding] = describe(unpack_any(p.encoding, url, message,
                                                                          where=f"column {i} page {j}"))
                    except Exception as exc:  # metadata must still be inspectable
                        enc = f"<undecodable: {exc}>"
                pages.append(PageMetadata(p.length, p.buffers, enc, p.priority))
                data_bytes += sum(b.size for b in p.buffers)
            cols.append(ColumnMetadata(i, tuple(pages), info.buffers))
        f = self._layout.footer
        gbs = self._layout.global_buffers
        return FileMetadata(
            schema=self._full_schema,
            num_rows=self._num_rows,
            major_version=f.major,
            minor_version=f.minor,
            version=self.version,
            file_size=self._layout.file_size,
            num_data_bytes=data_bytes,
            num_column_metadata_bytes=f.gbo_table_start - f.column_meta_start,
            num_global_buffer_bytes=sum(b.size for b in gbs),
            global_buffers=gbs,
            columns=tuple(cols),
        )

    def _read_selection(self, sel: Selection, cache: dict) -> pa.RecordBatch:
        return self._start_read(sel, cache)()

    def _start_read(self, sel: Selection, cache: dict, whole: bool = False, ahead: bool = False,
                    serial: bool = False):
        """Start reading ``sel``; the returned function finishes it and gives the batch.

        Large row ranges and takes of many rows are decoded on the read pool
        (:mod:`lancefile.fieldtasks`), started here; other reads happen when the function is
        called (``whole``: ``sel`` is the whole read, not one chunk of a scan: a small one is
        decoded in the caller's thread; ``ahead``: a scan chunk that another chunk's decoding
        overlaps, sent to the pool even when it is a single task; ``serial``: a chunk of a small
        read, decoded in the caller's thread whatever its size). ``.tasks`` is the pool's work
        (None when there is none), for a caller that must wait for it without the result.
        """
        self._check_open()  # results are lazy: they may be iterated after close()
        readers = self._field_readers
        if sel.is_range:  # an object store fetches the chunk's pages at once (lancefile.prefetch)
            prefetch_pages(self._source, self._layout, self._plan.columns, sel.start, sel.stop, cache)
        tasks = None
        if (readers and not serial and sel.count >= PARALLEL_MIN_ROWS and self._parallel
                and (self._tasks > 1 or ahead) and fieldtasks.READ_THREADS > 1 and not fieldtasks.decoding_here()):
            tasks = fieldtasks.submit_fields(readers, sel, cache, inline=whole)

        def finish() -> pa.RecordBatch:
            return self._finish_read(sel, cache, readers, tasks)

        finish.tasks = tasks
        return finish

    def _finish_read(self, sel: Selection, cache: dict, readers, tasks) -> pa.RecordBatch:
        self._check_open()
        if not readers:  # an empty projection still has a row count
            empty = pa.Array.from_buffers(pa.struct([]), sel.count, [None], children=[])
            return pa.RecordBatch.from_struct_array(empty).replace_schema_metadata(self.schema.metadata)
        # Decoders check what they read and raise Lance errors; anything else escaping them is
        # a bug in lancefile and is left as it is (never relabelled as a corrupt file).
        i = None
        trusted: dict = {}  # arrays built valid (no check to make)
        try:
            if tasks is not None:
                arrays = tasks.result()
            else:
                arrays = []
                if self._layout.version.grammar is None:  # plain 2.0 columns: valid, null-free arrays
                    done = trusted = self._plain_columns().read(sel, cache)
                else:
                    done = read_together(readers, sel, cache)  # a wide table's columns: decoded at once
                for i, r in enumerate(readers):
                    arrays.append(done[i] if i in done else r.read(sel, cache))
        except LanceError as exc:
            if self.path in str(exc):
                raise
            # a check deep in a decoder that knows no file: say where (the same error type)
            where = self._describe_field(i, sel) if i is not None else f"{self.path}: rows [{sel.start}, {sel.stop})"
            raise type(exc)(f"{where}: {exc}") from exc
        for i, (arr, r) in enumerate(zip(arrays, readers)):
            if i in trusted:
                continue
            check_decoded(arr, self._storage_schema.field(i), lambda i=i: self._describe_field(i, sel),
                          full=not getattr(r, "checks_leaves", False))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self._storage_schema)
        return batch if self._storage_schema is self.schema else batch.cast(self.schema)

    def _describe_field(self, i: int, sel: Selection) -> str:
        """``file: field 'x' (column 3, pages 0-1), rows [a, b)``: where a bad decoded array came from."""
        f, _ = self._projection[i]
        cols = [self._columns[g.id] for g in f.walk() if g.id in self._columns]
        lo = sel.start if sel.is_range else int(sel.indices[0]) if len(sel.indices) else 0
        hi = sel.stop if sel.is_range else int(sel.indices[-1]) + 1 if len(sel.indices) else 0
        where = []
        for c in cols[:4]:
            starts = self._layout.column(c).page_starts
            if int(starts[-1]) != self._num_rows:  # a 2.0 column of nested values: pages count values
                where.append(f"column {c}")
                continue
            p0 = max(int(np.searchsorted(starts, lo, side="right")) - 1, 0)
            p1 = max(int(np.searchsorted(starts, max(hi - 1, lo), side="right")) - 1, p0)
            where.append(f"column {c} page {p0}" if p0 == p1 else f"column {c} pages {p0}-{p1}")
        more = ", ..." if len(cols) > 4 else ""
        return f"{self.path}: field {f.name!r} ({', '.join(where)}{more}), rows [{lo}, {hi})"

    def _range_batches(self, start: int, stop: int, batch_size: int, grouped: bool = False):
        """Batches of rows [start, stop), or (``grouped``) lists of up to ``group_batches(batch_size)``
        of them, each list from one decoded chunk."""
        self._field_readers  # built (and the columns checked against the file) even for no rows
        cache: dict = {}
        plan = self._plan
        row_bytes, floor, target = plan.scan()
        # the first chunk is a quarter size: it measures the decoded size of a row, unless
        # every projected type is fixed-width (the size is then known exactly)
        first = not plan.type_facts()[1]
        # from the second chunk on, the next chunk is started before this one is waited for
        # (2.1+ fields, whose tasks may share pages across chunks: see encodings.columns)
        overlap = self._layout.version.grammar is not None and all(getattr(r, "checks_leaves", False)
                                                                    for r in self._field_readers)
        # a small read is decoded here, chunk after chunk (INLINE_READ_BYTES)
        serial = (stop - start) * row_bytes <= INLINE_READ_BYTES and self._tasks <= fieldtasks.INLINE_TASKS
        overlap = overlap and not serial
        pos = start
        pending = None  # the chunk started ahead

        try:
            while pos < stop or pending is not None:
                if pending is None:
                    rows = plan.chunk_rows(batch_size, row_bytes, target // 4 if first else target)
                    end = chunk_end(pos, stop, rows)
                    pending, pos = self._start_read(Selection.of_range(pos, end), cache,
                                                    whole=pos == start and end == stop,
                                                    ahead=overlap and not first and end < stop, serial=serial), end
                current, pending = pending, None
                if overlap and not first and pos < stop:
                    end = chunk_end(pos, stop, plan.chunk_rows(batch_size, row_bytes, target))
                    pending, pos = self._start_read(Selection.of_range(pos, end), cache, ahead=True), end
                with gc_paused():  # a wide chunk's thousands of Arrow objects, none of them cycles
                    batch = current()
                current = None
                if len(batch) and pos < stop:  # (a chunk's nbytes walks every column's buffers)
                    row_bytes = max(floor, batch.nbytes / len(batch))
                first = False
                n = len(batch)
                if grouped:  # lists of up to group_batches(batch_size) batches
                    k = group_batches(batch_size) * batch_size
                    for at in range(0, n, k):
                        yield [batch.slice(off, batch_size) for off in range(at, min(at + k, n), batch_size)]
                else:
                    for off in range(0, n, batch_size):
                        yield batch.slice(off, batch_size)
                batch = None  # only the caller's slices keep this chunk alive while the next is read
        finally:
            if pending is not None and pending.tasks is not None:
                pending.tasks.wait()  # an abandoned scan: let the chunk started ahead finish

    def _check_batch_size(self, batch_size: int) -> int:
        if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise InvalidInputError(f"batch_size must be a positive integer, not {batch_size!r}")
        return int(batch_size)

    # -- statistics and filters -------------------------------------------------------
    def _file_statistics(self) -> FileStatistics:
        if self._stats is None:
            self._stats = FileStatistics(self)
        return self._stats

    def statistics(self, columns: Sequence[str] | None = None) -> dict[str, pa.Table]:
        """Per-zone statistics written by lancefile: ``{column: table}``, one row per zone.

        Each table has ``row_offset``, ``num_rows``, ``null_count``, ``min``, ``max`` (and
        ``nan_count`` for floats). Columns are dotted paths (``"st.a"``); ``columns`` limits
        which are read. Files without statistics (the reference's) give ``{}``.
        """
        return self._file_statistics().tables(columns)

    def matching_ranges(self, filter, start: int = 0, stop: int | None = None) -> list[tuple[int, int]]:
        """Row ranges within [start, stop) whose statistics say they may hold rows matching ``filter``.

        Without statistics this is the whole range. Rows outside the ranges cannot match.
        """
        stop = self._num_rows if stop is None else stop
        return self._file_statistics().matching_ranges(to_expression(filter, self._full_schema), start, stop)

    def read_all(self, *, batch_size: int = DEFAULT_BATCH_SIZE, batch_readahead: int = DEFAULT_BATCH_READAHEAD,
                 filter=None) -> ReaderResults:
        """Read every row (of the projected columns), or those matching ``filter``.

        ``filter``: a ``pyarrow.compute.Expression``, pyarrow.parquet's DNF list of
        ``(column, op, value)`` tuples or SQL text (``"x > 5 OR s IS NULL"``, as pylance
        reads it: :mod:`lancefile.sqlfilter`); it may name columns that are not projected. Zones
        whose statistics rule the filter out are not read; the rows read are filtered exactly.
        ``batch_readahead``: decode ahead while the results are iterated (0: none; a scan reads a
        decoded chunk ahead, a filtered read up to that many batches).
        """
        self._check_open()
        bs = self._check_batch_size(batch_size)
        ahead = check_readahead(batch_readahead)
        expr = to_expression(filter, self._full_schema)
        if expr is not None:
            check_filter(expr, self._full_schema, self.path)
            return ReaderResults(lambda: filtered_batches(self, expr, 0, self._num_rows, bs), self.schema, ahead)
        return ReaderResults(lambda: self._range_batches(0, self._num_rows, bs, True), self.schema,
                             grouped_depth(ahead, bs), True)

    def read_range(self, start: int, num_rows: int, *, batch_size: int = DEFAULT_BATCH_SIZE,
                   batch_readahead: int = DEFAULT_BATCH_READAHEAD) -> ReaderResults:
        """Read rows ``[start, start + num_rows)``."""
        self._check_open()
        bs = self._check_batch_size(batch_size)
        ahead = check_readahead(batch_readahead)
        start, num_rows = int(start), int(num_rows)
        if start < 0 or num_rows < 0 or start + num_rows > self._num_rows:
            raise InvalidInputError(
                f"{self.path}: range [{start}, {start + num_rows}) is outside the file's {self._num_rows} rows"
            )
        return ReaderResults(lambda: self._range_batches(start, start + num_rows, bs, True), self.schema,
                             grouped_depth(ahead, bs), True)

    def take_rows(self, indices, *, batch_size: int = DEFAULT_BATCH_SIZE,
                  batch_readahead: int = DEFAULT_BATCH_READAHEAD) -> ReaderResults:
        """Read the rows at ``indices`` (any order, duplicates allowed), in that order."""
        self._check_open()
        bs = self._check_batch_size(batch_size)
        ahead = check_readahead(batch_readahead)
        idx = np.asarray(indices if not isinstance(indices, (pa.Array, pa.ChunkedArray)) else indices.to_numpy())
        if idx.ndim != 1 or (len(idx) and idx.dtype.kind not in "iu"):
            raise InvalidInputError("take_rows indices must be a one-dimensional sequence of integers")
        idx = idx.astype(np.int64, copy=False)
        bad = (idx < 0) | (idx >= self._num_rows)
        if bad.any():
            first = int(idx[np.argmax(bad)])
            raise InvalidInputError(
                f"{self.path}: row index {first} is out of range for a file of {self._num_rows} rows"
            )

        def batches():
            # Indices are read a group at a time (a read chunk's worth of rows, in whole
            # batches) and the group cut into batches: a page is visited once per group, not
            # once per batch. Ascending groups share the page cache (a page's dictionary is
            # fetched once; passed pages are evicted by the readers, as in a scan).
            group = bs
            if len(idx) > bs:
                row_bytes, _, target = self._plan.take()
                group = self._plan.chunk_rows(bs, row_bytes, target)
            cache: dict = {}
            last = -1
            for off in range(0, len(idx), group):
                part = idx[off : off + group]
                # ascending without repeats (the usual take): read as it is, no sort, no reordering
                ordered = len(part) < 2 or bool((part[1:] > part[:-1]).all())
                uniq, inverse = (part, None) if ordered else np.unique(part, return_inverse=True)
                if len(uniq) and uniq[0] < last:
                    cache = {}  # indices went back: start afresh, so the cache stays one group's
                with gc_paused():  # hundreds of pages' small objects, none of them cycles
                    batch = self._read_selection(Selection.of_indices(uniq), cache)
                last = int(uniq[-1]) if len(uniq) else last
                if inverse is not None:
                    batch = unslice(batch).take(pa.array(inverse))
                n = len(batch)
                for o in range(0, n, bs):
                    yield batch if n <= bs else batch.slice(o, bs)
                batch = None

        return ReaderResults(batches, self.schema, ahead)

    def size_bytes(self) -> int:
        """The file's size in bytes."""
        return self._source.size

    def _check_open(self) -> None:
        if self._closed:
            raise LanceIOError(f"{self.path}: the reader is closed")

    def close(self) -> None:
        """Release the file; reads after this raise :class:`~lancefile.LanceIOError`."""
        self._closed = True
        self._source.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"LanceFileReader({self.path!r}, version={self.version}, rows={self._num_rows}, "
                f"columns={self.schema.names})")

