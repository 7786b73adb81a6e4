"""``FullZipLayout``: large values, each zipped with its levels, for single-row access.

Proto::

    FullZipLayout { uint32 bits_rep = 1; uint32 bits_def = 2;
                    oneof details { uint32 bits_per_value = 3; uint32 bits_per_offset = 4; }
                    uint32 num_items = 5; uint32 num_visible_items = 6;
                    CompressiveEncoding value_compression = 7; repeated RepDefLayer layers = 8; }

Buffers: ``[0]`` the items, ``[1]`` the repetition index (when the page has lists or
variable-width values). An item is ``[control word][value]``: the control word
``rep << bits_def | def`` takes 1, 2 or 4 bytes (none when both widths are 0); fixed
values (``bits_per_value``) follow every visible item, variable ones (``[u32|u64
length][bytes]``, ``bits_per_offset``) every valid item. The repetition index holds each
row's byte offset in buffer 0, plus the end, in 1, 2, 4 or 8 bytes an entry (its width is
``buffer size / (rows + 1)``). Non-null ``fixed_size_list<float>[128]`` embeddings are
just their values back to back: row ``i`` is bytes ``[512 i, 512 (i+1))``.

A read fetches only the bytes of the rows it wants (and, for a take, their index entries).
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from .. import kernels
from ..compressive import Context, check_tree, decode_fixed_values, decode_variable_spans
from ..page import PageData
from ..registry import LAYOUT
from ..selection import Selection
from .full_zip_many import take_pages
from .base import EntrySpans, Leaf, PageLayoutBase, PagePart, message_key, select_part, values_to_arrow
from .repdef import canonical_defs, page_max_visible

__all__ = ["FullZipPage"]

_DATA, _INDEX = 0, 1


def _ctrl_bytes(bits: int, where: str) -> int:
    if bits == 0:
        return 0
    for size in (1, 2, 4):
        if bits <= 8 * size:
            return size
    raise CorruptFileError(f"{where}: full-zip control words of {bits} bits")


@LAYOUT.register("full_zip_layout")
class FullZipPage(PageLayoutBase):
    def __init__(self, msg, leaf: Leaf, page_rows: int, where: str) -> None:
        self.msg, self.leaf, self.rows, self.where = msg, leaf, page_rows, where
        kind = msg.WhichOneof("details")
        if kind is None:
            raise CorruptFileError(f"{where}: full-zip page gives neither bits_per_value nor bits_per_offset")
        if not msg.HasField("value_compression"):
            raise CorruptFileError(f"{where}: full-zip page has no value encoding")
        self.variable = kind == "bits_per_offset"
        ctx = Context.VARIABLE_VALUE if self.variable else Context.FIXED_VALUE
        check_tree(msg.value_compression, ctx, leaf.grammar, where)
        if self.variable:
            if msg.bits_per_offset not in (32, 64):
                raise CorruptFileError(f"{where}: full-zip lengths of {msg.bits_per_offset} bits")
            self.len_bytes, self.fixed = msg.bits_per_offset // 8, -1
        else:
            if msg.bits_per_value % 8:
                raise CorruptFileError(f"{where}: full-zip values of {msg.bits_per_value} bits are not whole bytes")
            self.len_bytes, self.fixed = 0, msg.bits_per_value // 8
        self.def_bits = int(msg.bits_def)
        if msg.bits_rep > 16 or self.def_bits > 16:
            raise CorruptFileError(f"{where}: full-zip levels of {msg.bits_rep} rep and {self.def_bits} def bits")
        self.ctrl = _ctrl_bytes(int(msg.bits_rep) + self.def_bits, where)
        self.layers = list(msg.layers)
        canonical_defs(None, self.layers, list(leaf.shape), where)
        self.max_visible = page_max_visible(self.layers)
        self.has_index = leaf.max_rep > 0 or self.variable
        if leaf.max_rep and not msg.bits_rep and page_rows:
            raise CorruptFileError(f"{where}: a full-zip page of a list field has no repetition bits")
        # a take's pages with the same item layout (all but counts and value encoding) are read
        # together: their rows' bytes in one batch of requests (after their index entries, if any)
        self.batch_key = ((b"full-zip:" if self.has_index else b"full-zip-fixed:")
                          + message_key(msg, "num_items", "num_visible_items", "value_compression"))

    take_pages = staticmethod(take_pages)

    @property
    def batches_ranges(self) -> bool:
        """A range over several pages is read by :func:`take_pages` (into one array) when rows
        are found through a repetition index; pages of fixed-size rows are read one by one."""
        return self.has_index

    # -- byte ranges of rows ---------------------------------------------------------------------
    def _row_bytes(self, sel: Selection, page: PageData) -> tuple[list[tuple[int, int]], int]:
        """[(start, length)] in buffer 0 for the selected rows (merged when contiguous)."""
        data_size = page.ref(_DATA).size
        if not self.has_index:
            stride = self.ctrl + self.fixed
            if data_size != stride * self.rows:
                raise page.error(f"{data_size} bytes of full-zip items for {self.rows} rows of {stride} bytes")
            if sel.is_range:
                return [(sel.start * stride, sel.count * stride)], stride
            return [(int(r) * stride, stride) for r in sel.indices.tolist()], stride
        if len(page.page.buffers) < 2:
            raise page.error("full-zip page has no repetition index")
        size = page.ref(_INDEX).size
        width, rem = divmod(size, self.rows + 1)
        if rem or width not in (1, 2, 4, 8):
            raise page.error(f"repetition index of {size} bytes for {self.rows} rows")
        dtype = f"<u{width}"
        if sel.is_range:
            raw = page.read_range(_INDEX, sel.start * width, (sel.count + 1) * width)
            bounds = np.frombuffer(raw, dtype).astype(np.int64)
            self._check_bounds(bounds, data_size, page)
            return [(int(bounds[0]), int(bounds[-1] - bounds[0]))], 0
        pieces = page.read_ranges(_INDEX, [(int(r) * width, 2 * width) for r in sel.indices.tolist()])
        pairs = np.frombuffer(b"".join(pieces), dtype).astype(np.int64).reshape(-1, 2)
        self._check_bounds(pairs.reshape(-1), data_size, page, pairs=True)
        return list(zip(pairs[:, 0].tolist(), (pairs[:, 1] - pairs[:, 0]).tolist())), 0

    def _check_bounds(self, bounds, data_size, page, pairs: bool = False) -> None:
        steps = bounds[1::2] - bounds[0::2] if pairs else np.diff(bounds)
        if len(bounds) and (bounds.min() < 0 or bounds.max() > data_size or np.any(steps < 0)):
            raise page.error(f"repetition index points outside the {data_size}-byte item buffer or goes back")

    def _fetch(self, page: PageData, ranges) -> np.ndarray:
        if len(ranges) == 1:
            start, length = ranges[0]
            return np.frombuffer(page.read_range(_DATA, start, length), np.uint8)
        pairs = np.array(ranges, np.int64).reshape(-1, 2)
        return page.read_packed(_DATA, pairs[:, 0], pairs[:, 1])

    def split_fixed_rows(self, rows: np.ndarray, where: str) -> tuple[np.ndarray | None, np.ndarray]:
        """``(def levels or None, values)`` of fixed-size rows (one a row: ``rows`` is
        (n, control bytes + value bytes)): each row's control word checked and its def bits
        kept, the values a view of the rest."""
        if not self.ctrl:
            return None, rows
        c = self.ctrl
        ctrl = (rows[:, :c].copy().view(f"<u{c}").reshape(-1) if c > 1 else rows[:, 0]).astype(np.int64)
        if np.any(ctrl >> (int(self.msg.bits_rep) + self.def_bits)):
            raise CorruptFileError(f"{where}: a full-zip control word has bits above its rep and def bits")
        return (ctrl & ((1 << self.def_bits) - 1)).astype(np.uint16), rows[:, c:]

    # -- decoding -------------------------------------------------------------------------------
    def read(self, sel: Selection, page: PageData) -> PagePart:
        ranges, stride = self._row_bytes(sel, page)
        data = self._fetch(page, ranges)
        ce = self.msg.value_compression
        if stride and not self.leaf.max_rep:  # fixed items, one a row: no scan needed
            defs, rows = self.split_fixed_rows(data.reshape(sel.count, stride), page.where)
            values = decode_fixed_values(ce, rows, page.where)
            rep = None
        else:
            try:
                rep, defs, vstart, vlen = kernels.fullzip_scan(data, self.ctrl, self.def_bits, self.max_visible,
                                                               self.fixed, self.len_bytes, int(self.msg.bits_rep))
            except CorruptFileError as exc:
                raise page.error(str(exc)) from None
            if not self.msg.bits_rep:
                rep = None
            if not self.def_bits:
                defs = None
            visible = np.flatnonzero(vlen >= 0) if self.fixed >= 0 else None
            if self.fixed >= 0:
                starts = vstart[visible]
                rows = kernels.gather_bytes(data, starts, np.full(len(starts), self.fixed, np.int64))
                values = decode_fixed_values(ce, rows.reshape(len(starts), self.fixed), page.where)
            else:
                values = self._variable(ce, data, defs, vstart, vlen, page)
        if defs is not None:
            defs = canonical_defs(defs, self.layers, list(self.leaf.shape), page.where)
        arr = values_to_arrow(values, self.leaf.dtype, page.where)
        n_entries = len(rep) if rep is not None else (len(defs) if defs is not None else len(arr))
        spans = EntrySpans(np.array([0], np.int64), np.array([n_entries], np.int64))
        return select_part(rep, defs, arr, spans, self.leaf, sel.count, page.where)

    def _variable(self, ce, data, defs, vstart, vlen, page):
        """Values of the visible entries: valid ones have bytes, null ones are empty."""
        visible = np.ones(len(vlen), dtype=bool) if defs is None else defs <= self.max_visible
        lengths = np.where(vlen[visible] >= 0, vlen[visible], 0)
        starts = np.where(vlen[visible] >= 0, vstart[visible], 0)
        return decode_variable_spans(ce, data, starts, lengths, page.where)
