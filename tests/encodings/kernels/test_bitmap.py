"""Tests of lancefile.encodings.kernels.bitmap: LSB-first bitmaps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError
from tests.encodings.kernels.conftest import PROPS


@PROPS
@given(st.lists(st.booleans(), max_size=100), st.integers(0, 20))
def test_bitmaps(bools, offset):
    buf = k.pack_bits_lsb([False] * offset + bools)
    assert len(buf) == -(-(offset + len(bools)) // 8)
    out = k.unpack_bits_lsb(buf, len(bools), offset)
    assert out.dtype == np.bool_ and out.tolist() == bools
    assert k.unpack_bits_lsb_py(buf, len(bools), offset).tolist() == bools


def test_bitmap_bit_order_and_bounds():
    assert k.pack_bits_lsb([True, False, False, False, False, False, False, False, False, True]) == b"\x01\x02"
    with pytest.raises(CorruptFileError):
        k.unpack_bits_lsb(b"\x01", 9)
