"""Takes over many full-zip pages: the pages' index entries and rows are fetched in one
batch each and scanned together (``FullZipPage.take_pages``), and give exactly what
Arrow's take of the written table gives, for files of both writers; a damaged page is
still named."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.encodings.structural.full_zip import FullZipPage
from lancefile.errors import CorruptFileError
from tests.conftest import reference_reader, reference_write
from tests.encodings import count_item_calls

FULLZIP = {b"lance-encoding:structural-encoding": b"fullzip"}
_WORDS = np.array("the quick brown fox jumps over a lazy dog while seven more words appear".split())


def _text(rng, n: int, nulls: bool) -> list:
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 5))
        if nulls and k == 0:
            out.append(None)
        elif k == 1:
            out.append("")
        else:
            out.append(" ".join(rng.choice(_WORDS, int(rng.integers(20, 90)))))
    return out


def _hex(rng, n: int) -> list:  # incompressible: no FSST, plain variable values
    return [rng.bytes(int(rng.integers(100, 600))).hex() for _ in range(n)]


def _table(seed: int) -> pa.Table:
    """Pages of English text (FSST, a symbol table each), of hex (plain) and of both, with
    nulls and empty strings at page edges; lists of text and of ints (fixed-width values
    with an index); nullable vectors (fixed-size rows, no index: read page by page)."""
    rng = np.random.default_rng(seed)
    n = 1800
    text = _text(rng, 600, True) + _hex(rng, 600) + _text(rng, 600, True)
    lists = []
    for i in range(n):
        k = int(rng.integers(0, 6))
        lists.append(None if k == 0 else [] if k == 1 else
                     [None if rng.random() < 0.2 else s for s in _text(rng, k - 1, False)])
    ints = pa.array([None if rng.random() < 0.1 else
                     [None if rng.random() < 0.1 else int(x) for x in rng.integers(0, 1 << 30, int(rng.integers(0, 40)))]
                     for _ in range(n)], pa.list_(pa.int32()))
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 96, dtype=np.float32)), 96)
    vec = pa.array(vec.to_pylist(), pa.list_(pa.float32(), 96), mask=rng.random(n) < 0.1)
    schema = pa.schema([pa.field("text", pa.string(), metadata=FULLZIP),
                        pa.field("lists", pa.list_(pa.field("item", pa.string(), metadata=FULLZIP))),
                        pa.field("ints", pa.list_(pa.field("item", pa.int32(), metadata=FULLZIP))),
                        pa.field("vec", vec.type, metadata=FULLZIP)])
    return pa.table([pa.array(text, pa.string()), pa.array(lists, pa.list_(pa.string())), ints, vec],
                    schema=schema)


@pytest.fixture(scope="module", params=["lancefile", "pylance"])
def paged_file(request, tmp_path_factory):
    t = _table(5)
    p = tmp_path_factory.mktemp("fullzip") / "t.lance"
    if request.param == "lancefile":
        lancefile.write_table(t, p, version="2.2", max_page_bytes=96 * 1024)
    else:  # a small cache: pylance writes a page every batch or two
        reference_write(t.to_batches(max_chunksize=200), p, version="2.2", data_cache_bytes=64 * 1024)
    assert len(lancefile.LanceFileReader(p)._layout.column(0).pages) >= 4  # the takes below cross pages
    return p, t


@pytest.fixture
def batched(monkeypatch):
    return count_item_calls(monkeypatch, FullZipPage, "take_pages")


def test_a_take_over_many_pages_is_read_together(paged_file, batched):
    p, t = paged_file
    idx = np.arange(3, t.num_rows, 97)
    got = lancefile.LanceFileReader(p).take_rows(idx).to_table()
    assert got.equals(t.take(pa.array(idx)).cast(got.schema))
    assert batched and max(batched) >= 4  # several pages per call, not one call a page


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_takes_equal_the_table(paged_file, data):
    p, t = paged_file
    n = t.num_rows
    idx = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=60))), np.int64)
    cols = data.draw(st.sampled_from([None, ["text"], ["lists"], ["ints"], ["vec"]]))
    got = lancefile.LanceFileReader(p, columns=cols).take_rows(idx).to_table()
    want = (t if cols is None else t.select(cols)).take(pa.array(idx))
    assert got.equals(want.cast(got.schema))


def test_takes_equal_pylance(paged_file):
    p, t = paged_file
    idx = np.random.default_rng(2).choice(t.num_rows, 150, replace=False)
    idx.sort()
    got = lancefile.LanceFileReader(p).take_rows(idx).to_table()
    want = reference_reader(p).take_rows(idx.tolist()).to_table()
    assert got.equals(want)


def test_a_damaged_repetition_index_names_its_page(tmp_path):
    t = _table(9).select(["text"])
    p = tmp_path / "t.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=96 * 1024, checksums=False)
    r = lancefile.LanceFileReader(p)
    col = r._layout.column(0)
    assert len(col.pages) >= 4
    victim = 2
    index = col.pages[victim].buffers[1]
    raw = bytearray(p.read_bytes())
    raw[index.position : index.position + index.size] = b"\xff" * index.size  # rows end past the items
    p.write_bytes(bytes(raw))
    starts = np.concatenate([[0], np.cumsum([pg.length for pg in col.pages])])
    idx = np.array([int(starts[k]) + 1 for k in range(len(col.pages))], np.int64)  # a row of every page
    with pytest.raises(CorruptFileError, match=rf"column 0 page {victim}\b.*repetition index"):
        lancefile.LanceFileReader(p).take_rows(idx).to_table()


def test_the_fsst_pages_of_a_take_are_decoded_in_one_call(paged_file, monkeypatch):
    """The text rows of a take over several FSST pages (a symbol table each) are decoded by
    one call with every page's table, not one call a page."""
    from lancefile.encodings import kernels

    p, t = paged_file
    pages = lancefile.LanceFileReader(p)._layout.column(0).pages
    starts = np.concatenate([[0], np.cumsum([pg.length for pg in pages])])
    idx = np.arange(0, 600, 7)  # the first 600 rows are English text: FSST pages
    assert np.count_nonzero(np.diff(np.searchsorted(starts, idx, side="right"))) >= 1  # two pages at least
    calls = {"many": 0, "one": 0}
    many, one = kernels.fsst_decompress_spans_tables, kernels.fsst_decompress_spans

    def count(name, fn):
        def wrapped(*a):
            calls[name] += 1
            return fn(*a)
        return wrapped

    monkeypatch.setattr(kernels, "fsst_decompress_spans_tables", count("many", many))
    monkeypatch.setattr(kernels, "fsst_decompress_spans", count("one", one))
    got = lancefile.LanceFileReader(p, columns=["text"]).take_rows(idx).to_table()
    assert got.equals(t.select(["text"]).take(pa.array(idx)).cast(got.schema))
    assert calls == {"many": 1, "one": 0}


