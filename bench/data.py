"""The benchmark tables: deterministic, generated batch by batch.

Each :class:`TableSpec` builds batch ``i`` of a table from ``(seed, i)`` alone, so the same
rows come out whether the table is materialised in memory (for the timings) or streamed
one batch at a time (for the peak-memory runs, which must never hold the whole table).
Batches are about :data:`BATCH_BYTES` of Arrow data.

==================  ==========================================================  ========
table               columns                                                     B/row
==================  ==========================================================  ========
numeric             ``i`` int64 in [0, 1000), ``f`` float64 uniform             16
strings_lowcard     ``city`` string (60 values, 1 % null), ``status`` (5)        ~26
strings_text        ``text`` string, 200-2,000 bytes of words                   ~1,100
embeddings          ``id`` int64, ``vector`` fixed_size_list<float32>[768]      3,080
nested              ``id`` int64, ``items`` list<struct<x int64, y float32,      ~121
                    tag string>> (0-8 items, 5 % null lists)
wide                1,000 float64 columns ``c0000``...``c0999``                 8,000
one_page            ``vector`` fixed_size_list<float32>[128], 1 M rows at scale  512
                    1, written in one ``write_batch`` (memory runs only)
==================  ==========================================================  ========

``one_page`` is not in :data:`TABLES` (the timed tables): pylance 14.0.2 writes a single
big ``write_batch`` at 2.1/2.2 as one page per column, so this table, materialised as one
batch (:meth:`TableSpec.one_batch`), makes a file whose vector column is one 512 MB page.

Example::

    >>> spec = TABLES["numeric"]
    >>> t = spec.table(spec.rows_for(0.001), seed=0)
    >>> t.schema.names, t.num_rows
    (['i', 'f'], 12500)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

__all__ = ["TableSpec", "TABLES", "ONE_PAGE", "spec", "TARGET_MB", "BATCH_BYTES", "WIDE_COLUMNS"]

TARGET_MB = 200  # Arrow megabytes per table at scale 1.0
BATCH_BYTES = 8 * 1024 * 1024  # Arrow bytes per generated batch
WIDE_COLUMNS = 1000

_CITIES = [f"city-{i:02d}-{'x' * (i % 9)}" for i in range(60)]
_STATUSES = ["new", "active", "paused", "closed", "archived"]
_TAGS = [f"tag-{i:04d}-{'abcdefgh'[: i % 8]}" for i in range(1000)]


@dataclass(frozen=True)
class TableSpec:
    name: str
    description: str
    bytes_per_row: float  # an estimate, used to size tables and batches
    schema: pa.Schema
    make: Callable[[np.random.Generator, int, int], pa.RecordBatch]  # (rng, first row, rows) -> batch
    one_column: str | None = None  # the column read by the one-column scan
    full_rows: int | None = None  # rows at scale 1 (default: TARGET_MB of Arrow data)

    def rows_for(self, scale: float) -> int:
        if self.full_rows is not None:
            return max(1, int(self.full_rows * scale))
        return max(1, int(TARGET_MB * 1e6 * scale / self.bytes_per_row))

    def batch_rows(self) -> int:
        return max(1, int(BATCH_BYTES // self.bytes_per_row))

    def batches(self, rows: int, seed: int = 0) -> Iterator[pa.RecordBatch]:
        """The table as a stream of batches; batch ``i`` depends only on ``(seed, i)``."""
        step = self.batch_rows()
        for i, start in enumerate(range(0, rows, step)):
            rng = np.random.default_rng([seed, i])
            yield self.make(rng, start, min(step, rows - start))

    def table(self, rows: int, seed: int = 0) -> pa.Table:
        return pa.Table.from_batches(list(self.batches(rows, seed)), schema=self.schema)

    def one_batch(self, rows: int, seed: int = 0) -> pa.RecordBatch:
        """The whole table as a single batch (for one ``write_batch`` call)."""
        return self.make(np.random.default_rng([seed, 0]), 0, rows)


def _strings(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(int64 offsets, uint8 data) of a small list of strings, to build arrays by index."""
    enc = [v.encode() for v in values]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in enc], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(enc), dtype=np.uint8)


