"""The compiled hash loop (lancefile.format.hashloop) against xxhash's own calls."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash

from lancefile.format import checksums, hashloop
from lancefile.format.hashloop import hash_loop_available, hash_ranges


@pytest.fixture(params=["compiled", "python"])
def path(request, monkeypatch):
    """Each test runs through the compiled loop and through the Python path (a build whose
    xxhash hides its symbols), which must give the same answers."""
    if request.param == "compiled":
        if not hash_loop_available():  # pragma: no cover
            pytest.skip("xxhash's build hides XXH3_64bits")
        monkeypatch.setattr(hashloop, "_python_hashes", lambda *a: pytest.fail("the Python path ran"))
    else:
        monkeypatch.setattr(hashloop, "_xxh3", lambda: None)
    return request.param


def _expected(data: bytes, starts, sizes):
    return [xxhash.xxh3_64_intdigest(data[s : s + n]) for s, n in zip(starts, sizes)]


@pytest.mark.parametrize("kind", ["array", "bytes", "memoryview", "readonly"])
def test_every_range_hashed_as_xxhash_does(kind, path):
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, 70_000, dtype=np.uint8)
    # lengths around XXH3's internal thresholds (16, 128, 240 bytes, its 1 KiB stripes) and empty ranges
    sizes = [0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1023, 1024, 1025, 4096, 16384, 60_000]
    starts = [int(rng.integers(0, len(raw) - n + 1)) for n in sizes]
    data = {"array": raw, "bytes": raw.tobytes(), "memoryview": memoryview(raw.tobytes()),
            "readonly": np.frombuffer(raw.tobytes(), np.uint8)}[kind]
    got = hash_ranges(data, starts, sizes)
    assert got.dtype == np.uint64
    assert got.tolist() == _expected(raw.tobytes(), starts, sizes)


def test_no_ranges_and_ranges_outside_are_refused(path):
    data = np.arange(100, dtype=np.uint8)
    assert hash_ranges(data, [], []).tolist() == []
    assert hash_ranges(data, [100], [0]).tolist() == [xxhash.xxh3_64_intdigest(b"")]
    for starts, sizes in (([0, 95], [10, 6]), ([-1], [2]), ([5], [-1]), ([101], [0])):
        with pytest.raises(ValueError, match="outside the buffer"):
            hash_ranges(data, starts, sizes)
    with pytest.raises(ValueError, match="2 starts but 1 sizes"):
        hash_ranges(data, [0, 1], [1])


def test_checksums_give_the_same_hashes_either_way(monkeypatch):
    """span_hashes and the writer's block stream give the same hashes through the loop as
    through xxhash range by range (the path where the loop cannot run)."""
    if not hash_loop_available():  # pragma: no cover
        pytest.skip("xxhash's build hides XXH3_64bits")
    rng = np.random.default_rng(2)
    raw = rng.integers(0, 256, 5 * checksums.BLOCK_BYTES + 77, dtype=np.uint8).tobytes()
    starts, sizes = np.array([0, 10, 4096, 70_000]), np.array([5, 4000, 16384, 3000])

    def stream_hashes():
        h, prev = checksums.BlockHasher(), 0
        for cut in (0, 1000, 50_000, 51_000, len(raw)):  # writes of every shape: part-blocks, many blocks
            h.update(raw[prev:cut])
            prev = cut
        return h.finish()

    with monkeypatch.context() as m:
        m.setattr(hashloop, "_python_hashes", lambda *a: pytest.fail("the Python path ran"))
        fast = checksums.span_hashes(memoryview(raw), starts, sizes), stream_hashes()
    monkeypatch.setattr(hashloop, "_xxh3", lambda: None)  # as where it cannot
    slow = checksums.span_hashes(memoryview(raw), starts, sizes), stream_hashes()
    assert fast[0].tolist() == slow[0].tolist() == _expected(raw, starts, sizes)
    for a, b in zip(fast[1], slow[1]):
        assert a.tolist() == b.tolist()
    blocks = [xxhash.xxh3_64_intdigest(raw[i : i + checksums.BLOCK_BYTES])
              for i in range(0, len(raw), checksums.BLOCK_BYTES)]
    assert fast[1][0].tolist() == blocks


@pytest.mark.parametrize("halves", [False, True])
def test_a_checked_read_hashes_a_shared_block_once_and_names_each_damage_once(path, halves, monkeypatch):
    """Ranges that share a block (in any order) check it once: a damaged block is reported
    once; a damaged segment is the one named, the first by number when two are. Hashed in
    two halves at once (a large take), the same: block 1 is read by ranges of both halves,
    and the two damaged segments lie one in each."""
    from lancefile import threadpools
    from lancefile.format.hashloop import check_reads, widen_reads

    if halves:
        monkeypatch.setattr(threadpools, "_CORES", 2)
        monkeypatch.setattr(hashloop, "PARALLEL_DECODE_BYTES", 1)
        halved = []
        real = threadpools.run_parallel
        monkeypatch.setattr(threadpools, "run_parallel", lambda fn, items: halved.append(items) or real(fn, items))

    B = 64
    raw = np.random.default_rng(3).integers(0, 256, 12 * B, dtype=np.uint8)
    covered = 9 * B + 10
    blocks = np.array([xxhash.xxh3_64_intdigest(raw[i : min(i + B, covered)].tobytes())
                       for i in range(0, covered, B)], np.uint64)
    seg_pos, seg_size = np.array([3 * B + 5, 6 * B], np.int64), np.array([20, 30], np.int64)
    seg_hash = np.array([xxhash.xxh3_64_intdigest(raw[p : p + n].tobytes()) for p, n in zip(seg_pos, seg_size)],
                        np.uint64)
    # block 1 three times (out of order), block 8, a segment, past covered, a segment, and
    # from inside the short last block (9) to past the next block boundary
    s = np.array([B + 3, 8 * B + 1, B + 40, 3 * B + 6, B, 9 * B + 20, 6 * B + 1, covered - 3], np.int64)
    n = np.array([5, 4, 10, 3, 2, 6, 4, B + 10], np.int64)
    ws, we, b0, nb, seg = widen_reads(s, n, covered, B, seg_pos, seg_size)
    assert seg.tolist() == [-1, -1, -1, 0, -1, -1, 1, -1]
    assert (b0[nb > 0].tolist(), nb[nb > 0].tolist()) == ([1, 8, 1, 1, 9], [1, 1, 1, 1, 1])
    assert (ws[5], we[5]) == (9 * B + 20, 9 * B + 26)  # past the checksummed bytes: as asked
    assert (ws[7], we[7]) == (9 * B, covered + B + 7)  # the last block, then on to the range's end
    data = np.concatenate([raw[a:b] for a, b in zip(ws, we)])
    at = np.concatenate([[0], np.cumsum(we - ws)[:-1]])

    def check(blocks=blocks, seg_hash=seg_hash):
        return check_reads(data, at, we - ws, b0, nb, seg, B, covered, blocks, seg_hash)

    bad, seg_bad, piece_bad = check()
    assert bad.tolist() == [] and seg_bad == -1 and piece_bad == -1  # (no grids here)
    wrong = blocks.copy()
    wrong[1] ^= np.uint64(1)
    wrong[9] ^= np.uint64(1)
    bad, seg_bad, _ = check(blocks=wrong)
    assert sorted(bad.tolist()) == [1, 9]  # block 1 once, though three ranges read it
    both = seg_hash ^ np.uint64(1)
    assert check(seg_hash=both)[1] == 0
    assert check(seg_hash=np.array([seg_hash[0], seg_hash[1] ^ np.uint64(1)], np.uint64))[1] == 1
    if halves and path == "compiled":
        assert halved and halved[0] == [(0, 4), (4, 8)]


def _checked_file(seed: int, B: int):
    """40 blocks of random bytes, 37 and a bit checksummed in blocks of ``B``, two segments and a
    grid of 50-byte pieces: (raw, covered, block hashes, segment positions, sizes, hashes,
    (grid position, size, step, piece hashes), Grids, and 60 ranges (starts, lengths) of which
    the first four lie in the segments, the grid and across the end of the checksummed bytes)."""
    from lancefile.format.grids import Grids, grid_hashes

    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, 40 * B, dtype=np.uint8).tobytes()
    covered = 37 * B + 5
    blocks = np.array([xxhash.xxh3_64_intdigest(raw[i : min(i + B, covered)]) for i in range(0, covered, B)],
                      np.uint64)
    seg_pos, seg_size = np.array([3 * B + 5, 6 * B], np.int64), np.array([20, 30], np.int64)
    seg_hash = np.array([xxhash.xxh3_64_intdigest(raw[p : p + k]) for p, k in zip(seg_pos, seg_size)], np.uint64)
    gpos, gsize, gstep = 10 * B + 3, 12 * B, 50
    gh = grid_hashes(raw[gpos : gpos + gsize], gstep)
    grids = Grids.of([(gpos, gsize, gstep, gh)], "f", covered)
    s = rng.integers(0, len(raw) - 100, 60).astype(np.int64)
    n = rng.integers(0, 100, 60).astype(np.int64)
    s[:4], n[:4] = [3 * B + 6, 6 * B + 2, gpos + 60, covered - 3], [4, 20, 70, 10]
    return raw, covered, blocks, seg_pos, seg_size, seg_hash, (gpos, gsize, gstep, gh), grids, s, n


def test_a_local_files_checked_reads_are_one_call_with_the_answers_of_two(path, tmp_path, monkeypatch):
    """read_checked from a local file reads (pread) and hashes in one compiled call, planned
    by one more; from memory it reads, then hashes. Both give the same bytes and find the
    same wrong blocks, segment and grid piece; a file that shrank after it was opened makes
    the one call read short, and the plain read that follows says so."""
    from lancefile.errors import LanceIOError
    from lancefile.format.grids import Grids
    from lancefile.io import InMemorySource
    from lancefile.localfile import LocalFileSource

    B = 64
    raw, covered, blocks, seg_pos, seg_size, seg_hash, (gpos, gsize, gstep, gh), grids, s, n = _checked_file(11, B)
    file = tmp_path / "f.bin"
    file.write_bytes(raw)
    local = LocalFileSource(file)
    fused = []
    real = hashloop._k_pread_check
    monkeypatch.setattr(hashloop, "_k_pread_check", lambda *a: fused.append(1) or real(*a))

    def both(blocks=blocks, seg_hash=seg_hash, grids=grids):
        out = []
        for src in (local, InMemorySource(raw)):
            data, at, bad, seg_bad, piece_bad = hashloop.read_checked(src, s, n, 16, covered, B, seg_pos, seg_size,
                                                                      blocks, seg_hash, grids)
            for a, k, o in zip(s.tolist(), n.tolist(), at.tolist()):
                assert bytes(data[o : o + k]) == raw[a : a + k]
            out.append((sorted(bad.tolist()), seg_bad, piece_bad))
        assert out[0] == out[1]
        return out[0]

    assert both() == ([], -1, -1)
    assert len(fused) == (1 if path == "compiled" else 0)
    wrong = blocks.copy()
    wrong[[0, 5, 36]] ^= np.uint64(1)
    hit = {b for a, k in zip(s.tolist(), n.tolist()) if a < covered for b in range(a // B, -(-min(a + k, covered) // B))
           if not any(p <= a and a + k <= p + z for p, z in zip(seg_pos.tolist(), seg_size.tolist()))
           and not (gpos <= a and a + k <= gpos + gsize)}
    assert both(blocks=wrong)[0] == sorted(hit & {0, 5, 36})
    assert both(seg_hash=seg_hash ^ np.uint64(1))[1] == 0
    bad_piece = gh.copy()
    bad_piece[1] ^= np.uint32(1)  # the piece [gpos + 50, gpos + 100) the third range reads
    assert both(grids=Grids.of([(gpos, gsize, gstep, bad_piece)], "f", covered))[2] == 1
    with open(file, "r+b") as f:
        f.truncate(covered - 10)
    with pytest.raises(LanceIOError, match="short read"):
        hashloop.read_checked(local, s, n, 16, covered, B, seg_pos, seg_size, blocks, seg_hash, grids)
    local.close()


def test_packed_checked_reads_give_the_ranges_and_answers_of_read_checked(tmp_path, monkeypatch):
    """read_checked_packed (each request read into a scratch buffer, checked, its ranges copied
    out) gives read_checked's ranges back to back and its wrong blocks, segment and grid piece;
    it declines (None) where read_checked must read: from memory, ranges out of order, a
    request over its scratch, a file that shrank."""
    if not hash_loop_available():
        pytest.skip("no compiled hashing here")
    from lancefile.format.grids import Grids
    from lancefile.io import InMemorySource
    from lancefile.localfile import LocalFileSource

    B = 64
    raw, covered, blocks, seg_pos, seg_size, seg_hash, (gpos, gsize, gstep, gh), grids, s, n = _checked_file(12, B)
    order = np.argsort(s, kind="stable")
    s, n = s[order], n[order]
    file = tmp_path / "f.bin"
    file.write_bytes(raw)
    local = LocalFileSource(file)
    want = b"".join(raw[a : a + k] for a, k in zip(s.tolist(), n.tolist()))

    def both(blocks=blocks, seg_hash=seg_hash, grids=grids, gap=16):
        got = hashloop.read_checked_packed(local, s, n, gap, covered, B, seg_pos, seg_size, blocks, seg_hash, grids)
        data, bad, seg_bad, piece_bad = got
        assert data.tobytes() == want
        _, _, bad2, seg2, piece2 = hashloop.read_checked(local, s, n, gap, covered, B, seg_pos, seg_size, blocks,
                                                         seg_hash, grids)
        assert (sorted(bad.tolist()), seg_bad, piece_bad) == (sorted(bad2.tolist()), seg2, piece2)
        return sorted(bad.tolist()), seg_bad, piece_bad

    for gap in (0, 16, 4096):  # requests of one range each, some, all
        assert both(gap=gap) == ([], -1, -1)
    wrong = blocks.copy()
    wrong[[0, 5, 36]] ^= np.uint64(1)
    assert both(blocks=wrong)[0] != []
    assert both(seg_hash=seg_hash ^ np.uint64(1))[1] == 0
    bad_piece = gh.copy()
    bad_piece[1] ^= np.uint32(1)
    assert both(grids=Grids.of([(gpos, gsize, gstep, bad_piece)], "f", covered))[2] == 1
    args = (covered, B, seg_pos, seg_size, blocks, seg_hash, grids)
    assert hashloop.read_checked_packed(InMemorySource(raw), s, n, 16, *args) is None
    assert hashloop.read_checked_packed(local, s[::-1].copy(), n[::-1].copy(), 16, *args) is None
    monkeypatch.setattr(hashloop, "PACKED_REQUEST_BYTES", 32)
    assert hashloop.read_checked_packed(local, s, n, 16, *args) is None
    monkeypatch.undo()
    with open(file, "r+b") as f:
        f.truncate(covered - 10)
    assert hashloop.read_checked_packed(local, s, n, 16, *args) is None
    local.close()
