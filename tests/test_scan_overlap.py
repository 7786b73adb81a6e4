"""Scans of 2.1+ files start the next chunk before the current one is finished.

Two chunks' tasks then run at once on the read pool and may use the same pages of a column
(a page that spans the chunk boundary), while a forward scan forgets the pages it passed.
These tests force many small chunks on several threads and check the rows are exact, on
files with lists, nulls, dictionaries and pages of several sizes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile import fieldtasks
from lancefile import reader as reader_mod
from lancefile import readplan

N = 30_000


@pytest.fixture(autouse=True)
def _small_files_read_as_large(monkeypatch):
    """These files are a few MB: without this, a scan of them is decoded serially
    (reader.INLINE_READ_BYTES) and never reaches the pool these tests are about."""
    monkeypatch.setattr(reader_mod, "INLINE_READ_BYTES", 0)


def _table() -> pa.Table:
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 6, N)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1000, offsets[-1])), pa.array(rng.random(offsets[-1]).astype(np.float32)),
         pa.array([f"tag-{i}" for i in rng.integers(0, 50, offsets[-1])])], names=["x", "y", "tag"])
    null_lists = pa.array(rng.random(N) < 0.05)
    lists = pa.ListArray.from_arrays(pa.array(offsets), items, mask=null_lists)
    names = pa.array([None if i % 17 == 0 else f"name-{i % 300}" for i in range(N)])
    return pa.table({"id": np.arange(N), "items": lists, "name": names})


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def nested_file(request, tmp_path_factory):
    t = _table()
    path = tmp_path_factory.mktemp("overlap") / f"n{request.param}.lance"
    with lancefile.LanceFileWriter(path, t.schema, version=request.param, max_page_bytes=40_000) as w:
        for b in t.to_batches(max_chunksize=7_000):
            w.write_batch(b)
    return t, path


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(fieldtasks, "READ_THREADS", 3)
    monkeypatch.setattr(reader_mod, "PARALLEL_MIN_ROWS", 1)
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 60_000)
    monkeypatch.setattr(readplan, "MAX_READ_CHUNK_BYTES", 60_000)
    monkeypatch.setattr(readplan, "MIN_COLUMN_CHUNK_BYTES", 1)


@pytest.mark.parametrize("batch_size", [1000, 4096, 65536])
def test_overlapped_chunks_give_exact_rows(nested_file, small_chunks, batch_size):
    t, path = nested_file
    reader = lancefile.LanceFileReader(path)
    assert len(reader.metadata().columns[1].pages) > 3  # pages shared by chunk boundaries
    batches = list(reader.read_all(batch_size=batch_size))
    assert pa.Table.from_batches(batches).equals(t)
    assert reader.read_range(1234, 20_000, batch_size=batch_size).to_table().equals(t.slice(1234, 20_000))


def test_abandoned_scan_leaves_the_reader_usable(nested_file, small_chunks):
    t, path = nested_file
    reader = lancefile.LanceFileReader(path)
    it = iter(reader.read_all(batch_size=500))
    first = [next(it) for _ in range(3)]
    it.close()  # the chunk started ahead is waited for, then dropped
    assert pa.Table.from_batches(first).equals(t.slice(0, 1500))
    assert reader.read_all().to_table().equals(t)


def test_a_short_last_chunk_joins_the_one_before(monkeypatch):
    """A scan's chunks are cut whole batches at a time; a remainder of less than half a chunk
    is read with the chunk before it (each chunk costs every column a pass), and the batches
    are still exactly ``batch_size`` rows but the last."""
    cols = 40
    n = 3 * 2048 + 300
    t = pa.table({f"c{i}": np.arange(n, dtype=np.float64) + i for i in range(cols)})
    buf = pa.BufferOutputStream()
    lancefile.write_table(t, buf, version="2.2")
    data = buf.getvalue().to_pybytes()
    # chunks of 2,048 rows: 40 columns x 8 bytes x 2,048 rows
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", cols * 8 * 2048)
    monkeypatch.setattr(readplan, "MAX_READ_CHUNK_BYTES", cols * 8 * 2048)
    monkeypatch.setattr(readplan, "MIN_COLUMN_CHUNK_BYTES", 1)
    reads = []
    real = lancefile.LanceFileReader._start_read

    def spy(self, sel, cache, **kw):
        reads.append((sel.start, sel.stop))
        return real(self, sel, cache, **kw)

    monkeypatch.setattr(lancefile.LanceFileReader, "_start_read", spy)
    batches = list(lancefile.LanceFileReader(data).read_all(batch_size=512))
    assert pa.Table.from_batches(batches).equals(t)
    assert [len(b) for b in batches] == [512] * (n // 512) + [n % 512]
    assert reads == [(0, 2048), (2048, 4096), (4096, n)]  # not a fourth read of 300 rows
    reads.clear()
    assert lancefile.LanceFileReader(data).read_range(0, 2 * 2048 + 1100).to_table().equals(t.slice(0, 5196))
    assert reads[-1] == (4096, 5196)  # 1,100 rows: more than half a chunk, read on their own


def test_one_field_scan_decodes_two_chunks_at_once(monkeypatch, tmp_path):
    """A scan of a single field (no tasks to split it into) still hands its chunks to the
    read pool once the first chunk has measured the rows, each started before the previous
    one is waited for: two chunks decode at once, also when the batch size makes chunks far
    larger than planned (measured: the long-text bench table at batch size 65,536, chunks of
    ~70 MB, 0.69-0.72 -> 0.54-0.64x pylance's time)."""
    monkeypatch.setattr(fieldtasks, "READ_THREADS", 2)
    monkeypatch.setattr(reader_mod, "PARALLEL_MIN_ROWS", 1)
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 200_000)
    monkeypatch.setattr(readplan, "MAX_READ_CHUNK_BYTES", 200_000)
    rng = np.random.default_rng(5)
    t = pa.table({"text": [" ".join(["w" * int(k) for k in rng.integers(1, 9, 30)]) for _ in range(20_000)]})
    path = tmp_path / "text.lance"
    lancefile.write_table(t, path)
    pooled = []
    real = lancefile.LanceFileReader._start_read

    def spy(self, sel, cache, **kw):
        started = real(self, sel, cache, **kw)
        pooled.append(started.tasks is not None)
        return started

    monkeypatch.setattr(lancefile.LanceFileReader, "_start_read", spy)
    reader = lancefile.LanceFileReader(path)
    assert pa.Table.from_batches(list(reader.read_all(batch_size=1000))).equals(t)
    assert len(pooled) > 3 and pooled[0] is False and all(pooled[1:])  # the first chunk measures the rows
    pooled.clear()
    assert pa.Table.from_batches(list(reader.read_all(batch_size=6_000))).equals(t)
    assert len(pooled) == 3 and pooled[0] is False and all(pooled[1:])  # chunks of 6,000 rows: ~7x the plan


