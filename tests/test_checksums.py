"""Checksums (lancefile.format.checksums): written by default, ignored by pylance, checked on read.

* pylance reads checksummed files of every version exactly as the same files without them;
  a default file is the reference's file plus the checksum buffer, nothing else;
* every single-byte flip in page data or column metadata is detected, by reads and by
  ``lancefile.verify`` (many random positions, every version), and named;
* a checked read hashes the blocks it reads and no more; ``verify_checksums=False`` turns it off.
"""

from __future__ import annotations

import random
import re
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.fuzz.filemap import FOOTER, parse
from lancefile.format.checked_source import ChecksummedSource
from lancefile.format.checksums import (
    BLOCK_BYTES,
    SPAN_BLOCKS,
    BlockHasher,
    FileChecksums,
    block_hashes,
)
from lancefile.io import CountingSource, InMemorySource

VERSIONS = ["2.0", "2.1", "2.2"]


def _table(n=20_000, seed=0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "x": pa.array(rng.random(n), mask=rng.random(n) < 0.1),
        "s": pa.array([f"row-{i % 997}-{'x' * (i % 13)}" for i in range(n)]),
        "l": pa.array([list(range(i % 4)) for i in range(n)], pa.list_(pa.int32())),
        "v": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 4).astype(np.float32)), 4),
    })


def _write(path, table, version, **options):
    lancefile.write_table(table, path, version=version, max_page_bytes=64 * 1024, **options)
    return path.read_bytes()


def _no_segments(*args):
    """segment_hashes that finds none (a file as lancefile wrote it before segments)."""
    return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64)


def strip_checksums(data: bytes) -> bytes:
    """The file without its checksum buffer: what lancefile writes with ``checksums=False``."""
    fm = parse(data)
    ck_pos, _ = fm.gbo[-1]
    schema_pos = fm.gbo[0][0]
    shift = schema_pos - ck_pos
    cmo_start = fm.regions["cmo"][0]
    body = data[:ck_pos] + data[schema_pos:cmo_start]
    body += b"".join(struct.pack("<QQ", p - shift, s) for p, s in fm.cmo)
    gbo_start = len(body)
    body += b"".join(struct.pack("<QQ", p - shift if i == 0 else p, s) for i, (p, s) in enumerate(fm.gbo[:-1]))
    f = fm.footer
    return body + FOOTER.pack(f["column_meta_start"] - shift, cmo_start - shift, gbo_start, len(fm.gbo) - 1,
                              f["num_columns"], f["major"], f["minor"], b"LANC")


# -- writing: what pylance sees -----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_reads_checksummed_files_unchanged(tmp_path, version):
    lance_file = pytest.importorskip("lance.file")
    t = _table()
    data = _write(tmp_path / "ck.lance", t, version)
    plain = _write(tmp_path / "plain.lance", t, version, checksums=False)
    assert lancefile.LanceFileReader(tmp_path / "ck.lance").has_checksums
    assert not lancefile.LanceFileReader(tmp_path / "plain.lance").has_checksums
    assert len(data) > len(plain)
    theirs = lance_file.LanceFileReader(str(tmp_path / "ck.lance"))
    assert theirs.read_all().to_table().equals(t)
    assert theirs.read_range(1234, 3000).to_table().equals(t.slice(1234, 3000))
    assert theirs.take_rows([0, 777, 19_999]).to_table().equals(t.take([0, 777, 19_999]))
    assert lance_file.LanceFileReader(str(tmp_path / "ck.lance"), columns=["s", "id"]).read_all().to_table().equals(
        t.select(["s", "id"]))
    # the only difference pylance can see: one more global buffer
    ck_meta, plain_meta = theirs.metadata(), lance_file.LanceFileReader(str(tmp_path / "plain.lance")).metadata()
    assert len(ck_meta.global_buffers) == len(plain_meta.global_buffers) + 1
    assert ck_meta.schema == plain_meta.schema and ck_meta.num_rows == plain_meta.num_rows


@pytest.mark.parametrize("version", VERSIONS)
def test_default_file_is_the_reference_file_plus_the_checksum_buffer(tmp_path, version):
    """Exact-byte tests write with checksums=False; this shows that is the only difference
    (with the reference's encodings: lancefile's own would split the floats)."""
    lance_file = pytest.importorskip("lance.file")
    t = pa.table({"i": pa.array(np.arange(5000, dtype=np.int32)), "f": pa.array(np.linspace(0, 1, 5000)),
                  "s": pa.array([f"s{i}" for i in range(5000)])})
    ours = _write(tmp_path / "ours.lance", t, version, statistics=False, reference_encodings=True)
    with lance_file.LanceFileWriter(str(tmp_path / "theirs.lance"), t.schema, version=version,
                                    max_page_bytes=64 * 1024) as w:
        w.write_batch(t)
    theirs = (tmp_path / "theirs.lance").read_bytes()
    assert ours != theirs
    assert strip_checksums(ours) == _write(tmp_path / "plain.lance", t, version, statistics=False, checksums=False,
                                           reference_encodings=True)
    if version != "2.0":  # lancefile's 2.0 pages are not the reference's byte for byte (its 2.0 pages are compared alone)
        assert strip_checksums(ours) == theirs


