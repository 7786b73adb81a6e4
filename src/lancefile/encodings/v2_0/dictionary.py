"""Dictionary: indices into a page-local dictionary (2.0 ``Dictionary``).

Proto: ``lance.encodings.Dictionary { indices, items, num_dictionary_items }``.

Two uses:

* Arrow dictionary arrays: ``indices`` is encoded like a primitive of the key type
  (``Nullable{...Flat{key bits}}``) and ``items`` like the value type; the result is a
  ``DictionaryArray``.
* Automatic dictionary for low-cardinality strings: ``indices`` is ``Flat{8}`` holding
  **1-based** u8 indices with 0 meaning null; the result is a plain string array.
  ``["b", "a", null, "b"]`` with items ``["a", "b"]`` is indices ``02 01 00 02``.

Page buffers: the indices' buffers first, then the items' buffers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ..registry import decode_array, register_array_decoder
from ..selection import Selection

__all__ = ["decode_dictionary", "encode_dictionary", "leaf_flat_bits"]


def leaf_flat_bits(enc) -> int | None:
    """Bits per value of the Flat at the bottom of Nullable wrappers, or None."""
    while True:
        kind = enc.WhichOneof("array_encoding")
        if kind == "flat":
            return int(enc.flat.bits_per_value)
        if kind != "nullable":
            return None
        inner = enc.nullable
        nk = inner.WhichOneof("nullability")
        if nk == "no_nulls":
            enc = inner.no_nulls.values
        elif nk == "some_nulls":
            enc = inner.some_nulls.values
        else:
            return None


_UINT = {8: pa.uint8(), 16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}


@register_array_decoder("dictionary")
def decode_dictionary(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    n_items = int(msg.num_dictionary_items)
    value_type = dtype.value_type if pa.types.is_dictionary(dtype) else dtype
    items = page.cached(
        ("dictionary-items", msg.SerializeToString()),
        lambda: decode_array(msg.items, page, value_type, Selection.of_range(0, n_items)),
    )
    if pa.types.is_dictionary(dtype):
        indices = decode_array(msg.indices, page, dtype.index_type, sel)
        if len(indices) and pa.compute.max(indices).as_py() is not None and pa.compute.max(indices).as_py() >= n_items:
            raise page.error(f"dictionary index out of range (dictionary has {n_items} items)")
        return pa.DictionaryArray.from_arrays(indices, items)
    bits = leaf_flat_bits(msg.indices)
    if bits not in _UINT:
        raise page.error(f"dictionary indices have unsupported width {bits}")
    raw = decode_array(msg.indices, page, _UINT[bits], sel).to_numpy(zero_copy_only=False)
    idx = raw.astype(np.int64)
    if len(idx) and idx.max() > n_items:
        raise page.error(f"dictionary index {int(idx.max())} out of range (dictionary has {n_items} items)")
    null = idx == 0
    take = pa.array(idx - 1, type=pa.int64(), mask=null if null.any() else None)
    return items.take(take)


def encode_dictionary(indices: pb.ArrayEncoding, items: pb.ArrayEncoding, num_items: int) -> pb.ArrayEncoding:
    return pb.ArrayEncoding(dictionary=pb.Dictionary(indices=indices, items=items, num_dictionary_items=num_items))
