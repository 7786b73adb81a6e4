"""The one-pass take out of a list column's usual mini-block chunks
(:mod:`lancefile.encodings.kernels.listtake`): the rows it gives against the levels and values
the chunks were made from, every way out of the usual form sending the take the general way,
and takes of lancefile's and pylance's 2.2 files going through it."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lancefile
from lancefile.encodings import kernels
from lancefile.encodings.kernels import listtake
from lancefile.encodings.kernels.listtake import miniblock_take_lists
from lancefile.encodings.structural import mini_block
from tests.encodings.kernels.conftest import PROPS

MAX_REP, MAX_VISIBLE = 1, 0
LUT = np.arange(3)  # def 0: a value; 1: a null item; 2: a null or empty list (no value)


def _pad(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 8)


def _chunk(rep: np.ndarray, defs: np.ndarray | None, values: np.ndarray, def_levels="rle", packed=True) -> bytes:
    """A 2.2 chunk (u16 buffer sizes): ``u16 levels, u16 rep size, [u16 def size], u16 value
    size``, padded; rep OutOfLineBitpacking at 1 bit, defs an RLE block (or bit packed at
    ``def_levels`` bits), values InlineBitpacking (or flat)."""
    rb = kernels.out_of_line_bitpacking_encode(rep.astype(np.uint16), 1)
    db = b""
    if defs is not None:
        db = (kernels.rle_block_encode(defs.astype(np.uint16)) if def_levels == "rle"
              else kernels.out_of_line_bitpacking_encode(defs.astype(np.uint16), def_levels))
    vb = (kernels.inline_bitpacking_encode(values) if packed else values.tobytes()) if len(values) else b""
    head = struct.pack("<HH", len(rep), len(rb)) + (struct.pack("<H", len(db)) if defs is not None else b"")
    head += struct.pack("<H", len(vb))
    return _pad(head) + _pad(rb) + _pad(db) + _pad(vb)


def _layout(rep, defs, values, cuts, def_levels="rle", packed=True):
    """Chunks cut at entries ``cuts``: (raw, base, ends, counts, first_row, completed, partial),
    the last two each chunk's repetition index entry (rows that end in it; entries of the row
    it ends inside)."""
    visible = np.ones(len(rep), bool) if defs is None else defs <= MAX_VISIBLE
    value_at = np.concatenate([[0], np.cumsum(visible)])
    starts = np.concatenate([[0], np.cumsum(rep == MAX_REP)])  # row starts before each entry
    last = np.append(np.flatnonzero(rep == MAX_REP)[1:], len(rep)) - 1  # each row's last entry
    blobs, counts, first_row, completed, partial = [], [], [], [], []
    for a, b in zip(cuts[:-1], cuts[1:]):
        blobs.append(_chunk(rep[a:b], None if defs is None else defs[a:b], values[value_at[a] : value_at[b]],
                            def_levels, packed))
        counts.append(value_at[b] - value_at[a])
        first_row.append(starts[a] - (1 if a < len(rep) and rep[a] != MAX_REP else 0))
        ended = last[(last >= a) & (last < b)]
        completed.append(len(ended))
        partial.append(0 if b == len(rep) or rep[b] == MAX_REP else b - (int(ended[-1]) + 1 if len(ended) else a))
    base = np.cumsum([0] + [len(x) for x in blobs])
    return (np.frombuffer(b"".join(blobs), np.uint8), base[:-1], base[1:], np.array(counts, np.int64),
            np.array(first_row, np.int64), np.array(completed, np.int64), np.array(partial, np.int64))


def _rows(data, n_rows: int, has_def: bool):
    """Random list rows as levels: (rep, defs, values, each row's first entry)."""
    rep, defs = [], []
    for _ in range(n_rows):
        k = data.draw(st.integers(0, 6))
        kinds = [data.draw(st.sampled_from([0, 0, 0, 1])) if has_def else 0 for _ in range(k)]
        if not k:  # an empty (or null) list: one entry, no value
            rep.append(1)
            defs.append(2 if has_def else 0)
            continue
        rep += [1] + [0] * (k - 1)
        defs += kinds
    rep, defs = np.array(rep, np.uint16), np.array(defs, np.uint16)
    if not has_def:
        keep = np.ones(len(rep), bool)
        defs = None
    else:
        keep = defs <= MAX_VISIBLE
    values = np.random.default_rng(len(rep)).integers(0, 2**40, int(keep.sum()), dtype=np.uint64)
    return rep, defs, values, np.flatnonzero(rep == MAX_REP)


@PROPS
@given(st.data(), st.booleans(), st.sampled_from(["rle", 2, 5]), st.booleans())
def test_taken_rows_are_the_chunks_own(data, has_def, def_levels, packed):
    rep, defs, values, row_at = _rows(data, data.draw(st.integers(1, 40)), has_def)
    if defs is not None and not (defs <= MAX_VISIBLE).any():
        return
    inner = sorted(set(data.draw(st.lists(st.integers(1, len(rep) - 1), max_size=6)))) if len(rep) > 1 else []
    cuts = np.array([0, *inner, len(rep)])  # chunks may open mid-row
    raw, base, ends, counts, first_row, completed, partial = _layout(rep, defs, values, cuts, def_levels, packed)
    wanted = np.array(sorted(data.draw(st.sets(st.integers(0, len(row_at) - 1), min_size=1))), np.int64)
    brk = np.zeros(len(base), bool)
    brk[0] = True
    got = miniblock_take_lists(raw, base, ends, counts, first_row, brk, completed, partial, wanted, MAX_REP,
                               MAX_VISIBLE, 2, LUT, 1, def_levels if has_def else None, 64, packed)
    assert got is not None
    out_rep, out_def, row_len, out_vals = got
    ends_of = np.append(row_at[1:], len(rep))
    entries = np.concatenate([np.arange(row_at[r], ends_of[r]) for r in wanted])
    assert row_len.tolist() == (ends_of[wanted] - row_at[wanted]).tolist()
    assert out_rep.tolist() == rep[entries].tolist()
    visible = np.ones(len(rep), bool) if defs is None else defs <= MAX_VISIBLE
    value_index = np.cumsum(visible) - 1
    assert out_vals.view(np.uint64).tolist() == values[value_index[entries[visible[entries]]]].tolist()
    if has_def:
        assert out_def.tolist() == defs[entries].tolist()
    else:
        assert out_def is None


def _usual(def_levels="rle", packed=True):
    """Two chunks: rows [5, 6], [7 | 8] (cut mid-row), [null item, 9], [] and [10]."""
    rep = np.array([1, 0, 1, 0, 1, 0, 1, 1], np.uint16)
    defs = np.array([0, 0, 0, 0, 1, 0, 2, 0], np.uint16)
    values = np.array([5, 6, 7, 8, 9, 10], np.uint64)
    return _layout(rep, defs, values, np.array([0, 3, 8]), def_levels, packed)


def _take(raw, base, ends, counts, first_row, completed, partial, wanted=(1, 2), lut=LUT, bits=64, def_levels="rle",
          packed=True):
    return miniblock_take_lists(raw, base, ends, counts, first_row, np.array([True, False]), completed, partial,
                                np.array(wanted), MAX_REP, MAX_VISIBLE, 2, lut, 1, def_levels, bits, packed)


def test_a_run_of_chunks_ends_its_open_row():
    """Chunks 0 and 2 of three (a take skips the middle one): row 0 ends with chunk 0, and chunk 2
    opens with the tail of row 1, which is not row 0's."""
    rep = np.array([1, 0, 1, 0, 0, 0, 1], np.uint16)
    defs = np.zeros(7, np.uint16)
    values = np.arange(10, 17, dtype=np.uint64)
    raw, base, ends, counts, first_row, completed, partial = _layout(rep, defs, values, np.array([0, 2, 4, 7]))
    keep = np.array([0, 2])
    got = miniblock_take_lists(raw, base[keep], ends[keep], counts[keep], first_row[keep], np.array([True, True]),
                               completed[keep], partial[keep], np.array([0, 2]), MAX_REP, MAX_VISIBLE, 2, LUT, 1, "rle",
                               64, True)
    assert got[2].tolist() == [2, 1]
    assert got[3].view(np.uint64).tolist() == [10, 11, 16]


def _code(monkeypatch) -> list:
    """The kernel's answer codes (-1: taken; others name the check that declined)."""
    codes = []
    real = listtake._k_take_lists
    monkeypatch.setattr(listtake, "_k_take_lists", lambda *a: codes.append(int(real(*a)[0])) or real(*a))
    return codes


# each damage, and the check that sees it first (codes of listtake._k_take_lists)
DAMAGES = {"chunk past the bytes": 1, "short chunk": 2, "long chunk": 2, "odd rep size": 3, "rep words": 4,
           "def block short": 5, "def values count negative": 8, "def values odd": 9, "def values too long": 9,
           "def run lengths cut": 10, "def runs short": 6, "def above the table": 7, "values miscounted": 20,
           "width above T": 25, "groups short": 26, "bytes left over": 27, "a chunk not of the form": 27,
           "row not there": 28, "row past the chunks": 29, "a row start added": 31, "a row start dropped": 31}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_out_of_the_usual_form_goes_the_general_way(damage, monkeypatch):
    raw, base, ends, counts, first_row, completed, partial = _usual()
    raw, ends, counts, first_row = raw.copy(), ends.copy(), counts.copy(), first_row.copy()
    kw = {}
    header = 8  # u16 levels, rep size, def size, value size
    rsz = int(raw[2]) | int(raw[3]) << 8
    d_at = header + rsz + (-rsz % 8)
    dsz = int(raw[4]) | int(raw[5]) << 8
    v_at = d_at + dsz + (-dsz % 8)
    runs = int(raw[d_at]) // 2
    assert dsz == 11  # one run of three 0s: 8 + 2 + 1 bytes, padded to 16

    def def_values_bytes(n):
        raw[d_at : d_at + 8] = np.frombuffer(struct.pack("<Q", n), np.uint8)

    if damage == "chunk past the bytes":
        ends[1] += 8
    elif damage == "short chunk":
        ends[0] -= 8
    elif damage == "long chunk":
        ends[0] += 8
    elif damage == "odd rep size":
        raw[2] += 1
    elif damage == "rep words":  # says 5 levels, packed as 3
        raw[0] = 5
    elif damage == "def block short":  # 6 bytes (the chunk 8 bytes shorter): no room for the values' length
        raw[4] = 6
        ends[0] -= 8
    elif damage == "def values count negative":
        def_values_bytes(1 << 63)
    elif damage == "def values odd":
        def_values_bytes(3)
    elif damage == "def values too long":
        def_values_bytes(dsz)
    elif damage == "def run lengths cut":  # 12 bytes (the padding hides it): 2 runs' values, no room for lengths
        raw[4] = 12
        def_values_bytes(4)
    elif damage == "def runs short":  # runs that cover fewer levels than the chunk has
        raw[d_at + 8 + 2 * runs] = 0
    elif damage == "def above the table":
        kw["lut"] = np.arange(1)
    elif damage == "width above T":
        raw[v_at] = 65
    elif damage == "groups short":
        raw[v_at] = 40  # a width whose packed words run past the buffer
    elif damage == "bytes left over":
        raw[v_at] = 1  # narrower than packed: words are left over
    elif damage == "values miscounted":
        counts[0] += 1
    elif damage == "row not there":
        first_row[1] += 1
    elif damage == "row past the chunks":
        kw["wanted"] = (1, 9)
    elif damage == "a chunk not of the form":
        kw["bits"] = 32
    elif damage == "a row start added":  # a continuing level made a row start: one row more ends
        raw[header + 2] = 1  # (three levels: raw u16 words, the second)
    elif damage == "a row start dropped":
        raw[header + 4] = 0
    codes = _code(monkeypatch)
    assert _take(raw, base, ends, counts, first_row, completed, partial, **kw) is None
    assert codes == [DAMAGES[damage]]


@pytest.mark.parametrize("def_levels, packed", [("rle", True), (2, False)])
def test_the_usual_chunks_are_taken(def_levels, packed):
    """The undamaged form of the cases above: the kernel answers (so each None above is the damage)."""
    got = _take(*_usual(def_levels, packed), def_levels=def_levels, packed=packed)
    assert got[0].tolist() == [1, 0, 1, 0] and got[1].tolist() == [0, 0, 1, 0]
    assert got[2].tolist() == [2, 2] and got[3].view(np.uint64).tolist() == [7, 8, 9]
    got = _take(*_usual(def_levels, packed), wanted=(3, 4), def_levels=def_levels, packed=packed)
    assert got[0].tolist() == [1, 1] and got[1].tolist() == [2, 0] and got[3].view(np.uint64).tolist() == [10]


PACKED_DAMAGES = {"def size odd": 13, "def above the table": 7, "flat values short": 21}


@pytest.mark.parametrize("damage", sorted(PACKED_DAMAGES))
def test_packed_levels_and_flat_values_out_of_form(damage, monkeypatch):
    raw, base, ends, counts, first_row, completed, partial = _usual(2, False)
    raw, counts = raw.copy(), counts.copy()
    kw = {"def_levels": 2, "packed": False}
    if damage == "def size odd":  # not whole u16 words (the padding hides it from the chunk's size)
        raw[4] += 1
    elif damage == "def above the table":
        kw["lut"] = np.arange(2)
    else:  # the chunk's flat values cover fewer than it counts
        raw, base, ends, _, first_row, completed, partial = _layout(np.array([1, 0, 1, 0, 1, 0, 1, 1], np.uint16),
                                                np.array([0, 0, 0, 0, 1, 0, 2, 0], np.uint16),
                                                np.array([5, 6, 7, 8, 9, 10], np.uint64)[:5], np.array([0, 3, 8]),
                                                2, False)
        counts = np.array([3, 3])
    codes = _code(monkeypatch)
    assert _take(raw, base, ends, counts, first_row, completed, partial, **kw) is None
    assert codes == [PACKED_DAMAGES[damage]]


# -- files ---------------------------------------------------------------------------------------


def _nested(n: int) -> pa.Table:
    rng = np.random.default_rng(0)
    lens = rng.integers(0, 6, n)
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 2**30, int(lens.sum()))),
         pa.array(rng.random(int(lens.sum())).astype(np.float32), mask=rng.random(int(lens.sum())) < 0.1),
         pa.array(np.array([f"t{i}" for i in range(50)])[rng.integers(0, 50, int(lens.sum()))]),
         pa.array(rng.integers(-2**40, 2**40, int(lens.sum())))],  # flat in pylance's file
        names=["x", "y", "tag", "w"], mask=pa.array(rng.random(int(lens.sum())) < 0.05))
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    lists = pa.ListArray.from_arrays(pa.array(offsets), items, mask=pa.array(rng.random(n) < 0.05))
    return pa.table({"id": np.arange(n), "items": lists})


