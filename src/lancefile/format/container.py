"""The Lance v2 container: footer, offset tables, column metadata, global buffers.

File layout (little-endian)::

    [page buffers, out-of-line buffers, extra global buffers]   64-byte aligned
    [global buffer 0: FileDescriptor protobuf (schema + row count)]
    [column metadata 0..C-1: ColumnMetadata protobufs, back to back]
    [CMO table: C x (u64 position, u64 size)]
    [GBO table: G x (u64 position, u64 size)]
    [footer: 40 bytes]

Footer::

    u64 column_meta_start | u64 cmo_table_start | u64 gbo_table_start |
    u32 num_global_buffers | u32 num_columns | u16 major | u16 minor | b"LANC"

For example a file whose only content is an empty schema has footer bytes
``... 00 00 00 00 00 00 00 00  01 00 00 00  00 00 00 00  00 00  03 00  4c 41 4e 43``.

Reading starts with one read of the file's tail (``TAIL_READ_BYTES``), which for a small
file holds the footer, both tables, every column's metadata and the schema. For a bigger
one, the schema is one more read, and :meth:`FileLayout.prefetch_columns` fetches the
metadata of just the columns a read needs, neighbours coalesced into one request. Column
metadata is parsed lazily, so opening a 10,000-column file and projecting one column
reads and parses one ColumnMetadata beyond the tail.
"""

from __future__ import annotations

import struct
import warnings
import weakref
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, repeat
from operator import add, attrgetter
from typing import NamedTuple, Sequence

import numpy as np
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError

from .._proto import file2_pb2
from ..errors import CorruptFileError, NotALanceFileError, UnsupportedEncodingError
from ..io import ByteSource
from .checked_source import ChecksummedSource
from .checksums import FileChecksums, NewerChecksums, is_checksum_buffer
from .pagetable import ColumnTables, PageTable, column_tables, page_table
from .version import VersionInfo, version_from_footer

__all__ = [
    "FOOTER_LEN",
    "MAGIC",
    "MAX_ROWS",
    "TAIL_READ_BYTES",
    "BufferRef",
    "PageInfo",
    "ColumnInfo",
    "Footer",
    "FileLayout",
    "read_layout",
    "pack_any",
    "unpack_any",
    "encode_footer",
    "encode_offset_table",
]

FOOTER_LEN = 40
MAGIC = b"LANC"
TAIL_READ_BYTES = 64 * 1024
# Column metadata entries closer than this are fetched in one request.
METADATA_COALESCE_GAP = 64 * 1024
_MESSAGES_KEPT = 4096  # distinct encodings a FileLayout keeps parsed (FileLayout.message)
_FOOTER = struct.Struct("<QQQIIHH4s")
# Row and value counts are u64 in the format but int64 in Arrow and numpy: a column's pages
# holding more than this many rows in all are refused (so sums and products of counts stay exact).
MAX_ROWS = 2**62

ARRAY_ENCODING_URL = "/lance.encodings.ArrayEncoding"
COLUMN_ENCODING_URL = "/lance.encodings.ColumnEncoding"
BUFFER_PAD_BYTE = 0x48  # what pads the space between buffers: the reference's 'H' (any byte is valid)


class BufferRef(NamedTuple):
    """A byte range in the file (a tuple: made by the thousand when a column's pages are parsed)."""

    position: int
    size: int


@dataclass(frozen=True)
class Footer:
    column_meta_start: int
    cmo_table_start: int
    gbo_table_start: int
    num_global_buffers: int
    num_columns: int
    major: int
    minor: int


def encode_footer(f: Footer) -> bytes:
    return _FOOTER.pack(
        f.column_meta_start, f.cmo_table_start, f.gbo_table_start,
        f.num_global_buffers, f.num_columns, f.major, f.minor, MAGIC,
    )


def encode_offset_table(refs: list[BufferRef]) -> bytes:
    arr = np.array([(r.position, r.size) for r in refs], dtype="<u8").reshape(-1, 2)
    return arr.tobytes()


def pack_any(type_url: str, message) -> bytes:
    """Serialize ``message`` as a google.protobuf.Any with the reference's type URL."""
    return any_pb2.Any(type_url=type_url, value=message.SerializeToString()).SerializeToString()


