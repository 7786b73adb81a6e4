"""A fresh reader's take over many mini-block pages, read from the column's page table
(``mini_block_fast.take_fresh``): the same rows as Arrow's take and as the pages' decoders,
the fast way really taken where it applies, and every damaged page sent the decoders' way,
whose error it then is."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.encodings.structural import fields
from lancefile.errors import CorruptFileError
from tests.conftest import reference_write

N = 40_000


def _table(seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:04d}-{'ab' * (i % 7)}" for i in range(900)])
    tags = words[(np.arange(N) // 9 + rng.integers(0, 40, N)) % len(words)]
    lens = rng.integers(0, 4, N)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    m = int(offsets[-1])
    inner = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1 << 40, m)), pa.array(rng.random(m), mask=rng.random(m) < 0.1),
         pa.array(words[rng.integers(0, len(words), m)])], ["x", "y", "tag"])
    return pa.table({
        "tag": pa.array(tags, mask=rng.random(N) < 0.05),  # dictionary-encoded, with nulls
        "n": pa.array(rng.integers(0, 100, N), mask=rng.random(N) < 0.2),  # levels: not plain
        "items": pa.ListArray.from_arrays(pa.array(offsets), inner, mask=pa.array(rng.random(N) < 0.05)),
        "ints": pa.array([list(range(k)) for k in rng.integers(0, 3, N)], pa.list_(pa.int32())),
    })


@pytest.fixture(scope="module", params=["lancefile", "pylance"])
def many_pages(request, tmp_path_factory):
    t = _table()
    p = tmp_path_factory.mktemp("fresh") / f"{request.param}.lance"
    if request.param == "lancefile":
        lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024)
    else:  # pylance cuts a page when its cache fills: a small cache, many pages
        reference_write(t.to_batches(max_chunksize=2000), p, version="2.2", schema=t.schema,
                        data_cache_bytes=16 * 1024)
    for c in range(lancefile.LanceFileReader(p)._layout.num_columns):
        assert len(lancefile.LanceFileReader(p)._layout.column(c).pages) > 5
    return t, p


def _counted(monkeypatch) -> list:
    """Record whether each call of take_fresh took the take (True) or sent it on (False)."""
    got: list = []
    real = fields.take_fresh

    def counting(column, sel):
        out = real(column, sel)
        got.append(out is not None)
        return out

    monkeypatch.setattr(fields, "take_fresh", counting)
    return got


def _decoders_way(p, rows):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fields, "take_fresh", lambda *a: None)
        return lancefile.LanceFileReader(p).take_rows(rows).to_table()


def _same_error_both_ways(p, monkeypatch) -> tuple[str, list]:
    """A take of every 37th row of a damaged file fails the decoders' way and the default way
    with the same message: (that message, take_fresh's answers the default way)."""
    rows = np.arange(0, N, 37)
    with pytest.raises(CorruptFileError) as slow:
        _decoders_way(p, rows)
    used = _counted(monkeypatch)
    with pytest.raises(CorruptFileError) as fast:
        lancefile.LanceFileReader(p).take_rows(rows).to_table()
    assert str(fast.value) == str(slow.value)
    return str(fast.value), used


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_same_rows_as_arrow_and_the_decoders(many_pages, data):
    t, p = many_pages
    ends = {data.draw(st.integers(0, 999)), data.draw(st.integers(N - 1000, N - 1))}  # two pages at least
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, N - 1), max_size=150)) | ends))
    with pytest.MonkeyPatch.context() as mp:
        used = _counted(mp)
        got = lancefile.LanceFileReader(p).take_rows(rows).to_table()
    assert got.equals(t.take(pa.array(rows)))
    assert got.equals(_decoders_way(p, rows))
    assert used and any(used)


def test_every_column_goes_the_fast_way(many_pages, monkeypatch):
    t, p = many_pages
    used = _counted(monkeypatch)
    rows = np.arange(3, N, 97)
    assert lancefile.LanceFileReader(p).take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    # one call a leaf column (tag, n, items.x, items.y, items.tag, ints): all taken (pylance's
    # integer dictionary is fixed-width: each page's decoded)
    assert used == [True] * 6


def test_a_reused_reader_keeps_the_decoders_way(many_pages, monkeypatch):
    """Once a page of a column has a decoder (here: a one-page take), that column's takes use
    the decoders (and what they keep: chunk metadata, dictionaries)."""
    t, p = many_pages
    reader = lancefile.LanceFileReader(p)
    assert reader.take_rows([5, 6]).to_table().equals(t.take(pa.array([5, 6])))
    used = _counted(monkeypatch)
    rows = np.arange(0, N, 101)
    assert reader.take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    assert not any(used)


def test_dictionary_typed_fields_go_the_decoders_way(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    words = pa.array([f"v{i}" for i in range(50)])
    t = pa.table({"d": pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 50, N), pa.int32()), words)})
    p = tmp_path / "d.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=8 * 1024)
    used = _counted(monkeypatch)
    rows = np.arange(0, N, 89)
    got = lancefile.LanceFileReader(p).take_rows(rows).to_table()
    assert got.column("d").to_pylist() == t.take(pa.array(rows)).column("d").to_pylist()
    assert used == [False]


@pytest.mark.parametrize("buffer", [0, -1, 2])  # chunk metadata, repetition index, dictionary
def test_a_damaged_page_gets_the_decoders_error(tmp_path, monkeypatch, buffer):
    """A page whose chunk metadata, repetition index or dictionary is damaged fails a check of
    the fast way, which then leaves the take to the decoders: the error is theirs, naming the
    page."""
    t = _table(5)
    p = tmp_path / "bad.lance"
    column = {0: 2, -1: 2, 2: 4}[buffer]  # items.x (lists: a repetition index), items.tag (a dictionary)
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024, checksums=False)
    layout = lancefile.LanceFileReader(p)._layout
    pages = layout.column(column).pages
    page = len(pages) // 2
    ref = pages[page].buffers[buffer]
    raw = bytearray(p.read_bytes())
    for k in range(ref.size):  # every byte: whatever the encoding, some check must fail
        raw[ref.position + k] ^= 0xA5
    p.write_bytes(bytes(raw))
    message, used = _same_error_both_ways(p, monkeypatch)
    assert f"column {column} page" in message
    assert False in used  # the fast way gave the column up


def test_a_repetition_index_off_by_one_row_is_refused(tmp_path, monkeypatch):
    """A repetition index whose chunks end one row more than the page holds: every byte still
    parses, so only the check of the counts against the page's rows catches it (the fast way
    must not decode with it: the rows would shift). The decoders' way names the page."""
    import struct

    t = _table(7)
    p = tmp_path / "forged.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024, checksums=False)
    pages = lancefile.LanceFileReader(p)._layout.column(2).pages  # items.x: lists, a repetition index
    page = len(pages) // 2
    ref = pages[page].buffers[-1]
    raw = bytearray(p.read_bytes())
    (ended,) = struct.unpack_from("<Q", raw, ref.position)
    struct.pack_into("<Q", raw, ref.position, ended + 1)
    p.write_bytes(bytes(raw))
    message, used = _same_error_both_ways(p, monkeypatch)
    assert f"column 2 page {page}" in message
    assert used[2] is False
