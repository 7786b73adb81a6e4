"""Grids (lancefile.format.grids): a full-zip page's rows and index hashed in small pieces.

* a take of single rows of a long-string or large-list column reads the pieces around each
  row (4 KiB of rows, 1 KiB of index), not the 16 KiB blocks, and checks them by their hashes;
* a damaged byte in a piece is named (bytes and page) by a take through it, by a scan and by
  ``verify``; a wrong piece hash is found by ``verify``;
* pylance reads files with grids as without; files without full-zip pages keep layout 2;
* the checksum buffer's grid section is checked before use (overlaps, counts, steps).
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.format import hashloop
from lancefile.format.checked_source import ChecksummedSource
from lancefile.format.checksums import (BLOCK_BYTES, SPAN_BLOCKS, BlockHasher, FileChecksums,
                                        HEADER, build_buffer, buffer_size, hash_bytes)
from lancefile.format.grids import GRID_INDEX_BYTES, GRID_ROW_BYTES, Grids, grid_hashes
from lancefile.fuzz.filemap import parse
from lancefile.io import CountingSource, InMemorySource, read_spans


def _long_strings(n: int, seed: int = 0) -> pa.Table:
    """Strings of 300-1,000 characters (5% null) and lists of 0-3 such strings: full-zip pages."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(300, 1000, 2 * n)
    blob = rng.integers(97, 123, int(lens.sum()), dtype=np.uint8).tobytes().decode()
    at = np.concatenate([[0], np.cumsum(lens)]).tolist()
    words = [blob[a:b] for a, b in zip(at[:-1], at[1:])]
    k = rng.integers(0, 4, n)
    ends = np.cumsum(k).tolist()
    lists = [words[n + e - c : n + e] for e, c in zip(ends, k.tolist())]
    return pa.table({"id": np.arange(n, dtype=np.int64), "s": pa.array(words[:n], mask=rng.random(n) < 0.05),
                     "l": pa.array(lists, pa.list_(pa.string()))})


def _rehash(data: bytearray, ck_pos: int, ck_size: int) -> None:
    """Make the checksum buffer's own hash (its last 8 bytes) match its changed contents."""
    end = ck_pos + ck_size - 8
    data[end : end + 8] = struct.pack("<Q", hash_bytes(bytes(data[ck_pos:end])))


def _checksums(data: bytes) -> tuple[FileChecksums, int, int]:
    pos, size = parse(data).gbo[-1]
    return FileChecksums.parse(data[pos : pos + size], "f"), pos, size


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    t = _long_strings(12_000)
    path = tmp_path_factory.mktemp("grids") / "f.lance"
    lancefile.write_table(t, path, version="2.2", max_page_bytes=3 << 20)
    return t, path, path.read_bytes()


def test_full_zip_pages_get_grids_of_their_rows_and_index(written):
    t, path, data = written
    reader = lancefile.LanceFileReader(data)
    ck = reader._layout.checksums
    raw_ck = data[parse(data).gbo[-1][0]:]
    assert HEADER.unpack_from(raw_ck)[1] == 3  # the layout with grids
    grids = {(int(p), int(s)): int(k) for p, s, k in zip(ck.grids.pos, ck.grids.size, ck.grids.step)}
    meta = reader.metadata()
    seen = 0
    for column in meta.columns:
        for page in column.pages:
            bufs = page.buffers
            if len(bufs) == 2 and tuple(bufs[0]) in grids and tuple(bufs[1]) in grids:
                assert grids[tuple(bufs[0])] == GRID_ROW_BYTES and grids[tuple(bufs[1])] == GRID_INDEX_BYTES
                seen += 1
    assert seen >= 4  # several pages of both the string and the list column
    want = [grid_hashes(data[p : p + s], k) for (p, s), k in sorted(grids.items())]
    assert np.array_equal(np.concatenate(want), ck.grids.hashes)
    assert lancefile.verify(path).checksums_present


def test_pylance_reads_a_file_with_grids(written, tmp_path):
    lance_file = pytest.importorskip("lance.file")
    t, path, _ = written
    assert lance_file.LanceFileReader(str(path)).read_all().to_table().equals(t)
    small = _long_strings(3_000, seed=4)  # and a 2.1 file (full-zip pages there too)
    p21 = tmp_path / "f21.lance"
    lancefile.write_table(small, p21, version="2.1")
    assert len(lancefile.LanceFileReader(p21)._layout.checksums.grids) >= 2
    assert lance_file.LanceFileReader(str(p21)).read_all().to_table().equals(small)


