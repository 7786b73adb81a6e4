"""Hot loops of the Lance encodings: bit packing, FSST, RLE, byte-stream-split, bitmaps.

Everything here is a pure transform, numpy in and numpy (or bytes) out; the encoding
modules put these transforms behind the protobuf messages.  Loops that numpy cannot
express are ``_k_*`` functions compiled with numba on their first call (importing this
module neither imports numba nor compiles anything).  Every public decoder has a small
plain-Python twin with a ``_py`` suffix, written straight from the format description;
the tests use the twins to cross-check the compiled kernels.

Layouts (all little-endian):

* **FastLanes** (``fastlanes_pack``/``fastlanes_unpack``): 1024 values of a T-bit
  unsigned type are packed at width W into ``1024*W/T`` T-bit words.  The 1024 values are
  seen as T rows by ``1024/T`` lanes; value ``FL_ORDER[r//8]*16 + (r%8)*128 + lane`` is
  row r of that lane.  Each lane is a bit stream of T W-bit values (row r at bit r*W), and
  word k of lane l's stream is stored at ``out[k*1024/T + l]``.  Worked example, T=8 and
  W=1: word l (0..127) holds values l, 128+l, 256+l, ..., 896+l in bits 0..7.
* **InlineBitpacking** (2.1 mini-block values): per 1024 values ``[W as one T-bit word]
  [1024*W/T packed words]``; the last chunk is zero-padded to 1024 values.  uint8 values
  below 8 give ``03`` + 384 bytes per chunk.
* **OutOfLineBitpacking** (2.1 block context): one W for the buffer, full chunks back to
  back, then the tail either padded and packed or appended as raw T-bit words.
* **Bitpacked** (2.0): value i at bit i*W of the buffer, LSB first, optionally signed.
* **FSST**: see :func:`fsst_parse_symbol_table` and :func:`fsst_decompress`.
* **RLE**: runs of at most 255 (``rle_encode``); **byte-stream-split**: byte j of value i
  at ``j*n + i`` within one chunk of n values.

Example::

    >>> import numpy as np
    >>> from lancefile.encodings import kernels
    >>> v = (np.arange(2048) % 8).astype(np.uint8)
    >>> buf = kernels.inline_bitpacking_encode(v)
    >>> len(buf), buf[0]
    (770, 3)
    >>> bool((kernels.inline_bitpacking_decode(buf, 8, 2048) == v).all())
    True
"""

from __future__ import annotations

import functools
import struct
import threading
import warnings

import numpy as np

from ..errors import CorruptFileError, InvalidInputError

__all__ = [
    "FASTLANES_CHUNK",
    "FL_ORDER",
    "FSST_SYMBOL_TABLE_SIZE",
    "FSST_ESCAPE",
    "FSST_MIN_INPUT_BYTES",
    "RLE_MAX_RUN",
    "fastlanes_words_per_chunk",
    "fastlanes_pack",
    "fastlanes_unpack",
    "inline_bitpacking_encode",
    "inline_bitpacking_decode",
    "inline_bitpacking_decode_chunks",
    "out_of_line_bitpacking_encode",
    "out_of_line_bitpacking_decode",
    "bitpacked_sequential_encode",
    "bitpacked_sequential_decode",
    "bitpacked_for_non_neg_encode",
    "bitpacked_for_non_neg_decode",
    "fsst_parse_symbol_table",
    "fsst_build_symbol_table",
    "fsst_decompress",
    "fsst_compress",
    "fsst_make_symbol_table",
    "rle_encode",
    "rle_expand",
    "rle_block_decode",
    "rle_block_encode",
    "byte_stream_split_encode",
    "byte_stream_split_decode",
    "pack_bits_lsb",
    "unpack_bits_lsb",
    "bit_width",
]

FASTLANES_CHUNK = 1024
# Row r of a FastLanes lane holds value FL_ORDER[r // 8] * 16 + (r % 8) * 128 + lane.
FL_ORDER = (0, 4, 2, 6, 1, 5, 3, 7)
_FL_ORDER = np.array(FL_ORDER, dtype=np.int64)

FSST_SYMBOL_TABLE_SIZE = 8 + 256 * 8 + 256
FSST_ESCAPE = 255
_FSST_MAGIC = 0x46535354  # "FSST", the high 32 bits of the table header
FSST_MIN_INPUT_BYTES = 32 * 1024  # the reference stores smaller inputs raw (switch off)

_UINT = {8: np.dtype("<u1"), 16: np.dtype("<u2"), 32: np.dtype("<u4"), 64: np.dtype("<u8")}
_U64_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


# --------------------------------------------------------------------------------------
# Lazy numba compilation
# --------------------------------------------------------------------------------------

_COMPILE_LOCK = threading.Lock()


class _Kernel:
    """A loop compiled with ``numba.njit(cache=True)`` on its first call.

    numba is imported only then, so ``import lancefile`` stays cheap.  Without numba the
    plain function runs (correct, slow) and a warning says so.
    """

    def __init__(self, fn):
        self.py_func = fn
        self._compiled = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args):
        compiled = self._compiled
        if compiled is None:
            compiled = self._compile()
        return compiled(*args)

    def _compile(self):
        with _COMPILE_LOCK:
            if self._compiled is None:
                try:
                    import numba
                except ImportError:  # pragma: no cover - numba is a hard dependency
                    warnings.warn("numba is not installed; lancefile kernels run as slow Python", stacklevel=3)
                    self._compiled = self.py_func
                else:
                    try:
                        self._compiled = numba.njit(cache=True, nogil=True)(self.py_func)
                    except Exception:  # pragma: no cover - e.g. no writable cache directory
                        self._compiled = numba.njit(nogil=True)(self.py_func)
        return self._compiled


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------


