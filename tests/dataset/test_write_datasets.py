"""lancefile.write_dataset: datasets pylance 14.0.2 reads, appends to, deletes from and compacts.

* create / append / overwrite at data_storage_version None (= 2.2), 2.0, 2.1, 2.2; pylance reads every
  version by time travel; then pylance appends, deletes (.arrow and .bin deletion files), updates and
  compacts, and lancefile reads what pylance reads;
* lancefile appends onto datasets pylance created (2.0 / 2.1 / 2.2, with deletions, an index, V1
  manifest names), and a stale pylance writer commits after lancefile (needs lancefile's transactions);
* max_rows_per_file splits like pylance's; RecordBatchReader / generator / list inputs; zero rows;
* refused appends (other schema) and mode="create" on an existing dataset leave the dataset as it was;
* commit races made deterministic (another writer commits while lancefile consumes its input):
  appends rebase over compatible commits, CommitConflictError otherwise;
* concurrent appends from several processes (lancefile only, and lancefile + pylance);
* a write that fails midway leaves the previous version in place and no data files behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.dataset.conftest import (
    assert_dataset_matches,
    assert_same_schema,
    assert_same_table,
    deletion_files,
    manifest_paths,
    more_types_table,
    nested_table,
    pylance_refuses,
    simple_table,
)

lance = pytest.importorskip("lance")
import lancefile

pytestmark = pytest.mark.interop


def _expected_minor(version: str | None) -> tuple[int, int]:
    return {None: (2, 2), "2.0": (2, 0), "2.1": (2, 1), "2.2": (2, 2)}[version]


def _file_versions(uri) -> set[tuple[int, int]]:
    return {(f.file_major_version, f.file_minor_version)
            for fr in lance.dataset(str(uri)).get_fragments() for f in fr.metadata.files}


def _concat(*tables: pa.Table) -> pa.Table:
    return pa.concat_tables(tables).combine_chunks()


def _assert_unchanged(uri, version: int, expected: pa.Table, context: str) -> None:
    ref = lance.dataset(str(uri))
    assert ref.version == version, f"{context}: pylance now sees version {ref.version}, not {version}"
    ds = lancefile.dataset(str(uri))
    assert ds.version == version, f"{context}: lancefile now sees version {ds.version}, not {version}"
    assert_same_table(ref.to_table(), expected, f"{context} (pylance)")
    assert_same_table(ds.to_table(), expected, f"{context} (lancefile)")


# --------------------------------------------------------------------------------------------
# create / append / overwrite, read by pylance
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [None, "2.0", "2.1", "2.2"])
def test_create_append_overwrite_read_by_pylance(tmp_path, version):
    uri = str(tmp_path / "w.lance")
    t1, t2 = simple_table(50), simple_table(13, 50)
    t3 = simple_table(21, 1000, seed=3)
    t4 = simple_table(4, 2000)

    ds = lancefile.write_dataset(t1, uri, max_rows_per_file=20, data_storage_version=version)
    assert isinstance(ds, lancefile.LanceDataset)
    assert ds.version == 1 and ds.latest_version == 1
    assert_same_table(ds.to_table(), t1, "returned dataset")
    ref = lance.dataset(uri)
    assert ref.version == 1
    assert ref.data_storage_version == (version or "2.2")
    assert [f.physical_rows for f in ref.get_fragments()] == [20, 20, 10]
    assert _file_versions(uri) == {_expected_minor(version)}
    assert_same_table(ref.to_table(), t1, "pylance reads create")

    ds = lancefile.write_dataset(t2, uri, mode="append")
    assert ds.version == 2
    ds = lancefile.write_dataset(t3, uri, mode="overwrite", max_rows_per_file=10)
    assert ds.version == 3
    ds = lancefile.write_dataset(t4, uri, mode="append")
    assert ds.version == 4
    assert_same_table(ds.to_table(), _concat(t3, t4), "returned dataset v4")

    expected = {1: t1, 2: _concat(t1, t2), 3: t3, 4: _concat(t3, t4)}
    assert [v["version"] for v in lance.dataset(uri).versions()] == [1, 2, 3, 4]
    for v, exp in expected.items():
        ref = lance.dataset(uri, version=v)
        assert ref.count_rows() == exp.num_rows
        assert_same_table(ref.to_table(), exp, f"pylance v{v}")
        assert_same_table(ref.take([0, exp.num_rows - 1]), exp.take([0, exp.num_rows - 1]), f"pylance take v{v}")
    assert lance.dataset(uri).data_storage_version == (version or "2.2")
    assert _file_versions(uri) == {_expected_minor(version)}
    # fragment ids are unique and increasing; overwrite did not restart them
    ids = [f.fragment_id for f in lance.dataset(uri).get_fragments()]
    assert ids == sorted(set(ids)) and ids[0] > 3
    assert_dataset_matches(uri, context=f"lancefile-written {version}")


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_nested_types_read_by_pylance(tmp_path, version):
    uri = str(tmp_path / "nested.lance")
    t1 = nested_table(70, version=version)
    t2 = nested_table(20, 70, version=version)
    lancefile.write_dataset(t1, uri, max_rows_per_file=30, data_storage_version=version)
    lancefile.write_dataset(t2, uri, mode="append")
    ref = lance.dataset(uri)
    assert_same_schema(ref.schema, t1.schema, "pylance schema")
    assert_same_table(ref.to_table(), _concat(t1, t2), "pylance reads nested")
    assert_same_table(ref.to_table(columns=["ls", "id"]), _concat(t1, t2).select(["ls", "id"]), "projection")
    ref.delete("id % 3 = 0")
    assert_dataset_matches(uri, context=f"nested {version}")


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_more_types_read_by_pylance(tmp_path, version):
    """pylance reads lancefile's dataset exactly as it reads its own dataset of the same table."""
    t1, t2 = more_types_table(60, version=version), more_types_table(15, 60, version=version)
    lf, py = str(tmp_path / "lf.lance"), str(tmp_path / "py.lance")
    lancefile.write_dataset(t1, lf, max_rows_per_file=25, data_storage_version=version)
    lancefile.write_dataset(t2, lf, mode="append")
    lance.write_dataset(t1, py, max_rows_per_file=25, data_storage_version=version)
    lance.write_dataset(t2, py, mode="append")
    for v in (1, 2):
        assert_same_table(lance.dataset(lf, version=v).to_table(), lance.dataset(py, version=v).to_table(),
                          f"more types {version} v{v}")
    assert_same_schema(lance.dataset(lf).schema, lance.dataset(py).schema, "more types schema")
    lance.dataset(lf).delete("id % 7 = 0")
    assert_dataset_matches(lf, context=f"more types {version}")


