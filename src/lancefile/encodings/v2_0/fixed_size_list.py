"""FixedSizeList: ``dimension`` items per row, e.g. embedding vectors (2.0 ``FixedSizeList``).

Proto: ``lance.encodings.FixedSizeList { dimension, items, has_validity }``.

The items are encoded as one flat array of ``rows * dimension`` values (``items`` is
itself usually ``Nullable{...Flat}`` so items may be null). Row validity lives in an
outer ``Nullable``. A ``fixed_size_list<float32>[2]`` of ``[[1, 2], [3, 4]]`` is
``Nullable{no_nulls{FixedSizeList{2, Nullable{no_nulls{Flat{32}}}}}}`` with one buffer
``0000803f 00000040 00004040 00008040``.
"""

from __future__ import annotations

import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import UnsupportedEncodingError
from ..arrowutil import fixed_size_lists, fixed_width_bits
from ..registry import decode_array, register_array_decoder
from ..selection import Selection
from .flat import decode_flat_rows, plain_flat

__all__ = ["decode_fixed_size_list", "encode_fixed_size_list"]


@register_array_decoder("fixed_size_list")
def decode_fixed_size_list(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    d = int(msg.dimension)
    if not pa.types.is_fixed_size_list(dtype) or dtype.list_size != d:
        raise page.error(f"FixedSizeList of dimension {d} cannot decode to {dtype}")
    if msg.has_validity:
        raise UnsupportedEncodingError(f"{page.where}: FixedSizeList with has_validity is not supported in 2.0")
    flat = plain_flat(msg.items)
    item_bits = fixed_width_bits(dtype.value_type)
    if flat is not None and item_bits is not None and item_bits % 8 == 0 and int(flat.bits_per_value) == item_bits:
        # items without nulls, stored flat: a row is d values side by side, read as one
        return decode_flat_rows(flat, page, dtype, sel, item_bits * d)
    items = decode_array(msg.items, page, dtype.value_type, sel.scale(d))
    return fixed_size_lists(items, dtype, sel.count)


def encode_fixed_size_list(dimension: int, items: pb.ArrayEncoding) -> pb.ArrayEncoding:
    return pb.ArrayEncoding(fixed_size_list=pb.FixedSizeList(dimension=dimension, items=items, has_validity=False))
