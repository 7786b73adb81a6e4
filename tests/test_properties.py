"""Property tests: random schemas (nesting depth <= 3) and random data with nulls.

* lancefile write -> lancefile read and -> pylance read give the table back;
* pylance write -> lancefile read gives what pylance's reader gives;
* random read_range / take_rows equal slicing / taking the original table.

Types come from what the 2.0 format holds (see tests/datagen.py: CATALOGUE and REFUSED).
Run more examples with ``HYPOTHESIS_PROFILE=dev`` or a custom ``--hypothesis-seed``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import lancefile
from tests import datagen
from tests.conftest import assert_tables_equal, reference_reader, reference_take, reference_write

pytestmark = pytest.mark.interop  # the properties also exchange files with pylance

# --------------------------------------------------------------------------------------------
# Type strategies
# --------------------------------------------------------------------------------------------

_UNITS = ["s", "ms", "us", "ns"]
_TZS = [None, "UTC", "America/New_York", "+05:30"]

FIXED_WIDTH = st.one_of(
    st.sampled_from([pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
                     pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.bool_(), pa.date32(), pa.date64(),
                     pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")]),
    st.builds(pa.timestamp, st.sampled_from(_UNITS), st.sampled_from(_TZS)),
    st.builds(pa.duration, st.sampled_from(_UNITS)),
    st.integers(1, 38).flatmap(lambda p: st.builds(pa.decimal128, st.just(p), st.integers(0, p))),
    st.integers(1, 76).flatmap(lambda p: st.builds(pa.decimal256, st.just(p), st.integers(0, p))),
    st.builds(pa.binary, st.integers(1, 20)),  # fixed_size_binary
)
VARIABLE_WIDTH = st.sampled_from([pa.string(), pa.large_string(), pa.binary(), pa.large_binary()])
LEAF = st.one_of(FIXED_WIDTH, VARIABLE_WIDTH, st.just(pa.null()))
DICTIONARY = st.builds(
    pa.dictionary,
    st.sampled_from([pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]),
    st.sampled_from([pa.string(), pa.large_string(), pa.binary(), pa.int64(), pa.float32()]),
)
def _field(name: str, typ: pa.DataType, nullable: bool) -> pa.Field:
    return pa.field(name, typ, nullable or pa.types.is_null(typ))  # a null-type field must be nullable


NAMES = st.sampled_from(["a", "b", "x", "value", "é", "with space", "CamelCase", "n_1", "数据"])


def fsl_types(depth: int) -> st.SearchStrategy[pa.DataType]:
    """fixed_size_list of fixed-width items (2.0 refuses strings, lists, structs, dicts inside)."""
    inner = FIXED_WIDTH if depth <= 1 else st.one_of(FIXED_WIDTH, st.deferred(lambda: fsl_types(depth - 1)))
    return st.builds(lambda t, n, nullable: pa.list_(_field("item", t, nullable), n), inner, st.integers(1, 6),
                     st.booleans())


def types(depth: int = 3) -> st.SearchStrategy[pa.DataType]:
    """Any type 2.0 can write, nested at most ``depth`` levels."""
    if depth <= 1:
        return st.one_of(LEAF, DICTIONARY)
    child = types(depth - 1)
    lists = st.builds(lambda t, nullable, large: (pa.large_list if large else pa.list_)(_field("item", t, nullable)),
                      child, st.booleans(), st.booleans())
    structs = st.lists(st.tuples(NAMES, child, st.booleans()), min_size=1, max_size=3,
                       unique_by=lambda f: f[0]).map(lambda fs: pa.struct([_field(n, t, nl) for n, t, nl in fs]))
    return st.one_of(LEAF, DICTIONARY, fsl_types(depth - 1), lists, structs)


@st.composite
def special_fields(draw, name: str) -> pa.Field:
    """Columns selected by field metadata: packed structs, blobs, compressed strings."""
    kind = draw(st.sampled_from(["packed", "blob", "compressed"]))
    if kind == "packed":
        # 2.0 packs fixed-width children without nulls; bool (bit-packed) children are refused
        child = FIXED_WIDTH.filter(lambda t: not pa.types.is_boolean(t))
        children = draw(st.lists(st.tuples(NAMES, child), min_size=1, max_size=4, unique_by=lambda f: f[0]))
        return pa.field(name, pa.struct(children), metadata=datagen.PACKED_META)
    if kind == "blob":
        return pa.field(name, pa.large_binary(), metadata=datagen.BLOB_META)
    codec = draw(st.sampled_from(["zstd", "lz4"]))
    typ = draw(st.sampled_from([pa.string(), pa.binary(), pa.large_string(), pa.large_binary()]))
    return pa.field(name, typ, metadata={"lance-encoding:compression": codec})


def _walk(typ: pa.DataType):
    yield typ
    for i in range(typ.num_fields):
        yield from _walk(typ.field(i).type)


def _hits_reference_bug(typ: pa.DataType) -> bool:
    """A struct holding both a dictionary and a null type somewhere below it (list<null>,
    fixed_size_list<null>, struct<null>...): pylance 14.0.2 reads it back as an invalid array
    (datagen.QUIRKS["struct_null_type_with_dictionary"])."""
    for t in _walk(typ):
        if pa.types.is_struct(t):
            inner = list(_walk(t))
            if any(pa.types.is_dictionary(x) for x in inner) and any(pa.types.is_null(x) for x in inner):
                return True
    return False


@st.composite
def schemas(draw, max_columns: int = 4) -> pa.Schema:
    n = draw(st.integers(1, max_columns))
    fields = []
    for i in range(n):
        name = f"c{i}"
        if draw(st.integers(0, 9)) == 0:
            fields.append(draw(special_fields(name)))
        else:
            typ = draw(types(3).filter(lambda t: not _hits_reference_bug(t)))
            fields.append(_field(name, typ, draw(st.booleans())))
    return pa.schema(fields)


def _fill(schema: pa.Schema, n: int, seed: int, null_fraction: float) -> pa.Table:
    rng = np.random.default_rng(seed)
    cols = []
    for f in schema:
        nf = null_fraction if f.nullable else 0.0
        packed = f.metadata is not None and f.metadata.get(b"packed") == b"true"
        arr = datagen.random_array(f.type, n, rng, null_fraction=0.0 if packed else nf)
        cols.append(arr)
    return pa.Table.from_arrays(cols, schema=schema)


@st.composite
def tables(draw, max_rows: int = 200) -> pa.Table:
    schema = draw(schemas())
    n = draw(st.integers(0, max_rows))
    seed = draw(st.integers(0, 2**32 - 1))
    null_fraction = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    t = _fill(schema, n, seed, null_fraction)
    note(f"schema:\n{schema.to_string(show_field_metadata=True)}\nrows={n} seed={seed} null_fraction={null_fraction}")
    return t


@st.composite
def batch_splits(draw, n: int) -> list[int]:
    """Cut points splitting n rows into 1..6 batches (empty batches allowed)."""
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
    return [0, *cuts, n]


def _has_dictionary(t: pa.Table) -> bool:
    return any(datagen.has_dictionary(f.type) for f in t.schema)


def _write_lancefile(t: pa.Table, path: Path, cuts: list[int], **options) -> None:
    with lancefile.LanceFileWriter(str(path), t.schema, version="2.0", **options) as w:
        for a, b in zip(cuts, cuts[1:]):
            w.write_batch(t.slice(a, b - a))


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@given(t=tables(), data=st.data())
def test_lancefile_round_trip(t: pa.Table, data):
    """lancefile write -> lancefile read and pylance read return the table."""
    cuts = data.draw(batch_splits(t.num_rows), label="batch cuts")
    page = data.draw(st.sampled_from([1024, 32 * 1024 * 1024]), label="max_page_bytes")
    values_only = _has_dictionary(t)
    expected = datagen.expected_readback(t)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.lance"
        _write_lancefile(t, path, cuts, max_page_bytes=page)
        got = lancefile.LanceFileReader(str(path)).read_all(batch_size=data.draw(st.integers(1, 300))).to_table()
        assert_tables_equal(got, expected, values_only=values_only, check_metadata=True, context="lancefile read")
        ref = reference_reader(path).read_all().to_table()
        assert_tables_equal(ref, expected, values_only=values_only, check_metadata=True, context="pylance read")


@given(t=tables(), data=st.data())
def test_reference_to_lancefile(t: pa.Table, data):
    """pylance write (one batch) -> lancefile reads what pylance reads, whole and projected."""
    values_only = _has_dictionary(t)
    paths = datagen.column_paths(t.schema)
    columns = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=3, unique=True), label="columns")
    # pylance rejects a projection naming a struct and one of its children together: keep the first
    kept: list[str] = []
    for c in columns:
        if not any(c.startswith(o + ".") or o.startswith(c + ".") for o in kept):
            kept.append(c)
    columns = kept
    with tempfile.TemporaryDirectory() as d:
        path = reference_write(t, Path(d) / "ref.lance")
        expected = reference_reader(path).read_all().to_table()
        got = lancefile.LanceFileReader(str(path)).read_all().to_table()
        assert_tables_equal(got, expected, values_only=values_only, check_metadata=True)
        expected = reference_reader(path, columns).read_all().to_table()
        got = lancefile.LanceFileReader(str(path), columns=columns).read_all().to_table()
        assert_tables_equal(got, expected, values_only=values_only, check_metadata=True,
                            context=f"columns={columns}")


@given(t=tables(max_rows=300), data=st.data())
def test_random_access(t: pa.Table, data):
    """read_range and take_rows on files from both writers equal slicing / taking the table."""
    n = t.num_rows
    values_only = _has_dictionary(t)
    expected = datagen.expected_readback(t)
    cuts = data.draw(batch_splits(n), label="batch cuts")
    start = data.draw(st.integers(0, n), label="start")
    length = data.draw(st.integers(0, n - start), label="length")
    indices = data.draw(st.lists(st.integers(0, max(0, n - 1)), max_size=40) if n else st.just([]), label="indices")
    with tempfile.TemporaryDirectory() as d:
        ours = Path(d) / "ours.lance"
        _write_lancefile(t, ours, cuts, max_page_bytes=2048)
        theirs = reference_write(t, Path(d) / "theirs.lance", max_page_bytes=2048)
        for label, path in [("lancefile file", ours), ("pylance file", theirs)]:
            r = lancefile.LanceFileReader(str(path))
            assert_tables_equal(r.read_range(start, length).to_table(), expected.slice(start, length),
                                values_only=values_only, context=f"{label}: read_range({start}, {length})")
            assert_tables_equal(r.take_rows(indices).to_table(), expected.take(pa.array(indices, pa.int64())),
                                values_only=values_only, context=f"{label}: take_rows({indices})")


@st.composite
def tables_2_1_plus(draw, max_rows: int = 300) -> tuple[pa.Table, str]:
    """A random table with what 2.1/2.2 add: null struct rows, and (2.2) maps."""
    version = draw(st.sampled_from(["2.1", "2.2"]), label="version")
    schema = draw(schemas())
    if version == "2.2" and draw(st.booleans(), label="map column"):
        key = draw(st.sampled_from([pa.string(), pa.int32(), pa.int64()]))
        value = draw(types(2).filter(lambda t: not _hits_reference_bug(t)))
        schema = schema.append(pa.field("m", pa.map_(key, value)))
    n = draw(st.integers(0, max_rows))
    seed = draw(st.integers(0, 2**32 - 1))
    null_fraction = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    rng = np.random.default_rng(seed)
    cols = []
    for f in schema:
        packed = f.metadata is not None and f.metadata.get(b"packed") == b"true"
        nf = 0.0 if packed or not f.nullable else null_fraction
        if pa.types.is_map(f.type):
            cols.append(_random_map(f.type, n, rng, nf))
        else:
            cols.append(datagen.random_array(f.type, n, rng, null_fraction=nf, struct_nulls=not packed))
    note(f"version {version}, schema:\n{schema.to_string(show_field_metadata=True)}\nrows={n} seed={seed}")
    return pa.Table.from_arrays(cols, schema=schema), version


def _random_map(typ: pa.MapType, n: int, rng: np.random.Generator, null_fraction: float) -> pa.Array:
    lengths = rng.integers(0, 4, n)
    mask = rng.random(n) < null_fraction
    lengths[mask] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    total = int(offsets[-1])
    keys = datagen.random_array(typ.key_type, total, rng, null_fraction=0.0)
    items = datagen.random_array(typ.item_type, total, rng, null_fraction=null_fraction)
    return pa.MapArray.from_arrays(pa.array(offsets), keys, items, mask=pa.array(mask) if mask.any() else None)


@given(case=tables_2_1_plus(), data=st.data())
def test_reference_2_1_and_2_2_to_lancefile(case, data):
    """pylance writes 2.1 / 2.2 (the reference's default) -> lancefile reads what pylance reads:
    whole, at random batch sizes, a random range and random takes."""
    t, version = case
    values_only = _has_dictionary(t)
    n = t.num_rows
    start = data.draw(st.integers(0, n), label="start")
    length = data.draw(st.integers(0, n - start), label="length")
    indices = data.draw(st.lists(st.integers(0, max(0, n - 1)), max_size=40) if n else st.just([]), label="indices")
    with tempfile.TemporaryDirectory() as d:
        path = reference_write(t, Path(d) / "ref.lance", version)
        expected = reference_reader(path).read_all().to_table()
        r = lancefile.LanceFileReader(str(path))
        got = r.read_all(batch_size=data.draw(st.integers(1, 300), label="batch size")).to_table()
        assert_tables_equal(got, expected, values_only=values_only, check_metadata=True, context=f"{version} read")
        assert_tables_equal(r.read_range(start, length).to_table(), expected.slice(start, length),
                            values_only=values_only, context=f"{version}: read_range({start}, {length})")
        assert_tables_equal(r.take_rows(indices).to_table(), expected.take(pa.array(indices, pa.int64())),
                            values_only=values_only, context=f"{version}: take_rows({indices})")


@given(case=tables_2_1_plus(), data=st.data())
def test_lancefile_2_1_and_2_2_round_trip(case, data):
    """lancefile writes 2.1 / 2.2 in random batches and page sizes -> pylance and lancefile
    read back the table, whole and by take."""
    t, version = case
    cuts = data.draw(batch_splits(t.num_rows), label="batch cuts")
    page = data.draw(st.sampled_from([1024, 32 * 1024 * 1024]), label="max_page_bytes")
    cache = data.draw(st.sampled_from([1, 8 * 1024 * 1024]), label="data_cache_bytes")
    values_only = _has_dictionary(t)
    expected = datagen.expected_readback(t)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.lance"
        with lancefile.LanceFileWriter(str(path), t.schema, version=version, max_page_bytes=page,
                                       data_cache_bytes=cache) as w:
            for a, b in zip(cuts, cuts[1:]):
                w.write_batch(t.slice(a, b - a))
        # pylance 14.0.2 cannot read its own multi-page struct<list> columns with null struct rows
        # ("Incorrect number of nulls for StructArray"), so such files are checked by lancefile only
        multi_page = cache == 1 or page == 1024 or len(cuts) > 2
        if not (multi_page and _struct_over_list(t.schema)):
            ref = reference_reader(path).read_all().to_table()
            assert_tables_equal(ref, expected, values_only=values_only, check_metadata=True, context="pylance read")
        got = lancefile.LanceFileReader(str(path)).read_all(batch_size=data.draw(st.integers(1, 300))).to_table()
        assert_tables_equal(got, expected, values_only=values_only, check_metadata=True, context="lancefile read")
        n = t.num_rows
        if n and not (multi_page and _struct_over_list(t.schema)):
            idx = sorted(set(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=20), label="take")))
            assert_tables_equal(reference_take(path, idx), expected.take(pa.array(idx, pa.int64())),
                                values_only=True, context="pylance take")


def _struct_over_list(schema: pa.Schema) -> bool:
    """Whether some struct holds a list or map below it (at any depth)."""
    def has_list(t: pa.DataType) -> bool:
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
            return True
        if pa.types.is_fixed_size_list(t):
            return has_list(t.value_type)
        return pa.types.is_struct(t) and any(has_list(t.field(i).type) for i in range(t.num_fields))

    def walk(t: pa.DataType) -> bool:
        if pa.types.is_struct(t):
            return any(has_list(t.field(i).type) or walk(t.field(i).type) for i in range(t.num_fields))
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return walk(t.value_type)
        if pa.types.is_map(t):
            return walk(t.item_type)
        return False

    return any(walk(f.type) for f in schema)
