"""Shared helpers for the Lance *dataset* tests (``lancefile.dataset`` / ``lancefile.write_dataset``).

The oracle is pylance 14.0.2 (``import lance``). The central helper is :func:`assert_dataset_matches`,
which opens one dataset directory with both libraries and compares everything the lancefile API
exposes: the version list, the latest version (schema, row count, full scan, batches, projection,
``take`` of live-row positions, fragments, data storage version) and every version by time travel.

The helpers are also exposed as fixtures (``dataset_matches``, ``same_table``) for test modules that
prefer fixtures to imports.
"""

from __future__ import annotations

import datetime
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests import datagen
from tests.conftest import assert_tables_equal

try:
    import lance
except ImportError:  # pragma: no cover - the oracle is a test dependency (pip install -e '.[test]')
    lance = None
    collect_ignore_glob = ["test_*.py"]  # every test here needs pylance


# --------------------------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------------------------


def assert_same_table(actual: pa.Table, expected: pa.Table, context: str = "", *,
                      schema_metadata: bool = True) -> None:
    """Same column names in the same order, same types, same values (Table.equals, NaN-tolerant),
    same field metadata and (unless ``schema_metadata`` is False) the same schema metadata.

    pylance 14.0.2's ``take`` drops the schema metadata when the indices are not sorted
    (``take([1, 0])``) and keeps it otherwise, so take results are compared with
    ``schema_metadata=False``."""
    assert isinstance(actual, pa.Table), f"{context}: expected a pyarrow.Table, got {type(actual).__name__}"
    assert actual.column_names == expected.column_names, (
        f"{context}: column names/order differ: lancefile {actual.column_names}, pylance {expected.column_names}")
    if not schema_metadata:
        actual = actual.replace_schema_metadata(None)
        expected = expected.replace_schema_metadata(None)
    for fa, fe in zip(actual.schema, expected.schema):
        assert fa.equals(fe, check_metadata=True), (
            f"{context}: field {fe.name!r}: lancefile {fa} {fa.metadata}, pylance {fe} {fe.metadata}")
    # pylance's dictionaries are not canonical (it concatenates the dictionaries of the pages it
    # read, e.g. ['a','b','c','a','b','c',...]): with a dictionary type, compare the values
    has_dict = any(datagen.has_dictionary(f.type) for f in expected.schema)
    assert_tables_equal(actual, expected, context=context, check_metadata=True, values_only=has_dict)
    if has_dict:
        actual, expected = datagen.normalize_dictionaries(actual), datagen.normalize_dictionaries(expected)
    assert actual.equals(expected), f"{context}: Table.equals is False"


def assert_same_schema(actual: pa.Schema, expected: pa.Schema, context: str = "") -> None:
    assert isinstance(actual, pa.Schema), f"{context}: schema is {type(actual).__name__}, not pa.Schema"
    assert actual.names == expected.names, f"{context}: schema names {actual.names} != {expected.names}"
    for fa, fe in zip(actual, expected):
        assert fa.equals(fe, check_metadata=True), (
            f"{context}: field {fe.name!r}: lancefile {fa} {fa.metadata}, pylance {fe} {fe.metadata}")
    assert (actual.metadata or {}) == (expected.metadata or {}), (
        f"{context}: schema metadata: lancefile {actual.metadata}, pylance {expected.metadata}")


def _to_epoch(ts: datetime.datetime) -> float:
    # pylance gives naive datetimes in local time; .timestamp() interprets naive ones as local
    return ts.timestamp()


def assert_versions_match(lf_ds, ref, context: str = "") -> list[int]:
    """lancefile's versions() lists pylance's version numbers, with datetimes of the same instants."""
    ref_versions = ref.versions()
    lf_versions = lf_ds.versions()
    assert isinstance(lf_versions, list), f"{context}: versions() is {type(lf_versions).__name__}"
    got = [v["version"] for v in lf_versions]
    want = [v["version"] for v in ref_versions]
    assert got == want, f"{context}: versions() lancefile {got}, pylance {want}"
    for lv, rv in zip(lf_versions, ref_versions):
        assert isinstance(lv["version"], int)
        assert isinstance(lv["timestamp"], datetime.datetime), (
            f"{context}: version {lv['version']} timestamp is {type(lv['timestamp']).__name__}")
        diff = abs(_to_epoch(lv["timestamp"]) - _to_epoch(rv["timestamp"]))
        assert diff < 1.0, (f"{context}: version {lv['version']} timestamp lancefile {lv['timestamp']!r}, "
                            f"pylance {rv['timestamp']!r} ({diff:.3f} s apart)")
    return want