def unpack_any(data: bytes, expected_url: str, message_cls, *, where: str):
    """Parse an Any and its payload; the type is matched on the full name after the last '/'."""
    try:
        anyv = any_pb2.Any.FromString(bytes(data))
    except DecodeError as exc:
        raise CorruptFileError(f"{where}: encoding is not a valid protobuf Any ({exc})") from None
    got = anyv.type_url.rsplit("/", 1)[-1]
    want = expected_url.rsplit("/", 1)[-1]
    if got != want:
        raise UnsupportedEncodingError(
            f"{where}: encoding has type {anyv.type_url!r} but this file version expects {want!r}"
        )
    msg = message_cls()
    try:
        msg.ParseFromString(anyv.value)
    except DecodeError as exc:
        raise CorruptFileError(f"{where}: cannot decode {want} ({exc})") from None
    return msg


def _parse_footer(tail: memoryview, size: int, path: str) -> Footer:
    if size < FOOTER_LEN:
        raise NotALanceFileError(f"{path}: {size} bytes is too short to be a Lance file (footer is {FOOTER_LEN})")
    raw = bytes(tail[-FOOTER_LEN:])
    *fields, magic = _FOOTER.unpack(raw)
    if magic != MAGIC:
        raise NotALanceFileError(f"{path}: not a Lance file (footer magic is {magic!r}, expected {MAGIC!r})")
    footer = Footer(*fields)
    body = size - FOOTER_LEN
    g, c = footer.num_global_buffers, footer.num_columns
    if footer.gbo_table_start + 16 * g > body:
        raise CorruptFileError(
            f"{path}: footer says {g} global buffers at {footer.gbo_table_start}, which run past the footer at {body}"
        )
    if 16 * c > footer.gbo_table_start:
        raise CorruptFileError(f"{path}: footer says {c} columns, more than the file can hold")
    if footer.column_meta_start > footer.gbo_table_start - 16 * c:
        raise CorruptFileError(
            f"{path}: column metadata start {footer.column_meta_start} lies after the column offset table"
        )
    if g < 1:
        raise CorruptFileError(f"{path}: footer says 0 global buffers; buffer 0 must hold the schema")
    return footer


class PageInfo(NamedTuple):
    """One page of one column: its buffers, row count and raw encoding."""

    buffers: tuple[BufferRef, ...]
    length: int
    encoding: bytes  # serialized google.protobuf.Any (DirectEncoding payload)
    priority: int


class Pages(Sequence):
    """A column's pages, each parsed and checked when first used.

    A read touches few pages of a column with many (a take, a range): building and checking
    all of them when the column is opened cost a third of a 1% range read of a nested file
    (155 pages a column). Row counts and stored bytes of all pages are known at once.
    """

    def __init__(self, raw, limit: int, where: str, message: bytes = b"") -> None:
        self._raw = raw  # the protobuf pages (repeated Page)
        self._made: list = [None] * len(raw)
        self._limit, self._where = limit, where
        self._message = message  # the serialized ColumnMetadata, for the page table
        self._table: PageTable | None | bool = False  # not built yet
        self._simple = self._facts = None

    @property
    def table(self) -> PageTable | None:
        """The same pages as arrays (:mod:`.pagetable`), built when first asked for (a take of
        many pages asks; a column read page by page, or of one page, does not need it): None
        when the message is not walked there."""
        got = self._table
        if got is False:
            got = self._table = page_table(self._message, len(self._raw), self._limit) if self._message else None
            if got is not None:
                self._facts = (got.lengths.tolist(), got.priorities.tolist())
                self._simple = got.simple.tolist()
        return got

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._made)))]
        got = self._made[i]  # IndexError as a list gives it
        if got is None:
            i %= len(self._made)
            got = self._made[i] = self._make(i)
        return got

    def _make(self, i: int) -> PageInfo:
        if self._simple is not None and self._simple[i]:  # from the arrays: no protobuf objects
            t = self.table
            lengths, prios = self._facts
            refs = tuple(map(_new_tuple, _BUFFER_REF, t.buffers(i)))
            return _new_tuple(PageInfo, (refs, lengths[i], t.encoding(i), prios[i]))
        return _page_info(self._raw[i], self._limit, self._where, i)

    def __iter__(self):
        for i in range(len(self._made)):
            yield self[i]

    def stored_bytes(self, indices) -> int:
        """The bytes of the buffers of pages ``indices`` (as the metadata gives them)."""
        raw = self._raw
        return sum(sum(raw[i].buffer_sizes) for i in indices)


