"""lancefile's dataset delete, against pylance, and dataset filters."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancefile

lance = pytest.importorskip("lance")
pytestmark = pytest.mark.interop


def _norm(t: pa.Table):
    return t.schema, {k: ["nan" if isinstance(v, float) and v != v else v for v in col]
                      for k, col in t.to_pydict().items()}


def same(a: pa.Table, b: pa.Table) -> bool:
    """Table equality where NaN equals NaN (Table.equals says NaN != NaN)."""
    return _norm(a) == _norm(b)


def _table(n=20_000):
    return pa.table({"k": np.arange(n), "s": pa.array([str(i) for i in range(n)]),
                     "f": pa.array(np.where(np.arange(n) % 7 == 0, np.nan, np.arange(n) / 3.0))})


@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_deletes_read_by_pylance_and_back(tmp_path, version):
    uri = str(tmp_path / "ds")
    t = _table()
    lancefile.write_dataset(t, uri, max_rows_per_file=8000, data_storage_version=version)
    ds = lancefile.dataset(uri)
    steps = [pc.field("k") < 100, [("k", ">=", 16_000)], pc.field("s").isin(["150", "9000", "12000"]),
             (pc.field("k") >= 1000) & (pc.field("k") < 7000), pc.field("f").is_nan()]
    want = t
    for step in steps:
        expr = lancefile.predicate.to_expression(step)
        ds = ds.delete(step)
        want = want.filter(pc.invert(expr) | pc.is_null(expr))
        theirs = lance.dataset(uri)
        assert theirs.version == ds.version
        assert same(theirs.to_table(), want) and same(ds.to_table(), want)
        assert theirs.count_rows() == ds.count_rows() == want.num_rows
    frags = {f.fragment_id: f for f in lance.dataset(uri).get_fragments()}
    assert 2 not in frags  # every row of fragment 2 (16000..19999) deleted: fragment dropped
    kinds = {f.metadata.deletion_file.file_type for f in frags.values()}
    assert kinds == {"bitmap", "array"} or kinds == {"bitmap"}
    # pylance carries on from lancefile's deletes
    theirs = lance.dataset(uri)
    theirs.delete("k = 7500")
    theirs = lance.dataset(uri)
    assert same(lancefile.dataset(uri).to_table(), theirs.to_table())
    theirs.optimize.compact_files()
    theirs = lance.dataset(uri)
    assert same(lancefile.dataset(uri).to_table(), theirs.to_table())
    for v in theirs.versions():  # every version reads alike
        assert same(lancefile.dataset(uri, version=v["version"]).to_table(),
                    lance.dataset(uri, version=v["version"]).to_table())


def test_delete_of_nothing_makes_no_version(tmp_path):
    uri = str(tmp_path / "ds")
    ds = lancefile.write_dataset(_table(100), uri)
    assert ds.delete(pc.field("k") > 1000).version == 1


def test_delete_takes_sql_text_as_pylance_and_refuses_missing_columns(tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lancefile.write_dataset(_table(10), ours)
    lance.write_dataset(_table(10), theirs)
    assert lancefile.dataset(ours).delete("k < 3 OR k IN (7, 8)").version == 2
    lance.dataset(theirs).delete("k < 3 OR k IN (7, 8)")
    assert same(lancefile.dataset(ours).to_table(), lance.dataset(theirs).to_table())
    assert same(lance.dataset(ours).to_table(), lance.dataset(theirs).to_table())
    ds = lancefile.dataset(ours)
    with pytest.raises(lancefile.InvalidInputError, match="position 4"):
        ds.delete("k < ")
    with pytest.raises(lancefile.ColumnNotFoundError, match="nope"):
        ds.delete(pc.field("nope") < 3)
    with pytest.raises(lancefile.ColumnNotFoundError, match="nope"):
        ds.delete("nope < 3")


def test_delete_conflicts_with_a_concurrent_overwrite_but_not_an_append(tmp_path):
    uri = str(tmp_path / "ds")
    stale = lancefile.write_dataset(_table(100), uri)
    lancefile.write_dataset(_table(10), uri, mode="append")
    after = stale.delete(pc.field("k") < 5)  # rebased over the append
    assert after.version == 3 and after.count_rows() == 105 and lance.dataset(uri).count_rows() == 105
    stale = lancefile.dataset(uri)
    lancefile.write_dataset(_table(3), uri, mode="overwrite")
    with pytest.raises(lancefile.CommitConflictError, match="overwrite"):
        stale.delete(pc.field("k") < 50)
    assert lance.dataset(uri).count_rows() == 3


def test_dataset_filters_equal_pylance(tmp_path):
    uri = str(tmp_path / "ds")
    t = _table()
    lance.write_dataset(t, uri, max_rows_per_file=6000)
    lance.dataset(uri).delete("k % 5 = 0")
    ours, theirs = lancefile.dataset(uri), lance.dataset(uri)
    live = theirs.to_table()
    for f in [pc.field("k") < 700, (pc.field("f") > 100) & (pc.field("s") != "999"), pc.field("f").is_nan()]:
        # pyarrow's semantics, as table.filter gives: pylance's own filter differs on NaN
        # (it takes NaN > 100 as true, DataFusion's total order), so it is not the oracle here
        want = live.filter(f)
        assert same(ours.to_table(filter=f), want)
        assert same(ours.to_table(columns=["s"], filter=f), want.select(["s"]))
        assert ours.count_rows(filter=f) == want.num_rows
        got = pa.Table.from_batches(list(ours.to_batches(batch_size=333, filter=f)), schema=t.schema)
        assert same(got, want)
    f = pc.field("k") < 700  # without NaN in play, pylance agrees
    assert same(ours.to_table(filter=f), theirs.to_table(filter=f))


def test_cleanup_orphans_removes_only_unreferenced_old_files(tmp_path):
    import os
    import time

    uri = str(tmp_path / "ds")
    lancefile.write_dataset(_table(100), uri, max_rows_per_file=40)
    lancefile.dataset(uri).delete(pc.field("k") < 5)
    lance.dataset(uri).delete("k = 50")
    orphans = [os.path.join(uri, "data", "0101deadbeef.lance"), os.path.join(uri, "_transactions", "9-x.txn"),
               os.path.join(uri, "_deletions", "0-9-1.arrow"), os.path.join(uri, "_versions", ".abc.manifest-tmp")]
    for p in orphans:
        with open(p, "wb") as f:
            f.write(b"x")
        old = time.time() - 7200
        os.utime(p, (old, old))
    fresh = os.path.join(uri, "data", "inflight.lance")
    open(fresh, "wb").close()
    before = {v: lancefile.dataset(uri, version=v).to_table() for v in (1, 2, 3)}
    ds = lancefile.dataset(uri)
    assert sorted(ds.cleanup_orphans(dry_run=True)) == sorted(orphans)
    assert all(os.path.exists(p) for p in orphans)
    assert sorted(ds.cleanup_orphans()) == sorted(orphans)
    assert not any(os.path.exists(p) for p in orphans) and os.path.exists(fresh)
    for v, t in before.items():  # every version still reads, by both libraries
        assert same(lancefile.dataset(uri, version=v).to_table(), t)
        assert same(lance.dataset(uri, version=v).to_table(), t)


@pytest.mark.interop
def test_cleanup_orphans_keeps_detached_versions(tmp_path):
    """A detached version (pylance's commit(detached=True): _versions/d<N>.manifest) refers to its
    own data and transaction files; cleanup_orphans took it and them for orphans and removed
    them, after which pylance could no longer read that version (found by a helper's dataset
    hunt). Files no version refers to are still removed."""
    import time

    import lance

    uri = str(tmp_path / "ds")
    lance.write_dataset(pa.table({"id": pa.array(range(3), pa.int64())}), uri)
    frags = lance.fragment.write_fragments(pa.table({"id": pa.array([100, 101], pa.int64())}), uri)
    detached = lance.LanceDataset.commit(uri, lance.LanceOperation.Append(frags), read_version=1, detached=True)
    orphan = tmp_path / "ds" / "data" / "orphan.lance"
    orphan.write_bytes(b"left by a killed writer")
    time.sleep(0.05)
    removed = lancefile.dataset(uri).cleanup_orphans(older_than_seconds=0)
    assert [os.path.basename(p) for p in removed] == ["orphan.lance"]
    assert lance.dataset(uri, version=detached.version).to_table()["id"].to_pylist() == [0, 1, 2, 100, 101]
