"""The Spark ↔ Lance type mapping: round trips through Spark, and files exchanged with pylance."""

from __future__ import annotations

import datetime
import decimal
import os

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import types as T

import lancefile
from lancefile.errors import UnsupportedTypeError
from lancefile.spark.types import check_writable, conform_batch, spark_type_for, target_arrow_schema
from tests.conftest import assert_tables_equal, reference_read, reference_write
from tests.spark.conftest import lance_files

# Every Spark type the writer stores, with nulls where Spark allows them (the NULL-if
# makes the column nullable). Structs have no null rows: Lance 2.0 cannot store them.
SPARK_COLUMNS = {
    "b": "cast(id - 50 as tinyint)",
    "s": "cast(id * 300 as smallint)",
    "i": "if(id % 7 = 0, null, cast(id * 100000 as int))",
    "l": "id * 10000000000",
    "f": "cast(case id % 5 when 0 then 'NaN' when 1 then '-0.0' when 2 then 'Infinity' else id / 3 end as float)",
    "d": "if(id % 9 = 0, null, case id % 4 when 0 then double('NaN') when 1 then -0.0 else id / 7 end)",
    "dec": "if(id % 6 = 0, null, cast(id * 1.25 as decimal(10,2)))",
    "dec38": "cast(id as decimal(38,18)) / 3",
    "str": "if(id % 8 = 0, null, concat('räd-', id, repeat('x', cast(id % 4 as int))))",
    "empty": "''",
    "vc": "cast(concat('v', id) as varchar(10))",
    "bin": "if(id % 5 = 0, null, cast(concat('b', id) as binary))",
    "bo": "if(id % 3 = 0, null, id % 2 = 0)",
    "dt": "if(id % 10 = 0, null, date_add(date'1969-12-25', cast(id as int)))",
    "ts": "if(id % 11 = 0, null, timestamp_micros(id * 1000003 - 5000000))",
    "tsn": "cast(timestamp_micros(id * 86400000123) as timestamp_ntz)",
    "dti": "if(id % 4 = 0, null, make_dt_interval(cast(id as int), 1, 2, id / 1000))",
    "nul": "null",
    "arr": "case id % 4 when 0 then null when 1 then array() else array(id, null, id + 1) end",
    "arr_s": "array(concat('a', id), null)",
    "arr_arr": "array(array(cast(id as int)), array(), null)",
    "st": "named_struct('x', id, 'y', if(id % 2 = 0, null, cast(id as string)), 'z', named_struct('w', id / 2))",
    "arr_st": "if(id % 3 = 0, null, array(named_struct('a', id, 'b', concat('q', id))))",
}


def source_df(spark, n: int = 100):
    cols = ", ".join(f"{expr} as {name}" for name, expr in SPARK_COLUMNS.items())
    return spark.sql(f"select id, {cols} from range({n})").repartition(3)


def test_every_spark_type_round_trips(spark, out):
    df = source_df(spark)
    df.write.format("lance").mode("append").save(out)
    back = spark.read.format("lance").load(out)
    for want, got in zip(df.schema.fields, back.schema.fields):
        assert got.name == want.name
        # char/varchar are stored as strings, as Spark's own Parquet source does
        expect = T.StringType() if isinstance(want.dataType, (T.CharType, T.VarcharType)) else want.dataType
        assert got.dataType == expect, want.name
    assert back.count() == 100
    # through Arrow, which compares NaN and -0.0 bit for bit (Rows would say nan != nan)
    assert_tables_equal(back.toArrow().sort_by("id"), df.toArrow().sort_by("id"))


def test_spark_files_read_equal_by_pylance_and_lancefile(spark, out):
    df = source_df(spark, 60)
    df.write.format("lance").mode("append").option("maxRowsPerFile", "25").save(out)
    files = lance_files(out)
    assert len(files) >= 3
    ours = pa.concat_tables([lancefile.read_table(os.path.join(out, f)) for f in files])
    theirs = pa.concat_tables([reference_read(os.path.join(out, f)) for f in files])
    assert_tables_equal(ours, theirs)
    expected = df.toArrow()
    assert_tables_equal(ours.sort_by("id"), expected.sort_by("id").cast(ours.schema), values_only=True)