@pytest.mark.parametrize("version", [None, "2.0", "2.2"])
def test_pylance_appends_deletes_compacts_lancefile_reads(tmp_path, version):
    uri = str(tmp_path / "mixed_writers.lance")
    lancefile.write_dataset(simple_table(6000), uri, max_rows_per_file=5500, data_storage_version=version)
    lance.write_dataset(simple_table(40, 6000), uri, mode="append")
    assert_dataset_matches(uri, context="after pylance append")

    lance.dataset(uri).delete("id >= 10 AND id < 5100")  # >= 5000 in fragment 0 -> .bin
    lance.dataset(uri).delete("id % 10 = 1")  # second delete, .arrow on the small fragments
    assert any(n.endswith(".bin") for n in deletion_files(uri))
    assert any(n.endswith(".arrow") for n in deletion_files(uri))
    assert_dataset_matches(uri, context="after pylance deletes")

    lance.dataset(uri).update({"s": "'upd'"}, where="id > 6030")
    lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=100_000)
    assert_dataset_matches(uri, context="after pylance update+compact")

    # lancefile appends on top of what pylance did, pylance reads it
    lancefile.write_dataset(simple_table(9, 9000), uri, mode="append")
    lance.dataset(uri).delete("id = 9003")
    assert_dataset_matches(uri, context="lancefile append after compaction")
    assert lance.dataset(uri).count_rows() == lancefile.dataset(uri).count_rows()


# --------------------------------------------------------------------------------------------
# lancefile appends onto pylance datasets
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_append_onto_pylance_dataset(tmp_path, version):
    uri = str(tmp_path / "py.lance")
    t1 = simple_table(30)
    lance.write_dataset(t1, uri, max_rows_per_file=12, data_storage_version=version)
    lance.dataset(uri).delete("id IN (0, 13, 29)")
    t2 = simple_table(25, 30)
    ds = lancefile.write_dataset(t2, uri, mode="append", max_rows_per_file=10)
    assert ds.version == 3
    ref = lance.dataset(uri)
    assert ref.version == 3
    assert ref.data_storage_version == version
    assert _file_versions(uri) == {_expected_minor(version)}  # appended files in the dataset's format
    expected = _concat(lance.dataset(uri, version=2).to_table(), t2)
    assert_same_table(ref.to_table(), expected, "pylance reads lancefile's append")
    assert [f.physical_rows for f in ref.get_fragments()][-3:] == [10, 10, 5]
    # pylance keeps going from lancefile's version
    lance.write_dataset(simple_table(3, 100), uri, mode="append")
    lance.dataset(uri).delete("id = 31 OR id = 101")
    lance.dataset(uri).optimize.compact_files()
    assert_dataset_matches(uri, context=f"lancefile append onto pylance {version}")


_EVOLUTIONS = {
    "add_columns": lambda u: lance.dataset(u).add_columns({"z": "id * 2"}),
    "drop_columns": lambda u: lance.dataset(u).drop_columns(["l"]),
    "drop_struct_child": lambda u: lance.dataset(u).drop_columns(["st.a"]),
    "rename_struct_child": lambda u: lance.dataset(u).alter_columns({"path": "st.t", "name": "tt"}),
    "add_null_column": lambda u: lance.dataset(u).add_columns(pa.field("n", pa.int32())),
    "merge": lambda u: lance.dataset(u).merge(pa.table({"id": pa.array([1, 5], pa.int64()), "m": ["a", "b"]}), "id"),
}


@pytest.mark.parametrize("version", ["2.0", "2.2"])
@pytest.mark.parametrize("evolution", list(_EVOLUTIONS))
def test_append_after_pylance_schema_evolution(tmp_path, version, evolution):
    """lancefile appends rows of the evolved schema (dataset field ids, dropped ids skipped)."""
    uri = str(tmp_path / "evolved.lance")
    lance.write_dataset(nested_table(20, version=version), uri, max_rows_per_file=8, data_storage_version=version)
    _EVOLUTIONS[evolution](uri)
    before = lance.dataset(uri).to_table()
    rows = before.slice(0, 6)
    lancefile.write_dataset(rows, uri, mode="append")
    assert_same_table(lance.dataset(uri).to_table(), _concat(before, rows), f"append after {evolution}")
    lance.dataset(uri).delete("id = 2")
    lance.dataset(uri).optimize.compact_files()
    assert_dataset_matches(uri, context=f"append after {evolution}")


def test_append_onto_v1_manifest_names(tmp_path):
    uri = str(tmp_path / "v1.lance")
    lance.write_dataset(simple_table(10), uri, enable_v2_manifest_paths=False)
    lancefile.write_dataset(simple_table(5, 10), uri, mode="append")
    names = sorted(p.name for p in manifest_paths(uri))
    assert names == ["1.manifest", "2.manifest"], names  # the directory keeps its naming scheme
    ref = lance.dataset(uri)
    assert ref.version == 2 and ref.count_rows() == 15
    lance.write_dataset(simple_table(1, 50), uri, mode="append")
    assert_dataset_matches(uri, context="v1 names")


def test_new_dataset_uses_v2_manifest_names(tmp_path):
    uri = str(tmp_path / "v2names.lance")
    lancefile.write_dataset(simple_table(3), uri)
    lancefile.write_dataset(simple_table(3, 3), uri, mode="append")
    names = sorted(p.name for p in manifest_paths(uri))
    assert names == [f"{2**64 - 1 - v:020d}.manifest" for v in (2, 1)], names
    hint = Path(uri) / "_versions" / "latest_version_hint.json"
    assert json.loads(hint.read_text()) == {"version": 2}


def test_append_onto_indexed_dataset(tmp_path):
    """pylance's BTREE index still answers right after lancefile's append (kept or dropped, not stale)."""
    uri = str(tmp_path / "idx.lance")
    lance.write_dataset(simple_table(100), uri, max_rows_per_file=40)
    lance.dataset(uri).create_scalar_index("id", "BTREE")
    lancefile.write_dataset(simple_table(20, 100), uri, mode="append")
    ref = lance.dataset(uri)
    for probe in (5, 99, 100, 119):
        got = ref.to_table(filter=f"id = {probe}")
        assert got.column("id").to_pylist() == [probe], (probe, got.column("id").to_pylist())
    assert ref.count_rows("id >= 90") == 30
    assert_dataset_matches(uri, context="indexed + lancefile append", all_versions=False)


def test_stale_pylance_writer_after_lancefile_commits(tmp_path):
    """A pylance handle opened before lancefile's commits rebases over them (reads their transactions)."""
    uri = str(tmp_path / "stale.lance")
    lancefile.write_dataset(simple_table(10), uri)
    stale = lance.dataset(uri)
    stale_for_delete = lance.dataset(uri)
    lancefile.write_dataset(simple_table(5, 10), uri, mode="append")
    lancefile.write_dataset(simple_table(5, 15), uri, mode="append")
    stale.insert(simple_table(2, 100))
    ref = lance.dataset(uri)
    assert ref.version == 4
    assert sorted(ref.to_table().column("id").to_pylist()) == list(range(20)) + [100, 101]
    stale_for_delete.delete("id = 3")
    assert lance.dataset(uri).count_rows() == 21
    assert_dataset_matches(uri, context="stale pylance writer")