def _page_info(page, limit: int, where: str, p_i: int) -> PageInfo:
    # unsigned: never negative; copied to lists once (iterating protobuf containers twice costs more)
    offs, sizes = page.buffer_offsets[:], page.buffer_sizes[:]
    enc = page.encoding
    if (len(offs) != len(sizes) or len(offs) > _SHORT_BUFFER_LIST
            or max(map(add, offs, sizes), default=0) > limit or not enc.HasField("direct")):
        pw = f"{where} page {p_i}"  # the slow path says what is wrong
        return PageInfo(_check_buffers(offs, sizes, limit, pw), page.length, _direct_bytes(enc, pw), page.priority)
    # tuple.__new__ rather than the named tuples' Python-level constructors: this runs for
    # every page a read touches (hundreds in a take of a nested file)
    refs = tuple(map(_new_tuple, _BUFFER_REF, zip(offs, sizes)))
    return _new_tuple(PageInfo, (refs, page.length, enc.direct.encoding, page.priority))


def _weak_describe(layout):
    """``layout.describe_range`` through a weak reference (``bytes [lo, hi)`` once it is gone)."""
    ref = weakref.ref(layout)

    def describe(lo: int, hi: int) -> str:
        got = ref()
        return got.describe_range(lo, hi) if got is not None else f"bytes [{lo}, {hi})"

    return describe


_new_tuple = tuple.__new__
_LENGTH = attrgetter("length")
_BUFFER_REF = repeat(BufferRef)


