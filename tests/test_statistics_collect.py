"""Gathering statistics on write: the compiled kernels against their plain twins, results that
do not depend on how rows arrive (batches, flushes, the background thread), and the whole
file's statistics that answer a filter no row can match."""

from __future__ import annotations

import math
import warnings
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancefile
import lancefile.statistics as statistics
from lancefile.encodings.kernels.minmax import (
    ZoneAccumulator, binary_bounds, binary_minmax_rows_py, zone_bounds_py,
)
from lancefile.io import CountingSource, LocalFileSource
from lancefile.statistics import StatisticsWarning

_NUMBERS = {
    "int8": (np.int8, st.integers(-128, 127)),
    "int64": (np.int64, st.integers(-2**63, 2**63 - 1)),
    "uint64": (np.uint64, st.integers(0, 2**64 - 1)),
    "float32": (np.float32, st.floats(width=32, allow_nan=True, allow_infinity=True)),
    "float64": (np.float64, st.floats(allow_nan=True, allow_infinity=True)),
}


@st.composite
def _numbers(draw):
    name = draw(st.sampled_from(sorted(_NUMBERS)))
    dtype, values = _NUMBERS[name]
    col = draw(st.lists(st.one_of(st.none(), values), max_size=70))
    skip = draw(st.integers(0, 9))  # a slice: values and validity bits start mid-buffer
    cuts = sorted(draw(st.lists(st.integers(0, len(col)), max_size=4)))
    return np.dtype(dtype), col, skip, cuts, draw(st.integers(1, 9))


@settings(max_examples=200, deadline=None)
@given(_numbers())
def test_zone_bounds_kernel_matches_its_python_twin(case):
    dtype, col, skip, cuts, zone = case
    arr = pa.array([0] * skip + col, pa.from_numpy_dtype(dtype)).slice(skip)
    acc = ZoneAccumulator(dtype, zone)
    twin = ZoneAccumulator(dtype, zone)
    twin._grow(-(-len(col) // zone) + 1)
    for a, b in zip([0] + cuts, cuts + [len(col)]):  # the column in several chunks
        part = arr.slice(a, b - a)
        values = np.frombuffer(part.buffers()[1], dtype, count=len(part), offset=part.offset * dtype.itemsize)
        bitmap = np.frombuffer(part.buffers()[0], np.uint8) if part.null_count else None
        acc.add(values, bitmap, part.offset)
        zone_bounds_py(values, bitmap, part.offset, bitmap is not None, a, zone, twin.bounds[0], twin.bounds[1],
                       twin.counts[0], twin.counts[1], twin.counts[2])
    twin.rows = len(col)
    for got, want in zip(acc.zones(), twin.zones()):
        assert np.array_equal(got, want, equal_nan=True)
    lo, hi, nulls, nans, real = acc.zones()
    for z in range(len(real)):  # and against the rules directly
        part = col[z * zone:(z + 1) * zone]
        ok = [v for v in part if v is not None and not (isinstance(v, float) and math.isnan(v))]
        assert (nulls[z], nans[z], real[z]) == (part.count(None), len(part) - part.count(None) - len(ok), len(ok))
        if ok:
            assert lo[z] == dtype.type(min(ok)) and hi[z] == dtype.type(max(ok))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=20), st.sampled_from([b"", b"ab", b"ab\x00", b"abcdefgh",
                                                                                b"abcdefgh\x00", b"abcdefghi"])),
                max_size=50),
       st.integers(1, 7), st.integers(0, 9), st.booleans())
