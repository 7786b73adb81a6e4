"""Float columns encoded together (``encode_many.float_pages``, the writer's ``_flush_many``):
every page is the one the one-page way makes, and so every file is the same, byte for
byte; pylance reads it. Plus the kernels' rows variants against their one-row selves."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancefile
from lancefile import writer as W
from lancefile.encodings import kernels
from lancefile.encodings.compressive.encode_own import split_float_rows
from lancefile.encodings.kernels.fastlanes import _chunk_bit_widths
from lancefile.encodings.strategy import FieldParams, Strategy
from lancefile.encodings.structural.encode_many import float_pages, many_key
from lancefile.encodings.structural.encoder import encode_leaf_page
from lancefile.encodings.structural.shred import Shredded
from lancefile.format.version import resolve_version
from lancefile.sink import FileSink
from tests.conftest import reference_read


def _column(kind: int, n: int, rng) -> np.ndarray:
    """Floats that take every way a page can: the split (0, 6), a constant (2), runs for RLE
    (3), a dictionary (4), a head the dictionary test is unsure of (5: a zero, 7: a NaN),
    magnitudes the split does not shrink (1), tiny ones bit packing shrinks as much (8)."""
    if kind == 0:
        return rng.random(n)
    if kind == 1:
        return rng.normal(size=n) * 1e300
    if kind == 2:
        return np.full(n, 3.5)
    if kind == 3:
        return np.repeat(rng.random(n // 50 + 1), 50)[:n]
    if kind == 4:
        return rng.integers(0, 5, n) / 8
    if kind == 5:
        return np.r_[0.0, rng.random(n - 1)]
    if kind == 6:
        return rng.random(n) * 100 + 1000
    if kind == 8:
        return rng.random(n) * 1e-300
    return np.r_[np.nan, rng.random(n - 1)]


def _matrix(n: int, dtype, seed: int, kinds=range(9)) -> pa.Array:
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):
        return pa.array(np.concatenate([_column(k, n, rng).astype(dtype) for k in kinds]))


def _bytes(buf) -> bytes:
    return bytes(memoryview(np.ascontiguousarray(buf)).cast("B"))


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [2, 3, 513, 5_000, 25_000, 40_000])
@pytest.mark.parametrize("params", [FieldParams(), FieldParams(rle_threshold=0.0), FieldParams(dict_size_ratio=0.99)],
                         ids=["default", "no-rle", "dict-ratio"])
def test_pages_are_the_one_page_ways(version, dtype, n, params):
    """Each page made together equals encode_leaf_page's (message, buffers, cuts), and
    lies in ``data`` where ``placed`` says, aligned."""
    grammar = resolve_version(version).grammar
    values = _matrix(n, dtype, seed=n)
    rows = len(values) // n
    strategy = Strategy(params)
    placed = float_pages(values, rows, strategy, grammar, alignment=64)
    arrays = {id(got[1]) for got in placed if got is not None}
    assert len(arrays) <= (2 if values.nbytes >= 1 << 20 else 1)  # large: two halves, split on two threads
    together = 0
    for r, got in enumerate(placed):
        alone = encode_leaf_page(Shredded(None, None, values.slice(r * n, n), [1], n), strategy, grammar)
        if got is None:  # a test said another way, or was unsure: the caller encodes it alone
            continue
        together += 1
        page, data, starts, sizes = got
        assert page.encoding.SerializeToString() == alone.encoding.SerializeToString()
        assert [_bytes(b) for b in page.buffers] == [_bytes(b) for b in alone.buffers]
        assert page.cuts.keys() == alone.cuts.keys() and all(np.array_equal(page.cuts[k], alone.cuts[k])
                                                              for k in page.cuts)
        assert [_bytes(data[s : s + z]) for s, z in zip(starts, sizes)] == [_bytes(b) for b in alone.buffers]
        assert all(s % 64 == 0 for s in starts)
    # a constant, RLE runs and (2.2's 64-bit dictionary test is unsure) NaN heads never go
    # together; uniform columns do once the split can pay (not on a page of a few values:
    # LZ4's framing costs more than it saves)
    if params.rle_threshold:  # (with RLE off, 2.1 splits a constant page too)
        assert placed[2] is None and placed[3] is None
    if dtype == np.float64 and version == "2.2":
        assert placed[7] is None
    if dtype == np.float64 and n >= 5_000:  # split, but not below 95% of its bit-packed size
        assert placed[8] is None
    if n >= 513:  # (float32 in [0, 1) spans exponents: its split does not pay)
        assert placed[6] is not None and (placed[0] is not None or dtype == np.float32)


def test_pages_go_together_unless_a_test_says_otherwise():
    """Only a page some test of the one-page way may send elsewhere is left out: uniform
    columns of any length go together wherever the one-page way splits them; a long run at
    the head (the 64-bit dictionary test unsure) is left to the one-page way, which still
    splits it."""
    grammar = resolve_version("2.2").grammar
    rng = np.random.default_rng(3)
    for n in (2, 100, 1024, 3000, 40_000):
        cols = rng.random((5, n))
        cols[1, : n // 2] = 0.25
        values = pa.array(cols.reshape(-1))
        placed = float_pages(values, 5, Strategy(FieldParams()), grammar)
        for r, got in enumerate(placed):
            alone = encode_leaf_page(Shredded(None, None, values.slice(r * n, n), [1], n), Strategy(FieldParams()),
                                     grammar)
            split = alone.encoding.WhichOneof("layout") == "mini_block_layout" and \
                alone.encoding.mini_block_layout.value_compression.WhichOneof("compression") == "general"
            if r == 1 and n >= 100:
                assert got is None
            else:
                assert (got is not None) == split, (n, r)


def test_float_pages_refuses_nulls_and_uneven_columns():
    grammar = resolve_version("2.2").grammar
    with pytest.raises(ValueError, match="nulls"):
        float_pages(pa.array([1.0, None, 3.0, 4.0]), 2, Strategy(FieldParams()), grammar)
    with pytest.raises(ValueError, match="columns"):
        float_pages(pa.array([1.0, 2.0, 3.0]), 2, Strategy(FieldParams()), grammar)


def test_many_key():
    own = Strategy(FieldParams())
    assert many_key(pa.float64(), own, False) == (pa.float64(), FieldParams(), True)
    assert many_key(pa.float32(), own, False)[0] == pa.float32()
    assert many_key(pa.float16(), own, False) is None
    assert many_key(pa.int64(), own, False) is None
    assert many_key(pa.struct([("x", pa.float64())]), own, False) is None
    assert many_key(pa.float64(), own, True) is None  # a blob
    assert many_key(pa.float64(), Strategy(FieldParams(), own_choices=False), False) is None
    assert many_key(pa.float64(), Strategy(FieldParams(compression="zstd")), False) is None
    # an RLE threshold of its own: a group of its own (the key differs)
    assert many_key(pa.float64(), Strategy(FieldParams(rle_threshold=0.1)), False) != many_key(pa.float64(), own, False)


def _mixed_table(n: int, seed: int) -> pa.Table:
    """Float columns in runs broken by other fields, two float types, nulls, metadata."""
    rng = np.random.default_rng(seed)
    cols, fields = [], []
    for i in range(40):
        kind = i % 10
        if kind in (0, 1, 2, 5, 6):
            arr = pa.array(_column(i % 7, n, rng))  # (no NaNs: Table.equals says NaN != NaN)
        elif kind == 3:
            arr = pa.array(_column(0, n, rng).astype(np.float32))
        elif kind == 4:
            arr = pa.array(rng.random(n), mask=rng.random(n) < 0.1)  # nulls: alone
        elif kind == 7:
            arr = pa.array(rng.integers(0, 1000, n))
        elif kind == 8:
            arr = pa.array([f"s{x}" for x in rng.integers(0, 9, n)])
        else:
            arr = pa.array(rng.random(n))
        md = {"lance-encoding:compression": "zstd"} if i == 11 else None
        cols.append(arr)
        fields.append(pa.field(f"c{i}", arr.type, metadata=md))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("options", [{}, {"alignment": 4096}, {"checksums": False, "statistics": False},
                                     {"max_page_bytes": 50_000}], ids=["default", "align4096", "bare", "small-pages"])
def test_files_are_the_same_either_way(tmp_path, monkeypatch, version, options):
    """The writer's file with float fields encoded together is the one it writes encoding
    them one at a time, byte for byte; both readers read it back."""
    t = _mixed_table(9_000, seed=len(options))
    together, alone = tmp_path / "together.lance", tmp_path / "alone.lance"
    calls = []
    real = W.float_pages
    monkeypatch.setattr(W, "float_pages", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    lancefile.write_table(t, together, version=version, **options)
    if options.get("max_page_bytes") == 50_000:
        assert calls == []  # 72,000 bytes a column: more than a page, each field alone
    else:
        assert sum(calls) >= 20 and max(calls) > 2
    monkeypatch.setattr(W, "_MANY_BYTES", 0)
    lancefile.write_table(t, alone, version=version, **options)
    assert together.read_bytes() == alone.read_bytes()
    assert lancefile.read_table(together).equals(t)
    assert reference_read(together).equals(t)
    if options.get("checksums", True):
        assert lancefile.verify(together).checksums_present  # (verify raises on a damaged file)


def test_streamed_batches_and_group_limits(tmp_path, monkeypatch):
    """Fields flushed as their buffers fill (batches of a stream), groups cut at
    _MANY_BYTES, rows that differ between fields: the same file as one at a time."""
    rng = np.random.default_rng(5)
    t = pa.table({f"f{i}": rng.random(20_000) for i in range(30)})
    paths = []
    for many in (3 * 160_000, 0):
        monkeypatch.setattr(W, "_MANY_BYTES", many)
        path = tmp_path / f"s{many}.lance"
        with lancefile.LanceFileWriter(path, data_cache_bytes=100_000) as w:
            for b in t.to_batches(max_chunksize=7_000):
                w.write_batch(b)
        paths.append(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert lancefile.read_table(paths[0]).equals(t)


def test_chunk_bit_widths_rows_match_one_row():
    rng = np.random.default_rng(1)
    for dtype, stop in ((np.uint64, 64), (np.uint32, 32), (np.uint64, 65)):
        bits = np.dtype(dtype).itemsize * 8
        m = rng.integers(0, 1 << 20, (6, 5000)).astype(dtype)
        m[1, 3000] = np.iinfo(dtype).max  # stops at its third group
        m[2] = 0
        widths, done = kernels.chunk_bit_widths_rows(m, stop_at=stop)
        for r in range(len(m)):
            assert widths[r, : done[r]].tolist() == _chunk_bit_widths(m[r], stop_at=stop).tolist()
        assert done.tolist() == ([5, 3, 5, 5, 5, 5] if stop == bits else [5] * 6)


def test_all_distinct_rows_match_one_row():
    rng = np.random.default_rng(2)
    m = rng.integers(0, 1 << 62, (5, 1025)).astype(np.uint64)
    m[1, 1000] = m[1, 3]
    m[3, -1] = m[3, 0]
    got = kernels.all_distinct_rows(m)
    assert got.tolist() == [kernels.all_distinct(row) for row in m] == [True, False, True, False, True]
    assert kernels.all_distinct_rows(np.zeros((0, 4), np.uint64)).tolist() == []


@pytest.mark.parametrize("bits,per", [(64, 512), (32, 1024), (16, 3)])
def test_bss_rows_split_each_row_alone(bits, per):
    rng = np.random.default_rng(bits)
    w = bits // 8
    for rows, n in ((1, 7), (3, 1000), (4, 2 * per), (2, 1)):
        data = rng.integers(0, 256, rows * n * w).astype(np.uint8)
        got = kernels.byte_stream_split_encode_chunks(data, bits, per, rows)
        want = [kernels.byte_stream_split_encode_chunks(data[r * n * w : (r + 1) * n * w], bits, per)
                for r in range(rows)]
        assert got.tolist() == np.concatenate(want).tolist()


def test_lz4_rows_leave_room_and_align():
    """Rows of blocks: each row starts at a multiple of its alignment, after its gap; the
    blocks are the ones compressed without rows."""
    import lz4.block

    rng = np.random.default_rng(4)
    data = np.repeat(rng.integers(0, 256, 3000).astype(np.uint8), rng.integers(1, 30, 3000))
    sizes = np.array([500, 700, 300, 900, 100, 650], np.int64)
    starts = np.cumsum(sizes) - sizes
    plain, psizes = kernels.lz4_compress_runs_many(data, starts, sizes)
    out, osizes = kernels.lz4_compress_runs_many(data, starts, sizes, gap=8, align=8, fill=0xFE,
                                                 rows=(3, 40, 64, 0x48))
    assert osizes.tolist() == psizes.tolist()
    frames = 8 + (osizes + 7) // 8 * 8
    at = 0
    for r in range(2):
        assert at % 64 == 0 and out[at : at + 40].tolist() == [0x48] * 40
        at += 40
        for c in range(3 * r, 3 * r + 3):
            block = bytes(out[at + 8 : at + 8 + osizes[c]])
            want = data[starts[c] :][: sizes[c]].tobytes()
            assert lz4.block.decompress(block[4:], uncompressed_size=int(sizes[c])) == want
            at += int(frames[c])
        if r == 0:
            assert out[at : at + (-at) % 64].tolist() == [0x48] * ((-at) % 64)
            at += (-at) % 64
    assert at == len(out)


def test_split_float_rows_keep_what_one_page_keeps():
    from lancefile.encodings.compressive.encode_own import split_float_miniblock

    rng = np.random.default_rng(6)
    n = 40_000  # more than twice the sample: the sample step decides first
    cols = np.stack([rng.random(n), rng.normal(size=n) * 1e300, np.r_[rng.normal(size=16_384) * 1e300,
                                                                      rng.random(n - 16_384)]])
    best = [n * 8] * 3
    got = split_float_rows(cols.view(np.uint8).reshape(-1), 64, 3, best)
    want = [split_float_miniblock(c.view(np.uint8), 64, n * 8) is not None for c in cols]
    assert got.keep.tolist() == want == [True, False, False]


def test_sink_add_laid_out_writes_what_add_page_writes(tmp_path):
    """Pages whose buffers lie in one array as add_page would write them (each at the next
    multiple of the alignment, the sink's pad byte between; here after 128 bytes the run
    does not use) give the file, checksum entries and page messages that adding them one
    by one gives: small buffers, buffers in pieces, empty ones, chunk cuts."""
    from lancefile.encodings.page import EncodedPage
    from lancefile._proto import encodings_v2_1_pb2 as pb
    from lancefile.format.container import BUFFER_PAD_BYTE

    rng = np.random.default_rng(7)
    big = rng.integers(0, 256, 70_000).astype(np.uint8)
    cuts = {1: np.arange(0, 70_000, 3000)}
    pages = [(0, EncodedPage(pb.PageLayout(), [np.arange(10, dtype=np.uint8), big], 5, cuts)),
             (1, EncodedPage(pb.PageLayout(), [b"", [b"ab", np.frombuffer(b"cde", np.uint8)]], 2)),
             (0, EncodedPage(pb.PageLayout(), [bytes(20_000), big[:5]], 1, {0: np.array([0, 100])}))]
    data = bytearray(b"\x01" * 128)  # not part of the run
    laid_out = []
    for col, page in pages:
        starts, sizes = [], []
        for b in page.buffers:
            raw = b"".join(bytes(x) for x in b) if isinstance(b, list) else bytes(b)
            data += bytes([BUFFER_PAD_BYTE]) * (-len(data) % 64)
            starts.append(len(data))
            sizes.append(len(raw))
            data += raw
        laid_out.append((col, page, starts, sizes))
    outs = []
    for name, together in (("one", False), ("many", True)):
        sink = FileSink(str(tmp_path / name), 64, 2)
        sink.write_buffer(b"x" * 3)
        if together:
            sink.add_laid_out(np.frombuffer(data, np.uint8), laid_out)
        else:
            for col, page in pages:
                sink.add_page(col, page)
        sink.flush()
        small = [np.concatenate([np.asarray(p[j], dt) for p in sink.small]).tolist()
                 for j, dt in enumerate((np.int64, np.int64, np.uint64))]
        outs.append(((tmp_path / name).read_bytes(), small, [[p.SerializeToString() for p in c] for c in sink.pages]))
        sink.file.close()
    assert outs[0] == outs[1]


@pytest.mark.parametrize("alone_at", [(0, 7, 19, 20, 39), (3,)])
def test_two_halves_and_pages_left_out_at_their_edges(tmp_path, monkeypatch, alone_at):
    """A group large enough for two threads (two arrays of pages), with pages that go alone
    at both ends of each half, or none where the halves meet: the file is the one written
    a field at a time."""
    rng = np.random.default_rng(8)
    cols = {f"f{i}": rng.random(10_000) for i in range(40)}
    for i in alone_at:
        cols[f"f{i}"] = np.full(10_000, float(i)) if i != 7 else np.repeat(rng.random(100), 100)
    t = pa.table(cols)
    arrays = []
    real = W.float_pages
    monkeypatch.setattr(W, "float_pages", lambda *a, **k: arrays.append(real(*a, **k)) or arrays[-1])
    lancefile.write_table(t, tmp_path / "together.lance")
    (placed,) = arrays
    assert len({id(got[1]) for got in placed if got is not None}) == 2
    assert [r for r, got in enumerate(placed) if got is None] == list(alone_at)
    monkeypatch.setattr(W, "_MANY_BYTES", 0)
    lancefile.write_table(t, tmp_path / "alone.lance")
    assert (tmp_path / "together.lance").read_bytes() == (tmp_path / "alone.lance").read_bytes()
    assert reference_read(tmp_path / "together.lance").equals(t)


@st.composite
def _float_tables(draw):
    """Tables of float columns of every kind above, some with nulls, some float32, some
    with an RLE threshold of their own, in any order; and a version."""
    n = draw(st.integers(2, 3_000))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cols, fields = [], []
    for i in range(draw(st.integers(2, 12))):
        values = _column(draw(st.integers(0, 8)), n, rng)
        dtype = draw(st.sampled_from([np.float64, np.float64, np.float32]))
        with np.errstate(over="ignore"):
            arr = pa.array(values.astype(dtype), mask=(rng.random(n) < 0.05) if draw(st.booleans()) and i % 3 == 0
                           else None)
        md = {"lance-encoding:rle-threshold": "0.1"} if draw(st.integers(0, 5)) == 0 else None
        cols.append(arr)
        fields.append(pa.field(f"c{i}", arr.type, metadata=md))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields)), draw(st.sampled_from(["2.1", "2.2"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_float_tables())
def test_any_float_table_is_the_same_file_either_way(tmp_path, monkeypatch, case):
    t, version = case
    together, alone = tmp_path / "together.lance", tmp_path / "alone.lance"
    for p in (together, alone):
        if p.exists():
            p.unlink()
    lancefile.write_table(t, together, version=version)
    with monkeypatch.context() as m:
        m.setattr(W, "_MANY_BYTES", 0)
        lancefile.write_table(t, alone, version=version)
    assert together.read_bytes() == alone.read_bytes()
    got = lancefile.read_table(together)
    assert got.schema.equals(t.schema) and all(
        np.array_equal(got.column(i).to_numpy(zero_copy_only=False), t.column(i).to_numpy(zero_copy_only=False),
                       equal_nan=True) for i in range(t.num_columns))
