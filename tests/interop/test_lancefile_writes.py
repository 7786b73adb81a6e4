"""lancefile writes version 2.0; pylance (the oracle) and lancefile read it back.

pylance must read back exactly ``entry.expected_readback(table)`` (by value for dictionary
entries, whose representation the reference itself changes), schema and field metadata included.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from tests import datagen
from tests.conftest import assert_tables_equal, reference_read, reference_reader, reference_write

N_ROWS = 300
SEED = 11
BATCH_ROWS = 37


def lancefile_write(data, path, *, schema=None, **options) -> Path:
    """Write a table or a list of batches with lancefile as version 2.0 (one write_batch per batch)."""
    if isinstance(data, pa.Table):
        schema = schema or data.schema
        batches = data.to_batches()
    else:
        batches = list(data)
        schema = schema or batches[0].schema
    options.setdefault("version", "2.0")
    with lancefile.LanceFileWriter(str(path), schema, **options) as w:
        for b in batches:
            w.write_batch(b)
    return Path(path)


def lancefile_read(path, columns=None, batch_size=1024) -> pa.Table:
    return lancefile.LanceFileReader(str(path), columns=columns).read_all(batch_size=batch_size).to_table()


def _dir_is_empty(path: Path) -> bool:
    return not any(path.parent.iterdir())


# --------------------------------------------------------------------------------------------
# Every catalogue entry
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", datagen.catalogue_for("2.0"))
def test_catalogue_one_batch(name, lance_path):
    e = datagen.CATALOGUE[name]
    t = e.make(N_ROWS, SEED)
    lancefile_write(t, lance_path, **e.write_options)
    values_only = e.compare == "values"
    got = reference_read(lance_path, batch_size=100_000)
    assert_tables_equal(got, e.expected_readback(t), values_only=values_only, check_metadata=True,
                        context="pylance read of a lancefile file")
    assert_tables_equal(lancefile_read(lance_path), e.expected_readback(t), values_only=values_only,
                        check_metadata=True, context="lancefile read of its own file")


@pytest.mark.parametrize("name", datagen.catalogue_for("2.0"))
def test_catalogue_many_batches_small_pages(name, lance_path):
    """Batches of 37 rows, max_page_bytes=4096: many pages per column."""
    e = datagen.CATALOGUE[name]
    t = e.make(N_ROWS, SEED + 1)
    lancefile_write(t.to_batches(max_chunksize=BATCH_ROWS), lance_path, schema=t.schema,
                    **{**e.write_options, "max_page_bytes": 4096})
    got = reference_read(lance_path, batch_size=64)
    exp = datagen.expected_readback(t)
    assert_tables_equal(got, exp, values_only=True, check_metadata=True, context="pylance read")
    assert_tables_equal(lancefile_read(lance_path, batch_size=64), exp, values_only=True, check_metadata=True,
                        context="lancefile read")
    # pylance's ranges and takes over the page boundaries
    ref = reference_reader(lance_path)
    for start, length in [(30, 15), (N_ROWS // 2 - 40, 80), (N_ROWS - 5, 5)]:
        assert_tables_equal(ref.read_range(start, length).to_table(), exp.slice(start, length), values_only=True,
                            context=f"pylance read_range({start}, {length})")
    idx = [0, 36, 37, 38, 150, N_ROWS - 1]
    assert_tables_equal(ref.take_rows(idx).to_table(), exp.take(idx), values_only=True,
                        context=f"pylance take_rows({idx})")


@pytest.mark.parametrize("name", datagen.catalogue_for("2.0"))
def test_catalogue_column_count_matches_reference(name, tmp_path):
    """Same number of 2.0 columns as the reference (struct headers and list offsets included)."""
    e = datagen.CATALOGUE[name]
    t = e.make(50, SEED)
    ours = lancefile_write(t, tmp_path / "ours.lance", **e.write_options)
    theirs = reference_write(t, tmp_path / "theirs.lance", **e.write_options)
    assert len(reference_reader(ours).metadata().columns) == len(reference_reader(theirs).metadata().columns)


_ENCODING_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]+)\s*[({]")
_NOT_ENCODINGS = {"Some", "ArrayEncoding", "Buffer"}


def _encoding_names(debug: str) -> tuple[str, ...]:
    names = [n for n in _ENCODING_NAME.findall(debug) if n not in _NOT_ENCODINGS]
    return tuple(n for i, n in enumerate(names) if i == 0 or names[i - 1] != n)  # "Flat(Flat {" -> Flat


def _encoding_trees(path) -> list[list[tuple[str, ...]]]:
    """Per column, per page: the encoding message names in pylance's debug print, depth first."""
    return [[_encoding_names(p.encoding) for p in c.pages] for c in reference_reader(path).metadata().columns]


