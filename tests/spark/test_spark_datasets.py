"""The Spark source on Lance datasets: pylance's answers on read, one pylance-readable version per write job.

Datasets are small (hundreds of rows, several fragments) so the whole module takes a few
Spark jobs' worth of time; pylance 14.0.2 (``import lance``) is the oracle.
"""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

import lancefile
from lancefile.errors import LanceIOError, SchemaMismatchError
from lancefile.spark.datasets import dataset_writer
from lancefile.spark.options import WriteOptions

lance = pytest.importorskip("lance")


def _table(n: int, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "s": pa.array([f"s{i}" for i in ids]),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array([float(i + k) for i in ids for k in range(4)], pa.float32()), 4),
    })


def _rows(df) -> list[tuple]:
    """(id, s) of every row, sorted: what both readers must agree on."""
    t = df.select("id", "s").toArrow() if hasattr(df, "toArrow") else df
    return sorted(zip(t.column("id").to_pylist(), t.column("s").to_pylist()))


def _pylance_rows(path: str, version: int | None = None) -> list[tuple]:
    return _rows(lance.dataset(path, version=version).to_table(columns=["id", "s"]))


def _read(spark, path: str, **options):
    r = spark.read.format("lance")
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load(path)


def _data_files(path: str) -> set[str]:
    return set(os.listdir(os.path.join(path, "data")))


def _referenced(path: str) -> set[str]:
    """Data files some version of the dataset references."""
    names = set()
    for v in lance.dataset(path).versions():
        ds = lancefile.dataset(path, version=v["version"])
        names.update(os.path.basename(p) for f in ds.get_fragments() for p in f.data_files())
    return names


@pytest.fixture(scope="module")
def pylance_datasets(tmp_path_factory):
    """The three datasets the Spark source used to read wrong (issue 11), made by pylance."""
    root = tmp_path_factory.mktemp("pylance-datasets")
    deleted, overwritten, compacted = (str(root / n) for n in ("deleted", "overwritten", "compacted"))
    lance.write_dataset(_table(1000), deleted, max_rows_per_file=300)
    lance.dataset(deleted).delete("id < 100")                                      # v2: 900 live rows
    lance.write_dataset(_table(1000), overwritten, max_rows_per_file=300)
    lance.write_dataset(_table(300, 5000), overwritten, mode="overwrite")          # v2: 300 rows
    lance.write_dataset(_table(500), compacted, max_rows_per_file=100)
    lance.write_dataset(_table(500, 500), compacted, mode="append", max_rows_per_file=100)
    lance.dataset(compacted).delete("id % 10 = 3")
    lance.dataset(compacted).optimize.compact_files()                              # v4: 900 rows, 1 fragment
    return {"deleted": deleted, "overwritten": overwritten, "compacted": compacted}


def test_pylance_datasets_read_as_pylance_reads_them(spark, pylance_datasets):
    for name, path in pylance_datasets.items():
        df = _read(spark, path)
        assert df.count() == lance.dataset(path).count_rows(), name
        assert _rows(df) == _pylance_rows(path), name
    assert _read(spark, pylance_datasets["deleted"]).count() == 900
    assert _read(spark, pylance_datasets["overwritten"]).count() == 300
    assert _read(spark, pylance_datasets["compacted"]).count() == 900
    assert _read(spark, pylance_datasets["deleted"]).schema.simpleString() == "struct<id:bigint,s:string,emb:array<float>>"


