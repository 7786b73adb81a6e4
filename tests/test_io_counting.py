"""Projection, ranges and takes read only the byte ranges they need (counted at the I/O layer).

The readers here do not check checksums (``verify_checksums=False``): the counts are the
decoders' own. A checked read widens each request to whole checksum blocks, which
tests/test_checksums.py bounds.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import lancefile
from lancefile.io import CountingSource, InMemorySource

ROWS = 200_000
# The byte budgets below were set for 2.0's page layout (one flat buffer per page);
# 2.2's mini-block reads are counted by tests/encodings/test_structural_v2_1.py.
VERSION = "2.0"


@pytest.fixture(scope="module")
def wide_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    t = pa.table({
        "a": rng.integers(0, 10**9, ROWS),
        "b": rng.random(ROWS),
        "s": pa.array([f"row-{i:08d}" for i in range(ROWS)]),
        "v": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(ROWS * 16, dtype=np.float32)), 16),
    })
    path = tmp_path_factory.mktemp("io") / "wide.lance"
    lancefile.write_table(t, path, max_page_bytes=1 << 20, version=VERSION)
    return t, path.read_bytes()


def _open(data, columns=None):
    src = CountingSource(InMemorySource(data))
    reader = lancefile.LanceFileReader(src, columns=columns, verify_checksums=False)
    src.reset()
    return src, reader


def test_projection_reads_only_its_column(wide_file):
    t, data = wide_file
    src, reader = _open(data, ["b"])
    got = reader.read_all().to_table()
    assert got.column("b").equals(t.column("b"))
    col_bytes = ROWS * 8
    assert col_bytes <= src.bytes_read <= col_bytes * 1.01 + 4096, src.bytes_read
    assert src.bytes_read < len(data) / 5


def test_take_reads_a_few_kilobytes(wide_file):
    t, data = wide_file
    src, reader = _open(data)
    idx = np.sort(np.random.default_rng(1).choice(ROWS, 100, replace=False))
    got = reader.take_rows(idx).to_table()
    assert got.equals(t.take(idx))
    # Each wanted value costs at most one coalescing gap (4 KiB) of neighbours per buffer.
    from lancefile.io import COALESCE_GAP

    buffers_touched = 1 + 1 + 3 + 1  # a, b, s (offsets, prior offsets, bytes), v
    assert src.bytes_read <= 100 * buffers_touched * (COALESCE_GAP + 64), src.bytes_read
    assert src.bytes_read < len(data) / 100


def test_range_reads_only_its_pages(wide_file):
    t, data = wide_file
    src, reader = _open(data, ["a"])
    got = reader.read_range(100_000, 1000).to_table()
    assert got.column("a").equals(t.column("a").slice(100_000, 1000))
    assert src.bytes_read <= 1000 * 8 + 64, src.bytes_read


WIDE_COLUMNS = 1000


@pytest.fixture(scope="module")
def thousand_columns(tmp_path_factory):
    t = pa.table({f"c{i}": pa.array(np.arange(100, dtype=np.int32) + i) for i in range(WIDE_COLUMNS)})
    path = tmp_path_factory.mktemp("wide") / "w.lance"
    lancefile.write_table(t, path, version=VERSION)
    return t, path.read_bytes()


def test_wide_table_projection_touches_one_column(thousand_columns):
    _, data = thousand_columns
    src, reader = _open(data, ["c777"])
    got = reader.read_all().to_table()
    assert got.column("c777").to_pylist() == list(range(777, 877))
    assert src.bytes_read == 400  # just the one page buffer; its metadata came when the reader opened
    assert len(reader._layout._columns) == 1  # only that column's metadata was parsed


def test_opening_a_wide_file_reads_one_columns_metadata(thousand_columns):
    """Open = the 64 KiB tail + the schema + the projected column's metadata, not all 1,000."""
    from lancefile.format.container import TAIL_READ_BYTES

    t, data = thousand_columns
    full = lancefile.LanceFileReader(InMemorySource(data))
    meta = full.metadata()
    region = meta.num_column_metadata_bytes
    assert region > TAIL_READ_BYTES  # so the test means something: the metadata outgrows the tail

    src = CountingSource(InMemorySource(data))
    reader = lancefile.LanceFileReader(src, columns=["c3"], verify_checksums=False)  # c3's metadata lies outside the tail
    schema_bytes = meta.global_buffers[0].size
    one_column = region // WIDE_COLUMNS * 2
    assert src.bytes_read <= TAIL_READ_BYTES + schema_bytes + one_column, (src.bytes_read, region)
    assert src.bytes_read < TAIL_READ_BYTES + schema_bytes + region / 10
    assert reader.read_all().to_table().column("c3").to_pylist() == list(range(3, 103))

    src = CountingSource(InMemorySource(data))
    everything = lancefile.LanceFileReader(src, verify_checksums=False)
    requests_at_open = src.requests
    assert requests_at_open <= 3  # tail, schema, all column metadata in one coalesced read
    assert everything.read_all().to_table().equals(t)