@pytest.mark.parametrize("name", datagen.catalogue_for("2.0"))
def test_catalogue_encodings_match_reference(name, tmp_path):
    """Same encodings as the reference chooses, page by page (one write_batch, one page per column)."""
    e = datagen.CATALOGUE[name]
    t = e.make(N_ROWS, SEED)
    ours = _encoding_trees(lancefile_write(t, tmp_path / "ours.lance", **e.write_options))
    theirs = _encoding_trees(reference_write(t, tmp_path / "theirs.lance", **e.write_options))
    if len(ours) != len(theirs):
        pytest.fail(f"{len(ours)} columns, the reference writes {len(theirs)}")
    diffs = [f"column {i}:\n  lancefile {o}\n  reference {r}" for i, (o, r) in enumerate(zip(ours, theirs)) if o != r]
    if diffs:
        pytest.fail("encodings differ from the reference's:\n" + "\n".join(diffs), pytrace=False)


# --------------------------------------------------------------------------------------------
# Edge cases
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(datagen.EDGE_CASES))
def test_edge_case(name, lance_path):
    ec = datagen.EDGE_CASES[name]
    batches = ec.batches(SEED)
    expected = datagen.expected_readback(pa.Table.from_batches(batches, schema=batches[0].schema))
    lancefile_write(batches, lance_path, schema=batches[0].schema, **ec.write_options)
    values_only = ec.compare == "values"
    assert_tables_equal(reference_read(lance_path), expected, values_only=values_only, check_metadata=True,
                        context=f"pylance read of edge case {name}")
    assert_tables_equal(lancefile_read(lance_path), expected, values_only=values_only, check_metadata=True,
                        context=f"lancefile read of edge case {name}")


def test_multi_page_single_batch(lance_path):
    """One big batch with max_page_bytes=64 KiB: several pages per big column, read back equal."""
    t = datagen.EDGE_CASES["larger_than_page"].table(SEED).combine_chunks()
    lancefile_write(t, lance_path, max_page_bytes=datagen.BIG_PAGE_BYTES)
    ref = reference_reader(lance_path)
    pages = [len(c.pages) for c in ref.metadata().columns]
    # column 0 is i64: 20,000 x 8 bytes = 160 KB, so at least 3 pages of <= 64 KiB
    assert pages[0] >= 3, pages
    # pylance's own pages overshoot for strings (~78 KB) and it never splits list offsets (one 160 KB
    # page), so only the plain int64 column is held to the limit
    sizes = [sum(b.size for b in p.buffers) for p in ref.metadata().columns[0].pages]
    assert max(sizes) <= datagen.BIG_PAGE_BYTES, sizes
    assert_tables_equal(ref.read_all().to_table(), t, check_metadata=True, context="pylance read")
    assert_tables_equal(lancefile_read(lance_path), t, check_metadata=True, context="lancefile read")
    for start, length in [(8000, 500), (16300, 100), (0, 20000)]:
        assert_tables_equal(ref.read_range(start, length).to_table(), t.slice(start, length),
                            context=f"pylance read_range({start}, {length})")
        assert_tables_equal(lancefile.LanceFileReader(str(lance_path)).read_range(start, length).to_table(),
                            t.slice(start, length), context=f"lancefile read_range({start}, {length})")


