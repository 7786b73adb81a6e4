"""Tests of lancefile.encodings.kernels.bss: byte-stream-split."""

from __future__ import annotations

import numpy as np
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
