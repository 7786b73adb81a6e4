"""``python -m bench.kernels``: the compiled kernels alone, in nanoseconds a value (or a byte).

The figures the kernel commits quote come from here, so anyone can measure them again on
their machine: FastLanes unpacking and packing at each word size, the level kernels of a
nested scan (RLE definition levels, the def-level lookup, list offsets), the dictionary
index shift of a multi-page read, and FSST training and compression. Each is timed on
synthetic data shaped like the bench tables' (``--values`` of them), the median of
``--repeat`` runs after a warm-up call (numba compiles or loads its cache then).

Example (prints a Markdown table)::

    python -m bench.kernels --values 1000000 --repeat 9
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def _time(fn, repeat: int) -> float:
    fn()  # compile, or load numba's cache
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def _levels(n: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rep and def levels of a list<struct> column: 0-8 items a row, 5% null lists, as the
    nested bench table; returns (rep, def, row starts)."""
    rows = max(1, n // 4)
    lens = rng.integers(0, 9, rows)
    null = rng.random(rows) < 0.05
    lens[null] = 0
    entries = np.maximum(lens, 1)
    starts = np.cumsum(entries) - entries
    total = int(entries.sum())
    rep = np.zeros(total, np.uint16)
    rep[starts] = 1
    defs = np.zeros(total, np.uint16)
    defs[starts[lens == 0]] = 2
    defs[starts[null]] = 3
    return rep, defs, starts


def cases(n: int, rng) -> list[tuple[str, int, str, object]]:
    """(name, units, unit name, callable) for every kernel measured."""
    from lancefile.encodings import kernels as k

    out = []
    for bits, width in ((8, 3), (16, 9), (32, 10), (64, 20)):
        dtype = np.dtype(f"u{bits // 8}")
        values = rng.integers(0, 1 << width, n).astype(dtype)
        packed = k.inline_bitpacking_pack(values).tobytes()
        out.append((f"InlineBitpacking unpack, {bits}-bit words, width {width}", n, "value",
                    lambda packed=packed, bits=bits: k.inline_bitpacking_decode(packed, bits, n)))
        out.append((f"InlineBitpacking pack, {bits}-bit words, width {width}", n, "value",
                    lambda values=values: k.inline_bitpacking_pack(values)))
    rep, defs, starts = _levels(n, rng)
    blocks = [k.rle_block_encode(defs[i : i + 4096]) for i in range(0, len(defs), 4096)]
    data = np.frombuffer(b"".join(blocks), np.uint8)
    sizes = np.array([len(b) for b in blocks], np.int64)
    counts = np.minimum(4096, len(defs) - np.arange(0, len(defs), 4096))
    out.append(("RLE definition levels (blocks of 4,096)", len(defs), "level",
                lambda: k.rle_block_decode_many(data, 16, np.cumsum(sizes) - sizes, sizes, counts)))
    lut = np.array([0, 1, 3, 4], np.uint16)
    out.append(("definition level lookup (map_levels)", len(defs), "level", lambda: k.map_levels(defs, lut)))
    out.append(("list offsets (list_layer, rows' lists)", len(rep), "entry",
                lambda: k.list_layer(rep, defs, 1, 0, starts)))
    pages = max(1, n // 11_000)
    cuts = np.linspace(0, n, pages + 1).astype(np.int64)
    idx = rng.integers(0, 1000, n).astype(np.uint32)
    firsts = np.arange(pages, dtype=np.int64) * 1000
    out.append((f"dictionary indices of {pages} pages (page_indices)", n, "value",
                lambda: k.page_indices(idx, cuts, firsts, np.full(pages, 1000, np.int64))))
    words = [b"lance", b"columnar", b"file", b"format", b"arrow", b" ", b", ", b"pages", b"zone"]
    strings = [b"".join(words[i] for i in rng.integers(0, len(words), rng.integers(20, 200)))
               for _ in range(max(1, n // 400))]
    text = np.frombuffer(b"".join(strings), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in strings])]).astype(np.int64)
    symbols, lengths = k.fsst_build_symbol_table(text, offsets)
    out.append(("FSST training (16 KiB sample, compiled)", 1, "table", lambda: k.fsst_build_symbol_table(text, offsets)))
    out.append(("FSST training (plain Python twin)", 1, "table", lambda: k.fsst_build_symbol_table_py(text, offsets)))
    out.append(("FSST compression", len(text), "byte", lambda: k.fsst_compress(text, offsets, symbols, lengths)))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.kernels", description=__doc__.splitlines()[0])
    p.add_argument("--values", type=int, default=1_000_000, help="values per case (default 1,000,000)")
    p.add_argument("--repeat", type=int, default=9, help="timed runs per case; the median is shown (default 9)")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print("| kernel | units | time | per unit |")
    print("|---|---:|---:|---:|")
    for name, units, unit, fn in cases(args.values, rng):
        t = _time(fn, args.repeat)
        per = f"{t / units * 1e9:.2f} ns per {unit}" if units > 1 else f"{t * 1e3:.2f} ms"
        print(f"| {name} | {units:,} | {t * 1e3:.2f} ms | {per} |")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
