"""Field-level reading of 2.1/2.2 files: leaf columns, and nested arrays from their levels.

In 2.1+ only **leaves** own columns (pre-order): primitives, fixed-size lists of
primitives, packed structs, blobs, empty structs. Structs, lists and maps own none; they
live in their leaves' repetition/definition layers. ``ls: list<struct<u, w>>, f: float``
has columns ``u, w, f``; ``u``'s layers are ``[u, struct, list]`` (inner to outer).

A read decodes each needed leaf for the selected rows (page by page, see the page
layouts), unravels its levels into offsets and validity per layer, and builds the Arrow
array top-down: a struct's validity and a list's offsets come from the first leaf below
it (every leaf below a node carries the same layers for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_1_pb2 as pb
from ...errors import ChecksumError, CorruptFileError, UnsupportedEncodingError
from ...format.container import FileLayout
from ...format.schema import _LIST_TYPES, LanceField, LanceSchema
from ..arrowutil import concat_arrays, fixed_size_lists, safe_array, validate_values
from ..columns import ColumnPages
from ..registry import LAYOUT
from ..selection import Selection
from .base import Leaf, PagePart, Where
from .mini_block_fast import take_fresh
from .repdef import ITEM, LIST, unravel

__all__ = ["PAGE_LAYOUT_URL", "assign_columns", "build_reader", "is_leaf", "read_together"]

PAGE_LAYOUT_URL = "/lance.encodings21.PageLayout"
_LIST_LOGICAL = frozenset(_LIST_TYPES)


def is_leaf(f: LanceField) -> bool:
    """Whether a field owns a column in 2.1+ (structs, lists, maps, fsl<struct> do not)."""
    lt = f.logical_type
    if lt in _LIST_LOGICAL or lt == "map" or _is_fsl_of_struct(f):
        return False
    if lt == "struct":
        return not f.children or f.is_packed_struct
    return True


def _is_fsl_of_struct(f: LanceField) -> bool:
    """``fixed_size_list<struct>`` (2.2): its struct's leaves own columns, one entry per item."""
    return f.logical_type.startswith("fixed_size_list:") and bool(f.children)


def assign_columns(schema: LanceSchema) -> dict[int, int]:
    """field id -> column index: the leaves, in pre-order."""
    out: dict[int, int] = {}

    def visit(f: LanceField) -> None:
        if is_leaf(f):
            out[f.id] = len(out)
        else:
            for c in f.children:
                visit(c)

    for f in schema.fields:
        visit(f)
    return out


def _layer_kind(f: LanceField) -> str:
    return LIST if f.logical_type in _LIST_LOGICAL or f.logical_type == "map" else ITEM


_LEAVES: dict = {}


def _leaf(dtype: pa.DataType, shape: tuple, grammar, version: str) -> Leaf:
    """One shared (immutable) Leaf per description: a wide table's columns need one, not 1,000."""
    key = (str(dtype), shape, grammar, version)
    got = _LEAVES.get(key)
    if got is not None and not got.dtype.equals(dtype, check_metadata=True):  # e.g. child field metadata
        return Leaf(dtype, shape, grammar, version)
    if got is None:
        if len(_LEAVES) >= 4096:
            _LEAVES.clear()
        got = _LEAVES[key] = Leaf(dtype, shape, grammar, version)
    return got


