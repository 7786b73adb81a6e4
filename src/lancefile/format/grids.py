"""Grids: page buffers hashed in pieces of a fixed size, for takes of variable-width rows.

A take of one row of a full-zip page (long strings, lists of large items) reads the row's two
entries of the page's repetition index and then the row's bytes. Checked against the 16 KiB
blocks of :mod:`lancefile.format.checksums`, each of those reads becomes a block or two: a
100-row take of a long-text column read and hashed 2.2 MB for 0.2 MB of rows (3.3 ms against
2.2 ms unchecked). A *grid* hashes one page buffer in pieces of ``step`` bytes from its start,
each with the low 32 bits of its XXH3-64, so such a read widens only to the pieces it touches:
4 KiB pieces of rows, 1 KiB pieces of the index. At 4 bytes a piece that is 0.1% of the rows
and 0.4% of the index: the long-text file grows by ~140 KB in 140 MB, where 8-byte hashes of
20-byte segments would have made it larger than pylance's file.

32 bits let a random corruption of one piece go unseen with odds of 2**-32 (a CRC-32's); every
byte under a grid is also covered by the 64-bit blocks and spans a scan and ``verify`` check.
Pages of fixed-width rows (embeddings) have no grid: their file has no room for it.

The checksum buffer holds the grids after its segments (layout 3, see
:mod:`lancefile.format.checksums`)::

    u64 x G  position       u64 x G  size       u32 x G  step
    u32 x H  hash of each piece, grid after grid (H = sum of ceil(size / step))

Example::

    >>> g = Grids.of([(100, 10, 4, grid_hashes(b"abcdefghij", 4))], "f", covered=200)
    >>> g.find(102, 3), g.find(108, 2), g.find(99, 2), g.find(112, 1)
    (0, 0, -1, -1)
    >>> g.widen(0, 105, 4)  # bytes [105, 109) lie in pieces 1 and 2: [104, 110)
    (104, 110, 1, 2)
    >>> g.check(0, 1, memoryview(b"efghij"))
    >>> try:
    ...     g.check(0, 1, memoryview(b"efgXij"))
    ... except Exception as exc:
    ...     print(exc)
    f: checksum mismatch in bytes [104, 108): the file was damaged after it was written
"""

from __future__ import annotations

import numpy as np

from ..errors import ChecksumError, CorruptFileError
from ..io import fetch_spans
from .hashloop import hash_ranges

__all__ = ["GRID_ROW_BYTES", "GRID_INDEX_BYTES", "Grids", "grid_hashes", "pack_grids"]

# pieces of a full-zip page's rows and of its repetition index
GRID_ROW_BYTES = 4 * 1024
GRID_INDEX_BYTES = 1024
_ENTRY = 20  # position, size, step
_MASK = np.uint64(0xFFFFFFFF)
_CHECK_ALL_BYTES = 64 << 20  # what verify reads of a grid at a time


def grid_hashes(data, step: int) -> np.ndarray:
    """The low 32 bits of the XXH3-64 of each ``step``-byte piece of ``data`` (uint32; the
    last piece may be shorter), one compiled loop for all."""
    view = np.frombuffer(memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data).cast("B"),
                         np.uint8)
    starts = np.arange(0, view.size, step, dtype=np.int64)
    sizes = np.minimum(starts + step, view.size) - starts
    return (hash_ranges(view, starts, sizes) & _MASK).astype(np.uint32)


def pack_grids(grids: list) -> bytes:
    """The grid section's bytes of ``[(position, size, step, hashes)]`` (positions ascending)."""
    pos = np.array([g[0] for g in grids], "<u8")
    size = np.array([g[1] for g in grids], "<u8")
    step = np.array([g[2] for g in grids], "<u4")
    hashes = np.concatenate([np.asarray(g[3], "<u4") for g in grids]) if grids else np.zeros(0, "<u4")
    return pos.tobytes() + size.tobytes() + step.tobytes() + hashes.tobytes()