def test_flat_column_reads_zero_copy():
    """A single-page fixed-width column from an in-memory file is a view of the file's bytes."""
    import os
    import tempfile

    values = np.arange(10_000, dtype=np.int64)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "z.lance")
        lancefile.write_table(pa.table({"v": values}), path, version=VERSION)
        data = bytearray(open(path, "rb").read())
    src = InMemorySource(data)
    col = lancefile.LanceFileReader(src).read_all(batch_size=1 << 20).to_table().column("v").chunk(0)
    base = np.frombuffer(data, dtype=np.uint8).ctypes.data
    addr = col.buffers()[1].address
    assert base <= addr < base + len(data)  # points into the file's memory: no copy
    assert col.to_numpy().tolist() == values.tolist()


def test_projection_through_lists_and_packed_structs(tmp_path):
    """Projection paths may pass through lists and packed structs; the reference is the judge."""
    lance_file = pytest.importorskip("lance.file")
    t = pa.table({
        "ls": pa.array([[{"x": 1, "y": "a"}], []]),
        "ps": pa.StructArray.from_arrays([pa.array([1, 2], pa.int32()), pa.array([3.0, 4.0])], ["a", "b"]),
        "st": pa.array([{"p": 1, "q": 2}, {"p": 3, "q": 4}]),
        "ll": pa.array([[[{"x": 1, "y": "a"}]], []]),
    })
    schema = t.schema.set(1, pa.field("ps", t.schema.field("ps").type, metadata={"packed": "true"}))
    t = t.cast(schema)
    path = tmp_path / "p.lance"
    lancefile.write_table(t, path, version=VERSION)
    for cols in (["ls.item.x"], ["ps.a"], ["ps.b", "ps.a"], ["st.q", "st.p"], ["st.q", "st"], ["ls.item"],
                 ["ll.item.item.y"], ["ls.item.y", "ls"], ["ll", "ls.item.y", "st.q"]):
        ours = lancefile.LanceFileReader(path, columns=cols).read_all().to_table()
        theirs = lance_file.LanceFileReader(str(path), columns=cols).read_all().to_table()
        if cols[0].startswith("ps."):
            # pylance 14.0.2 returns wrong values for packed-struct children ([1, 0] for [1, 2]):
            # take its schema, and the values from the source table.
            assert ours.schema.equals(theirs.schema), cols
            names = [c.split(".")[1] for c in cols]
            assert ours.column("ps").to_pylist() == [{n: row[n] for n in names} for row in t.column("ps").to_pylist()]
        else:
            assert ours.equals(theirs), cols


def test_sources_agree(tmp_path):
    """A path, bytes, a Python file object and a pyarrow file give the same table."""
    import io

    t = pa.table({"x": pa.array(np.arange(5000)), "s": pa.array([str(i) for i in range(5000)])})
    path = tmp_path / "s.lance"
    lancefile.write_table(t, path, version=VERSION)
    data = path.read_bytes()
    with open(path, "rb") as fh, pa.OSFile(str(path)) as native:
        for src in (path, str(path), data, memoryview(data), pa.py_buffer(data), io.BytesIO(data), fh, native):
            assert lancefile.LanceFileReader(src).take_rows([4999, 7]).to_table().equals(t.take([4999, 7])), src
    with pytest.raises(TypeError, match="cannot read a Lance file from int"):
        lancefile.LanceFileReader(42)


