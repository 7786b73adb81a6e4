"""The one-pass level kernels against plain numpy on random levels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lancefile.encodings import kernels

_levels = arrays(np.uint16, st.integers(0, 300), elements=st.integers(0, 6))


@settings(max_examples=200, deadline=None)
@given(_levels, st.integers(1, 7))
def test_map_levels_is_a_checked_lookup(levels, size):
    lut = np.random.default_rng(size).integers(0, 9, size).astype(np.uint16)
    if len(levels) and levels.max() >= size:
        with pytest.raises(ValueError, match=f"definition level {int(levels[levels >= size][0])}"):
            kernels.map_levels(levels, lut)
    else:
        assert np.array_equal(kernels.map_levels(levels, lut), lut[levels])


@settings(max_examples=300, deadline=None)
@given(st.one_of(_levels, arrays(np.uint16, st.integers(0, 20_000), elements=st.integers(0, 6))),
       st.integers(0, 8), st.integers(0, 8), st.sampled_from([np.uint16, np.uint8, np.int64]))
def test_any_between_is_a_range_test(levels, lo, hi, dtype):
    levels = levels.astype(dtype)
    assert kernels.any_between(levels, lo, hi) == bool(np.any((levels > lo) & (levels <= hi)))


@settings(max_examples=200, deadline=None)
@given(_levels, st.integers(0, 6), st.lists(st.integers(0, 6), min_size=1, max_size=3))
def test_inner_validity_matches_masks(defs, list_base, bases):
    slots, valids = kernels.inner_validity(defs, list_base, bases)
    d = defs[defs <= list_base]
    assert slots == len(d)
    for base, valid in zip(bases, valids):
        want = d <= base
        if want.all():
            assert valid is None
        else:
            assert np.array_equal(valid, want)


@st.composite
def _list_page(draw):
    """Rep levels of rows (max_rep 1; every row has at least one entry), cut into chunks at
    random entries (a chunk may open mid-row), and the rows ended before each chunk."""
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=60))
    rep = np.concatenate([np.r_[1, np.zeros(n - 1)] for n in sizes]).astype(np.uint16)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(rep) - 1)), max_size=12))) - {len(rep)})
    bounds = np.array([0, *cuts, len(rep)], np.int64)
    entries = np.diff(bounds)
    row_starts = np.flatnonzero(rep == 1)
    ended = [int(np.count_nonzero(row_starts < b)) - (0 if b == len(rep) or rep[b] == 1 else 1) for b in bounds[:-1]]
    wanted = np.array(sorted(set(draw(st.lists(st.integers(0, len(sizes) - 1), min_size=1, max_size=len(sizes))))))
    return rep, entries, np.array(ended, np.int64), np.array(sizes), wanted


@settings(max_examples=300, deadline=None)
@given(_list_page())
def test_row_spans_match_the_rows(page):
    """Each wanted row's entries, found by the walk that skips chunks before the next wanted
    row and stops after the last one, equal the rows' own positions."""
    rep, entries, first_row, sizes, wanted = page
    breaks = np.zeros(len(entries), bool)
    breaks[0] = True
    starts, lengths = kernels.row_spans(rep, 1, entries, first_row, breaks, wanted)
    row_start = np.cumsum(sizes) - sizes
    assert np.array_equal(starts, row_start[wanted])
    assert np.array_equal(lengths, sizes[wanted])
    # a range read asks for its first and last rows only
    ends = np.array(sorted({int(wanted[0]), int(wanted[-1])}))
    s, n = kernels.row_spans(rep, 1, entries, first_row, breaks, ends)
    assert np.array_equal(s, row_start[ends]) and np.array_equal(n, sizes[ends])


def test_row_spans_name_a_row_that_is_not_there():
    rep = np.array([1, 0, 1, 1], np.uint16)  # rows of 2, 1 and 1 entries
    with pytest.raises(ValueError, match="row 5"):
        kernels.row_spans(rep, 1, np.array([4]), np.array([0]), np.array([True]), np.array([1, 5]))


