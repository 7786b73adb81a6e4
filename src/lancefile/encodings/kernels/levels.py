"""Repetition/definition levels to list offsets, one list layer at a time, in one pass.

For a list layer ``depth`` lists from the inside with canonical def base ``base``, an entry
starts a child (an element of one of the layer's lists) when ``rep >= depth - 1`` and
``def <= base``; a list's offset is the number of children that start before the list's own
first entry. E.g. rep ``1 0 1 1 1``, def ``0 0 2 1 0`` (``[1, 2], [], None, [3]``, base 0,
depth 1): children at entries 0, 1, 4; offsets ``0 2 2 2 3``.
"""

from __future__ import annotations

import numpy as np

from ._common import _Kernel

__all__ = ["list_layer"]


@_Kernel
def _k_list_layer(rep, defs, has_defs, min_rep, base, slot_pos, all_slots, children, offsets):
    # slot_pos: entries where this layer's lists start, ascending (ignored when all_slots:
    # every entry starts a list). Returns the number of children.
    n = rep.shape[0]
    n_slots = n if all_slots else slot_pos.shape[0]
    j = 0
    count = 0
    for e in range(n):
        if all_slots:
            offsets[e] = count
        else:
            while j < n_slots and slot_pos[j] == e:
                offsets[j] = count
                j += 1
        if rep[e] >= min_rep and (not has_defs or defs[e] <= base):
            children[count] = e
            count += 1
    if not all_slots:
        while j < n_slots:
            offsets[j] = count
            j += 1
    offsets[n_slots] = count
    return count


def list_layer(rep: np.ndarray, defs: np.ndarray | None, depth: int, base: int,
               slot_pos: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(children entry positions, offsets)`` of one list layer (``slot_pos`` None: every
    entry starts a list)."""
    n = len(rep)
    slots = np.zeros(0, np.int64) if slot_pos is None else np.ascontiguousarray(slot_pos, dtype=np.int64)
    n_slots = n if slot_pos is None else len(slots)
    children = np.empty(n, np.int64)
    offsets = np.empty(n_slots + 1, np.int64)
    has_defs = defs is not None
    count = _k_list_layer(rep, defs if has_defs else rep, has_defs, max(depth - 1, 0), base, slots,
                          slot_pos is None, children, offsets)
    return children[:count], offsets
