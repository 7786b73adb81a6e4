"""Writing through the Spark source: save modes, file caps, options, failures and commits.

Tests of the file-per-task layout say ``format=files``; dataset writes (the default) are
tested in ``test_spark_datasets.py``.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lancefile
import lancefile.spark
from lancefile.errors import InvalidInputError, LanceIOError
from tests.conftest import reference_read
from tests.spark.conftest import all_entries, lance_files


def _ids(spark, path) -> list[int]:
    return sorted(r.id for r in spark.read.format("lance").load(path).select("id").collect())


def test_append_and_overwrite(spark, out):
    spark.range(10).repartition(2).write.format("lance").mode("append").option("format", "files").save(out)
    first = lance_files(out)
    assert len(first) == 2
    spark.range(10, 15).coalesce(1).write.format("lance").mode("append").save(out)  # a files directory stays one
    assert _ids(spark, out) == list(range(15))
    assert set(first) < set(lance_files(out))

    spark.range(100, 103).coalesce(1).write.format("lance").mode("overwrite").save(out)
    assert _ids(spark, out) == [100, 101, 102]
    assert not set(first) & set(lance_files(out))
    assert all_entries(out) == lance_files(out)  # no staging left behind


def test_save_helper_modes(spark, out):
    df = spark.range(4).coalesce(1)
    lancefile.spark.save(df, out)  # default mode "error": the path is new
    assert _ids(spark, out) == [0, 1, 2, 3]
    with pytest.raises(LanceIOError, match=r"already exists"):
        lancefile.spark.save(df, out, mode="errorifexists")
    lancefile.spark.save(spark.range(50, 51), out, mode="ignore")
    assert _ids(spark, out) == [0, 1, 2, 3]
    lancefile.spark.save(spark.range(50, 51), out, mode="append")
    assert _ids(spark, out) == [0, 1, 2, 3, 50]
    lancefile.spark.save(spark.range(7, 8), out, mode="overwrite", maxRowsPerFile=1)
    assert _ids(spark, out) == [7]
    with pytest.raises(InvalidInputError, match=r"unknown save mode 'upsert'"):
        lancefile.spark.save(df, out, mode="upsert")
    new = out + "-ignored"
    lancefile.spark.save(df, new, mode="ignore")  # ignore on a new path writes
    assert _ids(spark, new) == [0, 1, 2, 3]


def test_spark_refuses_error_and_ignore_modes_itself(spark, out):
    with pytest.raises(Exception, match=r"UNSUPPORTED_DATA_SOURCE_SAVE_MODE.*ErrorIfExists"):
        spark.range(3).write.format("lance").mode("error").save(out)


def test_rows_and_bytes_per_file(spark, out):
    (spark.range(1000).coalesce(1).write.format("lance").mode("append").option("format", "files")
       .option("maxRowsPerFile", "300").save(out))
    files = lance_files(out)
    assert [lancefile.LanceFileReader(os.path.join(out, f)).num_rows() for f in files] == [300, 300, 300, 100]

    by_bytes = out + "-bytes"
    df = spark.sql("select id, repeat('x', 1000) as s from range(2000)").coalesce(1)
    df.write.format("lance").mode("append").option("format", "files").option("maxBytesPerFile", str(400_000)).save(by_bytes)
    rows = [lancefile.LanceFileReader(os.path.join(by_bytes, f)).num_rows() for f in lance_files(by_bytes)]
    assert sum(rows) == 2000 and len(rows) >= 5 and max(rows) <= 400


def test_empty_dataframe_leaves_a_readable_schema(spark, out):
    (spark.sql("select id, cast(id as string) s from range(0)").write.format("lance").mode("append")
       .option("format", "files").save(out))
    assert len(lance_files(out)) == 1
    back = spark.read.format("lance").load(out)
    assert back.count() == 0 and back.columns == ["id", "s"]


def test_vectors_and_field_metadata(spark, out):
    df = spark.sql("select id, array(cast(id as float), 1.0f, 2.0f) as emb, concat(repeat('ab', 50), id) as text from range(300)")
    (df.coalesce(1).write.format("lance").mode("append").option("format", "files")
       .option("vectorColumns", "emb=3")
       .option("lance-encoding:compression", "text=zstd")
       .option("version", "2.0").option("maxPageBytes", str(1 << 20))
       .save(out))
    (f,) = lance_files(out)
    path = os.path.join(out, f)
    reader = lancefile.LanceFileReader(path)
    emb = reader.schema.field("emb").type
    assert (emb.list_size, emb.value_type) == (3, pa.float32())
    assert reader.schema.field("text").metadata == {b"lance-encoding:compression": b"zstd"}
    encodings = [p.encoding for c in reader.metadata().columns for p in c.pages]
    assert any("zstd" in str(e).lower() for e in encodings)
    assert reference_read(path).column("emb").to_pylist()[1] == [1.0, 1.0, 2.0]
    assert spark.read.format("lance").load(out).orderBy("id").first().emb == [0.0, 1.0, 2.0]


def test_vector_length_mismatch_names_the_column(spark, out):
    df = spark.sql("select id, if(id = 5, array(1.0f), array(1.0f, 2.0f)) as emb from range(10)").coalesce(1)
    with pytest.raises(Exception, match=r"vector column 'emb': a row has 1 values, expected 2"):
        df.write.format("lance").mode("append").option("vectorColumns", "emb=2").save(out)
    assert lance_files(out) == [] and not os.path.exists(os.path.join(out, "_versions"))


@pytest.mark.parametrize("option, value, message", [
    ("vectorColumns", "nope=4", r"column 'nope' is not in the data"),
    ("vectorColumns", "id=4", r"must be an array of numbers"),
    ("version", "9.9", r"(?i)version"),
    ("maxRowsPerFile", "lots", r"maxrowsperfile"),
    ("lance-encoding:compression", "zstd", r"column=value"),
    ("compresion", "zstd", r"unknown write option 'compresion'"),
    ("format", "parquet", r"option 'format' must be one of dataset, files"),
    ("maxPageBytes", "65536", r"maxPageBytes applies to format=files"),
])
def test_bad_write_options_are_named(spark, out, option, value, message):
    with pytest.raises(Exception, match=message):
        spark.range(3).write.format("lance").option(option, value).mode("append").save(out)
    assert lance_files(out) == [] if os.path.exists(out) else True


def _boom_after(limit: int, always: bool):
    """A UDF failing at row ``limit`` (on the first attempt only, unless ``always``)."""
    from pyspark import TaskContext

    def f(i):
        ctx = TaskContext.get()
        if i == limit and (always or ctx.attemptNumber() == 0):
            raise RuntimeError(f"planned failure at row {i}")
        return i

    return f


def _eventually(check, timeout: float = 10.0) -> None:
    """Spark may call abort() while a doomed task is still being killed: give it a moment."""
    import time

    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)


def test_a_failing_task_leaves_no_visible_file(spark, out):
    from pyspark.sql import functions as fn
    from pyspark.sql.types import LongType

    spark.range(3).coalesce(1).write.format("lance").mode("append").option("format", "files").save(out)  # must survive
    before = lance_files(out)
    boom = fn.udf(_boom_after(1500, always=True), LongType())
    df = spark.range(0, 2000, numPartitions=2).select(boom("id").alias("id"))
    for mode in ("append", "overwrite"):
        with pytest.raises(Exception, match=r"planned failure at row 1500"):
            df.write.format("lance").mode(mode).option("maxRowsPerFile", "100").save(out)
        assert lance_files(out) == before
        _eventually(lambda: all_entries(out) == before)  # staging removed by abort
    assert _ids(spark, out) == [0, 1, 2]


def test_commit_removes_what_failed_attempts_left(spark, out):
    """The first attempt of one task fails after writing files; the retry succeeds."""
    from pyspark.sql import functions as fn
    from pyspark.sql.types import LongType

    boom = fn.udf(_boom_after(1500, always=False), LongType())
    df = spark.range(0, 2000, numPartitions=2).select(boom("id").alias("id"))
    df.write.format("lance").mode("append").option("format", "files").option("maxRowsPerFile", "100").save(out)
    assert _ids(spark, out) == list(range(2000))
    assert len(lance_files(out)) == 20
    assert all_entries(out) == lance_files(out)  # the failed attempt's 5 staged files are gone


def test_a_dotted_column_name_is_refused_before_any_task(spark, out):
    with pytest.raises(Exception, match=r"column 'a\.b': Lance column names cannot contain '\.'"):
        spark.sql("select 1 as `a.b`").write.format("lance").mode("append").save(out)
    assert all_entries(out) == [] if os.path.exists(out) else True


def test_writing_to_a_file_path_is_refused(spark, tmp_path):
    target = tmp_path / "a.lance"
    lancefile.write_table(pa.table({"id": [1]}), str(target))
    with pytest.raises(Exception, match=r"it is a file"):
        spark.range(1).write.format("lance").mode("append").save(str(target))
    assert lancefile.read_table(str(target)).num_rows == 1
