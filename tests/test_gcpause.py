"""The collector pause of writes and takes (lancefile._gcpause)."""

import gc
import threading

import numpy as np
import pyarrow as pa

import lancefile
from lancefile._gcpause import gc_paused


def _collector_states(monkeypatch, owner, name: str) -> list:
    """Whether the collector was on at each call of ``owner.name`` (a list filled as it runs)."""
    seen = []
    real = getattr(owner, name)

    def spy(self, *a, **k):
        seen.append(gc.isenabled())
        return real(self, *a, **k)

    monkeypatch.setattr(owner, name, spy)
    return seen


def test_pause_nests_and_restores():
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_pause_shared_by_threads_ends_with_the_last():
    inside, release, seen = threading.Event(), threading.Event(), []

    def other():
        with gc_paused():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with gc_paused():
        pass
    seen.append(gc.isenabled())  # this thread's pause ended, the other's has not
    release.set()
    t.join(10)
    assert seen == [False] and gc.isenabled()


def test_take_runs_with_the_collector_paused(tmp_path, monkeypatch):
    import lancefile.reader as reader_mod

    t = pa.table({"x": np.arange(10_000), "l": pa.array([[i, i + 1] for i in range(10_000)])})
    lancefile.write_table(t, tmp_path / "t.lance")
    seen = _collector_states(monkeypatch, reader_mod.LanceFileReader, "_read_selection")
    got = lancefile.LanceFileReader(tmp_path / "t.lance").take_rows([5, 9_999, 17]).to_table()
    assert got.equals(t.take([5, 9_999, 17]))
    assert seen and not any(seen) and gc.isenabled()


def test_scan_chunks_decode_with_the_collector_paused(tmp_path, monkeypatch):
    """Each chunk of a scan is finished with the collector paused (a 1,000-column chunk makes
    thousands of Arrow objects); between batches, in the caller's hands, it is back on."""
    import lancefile.reader as reader_mod

    t = pa.table({f"c{i}": np.arange(3_000, dtype=np.float64) + i for i in range(50)})
    lancefile.write_table(t, tmp_path / "w.lance")
    seen = _collector_states(monkeypatch, reader_mod.LanceFileReader, "_finish_read")
    between = []
    got = []
    for b in lancefile.LanceFileReader(tmp_path / "w.lance").read_all(batch_size=500, batch_readahead=0):
        between.append(gc.isenabled())
        got.append(b)
    assert pa.Table.from_batches(got).equals(t)
    assert seen and not any(seen) and all(between)


def test_field_readers_are_built_with_the_collector_paused(tmp_path, monkeypatch):
    """The first read of a file parses its projected columns' metadata and builds their field
    readers (for 1,000 columns, thousands of objects: full collections of 30-60 ms each, were
    the collector on): with the collector paused, on again after."""
    from lancefile.format.container import FileLayout

    t = pa.table({f"c{i}": np.arange(100, dtype=np.int32) + i for i in range(40)})
    lancefile.write_table(t, tmp_path / "w.lance")
    seen = _collector_states(monkeypatch, FileLayout, "prefetch_columns")
    got = lancefile.LanceFileReader(tmp_path / "w.lance").read_all().to_table()
    assert got.equals(t)
    assert seen and not any(seen) and gc.isenabled()


def test_a_dropped_reader_is_freed_without_the_collector(tmp_path):
    """Nothing a reader builds for a take or a scan is a reference cycle (a cached chunk table
    keeps its pages' decoders weakly; the checksummed source names damage through a weak
    reference to the layout): dropping the reader frees it at once, and takes in a loop
    leave the collector nothing of lancefile's to find."""
    rng = np.random.default_rng(3)
    n = 20_000
    lists = pa.array([list(range(k)) for k in rng.integers(0, 5, n)])
    t = pa.table({"id": np.arange(n), "l": lists, "s": pa.array([f"s{k}" for k in rng.integers(0, 40, n)])})
    path = tmp_path / "n.lance"
    with lancefile.LanceFileWriter(path, t.schema, max_page_bytes=8_000) as w:  # many pages: a many-page take
        w.write_batch(t)
    for _ in range(2):  # kernels compiled and loaded first
        lancefile.LanceFileReader(path).take_rows(np.arange(0, n, 97)).to_table()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        r = lancefile.LanceFileReader(path)
        got = r.take_rows(np.arange(5, n, 211)).to_table()
        assert r.read_range(100, 3_000).to_table().equals(t.slice(100, 3_000))
        del r
        gc.collect()
        ours = [type(o).__name__ for o in gc.garbage if type(o).__module__.startswith("lancefile")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert got.equals(t.take(np.arange(5, n, 211)))
    assert ours == []