def test_binary_bounds_kernel_reads_arrow_bitmaps_in_place(values, zone, skip, large):
    """Ties in the 8-byte prefix (``ab`` / ``ab\\0``, ``abcdefgh`` / ``abcdefgh\\0``) decided by length or tail."""
    arr = pa.array([b"x"] * skip + values, pa.large_binary() if large else pa.binary()).slice(skip)
    bufs = arr.buffers()
    width = np.int64 if large else np.int32
    offsets = np.frombuffer(bufs[1], width, count=len(arr) + 1, offset=arr.offset * np.dtype(width).itemsize)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    bitmap = np.frombuffer(bufs[0], np.uint8) if arr.null_count else None
    starts = np.arange(0, len(values), zone, dtype=np.int64)
    ends = np.append(starts[1:], len(values)).astype(np.int64)
    lo, hi, count = binary_bounds(offsets, data, bitmap, arr.offset, starts, ends)
    valid = None if bitmap is None else np.array([v is not None for v in values])
    want_lo, want_hi = binary_minmax_rows_py(offsets, data, valid, starts, ends)
    pick = [lambda rows: [values[i] if i >= 0 else None for i in rows]]
    assert pick[0](lo) == pick[0](want_lo) and pick[0](hi) == pick[0](want_hi)
    assert count.tolist() == [sum(v is not None for v in values[s:e]) for s, e in zip(starts, ends)]


def test_kernels_refuse_buffers_too_small_for_their_rows():
    offsets = np.array([0, 1, 2], np.int32)
    data = np.frombuffer(b"ab", np.uint8)
    with pytest.raises(ValueError):
        binary_bounds(offsets, data, None, 0, np.array([0]), np.array([3]))  # 3 rows, 2 values
    with pytest.raises(ValueError):
        binary_bounds(offsets, data, np.zeros(1, np.uint8), 7, np.array([0]), np.array([2]))  # 2 bits from bit 7
    with pytest.raises(ValueError):
        ZoneAccumulator(np.dtype(np.int64), 4).add(np.arange(9), np.zeros(1, np.uint8))


# -- the same statistics however the rows arrive --------------------------------------------------

@st.composite
def _table_and_batches(draw):
    n = draw(st.integers(1, 120))
    ints = draw(st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), min_size=n, max_size=n))
    floats = draw(st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), min_size=n, max_size=n))
    strings = draw(st.lists(st.one_of(st.none(), st.text(max_size=12)), min_size=n, max_size=n))
    bools = draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n))
    t = pa.table({"i": pa.array(ints, pa.int64()), "f": pa.array(floats, pa.float64()), "s": pa.array(strings, pa.string()),
                  "b": pa.array(bools, pa.bool_()), "d": pa.array(strings, pa.string()).dictionary_encode(),
                  "st": pa.StructArray.from_arrays([pa.array(ints, pa.int64())], ["x"],
                                                   mask=pa.array([v is None for v in bools]))})
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=6)))) if n > 1 else []
    return t, cuts, draw(st.integers(1, 9))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_table_and_batches())
def test_statistics_do_not_depend_on_how_rows_arrive(tmp_path_factory, case):
    t, cuts, zone = case
    d = tmp_path_factory.mktemp("arrive")
    whole = str(d / "whole.lance")
    lancefile.write_table(t, whole, statistics_zone_rows=zone)
    split = str(d / "split.lance")
    # many flushes (a tiny data cache), every one through the background thread
    with mock.patch.object(statistics, "BACKGROUND_ROWS", 0):
        with lancefile.LanceFileWriter(split, t.schema, statistics_zone_rows=zone, data_cache_bytes=64) as w:
            for a, b in zip([0] + cuts, cuts + [t.num_rows]):
                w.write_batch(t.slice(a, b - a))
    want = lancefile.LanceFileReader(whole).statistics()
    got = lancefile.LanceFileReader(split).statistics()
    assert set(got) == set(want) == {"i", "f", "s", "b", "d", "st.x"}
    for name in want:
        assert got[name].equals(want[name]), name


# -- the whole file's statistics ------------------------------------------------------------------

