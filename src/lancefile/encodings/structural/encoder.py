"""Writing 2.1 / 2.2 columns: Arrow arrays in, ``PageLayout`` pages out.

Each top-level field gets a :class:`StructuralEncoder`. Every array it is handed is cut
into pages (at most ``max_page_bytes`` of Arrow data each), shredded into its leaf columns'
rep/def levels and visible values (:mod:`.shred`), and each leaf's page is laid out as

* a **constant** page when no value is valid (2.1's all-null form: no buffers for a bare
  nullable leaf, else raw u16 rep/def buffers);
* a **mini-block** page (chunks of about 4 KiB of values with their levels, a
  repetition index when there are lists) for narrow values;
* a **full-zip** page (``[control word][value]`` per entry, a byte-packed repetition
  index) for values of 256 bytes and more, or when a mini-block chunk cannot hold them.

Which layout and which compressive cascade is the strategy's choice
(:class:`~lancefile.encodings.strategy.Strategy`); this module only lays the bytes out.
The chunk header is ``u16 num_levels, [u16 rep bytes], [u16 def bytes], u16|u32 size of
each value buffer`` padded with ``FE`` to 8 bytes, then the rep, def and value buffers,
each padded to 8 bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_1_pb2 as pb
from ...errors import UnsupportedTypeError
from ...format.grids import GRID_INDEX_BYTES, GRID_ROW_BYTES
from ...format.schema import LanceField
from ...format.version import Grammar
from ...io import new_buffer
from .. import kernels
from ..arrowutil import fixed_bytes, fixed_width_bits, is_empty_fixed_binary
from ..compressive.chunks import FRAME_GAP, Buffers, FramedBuffers, MiniChunks, general
from ..compressive.encode import (
    is_simple_packed,
    fixed_value_bytes,
    fsst_values,
    miniblock_values,
    variable_encoding,
    variable_kind,
    variable_packed_rows,
    variable_value_parts,
)
from ..compressive.encode_blocks import block_levels, entropy_levels, variable_block
from ..compressive.encode_own import entropy_coded_indices
from ..compression import compress_buffer
from ..page import EncodedPage
from ..strategy import FULLZIP, FULLZIP_MIN_VALUE_BYTES, MINIBLOCK, FieldParams, Strategy
from .fields import _LIST_LOGICAL, _is_fsl_of_struct, is_leaf
from .repdef import Layer
from .shred import Shredded, shred

__all__ = ["StructuralEncoder", "build_encoder", "column_encodings", "encode_leaf_page"]

_FILL = 0xFE
_U16 = 0xFFFF


class _TooBig(Exception):
    """A mini-block chunk would not fit the version's size fields; use full-zip."""


def _pad8(n: int) -> int:
    return (-n) % 8


# -- constant (all-null) ------------------------------------------------------------------------


def _all_null_page(sh: Shredded, grammar: Grammar) -> EncodedPage:
    """A page without a valid value: only its layers for a bare nullable leaf, else its rep
    and def levels (raw u16 in 2.1; 2.2 compresses them, as the reference does)."""
    if sh.layers == [Layer.NULLABLE_ITEM] and sh.rep is None:
        return EncodedPage(pb.PageLayout(constant_layout=pb.ConstantLayout(layers=sh.layers)), [], sh.num_rows)
    layout = pb.ConstantLayout(layers=sh.layers)
    buffers = []
    for levels, enc_field, count_field in ((sh.rep, "rep_compression", "num_rep_values"),
                                          (sh.defs, "def_compression", "num_def_values")):
        if levels is None or not len(levels):
            buffers.append(np.zeros(0, np.uint8))
            continue
        raw = levels.astype("<u2").view(np.uint8)
        if grammar.constant_values and int(levels.max()):
            enc, packed = block_levels(levels, np.array([0, len(levels)]), int(levels.max()), grammar.rle_levels)
            if len(packed.data) < len(raw):
                getattr(layout, enc_field).CopyFrom(enc)
                setattr(layout, count_field, len(levels))
                buffers.append(packed.data)
                continue
        buffers.append(raw)
    return EncodedPage(pb.PageLayout(constant_layout=layout), buffers, sh.num_rows)


