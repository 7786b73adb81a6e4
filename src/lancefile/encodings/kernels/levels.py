"""Repetition/definition levels: list offsets, and where rows are among the chunks of a page.

**List offsets** (:func:`list_layer`), one list layer at a time, in one pass.

For a list layer ``depth`` lists from the inside with canonical def base ``base``, an entry
starts a child (an element of one of the layer's lists) when ``rep >= depth - 1`` and
``def <= base``; a list's offset is the number of children that start before the list's own
first entry. E.g. rep ``1 0 1 1 1``, def ``0 0 2 1 0`` (``[1, 2], [], None, [3]``, base 0,
depth 1): children at entries 0, 1, 4; offsets ``0 2 2 2 3``.

**Rows in mini-block chunks** of a list page: the repetition index says, per chunk, how many
rows end in it and whether a row is left unfinished at its end. :func:`rep_index_chunks`
gives the chunks a sorted set of rows needs; :func:`row_spans` finds each row's level
entries among the decoded chunks (a row starts at an entry with ``rep == max_rep``).
"""

from __future__ import annotations

import numpy as np

from ._common import _helper, _Kernel, empty

__all__ = ["list_layer", "rep_index_chunks", "rep_index_chunks_many", "row_spans", "span_values", "leaf_levels",
           "expand_list", "map_levels", "inner_validity", "any_between"]


@_Kernel
def _k_list_layer(rep, defs, has_defs, min_rep, base, slot_pos, all_slots, children, offsets, before):
    # slot_pos: entries where this layer's lists start, ascending (ignored when all_slots:
    # every entry starts a list). Returns the number of children. Branch-free: every entry
    # is written as the next child and the count moves on only for a child (3x faster than
    # testing first, measured); ``before`` (children before each entry, n + 1) then gives
    # the lists' offsets by lookup.
    n = rep.shape[0]
    count = 0
    if all_slots:
        for e in range(n):
            offsets[e] = count
            children[count] = e
            count += (rep[e] >= min_rep) & ((not has_defs) | (defs[e] <= base))
        offsets[n] = count
        return count
    for e in range(n):
        before[e] = count
        children[count] = e
        count += (rep[e] >= min_rep) & ((not has_defs) | (defs[e] <= base))
    before[n] = count
    for j in range(slot_pos.shape[0]):
        offsets[j] = before[slot_pos[j]]
    offsets[slot_pos.shape[0]] = count
    return count


