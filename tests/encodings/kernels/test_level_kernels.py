"""The one-pass level kernels against plain numpy on random levels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lancefile.encodings import kernels

_levels = arrays(np.uint16, st.integers(0, 300), elements=st.integers(0, 6))


@settings(max_examples=200, deadline=None)
@given(_levels, st.integers(1, 7))
def test_map_levels_is_a_checked_lookup(levels, size):
    lut = np.random.default_rng(size).integers(0, 9, size).astype(np.uint16)
    if len(levels) and levels.max() >= size:
        with pytest.raises(ValueError, match=f"definition level {int(levels[levels >= size][0])}"):
            kernels.map_levels(levels, lut)
    else:
        assert np.array_equal(kernels.map_levels(levels, lut), lut[levels])


@settings(max_examples=200, deadline=None)
@given(_levels, st.integers(0, 6), st.lists(st.integers(0, 6), min_size=1, max_size=3))
def test_inner_validity_matches_masks(defs, list_base, bases):
    slots, valids = kernels.inner_validity(defs, list_base, bases)
    d = defs[defs <= list_base]
    assert slots == len(d)
    for base, valid in zip(bases, valids):
        want = d <= base
        if want.all():
            assert valid is None
        else:
            assert np.array_equal(valid, want)
