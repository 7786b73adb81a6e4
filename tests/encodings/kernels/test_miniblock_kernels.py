"""Tests of the mini-block chunk-table kernel: where the chunks of pages laid back to back
start, in rows, against the numpy formula it replaces; and a take's chunk table made from
freshly parsed metadata equals the one gathered page by page."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lancefile
from lancefile.encodings import kernels as k


@given(st.lists(st.lists(st.integers(1, 50), min_size=1, max_size=12), min_size=1, max_size=8), st.data())
def test_take_picks_equal_a_search_and_unique(pages, data):
    """The chunks a take of several pages needs and where its rows land in their decode:
    one merge, equal to searching every row's chunk and making the chunks unique."""
    counts = np.array([c for p in pages for c in p], np.int64)
    per = np.array([len(p) for p in pages], np.int64)
    rows = np.array([sum(p) for p in pages], np.int64)
    item, first, key = k.miniblock_chunk_rows(counts, per, rows)
    base = np.cumsum(rows + 1) - (rows + 1)
    shared = data.draw(st.booleans(), "shared") and len(set(rows.tolist())) == 1
    if shared:
        one = sorted(data.draw(st.sets(st.integers(0, int(rows[0]) - 1)), "rows"))
        wanted = [one] * len(pages)
    else:
        wanted = [sorted(data.draw(st.sets(st.integers(0, int(r) - 1)), f"rows of page {i}"))
                  for i, r in enumerate(rows.tolist())]
    lens = np.array([len(w) for w in wanted], np.int64)
    idx = np.array(wanted[0] if shared else [i for w in wanted for i in w], np.int64)
    ids, picks = k.miniblock_take_picks(key, item, counts, base, idx, lens, shared)
    flat = np.array([i for w in wanted for i in w], np.int64)
    chunk_of = np.searchsorted(key, np.repeat(base, lens) + flat, side="right") - 1
    want_ids, inverse = np.unique(chunk_of, return_inverse=True)
    want_counts = counts[want_ids]
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(picks, (np.cumsum(want_counts) - want_counts)[inverse] + flat - first[chunk_of])


def test_take_picks_refuse_rows_past_their_pages_chunks_and_leave_unsorted_rows():
    item, first, key = k.miniblock_chunk_rows([2, 2, 2, 2], [2, 2], [4, 4])
    counts, base = np.full(4, 2), np.array([0, 5])
    with pytest.raises(ValueError) as got:  # page 0 has 4 rows: its row 4 is no chunk's
        k.miniblock_take_picks(key, item, counts, base, np.array([1, 4, 0]), np.array([2, 1]), False)
    assert got.value.args == (1,)
    with pytest.raises(ValueError):  # the last chunk holds fewer values than its page says
        k.miniblock_take_picks(key, item, np.array([2, 2, 2, 1]), base, np.array([3]), np.array([0, 1]), False)
    assert k.miniblock_take_picks(key, item, counts, base, np.array([3, 1]), np.array([2, 0]), False) is None
    with pytest.raises(ValueError, match="lens"):
        k.miniblock_take_picks(key, item, counts, base, np.array([1]), np.array([2, 0]), False)


@given(st.lists(st.lists(st.integers(0, 50), max_size=12), min_size=1, max_size=8))
def test_chunk_rows_equal_the_numpy_formula(pages):
    ended = np.array([e for p in pages for e in p], np.int64)
    per = np.array([len(p) for p in pages], np.int64)
    rows = np.array([sum(p) for p in pages], np.int64)
    item, first, key = k.miniblock_chunk_rows(ended, per, rows)
    want_item = np.repeat(np.arange(len(pages)), per)
    before = np.cumsum(ended) - ended
    page_start = np.cumsum(per) - per
    want_first = before - np.repeat(before[np.minimum(page_start, max(len(before) - 1, 0))] if len(before) else per,
                                    per)
    base = np.cumsum(rows + 1) - (rows + 1)
    np.testing.assert_array_equal(item, want_item)
    np.testing.assert_array_equal(first, want_first)
    np.testing.assert_array_equal(key, base[want_item] + want_first)


def test_chunk_rows_refuses_counts_that_do_not_add_up():
    with pytest.raises(ValueError, match="add up"):
        k.miniblock_chunk_rows([1, 2, 3], [2, 2], [3, 3])
    with pytest.raises(ValueError, match="add up"):
        k.miniblock_chunk_rows([1, 2], [2], [3, 4])