def test_a_take_reads_the_pieces_around_each_row(written):
    t, _, data = written
    rows = np.sort(np.random.default_rng(3).choice(t.num_rows, 100, replace=False))
    src = CountingSource(InMemorySource(data))
    reader = lancefile.LanceFileReader(src, columns=["s"])
    src.reset()
    assert reader.take_rows(rows).to_table().column("s").equals(t.column("s").take(rows))
    row_bytes = sum(len(v.as_py() or "") for v in t.column("s").take(rows))
    # each row: its bytes and at most two pieces' more, two index pieces; never a 16 KiB block
    assert src.bytes_read <= row_bytes + 100 * (2 * GRID_ROW_BYTES + 2 * GRID_INDEX_BYTES)
    assert src.bytes_read < 100 * BLOCK_BYTES


@pytest.mark.parametrize("where", ["rows", "index"])
def test_a_damaged_piece_is_named_by_a_take_a_scan_and_verify(written, tmp_path, where):
    t, _, data = written
    reader = lancefile.LanceFileReader(data)
    col = [f.name for f in reader.schema].index("s")
    page = reader.metadata().columns[col].pages[1]
    first = sum(p.length for p in reader.metadata().columns[col].pages[:1])
    pos, size = page.buffers[0 if where == "rows" else 1]
    step = GRID_ROW_BYTES if where == "rows" else GRID_INDEX_BYTES
    k = (size // step) // 2
    at = pos + k * step + 7
    bad = bytearray(data)
    bad[at] ^= 0x04
    lo, hi = pos + k * step, min(pos + (k + 1) * step, pos + size)
    damaged = lancefile.LanceFileReader(bytes(bad), columns=["s"])
    named = rf"bytes \[{lo}, {hi}\) \(column {col} page 1\b"
    met = 0
    for r in range(first, first + page.length):  # a single-row take through the piece fails, naming it
        try:
            damaged.take_rows([r]).to_table()
        except lancefile.ChecksumError as exc:
            assert re.search(named, str(exc)), str(exc)
            met += 1
            # and the same row among rows of other pages (one batch of reads over several pages)
            with pytest.raises(lancefile.ChecksumError, match=named):
                damaged.take_rows([0, r, t.num_rows - 1]).to_table()
            break
    assert met
    assert damaged.take_rows([0, t.num_rows - 1]).to_table().column("s").equals(t.column("s").take([0, t.num_rows - 1]))
    with pytest.raises(lancefile.ChecksumError):
        damaged.read_all().to_table()
    p = tmp_path / "bad.lance"
    p.write_bytes(bytes(bad))
    with pytest.raises(lancefile.ChecksumError):
        lancefile.verify(p, decode=False)


def test_verify_finds_a_wrong_piece_hash(written, tmp_path):
    """A piece hash that disagrees with bytes whose blocks are right (a writer's mistake) is
    named by ``verify``, where only a take through the piece would meet it otherwise."""
    _, _, data = written
    ck, ck_pos, ck_size = _checksums(data)
    g = ck.grids
    j = len(g.hashes) // 2
    bad = bytearray(data)
    hashes_at = ck_pos + ck_size - 8 - 4 * len(g.hashes)
    assert struct.unpack_from("<I", bad, hashes_at + 4 * j)[0] == int(g.hashes[j])
    bad[hashes_at + 4 * j] ^= 0x01
    _rehash(bad, ck_pos, ck_size)
    p = tmp_path / "bad.lance"
    p.write_bytes(bytes(bad))
    gi = int(np.searchsorted(g.first, j, side="right")) - 1
    lo = int(g.pos[gi] + (j - g.first[gi]) * g.step[gi])
    with pytest.raises(lancefile.ChecksumError, match=rf"bytes \[{lo}, "):
        lancefile.verify(p, decode=False)


def test_files_without_full_zip_pages_keep_layout_2(tmp_path):
    path = tmp_path / "f.lance"
    lancefile.write_table(pa.table({"x": np.arange(50_000), "s": [f"v{i % 50}" for i in range(50_000)]}), path)
    data = path.read_bytes()
    ck, pos, _ = _checksums(data)
    assert HEADER.unpack_from(data, pos)[1] == 2 and len(ck.grids) == 0


# -- the grid section and the compiled checks -------------------------------------------------


def _buffer(covered: int, grids: list, small=None) -> bytes:
    h = BlockHasher(16, 2)
    h.update(bytes(covered))
    kw = dict(covered=covered, schema=b"s", columns=[b"c"], tail=b"t", num_global_buffers=2, block_size=16,
              span_blocks=2)
    raw = build_buffer(h.finish(), **kw, small=small, grids=grids)
    assert len(raw) == buffer_size(1, covered, 16, 2, num_small=len(small[0]) if small else 0, grids=grids)
    return raw


def test_the_grid_section_round_trips_and_is_checked():
    grids = [(10, 100, 16, np.arange(7, dtype=np.uint32)), (200, 33, 8, np.arange(5, dtype=np.uint32) + 9)]
    ck = FileChecksums.parse(_buffer(300, grids, ([150], [20], [5])), "f")
    assert ck.grids.pos.tolist() == [10, 200] and ck.grids.step.tolist() == [16, 8]
    assert ck.grids.hashes.tolist() == list(range(7)) + list(range(9, 14)) and ck.small(150, 20) == 0
    assert ck.grids.first.tolist() == [0, 7]
    refused = {
        "overlap": [(10, 100, 16, np.zeros(7, np.uint32)), (100, 33, 8, np.zeros(5, np.uint32))],
        "past the": [(280, 33, 8, np.zeros(5, np.uint32))],
        "empty": [(10, 0, 16, np.zeros(0, np.uint32))],
        "step": [(10, 16, 0, np.zeros(0, np.uint32))],
        "pieces": [(10, 100, 16, np.zeros(6, np.uint32))],
    }
    for why, bad in refused.items():
        if why == "pieces":  # one hash fewer than the grid has pieces: the buffer cut by hand
            body = _buffer(300, [(10, 100, 16, np.zeros(7, np.uint32))])[:-12]
            raw = body + struct.pack("<Q", hash_bytes(body))
        else:
            raw = _buffer(300, bad)
        with pytest.raises(lancefile.CorruptFileError, match="grid"):
            FileChecksums.parse(raw, "f")


def _memory_with_grid(size: int, grid: tuple[int, int, int], seed: int = 1):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    h = BlockHasher(BLOCK_BYTES, SPAN_BLOCKS)
    h.update(data)
    blocks, spans = h.finish()
    pos, gsize, step = grid
    grids = Grids.of([(pos, gsize, step, grid_hashes(data[pos : pos + gsize], step))], "mem", size)
    ck = FileChecksums("mem", BLOCK_BYTES, size, 2, 0, 0, np.zeros(0, np.uint64), blocks, SPAN_BLOCKS, spans,
                       None, grids)
    return data, ck


@pytest.mark.parametrize("compiled", [True, False])
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40_000), st.integers(1, 5_000), st.lists(st.tuples(st.integers(0, 60_000), st.integers(0, 6_000)),
                                                              min_size=1, max_size=30), st.integers(0, 10**9))
