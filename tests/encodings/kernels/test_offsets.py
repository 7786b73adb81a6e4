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


@pytest.mark.parametrize("page_bytes", [None, 4096])
def test_2_0_scans_of_strings_and_lists_in_chunks_match_what_was_written(tmp_path, page_bytes):
    """Chunks start inside pages (the row before a chunk gives its first offset) and run across
    them (small pages), with nulls, empty and long values."""
    rng = np.random.default_rng(5)
    n = 20_000
    strings = [None if i % 11 == 3 else "x" * int(rng.integers(0, 40)) for i in range(n)]
    lists = [None if i % 13 == 5 else list(range(i % 6)) for i in range(n)]
    t = pa.table({"s": pa.array(strings), "ls": pa.array(lists, pa.list_(pa.int32())),
                  "big": pa.array(strings, pa.large_string()), "bl": pa.array(lists, pa.large_list(pa.int32()))})
    path = tmp_path / "f.lance"
    lancefile.write_table(t, path, version="2.0", **({"max_page_bytes": page_bytes} if page_bytes else {}))
    reader = lancefile.LanceFileReader(path)
    if page_bytes:
        assert len(reader.metadata().columns[1].pages) > 10  # the list column's offsets pages
    for bs in (1, 999, 4096, n):
        got = pa.Table.from_batches(list(reader.read_all(batch_size=bs)), schema=t.schema)
        assert got.equals(t), bs
    for start, count in ((0, 1), (1, 5), (7_777, 3_333), (n - 1, 1)):
        assert reader.read_range(start, count).to_table().equals(t.slice(start, count))


@PROPS
@given(st.lists(st.text(max_size=6), min_size=64, max_size=120), st.integers(0, 10), st.booleans())
def test_string_values_are_checked_in_full_by_one_pass_when_ascii(values, cut, forge):
    from lancefile.encodings.arrowutil import validate_values

    arr = pa.array(values, pa.string()).slice(cut)
    ascii_only = all(v.isascii() for v in values)
    off = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(arr.buffers()[2], np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    assert k.ascii_strings(off, data) == ascii_only
    assert validate_values(arr, "f") is arr  # valid either way (non-ASCII: Arrow's own full check)
    if forge and len(arr) > 2 and off[2] > off[0]:  # offsets that go back: refused, ASCII or not
        bad = off.copy()
        bad[1] = bad[2] + 1
        forged = pa.Array.from_buffers(pa.string(), len(arr), [None, pa.py_buffer(bad), arr.buffers()[2]])
        assert not k.ascii_strings(bad, data)
        with pytest.raises(CorruptFileError, match="not valid Arrow data"):
            validate_values(forged, "f")


def test_bytes_past_ascii_are_left_to_arrows_utf8_check():
    from lancefile.encodings.arrowutil import validate_values

    good = pa.array(["abc"] * 70 + ["é"])
    assert validate_values(good, "f") is good
    raw = bytearray(good.buffers()[2].to_pybytes())
    raw[-2] = 0xFF  # the first byte of "é": invalid UTF-8
    bad = pa.Array.from_buffers(pa.string(), len(good), [None, good.buffers()[1], pa.py_buffer(bytes(raw))])
    with pytest.raises(CorruptFileError, match="UTF8"):
        validate_values(bad, "f")
    assert not k.ascii_strings(np.array([0, 2], np.int32), np.frombuffer(b"a\x80", np.uint8))
    assert not k.ascii_strings(np.array([0, 3], np.int32), np.frombuffer(b"ab", np.uint8))  # past the data
    assert not k.ascii_strings(np.array([-1, 1], np.int64), np.frombuffer(b"ab", np.uint8))