def _pick(values: pa.Array, idx: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    out = values.take(pa.array(idx))
    if null is not None and null.any():
        bitmap = pa.py_buffer(np.packbits(~null, bitorder="little"))
        out = pa.Array.from_buffers(out.type, len(out), [bitmap] + out.buffers()[1:])
    return out


# -- numeric --------------------------------------------------------------------------------

_NUMERIC = pa.schema([("i", pa.int64()), ("f", pa.float64())])


def _numeric(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch([pa.array(rng.integers(0, 1000, n)), pa.array(rng.random(n))], schema=_NUMERIC)


# -- low-cardinality strings ------------------------------------------------------------------

_LOWCARD = pa.schema([("city", pa.string()), ("status", pa.string())])
_CITY_ARR, _STATUS_ARR = pa.array(_CITIES), pa.array(_STATUSES)


def _lowcard(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    city = _pick(_CITY_ARR, rng.integers(0, len(_CITIES), n), rng.random(n) < 0.01)
    status = _pick(_STATUS_ARR, rng.integers(0, len(_STATUSES), n))
    return pa.record_batch([city, status], schema=_LOWCARD)


# -- long text -----------------------------------------------------------------------------

_TEXT = pa.schema([("text", pa.string())])
_CORPUS: np.ndarray | None = None
_CORPUS_BYTES = 4 * 1024 * 1024


def _corpus() -> np.ndarray:
    """4 MiB of lowercase words and spaces."""
    global _CORPUS
    if _CORPUS is None:
        rng = np.random.default_rng(12345)
        vocab_len = rng.integers(2, 11, 5000)
        vocab_off, vocab = _strings(["".join(chr(97 + c) for c in rng.integers(0, 26, k)) + " " for k in vocab_len])
        words = rng.integers(0, 5000, _CORPUS_BYTES // 5)
        lens = vocab_off[words + 1] - vocab_off[words]
        out_start = np.cumsum(lens) - lens
        idx = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(vocab_off[words] - out_start, lens)
        _CORPUS = vocab[idx][:_CORPUS_BYTES]
    return _CORPUS


def _text(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    lens = rng.integers(200, 2001, n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lens, out=offsets[1:])
    corpus = _corpus()
    at, total = int(rng.integers(0, len(corpus))), int(offsets[-1])
    # consecutive windows of the corpus, from a random place, wrapping around
    data = np.tile(corpus, -(-(at + total) // len(corpus)))[at : at + total].copy()
    arr = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.record_batch([arr], schema=_TEXT)


# -- embeddings ----------------------------------------------------------------------------

_DIM = 768
_EMB = pa.schema([("id", pa.int64()), ("vector", pa.list_(pa.float32(), _DIM))])


def _vectors(rng: np.random.Generator, n: int, dim: int) -> pa.FixedSizeListArray:
    vec = rng.standard_normal(n * dim, dtype=np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(vec), dim)


def _embeddings(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch([pa.array(np.arange(start, start + n, dtype=np.int64)), _vectors(rng, n, _DIM)],
                           schema=_EMB)


# -- one page (memory runs only) -------------------------------------------------------------

PAGE_DIM = 128
PAGE_ROWS = 1_000_000  # x 512 bytes = one 512 MB page at scale 1
_PAGE = pa.schema([("vector", pa.list_(pa.float32(), PAGE_DIM))])


def _page(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch([_vectors(rng, n, PAGE_DIM)], schema=_PAGE)


# -- nested --------------------------------------------------------------------------------

_ITEM = pa.struct([("x", pa.int64()), ("y", pa.float32()), ("tag", pa.string())])
_NESTED = pa.schema([("id", pa.int64()), ("items", pa.list_(_ITEM))])
_TAG_ARR = pa.array(_TAGS)


def _nested(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    lens = rng.integers(0, 9, n)
    null = rng.random(n) < 0.05
    lens[null] = 0
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lens, out=offsets[1:])
    m = int(offsets[-1])
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1 << 40, m)), pa.array(rng.random(m, dtype=np.float32)),
         _pick(_TAG_ARR, rng.integers(0, len(_TAGS), m))],
        fields=list(_ITEM),
    )
    bitmap = pa.py_buffer(np.packbits(~null, bitorder="little")) if null.any() else None
    lists = pa.ListArray.from_buffers(_NESTED.field("items").type, n, [bitmap, pa.py_buffer(offsets)],
                                      children=[items])
    return pa.record_batch([pa.array(np.arange(start, start + n, dtype=np.int64)), lists], schema=_NESTED)


# -- wide ----------------------------------------------------------------------------------

_WIDE = pa.schema([(f"c{i:04d}", pa.float64()) for i in range(WIDE_COLUMNS)])


def _wide(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    block = rng.random((WIDE_COLUMNS, n))
    return pa.record_batch([pa.array(block[i]) for i in range(WIDE_COLUMNS)], schema=_WIDE)


TABLES: dict[str, TableSpec] = {
    s.name: s
    for s in [
        TableSpec("numeric", "int64 in [0, 1000) + float64 uniform", 16, _NUMERIC, _numeric),
        TableSpec("strings_lowcard", "2 low-cardinality string columns (60 and 5 values, 1% null)", 25.9,
                  _LOWCARD, _lowcard),
        TableSpec("strings_text", "long text, 200-2000 bytes a value", 1104, _TEXT, _text),
        TableSpec("embeddings", "int64 id + fixed_size_list<float32>[768]", 8 + 4 * _DIM, _EMB, _embeddings),
        TableSpec("nested", "int64 id + list<struct<int64, float32, string>>, 0-8 items, 5% null", 121,
                  _NESTED, _nested),
        TableSpec("wide", f"{WIDE_COLUMNS} float64 columns", 8 * WIDE_COLUMNS, _WIDE, _wide,
                  one_column="c0777"),
    ]
}

ONE_PAGE = TableSpec("one_page", f"fixed_size_list<float32>[{PAGE_DIM}], written in one write_batch", 4 * PAGE_DIM,
                     _PAGE, _page, full_rows=PAGE_ROWS)


def spec(name: str) -> TableSpec:
    """A timed table or ``one_page``, by name."""
    return ONE_PAGE if name == ONE_PAGE.name else TABLES[name]
