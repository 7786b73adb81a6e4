"""Nullable: validity around another encoding (2.0 ``Nullable``).

Proto: ``lance.encodings.Nullable { oneof nullability { NoNull no_nulls; SomeNull some_nulls;
AllNull all_nulls } }``.

* ``no_nulls{values}``: every row is valid; ``values`` decodes the page.
* ``some_nulls{validity, values}``: ``validity`` is a ``Flat{1}`` LSB-first bitmap
  (bit set = valid) in the first page buffer, ``values`` follows (null slots hold
  whatever the writer's Arrow buffer had). E.g. int32 ``[7, null, 9]`` is the buffers
  ``05`` and ``07000000 00000000 09000000``.
* ``all_nulls{}``: no buffers; every row is null.
"""

from __future__ import annotations

import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ..arrowutil import apply_validity
from ..registry import decode_array, register_array_decoder
from ..selection import Selection

__all__ = ["decode_nullable", "wrap_no_nulls", "wrap_some_nulls", "all_nulls"]


@register_array_decoder("nullable")
def decode_nullable(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    kind = msg.WhichOneof("nullability")
    if kind == "no_nulls":
        return decode_array(msg.no_nulls.values, page, dtype, sel)
    if kind == "all_nulls":
        return pa.nulls(sel.count, dtype)
    if kind == "some_nulls":
        validity = decode_array(msg.some_nulls.validity, page, pa.bool_(), sel)
        values = decode_array(msg.some_nulls.values, page, dtype, sel)
        if len(validity) != len(values):
            raise page.error(f"validity has {len(validity)} rows but values have {len(values)}")
        return apply_validity(values, validity)
    raise page.error("Nullable encoding has no nullability variant set")


def wrap_no_nulls(values: pb.ArrayEncoding) -> pb.ArrayEncoding:
    return pb.ArrayEncoding(nullable=pb.Nullable(no_nulls=pb.Nullable.NoNull(values=values)))


def wrap_some_nulls(validity: pb.ArrayEncoding, values: pb.ArrayEncoding) -> pb.ArrayEncoding:
    return pb.ArrayEncoding(
        nullable=pb.Nullable(some_nulls=pb.Nullable.SomeNull(validity=validity, values=values))
    )


def all_nulls() -> pb.ArrayEncoding:
    return pb.ArrayEncoding(nullable=pb.Nullable(all_nulls=pb.Nullable.AllNull()))
