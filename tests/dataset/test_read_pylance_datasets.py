"""lancefile reads Lance datasets that pylance 14.0.2 wrote.

Each scenario builds a small dataset with pylance (create at 2.0 / 2.1 / 2.2, several fragments, then
append / overwrite / delete / update / add_columns / merge / drop_columns / alter_columns /
compact_files / create_scalar_index / restore / tags / V1 manifest names / mixed data-file versions /
nested types / zero rows), checks with pylance alone that the scenario really produced what it is
about (a `.bin` deletion file, a second data file per fragment, flag 256...), then compares
everything lancefile exposes with pylance (``assert_dataset_matches``: versions, latest version,
batches, projection, take of live-row positions, fragments, and every version by time travel).
"""

from __future__ import annotations

import json
import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.dataset.conftest import (
    assert_dataset_matches,
    assert_same_schema,
    assert_same_table,
    decode_manifest,
    deletion_files,
    latest_manifest,
    manifest_paths,
    more_types_table,
    nested_table,
    reencode_manifest,
    simple_table,
)

lance = pytest.importorskip("lance")
import lancefile

pytestmark = pytest.mark.interop

VERSIONS = ["2.0", "2.1", "2.2"]


def _frag_files(uri) -> list[list]:
    return [f.metadata.files for f in lance.dataset(str(uri)).get_fragments()]


def _manifest_flags(uri) -> tuple[int, int]:
    """(reader, writer) feature flags of the latest manifest, decoded with lancefile's proto module."""
    _, m = decode_manifest(latest_manifest(uri).read_bytes())
    return m.reader_feature_flags, m.writer_feature_flags


# --------------------------------------------------------------------------------------------
# Scenarios: each builds a dataset with pylance at `uri` and checks its own premise
# --------------------------------------------------------------------------------------------


def sc_create(version):
    def build(uri):
        lance.write_dataset(simple_table(100), uri, max_rows_per_file=40, data_storage_version=version)
        assert len(lance.dataset(uri).get_fragments()) == 3
        assert lance.dataset(uri).data_storage_version == version
    return build


def sc_append(version):
    def build(uri):
        lance.write_dataset(simple_table(50), uri, max_rows_per_file=20, data_storage_version=version)
        lance.write_dataset(simple_table(30, 50), uri, mode="append")
        lance.write_dataset(simple_table(5, 80), uri, mode="append", max_rows_per_file=2)
        assert len(lance.dataset(uri).versions()) == 3
    return build


def sc_overwrite(version):
    def build(uri):
        lance.write_dataset(simple_table(30), uri, max_rows_per_file=20, data_storage_version=version)
        lance.write_dataset(simple_table(10, 30), uri, mode="append")
        # overwrite with another schema; time travel must give the old schema back
        other = pa.table({"k": pa.array(["a", "b", None, "d"]), "n": pa.array([1.5, None, 3.0, 4.0])})
        lance.write_dataset(other, uri, mode="overwrite")
        lance.write_dataset(simple_table(7, 100), uri, mode="overwrite")
        ds = lance.dataset(uri)
        assert ds.get_fragments()[0].fragment_id > 0  # overwrite keeps counting fragment ids
    return build


def sc_delete_small(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(200), uri, max_rows_per_file=64, data_storage_version=version)
        ds.delete("id % 7 = 3 OR id = 0 OR id = 63 OR id = 64")
        assert any(n.endswith(".arrow") for n in deletion_files(uri))
        assert not any(n.endswith(".bin") for n in deletion_files(uri))
    return build


def sc_delete_bitmap(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(6000), uri, max_rows_per_file=5600, data_storage_version=version)
        ds.delete("id >= 100 AND id < 5200")  # 5100 rows of fragment 0 -> roaring bitmap
        assert any(n.endswith(".bin") for n in deletion_files(uri)), deletion_files(uri)
        ds = lance.dataset(uri)
        ds.delete("id = 7 OR id = 5599 OR id = 5600")  # second delete on the same fragment (+ fragment 1)
        bins = [n for n in deletion_files(uri) if n.startswith("0-") and n.endswith(".bin")]
        assert len(bins) == 2, deletion_files(uri)
    return build


def sc_delete_twice(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(60), uri, max_rows_per_file=25, data_storage_version=version)
        ds.delete("id IN (1, 3, 5, 30)")
        ds = lance.dataset(uri)
        ds.delete("id IN (2, 4, 24, 26, 59)")
        arrows = [n for n in deletion_files(uri) if n.startswith("0-") and n.endswith(".arrow")]
        assert len(arrows) == 2, deletion_files(uri)
        assert lance.dataset(uri).count_rows() == 51
    return build