def test_whole_file_statistics_bound_the_file(tmp_path):
    t = pa.table({
        "i": pa.array([None, 5, -3, None, 2**40], pa.int64()),
        "u": pa.array([2**64 - 1, 2**63 + 5, None, 7, 0], pa.uint64()),
        "f": pa.array([0.0, float("nan"), -0.0, None, 2.5]),
        "n": pa.array([None] * 5, pa.float32()),
        "s": pa.array(["zz" * 50, "a", None, "m", "b"]),
        "e": pa.array([None] * 5, pa.string()),
        "t": pa.array([10, None, 3, 4, 5], pa.timestamp("ms")),
    })
    path = str(tmp_path / "w.lance")
    lancefile.write_table(t, path, statistics_zone_rows=2, statistics_max_bound_bytes=8)
    fs = lancefile.LanceFileReader(path)._file_statistics()
    whole = {name: fs.file_stats((name,)) for name in t.column_names}
    i = whole["i"]
    assert (i.null_count[0], i.min[0].as_py(), i.max[0].as_py()) == (2, -3, 2**40)
    assert (whole["u"].min[0].as_py(), whole["u"].max[0].as_py()) == (0, 2**64 - 1)
    f = whole["f"]
    assert (f.null_count[0], f.nan_count[0], f.max[0].as_py()) == (1, 1, 2.5)
    assert f.min[0].as_py() == 0 and math.copysign(1, f.min[0].as_py()) == -1  # a min of zero is -0.0
    n = whole["n"]  # no value at all: the widest bounds
    assert (n.null_count[0], n.min[0].as_py(), n.max[0].as_py()) == (5, -math.inf, math.inf)
    assert (whole["s"].min[0].as_py(), whole["s"].max[0].as_py()) == ("a", "zzzzzzz{")  # the zones' truncated max
    assert whole["e"].min[0].as_py() is None and whole["e"].null_count[0] == 5
    assert whole["t"].min[0].value == 3 and whole["t"].max[0].value == 10


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_a_filter_no_row_matches_reads_no_zone_statistics(tmp_path, version):
    n = 100_000
    t = pa.table({"key": np.arange(n, dtype=np.int64), "s": pa.array([f"k{i:06d}" for i in range(n)]),
                  "x": np.random.default_rng(0).random(n)})
    path = str(tmp_path / "t.lance")
    lancefile.write_table(t, path, version=version)
    src = CountingSource(LocalFileSource(path))
    reader = lancefile.LanceFileReader(src)
    reader._file_statistics()
    opened = src.bytes_read  # the file's metadata and the statistics file's footer
    for f in ([("key", ">", n)], pc.field("s") < "a", (pc.field("key") < 0) | pc.field("s").is_null(),
              pc.field("key").isin([-5, n + 5])):
        got = reader.read_all(filter=f).to_table()
        assert got.num_rows == 0 and got.schema == t.schema, f
        assert reader.matching_ranges(f) == []
    assert src.bytes_read == opened  # nothing more: no zone statistics, no data
    assert lancefile.read_table(path, columns=["x"], filters=[("key", ">", n)]).schema == t.select(["x"]).schema
    # a filter some rows match still reads only its zones
    assert reader.matching_ranges([("key", ">=", n - 10)]) == [(n - n % 8192, n)]


def test_files_whose_statistics_have_no_whole_file_part_still_prune(tmp_path):
    t = pa.table({"a": np.arange(30_000)})
    table = statistics.StatisticsCollector.table

    def without_summary(self, rows):
        out = table(self, rows)
        meta = {k: v for k, v in out.schema.metadata.items() if k != statistics.FILE_SUMMARY_KEY.encode()}
        return out.replace_schema_metadata(meta)

    path = str(tmp_path / "old.lance")
    with mock.patch.object(statistics.StatisticsCollector, "table", without_summary):
        lancefile.write_table(t, path)
    r = lancefile.LanceFileReader(path)
    assert r._file_statistics().file_stats(("a",)) is None
    assert r.matching_ranges([("a", ">", 10**6)]) == []  # from the zones
    assert lancefile.read_table(path, filters=[("a", ">=", 29_998)]).column("a").to_pylist() == [29_998, 29_999]