@pytest.mark.parametrize("op", ["insert", "delete"])
def test_stale_pylance_writer_after_lancefile_overwrite(tmp_path, op):
    """pylance reads lancefile's Overwrite transaction and refuses a stale append/delete exactly as it does
    after its own overwrite."""
    messages = {}
    for who in ("pylance", "lancefile"):
        uri = str(tmp_path / f"{who}.lance")
        lancefile.write_dataset(simple_table(10), uri)
        stale = lance.dataset(uri)
        write = lance.write_dataset if who == "pylance" else lancefile.write_dataset
        write(simple_table(3, 50), uri, mode="overwrite")
        if op == "insert":
            msg = pylance_refuses(lambda: stale.insert(simple_table(2, 100)))  # noqa: B023
        else:
            msg = pylance_refuses(lambda: stale.delete("id = 1"))  # noqa: B023
        messages[who] = msg.split(",")[0]
        assert lance.dataset(uri).version == 2
        assert_same_table(lance.dataset(uri).to_table(), simple_table(3, 50), f"{who} overwrite kept")
    assert messages["lancefile"] == messages["pylance"]
    assert "ncompatible" in messages["pylance"]


@pytest.mark.parametrize("base,extra", [("2.2", "2.0"), ("2.0", "2.2"), ("2.2", "2.1")])
def test_append_with_other_data_storage_version(tmp_path, base, extra):
    """Either refused with a LanceError (dataset unchanged) or written so that pylance reads it."""
    uri = str(tmp_path / "mixver.lance")
    t1, t2 = simple_table(10), simple_table(4, 10)
    lancefile.write_dataset(t1, uri, data_storage_version=base)
    try:
        lancefile.write_dataset(t2, uri, mode="append", data_storage_version=extra)
    except lancefile.LanceError as exc:
        assert str(exc)
        _assert_unchanged(uri, 1, t1, "refused mixed-version append")
        return
    ref = lance.dataset(uri)
    assert ref.data_storage_version == base
    assert_same_table(ref.to_table(), _concat(t1, t2), "mixed-version append")
    lance.write_dataset(simple_table(2, 50), uri, mode="append")  # pylance accepts the flags it finds
    assert_dataset_matches(uri, context=f"mixed {base}+{extra}")


def _history(uri, kind):
    lance.write_dataset(simple_table(30), uri, max_rows_per_file=10)
    if kind == "delete_all":
        lance.dataset(uri).delete("id >= 0")
    elif kind == "compact":
        lance.dataset(uri).delete("id % 2 = 0")
        lance.dataset(uri).optimize.compact_files()
    elif kind == "restore":
        lance.write_dataset(simple_table(10, 30), uri, mode="append", max_rows_per_file=5)
        lance.dataset(uri, version=1).restore()
    elif kind == "overwrite":
        lance.write_dataset(simple_table(5, 30), uri, mode="overwrite")
    elif kind == "zero_rows":
        shutil.rmtree(uri)
        lance.write_dataset(simple_table(0), uri)
    elif kind == "drop_middle_fragment":
        lance.dataset(uri).delete("id >= 10 AND id < 20")


@pytest.mark.parametrize("kind", ["delete_all", "compact", "restore", "overwrite", "zero_rows",
                                  "drop_middle_fragment"])
def test_fragment_ids_like_pylance(tmp_path, kind):
    """The same append gives the same fragment ids (and the same table) as pylance's append."""
    lf, py = str(tmp_path / "lf.lance"), str(tmp_path / "py.lance")
    _history(lf, kind)
    shutil.copytree(lf, py)
    lancefile.write_dataset(simple_table(7, 100), lf, mode="append", max_rows_per_file=3)
    lance.write_dataset(simple_table(7, 100), py, mode="append", max_rows_per_file=3)
    got = [(f.fragment_id, f.physical_rows) for f in lance.dataset(lf).get_fragments()]
    want = [(f.fragment_id, f.physical_rows) for f in lance.dataset(py).get_fragments()]
    assert got == want
    assert_same_table(lance.dataset(lf).to_table(), lance.dataset(py).to_table(), f"append after {kind}")
    # pylance goes on from lancefile's version (duplicate ids would be refused here)
    lance.write_dataset(simple_table(2, 200), lf, mode="append")
    lance.dataset(lf).optimize.compact_files()
    assert_dataset_matches(lf, context=f"fragment ids after {kind}")


@pytest.mark.parametrize("kind", ["table", "batch", "empty_table"])
def test_overwrite_inputs(tmp_path, kind):
    uri = str(tmp_path / "ovi.lance")
    lancefile.write_dataset(simple_table(10), uri)
    new = simple_table(0 if kind == "empty_table" else 6, 50)
    data = new.to_batches()[0] if kind == "batch" else new
    lancefile.write_dataset(data, uri, mode="overwrite")
    ref = lance.dataset(uri)
    assert ref.version == 2
    assert_same_table(ref.to_table(), new, f"overwrite with {kind}")
    assert ref.count_rows() == new.num_rows
    lance.write_dataset(simple_table(1, 90), uri, mode="append")
    assert_dataset_matches(uri, context=f"overwrite with {kind}")