class LeafColumn:
    """One leaf column: its pages' decoders (built once per reader) and page-by-page reads."""

    def __init__(self, layout: FileLayout, index: int, leaf: Leaf, name: str, mult: int = 1) -> None:
        label = f"field {name!r}, file version {leaf.version}"
        self.pages = ColumnPages(layout, index, PAGE_LAYOUT_URL, pb.PageLayout, label)
        self.leaf = leaf
        self._decoders: dict[int, object] = {}
        self._templates: dict[bytes, object] = {}  # page encoding -> its checked decoder (the leaf is this column's)
        # every leaf column holds one entry a row (mult per row under a fixed_size_list<struct>)
        if layout.num_rows is not None and self.pages.num_rows != layout.num_rows * mult:
            want = layout.num_rows * mult
            # name the first page that runs past the file's rows (or the last page, when short)
            over = np.flatnonzero(self.pages.starts[1:] > want)
            page = int(over[0]) if len(over) else max(len(self.pages.info.pages) - 1, 0)
            raise CorruptFileError(f"{self.pages.where(page)}: the column's pages hold {self.pages.num_rows} rows "
                                   f"(this one {self.pages.info.pages[page].length if self.pages.info.pages else 0}), "
                                   f"the file has {want}")

    def decoder(self, i: int):
        dec = self._decoders.get(i)
        if dec is None:
            page = self.pages.info.pages[i]
            dec = self._decoders[i] = self.template(i, page.encoding).for_page(page.length, self.pages.where(i))
        return dec

    def template(self, i: int, encoding: bytes):
        """The checked decoder of page ``i``'s encoding (``encoding``: its bytes), which its own
        decoder copies. A column's pages mostly share a handful of encodings: each is looked
        up once per reader here (keyed by its bytes alone), not hashed with the leaf for every
        page."""
        template = self._templates.get(encoding)
        if template is None:
            template = self._templates[encoding] = page_template(encoding, self.leaf, self.pages.info.lengths[i],
                                                                 self.pages, i)
        return template

    def read(self, sel: Selection, cache: dict) -> PagePart:
        if not sel.is_range and not self._decoders:  # a take on a fresh reader: from the page table
            got = take_fresh(self, sel)
            if got is not None:
                return _concat_parts(got, self.leaf.dtype, sel.count)
        pieces = list(self.pages.split(sel, cache))
        if len(pieces) > 1:
            return self._take(pieces, sel, cache)
        return self._read_pages(pieces, sel.count, cache)

    def _take(self, pieces, sel: Selection, cache: dict) -> PagePart:
        """A read over several pages: neighbouring pages that share a ``batch_key`` are decoded
        together (``take_pages`` of mini-block pages, and of full-zip pages for takes), the
        others one by one."""
        bounds = self.pages.bounds
        groups: list[list] = []
        for p, local in pieces:
            dec = self.decoder(p)
            key = getattr(dec, "batch_key", None) if not getattr(dec, "plain_width", 0) else None
            if key is not None and groups and groups[-1][0] == key:
                groups[-1][1].append((dec, p, local))
            else:
                groups.append((key, [(dec, p, local)]))
        parts = []
        page = self.pages.page
        for key, members in groups:
            if key is None or len(members) == 1 or (members[0][2].is_range and not members[0][0].batches_ranges):
                parts.append(self._read_pages([(p, local) for _, p, local in members],
                                              sum(local.count for *_, local in members), cache))
                continue
            # rows numbered from the column's start, so that every page's chunks and rows agree
            items = [(dec, page(p, cache), local, bounds[p]) for dec, p, local in members]
            try:
                parts.append(type(items[0][0]).take_pages(items))
            except CorruptFileError as exc:
                if isinstance(exc, ChecksumError) or self.pages.label in str(exc):  # located already
                    raise
                raise CorruptFileError(f"{exc} ({self.pages.label})") from None
        return _concat_parts(parts, self.leaf.dtype, sel.count)

    def _read_pages(self, pieces, count: int, cache: dict) -> PagePart:
        parts = []
        for p, local in pieces:
            page = self.pages.page(p, cache)
            try:
                parts.append(self.decoder(p).read(local, page))
            except CorruptFileError as exc:
                if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
                    raise
                if str(exc).startswith(page.where):
                    raise
                raise CorruptFileError(f"{page.where}: {exc}") from None  # a kernel's message: say where
        return _concat_parts(parts, self.leaf.dtype, count)

    def pages_of(self, sel: Selection) -> str:
        """``"column 4 pages 3-5 (field 'x', file version 2.2)"``: where a selection was read."""
        bounds = self.pages.starts
        first = int(np.searchsorted(bounds, sel.start, side="right")) - 1
        last = int(np.searchsorted(bounds, max(sel.stop - 1, sel.start), side="right")) - 1
        pages = f"page {first}" if first == last else f"pages {first}-{last}"
        return f"column {self.pages.index} {pages} ({self.pages.label})"


