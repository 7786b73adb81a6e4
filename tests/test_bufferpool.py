"""lancefile.bufferpool: large buffers come back for reuse only when nothing can see them."""

from __future__ import annotations

import gc
import multiprocessing
import threading
import time

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, strategies as st

import lancefile
from lancefile import bufferpool

MIB = 1 << 20


@pytest.fixture(autouse=True)
def _fresh_pool():
    bufferpool.release()
    yield
    bufferpool.set_limit(bufferpool.DEFAULT_LIMIT_BYTES)
    bufferpool.release()


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


@given(st.integers(0, 1 << 40))
def test_size_class_rounds_up_by_less_than_an_eighth(n):
    c = bufferpool.size_class(n)
    assert n <= c
    assert c - n < max(n, 16) / 8
    assert bufferpool.size_class(c) == c
    assert bufferpool.size_class(n + 1) >= c


def test_a_freed_buffer_serves_the_next_request_of_its_class():
    a = bufferpool.allocate(4 * MIB)
    where = address(a)
    a[:] = 7
    del a
    assert bufferpool.cached_bytes() == 4 * MIB
    b = bufferpool.allocate(4 * MIB - 1000)  # the same size class
    assert address(b) == where and b.nbytes == 4 * MIB - 1000
    assert bufferpool.cached_bytes() == 0


def test_the_most_recently_freed_buffer_goes_out_first():
    a, b = bufferpool.allocate(2 * MIB), bufferpool.allocate(2 * MIB)
    second = address(b)
    del a
    del b                                     # freed last: its pages are the warmest
    assert address(bufferpool.allocate(2 * MIB)) == second


def test_a_buffer_is_not_reused_while_anything_holds_it():
    a = bufferpool.allocate(3 * MIB)
    where = address(a)
    arrow = pa.py_buffer(a[100:200])          # an Arrow buffer over part of it
    ints = a[: 8 * 1000].view(np.int64)       # a numpy view of it
    arr = pa.Array.from_buffers(pa.int64(), 1000, [None, pa.py_buffer(ints)])
    del a, ints
    gc.collect()
    assert bufferpool.cached_bytes() == 0
    other = bufferpool.allocate(3 * MIB)
    assert address(other) != where
    del arrow
    assert bufferpool.cached_bytes() == 0     # the array still holds it
    del arr
    assert bufferpool.cached_bytes() == bufferpool.size_class(3 * MIB)
    assert address(bufferpool.allocate(3 * MIB)) == where
    assert other.nbytes == 3 * MIB            # held all along: never handed out twice


def test_a_larger_kept_buffer_serves_up_to_half_its_size():
    a = bufferpool.allocate(8 * MIB)
    del a
    misses = bufferpool.stats()["misses"]
    b = bufferpool.allocate(3 * MIB)                         # less than half: a new one ...
    assert bufferpool.stats()["misses"] == misses + 1
    assert bufferpool.cached_bytes() == 0                    # ... and the 8 MiB dropped for it
    del b
    c = bufferpool.allocate(8 * MIB)
    where = address(c)
    del c
    d = bufferpool.allocate(5 * MIB)
    assert address(d) == where and d.nbytes == 5 * MIB


def test_a_miss_drops_the_oldest_kept_bytes_first():
    small = [bufferpool.allocate(MIB) for _ in range(6)]
    order = [address(a) for a in small]
    while small:                               # freed in order: the first is the oldest
        small.pop(0)
    assert bufferpool.cached_bytes() == 6 * MIB
    big = bufferpool.allocate(3 * MIB)         # no kept buffer fits: 3 MiB of the oldest go
    assert bufferpool.cached_bytes() == 3 * MIB
    again = [bufferpool.allocate(MIB) for _ in range(3)]
    assert {address(a) for a in again} == set(order[3:])
    assert big.nbytes == 3 * MIB


def test_the_limit_bounds_what_is_kept_and_zero_turns_recycling_off():
    bufferpool.set_limit(5 * MIB)
    blocks = [bufferpool.allocate(2 * MIB) for _ in range(4)]
    del blocks
    assert bufferpool.cached_bytes() == 4 * MIB
    bufferpool.set_limit(3 * MIB)
    assert bufferpool.cached_bytes() == 2 * MIB
    bufferpool.set_limit(0)
    assert bufferpool.cached_bytes() == 0
    a = bufferpool.allocate(2 * MIB)
    del a
    assert bufferpool.cached_bytes() == 0
    for bad in (-1, 1.5, "1", True, None):
        with pytest.raises(ValueError, match="limit"):
            bufferpool.set_limit(bad)
    assert bufferpool.limit() == 0


def test_release_drops_everything_kept():
    blocks = [bufferpool.allocate(2 * MIB) for _ in range(3)]
    del blocks
    assert bufferpool.cached_bytes() == 6 * MIB
    bufferpool.release()
    assert bufferpool.cached_bytes() == 0


def test_idle_buffers_go_back_on_their_own(monkeypatch):
    monkeypatch.setattr(bufferpool, "IDLE_SECONDS", 0.2)
    a = bufferpool.allocate(2 * MIB)
    del a
    assert bufferpool.cached_bytes() == 2 * MIB
    deadline = time.monotonic() + 10
    while bufferpool._state["kept"] or bufferpool._returned:  # nobody asks: the timer drops it
        assert time.monotonic() < deadline, "the idle buffer was never dropped"
        time.sleep(0.05)
    assert bufferpool.cached_bytes() == 0


def test_small_requests_are_not_recycled():
    for n in (0, 1, 1000, bufferpool.POOL_BYTES, bufferpool.RECYCLE_BYTES - 1):
        a = bufferpool.allocate(n)
        assert a.nbytes == n and a.dtype == np.uint8 and a.flags.writeable
        del a
        assert bufferpool.cached_bytes() == 0


def test_threads_never_get_a_buffer_another_still_uses():
    errors = []

    def work(tag: int):
        try:
            for i in range(60):
                a = bufferpool.allocate((1 + (i + tag) % 3) * MIB)
                a[:] = tag
                time.sleep(0)
                if not (a == tag).all():
                    errors.append(f"thread {tag}: its buffer was overwritten")
                del a
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert bufferpool.stats()["hits"] > 0


def _child(q):
    q.put((bufferpool.cached_bytes(), bufferpool.allocate(2 * MIB).nbytes))


def test_a_forked_child_starts_with_nothing_kept():
    a = bufferpool.allocate(2 * MIB)
    del a
    assert bufferpool.cached_bytes() == 2 * MIB
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(60)
    assert got == (0, 2 * MIB) and p.exitcode == 0


def test_scans_reuse_the_buffers_of_the_scan_before(tmp_path):
    rng = np.random.default_rng(3)
    table = pa.table({"i": rng.integers(0, 1000, 600_000), "f": rng.random(600_000)})
    path = tmp_path / "t.lance"
    lancefile.write_table(table, path)
    first = pa.Table.from_batches(list(lancefile.LanceFileReader(path).read_all(batch_size=65536)))
    before = bufferpool.stats()
    second = pa.Table.from_batches(list(lancefile.LanceFileReader(path).read_all(batch_size=65536)))
    del first
    third = pa.Table.from_batches(list(lancefile.LanceFileReader(path).read_all(batch_size=65536)))
    after = bufferpool.stats()
    assert after["hits"] > before["hits"]
    assert second.equals(table) and third.equals(table)
