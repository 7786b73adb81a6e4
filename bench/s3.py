"""Object-storage benchmark: lancefile vs pylance reading from the same local S3 server.

Run ``python -m bench.s3`` from the repository root (needs the test extra: pylance and
``moto[server]``). It starts the local moto S3 server of the tests (``tests/s3server.py``)
in a process of its own, writes a table of ``--rows`` rows (default 2 M, about 200 MB:
``id`` int64, ``x`` float64, ``name`` string, ``emb`` 16 x float32) to it twice, as a Lance
2.2 file written by pylance and one written by lancefile, and reads each file with both
libraries:

* ``read_table``: the whole file (lancefile ``read_table``; pylance
  ``LanceFileReader(...).read_all().to_table()``);
* ``take 100``: 100 random rows (``take_rows``), each run a fresh reader, so the open is billed too.

Times are medians of ``--repeat`` interleaved runs (``--take-repeat`` for takes); requests are
counted by the server (one run of each). Ratios are lancefile / pylance (time below 1.00:
lancefile is faster; requests below 1.00: it asks less). moto keeps objects in memory and
copies the whole object for every ranged GET, under a lock: each request costs time in
proportion to the object's size, which a real object store does not do, so on this server the
request count weighs more than it would on S3. Writes ``bench/S3-RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from .measure import machine, median, rotate, timed

ROOT = Path(__file__).resolve().parent.parent
BUCKET = "lancefile-bench"


def _table(rows: int) -> pa.Table:
    rng = np.random.default_rng(0)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * 16, dtype=np.float32)), 16)
    names = np.array([f"name-{i:05d}" for i in range(10_000)])
    return pa.table({"id": np.arange(rows, dtype=np.int64), "x": rng.random(rows),
                     "name": pa.array(names[rng.integers(0, len(names), rows)]), "emb": emb})


class Server:
    """The tests' counting moto server in a child process."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.s3server", BUCKET], cwd=ROOT, env=env,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise SystemExit(f"the S3 server did not start (said {line!r})")
        self.endpoint = f"http://127.0.0.1:{line}"
        self.options = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "aws_region": "us-east-1",
                        "aws_endpoint": self.endpoint, "allow_http": "true"}

    def requests(self) -> list:
        """The requests the server received since the last call: [method, path, range]."""
        with urllib.request.urlopen(self.endpoint + "/__requests", timeout=60) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _summary(reqs: list) -> dict:
    counts = Counter(m for m, _, _ in reqs)
    nbytes = 0
    for _, _, rng in reqs:
        if rng and rng.startswith("bytes=") and "-" in rng:
            a, b = rng[len("bytes="):].split("-", 1)
            if a and b:
                nbytes += int(b) - int(a) + 1
    return {"GET": counts.get("GET", 0), "HEAD": counts.get("HEAD", 0), "other": sum(counts.values()) - counts.get("GET", 0)
            - counts.get("HEAD", 0), "requests": len(reqs), "bytes": nbytes}