# --------------------------------------------------------------------------------------------
# Splitting and inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_rows", [1, 7, 300, 1000, 5000])
def test_max_rows_per_file_like_pylance(tmp_path, max_rows):
    t = simple_table({1: 12, 7: 100}.get(max_rows, 1000))
    batches = t.to_batches(max_chunksize=37)
    lancefile.write_dataset(pa.Table.from_batches(batches), str(tmp_path / "lf"), max_rows_per_file=max_rows)
    lance.write_dataset(pa.Table.from_batches(batches), str(tmp_path / "py"), max_rows_per_file=max_rows)
    got = [f.physical_rows for f in lance.dataset(str(tmp_path / "lf")).get_fragments()]
    want = [f.physical_rows for f in lance.dataset(str(tmp_path / "py")).get_fragments()]
    assert got == want
    assert len(lance.dataset(str(tmp_path / "lf")).get_fragments()) == -(-t.num_rows // max_rows)
    assert_same_table(lance.dataset(str(tmp_path / "lf")).to_table(), t, "split")


def test_input_kinds(tmp_path):
    t = simple_table(100)
    batches = t.to_batches(max_chunksize=16)
    assert len(batches) > 2

    reader = pa.RecordBatchReader.from_batches(t.schema, iter(batches))
    lancefile.write_dataset(reader, str(tmp_path / "reader"), max_rows_per_file=40)

    def gen():
        yield from batches

    lancefile.write_dataset(gen(), str(tmp_path / "gen"), schema=t.schema)
    lancefile.write_dataset(list(batches), str(tmp_path / "list"))
    lancefile.write_dataset(iter(batches), str(tmp_path / "iter_noschema"))
    lancefile.write_dataset(pa.Table.from_batches(batches[:3]), str(tmp_path / "mixed"))
    lancefile.write_dataset(pa.RecordBatchReader.from_batches(t.schema, iter(batches[3:])),
                            str(tmp_path / "mixed"), mode="append")
    for name in ["reader", "gen", "list", "iter_noschema", "mixed"]:
        ref = lance.dataset(str(tmp_path / name))
        assert_same_table(ref.to_table(), t, f"input {name}")
        assert_same_table(lancefile.dataset(str(tmp_path / name)).to_table(), t, f"input {name} (lancefile)")
    assert len(lance.dataset(str(tmp_path / "reader")).get_fragments()) == 3


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_sliced_and_chunked_input(tmp_path, version):
    """Arrays with offsets (slices), many chunks, empty batches in the stream."""
    t = nested_table(120, version=version)
    sliced = t.slice(17, 70)
    chunked = pa.concat_tables([t.slice(0, 10), t.slice(10, 0), t.slice(10, 45), t.slice(55, 65)])
    uri = str(tmp_path / "sliced.lance")
    lancefile.write_dataset(sliced, uri, max_rows_per_file=30, data_storage_version=version)
    lancefile.write_dataset(chunked, uri, mode="append")
    batches = [b for b in t.to_batches(max_chunksize=11)]
    batches.insert(3, batches[0].slice(0, 0))
    lancefile.write_dataset(iter(batches), uri, mode="append", schema=t.schema)
    assert_same_table(lance.dataset(uri).to_table(), _concat(sliced, chunked, t), "sliced + chunked")
    assert_dataset_matches(uri, context=f"sliced input {version}")


def test_schema_argument(tmp_path):
    """schema= with a generator; the dataset gets exactly that schema (and its metadata)."""
    schema = pa.schema([pa.field("a", pa.int32(), nullable=False),
                        pa.field("b", pa.string(), metadata={"note": "field metadata"})],
                       metadata={"origin": "lancefile-test"})

    def gen():
        for k in range(3):
            yield pa.record_batch([pa.array([k, k + 1], pa.int32()), pa.array(["x", None])], schema=schema)

    lancefile.write_dataset(gen(), str(tmp_path / "s"), schema=schema)
    ref = lance.dataset(str(tmp_path / "s"))
    assert_same_schema(ref.schema, schema, "schema=")
    assert ref.schema.field("a").nullable is False
    assert ref.schema.metadata == {b"origin": b"lancefile-test"}
    assert ref.schema.field("b").metadata == {b"note": b"field metadata"}
    assert ref.count_rows() == 6
    assert_dataset_matches(str(tmp_path / "s"), context="schema=")


def test_zero_rows(tmp_path):
    t0 = simple_table(0)
    uri = str(tmp_path / "zero.lance")
    ds = lancefile.write_dataset(t0, uri)
    assert ds.version == 1 and ds.count_rows() == 0
    ref = lance.dataset(uri)
    assert ref.count_rows() == 0
    assert_same_schema(ref.schema, t0.schema, "zero-row schema")
    lance.write_dataset(t0, str(tmp_path / "pyzero.lance"))
    assert len(ref.get_fragments()) == len(lance.dataset(str(tmp_path / "pyzero.lance")).get_fragments())
    assert_dataset_matches(uri, context="zero rows")

    # an empty generator with a schema, then rows, then an empty append
    uri2 = str(tmp_path / "zero2.lance")
    lancefile.write_dataset(iter([]), uri2, schema=t0.schema)
    lancefile.write_dataset(simple_table(5), uri2, mode="append")
    lancefile.write_dataset(simple_table(0), uri2, mode="append")
    assert lance.dataset(uri2).count_rows() == 5
    lance.write_dataset(simple_table(2, 5), uri2, mode="append")
    assert_dataset_matches(uri2, context="zero rows then rows")


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["type", "extra_column", "string_to_binary"])
def test_append_with_other_schema_is_refused(tmp_path, bad):
    uri = str(tmp_path / "schema.lance")
    t1 = simple_table(10)
    lancefile.write_dataset(t1, uri)
    other = {
        "type": t1.set_column(0, "id", t1.column("id").cast(pa.int32())),
        "extra_column": t1.append_column("z", pa.array(range(10), pa.int64())),
        "string_to_binary": t1.set_column(2, "s", pa.array([b"x"] * 10, pa.binary())),
    }[bad]
    # the oracle refuses it too
    py_uri = str(tmp_path / "py_schema.lance")
    lance.write_dataset(t1, py_uri)
    pylance_refuses(lambda: lance.write_dataset(other, py_uri, mode="append"))

    files_before = sorted(str(p.relative_to(uri)) for p in Path(uri).rglob("*.manifest"))
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.write_dataset(other, uri, mode="append")
    assert str(ei.value)
    _assert_unchanged(uri, 1, t1, f"refused append ({bad})")
    assert sorted(str(p.relative_to(uri)) for p in Path(uri).rglob("*.manifest")) == files_before
    assert_dataset_matches(uri, context="after refused append")


@pytest.mark.parametrize("change", ["reordered", "subset"])
def test_append_reordered_or_subset_columns(tmp_path, change):
    """pylance accepts these (a missing nullable column reads as nulls). lancefile must either do the
    same as pylance or refuse with a LanceError and leave the dataset unchanged."""
    t1 = simple_table(10)
    t2 = simple_table(4, 10)
    t2 = t2.select(["s", "b", "v", "id"]) if change == "reordered" else t2.select(["id", "s"])
    lf_uri, py_uri = str(tmp_path / "lf"), str(tmp_path / "py")
    lancefile.write_dataset(t1, lf_uri)
    lance.write_dataset(t1, py_uri)
    lance.write_dataset(t2, py_uri, mode="append")
    try:
        lancefile.write_dataset(t2, lf_uri, mode="append")
    except lancefile.LanceError as exc:
        assert str(exc)
        _assert_unchanged(lf_uri, 1, t1, f"refused {change} append")
        return
    assert_same_table(lance.dataset(lf_uri).to_table(), lance.dataset(py_uri).to_table(), f"{change} append")
    assert_dataset_matches(lf_uri, context=f"{change} append")


