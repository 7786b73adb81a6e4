"""lancefile's own entropy-coded choices, each kept when the page comes out at most 95% of
the reference's: 2.2 dictionary pages of at most 256 items get their indices (u8, 4,096 a
chunk) and def levels under zstd; 32/64-bit integers that grow steadily (ids, timestamps)
go byte-stream-split under zstd. pylance 14.0.2 (the oracle) reads these pages; the
reference's choices stay with ``reference_encodings=True``."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from tests.conftest import (assert_tables_equal, page_encodings, reference_read, reference_take,
                            write_in_batches)

CODED = "values=zstd:1(flat(8))"
CODED_DEFS = "def=zstd:1(flat(16))"


def _lowcard(n, k, null_rate, seed):
    rng = np.random.default_rng(seed)
    words = np.array([f"value-{i:03d}" for i in range(k)], dtype=object)
    mask = rng.random(n) < null_rate if null_rate else None
    return pa.array(words[rng.integers(0, k, n)], pa.string(), mask=mask)


def _check_both_read(p, t, seed=7):
    assert_tables_equal(reference_read(p), t, context="pylance read")
    assert_tables_equal(lancefile.read_table(p), t, context="lancefile read")
    n = t.num_rows
    idx = np.unique(np.random.default_rng(seed).integers(0, n, 300))
    assert_tables_equal(reference_take(p, idx), t.take(idx), context="pylance take")
    assert_tables_equal(lancefile.LanceFileReader(str(p)).take_rows(idx).to_table(), t.take(idx),
                        context="lancefile take")
    # unsorted, duplicated rows (every column through the general take path)
    odd = np.array([n - 1, 0, n // 2, 0, 4095, 4096, n - 1], np.int64)
    assert_tables_equal(lancefile.LanceFileReader(str(p)).take_rows(odd).to_table(), t.take(odd),
                        context="lancefile take, unsorted")
    got = lancefile.LanceFileReader(str(p)).read_range(n // 3, 5000).to_table()
    assert_tables_equal(got, t.slice(n // 3, 5000), context="lancefile read_range")


def test_low_cardinality_strings_are_entropy_coded_and_read_by_pylance(tmp_path):
    n = 60_000
    t = pa.table({"status": _lowcard(n, 5, 0, 1), "city": _lowcard(n, 60, 0.01, 2)})
    p, ref = tmp_path / "coded.lance", tmp_path / "ref.lance"
    write_in_batches(t, p, version="2.2", max_page_bytes=256 << 10, data_cache_bytes=1)
    write_in_batches(t, ref, version="2.2", max_page_bytes=256 << 10, data_cache_bytes=1, reference_encodings=True)
    enc = page_encodings(p)
    assert len(enc) >= 4 and all(CODED in e for e in enc), enc  # both columns, over several pages
    assert sum(CODED_DEFS in e for e in enc) >= 2, enc  # the nullable column's levels too
    assert not any(CODED in e for e in page_encodings(ref))
    # 5 values: bit packing spends 3 bits an index, zstd's Huffman codes ~2.5
    assert os.path.getsize(p) < 0.92 * os.path.getsize(ref)
    _check_both_read(p, t)


@pytest.mark.parametrize("case", ["version 2.1", "reference", "too many items", "short page", "compression asked",
                                  "dictionary field"])
def test_entropy_coding_is_not_used(case, tmp_path):
    n = 20_000
    col = _lowcard(n, 5, 0.01, 3)
    options = {"version": "2.2"}
    if case == "version 2.1":
        options["version"] = "2.1"
    elif case == "reference":
        options["reference_encodings"] = True
    elif case == "too many items":
        col = _lowcard(n, 300, 0.01, 3)
    elif case == "short page":
        col = col.slice(0, 4000)
    elif case == "dictionary field":
        col = col.dictionary_encode()
    field = pa.field("s", col.type)
    if case == "compression asked":
        field = field.with_metadata({"lance-encoding:compression": "lz4"})
    t = pa.Table.from_arrays([col], schema=pa.schema([field]))
    p = tmp_path / "plain.lance"
    write_in_batches(t, p, **options)
    assert not any("zstd:1" in e for e in page_encodings(p)), page_encodings(p)
    # (pylance hands a dictionary field back as dictionary-typed or not; the values must agree)
    assert_tables_equal(reference_read(p), t, context="pylance read", values_only=case == "dictionary field")
    assert_tables_equal(lancefile.read_table(p), t, context="lancefile read")


def test_not_kept_when_it_does_not_pay(tmp_path):
    # 256 values evenly used: 8 bits packed, ~8 coded, so the reference's page stays
    n = 40_000
    t = pa.table({"s": _lowcard(n, 256, 0, 5)})
    p = tmp_path / "even.lance"
    write_in_batches(t, p, version="2.2")
    assert not any(CODED in e for e in page_encodings(p)), page_encodings(p)
    assert_tables_equal(lancefile.read_table(p), t)


def test_fixed_width_dictionary_and_sliced_input(tmp_path):
    # 2.2 dictionary-encodes 64-bit values of few distinct ones too; the input is a slice
    n = 50_000
    rng = np.random.default_rng(9)
    big = pa.array(rng.choice(np.array([10**12, -7, 3, 42, 99], np.int64), n + 300),
                   mask=rng.random(n + 300) < 0.02)
    t = pa.table({"v": big.slice(150, n)})
    p = tmp_path / "ints.lance"
    write_in_batches(t, p, version="2.2")
    assert any(CODED in e for e in page_encodings(p)), page_encodings(p)
    _check_both_read(p, t)


@settings(max_examples=15, deadline=None)
@given(st.integers(4096, 30_000), st.integers(1, 40), st.sampled_from([0.0, 0.01, 0.3, 1.0]), st.integers(0, 99),
       st.integers(0, 5000))
def test_round_trip(n, k, null_rate, seed, offset):
    col = _lowcard(n + offset, k, null_rate, seed).slice(offset, n)
    _round_trip(pa.table({"s": col}), 3, np.unique(np.random.default_rng(seed).integers(0, n, 50)))


def _round_trip(t: pa.Table, parts: int, idx: np.ndarray) -> None:
    """``t`` written at 2.2 in ``parts`` batches, read whole and taken at ``idx`` by both readers."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "r.lance")
        write_in_batches(t, p, version="2.2", chunk=max(t.num_rows // parts, 1))
        assert_tables_equal(lancefile.read_table(p), t, context="lancefile read")
        assert_tables_equal(reference_read(p), t, context="pylance read")
        assert_tables_equal(lancefile.LanceFileReader(p).take_rows(idx).to_table(), t.take(idx),
                            context="lancefile take")
        assert_tables_equal(reference_take(p, idx), t.take(idx), context="pylance take")


SPLIT_INTS = "values=zstd:1(byte_stream_split)"


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_steady_integers_are_split_and_coded(version, tmp_path):
    n = 70_000
    nulls = np.random.default_rng(1).random(n) < 0.05
    t = pa.table({
        "id": pa.array(np.arange(10**9, 10**9 + n, dtype=np.int64)),
        "small": pa.array(np.arange(n, dtype=np.int32) // 3, mask=nulls),
        "ts": pa.array(np.int64(1_700_000_000_000_000) + np.arange(n, dtype=np.int64) * 1_000_003,
                       pa.timestamp("us")),
        "unsigned": pa.array(np.arange(n, dtype=np.uint32) * 7),
    })
    p, ref = tmp_path / "coded.lance", tmp_path / "ref.lance"
    write_in_batches(t, p, version=version, max_page_bytes=256 << 10, data_cache_bytes=1)
    write_in_batches(t, ref, version=version, max_page_bytes=256 << 10, data_cache_bytes=1, reference_encodings=True)
    md = lancefile.LanceFileReader(str(p)).metadata()
    for c in md.columns:
        assert all(SPLIT_INTS in pg.encoding for pg in c.pages), [pg.encoding for pg in c.pages]
    assert not any(SPLIT_INTS in e for e in page_encodings(ref))
    assert os.path.getsize(p) < 0.5 * os.path.getsize(ref)
    _check_both_read(p, t)


def test_random_integers_keep_the_reference_choice(tmp_path):
    n = 50_000
    rng = np.random.default_rng(2)
    t = pa.table({"i": pa.array(rng.integers(0, 1000, n)), "j": pa.array(rng.integers(-(2**62), 2**62, n))})
    p = tmp_path / "random.lance"
    write_in_batches(t, p, version="2.2")
    assert not any("zstd" in e for e in page_encodings(p)), page_encodings(p)
    assert_tables_equal(lancefile.read_table(p), t)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 20_000), st.integers(1, 300), st.sampled_from(["int64", "int32", "uint64"]),
       st.integers(0, 99), st.integers(0, 3000))
def test_integer_round_trip(n, step, dtype, seed, offset):
    rng = np.random.default_rng(seed)
    raw = np.cumsum(rng.integers(0, step, n + offset)).astype(dtype)
    col = pa.array(raw, mask=rng.random(n + offset) < 0.02).slice(offset, n)
    _round_trip(pa.table({"v": col}), 2, np.unique(rng.integers(0, n, 40)))
