"""Filter benchmark: a selective read of a sorted file, lancefile vs pyarrow.parquet vs pylance.

Run ``python -m bench.filters`` from the repository root. It writes a table of ``--rows``
rows (default 5 M) sorted by ``key`` (int64), with ``x`` (float64), ``tag`` (string) and
``payload`` (int64) columns:

* lancefile: one Lance 2.2 file with statistics (``lancefile.write_table``), read with
  ``read_table(filters=...)``;
* pyarrow.parquet: the same table with pyarrow's default row groups, read with
  ``pq.read_table(filters=...)``;
* pylance: a dataset written by ``lance.write_dataset`` (one fragment), read with
  ``to_table(filter=...)`` with no index.

Each selects 0.1 %, 1 % and 10 % of the key range, and nothing (a key beyond the range).
Medians of ``--repeat`` interleaved runs; ratios are ``lancefile time / other time``
(below 1.00: lancefile is faster). Also reports the write cost of statistics (write time
with / without). Writes ``bench/FILTER-RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .measure import machine, median, timed


def _table(rows: int) -> pa.Table:
    rng = np.random.default_rng(0)
    return pa.table({
        "key": np.arange(rows, dtype=np.int64),
        "x": rng.random(rows),
        "tag": pa.array(np.array([f"tag-{i:03d}" for i in range(500)])[rng.integers(0, 500, rows)]),
        "payload": rng.integers(0, 1 << 40, rows),
    })


def run(args) -> dict:
    import lance

    import lancefile

    work = Path(tempfile.mkdtemp(prefix="lancefile-filterbench-"))
    try:
        table = _table(args.rows)
        lf_path = str(work / "t.lance")
        pq_path = str(work / "t.parquet")
        ds_path = str(work / "t.pylance")
        writes = {"with": [], "without": []}
        for r in range(args.repeat):
            for stats in ((True, False) if r % 2 == 0 else (False, True)):
                p = lf_path if stats else str(work / "nostats.lance")
                writes["with" if stats else "without"].append(
                    timed(lambda: lancefile.write_table(table, p, statistics=stats))[0])
        pq.write_table(table, pq_path)
        lance.write_dataset(table, ds_path, max_rows_per_file=args.rows + 1)
        ds = lance.dataset(ds_path)
        n = args.rows
        cases = {"0.1 %": 0.001, "1 %": 0.01, "10 %": 0.10, "none": None}
        records = []
        for label, frac in cases.items():
            if frac is None:
                expr = pc.field("key") > n + 10
            else:
                lo = n // 2
                expr = (pc.field("key") >= lo) & (pc.field("key") < lo + int(n * frac))
            libs = {
                "lancefile": lambda: lancefile.read_table(lf_path, filters=expr),
                "parquet": lambda: pq.read_table(pq_path, filters=expr),
                "pylance": lambda: ds.to_table(filter=expr),
            }
            want = table.filter(expr).num_rows
            for lib, fn in libs.items():
                got = fn().num_rows
                if got != want:
                    raise SystemExit(f"{lib} {label}: {got} rows, expected {want}")
            times = {lib: [] for lib in libs}
            for r in range(args.repeat):
                order = list(libs.items())
                order = order[r % len(order):] + order[: r % len(order)]
                for lib, fn in order:
                    times[lib].append(timed(fn)[0])
            rec = {"case": label, "rows": want, **{lib: median(ts) for lib, ts in times.items()}, "all": times}
            records.append(rec)
            if not args.silent:
                print(f"{label:6s} lancefile {rec['lancefile'] * 1e3:8.2f} ms  parquet {rec['parquet'] * 1e3:8.2f} ms  "
                      f"pylance {rec['pylance'] * 1e3:8.2f} ms", file=sys.stderr)
        return {"machine": machine(), "rows": n, "records": records,
                "write_with": median(writes["with"]), "write_without": median(writes["without"]),
                "sizes": {"lancefile": os.path.getsize(lf_path), "lancefile_no_stats": os.path.getsize(str(work / "nostats.lance")),
                          "parquet": os.path.getsize(pq_path)},
                "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(res: dict) -> str:
    m = res["machine"]
    lines = ["# lancefile filter benchmark results", "",
             f"Run {res['when']} on {m.get('cpu_count', '?')} CPUs ({m.get('cpu_model', '?')}); {res['rows']:,} rows sorted "
             f"by `key`; command `python -m bench.filters`. lancefile reads its Lance 2.2 file with statistics "
             f"(zones of 8,192 rows), parquet its file with pyarrow's default row groups, pylance a one-fragment "
             f"dataset with no index (`to_table(filter=)`). Ratios: lancefile time / other time, below 1.00 is faster.",
             "", "| selected | rows | lancefile | parquet | pylance | lancefile/parquet | lancefile/pylance |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in res["records"]:
        lines.append(f"| {r['case']} | {r['rows']:,} | {r['lancefile'] * 1e3:.2f} ms | {r['parquet'] * 1e3:.2f} ms | "
                     f"{r['pylance'] * 1e3:.2f} ms | {r['lancefile'] / r['parquet']:.2f} | {r['lancefile'] / r['pylance']:.2f} |")
    s = res["sizes"]
    lines += ["", f"Write with statistics {res['write_with'] * 1e3:.1f} ms, without {res['write_without'] * 1e3:.1f} ms "
              f"(cost {res['write_with'] / res['write_without'] - 1:+.1%}); file {s['lancefile']:,} bytes "
              f"({s['lancefile'] - s['lancefile_no_stats']:,} of them statistics), parquet {s['parquet']:,} bytes."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.filters", description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--out", default=str(Path(__file__).parent))
    p.add_argument("--silent", action="store_true")
    args = p.parse_args(argv)
    res = run(args)
    text = report(res)
    Path(args.out, "FILTER-RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