def test_create_on_existing_is_refused(tmp_path):
    uri = str(tmp_path / "exists.lance")
    t1 = simple_table(10)
    lancefile.write_dataset(t1, uri)
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.write_dataset(simple_table(3, 10), uri)  # mode="create" is the default
    assert str(ei.value)
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(simple_table(3, 10), uri, mode="create")
    _assert_unchanged(uri, 1, t1, "create on existing (lancefile's)")

    py_uri = str(tmp_path / "py_exists.lance")
    lance.write_dataset(t1, py_uri)
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(simple_table(3, 10), py_uri, mode="create")
    _assert_unchanged(py_uri, 1, t1, "create on existing (pylance's)")


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_append_or_overwrite_creates_missing_dataset(tmp_path, mode):
    uri = str(tmp_path / f"{mode}.lance")
    t = simple_table(12)
    ds = lancefile.write_dataset(t, uri, mode=mode)
    assert ds.version == 1
    ref = lance.dataset(uri)
    assert ref.version == 1
    assert_same_table(ref.to_table(), t, f"{mode} on missing")


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_overwrite_and_append_keep_data_storage_version(tmp_path, version):
    """Without data_storage_version, overwrite and append write the dataset's own format, as pylance does."""
    t = simple_table(6)
    for lib in ("pylance", "lancefile"):
        uri = str(tmp_path / f"{lib}.lance")
        lance.write_dataset(t, uri, data_storage_version=version)
        write = lance.write_dataset if lib == "pylance" else lancefile.write_dataset
        write(simple_table(3, 6), uri, mode="append")
        write(simple_table(4, 9), uri, mode="overwrite")
        write(simple_table(2, 13), uri, mode="append")
    for v in (2, 3, 4):
        want = lance.dataset(str(tmp_path / "pylance.lance"), version=v)
        got = lance.dataset(str(tmp_path / "lancefile.lance"), version=v)
        assert got.data_storage_version == want.data_storage_version, f"v{v}"
        files = lambda d: sorted({(f.file_major_version, f.file_minor_version)
                                  for fr in d.get_fragments() for f in fr.metadata.files})
        assert files(got) == files(want), f"v{v}: data file versions {files(got)}, pylance {files(want)}"
    assert want.data_storage_version == version  # the premise, from the oracle


def test_overwrite_changes_schema(tmp_path):
    uri = str(tmp_path / "ow.lance")
    t1 = simple_table(10)
    t2 = nested_table(6)
    lancefile.write_dataset(t1, uri)
    lancefile.write_dataset(t2, uri, mode="overwrite")
    assert_same_table(lance.dataset(uri).to_table(), t2, "overwritten")
    assert_same_table(lance.dataset(uri, version=1).to_table(), t1, "time travel to v1")
    lance.write_dataset(nested_table(2, 6), uri, mode="append")
    assert_dataset_matches(uri, context="overwrite changes schema")


# --------------------------------------------------------------------------------------------
# A write that fails midway
# --------------------------------------------------------------------------------------------


class _Boom(RuntimeError):
    pass


def _failing_batches(t: pa.Table, good: int = 2):
    for i, b in enumerate(t.to_batches(max_chunksize=10)):
        if i == good:
            raise _Boom("the source failed")
        yield b


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_failed_write_keeps_previous_version(tmp_path, mode):
    uri = str(tmp_path / "fail.lance")
    t1 = simple_table(25)
    lancefile.write_dataset(t1, uri)
    lance.dataset(uri).delete("id = 4")
    expected = lance.dataset(uri).to_table()
    with pytest.raises((_Boom, lancefile.LanceError)) as ei:
        # max_rows_per_file=10: two whole data files are written before the source fails
        lancefile.write_dataset(_failing_batches(simple_table(50, 100)), uri, mode=mode,
                                schema=t1.schema, max_rows_per_file=10)
    if isinstance(ei.value, lancefile.LanceError) and not isinstance(ei.value, _Boom):
        assert "failed" in str(ei.value) or isinstance(ei.value.__cause__, _Boom), str(ei.value)
    _assert_unchanged(uri, 2, expected, f"failed {mode}")
    # the dataset still takes commits from both libraries
    lancefile.write_dataset(simple_table(3, 300), uri, mode="append")
    lance.write_dataset(simple_table(3, 400), uri, mode="append")
    assert lance.dataset(uri).version == 4
    assert lance.dataset(uri).count_rows() == expected.num_rows + 6
    assert_dataset_matches(uri, context=f"after failed {mode}")


def test_failed_create_leaves_no_dataset(tmp_path):
    uri = str(tmp_path / "never.lance")
    t = simple_table(50)
    with pytest.raises((_Boom, lancefile.LanceError)):
        lancefile.write_dataset(_failing_batches(t), uri, schema=t.schema, max_rows_per_file=10)
    if (Path(uri) / "_versions").exists():
        assert not manifest_paths(uri), manifest_paths(uri)
    pylance_refuses(lambda: lance.dataset(uri))
    with pytest.raises(lancefile.LanceError):
        lancefile.dataset(uri)
    # and the path can still be created afterwards
    lancefile.write_dataset(t, uri)
    assert_same_table(lance.dataset(uri).to_table(), t, "create after failed create")


def _referenced_data_files(uri) -> set[str]:
    """Data files some version of the dataset uses (pylance's view)."""
    out = set()
    for v in lance.dataset(uri).versions():
        for fr in lance.dataset(uri, version=v["version"]).get_fragments():
            out.update(f.path for f in fr.metadata.files)
    return out


def _data_dir_files(uri) -> set[str]:
    d = Path(uri) / "data"
    return {p.name for p in d.iterdir()} if d.exists() else set()


def test_failed_write_removes_its_data_files(tmp_path):
    """write_dataset's documented promise: on failure the data files written for it are removed."""
    uri = str(tmp_path / "orphans.lance")
    t1 = simple_table(25)
    lancefile.write_dataset(t1, uri)
    with pytest.raises((_Boom, lancefile.LanceError)):
        lancefile.write_dataset(_failing_batches(simple_table(50, 100)), uri, mode="append",
                                schema=t1.schema, max_rows_per_file=10)
    assert _data_dir_files(uri) == _referenced_data_files(uri)


def test_a_failed_manifest_write_leaves_no_transaction_file(tmp_path, monkeypatch):
    """The transaction file is written before the manifest that names it: when the manifest
    cannot be written, nothing refers to it and it is removed with the data files."""
    from lancefile.datasets import write as write_mod

    uri = str(tmp_path / "txn.lance")
    t1 = simple_table(25)
    lancefile.write_dataset(t1, uri)
    before = set(os.listdir(os.path.join(uri, "_transactions")))

    def disk_full(*args, **kwargs):
        raise lancefile.LanceIOError("no space left on device")

    monkeypatch.setattr(write_mod, "commit_manifest_file", disk_full)
    with pytest.raises(lancefile.LanceIOError, match="no space"):
        lancefile.write_dataset(simple_table(10, 100), uri, mode="append")
    assert set(os.listdir(os.path.join(uri, "_transactions"))) == before
    assert _data_dir_files(uri) == _referenced_data_files(uri)
    assert lancefile.dataset(uri).to_table().equals(t1)


