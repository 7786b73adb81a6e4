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


@PROPS
@given(items=st.lists(st.binary(max_size=40), min_size=1, max_size=60),
       picks=st.lists(st.integers(0, 10_000), max_size=300), cut=st.integers(0, 5),
       kind=st.sampled_from(["string", "binary", "large_string", "large_binary"]))
def test_take_var_equals_arrows_take(items, picks, cut, kind):
    """Short items (two 8-byte words each, the last ones near the buffer's end byte by byte)
    and long ones, from a sliced array, equal Arrow's take for every variable-width type."""
    import pyarrow as pa

    from lancefile.encodings.arrowutil import take_array

    typ = getattr(pa, kind)()
    values = [v.decode("latin-1") for v in items] if "string" in kind else items
    arr = pa.array(values, typ)
    arr = arr.slice(min(cut, len(arr) - 1))
    idx = np.array([p % len(arr) for p in picks], np.int64)
    got = take_array(arr, idx)
    assert got.type == typ and got.equals(arr.take(pa.array(idx)))
    got.validate(full=True)


def test_take_var_refuses_indices_outside_the_items_and_overflowing_offsets():
    offsets, data = np.array([0, 2, 5]), np.frombuffer(b"abcde", np.uint8)
    assert k.take_var(offsets, data, np.array([0, 2])) is None
    assert k.take_var(offsets, data, np.array([-1])) is None
    assert k.take_var(offsets, data, np.array([1] * 3), np.int8) is not None  # 9 bytes: fits int8
    assert k.take_var(offsets, data, np.array([1] * 43), np.int8) is None  # 129 bytes do not
    with pytest.raises(Exception, match="past the 5-byte buffer"):
        k.take_var(np.array([0, 9]), data, np.array([0]))


def test_take_array_keeps_nulls_through_arrows_take():
    import pyarrow as pa

    from lancefile.encodings.arrowutil import take_array

    arr = pa.array(["a", None, "ccc"])
    assert take_array(arr, np.array([1, 2, 1])).to_pylist() == [None, "ccc", None]
    assert take_array(pa.array([1, 2, 3]), np.array([2, 2])).to_pylist() == [3, 3]


def test_scatter_pads_each_range_in_the_same_pass():
    out = np.full(12, 7, np.uint8)
    k.scatter_bytes(b"abcdef", [0, 1, 3], [1, 2, 0], out, [0, 4, 8], [4, 4, 4], 0xFE)
    assert out.tobytes() == b"a\xfe\xfe\xfe" + b"bc\xfe\xfe" + b"\xfe" * 4
    out = np.full(4, 7, np.uint8)
    k.scatter_bytes(b"ab", [0], [2], out, [1])  # no spans: only the data is written
    assert out.tobytes() == b"\x07ab\x07"