def test_a_bad_fsst_string_names_its_page():
    from lancefile._proto import encodings_v2_1_pb2 as pb
    from lancefile.encodings import kernels
    from lancefile.encodings.compressive import decode_variable_spans_many

    def fsst(symbol: bytes):
        table = kernels.fsst_make_symbol_table([int.from_bytes(symbol, "little")], [len(symbol)])
        offsets = pb.CompressiveEncoding(flat=pb.Flat(bits_per_value=32))
        values = pb.CompressiveEncoding(variable=pb.Variable(offsets=offsets))
        return pb.CompressiveEncoding(fsst=pb.Fsst(symbol_table=table, values=values))

    encs, wheres = [fsst(b"ab"), fsst(b"xyz")], ["f: page 3", "f: page 4"]
    data = np.array([0, 0, 0], np.uint8)
    (got,) = decode_variable_spans_many(encs, data, np.array([0, 1, 2]), np.array([1, 1, 1]), [2, 1], wheres)
    assert bytes(got.data) == b"ababxyz" and got.offsets.tolist() == [0, 2, 4, 7]  # one call, both tables
    data[2] = 1  # the second page's table has no symbol 1
    with pytest.raises(CorruptFileError, match="^f: page 4: FSST string 0 of symbol table 1 uses a code with no"):
        decode_variable_spans_many(encs, data, np.array([0, 1, 2]), np.array([1, 1, 1]), [2, 1], wheres)


def test_pages_of_fixed_size_rows_are_read_together(paged_file, batched):
    """Vector pages (fixed-size rows, nullable: a control word each, no index) of a take are
    read in one batch and decoded together, and give Arrow's take, nulls included."""
    p, t = paged_file
    idx = np.arange(1, t.num_rows, 89)
    got = lancefile.LanceFileReader(p, columns=["vec"]).take_rows(idx).to_table()
    want = t.select(["vec"]).take(pa.array(idx))
    assert got.equals(want.cast(got.schema))
    assert want.column("vec").null_count > 0
    assert batched and max(batched) >= 4


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_ranges_over_pages_equal_the_table(paged_file, data):
    """A range over several pages (a scan's chunk) is read by ``take_pages`` into one array:
    text (FSST and plain pages), lists of text and of ints, nulls and empties at page edges."""
    p, t = paged_file
    n = t.num_rows
    start = data.draw(st.integers(0, n - 1))
    count = data.draw(st.integers(1, n - start))
    cols = data.draw(st.sampled_from([None, ["text"], ["lists"], ["ints"]]))
    got = lancefile.LanceFileReader(p, columns=cols).read_range(start, count, batch_size=n).to_table()
    want = (t if cols is None else t.select(cols)).slice(start, count)
    assert got.equals(want.cast(got.schema))


def test_a_range_over_many_pages_is_read_together(paged_file, batched):
    p, t = paged_file
    got = lancefile.LanceFileReader(p, columns=["text", "lists"]).read_range(5, t.num_rows - 10).to_table()
    assert got.equals(t.select(["text", "lists"]).slice(5, t.num_rows - 10).cast(got.schema))
    assert batched and max(batched) >= 4  # several pages per call, not one call a page


def test_a_range_over_a_damaged_repetition_index_names_its_page(tmp_path):
    t = _table(9).select(["text"])
    p = tmp_path / "t.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=96 * 1024, checksums=False)
    col = lancefile.LanceFileReader(p)._layout.column(0)
    assert len(col.pages) >= 4
    victim = 2
    index = col.pages[victim].buffers[1]
    width = index.size // (col.pages[victim].length + 1)
    raw = bytearray(p.read_bytes())
    middle = index.position + width * (col.pages[victim].length // 2)
    raw[middle : middle + width] = b"\xff" * width  # an entry past the items, its neighbours below it
    p.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError, match=rf"column 0 page {victim}\b.*repetition index"):
        lancefile.LanceFileReader(p).read_all().to_table()
