"""Columns read together: a row range over many one-leaf fields whose pages share an
encoding is decoded in one pass (``MiniBlockPage.read_columns``), and gives exactly what
reading each column alone gives, for files of both writers."""

from __future__ import annotations

import decimal
import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.encodings.structural.mini_block import MiniBlockPage
from lancefile.errors import CorruptFileError
from tests.conftest import reference_reader, reference_write, write_by
from tests.encodings import count_item_calls


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(12):
        kind = i % 6
        if kind == 0:
            cols[f"f{i}"] = rng.random(n)
        elif kind == 1:  # int64 with the same bit width as the floats' encoding may get
            cols[f"i{i}"] = rng.integers(0, 1 << 40, n)
        elif kind == 2:  # nulls: definition levels in the chunks
            cols[f"n{i}"] = pa.array(rng.random(n), mask=rng.random(n) < 0.2)
        elif kind == 3:  # narrow ints: another bit width
            cols[f"s{i}"] = pa.array(rng.integers(0, 100, n), pa.int32())
        elif kind == 4:  # strings: dictionary pages, read one by one
            cols[f"t{i}"] = pa.array([f"v{x}" for x in rng.integers(0, 5, n)])
        else:
            cols[f"d{i}"] = pa.array(rng.integers(0, 10**6, n).astype("datetime64[us]"))
    return pa.table(cols)


@pytest.fixture(scope="module", params=["lancefile", "pylance"])
def wide_file(request, tmp_path_factory):
    t = _table(30_000, 3)
    p = tmp_path_factory.mktemp("together") / "w.lance"
    write_by(request.param, t, p, "2.2")
    return p, t


@pytest.fixture
def together_calls(monkeypatch):
    return count_item_calls(monkeypatch, MiniBlockPage, "read_columns")


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_ranges_read_together_equal_the_table(wide_file, data):
    p, t = wide_file
    n = t.num_rows
    start = data.draw(st.integers(0, n - 1), "start")
    count = data.draw(st.integers(0, n - start), "count")
    cols = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(t.column_names), min_size=1, unique=True)), "cols")
    reader = lancefile.LanceFileReader(p, columns=cols)
    got = reader.read_range(start, count, batch_size=data.draw(st.sampled_from([100, 4096, 65536]))).to_table()
    want = t.slice(start, count) if cols is None else t.select(cols).slice(start, count)
    assert got.equals(want)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_takes_read_together_equal_the_table(wide_file, data):
    p, t = wide_file
    n = t.num_rows
    idx = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=300), "indices")
    cols = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(t.column_names), min_size=2, unique=True)), "cols")
    got = lancefile.LanceFileReader(p, columns=cols).take_rows(idx).to_table()
    want = (t if cols is None else t.select(cols)).take(pa.array(idx, pa.int64()))
    assert got.equals(want)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_dense_takes_read_together_equal_the_table(wide_file, data):
    """Takes of a large share of the rows (chunks decoded whole, then picked from), in one
    group or several, with every column or a few."""
    p, t = wide_file
    n = t.num_rows
    share = data.draw(st.floats(0.05, 1.0), "share")
    seed = data.draw(st.integers(0, 2**32 - 1), "seed")
    idx = np.sort(np.random.default_rng(seed).choice(n, max(1, int(n * share)), replace=False))
    cols = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(t.column_names), min_size=2, unique=True)), "cols")
    batch_size = data.draw(st.sampled_from([1000, 65536]), "batch_size")
    got = lancefile.LanceFileReader(p, columns=cols).take_rows(idx, batch_size=batch_size).to_table()
    want = (t if cols is None else t.select(cols)).take(pa.array(idx))
    assert got.equals(want)


