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
