"""``ConstantLayout``: a page whose visible values are all null, or (2.2) all equal.

Proto (the 2.1 ``AllNullLayout`` is the same message with only ``layers``)::

    ConstantLayout { repeated RepDefLayer layers = 5; optional bytes inline_value = 6;
                     CompressiveEncoding rep_compression = 7; CompressiveEncoding def_compression = 8;
                     uint64 num_rep_values = 9; uint64 num_def_values = 10; }

* **All null, no nesting**: ``layers = [NULLABLE_ITEM]``, no buffers.
* **All null with structure** (lists, structs): buffers ``[rep, def]``, raw u16 levels
  (either may be empty); 2.2 may compress them (``rep_compression``...).
* **Constant (2.2)**: the value inline (fixed width up to 32 bytes, e.g. ``inline_value =
  d2040000`` for int32 1234; a boolean is one byte) or in page buffer 0 as
  ``u32 nbuf, u32 len x nbuf, buffers`` (Arrow's buffers without validity: a string is
  ``02000000 08000000 04000000 | 00000000 04000000 | "same"``); the levels follow.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from ..compressive import Context, check_tree, decode_block
from ..compressive.values import Fixed, Var, as_uint
from ..page import PageData
from ..registry import LAYOUT
from ..selection import Selection
from .base import EntrySpans, Leaf, PageLayoutBase, PagePart, select_part, values_to_arrow
from .repdef import Layer, canonical_defs

__all__ = ["ConstantPage"]


@LAYOUT.register("constant_layout")
class ConstantPage(PageLayoutBase):
    def __init__(self, msg, leaf: Leaf, page_rows: int, where: str) -> None:
        g = leaf.grammar
        self.msg, self.leaf, self.rows, self.where = msg, leaf, page_rows, where
        self.inline = msg.HasField("inline_value")
        compressed = msg.HasField("rep_compression") or msg.HasField("def_compression")
        if not g.constant_values and (self.inline or compressed):
            raise CorruptFileError(f"{where}: Lance {leaf.version} only accepts the all-null form of constant page layout")
        for name in ("rep_compression", "def_compression"):
            if msg.HasField(name):
                check_tree(getattr(msg, name), Context.BLOCK, g, where)
        self.layers = list(msg.layers)
        canonical_defs(None, self.layers, list(leaf.shape), where)
        self._levels = None

    def _reset(self) -> None:
        self._levels = None

    def _split_buffers(self, page: PageData):
        """(value buffer index or None, rep index or None, def index or None)."""
        n = len(page.page.buffers)
        if n == 0:
            return None, None, None
        if n == 1:
            if self.inline:
                raise page.error("constant page with an inline value has a single extra buffer")
            return 0, None, None
        if n == 2:
            return None, 0, 1
        if n == 3 and not self.inline:
            return 0, 1, 2
        raise page.error(f"constant page has {n} buffers")

    def _all_levels(self, page: PageData):
        """(rep, canonical defs) of the whole page, decoded once per reader."""
        if self._levels is None:
            _, r, d = self._split_buffers(page)
            simple = r is None
            if simple:
                if self.leaf.max_rep:
                    raise page.error("a constant page of a list field has no levels")
                rep = None
                defs = None
                if list(self.layers) != [Layer.ALL_VALID_ITEM] * len(self.layers) and not self._has_value(page):
                    # all null: every row null at the leaf
                    defs = np.ones(self.rows, np.uint16) if self.layers and self.layers[0] == Layer.NULLABLE_ITEM \
                        else None
                    if defs is not None:
                        defs = canonical_defs(defs, self.layers, list(self.leaf.shape), page.where)
            else:
                rep = self._decode_levels(page, r, self.msg.rep_compression if self.msg.HasField("rep_compression")
                                          else None, int(self.msg.num_rep_values))
                defs = self._decode_levels(page, d, self.msg.def_compression if self.msg.HasField("def_compression")
                                           else None, int(self.msg.num_def_values))
                if rep is not None and defs is not None and len(rep) != len(defs):
                    raise page.error(f"{len(rep)} repetition levels but {len(defs)} definition levels")
                if defs is not None:
                    defs = canonical_defs(defs, self.layers, list(self.leaf.shape), page.where)
            self._levels = (rep, defs)
        return self._levels

    def _decode_levels(self, page, index, enc, count):
        ref = page.ref(index)
        if ref.size == 0:
            return None
        raw = np.frombuffer(page.read(index), np.uint8)
        if enc is None:
            if len(raw) % 2:
                raise page.error(f"raw u16 levels of {len(raw)} bytes")
            return raw.view("<u2")
        return as_uint(decode_block(enc, raw, count, page.where), 16, f"{page.where}: levels")

    def _has_value(self, page) -> bool:
        return self.inline or self._split_buffers(page)[0] is not None

    def _value(self, page: PageData) -> pa.Array:
        """The constant as a one-element array of the leaf's type."""
        dtype = self.leaf.dtype
        value_dtype = dtype.value_type if pa.types.is_dictionary(dtype) else dtype
        if self.inline:
            raw = np.frombuffer(self.msg.inline_value, np.uint8)
            want = 1 if pa.types.is_boolean(value_dtype) else (_fixed_bytes(value_dtype) or 0)
            if len(raw) != want:
                raise page.error(f"an inline constant of {len(raw)} bytes for a {value_dtype} column")
            if pa.types.is_boolean(value_dtype):
                one = Fixed(np.packbits([bool(raw.any())], bitorder="little"), 1, 1)
            else:
                one = Fixed(raw, 8 * len(raw), 1)
        else:
            one = _scalar(np.frombuffer(page.read(0), np.uint8), value_dtype, page.where)
        arr = values_to_arrow(one, value_dtype, page.where)
        if pa.types.is_dictionary(dtype):
            arr = pa.DictionaryArray.from_arrays(pa.array([0], dtype.index_type), arr)
        return arr

    def read(self, sel: Selection, page: PageData) -> PagePart:
        rep, defs = self._all_levels(page)
        n_entries = len(rep) if rep is not None else (len(defs) if defs is not None else self.rows)
        if self.leaf.max_rep:
            row_start = np.flatnonzero(rep == self.leaf.max_rep)
            if len(row_start) != self.rows:
                raise page.error(f"levels start {len(row_start)} rows, the page has {self.rows}")
            bounds = np.append(row_start, n_entries)
            wanted = np.arange(sel.start, sel.stop) if sel.is_range else sel.indices
            spans = EntrySpans(row_start[wanted], bounds[wanted + 1] - row_start[wanted])
            visible = int((defs <= self.leaf.max_visible).sum()) if defs is not None else n_entries
        else:
            if n_entries != self.rows:
                raise page.error(f"{n_entries} level entries for {self.rows} rows")
            spans = (EntrySpans(np.array([sel.start]), np.array([sel.count])) if sel.is_range
                     else EntrySpans(sel.indices, np.ones(sel.count, np.int64)))
            visible = n_entries
        if self._has_value(page):
            one = page.cached("constant", lambda: self._value(page))
            values = one.take(pa.array(np.zeros(visible, np.int64)))
        else:
            valid = visible if defs is None else int((defs == 0).sum())
            if valid:
                raise page.error(f"a page without a value says {valid} of its values are valid")
            values = pa.nulls(visible, self.leaf.dtype)
        return select_part(rep, defs, values, spans, self.leaf, sel.count, page.where)