@pytest.fixture(scope="module")
def nested_files(tmp_path_factory):
    import lance  # the oracle: its 2.2 file, besides lancefile's own

    t = _nested(200_000)
    d = tmp_path_factory.mktemp("listtake")
    ours, theirs = d / "ours.lance", d / "theirs.lance"
    lancefile.write_table(t, ours, version="2.2")
    with lance.file.LanceFileWriter(str(theirs), t.schema, version="2.2") as w:
        w.write_batch(t)
    return t, [ours, theirs]


def test_files_take_through_it(nested_files, monkeypatch):
    t, paths = nested_files
    answered, forms = [], set()
    real = kernels.miniblock_take_lists

    def spy(*a):
        answered.append(real(*a))
        forms.add(a[-1])  # values bit packed, or flat
        return answered[-1]

    monkeypatch.setattr(kernels, "miniblock_take_lists", spy)
    general = mini_block.MiniBlockPage._decode

    def no_lists(self, page, *a, **k):  # a list column of the usual form must not decode the general way
        assert not self.leaf.max_rep or self.take_lists is None, "a list column's take went the general way"
        return general(self, page, *a, **k)

    monkeypatch.setattr(mini_block.MiniBlockPage, "_decode", no_lists)
    rng = np.random.default_rng(1)
    for path in paths:
        for idx in (np.sort(rng.choice(t.num_rows, 100, replace=False)), np.array([0, 1, t.num_rows - 1]),
                    np.sort(rng.choice(t.num_rows, 3000, replace=False))):
            got = lancefile.LanceFileReader(path).take_rows(idx).to_table()
            assert got.equals(t.take(idx)), (path, idx[:5])
    assert answered and all(a is not None for a in answered)
    assert forms == {True, False}