# (page encoding bytes, leaf) -> a decoder built and checked once; pages copy it (for_page).
# Also (layout class, shape_key, leaf) -> the first decoder of that shape (see shape_key).
_TEMPLATES: dict = {}
_MAX_TEMPLATES = 4096


def page_template(encoding: bytes, leaf: Leaf, rows: int, pages: ColumnPages, i: int):
    """The checked decoder of the pages whose encoding is page ``i``'s (``encoding``: its
    bytes) in a column of ``leaf``, made once; its ``for_page`` makes each page's own."""
    key = (encoding, leaf)
    template = _TEMPLATES.get(key)
    if template is not None:
        return template
    where = pages.where(i)
    name, sub, cls = LAYOUT.lookup(pages.encoding(i), where=where)
    if len(_TEMPLATES) >= _MAX_TEMPLATES:
        _TEMPLATES.clear()
    shape = cls.shape_key(sub)  # a column's pages differ in their counts only: checked once
    alike = None if shape is None else _TEMPLATES.get((cls, shape, leaf))
    if alike is not None:
        template = alike.with_message(sub, rows, where)
    else:
        template = cls(sub, leaf, rows, where)
        if shape is not None:
            _TEMPLATES[(cls, shape, leaf)] = template
    _TEMPLATES[key] = template
    return template


def _concat_parts(parts: list[PagePart], dtype: pa.DataType, num_rows: int) -> PagePart:
    if not parts:
        return PagePart(None, None, pa.array([], type=dtype), num_rows)
    if len(parts) == 1:
        return parts[0]
    rep = None
    if any(p.rep is not None for p in parts):
        rep = np.concatenate([p.rep for p in parts])
    defs = None
    if any(p.defs is not None for p in parts):
        defs = np.concatenate([p.defs if p.defs is not None else np.zeros(_entries(p), np.uint16) for p in parts])
    return PagePart(rep, defs, concat_arrays([p.values for p in parts], dtype), num_rows,
                    all(p.validated for p in parts))


def _entries(p: PagePart) -> int:
    return len(p.rep) if p.rep is not None else p.num_rows


# ------------------------------------------------------------------------------------------
# The node tree of one projected top-level field
# ------------------------------------------------------------------------------------------


@dataclass
class Node:
    dtype: pa.DataType
    leaf: int | None = None  # the column whose layers describe this node (the first leaf below)
    children: list = field(default_factory=list)
    kind: str = "leaf"  # leaf, struct, list, map, fsl (a fixed_size_list<struct>)
    select: list | None = None  # a projected packed struct: the positions of the children to keep, in order
    stride: int = 1  # level entries of ``leaf`` per slot of this node (fsl<struct> items below)


def _child_field(c: LanceField, dtype: pa.DataType) -> pa.Field:
    base = c.to_arrow()
    return pa.field(base.name, dtype, base.nullable, base.metadata)


