"""Null-adjusted end offsets (2.0 ``Binary`` and ``List`` pages) to Arrow offsets, in one pass.

A 2.0 page stores each row's *end* (u64, no leading 0) and marks a null row by adding the
page's adjustment to it: ends ``[2, 6, 3]`` with adjustment 4 are rows ``[0, 2)``, null
(end 2), ``[2, 3)``. A scan turns a run of rows' stored ends into Arrow offsets counted from
the run's first byte, a validity and the run's first position: with numpy that is eight
passes over arrays of a row each (int64 copy, compare, where, shift, subtract, check,
cumsum, narrowing to int32); :func:`adjusted_offsets` makes one and writes the offsets in
the width the Arrow type wants.

Example::

    >>> import numpy as np
    >>> # rows 5-7 of a page: row 4 ends at 7, row 6 is null (adjustment 100)
    >>> offsets, valid, first = adjusted_offsets(np.array([7, 9, 109, 10], np.uint64), True, 100, np.int32)
    >>> offsets.tolist(), valid.tolist(), first
    ([0, 2, 2, 3], [True, False, True], 7)
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ._common import _Kernel

__all__ = ["adjusted_offsets", "ascii_strings"]

_INT64_MAX = int(np.iinfo(np.int64).max)
_INT32_MAX = int(np.iinfo(np.int32).max)


@_Kernel
def _k_adjusted_offsets(raw, skip, adjustment, out, valid):
    # raw: stored ends; the first `skip` (0 or 1) is the end of the row before the run.
    # Fills out (n + 1 offsets from 0) and valid (n); returns (first, the first row whose end
    # decreases or -1, nulls).
    adj = np.uint64(adjustment)
    first = np.uint64(0)
    if skip:
        first = raw[0]
        if adj > 0 and first >= adj:
            first -= adj
    prev = first
    nulls = 0
    out[0] = 0
    for i in range(skip, raw.shape[0]):
        e = raw[i]
        ok = True
        if adj > 0 and e >= adj:
            e -= adj
            ok = False
            nulls += 1
        if e < prev:
            return first, i - skip, nulls
        valid[i - skip] = ok
        out[i - skip + 1] = e - first
        prev = e
    return first, -1, nulls


def adjusted_offsets(raw: np.ndarray, skip: bool, adjustment: int, dtype=np.int64):
    """``(offsets, valid or None, first)`` of a run of rows from their stored ends ``raw``
    (u64; with ``skip`` its first entry is the end of the row before the run, where the run
    starts, else it starts at 0): offsets from 0 (``dtype``: int32 for an Arrow string or
    list array, widened to int64 when its bytes or items do not fit), the validity (None
    when no row is null) and the run's first position. ``adjustment`` 0 (or past int64)
    means no row is null. A decreasing end raises CorruptFileError."""
    raw = np.ascontiguousarray(raw, np.uint64)
    n = len(raw) - int(skip)
    if n < 0:
        raise ValueError("skip needs the end of the row before the run")
    adj = int(adjustment) if 0 < int(adjustment) <= _INT64_MAX else 0
    # a run whose last end lies past int32 from its first wants int64 offsets (checked again below)
    if np.dtype(dtype) == np.int32 and n and _last(raw, adj) - _last(raw[:1], adj) * bool(skip) > _INT32_MAX:
        dtype = np.int64
    out = np.empty(n + 1, dtype)
    valid = np.empty(n, np.bool_)
    first, bad, nulls = _k_adjusted_offsets(raw, int(skip), adj, out, valid)
    if bad >= 0:
        raise CorruptFileError(f"end offsets decrease at row {int(bad)} of the run")
    if int(first) > _INT64_MAX or (n and not 0 <= int(out[-1]) <= np.iinfo(out.dtype).max):
        raise CorruptFileError(f"end offsets reach past {np.iinfo(out.dtype).max}")
    return out, (valid if nulls else None), int(first)


def ascii_strings(offsets: np.ndarray, data: np.ndarray) -> bool:
    """Whether string values with these Arrow ``offsets`` (int32 or int64, one more than the
    values) into ``data`` (uint8) are valid and pure ASCII: the offsets ascend inside
    ``data`` and no byte they span has its high bit set. Such values are valid UTF-8, so a
    full check of them is this one pass (Arrow's checks each string in turn: ~8 ns a string
    here, 49 ms for 6.3 million short strings against ~5 ms); False sends the caller to it.

    Example::

        >>> ascii_strings(np.array([0, 2, 2, 5], np.int32), np.frombuffer(b"abxyz", np.uint8))
        True
        >>> ascii_strings(np.array([0, 2], np.int32), np.frombuffer("é".encode(), np.uint8))
        False
    """
    n = len(offsets)
    if n == 0 or offsets[0] < 0 or offsets[-1] > len(data) or not bool((offsets[1:] >= offsets[:-1]).all()):
        return False
    span = data[offsets[0] : offsets[-1]]
    # (numpy's OR of the bytes runs at memory speed: 2.7 ms for 78 MB here; a numba loop took 64)
    return not len(span) or int(np.bitwise_or.reduce(span)) < 128


def _last(raw: np.ndarray, adj: int) -> int:
    e = int(raw[-1])
    return e - adj if adj and e >= adj else e


def adjusted_offsets_py(raw, skip: bool, adjustment: int):
    """Plain-Python :func:`adjusted_offsets` (int64 offsets; reference for the tests)."""
    raw = [int(x) for x in raw]
    adj = adjustment if 0 < adjustment <= _INT64_MAX else 0

    def real(e):
        return (e - adj, False) if adj and e >= adj else (e, True)

    first = real(raw[0])[0] if skip else 0
    offsets, valid, prev = [0], [], first
    for e in raw[int(skip):]:
        e, ok = real(e)
        if e < prev:
            raise CorruptFileError("end offsets decrease")
        offsets.append(e - first)
        valid.append(ok)
        prev = e
    return np.array(offsets, np.int64), (None if all(valid) else np.array(valid)), first
