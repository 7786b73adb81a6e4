"""Null-adjusted end offsets, shared by ``Binary`` (bytes) and ``List`` (items) pages.

Both store, per row, the *end* of the row's span with no leading 0, and mark a null row by
adding an adjustment (``total + 1``) to its end: ``[2, 6, 3]`` with adjustment 4 means rows
``[0, 2)``, null (end 2), ``[2, 3)``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...errors import CorruptFileError
from .. import kernels
from ..selection import Selection
from .flat import plain_flat, plain_values

__all__ = ["split_adjusted", "row_spans", "range_offsets"]

_INT64_MAX = int(np.iinfo(np.int64).max)


def split_adjusted(raw: np.ndarray, adjustment: int) -> tuple[np.ndarray, np.ndarray]:
    """(ends, valid) from stored end offsets; ``adjustment`` 0 means no row is null."""
    v = raw.astype(np.int64, copy=False)
    if adjustment <= 0 or adjustment > _INT64_MAX:  # a forged u64 past int64: no end can reach it
        return v, np.ones(len(v), dtype=bool)
    valid = v < adjustment
    return np.where(valid, v, v - adjustment), valid


def row_spans(sel: Selection, fetch: Callable[[Selection], tuple[np.ndarray, np.ndarray]]):
    """(starts, ends, valid) of the rows in ``sel``; ``fetch`` decodes (ends, valid) of a selection.

    A row starts where the previous row ends, so row ``i`` needs the stored end of ``i - 1``.
    """
    if sel.is_range:
        lo = max(sel.start - 1, 0)
        ends, valid = fetch(Selection.of_range(lo, sel.stop))
        if sel.start > 0:
            first, ends, valid = ends[0], ends[1:], valid[1:]
        else:
            first = 0
        starts = np.empty(len(ends), dtype=np.int64)
        if len(ends):
            starts[0] = first
            starts[1:] = ends[:-1]
        return starts, ends, valid
    idx = sel.indices
    need = np.union1d(idx[idx > 0] - 1, idx)
    ends_all, valid_all = fetch(Selection.of_indices(need))
    pos = np.searchsorted(need, idx)
    starts = np.zeros(len(idx), dtype=np.int64)
    has_prev = idx > 0
    starts[has_prev] = ends_all[np.searchsorted(need, idx[has_prev] - 1)]
    return starts, ends_all[pos], valid_all[pos]


def range_offsets(ends, page, sel: Selection, adjustment: int, error: Callable[[str], Exception], dtype=np.int64):
    """``(offsets from 0, validity or None, first position)`` of the rows of range ``sel``
    whose stored ends (encoding ``ends``) are plain u64, made in one compiled pass
    (:func:`~lancefile.encodings.kernels.adjusted_offsets`; ``dtype`` as it takes it); None
    for another layout. Ends that decrease raise ``error(what is wrong)``; a failed read
    (a checksum) raises its own error."""
    flat = plain_flat(ends)
    if flat is None or int(flat.bits_per_value) != 64:
        return None
    skip = sel.start > 0  # the row before the range ends where the range starts
    raw = plain_values(flat, page, Selection.of_range(sel.start - skip, sel.stop), "<u8")
    if raw is None:
        return None
    try:
        return kernels.adjusted_offsets(raw, skip, adjustment, dtype)
    except CorruptFileError as exc:
        raise error(str(exc)) from None
