"""The compiled hash loop (lancefile.format.hashloop) against xxhash's own calls."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash

from lancefile.format import checksums
from lancefile.format.hashloop import hash_loop_available, hash_ranges

pytestmark = pytest.mark.skipif(not hash_loop_available(), reason="xxhash's build hides XXH3_64bits")


def _expected(data: bytes, starts, sizes):
    return [xxhash.xxh3_64_intdigest(data[s : s + n]) for s, n in zip(starts, sizes)]


@pytest.mark.parametrize("kind", ["array", "bytes", "memoryview", "readonly"])
def test_every_range_hashed_as_xxhash_does(kind):
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


def test_no_ranges_and_ranges_outside_are_refused():
    data = np.arange(100, dtype=np.uint8)
    assert hash_ranges(data, [], []).tolist() == []
    assert hash_ranges(data, [100], [0]).tolist() == [xxhash.xxh3_64_intdigest(b"")]
    for starts, sizes in (([0, 95], [10, 6]), ([-1], [2]), ([5], [-1]), ([101], [0])):
        with pytest.raises(ValueError, match="outside the buffer"):
            hash_ranges(data, starts, sizes)
    with pytest.raises(ValueError, match="2 starts but 1 sizes"):
        hash_ranges(data, [0, 1], [1])


def test_checksums_take_the_loop_and_agree_with_the_python_path(monkeypatch):
    """span_hashes and the writer's block stream give the same hashes through the loop as
    through xxhash range by range (the path where the loop cannot run)."""
    rng = np.random.default_rng(2)
    raw = rng.integers(0, 256, 5 * checksums.BLOCK_BYTES + 77, dtype=np.uint8).tobytes()
    starts, sizes = np.array([0, 10, 4096, 70_000]), np.array([5, 4000, 16384, 3000])

    def stream_hashes():
        h, prev = checksums.BlockHasher(), 0
        for cut in (0, 1000, 50_000, 51_000, len(raw)):  # writes of every shape: part-blocks, many blocks
            h.update(raw[prev:cut])
            prev = cut
        return h.finish()

    calls = []
    real = checksums.hash_ranges
    monkeypatch.setattr(checksums, "hash_ranges", lambda *a: calls.append(1) or real(*a))
    fast = checksums.span_hashes(memoryview(raw), starts, sizes), stream_hashes()
    assert calls  # the loop ran
    monkeypatch.setattr(checksums, "hash_ranges", lambda *a: None)  # as where it cannot
    slow = checksums.span_hashes(memoryview(raw), starts, sizes), stream_hashes()
    assert fast[0].tolist() == slow[0].tolist() == _expected(raw, starts, sizes)
    for a, b in zip(fast[1], slow[1]):
        assert a.tolist() == b.tolist()
    blocks = [xxhash.xxh3_64_intdigest(raw[i : i + checksums.BLOCK_BYTES])
              for i in range(0, len(raw), checksums.BLOCK_BYTES)]
    assert fast[1][0].tolist() == blocks
