"""Many float columns' 2.1/2.2 pages at once: a wide table's write.

A table of a thousand float columns is a thousand small pages, and encoding them one at a
time is mostly Python between short compiled calls. Here the pages of many top-level
float32/float64 columns without nulls, each one page of the same length, are encoded
together: their values lie back to back in one buffer (one row of a matrix each), every
test the page encoder runs on a page (constant? runs for RLE? bit-packed size? a
dictionary?) runs on all rows in one vectorised or compiled step, and lancefile's float
encoding (byte-stream-split under LZ4, :func:`~..compressive.encode_own.split_float_rows`)
is one compiled pass for all of them.

Only pages whose every test gives the common answer (not constant, no RLE, no dictionary,
the split kept) are encoded here; for the others the caller goes the one-page way
(:func:`~.encoder.encode_leaf_page`). Either way a page's bytes are the same: the file does
not depend on which way it went (``tests/encodings/test_encode_many.py`` holds them equal).

Example::

    >>> import numpy as np, pyarrow as pa
    >>> from lancefile.encodings.strategy import FieldParams, Strategy
    >>> from lancefile.format.version import resolve_version
    >>> cols = np.random.default_rng(0).random((3, 1000))
    >>> cols[2] = 7.0  # a constant page: left to the one-page way
    >>> placed = float_pages(pa.array(cols.reshape(-1)), 3, Strategy(FieldParams()), resolve_version("2.2").grammar)
    >>> [p is None for p in placed], placed[0][0].encoding.mini_block_layout.num_items
    ([False, False, True], 1000)
    >>> placed[0][2:], placed[1][2]  # buffer starts and sizes in their array, 64-byte aligned
    (([0, 64], [8, 7080]), [7168, 7232])
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_1_pb2 as pb
from ...format.container import BUFFER_PAD_BYTE
from ...format.version import Grammar
from .. import kernels
from ..kernels._common import run_parallel
from ..compressive.chunks import FRAME_GAP, PAD_BYTE, split_counts
from ..compressive.encode import bitpacking_plan_of
from ..compressive.encode_own import BSS_CHUNK_BYTES, split_float_rows
from ..page import EncodedPage
from ..strategy import Strategy
from .encoder import miniblock_layout
from .repdef import Layer

__all__ = ["float_pages", "group_fields", "many_key"]

_FLOATS = (pa.float32(), pa.float64())
_ALL_VALID = [int(Layer.ALL_VALID_ITEM)]


def many_key(field_type: pa.DataType, strategy: Strategy, blob: bool) -> tuple | None:
    """What top-level fields :func:`float_pages` encodes together share, or None for a field
    it cannot encode: float32/float64 leaves whose field asks for nothing that rules out
    lancefile's float encoding (what else a field may ask, an RLE threshold or a dictionary
    ratio, takes its page the one-page way when it applies). ``(type, options, own
    choices)``: fields of one key go in one group."""
    if blob or field_type not in _FLOATS or not strategy.split_floats(field_type.bit_width, True):
        return None
    return field_type, strategy.params, strategy.own_choices


def group_fields(fields, what, max_page_bytes: int, limit: int) -> list[tuple[bool, list[int], int]]:
    """``fields`` (in order) as ``(together, fields, rows)`` steps, in order: runs of two or
    more that :func:`float_pages` can encode together (``together``: ``rows`` values each),
    up to ``limit`` bytes of values a run, and the others, to be encoded one at a time.
    ``what(field)`` says ``(key, rows, has nulls)``: fields go together when they share a
    key that is not None (their type first, then their options: :func:`many_key`), their row count
    (two or more, one page of at most ``max_page_bytes``) and have no nulls.

    Example::

        >>> f8 = (pa.float64(),)
        >>> info = {0: (f8, 10, False), 1: (f8, 10, False), 2: (None, 10, False), 3: (f8, 10, False),
        ...         4: (f8, 10, True), 5: (f8, 10, False), 6: (f8, 9, False), 7: (f8, 9, False)}
        >>> group_fields(range(8), info.get, 1000, 1000)
        [(True, [0, 1], 10), (False, [2, 3, 4, 5], 0), (True, [6, 7], 9)]
    """
    steps: list[tuple[bool, list[int], int]] = []
    others: list[int] = []
    group: list[int] = []
    key, rows, size = None, 0, 0

    def close_group() -> None:
        if len(group) > 1:
            if others:
                steps.append((False, others[:], 0))
                others.clear()
            steps.append((True, group[:], rows))
        else:
            others.extend(group)
        group.clear()

    for i in fields:
        k, n, nulls = what(i)
        width = 0 if k is None else k[0].bit_width // 8
        if k is None or nulls or n < 2 or n * width + n // 8 + 1 > max_page_bytes:
            close_group()
            others.append(i)
            continue
        if group and (k != key or n != rows or size + n * width > limit):
            close_group()
        if not group:
            key, rows, size = k, n, 0
        group.append(i)
        size += n * width
    close_group()
    if others:
        steps.append((False, others, 0))
    return steps


_PARALLEL_BYTES = 1 << 20  # values split and compressed by two threads, half the pages each, from this many bytes


def float_pages(values: pa.Array, rows: int, strategy: Strategy, grammar: Grammar, alignment: int = 64
                ) -> list[tuple[EncodedPage, np.ndarray, list[int], list[int]] | None]:
    """The pages of ``rows`` columns of as many float values, back to back in ``values``
    (no nulls, at least two values a column, each column one page), encoded together:
    entry ``r`` is what :func:`~.encoder.encode_leaf_page` makes of column ``r``, with the
    array its buffers lie in and where (starts, sizes), or None where that takes another
    way than lancefile's float encoding (the caller encodes it alone).

    The array holds the pages as a file does (:meth:`~lancefile.sink.FileSink.add_laid_out`):
    each buffer at a multiple of ``alignment``, the padding between them the sink's. (Large
    groups are split and compressed by two threads, half the pages in each of two arrays.)"""
    bits = values.type.bit_width
    w = bits // 8
    n = len(values) // rows
    if values.null_count or n < 2 or n * rows != len(values):
        raise ValueError(f"float_pages: {len(values)} values with {values.null_count} nulls are not {rows} columns "
                         "of two values or more without nulls")
    words = np.frombuffer(values.buffers()[1], dtype=f"<u{w}", count=len(values), offset=values.offset * w)
    words = words.reshape(rows, n)
    ok = np.ones(rows, dtype=bool)
    if grammar.constant_values:  # a constant page's first two values are equal
        ok &= words[:, 0] != words[:, 1]
    runs = np.count_nonzero(words[:, 1:] != words[:, :-1], axis=1) + 1
    ok &= np.array([not strategy.use_rle(r, n) for r in runs.tolist()], dtype=bool)
    if bits == 64:
        ok &= strategy.no_fixed_dictionary_rows(words, True, grammar.general_blocks)
    widths, done = kernels.chunk_bit_widths_rows(words, stop_at=bits)
    best = []
    for r, k in enumerate(done.tolist()):
        plan = bitpacking_plan_of(widths[r, :k], bits, n)
        best.append(n * w if plan is None else int(plan[1].sum()))
    # each page: its metadata words (a u16|u32 a chunk), then its chunks, each buffer aligned
    nc = len(split_counts(n, BSS_CHUNK_BYTES // w))
    meta_bytes = nc * (4 if grammar.large_chunks else 2)
    gap = meta_bytes + (-meta_bytes) % alignment
    halves = [(0, rows)]
    if rows >= 4 and words.nbytes >= _PARALLEL_BYTES:
        halves = [(0, rows // 2), (rows // 2, rows)]
    splits = run_parallel(lambda half: split_float_rows(words[half[0] : half[1]].view(np.uint8).reshape(-1), bits,
                                                        half[1] - half[0], best[half[0] : half[1]], gap, alignment,
                                                        BUFFER_PAD_BYTE), halves)
    message = pb.PageLayout(mini_block_layout=miniblock_layout(splits[0].encoding, _ALL_VALID, 1, n,
                                                               grammar.large_chunks))
    placed: list = []
    for (r0, r1), split in zip(halves, splits):
        placed += _lay_out(split, ok[r0:r1] & split.keep, message, meta_bytes, gap, alignment, grammar.large_chunks)
    return placed


def _lay_out(split, ok: np.ndarray, message, meta_bytes: int, gap: int, alignment: int, large: bool) -> list:
    """The pages of :func:`split_float_rows`' chunks, their headers and metadata written into
    the room it left (``ok``: which pages to keep; the others' entries are None)."""
    rows, nc = split.sizes.shape
    n = int(split.counts.sum())
    frames = FRAME_GAP + (split.sizes + 7) // 8 * 8  # a chunk's header and its padded buffer
    cuts = np.cumsum(frames, axis=1) - frames
    ends = frames.sum(axis=1).tolist()
    page_at, at = [], 0
    for length in ends:
        at += (-at) % alignment
        page_at.append(at)
        at += gap + length
    if at != len(split.packed):
        raise AssertionError(f"float_pages: {len(split.packed)} bytes laid out, {at} planned")
    page_at = np.array(page_at, dtype=np.int64)
    counts = np.tile(split.counts, rows)
    layout = kernels.miniblock_chunk_layout(np.stack([np.zeros(len(counts), np.int64), split.sizes.reshape(-1)]), 1,
                                            large, counts)
    if layout is None or layout[1] + (-layout[1]) % 8 != FRAME_GAP:
        return [None] * rows
    head, head_len, _, _, words_meta = layout
    words_meta = words_meta.reshape(rows, nc)
    words_meta[:, -1] &= ~0xF  # a page's last chunk holds no log2 of its values (the kernel saw one page)
    kernels.scatter_bytes(head, np.arange(len(counts), dtype=np.int64) * head_len, np.full(len(counts), head_len),
                          split.packed, (cuts + (page_at + gap)[:, None]).reshape(-1), FRAME_GAP, PAD_BYTE)
    meta = words_meta.astype("<u4" if large else "<u2").view(np.uint8)
    split.packed[(page_at[:, None] + np.arange(meta_bytes)).reshape(-1)] = meta.reshape(-1)
    data = split.packed
    placed: list = []
    for r, (good, p, length) in enumerate(zip(ok.tolist(), page_at.tolist(), ends)):
        if not good:
            placed.append(None)
            continue
        d = p + gap
        page = EncodedPage(message, [data[p : p + meta_bytes], data[d : d + length]], n, {1: cuts[r]})
        placed.append((page, data, [p, d], [meta_bytes, length]))
    return placed
