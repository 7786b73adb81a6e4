"""Tests of lancefile.encodings.kernels.offsets: 2.0 null-adjusted end offsets to Arrow offsets."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lancefile
from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError
from tests.encodings.kernels.conftest import PROPS


def _stored(lengths, nulls):
    """Stored ends of rows of ``lengths`` (a null row: length 0, end + adjustment)."""
    ends = np.cumsum(np.where(nulls, 0, lengths)).astype(np.uint64)
    adjustment = int(ends[-1]) + 1 if len(ends) else 1
    return np.where(nulls, ends + np.uint64(adjustment), ends).astype(np.uint64), adjustment


@PROPS
@given(st.lists(st.tuples(st.integers(0, 50), st.booleans()), min_size=1, max_size=60), st.data())
def test_a_run_of_rows_gives_the_offsets_validity_and_start_of_the_plain_twin(rows, data):
    lengths, nulls = (np.array(x) for x in zip(*rows))
    raw, adjustment = _stored(lengths, nulls)
    skip = data.draw(st.booleans()) and len(raw) > 1
    # with skip, the run starts after row lo (whose end is its start); without, at the page's start
    lo = data.draw(st.integers(0, len(raw) - 2)) if skip else 0
    run = raw[lo:]
    for dtype in (np.int32, np.int64):
        offsets, valid, first = k.adjusted_offsets(run, skip, adjustment, dtype)
        want_offsets, want_valid, want_first = k.adjusted_offsets_py(run, skip, adjustment)
        assert offsets.dtype == dtype and offsets.tolist() == want_offsets.tolist()
        assert first == want_first
        assert (valid is None) == (want_valid is None)
        if valid is not None:
            assert valid.tolist() == want_valid.tolist()
    # against the rows themselves: lengths, nulls
    rows_in_run = slice(lo + int(skip), None)
    assert np.diff(offsets).tolist() == np.where(nulls, 0, lengths)[rows_in_run].tolist()
    assert (valid if valid is not None else np.ones(len(offsets) - 1, bool)).tolist() == (~nulls[rows_in_run]).tolist()


def test_decreasing_ends_are_refused_and_wide_runs_get_int64_offsets():
    with pytest.raises(CorruptFileError, match="decrease at row 1"):
        k.adjusted_offsets(np.array([3, 5, 4], np.uint64), True, 0, np.int32)
    with pytest.raises(CorruptFileError, match="decrease at row 0"):
        k.adjusted_offsets(np.array([9, 4], np.uint64), True, 0)
    with pytest.raises(CorruptFileError, match="reach past"):  # an end past int64 (forged)
        k.adjusted_offsets(np.array([1, 2**63 + 5], np.uint64), False, 0)
    offsets, valid, first = k.adjusted_offsets(np.array([2**31 + 10, 2**31 + 12, 2**32 + 1], np.uint64), False, 0,
                                               np.int32)
    assert offsets.dtype == np.int64 and offsets.tolist() == [0, 2**31 + 10, 2**31 + 12, 2**32 + 1]
    # a run that starts far into a page but spans little still fits int32
    offsets, _, first = k.adjusted_offsets(np.array([2**40, 2**40 + 3], np.uint64), True, 0, np.int32)
    assert offsets.dtype == np.int32 and offsets.tolist() == [0, 3] and first == 2**40
    # an adjustment past int64 marks no row null (as the numpy path reads it)
    offsets, valid, _ = k.adjusted_offsets(np.array([1, 2], np.uint64), False, 2**63 + 1)
    assert valid is None and offsets.tolist() == [0, 1, 2]


@pytest.mark.parametrize("version", ["2.0"])
def test_2_0_scans_of_strings_and_lists_in_chunks_match_what_was_written(tmp_path, version):
    """Chunks start inside pages (the row before a chunk gives its first offset), with nulls, empty and long values."""
    rng = np.random.default_rng(5)
    n = 20_000
    strings = [None if i % 11 == 3 else "x" * int(rng.integers(0, 40)) for i in range(n)]
    lists = [None if i % 13 == 5 else list(range(i % 6)) for i in range(n)]
    t = pa.table({"s": pa.array(strings), "ls": pa.array(lists, pa.list_(pa.int32())),
                  "big": pa.array(strings, pa.large_string()), "bl": pa.array(lists, pa.large_list(pa.int32()))})
    path = tmp_path / "f.lance"
    lancefile.write_table(t, path, version=version)
    reader = lancefile.LanceFileReader(path)
    for bs in (1, 999, 4096, n):
        got = pa.Table.from_batches(list(reader.read_all(batch_size=bs)), schema=t.schema)
        assert got.equals(t), bs
    for start, count in ((0, 1), (1, 5), (7_777, 3_333), (n - 1, 1)):
        assert reader.read_range(start, count).to_table().equals(t.slice(start, count))