def _uint_dtype(bits: int) -> np.dtype:
    try:
        return _UINT[int(bits)]
    except (KeyError, TypeError, ValueError):
        raise InvalidInputError(f"unsupported word size {bits!r}; expected 8, 16, 32 or 64 bits") from None


def _unsigned_view(values) -> np.ndarray:
    """The values as a contiguous 1-D unsigned array of the same width (raw bits kept)."""
    arr = np.ascontiguousarray(values).reshape(-1)
    if arr.dtype.kind not in "iu" or arr.dtype.itemsize not in (1, 2, 4, 8):
        raise InvalidInputError(f"expected 8/16/32/64-bit integers, got dtype {arr.dtype}")
    target = _UINT[arr.dtype.itemsize * 8]
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and not np.little_endian):
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.view(target)


def _byte_view(buf) -> np.ndarray:
    """Any bytes-like object or array as a 1-D uint8 array, without copying."""
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf).reshape(-1).view(np.uint8)
    return np.frombuffer(buf, dtype=np.uint8)


def _words(buf, dtype: np.dtype, what: str) -> np.ndarray:
    """``buf`` as an aligned 1-D array of little-endian words of ``dtype``."""
    if isinstance(buf, np.ndarray) and buf.dtype == dtype and buf.ndim == 1 and buf.flags.c_contiguous and buf.flags.aligned:
        return buf
    raw = _byte_view(buf)
    if raw.size % dtype.itemsize:
        raise CorruptFileError(
            f"{what}: {raw.size} bytes is not a whole number of {dtype.itemsize * 8}-bit words"
        )
    words = raw.view(dtype)
    return words if words.flags.aligned else words.copy()


def fastlanes_words_per_chunk(width: int, bits: int) -> int:
    """Words of ``bits`` bits taken by 1024 values packed at ``width`` bits."""
    return FASTLANES_CHUNK * int(width) // int(bits)


def _check_width(width: int, bits: int) -> int:
    width = int(width)
    if not 0 <= width <= bits:
        raise InvalidInputError(f"bit width {width} is outside 0..{bits}")
    return width


def bit_width(values) -> int:
    """Bits needed for the largest raw unsigned pattern in ``values`` (0 for all zeros).

    Signed values are taken as their raw bits, so a negative value needs the full width
    (the reference's ``Stat::BitWidth``).
    """
    arr = _unsigned_view(values)
    if arr.size == 0:
        return 0
    return int(np.bitwise_or.reduce(arr)).bit_length()


def _chunk_bit_widths(arr: np.ndarray) -> np.ndarray:
    """Bit width of each 1024-value chunk of a zero-padded 1-D unsigned array."""
    ors = np.bitwise_or.reduce(arr.reshape(-1, FASTLANES_CHUNK), axis=1).astype(np.uint64)
    widths = np.zeros(ors.shape[0], dtype=np.int64)
    while ors.any():
        nz = ors != 0
        widths += nz
        ors >>= np.uint64(1)
    return widths


def _pad_to_chunks(arr: np.ndarray) -> np.ndarray:
    rem = arr.size % FASTLANES_CHUNK
    if rem == 0:
        return arr
    return np.concatenate([arr, np.zeros(FASTLANES_CHUNK - rem, dtype=arr.dtype)])


# --------------------------------------------------------------------------------------
# FastLanes kernels
# --------------------------------------------------------------------------------------


@_Kernel
def _k_fl_unpack(words, word_starts, widths, T, out):
    # Chunk c (width widths[c], words from word_starts[c]) -> out[c*1024 : (c+1)*1024].
    # Rows outside, lanes inside: per row the source word and shift are constant, so the
    # lane loop is a contiguous, vectorisable copy.
    lanes = 1024 // T
    for c in range(widths.shape[0]):
        W = widths[c]
        base = word_starts[c]
        obase = c * 1024
        if W == 0:
            for i in range(1024):
                out[obase + i] = 0
            continue
        if W == T:
            for row in range(T):
                dst = obase + _FL_ORDER[row >> 3] * 16 + (row & 7) * 128
                src = base + lanes * row
                for lane in range(lanes):
                    out[dst + lane] = words[src + lane]
            continue
        mask = (np.uint64(1) << np.uint64(W)) - np.uint64(1)
        for row in range(T):
            bit = row * W
            k = bit // T
            s = bit - k * T
            dst = obase + _FL_ORDER[row >> 3] * 16 + (row & 7) * 128
            src = base + lanes * k
            sh = np.uint64(s)
            if s + W <= T:
                for lane in range(lanes):
                    out[dst + lane] = (np.uint64(words[src + lane]) >> sh) & mask
            else:
                sh2 = np.uint64(T - s)
                src2 = src + lanes
                for lane in range(lanes):
                    v = (np.uint64(words[src + lane]) >> sh) | (np.uint64(words[src2 + lane]) << sh2)
                    out[dst + lane] = v & mask


