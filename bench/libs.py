"""The three libraries behind one small interface, used the way their users would.

* **lancefile** and **pylance** (``lance.file``) take the same calls: a streaming
  ``LanceFileWriter(path, schema, version=...)`` fed batch by batch, and a
  ``LanceFileReader(path, columns=...)`` with ``read_all(batch_size=...)``,
  ``read_range(start, n)`` and ``take_rows(indices)``.
* **parquet** (``pyarrow.parquet``, default options: snappy, dictionary, 1 Mi-row row
  groups) has no range or take: both read the row groups holding the wanted rows and
  slice/take from them, which is what a parquet user does.

pylance's ``take_rows`` checks in Python that the indices are sorted, one element at a
time, so it gets a Python list (the cheapest input for that loop); lancefile gets the
numpy array. ``lance`` is imported only by this benchmark, never by lancefile.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa

__all__ = ["Lib", "LIBS", "LANCE_LIBS", "get"]


@dataclass(frozen=True)
class Lib:
    name: str
    module: str  # what to import (for import time and the versions table)
    write: Callable  # (path, schema, batches, version) -> None
    open: Callable  # (path, columns) -> reader
    batches: Callable  # (reader, batch_size) -> iterator of record batches
    take: Callable  # (reader, sorted unique int64 indices) -> pa.Table
    read_range: Callable  # (reader, start, n) -> pa.Table
    versioned: bool = True  # the file depends on the Lance version

    def scan(self, reader, batch_size: int) -> int:
        """Iterate every batch (as a consumer would, one at a time); return the row count."""
        rows = 0
        for b in self.batches(reader, batch_size):
            rows += b.num_rows
        return rows


def _as_batches(data) -> Iterable:
    """A Table is handed over whole (both Lance writers take one); a stream batch by batch."""
    return [data] if isinstance(data, pa.Table) else data


# -- lancefile ------------------------------------------------------------------------------

def _lf_write(path, schema, batches: Iterable[pa.RecordBatch], version: str) -> None:
    import lancefile

    with lancefile.LanceFileWriter(path, schema, version=version) as w:
        for b in _as_batches(batches):
            w.write_batch(b)


def _lf_open(path, columns=None, **options):
    import lancefile

    return lancefile.LanceFileReader(path, columns=columns, **options)


def _lf_batches(reader, batch_size: int):
    return iter(reader.read_all(batch_size=batch_size))


# -- pylance --------------------------------------------------------------------------------

def _pl_write(path, schema, batches, version: str) -> None:
    import lance.file

    with lance.file.LanceFileWriter(str(path), schema, version=version) as w:
        for b in _as_batches(batches):
            w.write_batch(b)


def _pl_open(path, columns=None):
    import lance.file

    return lance.file.LanceFileReader(str(path), columns=columns)


def _pl_batches(reader, batch_size: int):
    return iter(reader.read_all(batch_size=batch_size).to_batches())


def _pl_take(reader, idx: np.ndarray) -> pa.Table:
    return reader.take_rows(idx.tolist()).to_table()


# -- parquet --------------------------------------------------------------------------------

def _pq_write(path, schema, batches, version: str) -> None:
    import pyarrow.parquet as pq

    with pq.ParquetWriter(str(path), schema) as w:
        if isinstance(batches, pa.Table):
            w.write_table(batches)  # row groups of the default size, whatever the chunking
        else:
            for b in batches:  # streaming: one row group per batch
                w.write_batch(b)


def parquet_zstd_write(path, table: pa.Table) -> None:
    """``table`` as parquet with zstd (pyarrow's default level), the size the targets compare with."""
    import pyarrow.parquet as pq

    pq.write_table(table, str(path), compression="zstd")


def _pq_open(path, columns=None):
    import pyarrow.parquet as pq

    f = pq.ParquetFile(str(path))
    f._bench_columns = columns  # ParquetFile takes columns per call, not at open
    return f


def _pq_batches(f, batch_size: int):
    return f.iter_batches(batch_size=batch_size, columns=f._bench_columns)


def _pq_row_group_starts(f) -> np.ndarray:
    md = f.metadata
    sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])


def _pq_take(f, idx: np.ndarray) -> pa.Table:
    starts = _pq_row_group_starts(f)
    groups = np.unique(np.searchsorted(starts, idx, side="right") - 1)
    t = f.read_row_groups(groups.tolist(), columns=f._bench_columns)
    # rows of the read groups are contiguous in file order: map file rows to positions
    base = np.concatenate([[0], np.cumsum(starts[groups + 1] - starts[groups])])
    g = np.searchsorted(starts[groups], idx, side="right") - 1
    return t.take(pa.array(base[g] + idx - starts[groups][g]))


def _pq_range(f, start: int, n: int) -> pa.Table:
    starts = _pq_row_group_starts(f)
    first = int(np.searchsorted(starts, start, side="right")) - 1
    last = int(np.searchsorted(starts, start + n - 1, side="right")) - 1
    t = f.read_row_groups(list(range(first, last + 1)), columns=f._bench_columns)
    return t.slice(start - int(starts[first]), n)


LIBS: dict[str, Lib] = {
    "lancefile": Lib("lancefile", "lancefile", _lf_write, _lf_open, _lf_batches,
                     lambda r, idx: r.take_rows(idx).to_table(),
                     lambda r, s, n: r.read_range(s, n).to_table()),
    "pylance": Lib("pylance", "lance", _pl_write, _pl_open, _pl_batches, _pl_take,
                   lambda r, s, n: r.read_range(s, n).to_table()),
    "parquet": Lib("parquet", "pyarrow.parquet", _pq_write, _pq_open, _pq_batches, _pq_take, _pq_range,
                   versioned=False),
}
LANCE_LIBS = ("lancefile", "pylance")


def get(name: str) -> Lib:
    return LIBS[name]


def versions(names: Sequence[str] = ("lancefile", "lance", "pyarrow", "numpy", "numba")) -> dict[str, str]:
    out = {}
    for n in names:
        try:
            out[n] = getattr(importlib.import_module(n), "__version__", "?")
        except ImportError:
            out[n] = "not installed"
    return out
