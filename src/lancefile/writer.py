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
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ._proto import file2_pb2
from .encodings.page import EncodedPage
from .encodings.versions import codec_for
from .errors import InvalidInputError, LanceIOError, SchemaMismatchError
from .format.container import (
    ARRAY_ENCODING_URL,
    COLUMN_ENCODING_URL,
    BufferRef,
    Footer,
    encode_footer,
    encode_offset_table,
    pack_any,
)
from .format.schema import LanceSchema, descriptor_bytes
from .format.version import DEFAULT_VERSION, resolve_version
from .statistics import DEFAULT_MAX_BOUND_BYTES, DEFAULT_ZONE_ROWS, StatisticsCollector

__all__ = ["LanceFileWriter", "WriterOptions", "DEFAULT_MAX_PAGE_BYTES", "DEFAULT_DATA_CACHE_BYTES", "PAGE_ALIGNMENT"]

DEFAULT_MAX_PAGE_BYTES = 32 * 1024 * 1024
DEFAULT_DATA_CACHE_BYTES = 8 * 1024 * 1024
PAGE_ALIGNMENT = 64
PAD_BYTE = 0x48  # the reference pads with 'H'; any byte is valid
_WRITEV = hasattr(os, "writev")
_IOV_MAX = 1024  # pieces per writev call (the POSIX minimum of IOV_MAX)
_OUT_OF_LINE_COPY_BYTES = 16 << 20  # out-of-line values up to this are gathered into one buffer first


@dataclass(frozen=True)
class WriterOptions:
    """Options shared by :class:`LanceFileWriter` and :func:`lancefile.write_table`."""

    version: str = DEFAULT_VERSION.value
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    data_cache_bytes: int = DEFAULT_DATA_CACHE_BYTES
    alignment: int = PAGE_ALIGNMENT

    def __post_init__(self) -> None:
        if self.max_page_bytes <= 0:
            raise InvalidInputError(f"max_page_bytes must be positive, not {self.max_page_bytes}")
        if self.data_cache_bytes < 0:
            raise InvalidInputError(f"data_cache_bytes must be >= 0, not {self.data_cache_bytes}")
        if self.alignment < 8 or self.alignment & (self.alignment - 1):
            raise InvalidInputError(f"alignment must be a power of two >= 8, not {self.alignment}")


