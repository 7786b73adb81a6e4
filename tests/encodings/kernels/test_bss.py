"""Tests of lancefile.encodings.kernels.bss: byte-stream-split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from tests.encodings.kernels.conftest import PROPS, _random_uints


def test_byte_stream_split_layout():
    v = np.array([0x04030201, 0x08070605], dtype=np.uint32)
    assert k.byte_stream_split_encode(v) == bytes([1, 5, 2, 6, 3, 7, 4, 8])
    np.testing.assert_array_equal(k.byte_stream_split_decode(bytes([1, 5, 2, 6, 3, 7, 4, 8]), 32, 2), v)


@PROPS
@given(st.sampled_from([np.float32, np.float64, np.uint32, np.uint64]), st.integers(0, 1100), st.integers(0, 2**32 - 1))
def test_byte_stream_split_round_trip(dtype, n, seed):
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(seed, n, np.dtype(f"u{bits // 8}"), bits)
    buf = k.byte_stream_split_encode(v.view(dtype))
    out = k.byte_stream_split_decode(buf, bits, n)
    np.testing.assert_array_equal(out, v)
    if n < 200:
        np.testing.assert_array_equal(k.byte_stream_split_decode_py(buf, bits, n), v)


@PROPS
@given(st.sampled_from([16, 32, 64]), st.lists(st.integers(0, 70), min_size=0, max_size=6),
       st.integers(0, 2**32 - 1), st.integers(0, 9))
def test_byte_stream_split_decode_many(bits, counts, seed, gap):
    """Many chunks at once (the 8-at-a-time transposes and the tails) equal chunk by chunk."""
    w = bits // 8
    rng = np.random.default_rng(seed)
    chunks = [_random_uints(int(rng.integers(0, 2**31)), n, np.dtype(f"u{w}"), bits) for n in counts]
    parts, starts, pos = [], [], 0
    for c in chunks:  # chunks at any offset, with junk between them
        junk = rng.integers(0, 256, gap, dtype=np.uint8)
        parts += [junk, np.frombuffer(k.byte_stream_split_encode(c), np.uint8)]
        starts.append(pos + gap)
        pos += gap + c.size * w
    data = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    sizes = np.array([c.size * w for c in chunks], dtype=np.int64)
    out = k.byte_stream_split_decode_many(data, bits, np.array(starts, np.int64), sizes, np.array(counts, np.int64))
    want = np.concatenate(chunks) if chunks else np.zeros(0, np.dtype(f"u{w}"))
    np.testing.assert_array_equal(out, want)
    for c, s in zip(chunks, starts):
        np.testing.assert_array_equal(k.byte_stream_split_decode_py(data[s : s + c.size * w], bits, c.size), c)


def test_byte_stream_split_decode_many_refuses_short_chunks():
    from lancefile.errors import CorruptFileError

    data = np.zeros(64, np.uint8)
    with pytest.raises(CorruptFileError, match="chunk 1 has 15 bytes; 2 values need 16"):
        k.byte_stream_split_decode_many(data, 64, np.array([0, 16]), np.array([16, 15]), np.array([2, 2]))
    with pytest.raises(CorruptFileError, match="outside"):
        k.byte_stream_split_decode_many(data, 64, np.array([0, 56]), np.array([16, 16]), np.array([2, 2]))


@PROPS
@given(st.sampled_from([16, 32, 64]), st.integers(0, 1500), st.integers(1, 600), st.integers(0, 2**32 - 1))
def test_byte_stream_split_encode_chunks(bits, n, per, seed):
    """Chunk by chunk in one pass equals byte_stream_split_encode of each chunk."""
    w = bits // 8
    v = _random_uints(seed, n, np.dtype(f"u{w}"), bits)
    got = k.byte_stream_split_encode_chunks(v.view(np.uint8), bits, per)
    want = b"".join(k.byte_stream_split_encode(v[a : a + per]) for a in range(0, n, per))
    assert got.tobytes() == want


@PROPS
@given(st.sampled_from([32, 64]), st.lists(st.integers(0, 600), min_size=1, max_size=5), st.integers(0, 2**32 - 1),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3), st.booleans())
def test_lz4_split_chunks_fused_equal_two_passes(bits, counts, seed, flips, halves):
    """LZ4 blocks of split chunks decoded in one pass equal decompressing, then un-splitting;
    damaged blocks raise CorruptFileError (or decode as the two passes decode them). The
    same in two halves decoded at once (``halves``: every decode counts as large)."""
    from unittest import mock

    from lancefile import threadpools
    from lancefile.encodings.compression import decompress_many, lz4_frames
    from lancefile.encodings.kernels import lz4 as lz4_module
    from lancefile.errors import CorruptFileError

    with mock.patch.object(lz4_module, "PARALLEL_DECODE_BYTES", 1 if halves else 1 << 40), \
            mock.patch.object(threadpools, "_CORES", 2):
        _lz4_split_chunks(bits, counts, seed, flips, decompress_many, lz4_frames, CorruptFileError)


def _lz4_split_chunks(bits, counts, seed, flips, decompress_many, lz4_frames, CorruptFileError):

    w = bits // 8
    rng = np.random.default_rng(seed)
    vals = (1 + rng.random(sum(counts))).astype(np.float64 if bits == 64 else np.float32)
    pieces, pos = [], 0
    for n in counts:  # chunks of the given sizes, each split on its own
        pieces.append(np.frombuffer(k.byte_stream_split_encode(vals[pos : pos + n]), np.uint8))
        pos += n
    sizes = np.array([len(p) for p in pieces], np.int64)
    packed, psizes = k.lz4_compress_runs_many(np.concatenate(pieces), np.cumsum(sizes) - sizes, sizes)
    packed = packed.copy()
    for at, value in flips:
        packed[at % len(packed)] = value
    pstarts = np.cumsum(psizes) - psizes
    try:
        out, ostarts, osizes = decompress_many(packed, pstarts, psizes, "lz4")
        want = k.byte_stream_split_decode_many(out, bits, ostarts, osizes, np.array(counts)).view(np.uint8)
    except CorruptFileError:
        want = None
    try:
        got = k.lz4_bss_decode_many(packed, *lz4_frames(packed, pstarts, psizes), np.array(counts), bits)
    except CorruptFileError:
        assert flips
        return
    assert want is not None and got.tobytes() == want.tobytes()
    if not flips:
        assert got.tobytes() == vals.tobytes()


def test_lz4_split_chunks_in_halves_name_a_damaged_block_of_the_second_half(monkeypatch):
    """Decoded in two halves at once, a block of the second half that does not decode is
    named by its own number (not its place in its half), and the values of both halves land
    where they belong."""
    from lancefile import threadpools
    from lancefile.encodings.compression import lz4_frames
    from lancefile.encodings.kernels import lz4 as lz4_module
    from lancefile.errors import CorruptFileError

    monkeypatch.setattr(threadpools, "_CORES", 2)
    monkeypatch.setattr(lz4_module, "PARALLEL_DECODE_BYTES", 1)
    halves = []
    real = threadpools.run_parallel
    monkeypatch.setattr(threadpools, "run_parallel", lambda fn, items: halves.append(items) or real(fn, items))
    counts = [300, 200, 400, 100, 250, 350]
    vals = np.random.default_rng(4).random(sum(counts))
    ends = np.cumsum(counts)
    pieces = [np.frombuffer(k.byte_stream_split_encode(vals[e - n : e]), np.uint8) for n, e in zip(counts, ends)]
    sizes = np.array([len(p) for p in pieces], np.int64)
    packed, psizes = k.lz4_compress_runs_many(np.concatenate(pieces), np.cumsum(sizes) - sizes, sizes)
    pstarts = np.cumsum(psizes) - psizes
    got = k.lz4_bss_decode_many(packed, *lz4_frames(packed, pstarts, psizes), np.array(counts), 64)
    assert got.tobytes() == vals.tobytes()
    assert halves == [[(0, 3), (3, 6)]]
    frames = lz4_frames(packed, pstarts, psizes)
    bad_announced = frames[2].copy()
    bad_announced[4] += 1  # block 4 (the second half's second) no longer decodes to what it announces
    with pytest.raises(CorruptFileError, match="LZ4 buffer 4 of 6"):
        k.lz4_bss_decode_many(packed, frames[0], frames[1], bad_announced, np.array(counts), 64)