def test_page_dictionary_read_once_across_chunks(tmp_path, monkeypatch):
    """A page spanning many read chunks fetches its dictionary once, not once per chunk."""
    import lancefile.readplan as readplan
    from lancefile.format.container import read_layout

    t = pa.table({"c": pa.array([["red", "green", "blue"][i % 3] for i in range(5000)])})
    path = tmp_path / "d.lance"
    lancefile.write_table(t, path, version=VERSION)
    data = path.read_bytes()
    layout = read_layout(InMemorySource(data))
    (page,) = layout.column(0).pages
    items = page.buffers[1]  # dictionary items' offsets buffer (indices are buffer 0)
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 1)  # one batch per chunk
    src, reader = _open(data)
    got = reader.read_all(batch_size=100).to_table()
    assert got.equals(t)
    assert sum(1 for off, _ in src.ranges if off == items.position) == 1, src.ranges[:5]


def test_read_spans_coalesces_near_ranges_and_keeps_order():
    from lancefile.io import COALESCE_GAP, read_spans

    data = bytes(range(256)) * 400  # 102,400 bytes
    src = CountingSource(InMemorySource(data))
    far = 3 * COALESCE_GAP
    starts = [far + 10, 5, 7, 60_000, 20, far + 10]  # unsorted, overlapping, repeated
    lengths = [100, 10, 3, 50, 0, 4]
    buf, at = read_spans(src, starts, lengths)
    for s, n, a in zip(starts, lengths, at):
        assert bytes(buf[a : a + n]) == data[s : s + n]
    assert src.requests == 3  # [5, 27) with its neighbours, [far+10, far+110), [60000, 60050)
    assert len(buf) <= sum(lengths) + 2 * COALESCE_GAP


def test_read_spans_refuses_ranges_outside_the_source_before_allocating():
    from lancefile.errors import CorruptFileError
    from lancefile.io import read_spans

    src = CountingSource(InMemorySource(bytes(100)))
    with pytest.raises(CorruptFileError, match="outside the file of 100 bytes"):
        read_spans(src, [0, 90], [10, 1 << 40])
    with pytest.raises(CorruptFileError, match="outside"):
        read_spans(src, [-1], [5])
    assert src.requests == 0
    buf, at = read_spans(src, [], [])
    assert len(buf) == 0 and len(at) == 0


def test_a_page_left_to_its_own_parse_does_not_fetch_its_metadata_twice(tmp_path):
    """A take over two pages, one parsed by an earlier take: the other's chunk metadata and
    repetition index, fetched with the batch, are handed to its own parse (no second request)."""
    n = 60_000
    rng = np.random.default_rng(5)  # random small values: bit-packed (a counting pattern would be zstd-coded)
    t = pa.table({"l": pa.array([list(rng.integers(0, 8, i % 5)) for i in range(n)], pa.list_(pa.int64()))})
    path = tmp_path / "l.lance"
    lancefile.write_table(t, path, version="2.2", max_page_bytes=32 * 1024)
    data = path.read_bytes()
    pages = lancefile.LanceFileReader(data).metadata().columns[0].pages
    assert len(pages) >= 4
    bounds = np.cumsum([0] + [p.length for p in pages])
    a, b, c = int(bounds[0]) + 3, int(bounds[1]) + 3, int(bounds[2]) + 3  # rows of pages 0, 1 and 2

    def requests(src, reader, rows):
        src.reset()
        got = reader.take_rows(rows).to_table()
        assert got.column("l").to_pylist() == t.column("l").take(rows).to_pylist()
        return src.requests

    fresh = CountingSource(InMemorySource(data))
    alone = requests(fresh, lancefile.LanceFileReader(fresh), [c])  # page 2 read on its own
    src = CountingSource(InMemorySource(data))
    reader = lancefile.LanceFileReader(src)
    requests(src, reader, [a, b])  # pages 0 and 1 parsed together
    assert requests(src, reader, [a, c]) <= alone  # page 2 alone in the batch: parsed by itself