def _constant_value(values: pa.Array) -> tuple[bytes | None, bytes | None] | None:
    """``(inline value, value buffer)`` when every valid value is the same, else None.

    Fixed-width values of at most 32 bytes are inline (a bool is one byte); wider ones and
    strings go in a page buffer as ``u32 buffers, u32 length each, the buffers`` (a string:
    its two offsets and its bytes)."""
    import pyarrow.compute as pc

    t = values.type
    bits = fixed_width_bits(t)
    scalar = (bits is not None and (bits % 8 == 0 or pa.types.is_boolean(t)) and not pa.types.is_fixed_size_list(t)
              and not pa.types.is_struct(t)) or variable_kind(t) is not None
    if not scalar or pa.types.is_dictionary(t) or values.null_count == len(values):
        return None
    if bits is not None and bits % 8 == 0 and not values.null_count and len(values) > 1 \
            and values.buffers()[1] is not None:
        w = bits // 8  # the first two values' bits differ: not constant (nearly every page)
        two = np.frombuffer(values.buffers()[1], np.uint8, count=2 * w, offset=values.offset * w)
        if two[:w].tobytes() != two[w:].tobytes():
            return None
    # a cheap look at the first values first: most pages are not constant
    head = values.slice(0, 256)
    if head.null_count < len(head) and pc.count_distinct(head, mode="only_valid").as_py() != 1:
        return None
    if pc.count_distinct(values, mode="only_valid").as_py() != 1:
        return None
    first = values.filter(values.is_valid()).slice(0, 1)
    if pa.types.is_boolean(t):
        return (b"\x01" if first[0].as_py() else b"\x00"), None
    if bits is not None:
        raw = fixed_bytes(first).tobytes()
        if len(raw) <= 32:
            return raw, None
        return None, struct.pack("<II", 1, len(raw)) + raw
    offsets, data, off_bits = variable_value_parts(first)
    ow = off_bits // 8
    offs = np.array([0, len(data)], f"<u{ow}").tobytes()
    return None, struct.pack("<III", 2, len(offs), len(data)) + offs + data.tobytes()


def _constant_page(sh: Shredded, inline: bytes | None, buffer: bytes | None) -> EncodedPage:
    """2.2 ConstantLayout: the value (inline or in the first buffer), then raw u16 rep and
    def levels when the page has any (either may be empty)."""
    layout = pb.ConstantLayout(layers=sh.layers)
    if inline is not None:
        layout.inline_value = inline
    buffers = [] if buffer is None else [np.frombuffer(buffer, np.uint8)]
    if sh.rep is not None or sh.defs is not None:
        for levels in (sh.rep, sh.defs):
            buffers.append(np.zeros(0, np.uint8) if levels is None else levels.astype("<u2").view(np.uint8))
    return EncodedPage(pb.PageLayout(constant_layout=layout), buffers, sh.num_rows)


# -- mini-block ------------------------------------------------------------------------------------


def _level_bounds(sh: Shredded, counts: np.ndarray) -> np.ndarray:
    """Level entries per chunk boundary: a chunk holds its values' entries and the
    invisible entries before them; the last chunk takes the rest."""
    ends_v = np.cumsum(counts)
    vis = sh.visible_mask()
    if vis is None:
        ends = ends_v.copy()
    else:
        idx = np.flatnonzero(vis)
        ends = idx[ends_v - 1] + 1
    ends[-1] = sh.num_levels
    return np.concatenate([[0], ends]).astype(np.int64)


def _repetition_index(rep: np.ndarray, max_rep: int, bounds: np.ndarray) -> np.ndarray:
    """Per chunk ``[rows completed in it, entries of the unfinished row at its end]``."""
    starts = np.flatnonzero(rep == max_rep)
    total = len(rep)
    row_last = np.append(starts[1:], total) - 1  # last entry of each row
    chunk_of_end = np.searchsorted(bounds[1:], row_last, side="right")
    completed = np.bincount(chunk_of_end, minlength=len(bounds) - 1)
    ends = bounds[1:]
    at = np.minimum(np.searchsorted(starts, ends), max(len(starts) - 1, 0))
    boundary = (ends == total) | ((starts[at] == ends) if len(starts) else False)
    last_start = starts[np.maximum(np.searchsorted(starts, ends, side="left") - 1, 0)] if len(starts) else ends
    leftover = np.where(boundary, 0, ends - np.maximum(last_start, bounds[:-1]))
    return np.stack([completed, leftover], axis=1).astype("<u8").reshape(-1)


