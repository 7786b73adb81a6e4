"""InlineBitpacking and OutOfLineBitpacking (2.1+): FastLanes groups with their widths.

Each decoder has its plain ``_py`` twin.  Layouts (all little-endian; the FastLanes group
layout itself is described in :mod:`.fastlanes`):

* **InlineBitpacking** (mini-block values): per 1024 values ``[W as one T-bit word]
  [1024*W/T packed words]``; the last group is zero-padded to 1024 values.  uint8 values
  below 8 give ``03`` + 384 bytes per group.
* **OutOfLineBitpacking** (block context): one W for the buffer, full groups back to
  back, then the tail either padded and packed or appended as raw T-bit words.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError, InvalidInputError
from ._common import _byte_view, _check_width, _Kernel, _uint_dtype, _unsigned_view, _words, bit_width, empty
from .fastlanes import (
    _FL_ORDER,
    FASTLANES_CHUNK,
    _chunk_bit_widths,
    _fl_unpack,
    _pack_chunks,
    _pad_to_chunks,
    _unpack_chunks,
    fastlanes_pack,
    fastlanes_unpack,
    fastlanes_unpack_py,
    fastlanes_words_per_chunk,
)

__all__ = [
    "inline_bitpacking_encode",
    "inline_bitpacking_pack",
    "inline_bitpacking_decode",
    "inline_bitpacking_decode_chunks",
    "inline_bitpacking_take_chunks",
    "out_of_line_bitpacking_encode",
    "out_of_line_bitpacking_decode",
    "out_of_line_bitpacking_decode_blocks",
    "out_of_line_bitpacking_encode_many",
]


@_Kernel
def _k_fl_gather(words, word_starts, widths, T, groups, idx, out):
    # out[j] = value idx[j] (0..1023) of group groups[j], read straight from its packed words:
    # value i sits in lane i % lanes, row FL_ORDER[(i % 128 - lane) / 16] * 8 + i / 128
    # (FL_ORDER is its own inverse), at bit row * W of that lane's stream.
    lanes = 1024 // T
    for j in range(groups.shape[0]):
        g = groups[j]
        i = idx[j]
        W = widths[g]
        if W == 0:
            out[j] = 0
            continue
        lane = i % lanes
        row = _FL_ORDER[((i & 127) - lane) >> 4] * 8 + (i >> 7)
        bit = row * W
        k = bit // T
        s = bit - k * T
        src = word_starts[g] + lanes * k + lane
        v = np.uint64(words[src]) >> np.uint64(s)
        if s + W > T:
            v |= np.uint64(words[src + lanes]) << np.uint64(T - s)
        if W < 64:
            v &= (np.uint64(1) << np.uint64(W)) - np.uint64(1)
        out[j] = v


@_Kernel
def _k_ool_blocks(words, word_starts, word_counts, counts, W, T, scratch, out):
    # OutOfLineBitpacking buffers back to back: buffer b holds counts[b] values in
    # word_counts[b] words from word_starts[b]: whole 1024-value groups, then the tail either
    # packed in one more (padded) group or as raw words. Returns -1, or the bad buffer.
    wpc = 1024 * W // T
    pos = 0
    for b in range(counts.shape[0]):
        n = counts[b]
        full = n // 1024
        tail = n - full * 1024
        raw = tail > 0 and word_counts[b] == full * wpc + tail
        need = full * wpc + (tail if raw else (wpc if tail > 0 else 0))
        if word_counts[b] != need:  # the words are exactly the packed groups and the tail
            return b
        base = word_starts[b]
        for g in range(full):
            _fl_unpack(words, base + g * wpc, W, T, out, pos)
            pos += 1024
        if tail > 0:
            if raw:
                for i in range(tail):
                    out[pos + i] = words[base + full * wpc + i]
            else:
                _fl_unpack(words, base + full * wpc, W, T, scratch, 0)
                for i in range(tail):
                    out[pos + i] = scratch[i]
            pos += tail
    return -1


@_Kernel
def _k_inline_scan(words, run_starts, run_limits, run_groups, T, exact, word_starts, widths):
    # Walk [width word][packed words] groups: run r has run_groups[r] groups back to back
    # from word run_starts[r], ending by word run_limits[r] (``exact``: ending there).
    # Returns (status, group): 0 ok, 1 = the run ends inside the group, 2 = its width word is
    # not in 0..T, 3 = bytes are left over after the run's groups.
    g = 0
    for r in range(run_starts.shape[0]):
        pos = run_starts[r]
        n = min(run_limits[r], words.shape[0])
        for _ in range(run_groups[r]):
            if pos >= n:
                return 1, g
            W = np.int64(words[pos])
            if W < 0 or W > T:  # a u64 word above 2**63 reads as negative
                return 2, g
            end = pos + 1 + (1024 * W) // T
            if end > n:
                return 1, g
            widths[g] = W
            word_starts[g] = pos + 1
            pos = end
            g += 1
        if exact and pos != n:  # a chunk's groups fill its buffer exactly
            return 3, g - 1
    return 0, -1


@_Kernel
def _k_inline_decode(words, nbytes, itemsize, offsets, sizes, has_sizes, counts, T, out, scratch):
    # Check and decode the InlineBitpacking buffers of chunks in one pass: chunk r starts at
    # byte offsets[r] (ending at offsets[r] + sizes[r] exactly when has_sizes, else by the end
    # of ``words``) and holds counts[r] values, which go to ``out`` one chunk after another.
    # Returns (status, chunk, group): 0 ok; 1 the buffer ends inside the group; 2 a width word
    # is not in 0..T; 3 bytes are left over; 4 a negative count; 5 a chunk does not start on a
    # word inside the buffer; 6 a chunk's size is not whole words.
    o = 0
    g = 0
    for r in range(offsets.shape[0]):
        n = counts[r]
        if n < 0:
            return 4, r, g
        off = offsets[r]
        if off < 0 or off % itemsize != 0 or off > nbytes:
            return 5, r, g
        pos = off // itemsize
        limit = words.shape[0]
        if has_sizes:
            if sizes[r] % itemsize != 0:
                return 6, r, g
            limit = min(limit, pos + sizes[r] // itemsize)
        left = n
        while left > 0:
            if pos >= limit:
                return 1, r, g
            W = np.int64(words[pos])
            if W < 0 or W > T:  # a u64 word above 2**63 reads as negative
                return 2, r, g
            end = pos + 1 + (1024 * W) // T
            if end > limit:
                return 1, r, g
            if left >= 1024:
                _fl_unpack(words, pos + 1, W, T, out, o)
                o += 1024
                left -= 1024
            else:
                _fl_unpack(words, pos + 1, W, T, scratch, 0)
                for i in range(left):
                    out[o + i] = scratch[i]
                o += left
                left = 0
            pos = end
            g += 1
        if has_sizes and pos != limit:
            return 3, r, g - 1
    return 0, -1, -1


# --------------------------------------------------------------------------------------
# InlineBitpacking (2.1): [width word][packed words] per 1024 values
# --------------------------------------------------------------------------------------


def inline_bitpacking_encode(values) -> bytes:
    """Encode unsigned (or raw signed) values as InlineBitpacking chunks.

    Each 1024 values get their own width (the bit length of their OR), written as one
    word of the value type before the packed words; the last chunk is zero-padded.
    """
    return inline_bitpacking_pack(values).tobytes()


def inline_bitpacking_pack(values, widths: np.ndarray | None = None) -> np.ndarray:
    """:func:`inline_bitpacking_encode` as an array of words (no copy to bytes); ``widths``
    (one per 1024 values) when the caller has them already."""
    arr = _pad_to_chunks(_unsigned_view(values))
    T = arr.dtype.itemsize * 8
    if widths is None:
        widths = _chunk_bit_widths(arr)
    sizes = 1 + FASTLANES_CHUNK * widths // T
    ends = np.cumsum(sizes)
    starts = ends - sizes + 1
    out = _pack_chunks(arr, starts, widths, int(ends[-1]) if ends.size else 0)
    out[starts - 1] = widths.astype(out.dtype)
    return out


def _inline_words(buf, dtype):
    raw = _byte_view(buf)
    return raw, _words(raw[: raw.size - raw.size % dtype.itemsize], dtype, "InlineBitpacking buffer")


def _inline_scan(words, run_starts, run_limits, run_groups, T: int, what: str, exact: bool = False):
    total = int(run_groups.sum())
    starts = np.empty(total, dtype=np.int64)
    widths = np.empty(total, dtype=np.int64)
    if total:
        status, group = _k_inline_scan(words, run_starts, run_limits, run_groups, T, exact, starts, widths)
        if status:
            run = int(np.searchsorted(np.cumsum(run_groups), group, side="right"))
            where = f"{what} {run}" + (f", group {group}" if run_groups.size == 1 else "")
            if status == 1:
                raise CorruptFileError(f"InlineBitpacking {where}: the buffer ends inside the chunk")
            if status == 3:
                raise CorruptFileError(f"InlineBitpacking {where}: bytes are left over after the packed values")
            raise CorruptFileError(f"InlineBitpacking {where}: the bit width word is not in 0..{T}")
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
    starts, widths = _inline_scan(words, np.zeros(1, np.int64), np.array([words.size], np.int64), groups,
                                  dtype.itemsize * 8, "buffer")
    return _unpack_chunks(words, starts, widths, dtype)[:n]


def inline_bitpacking_decode_chunks(buf, bits: int, byte_offsets, num_values, byte_sizes=None) -> np.ndarray:
    """Decode the InlineBitpacking value buffers of many mini-block chunks in one call.

    Chunk i's value buffer starts at ``byte_offsets[i]`` of ``buf`` (e.g. a page's chunk
    data; offsets must be multiples of ``bits/8``, which the 8-byte chunk alignment
    guarantees), is ``byte_sizes[i]`` bytes long (default: to the end of ``buf``) and holds
    ``num_values[i]`` values.  Returns all values concatenated, the same as calling
    :func:`inline_bitpacking_decode` per chunk, without the per-call overhead.
    """
    dtype = _uint_dtype(bits)
    raw, words = _inline_words(buf, dtype)
    offsets = np.asarray(byte_offsets, dtype=np.int64).reshape(-1)
    counts = np.asarray(num_values, dtype=np.int64).reshape(-1)
    has_sizes = byte_sizes is not None
    sizes = np.asarray(byte_sizes, dtype=np.int64).reshape(-1) if has_sizes else offsets
    if offsets.shape != counts.shape or sizes.shape != counts.shape:
        raise InvalidInputError("byte_offsets and num_values must be equally long, with counts >= 0")
    T = dtype.itemsize * 8
    out = empty(int(counts.sum()) if counts.size else 0, dtype)
    status, r, g = _k_inline_decode(words, raw.size, dtype.itemsize, offsets, sizes, has_sizes, counts, T, out,
                                    np.empty(FASTLANES_CHUNK, dtype))
    if status:
        where = f"chunk {r}" + (f", group {g}" if offsets.size == 1 else "")
        if status == 4:
            raise InvalidInputError("byte_offsets and num_values must be equally long, with counts >= 0")
        if status == 5:
            raise CorruptFileError(f"InlineBitpacking chunk {r} starts at byte {offsets[r]}, not a {bits}-bit word "
                                   f"inside the {raw.size}-byte buffer")
        if status == 6:
            raise CorruptFileError(f"InlineBitpacking chunk buffers must be whole {bits}-bit words")
        if status == 1:
            raise CorruptFileError(f"InlineBitpacking {where}: the buffer ends inside the chunk")
        if status == 3:
            raise CorruptFileError(f"InlineBitpacking {where}: bytes are left over after the packed values")
        raise CorruptFileError(f"InlineBitpacking {where}: the bit width word is not in 0..{T}")
    return out


def inline_bitpacking_take_chunks(buf, bits: int, byte_offsets, num_values, byte_sizes, positions) -> np.ndarray:
    """Only some values of the chunks :func:`inline_bitpacking_decode_chunks` would decode.

    ``positions``: indices into that function's output (all chunks' values back to back),
    each below ``sum(num_values)``. Every chunk's group headers are still checked; only the
    wanted values are unpacked, each read straight from its packed words, so a point lookup
    costs the same whatever the chunk size. Returns ``len(positions)`` values, in order.
    """
    dtype = _uint_dtype(bits)
    raw, words = _inline_words(buf, dtype)
    offsets = np.asarray(byte_offsets, dtype=np.int64).reshape(-1)
    sizes = np.asarray(byte_sizes, dtype=np.int64).reshape(-1)
    counts = np.asarray(num_values, dtype=np.int64).reshape(-1)
    pos = np.asarray(positions, dtype=np.int64).reshape(-1)
    if offsets.shape != counts.shape or sizes.shape != counts.shape or (counts < 0).any():
        raise InvalidInputError("byte_offsets, byte_sizes and num_values must be equally long, with counts >= 0")
    first = np.cumsum(counts) - counts
    if len(pos) and (pos.min() < 0 or pos.max() >= int(counts.sum())):
        raise InvalidInputError(f"positions must lie in 0..{int(counts.sum()) - 1}")
    bad = (offsets % dtype.itemsize != 0) | (offsets < 0) | (offsets > raw.size) | (sizes % dtype.itemsize != 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CorruptFileError(f"InlineBitpacking chunk {i} (byte {offsets[i]}, {sizes[i]} bytes) is not made of "
                               f"whole {bits}-bit words inside the {raw.size}-byte buffer")
    groups = -(-counts // FASTLANES_CHUNK)
    starts, widths = _inline_scan(words, offsets // dtype.itemsize, (offsets + sizes) // dtype.itemsize, groups,
                                  dtype.itemsize * 8, "chunk", exact=True)
    chunk = np.searchsorted(first, pos, side="right") - 1
    within = pos - first[chunk]
    group = (np.cumsum(groups) - groups)[chunk] + within // FASTLANES_CHUNK
    out = empty(len(pos), dtype)
    if len(pos):
        _k_fl_gather(words, starts, widths, dtype.itemsize * 8, group, within % FASTLANES_CHUNK, out)
    return out


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
    if n_words != need:
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


def out_of_line_bitpacking_decode_blocks(data, uncompressed_bits: int, width: int, starts, sizes, counts) -> np.ndarray:
    """Many OutOfLineBitpacking buffers (one width) decoded back to back, in one pass.

    Buffer ``i`` is ``data[starts[i] : starts[i] + sizes[i]]`` and holds ``counts[i]``
    values (e.g. the rep or def levels of every mini-block chunk of a page). The same as
    concatenating :func:`out_of_line_bitpacking_decode` of each, without a call per buffer.
    """
    dtype = _uint_dtype(uncompressed_bits)
    T = dtype.itemsize * 8
    width = _check_width(width, T)
    w = dtype.itemsize
    raw = _byte_view(data)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    if np.any((starts % w) | (sizes % w)):
        raise CorruptFileError(f"OutOfLineBitpacking buffers must be whole {T}-bit words")
    words = _words(raw[: raw.size - raw.size % w], dtype, "OutOfLineBitpacking buffer")
    out = empty(int(counts.sum()), dtype)
    bad = _k_ool_blocks(words, starts // w, sizes // w, counts, width, T, np.empty(1024, dtype), out)
    if bad >= 0:
        raise CorruptFileError(
            f"OutOfLineBitpacking buffer {bad} of {int(sizes[bad])} bytes does not hold exactly {int(counts[bad])} "
            f"values at width {width}")
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


def out_of_line_bitpacking_encode_many(values, bounds, width: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`out_of_line_bitpacking_encode` of every piece ``values[bounds[i]:bounds[i+1]]``
    at one ``width``, in one pass; returns ``(bytes back to back, bytes per piece)``."""
    from .gather import scatter

    arr = _unsigned_view(values)
    T = arr.dtype.itemsize * 8
    W = _check_width(width, T)
    w = arr.dtype.itemsize
    bounds = np.asarray(bounds, dtype=np.int64)
    counts = np.diff(bounds)
    full, tail = np.divmod(counts, FASTLANES_CHUNK)
    padded = (tail > 0) & (W * (FASTLANES_CHUNK - tail) < (T - W) * tail)
    groups = full + padded
    wpc = fastlanes_words_per_chunk(W, T)
    # every group's 1024 values (a padded tail group is zero-filled past the piece's end):
    # each piece's packed values are copied to the start of its first group
    n_groups = int(groups.sum())
    first_group = np.cumsum(groups) - groups
    grid = np.zeros(n_groups * FASTLANES_CHUNK, dtype=arr.dtype)
    packed_len = np.minimum(counts, groups * FASTLANES_CHUNK)
    scatter(arr.view(np.uint8), bounds[:-1] * w, packed_len * w, grid.view(np.uint8),
            first_group * FASTLANES_CHUNK * w)
    packed = _pack_chunks(grid, np.arange(n_groups, dtype=np.int64) * wpc,
                          np.full(n_groups, W, dtype=np.int64), n_groups * wpc)
    raw_tail = np.where(padded | (tail == 0), 0, tail)
    sizes = (groups * wpc + raw_tail) * w
    out = np.empty(int(sizes.sum()), np.uint8)
    at = np.cumsum(sizes) - sizes
    scatter(packed.view(np.uint8), (np.cumsum(groups) - groups) * wpc * w, groups * wpc * w, out, at)
    scatter(arr.view(np.uint8), (bounds[:-1] + full * FASTLANES_CHUNK) * w, raw_tail * w, out,
            at + groups * wpc * w)
    return out, sizes
