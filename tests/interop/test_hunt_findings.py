"""Disagreements with pylance 14.0.2 found by hunting unusual but valid files (2026-11-30).

Each test names the finding it pins. pylance writes (or reads) the file; lancefile must read
what pylance reads, and what lancefile writes pylance must read, or lancefile must refuse to
write it with a clear error before any byte is written.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancefile
from tests.conftest import assert_tables_equal, reference_read, reference_write

pytestmark = pytest.mark.interop

_NONE_COLUMNS = {
    "string": pa.array(["a", "bb", None, "ccc", ""], pa.string()),
    "binary": pa.array([b"a", None, b"xyz", b"", b"\x00"], pa.binary()),
    "large_string": pa.array(["a", None, "", "dd", "e"], pa.large_string()),
    "list_of_strings": pa.array([["a"], None, [], ["b", None], ["c"]], pa.list_(pa.string())),
    "int64": pa.array([1, 2, None, 4, 5], pa.int64()),
}


def _with_compression_none(name: str) -> pa.Table:
    field = pa.field("c", _NONE_COLUMNS[name].type, metadata={"lance-encoding:compression": "none"})
    return pa.Table.from_arrays([_NONE_COLUMNS[name]], schema=pa.schema([field]))


@pytest.mark.parametrize("name", sorted(_NONE_COLUMNS))
def test_compression_none_in_2_0_files(name, tmp_path):
    """pylance's 2.0 writer names the scheme ``none`` on a field asking for no compression;
    lancefile refused such pages ("unsupported buffer compression scheme 'none'")."""
    table = _with_compression_none(name)
    path = reference_write(table, tmp_path / "pl.lance", "2.0")
    assert_tables_equal(lancefile.read_table(path), reference_read(path))
    assert_tables_equal(lancefile.read_table(path), table)
    ours = tmp_path / "lf.lance"
    lancefile.write_table(table, ours, version="2.0")
    assert_tables_equal(reference_read(ours), table)


_FSB0 = pa.binary(0)
_EMPTY_BINARY = {
    "with_nulls": pa.array([b"", None, b"", b""], _FSB0),
    "no_nulls": pa.array([b""] * 4, _FSB0),
    "in_a_list": pa.array([[b""], None, [], [b"", None]], pa.list_(_FSB0)),
    "in_a_struct": pa.array([{"a": b"", "b": 1}, None, {"a": None, "b": 2}, {"a": b"", "b": 3}],
                            pa.struct([("a", _FSB0), ("b", pa.int32())])),
}


def _empty_binary_table(name: str) -> pa.Table:
    return pa.table({"c": _EMPTY_BINARY[name], "i": pa.array(range(4), pa.int32())})


@pytest.mark.parametrize("name", sorted(_EMPTY_BINARY))
def test_fixed_size_binary_0_at_2_2(name, tmp_path):
    """fixed_size_binary(0) (every value b''): 2.2 stores it as a constant, which pylance reads
    and lancefile refused as '8-bit values' (a width of 0 taken for 'unknown'), even in its own
    files."""
    table = _empty_binary_table(name)
    theirs = reference_write(table, tmp_path / "pl.lance", "2.2")
    assert_tables_equal(lancefile.read_table(theirs), reference_read(theirs))
    ours = tmp_path / "lf.lance"
    lancefile.write_table(table, ours, version="2.2")
    assert_tables_equal(lancefile.read_table(ours), table)
    assert_tables_equal(reference_read(ours), table)
    assert lancefile.LanceFileReader(ours).take_rows([3, 0]).to_table().equals(table.take([3, 0]))


@pytest.mark.parametrize("version", ["2.0", "2.1"])
@pytest.mark.parametrize("name", sorted(_EMPTY_BINARY))
def test_fixed_size_binary_0_is_refused_where_no_reader_can_read_it(name, version, tmp_path):
    """At 2.0 and 2.1 both writers accepted fixed_size_binary(0) and neither reader could read
    the file: lancefile now refuses it before writing, naming the field and the version."""
    with pytest.raises(lancefile.UnsupportedTypeError, match=r"fixed_size_binary\[0\].*2\.2"):
        lancefile.write_table(_empty_binary_table(name), tmp_path / "f.lance", version=version)
    assert not (tmp_path / "f.lance").exists()


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_fixed_size_lists_of_fixed_size_binary_0_are_refused(version, tmp_path):
    table = pa.table({"c": pa.array([[b"", b""], None], pa.list_(_FSB0, 2))})
    with pytest.raises(lancefile.UnsupportedTypeError, match="fixed_size_binary"):
        lancefile.write_table(table, tmp_path / "f.lance", version=version)
    assert not (tmp_path / "f.lance").exists()


class _UnhashableExtension(pa.ExtensionType):
    """An extension type defined in Python with __eq__ and no __hash__ (as pylance's own
    lance.bfloat16 is): unhashable."""

    def __init__(self):
        super().__init__(pa.binary(2), "lancefile.test.unhashable")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()

    def __eq__(self, other):
        return isinstance(other, _UnhashableExtension)

    __hash__ = None


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_unhashable_extension_types_are_written(version, tmp_path):
    """write_table raised a bare TypeError ('unhashable type') on such a column, where pylance
    writes it: lancefile looked its type up in a dict of view types."""
    ext = _UnhashableExtension()
    with pytest.raises(TypeError):
        hash(ext)
    storage = pa.array([b"\x80?", None, b"\x00@"], pa.binary(2))
    table = pa.table({"b": pa.ExtensionArray.from_storage(ext, storage), "i": [1, 2, 3]})
    pa.register_extension_type(ext)
    try:
        lancefile.write_table(table, tmp_path / "f.lance", version=version)
        assert_tables_equal(lancefile.read_table(tmp_path / "f.lance"), table)
        assert_tables_equal(reference_read(tmp_path / "f.lance"), table)
    finally:
        pa.unregister_extension_type("lancefile.test.unhashable")


_NOT_BLOBS = {
    "struct": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}], pa.struct([("a", pa.int32()), ("b", pa.string())])),
    "list_of_structs": pa.array([[{"a": 1}], None, []], pa.list_(pa.struct([("a", pa.int32())]))),
    "map": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int32())),
    "list": pa.array([[1], None, []], pa.list_(pa.int32())),
}


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
@pytest.mark.parametrize("name", sorted(_NOT_BLOBS))
def test_blob_metadata_on_a_struct_list_or_map_is_refused(name, version, tmp_path):
    """pylance refuses ``lance-encoding:blob`` on a field that is not binary; lancefile wrote
    struct and map columns so marked into files pylance could not read."""
    if name == "map" and version != "2.2":
        pytest.skip("maps need 2.2")
    arr = _NOT_BLOBS[name]
    field = pa.field("c", arr.type, metadata={"lance-encoding:blob": "true"})
    table = pa.Table.from_arrays([arr, pa.array([1, 2, 3])], schema=pa.schema([field, pa.field("i", pa.int64())]))
    with pytest.raises(lancefile.UnsupportedTypeError, match="'c': blob columns must be large_binary"):
        lancefile.write_table(table, tmp_path / "f.lance", version=version)
    assert not (tmp_path / "f.lance").exists()


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("nulls", ["first_page", "last_page", "middle", "every_page", "none", "none_nor_empty"])
def test_nullable_struct_above_a_list_on_many_pages(nulls, version, tmp_path):
    """pylance 14.0.2 fails ('Incorrect number of nulls for StructArray') on a column whose
    pages differ in whether a struct above a list has nulls, on its own files too: lancefile
    writes such a struct layer nullable on every page, so pylance reads its files whatever
    pages the nulls fall in."""
    n = 400
    where = {"first_page": (3, 10, 17), "last_page": (383, 390, 397), "middle": (200,), "every_page": (3, 390),
             "none": (), "none_nor_empty": ()}[nulls]
    longer = 1 if nulls == "none_nor_empty" else 0  # (no empty list either: no def level but the struct's)
    rows = [None if i in where else {"f0": list(range(i % 9 + longer)), "f1": i} for i in range(n)]
    table = pa.table({"c": pa.array(rows, pa.struct([("f0", pa.list_(pa.int32())), ("f1", pa.uint32())]))})
    path = tmp_path / "f.lance"
    with lancefile.LanceFileWriter(path, table.schema, version=version, max_page_bytes=4096,
                                   data_cache_bytes=4096) as w:
        w.write_batch(table)
    assert len(lancefile.LanceFileReader(path).metadata().columns[0].pages) > 1
    assert_tables_equal(reference_read(path), table)
    assert_tables_equal(lancefile.read_table(path), table)
