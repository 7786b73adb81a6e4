"""``FixedSizeList``: ``items_per_value`` items a value, with the items' validity if any.

Proto: ``FixedSizeList { uint64 items_per_value = 1; CompressiveEncoding values = 2; bool has_validity = 3; }``

Nested lists nest the message, outer first. Item validity is an LSB-first bitmap:

* **Mini-block**: one buffer per layer with validity (all that layer's items in the chunk),
  then the items' buffer(s); e.g. 512 rows of ``fixed_size_list<float>[2]`` with item nulls
  are buffers ``[128 validity bytes][4096 value bytes]``.
* **Full-zip**: each row is ``[ceil(items/8) validity bytes per layer with validity][values]``.
* **Block**: the items back to back (no validity).
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError, UnsupportedEncodingError
from ..arrowutil import range_indices
from .base import Chunks, Codec, Context, decode_block, decode_fixed_values, decode_miniblock, miniblock_buffers, register
from .values import Fsl

__all__ = ["FixedSizeListCodec"]


# Arrow's fixed_size_list holds at most 2**31 - 1 items a value.
MAX_ITEMS_PER_VALUE = (1 << 31) - 1


def _dim(msg, where: str) -> int:
    dim = int(msg.items_per_value)
    if not 0 < dim <= MAX_ITEMS_PER_VALUE:
        raise CorruptFileError(f"{where}: fixed-size list of {dim} items")
    return dim


@register("fixed_size_list")
class FixedSizeListCodec(Codec):
    name = "fixed_size_list"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK, Context.FIXED_VALUE})

    def label(self, msg) -> str:
        return f"fsl({msg.items_per_value}{', validity' if msg.has_validity else ''})"

    def children(self, msg, ctx):
        return [(msg.values if msg.HasField("values") else None, ctx)]

    def check(self, msg, ctx, grammar, where):
        _dim(msg, where)

    def num_buffers(self, msg):
        return int(msg.has_validity) + miniblock_buffers(msg.values, "")

    def miniblock(self, msg, chunks: Chunks, first: int):
        dim = _dim(msg, chunks.where)
        items = chunks.counts * dim
        valid = None
        if msg.has_validity:
            nbytes = (items + 7) // 8
            bits = np.unpackbits(chunks.gather(first, nbytes), bitorder="little").view(np.bool_)
            valid = bits[range_indices(np.cumsum(nbytes * 8) - nbytes * 8, items)]
            first += 1
        inner = Chunks(chunks.data, chunks.starts, chunks.sizes, items, chunks.where)
        return Fsl(dim, valid, decode_miniblock(msg.values, inner, first))

    def block(self, msg, data, num_values, where):
        if msg.has_validity:
            raise UnsupportedEncodingError(f"{where}: fixed-size lists with item validity in a block buffer")
        dim = _dim(msg, where)
        return Fsl(dim, None, decode_block(msg.values, data, num_values * dim, where))

    def fixed_values(self, msg, rows, where):
        return self._rows(msg, rows, 1, where)

    def _rows(self, msg, rows: np.ndarray, mult: int, where: str) -> Fsl:
        """Layer of ``mult`` * dim items per row; ``rows`` holds this and the inner layers."""
        dim = _dim(msg, where)
        n = rows.shape[0]
        items = mult * dim
        valid = None
        if msg.has_validity:
            nbytes = (items + 7) // 8
            if rows.shape[1] < nbytes:
                raise CorruptFileError(f"{where}: full-zip rows of {rows.shape[1]} bytes lack item validity")
            valid = np.unpackbits(rows[:, :nbytes], axis=1, bitorder="little")[:, :items].reshape(-1).view(np.bool_)
            rows = rows[:, nbytes:]
        inner = msg.values
        if inner.WhichOneof("compression") == "fixed_size_list":
            return Fsl(dim, valid, self._rows(inner.fixed_size_list, rows, items, where))
        width = rows.shape[1]
        if width % items:
            raise CorruptFileError(f"{where}: full-zip rows of {width} value bytes do not split into {items} items")
        return Fsl(dim, valid, decode_fixed_values(inner, np.ascontiguousarray(rows).reshape(n * items, width // items),
                                                   where))
