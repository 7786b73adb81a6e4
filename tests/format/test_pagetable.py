"""The compiled page table (lancefile.format.pagetable) against protobuf's parse of the same bytes."""

from __future__ import annotations

import numpy as np
import pytest
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile._proto import file2_pb2
from lancefile.format.container import Pages, _page_info
from lancefile.format.pagetable import MAX_SIMPLE_BUFFERS, page_table

LIMIT = 1 << 20
U64 = st.integers(0, (1 << 64) - 1)
SMALL = st.integers(0, LIMIT)


@st.composite
def pages(draw):
    n = draw(st.integers(0, 5))
    offs = draw(st.lists(st.one_of(SMALL, U64), min_size=n, max_size=n))
    sizes = draw(st.lists(st.one_of(SMALL, U64), min_size=n, max_size=n))
    if draw(st.booleans()):  # now and then unequal lists
        sizes = sizes[: draw(st.integers(0, n))] if draw(st.booleans()) else sizes + [draw(SMALL)]
    page = file2_pb2.ColumnMetadata.Page(buffer_offsets=offs, buffer_sizes=sizes,
                                         length=draw(st.one_of(SMALL, U64)), priority=draw(st.one_of(SMALL, U64)))
    kind = draw(st.sampled_from(["direct", "direct", "direct", "indirect", "none", "missing", "empty-direct"]))
    if kind == "direct":
        page.encoding.direct.encoding = draw(st.binary(max_size=40))
    elif kind == "empty-direct":
        page.encoding.direct.SetInParent()
    elif kind == "indirect":
        page.encoding.indirect.buffer_location = 5
    elif kind == "none":
        page.encoding.none.SetInParent()
    return page


def _serialized(draw_pages, extra, unpacked):
    meta = file2_pb2.ColumnMetadata(pages=draw_pages, buffer_offsets=[1, 2], buffer_sizes=[3, 4])
    meta.encoding.direct.encoding = b"column"
    raw = meta.SerializeToString()
    if unpacked:  # the same page again, its repeated fields unpacked (a valid, rarer form)
        raw += _unpacked_page(draw_pages[0]) if draw_pages else b""
    return raw + extra


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _unpacked_page(page) -> bytes:
    body = b"".join(b"\x08" + _varint(v) for v in page.buffer_offsets)
    body += b"".join(b"\x10" + _varint(v) for v in page.buffer_sizes)
    body += b"\x18" + _varint(page.length)
    enc = page.encoding.SerializeToString()
    body += b"\x22" + _varint(len(enc)) + enc
    return b"\x12" + _varint(len(body)) + body


def _expect_simple(p) -> bool:
    offs, sizes = list(p.buffer_offsets), list(p.buffer_sizes)
    # an empty direct encoding (no field on the wire) is left to protobuf too
    return (p.encoding.WhichOneof("location") == "direct" and p.encoding.direct.encoding != b""
            and len(offs) == len(sizes)
            and len(offs) <= MAX_SIMPLE_BUFFERS and all(a + s <= LIMIT for a, s in zip(offs, sizes))
            and p.length < 1 << 62 and p.priority < 1 << 62)


@settings(max_examples=300, deadline=None)
@given(st.lists(pages(), max_size=6), st.sampled_from([b"", b"\x2a\x03abc", b"\x30\x07", b"\x39" + b"\0" * 8]),
       st.booleans())
def test_matches_protobuf(draw_pages, extra, unpacked):
    """Every simple page's facts are protobuf's; the pages the table calls simple are exactly
    those of the usual form (one direct encoding, equal lists, buffers inside the file). Unknown
    fields after the pages (here 5 and 6 and 7, of three wire types) are skipped."""
    raw = _serialized(draw_pages, extra, unpacked)
    meta = file2_pb2.ColumnMetadata.FromString(raw)
    table = page_table(raw, len(meta.pages), LIMIT)
    assert table is not None
    assert len(table) == len(meta.pages)
    for i, p in enumerate(meta.pages):
        if p.length < 1 << 62:
            assert table.lengths[i] == p.length
        assert bool(table.simple[i]) == _expect_simple(p)
        if table.simple[i]:
            assert table.buffers(i) == list(zip(p.buffer_offsets, p.buffer_sizes))
            assert table.encoding(i) == p.encoding.direct.encoding
            assert table.priorities[i] == p.priority


def test_merged_encoding_is_not_simple():
    """A page whose Encoding field appears twice is merged by protobuf (the last oneof wins): the
    table leaves it to protobuf rather than guess."""
    a = file2_pb2.ColumnMetadata.Page(length=3)
    a.encoding.direct.encoding = b"one"
    body = a.SerializeToString()
    enc = file2_pb2.Encoding()
    enc.none.SetInParent()
    body += b"\x22" + _varint(len(enc.SerializeToString())) + enc.SerializeToString()
    raw = b"\x12" + _varint(len(body)) + body
    meta = file2_pb2.ColumnMetadata.FromString(raw)
    assert meta.pages[0].encoding.WhichOneof("location") == "none"
    table = page_table(raw, 1, LIMIT)
    assert table is not None and not table.simple[0] and table.lengths[0] == 3