def test_ranges_in_a_grid_read_its_pieces_and_find_a_damaged_one(compiled, gpos, step, ranges, flip_seed):
    """read_spans through the checks: ranges inside the grid widen to its pieces (aligned to
    ``step`` from the grid's start, never past its end), others to blocks; the bytes come back
    right; a flipped byte inside a piece a range reads is named by that piece's bytes. The
    same with the compiled loops and with the Python ones."""
    if compiled and not hashloop.hash_loop_available():  # pragma: no cover
        pytest.skip("xxhash's build hides XXH3_64bits")
    size = 70_000
    gsize = min(30_000, size - gpos)
    data, ck = _memory_with_grid(size, (gpos, gsize, step))
    s = np.array([min(a, size - 1) for a, _ in ranges], np.int64)
    n = np.array([min(k, size - a) for a, k in zip(s.tolist(), [k for _, k in ranges])], np.int64)
    import contextlib

    ctx = contextlib.nullcontext() if compiled else pytest.MonkeyPatch.context()
    with ctx as mp:
        if mp is not None:
            mp.setattr(hashloop, "_xxh3", lambda: None)
        ws, we, b0, nb, seg = hashloop.widen_reads(s, n, size, BLOCK_BYTES, np.zeros(0, np.int64),
                                                   np.zeros(0, np.int64), ck.grids)
        inside = (s >= gpos) & (s + n <= gpos + gsize)
        assert np.array_equal(seg == -2, inside)
        assert np.all((ws[inside] - gpos) % step == 0) and np.all(we[inside] <= gpos + gsize)
        assert np.all((ws <= s) & (we >= s + n))
        assert np.all((we[inside] - ws[inside]) <= n[inside] + 2 * step)
        got, at = read_spans(ChecksummedSource(InMemorySource(data), ck), s, n)
        for a, k, o in zip(s.tolist(), n.tolist(), at.tolist()):
            assert bytes(got[o : o + k]) == data[a : a + k]
        hit = [(a, k) for a, k, w0, w1 in zip(s.tolist(), n.tolist(), ws.tolist(), we.tolist())
               if gpos <= a and a + k <= gpos + gsize and k > 0]
        if hit:
            a, k = hit[flip_seed % len(hit)]
            w0 = gpos + (a - gpos) // step * step
            byte = w0 + flip_seed % max(1, min(step, gpos + gsize - w0))
            bad = bytearray(data)
            bad[byte] ^= 0x80
            lo = gpos + (byte - gpos) // step * step
            blk = byte // BLOCK_BYTES * BLOCK_BYTES  # a range across the grid's edge may meet it first
            with pytest.raises(lancefile.ChecksumError,
                               match=rf"bytes \[({lo}, {min(lo + step, gpos + gsize)}|{blk}, )"):
                read_spans(ChecksummedSource(InMemorySource(bytes(bad)), ck), s, n)
            if k:  # one read alone (ChecksummedSource.read) finds it too
                with pytest.raises(lancefile.ChecksumError, match=rf"bytes \[{lo}, "):
                    ChecksummedSource(InMemorySource(bytes(bad)), ck).read(byte, 1)


