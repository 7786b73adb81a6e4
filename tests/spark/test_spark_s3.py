"""The Spark source and sink on object storage, against the local moto S3 server
(``tests/s3server.py``): storage options as Spark options, Hadoop ``fs.s3a.*`` settings,
files and datasets read and written."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
import lancefile.spark

pytest.importorskip("moto.server")
from tests import s3server  # noqa: E402

BUCKET = "lancefile-spark"


s3 = s3server.fixture(BUCKET)


def _table(n: int, start: int = 0) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "x": ids * 0.5, "name": pa.array([f"n{i % 17}" for i in ids])})


def _load(spark, options, path, **extra):
    reader = spark.read.format("lance")
    for k, v in {**options, **extra}.items():
        reader = reader.option(k, v)
    return reader.load(path)


def _sorted(df) -> pa.Table:
    return pa.Table.from_pylist([r.asDict() for r in df.collect()]).sort_by("id")


def test_read_files_and_a_pylance_dataset(spark, s3):
    _, options = s3
    lancefile.write_table(_table(1000), f"s3://{BUCKET}/files/a.lance", storage_options=options)
    lancefile.write_table(_table(500, 1000), f"s3://{BUCKET}/files/sub/b.lance", storage_options=options)
    lancefile.write_table(_table(5), f"s3://{BUCKET}/files/_temporary/c.lance", storage_options=options)  # hidden
    df = _load(spark, options, f"s3://{BUCKET}/files", splitRows="400")
    assert df.rdd.getNumPartitions() == 3 + 2
    got = _sorted(df.select("id", "x", "name"))
    assert got.equals(pa.concat_tables([_table(1000), _table(500, 1000)]))
    one = _load(spark, options, f"s3://{BUCKET}/files/a.lance", columns="id")
    assert one.count() == 1000 and one.columns == ["id"]

    lance = pytest.importorskip("lance")
    uri = f"s3://{BUCKET}/ds"
    lance.write_dataset(_table(3000), uri, max_rows_per_file=1000, storage_options=options)
    lance.dataset(uri, storage_options=options).delete("id % 10 = 0")
    df = _load(spark, options, uri)
    assert df.count() == 2700
    assert df.filter("id < 20").count() == 18
    assert _load(spark, options, uri, version="1").count() == 3000


def test_hadoop_s3a_settings_and_s3a_paths(spark, s3):
    _, options = s3
    lancefile.write_table(_table(100), f"s3://{BUCKET}/hadoop/a.lance", storage_options=options)
    endpoint = options["aws_endpoint"][len("http://"):]
    conf = {"spark.hadoop.fs.s3a.access.key": "test", "spark.hadoop.fs.s3a.secret.key": "test",
            "spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false", "spark.hadoop.fs.s3a.endpoint.region": "us-east-1"}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        lancefile.spark.register(spark)  # takes the session's settings
        df = spark.read.format("lance").load(f"s3a://{BUCKET}/hadoop/a.lance")
        assert df.count() == 100
    finally:
        for k in conf:
            spark.conf.unset(k)
        lancefile.spark.register(spark)
    # the same settings as options (without the spark.hadoop. prefix)
    df = _load(spark, {k[len("spark.hadoop."):]: v for k, v in conf.items()}, f"s3a://{BUCKET}/hadoop/a.lance")
    assert df.count() == 100


def test_write_files_and_refuse_a_dataset(spark, s3):
    _, options = s3
    df = spark.createDataFrame(_table(2000).to_pylist(), "id bigint, x double, name string").repartition(2)
    out = f"s3://{BUCKET}/written"
    writer = df.write.format("lance").option("format", "files")
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.mode("overwrite").save(out)
    fs, path = lancefile.objectstore.resolve_filesystem(out, options)
    names = sorted(i.path.rsplit("/", 1)[1] for i in fs.get_file_info(pa.fs.FileSelector(path, recursive=True))
                   if i.is_file)
    assert len(names) == 2 and all(n.startswith("part-") and n.endswith(".lance") for n in names), names  # nothing staged left
    assert _sorted(_load(spark, options, out)).equals(_table(2000))
    assert sum(lancefile.read_table(f"{out}/{n}", storage_options=options).num_rows for n in names) == 2000
    with pytest.raises(lancefile.LanceIOError, match="already exists"):
        lancefile.spark.save(df, out, mode="error", format="files", **options)
    lancefile.spark.save(df, out, mode="ignore", format="files", **options)  # nothing written
    assert _load(spark, options, out).count() == 2000
    with pytest.raises(Exception, match="is a Lance dataset|not a dataset|Lance files"):
        lancefile.spark.save(df, out, mode="append", format="dataset", **options)


def test_write_datasets(spark, s3):
    """Spark appends to and overwrites a pylance-created dataset on the server: one version per job,
    pylance opens every version with the right rows; a new path becomes a dataset."""
    lance = pytest.importorskip("lance")
    _, options = s3
    uri = f"s3://{BUCKET}/spark-ds"
    lance.write_dataset(_table(1000), uri, max_rows_per_file=400, storage_options=options)
    df = spark.createDataFrame(_table(600, 1000).to_pylist(), "id bigint, x double, name string").repartition(3)
    lancefile.spark.save(df, uri, mode="append", **options)
    theirs = lance.dataset(uri, storage_options=options)
    assert theirs.version == 2 and theirs.count_rows() == 1600
    assert theirs.to_table().sort_by("id").equals(pa.concat_tables([_table(1000), _table(600, 1000)]))
    lancefile.spark.save(df.limit(5), uri, mode="overwrite", **options)
    theirs = lance.dataset(uri, storage_options=options)
    assert theirs.version == 3 and theirs.count_rows() == 5
    assert lance.dataset(uri, version=2, storage_options=options).count_rows() == 1600
    assert _load(spark, options, uri, version="1").count() == 1000
    assert _load(spark, options, uri).count() == 5
    fresh = f"s3://{BUCKET}/spark-ds-new"
    lancefile.spark.save(df, fresh, mode="error", **options)
    assert lancefile.dataset(fresh, storage_options=options).count_rows() == 600
    assert lance.dataset(fresh, storage_options=options).to_table().sort_by("id").equals(_table(600, 1000))
    assert lancefile.dataset(fresh, storage_options=options).cleanup_orphans(older_than_seconds=0) == []


def test_errors_name_the_uri(spark, s3):
    _, options = s3
    with pytest.raises(Exception, match=f"s3://{BUCKET}/nothing-here"):
        _load(spark, options, f"s3://{BUCKET}/nothing-here").count()
    with pytest.raises(Exception, match="globs"):
        _load(spark, options, f"s3://{BUCKET}/files/*.lance").count()