def test_zero_rows_no_batches(lance_path):
    schema = datagen.CATALOGUE["mixed"].schema
    with lancefile.LanceFileWriter(str(lance_path), schema, version="2.0"):
        pass
    got = reference_read(lance_path)
    assert got.num_rows == 0
    assert got.schema.equals(schema)
    assert lancefile.LanceFileReader(str(lance_path)).num_rows() == 0
    assert lancefile_read(lance_path).schema.equals(schema)


def test_schema_inferred_from_first_batch(lance_path):
    t = datagen.CATALOGUE["struct_mixed"].make(N_ROWS, SEED)
    with lancefile.LanceFileWriter(str(lance_path), version="2.0") as w:
        for b in t.to_batches(max_chunksize=100):
            w.write_batch(b)
    assert_tables_equal(reference_read(lance_path), t, check_metadata=True)


def test_write_batch_accepts_table(lance_path):
    t = datagen.CATALOGUE["list_struct"].make(N_ROWS, SEED)
    with lancefile.LanceFileWriter(str(lance_path), t.schema, version="2.0") as w:
        w.write_batch(t.slice(0, 100))
        w.write_batch(t.slice(100))
    assert_tables_equal(reference_read(lance_path), t, check_metadata=True)


def test_write_table_helper(lance_path):
    t = datagen.CATALOGUE["mixed"].make(N_ROWS, SEED)
    lancefile.write_table(t, str(lance_path), version="2.0")
    assert_tables_equal(reference_read(lance_path), t, values_only=True, check_metadata=True)
    assert_tables_equal(lancefile.read_table(str(lance_path)), t, values_only=True, check_metadata=True)


# --------------------------------------------------------------------------------------------
# Container features: global buffers, schema metadata, footer
# --------------------------------------------------------------------------------------------


def test_global_buffers(lance_path):
    buffers = [b"hello", b"", bytes(range(256)) * 41, b"\x00" * 63, b"tail"]
    t = datagen.CATALOGUE["int32"].make(N_ROWS, SEED)
    # statistics and checksums would each be one more global buffer
    with lancefile.LanceFileWriter(str(lance_path), t.schema, version="2.0", statistics=False, checksums=False) as w:
        indices = [w.add_global_buffer(b) for b in buffers[:3]]
        w.write_batch(t)
        indices += [w.add_global_buffer(b) for b in buffers[3:]]
    assert indices == [1, 2, 3, 4, 5]  # buffer 0 is the schema
    ref = reference_reader(lance_path)
    assert len(ref.metadata().global_buffers) == 6
    ours = lancefile.LanceFileReader(str(lance_path))
    for i, data in zip(indices, buffers):
        assert ref.read_global_buffer(i) == data, f"pylance global buffer {i}"
        assert ours.read_global_buffer(i) == data, f"lancefile global buffer {i}"
    assert_tables_equal(ref.read_all().to_table(), t)
    with pytest.raises(lancefile.LanceError):
        ours.read_global_buffer(6)


def test_global_buffer_zero_is_the_schema_for_pylance_files(tmp_path):
    """Global buffers written by pylance read back through lancefile."""
    t = datagen.CATALOGUE["string"].make(N_ROWS, SEED)
    path = reference_write(t, tmp_path / "ref.lance", global_buffers=[b"abc", b"x" * 1000])
    r = lancefile.LanceFileReader(str(path))
    assert r.read_global_buffer(1) == b"abc"
    assert r.read_global_buffer(2) == b"x" * 1000


def test_schema_metadata(lance_path):
    t = datagen.CATALOGUE["struct"].make(N_ROWS, SEED)
    t = t.replace_schema_metadata({"from_table": "yes"})
    with lancefile.LanceFileWriter(str(lance_path), t.schema, version="2.0") as w:
        w.add_schema_metadata("k1", "v1")
        w.write_batch(t)
        w.add_schema_metadata("unicode-é", "値")
    expected = {b"from_table": b"yes", b"k1": b"v1", "unicode-é".encode(): "値".encode()}
    ref = reference_reader(lance_path)
    assert ref.metadata().schema.metadata == expected
    assert ref.read_all().to_table().schema.metadata == expected
    assert lancefile.LanceFileReader(str(lance_path)).schema.metadata == expected


