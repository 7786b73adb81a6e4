"""``Variable``: variable-width values (strings, binaries) as offsets + bytes.

Proto: ``Variable { CompressiveEncoding offsets = 1 /* Flat{32|64} */; optional BufferCompression values = 2; }``

* **Mini-block**: each chunk has one buffer ``[offsets (n+1) x u32|u64][bytes][pad]``, the
  offsets relative to the buffer's start, so ``"a", "bc"`` with u32 offsets is
  ``0c000000 0d000000 0f000000 | 61 62 63 | 48`` (the pad byte is 0x48 up to 4 bytes).
* **Block** (dictionaries): ``[u32 32][u32 bytes_start][offsets u32 x (n+1)][bytes]`` or
  the same with u64 fields; offsets index the bytes. An older form ``[u8 bits][u32|u64
  num_values][bytes_start]...`` is told apart by nonzero bytes 1..3, as the reference does.
* **Full-zip**: each value's bytes follow its length; the full-zip layer hands them over.
"""

from __future__ import annotations

import struct

import numpy as np

from ...errors import CorruptFileError
from ._buffers import decompress
from .base import Chunks, Codec, Context, register
from .values import Var
from ..arrowutil import range_indices

__all__ = ["VariableCodec", "block_parts", "block_parts_many", "check_offsets", "offset_bits"]


def offset_bits(msg, where: str) -> int:
    """32 or 64: the offsets' width, from ``offsets: Flat{bits}``."""
    off = msg.offsets
    if off.WhichOneof("compression") != "flat" or off.flat.bits_per_value not in (32, 64):
        raise CorruptFileError(f"{where}: variable-width offsets must be flat 32- or 64-bit")
    return int(off.flat.bits_per_value)


def check_offsets(offsets: np.ndarray, size: int, where: str) -> None:
    if len(offsets) and (offsets[0] < 0 or offsets[-1] > size or np.any(np.diff(offsets) < 0)):
        raise CorruptFileError(f"{where}: variable-width offsets decrease or point outside {size} bytes")