def sc_delete_whole_fragment(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(60), uri, max_rows_per_file=20, data_storage_version=version)
        ds.delete("id >= 20 AND id < 40")  # fragment 1 disappears
        ds = lance.dataset(uri)
        assert [f.fragment_id for f in ds.get_fragments()] == [0, 2]
        ds.delete("id < 10")
        ds = lance.dataset(uri)
        ds.delete("id >= 0")  # everything: zero fragments left
        assert lance.dataset(uri).count_rows() == 0
        lance.write_dataset(simple_table(5, 500), uri, mode="append")
    return build


def sc_update(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(80), uri, max_rows_per_file=30, data_storage_version=version)
        ds.update({"s": "'updated'", "v": "v * 2"}, where="id % 9 = 1")
        ds = lance.dataset(uri)
        ds.update({"b": "NOT b"}, where="id > 70")
        assert len(lance.dataset(uri).get_fragments()) > 3  # update writes new fragments
    return build


def sc_add_columns_sql(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(90), uri, max_rows_per_file=40, data_storage_version=version)
        ds.delete("id % 10 = 5")
        ds = lance.dataset(uri)
        ds.add_columns({"x2": "id * 2", "label": "concat('L', CAST(id AS STRING))"})
        assert all(len(files) == 2 for files in _frag_files(uri))
        lance.write_dataset(lance.dataset(uri).to_table().slice(0, 12), uri, mode="append")
    return build


def sc_add_null_column_then_old_append(version):
    """A metadata-only all-null column, then an append with the old schema: the new column is null."""
    def build(uri):
        ds = lance.write_dataset(simple_table(30), uri, max_rows_per_file=20, data_storage_version=version)
        ds.add_columns(pa.field("extra", pa.int64()))
        assert all(len(files) == 1 for files in _frag_files(uri))  # no data file for `extra`
        lance.write_dataset(simple_table(10, 30), uri, mode="append")  # old schema, accepted by pylance
        ds = lance.dataset(uri)
        ds.add_columns({"y": "id + 1"})
        t = lance.dataset(uri).to_table()
        assert t.column("extra").null_count == t.num_rows
    return build


def sc_merge(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(40), uri, max_rows_per_file=15, data_storage_version=version)
        right = pa.table({"id": pa.array([1, 2, 3, 17, 33, 39], pa.int64()),
                          "m": pa.array(["a", None, "c", "d", "e", "f"]),
                          "mf": pa.array([1.0, 2.0, None, 4.0, 5.0, 6.0], pa.float32())})
        ds.merge(right, "id")
        assert all(len(files) == 2 for files in _frag_files(uri))
    return build


def sc_drop_columns(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(40), uri, max_rows_per_file=15, data_storage_version=version)
        ds.drop_columns(["v"])
        ds = lance.dataset(uri)
        ds.add_columns({"w": "id * 3"})  # gets a new field id; the old file still lists the dropped one
        ds = lance.dataset(uri)
        ds.drop_columns(["s"])
        assert lance.dataset(uri).schema.names == ["id", "b", "w"]
    return build


def sc_alter_rename(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(40), uri, max_rows_per_file=15, data_storage_version=version)
        ds.alter_columns({"path": "s", "name": "renamed"}, {"path": "v", "name": "v2", "nullable": True})
        lance.write_dataset(simple_table(5, 40).rename_columns(["id", "v2", "renamed", "b"]), uri, mode="append")
        assert lance.dataset(uri).schema.names == ["id", "v2", "renamed", "b"]
    return build


def sc_compact(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(60), uri, max_rows_per_file=10, data_storage_version=version)
        for k in range(3):
            lance.write_dataset(simple_table(4, 100 + 4 * k), uri, mode="append")
        ds = lance.dataset(uri)
        ds.delete("id % 4 = 1")
        before = lance.dataset(uri).version
        lance.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000)
        ds = lance.dataset(uri)
        assert ds.version == before + 2  # reserve_fragments + rewrite
        assert len(ds.get_fragments()) == 1
        assert not any(f.metadata.deletion_file for f in ds.get_fragments())
        ds.delete("id = 2")
    return build


def sc_scalar_index(version):
    def build(uri):
        ds = lance.write_dataset(simple_table(50), uri, max_rows_per_file=20, data_storage_version=version)
        ds.create_scalar_index("id", "BTREE")
        assert (Path(uri) / "_indices").is_dir()
        lance.write_dataset(simple_table(10, 50), uri, mode="append")
        ds = lance.dataset(uri)
        ds.delete("id = 3")
        assert lance.dataset(uri).describe_indices()
    return build


def sc_restore(version):
    def build(uri):
        lance.write_dataset(simple_table(20), uri, data_storage_version=version)
        lance.write_dataset(simple_table(5, 20), uri, mode="append")
        lance.dataset(uri).delete("id < 3")
        lance.dataset(uri, version=2).restore()  # v4 = content of v2
        lance.write_dataset(simple_table(2, 90), uri, mode="append")
        assert lance.dataset(uri).count_rows() == 27
    return build


