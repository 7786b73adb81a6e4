"""Tests of lancefile.encodings.kernels.distinct against numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from tests.encodings.kernels.conftest import PROPS


@PROPS
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.integers(0, 3))
def test_all_distinct_matches_numpy(values, repeats):
    words = np.array(values, np.uint64)
    if repeats and len(words):  # copies of some values, anywhere
        words = np.concatenate([words, words[: repeats]])[np.random.default_rng(repeats).permutation(len(words) + min(repeats, len(words)))]
    assert k.all_distinct(words) == (len(np.unique(words)) == len(words))


def test_all_distinct_compares_bits():
    # -0.0 and 0.0 differ in their bits (the strategy treats zeros as unsure itself)
    assert k.all_distinct(np.array([0.0, -0.0]))
    assert not k.all_distinct(np.array([1.5, 2.5, 1.5]))
    assert k.all_distinct(np.zeros(0, np.int64))
    assert k.all_distinct(np.arange(5000, dtype=np.int64) * (1 << 40))  # words alike in their low bits
