"""Per-zone statistics and filters: the spec's rules, exact results, skipped bytes, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.io import CountingSource, LocalFileSource
from lancefile.predicate import to_expression
from lancefile.statistics import STATISTICS_MAGIC, StatisticsWarning

VERSIONS = ["2.0", "2.1", "2.2"]


def _write(tmp_path, table, name="t.lance", **kw):
    path = tmp_path / name
    lancefile.write_table(table, path, **kw)
    return str(path)


# -- the spec's rules -------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["2.1", "2.2"])  # 2.0 cannot hold null structs
def test_rules_for_bounds(tmp_path, version):
    t = pa.table({
        "i": pa.array([None, None, 5, -3, None, None], pa.int32()),
        "u": pa.array([2**64 - 1, 2**63 + 5, None, None, 7, 0], pa.uint64()),
        "f": pa.array([0.0, float("nan"), -0.0, 2.5, float("nan"), None], pa.float64()),
        "b": pa.array([None, None, True, True, False, None]),
        "s": pa.array(["zz" * 50, "a", None, None, "\U0010ffff" * 20, "m"]),
        "st": pa.array([{"x": 1}, None, {"x": 3}, {"x": None}, {"x": 9}, {"x": 10}],
                       pa.struct([("x", pa.int64())])),
    })
    path = _write(tmp_path, t, version=version, statistics_zone_rows=2, statistics_max_bound_bytes=8)
    stats = lancefile.LanceFileReader(path).statistics()
    assert set(stats) == {"i", "u", "f", "b", "s", "st.x"}
    i = stats["i"].to_pydict()
    assert i["null_count"] == [2, 0, 2]
    info = np.iinfo(np.int32)
    assert i["min"] == [info.min, -3, info.min] and i["max"] == [info.max, 5, info.max]  # all-null: type extremes
    u = stats["u"].to_pydict()
    assert u["min"][0] == 2**63 + 5 and u["max"][0] == 2**64 - 1 and u["min"][2] == 0
    f = stats["f"].to_pydict()
    assert f["nan_count"] == [1, 0, 1] and f["null_count"] == [0, 0, 1]
    assert math.copysign(1, f["min"][0]) == -1 and f["min"][0] == 0  # a min of zero is -0.0
    assert math.copysign(1, f["max"][0]) == 1 and f["max"][0] == 0   # a max of zero is +0.0
    assert f["min"][1] == -0.0 and f["max"][1] == 2.5
    assert f["min"][2] == -math.inf and f["max"][2] == math.inf  # no value: -Inf/+Inf
    assert stats["b"].to_pydict()["min"] == [False, True, False] and stats["b"].to_pydict()["max"] == [True, True, False]
    s = stats["s"].to_pydict()
    assert s["min"][0] == "a" and s["max"][0] == "zzzzzzz{"  # cut to 8 bytes, last char incremented
    assert s["min"][1] is None and s["max"][1] is None       # all null: unknown
    assert s["min"][2] == "m" and s["max"][2] is None         # no 8-byte value above U+10FFFF...: unknown
    x = stats["st.x"].to_pydict()
    assert x["null_count"] == [1, 1, 0] and x["min"] == [1, 3, 9]  # struct nulls count for the leaf


def test_statistics_are_off_on_request_and_leave_the_schema_alone(tmp_path):
    t = pa.table({"a": [1, 2, 3]}).replace_schema_metadata({"k": "v"})
    on = _write(tmp_path, t, "on.lance")
    off = _write(tmp_path, t, "off.lance", statistics=False)
    assert lancefile.LanceFileReader(off).statistics() == {}
    assert lancefile.LanceFileReader(on).schema.metadata == {b"k": b"v"}
    assert lancefile.read_table(on).equals(lancefile.read_table(off), check_metadata=True)
    r = lancefile.LanceFileReader(on)
    stats = r._layout.global_buffers[-2]  # the last holds lancefile's checksums
    assert bytes(r._source.read(stats.position, len(STATISTICS_MAGIC))) == STATISTICS_MAGIC
    # a user's global buffers keep their indices; the statistics come after them
    with lancefile.LanceFileWriter(str(tmp_path / "g.lance")) as w:
        w.write_batch(t)
        assert w.add_global_buffer(b"mine") == 1
    r = lancefile.LanceFileReader(str(tmp_path / "g.lance"))
    assert r.read_global_buffer(1) == b"mine" and set(r.statistics()) == {"a"}


@pytest.mark.interop
@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_reads_files_with_statistics_unchanged(tmp_path, version):
    lance = pytest.importorskip("lance")
    rng = np.random.default_rng(0)
    t = pa.table({"k": np.arange(30_000), "f": rng.random(30_000), "s": [f"v{i % 77}" for i in range(30_000)],
                  "l": pa.array([[i] * (i % 3) for i in range(30_000)])})
    with_stats = _write(tmp_path, t, "with.lance", version=version)
    without = _write(tmp_path, t, "without.lance", version=version, statistics=False)
    a = lance.file.LanceFileReader(with_stats).read_all().to_table()
    b = lance.file.LanceFileReader(without).read_all().to_table()
    assert a.replace_schema_metadata(None).equals(b.replace_schema_metadata(None))
    assert a.replace_schema_metadata(None).equals(t)


# -- filters ------------------------------------------------------------------------------------

def test_selective_filter_reads_few_bytes(tmp_path):
    n = 2_000_000
    rng = np.random.default_rng(1)
    t = pa.table({"key": np.arange(n, dtype=np.int64), "x": rng.random(n), "y": rng.integers(0, 1 << 40, n)})
    path = _write(tmp_path, t)

    def bytes_for(**kw):
        src = CountingSource(LocalFileSource(path))
        out = lancefile.LanceFileReader(src).read_all(**kw).to_table()
        return src.bytes_read, out

    full, _ = bytes_for()
    lo, hi = n // 2, n // 2 + n // 100
    some, got = bytes_for(filter=(pc.field("key") >= lo) & (pc.field("key") < hi))
    assert got.equals(t.slice(lo, hi - lo))
    assert some <= 0.10 * full, (some, full)
    none, got = bytes_for(filter=[("key", "<", -1)])
    assert got.num_rows == 0
    src = CountingSource(LocalFileSource(path))
    r = lancefile.LanceFileReader(src)
    r.statistics(["key"])
    assert none <= src.bytes_read + 4096  # metadata and the key's statistics only


@pytest.mark.parametrize("version", VERSIONS)
def test_filters_forms_and_unprojected_columns(tmp_path, version):
    rng = np.random.default_rng(2)
    n = 50_000
    t = pa.table({"a": rng.integers(0, 1000, n), "b": pa.array([f"s{i % 50}" for i in range(n)]),
                  "c": rng.random(n), "st": pa.array([{"x": int(i) if i % 9 else None} if (i % 11 or version == "2.0")
                                                      else None for i in range(n)], pa.struct([("x", pa.int64())]))})
    path = _write(tmp_path, t, version=version, statistics_zone_rows=4096)
    cases = [
        [("a", ">", 500), ("b", "in", {"s1", "s2"})],
        [[("a", "<", 10)], [("b", "==", "s7")]],
        (pc.field("c") < 0.1) | ~(pc.field("a") != 3),
        pc.field("st", "x").is_null(),
        pc.field(("st", "x")) > 49_000,
        [("b", "not in", ["s1"])],
    ]
    for f in cases:
        expr = to_expression(f)
        want = t.filter(expr)
        assert lancefile.read_table(path, filters=f).equals(want), f
        assert lancefile.read_table(path, columns=["c"], filters=f).equals(want.select(["c"])), f
        got = pa.Table.from_batches(list(lancefile.iter_batches(path, ["b", "a"], batch_size=1000, filters=f)),
                                    schema=t.select(["b", "a"]).schema)
        assert got.equals(want.select(["b", "a"])), f


def test_files_without_statistics_still_filter(tmp_path):
    t = pa.table({"a": list(range(100))})
    path = _write(tmp_path, t, statistics=False)
    assert lancefile.read_table(path, filters=[("a", ">=", 90)]).column("a").to_pylist() == list(range(90, 100))


@pytest.mark.interop
def test_filters_on_reference_files(tmp_path):
    lance = pytest.importorskip("lance")
    t = pa.table({"a": list(range(1000)), "s": [str(i) for i in range(1000)]})
    path = str(tmp_path / "ref.lance")
    with lance.file.LanceFileWriter(path, t.schema) as w:
        w.write_batch(t)
    assert lancefile.read_table(path, filters=pc.field("s") == "7").to_pydict() == {"a": [7], "s": ["7"]}


def test_bad_filters_are_clear(tmp_path):
    path = _write(tmp_path, pa.table({"a": [1, 2], "s": ["x", "y"]}))
    with pytest.raises(lancefile.ColumnNotFoundError, match="'nope'"):
        lancefile.read_table(path, filters=[("nope", "=", 1)])
    with pytest.raises(lancefile.ColumnNotFoundError, match="'st.nope'"):
        lancefile.read_table(path, filters=pc.field("st", "nope") == 1)
    with pytest.raises(lancefile.InvalidInputError, match="filter .* on column 's' \\(string\\)"):
        lancefile.read_table(path, filters=pc.field("s") > 5)  # a type mismatch
    with pytest.raises(lancefile.InvalidInputError, match="column 'a' .*must evaluate to bool"):
        lancefile.read_table(path, filters=pc.field("a") + 1)
    with pytest.raises(lancefile.InvalidInputError, match="'a', '~~'"):  # an unsupported operator
        lancefile.read_table(path, filters=[("a", "~~", 1)])
    with pytest.raises(lancefile.InvalidInputError, match="not bytes"):
        lancefile.read_table(path, filters=b"a > 1")
    with pytest.raises(lancefile.InvalidInputError, match="position 4"):  # SQL text, read as pylance reads it
        lancefile.read_table(path, filters="a > ")
    assert lancefile.read_table(path, filters="a > 1")["a"].to_pylist() == [2]


def test_damaged_statistics_are_ignored_with_a_warning(tmp_path):
    t = pa.table({"a": list(range(100))})
    # without checksums: with them, the damaged bytes are refused (tests/test_checksums.py)
    path = _write(tmp_path, t, checksums=False)
    data = bytearray(open(path, "rb").read())
    r = lancefile.LanceFileReader(path)
    ref = r._layout.global_buffers[-1]
    # the statistics' own footer, damaged: the file still reads, filters stay exact
    broken = bytearray(data)
    broken[ref.position + ref.size - 4: ref.position + ref.size] = b"XXXX"
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(broken))
    with pytest.warns(StatisticsWarning):
        assert lancefile.LanceFileReader(str(bad)).statistics() == {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        assert lancefile.read_table(str(bad), filters=pc.field("a") > 95).column("a").to_pylist() == [96, 97, 98, 99]
    # statistics of another file (other row count) are refused, not trusted
    other = _write(tmp_path, pa.table({"a": list(range(50))}), "other.lance", checksums=False)
    r2 = lancefile.LanceFileReader(other)
    ref2 = r2._layout.global_buffers[-1]
    swapped = bytearray(data)
    blob = open(other, "rb").read()[ref2.position: ref2.position + ref2.size]
    if len(blob) <= ref.size:
        swapped[ref.position: ref.position + len(blob)] = blob
        p3 = tmp_path / "swapped.lance"
        p3.write_bytes(bytes(swapped))
        with pytest.warns(StatisticsWarning):
            lancefile.LanceFileReader(str(p3)).statistics()


# -- properties -------------------------------------------------------------------------------

_TYPES = {
    "i64": (pa.int64(), st.integers(-2**63, 2**63 - 1)),
    "u64": (pa.uint64(), st.integers(0, 2**64 - 1)),
    "i8": (pa.int8(), st.integers(-128, 127)),
    "f64": (pa.float64(), st.floats(allow_nan=True, allow_infinity=True)),
    "f32": (pa.float32(), st.floats(width=32, allow_nan=True, allow_infinity=True)),
    "str": (pa.string(), st.text(max_size=80)),
    "bin": (pa.binary(), st.binary(max_size=80)),
    "bool": (pa.bool_(), st.booleans()),
    "ts": (pa.timestamp("us"), st.integers(-2**62, 2**62)),
}


@st.composite
def _case(draw):
    kind = draw(st.sampled_from(sorted(_TYPES)))
    typ, values = _TYPES[kind]
    n = draw(st.integers(0, 60))
    col = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
    pool = [v for v in col if v is not None] or [draw(values)]
    lit = draw(st.one_of(st.sampled_from(pool), values))
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "null", "valid"]))
    return kind, typ, col, lit, op, draw(st.integers(1, 9)), draw(st.booleans())


def _expr(op, lit, typ, others):
    f = pc.field("v")
    scalar = pa.scalar(lit, typ)
    if op == "in":
        return f.isin(pa.array([lit] + others, typ))
    if op == "not in":
        return ~f.isin(pa.array([lit] + others, typ))
    if op == "null":
        return f.is_null()
    if op == "valid":
        return f.is_valid()
    return {"==": f == scalar, "!=": f != scalar, "<": f < scalar, "<=": f <= scalar,
            ">": f > scalar, ">=": f >= scalar}[op]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_case())
def test_filters_equal_pyarrow_and_statistics_bound_their_zones(tmp_path_factory, case):
    kind, typ, col, lit, op, zone, negate = case
    t = pa.table({"v": pa.array(col, typ), "row": pa.array(np.arange(len(col)))})
    path = str(tmp_path_factory.mktemp("p") / "t.lance")
    lancefile.write_table(t, path, statistics_zone_rows=zone, statistics_max_bound_bytes=4)
    others = [v for v in col[:3] if v is not None]
    expr = _expr(op, lit, typ, others)
    if negate:
        expr = ~expr
    got = lancefile.read_table(path, filters=expr)
    assert got.column("row").equals(t.filter(expr).column("row"))  # the same rows (NaN != NaN in equals)
    got = lancefile.read_table(path, columns=["row"], filters=expr)  # the filter's column not projected
    assert got.column("row").equals(t.filter(expr).column("row"))
    for a, b, every in lancefile.LanceFileReader(path)._file_statistics().filter_plan(expr, 0, len(col)):
        if every:  # zones read without evaluating the filter: every row must match
            assert t.slice(a, b - a).filter(expr).num_rows == b - a, (a, b)
    stats = lancefile.LanceFileReader(path).statistics(["v"]) if len(col) else {}
    if not stats:
        return
    table = stats["v"]
    column = t.column("v")
    if kind == "ts":  # bounds of empty zones are the int64 extremes, beyond Python's datetime
        table = table.set_column(table.schema.get_field_index("min"), "min", table.column("min").cast(pa.int64()))
        table = table.set_column(table.schema.get_field_index("max"), "max", table.column("max").cast(pa.int64()))
        column = column.cast(pa.int64())
    whole = lancefile.LanceFileReader(path)._file_statistics().file_stats(("v",))  # the file as one zone
    zones = table.to_pylist()
    zones.append({"row_offset": 0, "num_rows": len(col), "null_count": int(whole.null_count[0]),
                  "nan_count": int(whole.nan_count[0]), "min": whole.min.cast(table.schema.field("min").type)[0].as_py(),
                  "max": whole.max.cast(table.schema.field("max").type)[0].as_py()})
    for z in zones:
        part = column.slice(z["row_offset"], z["num_rows"])
        assert z["null_count"] == part.null_count
        values = [v for v in part.to_pylist() if v is not None]
        if kind in ("f64", "f32"):
            assert z["nan_count"] == sum(1 for v in values if math.isnan(v))
            values = [v for v in values if not math.isnan(v)]
        if not values:
            continue
        if z["min"] is not None:
            assert z["min"] <= min(values)
        if z["max"] is not None:
            assert z["max"] >= max(values)


def test_inspect_shows_statistics(tmp_path, capsys):
    from lancefile.cli import main

    t = pa.table({"x": list(range(10)), "f": [float("nan")] * 4 + [1.5, 2.5] * 3, "s": ["b", None] * 5})
    path = _write(tmp_path, t, statistics_zone_rows=4)
    assert main(["inspect", path]) == 0
    out = capsys.readouterr().out
    assert "x: 3 zone(s), 0 null; min 0, max 9" in out
    assert "f: 3 zone(s), 0 null, 4 NaN; min 1.5, max 2.5" in out  # the all-NaN zone has no bounds
    assert "s: 3 zone(s), 5 null; min 'b', max 'b'" in out
    off = _write(tmp_path, t, "off.lance", statistics=False)
    assert main(["inspect", off]) == 0
    assert "statistics: none" in capsys.readouterr().out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=20)), max_size=50), st.integers(1, 7),
       st.sampled_from([np.int32, np.int64]))
def test_minmax_kernel_matches_its_python_twin(values, zone, width):
    from lancefile.encodings.kernels import binary_minmax_rows, binary_minmax_rows_py

    data = np.frombuffer(b"".join(v or b"" for v in values), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(v or b"") for v in values])]).astype(width)
    valid = np.array([v is not None for v in values]) if any(v is None for v in values) else None
    starts = np.arange(0, len(values), zone, dtype=np.int64)
    ends = np.append(starts[1:], len(values)).astype(np.int64)
    got = binary_minmax_rows(offsets, data, valid, starts, ends)
    want = binary_minmax_rows_py(offsets, data, valid, starts, ends)
    for g, w in zip(got, want):  # ties may pick another row: compare the values
        assert [values[i] if i >= 0 else None for i in g] == [values[i] if i >= 0 else None for i in w]


def test_statistics_and_filters_for_every_ordered_type(tmp_path):
    import datetime as dt
    import decimal

    n = 40
    t = pa.table({
        "dec": pa.array([decimal.Decimal(i) / 4 for i in range(n)], pa.decimal128(10, 2)),
        "date": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(n)], pa.date32()),
        "time": pa.array([dt.time(0, 0, i) for i in range(n)], pa.time64("us")),
        "dur": pa.array(list(range(n)), pa.duration("ms")),
        "ts": pa.array(list(range(n)), pa.timestamp("us", tz="UTC")),
        "dict": pa.array([f"v{i % 7}" for i in range(n)]).dictionary_encode(),
        "lstr": pa.array([f"w{i:03d}" for i in range(n)], pa.large_string()),
        "fsb": pa.array([bytes([i, 255 - i]) for i in range(n)], pa.binary(2)),
        "h": pa.array(np.arange(n, dtype=np.float16)),
    })
    path = _write(tmp_path, t, statistics_zone_rows=16)
    stats = lancefile.LanceFileReader(path).statistics()
    assert set(stats) == set(t.column_names)
    for name in t.column_names:
        col = t.column(name)
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        for z in stats[name].to_pylist():
            values = [v for v in col.slice(z["row_offset"], z["num_rows"]).to_pylist() if v is not None]
            assert z["min"] <= min(values) and z["max"] >= max(values), name
    cases = [pc.field("dec") > decimal.Decimal("7.5"), pc.field("date") < pa.scalar(dt.date(2020, 1, 5)),
             pc.field("dur") >= pa.scalar(30, pa.duration("ms")), pc.field("dict") == "v3",
             pc.field("lstr") >= "w035", pc.field("fsb") == pa.scalar(bytes([3, 252]), pa.binary(2))]
    for f in cases:
        assert lancefile.read_table(path, filters=f).equals(t.filter(f)), f
    with pytest.raises(lancefile.InvalidInputError, match="halffloat"):  # pyarrow cannot compare float16
        lancefile.read_table(path, filters=pc.field("h") > pa.scalar(np.float16(36)))


@pytest.mark.parametrize("stored, asked", [(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0)])
@pytest.mark.parametrize("typ", [pa.float32(), pa.float64()])
def test_is_in_tells_signed_zeros_apart_as_arrow_does(tmp_path, stored, asked, typ):
    """Arrow's is_in compares floats by their bits (-0.0 is not in {0.0}), where a zone's
    min == max does not: a zone of zeros is never taken as matching whole (found by the
    property test above: it returned a 0.0 row for is_in {-0.0})."""
    t = pa.table({"v": pa.array([None, None, stored, stored], typ), "row": pa.array([0, 1, 2, 3])})
    path = str(tmp_path / "z.lance")
    lancefile.write_table(t, path, statistics_zone_rows=1)
    for expr in (pc.field("v").isin(pa.array([asked], typ)), ~pc.field("v").isin(pa.array([asked], typ))):
        assert lancefile.read_table(path, filters=expr).column("row").equals(t.filter(expr).column("row"))


def test_chains_of_thousands_of_ors_and_ands(tmp_path):
    """An Expression built by folding thousands of comparisons nests thousands deep: it is taken
    apart without recursion (and/or chains become one n-ary node), still prunes zones, and filters
    the same as Arrow (a recursive walk overflowed at ~400 terms)."""
    import functools
    import operator

    path = str(tmp_path / "chain.lance")
    t = pa.table({"a": np.arange(20_000)})
    lancefile.write_table(t, path, statistics_zone_rows=1000)
    ors = functools.reduce(operator.or_, [pc.field("a") == i for i in range(5000, 8000)])
    assert lancefile.read_table(path, filters=ors).equals(t.filter(ors))
    assert lancefile.LanceFileReader(path).matching_ranges(ors) == [(5000, 8000)]
    ands = functools.reduce(operator.and_, [pc.field("a") != i for i in range(3000)])
    assert lancefile.read_table(path, filters=ands).equals(t.filter(ands))

    deep = pc.field("a") > 5
    for _ in range(300):
        deep = ~deep
    with pytest.raises(lancefile.InvalidInputError, match="302 levels deep"):
        lancefile.read_table(path, filters=deep)
    assert lancefile.LanceFileReader(path).matching_ranges(deep) == [(0, 20_000)]  # no pruning, no recursion