def list_layer(rep: np.ndarray, defs: np.ndarray | None, depth: int, base: int,
               slot_pos: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(children entry positions, offsets)`` of one list layer (``slot_pos`` None: every
    entry starts a list)."""
    n = len(rep)
    slots = np.zeros(0, np.int64) if slot_pos is None else np.ascontiguousarray(slot_pos, dtype=np.int64)
    n_slots = n if slot_pos is None else len(slots)
    children = empty(n, np.int64)
    offsets = empty(n_slots + 1, np.int64)
    has_defs = defs is not None
    if len(slots) and (slots[0] < 0 or slots[-1] >= max(n, 1)):
        raise ValueError(f"list starts outside the {n} level entries")
    before = empty(0 if slot_pos is None else n + 1, np.int64)
    count = _k_list_layer(rep, defs if has_defs else rep, has_defs, max(depth - 1, 0), base, slots,
                          slot_pos is None, children, offsets, before)
    return children[:count], offsets


@_helper
def _rep_chunks(completed, partial, rows, need):
    # Mark in ``need`` every chunk holding part of each (sorted) row. A row ends in the
    # first chunk whose running count of ended rows passes it; it starts there too, unless
    # it is the first row to end there and the chunks before left a row unfinished: then it
    # starts after the last row ended before (walking back over chunks where none ends).
    n = completed.shape[0]
    c = 0
    ended = 0  # rows ended before chunk c
    for i in range(rows.shape[0]):
        r = rows[i]
        while c < n and ended + completed[c] <= r:
            ended += completed[c]
            c += 1
        if c >= n:
            return i
        first = c
        if r == ended and c > 0 and partial[c - 1] > 0:
            first = c - 1
            while first > 0 and completed[first] == 0:
                first -= 1
            if completed[first] > 0 and partial[first] == 0:
                first += 1
        for k in range(first, c + 1):
            need[k] = True
    return -1


@_Kernel
def _k_rep_chunks(completed, partial, rows, need):
    return _rep_chunks(completed, partial, rows, need)


@_Kernel
def _k_rep_chunks_many(completed, partial, chunk_bounds, rows, row_bounds, need):
    # _rep_chunks page by page: page k's chunks are [chunk_bounds[k], chunk_bounds[k + 1]),
    # its rows [row_bounds[k], row_bounds[k + 1]). Returns (-1, -1) or (page, its bad row).
    for k in range(chunk_bounds.shape[0] - 1):
        c0, c1 = chunk_bounds[k], chunk_bounds[k + 1]
        r0, r1 = row_bounds[k], row_bounds[k + 1]
        bad = _rep_chunks(completed[c0:c1], partial[c0:c1], rows[r0:r1], need[c0:c1])
        if bad >= 0:
            return k, r0 + bad
    return -1, -1


def rep_index_chunks_many(completed: np.ndarray, partial: np.ndarray, chunk_bounds, rows: np.ndarray,
                          row_bounds) -> np.ndarray:
    """:func:`rep_index_chunks` of many pages in one pass (their chunks and their rows back to
    back, cut by ``chunk_bounds`` and ``row_bounds``); returns the flat ``need`` mask.
    Raises ValueError ``(page, row)`` for a row past its page's chunks."""
    need = np.zeros(len(completed), dtype=np.bool_)
    k, i = _k_rep_chunks_many(np.ascontiguousarray(completed, np.int64), np.ascontiguousarray(partial, np.int64),
                              np.ascontiguousarray(chunk_bounds, np.int64), np.ascontiguousarray(rows, np.int64),
                              np.ascontiguousarray(row_bounds, np.int64), need)
    if k >= 0:
        raise ValueError(int(k), int(rows[i]))
    return need


def rep_index_chunks(completed: np.ndarray, partial: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Ascending ids of the chunks that hold the (sorted) ``rows``; raises ValueError for a
    row past the chunks' rows."""
    need = np.zeros(len(completed), dtype=np.bool_)
    bad = _k_rep_chunks(np.ascontiguousarray(completed, np.int64), np.ascontiguousarray(partial, np.int64),
                        np.ascontiguousarray(rows, np.int64), need)
    if bad >= 0:
        raise ValueError(f"row {int(rows[bad])} is past the {int(completed.sum())} rows of the page's chunks")
    return np.flatnonzero(need)


@_Kernel
def _k_row_spans(rep, max_rep, entries, first_row, run_break, wanted, starts, lengths):
    # Walk the decoded chunks' entries; a row start (rep == max_rep) gets the next row id
    # (each chunk's first from first_row[c], the rows ended before it plus one when it opens
    # mid-row); wanted rows (sorted) record where they start and how long they run: to the
    # next row start, or to the end of their run of chunks. Returns -1, or the first wanted
    # row not found.
    # Rows starting in chunk c have ids up to first_row[c + 1]: a chunk before the next wanted
    # row's is skipped unread (a range read wants its first and last rows only), and the walk
    # ends once the last wanted row has ended.
    K = wanted.shape[0]
    k = 0
    cur = -1
    e = 0
    nc = entries.shape[0]
    for ci in range(nc):
        if run_break[ci] and cur >= 0:
            lengths[cur] = e - starts[cur]
            cur = -1
        if cur < 0 and (k == K or (ci + 1 < nc and wanted[k] > first_row[ci + 1])):
            if k == K:
                return -1
            e += entries[ci]
            continue
        rid = first_row[ci]
        if entries[ci] > 0 and rep[e] != max_rep:
            rid += 1
        end = e + entries[ci]
        while e < end:
            if rep[e] == max_rep:
                if cur >= 0:
                    lengths[cur] = e - starts[cur]
                    cur = -1
                    if k == K:
                        return -1
                    if ci + 1 < nc and wanted[k] > first_row[ci + 1]:
                        e = end  # the next wanted row starts in a later chunk: the rest is not read
                        break
                while k < K and wanted[k] < rid:
                    return k
                if k < K and wanted[k] == rid:
                    starts[k] = e
                    cur = k
                    k += 1
                rid += 1
            e += 1
    if cur >= 0:
        lengths[cur] = e - starts[cur]
    if k < K:
        return k
    return -1


def row_spans(rep, max_rep: int, entries, first_row, run_break, wanted):
    """``(starts, lengths)``: each wanted row's level entries among decoded chunks (see the
    module docstring); ``first_row[c]`` counts the rows ended before chunk ``c``. Raises
    ValueError when a wanted row is not there."""
    K = len(wanted)
    starts = np.empty(K, np.int64)
    lengths = np.empty(K, np.int64)
    bad = _k_row_spans(rep, max_rep, np.ascontiguousarray(entries, np.int64), np.ascontiguousarray(first_row, np.int64),
                       np.ascontiguousarray(run_break, np.bool_), np.ascontiguousarray(wanted, np.int64), starts, lengths)
    if bad >= 0:
        raise ValueError(f"row {int(wanted[bad])} is not where the repetition index puts it")
    return starts, lengths


@_Kernel
def _k_leaf_levels(dead, kind, pos, null_def, empty_def, is_list, defs, idx, nulls):
    m = 0
    for i in range(dead.shape[0]):
        d = dead[i]
        p = pos[i]
        if d < 0:
            defs[i] = 0
            if p >= 0:
                idx[m] = p
                nulls[m] = False
                m += 1
        else:
            defs[i] = empty_def[d] if kind[i] == 2 else null_def[d]
            if p >= 0 and not is_list[d]:
                idx[m] = p
                nulls[m] = True
                m += 1
    return m


def leaf_levels(dead, kind, pos, null_def, empty_def, is_list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The write side of a leaf, in one pass over its level entries.

    Entry ``i`` is alive (``dead[i] < 0``) or null/empty (``kind[i]`` 1/2) at outer layer
    ``dead[i]``; its def level is 0, ``null_def[dead]`` or ``empty_def[dead]``. It holds a
    value when it has a position (``pos[i] >= 0``) and is not under a null or empty list.
    Returns ``(defs uint16, positions of the values, which values are null)``.
    """
    n = dead.shape[0]
    defs = empty(n, np.uint16)
    idx = empty(n, np.int64)
    nulls = empty(n, np.bool_)
    m = _k_leaf_levels(np.ascontiguousarray(dead, np.int16), np.ascontiguousarray(kind, np.int8),
                       np.ascontiguousarray(pos, np.int64), np.ascontiguousarray(null_def, np.int64),
                       np.ascontiguousarray(empty_def, np.int64), np.ascontiguousarray(is_list, np.bool_),
                       defs, idx, nulls)
    return defs, idx[:m], nulls[:m]


@_Kernel
def _k_expand_list(expand, first_item, counts, marker, dead, kind, has_dead, cont, new_pos, new_marker,
                   new_dead, new_kind):
    j = 0
    for i in range(expand.shape[0]):
        if expand[i]:
            f = first_item[i]
            for k in range(counts[i]):
                new_pos[j] = f + k
                new_marker[j] = marker[i] if k == 0 else cont
                if has_dead:
                    new_dead[j] = dead[i]
                    new_kind[j] = kind[i]
                j += 1
        else:
            new_pos[j] = -1
            new_marker[j] = marker[i]
            if has_dead:
                new_dead[j] = dead[i]
                new_kind[j] = kind[i]
            j += 1


def expand_list(expand, first_item, counts, marker, dead, kind, cont: int):
    """Level entries one list layer down: entry ``i`` becomes its list's ``counts[i]`` items
    (positions ``first_item[i]...``; the first keeps its marker, the others get ``cont``)
    when ``expand[i]``, else stays one entry without a position (a null or empty list, or
    an entry already under one). ``dead``/``kind`` (or None) are carried to every item."""
    out_counts = np.where(expand, counts, 1)
    total = int(out_counts.sum())
    has_dead = dead is not None
    new_pos = empty(total, np.int64)
    new_marker = empty(total, np.int16)
    new_dead = empty(total if has_dead else 0, np.int16)
    new_kind = empty(total if has_dead else 0, np.int8)
    _k_expand_list(np.ascontiguousarray(expand, np.bool_), np.ascontiguousarray(first_item, np.int64),
                   np.ascontiguousarray(counts, np.int64), np.ascontiguousarray(marker, np.int16),
                   dead if has_dead else np.zeros(0, np.int16), kind if has_dead else np.zeros(0, np.int8),
                   has_dead, cont, new_pos, new_marker, new_dead, new_kind)
    return new_pos, new_marker, (new_dead if has_dead else None), (new_kind if has_dead else None)


@_Kernel
def _k_map_levels(levels, lut, out):
    # The check first, then the lookups: two branch-free loops, which LLVM vectorises.
    top = lut.shape[0]
    hi = 0
    for i in range(levels.shape[0]):
        hi = max(hi, np.int64(levels[i]))
    if hi >= top:
        for i in range(levels.shape[0]):
            if levels[i] >= top:
                return i
    for i in range(levels.shape[0]):
        out[i] = lut[levels[i]]
    return -1


def map_levels(levels: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """``lut[levels]`` in one pass; raises ValueError naming the first level outside ``lut``."""
    out = empty(len(levels), np.uint16)
    bad = _k_map_levels(levels, np.ascontiguousarray(lut, np.uint16), out)
    if bad >= 0:
        raise ValueError(f"definition level {int(levels[bad])} is above the page's {len(lut) - 1}")
    return out


def inner_validity(defs: np.ndarray, list_base: int, bases) -> tuple[int, list]:
    """The item layers inside a leaf's innermost list, from canonical def levels.

    Slots are the entries defined through the list (``def <= list_base``); layer ``j`` is valid
    at a slot when its def is ``<= bases[j]``. Returns ``(slots, [validity or None per layer])``
    (None: no nulls in that layer).

    Example::

        >>> n, valid = inner_validity(np.array([0, 3, 1, 0, 4], np.uint16), 2, [1, 0])
        >>> n, valid[0], valid[1].tolist()
        (3, None, [True, False, True])
    """
    visible = defs <= list_base
    out = []
    slots = None
    for base in bases:
        if not any_between(defs, base, list_base):  # no slot is null in this layer
            out.append(None)
            continue
        if slots is None:
            # numpy's compaction is branch-free and vectorised: 2.5 -> 0.7 ms on 500,000 levels
            # against a one-pass compiled loop
            slots = defs[visible]
        out.append(slots <= base)
    return int(np.count_nonzero(visible)) if slots is None else len(slots), out


def any_between(levels: np.ndarray, lo: int, hi: int) -> bool:
    """Whether any of ``levels`` is in ``(lo, hi]``, in one compiled pass that allocates
    nothing (numpy's temporaries, each as long as the levels, are fresh memory a read pays
    page faults for: 240 against 13 us on 500,000 levels inside a read).

    Example::

        >>> any_between(np.array([0, 3, 0], np.uint16), 0, 2), any_between(np.array([0, 2], np.uint16), 0, 2)
        (False, True)
    """
    if hi <= lo or not len(levels):
        return False
    if levels.dtype != np.uint16 or hi > 0xFFFF:
        return bool(np.any((levels > lo) & (levels <= hi)))
    return bool(_k_min_above(levels, lo + 1) < hi - lo)


@_Kernel
def _k_min_above(levels, start):
    # min over (level - start) in 16-bit wrap-around: the levels below start wrap past every
    # level above it. A plain min reduction, which vectorises (an early exit does not: 17x slower)
    s = np.uint16(start)
    m = np.uint16(0xFFFF)
    for j in range(levels.shape[0]):
        m = min(m, np.uint16(levels[j] - s))
    return m


@_Kernel
def _k_span_values(defs, top, starts, lengths, idx, pos):
    # entries of sorted, disjoint spans: their indices, and for each the values before it
    # (visible entries: defs <= top) or -1 when it has none; returns all visible entries
    c = 0
    e = 0
    k = 0
    for s in range(starts.shape[0]):
        a = starts[s]
        while e < a:
            if defs[e] <= top:
                c += 1
            e += 1
        for _ in range(lengths[s]):
            idx[k] = e
            if defs[e] <= top:
                pos[k] = c
                c += 1
            else:
                pos[k] = -1
            k += 1
            e += 1
    n = defs.shape[0]
    while e < n:
        if defs[e] <= top:
            c += 1
        e += 1
    return c


def span_values(defs: np.ndarray, top: int, starts: np.ndarray, lengths: np.ndarray):
    """``(entries, value_pos, visible)`` for the entries of spans ``[starts, starts +
    lengths)`` (sorted, disjoint, inside ``defs``): their indices, and the position among
    the visible entries (``defs <= top``) of each, -1 for one that is not visible; and the
    visible entries of all ``defs``. What cutting a take's rows out of decoded levels needs,
    in one pass with no array as long as ``defs`` (a running count of 100K entries costs
    ~0.8 ms in numpy, most of it faulting in the memory).

    Example::

        >>> span_values(np.array([0, 3, 0, 0, 3, 0], np.uint16), 2, np.array([1, 4]), np.array([2, 2]))
        (array([1, 2, 4, 5]), array([-1,  1, -1,  3]), 4)
    """
    total = int(lengths.sum())
    idx = np.empty(total, np.int64)
    pos = np.empty(total, np.int64)
    visible = _k_span_values(np.ascontiguousarray(defs), int(top), np.ascontiguousarray(starts, np.int64),
                             np.ascontiguousarray(lengths, np.int64), idx, pos)
    return idx, pos, int(visible)