def _reference_table(n: int = 500) -> pa.Table:
    rng = np.random.default_rng(3)
    mask = rng.random(n) < 0.2
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "u8": pa.array(rng.integers(0, 255, n, dtype=np.uint8)),
        "u16": pa.array(rng.integers(0, 65535, n, dtype=np.uint16)),
        "u32": pa.array(rng.integers(0, 2**32 - 1, n, dtype=np.uint32)),
        "u64": pa.array(rng.integers(2**63, 2**64 - 1, n, dtype=np.uint64), mask=mask),
        "f16": pa.array(rng.random(n).astype(np.float16)),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=mask),
        "large_str": pa.array([f"s{i}" for i in range(n)], pa.large_string()),
        "cat": pa.array([["red", "green", None][i % 3] for i in range(n)]).dictionary_encode(),
        "fsb": pa.array([bytes([i % 256] * 4) for i in range(n)], pa.binary(4)),
        "ts_ns": pa.array(rng.integers(0, 2**60, n), pa.timestamp("ns")),
        "ts_ms_tz": pa.array(rng.integers(0, 2**40, n), pa.timestamp("ms", tz="Europe/Paris")),
        "date64": pa.array(rng.integers(0, 2**40, n) // 86400000 * 86400000, pa.date64()),
        "t32": pa.array(rng.integers(0, 86400, n, dtype=np.int32), pa.time32("s")),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 8).astype(np.float32)), 8),
        "nested": pa.array([[{"a": i, "b": [float(i)]}] for i in range(n)],
                           pa.list_(pa.struct([("a", pa.int64()), ("b", pa.list_(pa.float64()))]))),
        "big_dec": pa.array([(decimal.Decimal(i) / 7).quantize(decimal.Decimal("1e-10")) for i in range(n)], pa.decimal128(30, 10)),
    })


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_pylance_files_read_by_spark(spark, tmp_path, version):
    table = _reference_table()
    if version == "2.2":  # maps and null struct rows need 2.2 / 2.1
        table = table.append_column("m", pa.array([None if i % 9 == 0 else [("k", i), ("j", None)]
                                                   for i in range(table.num_rows)], pa.map_(pa.string(), pa.int64())))
        table = table.append_column("st", pa.array([None if i % 4 == 0 else {"a": i} for i in range(table.num_rows)],
                                                    pa.struct([("a", pa.int32())])))
    for i, part in enumerate((table.slice(0, 200), table.slice(200))):
        reference_write(part, tmp_path / f"part-{i}.lance", version)
    df = spark.read.format("lance").load(str(tmp_path))
    expect_types = {
        "u8": T.ShortType(), "u16": T.IntegerType(), "u32": T.LongType(), "u64": T.DecimalType(20, 0),
        "f16": T.FloatType(), "large_str": T.StringType(), "cat": T.StringType(), "fsb": T.BinaryType(),
        "ts_ns": T.TimestampNTZType(), "ts_ms_tz": T.TimestampType(), "date64": T.DateType(),
        "t32": T.TimeType(6), "emb": T.ArrayType(T.FloatType(), True), "big_dec": T.DecimalType(30, 10),
    }
    for name, typ in expect_types.items():
        assert df.schema[name].dataType == typ, name
    got = df.toArrow().sort_by("id")
    want = table.cast(pa.schema([pa.field(f.name, t.type) for f, t in zip(table.schema, target_arrow_schema(df.schema))]),
                      safe=False)
    assert got.column("u64").to_pylist() == [None if v is None else decimal.Decimal(v) for v in table.column("u64").to_pylist()]
    assert got.column("ts_ns").to_pylist() == want.column("ts_ns").to_pylist()  # truncated to µs, like Spark's Parquet
    assert got.column("ts_ms_tz").to_pylist() == want.column("ts_ms_tz").to_pylist()
    assert_tables_equal(got, want, values_only=True)


@pytest.mark.parametrize("arrow_type, spark_type", [
    (pa.int8(), T.ByteType()),
    (pa.uint64(), T.DecimalType(20, 0)),
    (pa.string_view(), T.StringType()),
    (pa.large_binary(), T.BinaryType()),
    (pa.timestamp("s", tz="UTC"), T.TimestampType()),
    (pa.timestamp("ns"), T.TimestampNTZType()),
    (pa.time64("ns"), T.TimeType(6)),
    (pa.duration("ms"), T.DayTimeIntervalType(0, 3)),
    (pa.decimal256(38, 2), T.DecimalType(38, 2)),
    (pa.list_(pa.field("x", pa.int32(), nullable=False), 3), T.ArrayType(T.IntegerType(), False)),
    (pa.large_list(pa.string()), T.ArrayType(T.StringType(), True)),
    (pa.map_(pa.string(), pa.int64()), T.MapType(T.StringType(), T.LongType(), True)),
    (pa.dictionary(pa.int8(), pa.float64()), T.DoubleType()),
    (pa.null(), T.NullType()),
])
def test_arrow_to_spark_mapping(arrow_type, spark_type):
    assert spark_type_for(arrow_type, "c") == spark_type