@_Kernel
def _k_fl_pack(values, word_starts, widths, T, out):
    # Inverse of _k_fl_unpack; ``out`` must be zeroed.
    lanes = 1024 // T
    tmask = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - T)
    for c in range(widths.shape[0]):
        W = widths[c]
        base = word_starts[c]
        ibase = c * 1024
        if W == 0:
            continue
        if W == T:
            for row in range(T):
                src = ibase + _FL_ORDER[row >> 3] * 16 + (row & 7) * 128
                dst = base + lanes * row
                for lane in range(lanes):
                    out[dst + lane] = values[src + lane]
            continue
        mask = (np.uint64(1) << np.uint64(W)) - np.uint64(1)
        for row in range(T):
            bit = row * W
            k = bit // T
            s = bit - k * T
            src = ibase + _FL_ORDER[row >> 3] * 16 + (row & 7) * 128
            dst = base + lanes * k
            sh = np.uint64(s)
            if s + W <= T:
                for lane in range(lanes):
                    v = np.uint64(values[src + lane]) & mask
                    out[dst + lane] = np.uint64(out[dst + lane]) | ((v << sh) & tmask)
            else:
                sh2 = np.uint64(T - s)
                dst2 = dst + lanes
                for lane in range(lanes):
                    v = np.uint64(values[src + lane]) & mask
                    out[dst + lane] = np.uint64(out[dst + lane]) | ((v << sh) & tmask)
                    out[dst2 + lane] = np.uint64(out[dst2 + lane]) | (v >> sh2)


@_Kernel
def _k_inline_scan(words, run_starts, run_groups, T, word_starts, widths):
    # Walk [width word][packed words] groups: run r has run_groups[r] groups back to back
    # from word run_starts[r].  Returns (status, group): 0 ok, 1 = the buffer ends inside
    # the group, 2 = its width word is larger than T.
    n = words.shape[0]
    g = 0
    for r in range(run_starts.shape[0]):
        pos = run_starts[r]
        for _ in range(run_groups[r]):
            if pos >= n:
                return 1, g
            W = np.int64(words[pos])
            if W > T:
                return 2, g
            end = pos + 1 + (1024 * W) // T
            if end > n:
                return 1, g
            widths[g] = W
            word_starts[g] = pos + 1
            pos = end
            g += 1
    return 0, -1


def _unpack_chunks(words: np.ndarray, word_starts: np.ndarray, widths: np.ndarray, dtype) -> np.ndarray:
    out = np.empty(widths.shape[0] * FASTLANES_CHUNK, dtype=dtype)
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
# InlineBitpacking (2.1): [width word][packed words] per 1024 values
# --------------------------------------------------------------------------------------


def inline_bitpacking_encode(values) -> bytes:
    """Encode unsigned (or raw signed) values as InlineBitpacking chunks.

    Each 1024 values get their own width (the bit length of their OR), written as one
    word of the value type before the packed words; the last chunk is zero-padded.
    """
    arr = _pad_to_chunks(_unsigned_view(values))
    T = arr.dtype.itemsize * 8
    widths = _chunk_bit_widths(arr)
    sizes = 1 + FASTLANES_CHUNK * widths // T
    ends = np.cumsum(sizes)
    starts = ends - sizes + 1
    out = _pack_chunks(arr, starts, widths, int(ends[-1]) if ends.size else 0)
    out[starts - 1] = widths.astype(out.dtype)
    return out.tobytes()


def _inline_words(buf, dtype):
    raw = _byte_view(buf)
    return raw, _words(raw[: raw.size - raw.size % dtype.itemsize], dtype, "InlineBitpacking buffer")


def _inline_scan(words, run_starts, run_groups, T: int, what: str):
    total = int(run_groups.sum())
    starts = np.empty(total, dtype=np.int64)
    widths = np.empty(total, dtype=np.int64)
    if total:
        status, group = _k_inline_scan(words, run_starts, run_groups, T, starts, widths)
        if status:
            run = int(np.searchsorted(np.cumsum(run_groups), group, side="right"))
            where = f"{what} {run}" + (f", group {group}" if run_groups.size == 1 else "")
            if status == 1:
                raise CorruptFileError(f"InlineBitpacking {where}: the buffer ends inside the chunk")
            raise CorruptFileError(f"InlineBitpacking {where}: the bit width word is above {T}")
    return starts, widths


