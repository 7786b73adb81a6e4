"""``General``: LZ4 or ZSTD around another encoding.

Proto: ``General { BufferCompression compression = 1; CompressiveEncoding values = 3; }``

Framing of a compressed buffer: zstd ``[u64 length][zstd frame]``, lz4 ``[u32 length][raw
LZ4 block]`` (see :mod:`lancefile.encodings.compression`).

* **Mini-block**: value buffer 0 of every chunk is compressed on its own.
* **Block** (2.2 dictionaries, large blocks): the whole buffer.
* **Full-zip**: each value separately (``General{zstd, Variable}`` for large binaries).
"""

from __future__ import annotations

import numpy as np

from ._buffers import decompress, decompress_spans, scheme_name
from .base import Chunks, Codec, Context, decode_block, decode_miniblock, decode_variable_values, register

__all__ = ["GeneralCodec"]


@register("general")
class GeneralCodec(Codec):
    name = "general"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK, Context.VARIABLE_VALUE})

    def label(self, msg) -> str:
        scheme = {1: "lz4", 2: "zstd"}.get(int(msg.compression.scheme), "?")
        level = f":{msg.compression.level}" if msg.compression.HasField("level") else ""
        return f"{scheme}{level}"

    def children(self, msg, ctx):
        return [(msg.values if msg.HasField("values") else None, ctx)]

    def check(self, msg, ctx, grammar, where):
        scheme_name(msg.compression, where)

    def num_buffers(self, msg):
        from .base import miniblock_buffers

        return miniblock_buffers(msg.values, "")

    def miniblock(self, msg, chunks: Chunks, first: int):
        data, starts, sizes = decompress_spans(msg.compression, chunks.data, chunks.starts[first],
                                               chunks.sizes[first], chunks.where)
        return decode_miniblock(msg.values, chunks.with_buffer(first, data, starts, sizes), first)

    def block(self, msg, data, num_values, where):
        return decode_block(msg.values, decompress(msg.compression, data, where), num_values, where)

    def variable_values(self, msg, offsets, data, where):
        offsets = np.asarray(offsets, dtype=np.int64)
        out, _, sizes = decompress_spans(msg.compression, data, offsets[:-1], np.diff(offsets), where, align=1)
        out_offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=out_offsets[1:])
        return decode_variable_values(msg.values, out_offsets, out, where)