def test_checksums_of_a_newer_layout_are_left_unchecked_with_a_warning(written):
    """A checksum buffer intact by its own hash but of a layout this lancefile does not know
    (a later lancefile's) costs only the checking: the data reads as ever, with a warning."""
    t, _, data = written
    ck_pos, ck_size = parse(data).gbo[-1]
    bad = bytearray(data)
    struct.pack_into("<I", bad, ck_pos + 8, 99)  # the layout field
    _rehash(bad, ck_pos, ck_size)
    with pytest.warns(UserWarning, match="newer lancefile .layout 99") as caught:
        reader = lancefile.LanceFileReader(bytes(bad))
        assert reader.read_all().to_table().equals(t)
        assert not reader.has_checksums
    assert len([w for w in caught if "newer lancefile" in str(w.message)]) == 1  # said once a file
    struct.pack_into("<I", bad, ck_pos + 8, 3)  # the known layout, now not matching its own hash
    with pytest.raises(lancefile.ChecksumError, match="checksum buffer itself"):
        lancefile.LanceFileReader(bytes(bad)).read_all().to_table()


def test_verify_reads_a_grid_in_batches_and_names_the_damaged_piece(written, monkeypatch):
    """``check_all`` reads a large grid a batch of whole pieces at a time (never the whole page
    buffer at once) and still finds a flipped byte in the last batch, named by its piece."""
    import lancefile.format.grids as module

    _, _, data = written
    ck, _, _ = _checksums(data)
    g = ck.grids
    sizes = []
    real = module.fetch_spans
    monkeypatch.setattr(module, "fetch_spans", lambda src, s, n, gap: sizes.extend(n.tolist()) or real(src, s, n, gap))
    assert g.check_all(InMemorySource(data), batch_bytes=3 * GRID_ROW_BYTES + 5) == len(g.hashes)
    assert max(sizes) <= 3 * GRID_ROW_BYTES and sum(sizes) == int(g.size.sum()) and len(sizes) > len(g)
    k = int(np.argmax(g.size))
    at = int(g.pos[k] + g.size[k]) - 3
    bad = bytearray(data)
    bad[at] ^= 0x01
    lo = int(g.pos[k]) + (at - int(g.pos[k])) // int(g.step[k]) * int(g.step[k])
    with pytest.raises(lancefile.ChecksumError, match=rf"bytes \[{lo}, {int(g.pos[k] + g.size[k])}\)"):
        g.check_all(InMemorySource(bytes(bad)), batch_bytes=3 * GRID_ROW_BYTES + 5)
