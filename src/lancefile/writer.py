"""Writing Lance files: :class:`LanceFileWriter`.

Version 2.2 (the reference's default) unless ``version`` says 2.1 or 2.0. Batches are
buffered per top-level column (``data_cache_bytes``) and written as pages of at most
``max_page_bytes`` of Arrow data; page buffers are aligned to ``alignment`` bytes (64 by
default, the least 2.1+ allows; 4096 for direct I/O). What a 2.1/2.2 page becomes is
decided by :mod:`lancefile.encodings.strategy` and laid out by
:mod:`lancefile.encodings.structural.encoder`. Everything is written to a temporary file beside the destination and
renamed into place by :meth:`LanceFileWriter.close`, so a failed or interrupted write
leaves nothing at the destination.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "out.lance")
    >>> with lancefile.LanceFileWriter(path) as writer:
    ...     writer.write_batch(pa.table({"x": [1, 2, 3]}))
    ...     writer.add_schema_metadata("source", "doctest")
    >>> lancefile.read_table(path).num_rows
    3
"""

from __future__ import annotations

import os
from concurrent.futures import wait
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ._gcpause import gc_paused
from ._proto import file2_pb2
from .encodings.structural.encode_many import float_pages, group_fields, many_key
from .encodings.versions import codec_for
from .errors import InvalidInputError, LanceError, LanceIOError, SchemaMismatchError
from .format.container import COLUMN_ENCODING_URL, BufferRef, pack_any
from .format.schema import LanceSchema, descriptor_bytes
from .format.version import DEFAULT_VERSION, resolve_version
from .objectstore import file_uri_path
from .remote import RemoteTarget, local_path as _local_path
from .sink import FileSink
from .tempfiles import sweep_once, sync_directory, temporary_path
from .writer_input import (_combined, _has_extension, _metadata_text, _value_bytes, _warn_stored_types,
                           has_required_children, null_in_required_child)
from .threadpools import shared_pool
from .statistics import DEFAULT_MAX_BOUND_BYTES, DEFAULT_ZONE_ROWS, StatisticsCollector

__all__ = ["LanceFileWriter", "WriterOptions", "DEFAULT_MAX_PAGE_BYTES", "DEFAULT_DATA_CACHE_BYTES", "PAGE_ALIGNMENT"]

DEFAULT_MAX_PAGE_BYTES = 32 * 1024 * 1024
DEFAULT_DATA_CACHE_BYTES = 8 * 1024 * 1024
PAGE_ALIGNMENT = 64
WRITE_THREADS = max(1, min(4, os.cpu_count() or 1))  # fields encoded at once (2.1+, see _flush_fields)
_THREAD_MIN_BYTES = 1 << 20  # fields encoded on the write pool hold at least this much data
_MANY_BYTES = 8 << 20  # float fields encoded together (see _flush_many) hold at most this much data


