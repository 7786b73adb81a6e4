"""Smallest and largest byte string of each run of rows (statistics of string/binary columns).

Strings compare as their bytes, lexicographically (for UTF-8 this is code point order, as
Arrow orders strings); nulls are skipped. One compiled pass over the values, with no
hashing or copying, instead of a sort or a dictionary.

Example::

    >>> import numpy as np
    >>> offsets = np.array([0, 2, 3, 6, 7]); data = np.frombuffer(b"bbaccca", np.uint8)
    >>> binary_minmax_rows(offsets, data, None, np.array([0, 2]), np.array([2, 4]))
    (array([1, 3]), array([0, 2]))
"""

from __future__ import annotations

import numpy as np

from ._common import _Kernel, load_u64

__all__ = ["binary_minmax_rows", "binary_minmax_rows_py"]


def _compare(data, offsets, i, j):
    """-1, 0 or 1 as value i is less than, equal to or greater than value j (bytewise)."""
    a0 = offsets[i]
    an = offsets[i + 1] - a0
    b0 = offsets[j]
    bn = offsets[j + 1] - b0
    m = an if an < bn else bn
    for k in range(m):
        x = data[a0 + k]
        y = data[b0 + k]
        if x != y:
            return -1 if x < y else 1
    if an == bn:
        return 0
    return -1 if an < bn else 1


_compare._lancefile_helper = True


def _prefix_key(data, offsets, i):
    """The first 8 bytes of value i as a big-endian integer (zero-padded): keys order like prefixes."""
    a0 = offsets[i]
    n = offsets[i + 1] - a0
    if a0 + 8 <= data.shape[0]:  # one load, bytes swapped into big-endian order, the tail cleared
        x = load_u64(data, a0)
        x = ((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8)) | ((x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF))
        x = ((x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16)) | ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF))
        x = (x << np.uint64(32)) | (x >> np.uint64(32))
        if n < 8:
            x = x & ~((np.uint64(1) << np.uint64(8 * (8 - n))) - np.uint64(1)) if n > 0 else np.uint64(0)
        return x
    if n > 8:
        n = 8
    key = np.uint64(0)
    for k in range(8):
        key = key << np.uint64(8)
        if k < n:
            key = key | np.uint64(data[a0 + k])
    return key


_prefix_key._lancefile_helper = True


@_Kernel
def _k_minmax(offsets, data, valid, has_valid, starts, ends, lo, hi):
    # Keys (8-byte prefixes) decide almost every comparison with one integer compare; only
    # equal keys need the bytes after them.
    for z in range(starts.shape[0]):
        best_lo = -1
        best_hi = -1
        key_lo = np.uint64(0)
        key_hi = np.uint64(0)
        for i in range(starts[z], ends[z]):
            if has_valid and not valid[i]:
                continue
            key = _prefix_key(data, offsets, i)
            if best_lo < 0:
                best_lo = i
                best_hi = i
                key_lo = key
                key_hi = key
                continue
            if key < key_lo or (key == key_lo and _compare(data, offsets, i, best_lo) < 0):
                best_lo = i
                key_lo = key
            elif key > key_hi or (key == key_hi and _compare(data, offsets, i, best_hi) > 0):
                best_hi = i
                key_hi = key
        lo[z] = best_lo
        hi[z] = best_hi


def binary_minmax_rows(offsets, data, valid, starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the smallest and largest value in each [starts[z], ends[z]); -1 where all null."""
    lo = np.empty(len(starts), dtype=np.int64)
    hi = np.empty(len(starts), dtype=np.int64)
    has_valid = valid is not None
    v = valid if has_valid else np.ones(1, dtype=np.bool_)
    offsets = np.asarray(offsets)
    if offsets.dtype not in (np.int32, np.int64):
        offsets = offsets.astype(np.int64)
    _k_minmax(offsets, np.asarray(data, dtype=np.uint8), v, has_valid,
              np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64), lo, hi)
    return lo, hi


def binary_minmax_rows_py(offsets, data, valid, starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python twin of :func:`binary_minmax_rows`."""
    raw = bytes(np.asarray(data, dtype=np.uint8))
    lo, hi = [], []
    for s, e in zip(starts, ends):
        rows = [i for i in range(s, e) if valid is None or valid[i]]
        vals = [raw[offsets[i]:offsets[i + 1]] for i in rows]
        lo.append(rows[vals.index(min(vals))] if rows else -1)
        hi.append(rows[vals.index(max(vals))] if rows else -1)
    return np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)