def test_chunks_grow_with_the_projected_columns(monkeypatch):
    """Each projected column gets at least MIN_COLUMN_CHUNK_BYTES of a chunk (every chunk costs
    each column a pass), from READ_CHUNK_BYTES up to MAX_READ_CHUNK_BYTES in all."""
    n = 16 * 1024
    t = pa.table({f"c{i}": np.arange(n, dtype=np.int64) + i for i in range(4)})
    buf = pa.BufferOutputStream()
    lancefile.write_table(t, buf, version="2.2")
    data = buf.getvalue().to_pybytes()
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 8 * 1024)  # 1,024 rows of one column
    monkeypatch.setattr(readplan, "MIN_COLUMN_CHUNK_BYTES", 4 * 1024)
    monkeypatch.setattr(readplan, "MAX_READ_CHUNK_BYTES", 8 * 4 * 1024 * 3)
    reads = []
    real = lancefile.LanceFileReader._start_read

    def spy(self, sel, cache, **kw):
        reads.append(sel.stop - sel.start)
        return real(self, sel, cache, **kw)

    monkeypatch.setattr(lancefile.LanceFileReader, "_start_read", spy)

    def chunk_rows(columns):
        reads.clear()
        got = lancefile.LanceFileReader(data, columns=columns).read_all(batch_size=128).to_table()
        assert got.equals(t.select(columns))
        return max(reads)

    # fixed-width columns: no quarter-size first chunk; 8 bytes a row a column
    assert chunk_rows(["c0"]) == 1024  # READ_CHUNK_BYTES: 8 KiB
    assert chunk_rows(["c0", "c1"]) == 512  # 2 x 4 KiB = 8 KiB over 16 bytes a row
    assert chunk_rows(["c0", "c1", "c2"]) == 512  # 12 KiB over 24 bytes a row
    assert chunk_rows(["c0", "c1", "c2", "c3"]) == 512  # 16 KiB over 32 bytes a row
    monkeypatch.setattr(readplan, "MAX_READ_CHUNK_BYTES", 8 * 1024)
    assert chunk_rows(["c0", "c1", "c2", "c3"]) == 256  # capped: 8 KiB over 32 bytes a row


def test_takes_of_many_rows_decode_on_the_read_pool(nested_file, monkeypatch):
    """A take of at least PARALLEL_MIN_ROWS rows hands its fields' leaves to the read pool, as
    a scan's chunk does; a smaller one is decoded in the caller's thread. Both give exact rows."""
    t, path = nested_file
    monkeypatch.setattr(fieldtasks, "READ_THREADS", 2)
    monkeypatch.setattr(reader_mod, "PARALLEL_MIN_ROWS", 5_000)
    pooled = []
    real = lancefile.LanceFileReader._start_read

    def spy(self, sel, cache, **kw):
        started = real(self, sel, cache, **kw)
        pooled.append((sel.count, started.tasks is not None))
        return started

    monkeypatch.setattr(lancefile.LanceFileReader, "_start_read", spy)
    idx = np.sort(np.random.default_rng(3).choice(N, 6_000, replace=False))
    got = lancefile.LanceFileReader(path).take_rows(idx, batch_size=8_000).to_table()
    assert got.equals(t.take(pa.array(idx)))
    assert pooled == [(6_000, True)]
    pooled.clear()
    got = lancefile.LanceFileReader(path).take_rows(idx[:4_000], batch_size=8_000).to_table()
    assert got.equals(t.take(pa.array(idx[:4_000])))
    assert pooled == [(4_000, False)]