def test_time_travel_splits_projection_and_filters(spark, pylance_datasets):
    deleted = pylance_datasets["deleted"]
    for path in (deleted, pylance_datasets["overwritten"]):
        old = _read(spark, path, version=1)
        assert old.count() == 1000 and _rows(old) == _pylance_rows(path, version=1)
    with pytest.raises(Exception, match=r"has no version 7"):
        _read(spark, deleted, version=7).count()
    # fragments of 300, 300, 300, 100 physical rows, in ranges of 128 rows; the deleted rows
    # (ids 0..99, all in fragment 0) are dropped within the ranges
    df = _read(spark, deleted, splitRows=128)
    assert df.rdd.getNumPartitions() == 3 + 3 + 3 + 1
    assert sorted(df.rdd.mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect()) == \
        sorted([28, 128, 44] + [128, 128, 44] * 2 + [100])
    proj = _read(spark, deleted, columns="emb, id", pushFilters="true").where("id < 150 AND id >= 98")
    assert proj.columns == ["emb", "id"]
    rows = sorted(proj.collect(), key=lambda r: r.id)
    assert [r.id for r in rows] == list(range(100, 150)) and rows[0].emb == [100.0, 101.0, 102.0, 103.0]
    narrow = spark.read.format("lance").schema("s string").load(deleted)
    assert narrow.count() == 900 and narrow.columns == ["s"]


def test_neither_a_dataset_nor_lance_files(spark, tmp_path, pylance_datasets):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(Exception, match=r"neither a Lance dataset .* nor a directory of Lance files"):
        _read(spark, str(tmp_path)).count()
    # a dataset inside a directory, or its data/, is not read as loose files (that was the silent bug)
    parent = os.path.dirname(pylance_datasets["deleted"])
    for where in (parent, os.path.join(pylance_datasets["deleted"], "data")):
        with pytest.raises(Exception, match=r"is a Lance dataset, met while listing"):
            _read(spark, where).count()
    lancefile.write_table(pa.table({"x": [1]}), str(tmp_path / "a.lance"))
    with pytest.raises(Exception, match=r"option 'version' picks a version of a Lance dataset"):
        _read(spark, str(tmp_path), version=1).count()


def test_spark_append_and_overwrite_into_a_pylance_dataset(spark, tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(_table(100), path, max_rows_per_file=60)
    more = spark.sql("select id, concat('s', id) as s, transform(sequence(0, 3), k -> cast(id + k as float)) as emb "
                     "from range(100, 150)").repartition(2)
    more.write.format("lance").mode("append").save(path)   # emb becomes the dataset's fixed_size_list<float, 4>
    ds = lance.dataset(path)
    assert ds.version == 2 and ds.count_rows() == 150
    assert _pylance_rows(path) == [(i, f"s{i}") for i in range(150)]
    assert ds.to_table().sort_by("id").equals(_table(150).cast(ds.schema))
    assert lance.dataset(path, version=1).to_table().equals(_table(100).cast(ds.schema))
    assert _read(spark, path).count() == 150

    # columns in another order, by name; a wrong schema is refused before anything is written
    spark.sql("select concat('s', id) as s, array(1f, 2f, 3f, 4f) as emb, id from range(150, 160)") \
        .coalesce(1).write.format("lance").mode("append").save(path)
    for ddl, message in (("id, cast(id as string) as s", r"the dataset has column 'emb', the data does not"),
                         ("cast(id as string) as id, cast(id as string) as s, array(1f, 2f, 3f, 4f) as emb",
                          r"cannot append column 'id' of type string")):
        with pytest.raises(Exception, match=message):
            spark.sql(f"select {ddl} from range(3)").write.format("lance").mode("append").save(path)
    with pytest.raises(Exception, match=r"vector column 'emb': a row has 3 values, expected 4"):
        spark.sql("select id, 'x' as s, array(1f, 2f, 3f) as emb from range(3)") \
            .write.format("lance").mode("append").save(path)
    assert lance.dataset(path).version == 3 and lance.dataset(path).count_rows() == 160

    spark.sql("select id * 10 as id, 'new' as label from range(20)").coalesce(1) \
        .write.format("lance").mode("overwrite").save(path)
    ds = lance.dataset(path)
    assert ds.version == 4 and ds.schema.names == ["id", "label"] and ds.count_rows() == 20
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(0, 200, 10))
    assert [lance.dataset(path, version=v).count_rows() for v in (1, 2, 3)] == [100, 150, 160]
    assert _read(spark, path, version=2).count() == 150 and _read(spark, path).columns == ["id", "label"]
    lance.write_dataset(pa.table({"id": pa.array([7], pa.int64()), "label": ["pylance"]}), path, mode="append")
    assert lancefile.dataset(path).count_rows() == 21 and _data_files(path) == _referenced(path)


