"""Mini-block value chunks as the encoders build them and the page encoder lays them out:
one buffer per value buffer of the chunks (:class:`Buffers`), the encoding and the chunks'
value counts (:class:`MiniChunks`), and the small message builders every encoder uses.

Example::

    >>> import numpy as np
    >>> mc = MiniChunks(flat(32), split_counts(2500, 1024), [Buffers(np.zeros(10000, np.uint8), np.array([4096, 4096, 1808]))])
    >>> mc.counts.tolist(), mc.size, mc.buffers[0].starts.tolist()
    ([1024, 1024, 452], 10000, [0, 4096, 8192])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._proto import encodings_v2_1_pb2 as pb
from ..compression import PROTO_BY_SCHEME

__all__ = ["Buffers", "FramedBuffers", "FRAME_GAP", "PAD_BYTE", "MiniChunks", "flat", "general", "split_counts"]

PAD_BYTE = 0xFE  # what pads a mini-block chunk's header and buffers to 8 bytes (the reference's)


@dataclass
class Buffers:
    """One value buffer of every chunk: chunk ``c``'s bytes follow chunk ``c-1``'s in ``data``."""

    data: np.ndarray  # uint8
    sizes: np.ndarray  # int64 bytes per chunk

    @classmethod
    def of(cls, pieces: list) -> "Buffers":
        arrays = [np.frombuffer(p, np.uint8) if isinstance(p, (bytes, bytearray)) else p for p in pieces]
        data = np.concatenate(arrays) if arrays else np.zeros(0, np.uint8)
        return cls(data, np.array([len(a) for a in arrays], dtype=np.int64))

    @property
    def starts(self) -> np.ndarray:
        return np.cumsum(self.sizes) - self.sizes

    def piece(self, c: int) -> np.ndarray:
        s = int(self.starts[c])
        return self.data[s : s + int(self.sizes[c])]


# room a framed buffer leaves before each chunk's bytes: a mini-block chunk header without
# levels and with one value buffer (u16 level count, u16|u32 buffer size) padded to 8 bytes
FRAME_GAP = 8


class FramedBuffers(Buffers):
    """A chunk's one value buffer laid out as the mini-block page holds it: chunk ``c``'s
    bytes start :data:`FRAME_GAP` bytes after the end of chunk ``c-1``'s, padded to 8 bytes
    (:data:`PAD_BYTE`). A page of chunks without levels takes ``data`` as it is and writes
    only the headers into the gaps, instead of copying every chunk into place."""

    @property
    def starts(self) -> np.ndarray:
        padded = (self.sizes + 7) // 8 * 8
        return np.cumsum(padded + FRAME_GAP) - padded


@dataclass
class MiniChunks:
    """Mini-block values: value buffer ``k`` of every chunk is ``buffers[k]``."""

    encoding: pb.CompressiveEncoding
    counts: np.ndarray  # int64 values per chunk
    buffers: list[Buffers]

    @property
    def num_buffers(self) -> int:
        return len(self.buffers)

    @property
    def size(self) -> int:
        """Value bytes over all chunks (before chunk headers and padding)."""
        return sum(int(b.sizes.sum()) for b in self.buffers)


def flat(bits: int) -> pb.CompressiveEncoding:
    return pb.CompressiveEncoding(flat=pb.Flat(bits_per_value=bits))



def general(scheme: str, level: int | None, inner: pb.CompressiveEncoding) -> pb.CompressiveEncoding:
    """``General{scheme[, level], inner}``: LZ4/ZSTD around ``inner``'s buffers."""
    bc = pb.BufferCompression(scheme=PROTO_BY_SCHEME[scheme])
    if level is not None:
        bc.level = level
    return pb.CompressiveEncoding(general=pb.General(compression=bc, values=inner))


def split_counts(total: int, per: int) -> np.ndarray:
    full, rest = divmod(total, per)
    counts = np.full(full, per, np.int64)
    return np.append(counts, rest) if rest else counts
