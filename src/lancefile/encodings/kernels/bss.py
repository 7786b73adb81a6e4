"""Byte-stream-split: byte j of value i at ``j*n + i`` within one chunk of n values.

E.g. the uint32 values ``0x04030201, 0x08070605`` split to the bytes ``01 05 02 06 03 07 04 08``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ._common import _byte_view, _helper, _Kernel, _uint_dtype, empty, load_u64, store_u64

__all__ = ["byte_stream_split_encode", "byte_stream_split_encode_chunks", "byte_stream_split_decode", "byte_stream_split_decode_many"]


def byte_stream_split_encode(values) -> bytes:
    """One chunk of byte-stream-split: byte j of value i goes to ``j*n + i``."""
    arr = np.ascontiguousarray(values).reshape(-1)
    width = arr.dtype.itemsize
    return arr.view(np.uint8).reshape(arr.size, width).T.tobytes()


def byte_stream_split_decode(buf, bits: int, num_values: int) -> np.ndarray:
    """Undo :func:`byte_stream_split_encode` for one chunk; returns unsigned words of ``bits``
    (view them as float32/float64 as needed)."""
    raw = _byte_view(buf)
    return byte_stream_split_decode_many(raw, bits, np.zeros(1, np.int64), np.array([raw.size]),
                                         np.array([int(num_values)]))


@_helper
def _swap(a, b, shift, mask):
    """Exchange the ``mask``-selected lanes of ``a >> shift`` with those of ``b``: one step
    of a byte-matrix transpose held in 64-bit words."""
    t = ((a >> shift) ^ b) & mask
    return a ^ (t << shift), b ^ t


@_helper
def _transpose8(a0, a1, a2, a3, a4, a5, a6, a7):
    """The 8x8 byte matrix whose row r is word ``ar`` (byte c: bits 8c..8c+7), transposed."""
    m8, m16, m32 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF), np.uint64(0x00000000FFFFFFFF)
    s8, s16, s32 = np.uint64(8), np.uint64(16), np.uint64(32)
    a0, a1 = _swap(a0, a1, s8, m8)
    a2, a3 = _swap(a2, a3, s8, m8)
    a4, a5 = _swap(a4, a5, s8, m8)
    a6, a7 = _swap(a6, a7, s8, m8)
    a0, a2 = _swap(a0, a2, s16, m16)
    a1, a3 = _swap(a1, a3, s16, m16)
    a4, a6 = _swap(a4, a6, s16, m16)
    a5, a7 = _swap(a5, a7, s16, m16)
    a0, a4 = _swap(a0, a4, s32, m32)
    a1, a5 = _swap(a1, a5, s32, m32)
    a2, a6 = _swap(a2, a6, s32, m32)
    a3, a7 = _swap(a3, a7, s32, m32)
    return a0, a1, a2, a3, a4, a5, a6, a7


@_helper
def _bss_chunk(data, s, n, w, out, o):
    # n values of w bytes, byte j of value i at data[s + j*n + i], to out[o:] value by value.
    # 8- and 4-byte values go 8 at a time: word j holds stream j's bytes of values i..i+7,
    # and three (two) rounds of lane swaps transpose those words into the values.
    m8, m16, m32 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF), np.uint64(0x00000000FFFFFFFF)
    s8, s16, s32 = np.uint64(8), np.uint64(16), np.uint64(32)
    i = 0
    if w == 8:
        while i + 8 <= n:
            a0, a1, a2, a3, a4, a5, a6, a7 = _transpose8(
                load_u64(data, s + i), load_u64(data, s + n + i), load_u64(data, s + 2 * n + i),
                load_u64(data, s + 3 * n + i), load_u64(data, s + 4 * n + i), load_u64(data, s + 5 * n + i),
                load_u64(data, s + 6 * n + i), load_u64(data, s + 7 * n + i))
            d = o + i * 8
            store_u64(out, d, a0)
            store_u64(out, d + 8, a1)
            store_u64(out, d + 16, a2)
            store_u64(out, d + 24, a3)
            store_u64(out, d + 32, a4)
            store_u64(out, d + 40, a5)
            store_u64(out, d + 48, a6)
            store_u64(out, d + 56, a7)
            i += 8
    elif w == 4:
        hi = ~m32
        while i + 8 <= n:
            # each word: two 4x4 byte matrices (values i..i+3 low, i+4..i+7 high)
            a0, a1 = _swap(load_u64(data, s + i), load_u64(data, s + n + i), s8, m8)
            a2, a3 = _swap(load_u64(data, s + 2 * n + i), load_u64(data, s + 3 * n + i), s8, m8)
            a0, a2 = _swap(a0, a2, s16, m16)
            a1, a3 = _swap(a1, a3, s16, m16)
            d = o + i * 4
            store_u64(out, d, (a0 & m32) | (a1 << s32))
            store_u64(out, d + 8, (a2 & m32) | (a3 << s32))
            store_u64(out, d + 16, (a0 >> s32) | (a1 & hi))
            store_u64(out, d + 24, (a2 >> s32) | (a3 & hi))
            i += 8
    while i < n:
        d = o + i * w
        for j in range(w):
            out[d + j] = data[s + j * n + i]
        i += 1


@_Kernel
def _k_bss_many(data, starts, counts, w, out):
    # chunk c: counts[c] values of w bytes at data[starts[c]:], one after another in out
    pos = 0
    for c in range(starts.shape[0]):
        _bss_chunk(data, starts[c], counts[c], w, out, pos * w)
        pos += counts[c]


@_Kernel
def _k_bss_encode(data, rows, n, per, w, out):
    # ``rows`` runs of n values of w bytes back to back, each cut into chunks of ``per``
    # (its last shorter): value i of a chunk of m values at s, byte j, goes to s + j*m + i.
    # 8-byte values 8 at a time, by the same word transposes as the decoder (a transpose is
    # its own inverse).
    first = 0
    total = rows * n
    while first < total:
        m = min(per, n - first % n)
        s = first * w
        i = 0
        if w == 8:
            while i + 8 <= m:
                o = s + i * 8
                a0, a1, a2, a3, a4, a5, a6, a7 = _transpose8(
                    load_u64(data, o), load_u64(data, o + 8), load_u64(data, o + 16), load_u64(data, o + 24),
                    load_u64(data, o + 32), load_u64(data, o + 40), load_u64(data, o + 48), load_u64(data, o + 56))
                store_u64(out, s + i, a0)
                store_u64(out, s + m + i, a1)
                store_u64(out, s + 2 * m + i, a2)
                store_u64(out, s + 3 * m + i, a3)
                store_u64(out, s + 4 * m + i, a4)
                store_u64(out, s + 5 * m + i, a5)
                store_u64(out, s + 6 * m + i, a6)
                store_u64(out, s + 7 * m + i, a7)
                i += 8
        while i < m:
            for j in range(w):
                out[s + j * m + i] = data[s + i * w + j]
            i += 1
        first += m


def byte_stream_split_encode_chunks(data, bits: int, per: int, rows: int = 1) -> np.ndarray:
    """The bytes of ``bits``-wide values (``data``, uint8) split chunk by chunk, ``per``
    values a chunk (the last may hold fewer): :func:`byte_stream_split_encode` of each
    chunk, back to back, in one compiled pass. With ``rows``, ``data`` holds that many
    columns of as many values back to back, each chunked on its own (its last chunk
    shorter), as if each had been split alone.

    Example::

        >>> two = np.arange(6, dtype=np.uint16).view(np.uint8)  # columns [0, 1, 2] and [3, 4, 5]
        >>> byte_stream_split_encode_chunks(two, 16, 2, rows=2).tolist()
        [0, 1, 0, 0, 2, 0, 3, 4, 0, 0, 5, 0]
    """
    w = bits // 8
    raw = np.ascontiguousarray(_byte_view(data))
    if raw.size % (w * rows):
        raise ValueError(f"{raw.size} bytes are not {rows} runs of whole {w}-byte values")
    out = empty(raw.size, np.uint8)
    if raw.size:
        _k_bss_encode(raw, int(rows), raw.size // w // rows, int(per), w, out)
    return out


def byte_stream_split_decode_many(buf, bits: int, starts, sizes, counts) -> np.ndarray:
    """Many chunks (``counts[c]`` values in ``buf[starts[c]:][:sizes[c]]``) decoded back to
    back in one compiled pass; unsigned words of ``bits``."""
    dtype = _uint_dtype(bits)
    raw = _byte_view(buf)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    need = counts * dtype.itemsize
    short = np.flatnonzero(need > np.asarray(sizes))
    if len(short):
        c = int(short[0])
        raise CorruptFileError(f"byte-stream-split chunk {c} has {int(sizes[c])} bytes; "
                               f"{int(counts[c])} values need {int(need[c])}")
    if len(starts) and (starts.min() < 0 or (starts + need).max() > raw.size):
        raise CorruptFileError("byte-stream-split chunks lie outside their buffer")
    out = empty(int(counts.sum()) * dtype.itemsize, np.uint8)
    _k_bss_many(raw, starts, counts, dtype.itemsize, out)
    return out.view(dtype)


def byte_stream_split_decode_py(buf, bits: int, num_values: int) -> np.ndarray:
    """Plain-Python :func:`byte_stream_split_decode` (reference for the tests)."""
    raw = bytes(_byte_view(buf))
    w = bits // 8
    n = int(num_values)
    vals = [int.from_bytes(bytes(raw[j * n + i] for j in range(w)), "little") for i in range(n)]
    return np.array(vals, dtype=np.uint64).astype(_uint_dtype(bits))
