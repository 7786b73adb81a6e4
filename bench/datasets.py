"""Dataset benchmark: lancefile.dataset vs lance.dataset on the same 10-fragment datasets.

Run ``python -m bench.datasets`` from the repository root (``--help`` for options). For each
bench table (``numeric``, ``strings_text``, ``nested`` by default) it builds, with pylance,
a dataset of 10 fragments at Lance 2.2 and a second version with 1 % of the rows deleted
(deletion files in every fragment), and times, interleaved, medians of several runs:

* ``open``: opening the latest version;
* ``scan``: ``to_table()`` of every live row;
* ``take 100``: 100 random live positions (``take``);
* ``scan (lancefile-written)``: ``to_table()`` of the same rows in a dataset lancefile wrote.

It then times ``scan`` and ``take 100`` on a dataset of many small fragments (500 of 1,000
rows of the numeric table by default, ``--small-fragments``), which times what each
fragment costs (a file to open, a page a column) rather than decoding.

Ratios are ``lancefile time / pylance time``: below 1.00 is faster. Targets (issue 11):
scan <= 1.0, take <= 1.5. Writes ``bench/DATASET-RESULTS.md`` and
``bench/dataset-results.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .data import TABLES
from .measure import machine, median, timed

FRAGMENTS = 10
SMALL_FRAGMENTS = 500  # the many-small-fragments dataset (see _small_fragments)
SMALL_FRAGMENT_ROWS = 1_000
DELETE_FRACTION = 0.01
DEFAULT_TABLES = ("numeric", "strings_text", "nested")


def _build(table, work: Path, name: str):
    import lance

    import lancefile

    uri = str(work / f"{name}.pylance")
    rows = table.num_rows
    lance.write_dataset(table, uri, max_rows_per_file=-(-rows // FRAGMENTS), data_storage_version="2.2")
    lance.dataset(uri).delete(f"_rowid % {int(1 / DELETE_FRACTION)} = 7")  # every 100th row
    own = str(work / f"{name}.lancefile")
    lancefile.write_dataset(table, own, max_rows_per_file=-(-rows // FRAGMENTS))
    return uri, own


def run(args) -> dict:
    import lance

    import lancefile

    work = Path(tempfile.mkdtemp(prefix="lancefile-dsbench-"))
    records = []
    try:
        for name in args.tables:
            spec = TABLES[name]
            table = spec.table(spec.rows_for(args.scale), seed=0)
            uri, own = _build(table, work, name)
            live = lance.dataset(uri).count_rows()
            if lancefile.dataset(uri).count_rows() != live:
                raise SystemExit(f"{name}: lancefile counts {lancefile.dataset(uri).count_rows()} rows, pylance {live}")
            rng = np.random.default_rng(1)
            idx = rng.integers(0, live, 100)
            ops = {
                "open": (lambda: lance.dataset(uri), lambda: lancefile.dataset(uri), args.repeat_fast),
                "scan": (lambda: lance.dataset(uri).to_table(), lambda: lancefile.dataset(uri).to_table(), args.repeat),
                "take 100": (lambda: lance.dataset(uri).take(idx), lambda: lancefile.dataset(uri).take(idx),
                             args.repeat_fast),
                "scan (lancefile-written)": (lambda: lance.dataset(own).to_table(),
                                             lambda: lancefile.dataset(own).to_table(), args.repeat),
            }
            check_py = lance.dataset(uri).take(idx)
            check_lf = lancefile.dataset(uri).take(idx)
            if not check_py.equals(check_lf):
                raise SystemExit(f"{name}: take results differ between pylance and lancefile")
            _measure(ops, name, live, args, records)
        if args.small_fragments:
            _small_fragments(work, args, records)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"machine": machine(), "scale": args.scale, "fragments": FRAGMENTS,
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "records": records}


def _measure(ops: dict, name: str, live: int, args, records: list) -> None:
    """Median times of each operation, pylance and lancefile interleaved (the order flips each round)."""
    for op, (py, lf, reps) in ops.items():
        times = {"pylance": [], "lancefile": []}
        py(), lf()  # warm the page cache and both libraries
        for r in range(reps):
            order = [("pylance", py), ("lancefile", lf)]
            if r % 2:
                order.reverse()
            for lib, fn in order:
                times[lib].append(timed(fn)[0])
        rec = {"table": name, "op": op, "rows": live,
               "pylance": median(times["pylance"]), "lancefile": median(times["lancefile"]),
               "all": times}
        rec["ratio"] = rec["lancefile"] / rec["pylance"]
        records.append(rec)
        if not args.silent:
            print(f"{name:14s} {op:26s} lancefile {rec['lancefile'] * 1e3:9.2f} ms  "
                  f"pylance {rec['pylance'] * 1e3:9.2f} ms  ratio {rec['ratio']:.2f}", file=sys.stderr)


def _small_fragments(work: Path, args, records: list) -> None:
    """A dataset of many small fragments (as frequent small appends leave one): the numeric
    table's first ``small_fragments`` x 1,000 rows, a fragment per 1,000 rows, written by
    pylance. Each fragment is a file to open and a page a column to decode, so this times the
    cost a fragment carries rather than decoding."""
    import lance

    import lancefile

    n = args.small_fragments
    table = TABLES["numeric"].table(n * SMALL_FRAGMENT_ROWS, seed=0)
    uri = str(work / "small-fragments.pylance")
    lance.write_dataset(table, uri, max_rows_per_file=SMALL_FRAGMENT_ROWS, data_storage_version="2.2")
    if not lancefile.dataset(uri).to_table().equals(lance.dataset(uri).to_table()):
        raise SystemExit("small fragments: the scans differ between pylance and lancefile")
    idx = np.random.default_rng(1).integers(0, table.num_rows, 100)
    ops = {
        "scan": (lambda: lance.dataset(uri).to_table(), lambda: lancefile.dataset(uri).to_table(), args.repeat),
        "take 100": (lambda: lance.dataset(uri).take(idx), lambda: lancefile.dataset(uri).take(idx),
                     args.repeat_fast),
    }
    _measure(ops, f"numeric, {n:,} fragments of {SMALL_FRAGMENT_ROWS:,} rows", table.num_rows, args, records)


def report(result: dict) -> str:
    m = result["machine"]
    lines = [
        "# lancefile dataset benchmark results", "",
        f"Run {result['when']}; scale {result['scale']} of the bench tables, {result['fragments']} fragments, "
        f"Lance 2.2 data files written by pylance, 1 % of rows deleted (a deletion file per fragment). "
        f"Command: `python -m bench.datasets`. Machine: {m.get('cpu_count', '?')} CPUs ({m.get('cpu_model', '?')}), Python {m.get('python', '?')}, "
        f"pylance {m.get('pylance', '?')}.", "",
        "Ratios are of median times, `lancefile / pylance`: below 1.00 is faster than pylance. "
        "Targets: scan <= 1.00, take <= 1.50 (on the 10-fragment datasets; the many-small-fragments "
        "dataset is reported without one: it times the cost each fragment carries).", "",
        "| table | operation | live rows | lancefile | pylance | lancefile/pylance |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in result["records"]:
        lines.append(f"| {r['table']} | {r['op']} | {r['rows']:,} | {r['lancefile'] * 1e3:.2f} ms | "
                     f"{r['pylance'] * 1e3:.2f} ms | {r['ratio']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.datasets", description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.25, help="fraction of the bench tables' ~200 MB (default 0.25)")
    p.add_argument("--tables", default=",".join(DEFAULT_TABLES))
    p.add_argument("--repeat", type=int, default=11,
                   help="repetitions of scans, interleaved (default 11: medians of 5 moved by up to ±20%%)")
    p.add_argument("--repeat-fast", type=int, default=15)
    p.add_argument("--small-fragments", type=int, default=SMALL_FRAGMENTS,
                   help=f"fragments of {SMALL_FRAGMENT_ROWS:,} rows in the small-fragments dataset (0: none)")
    p.add_argument("--out", default=str(Path(__file__).parent))
    p.add_argument("--silent", action="store_true")
    args = p.parse_args(argv)
    args.tables = [t for t in args.tables.split(",") if t]
    result = run(args)
    out = Path(args.out)
    (out / "dataset-results.json").write_text(json.dumps(result, indent=1, default=str))
    text = report(result)
    (out / "DATASET-RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
