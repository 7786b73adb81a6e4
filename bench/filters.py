"""Filter benchmark: a selective read of a sorted file, lancefile vs pyarrow.parquet vs pylance,
and the write cost of statistics.

Run ``python -m bench.filters`` from the repository root. It writes a table of ``--rows``
rows (default 5 M) sorted by ``key`` (int64), with ``x`` (float64), ``tag`` (string) and
``payload`` (int64) columns:

* lancefile: one Lance 2.2 file with statistics (``lancefile.write_table``), read with
  ``read_table(filters=...)``;
* pyarrow.parquet: the same table with pyarrow's default row groups, read with
  ``pq.read_table(filters=...)``;
* pylance: a dataset written by ``lance.write_dataset`` (one fragment), read with
  ``to_table(filter=...)`` with no index, and the same dataset with a zone-map scalar index
  on ``key`` (``create_scalar_index("key", index_type="ZONEMAP")``, which pylance 14.0.2 builds).

Each selects 0.1 %, 1 % and 10 % of the key range, and nothing (a key beyond the range).
Medians of ``--repeat`` interleaved runs; ratios are ``lancefile time / other time``
(below 1.00: lancefile is faster).

Write cost of statistics: every ``--write-tables`` table of ``python -m bench`` (at
``--write-scale``) written by ``lancefile.write_table`` with and without statistics,
interleaved, ``--write-repeat`` times each: medians of wall time (what a user waits,
including the final fsync) and of the process's CPU time (all threads; steadier on a
shared machine, and it shows work the background thread hides from the wall time).
Writes ``bench/FILTER-RESULTS.md``.
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


def write_costs(args, work: Path) -> list[dict]:
    """Wall and CPU time of ``write_table`` with and without statistics, per bench table."""
    import lancefile

    from .data import TABLES

    out = []
    for name in [n for n in args.write_tables.split(",") if n]:
        spec = TABLES[name]
        table = spec.table(spec.rows_for(args.write_scale))
        wall: dict[bool, list[float]] = {True: [], False: []}
        cpu: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.write_repeat + 1):  # the first round warms up (compilation, caches)
            for stats in ((True, False) if r % 2 == 0 else (False, True)):
                path = str(work / f"w-{name}-{stats}.lance")

                def write() -> float:
                    c0 = time.process_time()
                    lancefile.write_table(table, path, statistics=stats)
                    return time.process_time() - c0

                seconds, cpu_seconds = timed(write)
                if r:
                    wall[stats].append(seconds)
                    cpu[stats].append(cpu_seconds)
                os.remove(path)
        rec = {"table": name, "rows": table.num_rows, "scale": args.write_scale,
               "loadavg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
               **{f"{kind}_{'with' if s else 'without'}": median(d[s])
                  for kind, d in (("wall", wall), ("cpu", cpu)) for s in (True, False)}}
        out.append(rec)
        if not args.silent:
            print(f"write {name:16s} wall {rec['wall_with'] / rec['wall_without'] - 1:+7.1%}  "
                  f"cpu {rec['cpu_with'] / rec['cpu_without'] - 1:+7.1%}  (load {rec['loadavg']:.2f})", file=sys.stderr)
    return out


def run(args) -> dict:
    import lance

    import lancefile

    work = Path(tempfile.mkdtemp(prefix="lancefile-filterbench-"))
    try:
        costs = write_costs(args, work)
        table = _table(args.rows)
        lf_path = str(work / "t.lance")
        pq_path = str(work / "t.parquet")
        ds_path = str(work / "t.pylance")
        zm_path = str(work / "t-zonemap.pylance")
        writes = {"with": [], "without": []}
        for r in range(args.repeat):
            for stats in ((True, False) if r % 2 == 0 else (False, True)):
                p = lf_path if stats else str(work / "nostats.lance")
                writes["with" if stats else "without"].append(
                    timed(lambda: lancefile.write_table(table, p, statistics=stats))[0])
        pq.write_table(table, pq_path)
        lance.write_dataset(table, ds_path, max_rows_per_file=args.rows + 1)
        ds = lance.dataset(ds_path)
        zm = lance.write_dataset(table, zm_path, max_rows_per_file=args.rows + 1)
        zm.create_scalar_index("key", index_type="ZONEMAP")
        zm = lance.dataset(zm_path)
        if not any(i["type"] == "ZoneMap" for i in zm.list_indices()):
            raise SystemExit(f"pylance built no zone-map index: {zm.list_indices()}")
        n = args.rows
        reader = lancefile.LanceFileReader(lf_path)  # kept open, as the pylance datasets are
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
                "lancefile_open": lambda: reader.read_all(filter=expr).to_table(),
                "parquet": lambda: pq.read_table(pq_path, filters=expr),
                "pylance": lambda: ds.to_table(filter=expr),
                "pylance_zonemap": lambda: zm.to_table(filter=expr),
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
                print(f"{label:6s} lancefile {rec['lancefile'] * 1e3:8.2f} ms  (open reader "
                      f"{rec['lancefile_open'] * 1e3:8.2f} ms)  parquet {rec['parquet'] * 1e3:8.2f} ms  "
                      f"pylance {rec['pylance'] * 1e3:8.2f} ms  pylance+zonemap {rec['pylance_zonemap'] * 1e3:8.2f} ms",
                      file=sys.stderr)
        return {"machine": machine(), "rows": n, "records": records, "write_costs": costs,
                "loadavg_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
                "write_with": median(writes["with"]), "write_without": median(writes["without"]),
                "sizes": {"lancefile": os.path.getsize(lf_path), "lancefile_no_stats": os.path.getsize(str(work / "nostats.lance")),
                          "parquet": os.path.getsize(pq_path)},
                "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(res: dict) -> str:
    m = res["machine"]
    lines = ["# lancefile filter benchmark results", "",
             f"Run {res['when']} on {m.get('cpu_count', '?')} CPUs ({m.get('cpu_model', '?')}), load average "
             f"{m.get('loadavg_start') or 0:.2f} at the start and {res.get('loadavg_end') or 0:.2f} at the end; "
             f"{res['rows']:,} rows sorted by `key`; command `python -m bench.filters`. lancefile reads its Lance 2.2 "
             f"file with statistics (zones of 8,192 rows): `read_table(path, filters=)`, which opens the file each "
             f"time, and `read_all(filter=)` of a `LanceFileReader` kept open (its statistics stay cached, as a "
             f"dataset's metadata and index do in pylance); parquet reads its file (`pq.read_table(path, filters=)`, "
             f"pyarrow's default row groups); pylance a one-fragment dataset kept open (`to_table(filter=)`) with no "
             f"index and with a zone-map index on `key` (`create_scalar_index(\"key\", index_type=\"ZONEMAP\")`). "
             f"Medians; ratios: lancefile time / other time, below 1.00 is faster (the last column: the open reader "
             f"against the zone map).",
             "", "| selected | rows | lancefile | lancefile, open reader | parquet | pylance | pylance + zone map "
             "| lancefile/parquet | lancefile/pylance | lancefile/zone map | open reader/zone map |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["records"]:
        lines.append(f"| {r['case']} | {r['rows']:,} | {r['lancefile'] * 1e3:.2f} ms | {r['lancefile_open'] * 1e3:.2f} ms "
                     f"| {r['parquet'] * 1e3:.2f} ms | {r['pylance'] * 1e3:.2f} ms | {r['pylance_zonemap'] * 1e3:.2f} ms | "
                     f"{r['lancefile'] / r['parquet']:.2f} | {r['lancefile'] / r['pylance']:.2f} | "
                     f"{r['lancefile'] / r['pylance_zonemap']:.2f} | {r['lancefile_open'] / r['pylance_zonemap']:.2f} |")
    s = res["sizes"]
    lines += ["", f"Write of this table with statistics {res['write_with'] * 1e3:.1f} ms, without "
              f"{res['write_without'] * 1e3:.1f} ms (cost {res['write_with'] / res['write_without'] - 1:+.1%}); file "
              f"{s['lancefile']:,} bytes ({s['lancefile'] - s['lancefile_no_stats']:,} of them statistics), parquet "
              f"{s['parquet']:,} bytes."]
    if res.get("write_costs"):
        lines += ["", "## Write cost of statistics", "",
                  "`lancefile.write_table(t, path)` (statistics on, the default) against `statistics=False`, on the "
                  "tables of `python -m bench`; medians of interleaved runs. Wall time includes the final fsync; CPU "
                  "time is the process's, all threads (statistics of large columns are gathered on a background "
                  "thread while the writer encodes, so their CPU cost can exceed their wall-time cost).", "",
                  "| table | rows | wall with | wall without | wall cost | CPU with | CPU without | CPU cost | load |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for c in res["write_costs"]:
            lines.append(f"| {c['table']} | {c['rows']:,} | {c['wall_with'] * 1e3:.1f} ms | "
                         f"{c['wall_without'] * 1e3:.1f} ms | {c['wall_with'] / c['wall_without'] - 1:+.1%} | "
                         f"{c['cpu_with'] * 1e3:.1f} ms | {c['cpu_without'] * 1e3:.1f} ms | "
                         f"{c['cpu_with'] / c['cpu_without'] - 1:+.1%} | {c['loadavg']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.filters", description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--out", default=str(Path(__file__).parent))
    p.add_argument("--silent", action="store_true")
    p.add_argument("--write-tables", default="numeric,strings_lowcard,wide,nested",
                   help="bench tables whose write cost of statistics is measured (comma-separated; empty: none)")
    p.add_argument("--write-scale", type=float, default=0.5)
    p.add_argument("--write-repeat", type=int, default=7)
    args = p.parse_args(argv)
    res = run(args)
    text = report(res)
    Path(args.out, "FILTER-RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
