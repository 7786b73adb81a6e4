"""The write side of the compressive layer for block buffers: each mini-block chunk's
rep/def levels, and dictionaries, with their ``CompressiveEncoding`` message (the values'
encoders are in :mod:`.encode`).

Example: 3,000 def levels of at most 1 in two chunks, bit-packed out of line at 1 bit
(1,024 levels a group, in u16 words)::

    >>> import numpy as np
    >>> levels = (np.arange(3000) % 7 == 0).astype(np.uint16)
    >>> enc, buf = block_levels(levels, np.array([0, 2048, 3000]), 1)
    >>> enc.WhichOneof("compression"), buf.sizes.tolist()
    ('out_of_line_bitpacking', [256, 128])
"""

from __future__ import annotations

import numpy as np

from ..._proto import encodings_v2_1_pb2 as pb
from .. import kernels
from ..kernels.fastlanes import FASTLANES_CHUNK
from ..compression import ENTROPY_LEVEL, entropy_compress_many
from .chunks import Buffers, flat, general

__all__ = ["block_levels", "entropy_levels", "variable_block"]


def block_levels(levels: np.ndarray, bounds: np.ndarray, max_level: int, rle: bool = False
                 ) -> tuple[pb.CompressiveEncoding, Buffers]:
    """Compress each chunk's u16 levels with one block encoding chosen for the page:
    InlineBitpacking(16) for pages of at most 1024 levels, else OutOfLineBitpacking(16)
    at the page's width (the reference's choices, REFERENCE-NOTES §4.2)."""
    width = int(max_level).bit_length()
    pieces = [levels[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())] if len(levels) <= 4096 else None
    if width == 0:
        return flat(16), Buffers(levels.astype("<u2").view(np.uint8), np.diff(bounds) * 2)
    if len(levels) <= FASTLANES_CHUNK:
        enc = pb.CompressiveEncoding(inline_bitpacking=pb.InlineBitpacking(uncompressed_bits_per_value=16))
        return enc, Buffers.of([np.frombuffer(kernels.inline_bitpacking_encode(p.astype(np.uint16)), np.uint8)
                                if len(p) else np.zeros(0, np.uint8) for p in pieces])
    enc = pb.CompressiveEncoding(out_of_line_bitpacking=pb.OutOfLineBitpacking(
        uncompressed_bits_per_value=16, values=flat(width)))
    if rle and _rle_levels_size(levels, bounds) < _packed_levels_size(bounds, width):
        # 2.2: the RLE level frame when it is smaller (long runs: few nulls, short lists)
        rdata, rsizes = kernels.rle_block_encode_many(levels.astype(np.uint16), bounds)
        return pb.CompressiveEncoding(rle=pb.Rle(values=flat(16), run_lengths=flat(8))), Buffers(rdata, rsizes)
    data, sizes = kernels.out_of_line_bitpacking_encode_many(levels.astype(np.uint16), bounds, width)
    return enc, Buffers(data, sizes)


def entropy_levels(levels: np.ndarray, bounds: np.ndarray) -> tuple[pb.CompressiveEncoding, Buffers]:
    """Each chunk's u16 levels under zstd (``General{zstd, Flat(16)}``), tuned for entropy
    coding: 4,096 def levels with 1% nulls take ~110 bytes, against ~280 as RLE runs."""
    data, sizes = entropy_compress_many(levels.astype("<u2"), np.diff(bounds) * 2)
    return general("zstd", ENTROPY_LEVEL, flat(16)), Buffers(data, sizes)


def _rle_levels_size(levels: np.ndarray, bounds: np.ndarray) -> int:
    """Bytes of the RLE level frames (runs of at most 255 counted roughly: enough to choose)."""
    runs = int(np.count_nonzero(levels[1:] != levels[:-1])) + len(bounds) - 1 + len(levels) // kernels.RLE_MAX_RUN
    return 8 * (len(bounds) - 1) + 3 * runs


def _packed_levels_size(bounds: np.ndarray, width: int) -> int:
    """Bytes of out-of-line bit packing of every chunk's levels at ``width`` (u16 words)."""
    counts = np.diff(bounds)
    full, tail = np.divmod(counts, FASTLANES_CHUNK)
    wpc = FASTLANES_CHUNK * width // 16
    padded = (tail > 0) & (width * (FASTLANES_CHUNK - tail) < (16 - width) * tail)
    return int(((full + padded) * wpc + np.where(padded, 0, tail)).sum()) * 2


def variable_block(offsets: np.ndarray, data: np.ndarray, off_bits: int) -> bytes:
    """The block form of Variable (dictionaries): ``[bits][bytes_start][offsets][bytes]``."""
    dt = np.dtype(f"<u{off_bits // 8}")
    n = len(offsets) - 1
    head = 2 * (off_bits // 8)
    start = head + (n + 1) * (off_bits // 8)
    return (np.array([off_bits, start], dt).tobytes() + (offsets - offsets[0]).astype(dt).tobytes()
            + data[int(offsets[0]) : int(offsets[-1])].tobytes())
