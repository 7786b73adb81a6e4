"""A quick side-by-side of lancefile and pylance on one mixed table (not the full suite).

Run: ``python bench/quick_compare.py [rows]``. Prints best-of-3 times and the ratio
lancefile / pylance (below 1.0 means lancefile is faster), all measured in the same run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

import lance.file as lf
import lancefile


def best(fn, repeat: int = 3) -> float:
    out = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out


def main(rows: int) -> None:
    rng = np.random.default_rng(0)
    table = pa.table({
        "i": rng.integers(0, 1000, rows),
        "f": rng.random(rows),
        "s": pa.array(np.char.add("str", rng.integers(0, 10**6, rows).astype(str)).astype(object)),
        "v": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * 32, dtype=np.float32)), 32),
    })
    d = tempfile.mkdtemp()
    ref, ours = os.path.join(d, "ref.lance"), os.path.join(d, "ours.lance")

    def ref_write():
        with lf.LanceFileWriter(ref, table.schema, version="2.0") as w:
            w.write_batch(table)

    rows_out = [("write", best(lambda: lancefile.write_table(table, ours)), best(ref_write))]
    for bs in (1024, 65536):
        rows_out.append((f"scan batch_size={bs}",
                         best(lambda: lancefile.LanceFileReader(ref).read_all(batch_size=bs).to_table()),
                         best(lambda: lf.LanceFileReader(ref).read_all(batch_size=bs).to_table())))
    for k in (100, 10_000):
        idx = np.sort(rng.choice(rows, k, replace=False))
        rows_out.append((f"take_rows {k}",
                         best(lambda: lancefile.LanceFileReader(ref).take_rows(idx).to_table()),
                         best(lambda: lf.LanceFileReader(ref).take_rows(idx).to_table())))
    print(f"{rows:,} rows, {table.nbytes / 1e6:.0f} MB of Arrow data; 2.0 files")
    print(f"{'operation':<24}{'lancefile s':>12}{'pylance s':>12}{'ratio':>8}")
    for name, a, b in rows_out:
        print(f"{name:<24}{a:>12.4f}{b:>12.4f}{a / b:>8.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000)