def sc_tags(version):
    def build(uri):
        lance.write_dataset(simple_table(20), uri, data_storage_version=version)
        lance.write_dataset(simple_table(5, 20), uri, mode="append")
        ds = lance.dataset(uri)
        ds.tags.create("first", 1)
        ds.tags.create("second", 2)
        assert (Path(uri) / "_refs" / "tags").is_dir()
        lance.dataset(uri).delete("id = 1")
    return build


def sc_v1_manifest_names(version):
    def build(uri):
        lance.write_dataset(simple_table(30), uri, max_rows_per_file=12, data_storage_version=version,
                            enable_v2_manifest_paths=False)
        lance.write_dataset(simple_table(6, 30), uri, mode="append")
        lance.dataset(uri).delete("id % 5 = 0")
        names = [p.name for p in manifest_paths(uri)]
        assert sorted(names) == ["1.manifest", "2.manifest", "3.manifest"], names
    return build


def sc_mixed_file_versions(base, extra):
    def build(uri):
        lance.write_dataset(simple_table(30), uri, max_rows_per_file=20, data_storage_version=base)
        lance.write_dataset(simple_table(10, 30), uri, mode="append", data_storage_version=extra)
        ds = lance.dataset(uri)
        assert ds.data_storage_version == base
        minors = {(f.file_major_version, f.file_minor_version) for files in _frag_files(uri) for f in files}
        assert len(minors) == 2, minors
        ds.delete("id = 31 OR id = 2")
    return build


def sc_mixed_then_compact(base, extra):
    def build(uri):
        sc_mixed_file_versions(base, extra)(uri)
        lance.dataset(uri).optimize.compact_files()
        lance.write_dataset(simple_table(3, 70), uri, mode="append")
    return build


def sc_nested(version):
    def build(uri):
        lance.write_dataset(nested_table(120, version=version), uri, max_rows_per_file=50,
                            data_storage_version=version)
        lance.write_dataset(nested_table(30, 120, version=version), uri, mode="append")
        lance.dataset(uri).delete("id % 11 = 4")
    return build


def sc_strings_nulls(version):
    def build(uri):
        n = 300
        rng = np.random.default_rng(5)
        words = ["", "alpha", "beta", "γάμμα", "x" * 300, None]
        t = pa.table({
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "short": pa.array([words[i] for i in rng.integers(0, len(words), n)], pa.string()),
            "long": pa.array([None if i % 13 == 0 else f"long text {i} " * (i % 40) for i in range(n)]),
            "bin": pa.array([None if i % 3 == 0 else bytes([i % 256]) * (i % 7) for i in range(n)], pa.binary()),
            "allnull": pa.array([None] * n, pa.int32()),
            "cat": pa.array([["red", "green", "blue"][i % 3] for i in range(n)]),
            "ts": pa.array(np.arange(n, dtype=np.int64) * 1_000_000, pa.timestamp("us")),
            "i8": pa.array(rng.integers(-128, 127, n).astype(np.int8), mask=rng.random(n) < 0.2),
        })
        lance.write_dataset(t, uri, max_rows_per_file=128, data_storage_version=version)
        lance.dataset(uri).delete("id % 17 = 0")
    return build


def sc_zero_rows(version):
    def build(uri):
        lance.write_dataset(simple_table(0), uri, data_storage_version=version)
        assert not (Path(uri) / "data").exists()
        lance.write_dataset(simple_table(4), uri, mode="append")
        lance.write_dataset(simple_table(0, 50), uri, mode="append")
    return build


def sc_metadata(version):
    def build(uri):
        schema = pa.schema([pa.field("id", pa.int64(), metadata={"unit": "count"}),
                            pa.field("s", pa.string(), metadata={"lang": "en", "x": ""}),
                            pa.field("req", pa.int32(), nullable=False)],
                           metadata={"owner": "tests", "version-note": "1"})
        t = pa.table({"id": np.arange(20, dtype=np.int64), "s": [f"m{i}" for i in range(20)],
                      "req": pa.array(range(20), pa.int32())}, schema=schema)
        lance.write_dataset(t, uri, max_rows_per_file=8, data_storage_version=version)
        lance.dataset(uri).delete("id = 9")
        assert lance.dataset(uri).schema.metadata == {b"owner": b"tests", b"version-note": b"1"}
    return build


def sc_stable_row_ids(version):
    def build(uri):
        lance.write_dataset(simple_table(40), uri, max_rows_per_file=15, data_storage_version=version,
                            enable_stable_row_ids=True)
        lance.dataset(uri).delete("id % 6 = 2")
        lance.dataset(uri).update({"s": "'moved'"}, where="id < 4")
        lance.write_dataset(simple_table(5, 40), uri, mode="append")
        assert all(f.metadata.row_id_meta is not None for f in lance.dataset(uri).get_fragments())
    return build


