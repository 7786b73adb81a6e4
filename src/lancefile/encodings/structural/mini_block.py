"""``MiniBlockLayout``: small values in ~4 KiB chunks, each decoded whole.

Page buffers: ``[0]`` chunk metadata, ``[1]`` the chunks back to back, ``[2]`` the
dictionary (if ``dictionary`` is set), and last the repetition index (if
``repetition_index_depth > 0``).

* **Chunk metadata**: one word per chunk, u16 in 2.1 and u32 in 2.2,
  ``((chunk_bytes/8 - 1) << 4) | log2(values)``; every chunk but the last holds a power
  of two of values, the last the rest of ``num_items``.
* **A chunk**: ``u16 num_levels``, ``u16 rep_size`` and ``u16 def_size`` (if the page has
  rep / def), a size per value buffer (u16 in 2.1, u32 in 2.2), zero padding to 8 bytes;
  then the rep bytes, def bytes and value buffers, each padded to 8. E.g. a 2.2 chunk of
  three int32 without levels starts ``0000 0c000000 fefe`` then ``01000000 02000000
  03000000 fefefefe``.
* **Repetition index** (list pages): u64 ``(depth + 1)`` per chunk; the first two are the
  rows that end in the chunk and whether a row continues into the next one.

A read fetches only the chunks holding its rows (one request per run of neighbouring
chunks), decodes them in one pass, then cuts the rows out.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np
import pyarrow as pa

from ...errors import ChecksumError, CorruptFileError
from ...io import read_spans
from .. import kernels
from ..compressive import (Chunks, Context, check_tree, decode_block, decode_blocks, decode_miniblock,
                           miniblock_buffers, take_miniblock)
from ..compressive._buffers import decompress_spans
from ..compression import PROTO_BY_SCHEME
from ..compressive.values import Fixed, as_uint
from ..page import PageData
from ..arrowutil import take_array, validate_values
from ..registry import LAYOUT
from ..selection import Selection
from .base import EntrySpans, Leaf, PageLayoutBase, PagePart, message_key, select_part, values_to_arrow
from .mini_block_many import (_DATA, _DICT, _META, KEEP_DICTIONARY_BYTES, MAX_CHUNK_VALUES, MAX_PAGE_ITEMS,
                              PendingChunks, read_columns, take_pages)
from .repdef import def_mapping, map_defs, row_start_mismatch

__all__ = ["MiniBlockPage"]

_HEADER_ALIGN = 8
# A take picks single values out of its chunks (where the encoding can) when it wants fewer
# than one value in this many of the chunks it reads; denser takes decode the chunks whole and
# pick from the result: a bit-packed value picked alone costs ~40 ns, one decoded with its
# chunk ~1 ns (a 10,000-row take of the 1,000-column wide table, 40% of its rows: 2.4 s, most
# of it spent picking 10 million values one by one)
TAKE_SPARSITY = 16


def _pad8(n):
    return n + (-n) % _HEADER_ALIGN


@LAYOUT.register("mini_block_layout")
class MiniBlockPage(PageLayoutBase):
    """One mini-block page of one leaf column; built once per reader."""

    def __init__(self, msg, leaf: Leaf, page_rows: int, where: str) -> None:
        g = leaf.grammar
        if bool(msg.has_large_chunk) != g.large_chunks:
            need = "require" if g.large_chunks else "cannot use"
            raise CorruptFileError(f"{where}: Lance {leaf.version} mini-block pages {need} the u32 chunk grammar")
        self.msg, self.leaf, self.where, self.rows = msg, leaf, where, page_rows
        self.has_rep = msg.HasField("rep_compression")
        self.has_def = msg.HasField("def_compression")
        if self.has_rep:
            check_tree(msg.rep_compression, Context.BLOCK, g, where)
        if self.has_def:
            check_tree(msg.def_compression, Context.BLOCK, g, where)
        if not msg.HasField("value_compression"):
            raise CorruptFileError(f"{where}: mini-block page has no value encoding")
        check_tree(msg.value_compression, Context.MINIBLOCK, g, where)
        self.has_dict = msg.HasField("dictionary")
        if self.has_dict:
            check_tree(msg.dictionary, Context.BLOCK, g, where)
        self.num_buffers = int(msg.num_buffers)
        if miniblock_buffers(msg.value_compression, where) != self.num_buffers:
            raise CorruptFileError(f"{where}: mini-block page says {self.num_buffers} value buffers per chunk, "
                                   f"its encoding uses {miniblock_buffers(msg.value_compression, where)}")
        self.depth = int(msg.repetition_index_depth)
        if leaf.max_rep and not self.has_rep:
            raise CorruptFileError(f"{where}: a page of a list field has no repetition levels")
        self.layers = list(msg.layers)
        self.lut = def_mapping(self.layers, list(leaf.shape), where)  # checks the layers
        self.word = g.chunk_word_bytes
        self.header = _pad8(2 + 2 * self.has_rep + 2 * self.has_def + self.word * self.num_buffers)
        self._chunks = None  # (offsets, sizes, counts, completed, partial), read on first use
        # plain pages (no levels, no dictionary, flat whole-byte values): ranges skip the decoder
        vc = msg.value_compression
        self.plain_width = (vc.flat.bits_per_value // 8 if vc.WhichOneof("compression") == "flat"
                            and not vc.flat.HasField("data") and vc.flat.bits_per_value % 8 == 0
                            and not (self.has_rep or self.has_def or self.has_dict) else 0)
        self._first_rows = None  # plain pages: each chunk's first row, as a Python list
        self._dictionary = None  # the decoded dictionary, kept when small
        # pages whose encodings differ only in their counts decode together (see take_pages)
        self.batch_key = self.shape_key(msg)
        if leaf.max_rep and self.depth == 0:  # no repetition index: rows are found page by page
            self.batch_key = None
        # pages of different columns that read_columns decodes together: no lists, no dictionary
        self.column_key = self.batch_key if not (leaf.max_rep or self.has_dict) else None
        # a take's usual chunks (no lists, flat values and levels, bare or under zstd): one compiled pass
        self.take_flat = _take_flat_form(msg) if not (self.has_rep or leaf.max_rep) and self.num_buffers == 1 else None
        # a list column's usual chunks (2.2: bit-packed values and rep levels, RLE def levels): likewise
        self.take_lists = _take_lists_form(msg) if leaf.max_rep and self.has_rep and self.num_buffers == 1 else None

    @staticmethod
    def shape_key(msg) -> bytes:
        """The message without its counts (``num_items``, ``num_dictionary_items``): nothing
        __init__ checks depends on them, they are read from ``msg`` when used."""
        return message_key(msg, "num_items", "num_dictionary_items")

    def _reset(self) -> None:
        self._chunks = None
        self._first_rows = None
        self._dictionary = None
        self._chunk_table = None

    # -- chunk metadata ------------------------------------------------------------------
    def _buffers_needed(self) -> int:
        return 2 + self.has_dict + (self.depth > 0)

    def chunks(self, page: PageData):
        got = self._chunks
        if got is None:
            got = self._chunks = self._read_chunks(page)
        elif type(got) is PendingChunks:  # parsed with other pages' (a take): cut out now
            got = self._chunks = got.cut()
        return got

    def _read_chunks(self, page: PageData):
        if len(page.page.buffers) < self._buffers_needed():
            raise page.error(f"mini-block page has {len(page.page.buffers)} buffers, needs {self._buffers_needed()}")
        raw = np.frombuffer(page.read(_META), dtype=np.uint8)
        if len(raw) % self.word:
            raise page.error(f"chunk metadata of {len(raw)} bytes is not whole {8 * self.word}-bit words")
        num_items = int(self.msg.num_items)
        if num_items > MAX_PAGE_ITEMS:
            raise page.error(f"mini-block page of {num_items} values")
        offsets, sizes, counts = kernels.miniblock_chunk_words(raw, self.word, num_items)
        if len(counts) and not 0 <= counts[-1] <= MAX_CHUNK_VALUES:
            raise page.error(f"the last chunk would hold {int(counts[-1])} of the page's {num_items} values")
        if not len(counts) and num_items:
            raise page.error(f"no chunks for {num_items} values")
        data_size = page.ref(_DATA).size
        if len(counts) and offsets[-1] + sizes[-1] > data_size:
            raise page.error(f"chunks need {int(offsets[-1] + sizes[-1])} bytes, the chunk buffer has {data_size}")
        completed = partial = None
        if self.depth:
            ref = page.ref(len(page.page.buffers) - 1)
            stride = self.depth + 1
            if ref.size != 8 * stride * len(counts):
                raise page.error(f"repetition index of {ref.size} bytes for {len(counts)} chunks at depth {self.depth}")
            index = np.frombuffer(page.read(len(page.page.buffers) - 1), dtype="<u8").reshape(-1, stride)
            completed = index[:, 0].astype(np.int64)
            partial = index[:, 1].astype(np.int64)
            if int(completed.sum()) != self.rows or np.any(index[:, :2] > 1 << 40):
                raise page.error(f"repetition index counts {int(completed.sum())} rows, the page has {self.rows}")
        elif not self.leaf.max_rep and num_items != self.rows:
            raise page.error(f"{num_items} values for {self.rows} rows in a page without lists")
        return offsets, sizes, counts, completed, partial

    # -- which chunks hold which rows --------------------------------------------------------
    def _plan(self, sel: Selection, page: PageData) -> np.ndarray:
        """The chunks to decode, ascending."""
        offsets, sizes, counts, completed, partial = self.chunks(page)
        if not len(counts):
            return np.zeros(0, np.int64)
        if self.leaf.max_rep and completed is None:
            return np.arange(len(counts))  # no index: rows can only be found from the start
        if sel.is_range:
            rows = np.array([sel.start, sel.stop - 1], dtype=np.int64)
        else:
            rows = sel.indices
        try:
            need = kernels.rep_index_chunks(completed if completed is not None else counts,
                                            partial if partial is not None else np.zeros(len(counts), np.int64), rows)
        except ValueError as exc:
            raise page.error(str(exc)) from None
        if sel.is_range:
            return np.arange(int(need[0]), int(need[-1]) + 1)
        return need

    # -- decoding --------------------------------------------------------------------------------
    def read(self, sel: Selection, page: PageData) -> PagePart:
        if self.plain_width:
            return self._read_plain(sel, page) if sel.is_range else self._take_plain(sel, page)
        offsets, sizes, counts, completed, partial = self.chunks(page)
        chunk_ids = self._plan(sel, page)
        data, base = self._fetch(page, chunk_ids, offsets, sizes)
        if not sel.is_range and self.take_lists is not None and completed is not None:  # one compiled pass
            got = self._take_lists(data, base, sizes[chunk_ids], counts[chunk_ids],
                                   (np.cumsum(completed) - completed)[chunk_ids], _run_breaks(chunk_ids),
                                   completed[chunk_ids], partial[chunk_ids], sel.indices)
            if got is not None:
                rep, defs, _, values = got
                if not self.has_dict:
                    return PagePart(rep, defs, values_to_arrow(values, self.leaf.dtype, page.where), sel.count)
                part = PagePart(rep, defs, self._indices(values, page), sel.count)
                part.values = self._resolve_dictionary(page, part.values.to_numpy(zero_copy_only=False), defs)
                part.validated = True  # gathered from the checked dictionary
                return part
        positions = None
        if not sel.is_range and not self.leaf.max_rep:  # entries are values: known before decoding
            positions = self._spans(sel, chunk_ids, None, counts[chunk_ids], counts, completed).starts
        rep, defs, entries, values, taken = self._decode(page, data, base, sizes[chunk_ids], counts[chunk_ids],
                                                         positions)
        if rep is not None and completed is not None:
            k = row_start_mismatch(rep, self.leaf.max_rep, entries, completed[chunk_ids], partial[chunk_ids])
            if k >= 0:
                raise page.error(f"the levels of chunk {int(chunk_ids[k])} end other rows than its repetition "
                                 f"index says ({int(completed[chunk_ids[k]])})")
        if taken:
            spans = EntrySpans(np.zeros(1, np.int64), np.array([sel.count], np.int64))
        else:
            spans = self._spans(sel, chunk_ids, rep, entries, counts, completed)
        if not self.has_dict:
            values = values_to_arrow(values, self.leaf.dtype, page.where)
            return select_part(rep, defs, values, spans, self.leaf, sel.count, page.where)
        # dictionary indices: cut the rows out first, then look up only their values
        part = select_part(rep, defs, self._indices(values, page), spans, self.leaf, sel.count, page.where)
        part.values = self._resolve_dictionary(page, part.values.to_numpy(zero_copy_only=False), part.defs)
        part.validated = True  # gathered from the checked dictionary
        return part

    # several pages (of one column, or one each of several columns) decoded in one pass
    take_pages = staticmethod(take_pages)
    read_columns = staticmethod(read_columns)

    def loaded_dictionary(self, page: PageData) -> pa.Array | None:
        """The page's decoded dictionary if it was loaded already (else None)."""
        return self._dictionary if self._dictionary is not None else page.cached_value("dictionary")

    def _indices(self, values, page) -> pa.Array:
        bits = getattr(values, "bits", 0)
        if bits not in (8, 16, 32, 64):
            raise page.error("dictionary indices must be 8, 16, 32 or 64-bit integers")
        return pa.array(as_uint(values, bits, f"{page.where}: dictionary indices"))

    def _read_plain(self, sel: Selection, page: PageData) -> PagePart:
        """A row range of a plain page: the values' bytes copied straight out of the chunks.

        Every chunk is ``[u16 0][u16|u32 size][pad to 8][values][pad]``: the values start
        ``header`` bytes in, and the header must say so (checked for every chunk read).
        """
        offsets, sizes, counts, _, _ = self.chunks(page)
        if self._first_rows is None:
            self._first_rows = (np.cumsum(counts) - counts).tolist()
        first = self._first_rows
        c0 = bisect_right(first, sel.start) - 1
        c1 = bisect_right(first, sel.stop - 1) - 1
        start = int(offsets[c0])
        data = np.frombuffer(page.read_range(_DATA, start, int(offsets[c1] + sizes[c1]) - start), np.uint8)
        w = self.plain_width
        try:
            out = kernels.miniblock_plain_values(data, offsets[c0 : c1 + 1] - start, counts[c0 : c1 + 1], self.header,
                                                 self.word, w, sel.start - first[c0], sel.count)
        except CorruptFileError as exc:
            if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
                raise
            raise page.error(f"plain page: {exc}") from None
        values = values_to_arrow(Fixed(out, 8 * w, sel.count), self.leaf.dtype, page.where)
        return PagePart(None, None, values, sel.count)

    def _take_plain(self, sel: Selection, page: PageData) -> PagePart:
        """Rows of a plain page: only their chunks are read, only their values copied."""
        offsets, sizes, counts, _, _ = self.chunks(page)
        if self._first_rows is None:
            self._first_rows = (np.cumsum(counts) - counts).tolist()
        first = np.asarray(self._first_rows, dtype=np.int64)
        chunk_of = np.searchsorted(first, sel.indices, side="right") - 1
        needed, row_chunk = np.unique(chunk_of, return_inverse=True)
        data, base = self._fetch(page, needed, offsets, sizes)
        try:
            out = kernels.miniblock_plain_take(data, base, counts[needed], self.header, self.word, self.plain_width,
                                               row_chunk, sel.indices - first[chunk_of])
        except CorruptFileError as exc:
            if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
                raise
            raise page.error(f"plain page: {exc}") from None
        values = values_to_arrow(Fixed(out, 8 * self.plain_width, sel.count), self.leaf.dtype, page.where)
        return PagePart(None, None, values, sel.count)

    def _resolve_dictionary(self, page: PageData, indices: np.ndarray, defs) -> pa.Array:
        """Dictionary indices -> the leaf's values (or a DictionaryArray for dictionary fields)."""
        dtype = self.leaf.dtype
        is_dict = pa.types.is_dictionary(dtype)
        n = int(self.msg.num_dictionary_items)

        def load():
            items = decode_block(self.msg.dictionary, page.read(_DICT), n, page.where)
            items = values_to_arrow(items, dtype.value_type if is_dict else dtype, page.where)
            return validate_values(items, f"{page.where}: dictionary")

        # small dictionaries stay with the page for the reader's life (later takes reuse them);
        # large ones only for one read
        items = self._dictionary
        if items is None:
            items = page.cached("dictionary", load)
            if items.nbytes <= KEEP_DICTIONARY_BYTES:
                self._dictionary = items
        idx = indices.astype(np.int64)
        if n == 0:  # nothing to look up: every value must be null
            valid = (np.ones(len(idx), bool) if defs is None else defs[defs <= self.leaf.max_visible] == 0)
            if valid.any():
                raise page.error("a page with an empty dictionary has non-null values")
            return pa.nulls(len(idx), dtype)
        bad = idx >= n
        if bad.any():
            if defs is not None:  # indices under nulls are garbage: only valid ones must be in range
                visible = defs[defs <= self.leaf.max_visible]
                if np.any(bad & (visible == 0)):
                    raise page.error(f"dictionary index {int(idx[bad].max())} is out of range ({n} items)")
            else:
                raise page.error(f"dictionary index {int(idx[bad].max())} is out of range ({n} items)")
            idx[bad] = 0
        if is_dict:
            return pa.DictionaryArray.from_arrays(pa.array(idx.astype(dtype.index_type.to_pandas_dtype())), items)
        return take_array(items, idx)

    def _fetch(self, page, chunk_ids, offsets, sizes) -> tuple[np.ndarray, np.ndarray]:
        """The chunks' bytes, back to back, and where each chunk starts in them."""
        if not len(chunk_ids):
            return np.zeros(0, np.uint8), np.zeros(0, np.int64)
        c0, c1 = int(chunk_ids[0]), int(chunk_ids[-1])
        if c1 - c0 + 1 == len(chunk_ids):  # one run: one request
            start = int(offsets[c0])
            data = np.frombuffer(page.read_range(_DATA, start, int(offsets[c1] + sizes[c1]) - start), np.uint8)
            return data, offsets[chunk_ids] - start
        ref = page.ref(_DATA)
        return read_spans(page.layout.source, ref.position + offsets[chunk_ids], sizes[chunk_ids])

    def _decode(self, page, data, base, sizes, counts, positions=None):
        """Levels (concatenated), level entries per chunk, and the values of chunks that start at
        ``base`` in ``data`` (``sizes``, ``counts``: theirs).

        ``positions`` (leaves without lists only, where entry i holds value i): the entries a
        take wants. When the value encoding can find single values, only those are decoded and
        the levels are cut to them too; the last item returned says whether that happened."""
        if positions is not None and self.take_flat is not None and len(positions) * TAKE_SPARSITY < int(counts.sum()):
            width, zvals, zdefs, bss = self.take_flat
            got = kernels.miniblock_take_flat(data, base, base + sizes, counts, positions, self.has_def, self.word,
                                              width, zvals, zdefs, bss)
            if got is not None:
                return None, map_defs(got[1], self.lut, page.where), counts, Fixed(got[0], 8 * width, len(positions)), True
        try:
            num_levels, rep_at, rep_size, def_at, def_size, buf_starts, buf_sizes = kernels.miniblock_headers(
                data, base, base + sizes, self.has_rep, self.has_def, self.word, self.num_buffers)
        except CorruptFileError as exc:
            if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
                raise
            raise page.error(str(exc)) from None
        levels = self.has_rep or self.has_def
        entries = num_levels if levels else counts
        if levels and not self.leaf.max_rep and np.any(num_levels != counts):
            raise page.error("a chunk's level count differs from its value count in a page without lists")
        chunks = Chunks(data, buf_starts, buf_sizes, counts, page.where)
        if positions is not None and not self.leaf.max_rep and len(positions) * TAKE_SPARSITY < int(counts.sum()):
            values = take_miniblock(self.msg.value_compression, chunks, positions)
            if values is not None:
                defs = None
                if self.has_def:  # only the taken entries' levels, where they can be picked out
                    defs = self._levels_at(page, self.msg.def_compression, data, def_at, def_size, num_levels,
                                           positions)
                    if defs is None:
                        defs = self._levels(page, self.msg.def_compression, data, def_at, def_size,
                                            num_levels)[positions]
                return None, map_defs(defs, self.lut, page.where), entries, values, True
        rep = self._levels(page, self.msg.rep_compression, data, rep_at, rep_size, num_levels) if self.has_rep else None
        defs = self._levels(page, self.msg.def_compression, data, def_at, def_size, num_levels) if self.has_def else None
        defs = map_defs(defs, self.lut, page.where)
        values = decode_miniblock(self.msg.value_compression, chunks)
        return rep, defs, entries, values, False

    def _take_lists(self, data, base, sizes, counts, first_row, run_break, completed, partial, rows):
        """A take's rows out of chunks of the usual list form (:attr:`take_lists`) in one compiled
        pass: ``(rep, defs, entries a row, values)`` of the sorted rows ``rows`` (numbered
        from the column's start, ``first_row[c]`` rows ended before chunk c; ``completed``,
        ``partial``: the chunks' repetition index entries). None when the chunks are not of
        that form: :meth:`_decode` decodes them and names what is wrong."""
        bits, packed, rep_width, def_levels = self.take_lists
        got = kernels.miniblock_take_lists(data, base, base + sizes, counts, first_row, run_break, completed, partial,
                                           rows,
                                           self.leaf.max_rep, self.leaf.max_visible, self.word, self.lut, rep_width,
                                           def_levels, bits, packed)
        if got is None:
            return None
        rep, defs, row_len, values = got
        return rep, defs, row_len, Fixed(values, bits, len(values) // (bits // 8))

    def _levels(self, page, enc, data, at, size, num_levels) -> np.ndarray:
        values = decode_blocks(enc, data, at, size, num_levels, page.where)
        return as_uint(values, 16, f"{page.where}: levels")

    @staticmethod
    def _levels_at(page, enc, data, at, size, num_levels, positions) -> np.ndarray | None:
        """The levels of entries ``positions`` (of the chunks' entries, back to back) when each
        chunk's levels are plain u16 words, bare or under general compression (lancefile's
        zstd-coded def levels): picked out of the decompressed chunks instead of gathered
        whole (a take of 100 rows: 200 bytes, not 800 KB). None for other encodings."""
        general = enc.WhichOneof("compression") == "general"
        inner = enc.general.values if general else enc
        if inner.WhichOneof("compression") != "flat" or inner.flat.bits_per_value != 16 or inner.flat.HasField("data"):
            return None
        if general:
            data, at, size = decompress_spans(enc.general.compression, data, at, size, page.where)
        if np.any(num_levels * 2 > size):
            raise page.error("a chunk's flat levels are too short for its level count")
        ends = np.cumsum(num_levels)
        chunk = np.searchsorted(ends, positions, side="right")
        if len(positions) and (int(positions.min()) < 0 or int(chunk.max()) >= len(ends)):
            raise page.error("a taken entry lies past the chunks' levels")
        local = positions - (ends - num_levels)[chunk]
        return kernels.gather_bytes(data, at[chunk] + 2 * local, np.full(len(positions), 2, np.int64)).view("<u2")

    def _spans(self, sel, chunk_ids, rep, entries, counts, completed) -> EntrySpans:
        """Where the selected rows' entries are among the decoded chunks' entries."""
        entry_base = np.cumsum(entries) - entries
        if not self.leaf.max_rep:
            first_row = (np.cumsum(counts) - counts)[chunk_ids]
            if sel.is_range:
                # one run of chunks: rows are entries
                start = sel.start - int(first_row[0]) if len(first_row) else 0
                return EntrySpans(np.array([start], np.int64), np.array([sel.count], np.int64))
            where = np.searchsorted(first_row, sel.indices, side="right") - 1
            starts = sel.indices - first_row[where] + entry_base[where]
            return EntrySpans(starts, np.ones(len(starts), np.int64))
        max_rep = self.leaf.max_rep
        one_run = chunk_ids[-1] - chunk_ids[0] + 1 == len(chunk_ids)
        if one_run and sel.is_range:
            # where the first row starts and the last ends: one compiled pass, no index of rows
            rows_before = 0 if completed is None else int(completed[: chunk_ids[0]].sum())
            wanted = np.unique(np.array([sel.start, sel.stop - 1], np.int64))
            try:
                starts, lengths = kernels.row_spans(rep, max_rep, np.array([len(rep)], np.int64),
                                                    np.array([rows_before], np.int64), np.ones(1, bool), wanted)
            except ValueError:
                raise CorruptFileError(f"{self.where}: the repetition index does not match the page's rows") from None
            a = int(starts[0])
            return EntrySpans(np.array([a], np.int64), np.array([int(starts[-1] + lengths[-1]) - a], np.int64))
        row_start = np.flatnonzero(rep == max_rep)
        total = len(rep)
        # global row number of the first row start: rows ended before the first chunk, plus
        # one when that chunk opens with the end of an earlier row
        if completed is None:  # no index: every chunk was decoded, from the first
            first_id = 0
        else:
            first_id = int(completed[: chunk_ids[0]].sum()) + int(bool(entries[0]) and rep[0] != max_rep)
        if one_run:
            # rows are numbered consecutively from first_id; a row ends where the next starts
            wanted = np.array([sel.start, sel.stop - 1]) if sel.is_range else sel.indices
            at = wanted - first_id
            if np.any(at < 0) or np.any(at >= len(row_start)):
                raise CorruptFileError(f"{self.where}: the repetition index does not match the page's rows")
            nxt = np.append(row_start[1:], total)
            if sel.is_range:
                a = int(row_start[at[0]])
                return EntrySpans(np.array([a], np.int64), np.array([int(nxt[at[1]]) - a], np.int64))
            return EntrySpans(row_start[at].astype(np.int64), (nxt[at] - row_start[at]).astype(np.int64))
        # several runs of chunks (a take): number the rows chunk by chunk
        first_row = (np.cumsum(completed) - completed)[chunk_ids]
        try:
            starts, lengths = kernels.row_spans(rep, max_rep, entries, first_row, _run_breaks(chunk_ids), sel.indices)
        except ValueError as exc:
            raise CorruptFileError(f"{self.where}: {exc}") from None
        ends = starts + lengths
        return EntrySpans(starts.astype(np.int64), (ends - starts).astype(np.int64))


def _run_breaks(chunk_ids: np.ndarray) -> np.ndarray:
    """Where a run of neighbouring chunks begins, for each of the sorted ``chunk_ids``."""
    brk = np.ones(len(chunk_ids), bool)
    brk[1:] = np.diff(chunk_ids) > 1
    return brk


def _flat_bytes(enc, bits=None, split=False) -> tuple[int, bool, bool] | None:
    """``(width in bytes, under zstd, split into byte streams)`` of ``Flat`` whole-byte values,
    bare or in ``General{zstd}`` (``split``: also ``ByteStreamSplit`` of them)."""
    general = enc.WhichOneof("compression") == "general"
    if general and PROTO_BY_SCHEME.get("zstd") != enc.general.compression.scheme:
        return None
    inner = enc.general.values if general else enc
    bss = split and inner.WhichOneof("compression") == "byte_stream_split"
    if bss:
        inner = inner.byte_stream_split.values
    if inner.WhichOneof("compression") != "flat" or inner.flat.HasField("data"):
        return None
    b = int(inner.flat.bits_per_value)
    if b % 8 or b == 0 or b > 64 or (bits is not None and b != bits) or (bss and b not in (16, 32, 64)):
        return None
    return b // 8, general, bss


def _take_flat_form(msg) -> tuple[int, bool, bool, bool] | None:
    """``(value width, values under zstd, levels under zstd, values split into byte streams)``
    when a take of the page's chunks can go through
    :func:`~lancefile.encodings.kernels.miniblock_take_flat`, else None."""
    values = _flat_bytes(msg.value_compression, split=True)
    if values is None:
        return None
    zdefs = False
    if msg.HasField("def_compression"):
        levels = _flat_bytes(msg.def_compression, 16)
        if levels is None:
            return None
        zdefs = levels[1]
    return values[0], values[1], zdefs, values[2]


def _take_lists_form(msg) -> tuple[int, bool, int, object] | None:
    """``(value bits, values bit packed, repetition width, def levels)`` when a take of the
    page's chunks can go through :func:`~lancefile.encodings.kernels.miniblock_take_lists`
    (values InlineBitpacking without inner compression, or whole-byte Flat; levels
    OutOfLineBitpacking of u16, or def levels an RLE block of u16 runs), else None."""

    def packed_width(enc):
        if enc.WhichOneof("compression") != "out_of_line_bitpacking":
            return None
        ool = enc.out_of_line_bitpacking
        if ool.uncompressed_bits_per_value != 16 or ool.values.WhichOneof("compression") != "flat":
            return None
        return int(ool.values.flat.bits_per_value)

    vc = msg.value_compression
    kind = vc.WhichOneof("compression")
    if kind == "inline_bitpacking" and not vc.inline_bitpacking.HasField("values"):
        bits, packed = int(vc.inline_bitpacking.uncompressed_bits_per_value), True
    elif kind == "flat" and not vc.flat.HasField("data") and vc.flat.bits_per_value in (8, 16, 32, 64):
        bits, packed = int(vc.flat.bits_per_value), False
    else:
        return None
    rep_width = packed_width(msg.rep_compression)
    if rep_width is None:
        return None
    def_levels = None
    if msg.HasField("def_compression"):
        dc = msg.def_compression
        rle = dc.WhichOneof("compression") == "rle" and dc.rle.values.flat.bits_per_value == 16
        def_levels = "rle" if rle else packed_width(dc)
        if def_levels is None:
            return None
    return bits, packed, rep_width, def_levels