def _take_positions(n: int, fragment_live_counts: Sequence[int], rng: np.random.Generator) -> list[int]:
    """Random live-row positions, plus both ends of every fragment, shuffled, with a duplicate."""
    if n == 0:
        return []
    pos: set[int] = {0, n - 1}
    start = 0
    for c in fragment_live_counts:
        if c:
            pos.update({start, start + c - 1})
            if start + c < n:
                pos.add(start + c)
        start += c
    pos.update(rng.choice(n, size=min(n, 60), replace=False).tolist())
    out = sorted(pos)
    rng.shuffle(out)
    out.append(out[0])  # a duplicate
    return [int(i) for i in out]


def assert_version_matches(uri: str, version: int, context: str = "") -> None:
    """lancefile.dataset(uri, version=v) reads what lance.dataset(uri, version=v) reads."""
    import lancefile

    ctx = f"{context} v{version}"
    ref = lance.dataset(uri, version=version)
    ds = lancefile.dataset(uri, version=version)
    assert ds.version == version, f"{ctx}: .version is {ds.version!r}"
    assert ds.latest_version == ref.latest_version, f"{ctx}: latest_version {ds.latest_version} != {ref.latest_version}"
    assert_same_schema(ds.schema, ref.schema, ctx)
    assert ds.count_rows() == ref.count_rows(), f"{ctx}: count_rows {ds.count_rows()} != {ref.count_rows()}"
    assert_same_table(ds.to_table(), ref.to_table(), ctx)
    # an old version's handle still lists every version, and its own fragments
    assert [v["version"] for v in ds.versions()] == [v["version"] for v in ref.versions()], f"{ctx}: versions()"
    ref_frags = ref.get_fragments()
    frags = ds.get_fragments()
    assert [(f.fragment_id, f.physical_rows, f.count_rows()) for f in frags] == \
        [(f.fragment_id, f.physical_rows, f.count_rows()) for f in ref_frags], f"{ctx}: fragments"


