"""Small reads decode in the caller's thread; filtered reads filter large batches and hand out
``batch_size`` rows at most.

A whole read of at most ``fieldtasks.INLINE_ROWS`` rows in at most ``INLINE_TASKS`` field tasks
puts nothing on the read pool (a hand-off there costs more than such a decode), nor does a row
range of at most ``reader.INLINE_READ_BYTES`` (estimated) in as few tasks, however many rows and
chunks it has; the chunks of a larger read go to the pool however small each is.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancefile
from lancefile import fieldtasks
from lancefile import reader as reader_mod

N = 100_000


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    rng = np.random.default_rng(5)
    t = pa.table({"key": np.arange(N), "x": rng.random(N), "tag": pa.array([f"t{i % 97}" for i in range(N)]),
                  "v": rng.integers(0, 1 << 40, N)})
    p = tmp_path_factory.mktemp("small") / "s.lance"
    lancefile.write_table(t, p, version="2.2")
    return p, t


@pytest.fixture
def submissions(monkeypatch):
    count = []
    real = fieldtasks.shared_pool

    class Counting:
        def __init__(self, pool):
            self.pool = pool

        def submit(self, fn, *args):
            count.append(1)
            return self.pool.submit(fn, *args)

    monkeypatch.setattr(fieldtasks, "shared_pool", lambda name, n: Counting(real(name, n)))
    monkeypatch.setattr(fieldtasks, "READ_THREADS", 2)
    return count


def test_a_small_whole_read_uses_no_pool(path, submissions):
    p, t = path
    got = lancefile.LanceFileReader(p).read_range(40_000, 12_000, batch_size=50_000).to_table()
    assert got.equals(t.slice(40_000, 12_000))
    assert submissions == []


def test_a_read_of_a_few_megabytes_uses_no_pool(path, submissions):
    # 100,000 rows (more than INLINE_ROWS), ~3 MB of Arrow data: several chunks, all decoded here
    p, t = path
    reader = lancefile.LanceFileReader(p)
    got = reader.read_all(batch_size=8_192).to_table()
    assert got.equals(t)
    assert N > fieldtasks.INLINE_ROWS and got.nbytes < reader_mod.INLINE_READ_BYTES
    assert submissions == []


def test_a_large_read_uses_the_pool(path, submissions, monkeypatch):
    monkeypatch.setattr(reader_mod, "INLINE_READ_BYTES", 256 * 1024)  # the ~3 MB table is large now
    p, t = path
    got = lancefile.LanceFileReader(p).read_all(batch_size=65_536).to_table()
    assert got.equals(t)
    assert len(submissions) >= 4


@pytest.mark.parametrize("batch_size", [1, 100, 1024, 10_000])
def test_filtered_batches_are_at_most_batch_size_and_exact(path, batch_size):
    p, t = path
    expr = ((pc.field("key") >= 20_000) & (pc.field("key") < 31_000) & (pc.field("tag") != "t3")) | \
        (pc.field("key") > 99_000)
    batches = list(lancefile.LanceFileReader(p).read_all(batch_size=batch_size, filter=expr))
    assert all(0 < len(b) <= batch_size for b in batches)
    assert pa.Table.from_batches(batches).equals(t.filter(expr))


def test_fragments_read_at_once_decode_in_their_own_threads(tmp_path, submissions, monkeypatch):
    """A dataset scan reads fragments two at a time: their fields decode in those threads,
    never handed on to the read pool (more threads would only contend for the GIL); a scan
    of one fragment still uses the pool."""
    from lancefile.datasets import core

    monkeypatch.setattr(core, "FRAGMENT_THREADS", 2)
    monkeypatch.setattr(reader_mod, "INLINE_READ_BYTES", 256 * 1024)  # a fragment's ~2 MB is a large read
    rng = np.random.default_rng(9)
    t = pa.table({"a": np.arange(200_000), "b": rng.random(200_000), "s": [f"s{i % 31}" for i in range(200_000)]})
    uri = str(tmp_path / "ds")
    lancefile.write_dataset(t, uri, max_rows_per_file=100_000)
    ds = lancefile.dataset(uri)
    assert len(ds.get_fragments()) == 2
    assert ds.to_table().equals(t)
    assert submissions == []
    assert not fieldtasks.decoding_here()  # the flag stays with the fragment threads
    one = tmp_path / "one"
    lancefile.write_dataset(t, str(one))
    assert lancefile.dataset(str(one)).to_table().equals(t)
    assert submissions != []


def _fragment_threads(monkeypatch):
    """Record, for every fragment read, its thread's name and whether the collector was on."""
    import gc
    import threading

    from lancefile.datasets import fragment

    seen = []
    read = fragment.LanceFragment._read

    def spy(self, *a, **k):
        seen.append((threading.current_thread().name, gc.isenabled()))
        yield from read(self, *a, **k)

    monkeypatch.setattr(fragment.LanceFragment, "_read", spy)
    return seen