def sc_more_types(version):
    def build(uri):
        lance.write_dataset(more_types_table(60, version=version), uri, max_rows_per_file=25,
                            data_storage_version=version)
        lance.write_dataset(more_types_table(10, 60, version=version), uri, mode="append")
        lance.dataset(uri).delete("id % 8 = 5")
    return build


def sc_branch(version):
    def build(uri):
        lance.write_dataset(simple_table(20), uri, data_storage_version=version)
        lance.write_dataset(simple_table(5, 20), uri, mode="append")
        branch = lance.dataset(uri).create_branch("dev", 1)
        branch.insert(simple_table(3, 500))
        lance.write_dataset(simple_table(4, 40), uri, mode="append")
        assert (Path(uri) / "tree" / "dev" / "_versions").is_dir()
        assert lance.dataset(uri).count_rows() == 29
    return build


def sc_nested_evolution(version, steps):
    """Schema changes inside nested fields: drop a struct child, rename a struct child (possibly to the
    dropped sibling's name), drop / rename a child of a list<struct>, cast a struct child."""
    def build(uri):
        lance.write_dataset(nested_table(40, version=version), uri, max_rows_per_file=16, data_storage_version=version)
        for step in steps:
            ds = lance.dataset(uri)
            kind, path, *arg = step
            if kind == "drop":
                ds.drop_columns([path])
            elif kind == "rename":
                ds.alter_columns({"path": path, "name": arg[0]})
            else:
                ds.alter_columns({"path": path, "data_type": arg[0]})
        lance.write_dataset(lance.dataset(uri).to_table().slice(0, 5), uri, mode="append")
        lance.dataset(uri).delete("id = 3")
        assert lance.dataset(uri).count_rows() == 43  # 40 + 5 appended copies of ids 0..4, minus both id 3
    return build


NESTED_EVOLUTIONS = {
    "drop_struct_child": [("drop", "st.a")],
    "rename_struct_child": [("rename", "st.t", "tt")],
    "drop_then_rename_struct_child": [("drop", "st.a"), ("rename", "st.t", "tt")],
    "rename_into_dropped_name": [("drop", "st.a"), ("rename", "st.t", "a")],
    "drop_second_rename_first": [("drop", "st.t"), ("rename", "st.a", "t")],
    "drop_list_struct_child": [("drop", "ls.item.x")],
    "drop_then_rename_list_struct_child": [("drop", "ls.item.x"), ("rename", "ls.item.y", "x")],
    "drop_whole_struct": [("drop", "st")],
}


def sc_top_level_reuse_dropped_name(version):
    def build(uri):
        lance.write_dataset(simple_table(20), uri, max_rows_per_file=8, data_storage_version=version)
        lance.dataset(uri).drop_columns(["v"])
        lance.dataset(uri).alter_columns({"path": "s", "name": "v"})
        lance.dataset(uri).add_columns({"s": "id * 10"})
        assert lance.dataset(uri).schema.names == ["id", "v", "b", "s"]
    return build


SCENARIOS: dict[str, Callable[[str], None]] = {}
for _v in VERSIONS:
    for _name, _mk in [("create", sc_create), ("append", sc_append), ("overwrite", sc_overwrite),
                       ("delete_small", sc_delete_small), ("delete_twice", sc_delete_twice),
                       ("delete_whole_fragment", sc_delete_whole_fragment), ("update", sc_update),
                       ("add_columns_sql", sc_add_columns_sql), ("merge", sc_merge),
                       ("nested", sc_nested), ("strings_nulls", sc_strings_nulls), ("zero_rows", sc_zero_rows),
                       ("metadata", sc_metadata), ("more_types", sc_more_types)]:
        SCENARIOS[f"{_name}-{_v}"] = _mk(_v)
for _v in ["2.0", "2.2"]:
    for _name, _mk in [("delete_bitmap", sc_delete_bitmap), ("add_null_column_then_old_append",
                                                               sc_add_null_column_then_old_append),
                       ("drop_columns", sc_drop_columns), ("alter_rename", sc_alter_rename),
                       ("compact", sc_compact), ("scalar_index", sc_scalar_index), ("restore", sc_restore),
                       ("tags", sc_tags), ("v1_manifest_names", sc_v1_manifest_names),
                       ("stable_row_ids", sc_stable_row_ids), ("branch", sc_branch),
                       ("top_level_reuse_dropped_name", sc_top_level_reuse_dropped_name)]:
        SCENARIOS[f"{_name}-{_v}"] = _mk(_v)
for _v in ["2.0", "2.2"]:
    for _name, _steps in NESTED_EVOLUTIONS.items():
        if _v == "2.0" and _name == "drop_then_rename_list_struct_child":
            continue  # pylance 14.0.2 then says 'Column "ls.item.y" does not exist' on a 2.0 dataset
        SCENARIOS[f"nested_{_name}-{_v}"] = sc_nested_evolution(_v, _steps)
