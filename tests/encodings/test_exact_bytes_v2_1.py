"""lancefile's 2.1 and 2.2 files equal pylance 14.0.2's byte for byte where pylance is deterministic.

Each case is one table written once by ``lancefile.write_table`` and once by pylance's
``LanceFileWriter`` (one ``write_batch``) at the same version; the whole files must be
identical: pages (layouts, chunking, bit widths, dictionaries, level encodings, padding),
column metadata, schema and footer. When a case fails, the test prints each file's page
layouts so the difference is easy to see.

Not here (pylance's choice is not reproduced yet, see the issue notes): when 2.2 prefers the
RLE level frame in mini-block pages, 64-bit dictionaries of narrow integers (pylance's
2.2 dictionary-encodes int64 in [0, 1000), which bit packing makes smaller), FSST symbol
tables (trained differently), general compression of full-zip values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile

N = 3000


def _rng():
    return np.random.default_rng(0)


def _low_card_wide() -> pa.Table:
    """50 random int64 and float64 values and 20 decimals repeated: dictionaries (64-bit ones in 2.2)."""
    import decimal

    rng = _rng()
    cats = rng.integers(-2**62, 2**62, 50)
    return pa.table({"i": pa.array(cats[rng.integers(0, 50, 5000)]),
                     "f": pa.array(rng.random(50)[rng.integers(0, 50, 5000)]),
                     "d": pa.array([decimal.Decimal(int(x)) for x in rng.integers(0, 20, 5000)], pa.decimal128(10, 0))})


CASES = {
    "int32_sequence": lambda: pa.table({"x": pa.array(np.arange(N, dtype=np.int32))}),
    "int64_random_full_width": lambda: pa.table({"x": pa.array(_rng().integers(-2**62, 2**62, N))}),
    "uint8_small_page_stays_flat": lambda: pa.table({"x": pa.array(_rng().integers(0, 100, 1200).astype(np.uint8))}),
    "float64_unit": lambda: pa.table({"x": pa.array(_rng().random(N))}),
    "float32_unit": lambda: pa.table({"x": pa.array(_rng().random(N).astype(np.float32))}),
    "timestamp_us": lambda: pa.table({"x": pa.array(_rng().integers(0, 2**50, N), pa.timestamp("us"))}),
    "int32_nulls": lambda: pa.table({"x": pa.array([None if i % 3 == 0 else i for i in range(N)], pa.int32())}),
    "bool": lambda: pa.table({"b": pa.array(_rng().random(N) > 0.5)}),
    "strings_unique": lambda: pa.table({"s": pa.array([f"value-{i}" for i in range(N)])}),
    "strings_low_cardinality": lambda: pa.table({"s": pa.array([["a", "bb", "ccc"][i % 3] for i in range(N)])}),
    "large_strings_low_cardinality_nulls": lambda: pa.table(
        {"s": pa.array([["a", "bb", None][i % 3] for i in range(N)], pa.large_string())}),
    "list_int32": lambda: pa.table({"l": pa.array([[i, i + 1] for i in range(N)], pa.list_(pa.int32()))}),
    "list_string_nulls": lambda: pa.table(
        {"l": pa.array([[f"a{i}", None] if i % 5 else None for i in range(N)], pa.list_(pa.string()))}),
    "struct_null_rows": lambda: pa.table(
        {"s": pa.array([{"a": i, "b": float(i)} if i % 7 else None for i in range(N)])}),
    "low_cardinality_64_and_128_bit": lambda: _low_card_wide(),
    "bool_forced_full_zip": lambda: pa.table({"b": pa.array([True, False, None, True] * 10)}, schema=pa.schema(
        [pa.field("b", pa.bool_(), metadata={"lance-encoding:structural-encoding": "fullzip"})])),
    "sorted_runs_rle": lambda: pa.table({"y": pa.array(np.repeat(np.arange(50), 100).astype(np.int32))}),
    "fsl_float32_4": lambda: pa.table(
        {"v": pa.array([[1.0 * i, 2.0, 3.0, 4.0] for i in range(N)], pa.list_(pa.float32(), 4))}),
}


# 2.2 writes a ConstantLayout for pages whose valid values are all equal (2.1 has no such page),
# and compresses the levels of all-null pages
CONSTANT_CASES_2_2 = {
    "one_row": lambda: pa.table({"x": pa.array([5], pa.int64())}),
    "int_and_string": lambda: pa.table({"x": pa.array([5, 5, 5], pa.int32()), "s": pa.array(["a", "a", "a"])}),
    "with_nulls": lambda: pa.table({"x": pa.array([5, None, 5] * 1000, pa.int32()),
                                    "s": pa.array(["same", None, "same"] * 1000), "b": pa.array([True] * 3000)}),
    "list_of_one_item": lambda: pa.table({"l": pa.array([[7]] * 3000, pa.list_(pa.int32()))}),
    "fixed_size_binary_40": lambda: pa.table({"f": pa.array([b"x" * 40] * 3000, pa.binary(40))}),
    # all-null pages with structure: 2.2 compresses their levels (RLE or bit packing)
    "null_lists": lambda: pa.table({"l": pa.array([None] * 1500, pa.list_(pa.int32()))}),
    "null_struct_rows": lambda: pa.table({"s": pa.array([None] * 1500, pa.struct([("a", pa.int32())]))}),
    "lists_of_one_null": lambda: pa.table({"l": pa.array([[None]] * 1500, pa.list_(pa.int32()))}),
    "null_and_empty_lists": lambda: pa.table({"l": pa.array([None, []] * 750, pa.list_(pa.int32()))}),
}


def _layouts(path) -> list[str]:
    md = lancefile.LanceFileReader(str(path)).metadata()
    return [f"col {c.index}: {[b.size for b in p.buffers]} {p.encoding}" for c in md.columns for p in c.pages]


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("case", list(CASES))
def test_file_equals_pylance(case, version, tmp_path):
    _check(case, CASES[case](), version, tmp_path)


@pytest.mark.parametrize("case", list(CONSTANT_CASES_2_2))
def test_constant_pages_equal_pylance(case, tmp_path):
    _check(case, CONSTANT_CASES_2_2[case](), "2.2", tmp_path)


def _check(case, table, version, tmp_path):
    import lance.file

    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    # checksums and statistics are global buffers of lancefile's own (see tests/test_checksums.py), and
    # reference_encodings=True turns off the encodings lancefile chooses where the reference would not
    lancefile.write_table(table, ours, version=version, statistics=False, checksums=False, reference_encodings=True)
    with lance.file.LanceFileWriter(str(theirs), table.schema, version=version) as w:
        w.write_batch(table)
    a, b = ours.read_bytes(), theirs.read_bytes()
    if a != b:
        first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        pytest.fail(f"{case} at {version}: {len(a)} vs {len(b)} bytes, first difference at byte {first}\n"
                    f"lancefile: {_layouts(ours)}\npylance:   {_layouts(theirs)}")
