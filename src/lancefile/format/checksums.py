"""Checksums of a Lance file's bytes, kept in a global buffer that the reference ignores.

The format has no checksums, so a flipped byte in a page reads back as other data. lancefile
writes one more global buffer, the file's last, that holds XXH3-64 hashes of

* every byte before it, in blocks of ``block_size`` (16 KiB) counted from the file's start
  (page buffers, out-of-line values, the other global buffers and the padding between them),
  and again in spans of 64 blocks (1 MiB), so that a large read needs one hash call a MiB;
* global buffer 0 (the schema) and each column's metadata, one hash each;
* the footer and the offset tables (all but the entry of this buffer itself);
* segments on their own (layout 2): every page buffer of at most ``block_size`` bytes (a
  page's chunk metadata, repetition index, dictionary), and in a larger mini-block page's
  chunks, runs of whole chunks, the next run from the first chunk to start in a later KiB
  (:data:`SEGMENT_BYTES`) of the buffer: a chunk of 1 KiB or more ends its run;
* grids (layout 3, :mod:`lancefile.format.grids`): a full-zip page's rows and repetition
  index in pieces of 4 KiB and 1 KiB, 32 bits a piece, so a take of single rows reads a
  piece or two around each instead of 16 KiB blocks;
* and itself (its last 8 bytes hash the rest).

A read (:class:`~lancefile.format.checked_source.ChecksummedSource`) checks the blocks of
exactly the byte ranges it fetches (a take of 10 rows hashes a few blocks, not the file; a
scan hashes whole spans), the schema and the tail when the file is opened, and a column's
metadata when it is parsed; a read that lies in a segment fetches the segment and checks it
against its own hash, instead of the blocks around it (a take over 70 pages of a nested
column reads each page's 168-byte chunk metadata and 672-byte repetition index, and one
~3 KiB chunk of values: 16-32 KiB each when widened to blocks). A mismatch raises
:class:`~lancefile.ChecksumError` naming the column, page and buffer. The reference reader
sees one more global buffer and reads the file exactly as without it. Files without the
buffer (the reference's) are read unchecked.

Why XXH3-64 (the ``xxhash`` package): it hashes at 15-30 GB/s on one core here, three times
hardware CRC32C (``crc32c`` package, ~10 GB/s) and fifteen times ``zlib.crc32``, which keeps a
full scan's overhead to a few percent; 64 bits make a random corruption go unseen with odds
of 2**-64 a block; the library is small, maintained, has wheels for every platform and
releases the GIL, so hashing overlaps the reader's other threads. The same hash guards RocksDB
blocks and zstd frames use its sibling XXH64. A CRC would guarantee catching every burst of up
to 32 bits, but at three times the cost for odds that do not matter here.

Buffer layout (little-endian)::

    0   8  magic b"LFCKSUM1"
    8   u32 layout version (1)      12  u32 algorithm (1 = XXH3-64)
    16  u32 block size              20  u32 number of columns C
    24  u64 covered: bytes [0, covered) are hashed in blocks
    32  u32 number of global buffers G (this one included)
    36  u32 blocks a span (64; 0: no spans)
    40  u64 hash of global buffer 0 (the schema)
    48  u64 hash of the tail: footer, CMO table, GBO table without its last entry
    56  u64 x C   hash of each column's metadata
    ..  u64 x ceil(covered / block size)   hash of each block
    ..  u64 x ceil(covered / span size)    hash of each span
    ..  (layout 3 only) u32 K segments, u32 G grids
    ..  u64 x K  position, u64 x K  hash, u32 x K  size of each segment (layout 2:
        K follows from the buffer's size; positions ascending, buffers apart)
    ..  (layout 3 only) the G grids (:mod:`lancefile.format.grids`)
    ..  u64 hash of all of the above

A file without grids has a layout 2 buffer (as before them).

Example::

    >>> h = BlockHasher(block_size=4, span_blocks=2)
    >>> h.update(b"abcdefghij")
    >>> b = build_buffer(h.finish(), covered=10, schema=b"s", columns=[b"c"], tail=b"t",
    ...                  num_global_buffers=2, block_size=4, span_blocks=2)
    >>> ck = FileChecksums.parse(b, "f.lance")
    >>> ck.covered, ck.num_columns, ck.block_size
    (10, 1, 4)
    >>> ck.check_blocks(0, b"abcdefghij")       # two spans and nothing else
    >>> ck.check_blocks(1, b"efghij")           # block 1, then the last (short) span
    >>> ck.check_column_metadata(0, b"c")
    >>> try:
    ...     ck.check_column_metadata(0, b"x")
    ... except ChecksumError as exc:
    ...     print(exc)
    f.lance: checksum mismatch in the metadata of column 0
"""