# -- detection ------------------------------------------------------------------------------


def _positions(fm, rng: random.Random, n_pages: int, n_meta: int) -> list[tuple[int, str]]:
    pages = [(name, fm.regions[name]) for name in fm.regions if name[0] == "c" and name[1].isdigit()]
    pages = [(name, r) for name, r in pages if r[1] > 0]
    out = []
    for _ in range(n_pages):
        name, (pos, size) = rng.choice(pages)
        out.append((pos + rng.randrange(size), name))
    for _ in range(n_meta):
        c = rng.randrange(fm.num_columns)
        pos, size = fm.regions[f"colmeta{c}"]
        out.append((pos + rng.randrange(size), f"colmeta{c}"))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_every_flip_in_page_data_and_column_metadata_is_detected(tmp_path, version):
    t = _table(6000)
    data = _write(tmp_path / "f.lance", t, version, statistics=False)
    fm = parse(data)
    rng = random.Random(f"flips-{version}")
    positions = _positions(fm, rng, 120, 40)
    missed = []
    for at, region in positions:
        bad = bytearray(data)
        bad[at] ^= 1 << rng.randrange(8)
        bad = bytes(bad)
        for check in ("verify", "read"):
            try:
                if check == "verify":
                    lancefile.verify(bad)
                else:
                    lancefile.LanceFileReader(bad).read_all().to_table()
                missed.append((check, at, region))
            except lancefile.ChecksumError as exc:
                if region.startswith("colmeta"):
                    assert f"metadata of column {region[7:]}" in str(exc), (region, exc)
                else:
                    c, p, b = region[1:].replace("p", " ").replace("b", " ").split()
                    assert f"column {c} page {p} buffer {b}" in str(exc), (region, exc)
    assert not missed, f"{len(missed)} of {2 * len(positions)} checks missed a flipped byte: {missed[:10]}"


@pytest.mark.parametrize("region", ["schema", "footer", "cmo", "gbo", "checksums"])
def test_flips_in_the_schema_tail_and_checksum_buffer_are_detected_on_open(tmp_path, region):
    data = _write(tmp_path / "f.lance", _table(3000), "2.2")
    fm = parse(data)
    pos, size = fm.gbo[-1] if region == "checksums" else fm.regions[region]
    if region == "gbo":
        size -= 16  # the checksum buffer's own entry: covered by nothing (see the next test)
    if region == "checksums":  # its tag: see the next test
        pos, size = pos + 8, size - 8
    rng = random.Random(region)
    for at in rng.sample(range(pos, pos + size), min(size, 40)):
        bad = bytearray(data)
        bad[at] ^= 0x10
        error = lancefile.CorruptFileError
        if region == "footer" and at >= len(data) - 8:  # the version numbers and the magic
            error = lancefile.UnsupportedVersionError if at < len(data) - 4 else lancefile.NotALanceFileError
        with pytest.raises(error):
            lancefile.LanceFileReader(bytes(bad))


@pytest.mark.parametrize("where", ["entry", "tag"])
def test_a_damaged_way_to_the_checksums_loses_only_the_checking(tmp_path, where):
    """A flip in the checksum buffer's own offset-table entry or in its 8-byte tag makes the
    checksums unfindable: the file reads unchecked, and its data is intact (only those bytes changed)."""
    data = _write(tmp_path / "f.lance", _table(3000), "2.2")
    fm = parse(data)
    at = fm.regions["gbo"][0] + 16 * (len(fm.gbo) - 1) + 1 if where == "entry" else fm.gbo[-1][0] + 3
    bad = bytearray(data)
    bad[at] ^= 0x01  # the entry: the position moves by 256 bytes
    reader = lancefile.LanceFileReader(bytes(bad))
    assert not reader.has_checksums
    assert reader.read_all().to_table().equals(_table(3000))


def test_verify_checksums_false_reads_damaged_files_unchecked(tmp_path):
    t = _table(3000)
    data = _write(tmp_path / "f.lance", t, "2.2", statistics=False)
    fm = parse(data)
    pos, _ = fm.regions["c0p0b1"]
    bad = bytearray(data)
    bad[pos + 100] ^= 0xFF
    with pytest.raises(lancefile.ChecksumError, match="column 0 page 0 buffer 1"):
        lancefile.read_table(bytes(bad))
    got = lancefile.read_table(bytes(bad), verify_checksums=False)
    assert got.num_rows == t.num_rows and not got.equals(t)
    assert lancefile.read_table(bytes(data)).equals(t)
    assert list(lancefile.iter_batches(bytes(bad), verify_checksums=False))
    with pytest.raises(lancefile.ChecksumError):
        list(lancefile.iter_batches(bytes(bad)))


# -- what a checked read costs ----------------------------------------------------------------