def test_damaged_whole_file_statistics_are_ignored_with_a_warning(tmp_path):
    t = pa.table({"a": np.arange(20_000)})
    path = str(tmp_path / "t.lance")
    lancefile.write_table(t, path, checksums=False)
    data = bytearray(open(path, "rb").read())
    r = lancefile.LanceFileReader(path)
    text = r._file_statistics()._summary_text.encode()
    at = bytes(data).find(text)
    assert at > 0
    data[at + 10: at + 14] = b"!!!!"  # no longer base64
    bad = str(tmp_path / "bad.lance")
    open(bad, "wb").write(bytes(data))
    with pytest.warns(StatisticsWarning):
        assert lancefile.read_table(bad, filters=[("a", ">", 19_997)]).column("a").to_pylist() == [19_998, 19_999]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        assert lancefile.read_table(bad, filters=[("a", "<", 0)]).num_rows == 0


def test_zones_every_row_of_which_matches_are_not_filtered(tmp_path):
    n = 40_000
    t = pa.table({"key": np.arange(n, dtype=np.int64), "x": np.random.default_rng(1).random(n),
                  "maybe": pa.array([None if i % 9 == 0 else i for i in range(n)], pa.int64())})
    path = str(tmp_path / "t.lance")
    lancefile.write_table(t, path, statistics_zone_rows=4096)
    fs = lancefile.LanceFileReader(path)._file_statistics()
    f = (pc.field("key") >= 5000) & (pc.field("key") < 30000)
    assert fs.filter_plan(f, 0, n) == [(4096, 8192, False), (8192, 28672, True), (28672, 32768, False)]
    assert fs.filter_plan(~(pc.field("key") < 5000), 0, n)[-1] == (8192, n, True)
    assert fs.filter_plan(pc.field("maybe") >= 0, 0, n) == [(0, n, False)]  # null rows are not matches
    assert fs.filter_plan(pc.field("maybe").is_null() | (pc.field("maybe") >= 0), 0, n) == [(0, n, False)]
    assert fs.filter_plan(pc.field("x").is_valid(), 0, n) == [(0, n, True)]
    for cols in (None, ["x"], ["maybe", "x"]):
        got = lancefile.read_table(path, columns=cols, filters=f)
        assert got.equals(t.filter(f).select(cols or t.column_names))


# -- filtering a batch without Arrow's expression engine ----------------------------------------

_COLUMNS = {"i8": pa.int8(), "i64": pa.int64(), "f": pa.float64(), "s": pa.string(), "b": pa.bool_(),
            "ts": pa.timestamp("ms")}


@st.composite
def _leaf_expr(draw):
    name = draw(st.sampled_from(sorted(_COLUMNS)))
    f = pc.field(name)
    t = _COLUMNS[name]
    if name == "s":
        lit = draw(st.one_of(st.none(), st.text(max_size=3)))
    elif name == "f":
        lit = draw(st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-5, 5)))
    elif name == "b":
        lit = draw(st.one_of(st.none(), st.booleans()))
    else:
        lit = draw(st.one_of(st.none(), st.integers(-128, 127)))
    kind = draw(st.sampled_from(["cmp", "in", "null", "valid", "nan", "bare"]))
    if kind == "cmp":
        scalar = pa.scalar(lit, t) if name == "ts" and lit is not None else pa.scalar(lit)
        if lit is None:
            scalar = pa.scalar(None, t)
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        return {"==": f == scalar, "!=": f != scalar, "<": f < scalar, "<=": f <= scalar, ">": f > scalar,
                ">=": f >= scalar}[op]
    if kind == "in":
        values = [lit] + draw(st.lists(st.sampled_from([lit, None]), max_size=2))
        return pc.is_in(f, value_set=pa.array(values, t), skip_nulls=draw(st.booleans()))
    if kind == "null":
        return f.is_null(nan_is_null=draw(st.booleans()))
    if kind == "valid":
        return f.is_valid()
    if kind == "nan" and name == "f":
        return pc.is_nan(f)
    return f if name == "b" else f.is_valid()


