"""``ByteStreamSplit``: the bytes of floats regrouped by position, to compress better.

Proto: ``ByteStreamSplit { CompressiveEncoding values = 1 /* Flat{32|64} */; }``

Mini-block only, usually under ``General{zstd}``. In a chunk of n values byte j of value
i sits at ``j*n + i``: the float32s ``1.0, 2.0`` (``0000803f``, ``00000040``) become
``0000 0000 8000 3f40``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from .. import kernels
from .base import Chunks, Codec, Context, register
from .values import Fixed

__all__ = ["ByteStreamSplitCodec"]


@register("byte_stream_split")
class ByteStreamSplitCodec(Codec):
    name = "byte_stream_split"
    contexts = frozenset({Context.MINIBLOCK})

    def check(self, msg, ctx, grammar, where):
        v = msg.values
        if v.WhichOneof("compression") != "flat" or v.flat.bits_per_value not in (16, 32, 64):
            raise CorruptFileError(f"{where}: byte-stream-split needs flat 16/32/64-bit values")

    def miniblock(self, msg, chunks: Chunks, first: int):
        bits = int(msg.values.flat.bits_per_value)
        counts = chunks.counts
        out = kernels.byte_stream_split_decode_many(chunks.data, bits, chunks.starts[first], chunks.sizes[first],
                                                    counts)
        return Fixed(out.view(np.uint8), bits, int(counts.sum()))

    def miniblock_take(self, msg, chunks: Chunks, first: int, positions):
        bits = int(msg.values.flat.bits_per_value)
        w = bits // 8
        found = chunks.locate(first, positions, w)
        if found is None:
            return None
        c, start, local = found
        # byte j of the value at ``local`` in chunk c: ``start + j * count + local``
        at = (start + local)[:, None] + np.arange(w) * chunks.counts[c][:, None]
        return Fixed(np.ascontiguousarray(chunks.data[at]).reshape(-1), bits, len(positions))
