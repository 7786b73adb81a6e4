"""Tests of lancefile.encodings.kernels.rle: runs, the 2.2 block frame, pylance pages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError
from tests.encodings.kernels.conftest import PROPS, _single_page, _write


def test_rle_encode_splits_long_runs():
    v = np.array([7] * 600 + [8] + [7] * 255, dtype=np.int32)
    values, runs = k.rle_encode(v)
    assert values.tolist() == [7, 7, 7, 8, 7]
    assert runs.tolist() == [255, 255, 90, 1, 255] and runs.dtype == np.uint8
    np.testing.assert_array_equal(k.rle_expand(values, runs), v)


@PROPS
@given(st.lists(st.integers(0, 3), max_size=2000), st.sampled_from([np.uint8, np.int16, np.int64, np.float32]))
def test_rle_round_trip(items, dtype):
    v = np.repeat(np.array(items, dtype=dtype), 97)[: len(items) * 97]
    values, runs = k.rle_encode(v)
    assert runs.size == 0 or runs.min() >= 1
    np.testing.assert_array_equal(k.rle_expand(values, runs), v)
    np.testing.assert_array_equal(k.rle_expand_py(values, runs), v)


def test_rle_expand_checks():
    np.testing.assert_array_equal(k.rle_expand(np.array([1, 2]), np.array([3, 3], np.uint8), 4), [1, 1, 1, 2])
    with pytest.raises(CorruptFileError):
        k.rle_expand(np.array([1, 2]), np.array([3, 3], np.uint8), 7)
    with pytest.raises(CorruptFileError):
        k.rle_expand(np.array([1, 2]), np.array([3], np.uint8))


def test_rle_block_frame_from_notes():
    frame = bytes.fromhex("0a00000000000000" + "0000" * 5 + "ffffffff04")
    out = k.rle_block_decode(frame, 16, 1024)
    assert out.dtype == np.uint16 and out.size == 1024 and not out.any()
    assert k.rle_block_encode(np.zeros(1024, np.uint16)) == frame
    with pytest.raises(CorruptFileError):
        k.rle_block_decode(frame[:-1], 16, 1024)
    with pytest.raises(CorruptFileError):
        k.rle_block_decode(frame[:5], 16, 1024)


# --------------------------------------------------------------------------------------
# Pages written by pylance 14.0.2
# --------------------------------------------------------------------------------------


def test_oracle_rle_values(oracle_dir):
    import pyarrow as pa

    v = np.repeat(np.arange(100, dtype=np.int32), 1000)
    path = _write(oracle_dir / "rle.lance", pa.table({"r": v}))
    layout, chunks = _single_page(path)
    assert layout.value_compression.WhichOneof("compression") == "rle"
    out, start = [], 0
    for nvals, _nlev, _rep, _def, (values_buf, runs_buf) in chunks:
        values = np.frombuffer(values_buf, "<i4")
        runs = np.frombuffer(runs_buf, np.uint8)
        out.append(k.rle_expand(values, runs, nvals))
        ev, er = k.rle_encode(v[start : start + nvals])
        assert ev.tobytes() == values_buf and er.tobytes() == runs_buf
        start += nvals
    np.testing.assert_array_equal(np.concatenate(out), v)


def test_oracle_rle_level_frame_2_2(oracle_dir):
    import pyarrow as pa

    n = 200_000
    v = np.arange(n, dtype=np.int32)
    nulls = (np.arange(n) // 5000) % 2 == 1
    path = _write(oracle_dir / "rle22.lance", pa.table({"x": pa.array(v, mask=nulls)}), "2.2")
    layout, chunks = _single_page(path)
    assert layout.has_large_chunk and layout.def_compression.WhichOneof("compression") == "rle"
    defs = []
    for _nvals, nlev, _rep, def_buf, _bufs in chunks:
        d = k.rle_block_decode(def_buf, 16, nlev)
        assert k.rle_block_encode(d) == def_buf
        defs.append(d)
    np.testing.assert_array_equal(np.concatenate(defs) == 1, nulls)