def assert_dataset_matches(uri, *, seed: int = 0, batch_size: int = 7, all_versions: bool = True,
                           context: str = "") -> None:
    """Open ``uri`` with lancefile and pylance and compare everything (see the module docstring)."""
    import lancefile

    uri = str(uri)
    ctx = context or os.path.basename(uri)
    rng = np.random.default_rng(seed)
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    assert isinstance(ds, lancefile.LanceDataset)
    assert str(ds.uri).rstrip("/").endswith(os.path.basename(uri.rstrip("/"))), f"{ctx}: uri {ds.uri!r}"

    versions = assert_versions_match(ds, ref, ctx)
    assert ds.version == ref.version, f"{ctx}: version {ds.version} != pylance {ref.version}"
    assert ds.latest_version == ref.latest_version
    assert ds.data_storage_version == ref.data_storage_version, (
        f"{ctx}: data_storage_version {ds.data_storage_version!r} != {ref.data_storage_version!r}")
    assert_same_schema(ds.schema, ref.schema, ctx)

    n = ref.count_rows()
    assert ds.count_rows() == n, f"{ctx}: count_rows {ds.count_rows()} != {n}"
    expected = ref.to_table()
    full = ds.to_table()
    assert_same_table(full, expected, f"{ctx} to_table")

    # batches
    batches = list(ds.to_batches(batch_size=batch_size))
    for b in batches:
        assert isinstance(b, pa.RecordBatch), f"{ctx}: to_batches yielded {type(b).__name__}"
        assert b.num_rows <= batch_size, f"{ctx}: a batch of {b.num_rows} rows > batch_size {batch_size}"
    assert sum(b.num_rows for b in batches) == n
    if batches:
        assert_same_table(pa.Table.from_batches(batches), expected, f"{ctx} to_batches")
    batches_default = list(ds.to_batches())
    assert sum(b.num_rows for b in batches_default) == n
    if batches_default:
        assert_same_table(pa.Table.from_batches(batches_default), expected, f"{ctx} to_batches()")

    # projection (reverse order of a subset, and a single column)
    names = ref.schema.names
    proj = [names[-1], names[0]] if len(names) > 1 else names[:1]
    assert_same_table(ds.to_table(columns=proj), ref.to_table(columns=proj), f"{ctx} to_table(columns={proj})")
    pb = list(ds.to_batches(columns=proj, batch_size=batch_size))
    if pb:
        assert_same_table(pa.Table.from_batches(pb), ref.to_table(columns=proj), f"{ctx} to_batches(columns={proj})")
    one = [names[len(names) // 2]]
    assert_same_table(ds.to_table(columns=one), ref.to_table(columns=one), f"{ctx} to_table(columns={one})")

    # fragments
    ref_frags = ref.get_fragments()
    frags = ds.get_fragments()
    assert [f.fragment_id for f in frags] == [f.fragment_id for f in ref_frags], f"{ctx}: fragment ids"
    for f, rf in zip(frags, ref_frags):
        fctx = f"{ctx} fragment {rf.fragment_id}"
        assert f.count_rows() == rf.count_rows(), f"{fctx}: count_rows {f.count_rows()} != {rf.count_rows()}"
        assert f.physical_rows == rf.physical_rows, f"{fctx}: physical_rows {f.physical_rows} != {rf.physical_rows}"
        assert_same_table(f.to_table(), rf.to_table(), fctx)
        assert_same_table(f.to_table(columns=one), rf.to_table(columns=one), f"{fctx} columns={one}")

    # take: positions among live rows, across fragments and deleted rows, unsorted, duplicated
    idx = _take_positions(n, [rf.count_rows() for rf in ref_frags], rng)
    assert_same_table(ds.take(idx), ref.take(idx), f"{ctx} take({len(idx)} positions)", schema_metadata=False)
    assert_same_table(ds.take(idx, columns=proj), ref.take(idx, columns=proj), f"{ctx} take(columns={proj})",
                      schema_metadata=False)
    assert_same_table(ds.take(np.asarray(idx, dtype=np.int64)), ref.take(idx), f"{ctx} take(numpy indices)",
                      schema_metadata=False)
    srt = sorted(set(idx))
    assert_same_table(ds.take(srt), ref.take(srt), f"{ctx} take(sorted positions)")

    # time travel: every version pylance lists
    if all_versions:
        for v in versions:
            assert_version_matches(uri, v, ctx)
        # checkout_version on an opened dataset goes to the same place
        first = ds.checkout_version(versions[0])
        assert first.version == versions[0]
        assert_same_table(first.to_table(), lance.dataset(uri, version=versions[0]).to_table(),
                          f"{ctx} checkout_version({versions[0]})")


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def simple_table(n: int, start: int = 0, *, seed: int = 0) -> pa.Table:
    """id (int64, unique from ``start``), a nullable float, a nullable string, a bool."""
    rng = np.random.default_rng(seed + start)
    ids = np.arange(start, start + n, dtype=np.int64)
    vals = rng.standard_normal(n)
    vmask = rng.random(n) < 0.1
    strs = [None if rng.random() < 0.1 else f"s{int(i)}-{'x' * int(i % 5)}" for i in ids]
    return pa.table({
        "id": pa.array(ids),
        "v": pa.array(vals, mask=vmask),
        "s": pa.array(strs, pa.string()),
        "b": pa.array(ids % 3 == 0),
    })


def nested_table(n: int, start: int = 0, *, version: str | None = "2.2", seed: int = 0) -> pa.Table:
    """struct, list, list<struct>, fixed_size_list embeddings, strings with nulls.

    Lance 2.0 cannot hold null struct *values* (fields inside may be null), so those are only made
    for 2.1+.
    """
    rng = np.random.default_rng(seed + 7 * start + 1)
    ids = np.arange(start, start + n, dtype=np.int64)
    struct_null = None
    if version not in ("2.0",):
        struct_null = pa.array(rng.random(n) < 0.1)
    st = pa.StructArray.from_arrays(
        [pa.array(rng.integers(-100, 100, n).astype(np.int32)),
         pa.array([None if i % 4 == 0 else f"t{i}" for i in ids], pa.string())],
        names=["a", "t"], mask=struct_null)
    lists = pa.array([None if i % 6 == 0 else [int(j) for j in range(int(i % 4))] for i in ids],
                     pa.list_(pa.int64()))
    ls_type = pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))
    ls = pa.array([None if i % 5 == 0 else [{"x": int(i + j), "y": None if j == 1 else f"y{j}"}
                                             for j in range(int(i % 3))] for i in ids], ls_type)
    emb = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.standard_normal(n * 8).astype(np.float32)), 8)
    return pa.table({"id": pa.array(ids), "st": st, "l": lists, "ls": ls, "emb": emb})


