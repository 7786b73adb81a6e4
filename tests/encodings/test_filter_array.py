"""filter_array / filter_batch give exactly what Arrow's ``filter`` gives, for random nested
types, sliced inputs, nulls at every level and any mask (few rows dropped, most dropped)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lancefile.encodings.arrowutil import filter_array, filter_batch
from tests import datagen
from tests.test_properties import types

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@settings(max_examples=150, deadline=None)
@given(typ=types(3), n=st.integers(0, 60), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_filter_array_equals_arrow_filter(typ, n, seed, data):
    rng = np.random.default_rng(seed)
    struct_nulls = data.draw(st.booleans(), "struct_nulls")
    arr = datagen.random_array(typ, n + 10, rng, null_fraction=0.3, struct_nulls=struct_nulls)
    start = data.draw(st.integers(0, 10), "slice start")
    arr = arr.slice(start, n)  # sliced: the offsets and validity do not start at 0
    drop = data.draw(st.sampled_from([0.0, 0.05, 0.5, 1.0]), "drop fraction")
    keep = rng.random(n) >= drop
    got = filter_array(arr, keep)
    got.validate(full=True)
    # the reference filters an unsliced copy: pyarrow 26's own filter (and take) of a sliced
    # fixed_size_list<fixed_size_list> applies the slice offset twice (see the test below)
    want = pa.concat_arrays([arr, arr.slice(0, 0)]).filter(pa.array(keep, pa.bool_()))
    assert got.type == want.type
    assert got.equals(want), (got.to_pylist(), want.to_pylist())


def test_filter_batch_takes_masks_with_nulls_and_keeps_the_schema():
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                        pa.field("l", pa.list_(pa.field("s", pa.struct([("x", pa.string())]), nullable=False)))],
                       metadata={b"k": b"v"})
    b = pa.record_batch([pa.array([1, 2, 3, 4]),
                         pa.array([[{"x": "a"}], None, [], [{"x": "b"}, {"x": None}]], schema.field("l").type)],
                        schema=schema)
    got = filter_batch(b, pa.array([True, None, False, True]))
    assert got.schema == schema and got.schema.metadata == {b"k": b"v"}
    assert got.to_pydict() == {"id": [1, 4], "l": [[{"x": "a"}], [{"x": "b"}, {"x": None}]]}
    assert filter_batch(b, np.ones(4, bool)) is b
    with pytest.raises(ValueError, match="4 booleans"):
        filter_batch(b, np.ones(3, bool))


def test_sliced_nested_fixed_size_lists_filter_right_where_arrow_does_not():
    """pyarrow 26.0.1 filters a sliced fixed_size_list<fixed_size_list> from the wrong rows
    (its slice offset applied twice): filter_array, which deletion filtering and filtered
    reads use, gives the right ones. When Arrow is fixed, the second assertion fails: then
    the reference in the property test above can go back to a plain ``arr.filter``."""
    inner = pa.list_(pa.field("item", pa.int8(), False), 1)
    outer = pa.list_(pa.field("item", inner, False), 2)
    whole = pa.FixedSizeListArray.from_arrays(
        pa.FixedSizeListArray.from_arrays(pa.array(np.arange(20, dtype=np.int8)), type=inner), type=outer)
    sliced = whole.slice(4, 2)
    assert filter_array(sliced, np.array([True, False])).to_pylist() == [[[8], [9]]]
    assert sliced.filter(pa.array([True, False])).to_pylist() != [[[8], [9]]]  # Arrow's bug, still there