# --------------------------------------------------------------------------------------------
# Commit races made deterministic: another writer commits while lancefile consumes its input
# --------------------------------------------------------------------------------------------


def _interleaved(batches, action):
    """Yield ``batches``; run ``action`` (another writer's commit) after the first one."""
    for i, b in enumerate(batches):
        if i == 1:
            action()
        yield b


def _race(tmp_path, *, mode, action_name):
    uri = str(tmp_path / f"race-{mode}-{action_name}.lance")
    t1 = simple_table(30)
    lance.write_dataset(t1, uri, max_rows_per_file=10)
    mine = simple_table(20, 500)
    actions = {
        "pylance_append": lambda: lance.write_dataset(simple_table(5, 900), uri, mode="append"),
        "pylance_delete": lambda: lance.dataset(uri).delete("id < 3 OR id = 15"),
        "pylance_compact": lambda: lance.dataset(uri).optimize.compact_files(),
        "pylance_update": lambda: lance.dataset(uri).update({"s": "'u'"}, where="id = 7"),
        "pylance_index": lambda: lance.dataset(uri).create_scalar_index("id", "BTREE"),
        "lancefile_append": lambda: lancefile.write_dataset(simple_table(5, 900), uri, mode="append"),
        "pylance_overwrite": lambda: lance.write_dataset(simple_table(4, 700), uri, mode="overwrite"),
        "pylance_add_columns": lambda: lance.dataset(uri).add_columns({"z": "id + 1"}),
        "pylance_drop_columns": lambda: lance.dataset(uri).drop_columns(["v"]),
        "pylance_restore": lambda: lance.dataset(uri, version=1).restore(),
    }
    state = {}

    def action():
        actions[action_name]()
        state["other"] = lance.dataset(uri).version
        state["other_table"] = lance.dataset(uri).to_table()

    data = _interleaved(mine.to_batches(max_chunksize=5), action)
    try:
        ds = lancefile.write_dataset(data, uri, mode=mode, schema=mine.schema, max_rows_per_file=8)
    except lancefile.LanceError as exc:
        return uri, mine, state, None, exc
    return uri, mine, state, ds, None


@pytest.mark.parametrize("action_name", ["pylance_append", "pylance_delete", "pylance_compact", "pylance_update",
                                         "pylance_index", "lancefile_append"])
def test_append_rebases_over_compatible_commit(tmp_path, action_name):
    """pylance rebases an append over these; so does lancefile (it may also refuse with CommitConflictError,
    but then nothing of it may be visible)."""
    uri, mine, state, ds, exc = _race(tmp_path, mode="append", action_name=action_name)
    assert "other" in state, "the interleaved commit did not run"
    if exc is not None:
        pytest.fail(f"lancefile refused to rebase an append over {action_name}: {exc}")
    assert ds.version == state["other"] + 1
    ref = lance.dataset(uri)
    assert ref.version == state["other"] + 1
    assert_same_table(ref.to_table(), _concat(state["other_table"], mine), f"append rebased over {action_name}")
    if action_name == "pylance_index":
        assert ref.describe_indices()
        assert ref.to_table(filter="id = 505").column("id").to_pylist() == [505]
        assert ref.to_table(filter="id = 5").column("id").to_pylist() == [5]
    lance.write_dataset(simple_table(2, 3000), uri, mode="append")
    assert_dataset_matches(uri, context=f"append over {action_name}")


@pytest.mark.parametrize("action_name", ["pylance_overwrite", "pylance_add_columns", "pylance_drop_columns",
                                         "pylance_restore"])
def test_append_conflicts_with_incompatible_commit(tmp_path, action_name):
    """pylance refuses these too (DATASET-NOTES §5.2): CommitConflictError, the other writer's version stays."""
    uri, _mine, state, ds, exc = _race(tmp_path, mode="append", action_name=action_name)
    assert "other" in state, "the interleaved commit did not run"
    assert exc is not None, f"lancefile committed an append over {action_name} (version {ds.version})"
    assert isinstance(exc, lancefile.CommitConflictError), f"{type(exc).__name__}: {exc}"
    assert str(exc)
    ref = lance.dataset(uri)
    assert ref.version == state["other"]
    assert_same_table(ref.to_table(), state["other_table"], f"after conflict with {action_name}")
    assert lancefile.dataset(uri).version == state["other"]
    assert_same_table(lancefile.dataset(uri).to_table(), state["other_table"], "lancefile after conflict")
    assert _data_dir_files(uri) == _referenced_data_files(uri), "the refused append left data files behind"


@pytest.mark.parametrize("action_name", ["pylance_append", "pylance_delete", "pylance_add_columns"])
def test_overwrite_wins_over_concurrent_commit(tmp_path, action_name):
    """An overwrite does not depend on what it read: it commits on top (or refuses cleanly)."""
    uri, mine, state, _ds, exc = _race(tmp_path, mode="overwrite", action_name=action_name)
    assert "other" in state
    ref = lance.dataset(uri)
    if exc is not None:
        assert ref.version == state["other"]
        assert_same_table(ref.to_table(), state["other_table"], "overwrite refused")
        return
    assert ref.version == state["other"] + 1
    assert_same_table(ref.to_table(), mine, f"overwrite over {action_name}")
    assert_dataset_matches(uri, context=f"overwrite over {action_name}")


def test_create_races_with_another_create(tmp_path):
    uri = str(tmp_path / "race-create.lance")
    theirs = simple_table(3, 800)

    def action():
        lance.write_dataset(theirs, uri)

    mine = simple_table(20)
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.write_dataset(_interleaved(mine.to_batches(max_chunksize=5), action), uri, schema=mine.schema)
    assert str(ei.value)
    ref = lance.dataset(uri)
    assert ref.version == 1
    assert_same_table(ref.to_table(), theirs, "the other create wins")
    assert_same_table(lancefile.dataset(uri).to_table(), theirs, "lancefile sees the other create")


# --------------------------------------------------------------------------------------------
# Features lancefile must keep or refuse
# --------------------------------------------------------------------------------------------


def test_append_to_stable_row_id_dataset(tmp_path):
    """Stable row ids need row-id sequences in every fragment: refuse cleanly, or write them right."""
    uri = str(tmp_path / "rowids.lance")
    t1 = simple_table(10)
    lance.write_dataset(t1, uri, enable_stable_row_ids=True)
    try:
        lancefile.write_dataset(simple_table(4, 10), uri, mode="append")
    except lancefile.LanceError as exc:
        assert str(exc)
        _assert_unchanged(uri, 1, t1, "refused append to a stable-row-id dataset")
        return
    lance.dataset(uri).delete("id = 11")
    lance.write_dataset(simple_table(2, 50), uri, mode="append")
    assert lance.dataset(uri).count_rows() == 15
    assert_dataset_matches(uri, context="stable row ids + lancefile append")


