"""Measurements that need a fresh Python process; each prints one JSON object.

* ``memory``: peak RSS of a streaming write (batches generated on the fly, never the whole
  table), of a write of the whole table as one batch (``write-one-batch``: the one-page file;
  the batch is in the baseline), or of a batch-by-batch scan, for one library. The baseline is the RSS after the
  imports and the set-up, just before the measured operation; the peak is the kernel's
  high-water mark (``VmHWM``) at the end.
* ``import``: seconds to import one module, and whether numba came with it.
* ``first-call``: the first write, read and take of a small table in a fresh process, then
  the same calls again (steady state); with ``--kernels``, the first call of a few numba
  kernels (compiled, or loaded from numba's cache, depending on ``NUMBA_CACHE_DIR``).

Run by :mod:`bench.run` as ``python -m bench.child KIND ...``; not meant to be used by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    return float("nan")


WARM_UP_ROWS = 20_000


def _warm_up(lib, spec, args) -> None:
    """Write and scan a small file of the table first, so what a library loads once per process
    (numba and its compiled kernels for lancefile's 2.1+ code) is in the baseline: the
    measurement is what the data costs. The start-up section measures those first calls."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "warm-up")
        lib.write(path, spec.schema, [next(spec.batches(WARM_UP_ROWS, seed=args.seed + 1))], args.version)
        for _ in lib.batches(lib.open(path), args.batch_size):
            pass


def memory(args) -> dict:
    from bench import libs
    from bench.data import spec as table_spec

    import pyarrow as pa

    lib, spec = libs.get(args.lib), table_spec(args.table)
    if args.op in ("write", "scan"):
        _warm_up(lib, spec, args)
    numba_before = "numba" in sys.modules
    live = [0]  # peak of the memory held in pyarrow's pool (lancefile's and parquet's buffers)

    def held() -> int:
        # lancefile's freed buffers kept for reuse are in Arrow's pool too, but hold no data
        pool = sys.modules.get("lancefile.bufferpool")
        return pa.total_allocated_bytes() - (pool.cached_bytes() if pool is not None else 0)

    def sample():
        live[0] = max(live[0], held())

    if args.op == "write":
        batches = spec.batches(args.rows, seed=args.seed)
        first = next(batches)  # generating a batch costs memory too: count it in the baseline

        def stream():
            yield first
            for b in batches:
                sample()
                yield b

        base, base_live = _status_mb("VmRSS"), held()
        t0 = time.perf_counter()
        lib.write(args.path, spec.schema, stream(), args.version)
    elif args.op == "write-one-batch":
        batch = spec.one_batch(args.rows, seed=args.seed)
        base, base_live = _status_mb("VmRSS"), held()
        t0 = time.perf_counter()
        lib.write(args.path, spec.schema, [batch], args.version)  # one write_batch call
    else:
        reader = lib.open(args.path)
        base, base_live = _status_mb("VmRSS"), held()
        t0 = time.perf_counter()
        rows = 0
        for b in lib.batches(reader, args.batch_size):
            rows += b.num_rows
            sample()
        if rows != args.rows:
            raise SystemExit(f"{args.lib} scanned {rows} rows, expected {args.rows}")
    seconds = time.perf_counter() - t0
    peak = _status_mb("VmHWM")
    return {"baseline_mb": base, "peak_mb": peak, "growth_mb": peak - base, "seconds": seconds,
            "arrow_live_mb": max(0, live[0] - base_live) / 2**20,
            # numba (imported on a kernel's first call) and its compiled kernels came in during the
            # operation: a fixed cost per process, part of the growth but not data held
            "numba_loaded": not numba_before and "numba" in sys.modules}


def import_time(args) -> dict:
    t0 = time.perf_counter()
    __import__(args.module)
    dt = time.perf_counter() - t0
    return {"seconds": dt, "numba_imported": "numba" in sys.modules}


def first_call(args) -> dict:
    t0 = time.perf_counter()
    from bench import libs
    from bench.data import TABLES

    lib = libs.get(args.lib)
    __import__(lib.module)
    out: dict = {"import": time.perf_counter() - t0}
    import numpy as np
    import pyarrow as pa

    # a small table touching the main 2.0 paths: fixed-width, strings (plain and
    # dictionary), fixed-size list, list<struct>, nulls
    parts = [TABLES[n].table(2000, seed=1) for n in ("numeric", "strings_lowcard", "strings_text", "embeddings", "nested")]
    cols, names = [], []
    for p in parts:
        for name in p.schema.names:
            if name not in names:
                names.append(name)
                cols.append(p.column(name))
    table = pa.table(cols, names=names)
    idx = np.arange(0, 2000, 37, dtype=np.int64)
    for attempt in ("first", "second"):
        path = os.path.join(args.dir, f"first-{args.lib}-{attempt}.{'parquet' if args.lib == 'parquet' else 'lance'}")
        t0 = time.perf_counter()
        lib.write(path, table.schema, table, args.version)
        t1 = time.perf_counter()
        r = lib.open(path)
        lib.scan(r, 1024)
        t2 = time.perf_counter()
        lib.take(lib.open(path), idx)
        t3 = time.perf_counter()
        out[attempt] = {"write": t1 - t0, "read": t2 - t1, "take": t3 - t2}
    out["numba_imported"] = "numba" in sys.modules
    if args.kernels:
        from lancefile.encodings import kernels

        v = (np.arange(4096) % 8).astype(np.uint16)
        t0 = time.perf_counter()
        kernels.inline_bitpacking_decode(kernels.inline_bitpacking_encode(v), 16, len(v))
        kernels.bitpacked_sequential_decode(kernels.bitpacked_sequential_encode(v, 3), 3, len(v), False, np.uint16)
        out["kernels_first_call"] = time.perf_counter() - t0
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.child")
    sub = p.add_subparsers(dest="kind", required=True)
    m = sub.add_parser("memory")
    m.add_argument("--op", choices=["write", "write-one-batch", "scan"], required=True)
    m.add_argument("--lib", required=True)
    m.add_argument("--table", required=True)
    m.add_argument("--rows", type=int, required=True)
    m.add_argument("--path", required=True)
    m.add_argument("--version", default="2.0")
    m.add_argument("--batch-size", type=int, default=1024)
    m.add_argument("--seed", type=int, default=0)
    i = sub.add_parser("import")
    i.add_argument("module")
    f = sub.add_parser("first-call")
    f.add_argument("--lib", required=True)
    f.add_argument("--dir", required=True)
    f.add_argument("--kernels", action="store_true")
    f.add_argument("--version", default="2.0")
    args = p.parse_args(argv)
    fn = {"memory": memory, "import": import_time, "first-call": first_call}[args.kind]
    print(json.dumps(fn(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