@pytest.mark.parametrize("rows, picked_alone", [(300, True), (15_000, False)])
def test_a_take_picks_values_alone_only_when_few(wide_file, monkeypatch, rows, picked_alone):
    """A take wanting fewer than one value in TAKE_SPARSITY of the chunks it reads picks
    them one by one; a denser one decodes the chunks whole (a value picked alone costs ~40x
    one decoded with its chunk)."""
    import lancefile.encodings.structural.mini_block as mb

    p, t = wide_file
    calls = []
    real = mb.take_miniblock
    monkeypatch.setattr(mb, "take_miniblock", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    idx = np.sort(np.random.default_rng(rows).choice(t.num_rows, rows, replace=False))
    cols = [c for c in t.column_names if c[0] in "fis"]  # no nulls, no dictionaries
    got = lancefile.LanceFileReader(p, columns=cols).take_rows(idx, batch_size=65536).to_table()
    assert got.equals(t.select(cols).take(pa.array(idx)))
    assert bool(calls) == picked_alone


def test_a_row_past_its_pages_chunks_in_a_take_together_is_named(wide_file, monkeypatch):
    from lancefile.encodings import kernels

    p, t = wide_file

    def past(key, item_of, counts, base, idx, lens, shared):
        raise ValueError(int(lens[0]) + 1)  # the second column's second row

    monkeypatch.setattr(kernels, "miniblock_take_picks", past)
    cols = [c for c in t.column_names if c[0] == "f"]
    with pytest.raises(CorruptFileError, match=rf"^{re.escape(str(p))}.* columns \d+-\d+: row 17 of column \d+'s "
                                               r"page lies past the rows of its chunks"):
        lancefile.LanceFileReader(p, columns=cols).take_rows([3, 17, 40]).to_table()


def test_a_take_over_many_columns_sums_no_pages(tmp_path):
    """Grouping a take's rows needs a size a row: the file's, shared by the projected columns,
    not the sum of every column's pages."""
    t = pa.table({f"c{i}": np.random.default_rng(i).random(5000) for i in range(40)})
    p = tmp_path / "w.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=8 * 1024)
    reader = lancefile.LanceFileReader(p)
    idx = np.arange(0, 5000, 2)
    assert reader.take_rows(idx, batch_size=100).to_table().equals(t.take(pa.array(idx)))
    assert not any("data_bytes" in reader._layout.column(c).__dict__ for c in range(40))


def test_columns_with_one_encoding_are_decoded_in_one_pass(wide_file, together_calls):
    p, t = wide_file
    got = lancefile.LanceFileReader(p).read_range(1000, 5000).to_table()
    assert got.equals(t.slice(1000, 5000))
    assert together_calls and max(together_calls) >= 2  # several columns shared one decode
    alone = {c: lancefile.LanceFileReader(p, columns=[c]).read_range(1000, 5000).to_table().column(0)
             for c in t.column_names}
    assert all(got.column(c).equals(alone[c]) for c in t.column_names)
    together_calls.clear()
    rows = [5, 17, 4095, 4096, 29_999]
    assert lancefile.LanceFileReader(p).take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    assert together_calls and max(together_calls) >= 2


def test_a_damaged_chunk_among_columns_read_together_is_named(tmp_path):
    t = pa.table({f"c{i}": np.random.default_rng(i).random(20_000) for i in range(6)})
    p = tmp_path / "w.lance"
    reference_write(t, p, version="2.2")  # no checksums: the decoder itself must notice
    reader = lancefile.LanceFileReader(p)
    page = reader._layout.column(3).pages[0]
    data = page.buffers[1]
    raw = bytearray(p.read_bytes())
    raw[data.position : data.position + 8] = b"\xff" * 8  # the first chunk's header
    p.write_bytes(bytes(raw))
    with pytest.raises(CorruptFileError, match=str(p)):
        lancefile.LanceFileReader(p).read_range(0, 20_000).to_table()


def test_leaves_of_alike_types_keep_their_own_types(tmp_path):
    """Leaf descriptions are shared between columns (a wide file needs one, not 1,000), but
    never between types that differ only in a time zone, a unit or a child's name."""
    n = 5000
    ts = np.arange(n, dtype=np.int64)
    vals = pa.array(np.arange(2 * n, dtype=np.float32))
    t = pa.table({
        "utc": pa.array(ts, pa.timestamp("us", "UTC")), "naive": pa.array(ts, pa.timestamp("us")),
        "ny": pa.array(ts, pa.timestamp("us", "America/New_York")), "ms": pa.array(ts, pa.timestamp("ms")),
        "i": pa.array(ts), "dur": pa.array(ts, pa.duration("us")),
        "fa": pa.FixedSizeListArray.from_arrays(vals, type=pa.list_(pa.field("item", pa.float32()), 2)),
        "fb": pa.FixedSizeListArray.from_arrays(vals, type=pa.list_(pa.field("element", pa.float32()), 2)),
    })
    p = tmp_path / "alike.lance"
    lancefile.write_table(t, p, version="2.2")
    got = lancefile.LanceFileReader(p).read_range(100, 3000).to_table()
    want = reference_reader(p).read_range(100, 3000).to_table()  # Lance names every fsl child "item"
    assert got.schema == want.schema and got.equals(want)
    assert [f.type for f in got.schema][:6] == [f.type for f in t.schema][:6]


@pytest.mark.parametrize("damage", ["chunk past the buffer", "counts past the page"])
def test_damaged_chunk_metadata_among_columns_read_together_is_named(tmp_path, damage):
    # the columns' chunk metadata is parsed in one pass; a page failing its checks is left to
    # its own parse, which names it
    t = pa.table({f"c{i}": np.random.default_rng(i).random(20_000) for i in range(6)})
    p = tmp_path / "w.lance"
    reference_write(t, p, version="2.2")
    meta = lancefile.LanceFileReader(p)._layout.column(3).pages[0].buffers[0]
    raw = bytearray(p.read_bytes())
    word = int.from_bytes(raw[meta.position : meta.position + 2], "little")
    if damage == "chunk past the buffer":
        word = 0xFFF0 | (word & 0xF)  # the first chunk: 4096 x 8 bytes
    else:
        word |= 0xF  # the first chunk: 32768 values, more than the page holds
    raw[meta.position : meta.position + 2] = word.to_bytes(2, "little")
    p.write_bytes(bytes(raw))
    rows = lancefile.LanceFileReader(p)._layout.column(3).pages[0].length
    with pytest.raises(CorruptFileError, match=r"column 3 page 0"):  # rows of every column's first page
        lancefile.LanceFileReader(p).read_range(0, min(rows, 100)).to_table()
    # the other columns still read
    assert lancefile.LanceFileReader(p, columns=["c2", "c4"]).read_range(0, 20_000).to_table().equals(
        t.select(["c2", "c4"]))


def test_flat_leaves_unravel_without_layers_of_work():
    """A flat leaf's levels (no lists): validity from the definition levels, none when no
    slot is null, and a level count that disagrees with the rows is refused."""
    from lancefile.encodings.structural.repdef import ITEM, unravel

    defs = np.array([0, 1, 0, 0, 1], np.uint16)
    got = unravel(None, defs, [ITEM], 5, "f.lance: column 0 page 0")
    assert got.num_values == 5 and got.layers[0].valid.tolist() == [True, False, True, True, False]
    assert unravel(None, np.zeros(5, np.uint16), [ITEM], 5, "w").layers[0].valid is None
    none = unravel(None, None, [ITEM], 7, "w")
    assert none.layers[0].valid is None and none.num_values == 7
    with pytest.raises(CorruptFileError, match=r"^f.lance: column 0 page 0: 5 level entries for 6 rows"):
        unravel(None, defs, [ITEM], 6, "f.lance: column 0 page 0")


def test_checks_after_decoding_name_the_pages_only_when_they_fail(tmp_path, monkeypatch):
    """The place handed to the checks after decoding (levels, Arrow validity) names the file,
    column and pages read, and is only made when a message needs it."""
    import lancefile.encodings.structural.fields as fields

    t = pa.table({f"c{i}": pa.array(np.arange(30_000, dtype=np.float64), mask=np.arange(30_000) % 7 == i)
                  for i in range(4)})
    p = tmp_path / "w.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=64 * 1024)
    named, seen = [], []
    real_pages_of, real_unravel = fields.LeafColumn.pages_of, fields.unravel
    monkeypatch.setattr(fields.LeafColumn, "pages_of", lambda self, sel: named.append(sel) or real_pages_of(self, sel))
    monkeypatch.setattr(fields, "unravel", lambda rep, defs, shape, n, where, *a: seen.append(where) or
                        real_unravel(rep, defs, shape, n, where, *a))
    assert lancefile.LanceFileReader(p).read_range(1000, 25_000).to_table().equals(t.slice(1000, 25_000))
    assert seen and not named  # no message, no names
    text = [str(w) for w in seen]
    assert named and all(re.fullmatch(rf"{re.escape(str(p))}: column [0-3] pages? [0-9]+(-[0-9]+)? \(.*\)", w)
                         for w in text), text


@pytest.fixture(params=["tables", "readers"])
def plannings(request, monkeypatch):
    """2.0 plain columns planned from one compiled walk of their metadata (any count of
    columns) or from their readers' parsed metadata (a walk never made)."""
    import lancefile.encodings.v2_0.plain as plain

    monkeypatch.setattr(plain, "TABLES_MIN_COLUMNS", 2 if request.param == "tables" else 1 << 30)
    return request.param


@pytest.fixture(scope="module", params=["lancefile", "pylance"])
def wide_file_2_0(request, tmp_path_factory):
    t = _table(30_000, 4)
    p = tmp_path_factory.mktemp("together20") / "w.lance"
    write_by(request.param, t, p, "2.0", max_page_bytes=64 * 1024)
    return p, t


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_2_0_ranges_read_together_equal_the_table(plannings, wide_file_2_0, data):
    """2.0 files: the plain fixed-width columns of a range are fetched together and wrapped
    without copies; columns with nulls, strings or compression are read one by one; all
    equal the table, across page boundaries."""
    p, t = wide_file_2_0
    start = data.draw(st.integers(0, t.num_rows - 1))
    count = data.draw(st.integers(0, t.num_rows - start))
    assert lancefile.LanceFileReader(p).read_range(start, count).to_table().equals(t.slice(start, count))


def test_2_0_plain_columns_are_fetched_with_one_request_a_chunk(monkeypatch, tmp_path):
    import lancefile.encodings.v2_0.plain as v20
    from lancefile.io import CountingSource, InMemorySource

    t = pa.table({f"c{i}": np.random.default_rng(i).random(5000) for i in range(50)}
                 | {"n": pa.array(np.arange(5000.0), mask=np.arange(5000) % 3 == 0)})
    p = tmp_path / "w.lance"
    reference_write(t, p, version="2.0")
    calls = []
    real = v20.read_spans
    monkeypatch.setattr(v20, "read_spans", lambda src, s, n: calls.append(len(s)) or real(src, s, n))
    src = CountingSource(InMemorySource(p.read_bytes()))
    reader = lancefile.LanceFileReader(src)
    src.reset()
    assert reader.read_range(100, 4000).to_table().equals(t.slice(100, 4000))
    assert calls == [50]  # the 50 plain columns in one call; the nullable one on its own
    assert src.requests <= 50 + 10  # one request a column at most (they lie apart), not more


def test_2_0_a_page_too_short_for_its_rows_is_left_to_its_own_reader(monkeypatch, wide_file_2_0):
    """Rows past a page's buffer are never fetched together (they would be other bytes of
    the file): such a page goes to its own reader. Seen here by making every plain width 64
    times what it is."""
    import lancefile.encodings.v2_0.plain as v20

    p, t = wide_file_2_0
    real = v20.plain_rows
    monkeypatch.setattr(v20, "plain_rows", lambda enc, dtype: None if real(enc, dtype) is None
                        else (real(enc, dtype)[0], 64 * real(enc, dtype)[1]))
    # rows far enough into a page of every column (pages of 8,192 to 30,000 rows)
    assert lancefile.LanceFileReader(p).read_range(20_000, 600).to_table().equals(t.slice(20_000, 600))
    rows = [20_000, 20_300, 29_999]  # the same for a take
    assert lancefile.LanceFileReader(p).take_rows(rows).to_table().equals(t.take(rows))


def test_lone_page_finds_the_page_of_every_row_or_none(tmp_path):
    from lancefile.encodings.selection import Selection

    t = pa.table({"a": np.arange(10_000, dtype=np.int64), "b": np.arange(10_000, dtype=np.float64)})
    p = tmp_path / "p.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=16 * 1024)
    reader = lancefile.LanceFileReader(p)
    pages = reader._field_readers[0].lone.pages
    bounds = pages.bounds
    assert len(bounds) > 3
    b1, b2 = bounds[1], bounds[2]
    assert pages.lone_page(Selection.of_range(0, b1)) == 0
    assert pages.lone_page(Selection.of_range(b1, b2)) == 1
    assert pages.lone_page(Selection.of_range(b1 - 1, b1 + 1)) == -1  # two pages
    assert pages.lone_page(Selection.of_indices([b1, b2 - 1])) == 1
    assert pages.lone_page(Selection.of_indices([0, b2])) == -1
    assert pages.lone_page(Selection.of_range(5, 5)) == -1  # no rows
    assert pages.lone_page(Selection.of_range(bounds[-1] - 1, bounds[-1] + 1)) == -1  # past the end
    for sel in (Selection.of_range(b1, b2), Selection.of_indices([0, b2])):
        got = [p for p, _ in pages.split(sel, {})]
        assert (len(got) == 1 and got[0] == pages.lone_page(sel)) or (len(got) > 1 and pages.lone_page(sel) == -1)


def test_scans_over_many_pages_read_together_and_forget_passed_pages(tmp_path, monkeypatch, together_calls):
    """Columns of many pages each, scanned in chunks that fall in one page of every column:
    read together, page by page, and the pages a scan has passed are let go."""
    import lancefile.readplan as readplan
    from lancefile.encodings.columns import ColumnPages

    # chunks of ~1,600 rows, pages of ~8,000
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(readplan, "MIN_COLUMN_CHUNK_BYTES", 1024)
    t = pa.table({f"c{i}": np.random.default_rng(i).random(40_000) for i in range(5)})
    p = tmp_path / "m.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=64 * 1024)
    held = []  # pages a column holds in the scan's cache as each page is asked for
    real = ColumnPages.page
    monkeypatch.setattr(ColumnPages, "page", lambda self, i, cache: held.append(len(cache.get(self.index, ()))) or
                        real(self, i, cache))
    reader = lancefile.LanceFileReader(p)
    pages = len(reader._field_readers[0].lone.pages.bounds) - 1
    got = reader.read_range(0, 40_000, batch_size=256).to_table()
    assert got.equals(t)
    assert together_calls and max(together_calls) >= 2
    assert pages >= 4 and held and max(held) <= 2  # never more than the page before and this one


def test_a_lone_leaf_of_the_wrong_length_is_refused_with_its_rows(tmp_path):
    from lancefile.encodings.selection import Selection
    from lancefile.encodings.structural.base import PagePart

    t = pa.table({"a": np.arange(1000, dtype=np.float64)})
    p = tmp_path / "one.lance"
    lancefile.write_table(t, p, version="2.2")
    r = lancefile.LanceFileReader(p)._field_readers[0]
    sel = Selection.of_range(10, 20)
    good = r.read_decoded(sel, PagePart(None, None, pa.array(np.arange(10.0)), 10))
    assert good.equals(pa.array(np.arange(10.0)))
    with pytest.raises(CorruptFileError, match=rf"^{re.escape(str(p))}: column 0 gives 9 values for 10 slots "
                                               r"\(rows 10-19; .*page 0"):
        r.read_decoded(sel, PagePart(None, None, pa.array(np.arange(9.0)), 10))
    # levels with nulls take the general way, which agrees
    defs = np.zeros(10, np.uint16)
    defs[3] = 1
    got = r.read_decoded(sel, PagePart(None, defs, pa.array(np.arange(10.0)), 10))
    assert got.null_count == 1 and got[3].as_py() is None and got[4].as_py() == 4.0


def _plain_types_table(n: int) -> pa.Table:
    rng = np.random.default_rng(5)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 4).astype(np.float32)), 4)
    fields = [pa.field("f", pa.float64(), nullable=False), pa.field("i8", pa.int8()), pa.field("u16", pa.uint16()),
              pa.field("ts", pa.timestamp("ms")), pa.field("vec", vec.type), pa.field("fsb", pa.binary(3)),
              pa.field("dec", pa.decimal128(12, 2)), pa.field("b", pa.bool_()), pa.field("nul", pa.float32()),
              pa.field("s", pa.string())]
    cols = [rng.random(n), pa.array(rng.integers(-100, 100, n), pa.int8()),
            pa.array(rng.integers(0, 60_000, n), pa.uint16()),
            pa.array(rng.integers(0, 10**12, n).astype("datetime64[ms]")), vec,
            pa.array([bytes([k % 251, 1, 2]) for k in range(n)], pa.binary(3)),
            pa.array([decimal.Decimal(k) / 100 for k in range(n)], pa.decimal128(12, 2)), pa.array(rng.random(n) < 0.5),
            pa.array(rng.random(n).astype(np.float32), mask=rng.random(n) < 0.3),
            pa.array([f"s{k % 7}" for k in range(n)])]
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
def test_2_0_plain_columns_of_every_fixed_width_kind_are_read_together(plannings, tmp_path, writer):
    """Fixed-width types of every kind (a non-nullable one, fixed-size lists and binaries,
    timestamps) are fetched together; booleans, nullable and string columns go to their own
    readers, and so do decimals (Arrow's full check looks at their values: their readers make
    it); the batch equals the table, in one page and over page boundaries."""
    from lancefile.encodings.selection import Selection
    from lancefile.encodings.v2_0.plain import PlainColumns

    t = _plain_types_table(20_000)
    p = tmp_path / "k.lance"
    write_by(writer, t, p, "2.0", max_page_bytes=32 * 1024)
    reader = lancefile.LanceFileReader(p)
    for start, count in [(0, 10), (123, 77), (5000, 9000), (0, 20_000), (19_999, 1)]:
        assert reader.read_range(start, count).to_table().equals(t.slice(start, count)), (start, count)
    got = PlainColumns(reader._field_readers).read(Selection.of_range(3, 9), {})
    names = t.schema.names
    assert sorted(names[i] for i in got) == sorted(["f", "i8", "u16", "ts", "vec", "fsb"])
    for i, arr in got.items():
        assert arr.equals(t.column(i).combine_chunks().slice(3, 6)), names[i]


