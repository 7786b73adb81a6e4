"""``Flat``: raw little-endian values of ``bits_per_value`` bits (1: an LSB-first bitmap).

Proto: ``Flat { uint64 bits_per_value = 1; optional BufferCompression data = 2; }``

In a mini-block chunk the value buffer holds the chunk's values back to back, e.g. three
int32 ``1, 2, 3`` are ``01000000 02000000 03000000``; a chunk of booleans holds
``ceil(n/8)`` bitmap bytes. In a block (levels, dictionaries) the whole buffer is the
values; in full-zip each value's bytes sit after its control word.
``data`` (a general compression of the buffer) is never written by the reference, but
other writers may set it; it is honoured per chunk and per block.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from .. import kernels
from ._buffers import decompress
from .base import Chunks, Codec, Context, register
from .values import Fixed, concat

__all__ = ["FlatCodec"]


# The widest flat value: a 16 MiB fixed-width value (a row of a packed struct, a large
# fixed_size_binary); anything wider is a forged width.
MAX_FLAT_BITS = 8 << 24


@register("flat")
class FlatCodec(Codec):
    name = "flat"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK, Context.FIXED_VALUE})

    def label(self, msg) -> str:
        return f"flat({msg.bits_per_value})"

    def check(self, msg, ctx, grammar, where):
        bits = int(msg.bits_per_value)
        if bits == 0 or (bits != 1 and bits % 8) or bits > MAX_FLAT_BITS:
            raise CorruptFileError(f"{where}: flat values of {bits} bits cannot be decoded (need 1 or a whole number of bytes)")

    def miniblock(self, msg, chunks: Chunks, first: int):
        bits = int(msg.bits_per_value)
        if msg.HasField("data"):
            chunks = chunks.decompressed(first, msg.data)
        counts = chunks.counts
        if bits == 1:
            nbytes = (counts + 7) // 8
            if len(counts) > 1 and np.any(counts[:-1] % 8):
                # a chunk that ends inside a byte: join the bits, not the bytes
                parts = np.split(chunks.gather(first, nbytes), np.cumsum(nbytes)[:-1])
                return concat([Fixed(p, 1, int(n)) for p, n in zip(parts, counts.tolist())])
            return Fixed(chunks.gather(first, nbytes), 1, int(counts.sum()))
        return Fixed(chunks.gather(first, counts * (bits // 8)), bits, int(counts.sum()))

    def miniblock_take(self, msg, chunks: Chunks, first: int, positions):
        bits = int(msg.bits_per_value)
        found = None if msg.HasField("data") or bits % 8 else chunks.locate(first, positions, bits // 8)
        if found is None:
            return None
        _, start, local = found
        w = bits // 8
        return Fixed(kernels.gather_bytes(chunks.data, start + local * w, np.full(len(positions), w, np.int64)), bits,
                     len(positions))

    def block(self, msg, data, num_values, where):
        if msg.HasField("data"):
            data = decompress(msg.data, data, where)
        return Fixed(data, int(msg.bits_per_value), num_values)

    def blocks(self, msg, data, starts, sizes, counts, where):
        bits = int(msg.bits_per_value)
        if msg.HasField("data") or bits % 8:
            return super().blocks(msg, data, starts, sizes, counts, where)
        lengths = counts * (bits // 8)
        if np.any(lengths > sizes):
            raise CorruptFileError(f"{where}: a flat block of {bits}-bit values is too short for its count")
        return Fixed(kernels.gather_bytes(data, starts, lengths), bits, int(counts.sum()))

    def fixed_values(self, msg, rows, where):
        bits = int(msg.bits_per_value)
        if rows.shape[1] * 8 != bits:
            raise CorruptFileError(f"{where}: full-zip values of {rows.shape[1]} bytes hold flat {bits}-bit values")
        return Fixed(np.ascontiguousarray(rows).reshape(-1), bits, rows.shape[0])
