"""``InlineBitpacking`` and ``OutOfLineBitpacking``: FastLanes bit packing of integers.

Protos::

    InlineBitpacking { uint64 uncompressed_bits_per_value = 1; optional BufferCompression values = 2; }
    OutOfLineBitpacking { uint64 uncompressed_bits_per_value = 1; CompressiveEncoding values = 3; }

*Inline* (mini-block values, small blocks): every 1024 values are ``[W as one T-bit
word][1024*W/T packed T-bit words]``, the last 1024 zero-padded; e.g. uint8 values below 8
give ``03`` + 384 bytes. *Out-of-line* (levels and dictionaries of more than 1024
values): one width W for the whole buffer, given by ``values: Flat{W}``; whole chunks
back to back, then the tail either padded and packed or as raw T-bit words. The FastLanes
order is described in :mod:`lancefile.encodings.kernels.fastlanes`.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from .. import kernels
from ._buffers import decompress, located
from .base import Chunks, Codec, Context, register
from .values import Fixed

__all__ = ["InlineBitpackingCodec", "OutOfLineBitpackingCodec"]

_WORD_BITS = (8, 16, 32, 64)


def _bits(msg, where: str) -> int:
    bits = int(msg.uncompressed_bits_per_value)
    if bits not in _WORD_BITS:
        raise CorruptFileError(f"{where}: bitpacking of {bits}-bit values (expected 8, 16, 32 or 64)")
    return bits


def _fixed(values: np.ndarray, bits: int) -> Fixed:
    return Fixed(values.view(np.uint8), bits, len(values))


@register("inline_bitpacking")
class InlineBitpackingCodec(Codec):
    name = "inline_bitpacking"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK})

    def label(self, msg) -> str:
        return f"bitpack({msg.uncompressed_bits_per_value})"

    def check(self, msg, ctx, grammar, where):
        _bits(msg, where)

    def miniblock(self, msg, chunks: Chunks, first: int):
        bits = int(msg.uncompressed_bits_per_value)
        if msg.HasField("values"):
            chunks = chunks.decompressed(first, msg.values)
        # every chunk must hold its packed groups: a width word + 128*W bytes per 1024 values
        out = located(chunks.where, kernels.inline_bitpacking_decode_chunks, chunks.data, bits,
                      chunks.starts[first], chunks.counts, chunks.sizes[first])
        return _fixed(out, bits)

    def miniblock_take(self, msg, chunks: Chunks, first: int, positions):
        if msg.HasField("values"):  # compressed buffers: whole chunks must be inflated anyway
            return None
        bits = int(msg.uncompressed_bits_per_value)
        out = located(chunks.where, kernels.inline_bitpacking_take_chunks, chunks.data, bits,
                      chunks.starts[first], chunks.counts, chunks.sizes[first], positions)
        return _fixed(out, bits)

    def block(self, msg, data, num_values, where):
        bits = _bits(msg, where)
        if msg.HasField("values"):
            data = decompress(msg.values, data, where)
        return _fixed(located(where, kernels.inline_bitpacking_decode, data, bits, num_values), bits)


    def blocks(self, msg, data, starts, sizes, counts, where):
        bits = _bits(msg, where)
        if msg.HasField("values"):
            return super().blocks(msg, data, starts, sizes, counts, where)
        out = located(where, kernels.inline_bitpacking_decode_chunks, data, bits, starts, counts, sizes)
        return _fixed(out, bits)


@register("out_of_line_bitpacking")
class OutOfLineBitpackingCodec(Codec):
    name = "out_of_line_bitpacking"
    contexts = frozenset({Context.BLOCK})

    def label(self, msg) -> str:
        inner = msg.values.flat.bits_per_value if msg.values.HasField("flat") else "?"
        return f"bitpack({msg.uncompressed_bits_per_value}->{inner})"

    def check(self, msg, ctx, grammar, where):
        bits = _bits(msg, where)
        if msg.values.WhichOneof("compression") != "flat" or msg.values.flat.HasField("data"):
            raise CorruptFileError(f"{where}: out-of-line bitpacking must give its width as a plain flat encoding")
        if msg.values.flat.bits_per_value > bits:
            raise CorruptFileError(
                f"{where}: out-of-line bitpacking width {msg.values.flat.bits_per_value} exceeds {bits} bits")

    def block(self, msg, data, num_values, where):
        bits = _bits(msg, where)
        width = int(msg.values.flat.bits_per_value)
        words = bits // 8
        data = data[: len(data) - len(data) % words]
        return _fixed(located(where, kernels.out_of_line_bitpacking_decode, data, bits, width, num_values), bits)

    def blocks(self, msg, data, starts, sizes, counts, where):
        bits = _bits(msg, where)
        width = int(msg.values.flat.bits_per_value)
        out = located(where, kernels.out_of_line_bitpacking_decode_blocks, data, bits, width, starts, sizes, counts)
        return _fixed(out, bits)
