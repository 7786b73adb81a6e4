"""Batches read ahead on a background thread (lancefile.readahead), item by item and a decoded
chunk (a list of batches) at a time, and scans that hand their chunks over that way."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.readahead import readahead


def _threads() -> int:
    return sum(t.name == "lancefile-readahead" for t in threading.enumerate())


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_groups_come_out_item_by_item_in_order(depth):
    groups = [[0, 1, 2], [], [3], [4, 5, 6, 7], [8]]
    assert list(readahead(lambda: iter(groups), depth, grouped=True)) == list(range(9))
    assert _threads() == 0


def test_the_first_two_items_come_from_the_callers_thread_even_within_a_group():
    made_in = []

    def make():
        made_in.append(threading.current_thread().name)
        yield [0, 1, 2]  # the caller's thread makes it; 2 is handed to the reading thread
        made_in.append(threading.current_thread().name)
        yield [3, 4]

    it = readahead(make, 4, grouped=True)
    assert [next(it), next(it)] == [0, 1]
    assert _threads() == 0  # a read of two batches starts no thread
    assert list(it) == [2, 3, 4]
    assert made_in == [threading.current_thread().name, "lancefile-readahead"]
    assert _threads() == 0


def test_a_consumer_that_stops_ends_the_thread_and_closes_the_generator():
    closed = []

    def make():
        try:
            for k in range(100):
                yield [k * 10 + j for j in range(10)]
        finally:
            closed.append(True)

    for depth in (0, 2):
        closed.clear()
        it = readahead(make, depth, grouped=True)
        assert [next(it) for _ in range(15)] == list(range(15))
        it.close()
        assert closed == [True]
        assert _threads() == 0


def test_an_error_reaches_the_consumer_where_its_item_would_have_come():
    def make():
        yield [1, 2, 3]
        yield [4]
        raise ValueError("bad chunk")

    it = readahead(make, 2, grouped=True)
    assert [next(it) for _ in range(4)] == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="bad chunk"):
        next(it)
    assert _threads() == 0


@pytest.mark.parametrize("ahead", [0, 1, 16])
def test_a_scan_gives_the_same_batches_whatever_the_readahead(tmp_path, ahead):
    """read_all and read_range hand their chunks over whole: the batches (their sizes included)
    are those of to_batches(), which reads in the caller's thread."""
    rng = np.random.default_rng(5)
    n = 300_000
    t = pa.table({"a": rng.integers(0, 1 << 30, n), "s": pa.array([f"v{i % 977}" for i in range(n)]),
                  "l": pa.array([[1] * (i % 3) for i in range(n)], pa.list_(pa.int64()))})
    p = tmp_path / "t.lance"
    lancefile.write_table(t, p)
    reader = lancefile.LanceFileReader(p)
    for bs in (1000, 4096, 100_000):
        want = reader.read_all(batch_size=bs).to_batches()
        assert len(want) > 2 or bs == 100_000
        got = list(reader.read_all(batch_size=bs, batch_readahead=ahead))
        assert [b.num_rows for b in got] == [b.num_rows for b in want]
        assert pa.Table.from_batches(got).equals(t)
        part = list(reader.read_range(12_345, 200_000, batch_size=bs, batch_readahead=ahead))
        assert pa.Table.from_batches(part).equals(t.slice(12_345, 200_000))
        assert max(b.num_rows for b in part) <= bs
    assert _threads() == 0
