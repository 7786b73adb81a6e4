"""Tests of lancefile.encodings.kernels.bitpacked: the 2.0 sequential Bitpacked layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError
from tests.encodings.kernels.conftest import PROPS, _random_uints


@PROPS
@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]),
       st.integers(0, 64), st.integers(0, 300), st.integers(0, 2**32 - 1))
def test_bitpacked_sequential_round_trip(dtype, width, n, seed):
    bits = np.dtype(dtype).itemsize * 8
    width = min(width, bits)
    signed = np.dtype(dtype).kind == "i"
    rng = np.random.default_rng(seed)
    if signed and width:
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        v = rng.integers(lo, hi, n, endpoint=True).astype(dtype)
    else:
        v = _random_uints(seed, n, np.dtype(f"u{bits // 8}"), width).view(dtype)
    buf = k.bitpacked_sequential_encode(v, width)
    assert len(buf) == -(-n * width // 8)
    out = k.bitpacked_sequential_decode(buf, width, n, signed, dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, v)
    np.testing.assert_array_equal(k.bitpacked_sequential_decode_py(buf, width, n, signed, dtype), v)


def test_bitpacked_sequential_bytes():
    # 1, 2, 3 at 2 bits: 01 | 10 | 11 from the low bit up = 0b00111001
    assert k.bitpacked_sequential_encode(np.array([1, 2, 3], np.uint8), 2) == b"\x39"
    out = k.bitpacked_sequential_decode(b"\x39", 2, 3, True, np.int32)
    np.testing.assert_array_equal(out, [1, -2, -1])
    with pytest.raises(CorruptFileError):
        k.bitpacked_sequential_decode(b"\x39", 3, 3, False, np.uint8)
