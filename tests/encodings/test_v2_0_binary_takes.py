"""A 2.0 take over many plain string pages (``binary_take.take_pages``): every page's end
offsets in one batch of requests and every row's bytes in one more, the same rows as each
page's decoder gives; pages out of the plain form, or damaged, are read (and named) by their
own decoders."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.encodings.v2_0 import binary, binary_take, fields

N = 20_000


def _table(seed: int = 0, dtype=pa.string(), nulls: bool = True) -> pa.Table:
    rng = np.random.default_rng(seed)
    # distinct values (a dictionary page would take low-cardinality ones), some multi-byte
    words = [("é" if i % 11 == 0 else "") + f"{i:x}" * int(rng.integers(0, 8)) for i in range(N)]
    mask = rng.random(N) < 0.1
    mask[:50] = True  # a page whose first rows are null
    mask &= nulls
    return pa.table({"s": pa.array(words, dtype, mask=mask)})


def _spy(monkeypatch) -> list:
    got = []
    real = binary_take.take_pages
    monkeypatch.setattr(fields, "take_binary_pages", lambda *a: got.append(real(*a)) or got[-1])
    return got


@pytest.fixture(params=["lancefile", "pylance"])
def written(request, tmp_path):
    t = _table()
    path = str(tmp_path / "s.lance")
    if request.param == "lancefile":
        lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024)
    else:
        lance_file = pytest.importorskip("lance.file")
        with lance_file.LanceFileWriter(path, t.schema, version="2.0", max_page_bytes=16 * 1024) as w:
            w.write_batch(t)
    assert len(lancefile.LanceFileReader(path).metadata().columns[0].pages) > 10
    return path, t


def test_a_take_over_many_string_pages_is_two_batches_of_reads(written, monkeypatch):
    path, t = written
    got = _spy(monkeypatch)
    batches = []
    real_read = binary_take.read_spans
    monkeypatch.setattr(binary_take, "read_spans", lambda *a: batches.append(len(a[1])) or real_read(*a))
    rng = np.random.default_rng(1)
    for idx in (np.sort(rng.choice(N, 100, replace=False)), np.array([0, 1, 49, 50, N - 1]),
                np.arange(0, N, 997), np.array([N - 1, 7, 7, 0])):
        reader = lancefile.LanceFileReader(path)
        reader.read_range(0, 1).to_table()  # the column's metadata read
        with monkeypatch.context() as m:  # no page reads its own rows
            m.setattr(binary, "_ends", lambda *a: pytest.fail("a page's decoder read its rows"))
            batches.clear()
            out = reader.take_rows(idx).to_table()
        assert out.equals(t.take(pa.array(idx))), idx
        assert len(batches) == 2 and batches[0] == batches[1] == len(np.unique(idx))  # ends, then bytes
    assert got and all(len(g) > 1 for g in got)


def test_large_types_and_binary(tmp_path, monkeypatch):
    for dtype in (pa.large_string(), pa.binary(), pa.large_binary()):
        t = _table(2, dtype)
        path = str(tmp_path / f"{dtype}.lance")
        lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024)
        got = _spy(monkeypatch)
        idx = np.sort(np.random.default_rng(3).choice(N, 60, replace=False))
        assert lancefile.LanceFileReader(path).take_rows(idx).to_table().equals(t.take(pa.array(idx)))
        assert got and got[-1]


def test_compressed_pages_go_their_own_way(tmp_path, monkeypatch):
    t = _table(4)
    t = t.cast(pa.schema([pa.field("s", pa.string(), metadata={"lance-encoding:compression": "zstd"})]))
    path = str(tmp_path / "z.lance")
    lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024)
    got = _spy(monkeypatch)
    idx = np.sort(np.random.default_rng(5).choice(N, 80, replace=False))
    assert lancefile.LanceFileReader(path).take_rows(idx).to_table().column("s").equals(t.column("s").take(idx))
    assert got == [{}] or not got  # declined: the pages' decoders read them


def _damage(path: str, page: int, what: str) -> str:
    """A copy of the file with page ``page``'s end offsets or bytes damaged (checksums off)."""
    meta = lancefile.LanceFileReader(path).metadata().columns[0].pages[page]
    data = bytearray(open(path, "rb").read())
    ends, body = meta.buffers[0], meta.buffers[1]
    if what == "decreasing ends":  # row 10's end far below row 9's
        at = ends.position + 8 * 10
        data[at : at + 8] = (0).to_bytes(8, "little")
    elif what == "end past the bytes":  # row 10 null (its end + the adjustment, size + 1), ending 100 past them
        at = ends.position + 8 * 10
        data[at : at + 8] = (2 * (body.size + 1) + 100).to_bytes(8, "little")
    else:  # bytes that are not UTF-8
        data[body.position : body.position + body.size] = b"\xff" * body.size
    out = path + ".bad"
    open(out, "wb").write(bytes(data))
    return out