@pytest.mark.parametrize("arrow_type", [
    pa.decimal256(40, 0),
    pa.month_day_nano_interval(),
    pa.dense_union([pa.field("a", pa.int32())]),
    pa.struct([("ok", pa.int32()), ("bad", pa.decimal256(50, 1))]),
])
def test_unmappable_arrow_types_name_the_column(arrow_type):
    with pytest.raises(UnsupportedTypeError, match=r"column 'c"):
        spark_type_for(arrow_type, "c")


@pytest.mark.parametrize("ddl, culprit", [
    ("m map<string,int>", "'m'"),
    ("a array<map<string,int>>", "'a.element'"),
    ("ym interval year to month", "'ym'"),
    ("s struct<x: int, v: variant>", "'s.v'"),
])
def test_unwritable_spark_types_name_the_column(spark, ddl, culprit):
    # (parsing a DDL string needs a running Spark: the fixture, not another test, starts it)
    schema = T._parse_datatype_string(f"id bigint, {ddl}")
    with pytest.raises(UnsupportedTypeError, match=culprit):
        check_writable(schema, "2.0")


def test_maps_are_writable_at_the_default_version(spark):
    check_writable(T._parse_datatype_string("id bigint, m map<string,int>, a array<map<string,int>>"))


def test_writing_a_map_column_at_2_0_fails_before_any_file(spark, out):
    df = spark.sql("select id, map('k', id) as tags from range(3)")
    with pytest.raises(Exception, match=r"column .tags.*2\.2"):
        df.write.format("lance").option("version", "2.0").mode("append").save(out)
    assert lance_files(out) == [] if os.path.exists(out) else True


def test_null_struct_rows_at_2_0_give_a_clear_error(spark, out):
    df = spark.sql("select id, if(id = 2, null, named_struct('x', id)) as st from range(4)").coalesce(1)
    with pytest.raises(Exception, match=r"(?s)struct validity.*st|st.*struct validity"):
        df.write.format("lance").option("version", "2.0").mode("append").save(out)
    assert lance_files(out) == []


def test_maps_and_null_struct_rows_round_trip_at_the_default_version(spark, out):
    import lance.file

    df = spark.sql("select id, map('k', id) as tags, if(id = 2, null, named_struct('x', id)) as st "
                   "from range(4)").coalesce(1)
    df.write.format("lance").mode("append").save(out)
    files = lance_files(out)
    assert files and all(lance.file.LanceFileReader(os.path.join(out, f)).metadata().minor_version == 2 for f in files)
    rows = sorted(spark.read.format("lance").load(out).collect(), key=lambda r: r.id)
    assert [r.st.x if r.st is not None else None for r in rows] == [0, 1, None, 3]
    assert [dict(r.tags) for r in rows] == [{"k": i} for i in range(4)]


