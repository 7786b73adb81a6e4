"""Paired A/B timing of two lancefile trees: ``python -m bench.pairs``.

On a shared machine one bench cell moves by 10-25% from run to run, more than most changes
are worth. This compares two versions of lancefile on one operation the way that noise hurts
least: two long-lived worker processes, one importing each tree's ``src``, take turns (in
alternating order) on the same operation over the same file, and the result is the median of
the paired ratios ``new / base`` next to each side's median.

``--base`` is a git revision of this repository (checked out into a temporary worktree) or a
directory holding ``src/lancefile``; ``--new`` is this checkout's ``src`` unless given the
same way. Operations: ``scan`` (a fresh reader, every batch of ``read_all``), ``take`` (a fresh
reader, 100 sorted random rows), ``range`` (a fresh reader, the bench's read_range: 1% of the
rows from the middle) and ``write`` (the table as one ``write_batch``, without
fsync). The file read is written once by pylance (``--writer lancefile``: by the new tree).

Example::

    python -m bench.pairs --base b48baba --table wide --op scan --batch-size 1024 --pairs 20
    # wide scan bs=1024 (20 pairs): base 253.95 ms, new 225.90 ms, paired new/base 0.897
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS = ("scan", "take", "range", "write")


def _worker(args) -> None:
    """One side: run the operation once per line on stdin, print its milliseconds."""
    import gc
    import time

    import numpy as np

    import lancefile
    from bench.data import TABLES

    spec = TABLES[args.table]
    if args.op == "write":
        table = spec.table(spec.rows_for(args.scale))
        out = Path(args.file).with_name(f"w-{os.getpid()}.lance")
        os.fsync = os.fdatasync = lambda fd: None  # as the bench's "write, no fsync"
    else:
        rows = lancefile.LanceFileReader(args.file).num_rows()
        idx = np.sort(np.random.default_rng(0).choice(rows, min(100, rows), replace=False))
    for _ in sys.stdin:
        gc.collect()
        t0 = time.perf_counter()
        if args.op == "scan":
            for _batch in lancefile.LanceFileReader(args.file).read_all(batch_size=args.batch_size):
                pass
        elif args.op == "take":
            lancefile.LanceFileReader(args.file).take_rows(idx).to_table()
        elif args.op == "range":
            lancefile.LanceFileReader(args.file).read_range(rows // 2, max(1, rows // 100)).to_table()
        else:
            if out.exists():
                out.unlink()
            with lancefile.LanceFileWriter(out, table.schema, version=args.version) as w:
                w.write_batch(table)
        print((time.perf_counter() - t0) * 1000, flush=True)
    if args.op == "write" and out.exists():
        out.unlink()


def _src(where: str | None, work: Path, name: str) -> Path:
    """The ``src`` directory of a tree: this checkout's (None), a directory's, or a git
    revision's, checked out into ``work``."""
    if where is None:
        return ROOT / "src"
    path = Path(where)
    if (path / "src" / "lancefile").is_dir():
        return path / "src"
    tree = work / name
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), where],
                   check=True, capture_output=True, text=True)
    return tree / "src"


def _write_file(args, src: Path, path: Path) -> None:
    """The table at ``args.version``, written by pylance or by the tree at ``src``."""
    code = ("import sys; from bench.data import TABLES; s = TABLES[sys.argv[1]]; "
            "t = s.table(s.rows_for(float(sys.argv[2])))\n"
            "if sys.argv[4] == 'pylance':\n"
            "    import lance.file\n"
            "    with lance.file.LanceFileWriter(sys.argv[3], t.schema, version=sys.argv[5]) as w:\n"
            "        for b in t.to_batches(): w.write_batch(b)\n"
            "else:\n"
            "    import lancefile; lancefile.write_table(t, sys.argv[3], version=sys.argv[5])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(ROOT)]))
    subprocess.run([sys.executable, "-c", code, args.table, str(args.scale), str(path), args.writer, args.version],
                   check=True, env=env)


def compare(args) -> dict:
    """Run the pairs; returns the medians (ms) and the median paired ratio."""
    with tempfile.TemporaryDirectory(prefix="lancefile-pairs-") as tmp:
        work = Path(tmp)
        worktrees = []
        try:
            srcs = {}
            for side, where in (("base", args.base), ("new", args.new)):
                srcs[side] = _src(where, work, side)
                if srcs[side].parent.parent == work:
                    worktrees.append(srcs[side].parent)
            path = work / f"{args.table}.lance"
            _write_file(args, srcs["new"], path)
            cmd = [sys.executable, "-m", "bench.pairs", "--worker", "--file", str(path), "--op", args.op,
                   "--table", args.table, "--scale", str(args.scale), "--batch-size", str(args.batch_size),
                   "--version", args.version]
            procs = {side: subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                            env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(ROOT)])))
                     for side, src in srcs.items()}

            def once(side: str) -> float:
                p = procs[side]
                p.stdin.write("go\n")
                p.stdin.flush()
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError(f"the {side} worker stopped (exit status {p.wait()})")
                return float(line)

            try:
                for side in procs:  # warm-up: imports, compiled kernels, the page cache
                    once(side)
                times: dict[str, list[float]] = {"base": [], "new": []}
                for i in range(args.pairs):
                    for side in (("base", "new") if i % 2 == 0 else ("new", "base")):
                        times[side].append(once(side))
            finally:
                for p in procs.values():
                    p.stdin.close()
                    p.wait()
        finally:
            for tree in worktrees:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                               capture_output=True)
    paired = statistics.median(n / b for b, n in zip(times["base"], times["new"]))
    return {"base_ms": statistics.median(times["base"]), "new_ms": statistics.median(times["new"]),
            "paired": paired, "pairs": args.pairs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.pairs", description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=False, help="git revision or directory of the base tree")
    ap.add_argument("--new", default=None, help="git revision or directory of the new tree (default: this one)")
    ap.add_argument("--table", default="wide", help="a bench table (bench/data.py)")
    ap.add_argument("--op", choices=OPS, default="scan")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--version", default="2.2")
    ap.add_argument("--writer", choices=("pylance", "lancefile"), default="pylance")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args)
        return 0
    if args.base is None:
        ap.error("--base is required")
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")
    r = compare(args)
    what = f"{args.table} {args.op}" + (f" bs={args.batch_size}" if args.op == "scan" else "")
    print(f"{what} ({r['pairs']} pairs): base {r['base_ms']:.2f} ms, new {r['new_ms']:.2f} ms, "
          f"paired new/base {r['paired']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