class StructuralReader:
    """Reads one top-level field of a 2.1+ file (all its projected leaves)."""

    checks_leaves = True  # every leaf's values are validated in full as they are read

    def __init__(self, layout: FileLayout, f: LanceField, columns: dict[int, int], keep: dict | None) -> None:
        self.layout = layout
        version = layout.version
        self._grammar, self._version = version.grammar, version.name
        col = columns.get(f.id) if keep is None and is_leaf(f) and (f.children or f.logical_type != "struct") else None
        if col is not None:  # one leaf (a wide table's columns): what the general path below makes, made directly
            t = f.arrow_type
            column = LeafColumn(layout, col, _leaf(t, (ITEM,), self._grammar, self._version), f.name)
            self._leaves, self._shapes, self._mult = {col: column}, {col: [ITEM]}, {col: 1}
            self.root = Node(t, col)
            self.dtype = t
            self._inner_only = {col: False}
            self.lone = column
            return
        self._leaves: dict[int, LeafColumn] = {}
        self._shapes: dict[int, list[str]] = {}
        self._mult: dict[int, int] = {}  # level entries per row of each leaf (fsl<struct> dims above it)
        self.root = self._node(f, columns, keep, [], 1, False)
        self.dtype = self.root.dtype
        self._inner_only = self._inner_only_leaves()
        self.lone = self.lone_leaf()  # read_together asks for every chunk of a scan

    def _inner_only_leaves(self) -> dict[int, bool]:
        """Per leaf column: whether only its layers inside its innermost list are used.

        A list's offsets and a struct's validity come from the first leaf below them; the
        other leaves under the same lists only need their own inner layers (see unravel)."""
        if self.root.kind == "leaf":  # one leaf, no lists above it (a wide table's columns)
            return {col: False for col in self._leaves}
        used: dict[int, list[int]] = {col: [] for col in self._leaves}
        stack = [(self.root, 0)]  # (a recursive closure would be a reference cycle)
        while stack:
            node, k = stack.pop()
            if node.leaf is not None:
                used[node.leaf].append(k)
            stack.extend((c, k + 1) for c in node.children)
        out = {}
        for col, ks in used.items():
            shape = self._shapes[col]  # inner to outer
            if LIST not in shape:
                out[col] = False
                continue
            k_list = len(shape) - 1 - shape.index(LIST)  # the innermost list, outer-first
            out[col] = bool(ks) and min(ks) > k_list
        return out

    def _node(self, f: LanceField, columns, keep, outer: list[str], mult: int, in_list: bool) -> Node:
        node = self._make_node(f, columns, keep, outer, mult, in_list)
        if node.leaf is not None:
            node.stride = self._mult[node.leaf] // mult
        elif node.kind != "struct":  # a list's offsets come from a leaf below it
            raise CorruptFileError(f"{self.layout.path}: field {f.name!r} ({f.logical_type}) has no column below it")
        return node

    def _make_node(self, f: LanceField, columns, keep, outer: list[str], mult: int, in_list: bool) -> Node:
        t = f.arrow_type
        if f.logical_type == "struct" and not f.children:
            # an empty struct owns a column, but its pages say nothing (the reference ignores them)
            return Node(t, None, kind="struct")
        if is_leaf(f):
            col = columns.get(f.id)
            if col is None:
                raise CorruptFileError(f"{self.layout.path}: field {f.name!r} has no column")
            shape = [ITEM] + outer[::-1]  # inner to outer
            if col not in self._leaves:
                self._leaves[col] = LeafColumn(self.layout, col, _leaf(t, tuple(shape), self._grammar, self._version),
                                               f.name, mult)
                self._shapes[col] = shape
                self._mult[col] = mult
            if keep is not None and pa.types.is_struct(t):  # projected packed struct
                at = {c.id: i for i, c in enumerate(f.children)}  # (by position: names may repeat)
                kids = [f.children[at[i]] for i in keep]
                return Node(pa.struct([c.to_arrow() for c in kids]), col, select=[at[i] for i in keep])
            return Node(t, col)
        mine = outer + [_layer_kind(f)]
        lt = f.logical_type
        if lt == "struct":
            by_id = {c.id: c for c in f.children}
            kids = f.children if keep is None else [by_id[i] for i in keep]
            nodes = [self._node(c, columns, None if keep is None else keep[c.id], mine, mult, in_list) for c in kids]
            dtype = t if keep is None else pa.struct([_child_field(c, n.dtype) for c, n in zip(kids, nodes)])
            first = next((n.leaf for n in nodes if n.leaf is not None), None)  # empty structs have none
            return Node(dtype, first, nodes, "struct")
        if lt == "map":
            entries = f.children[0]
            node = self._node(entries, columns, None, mine, mult, True)
            return Node(t, node.leaf, [node], "map")
        item = f.children[0]
        if _is_fsl_of_struct(f):
            if not self._grammar.fsl_of_struct:
                raise CorruptFileError(f"{self.layout.path}: field {f.name!r}: fixed_size_list<struct> is not part "
                                       f"of the Lance {self._version} grammar")
            if in_list:
                raise UnsupportedEncodingError(f"{self.layout.path}: field {f.name!r}: a fixed_size_list<struct> "
                                               "inside a list is not supported")
            node = self._node(item, columns, None if keep is None else keep.get(item.id), mine,
                              mult * t.list_size, in_list)
            dtype = t if keep is None else pa.list_(_child_field(item, node.dtype), t.list_size)
            return Node(dtype, node.leaf, [node], "fsl")
        node = self._node(item, columns, None if keep is None else keep.get(item.id), mine, mult, True)
        make = pa.large_list if pa.types.is_large_list(t) else pa.list_
        dtype = t if keep is None else make(_child_field(item, node.dtype))
        return Node(dtype, node.leaf, [node], "list")

    def read(self, sel: Selection, cache: dict) -> pa.Array:
        return self.assemble(sel, [part() for part in self.parts(sel, cache)])

    @property
    def task_count(self) -> int:
        return len(self._leaves)

    def parts(self, sel: Selection, cache: dict) -> list:
        """One task a leaf column (decode and unravel its rows), for a reader that runs them
        on several threads; :meth:`assemble` builds the field from their results."""
        return [lambda col=col: self._read_leaf(col, sel, cache) for col in self._leaves]

    def _read_leaf(self, col: int, sel: Selection, cache: dict, part: PagePart | None = None):
        column, m = self._leaves[col], self._mult[col]
        leaf_sel = sel.scale(m) if m > 1 else sel
        if part is None:
            part = column.read(leaf_sel, cache)
        where = Where(lambda: f"{self.layout.path}: {column.pages_of(leaf_sel)}")
        if not part.validated:
            validate_values(part.values, where)
        levels = unravel(part.rep, part.defs, self._shapes[col], sel.count * m, where, self._inner_only[col])
        return col, levels, part.values

    def lone_leaf(self) -> LeafColumn | None:
        """The column of a field that is one leaf, not inside a list or struct (else None)."""
        node = self.root
        if node.kind != "leaf" or node.select is not None or node.leaf is None:
            return None
        col = node.leaf
        return self._leaves[col] if self._mult[col] == 1 and self._shapes[col] == [ITEM] else None

    def read_decoded(self, sel: Selection, part: PagePart) -> pa.Array:
        """The field from its lone leaf's rows, decoded already (see :func:`read_together`)."""
        node = self.root
        if part.defs is None and part.rep is None and node.select is None:
            # no nulls, no lists (a wide table's columns): the values are the field
            arr = part.values
            if len(arr) != sel.count:
                col = node.leaf
                raise CorruptFileError(f"{self.layout.path}: column {col} gives {len(arr)} values for {sel.count} "
                                       f"slots (rows {sel.start}-{sel.stop - 1}; {self._leaves[col].pages_of(sel)})")
            if not part.validated:
                validate_values(arr, Where(lambda: f"{self.layout.path}: {self._leaves[node.leaf].pages_of(sel)}"))
            return arr
        return self.assemble(sel, [self._read_leaf(node.leaf, sel, {}, part)])

    def assemble(self, sel: Selection, results: list) -> pa.Array:
        unraveled = {col: u for col, u, _ in results}
        values = {col: v for col, _, v in results}
        try:
            return self._build(self.root, 0, unraveled, values, sel.count)
        except CorruptFileError as exc:
            if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
                raise  # leaves that disagree: name the rows and the pages read
            pages = ", ".join(col.pages_of(sel) for col in self._leaves.values())
            raise CorruptFileError(f"{exc} (rows {sel.start}-{sel.stop - 1}; {pages})") from None

    def _build(self, node: Node, k: int, unraveled, values, n: int) -> pa.Array:
        if node.leaf is None:  # a struct without leaves below it (empty structs): all valid
            kids = [self._build(c, k + 1, unraveled, values, n) for c in node.children]
            return safe_array(node.dtype, n, [None], children=kids)
        layer = unraveled[node.leaf].layers[k]
        valid = layer.valid if node.stride == 1 or layer.valid is None else layer.valid[:: node.stride]
        if node.kind == "leaf":
            arr = values[node.leaf]
            if len(arr) != n or unraveled[node.leaf].num_values != n * node.stride:
                raise CorruptFileError(f"{self.layout.path}: column {node.leaf} gives {len(arr)} values for {n} slots")
            arr = with_validity(arr, valid)
            if node.select is not None:
                fields = [node.dtype.field(i) for i in range(node.dtype.num_fields)]
                mask = None if valid is None else pa.array(~valid)
                return pa.StructArray.from_arrays([arr.field(i) for i in node.select], fields=fields, mask=mask)
            return arr
        if node.kind == "struct":
            kids = [self._build(c, k + 1, unraveled, values, n) for c in node.children]
            fields = [node.dtype.field(i) for i in range(node.dtype.num_fields)]
            mask = None if valid is None else pa.array(~valid)
            return pa.StructArray.from_arrays(kids, fields=fields, mask=mask)
        if node.kind == "fsl":
            dim = node.dtype.list_size
            child = self._build(node.children[0], k + 1, unraveled, values, n * dim)
            return fixed_size_lists(child, node.dtype, n, valid)
        offsets = layer.offsets
        child = self._build(node.children[0], k + 1, unraveled, values, int(offsets[-1]))
        large = pa.types.is_large_list(node.dtype)
        off = pa.py_buffer(offsets.astype(np.int64 if large else np.int32))
        bitmap = _bitmap(valid)
        if node.kind == "map" and (child.null_count or child.field(0).null_count):
            # Arrow aborts the process on a map built with null entries or keys
            raise CorruptFileError(f"{self.layout.path}: column {node.leaf}: a map holds a null entry or key")
        return safe_array(node.dtype, n, [bitmap, off], children=[child])


