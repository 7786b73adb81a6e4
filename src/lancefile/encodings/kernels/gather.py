"""Copying many byte ranges into one array (a compiled loop of memcpys).

``gather(data, starts, lengths)`` is ``concatenate([data[s:s+n] for s, n in ...])``
without a Python loop or an index array as large as the output: what full-zip rows,
mini-block chunk buffers and dictionary lookups of strings need.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ...io import _k_pack as _k_gather  # (the I/O layer packs ranges with the same loop)
from ...io import ranges_total
from ._common import _byte_view, _Kernel, empty, load_u64, store_u64

__all__ = ["gather", "scatter", "page_indices", "take_var"]

# Below this many ranges, numpy slicing is cheaper than entering the compiled loop.
_FEW = 32


def gather(data, starts, lengths) -> np.ndarray:
    """The bytes ``data[starts[i] : starts[i] + lengths[i]]`` for every i, back to back."""
    raw = _byte_view(data)
    starts = np.ascontiguousarray(starts, dtype=np.int64).reshape(-1)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64).reshape(-1)
    if starts.shape != lengths.shape:
        raise ValueError("starts and lengths must have the same length")
    total = ranges_total(starts, lengths, raw.size)
    if total < 0:
        raise CorruptFileError(f"a byte range lies outside the {raw.size}-byte buffer")
    if len(starts) <= _FEW:
        parts = [raw[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist())]
        return np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    out = empty(total, np.uint8)
    _k_gather(raw, starts, lengths, out)
    return out


@_Kernel
def _k_scatter(data, starts, lengths, out, dest, spans, fill):
    for i in range(starts.shape[0]):
        s = starts[i]
        n = lengths[i]
        d = dest[i]
        out[d : d + n] = data[s : s + n]
        for k in range(d + n, d + spans[i]):
            out[k] = fill


def scatter(data, starts, lengths, out: np.ndarray, dest, spans=None, fill: int = 0) -> None:
    """Copy ``data[starts[i] : starts[i] + lengths[i]]`` to ``out[dest[i]:]`` for every i
    (the write-side twin of :func:`gather`; ranges are the caller's, not checked).

    ``spans``: each range's room in ``out``; the bytes after its data, up to ``spans[i]``,
    are set to ``fill`` (padding written in the same pass, so ``out`` need not be filled
    first). E.g. ``scatter(b"abc", [0, 1], [1, 2], out, [0, 4], [4, 4], 0xFE)`` writes
    ``61 fe fe fe 62 63 fe fe``.
    """
    raw = _byte_view(data)
    starts = np.ascontiguousarray(starts, dtype=np.int64).reshape(-1)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64).reshape(-1)
    dest = np.ascontiguousarray(dest, dtype=np.int64).reshape(-1)
    spans = lengths if spans is None else np.broadcast_to(np.asarray(spans, dtype=np.int64), lengths.shape)
    if len(starts):
        _k_scatter(raw, starts, lengths, out, dest, np.ascontiguousarray(spans), int(fill))


@_Kernel
def _k_page_indices(idx, cuts, firsts, sizes, out):
    for k in range(cuts.shape[0] - 1):
        first = firsts[k]
        size = sizes[k]
        for i in range(cuts[k], cuts[k + 1]):
            v = np.int64(idx[i])
            if v < 0 or v >= size:
                return i
            out[i] = v + first
    return -1


def page_indices(idx: np.ndarray, cuts: np.ndarray, firsts: np.ndarray, sizes: np.ndarray) -> np.ndarray | None:
    """Indices into several pages' dictionaries laid end to end: ``idx[cuts[k]:cuts[k+1]]``
    index page k's dictionary of ``sizes[k]`` items, which starts at ``firsts[k]``.

    Returns the shifted int64 indices, or None when one is outside its page's dictionary
    (the caller then finds and names the page). E.g. ``idx [1, 0, 2]``, ``cuts [0, 1, 3]``,
    ``firsts [0, 4]``, ``sizes [4, 3]`` gives ``[1, 4, 6]``.
    """
    cuts = np.ascontiguousarray(cuts, dtype=np.int64)
    if len(cuts) != len(firsts) + 1 or len(sizes) != len(firsts) or cuts[0] != 0 or cuts[-1] != len(idx):
        raise ValueError("cuts must run from 0 to len(idx), one more than the pages")
    out = empty(len(idx), np.int64)
    bad = _k_page_indices(np.ascontiguousarray(idx), cuts, np.ascontiguousarray(firsts, dtype=np.int64),
                          np.ascontiguousarray(sizes, dtype=np.int64), out)
    return None if bad >= 0 else out


@_Kernel
def _k_take_var_sizes(offsets, idx, out_offsets, limit):
    # out_offsets[i + 1]: the bytes of items idx[0..i], in out_offsets' own type (the int32
    # offsets of an Arrow string array, written once, not as int64 and cast); returns -1, the
    # position of an index outside the items, or -2 when the total passes ``limit`` (the
    # offsets written may then have wrapped: the caller drops them)
    n = offsets.shape[0] - 1
    total = 0
    out_offsets[0] = 0
    for i in range(idx.shape[0]):
        j = idx[i]
        if j < 0 or j >= n:
            return i
        total += offsets[j + 1] - offsets[j]
        out_offsets[i + 1] = total
    return -2 if total > limit else -1


@_Kernel
def _k_take_var_fill(data, offsets, idx, out_offsets, out):
    # Items of up to 16 bytes (dictionary words, tags) are copied as two 8-byte words when 16
    # bytes can be read and written there (``out`` has 16 bytes of room past the last item,
    # the next item overwrites what spilled); longer or final ones byte by byte.
    limit = data.shape[0] - 16
    for i in range(idx.shape[0]):
        j = idx[i]
        s = offsets[j]
        n = offsets[j + 1] - s
        d = out_offsets[i]
        if n <= 16 and s <= limit:
            store_u64(out, d, load_u64(data, s))
            store_u64(out, d + 8, load_u64(data, s + 8))
        else:
            out[d : d + n] = data[s : s + n]


def take_var(offsets, data, idx, offset_dtype=np.int32):
    """Items ``idx`` of a variable-width array (item k is ``data[offsets[k]:offsets[k+1]]``):
    ``(offsets, data)`` of the items taken, in order. What Arrow's ``take`` of a string
    dictionary does, without its per-item bookkeeping: lookups of short strings (a
    dictionary-encoded column's values) cost a third as much.

    Returns None when an index is outside the items or the result's offsets would not fit
    ``offset_dtype``. The offsets are the caller's (checked when the items were decoded).

    Example::

        >>> offs, data = take_var(np.array([0, 2, 5]), np.frombuffer(b"abcde", np.uint8), np.array([1, 0, 1]))
        >>> offs.tolist(), bytes(data)
        ([0, 3, 5, 8], b'cdeabcde')
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
    idx = np.ascontiguousarray(idx).reshape(-1)
    raw = _byte_view(data)
    if len(offsets) and (offsets[0] < 0 or offsets[-1] > raw.size):
        raise CorruptFileError(f"item offsets run past the {raw.size}-byte buffer")
    sizes = empty(idx.size + 1, offset_dtype)
    if _k_take_var_sizes(offsets, idx, sizes, np.iinfo(offset_dtype).max) != -1:
        return None
    total = int(sizes[-1])
    out = empty(total + 16, np.uint8)
    _k_take_var_fill(raw, offsets, idx, sizes, out)
    return sizes, out[:total]