# pylance 14.0.2 cannot read its own 2.0 dataset after casting a struct child, so 2.2 only
SCENARIOS["nested_cast_struct_child-2.2"] = sc_nested_evolution("2.2", [("cast", "st.a", pa.int64())])
SCENARIOS["mixed-2.0+2.2"] = sc_mixed_file_versions("2.0", "2.2")
SCENARIOS["mixed-2.2+2.1"] = sc_mixed_file_versions("2.2", "2.1")
SCENARIOS["mixed-2.1+2.0"] = sc_mixed_file_versions("2.1", "2.0")
SCENARIOS["mixed_then_compact-2.0+2.2"] = sc_mixed_then_compact("2.0", "2.2")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Callable[[str], str]:
    root = tmp_path_factory.mktemp("pylance-datasets")
    cache: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in cache:
            uri = str(root / f"{name}.lance")
            SCENARIOS[name](uri)
            cache[name] = uri
        return cache[name]

    return get


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_matches_pylance(built, name):
    assert_dataset_matches(built(name), seed=zlib.crc32(name.encode()) % 1000, context=name)


# --------------------------------------------------------------------------------------------
# Targeted checks
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_data_storage_version_and_fragments(built, version):
    uri = built(f"create-{version}")
    ds = lancefile.dataset(uri)
    assert ds.data_storage_version == version
    frags = ds.get_fragments()
    assert [f.physical_rows for f in frags] == [f.physical_rows for f in lance.dataset(uri).get_fragments()]
    assert sum(f.count_rows() for f in frags) == ds.count_rows() == 100


def test_mixed_versions_sets_flag_256(built):
    uri = built("mixed-2.0+2.2")
    reader, writer = _manifest_flags(uri)
    assert reader & 256 and writer & 256
    assert_dataset_matches(uri, context="mixed flag 256", all_versions=False)


def test_take_across_deleted_rows(built):
    """Every live position of a fragment with deletions, in order and reversed."""
    uri = built("delete_small-2.2")
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    n = ref.count_rows()
    idx = list(range(n))
    assert_same_table(ds.take(idx), ref.take(idx), "take all")
    assert_same_table(ds.take(idx[::-1]), ref.take(idx[::-1]), "take all reversed", schema_metadata=False)
    assert_same_table(ds.take([]), ref.take([]), "take nothing")


def test_take_bitmap_deletions_all_live_rows(built):
    uri = built("delete_bitmap-2.2")
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    n = ref.count_rows()
    assert n < 1000  # 5100 + 3 of 6000 rows are gone
    idx = list(range(n))
    assert_same_table(ds.take(idx, columns=["id", "s"]), ref.take(idx, columns=["id", "s"]), "take bitmap")


def test_time_travel_schema_changes(built):
    """Versions before and after an overwrite with another schema, and after add/drop columns."""
    for name in ["overwrite-2.2", "drop_columns-2.2", "add_columns_sql-2.0", "alter_rename-2.0"]:
        uri = built(name)
        schemas = set()
        for v in lance.dataset(uri).versions():
            ref = lance.dataset(uri, version=v["version"])
            ds = lancefile.dataset(uri, version=v["version"])
            assert_same_schema(ds.schema, ref.schema, f"{name} v{v['version']}")
            schemas.add(tuple(ref.schema.names))
        assert len(schemas) > 1, name  # the premise: the schema did change


def test_checkout_version_each_way(built):
    uri = built("restore-2.2")
    ds = lancefile.dataset(uri, version=1)
    assert ds.version == 1
    latest = ds.checkout_version(ds.latest_version)
    assert latest.version == lance.dataset(uri).version
    assert_same_table(latest.to_table(), lance.dataset(uri).to_table(), "checkout latest")
    back = latest.checkout_version(3)
    assert_same_table(back.to_table(), lance.dataset(uri, version=3).to_table(), "checkout 3")
    assert back.count_rows() == lance.dataset(uri, version=3).count_rows()


def test_tags_and_indices_ignored(built):
    uri = built("tags-2.2")
    assert_dataset_matches(uri, context="tags", all_versions=False)
    uri = built("scalar_index-2.0")
    assert_dataset_matches(uri, context="index", all_versions=False)


def test_hint_file_not_trusted(built, tmp_path):
    """The local reader lists _versions/; a stale or garbage hint changes nothing (as in pylance)."""
    src = built("append-2.2")
    for i, content in enumerate([b'{"version":1}', b'{"version":99}', b"garbage"]):
        uri = str(tmp_path / f"h{i}")
        shutil.copytree(src, uri)
        (Path(uri) / "_versions" / "latest_version_hint.json").write_bytes(content)
        ds = lancefile.dataset(uri)
        assert ds.version == lance.dataset(uri).version == 3
        assert_same_table(ds.to_table(), lance.dataset(uri).to_table(), f"hint {content!r}")
    uri = str(tmp_path / "nohint")
    shutil.copytree(src, uri)
    os.remove(Path(uri) / "_versions" / "latest_version_hint.json")
    assert lancefile.dataset(uri).version == 3