class Grids:
    """The grids of one file (the reader's side): where each lies, and the checks against them."""

    def __init__(self, path: str, pos: np.ndarray, size: np.ndarray, step: np.ndarray, hashes: np.ndarray) -> None:
        self.path = path
        self.pos, self.size, self.step = pos, size, step
        self.hashes = hashes
        # index in ``hashes`` of each grid's first piece
        self.first = np.concatenate([[0], np.cumsum(-(-size // np.maximum(step, 1)))[:-1]]).astype(np.int64) \
            if len(pos) else np.zeros(0, np.int64)

    @classmethod
    def of(cls, grids: list, path: str, covered: int) -> Grids:
        """Grids from ``[(position, size, step, hashes)]`` (as :func:`pack_grids` takes them)."""
        return cls.parse(pack_grids(grids), len(grids), path, covered)

    @classmethod
    def none(cls, path: str) -> Grids:
        empty = np.zeros(0, np.int64)
        return cls(path, empty, empty, empty, np.zeros(0, np.uint32))

    @classmethod
    def parse(cls, raw: bytes, count: int, path: str, covered: int) -> Grids:
        """The grid section ``raw`` (exactly its bytes) of ``count`` grids; every size and
        position is checked before use."""
        if count < 0 or _ENTRY * count > len(raw):
            raise CorruptFileError(f"{path}: the checksum buffer's grid section is shorter than its {count} grids")
        pos = np.frombuffer(raw, "<u8", count, 0).astype(np.int64)
        size = np.frombuffer(raw, "<u8", count, 8 * count).astype(np.int64)
        step = np.frombuffer(raw, "<u4", count, 16 * count).astype(np.int64)
        if count and (np.any(pos < 0) or np.any(size <= 0) or np.any(step <= 0) or np.any(pos > covered)
                      or np.any(size > covered) or np.any(pos[1:] < pos[:-1] + size[:-1])
                      or int(pos[-1] + size[-1]) > covered):
            raise CorruptFileError(f"{path}: the checksum buffer's grids overlap, are empty or lie past the "
                                   f"{covered} checksummed bytes")
        pieces = int((-(-size // step)).sum()) if count else 0
        if 4 * pieces != len(raw) - _ENTRY * count:
            raise CorruptFileError(f"{path}: the checksum buffer's grids have {pieces} pieces but "
                                   f"{(len(raw) - _ENTRY * count) // 4} hashes")
        return cls(path, pos, size, step, np.frombuffer(raw, "<u4", pieces, _ENTRY * count))

    def __len__(self) -> int:
        return len(self.pos)

    def find(self, offset: int, length: int) -> int:
        """The grid that holds all of ``[offset, offset + length)``, or -1."""
        i = int(np.searchsorted(self.pos, offset, side="right")) - 1
        return i if i >= 0 and offset + length <= int(self.pos[i] + self.size[i]) else -1

    def widen(self, g: int, offset: int, length: int) -> tuple[int, int, int, int]:
        """``(start, end, first piece, pieces)``: the pieces of grid ``g`` that hold
        ``[offset, offset + length)`` and the bytes they span."""
        p, step, end = int(self.pos[g]), int(self.step[g]), int(self.pos[g] + self.size[g])
        k0 = (offset - p) // step
        k1 = max(k0 + 1, -(-(offset + length - p) // step))
        return p + k0 * step, min(p + k1 * step, end), k0, k1 - k0

    def check(self, g: int, first: int, view, describe=None) -> None:
        """Check ``view``, the bytes of grid ``g``'s pieces from piece ``first`` on
        (``describe(lo, hi)`` names what a damaged piece holds)."""
        got = grid_hashes(view, int(self.step[g]))
        at = int(self.first[g]) + first
        bad = np.flatnonzero(got != self.hashes[at : at + len(got)])
        if len(bad):
            self.fail(at + int(bad[0]), describe)

    def fail(self, piece: int, describe=None) -> None:
        """Raise the error of piece ``piece`` (counted over all grids) not matching its hash."""
        g = int(np.searchsorted(self.first, piece, side="right")) - 1
        lo = int(self.pos[g] + (piece - self.first[g]) * self.step[g])
        hi = min(lo + int(self.step[g]), int(self.pos[g] + self.size[g]))
        owner = describe(lo, hi) if describe is not None else ""
        raise ChecksumError(f"{self.path}: checksum mismatch in bytes [{lo}, {hi})" + (f" ({owner})" if owner else "")
                            + ": the file was damaged after it was written")

    def check_all(self, source, describe=None, batch_bytes: int = _CHECK_ALL_BYTES) -> int:
        """Read every grid from ``source`` and check each piece (``verify``), at most about
        ``batch_bytes`` at a time: how many pieces."""
        for g in range(len(self.pos)):
            lo, size, step = int(self.pos[g]), int(self.size[g]), int(self.step[g])
            per = max(1, batch_bytes // step) * step
            for off in range(0, size, per):
                n = min(per, size - off)
                data, at = fetch_spans(source, np.array([lo + off]), np.array([n]), 0)
                self.check(g, off // step, np.asarray(data)[int(at[0]) : int(at[0]) + n], describe)
        return len(self.hashes)