def test_checked_reads_hash_only_the_blocks_they_touch(tmp_path):
    t = _table(200_000)
    data = _write(tmp_path / "f.lance", t, "2.2")
    idx = [5, 70_000, 199_999]
    counts = {}
    for verify in (False, True):
        src = CountingSource(InMemorySource(data))
        reader = lancefile.LanceFileReader(src, columns=["id"], verify_checksums=verify)
        src.reset()
        assert reader.take_rows(idx).to_table().column("id").to_pylist() == idx
        counts[verify] = (src.requests, src.bytes_read)
    requests, plain_bytes = counts[False]
    # each request grows by at most the two partial blocks at its ends
    assert counts[True][1] <= plain_bytes + counts[True][0] * 2 * BLOCK_BYTES
    assert counts[True][1] < len(data) / 20


def test_opening_a_checksummed_file_costs_no_extra_request_when_the_tail_holds_it(tmp_path):
    data = _write(tmp_path / "f.lance", _table(2000), "2.2")
    for verify in (False, True):
        src = CountingSource(InMemorySource(data))
        lancefile.LanceFileReader(src, verify_checksums=verify)
        assert src.requests == 1  # the tail: footer, tables, metadata, schema and checksums


def test_large_unaligned_reads_into_a_buffer_are_checked_at_both_ends():
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, 5 << 20, dtype=np.uint8).tobytes()
    covered = len(data) - 1000
    h = BlockHasher()
    h.update(data[:covered])
    blocks, spans = h.finish()
    ck = FileChecksums("mem", BLOCK_BYTES, covered, 2, 0, 0, np.zeros(0, np.uint64), blocks, SPAN_BLOCKS, spans)
    for offset, length in [(100, 2 << 20), (BLOCK_BYTES, 3 << 20), (7, covered - 7), (5000, len(data) - 5000)]:
        out = bytearray(length)
        ChecksummedSource(InMemorySource(data), ck).read_into(offset, memoryview(out))
        assert bytes(out) == data[offset : offset + length]
    for at in (50, 2 << 20, (2 << 20) + 150):  # before the read (head block), inside, in the tail block
        bad = bytearray(data)
        bad[at] ^= 1
        with pytest.raises(lancefile.ChecksumError, match=f"bytes \\[{at // BLOCK_BYTES * BLOCK_BYTES},"):
            ChecksummedSource(InMemorySource(bytes(bad)), ck).read_into(100, memoryview(bytearray(2 << 20)))


def _checked_memory(size: int, covered: int, block: int = BLOCK_BYTES, seed: int = 4):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    h = BlockHasher(block, SPAN_BLOCKS)
    h.update(data[:covered])
    blocks, spans = h.finish()
    ck = FileChecksums("mem", block, covered, 2, 0, 0, np.zeros(0, np.uint64), blocks, SPAN_BLOCKS, spans)
    return data, ck


