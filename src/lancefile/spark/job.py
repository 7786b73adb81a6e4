"""The main job: a Spark pipeline from a source table to a Lance dataset and back.

``lancefile pipeline`` starts Spark (local mode unless ``--master`` says otherwise),
takes a source (a Parquet, CSV or JSON path, or a generated sample of an ML table with
ids, text, categories, timestamps, scores and embedding vectors), writes it as a Lance
dataset through the ``lance`` data source in two commits (most rows with ``overwrite``,
the rest with ``append``: two dataset versions), reads the latest version back with a
projection and a filter, checks the dataset with lancefile alone (no Spark, no pylance:
rows of the latest and of the first version, a scan), and prints a summary with the
dataset's versions. The output opens with ``lance.dataset(out)`` as well.

Example::

    $ lancefile pipeline                                  # 200,000 generated rows, local[*]
    $ lancefile pipeline --source events.parquet --out /data/events.lance \\
          --columns id,kind --where "kind = 'click'"
    $ lancefile pipeline --master spark://10.0.0.5:7077 --out /shared/out     # a cluster
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..textformat import format_size
from ..errors import InvalidInputError, LanceError

__all__ = ["PipelineConfig", "run_pipeline", "main", "sample_dataframe"]

SOURCE_FORMATS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}
CATEGORIES = ("books", "music", "sports", "news", "games", "travel", "food", "science")
APPEND_SHARE = 0.1  # of the source's rows, written by the second commit
WORDS = ("lance", "spark", "vector", "table", "column", "page", "arrow", "embedding", "query", "file",
         "batch", "model", "image", "token", "index", "search", "score", "label", "train", "data")


@dataclass
class PipelineConfig:
    """What :func:`run_pipeline` does (the command line's options)."""

    source: str | None = None
    source_format: str | None = None
    out: str | None = None
    rows: int = 200_000
    dim: int = 64
    master: str = "local[*]"
    columns: list[str] | None = None
    where: str | None = None
    max_rows_per_file: int | None = None
    vector_columns: str | None = None
    partitions: int | None = None
    show: int = 5
    keep: bool = True
    stop_spark: bool = True  # False leaves the (possibly shared) session running
    conf: dict[str, str] = field(default_factory=dict)


class Progress:
    """Numbered steps with elapsed times, printed as they finish."""

    def __init__(self, total: int, out=sys.stdout) -> None:
        self.total, self.n, self.out = total, 0, out
        self.start = time.perf_counter()
        self.times: dict[str, float] = {}

    @contextmanager
    def step(self, label: str):
        self.n += 1
        t0 = time.perf_counter()
        print(f"[{self.n}/{self.total}] {label} ...", file=self.out, flush=True)
        yield
        self.times[label] = dt = time.perf_counter() - t0
        print(f"      done in {dt:.1f} s", file=self.out, flush=True)


def sample_dataframe(spark, rows: int, dim: int, partitions: int | None = None):
    """A generated ML table: id, text, category, ts, score (with nulls), label, emb (array<float>)."""
    words = ", ".join(f"'{w}'" for w in WORDS)
    cats = ", ".join(f"'{c}'" for c in CATEGORIES)
    parts = partitions or max(2, spark.sparkContext.defaultParallelism)
    return spark.sql(f"""
        SELECT
          id,
          concat_ws(' ', transform(sequence(1, 6 + cast(id % 11 AS int)),
                    i -> element_at(array({words}), cast(pmod(hash(id, i), {len(WORDS)}) AS int) + 1))) AS text,
          element_at(array({cats}), cast(pmod(hash(id, -1), {len(CATEGORIES)}) AS int) + 1) AS category,
          timestamp_seconds(1700000000 + id * 37) AS ts,
          if(pmod(hash(id, -2), 10) = 0, NULL, cast(pmod(hash(id, -3), 100000) / 100000.0 AS double)) AS score,
          cast(pmod(hash(id, -4), 2) AS int) AS label,
          transform(sequence(1, {int(dim)}), i -> cast(pmod(hash(id, i, -5), 20001) / 10000.0 - 1.0 AS float)) AS emb
        FROM range(0, {int(rows)}, 1, {parts})
    """)


def source_format(cfg: PipelineConfig) -> str:
    """The source's format (checked before Spark starts, so bad input fails fast)."""
    path = cfg.source
    if not os.path.exists(path):
        raise InvalidInputError(f"source not found: {path}")
    fmt = cfg.source_format
    if fmt is None:
        probe = path
        if os.path.isdir(path):
            names = [n for n in sorted(os.listdir(path)) if not n.startswith((".", "_"))]
            probe = names[0] if names else ""
        fmt = SOURCE_FORMATS.get(os.path.splitext(probe)[1].lower())
        if fmt is None:
            raise InvalidInputError(
                f"cannot tell the format of {path}; name it .parquet/.csv/.json or pass --format parquet|csv|json"
            )
    if fmt not in ("parquet", "csv", "json"):
        raise InvalidInputError(f"unsupported source format {fmt!r}: use parquet, csv or json")
    return fmt


def _read_source(spark, cfg: PipelineConfig, fmt: str):
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(cfg.source)


def _first_rows(df, n: int) -> list:
    """A few rows, ordered by the first column when it can be sorted.

    Sorting reads the (filtered) data to its end; a bare ``limit`` stops the Python
    reader mid-stream, which PySpark reports with a BrokenPipeError traceback.
    """
    from pyspark.sql import types as T

    if n <= 0:
        return []
    first = df.schema.fields[0] if df.schema.fields else None
    if first is not None and isinstance(first.dataType, (T.NumericType, T.StringType, T.DateType,
                                                         T.TimestampType, T.TimestampNTZType)):
        return df.orderBy(first.name).limit(n).collect()
    return df.limit(n).collect()


def _data_files(ds) -> tuple[int, int]:
    """Data files of a dataset version, and their bytes."""
    paths = [p for frag in ds.get_fragments() for p in frag.data_files()]
    return len(paths), sum(os.path.getsize(p) for p in paths)


def _check_out(target: str) -> None:
    """``--out`` must be a directory that is a Lance dataset, or holds no Lance files yet."""
    from .files import is_dataset, list_lance_files

    if os.path.isfile(target):
        raise InvalidInputError(f"--out {target} is a file; give a directory (it is overwritten)")
    if os.path.isdir(target) and not is_dataset(target) and list_lance_files(target, must_exist=False):
        raise InvalidInputError(f"--out {target} holds Lance files that are not a dataset (an earlier run's?); "
                                f"remove them or choose another directory")


def run_pipeline(cfg: PipelineConfig, out=sys.stdout) -> dict:
    """Run the job; returns the summary it prints (rows, versions, files, bytes, timings, sample rows)."""
    generated = cfg.source is None
    if cfg.rows <= 0 or cfg.dim <= 0:
        raise InvalidInputError("--rows and --dim must be positive")
    fmt = None if generated else source_format(cfg)
    if cfg.out:
        target = os.path.abspath(cfg.out)
        _check_out(target)
        return _run(cfg, target, generated, fmt, out)
    # no --out: a new temporary directory, removed again if the run fails
    target = tempfile.mkdtemp(prefix="lancefile-pipeline-")
    try:
        return _run(cfg, target, generated, fmt, out)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise


def _run(cfg: PipelineConfig, target: str, generated: bool, fmt, out) -> dict:
    import lancefile
    import lancefile.spark as ls

    progress = Progress(6, out)
    with progress.step(f"starting Spark ({cfg.master})"):
        conf = {"spark.sql.session.timeZone": "UTC", **cfg.conf}
        spark = ls.session(cfg.master, "lancefile-pipeline", **conf)
        spark.sparkContext.setLogLevel("ERROR")
    try:
        with progress.step("preparing the source" if not generated else
                           f"generating a sample ML table ({cfg.rows:,} rows, {cfg.dim}-d embeddings)"):
            df = sample_dataframe(spark, cfg.rows, cfg.dim, cfg.partitions) if generated else _read_source(spark, cfg, fmt)
            if cfg.partitions and not generated:
                df = df.repartition(cfg.partitions)
            print(f"      schema: {df.schema.simpleString()}", file=out)
            # two deterministic, complementary parts: one commit each
            first, second = df.randomSplit([1 - APPEND_SHARE, APPEND_SHARE], seed=11)

        options = {"format": "dataset"}
        vectors = cfg.vector_columns or (f"emb={cfg.dim}" if generated else None)
        if vectors:
            options["vectorColumns"] = vectors
        if cfg.max_rows_per_file:
            options["maxRowsPerFile"] = str(cfg.max_rows_per_file)
        with progress.step(f"writing a Lance dataset with Spark to {target} (overwrite)"):
            ls.save(first, target, mode="overwrite", **options)
            written = lancefile.dataset(target)
            print(f"      version {written.version}: {written.count_rows():,} rows", file=out)
        with progress.step(f"appending {APPEND_SHARE:.0%} of the rows (a second commit)"):
            ls.save(second, target, mode="append", **options)
            ds = lancefile.dataset(target)
            n_files, n_bytes = _data_files(ds)
            print(f"      version {ds.version}: {ds.count_rows():,} rows, {len(ds.get_fragments())} fragment(s), "
                  f"{n_files} data file(s), {format_size(n_bytes)}", file=out)

        columns = cfg.columns or (["id", "category", "ts", "score"] if generated else None)
        where = cfg.where if cfg.where is not None else ("category = 'sports' AND score > 0.5" if generated else None)
        with progress.step("reading back with Spark" + (f": columns {', '.join(columns)}" if columns else "")
                           + (f", where {where}" if where else "")):
            reader = spark.read.format("lance")
            if columns:
                reader = reader.option("columns", ",".join(columns))
            back = reader.load(target)
            total = spark.read.format("lance").load(target).count()
            before = spark.read.format("lance").option("version", written.version).load(target).count()
            selected = back.where(where) if where else back
            matched = selected.count()
            rows = _first_rows(selected, cfg.show)
            print(f"      {total:,} rows in version {ds.version} ({before:,} in version {written.version}), "
                  f"{matched:,} match", file=out)

        with progress.step("checking the dataset with lancefile (no Spark)"):
            scanned = sum(b.num_rows for b in ds.to_batches(columns=[ds.schema.names[0]], batch_size=1 << 16))
            counts = {"Spark": total, "lancefile's count": ds.count_rows(), "lancefile's scan": scanned}
            if len(set(counts.values())) != 1:
                raise LanceError(f"{target} version {ds.version}: the row counts disagree: {counts}")
            if written.count_rows() != before:
                raise LanceError(f"{target} version {written.version}: lancefile counts {written.count_rows()} rows, "
                                 f"Spark counted {before}")
            history = ds.versions()[-10:]
            versions = [{"version": v["version"], "timestamp": v["timestamp"].isoformat(sep=" ", timespec="seconds"),
                         "rows": ds.checkout_version(v["version"]).count_rows()} for v in history]
    finally:
        if cfg.stop_spark:
            spark.stop()

    summary = {
        "source": cfg.source or "generated sample",
        "output": target,
        "rows": total,
        "appended": total - before,
        "version": ds.version,
        "versions": versions,
        "fragments": len(ds.get_fragments()),
        "files": n_files,
        "bytes": n_bytes,
        "file_version": ds.data_storage_version,
        "matched": matched,
        "seconds": {k: round(v, 2) for k, v in progress.times.items()},
        "total_seconds": round(time.perf_counter() - progress.start, 2),
        "sample": [r.asDict() for r in rows],
    }
    _print_summary(summary, out)
    if not cfg.keep:
        shutil.rmtree(target, ignore_errors=True)
    return summary


def _print_summary(s: dict, out) -> None:
    print("", file=out)
    print("summary", file=out)
    print(f"  source:   {s['source']}", file=out)
    print(f"  output:   {s['output']}  (a Lance dataset at version {s['version']}: {s['fragments']} fragment(s), "
          f"{s['files']} data file(s) of Lance {s['file_version']}, {format_size(s['bytes'])})", file=out)
    print(f"  rows:     {s['rows']:,} written and read back ({s['appended']:,} of them appended); "
          f"{s['matched']:,} match the filter", file=out)
    print("  versions: " + "; ".join(f"{v['version']} ({v['timestamp']}, {v['rows']:,} rows)" for v in s["versions"]),
          file=out)
    print(f"  time:     {s['total_seconds']:.1f} s in all", file=out)
    for label, sec in s["seconds"].items():
        print(f"            {sec:6.1f} s  {label}", file=out)
    if s["sample"]:
        print("  a few rows:", file=out)
        for row in s["sample"]:
            shown = {k: (str(v)[:40] + "…" if len(str(v)) > 40 else v) for k, v in row.items()}
            print(f"    {shown}", file=out)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``lancefile pipeline`` options (shared with ``python -m lancefile.spark.job``)."""
    p.add_argument("--source", help="a Parquet, CSV or JSON file or directory (default: a generated sample)")
    p.add_argument("--format", dest="source_format", choices=("parquet", "csv", "json"),
                   help="the source's format when its name does not tell")
    p.add_argument("--out", help="output Lance dataset directory (default: a new temp dir); a dataset there "
                                 "gets new versions")
    p.add_argument("--rows", type=int, default=200_000, help="rows of the generated sample (default 200,000)")
    p.add_argument("--dim", type=int, default=64, help="embedding dimension of the sample (default 64)")
    p.add_argument("--master", default=os.environ.get("SPARK_MASTER", "local[*]"),
                   help="Spark master URL: local[*] (default) or spark://host:port for a cluster")
    p.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                   help="columns to read back, comma separated")
    p.add_argument("--where", help="a Spark SQL filter for the read-back")
    p.add_argument("--max-rows-per-file", type=int, help="cap on rows per data file (= fragment)")
    p.add_argument("--vector-columns", help="columns to store as fixed-size vectors: name=dim,...")
    p.add_argument("--partitions", type=int, help="Spark partitions (= write tasks)")
    p.add_argument("--show", type=int, default=5, help="rows to print (default 5)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark configuration")


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidInputError(f"--conf takes KEY=VALUE, not {item!r}")
        conf[key] = value
    return PipelineConfig(
        source=args.source, source_format=args.source_format, out=args.out, rows=args.rows, dim=args.dim,
        master=args.master, columns=args.columns, where=args.where, max_rows_per_file=args.max_rows_per_file,
        vector_columns=args.vector_columns, partitions=args.partitions, show=args.show, conf=conf,
    )


def run_from_args(args: argparse.Namespace, *, stop_spark: bool = True) -> int:
    """Run the pipeline; a clear message and a non-zero status (2: bad input) on failure."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("lancefile: error: the pipeline needs PySpark: pip install 'lancefile[spark]'", file=sys.stderr)
        return 2
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("lancefile: error: Spark needs Java 17 or later (no java on PATH, no JAVA_HOME)", file=sys.stderr)
        return 2
    try:
        cfg = config_from_args(args)
        cfg.stop_spark = stop_spark
        run_pipeline(cfg)
    except InvalidInputError as exc:
        print(f"lancefile: error: {exc}", file=sys.stderr)
        return 2
    except LanceError as exc:
        print(f"lancefile: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # Spark's own errors (bad --where, unreachable master...)
        from pyspark.errors import PySparkException

        if isinstance(exc, PySparkException):
            print(f"lancefile: error: {str(exc).strip().splitlines()[0]}", file=sys.stderr)
            return 2 if type(exc).__name__ in ("AnalysisException", "ParseException") else 1
        raise
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lancefile.spark.job", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
