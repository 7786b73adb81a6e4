"""``python -m lancefile.fuzz``: see :mod:`lancefile.fuzz`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lancefile.fuzz", description="Corruption fuzzer for lancefile's reader.")
    p.add_argument("--cases", type=int, default=1000, help="number of cases (default 1000)")
    p.add_argument("--seed", default="0", help="campaign seed: case i of seed S is the same on every run")
    p.add_argument("--start", type=int, default=0, help="first case number (to split a campaign)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores, at most 4)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    p.add_argument("--memory-mb", type=int, default=1024, help="address space a worker may add per case")
    p.add_argument("--out", default=None, help="directory for report.json and reproducers of problem cases")
    p.add_argument("--corpus", action="append", default=[], help="extra .lance files or directories to mutate")
    p.add_argument("--versions", default="2.0,2.1,2.2", help="versions of the generated corpus")
    p.add_argument("--kinds", default=None, help="mutation kinds (comma-separated; default all)")
    p.add_argument("--replay", default=None, help="SEED:CASE: run one case in this process, with tracebacks")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    from .runner import KINDS, run_campaign, worker_main

    if args.worker:
        worker_main(args.memory_mb)
        return 0
    kinds = tuple(args.kinds.split(",")) if args.kinds else KINDS
    versions = tuple(args.versions.split(","))
    if args.replay:
        return _replay(args, kinds, versions)
    t0 = time.time()
    last = [0.0]

    def progress(report):
        if time.time() - last[0] > 5:
            last[0] = time.time()
            print(f"\r{report.cases}/{args.cases} cases, {time.time() - t0:.0f} s: "
                  + ", ".join(f"{c} {n}" for c, n in report.counts.items() if n), end="", file=sys.stderr, flush=True)

    report = run_campaign(args.cases, args.seed, jobs=args.jobs, timeout=args.timeout, memory_mb=args.memory_mb,
                          out=args.out, extra=args.corpus, kinds=kinds, versions=versions, start=args.start,
                          progress=progress)
    print(file=sys.stderr)
    print(report.summary())
    print(f"{time.time() - t0:.0f} s")
    return 0 if report.ok else 1


def _replay(args, kinds, versions) -> int:
    import tempfile

    from . import corpus as corpus_mod
    from .mutations import apply
    from .runner import classify, describe_corpus, make_case, run_ops

    seed, case_no = args.replay.rsplit(":", 1)
    work = args.out or tempfile.mkdtemp(prefix="lancefile-fuzz-")
    paths = corpus_mod.build(os.path.join(work, "corpus"), versions=versions, extra=args.corpus)
    files = describe_corpus(paths, os.path.join(work, "corpus"))
    case = make_case(files, seed, int(case_no), kinds)
    fm = next(f.fm for f in files if f.name == case["file"])
    path = os.path.join(work, f"replay-{seed}-{case_no}.lance")
    with open(path, "wb") as fh:
        fh.write(apply(fm, case["spec"]))
    print(json.dumps({k: case[k] for k in ("file", "kind", "spec", "ops")}))
    import traceback

    import lancefile
    from .runner import _do

    for op in case["ops"]:
        try:
            _do(path, op)
            print(op[0], "ok")
        except lancefile.LanceError as exc:
            print(op[0], type(exc).__name__, exc)
        except BaseException:  # noqa: BLE001
            print(op[0], "FOREIGN")
            traceback.print_exc()
    results = run_ops(path, case["clean"], case["ops"])
    print("class:", classify(case, results), "| mutant:", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