_exprs = st.recursive(_leaf_expr(), lambda inner: st.one_of(
    st.tuples(inner, inner).map(lambda ab: ab[0] & ab[1]),
    st.tuples(inner, inner).map(lambda ab: ab[0] | ab[1]),
    inner.map(lambda a: ~a)), max_leaves=5)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 30).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.one_of(st.none(), st.integers(-128, 127)), min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), st.text(max_size=3)), min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n))), _exprs)
def test_filter_rows_equals_arrows_own_filtering(columns, expr):
    from lancefile.predicate import filter_rows

    n, ints, floats, strings, bools = columns
    batch = pa.record_batch({"i8": pa.array(ints, pa.int8()), "i64": pa.array(ints, pa.int64()),
                             "f": pa.array(floats, pa.float64()), "s": pa.array(strings, pa.string()),
                             "b": pa.array(bools, pa.bool_()), "ts": pa.array(ints, pa.int64()).cast(pa.timestamp("ms")),
                             "row": pa.array(np.arange(n))})
    try:
        want = batch.filter(expr)
    except (pa.ArrowException, TypeError, ValueError):
        with pytest.raises((pa.ArrowException, TypeError, ValueError)):
            filter_rows(batch, expr)
        return
    assert filter_rows(batch, expr).column("row").equals(want.column("row")), expr


def test_statistics_whose_checksums_fail_are_ignored_and_the_data_filtered(tmp_path):
    """With checksums (the default), damaged statistics are refused by their own checksum: the
    filter is then evaluated on data whose checksums pass (where the damage shares a checksum
    block with data bytes, the read fails instead: nothing wrong is ever returned)."""
    rng = np.random.default_rng(0)
    t = pa.table({f"c{i}": rng.integers(0, 1 << 40, 20_000) for i in range(300)})
    path = str(tmp_path / "t.lance")
    lancefile.write_table(t, path, statistics_zone_rows=1024)
    ref = lancefile.LanceFileReader(path)._layout.global_buffers[-2]  # the statistics (the last: checksums)
    data = open(path, "rb").read()
    want = t.filter(pc.field("c0") < (1 << 30)).select(["c0"])
    skip = len(statistics.STATISTICS_MAGIC)
    inner = lancefile.LanceFileReader(data[ref.position + skip : ref.position + ref.size])  # the statistics' file
    col = inner.schema.names.index("min_0")
    zones = inner.metadata().columns[col].pages[0].buffers[1][0]  # the chunks of the zones' minimums (c0's first)
    for at in (skip + zones + 16, ref.size - 3000):  # c0's zones; the statistics' metadata
        bad = bytearray(data)
        bad[ref.position + at] ^= 0xFF
        damaged = str(tmp_path / f"bad{at}.lance")
        open(damaged, "wb").write(bytes(bad))
        with pytest.warns(StatisticsWarning, match="checksum mismatch"):
            assert lancefile.read_table(damaged, columns=["c0"], filters=[("c0", "<", 1 << 30)]).equals(want)