def run(args) -> dict:
    import lance

    import lancefile

    server = Server()
    try:
        opts = server.options
        table = _table(args.rows)
        files = {"pylance's file": f"s3://{BUCKET}/theirs.lance", "lancefile's file": f"s3://{BUCKET}/ours.lance"}
        with lance.file.LanceFileWriter(files["pylance's file"], table.schema, storage_options=opts) as w:
            w.write_batch(table)
        lancefile.write_table(table, files["lancefile's file"], storage_options=opts)
        rng = np.random.default_rng(1)
        rows = np.sort(rng.choice(args.rows, size=min(100, args.rows), replace=False))
        expected_take = table.take(pa.array(rows))
        ops = {
            "read_table": (args.repeat, {
                "lancefile": lambda uri: lancefile.read_table(uri, storage_options=opts),
                "pylance": lambda uri: lance.file.LanceFileReader(uri, storage_options=opts).read_all().to_table(),
            }),
            "take 100": (args.take_repeat, {
                "lancefile": lambda uri: lancefile.LanceFileReader(uri, opts).take_rows(rows).to_table(),
                "pylance": lambda uri: lance.file.LanceFileReader(uri, storage_options=opts).take_rows(rows).to_table(),
            }),
        }
        records = []
        for fname, uri in files.items():
            size = lancefile.LanceFileReader(uri, opts).size_bytes()
            for op, (repeat, libs) in ops.items():
                want = table if op == "read_table" else expected_take
                rec = {"file": fname, "op": op, "size": size}
                server.requests()
                for lib, fn in libs.items():  # one checked run each, counted by the server
                    got = fn(uri)
                    if not got.equals(want):
                        raise SystemExit(f"{lib} {op} of {fname}: wrong result")
                    rec[f"{lib}_requests"] = _summary(server.requests())
                times = {lib: [] for lib in libs}
                for r in range(repeat):
                    for lib in rotate(list(libs), r):
                        times[lib].append(timed(lambda: libs[lib](uri))[0])
                for lib in libs:
                    rec[lib] = median(times[lib])
                rec["all"] = times
                records.append(rec)
                if not args.silent:
                    print(f"{fname:16s} {op:10s} lancefile {rec['lancefile'] * 1e3:9.1f} ms "
                          f"{rec['lancefile_requests']['requests']:4d} req   pylance {rec['pylance'] * 1e3:9.1f} ms "
                          f"{rec['pylance_requests']['requests']:4d} req", file=sys.stderr)
        return {"machine": machine(), "rows": args.rows, "nbytes": table.nbytes, "records": records,
                "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    finally:
        server.stop()


def report(res: dict) -> str:
    m = res["machine"]
    lines = ["# lancefile object-storage benchmark results", "",
             f"Run {res['when']} on {m.get('cpu_count', '?')} CPUs ({m.get('cpu_model', '?')}); command "
             f"`python -m bench.s3` ({res['rows']:,} rows, {res['nbytes'] / 1e6:.0f} MB of Arrow data: id int64, "
             f"x float64, name string, emb 16 x float32). Both libraries read the same objects from the same local "
             f"moto S3 server (a process of its own); requests are counted by the server. Ratios: lancefile / "
             f"pylance (below 1.00: lancefile takes less time / makes fewer requests). moto copies the whole "
             f"object for every ranged GET, under a lock, so on this server a request costs time in proportion "
             f"to the object's size; S3 does not.", "",
             "| file | operation | lancefile | pylance | time ratio | lancefile requests (GET+HEAD), MB | "
             "pylance requests (GET+HEAD), MB | request ratio |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in res["records"]:
        a, b = r["lancefile_requests"], r["pylance_requests"]
        lines.append(
            f"| {r['file']} ({r['size'] / 1e6:.0f} MB) | {r['op']} | {r['lancefile'] * 1e3:.0f} ms | "
            f"{r['pylance'] * 1e3:.0f} ms | {r['lancefile'] / r['pylance']:.2f} | {a['requests']} ({a['GET']}+{a['HEAD']}), "
            f"{a['bytes'] / 1e6:.1f} | {b['requests']} ({b['GET']}+{b['HEAD']}), {b['bytes'] / 1e6:.1f} | "
            f"{a['requests'] / max(b['requests'], 1):.2f} |")
    lines += ["", "Every run (seconds):", ""]
    for r in res["records"]:
        lines.append(f"- {r['file']}, {r['op']}: " + "; ".join(
            f"{lib} " + ", ".join(f"{t:.3f}" for t in ts) for lib, ts in r["all"].items()))
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.s3", description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--repeat", type=int, default=3, help="read_table runs per library and file")
    p.add_argument("--take-repeat", type=int, default=3, help="take runs per library and file")
    p.add_argument("--out", default=str(ROOT / "bench" / "S3-RESULTS.md"))
    p.add_argument("--silent", action="store_true")
    args = p.parse_args(argv)
    res = run(args)
    Path(args.out).write_text(report(res))
    if not args.silent:
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