def test_ignores_unrelated_names_in_versions_dir(built, tmp_path):
    uri = str(tmp_path / "extra")
    shutil.copytree(built("append-2.0"), uri)
    for junk in ["foo.manifest", ".tmp_7.manifest", "X.manifest.tmp", "x.txt"]:
        (Path(uri) / "_versions" / junk).write_bytes(b"junk")
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    assert [v["version"] for v in ds.versions()] == [v["version"] for v in ref.versions()]
    assert_same_table(ds.to_table(), ref.to_table(), "junk in _versions")


@pytest.mark.parametrize("name", ["nested_rename_into_dropped_name-2.2", "nested_drop_second_rename_first-2.0",
                                  "nested_drop_then_rename_struct_child-2.2"])
def test_nested_projection_after_evolution(built, name):
    """A dotted projection of an evolved struct picks the child by field id, not by position or name.

    pylance 14.0.2 returns ``to_table(columns=["st.a"])`` as a flat column named "st.a" (but ``take`` with
    the same columns as a struct ``st``); lancefile returns the struct. Only the values are compared here.
    """
    uri = built(name)
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    st = ref.schema.field("st")
    for child in [st.type.field(i).name for i in range(st.type.num_fields)]:
        want = ref.to_table(columns=[f"st.{child}"]).column(0).combine_chunks()
        got = ds.to_table(columns=[f"st.{child}"])
        col = got.column(got.column_names[0]).combine_chunks()
        if pa.types.is_struct(col.type):
            col = col.field(child)
        assert col.to_pylist() == want.to_pylist(), f"{name}: st.{child}"


def test_branch_directory(built):
    """A branch's own directory (tree/dev) has base paths (flag 16): read it like pylance, or refuse it
    with a LanceError that names its manifest."""
    uri = str(Path(built("branch-2.2")) / "tree" / "dev")
    want = lance.dataset(uri).to_table()
    try:
        got = lancefile.dataset(uri).to_table()
    except lancefile.LanceError as exc:
        assert ".manifest" in str(exc), str(exc)
        return
    assert_same_table(got, want, "branch dev")


def test_file_uri(built):
    uri = built("append-2.2")
    assert_same_table(lancefile.dataset("file://" + os.path.abspath(uri)).to_table(), lance.dataset(uri).to_table(),
                      "file:// uri")


def test_pathlike_uri_and_storage_options(built):
    uri = built("create-2.1")
    ref = lance.dataset(uri).to_table()
    assert_same_table(lancefile.dataset(Path(uri)).to_table(), ref, "Path uri")
    assert_same_table(lancefile.dataset(uri, storage_options={}).to_table(), ref, "storage_options={}")
    assert_same_table(lancefile.dataset(uri + "/").to_table(), ref, "trailing slash")


def test_batch_sizes(built):
    uri = built("nested-2.1")
    ref = lance.dataset(uri).to_table()
    ds = lancefile.dataset(uri)
    for bs in [1, 3, 64, 1 << 20]:
        batches = list(ds.to_batches(batch_size=bs))
        assert all(b.num_rows <= bs for b in batches)
        assert_same_table(pa.Table.from_batches(batches, schema=ds.schema), ref, f"batch_size={bs}")


def test_nested_projection(built):
    uri = built("nested-2.2")
    ref = lance.dataset(uri)
    ds = lancefile.dataset(uri)
    for cols in (["emb"], ["ls", "id"], ["st"], ["l", "st", "emb"]):
        assert_same_table(ds.to_table(columns=cols), ref.to_table(columns=cols), f"columns={cols}")
        idx = [5, 0, 77, 3]
        assert_same_table(ds.take(idx, columns=cols), ref.take(idx, columns=cols), f"take columns={cols}",
                          schema_metadata=False)


def test_versions_list_after_compaction(built):
    uri = built("compact-2.2")
    got = [v["version"] for v in lancefile.dataset(uri).versions()]
    assert got == [v["version"] for v in lance.dataset(uri).versions()]
    assert got == list(range(1, len(got) + 1))


def test_gaps_in_versions_after_cleanup(tmp_path):
    """cleanup_old_versions leaves gaps; versions() lists what is there, old ones are gone."""
    from datetime import timedelta

    uri = str(tmp_path / "gaps")
    lance.write_dataset(simple_table(10), uri)
    for k in range(3):
        lance.write_dataset(simple_table(2, 10 + 2 * k), uri, mode="append")
    lance.dataset(uri).tags.create("keep", 2)
    lance.dataset(uri).cleanup_old_versions(older_than=timedelta(seconds=0), error_if_tagged_old_versions=False)
    want = [v["version"] for v in lance.dataset(uri).versions()]
    assert want != [1, 2, 3, 4]  # premise: something was removed
    assert [v["version"] for v in lancefile.dataset(uri).versions()] == want
    assert_dataset_matches(uri, context="after cleanup")