def miniblock_layout(encoding: pb.CompressiveEncoding, layers: list[int], num_buffers: int, num_items: int,
                     large: bool) -> pb.MiniBlockLayout:
    """A mini-block page's message, before its levels' and dictionary's fields."""
    return pb.MiniBlockLayout(value_compression=encoding, layers=layers, num_buffers=num_buffers,
                              num_items=num_items, has_large_chunk=large)


def _miniblock_page(sh: Shredded, mc: MiniChunks, grammar: Grammar, dictionary=None,
                    coded_levels: bool = False) -> EncodedPage:
    """``dictionary``: ``(encoding, buffer, items)`` of a dictionary page (values are indices).
    ``coded_levels``: def levels under zstd (:func:`entropy_levels`) instead of the reference's
    bit packing or RLE."""
    counts = mc.counts
    nchunks = len(counts)
    has_levels = sh.rep is not None or sh.defs is not None
    bounds = _level_bounds(sh, counts) if has_levels else None
    rep_enc = def_enc = None
    segments: list[Buffers] = []
    if sh.rep is not None:
        rep_enc, rep_bufs = block_levels(sh.rep, bounds, sh.max_rep, grammar.rle_levels)
        segments.append(rep_bufs)
    if sh.defs is not None:
        def_enc, def_bufs = (entropy_levels(sh.defs, bounds) if coded_levels and int(sh.defs.max())
                             else block_levels(sh.defs, bounds, int(sh.defs.max()), grammar.rle_levels))
        segments.append(def_bufs)
    n_level_segments = len(segments)
    segments += mc.buffers
    large = grammar.large_chunks
    # the chunk header: u16 levels, u16 per level buffer, u16|u32 per value buffer
    num_levels = np.diff(bounds) if has_levels else np.zeros(nchunks, np.int64)
    layout = kernels.miniblock_chunk_layout(np.stack([num_levels] + [seg.sizes for seg in segments]),
                                            1 + n_level_segments, large, counts)
    if layout is None:
        raise _TooBig
    head, head_len, chunk_bytes, chunk_starts, words = layout
    head_pad = head_len + _pad8(head_len)
    total = int(chunk_starts[-1] + chunk_bytes[-1]) if nchunks else 0
    # every byte of the page is written once: each header and buffer with its padding after it
    framed = (len(segments) == 1 and isinstance(segments[0], FramedBuffers) and head_pad == FRAME_GAP
              and len(segments[0].data) == total)
    # (a framed buffer is laid out as the page already: only the headers go in)
    out = segments[0].data if framed else np.frombuffer(new_buffer(total), np.uint8)
    kernels.scatter_bytes(head, np.arange(nchunks, dtype=np.int64) * head_len,
                          np.full(nchunks, head_len, np.int64), out, chunk_starts, head_pad, _FILL)
    if not framed:
        at = chunk_starts + head_pad
        for seg in segments:
            pad = (seg.sizes + 7) // 8 * 8
            kernels.scatter_bytes(seg.data, seg.starts, seg.sizes, out, at, pad, _FILL)
            at = at + pad
    meta = words.astype("<u4" if large else "<u2")
    layout = miniblock_layout(mc.encoding, sh.layers, mc.num_buffers, int(counts.sum()), large)
    if rep_enc is not None:
        layout.rep_compression.CopyFrom(rep_enc)
    if def_enc is not None:
        layout.def_compression.CopyFrom(def_enc)
    buffers = [meta.view(np.uint8), out]
    if dictionary is not None:
        enc, buf, items = dictionary
        layout.dictionary.CopyFrom(enc)
        layout.num_dictionary_items = items
        buffers.append(buf)
    if sh.rep is not None:
        layout.repetition_index_depth = 1
        buffers.append(_repetition_index(sh.rep, sh.max_rep, bounds))
    # a take reads single chunks: the checksums hash runs of them on their own
    return EncodedPage(pb.PageLayout(mini_block_layout=layout), buffers, sh.num_rows, {1: chunk_starts})


# -- full-zip -------------------------------------------------------------------------------------


def _ctrl_bytes(bits: int) -> int:
    return 0 if bits == 0 else 1 if bits <= 8 else 2 if bits <= 16 else 4


def _bytepacked(values: np.ndarray) -> np.ndarray:
    total = int(values[-1]) if len(values) else 0
    for dt in ("<u1", "<u2", "<u4", "<u8"):
        if total <= np.iinfo(np.dtype(dt)).max:
            return values.astype(dt).view(np.uint8)
    raise AssertionError("unreachable")


