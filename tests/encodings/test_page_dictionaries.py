"""Page dictionaries loaded together: a take or scan over many dictionary pages decodes the
dictionaries it needs as one array, each page keeping its own slice; values come out as
pylance reads them, and a damaged dictionary is reported with the pages around it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.encodings.compressive.variable import block_parts
from lancefile.encodings.structural import mini_block_dicts, mini_block_many
from lancefile.errors import CorruptFileError
from lancefile.fuzz import filemap
from tests.conftest import reference_reader, reference_write, write_by
from tests.encodings import count_item_calls

N = 40_000


@pytest.fixture(scope="module", params=["lancefile", "pylance"])
def dict_file(request, tmp_path_factory):
    rng = np.random.default_rng(11)
    words = np.array([f"w{i:03d}-é" for i in range(40)])
    tags = pa.array(words[rng.integers(0, 40, N)], mask=rng.random(N) < 0.05)
    lists = pa.ListArray.from_arrays(np.arange(0, 2 * N + 1, 2, dtype=np.int32),
                                     pa.array(words[rng.integers(0, 40, 2 * N)]))
    t = pa.table({"tag": tags, "tags": lists})
    p = tmp_path_factory.mktemp("dicts") / "d.lance"
    write_by(request.param, t, p, "2.2", max_page_bytes=16 * 1024)
    return p, t


def test_takes_and_scans_over_many_dictionary_pages(dict_file, monkeypatch):
    p, t = dict_file
    loads = count_item_calls(monkeypatch, mini_block_many, "_load_dictionaries")
    rows = np.sort(np.random.default_rng(2).choice(N, 300, replace=False))
    got = lancefile.LanceFileReader(p).take_rows(rows).to_table()
    assert got.equals(t.take(pa.array(rows)))
    assert got.equals(reference_reader(p).take_rows(rows.tolist()).to_table())
    assert lancefile.LanceFileReader(p).read_all(batch_size=5000).to_table().equals(t)
    pages = len(lancefile.LanceFileReader(p)._layout.column(0).pages)
    if pages > 2:
        assert loads and max(loads) >= 2  # several pages' dictionaries went together


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
def test_takes_over_pages_with_different_dictionaries(tmp_path, monkeypatch, writer):
    """Every page has its own, LZ4-compressed dictionary (a vocabulary that drifts with the
    rows, items in a different order per page): a take over many pages looks each row up in
    its own page's dictionary, whichever way the dictionaries were loaded together."""
    rng = np.random.default_rng(5)
    n = 60_000
    vocab = np.array([f"{i:05d}-{'abcdefghij' * (i % 4)}" for i in range(6000)])
    centre = np.arange(n) // 12
    words = vocab[np.clip(centre + rng.integers(-300, 300, n), 0, len(vocab) - 1)]
    tags = pa.array(words, mask=rng.random(n) < 0.03)
    items = pa.ListArray.from_arrays(np.arange(0, 2 * n + 1, 2, dtype=np.int32),
                                     pa.StructArray.from_arrays([pa.array(np.repeat(words, 2))], ["tag"]))
    t = pa.table({"tag": tags, "items": items})
    p = tmp_path / "drift.lance"
    if writer == "lancefile":
        lancefile.write_table(t, p, version="2.2", max_page_bytes=32 * 1024)
    else:
        # pylance cuts a page when its cache fills: small batches and a small cache, many pages
        reference_write(t.to_batches(max_chunksize=3000), p, version="2.2", schema=t.schema,
                        data_cache_bytes=32 * 1024)
    reader = lancefile.LanceFileReader(p)
    for col in (0, 1):
        pages = reader._layout.column(col).pages
        assert len(pages) > 10
    one_by_one = []  # page-by-page block parsing: the fallback for a block out of the usual form
    monkeypatch.setattr(mini_block_dicts, "block_parts", lambda *a: one_by_one.append(a) or block_parts(*a))
    for seed in range(3):
        rows = np.sort(np.random.default_rng(seed).choice(n, 200, replace=False))
        got = lancefile.LanceFileReader(p).take_rows(rows).to_table()
        assert got.equals(t.take(pa.array(rows)))
    assert not one_by_one
    assert lancefile.LanceFileReader(p).read_all(batch_size=7000).to_table().equals(t)