def test_truncated_or_miscounted_gives_none():
    page = file2_pb2.ColumnMetadata.Page(buffer_offsets=[0], buffer_sizes=[4], length=9)
    page.encoding.direct.encoding = b"e"
    raw = file2_pb2.ColumnMetadata(pages=[page, page]).SerializeToString()
    assert page_table(raw, 2, LIMIT) is not None
    assert page_table(raw, 1, LIMIT) is None  # more pages than protobuf counted
    assert page_table(raw, 3, LIMIT) is None  # fewer
    assert page_table(raw[:-1], 2, LIMIT) is None  # cut inside the last page
    assert page_table(raw + b"\x0b", 2, LIMIT) is None  # a group: not walked


def test_pages_from_the_table_equal_protobufs(tmp_path):
    """A multi-page column's PageInfo, built from the table, equals the protobuf path's."""
    path = tmp_path / "t.lance"
    t = pa.table({"a": pa.array(np.arange(300_000)), "s": pa.array([str(i) for i in range(300_000)])})
    lancefile.write_table(t, path, max_page_bytes=64 << 10)
    layout = lancefile.LanceFileReader(path)._layout
    for c in range(layout.num_columns):
        pages = layout.column(c).pages
        assert isinstance(pages, Pages) and pages.table is not None and len(pages) > 3
        assert all(pages.table.simple)
        for i in range(len(pages)):
            assert pages[i] == _page_info(pages._raw[i], pages._limit, "x", i)


@st.composite
def columns(draw):
    """A serialized ColumnMetadata: pages, maybe a column encoding (direct, or another kind),
    maybe column buffers, maybe an unknown field; now and then cut short."""
    meta = file2_pb2.ColumnMetadata(pages=draw(st.lists(pages(), max_size=4)))
    kind = draw(st.sampled_from(["direct", "none", "missing", "indirect"]))
    if kind == "direct":
        meta.encoding.direct.encoding = draw(st.binary(min_size=1, max_size=12))
    elif kind == "none":
        meta.encoding.none.SetInParent()
    elif kind == "indirect":
        meta.encoding.indirect.buffer_location = 1
    if draw(st.booleans()):
        meta.buffer_offsets.extend([1, 2])
        meta.buffer_sizes.extend([3, 4])
    raw = meta.SerializeToString() + draw(st.sampled_from([b"", b"\x2a\x03abc"]))
    return raw[: draw(st.integers(0, len(raw)))] if draw(st.integers(0, 9)) == 0 else raw


@settings(max_examples=200, deadline=None)
@given(st.lists(columns(), min_size=1, max_size=6), st.binary(max_size=5))
def test_column_tables_match_protobuf(raws, gap):
    """Many messages, side by side in one buffer (gaps between them), walked at once: each
    column's pages, lengths, simple pages' buffers and encodings, its own encoding and whether
    it lists buffers are protobuf's; a message protobuf cannot parse is not walked (-1)."""
    from lancefile.format.pagetable import column_tables

    buf, starts = b"", []
    for raw in raws:
        buf += gap
        starts.append(len(buf))
        buf += raw
    starts = np.array(starts, np.int64)
    ends = starts + np.array([len(r) for r in raws], np.int64)
    t = column_tables(np.frombuffer(buf, np.uint8), starts, ends, LIMIT)
    for c, raw in enumerate(raws):
        try:
            meta = file2_pb2.ColumnMetadata.FromString(raw)
        except Exception:  # cut inside a field: not walked either
            assert t.pages[c] == -1
            continue
        if t.pages[c] < 0:
            continue  # not walked: the protobuf path reads it
        assert t.pages[c] == len(meta.pages)
        assert bool(t.has_buffers[c]) == bool(len(meta.buffer_offsets) or len(meta.buffer_sizes))
        cid = int(t.column_encoding_ids[c])
        if not meta.HasField("encoding"):
            assert cid == -1
        elif meta.encoding.WhichOneof("location") == "direct" and meta.encoding.direct.encoding:
            assert cid >= 0 and t.column_encoding(cid) == meta.encoding.direct.encoding
        else:
            assert cid == -2
        for i, p in enumerate(meta.pages):
            q = int(t.first_page[c]) + i
            if p.length < 1 << 62:
                assert t.lengths[q] == p.length
            assert bool(t.simple[q]) == _expect_simple(p)
            if t.simple[q]:
                a, n = int(t.first[q]), int(t.nbuf[q])
                assert list(zip(t.positions[a : a + n].tolist(), t.sizes[a : a + n].tolist())) == list(
                    zip(p.buffer_offsets, p.buffer_sizes))
                assert t.encoding_bytes(int(t.encoding_ids[q])) == p.encoding.direct.encoding