@dataclass(frozen=True)
class WriterOptions:
    """Options shared by :class:`LanceFileWriter` and :func:`lancefile.write_table`.

    Example::

        >>> opts = WriterOptions(version="2.1", max_page_bytes=8 << 20)
        >>> opts.version, opts.max_page_bytes
        ('2.1', 8388608)
    """

    version: str = DEFAULT_VERSION.value
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    data_cache_bytes: int = DEFAULT_DATA_CACHE_BYTES
    alignment: int = PAGE_ALIGNMENT

    def __post_init__(self) -> None:
        for name in ("max_page_bytes", "data_cache_bytes", "alignment"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise InvalidInputError(f"{name} must be an integer, not {value!r}")
        if self.max_page_bytes <= 0:
            raise InvalidInputError(f"max_page_bytes must be positive, not {self.max_page_bytes}")
        if self.data_cache_bytes < 0:
            raise InvalidInputError(f"data_cache_bytes must be >= 0, not {self.data_cache_bytes}")
        if self.alignment < 8 or self.alignment & (self.alignment - 1):
            raise InvalidInputError(f"alignment must be a power of two >= 8, not {self.alignment}")


class LanceFileWriter:
    """Writes a Lance file, mirroring ``lance.file.LanceFileWriter``.

    Parameters
    ----------
    path:
        Destination: a local path, an object-store URI (``s3://``, ``gs://``, ``az://``,
        ``memory://``, ``file://``) or a writable binary file object. Nothing appears there
        until :meth:`close` succeeds. A local file is written beside the destination and
        renamed into place once it is on disk (flushed in the background while it is
        written, then fsynced), so a finished write survives a crash.
    schema:
        The Arrow schema; taken from the first batch when omitted.
    storage_options, filesystem:
        For URIs, as :class:`~lancefile.LanceFileReader`.
    version:
        File format version: ``"2.2"`` (the default, also ``"stable"``), ``"2.1"`` or ``"2.0"``
        (also ``"0.3"``). ``"2.3"``/``"next"`` and the legacy v1 format raise
        :class:`~lancefile.UnsupportedVersionError`.
    max_page_bytes, data_cache_bytes, alignment:
        See :class:`WriterOptions`.
    statistics:
        Write per-zone column statistics (null count, min, max, NaN count) that readers use
        to skip data (:mod:`lancefile.statistics`); on by default, ignored by the reference.
    statistics_zone_rows, statistics_max_bound_bytes:
        Rows per statistics zone (8192) and the longest string/binary bound kept (64 bytes).
    checksums:
        Write XXH3-64 checksums of every byte of the file into one more global buffer (on by
        default; the reference ignores it), which readers check (:mod:`lancefile.format.checksums`).
        ``False`` writes the file the reference would write, byte for byte where lancefile matches it.
    reference_encodings:
        ``True``: choose every page's encoding exactly as the reference (pylance 14.0.2) does.
        ``False`` (the default): also make lancefile's own choices where they measurably
        shrink a page, always with encodings the reference reads, each kept when the page
        is at most 95% of the reference's choice. Today three: 2.1+ float columns whose values
        share a sign and magnitude (the high byte of every value nearly constant, e.g. values
        in [0, 1)) are written byte-stream-split under LZ4 (uniform float64: ~9% smaller
        files, a decode that stays faster than the reference's on the same file); 2.1+
        32/64-bit integers that grow steadily (ids, timestamps) byte-stream-split under zstd,
        4,096 a chunk (an int64 id: under a bit a row instead of 16-21 bit-packed); and 2.2
        dictionary pages of at most 256 items (low-cardinality strings) have their u8
        indices and def levels entropy-coded with zstd, 4,096 a chunk, instead of bit-packed
        to whole bits and RLE-coded (5 values: ~2.6 bits an index instead of 3.2; a take
        inflates a 4 KB chunk per row and column). Field metadata such as
        ``lance-encoding:compression`` overrides it. With ``checksums=False``,
        ``statistics=False`` and ``reference_encodings=True`` the file equals the reference's
        byte for byte wherever the reference is deterministic.

    Example::

        >>> import pyarrow as pa, lancefile, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "w.lance")
        >>> with lancefile.LanceFileWriter(path, version="2.1") as w:
        ...     w.write_batch(pa.table({"a": [1, 2]}))
        >>> lancefile.LanceFileReader(path).num_rows()
        2
    """

    def __init__(self, path, schema: pa.Schema | None = None, *, version: str | None = None,
                 max_page_bytes: int | None = None, data_cache_bytes: int | None = None,
                 alignment: int = PAGE_ALIGNMENT, statistics: bool = True,
                 statistics_zone_rows: int = DEFAULT_ZONE_ROWS,
                 statistics_max_bound_bytes: int = DEFAULT_MAX_BOUND_BYTES, checksums: bool = True,
                 reference_encodings: bool = False, storage_options: dict | None = None,
                 filesystem=None) -> None:
        if not isinstance(statistics, bool):
            raise InvalidInputError(f"statistics must be True or False, not {statistics!r}")
        if not isinstance(checksums, bool):
            raise InvalidInputError(f"checksums must be True or False, not {checksums!r}")
        if not isinstance(reference_encodings, bool):
            raise InvalidInputError(f"reference_encodings must be True or False, not {reference_encodings!r}")
        self._checksums = checksums
        self._reference_encodings = reference_encodings
        self._stats_options = (statistics_zone_rows, statistics_max_bound_bytes) if statistics else None
        self._stats: StatisticsCollector | None = None
        self.version = resolve_version(version, for_write=True)
        self._codec = codec_for(self.version)
        self.options = WriterOptions(
            version=self.version.name,
            max_page_bytes=DEFAULT_MAX_PAGE_BYTES if max_page_bytes is None else max_page_bytes,
            data_cache_bytes=DEFAULT_DATA_CACHE_BYTES if data_cache_bytes is None else data_cache_bytes,
            alignment=alignment,
        )
        if self.version.grammar is not None and alignment < PAGE_ALIGNMENT:
            raise InvalidInputError(f"Lance {self.version.name} files need page buffers aligned to at least "
                                    f"{PAGE_ALIGNMENT} bytes, not {alignment}")
        if schema is not None and not isinstance(schema, pa.Schema):
            raise InvalidInputError(f"schema must be a pyarrow.Schema, not {type(schema).__name__}")
        # Object stores and file objects: the file is made in a private local directory and
        # sent whole by close(), so a failed write leaves nothing at the destination.
        self._size: int | None = None
        local = file_uri_path(path) if filesystem is None else None
        if local is not None:  # written in place, not staged and copied as through pyarrow.fs
            if storage_options:
                raise InvalidInputError(f"{path}: storage_options apply to object-store URIs (s3://...), "
                                        f"not to local files")
            path = local
        self._remote: RemoteTarget | None = RemoteTarget.of(path, storage_options, filesystem)
        self.path = self._remote.name if self._remote else _local_path(path)
        self._target = self._remote.staging if self._remote else self.path
        self._tmp = temporary_path(self._target)
        self._sink: FileSink | None = None
        self._schema: pa.Schema | None = None
        self._lance_schema: LanceSchema | None = None
        self._extra_metadata: dict[str, str] = {}
        self._pending_global: list[bytes] = []
        self._global_refs: list[BufferRef] = []
        self._num_rows = 0
        self._closed = False
        self._aborted: BaseException | bool = False  # abort()ed: True, or the error that made it give up
        if schema is not None:
            self._start(schema)

    # -- set-up -------------------------------------------------------------------------
    def _start(self, schema: pa.Schema) -> None:
        lance_schema = LanceSchema.from_arrow(schema)
        try:  # what every reader does with the schema first: refuse a file none could open
            lance_schema.to_arrow()
        except (ValueError, TypeError) as exc:  # ArrowInvalid: extension metadata its type cannot hold
            raise InvalidInputError(f"cannot write {self.path}: the schema's extension metadata does not fit its "
                                    f"fields ({exc})") from None
        if self._stats_options is not None:
            self._stats = StatisticsCollector(schema, lance_schema, *self._stats_options)
        self._columns = self._codec.assign_columns(lance_schema)
        own = {} if self.version.grammar is None else {"own_choices": not self._reference_encodings}
        self._encoders = [self._codec.build_encoder(f, self._columns, self.options.max_page_bytes, **own)
                          for f in lance_schema.fields]
        self._schema = schema
        self._required_children = has_required_children(schema)  # non-nullable fields below the top
        self._lance_schema = lance_schema
        # Columns holding extension types are written as their storage type.
        self._storage_types = {
            i: f.to_arrow().type for i, f in enumerate(lance_schema.fields) if _has_extension(schema.field(i).type)
        }
        # fields whose pages may be encoded many at once (_flush_many): what they share
        self._many_keys = [None if self.version.grammar is None else many_key(f.type, enc.strategies[0], enc.blobs[0])
                           for f, enc in zip(schema, self._encoders)]
        _warn_stored_types(schema)
        sweep_once(os.path.dirname(self._tmp))  # temporary files of writers that were killed
        if self._remote is not None:
            self._remote.ensure_staging()
        try:
            self._sink = FileSink(self._tmp, self.options.alignment, len(self._columns),
                                  self._codec.page_encoding_url, checksums=self._checksums)
        except LanceIOError as exc:  # (the temporary file: say which destination it was for)
            raise LanceIOError(f"cannot write {self.path}: {exc}") from exc
        self._pending = [[] for _ in lance_schema.fields]
        self._pending_bytes = [0] * len(lance_schema.fields)
        # bytes a value of the columns whose size is their length times it (when they have no
        # validity buffer); 0: ask Arrow (nbytes costs ~2 us a call: 1,000 columns of 12 batches)
        self._value_bytes = [_value_bytes(schema.field(i).type) if i not in self._storage_types else 0
                             for i in range(len(schema))]
        for data in self._pending_global:
            self._global_refs.append(self._sink.write_buffer(data))
        self._pending_global = []

    @property
    def schema(self) -> pa.Schema | None:
        """The schema of the file being written (None until given or taken from the first batch)."""
        return self._schema

    def _check_open(self) -> None:
        if self._aborted is not False:
            raise self._abandoned()
        if self._closed:
            raise InvalidInputError(f"writer for {self.path} is already closed")

    def _abandoned(self) -> LanceError:
        """The error for using a writer that gave up (an earlier error, or :meth:`abort`): a
        :class:`~lancefile.LanceIOError` when an I/O failure made it give up."""
        cause = self._aborted
        why = f" after an error ({cause})" if isinstance(cause, BaseException) and str(cause) else ""
        kind = LanceIOError if isinstance(cause, OSError) else InvalidInputError
        return kind(f"cannot write {self.path}: the writer was aborted{why}, and nothing was written")

    # -- writing ------------------------------------------------------------------------
    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append a RecordBatch or Table whose schema matches the writer's."""
        with gc_paused():
            self._write_batch(batch)

    def _write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        self._check_open()
        if isinstance(batch, pa.Table):
            if self._schema is not None and self._pend_table(batch):
                return
            for b in batch.to_batches():
                self._write_batch(b)
            if batch.num_rows == 0 and self._schema is None:
                self._start(batch.schema)
            return
        if not isinstance(batch, pa.RecordBatch):
            raise InvalidInputError(f"write_batch takes a pyarrow RecordBatch or Table, not {type(batch).__name__}")
        if self._schema is None:
            self._start(batch.schema)
        self._validate(batch)
        try:
            due = []
            for i, col in enumerate(batch.columns):
                if i in self._storage_types:
                    col = col.cast(self._storage_types[i])
                self._pending[i].append(col)
                w = self._value_bytes[i]
                self._pending_bytes[i] += len(col) * w if w and col.buffers()[0] is None else col.nbytes
                if self._pending_bytes[i] >= self.options.data_cache_bytes:
                    due.append(i)
            self._flush_fields(due)
            self._num_rows += batch.num_rows
        except OSError as exc:
            error = self._io_error(exc)
            self._give_up(error)
            raise error from exc
        except BaseException as exc:
            self._give_up(exc)
            raise

    def _pend_table(self, table: pa.Table) -> bool:
        """Take a Table's columns whole, as chunked arrays, when none of them can make its
        field due (False: nothing done; the caller goes batch by batch, which flushes fields
        as they fill). A 1,000-column table of 25 batches is then 1,000 steps, not 25,000
        (each a pyarrow array object made, ~1 us). The bytes counted are the batch path's
        (a validity buffer without nulls aside: a few bytes a chunk)."""
        if table.num_rows == 0 or any(e.accepts_chunks for e in self._encoders):
            return False
        self._validate(table)
        cols = [table.column(i) for i in range(table.num_columns)]
        for i in self._storage_types:
            cols[i] = cols[i].cast(self._storage_types[i])
        n = table.num_rows
        # (nbytes of a chunked array costs ~1.6 us a chunk: only where a value's size cannot say)
        sizes = [n * w if w and not c.null_count else c.nbytes for c, w in zip(cols, self._value_bytes)]
        limit = self.options.data_cache_bytes
        # (a value's bits in a validity buffer are at most an eighth of its size, plus a byte a chunk)
        if any(p + s + s // 8 + c.num_chunks >= limit for p, s, c in zip(self._pending_bytes, sizes, cols)):
            return False
        for i, c in enumerate(cols):
            self._pending[i].append(c)
            self._pending_bytes[i] += sizes[i]
        self._num_rows += n
        return True

    def _validate(self, batch: pa.RecordBatch | pa.Table) -> None:
        want = self._schema
        got = batch.schema
        if not got.equals(want, check_metadata=False):
            if got.names != want.names:
                raise SchemaMismatchError(
                    f"batch columns {got.names} do not match the writer's schema columns {want.names}"
                )
            for a, b in zip(got, want):
                if a.type != b.type or a.nullable != b.nullable:
                    raise SchemaMismatchError(
                        f"column {a.name!r} is {a.type}{'' if a.nullable else ' not null'} in the batch but "
                        f"{b.type}{'' if b.nullable else ' not null'} in the writer's schema"
                    )
        for i, f in enumerate(want):
            if not f.nullable and batch.column(i).null_count:
                raise InvalidInputError(
                    f"The field {f.name!r} contained null values even though the field is marked non-null in the schema"
                )
        if self._required_children:
            for i, f in enumerate(want):
                where = null_in_required_child(batch.column(i), f.type, f.name)
                if where is not None:
                    raise InvalidInputError(f"the field {where!r} holds null values but is marked non-null in the "
                                            f"schema (a file holding them could not be read)")

    def _flush_fields(self, fields) -> None:
        """Encode and write the pending data of ``fields``, in that order: runs of float
        fields that can be encoded together (:meth:`_flush_many`) as one, the others one
        at a time (:meth:`_flush_each`). The file's bytes are the same either way."""
        def what(i: int):
            parts = self._pending[i]
            return self._many_keys[i], sum(len(p) for p in parts), any(p.null_count for p in parts)

        for together, group, rows in group_fields(fields, what, self.options.max_page_bytes, _MANY_BYTES):
            if together:
                self._flush_many(group, rows)
            else:
                self._flush_each(group)

    def _flush_many(self, fields: list[int], rows: int) -> None:
        """Float fields of ``rows`` values each, no nulls, one page each, sharing a type
        and options: their values joined into one buffer (a column after the other) and
        their pages encoded together (:func:`~lancefile.encodings.structural.encode_many.float_pages`);
        a page that takes another way is encoded alone."""
        chunks = [c for i in fields for p in self._pending[i]
                  for c in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])]
        values = pa.concat_arrays(chunks)
        for i in fields:
            self._pending[i] = []
            self._pending_bytes[i] = 0
        if self._stats is not None:
            self._stats.add_columns(fields, values, rows)
        first = self._encoders[fields[0]]
        placed = float_pages(values, len(fields), first.strategies[0], first.grammar, self._sink.alignment)
        run, data = [], None  # pages lying in one array, written together (FileSink.add_laid_out)
        for r, (i, got) in enumerate(zip(fields, placed)):
            if got is None:  # encoded alone
                self._sink.add_laid_out(data, run)
                run = []
                self._encoders[i].encode(values.slice(r * rows, rows), self._sink)
                continue
            page, array, starts, sizes = got
            if array is not data:
                self._sink.add_laid_out(data, run)
                run, data = [], array
            run.append((self._encoders[i].columns[0], page, starts, sizes))
        self._sink.add_laid_out(data, run)

    def _flush_each(self, fields) -> None:
        """Encode and write the pending data of ``fields``, one after the other.

        Fields whose encoders can (2.1+, no blobs) are encoded on the write pool, a few at a
        time, and written in order as they finish: the file's bytes are the same as one
        field after the other, and the compiled kernels of two fields use both cores.
        """
        work = [(i, arr) for i in fields if (arr := self._take_pending(i)) is not None]
        # small fields are Python-bound: on threads they would only contend for the GIL
        threaded = [getattr(self._encoders[i], "thread_safe", False) and arr.nbytes >= _THREAD_MIN_BYTES
                    for i, arr in work]
        if WRITE_THREADS <= 1 or sum(threaded) < 2:
            for i, arr in work:
                self._encoders[i].encode(arr, self._sink)
            return
        pool = shared_pool("write", WRITE_THREADS)
        window = 2 * WRITE_THREADS  # encoded fields held at once, waiting for their turn
        futures: list = [None] * len(work)

        def submit(k: int) -> None:
            if k < len(work) and threaded[k]:
                i, arr = work[k]
                futures[k] = pool.submit(self._encoders[i].pages, arr)

        for k in range(window):
            submit(k)
        try:
            for k, (i, arr) in enumerate(work):
                if futures[k] is None:
                    self._encoders[i].encode(arr, self._sink)
                else:
                    for col, page in futures[k].result():
                        self._sink.add_page(col, page)
                    futures[k] = None
                submit(k + window)
        finally:
            wait([f for f in futures if f is not None])  # an error: nothing left running

    def _take_pending(self, i: int):
        """Field ``i``'s pending arrays as one array (or chunked array), now owned by the caller;
        its statistics are gathered here (None: nothing pending)."""
        parts = self._pending[i]
        if not parts:
            return None
        if len(parts) == 1 and isinstance(parts[0], pa.ChunkedArray):  # a Table's column (_pend_table)
            one = parts[0]
            arr = one.chunk(0) if one.num_chunks == 1 else _combined(one)
        elif any(isinstance(p, pa.ChunkedArray) for p in parts):
            parts = [c for p in parts for c in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])]
            arr = parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
        elif len(parts) == 1:
            arr = parts[0]
        elif self._encoders[i].accepts_chunks:  # the encoder writes pages from the parts, no copy
            arr = pa.chunked_array(parts, type=parts[0].type)
        else:
            arr = pa.concat_arrays(parts)
        self._pending[i] = []
        self._pending_bytes[i] = 0
        if self._stats is not None:
            self._stats.add_column(i, arr)
        return arr

    def add_global_buffer(self, data: bytes) -> int:
        """Store extra bytes in the file; returns the buffer's index (1, 2, ...)."""
        self._check_open()
        if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview, pa.Buffer, np.ndarray)):
            raise InvalidInputError(f"a global buffer holds bytes (bytes, bytearray, memoryview, pyarrow.Buffer), "
                                    f"not {type(data).__name__}")
        data = bytes(memoryview(data).cast("B")) if isinstance(data, np.ndarray) else bytes(data)
        if self._sink is None:
            self._pending_global.append(data)
            return len(self._pending_global)
        try:
            self._global_refs.append(self._sink.write_buffer(data))
        except OSError as exc:
            error = self._io_error(exc)
            self._give_up(error)
            raise error from exc
        return len(self._global_refs)

    def add_schema_metadata(self, key: str, value: str) -> None:
        """Add a key/value pair to the file's schema metadata (``str``, or UTF-8 ``bytes``)."""
        self._check_open()
        self._extra_metadata[_metadata_text(key, "key")] = _metadata_text(value, f"value of {key!r}")

    def _io_error(self, exc: OSError) -> LanceIOError:
        """An OS failure while writing (ENOSPC, EFBIG, a removed directory...) as a Lance error naming the file."""
        if isinstance(exc, LanceIOError) and self.path in str(exc):
            return exc
        return LanceIOError(f"cannot write {self.path}: {exc.strerror or exc}")

    # -- finishing ----------------------------------------------------------------------
    def close(self) -> int:
        """Finish the file and move it into place; returns the number of rows written."""
        with gc_paused():
            return self._close()

    def _close(self) -> int:
        if self._aborted is not False:  # never a row count for a file that is not there
            raise self._abandoned()
        if self._closed:
            return self._num_rows
        try:
            if self._sink is None:
                raise InvalidInputError(
                    f"cannot finish {self.path}: no schema was given and no data was written"
                )
            self._finish()
            self._sink.sync()
            if os.path.isdir(self._target):  # made since the writer was opened: os.replace would say only "Is a directory"
                raise LanceIOError(f"cannot write {self.path}: it is a directory")
            if os.name == "nt":  # Windows cannot rename an open file (and has no locks to keep)
                self._sink.file.close()
            os.replace(self._tmp, self._target)
            if self._remote is None:  # the new name on disk too (a staging copy needs no such care)
                sync_directory(os.path.dirname(self._target))
            self._size = os.path.getsize(self._target)
            self._sink.file.close()  # the lock goes with it, after the rename: no sweep can take the file
            if self._remote is not None:
                self._remote.send()
        except OSError as exc:
            error = self._io_error(exc)
            self._give_up(error)
            raise error from exc
        except BaseException as exc:
            self._give_up(exc)
            raise
        self._closed = True
        return self._num_rows

    def size_bytes(self) -> int:
        """The size of the finished file in bytes (after :meth:`close`)."""
        if self._aborted is not False:
            raise self._abandoned()
        if not self._closed or self._size is None:
            raise InvalidInputError(f"{self.path}: the file's size is known once the writer is closed")
        return self._size

    def _finish(self) -> None:
        sink = self._sink
        self._flush_fields(range(len(self._encoders)))
        for enc in self._encoders:
            enc.finish(sink)
        metadata = dict(self._lance_schema.metadata)
        metadata.update({k: v.encode() for k, v in self._extra_metadata.items()})
        if self._stats is not None and self._stats.fields and self._num_rows:
            # a global buffer of its own, found by its magic: the schema is left as the user gave it
            self._global_refs.append(sink.write_buffer(self._stats.to_bytes(self._num_rows, self.version.name)))
        self._lance_schema.metadata = metadata
        sink.write_tail(descriptor_bytes(self._lance_schema, self._num_rows), self._global_refs,
                        self._column_encodings(), self.version.footer)

    def _column_encodings(self) -> list[file2_pb2.Encoding]:
        return [file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(COLUMN_ENCODING_URL, e)))
                for e in self._codec.column_encodings(self._lance_schema, self._columns)]

    def abort(self) -> None:
        """Give up: remove the temporary file; nothing is left at the destination. Later calls
        of :meth:`write_batch`, :meth:`close` or :meth:`size_bytes` raise (a closed file is
        kept: aborting it removes nothing)."""
        if self._closed and self._aborted is False:
            return
        self._give_up(True)

    def _give_up(self, cause: BaseException | bool) -> None:
        """:meth:`abort`, remembering why (said again by a later :meth:`close`)."""
        if self._aborted is False:
            self._aborted = cause
        self._closed = True
        sink, self._sink = self._sink, None
        if sink is not None:  # (only a temporary file this writer made: never one it found there)
            try:
                sink.discard()
            except OSError:
                pass
            try:
                os.unlink(self._tmp)
            except FileNotFoundError:
                pass
        if self._remote is not None:
            self._remote.discard()

    def __enter__(self) -> "LanceFileWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def __del__(self) -> None:  # never finalise from a destructor; just clean up
        try:
            if not self._closed:
                self.abort()
        except Exception:
            pass