def _bitmap(valid: np.ndarray | None, offset: int = 0) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    if offset:
        valid = np.concatenate([np.ones(offset, dtype=bool), valid])
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def with_validity(arr: pa.Array, valid: np.ndarray | None) -> pa.Array:
    """``arr`` (no nulls of its own at the top) with nulls where ``valid`` is False."""
    if valid is None or valid.all() or pa.types.is_null(arr.type):
        return arr
    t = arr.type
    if pa.types.is_dictionary(t):
        return pa.DictionaryArray.from_arrays(with_validity(arr.indices, valid), arr.dictionary)
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(arr.flatten(), fields=fields, mask=pa.array(~valid))
    if pa.types.is_fixed_size_list(t):
        d = t.list_size
        return fixed_size_lists(arr.values.slice(arr.offset * d, len(arr) * d), t, len(arr), valid)
    return safe_array(t, len(arr), [_bitmap(valid, arr.offset)] + arr.buffers()[1:], offset=arr.offset)


def build_reader(layout: FileLayout, f: LanceField, columns: dict[int, int], keep: dict | None = None):
    """The reader of top-level field ``f`` (``keep``: a projection keep-tree)."""
    if layout.version.grammar is None:
        raise UnsupportedEncodingError(f"{layout.path}: version {layout.version.name} has no structural layout")
    return StructuralReader(layout, f, columns, keep)


