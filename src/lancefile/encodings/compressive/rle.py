"""``Rle``: runs of equal values, as run values + u8 run lengths.

Proto: ``Rle { CompressiveEncoding values = 1 /* Flat{8|16|32|64} */; CompressiveEncoding run_lengths = 2 /* Flat{8} */; }``

* **Mini-block**: two buffers per chunk, ``[runs x T]`` and ``[runs x u8]``; the runs may
  cover more than the chunk's count, which is cut to it. ``7, 7, 7, 9`` as int32 is
  ``07000000 09000000`` + ``03 01``.
* **Block** (2.2 rep/def levels): ``[u64 values_byte_len][runs x T][runs x u8]``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from .. import kernels
from ..arrowutil import range_indices
from ._buffers import located
from .base import Chunks, Codec, Context, register
from .values import Fixed

__all__ = ["RleCodec"]


def _value_bits(msg) -> int:
    return int(msg.values.flat.bits_per_value)


@register("rle")
class RleCodec(Codec):
    name = "rle"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK})

    def label(self, msg) -> str:
        return f"rle({_value_bits(msg)})"

    def check(self, msg, ctx, grammar, where):
        v, r = msg.values, msg.run_lengths
        if (v.WhichOneof("compression") != "flat" or v.flat.HasField("data")
                or v.flat.bits_per_value not in (8, 16, 32, 64)
                or r.WhichOneof("compression") != "flat" or r.flat.HasField("data") or r.flat.bits_per_value != 8):
            raise CorruptFileError(f"{where}: RLE requires flat 8/16/32/64-bit values and flat u8 run lengths")
        if ctx is Context.BLOCK and not grammar.rle_levels:
            raise CorruptFileError(f"{where}: RLE-compressed levels are not part of this version's grammar")

    def num_buffers(self, msg):
        return 2

    def miniblock(self, msg, chunks: Chunks, first: int):
        bits = _value_bits(msg)
        w = bits // 8
        sizes_v, sizes_r = chunks.sizes[first], chunks.sizes[first + 1]
        runs = sizes_v // w
        if np.any(sizes_v % w) or np.any(sizes_r < runs):
            raise chunks.error("RLE chunk has a partial run value or fewer run lengths than values")
        values = chunks.gather(first, runs * w).view(f"<u{w}")
        lengths = chunks.gather(first + 1, runs).astype(np.int64)
        covered = np.concatenate([[0], np.cumsum(lengths)])
        ends = np.cumsum(runs)
        per_chunk = covered[ends] - covered[ends - runs]
        counts = chunks.counts
        if np.any(per_chunk < counts):
            c = int(np.argmax(per_chunk < counts))
            raise chunks.error(f"RLE runs of chunk {c} cover {int(per_chunk[c])} values, {int(counts[c])} expected")
        expanded = np.repeat(values, lengths)
        if not np.array_equal(per_chunk, counts):
            expanded = expanded[range_indices(np.cumsum(per_chunk) - per_chunk, counts)]
        return Fixed(expanded.view(np.uint8), bits, int(counts.sum()))

    def block(self, msg, data, num_values, where):
        bits = _value_bits(msg)
        out = located(where, kernels.rle_block_decode, data, bits, num_values)
        return Fixed(np.ascontiguousarray(out).view(np.uint8), bits, num_values)

    def blocks(self, msg, data, starts, sizes, counts, where):
        bits = _value_bits(msg)
        out = located(where, kernels.rle_block_decode_many, data, bits, starts, sizes, counts)
        return Fixed(np.ascontiguousarray(out).view(np.uint8), bits, int(counts.sum()))