@pytest.mark.parametrize("dtype", [pa.string(), pa.large_string()])
def test_takes_over_uncompressed_and_wide_offset_dictionaries(tmp_path, dtype):
    """Dictionaries read block by block (stored uncompressed, or with 64-bit offsets) go the
    same way as compressed ones: one array of all blocks, each page's items found in its own."""
    rng = np.random.default_rng(8)
    vocab = np.array([f"{i:05d}-{'xyz' * (i % 5)}" for i in range(4000)])
    words = vocab[np.clip(np.arange(N) // 10 + rng.integers(-200, 200, N), 0, len(vocab) - 1)]
    field = pa.field("tag", dtype, metadata={"lance-encoding:dict-values-compression": "none"})
    t = pa.table({"tag": pa.array(words, dtype)}, schema=pa.schema([field]))
    p = tmp_path / "plain.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024)
    assert len(lancefile.LanceFileReader(p)._layout.column(0).pages) > 10
    rows = np.sort(np.random.default_rng(1).choice(N, 300, replace=False))
    assert lancefile.LanceFileReader(p).take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    assert lancefile.LanceFileReader(p).read_all(batch_size=6000).to_table().equals(t)


def _plain_dictionaries(tmp_path):
    """A file whose string column has many pages, each with an uncompressed dictionary of 40
    items, and its parsed map."""
    words = [f"w{i:03d}" for i in range(40)]
    field = pa.field("tag", pa.string(), metadata={"lance-encoding:dict-values-compression": "none"})
    t = pa.table({"tag": [words[i % 40] for i in range(N)]}, schema=pa.schema([field]))
    p = tmp_path / "bad.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024, checksums=False)
    return p, filemap.parse(p.read_bytes())


def test_a_damaged_dictionary_among_many_is_reported(tmp_path):
    p, fm = _plain_dictionaries(tmp_path)
    page = fm.metas[0].pages[2]
    assert len(page.buffer_offsets) >= 3  # [chunk metadata, chunks, dictionary]
    at, size = page.buffer_offsets[2], page.buffer_sizes[2]
    raw = bytearray(p.read_bytes())
    raw[at + size - 3 : at + size] = b"\xff\xfe\xff"  # invalid UTF-8 in the last item
    p.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError, match=rf"{p}: column 0 page 2 .*dictionary"):
        lancefile.LanceFileReader(p).take_rows(list(range(0, N, 97))).to_table()


@pytest.mark.parametrize("damage", ["decreasing", "past the end"])
def test_damaged_dictionary_offsets_among_many_name_their_page(tmp_path, damage):
    # every page's offsets are checked in one pass; a page that fails is loaded alone to say why
    p, fm = _plain_dictionaries(tmp_path)
    page = fm.metas[0].pages[3]
    at = page.buffer_offsets[2]
    raw = bytearray(p.read_bytes())
    assert int.from_bytes(raw[at : at + 4], "little") == 32  # [u32 32][u32 bytes start][u32 offsets...]
    k = 5 if damage == "decreasing" else 40  # the 6th offset, or the last (of 40 items)
    raw[at + 8 + 4 * k : at + 12 + 4 * k] = ((1 << 32) - 2 if damage == "past the end" else 0).to_bytes(4, "little")
    if damage == "decreasing":
        raw[at + 8 + 4 * (k - 1) : at + 12 + 4 * (k - 1)] = (10_000).to_bytes(4, "little")
    p.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError, match=rf"{p}: column 0 page 3\b.*offsets decrease or point outside"):
        lancefile.LanceFileReader(p).take_rows(list(range(0, N, 97))).to_table()


def test_a_damaged_compressed_dictionary_among_many_names_its_page(tmp_path):
    words = [f"w{i:04d}" for i in range(3000)]
    t = pa.table({"tag": [words[(i // 7 + i % 5 * 97) % 3000] for i in range(N)]})
    p = tmp_path / "lz4.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024, checksums=False)
    fm = filemap.parse(p.read_bytes())
    page = fm.metas[0].pages[3]
    at, size = page.buffer_offsets[2], page.buffer_sizes[2]
    raw = bytearray(p.read_bytes())
    raw[at + 4 : at + size] = bytes([0xF0]) * (size - 4)  # LZ4 tokens announcing literals past the end
    p.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError, match=rf"{p}: column 0 page 3\b"):
        lancefile.LanceFileReader(p).take_rows(list(range(0, N, 97))).to_table()


def test_items_a_take_copies_out_of_compressed_dictionaries_are_checked(tmp_path, monkeypatch):
    # a take copies only the dictionary items its rows use: those are checked (here one of
    # them is made invalid UTF-8 as it is copied), and the error names a page of the column
    words = [f"w{i:04d}" for i in range(3000)]
    t = pa.table({"tag": [words[(i // 7 + i % 5 * 97) % 3000] for i in range(N)]})
    p = tmp_path / "lz4.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024)
    real = mini_block_many.kernels.gather_bytes

    def spoiled(*args):
        out = real(*args).copy()
        out[len(out) // 2] = 0xFF
        return out

    rows = list(range(0, N, 97))
    assert lancefile.LanceFileReader(p).take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    monkeypatch.setattr(mini_block_many.kernels, "gather_bytes", spoiled)
    with pytest.raises(CorruptFileError, match=rf"{p}: column 0 pages? \d+"):
        lancefile.LanceFileReader(p).take_rows(rows).to_table()