def test_latest_version_equals_pylance_hint(built):
    """latest_version agrees with the {"version":N} hint pylance wrote."""
    uri = built("append-2.1")
    hint = json.loads((Path(uri) / "_versions" / "latest_version_hint.json").read_text())
    assert hint == {"version": lancefile.dataset(uri).latest_version}


# --------------------------------------------------------------------------------------------
# Hand-edited manifests and deletion files that pylance still reads (DATASET-NOTES §4, §5.3, §6.1)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def deletions_base(tmp_path_factory) -> str:
    """Fragment 0: 6000 rows, 5100 deleted (.bin); fragment 1: 100 rows, 25 deleted (.arrow); fragment 2
    untouched."""
    uri = str(tmp_path_factory.mktemp("deletions-base") / "base.lance")
    lance.write_dataset(simple_table(6150), uri, max_rows_per_file=6000)
    lance.write_dataset(simple_table(100, 10_000), uri, mode="append")
    lance.dataset(uri).delete("(id >= 300 AND id < 5400) OR (id >= 10010 AND id < 10030) OR id IN "
                              "(10001, 10050, 10099, 10070, 10003)")
    kinds = sorted(n.rsplit(".", 1)[1] for n in deletion_files(uri))
    assert kinds == ["arrow", "bin"], deletion_files(uri)
    return uri


@pytest.fixture
def deletions_copy(deletions_base, tmp_path) -> str:
    dst = str(tmp_path / "copy.lance")
    shutil.copytree(deletions_base, dst)
    return dst


def _read_offsets(path: Path) -> np.ndarray:
    if path.suffix == ".arrow":
        with pa.ipc.open_file(str(path)) as r:
            return r.read_all().column(0).to_numpy()
    from pyroaring import BitMap

    return np.asarray(BitMap.deserialize(path.read_bytes()).to_array(), dtype=np.uint32)


def _write_arrow(path: Path, offsets: np.ndarray, compression=None) -> None:
    schema = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])
    opts = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(str(path), schema, options=opts) as w:
        w.write_batch(pa.record_batch([pa.array(offsets, pa.uint32())], schema=schema))


def _write_bitmap(path: Path, offsets: np.ndarray, run_optimize: bool) -> None:
    from pyroaring import BitMap

    bm = BitMap(offsets.astype(np.uint32))
    if run_optimize:
        bm.run_optimize()
    path.write_bytes(bm.serialize())


def _rewrite_deletions(uri: str, how: str) -> None:
    """Rewrite every deletion file of the latest version in another (valid) form."""
    from lancefile._proto import table_pb2

    def edit(m):
        for frag in m.fragments:
            if not frag.HasField("deletion_file"):
                continue
            d = frag.deletion_file
            ext = "arrow" if d.file_type == table_pb2.DeletionFile.ARROW_ARRAY else "bin"
            old = Path(uri) / "_deletions" / f"{frag.id}-{d.read_version}-{d.id}.{ext}"
            offsets = _read_offsets(old)
            old.unlink()
            if how in ("arrow_unsorted_uncompressed", "arrow_lz4", "all_arrow"):
                d.file_type = table_pb2.DeletionFile.ARROW_ARRAY
                new = old.with_suffix(".arrow")
                order = offsets[::-1] if how == "arrow_unsorted_uncompressed" else np.sort(offsets)
                _write_arrow(new, order, compression="lz4" if how == "arrow_lz4" else None)
            else:
                d.file_type = table_pb2.DeletionFile.BITMAP
                _write_bitmap(old.with_suffix(".bin"), offsets, run_optimize=(how == "bitmap_runs"))

    reencode_manifest(latest_manifest(uri), edit)


@pytest.mark.parametrize("how", ["arrow_unsorted_uncompressed", "arrow_lz4", "all_arrow", "all_bitmap",
                                 "bitmap_runs"])
def test_deletion_files_in_other_valid_forms(deletions_copy, how):
    """Both kinds at any size, run containers, uncompressed / LZ4 IPC, unsorted offsets: pylance reads them."""
    want_count = lance.dataset(deletions_copy).count_rows()
    _rewrite_deletions(deletions_copy, how)
    ref = lance.dataset(deletions_copy)
    assert ref.count_rows() == want_count  # the premise: still the same dataset for pylance
    if how == "bitmap_runs":
        runs = [p for p in (Path(deletions_copy) / "_deletions").iterdir() if p.suffix == ".bin"]
        assert any(p.read_bytes()[:2] == b"\x3b\x30" for p in runs)  # cookie 12347: run containers
    assert_dataset_matches(deletions_copy, context=f"deletions {how}")


