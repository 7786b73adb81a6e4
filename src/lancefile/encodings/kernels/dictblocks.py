"""Items of several pages' string dictionaries, looked up in one compiled pass.

A take of a dictionary-encoded string column touches a page, and so a dictionary, for
nearly every row. Each dictionary is a ``Variable`` block, ``[u32 32][u32 bytes_start]
[n + 1 u32 offsets][bytes]``, laid end to end with the others (each at a multiple of 4).
:func:`dictionary_take` checks every block's header and outer offsets, each index against
its page's items and each item's offsets against its block, and gives the taken items'
offsets and where their bytes start: the caller gathers the bytes.

Example: two pages, dictionaries ``["ab", "c"]`` and ``["xyz"]``; indices ``[1, 0]`` then
``[0]``::

    >>> import struct, numpy as np
    >>> blk = lambda items: (struct.pack("<II", 32, 8 + 4 * (len(items) + 1))
    ...     + struct.pack(f"<{len(items) + 1}I", *np.cumsum([0] + [len(i) for i in items])) + b"".join(items))
    >>> a, b = blk([b"ab", b"c"]), blk([b"xyz"])
    >>> a += bytes(-len(a) % 4)
    >>> raw = np.frombuffer(a + b + bytes(-len(b) % 4), np.uint8)
    >>> offsets, src = dictionary_take(raw, np.array([0, len(a)]), np.array([len(a), len(b)]), np.array([2, 1]),
    ...                                np.array([1, 0, 0]), np.array([0, 2, 3]))
    >>> offsets.tolist(), bytes(raw[src[0] : src[0] + 1]), bytes(raw[src[2] : src[2] + 3])
    ([0, 1, 3, 6], b'c', b'xyz')
"""

from __future__ import annotations

import numpy as np

from ._common import _Kernel, empty

__all__ = ["dictionary_take"]

_MAX_ITEMS = 1 << 48  # items a page's dictionary may count (as mini_block_dicts.MAX_PAGE_ITEMS)


@_Kernel
def _k_dictionary_take(words, at, sizes, counts, idx, cuts, out_offsets, src):
    # Returns -1 when all is well, else a code >= 0: a block or an item out of the usual form,
    # or an index outside its page's items (the caller's general path says which).
    total = np.int64(0)
    out_offsets[0] = 0
    if cuts[0] != 0 or cuts[cuts.shape[0] - 1] != idx.shape[0]:
        return 5
    for k in range(at.shape[0]):
        if cuts[k + 1] < cuts[k]:
            return 5
        a = at[k]
        n = counts[k]
        size = sizes[k]
        if size < 8 or n < 0 or a < 0 or a + 3 + n > words.shape[0]:
            return 0
        start = np.int64(words[a + 1])
        if words[a] != 32 or start != 8 + 4 * (n + 1) or start > size:
            return 1
        room = size - start
        first, last = np.int64(words[a + 2]), np.int64(words[a + 2 + n])
        if last < first or last > room:
            return 2
        body = 4 * a + start
        for i in range(cuts[k], cuts[k + 1]):
            v = np.int64(idx[i])
            if v < 0 or v >= n:
                return 3
            lo, hi = np.int64(words[a + 2 + v]), np.int64(words[a + 3 + v])
            if hi < lo or hi > room:
                return 4
            total += hi - lo
            out_offsets[i + 1] = total
            src[i] = body + lo
    return -1


def dictionary_take(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, counts: np.ndarray, idx: np.ndarray,
                    cuts: np.ndarray):
    """``(offsets, src)`` of the items that ``idx`` names (``idx[cuts[k]:cuts[k + 1]]``
    index page k's dictionary of ``counts[k]`` items, the block ``raw[starts[k]:][:sizes[k]]``):
    the items' int64 offsets (``len(idx) + 1``, from 0) and where each item's bytes start in
    ``raw``. None when a block is not of the usual form (u32 offsets, at a multiple of 4),
    fails a check, counts more than 2**48 items, or an index lies outside its page's items: the general path then says
    what is wrong."""
    if any(int(c) > _MAX_ITEMS for c in counts):  # (uint64 in the file: past int64, numpy would raise)
        return None
    starts, sizes = np.asarray(starts, np.int64), np.asarray(sizes, np.int64)
    if (len(cuts) != len(starts) + 1 or len(sizes) != len(starts) or len(counts) != len(starts)
            or (len(starts) and (int(starts.min()) < 0 or int((starts + sizes).max()) > len(raw)))
            or np.any(starts % 4)):
        return None
    words = raw[: len(raw) // 4 * 4].view("<u4")
    out_offsets = empty(len(idx) + 1, np.int64)
    src = empty(len(idx), np.int64)
    got = _k_dictionary_take(words, starts // 4, np.ascontiguousarray(sizes, np.int64),
                             np.ascontiguousarray(counts, np.int64), np.ascontiguousarray(idx),
                             np.ascontiguousarray(cuts, np.int64), out_offsets, src)
    return None if got >= 0 else (out_offsets, src)