def more_types_table(n: int, start: int = 0, *, version: str | None = "2.2") -> pa.Table:
    """dictionary, large string / list, date, decimal, tz timestamp, float16, fixed-size binary, uint64,
    duration, the null type; map from 2.2 on (pylance refuses maps in 2.0 and 2.1)."""
    import datetime
    import decimal

    ids = np.arange(start, start + n, dtype=np.int64)
    cols = {
        "id": pa.array(ids),
        "dict": pa.array([["a", "b", None, "c"][i % 4] for i in ids]).dictionary_encode(),
        "lstr": pa.array([f"x{i}" if i % 4 else None for i in ids], pa.large_string()),
        "llist": pa.array([[int(i)] * int(i % 3) if i % 5 else None for i in ids], pa.large_list(pa.int16())),
        "date": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(i)) for i in ids]),
        "dec": pa.array([decimal.Decimal(int(i)) / 100 if i % 6 else None for i in ids], pa.decimal128(10, 2)),
        "tstz": pa.array(ids * 10**9, pa.timestamp("ns", tz="UTC")),
        "f16": pa.array((ids % 100).astype(np.float16)),
        "fsb": pa.array([bytes([int(i) % 256]) * 4 for i in ids], pa.binary(4)),
        "u64": pa.array(ids.astype(np.uint64) * np.uint64(2**40)),
        "dur": pa.array(ids, pa.duration("ms")),
        "nul": pa.nulls(n),
    }
    if version not in ("2.0", "2.1"):
        cols["map"] = pa.array([[(f"k{j}", j) for j in range(int(i % 3))] for i in ids],
                               pa.map_(pa.string(), pa.int32()))
    return pa.table(cols)


def decode_manifest(raw: bytes):
    """(offset of the manifest section, lancefile._proto.table_pb2.Manifest) of a manifest file's bytes."""
    import struct

    from lancefile._proto import table_pb2

    pos = struct.unpack_from("<q", raw, len(raw) - 16)[0]
    (n,) = struct.unpack_from("<I", raw, pos)
    m = table_pb2.Manifest()
    m.ParseFromString(raw[pos + 4:pos + 4 + n])
    return pos, m


def reencode_manifest(path, edit: Callable) -> None:
    """Decode the manifest section of ``path``, let ``edit(manifest)`` change it, write the file back.

    Everything before the manifest section (index / transaction sections) is kept byte for byte, so
    their offsets stay right; the manifest section goes back at the same position (DATASET-NOTES §2.1):
    [u32 len][Manifest] [i64 offset][i16 0][i16 2][b"LANC"].
    """
    import struct

    path = Path(path)
    raw = path.read_bytes()
    pos, m = decode_manifest(raw)
    edit(m)
    body = m.SerializeToString()
    path.write_bytes(raw[:pos] + struct.pack("<I", len(body)) + body + struct.pack("<qhh", pos, 0, 2) + b"LANC")


def version_of_manifest_name(name: str) -> int:
    stem = name[: -len(".manifest")]
    return (2**64 - 1 - int(stem)) if len(name) == 29 else int(stem)


def latest_manifest(uri) -> Path:
    return max(manifest_paths(uri), key=lambda p: version_of_manifest_name(p.name))


def pylance_refuses(fn: Callable[[], object]) -> str:
    """Run ``fn`` (a pylance call); assert it raises, and return its message. pylance raises OSError,
    ValueError, pyarrow errors... depending on where the problem is found, so any Exception counts."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the oracle's error class is not what is tested
        return str(exc)
    raise AssertionError("pylance accepted it, so the premise of this test does not hold")


def copy_dataset(src, dst) -> str:
    shutil.copytree(str(src), str(dst))
    return str(dst)


def manifest_paths(uri) -> list[Path]:
    return sorted(p for p in (Path(uri) / "_versions").iterdir() if p.name.endswith(".manifest"))


def deletion_files(uri) -> list[str]:
    d = Path(uri) / "_deletions"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(name="dataset_matches")
def _dataset_matches_fixture():
    return assert_dataset_matches


@pytest.fixture(name="same_table")
def _same_table_fixture():
    return assert_same_table