def test_small_local_fragments_are_read_one_by_one_with_the_collector_paused(tmp_path, monkeypatch):
    """Fragments of a few KB are Python work under the GIL: two threads over 200 fragments of
    1,000 rows took 250 ms where one took 160, so they are read on the caller's thread, and
    each fragment's read no longer switches the collector back on (0.6 of 1.6 s in
    collections on 2,000 fragments). Takes read a few rows a fragment: the caller's thread."""
    import gc

    from lancefile.datasets import core

    monkeypatch.setattr(core, "FRAGMENT_THREADS", 2)
    t = pa.table({"a": np.arange(3_000), "s": [f"s{i}" for i in range(3_000)]})
    uri = str(tmp_path / "ds")
    lancefile.write_dataset(t, uri, max_rows_per_file=100)
    ds = lancefile.dataset(uri)
    seen = _fragment_threads(monkeypatch)
    assert ds.to_table().equals(t)
    assert len(seen) == 30 and set(seen) == {("MainThread", False)}
    assert gc.isenabled()
    seen.clear()
    assert ds.take([5, 2_999, 1_000]).equals(t.take([5, 2_999, 1_000]))
    assert len(seen) == 3 and set(seen) == {("MainThread", False)}
    # big enough (here: any size), or on an object store: several threads
    seen.clear()
    monkeypatch.setattr(core, "PARALLEL_FRAGMENT_BYTES", 0)
    assert ds.to_table().equals(t)
    assert {name.startswith("lancefile-fragment") for name, _ in seen} == {True}
    assert {on for _, on in seen} == {False} and gc.isenabled()
    monkeypatch.setattr(core, "is_remote", lambda root: True)
    seen.clear()
    assert ds.take(list(range(0, 3_000, 7))).equals(t.take(list(range(0, 3_000, 7))))
    assert {name.startswith("lancefile-fragment") for name, _ in seen} == {True}


def test_which_scans_use_threads_follows_the_bytes_read(tmp_path):
    from lancefile.datasets import core

    rng = np.random.default_rng(4)
    t = pa.table({"a": rng.random(400_000), "b": rng.random(400_000)})
    uri = str(tmp_path / "ds")
    lancefile.write_dataset(t, uri, max_rows_per_file=200_000)   # two fragments of ~1.6 MB
    ds = lancefile.dataset(uri)
    frags = ds._fragments
    size = np.mean([sum(df.file_size_bytes for df in f.metadata.files) for f in frags])
    assert size > 2e6
    edge = core.PARALLEL_FRAGMENT_BYTES / size                                # the share of each file read
    assert core._worth_threads(ds._root, frags, 1.0)
    assert core._worth_threads(ds._root, frags, 1.01 * edge)
    assert not core._worth_threads(ds._root, frags, 0.99 * edge)
    assert not core._worth_threads(ds._root, frags[:1], 1.0)               # one fragment: nothing to overlap
    for f in frags:                                                        # sizes unknown: 8 bytes a row and field
        for df in f.metadata.files:
            df.file_size_bytes = 0
    edge = core.PARALLEL_FRAGMENT_BYTES / (8 * 2 * 200_000)
    assert core._worth_threads(ds._root, frags, 1.01 * edge)
    assert not core._worth_threads(ds._root, frags, 0.99 * edge)


def test_a_take_does_not_sum_every_page_and_ranges_estimate_from_a_sample(tmp_path):
    # a column's stored bytes size a range read's chunks; summing them touches every page's
    # metadata (a microsecond a page), so a take never does and a range samples 16 pages
    rng = np.random.default_rng(1)
    t = pa.table({"x": rng.integers(0, 1 << 20, 200_000), "s": pa.array([f"v{i % 1000}" for i in range(200_000)])})
    p = tmp_path / "pages.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024)
    r = lancefile.LanceFileReader(p)
    assert r.take_rows([5, 150_000]).to_table().equals(t.take([5, 150_000]))
    for c in range(2):
        info = r._layout.column(c)
        assert len(info.pages) > 16 and "data_bytes" not in info.__dict__
        exact = sum(b.size for page in info.pages for b in page.buffers)
        assert info.data_bytes == exact
        assert abs(info.data_bytes_estimate() - exact) <= 0.1 * exact
        assert info.data_bytes_estimate(sample=len(info.pages)) == exact
    assert r.read_range(1000, 50_000).to_table().equals(t.slice(1000, 50_000))