def block_parts(msg, data, num_values: int, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, bytes)`` of a ``Variable`` block (a dictionary): the header checked, the
    offsets (int64, ``num_values + 1`` of them, indexing the bytes) not yet, so that a caller
    holding many blocks checks all their offsets at once (:func:`check_offsets` checks one)."""
    if msg.HasField("values"):
        data = decompress(msg.values, data, where)
    n = num_values
    raw = bytes(data[:17])
    if len(raw) < 8:
        raise CorruptFileError(f"{where}: variable-width block of {len(data)} bytes has no header")
    if raw[1] or raw[2] or raw[3]:  # the old form: u8 bits, u32|u64 count, bytes_start
        bits = raw[0]
        head = 9 if bits == 32 else 17
        if bits not in (32, 64) or len(raw) < head:
            raise CorruptFileError(f"{where}: variable-width block with {bits}-bit offsets")
        start = struct.unpack_from("<I" if bits == 32 else "<Q", raw, 5 if bits == 32 else 9)[0]
    else:
        bits = struct.unpack_from("<I", raw)[0]
        if bits not in (32, 64) or (bits == 64 and len(raw) < 16):
            raise CorruptFileError(f"{where}: variable-width block with {bits}-bit offsets")
        head = 8 if bits == 32 else 16
        start = struct.unpack_from("<I", raw, 4)[0] if bits == 32 else struct.unpack_from("<Q", raw, 8)[0]
    ow = bits // 8
    if start != head + (n + 1) * ow or start > len(data):
        raise CorruptFileError(f"{where}: variable-width block of {n} values has bytes at {start} "
                               f"(expected {head + (n + 1) * ow}, block is {len(data)} bytes)")
    return data[head:start].view(f"<u{ow}").astype(np.int64), data[start:]


def block_parts_many(msg, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, counts: np.ndarray,
                     gather: bool = True):
    """:func:`block_parts` of many blocks at once (the dictionaries of a take's pages):
    ``(offsets, first, body)`` where block ``i``'s ``counts[i] + 1`` offsets are
    ``offsets[first[i] : first[i] + counts[i] + 1]`` (int64, not yet checked against the
    bytes) and its bytes start at ``data[body[i]]``. Handles the usual form (u32 offsets,
    each block starting at a multiple of 4 of ``data``); returns None for anything else,
    which :func:`block_parts` then reads (and names what is wrong) block by block.
    ``gather=False`` copies no offsets: ``offsets`` is then all of ``data`` as u32 words
    and ``first`` the word of each block's first offset (a take that looks up a hundred
    items of 70 dictionaries reads those, not the 70,000 offsets).

    Example::

        >>> blk = np.frombuffer(struct.pack("<IIIII", 32, 20, 0, 1, 3) + b"abc" + bytes(1), np.uint8)
        >>> offs, first, body = block_parts_many(None, np.concatenate([blk, blk]), np.array([0, 24]),
        ...                                      np.array([23, 23]), np.array([2, 2]))
        >>> offs.tolist(), first.tolist(), body.tolist()
        ([0, 1, 3, 0, 1, 3], [0, 3], [20, 44])
    """
    if msg is not None and msg.HasField("values"):
        return None
    starts = np.asarray(starts, np.int64)
    sizes = np.asarray(sizes, np.int64)
    counts = np.asarray(counts, np.int64)
    if not len(starts) or np.any(starts % 4) or np.any(sizes < 8) or len(data) % 4:
        return None
    words = data.view("<u4")
    at = starts // 4
    head = words[at]
    start = words[at + 1].astype(np.int64)
    expect = 8 + 4 * (counts + 1)
    if np.any(head != 32) or np.any(start != expect) or np.any(start > sizes):
        return None
    if not gather:
        return words, at + 2, starts + start
    first = np.cumsum(counts + 1) - (counts + 1)
    return words[range_indices(at + 2, counts + 1)].astype(np.int64), first, starts + start


@register("variable")
class VariableCodec(Codec):
    name = "variable"
    contexts = frozenset({Context.MINIBLOCK, Context.BLOCK, Context.VARIABLE_VALUE})

    def label(self, msg) -> str:
        return f"variable({msg.offsets.flat.bits_per_value if msg.offsets.HasField('flat') else '?'})"

    def check(self, msg, ctx, grammar, where):
        offset_bits(msg, where)

    def miniblock(self, msg, chunks: Chunks, first: int):
        ow = offset_bits(msg, chunks.where) // 8
        if msg.HasField("values"):
            chunks = chunks.decompressed(first, msg.values)
        counts = chunks.counts
        seg = counts + 1
        rel = chunks.gather(first, seg * ow).view(f"<u{ow}").astype(np.int64)
        ends = np.cumsum(seg)
        heads = ends - seg
        r0, rn = rel[heads], rel[ends - 1]
        sizes = chunks.sizes[first]
        inner = np.diff(rel)
        inner[ends[:-1] - 1] = 0  # the step from one chunk's last offset to the next's first
        if np.any(r0 != seg * ow) or np.any(rn > sizes) or np.any(inner < 0):
            raise chunks.error("variable-width chunk offsets decrease or point outside their chunk")
        region = rn - r0
        base = np.cumsum(region) - region
        chunk_of = np.repeat(np.arange(len(counts)), seg)
        glob = rel - (r0 - base)[chunk_of]
        keep = np.ones(len(glob), dtype=bool)
        keep[heads[1:]] = False
        data = Chunks(chunks.data, (chunks.starts[first] + r0)[None, :], region[None, :], counts, chunks.where)
        return Var(glob[keep], data.gather(0, region))

    def block(self, msg, data, num_values, where):
        offsets, body = block_parts(msg, data, num_values, where)
        check_offsets(offsets, len(body), where)
        return Var(offsets - offsets[0], body[offsets[0] : offsets[-1]])

    def variable_values(self, msg, offsets, data, where):
        if msg.HasField("values"):
            raise CorruptFileError(f"{where}: buffer compression cannot apply to full-zip values one by one")
        return Var(offsets, data)
