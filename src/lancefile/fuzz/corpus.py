"""The fuzzer's corpus: small files of every version lancefile reads, written by lancefile.

Each table of :data:`TABLES` is written at every version that can hold it, twice: as
lancefile writes by default (checksums and statistics), and ``plain`` (neither), so mutations
reach the decoders and the checks of everything read instead of stopping at a checksum.
Small pages (``max_page_bytes``) give several pages a column. Files from elsewhere (for
instance pylance's golden files in ``tests/data``) can be added with ``extra``.

Example::

    >>> import tempfile
    >>> files = build(tempfile.mkdtemp(), names=["ints"], versions=["2.0"])
    >>> sorted(os.path.basename(p) for p in files)
    ['ints-2.0-default.lance', 'ints-2.0-plain.lance']
"""

from __future__ import annotations

import decimal
import glob
import os

import numpy as np
import pyarrow as pa

__all__ = ["TABLES", "VERSIONS", "VARIANTS", "build"]

VERSIONS = ("2.0", "2.1", "2.2")
# writer options of each variant
VARIANTS = {"default": {}, "plain": {"checksums": False, "statistics": False}}


def _ints(rng, n=700):
    return pa.table({"i64": pa.array(rng.integers(-(1 << 40), 1 << 40, n)),
                     "narrow": pa.array(rng.integers(0, 900, n).astype(np.int32), mask=rng.random(n) < 0.2),
                     "u8": pa.array(rng.integers(0, 7, n).astype(np.uint8)),
                     "flag": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1),
                     "f": pa.array(rng.random(n))})


def _words(rng, n, k=30):
    words = np.array([f"word-{i:03d}-" + "x" * (i % 7) for i in range(k)], dtype=object)
    return words[rng.integers(0, k, n)]


def _strings(rng, n=500):
    text = [" ".join(_words(rng, int(rng.integers(0, 6)))) for _ in range(n)]
    return pa.table({"s": pa.array(text, mask=rng.random(n) < 0.1),
                     "low": pa.array(list(_words(rng, n))),
                     "b": pa.array([bytes(rng.integers(0, 256, int(rng.integers(0, 20))).astype(np.uint8)) for _ in range(n)],
                                   pa.binary()),
                     "ls": pa.array(text, pa.large_string())})


def _dictionary(rng, n=600):
    idx = rng.integers(0, 20, n).astype(np.int32)
    return pa.table({"d": pa.DictionaryArray.from_arrays(pa.array(idx, mask=rng.random(n) < 0.1),
                                                         pa.array([f"v{i}" for i in range(20)]))})


def _lists(rng, n=300):
    lens = rng.integers(0, 5, n)
    flat = rng.integers(0, 1000, int(lens.sum())).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    li = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat), mask=pa.array(rng.random(n) < 0.1))
    nested = pa.array([[list(range(int(k))) for k in rng.integers(0, 3, int(j))] if j % 5 else None
                       for j in rng.integers(0, 4, n)], pa.list_(pa.list_(pa.int64())))
    strs = pa.array([list(_words(rng, int(k))) for k in rng.integers(0, 4, n)], pa.list_(pa.string()))
    return pa.table({"li": li, "nested": nested, "strs": strs})


def _structs(rng, n=400, nulls=True):
    a = pa.array(rng.integers(0, 100, n).astype(np.int32))
    b = pa.array(list(_words(rng, n)))
    st = pa.StructArray.from_arrays([a, b], names=["a", "b"],
                                    mask=pa.array(rng.random(n) < 0.1) if nulls else None)
    inner = pa.StructArray.from_arrays([pa.array(rng.random(n))], names=["x"])
    lst = pa.array([[{"x": float(i), "y": int(i)}] * int(k) for i, k in enumerate(rng.integers(0, 3, n))],
                   pa.list_(pa.struct([("x", pa.float64()), ("y", pa.int64())])))
    return pa.table({"st": st, "outer": pa.StructArray.from_arrays([inner], names=["inner"]), "ls": lst})