def test_append_keeps_config_and_schema_metadata(tmp_path):
    uri = str(tmp_path / "cfg.lance")
    t1 = simple_table(5).replace_schema_metadata({"owner": "me"})
    lance.write_dataset(t1, uri)
    lance.dataset(uri).update_config({"k": "v"})
    lancefile.write_dataset(simple_table(3, 5), uri, mode="append")
    ref = lance.dataset(uri)
    assert ref.config() == {"k": "v"}
    assert ref.schema.metadata == {b"owner": b"me"}
    assert ref.count_rows() == 8
    assert_dataset_matches(uri, context="config kept")


def test_nulls_in_non_nullable_column_refused(tmp_path):
    uri = str(tmp_path / "nonnull.lance")
    schema = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string())])
    t1 = pa.table({"a": [1, 2], "b": ["x", None]}, schema=schema)
    lancefile.write_dataset(t1, uri)
    bad = pa.table({"a": pa.array([3, None], pa.int64()), "b": ["y", "z"]})
    lance.write_dataset(t1, str(tmp_path / "py"))
    # the oracle refuses it as well
    pylance_refuses(lambda: lance.write_dataset(bad, str(tmp_path / "py"), mode="append"))
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(bad, uri, mode="append")
    _assert_unchanged(uri, 1, t1, "nulls into a non-nullable column")
    assert _data_dir_files(uri) == _referenced_data_files(uri)


# --------------------------------------------------------------------------------------------
# Concurrent appends from several processes
# --------------------------------------------------------------------------------------------

_LF_WORKER = textwrap.dedent("""
    import json, os, sys, time
    import pyarrow as pa
    import lancefile
    uri, wid, n, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    # warm up (lazy imports, compiled kernels) on a scratch dataset, so the real appends overlap
    warm = pa.table({"id": pa.array([wid * 7, 3, 100001], pa.int64()), "w": pa.array([wid] * 3, pa.int64())})
    lancefile.write_dataset(warm, f"{go}-warm-{wid}")
    lancefile.write_dataset(warm, f"{go}-warm-{wid}", mode="append")
    lancefile.dataset(f"{go}-warm-{wid}").to_table()
    open(f"{go}-ready-{wid}", "w").close()
    while not os.path.exists(go):
        time.sleep(0.001)
    out = []
    for i in range(n):
        ids = [wid * 100000 + i * 10 + k for k in range(3)]
        t = pa.table({"id": pa.array(ids, pa.int64()), "w": pa.array([wid] * 3, pa.int64())})
        t0 = time.time()
        try:
            lancefile.write_dataset(t, uri, mode="append")
            out.append({"ok": True, "ids": ids, "t": [t0, time.time()]})
        except lancefile.CommitConflictError as e:
            out.append({"ok": False, "kind": "conflict", "type": type(e).__name__, "msg": str(e)})
        except lancefile.LanceError as e:
            out.append({"ok": False, "kind": "lance", "type": type(e).__name__, "msg": str(e)})
        except BaseException as e:
            out.append({"ok": False, "kind": "raw", "type": type(e).__name__, "msg": repr(e)})
    print(json.dumps(out))
""")

_PY_WORKER = textwrap.dedent("""
    import json, os, sys, time
    import pyarrow as pa
    import lance
    uri, wid, n, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    warm = pa.table({"id": pa.array([wid * 7, 3, 100001], pa.int64()), "w": pa.array([wid] * 3, pa.int64())})
    lance.write_dataset(warm, f"{go}-warm-{wid}")
    lance.write_dataset(warm, f"{go}-warm-{wid}", mode="append")
    open(f"{go}-ready-{wid}", "w").close()
    while not os.path.exists(go):
        time.sleep(0.001)
    out = []
    for i in range(n):
        ids = [wid * 100000 + i * 10 + k for k in range(3)]
        t = pa.table({"id": pa.array(ids, pa.int64()), "w": pa.array([wid] * 3, pa.int64())})
        t0 = time.time()
        try:
            lance.write_dataset(t, uri, mode="append")
            out.append({"ok": True, "ids": ids, "t": [t0, time.time()]})
        except BaseException as e:
            out.append({"ok": False, "kind": "pylance", "type": type(e).__name__, "msg": str(e)})
    print(json.dumps(out))
""")


