"""Spark: the ``lance`` data source (lancefile.spark) against Spark's built-in Parquet source.

Run from the repository root::

    python bench/spark_compare.py                 # 2M rows, 3 repetitions (a few minutes)
    python bench/spark_compare.py --rows 5000000 --repeat 5
    python bench/spark_compare.py --smoke --out /tmp/x   # tiny, one repetition, < 1 minute

One table of ML shape (``id`` bigint, ``text`` a few words, ``category`` one of 20 strings,
``ts`` timestamp, ``value`` double, ``emb`` array<float> of ``--dim`` values, written by the
lance source as a vector column: ``vectorColumns emb=<dim>``) is generated once and cached
in Spark's memory; then, in local mode (``local[2]`` by default), each operation runs
``--repeat`` times per format, alternating which format goes first, and the median is
reported:

* write: ``df.write.format("lance")`` (a new version of a Lance dataset) vs
  ``df.write.parquet`` (overwrite) from the cache;
* full read: ``spark.read...load(p).write.format("noop")``, which materialises every row;
* ``count()`` and ``sum(value)`` on the whole table (no projection: Spark cannot tell a
  Python source which columns it needs, so lance reads all of them);
* projected: lance with ``option("columns", ...)`` vs ``parquet.select(...)``, then noop
  or ``sum(value)``.

Every read builds a fresh DataFrame (planning is part of the cost). The script prints a
table of seconds and ratios lance / parquet (above 1 means lance is slower), writes it with
a machine description to ``<out>/SPARK-RESULTS.md`` and all timings to
``<out>/spark-results.json``. It checks that both formats give the same counts and sums.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_CATEGORY_WORDS = ("books music movies games toys garden tools sports beauty health auto baby pets food "
                   "drinks office travel home fashion jewelry")
CATEGORIES = [f"cat_{i:02d}_{w}" for i, w in enumerate(_CATEGORY_WORDS.split())]
_TEXT_WORDS = ("the a of to and in is for on that with as by this from at model data image user click "
               "query search result vector embedding train test label score rank item video audio page "
               "session device mobile desktop region price cart order review rating")
WORDS = _TEXT_WORDS.split()
PROJECTED = ("id", "category", "value")


# -- environment --------------------------------------------------------------------------

def _first_line(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
        return ((p.stderr or p.stdout).strip().splitlines() or ["?"])[0]
    except (OSError, subprocess.SubprocessError):
        return "?"


def _proc_value(path: str, key: str) -> str:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def machine(master: str) -> dict:
    import pyarrow
    import pyspark

    import lancefile

    mem_kb = _proc_value("/proc/meminfo", "MemTotal")
    try:
        mem = f"{int(mem_kb.split()[0]) / 1024 / 1024:.1f} GiB"
    except ValueError:
        mem = "?"
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": _proc_value("/proc/cpuinfo", "model name"),
        "memory": mem,
        "load_average_at_start": tuple(round(x, 2) for x in os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
        "lancefile": lancefile.__version__,
        "java": _first_line(["java", "-version"]),
        "spark_master": master,
    }


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


# -- the data -----------------------------------------------------------------------------

def make_table(spark, rows: int, dim: int, partitions: int):
    """The benchmark table, deterministic for a given ``rows``/``dim`` (seeded rand)."""
    from pyspark.sql import functions as F

    words = F.array(*[F.lit(w) for w in WORDS])
    cats = F.array(*[F.lit(c) for c in CATEGORIES])
    n_words = len(WORDS)

    def word(k: int):
        return F.element_at(words, (F.abs(F.xxhash64(F.col("id"), F.lit(k))) % n_words + 1).cast("int"))

    text = F.concat_ws(" ", F.slice(F.array(*[word(k) for k in range(16)]), 1,
                                    (F.col("id") % 13 + 4).cast("int")))
    return spark.range(0, rows, numPartitions=partitions).select(
        F.col("id"),
        text.alias("text"),
        F.element_at(cats, (F.abs(F.xxhash64(F.col("id"), F.lit(-1))) % len(CATEGORIES) + 1).cast("int")).alias("category"),
        F.timestamp_seconds(F.lit(1_767_225_600) + F.col("id") * 7 + (F.rand(1) * 5).cast("long")).alias("ts"),
        F.randn(2).alias("value"),
        *([F.array(*[F.rand(100 + i).cast("float") for i in range(dim)]).alias("emb")] if dim else []),
    )


# -- measuring ----------------------------------------------------------------------------

class Bench:
    def __init__(self, spark, args, work: Path) -> None:
        self.spark, self.args, self.work = spark, args, work
        self.results: list[dict] = []
        self.lance_path = str(work / "lance")
        self.parquet_path = str(work / "parquet")
        self.checks: dict[str, object] = {}

    def log(self, msg: str) -> None:
        if not self.args.quiet:
            print(msg, file=sys.stderr, flush=True)

    def measure(self, op: str, lance_fn, parquet_fn, note: str = "") -> dict:
        """Run both ``repeat`` times, alternating which goes first; keep every time."""
        times: dict[str, list[float]] = {"lance": [], "parquet": []}
        answers: dict[str, object] = {}
        fns = {"lance": lance_fn, "parquet": parquet_fn}
        for r in range(self.args.repeat):
            order = ("lance", "parquet") if r % 2 == 0 else ("parquet", "lance")
            for fmt in order:
                t0 = time.perf_counter()
                answers[fmt] = fns[fmt]()
                times[fmt].append(time.perf_counter() - t0)
        rec = {"op": op, "note": note, "lance": times["lance"], "parquet": times["parquet"],
               "lance_median": statistics.median(times["lance"]),
               "parquet_median": statistics.median(times["parquet"])}
        rec["ratio"] = rec["lance_median"] / rec["parquet_median"] if rec["parquet_median"] else float("nan")
        if answers.get("lance") is not None or answers.get("parquet") is not None:
            rec["answers"] = {k: v for k, v in answers.items()}
            if not _same(answers["lance"], answers["parquet"]):
                raise SystemExit(f"{op}: lance answered {answers['lance']!r}, parquet {answers['parquet']!r}")
        self.results.append(rec)
        self.log(f"  {op:<28} lance {rec['lance_median']:8.3f} s   parquet {rec['parquet_median']:8.3f} s"
                 f"   ratio {rec['ratio']:5.2f}")
        return rec

    # the readers, fresh DataFrames every call
    def lance(self, columns: tuple[str, ...] | None = None):
        r = self.spark.read.format("lance")
        if columns:
            r = r.option("columns", ", ".join(columns))
        return r.load(self.lance_path)

    def parquet(self, columns: tuple[str, ...] | None = None):
        df = self.spark.read.parquet(self.parquet_path)
        return df.select(*columns) if columns else df

    def run(self) -> None:
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        a, spark = self.args, self.spark
        t0 = time.perf_counter()
        df = make_table(spark, a.rows, a.dim, a.partitions).persist(StorageLevel.MEMORY_ONLY)
        stats = df.agg(F.count("*"), F.avg(F.length("text")), F.avg(F.length("category")),
                       F.sum("value")).first()
        self.checks["rows"] = stats[0]
        self.checks["sum_value_source"] = stats[3]
        avg_text, avg_cat = stats[1], stats[2]
        raw = a.rows * (8 + 8 + 8 + avg_text + avg_cat + 4 * a.dim)
        self.data = {"rows": a.rows, "dim": a.dim, "partitions": a.partitions,
                     "raw_bytes_estimate": int(raw), "avg_text_chars": avg_text,
                     "generate_and_cache_s": time.perf_counter() - t0}
        self.log(f"generated and cached {a.rows:,} rows (~{_mib(raw)} of values) "
                 f"in {self.data['generate_and_cache_s']:.1f} s")

        def write_lance():
            w = df.write.format("lance").mode("overwrite")
            if a.dim:
                w = w.option("vectorColumns", f"emb={a.dim}")
            w.save(self.lance_path)

        self.measure(
            "write",
            write_lance,
            lambda: df.write.mode("overwrite").parquet(self.parquet_path),
            note="from the cached DataFrame",
        )
        # the lance source writes a dataset: every overwrite is a new version and older versions'
        # files stay (time travel), so count the latest version's data files only
        import lancefile

        lance_files = [p for f in lancefile.dataset(self.lance_path).get_fragments() for p in f.data_files()]
        self.data["lance_bytes"] = sum(os.path.getsize(p) for p in lance_files)
        self.data["parquet_bytes"] = _du(Path(self.parquet_path))
        self.data["lance_files"] = len(lance_files)
        self.data["parquet_files"] = len(list(Path(self.parquet_path).glob("*.parquet")))
        df.unpersist()

        # one untimed pass each, so the first timed read does not pay for starting Python workers
        self.lance().write.format("noop").mode("overwrite").save()
        self.parquet().write.format("noop").mode("overwrite").save()

        def noop(d):
            d.write.format("noop").mode("overwrite").save()

        def total(d):
            return d.agg(F.sum("value")).first()[0]

        self.measure("full read (noop sink)", lambda: noop(self.lance()), lambda: noop(self.parquet()),
                     note="every column of every row materialised")
        self.measure("count()", lambda: self.lance().count(), lambda: self.parquet().count(),
                     note="Parquet answers from metadata; lance reads all columns")
        self.measure("sum(value), no projection", lambda: total(self.lance()), lambda: total(self.parquet()),
                     note="lance reads every column (no pruning hook for Python sources)")
        cols = ", ".join(PROJECTED)
        self.measure(f"projected read ({cols})", lambda: noop(self.lance(PROJECTED)),
                     lambda: noop(self.parquet(PROJECTED)),
                     note="lance option columns vs parquet select, noop sink")
        self.measure("sum(value), projected", lambda: total(self.lance(("value",))),
                     lambda: total(self.parquet(("value",))),
                     note="lance option columns=value vs parquet select")
        if a.dim:
            self.measure("read emb only (noop)", lambda: noop(self.lance(("emb",))),
                         lambda: noop(self.parquet(("emb",))),
                         note="the vector column alone")

        for rec in self.results:
            ans = rec.get("answers") or {}
            if rec["op"] == "count()" and ans.get("lance") != a.rows:
                raise SystemExit(f"count: expected {a.rows}, got {ans}")
            if rec["op"].startswith("sum(value)") and not _same(ans.get("lance"), self.checks["sum_value_source"]):
                raise SystemExit(f"{rec['op']}: the source sums to {self.checks['sum_value_source']}, got {ans}")
        self.checks["answers_agree"] = True


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))
    return x == y


# -- reporting ----------------------------------------------------------------------------

def table_lines(results: list[dict]) -> list[str]:
    lines = ["| operation | lance (s) | parquet (s) | lance / parquet |", "|---|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['op']} | {r['lance_median']:.3f} | {r['parquet_median']:.3f} | {r['ratio']:.2f} |")
    return lines


def write_report(out: Path, env: dict, data: dict, results: list[dict], args, wall: float) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    md = out / "SPARK-RESULTS.md"
    js = out / "spark-results.json"
    lines = [
        "# lance data source vs Spark Parquet",
        "",
        (f"Generated by `python bench/spark_compare.py{' --smoke' if args.smoke else ''} "
         f"--rows {args.rows} --repeat {args.repeat} --dim {args.dim}` on {env['date']}"
         f" (whole run {wall:.0f} s). Median of {args.repeat} run(s) per cell, seconds of wall time;"
         " the formats alternate which goes first. Ratio above 1 means lance is slower."),
        "",
        *table_lines(results),
        "",
        "Every run (seconds; the machine is shared, so look at the spread before trusting a ratio):",
        "",
        "| operation | lance runs | parquet runs |",
        "|---|---|---|",
        *[f"| {r['op']} | {', '.join(f'{x:.2f}' for x in r['lance'])} | {', '.join(f'{x:.2f}' for x in r['parquet'])} |"
          for r in results],
        "",
        "## What each row measures",
        "",
    ]
    for r in results:
        lines.append(f"- **{r['op']}**: {r['note']}.")
    lines += [
        "",
        "## Data",
        "",
        (f"- {data['rows']:,} rows in {data['partitions']} partitions: `id` bigint, `text` string "
         f"(4-16 words, {data['avg_text_chars']:.0f} characters on average), `category` string "
         f"({len(CATEGORIES)} values), `ts` timestamp, `value` double"
         + (f", `emb` array<float>[{data['dim']}] (written by lance with `vectorColumns emb={data['dim']}`)."
            if data["dim"] else " (no embedding column: `--dim 0`).")),
        (f"- About {_mib(data['raw_bytes_estimate'])} of values; generated and cached in "
         f"{data['generate_and_cache_s']:.1f} s."),
        (f"- On disk: lance {_mib(data['lance_bytes'])} in {data['lance_files']} files, parquet "
         f"{_mib(data['parquet_bytes'])} in {data['parquet_files']} files (Spark's default snappy)."),
        "",
        "## Machine",
        "",
    ]
    for k, v in env.items():
        lines.append(f"- {k}: {v}")
    lines.append("")
    md.write_text("\n".join(lines))
    js.write_text(json.dumps({"machine": env, "data": data, "args": vars(args), "wall_s": wall,
                              "results": results}, indent=2, default=str) + "\n")
    return md


# -- main ---------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=2_000_000, help="rows in the table (default 2,000,000)")
    p.add_argument("--dim", type=int, default=64, help="embedding dimension (default 64; 0: no embedding column)")
    p.add_argument("--repeat", type=int, default=3, help="runs per format and operation; the median is kept")
    p.add_argument("--partitions", type=int, default=8, help="partitions of the table, so files written")
    p.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--out", default=str(HERE), help="where SPARK-RESULTS.md and spark-results.json go")
    p.add_argument("--workdir", default=None, help="scratch directory (default: a new temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--smoke", action="store_true", help="tiny table, one run: checks that the script works")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.smoke:
        args.rows, args.repeat, args.dim, args.partitions = 20_000, 1, 16, 2
    if args.rows <= 0 or args.repeat <= 0 or args.dim < 0 or args.partitions <= 0:
        p.error("--rows, --repeat and --partitions must be positive, --dim at least 0")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    os.environ["PYSPARK_PYTHON"] = sys.executable  # Spark's Python workers must import lancefile
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    import lancefile.spark

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="spark-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    env = machine(args.master)
    conf = {
        "spark.driver.memory": args.driver_memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.local.dir": str(work / "spark-local"),
    }
    if args.smoke:  # a short run: the JVM's client compiler alone starts faster (steady state is not measured)
        conf["spark.driver.extraJavaOptions"] = "-XX:TieredStopAtLevel=1"
    spark = lancefile.spark.session(args.master, "lancefile-spark-compare", **conf)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        bench = Bench(spark, args, work)
        bench.run()
    finally:
        spark.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.perf_counter() - t_start
    if hasattr(os, "getloadavg"):
        env["load_average_at_end"] = tuple(round(x, 2) for x in os.getloadavg())
    md = write_report(Path(args.out), env, bench.data, bench.results, args, wall)
    print("\n".join(table_lines(bench.results)))
    print(f"\n{args.rows:,} rows, dim {args.dim}, median of {args.repeat}; lance {_mib(bench.data['lance_bytes'])}, "
          f"parquet {_mib(bench.data['parquet_bytes'])} on disk; {wall:.0f} s in all; report: {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