@settings(max_examples=200, deadline=None)
@given(arrays(np.uint16, st.integers(0, 300), elements=st.integers(0, 3)), st.integers(1, 3), st.integers(0, 4),
       st.booleans(), st.booleans(), st.integers(0, 2**32 - 1))
def test_list_layer_matches_numpy(rep, depth, base, with_defs, every_entry, seed):
    # children: entries with rep >= depth - 1 defined through the list (def <= base); a list's
    # offset: the children before its first entry
    rng = np.random.default_rng(seed)
    defs = rng.integers(0, 6, len(rep)).astype(np.uint16) if with_defs else None
    child = rep >= depth - 1
    if defs is not None:
        child &= defs <= base
    before = np.concatenate([[0], np.cumsum(child)])
    slots = None if every_entry else np.flatnonzero(rng.random(len(rep)) < 0.4)
    children, offsets = kernels.list_layer(rep, defs, depth, base, slots)
    assert children.tolist() == np.flatnonzero(child).tolist()
    at = np.arange(len(rep)) if slots is None else slots
    assert offsets.tolist() == before[at].tolist() + [int(child.sum())]


def test_list_layer_refuses_list_starts_past_the_entries():
    with pytest.raises(ValueError, match="outside the 3 level entries"):
        kernels.list_layer(np.zeros(3, np.uint16), None, 1, 0, np.array([0, 3]))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_span_values_equal_a_running_count(data):
    defs = np.array(data.draw(st.lists(st.integers(0, 4), max_size=300)), np.uint16)
    top = data.draw(st.integers(0, 4))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(defs)), max_size=12)))
    starts = np.array(cuts[0::2][: len(cuts) // 2], np.int64)
    lengths = np.array(cuts[1::2], np.int64) - starts
    idx, pos, visible = kernels.span_values(defs, top, starts, lengths)
    want_idx = np.concatenate([np.arange(a, a + n) for a, n in zip(starts, lengths)] + [np.zeros(0, np.int64)])
    seen = defs <= top
    want_pos = np.where(seen, np.cumsum(seen) - 1, -1)[want_idx]
    assert idx.tolist() == want_idx.tolist() and pos.tolist() == want_pos.tolist()
    assert visible == int(seen.sum())


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_select_part_cuts_spans_in_any_order(data):
    # a take's spans (in order: counted by span_values) and spans out of order (a running count)
    # give each span's levels and values
    import pyarrow as pa

    from lancefile.encodings.structural.base import EntrySpans, Leaf, select_part
    from lancefile.format.version import GRAMMAR_2_2
    from lancefile.encodings.structural.repdef import ITEM, LIST

    leaf = Leaf(pa.int64(), (ITEM, LIST), GRAMMAR_2_2, "2.2")  # list<nullable int64>: visible defs <= 1
    n = data.draw(st.integers(1, 200))
    rep = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), np.uint16)
    defs = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.uint16)
    seen = defs <= leaf.max_visible
    values = pa.array(np.arange(int(seen.sum())) * 10)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=10))))
    pairs = [(a, b - a) for a, b in zip(cuts[0::2], cuts[1::2])]
    if data.draw(st.booleans()):
        pairs = pairs[::-1]
    if not pairs:
        return
    spans = EntrySpans(np.array([a for a, _ in pairs], np.int64), np.array([k for _, k in pairs], np.int64))
    part = select_part(rep, defs, values, spans, leaf, len(pairs), "w")
    idx = np.concatenate([np.arange(a, a + k) for a, k in pairs])
    assert part.rep.tolist() == rep[idx].tolist() and part.defs.tolist() == defs[idx].tolist()
    assert part.values.to_pylist() == [10 * int(v) for v in (np.cumsum(seen) - 1)[idx][seen[idx]]]