def _many_pages(tmp_path, lists, rng, n):
    """A column of ``n`` rows (lists of 0-4 int64, or int64) in a 2.2 file of 32 KiB pages."""
    col = (pa.array([list(range(int(x))) for x in rng.integers(0, 5, n)], pa.list_(pa.int64())) if lists
           else pa.array(rng.integers(0, 1 << 40, n)))
    p = tmp_path / "t.lance"
    lancefile.write_table(pa.table({"c": col}), p, version="2.2", max_page_bytes=32 * 1024)
    return col, p


@pytest.mark.parametrize("lists", [False, True])
def test_a_fresh_takes_chunk_table_equals_the_gathered_one(tmp_path, lists):
    """The decoders' way (a fresh reader's take is sent that way here: the page table's way is
    tested in tests/encodings/test_fresh_takes.py)."""
    from lancefile.encodings.structural import fields
    from lancefile.encodings.structural import mini_block_many as mbm

    rng = np.random.default_rng(4)
    n = 60_000
    col, p = _many_pages(tmp_path, lists, rng, n)
    idx = np.sort(rng.choice(n, 50, replace=False))
    tables = []
    real = mbm._ChunkTable

    def keep(items, parsed=None):
        fresh = real(items, parsed)
        tables.append((fresh, real(items), parsed is not None))  # ... and gathered from the pages' decoders
        return fresh

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mbm, "_ChunkTable", keep)
        mp.setattr(fields, "take_fresh", lambda *a: None)
        got = lancefile.LanceFileReader(p).take_rows(idx).to_table()
    assert got.column("c").combine_chunks().equals(col.take(pa.array(idx)))
    assert tables and all(used for *_, used in tables)  # every table came from the parse, not gathered again
    for fresh, gathered, _ in tables:
        for name in mbm._ChunkTable.__slots__[1:]:
            np.testing.assert_array_equal(getattr(fresh, name), getattr(gathered, name), err_msg=name)


@pytest.mark.parametrize("lists", [False, True])
def test_pages_a_take_parsed_together_read_alone_later(tmp_path, lists):
    """A take over many pages parses their chunk metadata together and leaves each page its
    stretch of it, cut out only when that page is read alone (PendingChunks): later reads of
    those pages on the same reader give the same rows. (The decoders' way: a fresh reader's
    take, which goes the page table's way and leaves no state, is sent that way here.)"""
    from lancefile.encodings.structural import fields
    from lancefile.encodings.structural import mini_block_many as mbm

    rng = np.random.default_rng(6)
    n = 60_000
    col, p = _many_pages(tmp_path, lists, rng, n)
    reader = lancefile.LanceFileReader(p)
    idx = np.sort(rng.choice(n, 80, replace=False))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fields, "take_fresh", lambda *a: None)
        assert reader.take_rows(idx).to_table().column("c").combine_chunks().equals(col.take(pa.array(idx)))
    cuts = []
    real = mbm.PendingChunks.cut
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mbm.PendingChunks, "cut", lambda self: (cuts.append((self.a, self.b)), real(self))[1])
        for row in idx[::7].tolist():  # one page each
            got = reader.take_rows([row]).to_table().column("c").combine_chunks()
            assert got.equals(col.slice(row, 1)), row
            start = max(0, row - 3)
            assert reader.read_range(start, 7).to_table().column("c").combine_chunks().equals(col.slice(start, 7))
    assert cuts and all(b > a for a, b in cuts)


def test_a_forged_repetition_index_count_is_refused_by_a_many_page_take(tmp_path):
    """A repetition index entry with an absurd count (2**50 unfinished entries) is not taken
    into the many-page parse: the page's own parse refuses it, naming the page."""
    import struct

    rng = np.random.default_rng(8)
    n = 60_000
    col, p = _many_pages(tmp_path, True, rng, n)
    lancefile.write_table(pa.table({"c": col}), p, version="2.2", max_page_bytes=32 * 1024, checksums=False)
    reader = lancefile.LanceFileReader(p)
    pages = reader.metadata().columns[0].pages
    assert len(pages) > 4
    k = 2
    pos, size = pages[k].buffers[-1]  # the page's repetition index: (rows ended, unfinished entries) a chunk
    data = bytearray(p.read_bytes())
    data[pos + 8 : pos + 16] = struct.pack("<Q", 1 << 50)
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(data))
    starts = np.cumsum([0] + [pg.length for pg in pages])
    rows = [int(starts[j]) + 1 for j in range(len(pages))]  # a row in every page
    with pytest.raises(lancefile.CorruptFileError, match=rf"page {k}\b"):
        lancefile.LanceFileReader(bad).take_rows(rows).to_table()
