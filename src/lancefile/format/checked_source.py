"""Reads checked against a file's checksums: :class:`ChecksummedSource`.

The checksum buffer and the checks against it are :mod:`lancefile.format.checksums`; this
module is the byte source that applies them to every read of the file's data: a read is
widened to the blocks, segment or grid pieces that cover it, those are hashed and compared,
and the bytes asked for are returned. A take's many small ranges are read and hashed together
(from a local file, in one compiled call: :mod:`lancefile.format.hashloop`); large reads land
in the caller's buffer and are checked a span at a time.
"""

from __future__ import annotations

import numpy as np

from ..io import _BaseSource, fetch_spans, inherit, pack_spans, read_into
from .checksums import FileChecksums, hash_bytes
from .hashloop import read_checked, read_checked_packed

__all__ = ["ChecksummedSource"]


# Reads up to this size are fetched with their blocks' extra bytes in one request; larger ones
# land straight in the caller's buffer, with the partial blocks at their ends read on the side.
_ONE_REQUEST_BYTES = 1 << 20
# A read_spans whose ranges are all shorter than this checks its blocks together (one hash a
# block); with a longer range it reads range by range, hashing whole spans of blocks, unless
# its ranges average under _BATCH_MEAN_BYTES: a scan chunk of a thousand columns' 64 KiB
# pieces paid ~40 us of Python a range that way (a 1,000-column 2.0 scan at batch size 1024:
# 100 -> 53 ms)
_BATCH_SPAN_BYTES = 64 * 1024
_BATCH_MEAN_BYTES = 1 << 20


class ChecksummedSource(_BaseSource):
    """A byte source whose reads are checked against a file's block hashes.

    Each read is widened to whole blocks (below :attr:`FileChecksums.covered`), every block
    it touches is hashed and compared, and the bytes asked for are returned; bytes past the
    checksummed region (the metadata at the file's end, checked on its own) pass through.
    ``describe(lo, hi)`` names what a damaged range holds (column, page, buffer).
    """

    def __init__(self, inner, checksums: FileChecksums, describe=None) -> None:
        self.inner = inner
        self.checksums = checksums
        self.describe = describe
        self.name = inner.name
        self._size = inner.size
        inherit(self, inner)

    def read(self, offset: int, length: int) -> memoryview:
        ck = self.checksums
        if length <= 0 or offset >= ck.covered or offset < 0:
            return self.inner.read(offset, length)
        small = ck.small(offset, length)
        if small >= 0:  # inside a segment: read and checked whole by its own hash, no blocks around it
            lo, size = int(ck._small_pos[small]), int(ck._small_size[small])
            raw = memoryview(self.inner.read(lo, size)).cast("B")
            ck.check_small(small, raw, self.describe)
            return raw[offset - lo : offset - lo + length]
        grids = ck.grids
        g = grids.find(offset, length) if len(grids) else -1
        if g >= 0:  # a full-zip page's rows or index: the pieces of its grid around the read
            lo, hi, first, _ = grids.widen(g, offset, length)
            raw = memoryview(self.inner.read(lo, hi - lo)).cast("B")
            grids.check(g, first, raw, self.describe)
            return raw[offset - lo : offset - lo + length]
        B = ck.block_size
        b0, end = offset // B, offset + length
        b1 = -(-min(end, ck.covered) // B)
        e0, e1 = b0 * B, min(b1 * B, ck.covered)
        raw = memoryview(self.inner.read(e0, max(e1, end) - e0)).cast("B")
        if b1 - b0 == 1:  # one block (most reads of a take): checked inline, without numpy
            if hash_bytes(raw[: e1 - e0]) != ck._blocks.item(b0):
                ck._fail(np.array([b0]), self.describe)
        else:
            ck.check_blocks(b0, raw[: e1 - e0], self.describe)
        return raw[offset - e0 : offset - e0 + length]

    def read_spans(self, s: np.ndarray, n: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~lancefile.io.read_spans` of checked int64 ranges. Short ranges (a take's
        chunks) are widened to whole blocks (or to the segment or grid pieces holding them),
        read together from the inner source and hashed in one compiled loop, each block,
        segment and piece once however many ranges share it; from a local file the reads and
        the hashing are one compiled call (:func:`~lancefile.format.hashloop.read_checked`);
        ranges of :data:`_BATCH_SPAN_BYTES` or more, averaging :data:`_BATCH_MEAN_BYTES` or
        more, go through :meth:`read_into` (span hashes)."""
        ck = self.checksums
        if int(n.max()) >= _BATCH_SPAN_BYTES and int(n.sum()) >= len(n) * _BATCH_MEAN_BYTES:
            return fetch_spans(self, s, n, gap)
        data, at, bad, seg_bad, piece_bad = read_checked(self.inner, s, n, gap, ck.covered, ck.block_size,
                                                         ck._small_pos, ck._small_size, ck._blocks, ck._small_hash,
                                                         ck.grids)
        self._raise(bad, seg_bad, piece_bad)
        return data, at

    def read_packed(self, s: np.ndarray, n: np.ndarray, gap: int) -> np.ndarray:
        """:func:`~lancefile.io.read_packed` of checked int64 ranges: from a local file, each
        request read into a small buffer, checked and its ranges copied out
        (:func:`~lancefile.format.hashloop.read_checked_packed`); else :meth:`read_spans`,
        packed."""
        ck = self.checksums
        got = None
        if int(n.max()) < _BATCH_SPAN_BYTES:
            got = read_checked_packed(self.inner, s, n, gap, ck.covered, ck.block_size, ck._small_pos, ck._small_size,
                                      ck._blocks, ck._small_hash, ck.grids)
        if got is None:
            data, at = self.read_spans(s, n, gap)
            return pack_spans(data, at, n)
        data, bad, seg_bad, piece_bad = got
        self._raise(bad, seg_bad, piece_bad)
        return data

    def _raise(self, bad, seg_bad: int, piece_bad: int) -> None:
        ck = self.checksums
        if len(bad):
            ck._fail(np.unique(bad), self.describe)
        if seg_bad >= 0:
            ck._fail_segment(seg_bad, self.describe)
        if piece_bad >= 0:
            ck.grids.fail(piece_bad, self.describe)

    def read_into(self, offset: int, out: memoryview) -> None:
        ck = self.checksums
        out = memoryview(out).cast("B")
        length = len(out)
        # an object store's request is a round trip: one widened read beats three exact ones
        if length < _ONE_REQUEST_BYTES or offset >= ck.covered or offset < 0 or self.remote:
            if offset >= ck.covered or offset < 0 or length == 0:
                read_into(self.inner, offset, out)
            else:
                out[:] = self.read(offset, length)
            return
        B = ck.block_size
        b0, b1, e1 = ck.extent(offset, length)
        e0, stop = b0 * B, min(offset + length, ck.covered)
        read_into(self.inner, offset, out)
        head = self.inner.read(e0, offset - e0) if e0 < offset else b""
        tail = self.inner.read(stop, e1 - stop) if stop < e1 else b""
        first_end = min((b0 + 1) * B, e1)  # the first block: head + the start of out (+ tail if one block)
        if b1 - b0 == 1:
            ck.check_pieces(b0, [head, out[: stop - offset], tail], self.describe)
            return
        ck.check_pieces(b0, [head, out[: first_end - offset]], self.describe)
        last_start = (b1 - 1) * B
        if b1 - b0 > 2:
            ck.check_blocks(b0 + 1, out[first_end - offset : last_start - offset], self.describe)
        ck.check_pieces(b1 - 1, [out[last_start - offset : stop - offset], tail], self.describe)

    def close(self) -> None:
        self.inner.close()