def test_column_tables_name_equal_encodings_alike():
    from lancefile.format.pagetable import column_tables

    raws = []
    for enc in [b"aa", b"ab", b"aa", b"a", b"ab"]:
        page = file2_pb2.ColumnMetadata.Page(buffer_offsets=[0], buffer_sizes=[4], length=9)
        page.encoding.direct.encoding = enc
        meta = file2_pb2.ColumnMetadata(pages=[page])
        meta.encoding.direct.encoding = enc
        raws.append(meta.SerializeToString())
    buf = b"".join(raws)
    ends = np.cumsum([len(r) for r in raws])
    t = column_tables(np.frombuffer(buf, np.uint8), ends - [len(r) for r in raws], ends, LIMIT)
    assert t.encoding_ids.tolist() == [0, 1, 0, 2, 1] == t.column_encoding_ids.tolist()
    assert [t.encoding_bytes(i) for i in range(3)] == [b"aa", b"ab", b"a"]


@st.composite
def _spans(draw):
    raw = draw(st.binary(min_size=1, max_size=60))
    n = draw(st.integers(0, 30))
    lo, hi = [], []
    for _ in range(n):
        if draw(st.integers(0, 9)) == 0:
            lo.append(-1), hi.append(-1)  # no span
            continue
        a = draw(st.integers(0, len(raw)))
        lo.append(a), hi.append(draw(st.integers(a, min(len(raw), a + 3))))  # short: many equal
    return np.frombuffer(raw, np.uint8), np.array(lo, np.int64), np.array(hi, np.int64)


def _span_bytes(raw, lo, hi):
    return [None if a < 0 else raw[a:b].tobytes() for a, b in zip(lo.tolist(), hi.tolist())]


@settings(max_examples=300, deadline=None)
@given(_spans())
def test_span_ids_name_equal_bytes_alike(spans):
    from lancefile.format.pagetable import span_ids

    raw, lo, hi = spans
    got = _span_bytes(raw, lo, hi)
    ids, reps = span_ids(raw, lo, hi)
    seen = {}  # numbered by first appearance
    for b in got:
        if b is not None and b not in seen:
            seen[b] = len(seen)
    assert ids.tolist() == [-1 if b is None else seen[b] for b in got]
    assert [got[r] for r in reps.tolist()] == list(seen)


@settings(max_examples=100, deadline=None)
@given(_spans())
def test_span_ids_never_join_unequal_bytes_whose_hashes_collide(spans):
    from unittest import mock

    import lancefile.format.pagetable as pagetable

    raw, lo, hi = spans
    got = _span_bytes(raw, lo, hi)

    def colliding(raw, lo, hi, out):  # every span hashed alike
        out[:] = 7

    with mock.patch.object(pagetable, "_k_span_hashes", colliding):
        ids, reps = pagetable.span_ids(raw, lo, hi)
    for i, a in enumerate(ids.tolist()):
        assert (a == -1) == (got[i] is None)
        if a >= 0:
            assert got[reps[a]] == got[i]
        for j, b in enumerate(ids.tolist()[:i]):
            if a == b and a >= 0:
                assert got[i] == got[j]


@pytest.mark.parametrize("kind", ["pages", "buffers"])
def test_column_tables_of_metadata_denser_than_real_files(kind):
    # The walk first makes room for what real files hold (a page in 16 bytes, a buffer in 4);
    # metadata packed tighter (here 2-byte pages, or pages of many 1-byte buffers) is walked
    # again with room for the worst case, not left to protobuf.
    from lancefile.format.pagetable import column_tables

    raws = []
    for c in range(3):
        if kind == "pages":
            meta = file2_pb2.ColumnMetadata(pages=[file2_pb2.ColumnMetadata.Page() for _ in range(400)])
        else:
            page = file2_pb2.ColumnMetadata.Page(buffer_offsets=[0] * 60, buffer_sizes=[1] * 60, length=3)
            page.encoding.direct.encoding = b"e"
            meta = file2_pb2.ColumnMetadata(pages=[page] * 20)
        raws.append(meta.SerializeToString())
    buf = b"".join(raws)
    ends = np.cumsum([len(r) for r in raws])
    t = column_tables(np.frombuffer(buf, np.uint8), ends - [len(r) for r in raws], ends, LIMIT)
    assert t.pages.tolist() == ([400] * 3 if kind == "pages" else [20] * 3)
    if kind == "buffers":
        assert t.simple.all() and t.nbuf.tolist() == [60] * 60 and len(t.positions) == 3600