def _manifest_edit(how):
    def edit(m):
        if how == "no_timestamp":
            m.ClearField("timestamp")
        elif how == "no_writer_version":
            m.ClearField("writer_version")
        elif how == "writer_library_other":
            m.writer_version.library = "somebody-else"
            m.writer_version.version = "0.0.1"
        elif how == "no_data_format":
            m.ClearField("data_format")
        elif how == "no_max_fragment_id":
            m.ClearField("max_fragment_id")
        elif how == "file_size_zero":
            for f in m.fragments:
                for df in f.files:
                    df.file_size_bytes = 0
        elif how == "num_deleted_rows_zero":
            for f in m.fragments:
                if f.HasField("deletion_file"):
                    f.deletion_file.num_deleted_rows = 0
        elif how == "no_encoding_hints":
            for fld in m.fields:
                fld.ClearField("encoding")
        elif how == "deletion_flag_cleared":
            m.reader_feature_flags &= ~1
            m.writer_feature_flags &= ~1
        elif how == "fragments_reversed":
            frags = list(m.fragments)
            del m.fragments[:]
            m.fragments.extend(reversed(frags))
        elif how == "no_transaction_reference":
            m.ClearField("transaction_file")
        else:  # pragma: no cover
            raise AssertionError(how)
    return edit


@pytest.mark.parametrize("how", ["no_timestamp", "no_writer_version", "writer_library_other", "no_data_format",
                                 "no_max_fragment_id", "file_size_zero", "num_deleted_rows_zero",
                                 "no_encoding_hints", "deletion_flag_cleared", "fragments_reversed",
                                 "no_transaction_reference"])
def test_hand_edited_manifest_pylance_accepts(deletions_copy, how):
    reencode_manifest(latest_manifest(deletions_copy), _manifest_edit(how))
    want = lance.dataset(deletions_copy).to_table()  # the premise: pylance accepts it
    if how == "num_deleted_rows_zero":
        # pylance 14.0.2 reads the deletion files then (full scan and count right), but a projected
        # scan fails ("Fragments are missing row count stats"): compare against its full scan
        ds = lancefile.dataset(deletions_copy)
        assert ds.count_rows() == lance.dataset(deletions_copy).count_rows() == want.num_rows
        assert_same_table(ds.to_table(), want, "num_deleted_rows=0")
        assert_same_table(ds.to_table(columns=["s", "id"]), want.select(["s", "id"]), "num_deleted_rows=0 proj")
        idx = [0, want.num_rows - 1, 850, 900, 901, 899]
        assert_same_table(ds.take(idx), want.take(idx), "num_deleted_rows=0 take")
        assert [f.count_rows() for f in ds.get_fragments()] == \
            [f.count_rows() for f in lance.dataset(deletions_copy).get_fragments()]
        return
    assert_dataset_matches(deletions_copy, context=f"manifest {how}")


def test_a_blob_v2_column_reads_as_pylance_reads_it(tmp_path):
    """pylance's 2.2 datasets store a blob column as blob v2: the manifest types it
    ``lance.blob.v2`` (a struct of data and uri) and the data files hold one descriptor a row.
    lancefile looked for the data and uri children in the data files and called the dataset
    corrupt; it now returns the descriptors, as pylance's to_table and take do (found by a
    helper's dataset hunt)."""
    import lance

    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"})])
    table = pa.table({"id": pa.array(range(50), pa.int64()),
                      "blob": pa.array([b"x" * (i * 37 % 500) for i in range(50)], pa.large_binary())}, schema=schema)
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri, max_rows_per_file=20)
    theirs, ours = lance.dataset(uri), lancefile.dataset(uri)
    assert ours.to_table().equals(theirs.to_table(), check_metadata=True)
    assert ours.to_table().schema.field("blob").metadata == theirs.to_table().schema.field("blob").metadata
    assert ours.take([3, 41, 0]).equals(theirs.take([3, 41, 0]))
    assert ours.to_table(columns=["blob"]).equals(theirs.to_table(columns=["blob"]))
    assert ours.to_table(filter="id >= 45").equals(theirs.to_table(filter="id >= 45"))


def test_version_timestamps_are_cut_to_microseconds():
    """A manifest's nanoseconds are cut to microseconds, not rounded (rounding put half the
    versions 1 us after pylance's), and far-future seconds are a clear error."""
    from lancefile.datasets.core import _timestamp

    m = lancefile._proto.table_pb2.Manifest()
    m.timestamp.seconds, m.timestamp.nanos = 1_764_491_507, 17_339_759
    assert _timestamp(m, "m").isoformat() == "2025-11-30T08:31:47.017339"
    m.timestamp.seconds = 1 << 60
    with pytest.raises(lancefile.CorruptFileError, match="not a date"):
        _timestamp(m, "m")