from __future__ import annotations

import struct

import numpy as np
import xxhash

from ..errors import ChecksumError, CorruptFileError
from ..io import fetch_spans
from .grids import Grids, pack_grids
from .hashloop import hash_ranges

__all__ = ["MAGIC", "BLOCK_BYTES", "SPAN_BLOCKS", "HEADER", "FileChecksums", "BlockHasher",
           "NewerChecksums", "build_buffer", "buffer_size", "block_hashes", "hash_bytes", "hash_pieces",
           "is_checksum_buffer", "segment_hashes", "span_hashes", "SEGMENT_BYTES"]

MAGIC = b"LFCKSUM1"
LAYOUT_VERSION = 2  # 1: no small-buffer hashes (read as ever)
GRID_LAYOUT = 3  # layout 2 plus grids, written when a file has any
_LAYOUTS = (1, 2, 3)
_SMALL_ENTRY = 20  # position, hash, size
XXH3_64 = 1
BLOCK_BYTES = 16 * 1024
# A second level: one hash per this many blocks (1 MiB). Large reads check whole spans with one
# call each instead of 64: a Python call per 16 KiB was a third of the cost of checking a scan.
SPAN_BLOCKS = 64
# Runs of a mini-block page's chunks hashed on their own (a take reads one chunk): a chunk of
# this many bytes or more ends its run, smaller ones run to about this size, at most the
# larger (20 bytes a segment: 0.5-0.9% of the bench's mini-block files). 4 KiB before
# 2026-11-29, when a take read ~1.3 and 3.2 KB chunks as 4-5 KB segments.
SEGMENT_BYTES = 1024
SEGMENT_MAX_BYTES = 4 * BLOCK_BYTES
# Reads of up to this many blocks are checked one block at a time, without numpy.
_FEW_BLOCKS = 4
HEADER = struct.Struct("<8sIIIIQII")  # magic, version, algorithm, block size, C, covered, G, blocks a span
_FIXED = HEADER.size + 16  # header, schema hash, tail hash

hash_bytes = xxhash.xxh3_64_intdigest


def block_hashes(data, block_size: int = BLOCK_BYTES) -> np.ndarray:
    """XXH3-64 of each ``block_size`` piece of ``data`` (the last may be shorter)."""
    view = memoryview(data).cast("B")
    return np.array([hash_bytes(view[i : i + block_size]) for i in range(0, len(view), block_size)], dtype=np.uint64)


class _Stream:
    """Hashes of consecutive fixed-size pieces of a stream of writes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.hashes: list[int] = []
        self._partial = xxhash.xxh3_64()
        self._fill = 0  # bytes in the current, unfinished piece

    def update(self, view: memoryview) -> None:
        B, n, at = self.size, len(view), 0
        if self._fill:
            take = min(B - self._fill, n)
            self._partial.update(view[:take])
            self._fill += take
            at = take
            if self._fill == B:
                self.hashes.append(self._partial.intdigest())
                self._partial.reset()
                self._fill = 0
        whole = (n - at) // B * B
        if whole:
            if whole > B:
                self.hashes.extend(hash_ranges(view, np.arange(at, at + whole, B), np.full(whole // B, B)).tolist())
            else:
                self.hashes.append(hash_bytes(view[at : at + B]))
            at += whole
        if at < n:
            self._partial.update(view[at:])
            self._fill = n - at

    def finish(self) -> np.ndarray:
        if self._fill:
            self.hashes.append(self._partial.intdigest())
            self._partial.reset()
            self._fill = 0
        return np.array(self.hashes, dtype=np.uint64)


class BlockHasher:
    """Hashes a stream of writes in blocks and in spans of blocks, from its first byte (the writer's side)."""

    def __init__(self, block_size: int = BLOCK_BYTES, span_blocks: int = SPAN_BLOCKS) -> None:
        self.block_size, self.span_blocks = block_size, span_blocks
        self._blocks = _Stream(block_size)
        self._spans = _Stream(block_size * span_blocks)

    def update(self, data) -> None:
        view = memoryview(data).cast("B")
        self._blocks.update(view)
        self._spans.update(view)

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """The hashes of every block and of every span, the last (partial) ones included."""
        return self._blocks.finish(), self._spans.finish()


def hash_pieces(data) -> int:
    """XXH3-64 of bytes given whole or as a list of pieces laid back to back."""
    if not isinstance(data, list):
        return hash_bytes(memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data).cast("B"))
    h = xxhash.xxh3_64()
    for p in data:
        h.update(memoryview(np.ascontiguousarray(p) if isinstance(p, np.ndarray) else p).cast("B"))
    return h.intdigest()