def test_field_metadata_preserved(lance_path):
    schema = pa.schema([pa.field("a", pa.int32(), metadata={"unit": "m", "x": ""}),
                        pa.field("s", pa.struct([pa.field("c", pa.string(), metadata={"k": "v"})]))])
    t = pa.Table.from_pylist([{"a": 1, "s": {"c": "x"}}, {"a": None, "s": {"c": None}}], schema=schema)
    lancefile_write(t, lance_path)
    got = reference_read(lance_path)
    assert_tables_equal(got, t, check_metadata=True)
    assert got.schema.field("s").type.field("c").metadata == {b"k": b"v"}


@pytest.mark.parametrize("name", ["int32", "mixed", "edge_zero_rows"])
def test_footer_version_is_0_3(name, lance_path):
    if name.startswith("edge_"):
        bs = datagen.EDGE_CASES[name[5:]].batches(SEED)
        lancefile_write(bs, lance_path, schema=bs[0].schema)
    else:
        lancefile_write(datagen.CATALOGUE[name].make(N_ROWS, SEED), lance_path)
    raw = lance_path.read_bytes()
    assert raw[-4:] == b"LANC"
    major, minor = struct.unpack("<HH", raw[-8:-4])
    assert (major, minor) == (0, 3)
    md = reference_reader(lance_path).metadata()
    assert (md.major_version, md.minor_version) == (0, 3)


# --------------------------------------------------------------------------------------------
# Failure and abort: nothing is left at the destination
# --------------------------------------------------------------------------------------------


class _Boom(Exception):
    pass


@pytest.mark.parametrize("after_batches", [0, 1, 3])
def test_exception_inside_with_leaves_no_file(after_batches, lance_path):
    t = datagen.CATALOGUE["mixed"].make(N_ROWS, SEED)
    with pytest.raises(_Boom):
        with lancefile.LanceFileWriter(str(lance_path), t.schema, version="2.0") as w:
            for b in t.to_batches(max_chunksize=50)[:after_batches]:
                w.write_batch(b)
            w.add_global_buffer(b"x")
            raise _Boom()
    assert not lance_path.exists()
    assert _dir_is_empty(lance_path), list(lance_path.parent.iterdir())


def test_abort_does_not_replace_existing_file(lance_path):
    t = datagen.CATALOGUE["int64"].make(N_ROWS, SEED)
    lancefile_write(t, lance_path)
    before = lance_path.read_bytes()
    with pytest.raises(_Boom):
        with lancefile.LanceFileWriter(str(lance_path), t.schema, version="2.0") as w:
            w.write_batch(t.slice(0, 10))
            raise _Boom()
    assert lance_path.read_bytes() == before


_BASE_SCHEMA = pa.schema([pa.field("x", pa.int64()), pa.field("s", pa.string())])
_MISMATCHES = {
    "missing_column": pa.record_batch({"x": pa.array([1, 2], pa.int64())}),
    "wrong_type": pa.record_batch({"x": pa.array([1, 2], pa.int32()), "s": pa.array(["a", "b"])}),
    "renamed_column": pa.record_batch({"x": pa.array([1, 2], pa.int64()), "t": pa.array(["a", "b"])}),
    "nested_type_differs": pa.record_batch({"x": pa.array([1], pa.int64()), "s": pa.array([["a"]])}),
}


@pytest.mark.parametrize("kind", list(_MISMATCHES))
@pytest.mark.parametrize("first", [True, False], ids=["first_batch", "after_good_batch"])
def test_mismatching_batch_raises_and_leaves_no_file(kind, first, lance_path):
    good = pa.record_batch({"x": pa.array([1, 2], pa.int64()), "s": pa.array(["a", None])})
    with pytest.raises(lancefile.LanceError) as info:
        with lancefile.LanceFileWriter(str(lance_path), _BASE_SCHEMA, version="2.0") as w:
            if not first:
                w.write_batch(good)
            w.write_batch(_MISMATCHES[kind])
    assert not lance_path.exists()
    assert _dir_is_empty(lance_path)
    assert str(info.value), "empty error message"


