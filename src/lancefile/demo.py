"""The sample job: write a table of many types, read it back three ways, report.

Run it with ``lancefile demo`` (or ``python -m lancefile demo``). It generates an ML-style
table (ids, text, categories, timestamps, embeddings, tags, a nested struct), writes it
as a Lance 2.0 file, then reads it back with a projection, a row range and a take, checks
each against the source table, and prints what it did and how long each step took.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import pyarrow as pa

__all__ = ["sample_table", "run_demo"]


def sample_table(rows: int, seed: int = 0, dim: int = 64) -> pa.Table:
    """A realistic mixed-type table with nulls (vectorised generation)."""
    rng = np.random.default_rng(seed)
    words = np.array(["lance", "arrow", "spark", "vector", "column", "page", "footer", "schema"])
    text = [" ".join(words[rng.integers(0, len(words), 4)]) for _ in range(min(rows, 1000))]
    text_col = pa.array(np.array(text, dtype=object)[np.arange(rows) % max(1, len(text))], pa.string())
    categories = pa.array(np.array(["cat", "dog", "bird", "fish"])[rng.integers(0, 4, rows)])
    valid = rng.random(rows) > 0.1
    score = pa.array(rng.normal(size=rows), mask=~valid)
    ts = pa.array(1_700_000_000_000_000 + rng.integers(0, 10**12, rows), pa.timestamp("us", tz="UTC"))
    emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(rows * dim, dtype=np.float32)), dim)
    tag_len = rng.integers(0, 4, rows)
    tag_offsets = np.concatenate([[0], np.cumsum(tag_len)]).astype(np.int32)
    tags = pa.ListArray.from_arrays(pa.array(tag_offsets), pa.array(rng.integers(0, 100, int(tag_len.sum()))))
    meta = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 5, rows), pa.int8()), pa.array(rng.random(rows) > 0.5)], names=["source", "flag"]
    )
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "text": text_col,
        "category": categories,
        "score": score,
        "ts": ts,
        "embedding": emb,
        "tags": tags,
        "meta": meta,
    })


def _step(label: str, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"  {label:<42} {time.perf_counter() - t0:8.3f} s", flush=True)
    return out


def run_demo(out_dir: str | None = None, rows: int = 100_000) -> None:
    import lancefile

    if out_dir is None:  # a temporary directory of our own, removed afterwards
        with tempfile.TemporaryDirectory(prefix="lancefile-demo-") as tmp:
            return run_demo(tmp, rows)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "sample.lance")
    print(f"lancefile demo: {rows:,} rows -> {path}")
    table = _step("generate sample table", lambda: sample_table(rows))
    _step("write Lance 2.0 file", lambda: lancefile.write_table(table, path))
    size = os.path.getsize(path)
    print(f"  wrote {size / 1e6:.1f} MB ({table.nbytes / 1e6:.1f} MB in Arrow), {table.num_columns} columns")
    reader = lancefile.LanceFileReader(path)
    full = _step("read everything", lambda: reader.read_all(batch_size=8192).to_table())
    assert full.equals(table), "full read differs from the source"
    proj = _step("read projection [id, category, meta.flag]",
                 lambda: lancefile.LanceFileReader(path, columns=["id", "category", "meta.flag"]).read_all().to_table())
    assert proj.column("category").equals(table.column("category"))
    start, n = rows // 3, min(1000, rows // 3)
    rng_t = _step(f"read_range({start}, {n})", lambda: reader.read_range(start, n).to_table())
    assert rng_t.equals(table.slice(start, n))
    idx = np.sort(np.random.default_rng(1).choice(rows, size=min(100, rows), replace=False))
    took = _step(f"take_rows({len(idx)} random rows)", lambda: reader.take_rows(idx).to_table())
    assert took.equals(table.take(idx))
    print("  all reads match the source table")
    print(took.select(["id", "text", "category", "score", "ts"]).slice(0, 3).to_pandas().to_string()
          if _has_pandas() else took.select(["id", "category"]).slice(0, 3))


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
        return True
    except ImportError:
        return False