def test_a_damaged_chunk_is_named_by_the_general_path(nested_files, tmp_path):
    """Rep levels damaged in the file: the kernel declines, the general path names the page."""
    t, paths = nested_files
    data = bytearray(paths[1].read_bytes())  # pylance's: no checksums to catch it first
    reader = lancefile.LanceFileReader(paths[1])
    page = reader.metadata().columns[1].pages[0]
    at = page.buffers[1].position  # the first chunk's header: its rep size made odd
    data[at + 2] ^= 1
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(data))
    with pytest.raises(lancefile.CorruptFileError):
        lancefile.LanceFileReader(bad).take_rows(np.array([0, 1, 2, 5000])).to_table()


@pytest.mark.parametrize("way", ["fast", "general", "range"])
@pytest.mark.parametrize("pages", ["one", "many"])
def test_a_moved_row_start_is_named_not_read_as_shifted_rows(nested_files, tmp_path, monkeypatch, way, pages):
    """One repetition level flipped in a chunk of pylance's file (no checksums): its levels end
    another number of rows than the repetition index says. A take (through the kernel, or the
    general way) and a range read name the chunk; without the check the general way numbered
    every later row off by one and returned them."""
    t, paths = nested_files
    data = bytearray(paths[1].read_bytes())
    page = lancefile.LanceFileReader(paths[1]).metadata().columns[1].pages[0]
    at = page.buffers[1].position  # the first chunk: u16 levels, rep size, def size, u32 value size (16 bytes)
    levels, rep_size = struct.unpack_from("<HH", data, at)
    assert levels > 64 and rep_size >= 8
    data[at + 16 + 4] ^= 1  # one level of the packed repetition: a row start made or unmade
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(data))
    if way == "general":
        monkeypatch.setattr(mini_block.MiniBlockPage, "_take_lists", lambda self, *a: None)
    reader = lancefile.LanceFileReader(bad)
    with pytest.raises(lancefile.CorruptFileError, match="repetition index"):
        if way == "range":
            reader.read_range(0, 50).to_table()
        else:
            reader.take_rows(np.array([0, 1, 2, 40] + ([t.num_rows - 1] if pages == "many" else []))).to_table()