def _fixed(rng, n=300):
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 8).astype(np.float32)), 8)
    fsb = pa.array([bytes(rng.integers(0, 256, 16).astype(np.uint8)) for _ in range(n)], pa.binary(16))
    dec = pa.array([decimal.Decimal(int(x)).scaleb(-2) for x in rng.integers(-10**6, 10**6, n)], pa.decimal128(12, 2))
    ts = pa.array(rng.integers(0, 10**15, n), pa.timestamp("us", "UTC"))
    return pa.table({"vec": vec, "fsb": fsb, "dec": dec, "ts": ts,
                     "day": pa.array(rng.integers(0, 20000, n).astype(np.int32), pa.date32())})


def _runs(rng, n=3000):
    run = np.repeat(rng.integers(-10**12, 10**12, n // 50 + 1), 50)[:n]
    return pa.table({"run": pa.array(run), "const": pa.array(np.full(n, 7, np.int64)),
                     "nulls": pa.nulls(n, pa.int32()), "few": pa.array(rng.integers(0, 3, n).astype(np.int16))})


def _blob(rng, n=40):
    values = [bytes(rng.integers(0, 256, int(k)).astype(np.uint8)) if k % 7 else None
              for k in rng.integers(0, 300, n)]
    field = pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    return pa.table({"id": pa.array(np.arange(n)), "blob": pa.array(values, pa.large_binary())},
                    schema=pa.schema([pa.field("id", pa.int64()), field]))


def _long(rng, n=60):  # values of 300+ bytes: full-zip pages in 2.1+
    return pa.table({"text": pa.array([" ".join(_words(rng, 40)) for _ in range(n)]),
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 128).astype(np.float32)), 128)})


def _map(rng, n=200):
    keys = [list(_words(rng, int(k))) for k in rng.integers(0, 4, n)]
    return pa.table({"m": pa.array([list(zip(k, range(len(k)))) for k in keys], pa.map_(pa.string(), pa.int64()))})


# name -> (make table, versions that hold it)
TABLES = {
    "ints": (_ints, VERSIONS),
    "strings": (_strings, VERSIONS),
    "dictionary": (_dictionary, VERSIONS),
    "lists": (_lists, VERSIONS),
    "structs": (_structs, ("2.1", "2.2")),
    "structs20": (lambda rng: _structs(rng, nulls=False), ("2.0",)),
    "fixed": (_fixed, VERSIONS),
    "runs": (_runs, VERSIONS),
    "blob": (_blob, VERSIONS),
    "long": (_long, VERSIONS),
    "map": (_map, ("2.2",)),
}


def _supported(options: dict) -> dict:
    """The options this build's writer knows (the fuzzer also measures older lancefile builds)."""
    import inspect

    from ..writer import LanceFileWriter

    known = inspect.signature(LanceFileWriter).parameters
    return {k: v for k, v in options.items() if k in known}


def build(directory: str, names=None, versions=VERSIONS, variants=tuple(VARIANTS), extra=(), seed: int = 0) -> list[str]:
    """Write the corpus into ``directory`` (files that exist are kept); return every file's path,
    ``extra`` ones (files or directories of ``*.lance``) included."""
    from ..api import write_table

    os.makedirs(directory, exist_ok=True)
    out = []
    for name in names or TABLES:
        make, holds = TABLES[name]
        for version in versions:
            if version not in holds:
                continue
            for variant in variants:
                path = os.path.join(directory, f"{name}-{version}-{variant}.lance")
                if not os.path.exists(path):
                    table = make(np.random.default_rng([seed, len(name)]))
                    write_table(table, path, version=version, max_page_bytes=4096, data_cache_bytes=2048,
                                **_supported(VARIANTS[variant]))
                out.append(path)
    for item in extra:
        out += sorted(glob.glob(os.path.join(item, "**", "*.lance"), recursive=True)) if os.path.isdir(item) else [item]
    return out
