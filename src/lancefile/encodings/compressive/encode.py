"""The write side of the compressive layer: Arrow values to chunked mini-block buffers and
full-zip value bytes, with their ``CompressiveEncoding`` message (block buffers, the levels
and dictionaries: :mod:`.encode_blocks`).

Each function encodes; which one runs is decided by :class:`~lancefile.encodings.strategy.Strategy`
(the page encoder asks it). Buffer layouts are the ones the decoders in this package read
(each codec module's docstring shows them).

Example: 2,500 int32 values below 8 are bit-packed at 3 bits, 1,024 values a chunk (a
width word and 384 bytes each), as the reference does; three values stay flat, as packing
would not shrink them. lancefile's own choice finds the values repeat every 8 and codes
them with zstd instead::

    >>> import numpy as np, pyarrow as pa
    >>> from lancefile.encodings.strategy import FieldParams, Strategy
    >>> values = pa.array(np.arange(2500) % 8, pa.int32())
    >>> mc = miniblock_values(values, Strategy(FieldParams(), own_choices=False))
    >>> mc.encoding.WhichOneof("compression"), mc.counts.tolist(), mc.buffers[0].sizes.tolist()
    ('inline_bitpacking', [1024, 1024, 452], [388, 388, 388])
    >>> miniblock_values(pa.array([1, 2, 3], pa.int32()), Strategy(FieldParams())).encoding.WhichOneof("compression")
    'flat'
    >>> coded = miniblock_values(values, Strategy(FieldParams()))
    >>> coded.encoding.general.values.WhichOneof("compression"), coded.size < 100
    ('byte_stream_split', True)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_1_pb2 as pb
from ...errors import UnsupportedTypeError
from .. import kernels
from ..arrowutil import binary_parts, fixed_bytes, fixed_width_bits, is_var_binary, null_mask, validity_bytes
from ..compression import compress_buffer
from ..kernels.fastlanes import FASTLANES_CHUNK, _chunk_bit_widths
from ..strategy import FSST_MIN_BYTES, MINIBLOCK_MAX_VALUES, MINIBLOCK_TARGET_BYTES, Strategy
from .chunks import Buffers, MiniChunks, flat, general, split_counts
from .encode_own import CHUNK_OVERHEAD, bss_miniblock, entropy_split_miniblock, split_float_miniblock

__all__ = ["miniblock_values", "is_simple_packed", "variable_kind", "variable_encoding", "variable_packed_rows",
           "fsst_values", "fixed_value_bytes", "variable_value_parts"]

_VAR_PAD = 0x48


def _fixed_chunk_values(row_bits: int) -> int:
    """Values per chunk of fixed-width data: a power of two, doubled while twice the bytes
    stay under the reference's target (1024 int32, 512 int64, 4096 bytes or bools)."""
    n = 2
    while 2 * n <= MINIBLOCK_MAX_VALUES and (2 * n * row_bits + 7) // 8 < MINIBLOCK_TARGET_BYTES:
        n *= 2
    return n


def _fixed_rows(values: pa.Array) -> tuple[np.ndarray, int]:
    """(bytes, bits per value) of a fixed-width array, nulls as whatever bytes they hold."""
    bits = fixed_width_bits(values.type)
    return np.asarray(fixed_bytes(values)), bits


