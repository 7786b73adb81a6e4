"""``PackedStruct``: a struct of fixed-width fields stored row by row.

Proto: ``PackedStruct { repeated uint64 bits_per_value = 1; CompressiveEncoding values = 2 /* Flat{sum} */; }``

Each row holds its fields' bytes in field order: ``struct<x: int32, y: float64>`` rows are
12 bytes, ``x`` then ``y``. Struct nulls are in the definition levels, not here.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from .base import Codec, Context, decode_block, decode_fixed_values, decode_miniblock, register
from .values import Fixed, Struct

__all__ = ["PackedStructCodec"]


def _split(msg, v, where: str) -> Struct:
    bits = [int(b) for b in msg.bits_per_value]
    if not isinstance(v, Fixed) or v.bits != sum(bits) or any(b % 8 for b in bits):
        raise CorruptFileError(f"{where}: packed struct of {bits}-bit fields does not match its "
                               f"{getattr(v, 'bits', '?')}-bit rows")
    n = v.count
    rows = v.data[: n * v.bits // 8].reshape(n, v.bits // 8)
    edges = np.cumsum([0] + [b // 8 for b in bits])
    return Struct([Fixed(np.ascontiguousarray(rows[:, a:b]).reshape(-1), 8 * (b - a), n)
                   for a, b in zip(edges[:-1].tolist(), edges[1:].tolist())], n)


@register("packed_struct")
class PackedStructCodec(Codec):
    name = "packed_struct"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK, Context.FIXED_VALUE})

    def label(self, msg) -> str:
        return f"packed_struct({', '.join(str(b) for b in msg.bits_per_value)})"

    def check(self, msg, ctx, grammar, where):
        v = msg.values
        if v.WhichOneof("compression") != "flat":
            raise CorruptFileError(f"{where}: packed struct rows must be flat values")

    def num_buffers(self, msg):
        return 1

    def miniblock(self, msg, chunks, first):
        return _split(msg, decode_miniblock(msg.values, chunks, first), chunks.where)

    def block(self, msg, data, num_values, where):
        return _split(msg, decode_block(msg.values, data, num_values, where), where)

    def fixed_values(self, msg, rows, where):
        return _split(msg, decode_fixed_values(msg.values, rows, where), where)