class _Sink:
    """The temporary file being written, plus the pages recorded per column."""

    def __init__(self, path: str, alignment: int, num_columns: int, page_url: str = ARRAY_ENCODING_URL) -> None:
        self.path = path
        self.page_url = page_url
        self.alignment = alignment
        try:
            # Unbuffered: page buffers are large, and a BufferedWriter copy costs ~10x the write.
            self.file = open(path, "xb", buffering=0)
        except OSError as exc:
            raise LanceIOError(f"cannot create {path}: {exc.strerror}") from exc
        self.pos = 0
        self.pages: list[list[file2_pb2.ColumnMetadata.Page]] = [[] for _ in range(num_columns)]

    def write(self, data) -> int:
        """Write bytes-like ``data`` (or a list of pieces, back to back); return where it starts."""
        start = self.pos
        if isinstance(data, list):
            self._write_pieces(data)
            return start
        mv = memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data).cast("B")
        done = 0
        while done < len(mv):  # a raw write may be short
            done += self.file.write(mv[done:])
        self.pos += len(mv)
        return start

    def _write_pieces(self, pieces: list) -> None:
        """Write pieces back to back with as few system calls as possible (writev)."""
        views = [memoryview(np.ascontiguousarray(p) if isinstance(p, np.ndarray) else p).cast("B") for p in pieces]
        views = [v for v in views if len(v)]
        self.pos += sum(len(v) for v in views)
        fd, i = self.file.fileno(), 0
        while i < len(views):
            n = os.writev(fd, views[i : i + _IOV_MAX]) if _WRITEV else self.file.write(views[i])
            if not n:
                raise OSError(f"cannot write to {self.path}: no progress")
            while i < len(views) and n >= len(views[i]):  # a write may be short: resume mid-piece
                n -= len(views[i])
                i += 1
            if n:
                views[i] = views[i][n:]

    def align(self) -> None:
        pad = (-self.pos) % self.alignment
        if pad:
            self.write(bytes([PAD_BYTE]) * pad)

    def write_buffer(self, data) -> BufferRef:
        self.align()
        start = self.write(data)
        return BufferRef(start, self.pos - start)

    def add_page(self, column: int, page: EncodedPage) -> None:
        refs = [self.write_buffer(b) for b in page.buffers]
        self.pages[column].append(file2_pb2.ColumnMetadata.Page(
            buffer_offsets=[r.position for r in refs],
            buffer_sizes=[r.size for r in refs],
            length=page.length,
            encoding=file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(self.page_url, page.encoding))),
            priority=0,
        ))

    def write_tail(self, descriptor: bytes, extra_globals: list[BufferRef],
                   column_encodings: list[file2_pb2.Encoding], footer_version: tuple[int, int]) -> None:
        """Schema (global buffer 0), column metadata, offset tables and footer, back to back."""
        global_refs = [self.write_buffer(descriptor)] + list(extra_globals)
        col_refs = []
        col_meta_start = self.pos
        for encoding, pages in zip(column_encodings, self.pages):
            start = self.write(file2_pb2.ColumnMetadata(encoding=encoding, pages=pages).SerializeToString())
            col_refs.append(BufferRef(start, self.pos - start))
        cmo_start = self.write(encode_offset_table(col_refs))
        gbo_start = self.write(encode_offset_table(global_refs))
        major, minor = footer_version
        self.write(encode_footer(Footer(col_meta_start, cmo_start, gbo_start, len(global_refs), len(col_refs), major, minor)))

    def write_out_of_line(self, data: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Write values back to back, each starting aligned; return their positions."""
        a = self.alignment
        padded = (sizes + a - 1) // a * a
        self.align()
        base = self.pos
        starts = np.concatenate([[0], np.cumsum(padded)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)
        total = int(padded.sum())
        if total > _OUT_OF_LINE_COPY_BYTES:
            # large values (blobs): written in place, no copy and no index arrays
            data = np.ascontiguousarray(data).reshape(-1)
            src = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            pad = bytes([PAD_BYTE]) * a
            pieces = []
            for s0, s1, p in zip(src[:-1].tolist(), src[1:].tolist(), padded.tolist()):
                pieces.append(data[s0:s1])
                if p > s1 - s0:
                    pieces.append(pad[: p - (s1 - s0)])
            self.write(pieces)
        elif total:
            out = np.full(total, PAD_BYTE, dtype=np.uint8)
            src_starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            idx = np.arange(int(sizes.sum()), dtype=np.int64)
            dest = idx + np.repeat(starts - src_starts, sizes)
            out[dest] = data
            self.write(out)
        return base + starts


def _has_extension(t: pa.DataType) -> bool:
    if isinstance(t, pa.BaseExtensionType):
        return True
    if pa.types.is_dictionary(t):
        return _has_extension(t.value_type)
    return any(_has_extension(t.field(i).type) for i in range(t.num_fields))


class LanceFileWriter:
    """Writes a Lance file, mirroring ``lance.file.LanceFileWriter``.

    Parameters
    ----------
    path:
        Destination. Nothing appears there until :meth:`close` succeeds.
    schema:
        The Arrow schema; taken from the first batch when omitted.
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
    """

    def __init__(self, path, schema: pa.Schema | None = None, *, version: str | None = None,
                 max_page_bytes: int | None = None, data_cache_bytes: int | None = None,
                 alignment: int = PAGE_ALIGNMENT, statistics: bool = True,
                 statistics_zone_rows: int = DEFAULT_ZONE_ROWS,
                 statistics_max_bound_bytes: int = DEFAULT_MAX_BOUND_BYTES) -> None:
        if not isinstance(statistics, bool):
            raise InvalidInputError(f"statistics must be True or False, not {statistics!r}")
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
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise LanceIOError(f"cannot write {self.path}: directory {directory} does not exist")
        self._tmp = os.path.join(directory, f".{os.path.basename(self.path)}.{uuid.uuid4().hex[:12]}.tmp")
        self._sink: _Sink | None = None
        self._schema: pa.Schema | None = None
        self._lance_schema: LanceSchema | None = None
        self._extra_metadata: dict[str, str] = {}
        self._pending_global: list[bytes] = []
        self._global_refs: list[BufferRef] = []
        self._num_rows = 0
        self._closed = False
        if schema is not None:
            self._start(schema)

    # -- set-up -------------------------------------------------------------------------
    def _start(self, schema: pa.Schema) -> None:
        lance_schema = LanceSchema.from_arrow(schema)
        if self._stats_options is not None:
            self._stats = StatisticsCollector(schema, lance_schema, *self._stats_options)
        self._columns = self._codec.assign_columns(lance_schema)
        self._encoders = [self._codec.build_encoder(f, self._columns, self.options.max_page_bytes)
                          for f in lance_schema.fields]
        self._schema = schema
        self._lance_schema = lance_schema
        # Columns holding extension types are written as their storage type.
        self._storage_types = {
            i: f.to_arrow().type for i, f in enumerate(lance_schema.fields) if _has_extension(schema.field(i).type)
        }
        self._sink = _Sink(self._tmp, self.options.alignment, len(self._columns), self._codec.page_encoding_url)
        self._pending = [[] for _ in lance_schema.fields]
        self._pending_bytes = [0] * len(lance_schema.fields)
        for data in self._pending_global:
            self._global_refs.append(self._sink.write_buffer(data))
        self._pending_global = []

    @property
    def schema(self) -> pa.Schema | None:
        return self._schema

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInputError(f"writer for {self.path} is already closed")

    # -- writing ------------------------------------------------------------------------
    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append a RecordBatch or Table whose schema matches the writer's."""
        self._check_open()
        if isinstance(batch, pa.Table):
            for b in batch.to_batches():
                self.write_batch(b)
            if batch.num_rows == 0 and self._schema is None:
                self._start(batch.schema)
            return
        if not isinstance(batch, pa.RecordBatch):
            raise InvalidInputError(f"write_batch takes a pyarrow RecordBatch or Table, not {type(batch).__name__}")
        if self._schema is None:
            self._start(batch.schema)
        self._validate(batch)
        try:
            for i, col in enumerate(batch.columns):
                if i in self._storage_types:
                    col = col.cast(self._storage_types[i])
                self._pending[i].append(col)
                self._pending_bytes[i] += col.nbytes
                if self._pending_bytes[i] >= self.options.data_cache_bytes:
                    self._flush_field(i)
            self._num_rows += batch.num_rows
        except BaseException:
            self.abort()
            raise

    def _validate(self, batch: pa.RecordBatch) -> None:
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

    def _flush_field(self, i: int) -> None:
        parts = self._pending[i]
        if not parts:
            return
        if len(parts) == 1:
            arr = parts[0]
        elif self._encoders[i].accepts_chunks:  # the encoder writes pages from the parts, no copy
            arr = pa.chunked_array(parts, type=parts[0].type)
        else:
            arr = pa.concat_arrays(parts)
        self._pending[i] = []
        self._pending_bytes[i] = 0
        if self._stats is not None:
            self._stats.add_column(i, arr)
        self._encoders[i].encode(arr, self._sink)

    def add_global_buffer(self, data: bytes) -> int:
        """Store extra bytes in the file; returns the buffer's index (1, 2, ...)."""
        self._check_open()
        data = bytes(data)
        if self._sink is None:
            self._pending_global.append(data)
            return len(self._pending_global)
        self._global_refs.append(self._sink.write_buffer(data))
        return len(self._global_refs)

    def add_schema_metadata(self, key: str, value: str) -> None:
        """Add a key/value pair to the file's schema metadata."""
        self._check_open()
        self._extra_metadata[str(key)] = str(value)

    # -- finishing ----------------------------------------------------------------------
    def close(self) -> int:
        """Finish the file and move it into place; returns the number of rows written."""
        if self._closed:
            return self._num_rows
        try:
            if self._sink is None:
                raise InvalidInputError(
                    f"cannot finish {self.path}: no schema was given and no data was written"
                )
            self._finish()
            self._sink.file.flush()
            os.fsync(self._sink.file.fileno())
            self._sink.file.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        self._closed = True
        return self._num_rows

    def _finish(self) -> None:
        sink = self._sink
        for i in range(len(self._encoders)):
            self._flush_field(i)
        for enc in self._encoders:
            enc.finish(sink)
        metadata = dict(self._lance_schema.metadata)
        metadata.update({k: v.encode() for k, v in self._extra_metadata.items()})
        if self._stats is not None and self._stats.fields and self._num_rows:
            # a global buffer of its own, found by its magic: the schema is left as the user gave it
            self._global_refs.append(sink.write_buffer(self._stats.to_bytes(os.path.dirname(self._tmp), self._num_rows)))
        self._lance_schema.metadata = metadata
        sink.write_tail(descriptor_bytes(self._lance_schema, self._num_rows), self._global_refs,
                        self._column_encodings(), self.version.footer)

    def _column_encodings(self) -> list[file2_pb2.Encoding]:
        return [file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(COLUMN_ENCODING_URL, e)))
                for e in self._codec.column_encodings(self._lance_schema, self._columns)]

    def abort(self) -> None:
        """Give up: remove the temporary file; nothing is left at the destination."""
        self._closed = True
        sink, self._sink = self._sink, None
        if sink is not None:
            try:
                sink.file.close()
            except OSError:
                pass
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass

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