def test_statistics_are_a_2_0_file_in_2_0_files_and_a_bit_packed_2_1_file_otherwise(tmp_path):
    # a 2.0 file's filtered reads never need the 2.1+ decoders; 2.1+ files get the smaller form
    rng = np.random.default_rng(4)
    n = 2_000_000
    t = pa.table({"i": rng.integers(0, 1000, n), "f": rng.random(n)})
    sizes = {}
    for version, inner in [("2.0", "2.0"), ("2.1", "2.1"), ("2.2", "2.1")]:
        p = tmp_path / f"s{version}.lance"
        lancefile.write_table(t, p, version=version, checksums=False)
        bare = tmp_path / f"b{version}.lance"
        lancefile.write_table(t, bare, version=version, checksums=False, statistics=False)
        sizes[version] = p.stat().st_size - bare.stat().st_size
        r = lancefile.LanceFileReader(p)
        stats = r._file_statistics()
        assert stats.available and stats._reader.version == inner
        got = r.read_all(filter=pc.field("i") < 3).to_table()
        assert got.equals(t.filter(pc.field("i") < 3))
        zones = r.statistics(["i"])["i"]
        assert zones.column("min").to_pylist() == [int(t.column("i").slice(a, 8192).to_numpy().min())
                                                   for a in range(0, n, 8192)]
    assert sizes["2.1"] == sizes["2.2"] < 0.5 * sizes["2.0"], sizes


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([np.float32, np.float64]), st.integers(1, 5), st.integers(1, 60), st.integers(1, 9),
       st.lists(st.integers(0, 40), min_size=1, max_size=3), st.integers(0, 2**32 - 1))
def test_add_columns_is_add_column_of_each(dtype, ncols, rows, zone, before, seed):
    """Columns folded together (StatisticsCollector.add_columns, a wide write's floats) give
    the zones folding them one at a time gives, from any position (a zone part-filled by
    earlier rows, NaNs, infinities), and so the same statistics table."""
    rng = np.random.default_rng(seed)
    schema = pa.schema([pa.field(f"c{i}", pa.from_numpy_dtype(np.dtype(dtype))) for i in range(ncols)])
    lance_schema = lancefile.format.schema.LanceSchema.from_arrow(schema)
    together = statistics.StatisticsCollector(schema, lance_schema, zone_rows=zone)
    alone = statistics.StatisticsCollector(schema, lance_schema, zone_rows=zone)
    total = 0
    for step, n in enumerate(before + [rows]):
        mat = rng.normal(size=(ncols, n)).astype(dtype)
        mat[rng.random(mat.shape) < 0.1] = np.nan
        mat[rng.random(mat.shape) < 0.05] = np.inf
        values = pa.array(mat.reshape(-1))
        if step % 2 == 0 or step == len(before):
            together.add_columns(list(range(ncols)), values, n)
        else:
            for i in range(ncols):
                together.add_column(i, values.slice(i * n, n))
        for i in range(ncols):
            alone.add_column(i, values.slice(i * n, n))
        total += n
    for a, b in zip(together.acc, alone.acc):
        for got, want in zip(a.zones(), b.zones()):
            assert np.array_equal(got, want, equal_nan=True)
    assert together.table(total).equals(alone.table(total))


def test_add_columns_goes_one_at_a_time_when_it_cannot_fold_together():
    """Positions that differ, nulls, integers: each column alone (the same zones)."""
    schema = pa.schema([pa.field("a", pa.float64()), pa.field("b", pa.float64()), pa.field("i", pa.int64())])
    lance_schema = lancefile.format.schema.LanceSchema.from_arrow(schema)
    col = statistics.StatisticsCollector(schema, lance_schema, zone_rows=4)
    col.add_column(0, pa.array([1.0, 2.0, 3.0]))  # a is 3 rows ahead of b
    with mock.patch.object(statistics, "zone_bounds_rows", side_effect=AssertionError("not together")):
        col.add_columns([0, 1], pa.array([5.0, 6.0, 7.0, 8.0]), 2)
        col.add_columns([1, 0], pa.array([None, 6.0, 7.0, 8.0]), 2)
        col.add_columns([2], pa.array([5, 6]), 2)
    assert col.pos == {0: 7, 1: 4, 2: 2}
    lo, hi, nulls, _, real = col.acc[1].zones()
    assert (lo.tolist(), hi.tolist(), nulls.tolist(), real.tolist()) == ([6.0], [8.0], [1], [3])