def test_a_new_dataset_with_options_and_an_empty_job(spark, tmp_path):
    path = str(tmp_path / "new")  # does not exist: append creates the dataset
    df = spark.sql("select id, array(cast(id as float), 1.0f, 2.0f) as emb, concat(repeat('ab', 50), id) as text "
                   "from range(250)").coalesce(1)
    (df.write.format("lance").mode("append").option("vectorColumns", "emb=3")
       .option("lance-encoding:compression", "text=zstd").option("version", "2.1").option("maxRowsPerFile", "100")
       .save(path))
    assert sorted(os.listdir(path)) == ["_transactions", "_versions", "data"]  # no staging left
    ds = lance.dataset(path)
    assert ds.version == 1 and ds.count_rows() == 250 and ds.data_storage_version == "2.1"
    assert [f.count_rows() for f in ds.get_fragments()] == [100, 100, 50]
    emb = ds.schema.field("emb").type
    assert pa.types.is_fixed_size_list(emb) and (emb.list_size, emb.value_type) == (3, pa.float32())
    (f,) = lancefile.dataset(path).get_fragments()[0].data_files()
    reader = lancefile.LanceFileReader(f)
    assert reader.schema.field("text").metadata == {b"lance-encoding:compression": b"zstd"}
    assert any("zstd" in str(p.encoding).lower() for c in reader.metadata().columns for p in c.pages)
    assert _read(spark, path).orderBy("id").first().emb == [0.0, 1.0, 2.0]

    empty = str(tmp_path / "empty")
    spark.sql("select id, cast(id as string) s from range(0)").write.format("lance").mode("overwrite").save(empty)
    assert lance.dataset(empty).count_rows() == 0 and lance.dataset(empty).schema.names == ["id", "s"]
    back = _read(spark, empty)
    assert back.count() == 0 and back.columns == ["id", "s"]
    spark.sql("select id, cast(id as string) s from range(0)").write.format("lance").mode("append").save(empty)
    assert lance.dataset(empty).version == 2 and lance.dataset(empty).count_rows() == 0  # one version per job

    with pytest.raises(Exception, match=r"is a Lance dataset: format=files would add files"):
        spark.range(1).write.format("lance").mode("append").option("format", "files").save(path)
    files = str(tmp_path / "files")
    spark.range(3).write.format("lance").mode("append").option("format", "files").save(files)
    with pytest.raises(Exception, match=r"holds Lance files that are not a dataset"):
        spark.range(1).write.format("lance").mode("append").option("format", "dataset").save(files)
    assert lance.dataset(path).version == 1 and not os.path.exists(os.path.join(files, "_versions"))


def _boom(limit: int, always: bool):
    from pyspark import TaskContext

    def f(i):
        if i == limit and (always or TaskContext.get().attemptNumber() == 0):
            raise RuntimeError(f"planned failure at row {i}")
        return i

    return f


def test_failed_tasks_leave_the_dataset_at_its_version(spark, tmp_path):
    from pyspark.sql import functions as fn
    from pyspark.sql.types import LongType

    path = str(tmp_path / "ds")
    lance.write_dataset(pa.table({"id": pa.array([0, 1, 2], pa.int64())}), path)
    before = _data_files(path)
    df = spark.range(0, 2000, numPartitions=2)
    for mode in ("append", "overwrite"):  # one task fails twice: the job fails
        with pytest.raises(Exception, match=r"planned failure at row 1500"):
            df.select(fn.udf(_boom(1500, True), LongType())("id").alias("id")).write.format("lance") \
                .mode(mode).option("maxRowsPerFile", "100").save(path)
        assert lance.dataset(path).version == 1 and lance.dataset(path).count_rows() == 3
        deadline = time.monotonic() + 10  # abort() may run while the other task is still being killed
        while (_data_files(path) != before or os.path.exists(os.path.join(path, "_temporary"))) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _data_files(path) == before and not os.path.exists(os.path.join(path, "_temporary"))

    # the first attempt of one task fails after writing 5 files; its retry succeeds
    df.select(fn.udf(_boom(1500, False), LongType())("id").alias("id")).write.format("lance") \
        .mode("append").option("maxRowsPerFile", "100").save(path)
    ds = lance.dataset(path)
    assert ds.version == 2 and ds.count_rows() == 2003 and len(ds.get_fragments()) == 21
    assert _data_files(path) == _referenced(path)