def test_a_local_file_reads_many_ranges_in_one_loop_and_names_a_short_read(tmp_path):
    """``read_spans`` of a local file goes through ``LocalFileSource.read_many_into`` (one
    loop of preadv): the same bytes as one ``read`` each; a file cut short after it was
    opened raises LanceIOError naming the short read rather than returning stale bytes."""
    from lancefile.errors import LanceIOError
    from lancefile.io import LocalFileSource, read_spans

    data = np.random.default_rng(3).integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    path = tmp_path / "bytes.bin"
    path.write_bytes(data)
    src = LocalFileSource(path)
    calls = []
    real = src.read_many_into
    src.read_many_into = lambda *a: (calls.append(len(a[0])), real(*a))[1]
    starts = [150_000, 3, 90_000, 40_000, 199_990]
    lengths = [1000, 17, 0, 8192, 10]
    buf, at = read_spans(src, starts, lengths)
    for s, n, a in zip(starts, lengths, at):
        assert bytes(buf[a : a + n]) == data[s : s + n]
    assert calls == [5]  # one call for the five requests (no two ranges within the coalescing gap)
    with open(path, "r+b") as fh:
        fh.truncate(100_000)
    with pytest.raises(LanceIOError, match=r"short read at 150000 \(0 of 1000 bytes\)"):
        read_spans(src, [150_000], [1000])
    src.close()
    with pytest.raises(LanceIOError, match="closed"):
        read_spans(src, [0], [10])


def test_many_ranges_go_through_the_compiled_loop_and_a_short_one_is_named(tmp_path, monkeypatch):
    """Four or more ranges are read by one compiled loop of ``pread`` (the same bytes as the
    Python loop); when the file shrank under the reader, the first short range is named,
    whichever loop met it."""
    import lancefile.io as io
    import lancefile.localfile as localfile
    from lancefile.errors import LanceIOError

    data = np.random.default_rng(4).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    path = tmp_path / "bytes.bin"
    path.write_bytes(data)
    src = io.LocalFileSource(path)
    loops = []
    real = localfile._pread_loop
    monkeypatch.setattr(localfile, "_pread_loop", lambda *a: (loops.append(len(a[3])), real(*a))[1])
    rng = np.random.default_rng(5)
    starts = np.sort(rng.choice(290_000 // 64, 50, replace=False)) * 64
    lengths = rng.integers(0, 60, 50)
    buf, at = io.read_spans(src, starts, lengths, gap=0)
    assert loops == [50]
    for s, n, a in zip(starts.tolist(), lengths.tolist(), at.tolist()):
        assert bytes(buf[a : a + n]) == data[s : s + n]
    assert io.read_spans(src, starts[:3], lengths[:3], gap=0)[0] is not None and loops == [50]  # three: Python's loop
    with open(path, "r+b") as fh:
        fh.truncate(100_000)
    with pytest.raises(LanceIOError, match=r"short read at 120000 \(0 of 500 bytes\)"):
        io.read_spans(src, [0, 40_000, 80_000, 120_000, 160_000], [10, 10, 10, 500, 10], gap=0)
    assert loops[-1] == 5
    src.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5_000), st.integers(0, 300)), min_size=1, max_size=40),
       st.sampled_from([0, 1, 64, 4096]))
def test_read_spans_plan_matches_a_plain_merge_of_its_ranges(ranges, gap):
    """The compiled plan: ranges sorted by start, merged while the next starts at most
    ``gap`` past the reach so far; one request a group, the buffer the groups back to back."""
    from lancefile.io import read_spans

    data = bytes(range(256)) * 25  # 6,400 bytes
    src = CountingSource(InMemorySource(data))
    starts = [s for s, _ in ranges]
    lengths = [min(n, len(data) - s) for s, n in ranges]
    buf, at = read_spans(src, starts, lengths, gap)
    for s, n, a in zip(starts, lengths, at.tolist()):
        assert bytes(buf[a : a + n]) == data[s : s + n]
    groups = []
    for s, n in sorted(zip(starts, lengths), key=lambda r: r[0]):
        if groups and s <= groups[-1][1] + gap:
            groups[-1][1] = max(groups[-1][1], s + n)
        else:
            groups.append([s, s + n])
    assert src.requests == len(groups)
    assert len(buf) == sum(e - s for s, e in groups)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 120), st.integers(-3, 120)), max_size=12), st.integers(0, 150))
