"""PackedStruct: a struct of fixed-width children stored row by row (2.0 ``PackedStruct``).

Proto: ``lance.encodings.PackedStruct { repeated inner, buffer }``. ``inner[k]`` is
``Nullable{no_nulls{Flat{bits_k}}}`` for child k; ``buffer`` holds, for each row, every
child's bytes in field order. ``struct<a: int32, b: int16>`` rows ``(1, 2), (3, 4)`` are
``01000000 0200  03000000 0400`` (6 bytes a row). One page buffer, one column; used when
the struct's field metadata says ``packed: true`` and for 2.0 blob descriptors.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ..arrowutil import array_from_fixed, fixed_width_bits, to_uint8
from ..registry import register_array_decoder
from ..selection import Selection
from .spans import read_spans

__all__ = ["decode_packed_struct", "encode_packed_struct"]


@register_array_decoder("packed_struct")
def decode_packed_struct(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    if not pa.types.is_struct(dtype) or dtype.num_fields != len(msg.inner):
        raise page.error(f"PackedStruct with {len(msg.inner)} children cannot decode to {dtype}")
    fields = [dtype.field(i) for i in range(dtype.num_fields)]
    widths = []
    for f in fields:
        bits = fixed_width_bits(f.type)
        if bits is None or bits % 8:
            raise page.error(f"PackedStruct child {f.name!r} has {bits} bits, which does not fit {f.type}")
        widths.append(bits // 8)
    row = sum(widths)
    n = sel.count
    if sel.is_range:
        data = to_uint8(page.read_range(msg.buffer, sel.start * row, n * row))
    else:
        data = read_spans(page, msg.buffer, sel.indices * row, np.full(n, row, dtype=np.int64))
    mat = data.reshape(n, row) if row else np.empty((n, 0), np.uint8)
    children, pos = [], 0
    for f, w in zip(fields, widths):
        col = np.ascontiguousarray(mat[:, pos : pos + w])
        children.append(array_from_fixed(f.type, col, n))
        pos += w
    return pa.StructArray.from_arrays(children, fields=fields)


def _child_encoding(t: pa.DataType, buffer_index: int) -> pb.ArrayEncoding:
    """How the reference describes one packed child: ``Flat``, or ``FixedSizeList`` of it."""
    from .fixed_size_list import encode_fixed_size_list
    from .flat import encode_flat
    from .nullable import wrap_no_nulls

    if pa.types.is_fixed_size_list(t):
        inner = encode_fixed_size_list(t.list_size, _child_encoding(t.value_type, buffer_index))
        return wrap_no_nulls(inner)
    return wrap_no_nulls(encode_flat(fixed_width_bits(t), buffer_index))


def encode_packed_struct(child_types: list[pa.DataType], buffer_index: int = 0) -> pb.ArrayEncoding:
    inner = [_child_encoding(t, buffer_index) for t in child_types]
    return pb.ArrayEncoding(packed_struct=pb.PackedStruct(inner=inner, buffer=pb.Buffer(buffer_index=buffer_index)))
