"""Run-length encoding: runs of equal values as ``(values, run_lengths u8)``.

Runs are at most ``RLE_MAX_RUN`` (255) long; a longer run is split into 255, 255, ...,
rest.  The 2.2 level frame (:func:`rle_block_decode`) is ``[u64 values_byte_len][values:
runs x T][run lengths: runs x u8]``.
"""

from __future__ import annotations

import struct

import numpy as np

from ...errors import CorruptFileError
from ._common import _byte_view, _Kernel, _uint_dtype, _unsigned_view, _words, empty

__all__ = ["rle_block_decode_many", "RLE_MAX_RUN", "rle_encode", "rle_expand", "rle_block_decode", "rle_block_encode",
           "rle_block_encode_many"]

RLE_MAX_RUN = 255


def rle_encode(values) -> tuple[np.ndarray, np.ndarray]:
    """Runs of equal values as ``(values, run_lengths uint8)``; runs over 255 are split
    into 255, 255, ..., rest.  Equality is on the raw bits (NaNs with equal bits match)."""
    arr = np.ascontiguousarray(values).reshape(-1)
    if arr.size == 0:
        return arr[:0].copy(), np.empty(0, np.uint8)
    bits = arr.view(_uint_dtype(arr.dtype.itemsize * 8)) if arr.dtype.itemsize in (1, 2, 4, 8) else arr
    starts = np.flatnonzero(np.concatenate([[True], bits[1:] != bits[:-1]]))
    run_len = np.diff(np.append(starts, arr.size))
    pieces = -(-run_len // RLE_MAX_RUN)
    out_values = np.repeat(arr[starts], pieces)
    out_len = np.full(int(pieces.sum()), RLE_MAX_RUN, dtype=np.int64)
    last_piece = np.cumsum(pieces) - 1
    out_len[last_piece] = run_len - RLE_MAX_RUN * (pieces - 1)
    return out_values, out_len.astype(np.uint8)


def rle_expand(values, run_lengths, num_values: int | None = None) -> np.ndarray:
    """Expand runs: ``values[i]`` repeated ``run_lengths[i]`` times.

    With ``num_values`` the runs must cover at least that many values and exactly that
    many are returned (what a mini-block chunk needs).
    """
    values = np.asarray(values)
    run_lengths = np.asarray(run_lengths)
    if values.shape[0] != run_lengths.shape[0]:
        raise CorruptFileError(f"RLE has {values.shape[0]} values but {run_lengths.shape[0]} run lengths")
    out = np.repeat(values, run_lengths.astype(np.intp))
    if num_values is not None:
        if out.size < num_values:
            raise CorruptFileError(f"RLE runs cover {out.size} values, {num_values} expected")
        out = out[:num_values]
    return out


def rle_expand_py(values, run_lengths, num_values: int | None = None) -> np.ndarray:
    """Plain-Python :func:`rle_expand` (reference for the tests)."""
    out = []
    for v, n in zip(np.asarray(values).tolist(), np.asarray(run_lengths).tolist()):
        out.extend([v] * int(n))
    if num_values is not None:
        out = out[:num_values]
    return np.array(out, dtype=np.asarray(values).dtype)


def rle_block_decode(buf, bits: int, num_values: int) -> np.ndarray:
    """Decode the RLE block frame 14.0.2 uses for 2.2 levels.

    ``[u64 values_byte_len][values: runs x T][run lengths: runs x u8]``; e.g. 1024 zero
    u16 levels are ``0a00000000000000 0000x5 ffffffff04``.
    """
    dtype = _uint_dtype(bits)
    raw = _byte_view(buf)
    if raw.size < 8:
        raise CorruptFileError(f"RLE block of {raw.size} bytes has no length header")
    vbytes = int(raw[:8].view("<u8")[0])
    if vbytes % dtype.itemsize or 8 + vbytes > raw.size:
        raise CorruptFileError(f"RLE block values length {vbytes} does not fit a {raw.size}-byte block")
    runs = vbytes // dtype.itemsize
    if raw.size - 8 - vbytes < runs:
        raise CorruptFileError(f"RLE block has {runs} values but only {raw.size - 8 - vbytes} run-length bytes")
    values = _words(raw[8 : 8 + vbytes], dtype, "RLE block values")
    lengths = raw[8 + vbytes : 8 + vbytes + runs]
    return rle_expand(values, lengths, num_values)


def rle_block_encode(values) -> bytes:
    """Encode :func:`rle_block_decode`'s frame."""
    vals, lens = rle_encode(_unsigned_view(values))
    return struct.pack("<Q", vals.nbytes) + vals.tobytes() + lens.tobytes()


@_Kernel
def _k_rle_blocks(data, starts, sizes, counts, w, out):
    # Block b: [u64 values_byte_len][runs x w bytes][runs x u8]; its first counts[b] values
    # go to ``out`` (typed: w bytes a value). Returns -1, or the bad block (too short / runs
    # too few).
    pos = 0
    for b in range(starts.shape[0]):
        s = starts[b]
        end = s + sizes[b]
        if sizes[b] < 8:
            return b
        vbytes = 0
        for k in range(8):
            vbytes |= np.int64(data[s + k]) << (8 * k)
        if vbytes < 0 or vbytes % w or vbytes > end - s - 8:  # (compared so nothing overflows)
            return b
        runs = vbytes // w
        if runs > end - s - 8 - vbytes:
            return b
        left = counts[b]
        vals = s + 8
        lens = s + 8 + vbytes
        r = 0
        while left > 0:
            if r >= runs:
                return b
            v = 0
            for k in range(w):
                v |= np.int64(data[vals + r * w + k]) << (8 * k)
            take = min(np.int64(data[lens + r]), left)
            out[pos : pos + take] = v  # a slice fill: vectorised, unlike a loop over out
            pos += take
            left -= take
            r += 1
    return -1


def rle_block_decode_many(data, bits: int, starts, sizes, counts) -> np.ndarray:
    """Many RLE block frames (``data[starts[i] : starts[i] + sizes[i]]``, ``counts[i]``
    values each) decoded back to back in one compiled pass."""
    dtype = _uint_dtype(bits)
    raw = _byte_view(data)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    out = empty(int(counts.sum()), dtype)
    bad = _k_rle_blocks(raw, starts, sizes, counts, dtype.itemsize, out)
    if bad >= 0:
        raise CorruptFileError(f"RLE block {bad} of {int(sizes[bad])} bytes is malformed or its runs cover "
                               f"fewer than {int(counts[bad])} values")
    return out


def rle_block_encode_many(values, bounds) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rle_block_encode` of every piece ``values[bounds[i]:bounds[i+1]]`` in one
    pass (runs never cross a piece boundary); returns ``(bytes back to back, bytes per piece)``."""
    from .gather import scatter

    arr = _unsigned_view(values)
    w = arr.dtype.itemsize
    bounds = np.asarray(bounds, dtype=np.int64)
    n = arr.size
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
        change[1:] = arr[1:] != arr[:-1]
        inner = bounds[1:-1]
        change[inner[inner < n]] = True
    starts = np.flatnonzero(change)
    run_len = np.diff(np.append(starts, n))
    pieces = -(-run_len // RLE_MAX_RUN)
    vals = np.repeat(arr[starts], pieces)
    lens = np.full(int(pieces.sum()), RLE_MAX_RUN, dtype=np.int64)
    lens[np.cumsum(pieces) - 1] = run_len - RLE_MAX_RUN * (pieces - 1)
    # runs per piece: the runs that start inside it
    run_piece = np.repeat(np.searchsorted(bounds, starts, side="right") - 1, pieces)
    runs = np.bincount(run_piece, minlength=len(bounds) - 1).astype(np.int64)
    sizes = 8 + runs * (w + 1)
    out = np.empty(int(sizes.sum()), np.uint8)
    at = np.cumsum(sizes) - sizes
    first = np.cumsum(runs) - runs
    head = (runs * w).astype("<u8").view(np.uint8)
    scatter(head, np.arange(len(runs), dtype=np.int64) * 8, np.full(len(runs), 8, np.int64), out, at)
    scatter(vals.view(np.uint8), first * w, runs * w, out, at + 8)
    scatter(lens.astype(np.uint8), first, runs, out, at + 8 + runs * w)
    return out, sizes