def test_ranges_total_is_the_sum_or_names_the_first_range_outside(ranges, limit):
    from lancefile.io import ranges_total

    s = np.array([a for a, _ in ranges], np.int64)
    n = np.array([b for _, b in ranges], np.int64)
    bad = [i for i, (a, b) in enumerate(ranges) if a < 0 or b < 0 or a + b > limit]
    assert ranges_total(s, n, limit) == (-1 - bad[0] if bad else int(n.sum()))


_SPLIT_DATA = np.random.default_rng(11).integers(0, 256, 200_000, dtype=np.uint8).tobytes()


@pytest.fixture(scope="module")
def split_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("split") / "bytes.bin"
    path.write_bytes(_SPLIT_DATA)
    return path


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 199_000), st.integers(0, 1_000)), min_size=1, max_size=30),
       st.sampled_from([0, 64, 4096]))
def test_a_large_local_read_in_two_halves_gives_the_same_bytes(split_file, ranges, gap):
    """With every read counted as large, a local file's ranges are read in two halves (one on
    a helper thread, the range at the middle cut in two): the same bytes as slicing the file,
    and the halves hold every byte once."""
    from unittest import mock

    import lancefile.io as io
    import lancefile.localfile as localfile
    from lancefile import threadpools

    starts, lengths = np.array(sorted(ranges), np.int64).T.reshape(2, -1)
    halves = []
    real = localfile._halves

    def spy(*a):
        got = real(*a)
        halves.append(got)
        return got

    with mock.patch.object(localfile, "SPLIT_READ_BYTES", 1), mock.patch.object(threadpools, "_CORES", 2), \
            mock.patch.object(localfile, "_halves", spy):
        src = io.LocalFileSource(split_file)
        try:
            buf, at = io.read_spans(src, starts, lengths, gap=gap)
        finally:
            src.close()
    for s, n, a in zip(starts.tolist(), lengths.tolist(), at.tolist()):
        assert bytes(buf[a : a + n]) == _SPLIT_DATA[s : s + n]
    if lengths.sum():
        assert len(halves) == 1
        (s1, n1, a1), (s2, n2, a2) = halves[0]
        total = int(n1.sum() + n2.sum())
        assert abs(int(n1.sum()) - int(n2.sum())) <= 1  # split at the middle byte
        covered = np.zeros(len(buf), np.int64)  # each byte of the buffer written once
        for a, n in zip(np.concatenate([a1, a2]).tolist(), np.concatenate([n1, n2]).tolist()):
            covered[a : a + n] += 1
        assert covered.sum() == total and covered.max(initial=0) <= 1


def test_a_split_read_reads_the_helpers_half_itself_when_the_helper_is_busy_and_names_a_short_one(
        split_file, monkeypatch, tmp_path):
    """The helper's half is read by the calling thread when the helper has not started it (its
    thread busy with another read); a file cut short under the reader still raises the error
    naming the short range, from either half; inside ``cores_shared`` nothing is split."""
    from concurrent.futures import Future

    import lancefile.io as io
    import lancefile.localfile as localfile
    from lancefile import threadpools
    from lancefile.errors import LanceIOError

    monkeypatch.setattr(threadpools, "_CORES", 2)
    monkeypatch.setattr(localfile, "SPLIT_READ_BYTES", 1)
    pending = []

    class Busy:  # a pool whose thread never gets to the task
        def submit(self, fn, *args):
            pending.append(Future())
            return pending[-1]

    monkeypatch.setattr(localfile, "_split_pool", lambda: Busy())
    src = io.LocalFileSource(split_file)
    data = src.read(1_000, 150_000)  # (a read of 64 KiB or more goes through read_into)
    assert bytes(data) == _SPLIT_DATA[1_000:151_000] and len(pending) == 1 and pending[0].cancelled()
    with threadpools.cores_shared():
        assert bytes(src.read(0, 130_000)) == _SPLIT_DATA[:130_000] and len(pending) == 1  # not split
    src.close()
    monkeypatch.setattr(localfile, "_split_pool", lambda: threadpools.shared_pool("pread", 1))
    path = tmp_path / "cut.bin"
    path.write_bytes(_SPLIT_DATA)
    src = io.LocalFileSource(path)
    with open(path, "r+b") as fh:
        fh.truncate(100_000)
    with pytest.raises(LanceIOError, match=r"short read at 83000 \(17000 of 75000 bytes\)"):
        src.read(8_000, 150_000)  # the second half [83000, 158000) runs past the end
    with pytest.raises(LanceIOError, match=r"short read at 20000 \(80000 of 90000 bytes\)"):
        src.read(20_000, 180_000)  # both halves [20000, 110000) and [110000, 200000) run short: the first is named
    with pytest.raises(LanceIOError, match=r"short read at 90000 \(10000 of 15000 bytes\)"):
        io.read_spans(src, [0, 90_000], [15_000, 15_000], gap=0)  # the first range is whole, the second is not
    src.close()


