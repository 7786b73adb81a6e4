"""Field-level reading of 2.0 files: which columns a field owns and how they combine.

In 2.0 every Lance field owns columns in pre-order: a struct owns a header column (one
``SimpleStruct`` page, no buffers) and then its children's; a list owns an offsets column
(``List`` pages) and then its item field's; primitives, fixed-size lists, packed structs
and blobs own one column each. So ``ls: list<struct<u, w>>, f: float`` maps to columns
``ls offsets, ls.item header, u, w, f``.

A list's items page never spans two offsets pages; the reader matches them by counting
``List.num_items``, so row ``r`` of a list column reads offsets from the page holding
``r`` and items from the item rows that page's offsets point to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import CorruptFileError, UnsupportedEncodingError
from ...format.container import ARRAY_ENCODING_URL, COLUMN_ENCODING_URL, FileLayout
from ...format.schema import _LIST_TYPES, LanceField, LanceSchema
from ...format.version import FileVersion
from ...io import new_buffer
from ..arrowutil import (array_from_fixed, checks_values, concat_arrays, is_flat_fixed, range_indices, safe_array,
                         validate_values)
from ..columns import ColumnPages
from ..registry import decode_array
from ..selection import Selection
from .binary_take import take_pages as take_binary_pages
from .dictionary import take_pages as take_dictionary_pages
from .flat import plain_rows
from .offsets import range_offsets, row_spans, split_adjusted

__all__ = ["assign_columns", "FieldReader", "LeafReader", "build_reader"]


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


_LIST_LOGICAL_TYPES = frozenset(_LIST_TYPES)  # logical types that read back as list / large_list


def owns_children(f: LanceField) -> bool:
    # decided from the logical type: building the Arrow type costs more than the whole
    # column assignment of a wide schema
    if f.logical_type == "struct":
        return not f.is_packed_struct_for(FileVersion.V2_0)
    return f.logical_type in _LIST_LOGICAL_TYPES


def assign_columns(schema: LanceSchema) -> dict[int, int]:
    """field id -> column index, in 2.0 pre-order."""
    out: dict[int, int] = {}

    def visit(f: LanceField) -> None:
        out[f.id] = len(out)
        if owns_children(f):
            for c in f.children:
                visit(c)

    for f in schema.fields:
        visit(f)
    return out


class FieldReader:
    """Reads one field; built once per file reader, given a fresh ``cache`` dict per read."""

    dtype: pa.DataType

    def read(self, sel: Selection, cache: dict) -> pa.Array:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class LeafReader(FieldReader):
    column: ColumnPages
    dtype: pa.DataType

    # Set by build_reader on the readers of a field made of leaves, structs and lists: each
    # leaf validates its pages' values in full as they are decoded, on the decoding thread,
    # and the file reader makes only Arrow's layout check of the field (the structs' and
    # lists' offsets come from checked kernels). A low-cardinality string page's values,
    # gathered from its dictionary, are checked once as the dictionary (decode_dictionary)
    # instead of every string of every row again. Other fields are checked whole.
    checks_leaves: bool = False
    # A fixed-width field's reader is made without parsing its column's metadata (a wide
    # table's thousand columns: see encodings.v2_0.plain): the column's own encoding is
    # checked when it is first read (check_column), and is then None.
    field: LanceField | None = None

    def check_column(self) -> None:
        """Refuse a column whose own encoding is not ``values`` (see :attr:`field`)."""
        f = self.field
        if f is not None:
            if _check_column_encoding(self.column.layout, self.column.index, f) == "blob":
                raise CorruptFileError(f"{self.column.layout.path}: column {self.column.index} (field {f.name!r}) "
                                       f"has a blob column encoding, which a field of type {self.dtype} cannot have")
            self.field = None

    def read(self, sel: Selection, cache: dict) -> pa.Array:
        if self.field is not None:
            self.check_column()
        col = self.column
        pieces = list(col.split(sel, cache))
        if len(pieces) > 1 and sel.is_range:
            arr = self._read_plain(pieces, cache)
            if arr is not None:  # (plain fixed-width values: only some types' values are for a full check)
                return validate_values(arr, col.where(pieces[0][0])) if checks_values(self.dtype) else arr
        # a take's low-cardinality string pages, read at once (valid: checked dictionaries, bounds-checked indices)
        done = take_dictionary_pages(col, pieces, cache, self.dtype) if not sel.is_range else {}
        if not sel.is_range and len(pieces) - len(done) > 1:  # and its plain string pages, two batches of reads
            rest = [i for i in range(len(pieces)) if i not in done]
            got = take_binary_pages(col, [pieces[i] for i in rest], cache, self.dtype, self.checks_leaves)
            done.update({rest[k]: arr for k, arr in got.items()})
        parts = [done[i] if i in done else self._decode(p, local, cache) for i, (p, local) in enumerate(pieces)]
        return concat_arrays(parts, self.dtype)

    def _decode(self, p: int, local: Selection, cache: dict) -> pa.Array:
        """Page ``p``'s rows ``local`` (validated when :attr:`checks_leaves`, unless gathered
        from a checked dictionary)."""
        col = self.column
        enc, page = col.encoding(p), col.page(p, cache)
        arr = decode_array(enc, page, self.dtype, local)
        if not self.checks_leaves or (enc.WhichOneof("array_encoding") == "dictionary"
                                      and not pa.types.is_dictionary(self.dtype)):
            return arr  # (a dictionary's items are checked in full when decoded, its indices bounds-checked)
        return validate_values(arr, page.where)

    def _read_plain(self, pieces, cache: dict) -> pa.Array | None:
        """A range over several pages of plain fixed-width rows, read straight into one
        buffer (no per-page arrays to concatenate); None when a page is encoded otherwise."""
        col = self.column
        plans = [plain_rows(col.encoding(p), self.dtype) for p, _ in pieces]
        if any(plan is None for plan in plans):
            return None
        rows = sum(local.count for _, local in pieces)
        out = np.frombuffer(new_buffer(rows * plans[0][1]), dtype=np.uint8)
        pos = 0
        for (p, local), (flat, w) in zip(pieces, plans):
            page = col.page(p, cache)
            size = page.ref(flat.buffer).size
            if local.stop * w > size:
                raise page.error(f"Flat buffer of {size} bytes is too short for rows up to {local.stop}")
            page.read_into(flat.buffer, [local.start * w], [local.count * w], out[pos : pos + local.count * w])
            pos += local.count * w
        return array_from_fixed(self.dtype, out, rows)


@dataclass
class StructReader(FieldReader):
    children: list[FieldReader]
    dtype: pa.DataType
    checks_leaves: bool = False  # (see LeafReader)

    def read(self, sel: Selection, cache: dict) -> pa.Array:
        fields = [self.dtype.field(i) for i in range(self.dtype.num_fields)]
        if not fields:
            return safe_array(self.dtype, sel.count, [None], children=[])
        return pa.StructArray.from_arrays([c.read(sel, cache) for c in self.children], fields=fields)


@dataclass
class ListReader(FieldReader):
    column: ColumnPages
    items: FieldReader
    dtype: pa.DataType
    checks_leaves: bool = False  # (see LeafReader)

    def __post_init__(self) -> None:
        self._item_starts: np.ndarray | None = None

    def _list_msg(self, p: int) -> pb.List:
        enc = self.column.encoding(p)
        if enc.WhichOneof("array_encoding") != "list":
            raise CorruptFileError(
                f"{self.column.layout.path}: column {self.column.index} page {p} of a list field is not a List page"
            )
        return enc.list

    def item_starts(self) -> np.ndarray:
        if self._item_starts is None:
            counts = [self._list_msg(p).num_items for p in range(len(self.column.info.pages))]
            self._item_starts = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))]).astype(np.int64)
        return self._item_starts

    def _ends(self, p: int, sel: Selection, cache: dict):
        msg = self._list_msg(p)
        raw = decode_array(msg.offsets, self.column.page(p, cache), pa.uint64(), sel)
        ends, valid = split_adjusted(raw.to_numpy(zero_copy_only=False), int(msg.null_offset_adjustment))
        if len(ends) and (ends.min() < 0 or ends.max() > msg.num_items):
            raise CorruptFileError(
                f"{self.column.layout.path}: column {self.column.index} page {p}: list offsets exceed the page's {msg.num_items} items"
            )
        return ends, valid

    def _page_offsets(self, p: int, local: Selection, cache: dict):
        """(offsets from 0, validity or None, first item, end item) of a range of rows of page
        ``p`` whose offsets are plain u64 (:func:`.offsets.range_offsets`); None for another layout."""
        msg = self._list_msg(p)
        where = f"{self.column.layout.path}: column {self.column.index} page {p}"
        got = range_offsets(msg.offsets, self.column.page(p, cache), local, int(msg.null_offset_adjustment),
                            lambda _: CorruptFileError(f"{where}: list offsets decrease"))
        if got is None:
            return None
        offsets, valid, first = got
        stop = first + int(offsets[-1])
        if stop > msg.num_items:
            raise CorruptFileError(f"{where}: list offsets exceed the page's {msg.num_items} items")
        return offsets, valid, first, stop

    def _range(self, pieces: list, cache: dict) -> pa.Array | None:
        """A range of rows (a scan's chunk) over pages whose offsets are plain u64: the list
        offsets made in one compiled pass a page, the items read as one range where the pages'
        items follow each other (a chunk across a page boundary). None for another layout."""
        base = self.item_starts()
        got = []
        for p, local in pieces:
            one = self._page_offsets(p, local, cache)
            if one is None:
                return None
            got.append((int(base[p]), *one))
        if len(got) == 1:
            offsets, valid = got[0][1], got[0][2]
        else:  # each page's offsets after the items of the pages before it in the chunk
            shift = np.cumsum([0] + [int(o[-1]) for _, o, _, _, _ in got[:-1]])
            offsets = np.concatenate([o[:-1] + k for (_, o, _, _, _), k in zip(got, shift)]
                                     + [got[-1][1][-1:] + shift[-1]])
            valid = None if all(v is None for _, _, v, _, _ in got) else np.concatenate(
                [np.ones(len(o) - 1, bool) if v is None else v for _, o, v, _, _ in got])
        large = pa.types.is_large_list(self.dtype)
        if not large and offsets[-1] > np.iinfo(np.int32).max:
            raise CorruptFileError(f"{self.column.layout.path}: column {self.column.index}: {int(offsets[-1])} "
                                   f"items do not fit a {self.dtype} array")
        ranges = [(b + first, b + stop) for b, _, _, first, stop in got]
        if all(ranges[k][1] == ranges[k + 1][0] for k in range(len(ranges) - 1)):
            ranges = [(ranges[0][0], ranges[-1][1])]  # one read of the items
        items = concat_arrays([self.items.read(Selection.of_range(a, z), cache) for a, z in ranges], self.items.dtype)
        bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
        rows = sum(local.count for _, local in pieces)
        offsets = offsets.astype(np.int64 if large else np.int32, copy=False)
        return safe_array(self.dtype, rows, [bitmap, pa.py_buffer(offsets)], children=[items])

    def read(self, sel: Selection, cache: dict) -> pa.Array:
        pieces = list(self.column.split(sel, cache))
        if sel.is_range and sel.count:  # (a scan's chunk)
            got = self._range(pieces, cache)
            if got is not None:
                return got
        base = self.item_starts()
        lengths_parts, valid_parts, item_idx_parts, item_ranges = [], [], [], []
        for p, local in pieces:
            starts, ends, valid = row_spans(local, lambda sel, p=p: self._ends(p, sel, cache))
            if local.is_range and len(ends):
                item_ranges.append((base[p] + starts[0], base[p] + ends[-1]))
            lengths = ends - starts
            if np.any(lengths < 0):
                raise CorruptFileError(
                    f"{self.column.layout.path}: column {self.column.index} page {p}: list offsets decrease"
                )
            if not local.is_range:
                item_idx_parts.append(range_indices(starts + base[p], lengths))
            lengths_parts.append(lengths)
            valid_parts.append(valid)
        lengths = np.concatenate(lengths_parts) if lengths_parts else np.zeros(0, np.int64)
        valid = np.concatenate(valid_parts) if valid_parts else np.zeros(0, bool)
        if sel.is_range:
            items = concat_arrays([self.items.read(Selection.of_range(a, b), cache) for a, b in item_ranges],
                                  self.items.dtype)
        else:
            allidx = np.concatenate(item_idx_parts) if item_idx_parts else np.zeros(0, np.int64)
            if len(allidx) > 1 and np.any(allidx[1:] <= allidx[:-1]):  # rows in order own items in order
                raise CorruptFileError(f"{self.column.layout.path}: column {self.column.index}: list offsets "
                                       f"decrease (rows' items overlap)")
            items = self.items.read(Selection.of_indices(allidx), cache)
        return _build_list(self.dtype, lengths, valid, items)


def _build_list(dtype: pa.DataType, lengths: np.ndarray, valid: np.ndarray, items: pa.Array) -> pa.Array:
    large = pa.types.is_large_list(dtype)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    off_type = np.int64 if large else np.int32
    if not large and offsets[-1] > np.iinfo(np.int32).max:
        raise CorruptFileError(f"{int(offsets[-1])} items do not fit a {dtype} array")
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return safe_array(
        dtype, len(lengths), [bitmap, pa.py_buffer(offsets.astype(off_type))], children=[items]
    )


@dataclass
class BlobReader(FieldReader):
    """2.0 blob column: pages of (position, size) descriptors; bytes stored out of line."""

    column: ColumnPages
    dtype: pa.DataType

    _DESC = pa.struct([("position", pa.uint64()), ("size", pa.uint64())])

    def read(self, sel: Selection, cache: dict) -> pa.Array:
        desc = LeafReader(self.column, self._DESC).read(sel, cache)
        pos = desc.field("position").to_numpy(zero_copy_only=False).astype(np.int64)
        size = desc.field("size").to_numpy(zero_copy_only=False).astype(np.int64)
        valid = ~((pos == 1) & (size == 0))
        src = self.column.layout.source
        if np.any(pos + size > src.size) or np.any(pos < 0):
            raise CorruptFileError(f"{src.name}: column {self.column.index}: blob descriptor points outside the file")
        keep = np.flatnonzero(valid & (size > 0))
        blocks = src.read_many(list(zip(pos[keep].tolist(), size[keep].tolist())))
        data = np.frombuffer(b"".join(blocks), dtype=np.uint8) if blocks else np.empty(0, np.uint8)
        lengths = np.where(valid, size, 0)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        from .binary import build_binary

        return build_binary(self.dtype, offsets, data, valid)


def _check_column_encoding(layout: FileLayout, col: int, f: LanceField) -> str:
    info = layout.column(col)
    if not info.encoding:
        return "values"
    where = f"{layout.path}: column {col} (field {f.name!r})"
    enc = layout.message(info.encoding, COLUMN_ENCODING_URL, pb.ColumnEncoding, where)
    kind = enc.WhichOneof("column_encoding")
    if kind == "blob":
        return "blob"
    if kind in (None, "values"):
        return "values"
    raise UnsupportedEncodingError(f"{where} has column encoding {kind!r} and no decoder is registered to handle it")


@dataclass
class SelectReader(FieldReader):
    """Picks (and orders) children of a struct decoded whole, e.g. a projected packed struct."""

    inner: FieldReader
    positions: list[int]  # of the children kept, in order (names may repeat)
    dtype: pa.DataType

    def read(self, sel: Selection, cache: dict) -> pa.Array:
        arr = self.inner.read(sel, cache)
        fields = [self.dtype.field(i) for i in range(self.dtype.num_fields)]
        return pa.StructArray.from_arrays([arr.field(i) for i in self.positions], fields=fields)


def _child_field(c: LanceField, dtype: pa.DataType) -> pa.Field:
    base = c.to_arrow()
    return pa.field(base.name, dtype, base.nullable, base.metadata)


def build_reader(layout: FileLayout, f: LanceField, columns: dict[int, int],
                 keep: dict | None = None) -> FieldReader:
    """Build the reader of top-level field ``f``; ``keep`` (a projection keep-tree) selects children."""
    reader = _build_reader(layout, f, columns, keep)
    tree = _tree(reader)
    if tree is not None:  # leaves, structs and lists only: each leaf's values validated as they are decoded
        for r in tree:
            r.checks_leaves = True
    return reader


def _tree(reader: FieldReader) -> list | None:
    """The readers of a field made of leaves, structs and lists only (whose offsets and
    validity lancefile builds valid: only the leaves' values need a full check), or None."""
    if type(reader) is LeafReader:
        return [reader]
    if type(reader) is ListReader:
        items = _tree(reader.items)
        return None if items is None else [reader, *items]
    if type(reader) is StructReader:
        kids = [_tree(c) for c in reader.children]
        return None if any(k is None for k in kids) else [reader, *(r for k in kids for r in k)]
    return None


_FIXED_WIDTH: dict = {}  # Arrow type -> whether its values are one fixed-width buffer


def _fixed_width(t: pa.DataType) -> bool:
    got = _FIXED_WIDTH.get(t)
    if got is None:
        got = is_flat_fixed(t)
        if len(_FIXED_WIDTH) < 4096:
            _FIXED_WIDTH[t] = got
    return got


def _build_reader(layout: FileLayout, f: LanceField, columns: dict[int, int], keep: dict | None) -> FieldReader:
    col = columns[f.id]
    t = f.arrow_type
    by_id = {c.id: c for c in f.children}
    packed = pa.types.is_struct(t) and f.is_packed_struct_for(FileVersion.V2_0)
    if pa.types.is_struct(t) and not packed:
        kids = f.children if keep is None else [by_id[i] for i in keep]  # in the order asked for
        readers = [_build_reader(layout, c, columns, None if keep is None else keep[c.id]) for c in kids]
        dtype = t if keep is None else pa.struct([_child_field(c, r.dtype) for c, r in zip(kids, readers)])
        return StructReader(readers, dtype)
    if not f.children and _fixed_width(t):  # (a wide table's columns: nothing parsed until read)
        return LeafReader(ColumnPages(layout, col, ARRAY_ENCODING_URL, pb.ArrayEncoding, lazy=True), t, field=f)
    pages = ColumnPages(layout, col, ARRAY_ENCODING_URL, pb.ArrayEncoding)
    if _is_list(t):
        item = f.children[0]
        items = _build_reader(layout, item, columns, None if keep is None else keep.get(item.id))
        make = pa.large_list if pa.types.is_large_list(t) else pa.list_
        return ListReader(pages, items, t if keep is None else make(_child_field(item, items.dtype)))
    if _check_column_encoding(layout, col, f) == "blob":
        return BlobReader(pages, t)
    whole = LeafReader(pages, t)
    if packed and keep is not None:
        kids = [by_id[i] for i in keep]
        at = {c.id: k for k, c in enumerate(f.children)}  # (by position: names may repeat)
        return SelectReader(whole, [at[i] for i in keep], pa.struct([c.to_arrow() for c in kids]))
    return whole
