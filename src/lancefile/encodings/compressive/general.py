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

from .. import kernels
from ..compression import lz4_frames
from ._buffers import decompress, decompress_spans, located, scheme_name
from .values import Fixed
from .base import (Chunks, Codec, Context, decode_block, decode_blocks, decode_miniblock,
                   decode_variable_values, register, take_miniblock)

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
        inner = msg.values
        if inner.WhichOneof("compression") == "byte_stream_split" and scheme_name(msg.compression, chunks.where) == "lz4":
            return _lz4_split(inner.byte_stream_split, chunks, first)
        return decode_miniblock(inner, chunks.decompressed(first, msg.compression), first)

    def miniblock_take(self, msg, chunks: Chunks, first: int, positions):
        inner = msg.values
        kind = inner.WhichOneof("compression")
        if kind not in _PICKABLE or (kind == "byte_stream_split" and scheme_name(msg.compression, chunks.where) == "lz4"):
            return None  # decoded whole (lz4 byte-stream-split in one compiled pass)
        return take_miniblock(inner, chunks.decompressed(first, msg.compression), positions, first)

    def block(self, msg, data, num_values, where):
        return decode_block(msg.values, decompress(msg.compression, data, where), num_values, where)

    def blocks(self, msg, data, starts, sizes, counts, where):
        # every chunk's block decompressed in one pass, then decoded as the inner encoding's blocks
        out, ostarts, osizes = decompress_spans(msg.compression, data, starts, sizes, where)
        return decode_blocks(msg.values, out, ostarts, osizes, counts, where)

    def variable_values(self, msg, offsets, data, where):
        offsets = np.asarray(offsets, dtype=np.int64)
        out, _, sizes = decompress_spans(msg.compression, data, offsets[:-1], np.diff(offsets), where, align=1)
        out_offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=out_offsets[1:])
        return decode_variable_values(msg.values, out_offsets, out, where)


# inner encodings whose values are picked out of the decompressed chunks without decoding them all
_PICKABLE = ("flat", "byte_stream_split")


def _lz4_split(bss, chunks: Chunks, first: int) -> Fixed:
    """``General{lz4, ByteStreamSplit{Flat}}`` (lancefile's float choice, and the reference's
    with lz4 asked for) in one pass: each chunk is decompressed into the cache and transposed
    from there (:func:`~lancefile.encodings.kernels.lz4.lz4_bss_decode_many`)."""
    bits = int(bss.values.flat.bits_per_value)  # (checked when the page was first met)
    starts, sizes = chunks.starts[first], chunks.sizes[first]
    out = located(chunks.where, lambda: kernels.lz4_bss_decode_many(
        chunks.data, *lz4_frames(chunks.data, starts, sizes), chunks.counts, bits))
    return Fixed(out, bits, int(chunks.counts.sum()))