@pytest.mark.parametrize("compiled", [True, False])
def test_many_short_ranges_are_checked_together_each_block_once(compiled, monkeypatch):
    """A take's reads (read_spans of short ranges) are widened to whole blocks, read in one
    batch and every block they touch hashed once: the bytes come back right, in the caller's
    order, whether ranges share a block, straddle two, or lie past the checksummed region.
    The same with the compiled loops (widen_reads, check_reads) and without them."""
    from lancefile.format import hashloop
    from lancefile.io import read_spans

    if compiled and not hashloop.hash_loop_available():  # pragma: no cover
        pytest.skip("xxhash's build hides XXH3_64bits")
    data, ck = _checked_memory(40 * BLOCK_BYTES + 500, 37 * BLOCK_BYTES + 123)
    rng = np.random.default_rng(5)
    starts = rng.integers(0, len(data) - 9000, 300)
    lengths = rng.integers(0, 9000, 300)
    # ranges in one block, across a block boundary, at the checksummed region's end and past it
    starts = np.concatenate([starts, [10, 20, BLOCK_BYTES - 5, ck.covered - 3, ck.covered + 7, len(data) - 1]])
    lengths = np.concatenate([lengths, [5, 5, 10, 10, 10, 1]])
    hashed = []
    src = ChecksummedSource(InMemorySource(data), ck)
    if compiled:  # the blocks the compiled check hashes: each planned block, once
        real_check = hashloop.check_reads

        def check(data, at, size, b0, nb, seg, *rest):
            hashed.extend({int(b) for b, k in zip(b0.tolist(), nb.tolist()) for b in range(b, b + k)})
            return real_check(data, at, size, b0, nb, seg, *rest)

        monkeypatch.setattr(hashloop, "check_reads", check)
    else:  # the Python path: every range it hashes, counted
        real = hashloop._python_hashes
        monkeypatch.setattr(hashloop, "_xxh3", lambda: None)
        monkeypatch.setattr(hashloop, "_python_hashes", lambda v, s, n: hashed.extend(n.tolist()) or real(v, s, n))
    got, at = read_spans(src, starts, lengths)
    for s, n, a in zip(starts.tolist(), lengths.tolist(), at.tolist()):
        assert bytes(got[a : a + n]) == data[s : s + n]
    touched = {b for s, n in zip(starts.tolist(), lengths.tolist()) if s < ck.covered
               for b in range(s // BLOCK_BYTES, -(-min(s + n, ck.covered) // BLOCK_BYTES))}
    assert len(hashed) == len(touched)  # each block once, however many ranges share it
    for at_byte in (12, BLOCK_BYTES - 1, BLOCK_BYTES, ck.covered - 1):  # damage inside a block a range reads
        bad = bytearray(data)
        bad[at_byte] ^= 0x10
        first = at_byte // BLOCK_BYTES * BLOCK_BYTES
        with pytest.raises(lancefile.ChecksumError, match=f"bytes \\[{first}, "):
            read_spans(ChecksummedSource(InMemorySource(bytes(bad)), ck), starts, lengths)
    bad = bytearray(data)
    bad[ck.covered + 8] ^= 1  # past the checksummed bytes: the metadata, checked on its own
    got, at = read_spans(ChecksummedSource(InMemorySource(bytes(bad)), ck), [ck.covered + 7], [10])
    assert bytes(got[int(at[0]) : int(at[0]) + 10]) == bytes(bad[ck.covered + 7 : ck.covered + 17])


def test_a_take_over_a_damaged_block_names_the_page(tmp_path):
    t = _table(200_000)
    data = bytearray(_write(tmp_path / "f.lance", t, "2.2"))
    reader = lancefile.LanceFileReader(bytes(data), columns=["id"])
    rows = [5, 70_000, 150_000, 199_999]
    assert reader.take_rows(rows).to_table().column("id").to_pylist() == rows
    page = reader.metadata().columns[0].pages[-1]
    at = page.buffers[1][0] + 3  # inside the last page's chunks, which row 199_999 reads
    data[at] ^= 0x40
    with pytest.raises(lancefile.ChecksumError, match="column 0 page"):
        lancefile.LanceFileReader(bytes(data), columns=["id"]).take_rows(rows).to_table()


def test_block_hasher_is_the_same_however_the_bytes_are_split():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    want = block_hashes(data, 4096), block_hashes(data, 4096 * 8)
    for _ in range(20):
        h, at = BlockHasher(4096, 8), 0
        while at < len(data):
            n = int(rng.choice([1, 7, 4095, 4096, 4097, 30_000, 40_000]))
            h.update(data[at : at + n])
            at += n
        blocks, spans = h.finish()
        assert np.array_equal(blocks, want[0]) and np.array_equal(spans, want[1])


def test_checks_use_spans_where_a_read_covers_them_and_find_the_damaged_block():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    h = BlockHasher(1000, 10)
    h.update(data)
    blocks, spans = h.finish()
    ck = FileChecksums("mem", 1000, len(data), 2, 0, 0, np.zeros(0, np.uint64), blocks, 10, spans)
    for first, last in [(0, 100), (3, 100), (3, 47), (10, 20), (95, 100), (0, 1)]:
        ck.check_blocks(first, data[first * 1000 : last * 1000])
        for at in (first * 1000, (first + last) * 500, last * 1000 - 1):
            bad = bytearray(data)
            bad[at] ^= 1
            with pytest.raises(lancefile.ChecksumError, match=f"bytes \\[{at // 1000 * 1000}, "):
                ck.check_blocks(first, bytes(bad[first * 1000 : last * 1000]))


# -- verify() and the CLI ------------------------------------------------------------------------


def test_verify_reports(tmp_path):
    path = tmp_path / "f.lance"
    _write(path, _table(3000), "2.1")
    report = lancefile.verify(path)
    assert report.checksums_present and report.decoded and report.rows == 3000
    assert report.bytes_checked == path.stat().st_size
    assert "checksums of all" in str(report)
    plain = tmp_path / "p.lance"
    _write(plain, _table(3000), "2.1", checksums=False)
    report = lancefile.verify(plain, decode=False)
    assert not report.checksums_present and not report.decoded and report.bytes_checked == 0
    assert "no checksums present" in str(report)


def test_verify_of_a_reference_file(tmp_path):
    lance_file = pytest.importorskip("lance.file")
    t = _table(3000)
    with lance_file.LanceFileWriter(str(tmp_path / "ref.lance"), t.schema) as w:
        w.write_batch(t)
    report = lancefile.verify(tmp_path / "ref.lance")
    assert not report.checksums_present and report.decoded and report.pages > 0


def test_cli_verify(tmp_path, capsys):
    from lancefile.cli import main

    good, bad = tmp_path / "good.lance", tmp_path / "bad.lance"
    data = _write(good, _table(3000), "2.2")
    fm = parse(data)
    damaged = bytearray(data)
    damaged[fm.regions["c2p0b1"][0] + 10] ^= 4
    bad.write_bytes(bytes(damaged))
    assert main(["verify", str(good)]) == 0
    assert main(["verify", str(good), str(bad), "--no-progress"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{good}: OK")
    assert out[2].startswith(f"{bad}: FAILED: ChecksumError") and "column 2 page 0 buffer 1" in out[2]
    assert main(["verify", str(tmp_path / "missing.lance")]) == 1
    assert main(["verify", str(good), "--no-decode", "--progress"]) == 0
    assert "decoding" not in capsys.readouterr().err


# -- small page buffers: their own hashes (layout 2) -------------------------------------------


def test_whole_small_page_buffers_are_read_exactly_and_checked_by_their_own_hash(tmp_path, monkeypatch):
    """A take reads each page's chunk metadata and repetition index (small buffers) exactly,
    not widened to the blocks around them, and checks them by their own hashes: a damaged
    byte in one is caught and named like a damaged block."""
    import lancefile.format.checksums as module
    import lancefile.sink as sink_module

    t = _table(200_000)
    data = _write(tmp_path / "f.lance", t, "2.2")
    with monkeypatch.context() as mp:  # the same file with layout 1: every read widened to blocks
        mp.setattr(module, "LAYOUT_VERSION", 1)
        mp.setattr(sink_module, "BLOCK_BYTES", 0)
        mp.setattr(sink_module, "segment_hashes", _no_segments)
        old = _write(tmp_path / "old.lance", t, "2.2")
    reader = lancefile.LanceFileReader(data, columns=["l"])
    ck = reader._layout.checksums
    small = dict(zip(ck._small_pos.tolist(), ck._small_size.tolist()))
    assert len(small) > 10 and max(small.values()) <= 4 * BLOCK_BYTES
    rows = [5, 70_000, 150_000, 199_999]
    read = {}
    for name, raw in (("new", data), ("old", old)):
        src = CountingSource(InMemorySource(raw))
        got = lancefile.LanceFileReader(src, columns=["l"])
        src.reset()
        assert got.take_rows(rows).to_table().column("l").to_pylist() == t.column("l").take(rows).to_pylist()
        read[name] = (src.bytes_read, [p for p, _ in src.ranges])
    assert read["new"][0] < read["old"][0]
    assert any(p in small and p % BLOCK_BYTES for p in read["new"][1])  # a request starts at a small buffer
    # damage inside the chunk metadata of the page of the list column that holds row 150_000
    col = next(i for i, f in reader.column_owners().items() if f.name == "item")
    pages = reader.metadata().columns[col].pages
    starts = np.cumsum([0] + [pg.length for pg in pages])
    k = int(np.searchsorted(starts, 150_000, side="right")) - 1
    pos, size = pages[k].buffers[0]
    assert small.get(pos) == size
    bad = bytearray(data)
    bad[pos + size // 2] ^= 0x08
    with pytest.raises(lancefile.ChecksumError, match=rf"bytes \[{pos}, {pos + size}\) \(column {col} page {k}\b"):
        lancefile.LanceFileReader(bytes(bad), columns=["l"]).take_rows(rows).to_table()
    assert lancefile.LanceFileReader(bytes(bad), columns=["l"], verify_checksums=False).take_rows([5]).to_table().num_rows == 1


def test_files_of_layout_1_are_still_checked(tmp_path, monkeypatch):
    """A checksum buffer without small-buffer hashes (layout 1, lancefile before them) reads
    and checks as before; a layout-1 buffer with extra bytes, or small buffers that overlap,
    are refused."""
    import lancefile.format.checksums as module
    import lancefile.sink as sink_module

    monkeypatch.setattr(module, "LAYOUT_VERSION", 1)
    monkeypatch.setattr(sink_module, "BLOCK_BYTES", 0)  # no page buffer is small
    monkeypatch.setattr(sink_module, "segment_hashes", _no_segments)  # nor any run of chunks a segment
    t = _table(50_000)
    data = _write(tmp_path / "f.lance", t, "2.2")
    reader = lancefile.LanceFileReader(data)
    assert reader.has_checksums and not len(reader._layout.checksums._small_pos)
    assert reader.read_all().to_table().equals(t)
    bad = bytearray(data)
    bad[reader.metadata().columns[0].pages[0].buffers[0][0]] ^= 1
    with pytest.raises(lancefile.ChecksumError):
        lancefile.LanceFileReader(bytes(bad)).read_all().to_table()
    monkeypatch.undo()
    h = BlockHasher(16, 2)
    h.update(bytes(100))
    kw = dict(covered=100, schema=b"s", columns=[b"c"], tail=b"t", num_global_buffers=2, block_size=16,
              span_blocks=2)
    ok = module.build_buffer(h.finish(), **kw, small=([0, 40], [16, 8], [1, 2]))
    assert FileChecksums.parse(ok, "f").small(40, 8) == 1
    for small in (([0, 10], [16, 8], [1, 2]), ([90], [16], [1])):  # overlapping; past the covered bytes
        with pytest.raises(lancefile.CorruptFileError, match="segments overlap or lie past"):
            FileChecksums.parse(module.build_buffer(h.finish(), **kw, small=small), "f")


# -- segments: runs of a mini-block page's chunks -------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9_000), min_size=1, max_size=40), st.integers(1, 6_000), st.integers(0, 8_000),
       st.integers(0, 5_000))
def test_segments_are_runs_of_whole_pieces_with_their_own_hashes(pieces, target, tail, position):
    from lancefile.format.checksums import SEGMENT_MAX_BYTES, hash_bytes, segment_hashes

    cuts = np.cumsum([0] + pieces[:-1])
    data = np.random.default_rng(len(pieces)).integers(0, 256, int(sum(pieces)) + tail, dtype=np.uint8)
    segs = [tuple(map(int, seg)) for seg in zip(*segment_hashes(position, data, cuts, target))]
    if len(data) <= target:
        assert segs == []
        return
    starts = set(cuts.tolist())
    for (p, n, h), nxt in zip(segs, segs[1:] + [None]):
        lo = p - position
        assert lo in starts and 0 < n <= SEGMENT_MAX_BYTES and h == hash_bytes(data[lo : lo + n].tobytes())
        inner = cuts[(cuts >= lo) & (cuts < lo + n)]
        assert len(set((inner // target).tolist())) == 1  # the pieces of one run start within one stretch
        if nxt is not None:  # ascending, apart, and the next starts in a later stretch (runs are not split)
            assert nxt[0] >= p + n and (nxt[0] - position) // target > lo // target
    # every piece lies in one segment, or in none (a run too long for a segment)
    ends = [(p - position, p - position + n) for p, n, _ in segs]
    for a, z in zip(cuts.tolist(), (cuts + np.array(pieces)).tolist()):
        holders = [1 for lo, hi in ends if lo <= a and z <= hi]
        partial = [1 for lo, hi in ends if lo < z and a < hi and not (lo <= a and z <= hi)]
        assert len(holders) <= 1 and not partial


def test_segment_lookup_finds_the_segment_holding_a_range():
    import lancefile.format.checksums as module

    h = BlockHasher(16, 2)
    h.update(bytes(200))
    kw = dict(covered=200, schema=b"s", columns=[b"c"], tail=b"t", num_global_buffers=2, block_size=16,
              span_blocks=2)
    ck = FileChecksums.parse(module.build_buffer(h.finish(), **kw, small=([10, 40, 100], [20, 30, 50], [1, 2, 3])),
                             "f")
    cases = {(10, 20): 0, (12, 5): 0, (29, 1): 0, (29, 2): -1, (30, 5): -1, (40, 30): 1, (69, 1): 1, (70, 1): -1,
             (0, 5): -1, (150, 0): 2, (149, 1): 2, (150, 1): -1, (5, 100): -1}
    for (s, n), want in cases.items():
        assert ck.small(s, n) == want, (s, n)
    s, n = np.array([s for s, _ in cases]), np.array([n for _, n in cases])
    from lancefile.format.hashloop import widen_reads  # what a take's reads use

    seg = widen_reads(s, n, ck.covered, ck.block_size, ck._small_pos, ck._small_size)[4]
    assert seg.tolist() == list(cases.values())


def test_a_take_reads_chunks_in_their_segments_and_names_a_damaged_one(tmp_path, monkeypatch):
    """A take of single rows of a mini-block column reads each row's chunk as its segment (a
    run of chunks of a few KiB) instead of the 16 KiB blocks around it, checked by the
    segment's hash; a damaged byte in a chunk is named by the segment's bytes and its page."""
    import lancefile.sink as sink_module
    from lancefile.format.checksums import SEGMENT_BYTES

    n = 400_000
    rng = np.random.default_rng(5)
    t = pa.table({"x": pa.array(rng.integers(0, 1 << 40, n))})
    data = _write(tmp_path / "f.lance", t, "2.2")
    with monkeypatch.context() as mp:  # the same file without segments of chunks
        mp.setattr(sink_module, "segment_hashes", _no_segments)
        old = _write(tmp_path / "old.lance", t, "2.2")
    rows = np.sort(rng.choice(n, 30, replace=False))
    read = {}
    for name, raw in (("new", data), ("old", old)):
        src = CountingSource(InMemorySource(raw))
        got = lancefile.LanceFileReader(src)
        src.reset()
        assert got.take_rows(rows).to_table().equals(t.take(rows))
        read[name] = src.bytes_read
    assert read["new"] * 2 < read["old"]
    reader = lancefile.LanceFileReader(data)
    ck = reader._layout.checksums
    page = reader.metadata().columns[0].pages[0]
    chunks_at, chunks_size = page.buffers[1]
    pos, size = ck._small_pos, ck._small_size
    mine = np.flatnonzero((pos >= chunks_at) & (pos + size <= chunks_at + chunks_size))
    assert len(mine) > 4 and pos[mine[0]] == chunks_at and np.all(size[mine] < 2 * SEGMENT_BYTES + 8 * 1024)
    seg = int(mine[len(mine) // 2])
    lo, hi = int(pos[seg]), int(pos[seg] + size[seg])
    bad = bytearray(data)
    bad[lo + 1] ^= 0x20
    damaged = lancefile.LanceFileReader(bytes(bad))
    for r in range(0, page.length, 64):  # the first row whose chunk lies in the damaged segment
        try:
            damaged.take_rows([r]).to_table()
        except lancefile.ChecksumError as exc:
            assert re.search(rf"bytes \[{lo}, {hi}\) \(column 0 page 0\b", str(exc)), str(exc)
            break
    else:
        raise AssertionError("no take met the damaged segment")
    # and a take over several pages (its chunks read in one batch of requests)
    with pytest.raises(lancefile.ChecksumError, match=rf"bytes \[{lo}, {hi}\) \(column 0 page 0\b"):
        damaged.take_rows([r, r + 1, n // 2, n - 1]).to_table()


def test_a_checked_take_of_small_chunks_reads_hardly_more_than_an_unchecked_one(tmp_path):
    """A low-cardinality column's chunks are 1-4 KiB (entropy-coded dictionary indices): each
    of 1 KiB or more ends its checksum segment, so a checked take reads less than 1 KiB a
    row more than the same take unchecked (segments of ~4 KiB read ~1.8 KiB a row more)."""
    rng = np.random.default_rng(8)
    n = 300_000
    city = pa.array([f"city-{i:02d}" for i in range(60)]).take(pa.array(rng.zipf(1.3, n) % 60))
    city = pa.compute.if_else(pa.array(rng.random(n) < 0.01), pa.nulls(n, pa.string()), city)
    t = pa.table({"city": city, "status": pa.array(rng.integers(0, 5, n))})
    lancefile.write_table(t, tmp_path / "f.lance")
    raw = (tmp_path / "f.lance").read_bytes()
    rows = np.sort(rng.choice(n, 30, replace=False))
    read = {}
    for checked in (True, False):
        src = CountingSource(InMemorySource(raw))
        reader = lancefile.LanceFileReader(src, verify_checksums=checked)
        src.reset()
        assert reader.take_rows(rows).to_table().equals(t.take(rows))
        read[checked] = src.bytes_read
    assert read[True] <= read[False] + len(rows) * 1024, read


def test_verify_checks_every_segment_against_its_own_hash(tmp_path):
    """``verify`` checks the segments' own hashes too: a segment hash that disagrees with
    bytes whose blocks are right (what a writer's mistake would leave) is named, where only
    a take through that segment would have met it."""
    import lancefile.format.checksums as module
    from lancefile.format.checksums import buffer_size, hash_bytes

    path = tmp_path / "f.lance"
    data = bytearray(_write(path, _table(20_000), "2.2"))
    assert lancefile.verify(path, decode=False).checksums_present
    ck_pos, ck_size = parse(bytes(data)).gbo[-1]
    raw = bytes(data[ck_pos : ck_pos + ck_size])
    ck = FileChecksums.parse(raw, "f")
    k = len(ck._small_pos)
    _, _, _, B, ncols, covered, _, span_blocks = module.HEADER.unpack_from(raw)
    hashes_at = ck_pos + buffer_size(ncols, covered, B, span_blocks) - 8 + 8 * k
    j = k // 2
    data[hashes_at + 8 * j] ^= 0x01  # segment j's hash, then the buffer's own hash over it
    data[ck_pos + ck_size - 8 : ck_pos + ck_size] = struct.pack("<Q", hash_bytes(bytes(data[ck_pos : ck_pos + ck_size - 8])))
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(data))
    lo, size = int(ck._small_pos[j]), int(ck._small_size[j])
    with pytest.raises(lancefile.ChecksumError, match=rf"bytes \[{lo}, {lo + size}\)"):
        lancefile.verify(bad, decode=False)


def test_a_take_of_a_local_file_reads_and_checks_its_chunks_in_one_compiled_call(tmp_path, monkeypatch):
    """A take from a file on disk reads its chunks and hashes them in one compiled call a batch
    (hashloop.read_checked's pread path), not a read and then a check; the rows are right, and a
    damaged chunk read that way is still named."""
    from lancefile.format import hashloop

    if not hashloop.hash_loop_available():  # pragma: no cover
        pytest.skip("xxhash's build hides XXH3_64bits")
    rng = np.random.default_rng(9)
    n = 200_000
    t = pa.table({"x": pa.array(rng.integers(0, 60, n)), "s": pa.array(rng.integers(0, 1 << 30, n))})
    path = tmp_path / "f.lance"
    data = _write(path, t, "2.2")
    calls = []
    real = hashloop._k_pread_check
    monkeypatch.setattr(hashloop, "_k_pread_check", lambda *a: calls.append(len(a[4])) or real(*a))
    rows = np.sort(rng.choice(n, 50, replace=False))
    assert lancefile.LanceFileReader(path).take_rows(rows).to_table().equals(t.take(rows))
    assert calls and max(calls) > 1  # batches of several requests each
    calls.clear()
    assert lancefile.LanceFileReader(path, verify_checksums=False).take_rows(rows).to_table().equals(t.take(rows))
    assert not calls
    reader = lancefile.LanceFileReader(path)
    page = reader.metadata().columns[1].pages[0]
    at, size = page.buffers[1]  # the chunks of the second column's first page
    bad = bytearray(data)
    bad[at + size // 2] ^= 0x04
    path.write_bytes(bytes(bad))
    with pytest.raises(lancefile.ChecksumError, match=r"column 1 page 0\b"):
        lancefile.LanceFileReader(path).take_rows(np.arange(0, page.length, 97)).to_table()
    assert calls


def test_many_mid_size_ranges_are_checked_together_and_long_ones_range_by_range(monkeypatch):
    """A scan chunk of many columns asks for many ranges of 64 KiB-1 MiB: they are read and
    checked in one batch (each block hashed once), not one read_into a range; a few ranges
    averaging 1 MiB or more still go range by range. Either way a damaged block is found."""
    from lancefile.format import checked_source as cks
    from lancefile.io import read_spans

    data, ck = _checked_memory(200 * BLOCK_BYTES, 200 * BLOCK_BYTES)
    calls = []
    real = ChecksummedSource.read_into
    monkeypatch.setattr(ChecksummedSource, "read_into", lambda self, o, out: calls.append(o) or real(self, o, out))
    batched = []
    real_checked = cks.read_checked
    monkeypatch.setattr(cks, "read_checked", lambda *a: batched.append(1) or real_checked(*a))
    mid = (np.arange(40, dtype=np.int64) * 5 * BLOCK_BYTES + 77, np.full(40, 5 * BLOCK_BYTES - 100, np.int64))
    long = (np.array([3, 90 * BLOCK_BYTES + 5], np.int64), np.array([80 * BLOCK_BYTES, 100 * BLOCK_BYTES], np.int64))
    for (s, n), batch in [(mid, True), (long, False)]:
        calls.clear()
        batched.clear()
        got, at = read_spans(ChecksummedSource(InMemorySource(data), ck), s, n)
        assert all(bytes(got[a : a + k]) == data[b : b + k] for a, b, k in zip(at.tolist(), s.tolist(), n.tolist()))
        assert (batched, calls) == (([1], []) if batch else ([], s.tolist()))
        bad = bytearray(data)
        bad[int(s[-1]) + 1000] ^= 4
        with pytest.raises(lancefile.ChecksumError):
            read_spans(ChecksummedSource(InMemorySource(bytes(bad)), ck), s, n)


def test_the_checksum_buffer_is_parsed_in_place(tmp_path):
    """Opening a file parses its checksum buffer without copying it: the hash arrays are views
    of the bytes read (a file of 20,000 chunks has a 400 KB buffer, whose two copies were half
    of its open time)."""
    data = _write(tmp_path / "f.lance", _table(20_000), "2.2")
    reader = lancefile.LanceFileReader(data)
    ck_pos, ck_size = reader.metadata().global_buffers[-1]
    raw = np.frombuffer(data, np.uint8)[ck_pos : ck_pos + ck_size]
    ck = FileChecksums.parse(raw, "f.lance")
    assert len(ck._small_pos) and len(ck._blocks)
    assert np.shares_memory(ck._blocks, raw) and np.shares_memory(ck._small_hash, raw)
    assert ck.covered == reader._layout.checksums.covered
    with pytest.raises(lancefile.ChecksumError, match="checksum buffer itself"):
        damaged = raw.copy()
        damaged[len(damaged) // 2] ^= 1
        FileChecksums.parse(damaged, "f.lance")


def test_a_take_of_vectors_is_read_packed_and_a_damaged_block_named(tmp_path, monkeypatch):
    """A take of fixed-width full-zip rows (vectors) from a local file: each request read into a
    scratch buffer, checked and the rows copied out (read_checked_packed); the rows equal an
    unchecked take's, and a damaged byte under a taken row is named, never returned."""
    from lancefile.format import checked_source as ck_module
    from lancefile.format import hashloop

    if not hashloop.hash_loop_available():
        pytest.skip("no compiled hashing here")
    rng = np.random.default_rng(4)
    n, dim = 4_000, 768  # 3 KB rows: full-zip pages
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * dim).astype(np.float32)), dim)
    t = pa.table({"id": np.arange(n), "v": vec})
    path = tmp_path / "v.lance"
    lancefile.write_table(t, path)
    answered = []
    real = ck_module.read_checked_packed
    monkeypatch.setattr(ck_module, "read_checked_packed", lambda *a: answered.append(real(*a)) or answered[-1])
    idx = np.sort(rng.choice(n, 100, replace=False))  # (a larger take's reads go on two threads, unpacked)
    got = lancefile.LanceFileReader(path).take_rows(idx).to_table()
    assert got.equals(t.take(idx)) and got.equals(lancefile.LanceFileReader(path, verify_checksums=False)
                                                  .take_rows(idx).to_table())
    assert answered and all(a is not None for a in answered)
    page = lancefile.LanceFileReader(path).metadata().columns[1].pages[0]
    data = bytearray(path.read_bytes())
    row = int(idx[len(idx) // 2])
    assert row * dim * 4 < page.buffers[0].size  # (the row lies in the first page)
    data[page.buffers[0].position + row * dim * 4 + 9] ^= 0x40  # inside that row's vector
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(data))
    answered.clear()
    with pytest.raises(lancefile.ChecksumError, match="column 1 page 0"):
        lancefile.LanceFileReader(bad).take_rows(idx).to_table()
    assert answered and answered[-1] is not None and len(answered[-1][1])  # the packed read found the block