def _staged(path: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(os.path.join(path, "_temporary"))
                  for f in fs)


def test_attempts_whose_messages_are_not_committed_are_removed(tmp_path):
    """What Spark does with speculative and late attempts, played without Spark: the driver
    commits the messages of the winners only; the losers' files must go, and an attempt that
    finishes after the commit removes its own."""
    from pyspark.sql import types as T

    path = str(tmp_path / "ds")
    schema = T.StructType([T.StructField("id", T.LongType())])
    writer = dataset_writer(WriteOptions.parse({"path": path, "maxrowsperfile": "10"}), schema, False, path, False)

    def batches(start):
        return iter([pa.record_batch({"id": pa.array(range(start, start + 25), pa.int64())})])

    winner, _loser = writer.write(batches(0)), writer.write(batches(0))  # two attempts of one partition
    other = writer.write(batches(100))
    assert len(_staged(path)) == 9 and not os.path.exists(os.path.join(path, "data"))  # staged, not in data/

    def straggler():  # a fourth attempt, still writing when the driver commits
        yield from batches(200)
        writer.commit([winner, other])
        yield from batches(300)

    with pytest.raises(LanceIOError, match=r"committed or aborted before this task finished"):
        writer.write(straggler())
    ds = lancefile.dataset(path)
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(25)) + list(range(100, 125))
    assert _data_files(path) == _referenced(path) and len(_data_files(path)) == 6
    assert not os.path.exists(os.path.join(path, "_temporary"))
    with pytest.raises(LanceIOError, match=r"is gone: the write job was committed or aborted"):
        writer.write(batches(0))  # an attempt starting after the commit writes nothing

    second = dataset_writer(WriteOptions.parse({"path": path}), schema, False, path, True)
    msg = second.write(batches(500))
    second.abort([msg, None])
    assert _data_files(path) == _referenced(path) and lancefile.dataset(path).version == 1
    assert not os.path.exists(os.path.join(path, "_temporary"))
    with pytest.raises(SchemaMismatchError, match=r"cannot append columns the dataset does not have: x"):
        dataset_writer(WriteOptions.parse({"path": path}), T.StructType(schema.fields + [T.StructField("x", T.LongType())]),
                       False, path, True)


def test_a_2_2_blob_column_reads_as_its_descriptors_and_is_not_appended_to(spark, tmp_path):
    """pylance's 2.2 blob columns (blob v2) read as one descriptor a row, as lancefile and
    pylance give them; Spark read them as an all-null struct<data, uri>. An append would have
    stored the bytes as plain data (pylance saw nulls, lancefile could not read the dataset):
    it is refused, the dataset unchanged."""
    path = str(tmp_path / "blobs")
    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"})])
    lance.write_dataset(pa.table({"id": [1, 2, 3], "blob": [b"x" * 10, None, b"y" * 2000]}, schema=schema), path,
                        data_storage_version="2.2")
    want = lancefile.dataset(path).to_table()
    assert want.column("blob").to_pylist() == lance.dataset(path).to_table().column("blob").to_pylist()
    got = spark.read.format("lance").load(path).orderBy("id").toArrow()
    assert [None if r is None else (r["kind"], int(r["position"]), int(r["size"]), r["blob_id"], r["blob_uri"])
            for r in got.column("blob").to_pylist()] == \
        [None if r is None else tuple(r.values()) for r in want.column("blob").to_pylist()]
    df = spark.sql("select 4L as id, named_struct('data', X'0102', 'uri', cast(null as string)) as blob")
    with pytest.raises(Exception, match="blob columns, which lancefile does not write"):
        df.write.format("lance").mode("append").save(path)
    assert lance.dataset(path).version == 1
