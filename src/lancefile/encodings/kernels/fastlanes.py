"""FastLanes bit packing and the 2.0 encoding that is nothing more.

Holds ``fastlanes_pack``/``fastlanes_unpack`` and the 2.0 ``BitpackedForNonNeg``
(FastLanes at one width), each with its plain ``_py`` twin, plus the compiled unpack
helpers that :mod:`.bitpacking` (InlineBitpacking and OutOfLineBitpacking, 2.1) builds on.
Layouts (all little-endian):

* **FastLanes** (``fastlanes_pack``/``fastlanes_unpack``): 1024 values of a T-bit
  unsigned type are packed at width W into ``1024*W/T`` T-bit words.  The 1024 values are
  seen as T rows by ``1024/T`` lanes; value ``FL_ORDER[r//8]*16 + (r%8)*128 + lane`` is
  row r of that lane.  Each lane is a bit stream of T W-bit values (row r at bit r*W), and
  word k of lane l's stream is stored at ``out[k*1024/T + l]``.  Worked example, T=8 and
  W=1: word l (0..127) holds values l, 128+l, 256+l, ..., 896+l in bits 0..7.
* **BitpackedForNonNeg** (2.0): ``ceil(n/1024)`` chunks packed at one W, the last one
  zero-padded: ``128*W`` bytes per chunk.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError, InvalidInputError
from ._common import _check_width, _helper, _Kernel, _uint_dtype, _unsigned_view, _words, empty

__all__ = [
    "FASTLANES_CHUNK",
    "FL_ORDER",
    "chunk_bit_widths_rows",
    "fastlanes_words_per_chunk",
    "fastlanes_pack",
    "fastlanes_unpack",
    "bitpacked_for_non_neg_encode",
    "bitpacked_for_non_neg_decode",
]

FASTLANES_CHUNK = 1024
# Row r of a FastLanes lane holds value FL_ORDER[r // 8] * 16 + (r % 8) * 128 + lane.
FL_ORDER = (0, 4, 2, 6, 1, 5, 3, 7)
_FL_ORDER = np.array(FL_ORDER, dtype=np.int64)


def fastlanes_words_per_chunk(width: int, bits: int) -> int:
    """Words of ``bits`` bits taken by 1024 values packed at ``width`` bits."""
    return FASTLANES_CHUNK * int(width) // int(bits)


@_helper
def _row_widths(arr, stop_at, out):
    # out[c] = bit width of arr[c*1024 : (c+1)*1024] (the last chunk may be short). Returns
    # the chunks done: it stops after the first whose width reaches stop_at.
    n = arr.shape[0]
    for c in range(out.shape[0]):
        seg = arr[c * 1024 : min(n, (c + 1) * 1024)]
        acc = np.uint64(0)
        for i in range(seg.shape[0]):
            acc |= np.uint64(seg[i])
        w = 0
        while acc:
            acc >>= np.uint64(1)
            w += 1
        out[c] = w
        if w >= stop_at:
            return c + 1
    return out.shape[0]


@_Kernel
def _k_chunk_widths(arr, stop_at, out):
    return _row_widths(arr, stop_at, out)


@_Kernel
def _k_chunk_widths_rows(arr, stop_at, out, done):
    # _row_widths of each row of the 2-D arr into that row of out; done[r]: its chunks done
    for r in range(arr.shape[0]):
        done[r] = _row_widths(arr[r], stop_at, out[r])


def _chunk_bit_widths(arr: np.ndarray, stop_at: int = 65) -> np.ndarray:
    """Bit width of each 1024-value chunk of a 1-D unsigned array (the last chunk may be
    short: padding it with zeros would not change its width), in one pass and no copy.

    With ``stop_at``, the widths end at the first chunk that needs ``stop_at`` bits or more
    (a caller that only packs when every chunk shrinks need not look further).
    """
    out = empty(-(-arr.size // FASTLANES_CHUNK), np.int64)
    done = _k_chunk_widths(arr, stop_at, out) if out.size else 0
    return out[:done]


def chunk_bit_widths_rows(arr: np.ndarray, stop_at: int = 65) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_chunk_bit_widths` of each row of a 2-D unsigned array, in one compiled call:
    ``(widths, done)``, row r's widths being ``widths[r, :done[r]]``.

    Example::

        >>> w, done = chunk_bit_widths_rows(np.array([[1, 2, 3], [255, 0, 0]], np.uint8), stop_at=8)
        >>> w[0, :done[0]].tolist(), w[1, :done[1]].tolist()
        ([2], [8])
    """
    rows, n = arr.shape
    out = np.zeros((rows, -(-n // FASTLANES_CHUNK)), np.int64)
    done = np.zeros(rows, np.int64)
    if out.size:
        _k_chunk_widths_rows(arr, stop_at, out, done)
    return out, done


def _pad_to_chunks(arr: np.ndarray) -> np.ndarray:
    rem = arr.size % FASTLANES_CHUNK
    if rem == 0:
        return arr
    return np.concatenate([arr, np.zeros(FASTLANES_CHUNK - rem, dtype=arr.dtype)])


# --------------------------------------------------------------------------------------
# FastLanes kernels
# --------------------------------------------------------------------------------------


@_helper
def _fl_unpack_one(words, base, W, T, out, obase):
    # 1024 values packed at width W from words[base:] -> out[obase : obase + 1024].
    # Rows outside, lanes inside: per row the source word and shift are constant, so the
    # lane loop is a contiguous copy. The loops run over slices (o, w, w2), not offsets into
    # the whole arrays: LLVM then vectorises them (3-6x faster per value, measured).
    lanes = 1024 // T
    if W == 0:
        out[obase : obase + 1024] = 0
        return
    if W == T:  # a permuted copy; rows taken in the order that fills each 128 values of out
        for j in range(8):  # in turn (2x faster than row order, measured at T=64)
            for q in range(T >> 3):
                row = q * 8 + j
                dst = obase + _FL_ORDER[q] * 16 + j * 128
                src = base + lanes * row
                o = out[dst : dst + lanes]
                w = words[src : src + lanes]
                for lane in range(lanes):
                    o[lane] = w[lane]
        return
    mask = (np.uint64(1) << np.uint64(W)) - np.uint64(1)
    for row in range(T):
        bit = row * W
        k = bit // T
        s = bit - k * T
        dst = obase + _FL_ORDER[row >> 3] * 16 + (row & 7) * 128
        src = base + lanes * k
        o = out[dst : dst + lanes]
        w = words[src : src + lanes]
        sh = np.uint64(s)
        if s + W <= T:
            for lane in range(lanes):
                o[lane] = (np.uint64(w[lane]) >> sh) & mask
        else:
            sh2 = np.uint64(T - s)
            w2 = words[src + lanes : src + 2 * lanes]
            for lane in range(lanes):
                o[lane] = ((np.uint64(w[lane]) >> sh) | (np.uint64(w2[lane]) << sh2)) & mask


@_helper
def _fl_unpack(words, base, W, T, out, obase):
    # _fl_unpack_one with T as a literal: compiled, each call is specialised for its word
    # size, whose lane loops then have a fixed length (about 2x faster than a variable T).
    if T == 64:
        _fl_unpack_one(words, base, W, 64, out, obase)
    elif T == 32:
        _fl_unpack_one(words, base, W, 32, out, obase)
    elif T == 16:
        _fl_unpack_one(words, base, W, 16, out, obase)
    else:
        _fl_unpack_one(words, base, W, 8, out, obase)


@_Kernel
def _k_fl_unpack(words, word_starts, widths, T, out):
    # Chunk c (width widths[c], words from word_starts[c]) -> out[c*1024 : (c+1)*1024].
    for c in range(widths.shape[0]):
        _fl_unpack(words, word_starts[c], widths[c], T, out, c * 1024)


@_helper
def _fl_pack_one(values, ibase, W, T, out, base):
    # Inverse of _fl_unpack_one: values[ibase : ibase + 1024] packed at width W into
    # out[base:], which must be zeroed. Loops over slices, as there, so they vectorise.
    lanes = 1024 // T
    if W == 0:
        return
    if W == T:  # a permuted copy, in _fl_unpack_one's order (each 128 values of values in turn)
        for j in range(8):
            for q in range(T >> 3):
                src = ibase + _FL_ORDER[q] * 16 + j * 128
                dst = base + lanes * (q * 8 + j)
                v = values[src : src + lanes]
                o = out[dst : dst + lanes]
                for lane in range(lanes):
                    o[lane] = v[lane]
        return
    mask = (np.uint64(1) << np.uint64(W)) - np.uint64(1)
    tmask = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - T)
    for row in range(T):
        bit = row * W
        k = bit // T
        s = bit - k * T
        src = ibase + _FL_ORDER[row >> 3] * 16 + (row & 7) * 128
        dst = base + lanes * k
        v = values[src : src + lanes]
        o = out[dst : dst + lanes]
        sh = np.uint64(s)
        for lane in range(lanes):
            o[lane] = np.uint64(o[lane]) | (((np.uint64(v[lane]) & mask) << sh) & tmask)
        if s + W > T:
            sh2 = np.uint64(T - s)
            o2 = out[dst + lanes : dst + 2 * lanes]
            for lane in range(lanes):
                o2[lane] = np.uint64(o2[lane]) | ((np.uint64(v[lane]) & mask) >> sh2)


@_Kernel
def _k_fl_pack(values, word_starts, widths, T, out):
    # Inverse of _k_fl_unpack; ``out`` must be zeroed. T as a literal, as in _fl_unpack.
    for c in range(widths.shape[0]):
        if T == 64:
            _fl_pack_one(values, c * 1024, widths[c], 64, out, word_starts[c])
        elif T == 32:
            _fl_pack_one(values, c * 1024, widths[c], 32, out, word_starts[c])
        elif T == 16:
            _fl_pack_one(values, c * 1024, widths[c], 16, out, word_starts[c])
        else:
            _fl_pack_one(values, c * 1024, widths[c], 8, out, word_starts[c])


def _unpack_chunks(words: np.ndarray, word_starts: np.ndarray, widths: np.ndarray, dtype) -> np.ndarray:
    out = empty(widths.shape[0] * FASTLANES_CHUNK, dtype)
    if widths.shape[0]:
        _k_fl_unpack(words, word_starts, widths, dtype.itemsize * 8, out)
    return out


def _pack_chunks(values: np.ndarray, word_starts: np.ndarray, widths: np.ndarray, total_words: int) -> np.ndarray:
    out = np.zeros(total_words, dtype=values.dtype)
    if widths.shape[0]:
        _k_fl_pack(values, word_starts, widths, values.dtype.itemsize * 8, out)
    return out


def fastlanes_pack(values: np.ndarray, width: int) -> np.ndarray:
    """Pack integers (length a multiple of 1024) at ``width`` bits, FastLanes order.

    Returns ``len(values) * width / T`` words of the unsigned type of the input's width.  Bits above ``width``
    are dropped.  ``width`` 0 gives no words; ``width == T`` permutes the values.
    """
    arr = _unsigned_view(values)
    T = arr.dtype.itemsize * 8
    width = _check_width(width, T)
    if arr.size % FASTLANES_CHUNK:
        raise InvalidInputError(f"FastLanes packs whole chunks of 1024 values, got {arr.size}")
    n_chunks = arr.size // FASTLANES_CHUNK
    wpc = fastlanes_words_per_chunk(width, T)
    starts = np.arange(n_chunks, dtype=np.int64) * wpc
    return _pack_chunks(arr, starts, np.full(n_chunks, width, dtype=np.int64), n_chunks * wpc)


def fastlanes_unpack(words, width: int, num_values: int, dtype) -> np.ndarray:
    """Unpack ``num_values`` values of ``dtype`` packed at ``width`` bits, FastLanes order.

    Whole 1024-value chunks are unpacked and the result is cut to ``num_values``; ``words``
    (an array of ``dtype`` or any bytes-like) must hold ``ceil(num_values/1024)`` chunks.
    """
    requested = np.dtype(dtype)
    if requested.kind not in "iu":
        raise InvalidInputError(f"FastLanes unpacks integers, not {requested}")
    dtype = _uint_dtype(requested.itemsize * 8)
    T = dtype.itemsize * 8
    width = _check_width(width, T)
    words = _words(words, dtype, "FastLanes buffer")
    num_values = int(num_values)
    n_chunks = -(-num_values // FASTLANES_CHUNK)
    wpc = fastlanes_words_per_chunk(width, T)
    if words.size < n_chunks * wpc:
        raise CorruptFileError(
            f"FastLanes buffer holds {words.size} {T}-bit words; {num_values} values at width "
            f"{width} need {n_chunks * wpc}"
        )
    starts = np.arange(n_chunks, dtype=np.int64) * wpc
    out = _unpack_chunks(words, starts, np.full(n_chunks, width, dtype=np.int64), dtype)
    return out[:num_values].view(requested.newbyteorder("<"))


def _fl_index(row: int, lane: int) -> int:
    return FL_ORDER[row // 8] * 16 + (row % 8) * 128 + lane


def fastlanes_pack_py(values, width: int) -> np.ndarray:
    """Plain-Python :func:`fastlanes_pack` (reference for the tests)."""
    arr = _unsigned_view(values)
    T = arr.dtype.itemsize * 8
    width = _check_width(width, T)
    lanes = FASTLANES_CHUNK // T
    wpc = fastlanes_words_per_chunk(width, T)
    out = [0] * (arr.size // FASTLANES_CHUNK * wpc)
    mask = (1 << width) - 1
    for c in range(arr.size // FASTLANES_CHUNK):
        chunk = [int(v) for v in arr[c * FASTLANES_CHUNK : (c + 1) * FASTLANES_CHUNK]]
        for lane in range(lanes):
            stream = 0
            for row in range(T):
                stream |= (chunk[_fl_index(row, lane)] & mask) << (row * width)
            for k in range(width):
                out[c * wpc + k * lanes + lane] = (stream >> (k * T)) & ((1 << T) - 1)
    return np.array(out, dtype=arr.dtype)


def fastlanes_unpack_py(words, width: int, num_values: int, dtype) -> np.ndarray:
    """Plain-Python :func:`fastlanes_unpack` (reference for the tests)."""
    dtype = _uint_dtype(np.dtype(dtype).itemsize * 8)
    T = dtype.itemsize * 8
    words = _words(words, dtype, "FastLanes buffer")
    lanes = FASTLANES_CHUNK // T
    wpc = fastlanes_words_per_chunk(width, T)
    n_chunks = -(-int(num_values) // FASTLANES_CHUNK)
    if words.size < n_chunks * wpc:
        raise CorruptFileError("FastLanes buffer too short")
    out = [0] * (n_chunks * FASTLANES_CHUNK)
    mask = (1 << width) - 1
    for c in range(n_chunks):
        for lane in range(lanes):
            stream = 0
            for k in range(width):
                stream |= int(words[c * wpc + k * lanes + lane]) << (k * T)
            for row in range(T):
                out[c * FASTLANES_CHUNK + _fl_index(row, lane)] = (stream >> (row * width)) & mask
    return np.array(out[: int(num_values)], dtype=dtype)


# --------------------------------------------------------------------------------------
# 2.0 BitpackedForNonNeg: FastLanes chunks at one width, last chunk padded
# --------------------------------------------------------------------------------------


def bitpacked_for_non_neg_encode(values, width: int) -> bytes:
    """Encode as the 2.0 ``BitpackedForNonNeg`` buffer (every chunk padded and packed)."""
    return fastlanes_pack(_pad_to_chunks(_unsigned_view(values)), width).tobytes()


def bitpacked_for_non_neg_decode(buf, compressed_bits: int, uncompressed_bits: int, num_values: int) -> np.ndarray:
    """Decode a 2.0 ``BitpackedForNonNeg`` buffer: ``ceil(n/1024)`` chunks of ``128*W`` bytes."""
    return fastlanes_unpack(buf, compressed_bits, num_values, _uint_dtype(uncompressed_bits))


def bitpacked_for_non_neg_decode_py(buf, compressed_bits, uncompressed_bits, num_values) -> np.ndarray:
    """Plain-Python :func:`bitpacked_for_non_neg_decode` (reference for the tests)."""
    return fastlanes_unpack_py(buf, compressed_bits, num_values, _uint_dtype(uncompressed_bits))
