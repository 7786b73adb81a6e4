"""Tests of lancefile.encodings.kernels.gather: byte-range gathers and dictionary page indices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from tests.encodings.kernels.conftest import PROPS


def test_page_indices_shifts_each_page():
    out = k.page_indices(np.array([1, 0, 2], np.uint8), [0, 1, 3], np.array([0, 4]), np.array([4, 3]))
    assert out.dtype == np.int64 and out.tolist() == [1, 4, 6]


def test_page_indices_empty_pages_and_no_values():
    # pages 1 and 2 hold no values (page 2's dictionary is empty)
    out = k.page_indices(np.array([3, 1], np.uint32), [0, 1, 1, 1, 2], np.array([0, 5, 7, 7]), np.array([5, 2, 0, 9]))
    assert out.tolist() == [3, 8]
    assert k.page_indices(np.zeros(0, np.uint16), [0, 0], np.array([0]), np.array([0])).size == 0


@pytest.mark.parametrize("bad", [np.array([0, 3], np.uint16), np.array([2, 5], np.uint16)])
def test_page_indices_out_of_range_is_none(bad):
    # 3 is past page 0's 3 items (a valid index of the array laid end to end: still refused)
    assert k.page_indices(bad, [0, 1, 2], np.array([0, 3]), np.array([3, 3])) is None


def test_page_indices_wide_words_are_not_negative():
    big = np.array([np.iinfo(np.uint64).max], np.uint64)  # -1 as int64
    assert k.page_indices(big, [0, 1], np.array([0]), np.array([10])) is None


def test_page_indices_cuts_must_cover_the_indices():
    with pytest.raises(ValueError):
        k.page_indices(np.zeros(3, np.uint8), [0, 2], np.array([0]), np.array([4]))


@PROPS
@given(st.lists(st.integers(0, 40), min_size=1, max_size=12), st.integers(0, 2**32 - 1))
def test_page_indices_match_numpy(sizes, seed):
    rng = np.random.default_rng(seed)
    sizes = np.array(sizes, np.int64)
    firsts = np.cumsum(sizes) - sizes
    counts = np.where(sizes > 0, rng.integers(0, 30, len(sizes)), 0)
    idx = np.concatenate([rng.integers(0, max(s, 1), c) for s, c in zip(sizes, counts)]).astype(np.uint32)
    cuts = np.concatenate([[0], np.cumsum(counts)])
    want = idx.astype(np.int64) + np.repeat(firsts, counts)
    np.testing.assert_array_equal(k.page_indices(idx, cuts, firsts, sizes), want)
