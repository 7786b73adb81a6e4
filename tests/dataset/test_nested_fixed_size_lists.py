"""fixed_size_list<fixed_size_list> columns through every path that takes or filters rows.

pyarrow 26.0.1 takes and filters a *sliced* ``fixed_size_list<fixed_size_list>`` (also under
a struct) from the wrong rows, or reads past its buffers and crashes the process. Reads hand
out slices of decoded chunks, so before lancefile filtered such columns itself, a dataset
with deleted rows returned wrong values silently and a filtered read crashed. Every path is
checked here against pylance (or the table written), with batch sizes that slice.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lancefile

pytestmark = pytest.mark.interop

N = 3000


@pytest.fixture(scope="module")
def table():
    inner = pa.list_(pa.field("item", pa.int32()), 2)
    outer = pa.list_(pa.field("item", inner), 3)
    fsl = pa.FixedSizeListArray.from_arrays(
        pa.FixedSizeListArray.from_arrays(pa.array(np.arange(N * 6, dtype=np.int32)), type=inner), type=outer)
    st = pa.StructArray.from_arrays([fsl, pa.array(np.arange(N))], names=["f", "k"])
    return pa.table({"id": np.arange(N), "v": fsl, "s": st})


@pytest.fixture(scope="module")
def dataset(table, tmp_path_factory):
    import lance

    uri = str(tmp_path_factory.mktemp("fslfsl") / "ds")
    lancefile.write_dataset(table, uri, max_rows_per_file=1000)
    lance.dataset(uri).delete("id % 7 = 3")
    return uri


def test_deleted_rows_are_dropped_from_the_right_rows(dataset):
    import lance

    want = lance.dataset(dataset).to_table()
    ds = lancefile.dataset(dataset)
    for bs in (9, 1000, 65536):
        assert pa.Table.from_batches(list(ds.to_batches(batch_size=bs)), schema=want.schema).equals(want)
    assert ds.to_table().equals(want)


def test_filtered_reads_keep_the_right_rows(dataset, table, tmp_path):
    import lance

    expr = pc.field("id") < 1500
    want = lance.dataset(dataset).to_table(filter="id < 1500")
    assert lancefile.dataset(dataset).to_table(filter=expr, batch_size=7).equals(want)
    p = tmp_path / "f.lance"
    lancefile.write_table(table, p, version="2.2")
    for expr in (pc.field("id").isin([1, 5, 2999]) | (pc.field("id") > 2990),  # lancefile evaluates it
                 pc.field("s", "k") > 2990):  # a nested field: Arrow's engine evaluates it
        got = lancefile.read_table(p, filters=expr, batch_size=3)
        assert got.equals(pa.Table.from_batches(table.to_batches()).filter(expr))


def test_takes_in_any_order_return_the_right_rows(dataset, table, tmp_path):
    import lance

    rng = np.random.default_rng(3)
    live = lance.dataset(dataset).count_rows()
    idx = rng.permutation(live)[:400]
    assert lancefile.dataset(dataset).take(idx).equals(lance.dataset(dataset).take(idx))
    p = tmp_path / "t.lance"
    lancefile.write_table(table, p, version="2.2")
    rows = rng.integers(0, N, 300)  # unsorted, with repeats
    got = lancefile.LanceFileReader(p).take_rows(rows, batch_size=50).to_table()
    assert got.equals(table.take(pa.array(rows)))


def test_deleting_by_a_filter_on_such_a_column(table, tmp_path):
    import lance

    uri = str(tmp_path / "d")
    lancefile.write_dataset(table, uri, max_rows_per_file=1000)
    ds = lancefile.dataset(uri)
    # a nested field: the engine's filter, on a batch holding the struct<fixed_size_list<...>>
    ds.delete(pc.field("s", "k") < 600)
    assert lance.dataset(uri).count_rows() == N - 600
    assert lancefile.dataset(uri).to_table().equals(lance.dataset(uri).to_table())
