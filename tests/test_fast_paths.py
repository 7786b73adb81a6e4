"""The speed-ups of the reader and writer give exactly what the plain paths give.

Each fast path (written for the benchmark suite, ``bench/``) is switched off by monkeypatching
and the results compared: bytes on disk for the writer, tables for the reader.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile import fieldtasks
from lancefile import reader as reader_mod
from lancefile import readplan
from lancefile.encodings.v2_0 import dictionary, encoder, spans
from lancefile.encodings.v2_0 import fixed_size_list as fsl_mod
from lancefile.format.container import BufferRef
from lancefile.io import CountingSource, InMemorySource

N = 30_000


def _mixed(n: int = N, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = pa.array([f"w{i:02d}" for i in range(40)])
    city = words.take(pa.array(rng.integers(0, 40, n)))
    city = pa.Array.from_buffers(pa.string(), n, [pa.py_buffer(np.packbits(rng.random(n) > 0.05, bitorder="little"))]
                                 + city.buffers()[1:])
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 8, dtype=np.float32)), 8)
    null_items = pa.array(np.where(rng.random(n * 2) < 0.1, np.nan, 1.0), pa.float64(), from_pandas=True)
    lens = rng.integers(0, 5, n)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    items = pa.StructArray.from_arrays([pa.array(rng.integers(0, 100, int(offsets[-1]))),
                                        words.take(pa.array(rng.integers(0, 40, int(offsets[-1]))))], ["x", "t"])
    return pa.table({
        "i": pa.array(rng.integers(0, 1000, n)),
        "f": pa.array(rng.random(n)),
        "b": pa.array(rng.random(n) > 0.5),
        "city": city,
        "vec": vec,
        "vec_nulls": pa.FixedSizeListArray.from_arrays(null_items, 2),
        "fsl2": pa.FixedSizeListArray.from_arrays(pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 6)), 3), 2),
        "text": pa.array([f"row {i} " * (i % 7) for i in range(n)]),
        "ls": pa.ListArray.from_arrays(pa.array(offsets), items),
    })


def _write(table: pa.Table, path, **options) -> bytes:
    with lancefile.LanceFileWriter(path, table.schema, max_page_bytes=1 << 18, **options) as w:
        for b in table.to_batches(max_chunksize=1777):
            w.write_batch(b)
    return path.read_bytes()


def _with_valid_bitmaps(t: pa.Table) -> pa.Table:
    """Fixed-width columns whose chunks carry an all-valid bitmap (slices of arrays with nulls)."""
    out = {}
    for name in ("i", "f", "vec"):
        col = t.column(name).combine_chunks()
        padded = pa.concat_arrays([col, pa.nulls(1, col.type)])
        out[name] = padded.slice(0, len(col))
        assert out[name].buffers()[0] is not None and out[name].null_count == 0
    return pa.table(out)


@pytest.mark.parametrize("make", [_mixed, lambda: _with_valid_bitmaps(_mixed())])
@pytest.mark.parametrize("max_page_bytes", [1 << 18, 12_345])
def test_writer_chunks_write_the_bytes_of_the_concatenation(tmp_path, monkeypatch, make, max_page_bytes):
    t = make()

    def write(path):
        with lancefile.LanceFileWriter(path, t.schema, max_page_bytes=max_page_bytes, data_cache_bytes=1 << 16) as w:
            for b in t.to_batches(max_chunksize=1777):
                w.write_batch(b)
        return path.read_bytes()

    fast = write(tmp_path / "fast.lance")
    monkeypatch.setattr(encoder.LeafEncoder, "accepts_chunks", False)
    plain = write(tmp_path / "plain.lance")
    assert fast == plain
    assert lancefile.read_table(tmp_path / "fast.lance").equals(t)


@pytest.fixture(scope="module")
def mixed_file(tmp_path_factory):
    t = _mixed()
    path = tmp_path_factory.mktemp("fast") / "mixed.lance"
    _write(t, path)
    return t, path


@pytest.mark.parametrize("batch_size", [1, 1000, 4096, 65536])
def test_scan_batches_are_exact_whatever_the_chunking(mixed_file, batch_size, monkeypatch):
    t, path = mixed_file
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 200_000)  # many chunks, resized as they go
    monkeypatch.setattr(readplan, "MAX_READ_CHUNK_BYTES", 200_000)
    batches = list(lancefile.LanceFileReader(path).read_all(batch_size=batch_size))
    assert [len(b) for b in batches[:-1]] == [batch_size] * (len(batches) - 1)
    assert pa.Table.from_batches(batches).equals(t)


@pytest.mark.parametrize("threads", [1, 3])
def test_parallel_field_decoding_gives_the_same_table(mixed_file, threads, monkeypatch):
    t, path = mixed_file
    monkeypatch.setattr(fieldtasks, "READ_THREADS", threads)
    monkeypatch.setattr(reader_mod, "PARALLEL_MIN_ROWS", 1)
    assert lancefile.read_table(path).equals(t)
    assert lancefile.LanceFileReader(path).read_range(12_345, 6_789).to_table().equals(t.slice(12_345, 6_789))


def _takes(path, t):
    rng = np.random.default_rng(5)
    reader = lancefile.LanceFileReader(path)
    for idx in (np.sort(rng.choice(N, 100, replace=False)), np.sort(rng.choice(N, 5000, replace=False)),
                rng.integers(0, N, 3000), np.arange(N - 1, -1, -7)):
        batches = reader.take_rows(idx, batch_size=700).to_batches()  # read in groups, cut into batches
        assert [len(b) for b in batches] == [min(700, len(idx) - o) for o in range(0, len(idx), 700)]
        assert pa.Table.from_batches(batches).equals(t.take(idx)), idx[:10]


def test_takes_over_many_batches(mixed_file):
    t, path = mixed_file
    _takes(path, t)


def test_takes_without_the_fast_paths(mixed_file, monkeypatch):
    t, path = mixed_file
    monkeypatch.setattr(dictionary, "_auto_dictionary", lambda *a: None)
    monkeypatch.setattr(fsl_mod, "plain_flat", lambda enc: None)
    monkeypatch.setattr(spans, "SMALL_SPANS", 0)
    _takes(path, t)
    assert lancefile.read_table(path).equals(t)


def test_small_span_reads_equal_the_vectorised_ones(monkeypatch):
    data = bytes(range(256)) * 64
    src = CountingSource(InMemorySource(data))

    class Page:  # what read_spans needs of a PageData
        def ref(self, buffer):
            return BufferRef(0, len(data))

        def read_into(self, buffer, starts, lengths, out):
            view, pos = memoryview(out), 0
            for s, n in zip(list(starts), list(lengths)):
                view[pos : pos + int(n)] = src.read(int(s), int(n))
                pos += int(n)

    rng = np.random.default_rng(0)
    for _ in range(60):
        k = int(rng.integers(1, 60))
        starts = np.sort(rng.choice(len(data) - 100, k, replace=False)).astype(np.int64)
        lengths = rng.integers(0, 90, k).astype(np.int64)
        if rng.random() < 0.3:
            lengths[:] = 8
            starts = np.unique(starts // 8 * 8)
            lengths = lengths[: len(starts)]
        gap = int(rng.choice([0, 16, 4096]))
        want = b"".join(data[s : s + n] for s, n in zip(starts, lengths))
        got = {}
        for small in (64, 0):
            monkeypatch.setattr(spans, "SMALL_SPANS", small)
            src.reset()
            got[small] = (spans.read_spans(Page(), 0, starts, lengths, gap).tobytes(), src.requests)
        assert got[64][0] == want and got[0][0] == want
        assert got[64][1] == got[0][1]  # the same requests either way


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_one_column_of_a_wide_file_reads_only_its_pages(tmp_path, version):
    t = pa.table({f"c{i}": pa.array(np.arange(2000, dtype=np.float64) + i) for i in range(300)})
    path = tmp_path / "wide.lance"
    lancefile.write_table(t, path, version=version)
    src = CountingSource(InMemorySource(path.read_bytes()))
    reader = lancefile.LanceFileReader(src, columns=["c123"], verify_checksums=False)  # the decoders' own reads
    src.reset()
    assert reader.read_all(batch_size=100).to_table().column("c123").equals(t.column("c123"))
    if version == "2.0":
        assert src.bytes_read == 2000 * 8
    else:  # the column's page buffers (compressed: the values' high bytes are all the same), no more
        col = lancefile.LanceFileReader(str(path)).metadata().columns[123]
        assert src.bytes_read == sum(b.size for page in col.pages for b in page.buffers) < 2000 * 8


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs fork")
@pytest.mark.filterwarnings("ignore:lance is not fork-safe")  # pylance, imported by other tests, says so at fork
def test_scans_work_in_a_forked_child(mixed_file):
    t, path = mixed_file
    assert lancefile.read_table(path).equals(t)  # the parent's pool exists now
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = lancefile.read_table(path).equals(t)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
