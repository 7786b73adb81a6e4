"""A 2.0 take over many low-cardinality string pages reads every page's index bytes and
dictionary in one batch of requests (``dictionary.take_pages``); a damaged page still gets
its own error from the page's decoder."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.io import CountingSource, LocalFileSource

N = 50_000
COLORS = np.array(["red", "green", "blue", None, "violet-ish"], dtype=object)


def _file(tmp_path, name="f.lance") -> tuple[str, pa.Table]:
    t = pa.table({"c": pa.array(COLORS[np.arange(N) % 5]), "k": pa.array(np.arange(N))})
    path = str(tmp_path / name)
    lancefile.write_table(t, path, version="2.0", max_page_bytes=4096, checksums=False)  # ~90 pages a column
    return path, t


def _pages(path: str, column: int = 0) -> list:
    return lancefile.LanceFileReader(path).metadata().columns[column].pages


def test_a_take_over_many_dictionary_pages_is_one_batch_of_reads(tmp_path):
    path, t = _file(tmp_path)
    pages = _pages(path)
    assert sum(str(p.encoding).startswith("dictionary(") for p in pages) > 50  # (the last is too short for one)
    src = CountingSource(LocalFileSource(path))
    reader = lancefile.LanceFileReader(src, columns=["c"])
    reader.read_range(0, 1).to_table()  # the column's metadata read
    end = N - pages[-1].length  # (rows of the dictionary pages)
    for idx in (np.arange(0, end, 997), np.array([0, 1, 4, end - 1]), np.array([end - 1, 3, 3, 0, 12_345])):
        before = src.requests
        got = reader.take_rows(idx).to_table()
        assert got.column("c").equals(t.column("c").take(pa.array(idx)))
        # the pages' index bytes and dictionaries in one batch (a request or two), not two or three a page
        # the pages' index bytes and dictionaries in one batch: a request for each run of nearby pages, where
        # each page's decoder makes two or three
        touched = len(np.unique(np.searchsorted(np.cumsum([p.length for p in pages]), idx, side="right")))
        assert src.requests - before <= (2 if len(idx) > 10 else touched), (src.requests - before, touched)
    # with the last page (not a dictionary one): read by its own decoder, the others still together
    idx = np.array([0, 5_000, 30_000, N - 1])
    assert reader.take_rows(idx).to_table().column("c").equals(t.column("c").take(pa.array(idx)))


def _page_holding(path: str, offset: int) -> int:
    for i, p in enumerate(_pages(path)):
        if any(b.position <= offset < b.position + b.size for b in p.buffers):
            return i
    raise AssertionError(offset)


def test_a_damaged_page_of_a_many_page_take_is_named(tmp_path):
    path, _ = _file(tmp_path)
    data = bytearray(open(path, "rb").read())
    # the dictionary of a page in the middle: bad UTF-8 in its items
    at = -1
    for _ in range(40):
        at = data.find(b"violet-ish", at + 1)
    page = _page_holding(path, at)
    data[at] = 0xFF
    damaged = str(tmp_path / "damaged.lance")
    open(damaged, "wb").write(bytes(data))
    rows = np.array([0, sum(p.length for p in _pages(path)[:page]), N - 1])
    with pytest.raises(lancefile.CorruptFileError, match=rf"column 0 page {page}\b.*dictionary.*UTF8"):
        lancefile.LanceFileReader(damaged).take_rows(rows).to_table()
    # an index past its page's dictionary (forged): the page's decoder says so
    data = bytearray(open(path, "rb").read())
    first = _pages(path)[page]
    index_buffer = first.buffers[0]
    data[index_buffer.position] = 200
    open(damaged, "wb").write(bytes(data))
    with pytest.raises(lancefile.CorruptFileError, match=rf"column 0 page {page}\b.*index 200 out of range"):
        lancefile.LanceFileReader(damaged).take_rows(rows).to_table()