def _scalar(raw: np.ndarray, dtype: pa.DataType, where: str):
    """A value stored as ``u32 nbuf, u32 len x nbuf, buffers`` (Arrow buffers, no validity)."""
    if len(raw) < 4:
        raise CorruptFileError(f"{where}: constant value buffer of {len(raw)} bytes")
    (nbuf,) = struct.unpack_from("<I", raw)
    head = 4 + 4 * nbuf
    if nbuf > 8 or len(raw) < head:
        raise CorruptFileError(f"{where}: constant value with {nbuf} buffers in {len(raw)} bytes")
    lengths = struct.unpack_from(f"<{nbuf}I", raw, 4)
    if head + sum(lengths) > len(raw):
        raise CorruptFileError(f"{where}: constant value buffers need {head + sum(lengths)} bytes, have {len(raw)}")
    bufs, pos = [], head
    for n in lengths:
        bufs.append(raw[pos : pos + n])
        pos += n
    storage = dtype.storage_type if isinstance(dtype, pa.ExtensionType) else dtype
    if pa.types.is_string(storage) or pa.types.is_binary(storage) or pa.types.is_large_string(storage) \
            or pa.types.is_large_binary(storage):
        if nbuf != 2:
            raise CorruptFileError(f"{where}: a constant string needs offsets and bytes, got {nbuf} buffers")
        ow = len(bufs[0]) // 2  # two offsets, u32 or u64
        if ow not in (4, 8) or len(bufs[0]) != 2 * ow:
            raise CorruptFileError(f"{where}: constant string offsets of {len(bufs[0])} bytes")
        offsets = bufs[0].view(f"<u{ow}").astype(np.int64)
        if len(offsets) < 2 or offsets[0] > offsets[1] or offsets[1] > len(bufs[1]):
            raise CorruptFileError(f"{where}: constant string offsets {offsets.tolist()} do not fit its bytes")
        return Var(np.array([0, offsets[1] - offsets[0]]), bufs[1][offsets[0] : offsets[1]])
    if nbuf != 1:
        raise CorruptFileError(f"{where}: a constant fixed-width value needs one buffer, got {nbuf}")
    width = 1 if pa.types.is_boolean(storage) else None
    if width:
        return Fixed(bufs[0][:1], 1, 1)
    return Fixed(bufs[0], 8 * len(bufs[0]), 1)



def _fixed_bytes(dtype: pa.DataType) -> int | None:
    """Bytes a value of a fixed-width type takes (a fixed_size_list: all its items)."""
    if pa.types.is_fixed_size_list(dtype):
        inner = _fixed_bytes(dtype.value_type)
        return None if inner is None else inner * dtype.list_size
    try:
        return dtype.bit_width // 8 if dtype.bit_width % 8 == 0 else None
    except ValueError:
        return None