def _fullzip_page(sh: Shredded, strategy: Strategy) -> EncodedPage:
    values = sh.values
    n_levels = sh.num_levels
    rep = sh.rep if sh.rep is not None else None
    defs = sh.defs
    rep_bits = int(rep.max()).bit_length() if rep is not None and len(rep) else 0
    def_bits = int(defs.max()).bit_length() if defs is not None and len(defs) else 0
    cb = _ctrl_bytes(rep_bits + def_bits)
    ctrl = np.zeros(n_levels, np.int64)
    if rep is not None:
        ctrl |= rep.astype(np.int64) << def_bits
    if defs is not None:
        ctrl |= defs.astype(np.int64)
    vis = sh.visible_mask()
    vis_idx = np.arange(n_levels, dtype=np.int64) if vis is None else np.flatnonzero(vis)
    layout = pb.FullZipLayout(bits_rep=rep_bits, bits_def=def_bits, num_items=n_levels,
                              num_visible_items=len(values), layers=sh.layers)
    vidx = np.full(n_levels, -1, np.int64)
    t = values.type
    if (fixed_width_bits(t) is not None and not pa.types.is_struct(t)) or pa.types.is_fixed_size_list(t):
        enc, data, width = fixed_value_bytes(values)
        vidx[vis_idx] = np.arange(len(values))
        starts = np.arange(len(values), dtype=np.int64) * width
        lens = np.full(len(values), width, np.int64)
        len_bytes = 0
        layout.bits_per_value = width * 8
        variable = False
    else:
        mask = values.is_valid().to_numpy(zero_copy_only=False)
        if pa.types.is_struct(t):
            offsets, data, enc = variable_packed_rows(values)
            off_bits = 32
        else:
            offsets, data, off_bits = variable_value_parts(values)
            enc = variable_encoding(off_bits)
        lens = np.diff(offsets)
        max_len = int(lens.max()) if len(lens) else 0
        comp = strategy.params.compression
        if pa.types.is_struct(t):
            pass  # the reference compresses no variable packed struct
        elif strategy.use_fsst(max_len=max_len, data_bytes=len(data) + len(offsets) * (off_bits // 8)) and len(data):
            table, offsets, data = fsst_values(offsets, data, strategy.memo)
            enc = pb.CompressiveEncoding(fsst=pb.Fsst(symbol_table=table, values=enc))
        elif comp in ("lz4", "zstd") or (comp is None and max_len > 32 * 1024 and len(data) >= 32 * 1024):
            # the reference writes zstd (level 0 = default) per value, whatever general scheme is asked
            level = strategy.params.level or 0
            packed = [compress_buffer(data[a:b], "zstd", level) for a, b in
                      zip(offsets[:-1].tolist(), offsets[1:].tolist())]
            data = np.frombuffer(b"".join(packed), np.uint8) if packed else np.zeros(0, np.uint8)
            offsets = np.concatenate([[0], np.cumsum([len(p) for p in packed])]).astype(np.int64)
            enc = general("zstd", level, enc)
        starts = offsets[:-1]
        lens = np.diff(offsets)
        valid_vis = vis_idx[mask]
        vidx[valid_vis] = np.flatnonzero(mask)
        len_bytes = off_bits // 8
        layout.bits_per_offset = off_bits
        variable = True
    layout.value_compression.CopyFrom(enc)
    if cb == 0 and not variable and len(values) == n_levels:  # no control words: the values as they are
        return EncodedPage(pb.PageLayout(full_zip_layout=layout), [np.ascontiguousarray(data)], sh.num_rows)
    zipped, pos = kernels.fullzip_zip(ctrl, cb, vidx, starts, lens, len_bytes, data)
    buffers = [zipped]
    if rep is not None or variable:
        if rep is not None:
            row_starts = np.append(np.flatnonzero(rep == sh.max_rep), n_levels)
            index = pos[row_starts]
        else:
            index = pos
        buffers.append(_bytepacked(index))
        # a take reads a row's two index entries, then its bytes: the checksums hash both
        # buffers in pieces of a few KiB (grids), so that such a read is checked by its own
        return EncodedPage(pb.PageLayout(full_zip_layout=layout), buffers, sh.num_rows,
                           grids={0: GRID_ROW_BYTES, 1: GRID_INDEX_BYTES})
    return EncodedPage(pb.PageLayout(full_zip_layout=layout), buffers, sh.num_rows)


# -- blob (v1) --------------------------------------------------------------------------------------


def _blob_page(sh: Shredded, grammar: Grammar, sink) -> EncodedPage:
    """Values written out of line (each 64-byte aligned) before the page; the page holds one
    ``(position, size)`` per row: ``(0, 0)`` for an empty value, ``(def << 16, 0)`` for a null."""
    offsets, data, _ = variable_value_parts(sh.values)
    sizes = np.diff(offsets)
    positions = np.asarray(sink.write_out_of_line(data, sizes), dtype=np.uint64)
    positions = np.where(sizes == 0, 0, positions).astype(np.uint64)
    sizes = sizes.astype(np.uint64)
    if sh.defs is not None:
        positions = np.where(sh.defs > 0, sh.defs.astype(np.uint64) << np.uint64(16), positions)
    desc = pa.StructArray.from_arrays([pa.array(positions, pa.uint64()), pa.array(sizes, pa.uint64())],
                                      names=["position", "size"])
    inner_sh = Shredded(None, None, desc, [int(Layer.ALL_VALID_ITEM)], sh.num_rows)
    inner = _miniblock_page(inner_sh, miniblock_values(desc, Strategy(FieldParams(compression="none"))), grammar)
    layout = pb.BlobLayout(inner_layout=inner.encoding, layers=sh.layers)
    return EncodedPage(pb.PageLayout(blob_layout=layout), inner.buffers, sh.num_rows)


# -- a leaf page -----------------------------------------------------------------------------------


def _value_sizes(values: pa.Array) -> tuple[int | None, int, int]:
    """(fixed bits or None, longest value in bytes, total value bytes)."""
    t = values.type
    bits = fixed_width_bits(t)
    if pa.types.is_fixed_size_list(t):
        leaf, dim = t, 1
        while pa.types.is_fixed_size_list(leaf):
            dim *= leaf.list_size
            leaf = leaf.value_type
        if pa.types.is_null(leaf):  # only item validity: full-zip FSL over a constant
            return FULLZIP_MIN_VALUE_BYTES * 8, 0, 0
        lb = fixed_width_bits(leaf)
        bits = None if lb is None else lb * dim
    elif pa.types.is_struct(t):
        if not is_simple_packed(t):  # variable packed struct: full-zip
            return FULLZIP_MIN_VALUE_BYTES * 8, 0, 0
        bits = sum(fixed_width_bits(f.type) for f in t)
    if bits is not None:
        return bits, (bits + 7) // 8, len(values) * ((bits + 7) // 8)
    offsets, _, _ = variable_value_parts(values)
    lens = np.diff(offsets)
    return None, int(lens.max()) if len(lens) else 0, int(offsets[-1]) if len(offsets) else 0


def encode_leaf_page(sh: Shredded, strategy: Strategy, grammar: Grammar, *, blob: bool = False,
                     sink=None) -> EncodedPage:
    """Lay out one leaf column's page (``blob``: out of line through ``sink``)."""
    if blob:
        return _blob_page(sh, grammar, sink)
    values = sh.values
    if len(values) == 0 or values.null_count == len(values):
        return _all_null_page(sh, grammar)
    if grammar.constant_values and strategy.params.structural is None:
        constant = _constant_value(values)
        if constant is not None:
            return _constant_page(sh, *constant)
    if pa.types.is_dictionary(values.type):
        return _dictionary_page(sh, values, strategy, grammar)
    if variable_kind(values.type) is not None and strategy.params.structural != FULLZIP:
        encoded = strategy.dictionary(values)
        if encoded is not None:
            return _dictionary_page(sh, encoded, strategy, grammar)
    bits, _max_len, total = _value_sizes(values)
    layout = strategy.layout(fixed_bits=bits, max_value_bytes=_max_len, values_bytes=total,
                             num_values=len(values))
    if layout == MINIBLOCK:
        try:
            mc = miniblock_values(values, strategy)
            t = values.type
            if bits in (64, 128) and fixed_width_bits(t) == bits and not (pa.types.is_struct(t)
                                                                          or pa.types.is_fixed_size_list(t)):
                encoded = strategy.fixed_dictionary(values, bits, mc.size, grammar.general_blocks)
                if encoded is not None:
                    return _dictionary_page(sh, encoded, strategy, grammar)
            return _miniblock_page(sh, mc, grammar)
        except _TooBig:
            pass
    return _fullzip_page(sh, strategy)


def _dictionary_block(items: pa.Array) -> tuple[pb.CompressiveEncoding, np.ndarray]:
    """The dictionary buffer of a mini-block page: Variable (block form) or Flat."""
    bits = fixed_width_bits(items.type)
    if bits is not None and bits % 8 == 0:
        enc, data, _ = fixed_value_bytes(items)
        return enc, data
    if bits is not None or pa.types.is_fixed_size_list(items.type):
        raise UnsupportedTypeError(f"dictionaries of {items.type} cannot be written")
    offsets, data, off_bits = variable_value_parts(items)
    return variable_encoding(off_bits), np.frombuffer(variable_block(offsets, data, off_bits), np.uint8)


def _dictionary_page(sh: Shredded, values: pa.DictionaryArray, strategy: Strategy, grammar: Grammar) -> EncodedPage:
    # the key width is kept: the reference reads the indices back as the schema's key type
    key = values.type.index_type
    indices = values.indices.fill_null(0).view(pa.from_numpy_dtype(np.dtype(f"u{key.bit_width // 8}")))
    enc, buf = _dictionary_block(values.dictionary)
    wrap = strategy.dictionary_compression(grammar.general_blocks)
    if wrap is not None:
        scheme, level = wrap
        buf = np.frombuffer(compress_buffer(buf, scheme, level), np.uint8)
        enc = general(scheme, level, enc)
    # the indices are bit-packed (or RLE'd) as they are: no byte-stream-split or general compression
    mc = miniblock_values(indices, Strategy(replace(strategy.params, compression=None, bss="off"), own_choices=False))
    items = len(values.dictionary)
    try:
        page = _miniblock_page(sh, mc, grammar, (enc, buf, items))
        if strategy.entropy_dictionary(items, len(indices), sh.rep is not None, grammar.general_blocks) \
                and not pa.types.is_dictionary(sh.values.type):
            # lancefile's own choice: indices (and def levels) entropy-coded, when smaller
            coded = _miniblock_page(sh, entropy_coded_indices(indices.cast(pa.uint8()).to_numpy()), grammar,
                                    (enc, buf, items), coded_levels=True)
            if strategy.keep_entropy_coded(coded.nbytes, page.nbytes):
                return coded
        return page
    except _TooBig:
        decoded = Shredded(sh.rep, sh.defs, values.dictionary_decode(), sh.layers, sh.num_rows)
        return _fullzip_page(decoded, strategy)


# -- field encoders -------------------------------------------------------------------------------


@dataclass
class StructuralEncoder:
    """Pages for every leaf column of one top-level field."""

    field: LanceField
    columns: list[int]  # column index of each leaf, in shred order
    strategies: list[Strategy]
    blobs: list[bool]
    grammar: Grammar
    max_page_bytes: int
    accepts_chunks: bool = False

    def encode(self, arr: pa.Array, sink) -> None:
        for col, page in self.pages(arr, sink):
            sink.add_page(col, page)

    @property
    def thread_safe(self) -> bool:
        """Whether :meth:`pages` may run on another thread (no blob leaf writes to the sink)."""
        return not any(self.blobs)

    def pages(self, arr: pa.Array, sink=None) -> list:
        """``[(column, EncodedPage)]`` for ``arr``, in file order (``sink``: for blob leaves,
        whose values go to the file before their page)."""
        n = len(arr)
        out: list = []
        if n == 0:
            return out
        step = n
        if arr.nbytes > self.max_page_bytes:
            step = max(1, int(n * self.max_page_bytes // max(arr.nbytes, 1)))
        for off in range(0, n, step):
            part = arr.slice(off, step)
            for col, strat, blob, sh in zip(self.columns, self.strategies, self.blobs, shred(self.field, part)):
                out.append((col, encode_leaf_page(sh, strat, self.grammar, blob=blob, sink=sink)))
        return out

    def finish(self, sink) -> None:
        pass


def _leaves(f: LanceField) -> list[LanceField]:
    if is_leaf(f):
        return [f]
    return [leaf for c in f.children for leaf in _leaves(c)]


def build_encoder(f: LanceField, columns: dict[int, int], max_page_bytes: int, grammar: Grammar,
                  own_choices: bool = True) -> StructuralEncoder:
    leaves = _leaves(f)
    for node in f.walk():  # a struct, list or map marked blob: the reference refuses it too
        if "lance-encoding:blob" in node.metadata and not node.is_blob and not is_leaf(node):
            raise UnsupportedTypeError(f"field {node.name!r}: blob columns must be large_binary, not "
                                       f"{node.arrow_type}")
    for leaf in leaves:
        _check_leaf(leaf, grammar)
    if f.logical_type == "map" or any(c.logical_type == "map" for c in f.walk()):
        if not grammar.maps:
            raise UnsupportedTypeError(f"field {f.name!r}: map columns need Lance file version 2.2")
    if not grammar.fsl_of_struct and any(_is_fsl_of_struct(x) for x in f.walk()):
        raise UnsupportedTypeError(f"field {f.name!r}: fixed_size_list<struct> columns need Lance file version 2.2")
    inner = _fsl_struct_under_list(f)
    if inner is not None:  # checked here, not only when rows arrive: a zero-row file must be refused too
        raise UnsupportedTypeError(f"field {inner.name!r}: a fixed_size_list<struct> inside a list cannot be written")
    strategies = [Strategy(FieldParams.from_metadata(leaf.metadata, leaf.name), own_choices) for leaf in leaves]
    blobs = [leaf.is_blob for leaf in leaves]
    if any(blobs) and _has_list(f):
        raise UnsupportedTypeError(f"field {f.name!r}: blob columns inside lists cannot be written (the reference "
                                   "cannot read them)")
    return StructuralEncoder(f, [columns[leaf.id] for leaf in leaves], strategies, blobs, grammar, max_page_bytes)


def _fsl_struct_under_list(f: LanceField, in_list: bool = False) -> LanceField | None:
    """The first fixed_size_list<struct> below a list or map, if any (lancefile cannot write
    or read one there yet)."""
    if _is_fsl_of_struct(f) and in_list:
        return f
    below = in_list or f.logical_type in _LIST_LOGICAL or f.logical_type == "map"
    for c in f.children:
        found = _fsl_struct_under_list(c, below)
        if found is not None:
            return found
    return None


def _has_list(f: LanceField) -> bool:
    return any(x.logical_type in _LIST_LOGICAL or x.logical_type == "map" for x in f.walk())


def _check_leaf(leaf: LanceField, grammar: Grammar) -> None:
    t = leaf.arrow_type
    if is_empty_fixed_binary(t) and pa.types.is_fixed_size_list(t):
        raise UnsupportedTypeError(f"field {leaf.name!r}: fixed-size lists of fixed_size_binary(0) cannot be stored "
                                   "(pylance 14.0.2 fails on such a column, whoever wrote it)")
    if not grammar.constant_values and is_empty_fixed_binary(t):
        raise UnsupportedTypeError(f"field {leaf.name!r}: {t} values (every one b'') need Lance file version 2.2, "
                                   "where they are a constant; at 2.1 neither lancefile nor pylance can read them")
    if pa.types.is_fixed_size_list(t):
        inner = t.value_type
        while pa.types.is_fixed_size_list(inner):
            inner = inner.value_type
        if not pa.types.is_null(inner) and (fixed_width_bits(inner) is None or pa.types.is_dictionary(inner)):
            raise UnsupportedTypeError(f"field {leaf.name!r}: fixed_size_list of {inner} cannot be stored in Lance "
                                       "2.1/2.2 (only fixed-width items or structs; the reference refuses it too)")
    if "lance-encoding:blob" in leaf.metadata and not leaf.is_blob:
        raise UnsupportedTypeError(f"field {leaf.name!r}: blob columns must be large_binary, not {t}")
    if pa.types.is_struct(t) and leaf.children:  # a packed struct
        if not is_simple_packed(t) and not grammar.variable_packed_struct:
            raise UnsupportedTypeError(f"packed struct {leaf.name!r}: children that are not plain fixed-width "
                                       f"values ({t}) need Lance file version 2.2 (variable packed struct)")
        for c in leaf.children:
            ct = c.arrow_type
            if not (is_simple_packed(pa.struct([pa.field("x", ct)])) or pa.types.is_fixed_size_list(ct)
                    or variable_kind(ct) is not None):
                raise UnsupportedTypeError(f"packed struct {leaf.name!r}: child {c.name!r} ({ct}) cannot be packed")


def column_encodings(schema, columns: dict[int, int]) -> list:
    from google.protobuf import empty_pb2

    from ..._proto import encodings_v2_0_pb2 as pb20

    return [pb20.ColumnEncoding(values=empty_pb2.Empty())] * len(columns)