def read_together(readers: list, sel: Selection, cache: dict) -> dict:
    """``{i: readers[i].read(sel, cache)}`` for the readers that are read best together.

    Fields that are one leaf each (a wide table's columns) whose rows lie
    in one page each, with the same leaf type and page encoding (``column_key``), are
    decoded in one pass (``read_columns`` of their layout) instead of one a column. The
    caller reads the other readers itself.
    """
    out: dict = {}
    if len(readers) < 2:
        return out
    groups: dict = {}
    # columns paged alike (a wide table's) share their page-local selection: made once
    local_of: dict = {}
    for i, r in enumerate(readers):
        column = r.lone if isinstance(r, StructuralReader) else None
        if column is None:
            continue
        pages = column.pages
        p = pages.lone_page(sel)
        if p < 0:
            continue
        bounds = pages.bounds
        at = bounds[p]
        local = local_of.get(at)
        if local is None:
            local = local_of[at] = sel.shift(-at) if at else sel
        if p:  # a forward scan has passed the column's earlier pages (see ColumnPages.split)
            pages._evict_before(p, cache)
        dec = column.decoder(p)
        key = getattr(dec, "column_key", None)
        if key is not None:
            groups.setdefault((key, column.leaf), []).append((i, dec, pages.page(p, cache), local))
    for members in groups.values():
        if len(members) < 2:
            continue
        parts = type(members[0][1]).read_columns([(dec, page, local) for _, dec, page, local in members])
        for (i, _, _, _), part in zip(members, parts):
            out[i] = readers[i].read_decoded(sel, part)
    return out
