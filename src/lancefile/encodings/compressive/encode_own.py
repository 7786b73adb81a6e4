"""lancefile's own mini-block choices, each kept by the caller only when the page comes out
smaller than the reference's by a margin (:mod:`~lancefile.encodings.strategy`), and the
byte-stream-split chunking they share with the reference's split under asked-for compression:

* floats of one magnitude: ``General{lz4, ByteStreamSplit}``, the LZ4 blocks holding runs of
  one byte only, compressed straight into the page's layout (:class:`~.chunks.FramedBuffers`);
* steadily growing 32/64-bit integers: ``General{zstd, ByteStreamSplit}``, 4,096 a chunk;
* u8 dictionary indices: ``General{zstd, Flat(8)}``, 4,096 a chunk.

pylance 14.0.2 reads all three.

Example: ids split into byte streams and entropy-coded take a few bytes a chunk::

    >>> import numpy as np
    >>> ids = np.arange(10**9, 10**9 + 20_000, dtype=np.int64).view(np.uint8)
    >>> coded = entropy_split_miniblock(ids, 64, best=20_000 * 2)
    >>> coded.encoding.general.values.WhichOneof("compression"), coded.counts.tolist(), coded.size < 2_000
    ('byte_stream_split', [4096, 4096, 4096, 4096, 3616], True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._proto import encodings_v2_1_pb2 as pb
from .. import kernels
from ..compression import ENTROPY_LEVEL, entropy_compress_many
from ..strategy import ENTROPY_MIN_GAIN, ENTROPY_SPLIT_CHUNK_VALUES, MINIBLOCK_MAX_VALUES, SPLIT_MIN_GAIN
from .chunks import FRAME_GAP, PAD_BYTE, Buffers, FramedBuffers, MiniChunks, flat, general, split_counts

__all__ = ["BSS_CHUNK_BYTES", "CHUNK_OVERHEAD", "bss_encoding", "bss_miniblock", "entropy_coded_indices",
           "entropy_split_miniblock", "split_float_miniblock", "split_float_rows", "SplitRows"]


BSS_CHUNK_BYTES = 4096  # 1024 32-bit or 512 64-bit values a chunk


def bss_encoding(bits: int) -> pb.CompressiveEncoding:
    return pb.CompressiveEncoding(byte_stream_split=pb.ByteStreamSplit(values=flat(bits)))


def bss_miniblock(data: np.ndarray, bits: int, per: int | None = None) -> MiniChunks:
    """ByteStreamSplit{Flat}: in each chunk (of ``per`` values, 4 KiB of them by default),
    byte j of value i at ``j*n + i`` (the caller wraps it in general compression, which is
    what makes it pay)."""
    w = bits // 8
    per = per or BSS_CHUNK_BYTES // w
    counts = split_counts(data.size // w, per)
    return MiniChunks(bss_encoding(bits), counts,
                      [Buffers(kernels.byte_stream_split_encode_chunks(data, bits, per), counts * w)])


# chunks tried before a whole page is split and compressed (when the page has more than
# twice as many: a sample of most of the page would only add to the work)
SPLIT_SAMPLE_CHUNKS = 32


def _split_sample(n: int, w: int) -> int:
    """Values of a page of ``n`` the split is tried on first (all of them: no sample step)."""
    sample = min(n, BSS_CHUNK_BYTES // w * SPLIT_SAMPLE_CHUNKS)
    return sample if n > 2 * sample else n


def _split_refused(size: int, best: int, sample: int | None = None, n: int = 1) -> bool:
    """Whether the split of a page (or of ``sample`` of its ``n`` values), ``size`` bytes,
    misses the gain over ``best``, the page's bytes as the reference would write it."""
    return size > (SPLIT_MIN_GAIN * best if sample is None else SPLIT_MIN_GAIN * best * sample / n)


def split_float_miniblock(data: np.ndarray, bits: int, best: int) -> MiniChunks | None:
    """General{lz4, ByteStreamSplit{Flat}} of floats, when it is below
    :data:`~lancefile.encodings.strategy.SPLIT_MIN_GAIN` of ``best`` (the page's bytes as
    the reference would write it), else None. The LZ4 blocks only hold runs of one byte
    (:func:`~lancefile.encodings.kernels.lz4.lz4_compress_runs_many`): what shrinks is a byte
    position that rarely changes (the sign and exponent of floats of one magnitude), at a
    small part of LZ4's cost to write and a fast decode. A sample of the page decides first."""
    w = bits // 8
    n = data.size // w
    sample = _split_sample(n, w)
    if sample < n and _split_refused(_runs_lz4(bss_miniblock(data[: sample * w], bits)).size, best, sample, n):
        return None
    split = _runs_lz4(bss_miniblock(data, bits), framed=True)
    return None if _split_refused(split.size, best) else split


@dataclass
class SplitRows:
    """:func:`split_float_rows`' pages: every page's chunks in one framed buffer."""

    packed: np.ndarray  # uint8: the pages one after the other, each chunk after its FRAME_GAP
    sizes: np.ndarray  # int64 (pages, chunks): each chunk's bytes (its LZ4 framing)
    counts: np.ndarray  # values a chunk (the same for every page)
    encoding: pb.CompressiveEncoding
    keep: np.ndarray  # bool a page: whether the split is kept (what split_float_miniblock says)