@pytest.mark.parametrize("what", ["decreasing ends", "end past the bytes", "not utf-8"])
def test_damage_is_named_by_the_page(tmp_path, what):
    # (binary for the end past the bytes: the bytes read past it would fail a UTF-8 check anyway)
    t = pa.table({"s": pa.array([f"x{i}".encode() for i in range(N)], pa.binary() if what == "end past the bytes"
                                else pa.string())})
    path = str(tmp_path / "d.lance")
    lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024, checksums=False)
    bad = _damage(path, 3, what)
    pages = lancefile.LanceFileReader(path).metadata().columns[0].pages
    first = sum(p.length for p in pages[:3])
    # (the row after the damaged one left out: its start, the damaged end, gives nothing away)
    idx = np.array([5, first + 9, first + 10, N - 1] if what == "end past the bytes" else
                   [5, first + 9, first + 10, first + 11, N - 1])
    with pytest.raises(lancefile.CorruptFileError, match="page 3"):
        lancefile.LanceFileReader(bad, verify_checksums=False).take_rows(idx).to_table()


def test_pages_without_nulls(tmp_path, monkeypatch):
    """Pages with no null row (null adjustment 0): every row valid, none adjusted."""
    t = _table(7, nulls=False)
    path = str(tmp_path / "n.lance")
    lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024)
    got = _spy(monkeypatch)
    idx = np.sort(np.random.default_rng(8).choice(N, 100, replace=False))
    out = lancefile.LanceFileReader(path).take_rows(idx).to_table()
    assert out.equals(t.take(pa.array(idx))) and out.column("s").null_count == 0
    assert got and got[-1]


def test_rows_past_a_page_s_offsets_are_declined(tmp_path):
    """A page whose rows (as the column's page lengths say) run past its end offsets: left to
    its decoder, which names it."""
    from lancefile.encodings.selection import Selection

    t = _table(9)
    path = str(tmp_path / "p.lance")
    lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024)
    column = lancefile.LanceFileReader(path)._field_readers[0].column
    page = column.page(2, {})
    rows = lancefile.LanceFileReader(path).metadata().columns[0].pages[2].length
    assert binary_take._plan(column.encoding(2), page, Selection.of_indices(np.array([0, rows - 1]))) is not None
    assert binary_take._plan(column.encoding(2), page, Selection.of_indices(np.array([0, rows]))) is None


def test_adjusted_ends_are_the_pages_own():
    """Each row's end undone with its own page's null adjustment, as ``split_adjusted`` does
    page by page (0: the page has no null row)."""
    from lancefile.encodings.v2_0.offsets import split_adjusted

    rng = np.random.default_rng(10)
    for _ in range(50):
        adjust = [0, int(rng.integers(1, 100)), int(rng.integers(1, 100))]
        page_of = rng.integers(0, 3, 40)
        raw = rng.integers(0, 200, 40).astype(np.uint64)
        ends, valid = binary_take._adjusted(raw, np.array(adjust, np.int64)[page_of])
        for k, a in enumerate(adjust):
            e, v = split_adjusted(raw[page_of == k], a)
            assert np.array_equal(ends[page_of == k], e) and np.array_equal(valid[page_of == k], v)


@pytest.mark.parametrize("count", [2, 6])  # the Python loop, and one call of the source's compiled loop
def test_page_ranges_are_read_in_place_and_checked(tmp_path, count):
    """``PageData.read_into``: ranges of a page buffer back to back, the same bytes either way;
    a range past the buffer is named before anything is read."""
    t = _table(11)
    path = str(tmp_path / "r.lance")
    lancefile.write_table(t, path, version="2.0", max_page_bytes=16 * 1024, checksums=False)
    reader = lancefile.LanceFileReader(path)
    column = reader._field_readers[0].column
    page, ref = column.page(1, {}), lancefile.LanceFileReader(path).metadata().columns[0].pages[1].buffers[1]
    raw = open(path, "rb").read()[ref.position : ref.position + ref.size]
    starts, lengths = np.arange(count) * 100 + 3, np.arange(count) % 3 + 5
    out = np.zeros(int(lengths.sum()), np.uint8)
    page.read_into(1, starts, lengths, out)
    assert bytes(out) == b"".join(raw[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist()))
    starts[-1] = ref.size - 2
    with pytest.raises(lancefile.CorruptFileError, match="needs bytes"):
        page.read_into(1, starts, lengths, out)
