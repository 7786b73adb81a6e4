"""lancefile's own float choice: byte-stream-split under LZ4 (``reference_encodings=False``,
the default), read back by pylance 14.0.2 (the oracle) and lancefile, and the reference's
choice with ``reference_encodings=True``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.errors import InvalidInputError
from tests.conftest import (assert_tables_equal, page_encodings, reference_read, reference_take,
                            write_in_batches)

SPLIT = "lz4(byte_stream_split)"


def _unit(n, seed, dtype=np.float64):
    """Floats of one sign and magnitude: [0, 1) for float64 (sign and exponent bits nearly
    constant), [1, 2) for float32 (in [0, 1) the exponent changes within the high byte)."""
    v = np.random.default_rng(seed).random(n)
    return v.astype(dtype) if dtype == np.float64 else (1 + v).astype(dtype)


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unit_floats_are_split_and_read_by_pylance(version, dtype, tmp_path):
    n = 40_000
    vals = _unit(n, 1, dtype)
    nulls = np.random.default_rng(2).random(n) < 0.1
    t = pa.table({"f": pa.array(vals), "g": pa.array(vals * 7 + 3, mask=nulls),
                  "l": pa.ListArray.from_arrays(pa.array(np.arange(0, 3 * n + 1, 3, dtype=np.int32)),
                                                pa.array(_unit(3 * n, 3, dtype)))})
    p = tmp_path / "split.lance"
    write_in_batches(t, p, version=version, max_page_bytes=64 << 10, data_cache_bytes=1)
    enc = page_encodings(p)
    assert sum(SPLIT in e for e in enc) >= 3, enc  # every column, over several pages
    assert_tables_equal(reference_read(p), t, context="pylance read")
    assert_tables_equal(lancefile.read_table(p), t, context="lancefile read")
    idx = np.unique(np.random.default_rng(4).integers(0, n, 300))
    assert_tables_equal(reference_take(p, idx), t.take(idx), context="pylance take")
    assert_tables_equal(lancefile.LanceFileReader(str(p)).take_rows(idx).to_table(), t.take(idx),
                        context="lancefile take")
    got = lancefile.LanceFileReader(str(p)).read_range(n // 3, 777).to_table()
    assert_tables_equal(got, t.slice(n // 3, 777), context="lancefile read_range")


def test_reference_encodings_writes_the_reference_choice(tmp_path):
    t = pa.table({"f": pa.array(_unit(20_000, 5))})
    ours, ref = tmp_path / "ours.lance", tmp_path / "ref.lance"
    write_in_batches(t, ours, version="2.2")
    write_in_batches(t, ref, version="2.2", reference_encodings=True)
    assert all(SPLIT in e for e in page_encodings(ours))
    assert not any(SPLIT in e for e in page_encodings(ref))
    assert ours.stat().st_size < 0.93 * ref.stat().st_size  # the high byte of every value is the same
    assert_tables_equal(lancefile.read_table(ours), lancefile.read_table(ref))


def test_split_only_where_it_pays(tmp_path):
    rng = np.random.default_rng(6)
    bits = rng.integers(0, 2**63, 20_000, dtype=np.uint64) | (rng.integers(0, 2, 20_000, dtype=np.uint64) << 63)
    t = pa.table({"noise": pa.array(bits.view(np.float64)),  # every byte random: splitting saves nothing
                  "small_ints": pa.array((rng.integers(0, 100, 20_000)).astype(np.float64))})
    p = tmp_path / "noise.lance"
    write_in_batches(t, p, version="2.2")
    assert not any(SPLIT in e for e in page_encodings(p))
    assert_tables_equal(reference_read(p), t, context="pylance read")


def test_field_metadata_overrides_the_own_choice(tmp_path):
    f = pa.field("f", pa.float64(), metadata={"lance-encoding:compression": "none"})
    t = pa.table({"f": pa.array(_unit(5000, 7))}, schema=pa.schema([f]))
    p = tmp_path / "none.lance"
    write_in_batches(t, p, version="2.2")
    assert not any(SPLIT in e for e in page_encodings(p))


def test_reference_encodings_must_be_a_bool(tmp_path):
    with pytest.raises(InvalidInputError, match="reference_encodings must be True or False"):
        lancefile.LanceFileWriter(str(tmp_path / "x.lance"), reference_encodings="yes")
    assert not (tmp_path / "x.lance").exists()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32), st.none()), max_size=3000),
       st.sampled_from([np.float32, np.float64]), st.integers(0, 2**31), st.floats(0.0, 1.0))
def test_round_trip_any_floats(tmp_path_factory, values, dtype, seed, unit_share):
    """Any floats (NaN, infinities, -0.0, nulls), mixed with [0, 1) values so that some pages
    split and some do not: both readers give back exactly what was written."""
    rng = np.random.default_rng(seed)
    k = int(len(values) * unit_share)
    mixed = [float(x) if x is not None else None for x in values]
    mixed[:k] = _unit(k, seed, dtype).tolist()
    arr = pa.array(mixed, pa.float32() if dtype == np.float32 else pa.float64())
    t = pa.table({"f": arr})
    p = tmp_path_factory.mktemp("split") / "f.lance"
    write_in_batches(t, p, version="2.2", max_page_bytes=4096, data_cache_bytes=1, chunk=700)
    want = t.column("f").combine_chunks()
    for got in (lancefile.read_table(p).column("f"), reference_read(p).column("f")):
        got = got.combine_chunks()
        assert got.is_null().equals(want.is_null())
        mask = want.is_valid().to_numpy(zero_copy_only=False)
        a = got.to_numpy(zero_copy_only=False)[mask]
        b = want.to_numpy(zero_copy_only=False)[mask]
        np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))  # bit for bit