def test_2_0_plain_columns_forget_the_pages_a_scan_has_passed(tmp_path, monkeypatch):
    import lancefile.readplan as readplan
    from lancefile.encodings.v2_0.plain import _Group

    # chunks of ~1,600 rows, pages of ~8,000
    monkeypatch.setattr(readplan, "READ_CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(readplan, "MIN_COLUMN_CHUNK_BYTES", 1024)
    t = pa.table({f"c{i}": np.random.default_rng(i).random(40_000) for i in range(6)})
    p = tmp_path / "s.lance"
    lancefile.write_table(t, p, version="2.0", max_page_bytes=64 * 1024)
    held = []
    real = _Group.page

    def page(self, p, plan):
        got = real(self, p, plan)
        held.append(len(self._pages))
        return got

    import unittest.mock as mock

    with mock.patch.object(_Group, "page", page):
        reader = lancefile.LanceFileReader(p)
        assert reader.read_range(0, 40_000, batch_size=100).to_table().equals(t)
        assert len(reader._plain_columns()._groups) == 1
    assert len(held) > 10 and max(held) == 1  # one page held at a time


def test_2_0_encodings_shared_by_columns_are_parsed_once_a_file(tmp_path, monkeypatch):
    """A wide 2.0 table's pages and columns share their encodings byte for byte: each is
    parsed once a file, not once a column."""
    import lancefile.format.container as container

    t = pa.table({f"c{i}": np.arange(1000, dtype=np.float64) + i for i in range(50)})
    p = tmp_path / "w.lance"
    reference_write(t, p, version="2.0")
    calls = []
    real = container.unpack_any
    monkeypatch.setattr(container, "unpack_any", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert lancefile.LanceFileReader(p).read_range(10, 500).to_table().equals(t.slice(10, 500))
    assert 1 <= len(calls) == len(set(calls)) <= 2  # the page encoding, the column encoding


def test_2_0_wide_reads_parse_no_column_metadata_message_by_message(tmp_path, monkeypatch):
    """A fresh reader's range of a wide 2.0 file: the columns' metadata is walked in one
    compiled pass (FileLayout.column_tables), not parsed column by column, and the field
    readers are made without it; so is a take's; a take read column by column parses them."""
    from lancefile.format.container import FileLayout

    t = pa.table({f"c{i}": np.arange(2000, dtype=np.float64) * (i + 1) for i in range(40)})
    p = tmp_path / "w.lance"
    reference_write(t, p, version="2.0")
    parsed = []
    real = FileLayout._parse_column
    monkeypatch.setattr(FileLayout, "_parse_column", lambda self, i: parsed.append(i) or real(self, i))
    assert lancefile.LanceFileReader(p).read_range(100, 1500).to_table().equals(t.slice(100, 1500))
    assert lancefile.LanceFileReader(p).read_all().to_table().equals(t)
    assert lancefile.LanceFileReader(p).take_rows([3, 1999]).to_table().equals(t.take([3, 1999]))
    assert parsed == []
    import lancefile.encodings.v2_0.plain as plain

    monkeypatch.setattr(plain, "TAKE_MAX_ROWS", 1)  # a take read column by column parses what it reads
    assert lancefile.LanceFileReader(p).take_rows([3, 1999]).to_table().equals(t.take([3, 1999]))
    assert sorted(parsed) == list(range(40))


def _with_column_encoding(path, column: int, message) -> bytes:
    from lancefile._proto import encodings_v2_0_pb2 as pb2
    from lancefile.format.container import COLUMN_ENCODING_URL, pack_any
    from lancefile.fuzz.filemap import parse, rebuild

    fm = parse(path.read_bytes())
    metas = [m for m in fm.metas]
    metas[column].encoding.direct.encoding = pack_any(COLUMN_ENCODING_URL, pb2.ColumnEncoding(**message))
    return rebuild(fm, metas=metas)


@pytest.mark.parametrize("how", ["range", "scan", "take", "one column"])
def test_2_0_a_fixed_width_column_not_encoded_as_values_is_refused_when_read(plannings, tmp_path, how):
    """The column encoding of a fixed-width 2.0 field, checked when the column is first read
    (its reader is made without it): a blob or zone-index column encoding is refused, named."""
    from lancefile._proto import encodings_v2_0_pb2 as pb2

    t = pa.table({f"c{i}": np.arange(3000, dtype=np.int32) + i for i in range(6)})
    p = tmp_path / "w.lance"
    reference_write(t, p, version="2.0")
    for message, error in [({"blob": pb2.Blob()}, CorruptFileError),
                           ({"zone_index": pb2.ZoneIndex()}, lancefile.UnsupportedEncodingError)]:
        bad = tmp_path / "bad.lance"
        bad.write_bytes(_with_column_encoding(p, 4, message))
        reader = lancefile.LanceFileReader(bad, columns=["c4"] if how == "one column" else None)
        read = {"range": lambda: reader.read_range(10, 100), "scan": lambda: reader.read_all(),
                "take": lambda: reader.take_rows([1, 2999]), "one column": lambda: reader.read_all()}[how]
        with pytest.raises(error, match=r"column 4 \(field 'c4'\)"):
            read().to_table()
        # the other columns read
        ok = lancefile.LanceFileReader(bad, columns=["c0", "c5"]).read_range(10, 100).to_table()
        assert ok.equals(t.select(["c0", "c5"]).slice(10, 100))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_2_0_takes_read_together_equal_the_table(plannings, wide_file_2_0, data):
    """2.0 takes: every row of the plain fixed-width columns is fetched together (over all
    their pages), the other columns one by one; any order, repeats, all equal the table."""
    p, t = wide_file_2_0
    idx = data.draw(st.lists(st.integers(0, t.num_rows - 1), min_size=1, max_size=300))
    assert lancefile.LanceFileReader(p).take_rows(idx).to_table().equals(t.take(idx))


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
def test_2_0_plain_takes_fetch_in_batches_and_leave_other_pages_alone(plannings, tmp_path, monkeypatch, writer):
    """A take's plain columns are fetched in batches of about TAKE_READ_BYTES (here a few
    columns' worth) with one read_spans each; every fixed-width kind comes out right, and
    the columns that are not plain are read by their own readers."""
    import lancefile.encodings.v2_0.plain as plain
    from lancefile.encodings.selection import Selection

    t = _plain_types_table(20_000)
    p = tmp_path / "k.lance"
    write_by(writer, t, p, "2.0", max_page_bytes=32 * 1024)
    calls = []
    real = plain.read_spans
    monkeypatch.setattr(plain, "read_spans", lambda src, s, n: calls.append(len(s)) or real(src, s, n))
    monkeypatch.setattr(plain, "TAKE_READ_BYTES", 40_000)
    idx = np.unique(np.random.default_rng(3).integers(0, 20_000, 200))
    reader = lancefile.LanceFileReader(p)
    assert reader.take_rows(idx).to_table().equals(t.take(idx))
    got = plain.PlainColumns(reader._field_readers).read(Selection.of_indices(idx), {})
    names = t.schema.names
    assert sorted(names[i] for i in got) == sorted(["f", "i8", "u16", "ts", "vec", "fsb"])
    assert 2 < len(calls) // 2 <= 7 and set(calls) <= {len(idx) * k for k in range(1, 8)}
    monkeypatch.setattr(plain, "TAKE_MAX_ROWS", 100)  # a larger take: column by column
    assert plain.PlainColumns(reader._field_readers).read(Selection.of_indices(idx), {}) == {}
    assert reader.take_rows(idx).to_table().equals(t.take(idx))


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
def test_2_0_plain_columns_after_a_struct_field(plannings, tmp_path, writer):
    """The first field a struct (no column of its own to plan from): the plain columns after
    it are still read together, by ranges and by takes (found by test_properties)."""
    t = pa.table({"s": pa.array([{"a": i} for i in range(3000)]), "x": np.arange(3000.0),
                  "y": np.arange(3000, dtype=np.int16)})
    p = tmp_path / "s.lance"
    write_by(writer, t, p, "2.0")
    reader = lancefile.LanceFileReader(p)
    assert reader.read_range(5, 2000).to_table().equals(t.slice(5, 2000))
    assert reader.take_rows([0, 7, 2999]).to_table().equals(t.take([0, 7, 2999]))