@pytest.mark.parametrize("name", list(datagen.REFUSED))
def test_refused_types_raise_and_leave_no_file(name, lance_path):
    """Tables pylance cannot round-trip as 2.0: lancefile refuses them with a LanceError."""
    r = datagen.REFUSED[name]
    t = r.make(20, SEED)
    # a distinctive column name, so that "the message names the column" means something
    t = t.rename_columns([f"refused_{i}" for i in range(t.num_columns)])
    schema = r.writer_schema or t.schema
    schema = pa.schema([f.with_name(f"refused_{i}") for i, f in enumerate(schema)])
    with pytest.raises(lancefile.LanceError) as info:
        with lancefile.LanceFileWriter(str(lance_path), schema, version="2.0") as w:
            w.write_batch(t)
    assert not lance_path.exists()
    assert _dir_is_empty(lance_path)
    field_name = schema.names[0]
    assert field_name in str(info.value), f"message does not name the field {field_name!r}: {info.value}"


def test_refused_struct_nulls_message(lance_path):
    t = datagen.REFUSED["struct_null_rows"].make(50, SEED)
    with pytest.raises(lancefile.LanceError, match=r"(?i)struct") as info:
        lancefile.write_table(t, str(lance_path), version="2.0")
    assert "st" in str(info.value)
    assert not lance_path.exists()


def test_close_twice_and_write_after_close(lance_path):
    t = datagen.CATALOGUE["int8"].make(10, SEED)
    w = lancefile.LanceFileWriter(str(lance_path), t.schema, version="2.0")
    w.write_batch(t)
    w.close()
    with pytest.raises(lancefile.LanceError):
        w.write_batch(t)
    assert_tables_equal(reference_read(lance_path), t)


# --------------------------------------------------------------------------------------------
# Sliced inputs (every array with an offset)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mixed", "list_shapes", "struct_list_struct", "fsl_f32_row_item_nulls",
                                  "dict_int16_string", "bool", "low_card_string_nulls", "blob", "packed_struct",
                                  "decimal256_76_20", "list_garbage_under_nulls"])
@pytest.mark.parametrize("offset", [1, 13, 64])
def test_sliced_input(name, offset, lance_path):
    e = datagen.CATALOGUE[name]
    t = e.make(N_ROWS, SEED).slice(offset, N_ROWS - offset - 3)
    lancefile_write(t, lance_path, **e.write_options)
    exp = datagen.expected_readback(t)
    assert_tables_equal(reference_read(lance_path), exp, values_only=True, check_metadata=True,
                        context=f"pylance read of {name}.slice({offset})")
    assert_tables_equal(lancefile_read(lance_path), exp, values_only=True, check_metadata=True,
                        context=f"lancefile read of {name}.slice({offset})")


def test_write_large_uncompressible_values_round_trip(lance_path):
    rng = np.random.default_rng(SEED)
    t = pa.table({"b": pa.array([rng.bytes(int(k)) for k in rng.integers(0, 70_000, 40)], pa.large_binary())})
    lancefile_write(t, lance_path, max_page_bytes=64 * 1024)
    assert_tables_equal(reference_read(lance_path), t)


def test_no_temporary_files_left_after_success(lance_path):
    lancefile_write(datagen.CATALOGUE["string"].make(N_ROWS, SEED), lance_path)
    assert sorted(os.listdir(lance_path.parent)) == [lance_path.name]


@pytest.mark.parametrize("view, plain, values", [
    (pa.string_view(), pa.string(), ["abc", None, "", "a longer string than twelve bytes"]),
    (pa.binary_view(), pa.binary(), [b"abc", None, b"", b"\x00" * 40]),
])
def test_view_types_stored_as_plain(tmp_path, view, plain, values):
    """Views are stored as their plain type (as the reference does from 2.1 on; its 2.0 refuses them)."""
    import lance.file

    path = tmp_path / "v.lance"
    with pytest.warns(lancefile.StorageTypeWarning, match=f"stored as {plain}"):  # said, not silent
        lancefile.write_table(pa.table({"v": pa.array(values, view)}), path)
    expected = pa.table({"v": pa.array(values, plain)})
    assert lance.file.LanceFileReader(str(path)).read_all().to_table().equals(expected)
    assert lancefile.read_table(path).equals(expected)