def split_float_rows(data: np.ndarray, bits: int, rows: int, best, row_gap: int = 0, row_align: int = 1,
                     row_fill: int = 0) -> SplitRows:
    """:func:`split_float_miniblock` of ``rows`` pages of as many floats, back to back in
    ``data`` (their bytes), in one compiled pass each for the split and for LZ4; ``best[r]``
    is page r's bytes as the reference would write it. The sample step's verdict comes from
    the page's own first chunks, which are the sample's. Each page's chunks start at a
    multiple of ``row_align`` in ``packed``, after ``row_gap`` bytes (``row_fill``; see
    :func:`~lancefile.encodings.kernels.lz4.lz4_compress_runs_many`).

    Example::

        >>> rng = np.random.default_rng(0)
        >>> two = np.concatenate([rng.random(3000), rng.normal(size=3000) * 1e300])
        >>> got = split_float_rows(two.view(np.uint8), 64, 2, [24_000, 24_000])
        >>> got.keep.tolist(), got.counts.tolist(), got.sizes.shape
        ([True, False], [512, 512, 512, 512, 512, 440], (2, 6))
    """
    w = bits // 8
    n = data.size // w // rows
    per = BSS_CHUNK_BYTES // w
    counts = split_counts(n, per)
    nc = len(counts)
    sizes = np.tile(counts * w, rows)
    split = kernels.byte_stream_split_encode_chunks(data, bits, per, rows)
    packed, out = kernels.lz4_compress_runs_many(split, np.cumsum(sizes) - sizes, sizes, gap=FRAME_GAP, align=8,
                                                 fill=PAD_BYTE, rows=(nc, row_gap, row_align, row_fill))
    by_row = out.reshape(rows, nc)
    sample = _split_sample(n, w)
    in_sample = by_row[:, : -(-sample // per)].sum(axis=1).tolist()
    totals = by_row.sum(axis=1).tolist()
    keep = np.array([not ((sample < n and _split_refused(z, b, sample, n)) or _split_refused(t, b))
                     for z, t, b in zip(in_sample, totals, np.asarray(best).tolist())], dtype=bool)
    return SplitRows(packed, by_row, counts, general("lz4", None, bss_encoding(bits)), keep)


ENTROPY_SAMPLE_CHUNKS = 4  # chunks tried before a whole page is coded
# what a mini-block chunk costs besides its values, about: its metadata word, header and padding
CHUNK_OVERHEAD = 12


def entropy_split_miniblock(data: np.ndarray, bits: int, best: int) -> MiniChunks | None:
    """General{zstd, ByteStreamSplit{Flat}} of 32/64-bit integers (entropy-coded, see
    :func:`~lancefile.encodings.compression.entropy_compress_many`), when it is at most
    :data:`~lancefile.encodings.strategy.ENTROPY_MIN_GAIN` of ``best`` (the reference's
    page, chunk overhead included), else None. Split into byte streams, ids and timestamps
    (values that grow steadily) are a counting low byte and near-constant high bytes, which
    zstd takes to a few bytes a chunk where bit packing keeps every value's low bits. A
    sample of the page decides first."""
    w = bits // 8
    n = data.size // w
    per = ENTROPY_SPLIT_CHUNK_VALUES  # each row a take wants costs its chunk's decompression
    sample = min(n, per * ENTROPY_SAMPLE_CHUNKS)

    def coded_size(mc: MiniChunks) -> int:
        return mc.size + CHUNK_OVERHEAD * len(mc.counts)

    if n > 2 * sample and coded_size(_zstd_chunks(bss_miniblock(data[: sample * w], bits, per))) > \
            ENTROPY_MIN_GAIN * best * sample / n:
        return None
    coded = _zstd_chunks(bss_miniblock(data, bits, per))
    return coded if coded_size(coded) <= ENTROPY_MIN_GAIN * best else None


def _zstd_chunks(mc: MiniChunks) -> MiniChunks:
    """``mc`` (one value buffer) entropy-coded under General{zstd}, chunk by chunk."""
    buf = mc.buffers[0]
    packed, sizes = entropy_compress_many(buf.data, buf.sizes)
    return MiniChunks(general("zstd", ENTROPY_LEVEL, mc.encoding), mc.counts, [Buffers(packed, sizes)])


def _runs_lz4(mc: MiniChunks, framed: bool = False) -> MiniChunks:
    """``mc`` (one value buffer) under General{lz4}, its blocks matching byte runs only
    (``framed``: as :class:`FramedBuffers`)."""
    buf = mc.buffers[0]
    if framed:
        packed, sizes = kernels.lz4_compress_runs_many(buf.data, buf.starts, buf.sizes, gap=FRAME_GAP, align=8,
                                                       fill=PAD_BYTE)
        return MiniChunks(general("lz4", None, mc.encoding), mc.counts, [FramedBuffers(packed, sizes)])
    packed, sizes = kernels.lz4_compress_runs_many(buf.data, buf.starts, buf.sizes)
    return MiniChunks(general("lz4", None, mc.encoding), mc.counts, [Buffers(packed, sizes)])


def entropy_coded_indices(indices: np.ndarray) -> MiniChunks:
    """``General{zstd, Flat(8)}`` of u8 dictionary indices, 4,096 a chunk: zstd's Huffman
    coding of the bytes, where bit packing rounds every index up to whole bits (5 values:
    3 bits packed, ~2.55 coded). lancefile's own choice; the caller keeps it only when the
    page comes out smaller."""
    counts = split_counts(indices.size, MINIBLOCK_MAX_VALUES)
    return _zstd_chunks(MiniChunks(flat(8), counts, [Buffers(indices, counts)]))