def test_the_read_pools_tasks_neither_split_their_reads_nor_their_decodes():
    """A task on the read pool runs inside ``cores_shared`` (its reads and kernels keep to its
    thread); the calling thread may split."""
    import pyarrow as pa

    from lancefile import fieldtasks, threadpools
    from lancefile.encodings.selection import Selection

    seen = []

    class Reader:  # one field, read as one task
        def read(self, sel, cache):
            seen.append(threadpools.may_split())
            return pa.array([1])

    tasks = fieldtasks.FieldTasks([Reader(), Reader()], Selection.of_range(0, 1), {})
    assert [a.to_pylist() for a in tasks.result()] == [[1], [1]]
    if fieldtasks.READ_THREADS > 1:
        assert seen == [False, False]
    assert threadpools.may_split() == ((threadpools._CORES or 1) > 1)


def test_takes_with_every_read_decode_and_check_in_two_halves_equal_the_table(tmp_path, monkeypatch):
    """A take of lancefile's (checksummed) file of float columns, with every read, LZ4 decode
    and checksum check counted as large, so split in halves at once: the table's rows; a
    damaged byte is still found."""
    import lancefile.localfile as localfile
    from lancefile import threadpools
    from lancefile.encodings.kernels import lz4 as lz4_module
    from lancefile.errors import ChecksumError
    from lancefile.format import hashloop

    rng = np.random.default_rng(8)
    table = pa.table({f"c{i}": rng.random(20_000) for i in range(6)})
    path = tmp_path / "f.lance"
    lancefile.write_table(table, path)
    used = []
    real = threadpools.in_halves
    for name, value in ((localfile, "SPLIT_READ_BYTES"), (lz4_module, "PARALLEL_DECODE_BYTES"),
                        (hashloop, "PARALLEL_DECODE_BYTES")):
        monkeypatch.setattr(name, value, 1)

    def spy(module):  # records the module whose work went in two halves
        def halves(*args):
            got = real(*args)
            if len(got) == 2:
                used.append(module.__name__)
            return got
        return halves

    for module in (lz4_module, hashloop):
        monkeypatch.setattr(module, "in_halves", spy(module))
    monkeypatch.setattr(threadpools, "_CORES", 2)
    rows = np.sort(rng.choice(20_000, 700, replace=False))
    assert lancefile.LanceFileReader(path).take_rows(rows).to_table().equals(table.take(rows))
    assert set(used) == {lz4_module.__name__, hashloop.__name__}  # both went in halves
    assert lancefile.LanceFileReader(path).read_range(5_000, 9_000).to_table().equals(table.slice(5_000, 9_000))
    page = lancefile.LanceFileReader(path).metadata().columns[3].pages[0]
    raw = bytearray(path.read_bytes())
    raw[page.buffers[-1].position + 5_000] ^= 0xFF  # inside column 3's chunks
    path.write_bytes(bytes(raw))
    with pytest.raises(ChecksumError):
        lancefile.LanceFileReader(path).take_rows(rows).to_table()
