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

The items are validated in full (UTF-8, offsets) once, when decoded, and the indices are
bounds-checked: the strings gathered from them need no check of their own.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..._proto import encodings_v2_0_pb2 as pb
from ..arrowutil import validate_values
from ..registry import decode_array, register_array_decoder
from ..selection import Selection
from .binary import build_binary, decode_small_binary
from .flat import decode_flat_rows, plain_flat

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
    if not pa.types.is_dictionary(dtype):
        fast = _auto_dictionary(msg, page, dtype, sel, n_items)
        if fast is not None:
            return fast
    # the items are validated in full once, here: values gathered from them by bounds-checked
    # indices are valid (the 2.0 leaf reader does not check a dictionary page's values again)
    items = page.cached(
        ("dictionary-items", msg.SerializeToString()),
        lambda: validate_values(decode_array(msg.items, page, value_type, Selection.of_range(0, n_items)),
                                f"{page.where}: dictionary"),
    )
    if pa.types.is_dictionary(dtype):
        indices = decode_array(msg.indices, page, dtype.index_type, sel)
        lo, hi = pa.compute.min_max(indices).values() if len(indices) else (None, None)
        if hi.is_valid and (lo.as_py() < 0 or hi.as_py() >= n_items):
            raise page.error(f"dictionary index out of range [0, {n_items}): {lo.as_py()}..{hi.as_py()}")
        return pa.DictionaryArray.from_arrays(indices, items)
    bits = leaf_flat_bits(msg.indices)
    if bits not in _UINT:
        raise page.error(f"dictionary indices have unsupported width {bits}")
    indices = decode_array(msg.indices, page, _UINT[bits], sel)
    if indices.null_count == 0:
        # 0 is null: take straight from the items behind a null item, no index arithmetic
        raw = indices.to_numpy()
        if len(raw) and int(raw.max()) > n_items:
            raise page.error(f"dictionary index {int(raw.max())} out of range (dictionary has {n_items} items)")
        with_null = page.cached(
            ("dictionary-items-after-null", msg.SerializeToString()),
            lambda: pa.concat_arrays([pa.nulls(1, items.type), items]),
        )
        return with_null.take(indices)
    raw = indices.to_numpy(zero_copy_only=False)
    idx = raw.astype(np.int64)
    if len(idx) and idx.max() > n_items:
        raise page.error(f"dictionary index {int(idx.max())} out of range (dictionary has {n_items} items)")
    null = idx == 0
    take = pa.array(idx - 1, type=pa.int64(), mask=null if null.any() else None)
    return items.take(take)


def _auto_dictionary(msg, page, dtype: pa.DataType, sel: Selection, n_items: int) -> pa.Array | None:
    """The reference's low-cardinality string page (plain u8 indices, small plain Binary items),
    decoded with few steps: the items are read in one request and get a null item in front,
    so the 1-based indices (0 = null) take from them as they are. None for any other layout."""
    flat = plain_flat(msg.indices)
    if flat is None or int(flat.bits_per_value) != 8 or msg.items.WhichOneof("array_encoding") != "binary":
        return None
    binary = msg.items.binary

    def items_after_null():
        got = decode_small_binary(binary, page, n_items)
        if got is None:
            return _NOT_SMALL
        offsets, data, valid = got
        items = build_binary(dtype, np.concatenate([[0], offsets]), data, np.concatenate([[False], valid]))
        return validate_values(items, f"{page.where}: dictionary")

    items = page.cached(("auto-dictionary", msg.SerializeToString()), items_after_null)
    if items is _NOT_SMALL:
        return None
    indices = decode_flat_rows(flat, page, pa.uint8(), sel, 8)
    raw = indices.to_numpy()
    if len(raw) and int(raw.max()) > n_items:
        raise page.error(f"dictionary index {int(raw.max())} out of range (dictionary has {n_items} items)")
    return pc.take(items, indices, boundscheck=False)  # checked just above


_NOT_SMALL = object()


def encode_dictionary(indices: pb.ArrayEncoding, items: pb.ArrayEncoding, num_items: int) -> pb.ArrayEncoding:
    return pb.ArrayEncoding(dictionary=pb.Dictionary(indices=indices, items=items, num_dictionary_items=num_items))