def _run_workers(tmp_path, uri, workers: list[str], n: int) -> list[list[dict]]:
    env = dict(os.environ)
    # the workers import the same lancefile as this process
    env["PYTHONPATH"] = os.pathsep.join([str(Path(lancefile.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    go = str(tmp_path / "go")
    procs = [subprocess.Popen([sys.executable, "-c", code, uri, str(wid), str(n), go], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for wid, code in enumerate(workers, start=1)]
    deadline = time.monotonic() + 60  # all workers warmed up (or one died), then go
    while time.monotonic() < deadline and not all(
            Path(f"{go}-ready-{wid}").exists() or p.poll() is not None for wid, p in enumerate(procs, start=1)):
        time.sleep(0.02)
    Path(go).touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, f"worker failed:\n{err}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _overlapping_appends(results) -> int:
    """How many pairs of successful appends from different workers ran at the same time."""
    spans = [(w, r["t"]) for w, res in enumerate(results) for r in res if r["ok"]]
    return sum(1 for i, (wa, a) in enumerate(spans) for wb, b in spans[i + 1:]
               if wa != wb and a[0] < b[1] and b[0] < a[1])


def _check_concurrent_result(uri, results, start_rows: int, context: str) -> None:
    ok_ids = sorted(i for res in results for r in res if r["ok"] for i in r["ids"])
    failures = [r for res in results for r in res if not r["ok"]]
    for f in failures:
        assert f["kind"] in ("conflict", "lance"), f"{context}: an append failed with a raw exception: {f}"
        assert f["msg"].strip(), f"{context}: empty error message: {f}"
        if f["kind"] == "lance":  # a LanceError that is not CommitConflictError must still say what happened
            assert any(w in f["msg"].lower() for w in ("conflict", "concurrent", "version", "commit")), f
    expected_rows = start_rows + len(ok_ids)
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    assert ref.count_rows() == expected_rows, f"{context}: pylance counts {ref.count_rows()}, want {expected_rows}"
    assert ds.count_rows() == expected_rows, f"{context}: lancefile counts {ds.count_rows()}, want {expected_rows}"
    got_ids = sorted(i for i in ref.to_table(columns=["id"]).column("id").to_pylist() if i >= 100000)
    assert got_ids == ok_ids, f"{context}: rows in the dataset differ from the appends that reported success"
    frag_ids = [f.fragment_id for f in ref.get_fragments()]
    assert len(frag_ids) == len(set(frag_ids)), f"{context}: duplicate fragment ids {frag_ids}"
    # every successful append is one version
    n_ok = sum(1 for res in results for r in res if r["ok"])
    assert ref.version == 1 + n_ok, f"{context}: version {ref.version}, {n_ok} successful appends"
    # the result still takes a pylance commit and reads the same in both libraries
    lance.write_dataset(pa.table({"id": pa.array([7], pa.int64()), "w": pa.array([0], pa.int64())}), uri,
                        mode="append")
    assert_dataset_matches(uri, context=context, all_versions=False)


def test_concurrent_lancefile_appends(tmp_path):
    uri = str(tmp_path / "conc.lance")
    lancefile.write_dataset(pa.table({"id": pa.array([0, 1], pa.int64()), "w": pa.array([0, 0], pa.int64())}), uri)
    results = _run_workers(tmp_path, uri, [_LF_WORKER] * 3, n=6)
    _check_concurrent_result(uri, results, 2, "3 lancefile writers")
    assert sum(r["ok"] for res in results for r in res) > 0
    assert _overlapping_appends(results) > 0, "the workers never wrote at the same time: nothing was tested"


def test_concurrent_lancefile_and_pylance_appends(tmp_path):
    uri = str(tmp_path / "conc_mixed.lance")
    lance.write_dataset(pa.table({"id": pa.array([0, 1], pa.int64()), "w": pa.array([0, 0], pa.int64())}), uri)
    results = _run_workers(tmp_path, uri, [_LF_WORKER, _PY_WORKER], n=8)
    py_results = results[1]
    # pylance rebases its appends over lancefile's commits (it reads lancefile's transactions)
    assert all(r["ok"] for r in py_results), [r for r in py_results if not r["ok"]][:3]
    _check_concurrent_result(uri, results, 2, "lancefile + pylance writers")
    assert _overlapping_appends(results) > 0, "the workers never wrote at the same time: nothing was tested"


def test_a_failed_create_leaves_no_empty_folders(tmp_path):
    """A create that fails (the caller's batches raise) removes its data files and the folders
    it made; a folder that was there before stays, and so does anything in it."""
    schema = pa.schema([("x", pa.int64())])

    def failing():
        yield pa.record_batch([pa.array([1, 2])], schema=schema)
        raise KeyError("caller failed")

    uri = tmp_path / "new" / "ds"
    (tmp_path / "new").mkdir()
    with pytest.raises(KeyError):
        lancefile.write_dataset(pa.RecordBatchReader.from_batches(schema, failing()), uri)
    assert os.listdir(tmp_path / "new") == []
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    with pytest.raises(KeyError):
        lancefile.write_dataset(pa.RecordBatchReader.from_batches(schema, failing()), tmp_path / "kept")
    assert os.listdir(tmp_path / "kept") == ["notes.txt"]
    lancefile.write_dataset(pa.table({"x": [5]}), uri)  # and the create can be made again
    assert lancefile.dataset(uri).to_table().column("x").to_pylist() == [5]


def test_filters_and_empty_takes_over_a_fixed_shape_tensor_column(tmp_path):
    """A fixed_shape_tensor with a permutation (what FixedShapeTensorArray.from_numpy_ndarray
    makes) cannot be built empty by Schema.empty_table(): every filter, filtered count, delete
    and take([]) of a dataset holding one raised its NotImplementedError (found by a helper's
    dataset hunt)."""
    n = 10
    tensors = pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(n * 4, dtype=np.float32).reshape(n, 2, 2))
    table = pa.table({"id": pa.array(range(n), pa.int64()), "tensor": tensors})
    uri = tmp_path / "ds"
    lancefile.write_dataset(table, uri)
    ds = lancefile.dataset(uri)
    assert ds.to_table(filter="id > 5").equals(table.slice(6))
    assert ds.count_rows(filter="id > 5") == 4
    empty = ds.take([])
    assert empty.num_rows == 0 and empty.schema == table.schema
    assert lancefile.dataset(uri).delete("id > 5").to_table().equals(table.slice(0, 6))


def test_an_append_rebases_over_a_concurrent_append_of_a_dictionary_column(tmp_path):
    """pylance writes an empty ``dictionary {}`` on a manifest's dictionary fields, which
    lancefile's schema does not carry: a lancefile append racing a pylance append on such a
    dataset saw 'the schema changed' and gave up with CommitConflictError (found by a helper's
    dataset hunt). It now rebases, as over any append."""
    import lance

    from lancefile.datasets.write import commit_fragments, plan_write, write_fragments

    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "d": pa.array(["a", "b", "a"]).dictionary_encode()})
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri, data_storage_version="2.0")
    plan = plan_write(uri, table.schema, mode="append")
    fragments = write_fragments(plan, table.to_batches())
    lance.write_dataset(table, uri, mode="append")  # another writer commits version 2 first
    assert commit_fragments(plan, fragments).version == 3
    assert lance.dataset(uri).count_rows() == 9 and lancefile.dataset(uri).count_rows() == 9
    assert lancefile.dataset(uri).to_table().equals(lance.dataset(uri).to_table())


def test_appends_may_differ_in_nullability_at_any_depth(tmp_path):
    """An append may differ from the dataset in nullability inside a struct as at the top, as
    pylance allows (found by a helper's dataset hunt): struct<a: int32> is appended to
    struct<a: int32 not null>. A null where the dataset allows none is refused, and nothing
    is committed."""
    import lance

    st = pa.struct([pa.field("a", pa.int32(), nullable=False)])
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("st", st)])
    table = pa.table({"id": pa.array([1, 2], pa.int64()), "st": pa.array([{"a": 1}, {"a": 2}], st)}, schema=schema)
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri)
    loose = pa.struct([pa.field("a", pa.int32())])
    more = pa.table({"id": pa.array([3], pa.int64()), "st": pa.array([{"a": 3}], loose)})
    lancefile.write_dataset(more, uri, mode="append")
    assert lance.dataset(uri).to_table()["st"].to_pylist() == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert lancefile.dataset(uri).schema == lance.dataset(uri).schema
    bad = pa.table({"id": pa.array([4], pa.int64()), "st": pa.array([{"a": None}], loose)})
    with pytest.raises(lancefile.InvalidInputError, match="cannot append column 'st'"):
        lancefile.write_dataset(bad, uri, mode="append")
    assert lancefile.dataset(uri).version == 2 and lance.dataset(uri).count_rows() == 3
    other = pa.table({"id": pa.array([5], pa.int64()), "st": pa.array([{"a": 5}], pa.struct([("a", pa.int64())]))})
    with pytest.raises(lancefile.SchemaMismatchError):
        lancefile.write_dataset(other, uri, mode="append")