def span_hashes(view, starts, sizes) -> np.ndarray:
    """XXH3-64 of ``view[starts[i] : starts[i] + sizes[i]]`` for each i (uint64): blocks and
    segments of a take, segments of a write or of ``verify``
    (:func:`~lancefile.format.hashloop.hash_ranges`)."""
    return hash_ranges(view, starts, sizes)


def segment_hashes(position: int, data, cuts, target: int = SEGMENT_BYTES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(positions, sizes, hashes)`` (int64, int64, uint64 arrays) of the segments of a page
    buffer written at ``position``: runs of its pieces (a mini-block page's chunks, starting
    at the ascending offsets ``cuts``, the first 0) cut where a piece starts in the next
    ``target`` bytes of the buffer, so each holds whole pieces and about ``target`` bytes or
    more. A run longer than :data:`SEGMENT_MAX_BYTES` (a few large chunks) is left to the
    blocks. The hashes are taken without a Python step a segment (a 100 MB write has 25,000).

    Example::

        >>> pos, size, _ = segment_hashes(100, bytes(10_000), [0, 3000, 6000, 9000], 4096)
        >>> pos.tolist(), size.tolist()
        ([100, 6100, 9100], [6000, 3000, 1000])
    """
    view = memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data).cast("B")
    starts, sizes = segment_spans(cuts, len(view), target)
    return starts + position, sizes, span_hashes(view, starts, sizes)


def segment_spans(cuts, length: int, target: int = SEGMENT_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, sizes)`` in the buffer of the segments :func:`segment_hashes` hashes (none
    for a buffer of at most ``target`` bytes)."""
    cuts = np.asarray(cuts, np.int64)
    return segment_spans_many(cuts, np.array([len(cuts)]), np.array([length]), np.zeros(1, np.int64), target)


def segment_spans_many(cuts, counts, lengths, bases, target: int = SEGMENT_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """:func:`segment_spans` of many buffers at once: buffer ``b`` has ``counts[b]`` of the
    ``cuts`` (in turn), ``lengths[b]`` bytes and lies at ``bases[b]``; the segments' starts
    come out at those places, buffer after buffer.

    Example::

        >>> segment_spans_many(np.array([0, 3000, 6000, 9000, 0, 100]), np.array([4, 2]), np.array([10_000, 5_000]),
        ...                    np.array([0, 20_000]), 4096)
        (array([    0,  6000,  9000, 20000]), array([6000, 3000, 1000, 5000]))
    """
    cuts = np.asarray(cuts, np.int64)
    counts = np.asarray(counts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    big = lengths > target  # a buffer of at most target bytes has no segments
    group = cuts // target
    first = np.ones(len(cuts), dtype=bool)
    if len(cuts):
        first[1:] = (owner[1:] != owner[:-1]) | (group[1:] != group[:-1])
    first &= big[owner]
    at = np.flatnonzero(first)
    starts, who = cuts[at], owner[at]
    ends = np.empty(len(at), np.int64)
    if len(at):
        ends[:-1] = np.where(who[1:] == who[:-1], starts[1:], lengths[who[:-1]])
        ends[-1] = lengths[who[-1]]
    sizes = ends - starts
    keep = (sizes > 0) & (sizes <= SEGMENT_MAX_BYTES)
    return starts[keep] + np.asarray(bases, np.int64)[who[keep]], sizes[keep]


def build_buffer(hashes: tuple[np.ndarray, np.ndarray], *, covered: int, schema: bytes, columns: list, tail: bytes,
                 num_global_buffers: int, block_size: int = BLOCK_BYTES, span_blocks: int = SPAN_BLOCKS,
                 small: tuple | None = None, grids: list | None = None) -> bytes:
    """The checksum buffer's bytes (see the module doc); ``hashes`` = (blocks, spans);
    ``small`` = (positions, sizes, hashes) of the segments, positions ascending; ``grids`` =
    ``[(position, size, step, hashes)]`` (layout 3 when there are any)."""
    blocks, spans = hashes
    pos, sizes, sums = small if small is not None else ([], [], [])
    head = HEADER.pack(MAGIC, GRID_LAYOUT if grids else LAYOUT_VERSION, XXH3_64, block_size, len(columns), covered,
                       num_global_buffers, span_blocks)
    body = (head + struct.pack("<QQ", hash_bytes(schema), hash_bytes(tail))
            + np.array([hash_bytes(c) for c in columns], dtype="<u8").tobytes()
            + np.asarray(blocks, dtype="<u8").tobytes() + np.asarray(spans, dtype="<u8").tobytes()
            + (struct.pack("<II", len(pos), len(grids)) if grids else b"")
            + np.asarray(pos, dtype="<u8").tobytes() + np.asarray(sums, dtype="<u8").tobytes()
            + np.asarray(sizes, dtype="<u4").tobytes() + (pack_grids(grids) if grids else b""))
    return body + struct.pack("<Q", hash_bytes(body))


def _count(covered: int, size: int) -> int:
    return -(-covered // size)


def buffer_size(num_columns: int, covered: int, block_size: int = BLOCK_BYTES, span_blocks: int = SPAN_BLOCKS,
                num_small: int = 0, grids: list | None = None) -> int:
    """Bytes of the checksum buffer; ``grids`` as :func:`build_buffer` takes them."""
    spans = _count(covered, block_size * span_blocks) if span_blocks else 0
    extra = 8 + sum(20 + 4 * len(g[3]) for g in grids) if grids else 0
    return (_FIXED + 8 * num_columns + 8 * _count(covered, block_size) + 8 * spans + _SMALL_ENTRY * num_small + 8
            + extra)


def is_checksum_buffer(head) -> bool:
    return bytes(head[: len(MAGIC)]) == MAGIC


class NewerChecksums(Exception):
    """A checksum buffer, intact by its own hash, of a layout or algorithm newer than this
    lancefile knows: the file reads as one without checksums (with a warning)."""


class FileChecksums:
    """The parsed checksum buffer of one file, and the checks against it (the reader's side)."""

    def __init__(self, path: str, block_size: int, covered: int, num_global_buffers: int, schema_hash: int,
                 tail_hash: int, column_hashes: np.ndarray, blocks: np.ndarray,
                 span_blocks: int = 0, spans: np.ndarray | None = None, small: tuple | None = None,
                 grids: Grids | None = None) -> None:
        self.path = path
        self.grids = grids if grids is not None else Grids.none(path)
        # segments hashed on their own: positions (ascending), sizes, hashes
        empty = np.zeros(0, np.int64)
        self._small_pos, self._small_size, self._small_hash = (small if small is not None
                                                               else (empty, empty, np.zeros(0, np.uint64)))
        self.block_size = block_size
        self.covered = covered
        self.num_global_buffers = num_global_buffers
        self.num_columns = len(column_hashes)
        self._schema_hash = schema_hash
        self._tail_hash = tail_hash
        self._columns = column_hashes
        self._blocks = blocks
        self._span_blocks = span_blocks if spans is not None and len(spans) else 0
        self._spans = spans
        self._in_memory = np.zeros(len(blocks), dtype=bool)  # blocks checked in bytes that stay in memory

    @classmethod
    def parse(cls, raw, path: str) -> FileChecksums:
        # a view, not a copy: the arrays below are views of it (a 20,000-chunk file's 400 KB
        # buffer cost two copies, ~0.3 ms of an open)
        raw = memoryview(raw).cast("B")
        if len(raw) < _FIXED + 8 or not is_checksum_buffer(raw):
            raise CorruptFileError(f"{path}: the checksum buffer is too short")
        body, (own,) = raw[:-8], struct.unpack("<Q", raw[-8:])
        if hash_bytes(body) != own:
            raise ChecksumError(f"{path}: checksum mismatch in the checksum buffer itself (the last global buffer)")
        _, version, algorithm, block_size, ncols, covered, ngb, span_blocks = HEADER.unpack_from(raw)
        if (version > max(_LAYOUTS) or algorithm > XXH3_64) and block_size >= 1:  # intact, by its own hash
            raise NewerChecksums(f"{path}: checksums of a newer lancefile (layout {version}, algorithm {algorithm}): "
                                 "the file is read without checking them")
        if version not in _LAYOUTS or algorithm != XXH3_64 or block_size < 1:
            raise CorruptFileError(f"{path}: checksum buffer of an unknown kind (layout {version}, algorithm "
                                   f"{algorithm}, blocks of {block_size} bytes)")
        base = buffer_size(ncols, covered, block_size, span_blocks)
        extra = len(raw) - base
        grids, num_grids = None, 0
        if version == GRID_LAYOUT:  # counts of segments and grids, then both
            if extra < 8:
                raise CorruptFileError(f"{path}: the checksum buffer's size does not match its header")
            k, num_grids = struct.unpack_from("<II", raw, base - 8)
            extra -= 8
            if _SMALL_ENTRY * k > extra:
                raise CorruptFileError(f"{path}: the checksum buffer's size does not match its header")
            grids = Grids.parse(raw[base + _SMALL_ENTRY * k : -8], num_grids, path, covered)
            extra = _SMALL_ENTRY * k
        if extra < 0 or extra % _SMALL_ENTRY or (version == 1 and extra):
            raise CorruptFileError(f"{path}: the checksum buffer's size does not match its header")
        schema_hash, tail_hash = struct.unpack_from("<QQ", raw, HEADER.size)
        cols = np.frombuffer(raw, "<u8", ncols, _FIXED)
        nblocks = _count(covered, block_size)
        at = _FIXED + 8 * ncols
        blocks = np.frombuffer(raw, "<u8", nblocks, at)
        spans = np.frombuffer(raw, "<u8", (base - at - 8 * nblocks - 8) // 8, at + 8 * nblocks)
        k, at = extra // _SMALL_ENTRY, base - 8 + (8 if version == GRID_LAYOUT else 0)
        pos = np.frombuffer(raw, "<u8", k, at).astype(np.int64)
        sums = np.frombuffer(raw, "<u8", k, at + 8 * k)
        sizes = np.frombuffer(raw, "<u4", k, at + 16 * k).astype(np.int64)
        if k and (np.any(pos[1:] < pos[:-1] + sizes[:-1]) or int(pos[-1] + sizes[-1]) > covered
                  or int(pos[0]) < 0 or np.any(sizes == 0)):
            raise CorruptFileError(f"{path}: the checksum buffer's segments overlap or lie past the "
                                   f"{covered} checksummed bytes")
        return cls(path, block_size, covered, ngb, schema_hash, tail_hash, cols, blocks, span_blocks, spans,
                   (pos, sizes, sums), grids)

    # -- segments: small page buffers, runs of chunks ---------------------------------------
    def small(self, offset: int, length: int) -> int:
        """The index of the segment (a small page buffer, a run of chunks) that holds all of
        ``[offset, offset + length)``, or -1."""
        pos = self._small_pos
        i = int(np.searchsorted(pos, offset, side="right")) - 1
        return i if i >= 0 and offset + length <= int(pos[i] + self._small_size[i]) else -1

    def check_small(self, index: int, view, describe=None) -> None:
        """Check segment ``index`` against ``view`` of its bytes."""
        if hash_bytes(view) != self._small_hash.item(index):
            self._fail_segment(index, describe)

    def _fail_segment(self, index: int, describe) -> None:
        lo, size = int(self._small_pos[index]), int(self._small_size[index])
        owner = describe(lo, lo + size) if describe is not None else ""
        raise ChecksumError(f"{self.path}: checksum mismatch in bytes [{lo}, {lo + size})"
                            + (f" ({owner})" if owner else "") + ": the file was damaged after it was written")

    def check_all_segments(self, source, describe=None, batch: int = 4096) -> int:
        """Read every segment from ``source`` and check it against its own hash (what
        ``lancefile verify`` does after the blocks: a segment the writer hashed wrong would
        otherwise only show when a take reads it). Returns how many were checked; raises
        :class:`~lancefile.ChecksumError` naming the first damaged one."""
        pos, size = self._small_pos, self._small_size
        for i in range(0, len(pos), batch):
            s, n = pos[i : i + batch], size[i : i + batch]
            data, at = fetch_spans(source, s, n, 0)
            bad = np.flatnonzero(span_hashes(memoryview(data), at, n) != self._small_hash[i : i + batch])
            if len(bad):
                self._fail_segment(i + int(bad[0]), describe)
        return len(pos) + self.grids.check_all(source, describe)

    # -- metadata ---------------------------------------------------------------------------
    def check_tail(self, tail: bytes) -> None:
        if hash_bytes(tail) != self._tail_hash:
            raise ChecksumError(f"{self.path}: checksum mismatch in the footer or the offset tables")

    def check_schema(self, raw) -> None:
        if hash_bytes(raw) != self._schema_hash:
            raise ChecksumError(f"{self.path}: checksum mismatch in global buffer 0 (the schema)")

    def check_column_metadata(self, index: int, raw) -> None:
        if not 0 <= index < self.num_columns or hash_bytes(raw) != int(self._columns[index]):
            raise ChecksumError(f"{self.path}: checksum mismatch in the metadata of column {index}")

    # -- blocks -----------------------------------------------------------------------------
    def extent(self, offset: int, length: int) -> tuple[int, int, int]:
        """(first block, end block, end byte) of the blocks holding ``[offset, offset + length)``
        below :attr:`covered`; the blocks' bytes are ``[first * block_size, end byte)``."""
        B = self.block_size
        stop = min(offset + length, self.covered)
        b0, b1 = offset // B, -(-stop // B)
        return b0, b1, min(b1 * B, self.covered)

    def check_blocks(self, first: int, view, describe=None) -> None:
        """Check the whole blocks ``view`` holds, the first being block ``first``: the spans it
        covers whole with one hash each, the blocks at its ends one by one."""
        B, k = self.block_size, self._span_blocks
        view = memoryview(view).cast("B")
        last = first + _count(len(view), B)  # one past the last block
        if last > len(self._blocks):
            raise CorruptFileError(f"{self.path}: blocks {first}..{last} lie past the checksummed bytes")
        if last - first <= _FEW_BLOCKS:  # a take's reads: plain Python beats numpy's per-call costs
            want = self._blocks.item
            for b in range(first, last):
                at = (b - first) * B
                if hash_bytes(view[at : at + B]) != want(b):
                    self._fail(np.array([b]), describe)
            return
        if k:
            s0 = _count(first, k)
            s1 = len(self._spans) if last == len(self._blocks) else last // k  # the last span may be short
            if s0 < s1:
                lo, hi = (s0 * k - first) * B, min((s1 * k - first) * B, len(view))
                self._check_each(first, view[:lo], B, self._blocks, describe)
                span_bytes = B * k
                got = [hash_bytes(view[i : i + span_bytes]) for i in range(lo, hi, span_bytes)]
                bad = np.flatnonzero(np.array(got, dtype=np.uint64) != self._spans[s0:s1])
                if len(bad):  # find the blocks: one hash each, only on this (damaged) path
                    for j in bad.tolist():
                        at = lo + j * span_bytes
                        self._check_each(first + at // B, view[at : at + span_bytes], B, self._blocks, describe)
                self._check_each(first + hi // B, view[hi:], B, self._blocks, describe)
                return
        self._check_each(first, view, B, self._blocks, describe)

    def _check_each(self, first: int, view, size: int, hashes: np.ndarray, describe) -> None:
        if not len(view):
            return
        got = [hash_bytes(view[i : i + size]) for i in range(0, len(view), size)]
        bad = np.flatnonzero(np.array(got, dtype=np.uint64) != hashes[first : first + len(got)])
        if len(bad):
            self._fail(first + bad, describe)

    def check_pieces(self, block: int, pieces, describe=None) -> None:
        """Check one block given as consecutive pieces (bytes split between reads)."""
        h = xxhash.xxh3_64()
        for p in pieces:
            h.update(p)
        if h.intdigest() != int(self._blocks[block]):
            self._fail(np.array([block]), describe)

    def check_in_memory(self, offset: int, length: int, regions, describe=None) -> bool:
        """Check ``[offset, offset + length)`` in bytes already in memory (``[(start, view)]``);
        False when no region holds all of its blocks (the caller reads them instead). ``describe``
        names a damaged range's owner, as for reads."""
        b0, b1, e1 = self.extent(offset, length)
        if b1 <= b0 or self._in_memory[b0:b1].all():
            return True
        e0 = b0 * self.block_size
        for start, view in regions:
            if start <= e0 and e1 <= start + len(view):
                self.check_blocks(b0, view[e0 - start : e1 - start], describe)
                self._in_memory[b0:b1] = True
                return True
        return False

    def _fail(self, blocks: np.ndarray, describe) -> None:
        B = self.block_size
        parts = []
        for k in blocks[:5].tolist():
            lo, hi = k * B, min((k + 1) * B, self.covered)
            owner = describe(lo, hi) if describe is not None else ""
            parts.append(f"bytes [{lo}, {hi})" + (f" ({owner})" if owner else ""))
        more = f" and {len(blocks) - 5} more blocks" if len(blocks) > 5 else ""
        raise ChecksumError(f"{self.path}: checksum mismatch in {'; '.join(parts)}{more}: the file was damaged "
                            f"after it was written")
