"""Lists of structs whose layers have nulls, or none, level by level.

A read turns each leaf's repetition and definition levels into Arrow offsets and validity
(:func:`lancefile.encodings.structural.repdef.unravel`); a layer with no null slot gets no
validity and skips the work. The cases here choose, layer by layer, between no nulls at all
and some, so that every combination of skipped and computed layers is read: whole, in
ranges and by takes, by lancefile and by pylance.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from tests.conftest import reference_reader, reference_write


def _masked(rng, n: int, p: float):
    return None if p == 0 else rng.random(n) < p


def _table(seed: int, n: int, p_list: float, p_struct: float, p_x: float, p_tag: float, outer: bool) -> pa.Table:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, n)
    if p_list == 0:
        lengths[lengths == 0] = 1  # no empty lists either: every row's list has items
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    m = int(offsets[-1])
    x = pa.array(rng.integers(-50, 50, m), mask=_masked(rng, m, p_x))
    tag = pa.array(np.array(["a", "bb", "ccc", "dddd"])[rng.integers(0, 4, m)], mask=_masked(rng, m, p_tag))
    y = pa.array(rng.random(m).astype(np.float32))
    struct_mask, list_mask = _masked(rng, m, p_struct), _masked(rng, n, p_list)
    items = pa.StructArray.from_arrays([x, y, tag], ["x", "y", "tag"],
                                       mask=None if struct_mask is None else pa.array(struct_mask))
    lists = pa.ListArray.from_arrays(pa.array(offsets), items, mask=None if list_mask is None else pa.array(list_mask))
    if not outer:
        return pa.table({"id": np.arange(n), "items": lists})
    k = n // 3  # a list of those lists
    outer_offsets = np.concatenate([[0], np.sort(rng.choice(np.arange(1, n), k - 1, replace=False)), [n]])
    return pa.table({"groups": pa.ListArray.from_arrays(pa.array(outer_offsets.astype(np.int32)), lists)})


_P = st.sampled_from([0.0, 0.0, 0.05, 0.4])


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 400), _P, _P, _P, _P, st.booleans(),
       st.sampled_from(["2.1", "2.2"]))
def test_lists_of_structs_with_and_without_nulls_per_layer(tmp_path_factory, seed, n, p_list, p_struct, p_x,
                                                          p_tag, outer, version):
    t = _table(seed, n, p_list, p_struct, p_x, p_tag, outer)
    p = tmp_path_factory.mktemp("levels") / "t.lance"
    lancefile.write_table(t, p, version=version, max_page_bytes=2048)
    reader = lancefile.LanceFileReader(p)
    assert reader.read_all(batch_size=97).to_table().equals(t)
    rows = np.sort(np.random.default_rng(seed).choice(t.num_rows, min(t.num_rows, 25), replace=False))
    assert reader.take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    a = t.num_rows // 3
    assert reader.read_range(a, t.num_rows - a).to_table().equals(t.slice(a, t.num_rows - a))
    assert reference_reader(p).read_all().to_table().equals(t)


@pytest.mark.parametrize("p_list, p_struct, p_x", [(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1), (0.1, 0.1, 0.1)])
def test_pylance_lists_of_structs_per_layer_nulls(tmp_path, p_list, p_struct, p_x):
    t = _table(7, 3000, p_list, p_struct, p_x, 0.0, False)
    p = tmp_path / "py.lance"
    reference_write(t, p, version="2.2")
    assert lancefile.LanceFileReader(p).read_all(batch_size=1000).to_table().equals(t)
    rows = np.arange(0, 3000, 37)
    assert lancefile.LanceFileReader(p).take_rows(rows).to_table().equals(t.take(pa.array(rows)))


@pytest.mark.parametrize("inner_only", [False, True])
def test_levels_that_do_not_start_with_a_row_are_refused(inner_only):
    # three entries with two row starts, but the first entry continues a row no entry began
    from lancefile.encodings.structural.repdef import ITEM, LIST, unravel
    from lancefile.errors import CorruptFileError

    rep = np.array([0, 1, 1], np.uint16)
    defs = np.zeros(3, np.uint16)
    with pytest.raises(CorruptFileError, match="repetition levels start 2 rows, 2 expected"):
        unravel(rep, defs, [ITEM, ITEM, LIST], 2, "f", inner_only)
    with pytest.raises(CorruptFileError, match="repetition level 2 above the field's 1"):
        unravel(np.array([1, 2, 0], np.uint16), defs, [ITEM, ITEM, LIST], 2, "f", inner_only)