def test_conform_batch_gives_sparks_exact_arrow_schema():
    batch = pa.record_batch({
        "emb": pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0, 3.0, 4.0], pa.float32()), 2),
        "cat": pa.array(["a", None]).dictionary_encode(),
        "ts": pa.array([1, 2], pa.timestamp("ns", tz="Asia/Tokyo")),
        "u": pa.array([1, 2**64 - 1], pa.uint64()),
    })
    spark_schema = T.StructType([T.StructField(f.name, spark_type_for(f.type, f.name)) for f in batch.schema])
    target = target_arrow_schema(spark_schema)
    got = conform_batch(batch, target)
    assert got.schema.equals(target)
    assert got.column("emb").to_pylist() == [[1.0, 2.0], [3.0, 4.0]]
    assert got.column("cat").to_pylist() == ["a", None]
    assert got.column("u").to_pylist() == [decimal.Decimal(1), decimal.Decimal(2**64 - 1)]
    assert got.column("ts").to_pylist()[0] == datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def test_null_vectors_become_null_fixed_size_lists_without_reading_past_the_values():
    """A null row of a vector column holds no values in Spark's list but list_size of them in a
    fixed_size_list: pyarrow's cast read them past the end of the values buffer (a segfault of
    the Python worker when Spark's buffer is a null pointer). Run in a child process: a crash
    must fail the test, not the test run."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import pyarrow as pa
        from lancefile.spark.types import to_vectors
        typ = pa.list_(pa.field("item", pa.float32()), 2)
        # Spark's all-null batch: a values buffer that is a null pointer of size 0
        values = pa.Array.from_buffers(pa.float32(), 0, [None, pa.foreign_buffer(0, 0)])
        arr = pa.ListArray.from_buffers(pa.list_(pa.float32()), 1, [pa.py_buffer(b"\\x00"), pa.py_buffer(bytes(8))],
                                        children=[values], null_count=1)
        out = to_vectors(arr, typ, "emb")
        out.validate(full=True)
        print(out.to_pylist())
        mixed = pa.array([[9.0, 9.0], [1.0, 2.0], None, [3.0, None], None], pa.list_(pa.float32())).slice(1)
        out = to_vectors(mixed, typ, "emb")
        out.validate(full=True)
        print(out.to_pylist(), out.type)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["[None]", "[[1.0, 2.0], None, [3.0, None], None] fixed_size_list<item: float>[2]"]


def test_column_names_reach_through_lists_and_fold_case():
    """option('columns', ...) crashed (AttributeError) on any name that is or passes a list."""
    from lancefile.spark.files import resolve_name

    schema = pa.schema([("id", pa.int64()), ("lst", pa.list_(pa.struct([("a", pa.int64())]))),
                        ("St", pa.struct([("l", pa.list_(pa.int64()))]))])
    assert [resolve_name(n, schema) for n in ["LST", "st.l", "lst.item.a", "LST.ITEM.A", "st.L.item"]] == \
        ["lst", "St.l", "lst.item.a", "lst.item.a", "St.l.item"]
    assert resolve_name("lst.a", schema) == "lst.a"  # no such field: the reader names what the list has


def test_a_pushed_in_on_floats_matches_both_zeros():
    """Spark says -0.0 = 0.0; Arrow's is_in told them apart (f IN (0.0) lost the -0.0 rows)."""
    from pyspark.sql.datasource import In, Not

    from lancefile.spark.filters import evaluate, pruning_expression

    b = pa.record_batch({"f": pa.array([-0.0, 0.0, 1.0, None, float("nan")]),
                         "g": pa.array([-0.0, 0.0, 1.0, None, 2.0], pa.float32())})
    assert evaluate([In(("f",), (0.0, 5.0))], b).column("f").to_pylist() == [-0.0, 0.0]
    assert evaluate([In(("f",), (-0.0,))], b).column("f").to_pylist() == [-0.0, 0.0]
    assert evaluate([In(("g",), (0.0,))], b).column("g").to_pylist() == [-0.0, 0.0]
    assert evaluate([Not(In(("f",), (0.0, 5.0)))], b).column("f").to_pylist()[:1] == [1.0]
    spark_schema = T.StructType([T.StructField("f", T.DoubleType()), T.StructField("g", T.FloatType())])
    pruning = pruning_expression([In(("f",), (0.0,))], spark_schema)
    assert pa.Table.from_batches([b]).filter(pruning).column("f").to_pylist() == [-0.0, 0.0]


def test_an_append_out_of_a_float16_range_is_refused():
    from lancefile.errors import SchemaMismatchError
    from lancefile.spark.datasets import conform_for_write

    schema = pa.schema([pa.field("h", pa.float16())])
    ok = conform_for_write(pa.record_batch({"h": pa.array([1.5, None, float("inf"), float("nan")], pa.float32())}),
                           schema, [0])
    assert ok.column(0).type == pa.float16() and ok.column(0).to_pylist()[:3] == [1.5, None, float("inf")]
    with pytest.raises(SchemaMismatchError, match="out of its range"):  # 70000.0 became inf
        conform_for_write(pa.record_batch({"h": pa.array([70000.0], pa.float32())}), schema, [0])


def test_several_paths_are_refused_by_name():
    from lancefile.spark.options import _path

    assert _path({"paths": '["/tmp/a"]'}) == "/tmp/a"
    with pytest.raises(lancefile.InvalidInputError, match="reads one path .* not 2: /tmp/a, /tmp/b"):
        _path({"paths": '["/tmp/a", "/tmp/b"]'})
