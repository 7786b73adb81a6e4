"""``offset`` / ``limit`` of a dataset's reads and ``head``, against pylance 14.0.2's.

A pylance dataset of several fragments with deleted rows (both at fragment edges and inside):
every window, with and without a filter, gives pylance's rows; a window without a filter reads
only the fragments it comes from.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings, strategies as st

import lancefile

lance = pytest.importorskip("lance")

ROWS = 200


@pytest.fixture(scope="module")
def uri(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("window") / "w.lance")
    t = pa.table({"id": pa.array(np.arange(ROWS, dtype=np.int64)),
                  "s": pa.array([f"v{i}" if i % 9 else None for i in range(ROWS)])})
    ds = lance.write_dataset(t, uri, max_rows_per_file=48)  # 5 fragments
    ds.delete("id % 7 = 3 OR id < 5 OR (id >= 48 AND id < 96)")  # a whole fragment goes too
    return uri


def _pylance(uri, **kw) -> pa.Table:
    return lance.dataset(uri).to_table(**kw)


def _same(a: pa.Table, b: pa.Table) -> None:
    assert a.schema.names == b.schema.names
    assert a.to_pydict() == b.to_pydict()


@settings(max_examples=60, deadline=None)
@given(offset=st.none() | st.integers(0, 220), limit=st.none() | st.integers(0, 220))
def test_window_matches_pylance(uri, offset, limit):
    ds = lancefile.dataset(uri)
    _same(ds.to_table(offset=offset, limit=limit), _pylance(uri, offset=offset, limit=limit))
    got = pa.Table.from_batches(list(ds.to_batches(offset=offset, limit=limit, batch_size=7)), schema=ds.schema)
    _same(got, _pylance(uri, offset=offset, limit=limit))


@settings(max_examples=40, deadline=None)
@given(offset=st.none() | st.integers(0, 120), limit=st.none() | st.integers(0, 120))
def test_window_after_filter_matches_pylance(uri, offset, limit):
    ds = lancefile.dataset(uri)
    got = ds.to_table(columns=["s"], filter=pc.field("id") >= 40, offset=offset, limit=limit)
    _same(got, _pylance(uri, columns=["s"], filter="id >= 40", offset=offset, limit=limit))


@pytest.mark.parametrize("n", [0, 1, 5, 44, 150, 1000])
def test_head_matches_pylance(uri, n):
    _same(lancefile.dataset(uri).head(n), lance.dataset(uri).head(n))
    _same(lancefile.dataset(uri).head(n, columns=["s"]), lance.dataset(uri).head(n, columns=["s"]))


def test_window_reads_only_its_fragments(uri, monkeypatch):
    from lancefile.datasets.fragment import LanceFragment

    ds = lancefile.dataset(uri)
    read = []
    real = LanceFragment.to_batches

    def spy(self, *a, **kw):
        read.append((self.fragment_id, kw.get("start", 0), kw.get("stop")))
        return real(self, *a, **kw)

    monkeypatch.setattr(LanceFragment, "to_batches", spy)
    live = [f.count_rows() for f in ds.get_fragments()]
    # the last 3 rows of the second fragment with live rows and the first 2 of the third
    nonempty = [k for k, n in enumerate(live) if n]
    k1, k2 = nonempty[1], nonempty[2]
    offset = sum(live[:k1]) + live[k1] - 3
    got = ds.to_table(offset=offset, limit=5)
    assert got["id"].to_pylist() == _pylance(uri, offset=offset, limit=5)["id"].to_pylist()
    frags = ds.get_fragments()
    assert [r[0] for r in read] == [frags[k1].fragment_id, frags[k2].fragment_id]
    assert read[0][1] > 0  # the first fragment is read from its window, not from row 0
    assert read[1][1:] == (0, int(frags[k2].live_offsets(np.array([1]))[0]) + 1)  # ... and the last to its end


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_window(uri, bad):
    ds = lancefile.dataset(uri)
    with pytest.raises(lancefile.InvalidInputError, match="offset"):
        ds.to_table(offset=bad)
    with pytest.raises(lancefile.InvalidInputError, match="limit"):
        list(ds.to_batches(limit=bad))


@pytest.mark.parametrize("kw", [{}, {"limit": 7}, {"offset": 30, "limit": 50}, {"filter": "id >= 100"},
                                {"filter": "id >= 100", "offset": 3, "limit": 4}, {"columns": ["s"], "offset": 190}])
def test_scanner_matches_pylance(uri, kw):
    ours = lancefile.dataset(uri).scanner(**kw)
    theirs = lance.dataset(uri).scanner(**kw)
    _same(ours.to_table(), theirs.to_table())
    assert ours.projected_schema == theirs.projected_schema
    want = theirs.to_table().num_rows  # pylance's count_rows refuses a limit or offset; lancefile counts the window
    assert ours.count_rows() == want
    _same(ours.to_reader().read_all(), theirs.to_table())
    assert sum(b.num_rows for b in ours.to_batches()) == want


def test_scanner_checks_its_arguments_at_once(uri):
    ds = lancefile.dataset(uri)
    with pytest.raises(lancefile.ColumnNotFoundError, match="nope"):
        ds.scanner(filter="nope > 1")
    with pytest.raises(lancefile.InvalidInputError, match="limit"):
        ds.scanner(limit=-2)
    with pytest.raises(lancefile.InvalidInputError, match="batch_size"):
        ds.scanner(batch_size=0)
