"""Whether 64-bit words are all different, in one compiled pass (an open-addressing set).

The write strategy asks it of the first values of every 64-bit page to rule out a
dictionary early: a float column is nearly always all different, and a hash set answers
in one pass where sorting the words took ~20 us a page (1,000 of them in a wide write).

Example::

    >>> import numpy as np
    >>> all_distinct(np.array([3, 1, 2], np.uint64)), all_distinct(np.array([3, 1, 3], np.uint64))
    (True, False)
"""

from __future__ import annotations

import numpy as np

from ._common import _helper, _Kernel

__all__ = ["all_distinct", "all_distinct_rows"]

_MUL = 0x9E3779B97F4A7C15


@_helper
def _distinct(words, keys, used):
    mask = keys.shape[0] - 1
    for i in range(words.shape[0]):
        v = words[i]
        slot = np.int64((v * np.uint64(_MUL)) >> np.uint64(40)) & mask
        while used[slot]:
            if keys[slot] == v:
                return False
            slot = (slot + 1) & mask
        used[slot] = True
        keys[slot] = v
    return True


@_Kernel
def _k_all_distinct(words, keys, used):
    return _distinct(words, keys, used)


@_Kernel
def _k_all_distinct_rows(words, keys, used, out):
    for r in range(words.shape[0]):
        used[:] = False
        out[r] = _distinct(words[r], keys, used)


def _table_size(n: int) -> int:
    size = 16
    while size < 4 * n:
        size *= 2
    return size


def all_distinct(words: np.ndarray) -> bool:
    """Whether the 64-bit ``words`` (any 8-byte dtype, compared as bits) are all different."""
    w = np.ascontiguousarray(words).view(np.uint64).reshape(-1)
    size = _table_size(len(w))
    return bool(_k_all_distinct(w, np.empty(size, np.uint64), np.zeros(size, np.bool_)))


def all_distinct_rows(words: np.ndarray) -> np.ndarray:
    """:func:`all_distinct` of each row of a 2-D array of 64-bit words, in one compiled call.

    Example::

        >>> all_distinct_rows(np.array([[3, 1, 2], [3, 1, 3]], np.uint64)).tolist()
        [True, False]
    """
    w = np.ascontiguousarray(words).view(np.uint64)
    size = _table_size(w.shape[1])
    out = np.zeros(w.shape[0], np.bool_)
    if w.shape[0]:
        _k_all_distinct_rows(w, np.empty(size, np.uint64), np.zeros(size, np.bool_), out)
    return out