def inline_bitpacking_decode(buf, bits: int, num_values: int) -> np.ndarray:
    """Decode ``num_values`` InlineBitpacking values of ``bits`` (8/16/32/64) bits.

    ``buf`` holds ``ceil(num_values/1024)`` chunks back to back (a mini-block chunk has
    one; a small block may have several).  Bytes after the last chunk are ignored.
    Returns an unsigned array; view it as signed when the column is.
    """
    dtype = _uint_dtype(bits)
    _raw, words = _inline_words(buf, dtype)
    n = int(num_values)
    groups = np.array([-(-n // FASTLANES_CHUNK)], dtype=np.int64)
    starts, widths = _inline_scan(words, np.zeros(1, np.int64), groups, dtype.itemsize * 8, "buffer")
    return _unpack_chunks(words, starts, widths, dtype)[:n]


def inline_bitpacking_decode_chunks(buf, bits: int, byte_offsets, num_values) -> np.ndarray:
    """Decode the InlineBitpacking value buffers of many mini-block chunks in one call.

    Chunk i's value buffer starts at ``byte_offsets[i]`` of ``buf`` (e.g. a page's chunk
    data; offsets must be multiples of ``bits/8``, which the 8-byte chunk alignment
    guarantees) and holds ``num_values[i]`` values.  Returns all values concatenated,
    the same as calling :func:`inline_bitpacking_decode` per chunk, without the per-call
    overhead.
    """
    dtype = _uint_dtype(bits)
    raw, words = _inline_words(buf, dtype)
    offsets = np.asarray(byte_offsets, dtype=np.int64).reshape(-1)
    counts = np.asarray(num_values, dtype=np.int64).reshape(-1)
    if offsets.shape != counts.shape or (counts < 0).any():
        raise InvalidInputError("byte_offsets and num_values must be equally long, with counts >= 0")
    bad = (offsets % dtype.itemsize != 0) | (offsets < 0) | (offsets > raw.size)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CorruptFileError(f"InlineBitpacking chunk {i} starts at byte {offsets[i]}, not a {bits}-bit word inside the {raw.size}-byte buffer")
    groups = -(-counts // FASTLANES_CHUNK)
    starts, widths = _inline_scan(words, offsets // dtype.itemsize, groups, dtype.itemsize * 8, "chunk")
    values = _unpack_chunks(words, starts, widths, dtype)
    if np.array_equal(counts, groups * FASTLANES_CHUNK):
        return values
    first_value = (np.cumsum(groups) - groups) * FASTLANES_CHUNK  # of each chunk in ``values``
    out_start = np.cumsum(counts) - counts
    return values[np.arange(int(counts.sum())) + np.repeat(first_value - out_start, counts)]


def inline_bitpacking_decode_py(buf, bits: int, num_values: int) -> np.ndarray:
    """Plain-Python :func:`inline_bitpacking_decode` (reference for the tests)."""
    dtype = _uint_dtype(bits)
    T = bits
    raw = bytes(_byte_view(buf))
    size = T // 8
    pos, parts = 0, []
    for _ in range(-(-int(num_values) // FASTLANES_CHUNK)):
        if pos + size > len(raw):
            raise CorruptFileError("InlineBitpacking buffer too short")
        width = int.from_bytes(raw[pos : pos + size], "little")
        if width > T:
            raise CorruptFileError("InlineBitpacking width too large")
        nbytes = 128 * width
        if pos + size + nbytes > len(raw):
            raise CorruptFileError("InlineBitpacking buffer too short")
        parts.append(fastlanes_unpack_py(raw[pos + size : pos + size + nbytes], width, FASTLANES_CHUNK, dtype))
        pos += size + nbytes
    out = np.concatenate(parts) if parts else np.empty(0, dtype)
    return out[: int(num_values)]


# --------------------------------------------------------------------------------------
# OutOfLineBitpacking (2.1 block context): one width, tail padded or raw
# --------------------------------------------------------------------------------------


def out_of_line_bitpacking_encode(values, width: int | None = None) -> bytes:
    """Pack values at one ``width`` (default: the bit length of their OR), as the reference.

    Full 1024-value chunks are packed back to back.  A partial tail of ``t`` values is
    zero-padded and packed when ``W*(1024-t) < (T-W)*t``, else appended as raw T-bit words.
    """
    arr = _unsigned_view(values)
    T = arr.dtype.itemsize * 8
    W = bit_width(arr) if width is None else _check_width(width, T)
    full = arr.size // FASTLANES_CHUNK
    tail = arr.size % FASTLANES_CHUNK
    body = fastlanes_pack(arr[: full * FASTLANES_CHUNK], W)
    if tail == 0:
        return body.tobytes()
    if W * (FASTLANES_CHUNK - tail) < (T - W) * tail:
        return body.tobytes() + fastlanes_pack(_pad_to_chunks(arr[full * FASTLANES_CHUNK :]), W).tobytes()
    return body.tobytes() + arr[full * FASTLANES_CHUNK :].tobytes()


def _out_of_line_plan(n_words: int, T: int, width: int, num_values: int):
    full, tail = divmod(num_values, FASTLANES_CHUNK)
    wpc = fastlanes_words_per_chunk(width, T)
    tail_is_raw = tail > 0 and n_words == full * wpc + tail
    need = full * wpc + (tail if tail_is_raw else (wpc if tail else 0))
    if n_words < need:
        raise CorruptFileError(
            f"OutOfLineBitpacking buffer holds {n_words} {T}-bit words; {num_values} values at "
            f"width {width} need {need}"
        )
    return full, tail, wpc, tail_is_raw


def out_of_line_bitpacking_decode(buf, uncompressed_bits: int, width: int, num_values: int) -> np.ndarray:
    """Decode OutOfLineBitpacking: ``num_values`` values packed at ``width`` bits.

    The tail (``num_values % 1024`` values) is raw T-bit words iff the buffer holds exactly
    ``full_chunks * 1024*W/T + tail`` words; otherwise it is one more padded packed chunk.
    """
    dtype = _uint_dtype(uncompressed_bits)
    T = dtype.itemsize * 8
    width = _check_width(width, T)
    words = _words(buf, dtype, "OutOfLineBitpacking buffer")
    num_values = int(num_values)
    full, tail, wpc, tail_is_raw = _out_of_line_plan(words.size, T, width, num_values)
    if not tail_is_raw:
        return fastlanes_unpack(words, width, num_values, dtype)
    out = np.empty(num_values, dtype=dtype)
    out[: full * FASTLANES_CHUNK] = fastlanes_unpack(words[: full * wpc], width, full * FASTLANES_CHUNK, dtype)
    out[full * FASTLANES_CHUNK :] = words[full * wpc : full * wpc + tail]
    return out


def out_of_line_bitpacking_decode_py(buf, uncompressed_bits: int, width: int, num_values: int) -> np.ndarray:
    """Plain-Python :func:`out_of_line_bitpacking_decode` (reference for the tests)."""
    dtype = _uint_dtype(uncompressed_bits)
    words = _words(buf, dtype, "OutOfLineBitpacking buffer")
    full, tail, wpc, tail_is_raw = _out_of_line_plan(words.size, uncompressed_bits, width, int(num_values))
    head = fastlanes_unpack_py(words[: full * wpc], width, full * FASTLANES_CHUNK, dtype)
    if tail == 0:
        return head
    if tail_is_raw:
        rest = words[full * wpc : full * wpc + tail]
    else:
        rest = fastlanes_unpack_py(words[full * wpc : (full + 1) * wpc], width, tail, dtype)
    return np.concatenate([head, rest]).astype(dtype)


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


# --------------------------------------------------------------------------------------
# 2.0 Bitpacked: value i at bit i*W, LSB first
# --------------------------------------------------------------------------------------


@_Kernel
def _k_seq_unpack(data, width, n, signed, out):
    # ``data`` carries 9 zero bytes of slack past the last value, so loads never run off.
    # Signed values are sign-extended in 64 bits; the store into ``out`` keeps the low bits.
    mask = _U64_ONES if width == 64 else (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    sign = np.uint64(0)
    if signed and 0 < width < 64:
        sign = np.uint64(1) << np.uint64(width - 1)
    for i in range(n):
        bit = i * width
        b = bit >> 3
        s = bit & 7
        nbytes = (s + width + 7) >> 3
        v = np.uint64(0)
        for j in range(min(nbytes, 8)):
            v |= np.uint64(data[b + j]) << np.uint64(8 * j)
        v >>= np.uint64(s)
        if nbytes > 8:
            v |= np.uint64(data[b + 8]) << np.uint64(64 - s)
        v &= mask
        out[i] = (v ^ sign) - sign


def bitpacked_sequential_decode(buf, width: int, num_values: int, signed: bool, out_dtype) -> np.ndarray:
    """Decode the 2.0 ``Bitpacked`` layout: value i at bit ``i*width``, LSB first.

    With ``signed`` the top bit of each value is its sign (two's complement, extended to
    ``out_dtype``).  ``width`` may not exceed the bits of ``out_dtype``.
    """
    out_dtype = np.dtype(out_dtype)
    if out_dtype.kind not in "iu":
        raise InvalidInputError(f"Bitpacked decodes integers, not {out_dtype}")
    bits = out_dtype.itemsize * 8
    width = _check_width(width, min(bits, 64))
    n = int(num_values)
    raw = _byte_view(buf)
    need = -(-n * width // 8)
    if raw.size < need:
        raise CorruptFileError(f"Bitpacked buffer has {raw.size} bytes; {n} values of {width} bits need {need}")
    padded = np.zeros(need + 9, dtype=np.uint8)
    padded[:need] = raw[:need]
    out = np.empty(n, dtype=_uint_dtype(bits))
    if n:
        _k_seq_unpack(padded, width, n, bool(signed), out)
    return out.view(out_dtype.newbyteorder("<"))


def bitpacked_sequential_decode_py(buf, width, num_values, signed, out_dtype) -> np.ndarray:
    """Plain-Python :func:`bitpacked_sequential_decode` (reference for the tests)."""
    raw = int.from_bytes(bytes(_byte_view(buf)), "little")
    out = []
    for i in range(int(num_values)):
        v = (raw >> (i * width)) & ((1 << width) - 1)
        if signed and width and v >> (width - 1):
            v -= 1 << width
        out.append(v)
    out_dtype = np.dtype(out_dtype)
    bits = out_dtype.itemsize * 8
    return np.array([v % (1 << bits) for v in out], dtype=np.uint64).astype(_uint_dtype(bits)).view(out_dtype)


def bitpacked_sequential_encode(values, width: int) -> bytes:
    """Encode the 2.0 ``Bitpacked`` layout (low ``width`` bits of each value, LSB first)."""
    arr = _unsigned_view(values)
    width = _check_width(width, arr.dtype.itemsize * 8)
    bits = np.unpackbits(arr.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    return np.packbits(bits[:, :width].reshape(-1), bitorder="little").tobytes()


# --------------------------------------------------------------------------------------
# FSST
# --------------------------------------------------------------------------------------


def fsst_parse_symbol_table(table) -> tuple[np.ndarray, np.ndarray, bool]:
    """Parse a 2312-byte FSST symbol table into ``(symbols, lengths, compressed)``.

    Layout: u64 header ``"FSST" << 32 | switch << 24 | suffix_lim << 16 | terminator << 8 |
    n_symbols``, then ``n_symbols`` u64 symbols (first byte in the low byte), then
    ``n_symbols`` u8 lengths (1..8), zeros after.  ``compressed`` is the switch bit: when
    it is clear the strings were stored raw.  E.g. a header ``ff 00 48 01 54 53 53 46``
    announces 255 symbols, terminator 0, suffix_lim 72, switch on.
    """
    raw = bytes(_byte_view(table))
    if len(raw) != FSST_SYMBOL_TABLE_SIZE:
        raise CorruptFileError(f"FSST symbol table has {len(raw)} bytes, expected {FSST_SYMBOL_TABLE_SIZE}")
    (header,) = struct.unpack_from("<Q", raw)
    if header >> 32 != _FSST_MAGIC:
        raise CorruptFileError(f"FSST symbol table has a bad magic (header {header:#018x})")
    n = header & 0xFF
    compressed = bool(header >> 24 & 1)
    symbols = np.frombuffer(raw, dtype="<u8", count=n, offset=8).astype(np.uint64)
    lengths = np.frombuffer(raw, dtype=np.uint8, count=n, offset=8 + 8 * n).copy()
    if compressed and n and (lengths.min() < 1 or lengths.max() > 8):
        raise CorruptFileError("FSST symbol table has a symbol length outside 1..8")
    return symbols, lengths, compressed


def _fsst_tables(symbols, lengths):
    symbols = np.asarray(symbols, dtype=np.uint64).reshape(-1)
    lengths = np.asarray(lengths, dtype=np.uint8).reshape(-1)
    n = symbols.size
    if n != lengths.size or n > 255:
        raise InvalidInputError(f"FSST needs matching symbols and lengths (at most 255), got {n} and {lengths.size}")
    if n and lengths.max() > 8:
        raise InvalidInputError("FSST symbol lengths must be at most 8")
    sym_bytes = np.zeros((256, 8), dtype=np.uint8)
    sym_bytes[:n] = symbols.astype("<u8").view(np.uint8).reshape(n, 8)
    lens = np.zeros(256, dtype=np.int64)
    lens[:n] = lengths
    return sym_bytes, lens, n


@_Kernel
def _k_fsst_measure(codes, offsets, lens, n_symbols, out_offsets):
    # Pass 1: output size of every string, with every check.  Returns (status, string):
    # 1 = bad offsets, 2 = escape as the string's last byte, 3 = code without a symbol.
    ncodes = codes.shape[0]
    total = 0
    out_offsets[0] = 0
    for i in range(offsets.shape[0] - 1):
        p = offsets[i]
        end = offsets[i + 1]
        if p < 0 or end < p or end > ncodes:
            return 1, i
        while p < end:
            c = codes[p]
            if c == 255:
                if p + 1 >= end:
                    return 2, i
                total += 1
                p += 2
            elif c < n_symbols:
                total += lens[c]
                p += 1
            else:
                return 3, i
        out_offsets[i + 1] = total
    return 0, -1


@_Kernel
def _k_fsst_fill(codes, offsets, sym_bytes, lens, out):
    # Pass 2: write the strings; the input was validated by _k_fsst_measure.
    pos = 0
    for i in range(offsets.shape[0] - 1):
        p = offsets[i]
        end = offsets[i + 1]
        while p < end:
            c = codes[p]
            if c == 255:
                out[pos] = codes[p + 1]
                pos += 1
                p += 2
            else:
                # always copy 8 bytes (``out`` has 8 bytes of slack); only lens[c] count
                for k in range(8):
                    out[pos + k] = sym_bytes[c, k]
                pos += lens[c]
                p += 1


_FSST_ERRORS = {
    1: "has offsets that are decreasing or outside the {n}-byte code buffer",
    2: "ends with an escape byte (truncated escape)",
    3: "uses a code with no symbol in the table",
}


def fsst_decompress(codes, offsets, symbols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Decompress FSST strings; string i is ``codes[offsets[i]:offsets[i+1]]``.

    Code ``c < 255`` expands to ``symbols[c]`` (its low ``lengths[c]`` bytes); 255 escapes
    the next byte, which is copied as is.  Returns ``(data uint8, offsets int64)`` with
    ``offsets[0] == 0``.  Bad offsets, truncated escapes and codes beyond the table raise
    :class:`CorruptFileError`.  The output size is measured first (one validating pass), so
    nothing is over-allocated.
    """
    codes = _byte_view(codes)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
    sym_bytes, lens, n = _fsst_tables(symbols, lengths)
    if offsets.size == 0:
        return np.empty(0, np.uint8), np.zeros(1, np.int64)
    out_offsets = np.empty(offsets.size, dtype=np.int64)
    status, where = _k_fsst_measure(codes, offsets, lens, n, out_offsets)
    if status:
        raise CorruptFileError(f"FSST string {where} " + _FSST_ERRORS[status].format(n=codes.size))
    total = int(out_offsets[-1])
    data = np.empty(total + 8, dtype=np.uint8)
    _k_fsst_fill(codes, offsets, sym_bytes, lens, data)
    return data[:total], out_offsets


def fsst_decompress_py(codes, offsets, symbols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python :func:`fsst_decompress` (reference for the tests)."""
    codes = bytes(_byte_view(codes))
    table = [int(s).to_bytes(8, "little")[: int(n)] for s, n in zip(symbols, lengths)]
    out, out_offsets = bytearray(), [0]
    for i in range(len(offsets) - 1):
        a, b = int(offsets[i]), int(offsets[i + 1])
        if a < 0 or b < a or b > len(codes):
            raise CorruptFileError(f"FSST string {i} has bad offsets")
        p = a
        while p < b:
            c = codes[p]
            if c == FSST_ESCAPE:
                if p + 1 >= b:
                    raise CorruptFileError(f"FSST string {i} ends with an escape byte")
                out.append(codes[p + 1])
                p += 2
            elif c < len(table):
                out += table[c]
                p += 1
            else:
                raise CorruptFileError(f"FSST string {i} uses a code with no symbol")
        out_offsets.append(len(out))
    return np.frombuffer(bytes(out), dtype=np.uint8), np.array(out_offsets, dtype=np.int64)


# FSST compression ----------------------------------------------------------------------
#
# Our own, simpler take on FSST training: a few rounds over a sample of the input, each
# round tokenising the sample greedily with the current table and keeping the 255
# candidates (tokens used, and neighbouring tokens joined up to 8 bytes) that cover the
# most bytes.  Training runs in Python over at most FSST_SAMPLE_BYTES of sample;
# compressing the whole input is a compiled greedy longest match.  Only the decoder
# side is fixed by the format: any table of 1..8-byte symbols decodes.

FSST_SAMPLE_BYTES = 1 << 14
_FSST_HASH_MUL = 0x9E3779B97F4A7C15
_FSST_ROUNDS = 5


def _fsst_sample(data: bytes, offsets: np.ndarray) -> list[bytes]:
    n = offsets.size - 1
    if len(data) <= FSST_SAMPLE_BYTES:
        return [data[offsets[i] : offsets[i + 1]] for i in range(n)]
    rng = np.random.default_rng(4637947)
    out, size = [], 0
    for i in rng.permutation(n):
        s = data[offsets[i] : offsets[i + 1]][:512]
        out.append(s)
        size += len(s)
        if size >= FSST_SAMPLE_BYTES:
            break
    return out


def _greedy_tokens(s: bytes, table: dict[bytes, int], max_len: int) -> list[bytes]:
    toks, p, n = [], 0, len(s)
    while p < n:
        for k in range(min(max_len, n - p), 0, -1):
            piece = s[p : p + k]
            if k == 1 or piece in table:
                toks.append(piece)
                p += k
                break
    return toks


def fsst_build_symbol_table(data, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Train an FSST table (at most 255 symbols of 1..8 bytes) on a sample of the strings.

    Each round tokenises the sample greedily with the current table, then scores every
    token used and every concatenation of two neighbouring tokens (cut to 8 bytes) by
    ``uses * length`` and keeps the best 255.  Returns ``(symbols uint64, lengths uint8)``.
    """
    raw = bytes(_byte_view(data))
    offsets = np.asarray(offsets, dtype=np.int64)
    sample = _fsst_sample(raw, offsets)
    table: dict[bytes, int] = {}
    for _ in range(_FSST_ROUNDS):
        max_len = max((len(t) for t in table), default=1)
        gains: dict[bytes, int] = {}
        for s in sample:
            prev = b""
            for tok in _greedy_tokens(s, table, max_len):
                gains[tok] = gains.get(tok, 0) + len(tok)
                if prev:
                    joined = (prev + tok)[:8]
                    gains[joined] = gains.get(joined, 0) + len(joined)
                prev = tok
        best = sorted(gains.items(), key=lambda kv: (-kv[1], kv[0]))[:255]
        table = {tok: i for i, (tok, _gain) in enumerate(best)}
    symbols = sorted(table, key=lambda t: (-len(t), t))
    lengths = np.array([len(t) for t in symbols], dtype=np.uint8)
    vals = np.array([int.from_bytes(t.ljust(8, b"\0"), "little") for t in symbols], dtype=np.uint64)
    return vals, lengths


@_Kernel
def _k_fsst_compress(data, offsets, hkeys, hstart, hmask, cand_val, cand_len, cand_code,
                     short_code, byte_code, out, out_offsets):
    # Greedy longest match.  Symbols of 3+ bytes are found through a hash of their first
    # three bytes (candidates longest first), 2-byte symbols through a direct table,
    # single bytes through byte_code; anything else is escaped.
    pos = 0
    out_offsets[0] = 0
    for i in range(offsets.shape[0] - 1):
        p = offsets[i]
        end = offsets[i + 1]
        while p < end:
            left = end - p
            code = -1
            step = 1
            if left >= 3:
                prefix = np.uint64(data[p]) | (np.uint64(data[p + 1]) << np.uint64(8))
                prefix |= np.uint64(data[p + 2]) << np.uint64(16)
                slot = np.int64((prefix * np.uint64(_FSST_HASH_MUL)) >> np.uint64(40)) & hmask
                while hstart[slot] >= 0:
                    if hkeys[slot] == prefix:
                        word = prefix
                        for j in range(3, min(left, 8)):
                            word |= np.uint64(data[p + j]) << np.uint64(8 * j)
                        c = hstart[slot]
                        while cand_len[c] > 0:  # candidates end with a 0 length
                            n = cand_len[c]
                            if n <= left:
                                m = _U64_ONES if n == 8 else (np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)
                                if word & m == cand_val[c]:
                                    code = cand_code[c]
                                    step = n
                                    break
                            c += 1
                        break
                    slot = (slot + 1) & hmask
            if code < 0 and left >= 2:
                code = short_code[np.int64(data[p]) | (np.int64(data[p + 1]) << 8)]
                step = 2
            if code < 0:
                code = byte_code[data[p]]
                step = 1
            if code >= 0:
                out[pos] = code
                pos += 1
            else:
                out[pos] = 255
                out[pos + 1] = data[p]
                pos += 2
            p += step
        out_offsets[i + 1] = pos
    return pos


def _fsst_encoder_tables(toks: list[bytes]):
    """Lookup tables for _k_fsst_compress from the symbols (code = position in toks)."""
    byte_code = np.full(256, -1, dtype=np.int64)
    short_code = np.full(1 << 16, -1, dtype=np.int64)
    groups: dict[int, list[tuple[int, int]]] = {}
    for code, tok in enumerate(toks):
        if len(tok) == 1:
            if byte_code[tok[0]] < 0:
                byte_code[tok[0]] = code
        elif len(tok) == 2:
            key = tok[0] | tok[1] << 8
            if short_code[key] < 0:
                short_code[key] = code
        else:
            groups.setdefault(int.from_bytes(tok[:3], "little"), []).append((len(tok), code))
    hsize = 64
    while hsize < 2 * max(len(groups), 1):
        hsize *= 2
    hkeys = np.zeros(hsize, dtype=np.uint64)
    hstart = np.full(hsize, -1, dtype=np.int64)
    cand_val, cand_len, cand_code = [], [], []
    for prefix, cands in groups.items():
        slot = (prefix * _FSST_HASH_MUL & 0xFFFF_FFFF_FFFF_FFFF) >> 40 & (hsize - 1)
        while hstart[slot] >= 0:
            slot = (slot + 1) & (hsize - 1)
        hkeys[slot] = prefix
        hstart[slot] = len(cand_len)
        for n, code in sorted(cands, reverse=True):
            cand_val.append(int.from_bytes(toks[code], "little"))
            cand_len.append(n)
            cand_code.append(code)
        cand_val.append(0)
        cand_len.append(0)
        cand_code.append(-1)
    return (hkeys, hstart, hsize - 1, np.array(cand_val, dtype=np.uint64), np.array(cand_len, dtype=np.int64),
            np.array(cand_code, dtype=np.int64), short_code, byte_code)


def fsst_compress(data, offsets, symbols=None, lengths=None) -> tuple[bytes, np.ndarray, np.ndarray]:
    """FSST-compress strings ``data[offsets[i]:offsets[i+1]]`` each on its own.

    Trains a table (:func:`fsst_build_symbol_table`) unless one is given.  Returns
    ``(symbol_table 2312 bytes, codes uint8, code_offsets int64)`` with the table's switch
    bit set; readable by :func:`fsst_decompress` and by the reference decoder.
    """
    raw = _byte_view(data)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
    if offsets.size and (offsets[0] < 0 or offsets[-1] > raw.size or np.any(np.diff(offsets) < 0)):
        raise InvalidInputError("FSST offsets must be non-decreasing and inside the data")
    if symbols is None:
        symbols, lengths = fsst_build_symbol_table(raw, offsets)
    symbols = np.asarray(symbols, dtype=np.uint64)
    lengths = np.asarray(lengths, dtype=np.uint8)
    _fsst_tables(symbols, lengths)  # validates
    toks = [int(s).to_bytes(8, "little")[: int(n)] for s, n in zip(symbols, lengths)]
    out = np.empty(2 * raw.size, dtype=np.uint8)
    out_offsets = np.zeros(max(offsets.size, 1), dtype=np.int64)
    used = 0
    if offsets.size > 1:
        used = _k_fsst_compress(raw, offsets, *_fsst_encoder_tables(toks), out, out_offsets)
    return fsst_make_symbol_table(symbols, lengths), out[:used].copy(), out_offsets


def fsst_make_symbol_table(symbols, lengths, compressed: bool = True) -> bytes:
    """Serialise a symbol table in the 2312-byte layout of :func:`fsst_parse_symbol_table`.

    The terminator and suffix_lim bytes only steer the reference's own compressor and are
    written as 0.
    """
    symbols = np.asarray(symbols, dtype=np.uint64)
    lengths = np.asarray(lengths, dtype=np.uint8)
    n = symbols.size
    header = _FSST_MAGIC << 32 | int(compressed) << 24 | n
    buf = bytearray(FSST_SYMBOL_TABLE_SIZE)
    struct.pack_into("<Q", buf, 0, header)
    buf[8 : 8 + 8 * n] = symbols.astype("<u8").tobytes()
    buf[8 + 8 * n : 8 + 9 * n] = lengths.tobytes()
    return bytes(buf)


# --------------------------------------------------------------------------------------
# RLE
# --------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------
# Byte stream split
# --------------------------------------------------------------------------------------


def byte_stream_split_encode(values) -> bytes:
    """One chunk of byte-stream-split: byte j of value i goes to ``j*n + i``."""
    arr = np.ascontiguousarray(values).reshape(-1)
    width = arr.dtype.itemsize
    return arr.view(np.uint8).reshape(arr.size, width).T.tobytes()


def byte_stream_split_decode(buf, bits: int, num_values: int) -> np.ndarray:
    """Undo :func:`byte_stream_split_encode` for one chunk; returns unsigned words of ``bits``
    (view them as float32/float64 as needed)."""
    dtype = _uint_dtype(bits)
    n = int(num_values)
    raw = _byte_view(buf)
    need = n * dtype.itemsize
    if raw.size < need:
        raise CorruptFileError(f"byte-stream-split chunk has {raw.size} bytes; {n} values need {need}")
    return np.ascontiguousarray(raw[:need].reshape(dtype.itemsize, n).T).view(dtype).reshape(n)


def byte_stream_split_decode_py(buf, bits: int, num_values: int) -> np.ndarray:
    """Plain-Python :func:`byte_stream_split_decode` (reference for the tests)."""
    raw = bytes(_byte_view(buf))
    w = bits // 8
    n = int(num_values)
    vals = [int.from_bytes(bytes(raw[j * n + i] for j in range(w)), "little") for i in range(n)]
    return np.array(vals, dtype=np.uint64).astype(_uint_dtype(bits))


# --------------------------------------------------------------------------------------
# LSB-first bitmaps (bool values, validity)
# --------------------------------------------------------------------------------------


def unpack_bits_lsb(buf, num: int, offset: int = 0) -> np.ndarray:
    """Bits ``offset .. offset+num`` of an LSB-first bitmap (bit i = bit i%8 of byte i//8)."""
    raw = _byte_view(buf)
    num, offset = int(num), int(offset)
    need = -(-(offset + num) // 8)
    if offset < 0 or num < 0 or raw.size < need:
        raise CorruptFileError(f"bitmap of {raw.size} bytes cannot hold bits [{offset}, {offset + num})")
    first = offset // 8
    bits = np.unpackbits(raw[first:need], bitorder="little")
    start = offset - 8 * first
    return bits[start : start + num].view(np.bool_)


def unpack_bits_lsb_py(buf, num: int, offset: int = 0) -> np.ndarray:
    """Plain-Python :func:`unpack_bits_lsb` (reference for the tests)."""
    raw = bytes(_byte_view(buf))
    return np.array([(raw[(offset + i) // 8] >> ((offset + i) % 8)) & 1 for i in range(num)], dtype=np.bool_)


def pack_bits_lsb(bools) -> bytes:
    """Pack booleans into an LSB-first bitmap, the last byte zero-padded."""
    return np.packbits(np.asarray(bools, dtype=np.bool_).reshape(-1), bitorder="little").tobytes()