@dataclass  # (not frozen: a frozen dataclass's __init__ costs a microsecond more, and a wide file has thousands)
class ColumnInfo:
    index: int
    encoding: bytes  # serialized Any holding a ColumnEncoding
    pages: Sequence[PageInfo]
    buffers: tuple[BufferRef, ...]
    lengths: tuple[int, ...]  # every page's rows (from the metadata, without building pages)

    @cached_property
    def data_bytes(self) -> int:
        """The bytes of every page's buffers, summed when first asked (a take never asks:
        the sum costs about a microsecond a page)."""
        return self.pages.stored_bytes(range(len(self.pages)))

    def data_bytes_estimate(self, sample: int = 16) -> float:
        """:attr:`data_bytes`, or for a column of more than ``sample`` pages an estimate
        from that many pages spread over it (their bytes a row times the column's rows):
        enough to size a read's chunks, at the cost of ``sample`` pages."""
        n = len(self.lengths)
        if n <= sample:
            return float(self.data_bytes)
        picks = sorted({(n - 1) * k // (sample - 1) for k in range(sample)})
        rows = sum(self.lengths[i] for i in picks)
        return self.pages.stored_bytes(picks) / max(rows, 1) * sum(self.lengths)

    @cached_property
    def page_starts(self) -> np.ndarray:
        """Cumulative row offsets: page i covers rows [starts[i], starts[i+1])."""
        # a Python running sum: columns have few pages, and numpy's per-call cost adds up on wide files
        return np.array(list(accumulate(self.lengths, initial=0)), dtype=np.int64)

    @property
    def num_rows(self) -> int:
        return int(self.page_starts[-1])


def _direct_bytes(enc: file2_pb2.Encoding, where: str) -> bytes:
    kind = enc.WhichOneof("location")
    if kind == "direct":
        return enc.direct.encoding
    if kind == "indirect":
        raise UnsupportedEncodingError(f"{where}: indirect (deferred) encodings are not supported")
    raise CorruptFileError(f"{where}: encoding is missing")


_SHORT_BUFFER_LIST = 64


def _check_buffers(offsets, sizes, limit: int, where: str) -> tuple[BufferRef, ...]:
    if len(offsets) != len(sizes):
        raise CorruptFileError(f"{where}: {len(offsets)} buffer offsets but {len(sizes)} sizes")
    if not len(offsets):
        return ()
    if len(offsets) <= _SHORT_BUFFER_LIST:  # the usual case: plain Python is faster than numpy here
        refs = tuple(map(BufferRef, map(int, offsets), map(int, sizes)))
        for i, (a, b) in enumerate(refs):
            if a < 0 or b < 0 or a + b > limit:
                raise CorruptFileError(f"{where}: buffer {i} [{a}, +{b}) lies outside the file of {limit} bytes")
        return refs
    off = np.asarray(offsets, dtype=np.uint64)
    sz = np.asarray(sizes, dtype=np.uint64)
    end = off + sz
    bad = (end > limit) | (end < off)
    if bad.any():
        i = int(np.argmax(bad))
        raise CorruptFileError(
            f"{where}: buffer {i} [{int(off[i])}, +{int(sz[i])}) lies outside the file of {limit} bytes"
        )
    return tuple(BufferRef(int(a), int(b)) for a, b in zip(offsets, sizes))


class FileLayout:
    """Everything the footer and the metadata region say about a file.

    Column metadata is decoded on first use of :meth:`column`.
    """

    def __init__(self, source: ByteSource, footer: Footer, version: VersionInfo,
                 global_buffers: tuple[BufferRef, ...], cmo: np.ndarray,
                 meta_region: memoryview, meta_region_start: int) -> None:
        self.source = source
        self.path = source.name
        self.footer = footer
        self.version = version
        self.global_buffers = global_buffers
        self._cmo = cmo
        # byte ranges already in memory: the tail read, then what prefetch_columns fetched
        self._regions: list[tuple[int, memoryview]] = [(meta_region_start, meta_region)]
        self._columns: dict[int, ColumnInfo] = {}
        self._messages: dict = {}  # (message class, bytes) -> parsed once (see message)
        self.num_rows: int | None = None  # the schema's row count, once the reader has parsed it
        self.checksums: FileChecksums | None = None  # set by use_checksums()
        self._newer_checksums = False  # the checksum buffer is a later lancefile's (read unchecked)
        self.raw_source = source  # reads without checksum checks

    # -- checksums ------------------------------------------------------------------------
    def find_checksums(self) -> FileChecksums | None:
        """The file's checksum buffer (lancefile writes it last), checked against itself and the tail."""
        gbs = self.global_buffers
        if len(gbs) < 2 or gbs[-1].size < 16 or self._newer_checksums:
            return None
        raw = self.read_buffer(gbs[-1])
        if not is_checksum_buffer(raw):
            return None
        try:
            ck = FileChecksums.parse(raw, self.path)
        except NewerChecksums as exc:  # a later lancefile's file: its data is read as ever, unchecked
            warnings.warn(str(exc), stacklevel=4)
            self._newer_checksums = True  # (said once a file)
            return None
        if (ck.num_columns != self.num_columns or ck.num_global_buffers != len(gbs)
                or ck.covered > gbs[-1].position):
            raise CorruptFileError(f"{self.path}: the checksum buffer describes another file layout "
                                   f"({ck.num_columns} columns, {ck.num_global_buffers} global buffers)")
        f = self.footer
        tail = encode_footer(f) + self._cmo.astype("<u8").tobytes() + encode_offset_table(list(gbs[:-1]))
        ck.check_tail(tail)
        return ck

    def use_checksums(self) -> FileChecksums | None:
        """Check every later read against the file's checksums, if it has them."""
        ck = self.find_checksums()
        if ck is not None:
            self.checksums = ck
            # the source names damaged bytes through the layout, which holds the source: a weak
            # reference, so that a closed reader is freed at once, not by the garbage collector
            self.source = ChecksummedSource(self.raw_source, ck, _weak_describe(self))
        return ck

    def describe_range(self, lo: int, hi: int) -> str:
        """What bytes ``[lo, hi)`` hold: ``column 2 page 0 buffer 1``, ``global buffer 3``..."""
        found = []
        for g, ref in enumerate(self.global_buffers):
            if ref.position < hi and lo < ref.position + ref.size:
                found.append(f"global buffer {g}")
        try:
            self.prefetch_columns(range(self.num_columns))
            for c in range(self.num_columns):
                info = self.column(c)
                for p, page in enumerate(info.pages):
                    for b, ref in enumerate(page.buffers):
                        if ref.position < hi and lo < ref.position + ref.size:
                            found.append(f"column {c} page {p} buffer {b}")
        except Exception:  # noqa: BLE001 - only naming the damage; the metadata may be damaged too
            pass
        if len(found) > 6:
            found = found[:6] + [f"{len(found) - 6} more"]
        return ", ".join(found) or "padding or out-of-line values"

    @property
    def num_columns(self) -> int:
        return self.footer.num_columns

    @cached_property
    def _metadata_bounds(self) -> tuple[int, int]:
        """[start, end) of the column metadata: it ends where the CMO table begins."""
        return self.footer.column_meta_start, self.footer.gbo_table_start - 16 * self.num_columns

    @cached_property
    def _cmo_rows(self) -> list:
        """The CMO table as Python ints, ``[position, size]`` a column (a wide file's columns are
        looked up a thousand at a time; numpy scalars cost a conversion each)."""
        return self._cmo.tolist()

    @property
    def file_size(self) -> int:
        return self.source.size

    def region_bytes(self, ref: BufferRef) -> memoryview | None:
        """The bytes of ``ref`` if they were part of a metadata read, else None."""
        for start, view in self._regions:
            lo = ref.position - start
            if lo >= 0 and lo + ref.size <= len(view):
                return view[lo : lo + ref.size]
        return None

    def prefetch_columns(self, indices) -> None:
        """Fetch the metadata of these columns that is not in memory yet, coalesced.

        Neighbouring columns' metadata (gaps under :data:`METADATA_COALESCE_GAP`) comes in
        one request, so a full scan costs one read and a projection only its columns'.
        Entries that point outside the metadata region are left for :meth:`column` to report.
        """
        meta_lo, meta_hi = self._metadata_bounds
        spans = []
        for i in set(indices):
            if i in self._columns or not 0 <= i < self.num_columns:
                continue
            pos, size = self._cmo_rows[i]
            if meta_lo <= pos and pos + size <= meta_hi and self.region_bytes(BufferRef(pos, size)) is None:
                spans.append((pos, pos + size))
        if not spans:
            return
        spans.sort()
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a - hi > METADATA_COALESCE_GAP:
                self._regions.append((lo, self.source.read(lo, hi - lo)))
                lo = a
            hi = max(hi, b)
        self._regions.append((lo, self.source.read(lo, hi - lo)))

    def column_tables(self, indices: list[int]) -> tuple[ColumnTables, list[int]] | None:
        """The page tables of columns ``indices`` (:func:`.pagetable.column_tables`), walked in
        one compiled pass over their metadata where it is in memory (see
        :meth:`prefetch_columns`) and checked against the metadata checksums: ``(tables,
        positions)``, ``positions[k]`` being column ``indices[k]``'s place in the tables or -1
        (outside the metadata region, not in memory: :meth:`column` reads it). None when none is."""
        meta_lo, meta_hi = self._metadata_bounds
        idx = np.asarray(indices, np.int64)
        valid = (idx >= 0) & (idx < self.num_columns)
        cmo = self._cmo.reshape(-1, 2)[np.where(valid, idx, 0)].astype(np.int64)
        pos, size = cmo[:, 0], cmo[:, 1]
        valid &= (meta_lo <= pos) & (size >= 0) & (size <= meta_hi - pos)
        # the regions holding them (the tail, a prefetch: few), side by side in one array
        found = np.zeros(len(idx), np.bool_)
        base = np.zeros(len(idx), np.int64)  # where each one's region starts in the joined array, less its position
        parts, at = [], 0
        for start, view in self._regions:
            inside = valid & ~found & (pos >= start) & (pos - start <= len(view) - size)
            if inside.any():
                found |= inside
                base[inside] = at - start
                parts.append(np.frombuffer(view, np.uint8))
                at += len(view)
        picked = np.flatnonzero(found)
        if not len(picked):
            return None
        raw = np.concatenate(parts)
        starts, sizes = pos[picked] + base[picked], size[picked]
        if self.checksums is not None:
            for c, a, n in zip(idx[picked].tolist(), starts.tolist(), sizes.tolist()):
                self.checksums.check_column_metadata(c, raw[a : a + n])
        tables = column_tables(raw, starts, starts + sizes, self.file_size)
        positions = np.full(len(idx), -1, np.int64)
        positions[picked] = np.arange(len(picked))
        return tables, positions.tolist()

    def read_buffer(self, ref: BufferRef) -> memoryview:
        got = self.region_bytes(ref)
        if got is not None and self.checksums is not None and ref.position < self.checksums.covered:
            if not self.checksums.check_in_memory(ref.position, ref.size, self._regions, self.describe_range):
                got = None  # its blocks are not all in memory: a checked read instead
        return got if got is not None else self.source.read(ref.position, ref.size)

    def message(self, data: bytes, url: str, message_cls, where: str):
        """:func:`unpack_any` of ``data``, parsed once per distinct bytes in this file (the
        columns of a wide table share their pages' and columns' encodings byte for byte).
        The message is shared: callers only read it."""
        key = (message_cls, data)
        got = self._messages.get(key)
        if got is None:
            got = unpack_any(data, url, message_cls, where=where)
            if len(self._messages) >= _MESSAGES_KEPT:  # a file of endlessly varied encodings: start afresh
                self._messages = {}
            self._messages[key] = got
        return got

    def has_column(self, index: int) -> bool:
        """Whether column ``index``'s metadata is parsed already."""
        return index in self._columns

    def adopt_column(self, info: ColumnInfo) -> None:
        """Keep ``info`` as its column's metadata (made from a walk: see :mod:`.walked`)."""
        self._columns[info.index] = info

    def column(self, index: int) -> ColumnInfo:
        info = self._columns.get(index)
        if info is None:
            info = self._columns[index] = self._parse_column(index)
        return info

    def _parse_column(self, index: int) -> ColumnInfo:
        where = f"{self.path}: column {index}"
        if not 0 <= index < self.num_columns:
            raise CorruptFileError(f"{where}: no such column (file has {self.num_columns})")
        pos, size = self._cmo_rows[index]
        meta_lo, meta_hi = self._metadata_bounds
        if pos < meta_lo or pos + size > meta_hi:
            raise CorruptFileError(
                f"{where}: metadata [{pos}, +{size}) lies outside the column metadata region [{meta_lo}, {meta_hi})"
            )
        raw = self.read_buffer(BufferRef(pos, size))
        if self.checksums is not None:
            self.checksums.check_column_metadata(index, raw)
        meta = file2_pb2.ColumnMetadata()
        data = bytes(raw)
        try:
            meta.ParseFromString(data)
        except DecodeError as exc:
            raise CorruptFileError(f"{where}: column metadata is not a valid protobuf ({exc})") from None
        limit = self.file_size
        raw_pages = meta.pages
        lengths = tuple(map(_LENGTH, raw_pages))
        if sum(lengths) > MAX_ROWS:
            p_i = next(i for i, t in enumerate(accumulate(lengths)) if t > MAX_ROWS)
            raise CorruptFileError(f"{where} page {p_i}: a length of {lengths[p_i]} rows takes the column past "
                                   f"{MAX_ROWS} rows")
        col_enc = _direct_bytes(meta.encoding, where) if meta.HasField("encoding") else b""
        buffers = _check_buffers(meta.buffer_offsets, meta.buffer_sizes, limit, where)
        return ColumnInfo(index, col_enc, Pages(raw_pages, limit, where, data), buffers, lengths)


def read_layout(source: ByteSource, *, tail_bytes: int = TAIL_READ_BYTES) -> FileLayout:
    """Read and check the footer, offset tables and metadata region of a Lance file."""
    path, size = source.name, source.size
    if size < FOOTER_LEN:
        raise NotALanceFileError(f"{path}: {size} bytes is too short to be a Lance file")
    tail_len = min(size, tail_bytes)
    tail_start = size - tail_len
    tail = source.read(tail_start, tail_len)
    footer = _parse_footer(tail, size, path)
    version = version_from_footer(footer.major, footer.minor, path=path)

    g, c = footer.num_global_buffers, footer.num_columns
    cmo_start = footer.gbo_table_start - 16 * c  # the CMO table ends where the GBO table starts

    def grab(lo: int, hi: int) -> memoryview:
        nonlocal tail, tail_start
        if lo < tail_start:  # one more read for what the tail missed
            more = source.read(lo, tail_start - lo)
            tail = memoryview(bytes(more) + bytes(tail))
            tail_start = lo
        return tail[lo - tail_start : hi - tail_start]

    gbo = np.frombuffer(grab(footer.gbo_table_start, footer.gbo_table_start + 16 * g), dtype="<u8").reshape(g, 2)
    global_buffers = _check_buffers(gbo[:, 0], gbo[:, 1], size, f"{path}: global buffer table")
    gb0 = global_buffers[0]
    if gb0.position + gb0.size > footer.column_meta_start and gb0.position < footer.gbo_table_start:
        # The reference requires the schema to lie before the column metadata.
        if gb0.position >= footer.column_meta_start:
            raise CorruptFileError(f"{path}: global buffer 0 (the schema) lies inside the column metadata region")
    cmo = np.frombuffer(grab(cmo_start, footer.gbo_table_start), dtype="<u8").reshape(c, 2)
    # Only what the tail read holds is kept; the schema and column metadata beyond it are
    # fetched when asked for (FileLayout.prefetch_columns batches the columns a read needs).
    return FileLayout(source, footer, version, global_buffers, cmo, tail, tail_start)
