"""Read and write Lance datasets and files from Apache Spark (PySpark's Python Data Source API).

Register once per session, then use the ``lance`` format like ``parquet``::

    import lancefile.spark
    lancefile.spark.register(spark)

    df = spark.read.format("lance").load("/data/events")          # a dataset (latest version),
                                                                   # a file, a directory or a glob
    df = spark.read.format("lance").option("version", 3).load("/data/events")   # time travel
    df = (spark.read.format("lance").option("columns", "id, emb")  # read only these columns
          .load("/data/events"))
    df.write.format("lance").mode("append").save("/data/out")      # one new dataset version
    lancefile.spark.save(df, "/data/out", mode="error")             # error / ignore too

    spark.sql("CREATE TEMPORARY VIEW events USING lance OPTIONS (path '/data/events')")

Reading
    A Lance dataset (a directory with ``_versions/``, as ``lance.write_dataset`` and this
    source write) is read at its latest version, or at ``option("version", N)``, as pylance
    reads it: deleted rows, older versions' files and pre-compaction files are never read.
    The version is fixed when the query is planned. Each task reads one fragment, or a
    range of its rows (``splitRows``; by default about 128 MiB of data per split). Any other
    path is a Lance file, a directory of Lance files (searched recursively) or a glob, split
    by file and row range the same way; a dataset met inside such a directory is refused
    rather than read as loose files, and a directory with neither gets a clear error.
    Spark has no column-pruning hook for Python sources, so say which columns you want: the
    ``columns`` option, or a narrower schema (``spark.read.format("lance").schema("id
    bigint, text string")``). All files under a path must share one schema; if they don't,
    the error names two files that disagree.

Filters
    Off by default, because Spark 4.x caches the plan it built while pushing filters on
    the DataFrame, and a later query on the *same* DataFrame can then see the filter
    (see ``../shared/SPARK-NOTES.md``; fixed upstream in Spark 5.0). Turn it on with
    ``.option("pushFilters", "true")`` on a session with
    ``spark.sql.python.filterPushdown.enabled=true`` (``register(spark, push_filters=True)``
    sets it); then comparisons, ``IN``, null tests and ``LIKE`` prefix/suffix/substring
    filters on numeric, string, boolean, date and decimal columns are applied exactly by
    lancefile on the Arrow batches, and the rest by Spark. Answers are the same either way.

Writing
    By default a write job commits **one new version of a Lance dataset** (pylance and
    lance-spark open it): ``append`` adds fragments (a new or empty path gets a new
    dataset), ``overwrite`` replaces the rows and may change the schema, and older versions
    stay readable. Tasks write their rows as data files (``maxRowsPerFile`` rows each, one
    fragment per file; ``maxBytesPerFile``) in a staging directory of their own; the driver
    moves the winning attempts' files into the dataset and commits them in one atomic
    step; a failed job commits nothing and removes what its tasks wrote (see
    :mod:`lancefile.spark.datasets`). An append must have the dataset's columns (matched by
    name) with the Spark types the dataset reads as, or it is refused before any task runs;
    the dataset's schema then decides the stored types, vectors and field metadata.
    ``option("format", "files")`` writes plain ``part-*.lance`` files instead (the layout
    before datasets), which is also what a write into an existing directory of plain Lance
    files does unless ``format`` says ``dataset``. Options: ``version`` (Lance file version
    of the data files), ``maxPageBytes`` (``format=files`` only), ``vectorColumns``
    (``emb=768``: store as fixed_size_list), ``lance-encoding:<key>`` = ``column=value,...``
    (field metadata such as ``lance-encoding:compression`` = ``text=zstd``). See
    :mod:`lancefile.spark.types` for the type mapping and :mod:`lancefile.spark.options` for
    every option.

Spark limitations we cannot fix
    * ``mode("error")`` and ``mode("ignore")`` are refused by Spark for Python sources:
      use :func:`save`.
    * ``CREATE TABLE t USING lance OPTIONS (path ...)`` is accepted by Spark but the
      options never reach the source; ``SELECT * FROM lance.`/path``` is unsupported. Use
      a temporary view.
    * Python workers must import lancefile: install it on every node, and have them run
      the interpreter that has it (``PYSPARK_PYTHON``; :func:`session` sets it).
"""

from __future__ import annotations

import os
import sys

from ..errors import InvalidInputError, LanceIOError

__all__ = ["register", "save", "session", "SHORT_NAME", "PUSHDOWN_CONF"]

SHORT_NAME = "lance"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
_SAVE_MODES = {"append", "overwrite", "error", "errorifexists", "default", "ignore"}


def register(spark, *, push_filters: bool = False) -> None:
    """Register the ``lance`` format on ``spark`` (a SparkSession).

    ``push_filters=True`` also turns on ``spark.sql.python.filterPushdown.enabled``,
    which reads with ``.option("pushFilters", "true")`` need. The session's
    ``spark.hadoop.fs.s3a.*`` settings are taken now (register again after changing them):
    see :mod:`lancefile.spark.remote`.
    """
    from .remote import hadoop_settings
    from .source import with_hadoop_settings

    spark.dataSource.register(with_hadoop_settings(hadoop_settings(spark)))
    if push_filters:
        spark.conf.set(PUSHDOWN_CONF, "true")


def save(df, path: str, mode: str = "error", **options) -> None:
    """Write ``df`` to ``path`` (a Lance dataset by default) with any save mode, as ``df.write.save`` would.

    ``mode`` is ``"error"`` (default; also ``"errorifexists"``), ``"ignore"``,
    ``"append"`` or ``"overwrite"``. ``options`` are the write options of the ``lance``
    source (``maxRowsPerFile=...``, ``vectorColumns="emb=768"``...). Spark refuses
    ``error`` and ``ignore`` for Python sources, so they are checked here: ``error``
    raises :class:`~lancefile.LanceIOError` when ``path`` exists, ``ignore`` then does
    nothing.
    """
    from .files import local_path
    from .remote import is_remote_path, normalize_path, storage_options

    m = str(mode).lower()
    if m not in _SAVE_MODES:
        raise InvalidInputError(f"unknown save mode {mode!r}; use one of append, overwrite, error, ignore")
    if is_remote_path(normalize_path(path)):
        from ..objectstore import resolve_store

        so = storage_options({str(k).lower(): str(v) for k, v in options.items()}, {})
        store = resolve_store(normalize_path(path).rstrip("/"), so)
        exists = store.info().type.name != "NotFound"
    else:
        exists = os.path.exists(local_path(path))
    if m in ("error", "errorifexists", "default"):
        if exists:
            raise LanceIOError(f"{path} already exists (save mode {mode!r}); use mode='append' or 'overwrite'")
        m = "append"
    elif m == "ignore":
        if exists:
            return
        m = "append"
    writer = df.write.format(SHORT_NAME).mode(m)
    for k, v in options.items():
        writer = writer.option(k, str(v))
    writer.save(path)


def session(master: str = "local[*]", app_name: str = "lancefile", *, push_filters: bool = False, **conf):
    """A SparkSession with the ``lance`` source registered.

    Spark's Python workers are pointed at this interpreter (``PYSPARK_PYTHON``) unless
    it is already set, so they import the same lancefile. Extra ``conf`` items are passed
    to the builder (``**{"spark.sql.shuffle.partitions": "4"}``).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in conf.items():
        builder = builder.config(k, v)
    if push_filters:
        builder = builder.config(PUSHDOWN_CONF, "true")
    spark = builder.getOrCreate()
    register(spark, push_filters=push_filters)
    return spark