def miniblock_values(values: pa.Array, strategy: Strategy) -> MiniChunks:
    """Chunked mini-block values of a leaf (its visible values, nulls included)."""
    t = values.type
    if pa.types.is_fixed_size_list(t):
        out = _fsl_miniblock(values)
    elif pa.types.is_struct(t):
        out = _packed_miniblock(values)
    elif pa.types.is_boolean(t):
        data, _ = _fixed_rows(values)
        counts = split_counts(len(values), MINIBLOCK_MAX_VALUES)
        out = MiniChunks(flat(1), counts, [Buffers(data, (counts + 7) // 8)])
    elif is_var_binary(t):
        out = _variable_miniblock(values, strategy)
    elif fixed_width_bits(t) is not None:
        out = _fixed_miniblock(values, strategy)
    else:
        raise UnsupportedTypeError(f"no mini-block encoding for {t}")
    wrap = strategy.general()
    if isinstance(out, _Wrapped):  # already compressed
        return out.chunks
    if wrap is not None and not pa.types.is_fixed_size_list(t):
        out = _general_wrap(out, *wrap)
    return out


@dataclass
class _Wrapped:
    """Mini-block values that already carry their general compression."""

    chunks: MiniChunks


def _fixed_miniblock(values: pa.Array, strategy: Strategy) -> MiniChunks:
    data, bits = _fixed_rows(values)
    n = len(values)
    if n and strategy.use_bss(bits, pa.types.is_floating(values.type)):
        # byte-stream-split pays only under general compression, and not always: keep it
        # when the compressed chunks come out smaller than without it
        scheme, level = strategy.general()
        bss = _general_wrap(bss_miniblock(data, bits), scheme, level)
        plain = _general_wrap(_fixed_miniblock(values, Strategy(replace(strategy.params, bss="off"))), scheme, level)
        return _Wrapped(bss if bss.size < plain.size else plain)
    if strategy.params.compression != "none" and bits in (8, 16, 32, 64) and n:
        words = data.view(np.dtype(f"<u{bits // 8}"))
        plan = _bitpacking_plan(words)
        best = int(plan[1].sum()) if plan is not None else len(data)
        runs = int(np.count_nonzero(words[1:] != words[:-1])) + 1
        floating = pa.types.is_floating(values.type)
        entropy = strategy.entropy_integers(bits, floating)
        # the reference's page and its size, chunk overhead included
        ref, ref_size = None, best + CHUNK_OVERHEAD * -(-n // FASTLANES_CHUNK)
        if strategy.use_rle(runs, n):
            rle = _rle_miniblock(words)
            if rle.size < best:
                if not entropy:
                    return rle
                ref, ref_size = rle, rle.size + CHUNK_OVERHEAD * len(rle.counts)
        if strategy.split_floats(bits, floating):
            split = split_float_miniblock(data, bits, best)
            if split is not None:
                return _Wrapped(split)
        if entropy:
            coded = entropy_split_miniblock(data, bits, ref_size)
            if coded is not None:
                return _Wrapped(coded)
            if ref is not None:
                return ref
        if plan is not None:
            return _inline_bitpacked(words, plan)
    per = _fixed_chunk_values(bits)
    counts = split_counts(n, per)
    return MiniChunks(flat(bits), counts, [Buffers(data, counts * (bits // 8))])


RLE_CHUNK_VALUES = 4096
def _rle_miniblock(words: np.ndarray) -> MiniChunks:
    """Rle{Flat(T), Flat(8)}: per chunk of 4096 values, the runs' values then their lengths
    (at most 255; longer runs are split), runs never crossing a chunk."""
    n = words.size
    counts = split_counts(n, RLE_CHUNK_VALUES)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    change = np.zeros(n, dtype=bool)
    change[0] = True
    change[1:] = words[1:] != words[:-1]
    change[bounds[1:-1]] = True
    starts = np.flatnonzero(change)
    run_len = np.diff(np.append(starts, n))
    pieces = -(-run_len // kernels.RLE_MAX_RUN)
    vals = np.repeat(words[starts], pieces)
    lens = np.full(int(pieces.sum()), kernels.RLE_MAX_RUN, dtype=np.int64)
    lens[np.cumsum(pieces) - 1] = run_len - kernels.RLE_MAX_RUN * (pieces - 1)
    runs = np.bincount(np.repeat(np.searchsorted(bounds, starts, side="right") - 1, pieces),
                       minlength=len(counts)).astype(np.int64)
    T = words.dtype.itemsize * 8
    enc = pb.CompressiveEncoding(rle=pb.Rle(values=flat(T), run_lengths=flat(8)))
    return MiniChunks(enc, counts, [Buffers(vals.view(np.uint8), runs * (T // 8)),
                                    Buffers(lens.astype(np.uint8), runs)])


def _bitpacking_plan(words: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(bit width, bytes) of every 1024-value group when inline bit packing is the reference's
    choice for these words, else None."""
    T = words.dtype.itemsize * 8
    # (the widths stop at the first group that does not shrink)
    return bitpacking_plan_of(_chunk_bit_widths(words, stop_at=T), T, words.size)


def bitpacking_plan_of(widths: np.ndarray, T: int, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_bitpacking_plan` of ``n`` words of ``T`` bits from their groups' widths (up to
    the first that does not shrink)."""
    sizes = T // 8 + FASTLANES_CHUNK * widths // 8
    # as the reference: only when every group packs below its width and the page shrinks
    # (padding the last group to 1024 values can cost more than packing saves)
    if not len(widths) or int(widths[-1]) >= T or int(sizes.sum()) >= n * (T // 8):
        return None
    return widths, sizes


def _inline_bitpacked(words: np.ndarray, plan: tuple[np.ndarray, np.ndarray]) -> MiniChunks:
    T = words.dtype.itemsize * 8
    widths, sizes = plan
    buf = kernels.inline_bitpacking_pack(words, widths).view(np.uint8)
    counts = split_counts(words.size, FASTLANES_CHUNK)
    enc = pb.CompressiveEncoding(inline_bitpacking=pb.InlineBitpacking(uncompressed_bits_per_value=T))
    return MiniChunks(enc, counts, [Buffers(buf, sizes)])


def _fsl_layers(values: pa.Array):
    """(dims outer first, validity bitmaps of item layers that have nulls, leaf items)."""
    dims, validity, arr = [], [], values
    while pa.types.is_fixed_size_list(arr.type):
        d = arr.type.list_size
        items = arr.values.slice(arr.offset * d, len(arr) * d)
        dims.append(d)
        validity.append(items if items.null_count else None)
        arr = items
    return dims, validity, arr


def _fsl_encoding(dims, has_validity, leaf_bits) -> pb.CompressiveEncoding:
    # items of the null type hold no bytes: a constant with no value
    enc = flat(leaf_bits) if leaf_bits else pb.CompressiveEncoding(constant=pb.Constant())
    for d, v in zip(reversed(dims), reversed(has_validity)):
        enc = pb.CompressiveEncoding(fixed_size_list=pb.FixedSizeList(items_per_value=d, values=enc, has_validity=v))
    return enc


def _fsl_miniblock(values: pa.Array) -> MiniChunks:
    dims, validity, leaf = _fsl_layers(values)
    leaf_bits = fixed_width_bits(leaf.type)
    if leaf_bits is None:
        raise UnsupportedTypeError(f"fixed_size_list of {leaf.type} cannot be written")
    total_dim = int(np.prod(dims))
    row_bits = total_dim * leaf_bits + sum(int(np.prod(dims[: i + 1])) for i, v in enumerate(validity) if v is not None)
    per = _fixed_chunk_values(row_bits)
    counts = split_counts(len(values), per)
    data, _ = _fixed_rows(leaf)
    starts = np.cumsum(counts) - counts
    bitmaps = []
    for i, v in enumerate(validity):
        if v is not None:
            bits = ~null_mask(v)
            bitmaps.append((bits, int(np.prod(dims[: i + 1]))))
    chunks = []
    for s, c in zip(starts.tolist(), counts.tolist()):
        bufs = [np.packbits(b[s * m : (s + c) * m], bitorder="little") for b, m in bitmaps]
        if leaf_bits == 1:
            bools = np.unpackbits(data, bitorder="little", count=len(values) * total_dim)
            bufs.append(np.packbits(bools[s * total_dim : (s + c) * total_dim], bitorder="little"))
        else:
            w = total_dim * leaf_bits // 8
            bufs.append(data[s * w : (s + c) * w])
        chunks.append(bufs)
    per_buffer = [Buffers.of([c[k] for c in chunks]) for k in range(len(chunks[0]))] if chunks else [Buffers.of([])]
    return MiniChunks(_fsl_encoding(dims, [v is not None for v in validity], leaf_bits), counts, per_buffer)


def is_simple_packed(t: pa.StructType) -> bool:
    """A packed struct whose children are all byte-aligned fixed-width scalars (PackedStruct);
    others (fixed_size_list or variable children) are VariablePackedStruct (2.2)."""
    for f in t:
        b = fixed_width_bits(f.type)
        if b is None or b % 8 or pa.types.is_fixed_size_list(f.type) or pa.types.is_struct(f.type):
            return False
    return True


def variable_kind(t: pa.DataType) -> int | None:
    """Offset bits of a string/binary type (32 or 64), None for other types."""
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return 32
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return 64
    return None


def variable_encoding(off_bits: int) -> pb.CompressiveEncoding:
    return pb.CompressiveEncoding(variable=pb.Variable(offsets=flat(off_bits)))


def variable_packed_rows(values: pa.StructArray) -> tuple[np.ndarray, np.ndarray, pb.CompressiveEncoding]:
    """(row offsets, row bytes, encoding) of a VariablePackedStruct: per row, fixed fields'
    bytes and ``[length][bytes]`` of variable fields, in field order; null rows are empty."""
    n = len(values)
    valid = ~null_mask(values) if values.null_count else np.ones(n, bool)
    fields, parts = [], []  # parts: (kind, payload) in row order
    for i, f in enumerate(values.type):
        child = values.field(i)
        lb = variable_kind(f.type)
        if lb is None:
            enc, data, w = fixed_value_bytes(child)
            fields.append(pb.VariablePackedStruct.FieldEncoding(value=enc, bits_per_value=w * 8))
            parts.append(("fixed", np.asarray(data).reshape(n, w)))
        else:
            offsets, data, _ = variable_value_parts(child)
            fields.append(pb.VariablePackedStruct.FieldEncoding(value=variable_encoding(lb), bits_per_length=lb))
            parts.append(("var", (offsets, data, lb // 8)))
    row_len = np.zeros(n, np.int64)
    for kind, payload in parts:
        if kind == "fixed":
            row_len += payload.shape[1]
        else:
            row_len += payload[2] + np.diff(payload[0])
    row_len = np.where(valid, row_len, 0)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(row_len, out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.uint8)
    rows = np.flatnonzero(valid)
    cursor = offsets[:-1][rows].copy()
    for kind, payload in parts:
        if kind == "fixed":
            w = payload.shape[1]
            if w:
                out[(cursor[:, None] + np.arange(w)).reshape(-1)] = payload[rows].reshape(-1)
            cursor += w
        else:
            offs, data, lw = payload
            lens = np.diff(offs)[rows]
            prefix = lens.astype(f"<u{lw}").view(np.uint8).reshape(-1, lw)
            out[(cursor[:, None] + np.arange(lw)).reshape(-1)] = prefix.reshape(-1)
            cursor += lw
            total = int(lens.sum())
            if total:
                src_starts = offs[:-1][rows]
                rel = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
                out[np.repeat(cursor, lens) + rel] = data[np.repeat(src_starts, lens) + rel]
            cursor += lens
    enc = pb.CompressiveEncoding(variable_packed_struct=pb.VariablePackedStruct(fields=fields))
    return offsets, out, enc


def _packed_rows(values: pa.Array) -> tuple[np.ndarray, list[int]]:
    """Rows of a packed struct: each child's bytes in field order."""
    n = len(values)
    cols, bits = [], []
    for i in range(values.type.num_fields):
        child = values.field(i)
        b = fixed_width_bits(child.type)
        if b is None or b % 8:
            raise UnsupportedTypeError(f"packed struct child {values.type.field(i).name!r} ({child.type}) is not "
                                       "byte-aligned fixed-width")
        cols.append(np.asarray(fixed_bytes(child)).reshape(n, b // 8))
        bits.append(b)
    rows = np.ascontiguousarray(np.concatenate(cols, axis=1)) if cols else np.zeros((n, 0), np.uint8)
    return rows.reshape(-1), bits


def _packed_miniblock(values: pa.Array) -> MiniChunks:
    data, bits = _packed_rows(values)
    row = sum(bits)
    counts = split_counts(len(values), _fixed_chunk_values(row))
    enc = pb.CompressiveEncoding(packed_struct=pb.PackedStruct(bits_per_value=bits, values=flat(row)))
    return MiniChunks(enc, counts, [Buffers(data, counts * (row // 8))])


def variable_value_parts(values: pa.Array) -> tuple[np.ndarray, np.ndarray, int]:
    """(int64 offsets from 0, bytes, offset bits) of a string/binary array; nulls are empty."""
    offsets, data = binary_parts(values)
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    mask = null_mask(values)
    if mask is not None:
        lens = np.diff(offsets)
        if np.any(lens[mask]):
            lens = np.where(mask, 0, lens)
            keep = np.repeat(~mask, np.diff(offsets))
            data = data[offsets[0] : offsets[-1]][keep]
            offsets = np.concatenate([[0], np.cumsum(lens)])
    base = int(offsets[0]) if len(offsets) else 0
    data = data[base : int(offsets[-1])] if len(offsets) else data[:0]
    return offsets - base, data, 64 if large else 32


def _variable_chunk_counts(offsets: np.ndarray, target: int, width: int) -> np.ndarray:
    """Values per chunk, as pylance 14.0.2 picks them: the largest power of two whose chunk
    (offsets included) stays within ``target`` bytes; the last chunk takes all the rest
    when that fits. A chunk other than the last holds at least two values: its count is
    written as a log2, and 0 is refused there by the reference reader."""
    n = len(offsets) - 1
    offs = offsets.tolist()
    counts = []
    last = 0
    while last < n:
        num, new = 1, 2
        while True:
            if last + new >= n + 1:
                end = n if offs[n] - offs[last] + (n + 1 - last) * width <= target else last + num
                break
            if offs[last + new] - offs[last] + (new + 1) * width <= target:
                num, new = new, new * 2
            else:
                end = last + num
                break
        if end - last == 1 and end < n:  # a chunk that is not the last holds 2+ values (log2 0 means "last")
            end = last + 2
        counts.append(end - last)
        last = end
    return np.array(counts, dtype=np.int64)


def _variable_chunks(offsets, data, off_bits, counts) -> list[list[np.ndarray]]:
    w = off_bits // 8
    dt = np.dtype(f"<u{w}")
    chunks = []
    start = 0
    for c in counts.tolist():
        o = offsets[start : start + c + 1]
        head = (c + 1) * w
        rel = (o - o[0] + head).astype(dt)
        body = data[int(o[0]) : int(o[-1])]
        size = head + len(body)
        pad = (-size) % w
        buf = np.empty(size + pad, np.uint8)
        buf[:head] = rel.view(np.uint8)
        buf[head:size] = body
        buf[size:] = _VAR_PAD
        chunks.append([buf])
        start += c
    return chunks


def _variable_miniblock(values: pa.Array, strategy: Strategy) -> MiniChunks:
    offsets, data, off_bits = variable_value_parts(values)
    lens = np.diff(offsets)
    max_len = int(lens.max()) if len(lens) else 0
    enc = variable_encoding(off_bits)
    # the reference's DataSize of a variable block counts the offsets too
    if len(values) and strategy.use_fsst(max_len=max_len, data_bytes=len(data) + len(offsets) * (off_bits // 8)):
        table, offsets, data = fsst_values(offsets, data, strategy.memo)
        enc = pb.CompressiveEncoding(fsst=pb.Fsst(symbol_table=table, values=enc))
    counts = _variable_chunk_counts(offsets, strategy.variable_chunk_bytes(), off_bits // 8)
    return MiniChunks(enc, counts, [Buffers.of([c[0] for c in _variable_chunks(offsets, data, off_bits, counts)])])


def fsst_values(offsets: np.ndarray, data: np.ndarray, memo: dict | None = None) -> tuple[bytes, np.ndarray, np.ndarray]:
    """(symbol table, offsets, bytes) of FSST-compressed strings. Under 32 KiB of string bytes
    the strings are kept as they are behind a table whose switch is off, as the reference's
    compressor does. ``memo`` (one per column) keeps the last page's table: the next page
    reuses it unless it compresses clearly worse there, which saves training per page."""
    if len(data) < FSST_MIN_BYTES:
        return kernels.fsst_make_symbol_table([], [], compressed=False), offsets, data
    raw = int(offsets[-1] - offsets[0])
    if memo is not None and "fsst" in memo:
        symbols, lengths, ratio = memo["fsst"]
        table, codes, code_offsets = kernels.fsst_compress(data, offsets, symbols, lengths)
        if len(codes) <= raw * ratio * 1.05 + 64:
            return bytes(table), np.asarray(code_offsets, np.int64), np.asarray(codes, np.uint8)
    symbols, lengths = kernels.fsst_build_symbol_table(data, offsets)
    table, codes, code_offsets = kernels.fsst_compress(data, offsets, symbols, lengths)
    if memo is not None:
        memo["fsst"] = (symbols, lengths, len(codes) / max(raw, 1))
    return bytes(table), np.asarray(code_offsets, np.int64), np.asarray(codes, np.uint8)


def _general_wrap(mc: MiniChunks, scheme: str, level: int | None) -> MiniChunks:
    """LZ4/ZSTD around value buffer 0 of every chunk, when it makes the page smaller."""
    first = mc.buffers[0]
    packed = [compress_buffer(first.piece(c), scheme, level) for c in range(len(mc.counts))]
    if sum(len(p) for p in packed) >= len(first.data):
        return mc
    return MiniChunks(general(scheme, level, mc.encoding), mc.counts, [Buffers.of(packed)] + mc.buffers[1:])


# -- full-zip values -----------------------------------------------------------------------------


def fixed_value_bytes(values: pa.Array) -> tuple[pb.CompressiveEncoding, np.ndarray, int]:
    """(encoding, bytes, bytes per value) of fixed-width full-zip values."""
    t = values.type
    if pa.types.is_fixed_size_list(t):
        dims, validity, leaf = _fsl_layers(values)
        leaf_bits = 0 if pa.types.is_null(leaf.type) else fixed_width_bits(leaf.type)
        if leaf_bits is None or leaf_bits % 8:
            raise UnsupportedTypeError(f"full-zip fixed_size_list of {leaf.type} is not supported")
        total = int(np.prod(dims))
        n = len(values)
        parts = []
        for i, v in enumerate(validity):
            if v is not None:
                per_row = int(np.prod(dims[: i + 1]))
                bits = (~null_mask(v)).reshape(n, per_row)
                parts.append(np.packbits(bits, axis=1, bitorder="little"))
        if leaf_bits:
            data, _ = _fixed_rows(leaf)
            parts.append(np.asarray(data).reshape(n, total * leaf_bits // 8))
        rows = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
        enc = _fsl_encoding(dims, [v is not None for v in validity], leaf_bits)
        return enc, np.ascontiguousarray(rows).reshape(-1), rows.shape[1]
    if pa.types.is_boolean(t):  # one byte a value, 0 or 1, as the reference zips booleans
        data, _ = _fixed_rows(values)
        return flat(8), np.unpackbits(data, bitorder="little", count=len(values)), 1
    bits = fixed_width_bits(t)
    if bits is None or bits % 8:
        raise UnsupportedTypeError(f"full-zip values of {t} are not supported")
    data, _ = _fixed_rows(values)
    return flat(bits), np.asarray(data), bits // 8


def validity_of(values: pa.Array) -> np.ndarray:
    return np.unpackbits(validity_bytes(values), bitorder="little", count=len(values)).astype(bool)
