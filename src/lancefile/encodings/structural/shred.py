"""Arrow arrays to repetition/definition levels: the write side of :mod:`.repdef`.

:func:`shred` walks one top-level field and its Arrow array and gives, for every leaf
column below it (in column order), a :class:`Shredded`: the page's rep/def levels, its
layers (inner to outer, as the page stores them) and the *visible* leaf values (one per
level entry that is not under a null or empty list; entries that are null at an item
layer keep a slot, holding a null).

Levels are numbered as :mod:`.repdef` describes, from the page's own layers: a layer that
has no null (or no empty list) in this page takes no level, as the reference writes.

Example, ``list<int32>`` rows ``[1, 2], [], None, [3]``::

    >>> import pyarrow as pa
    >>> from lancefile.format.schema import LanceSchema
    >>> f = LanceSchema.from_arrow(pa.schema([("l", pa.list_(pa.int32()))])).fields[0]
    >>> s, = shred(f, pa.array([[1, 2], [], None, [3]], pa.list_(pa.int32())))
    >>> s.rep.tolist(), s.defs.tolist(), s.values.to_pylist(), [Layer(x).name for x in s.layers]
    ([1, 0, 1, 1, 1], [0, 0, 2, 1, 0], [1, 2, 3], ['ALL_VALID_ITEM', 'NULL_AND_EMPTY_LIST'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...errors import UnsupportedTypeError
from ...format.schema import LanceField
from .. import kernels
from ..arrowutil import fixed_size_lists, null_mask
from .fields import _is_fsl_of_struct, is_leaf
from .repdef import Layer

__all__ = ["Shredded", "shred", "MAX_LEVEL"]

# Levels are stored as u16.
MAX_LEVEL = 0xFFFF
_NULL, _EMPTY = 1, 2


@dataclass
class Shredded:
    """One leaf column's part of a page."""

    rep: np.ndarray | None  # uint16 per level entry, None without lists
    defs: np.ndarray | None  # uint16 per level entry, None when everything is valid
    values: pa.Array  # the visible values (nulls where an item layer is null)
    layers: list[int]  # Layer values, inner (the leaf) to outer
    num_rows: int  # top-level rows (Page.length)

    @property
    def num_levels(self) -> int:
        if self.rep is not None:
            return len(self.rep)
        if self.defs is not None:
            return len(self.defs)
        return len(self.values)

    @property
    def max_rep(self) -> int:
        return sum(1 for x in self.layers if x in _LIST_LAYERS)

    def visible_mask(self) -> np.ndarray | None:
        """Which level entries hold a value (None: all of them)."""
        if self.defs is None or self.rep is None:
            return None
        return self.defs <= max_visible_level(self.layers)


_LIST_LAYERS = {Layer.ALL_VALID_LIST, Layer.NULLABLE_LIST, Layer.EMPTYABLE_LIST, Layer.NULL_AND_EMPTY_LIST}


def max_visible_level(layers: list[int]) -> int:
    """Def levels up to this hold a value: the levels of the layers below the first list."""
    total = 0
    for layer in layers:
        if layer in _LIST_LAYERS:
            return total
        total += _levels_of(layer)
    return MAX_LEVEL


def _levels_of(layer: int) -> int:
    return {Layer.NULLABLE_ITEM: 1, Layer.NULLABLE_LIST: 1, Layer.EMPTYABLE_LIST: 1,
            Layer.NULL_AND_EMPTY_LIST: 2}.get(Layer(layer), 0)


@dataclass
class _State:
    """Level entries on the way down: where each one is in the current array."""

    pos: np.ndarray | None  # int64 index into the current array, -1 when under a null/empty list; None = identity
    marker: np.ndarray | None  # list depth (from the outside) this entry starts a list at; None without lists
    dead: np.ndarray | None  # int16 index of the outer layer where the entry became null/empty, -1 if alive
    kind: np.ndarray | None  # int8 _NULL / _EMPTY at that layer
    n: int  # number of entries
    lists: int  # list layers passed


@dataclass
class _OuterLayer:
    is_list: bool
    has_null: bool = False
    has_empty: bool = False


def _alive(st: _State) -> np.ndarray | None:
    return None if st.dead is None else st.dead < 0


def _pushed_nulls(st: _State, outer: list[_OuterLayer]) -> bool:
    """Whether some entry is null at an outer item layer below the innermost list: the
    reference pushes struct nulls down into the children, so the inner layers of such an
    entry are nullable too (down to the next list layer, which takes them)."""
    if st.dead is None:
        return False
    # only item layers since the innermost list: a null list's items are not entries
    lists = [i for i, lay in enumerate(outer) if lay.is_list]
    first = lists[-1] + 1 if lists else 0
    pick = (st.dead >= first) & (st.kind == _NULL)
    return bool(pick.any())


def _kill(st: _State, where: np.ndarray, layer: int, kind: int) -> None:
    """Mark entries ``where`` (bool over entries, all alive) as null/empty at ``layer``."""
    if st.dead is None:
        st.dead = np.full(st.n, -1, np.int16)
        st.kind = np.zeros(st.n, np.int8)
    st.dead[where] = layer
    st.kind[where] = kind


def _item_layer(st: _State, arr: pa.Array, outer: list[_OuterLayer]) -> None:
    """A validity layer (a struct, an fsl<struct> row, a map's entries)."""
    layer = _OuterLayer(False, has_null=_pushed_nulls(st, outer))
    outer.append(layer)
    _null_entries(st, null_mask(arr), layer, len(outer) - 1)


def _null_entries(st: _State, mask: np.ndarray | None, layer: _OuterLayer, index: int) -> None:
    """Mark the live entries whose value is null in ``mask`` (over the current array) as
    null at validity layer ``index``."""
    if mask is None or not mask.any():
        return
    nulls = mask if st.pos is None else np.where(st.pos >= 0, mask[np.maximum(st.pos, 0)], False)
    alive = _alive(st)
    if alive is not None:
        nulls &= alive
    if nulls.any():
        layer.has_null = True
        _kill(st, nulls, index, _NULL)


def _list_layer(st: _State, arr: pa.Array, outer: list[_OuterLayer]) -> _State:
    layer = _OuterLayer(True, has_null=_pushed_nulls(st, outer))
    outer.append(layer)
    idx = len(outer) - 1
    offsets = np.asarray(arr.offsets).astype(np.int64, copy=False)
    mask = null_mask(arr)
    pos = np.arange(st.n, dtype=np.int64) if st.pos is None else st.pos
    safe = np.clip(pos, 0, max(len(arr) - 1, 0))
    counts = offsets[safe + 1] - offsets[safe] if len(arr) else np.zeros(st.n, np.int64)
    live = pos >= 0
    alive = _alive(st)
    if alive is not None:
        live &= alive
    nulls = live & mask[safe] if mask is not None else np.zeros(st.n, bool)
    empties = live & ~nulls & (counts == 0)
    if nulls.any():
        layer.has_null = True
        _kill(st, nulls, idx, _NULL)
    if empties.any():
        layer.has_empty = True
        _kill(st, empties, idx, _EMPTY)
    expand = live & ~nulls & (counts > 0)
    marker = np.zeros(st.n, np.int16) if st.marker is None else st.marker
    new_pos, new_marker, dead, kind = kernels.expand_list(expand, offsets[safe], counts, marker, st.dead, st.kind,
                                                          st.lists + 1)
    return _State(new_pos, new_marker, dead, kind, len(new_pos), st.lists + 1)


def shred(field: LanceField, arr: pa.Array) -> list[Shredded]:
    """The leaf columns of ``field`` for the rows of ``arr``, in column order."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    out: list[Shredded] = []
    st = _State(None, None, None, None, len(arr), 0)
    _walk(field, arr, st, [], len(arr), out)
    return out


def _walk(f: LanceField, arr: pa.Array, st: _State, outer: list[_OuterLayer], rows: int, out: list) -> None:
    if is_leaf(f):
        out.append(_leaf(arr, st, outer, rows))
        return
    lt = f.logical_type
    if lt == "struct":
        outer = outer + []
        st = _copy(st)
        _item_layer(st, arr, outer)
        for i, child in enumerate(f.children):
            _walk(child, arr.field(i), _copy(st), list(outer), rows, out)
        return
    if _is_fsl_of_struct(f):
        # 2.2: a validity layer for the list itself, then one entry per item (pages count items)
        if st.lists:
            raise UnsupportedTypeError(f"field {f.name!r}: a fixed_size_list<struct> inside a list cannot be written")
        d = arr.type.list_size
        outer = list(outer)
        st = _copy(st)
        _item_layer(st, arr, outer)
        pos = np.arange(st.n, dtype=np.int64) if st.pos is None else st.pos
        new = _State(np.repeat(pos * d, d) + np.tile(np.arange(d, dtype=np.int64), st.n), None, None, None,
                     st.n * d, 0)
        if st.dead is not None:
            new.dead, new.kind = np.repeat(st.dead, d), np.repeat(st.kind, d)
        items = arr.values.slice(arr.offset * d, len(arr) * d)
        _walk(f.children[0], items, new, outer, rows * d, out)
        return
    outer = list(outer)
    new = _list_layer(_copy(st), arr, outer)
    if lt == "map":
        entries = arr.values  # struct<key, value>
        _walk(f.children[0], entries, new, outer, rows, out)
        return
    _walk(f.children[0], arr.values, new, outer, rows, out)


def _copy(st: _State) -> _State:
    return _State(st.pos, st.marker, None if st.dead is None else st.dead.copy(),
                  None if st.kind is None else st.kind.copy(), st.n, st.lists)


_VIEWS = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


def _leaf(arr: pa.Array, st: _State, outer: list[_OuterLayer], rows: int) -> Shredded:
    st = _copy(st)
    if arr.type in _VIEWS:  # stored as the plain type, as the reference does
        arr = arr.cast(_VIEWS[arr.type])
    leaf_layer = _OuterLayer(False, has_null=_pushed_nulls(st, outer))
    layers_outer = outer + [leaf_layer]
    _null_entries(st, _logical_nulls(arr), leaf_layer, len(layers_outer) - 1)
    # page layers, inner to outer. An item layer (a struct) with a list inside it is nullable in
    # every page, nulls or not: pylance 14.0.2 fails on a column whose pages differ there ("Incorrect
    # number of nulls for StructArray"), its own files too (a few bytes of def levels a page)
    kinds = []
    for i in reversed(range(len(layers_outer))):
        lay = layers_outer[i]
        if lay.is_list:
            kinds.append(Layer.NULL_AND_EMPTY_LIST if lay.has_null and lay.has_empty else
                         Layer.NULLABLE_LIST if lay.has_null else
                         Layer.EMPTYABLE_LIST if lay.has_empty else Layer.ALL_VALID_LIST)
        else:
            above_a_list = any(inner.is_list for inner in layers_outer[i + 1:])
            kinds.append(Layer.NULLABLE_ITEM if lay.has_null or above_a_list else Layer.ALL_VALID_ITEM)
    rep = None
    if st.lists:
        rep = (st.lists - st.marker).astype(np.uint16)
    if st.dead is None:
        defs = None  # (a layer nullable all the same gets levels of 0 when the page is encoded)
        if st.pos is None:  # no lists, no nulls: the leaf's values as they are
            return Shredded(rep, defs, arr, [int(k) for k in kinds], rows)
        idx = st.pos[st.pos >= 0]
        null_here = None
    else:
        # def level of an entry null (empty) at outer layer j: the levels of the layers inside
        # j, plus 1 (plus 2 for an empty NULL_AND_EMPTY list)
        n_outer = len(layers_outer)
        base = np.zeros(n_outer, np.int64)  # indexed inner to outer
        level = 0
        for i, k in enumerate(kinds):
            base[i] = level
            level += _levels_of(k)
        if level > MAX_LEVEL:
            raise UnsupportedTypeError(f"{level} definition levels do not fit in 16 bits")
        outer_base = base[::-1]
        outer_kinds = kinds[::-1]
        null_def = outer_base + 1
        empty_def = outer_base + np.array([2 if k is Layer.NULL_AND_EMPTY_LIST else 1 for k in outer_kinds])
        is_list = np.array([lay.is_list for lay in layers_outer])
        pos = np.arange(st.n, dtype=np.int64) if st.pos is None else st.pos
        defs, idx, null_here = kernels.leaf_levels(st.dead, st.kind, pos, null_def, empty_def, is_list)
        if st.pos is None and not null_here.any():
            return Shredded(rep, defs, arr, [int(k) for k in kinds], rows)
    if null_here is not None and not null_here.any():
        null_here = None
    if null_here is None and len(idx) == len(arr) and _is_identity(idx):
        values = arr
    else:
        values = _take_nulled(arr, idx, null_here)
    return Shredded(rep, defs, values, [int(k) for k in kinds], rows)


def _take_nulled(arr: pa.Array, idx: np.ndarray, nulls: np.ndarray | None) -> pa.Array:
    """``arr`` at ``idx``, null where ``nulls``. A fixed_size_list or struct gets the nulls on
    itself only: a null *index* in Arrow's take would also make the children null, which a
    non-nullable child field cannot be (and the reference refuses)."""
    t = arr.type
    if pa.types.is_fixed_size_list(t) and arr.offset:
        # pyarrow's take on a sliced nested fixed_size_list returns wrong items (seen with
        # pyarrow 26: fsl<fsl<int8>[1]>[4]); a copy without the offset takes correctly
        arr = pa.concat_arrays([arr])
    if nulls is None or not (pa.types.is_fixed_size_list(t) or pa.types.is_struct(t)):
        return arr.take(pa.array(idx, pa.int64(), mask=nulls))
    taken = arr.take(pa.array(idx, pa.int64()))
    own = null_mask(taken)
    mask = pa.array(nulls if own is None else (nulls | own))
    if pa.types.is_fixed_size_list(t):
        d = t.list_size
        items = taken.values.slice(taken.offset * d, len(taken) * d)
        return fixed_size_lists(items, t, len(taken), ~mask.to_numpy(zero_copy_only=False))
    children = [taken.field(i) for i in range(t.num_fields)]
    return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)


def _logical_nulls(arr: pa.Array) -> np.ndarray | None:
    """Null mask of a leaf; a dictionary array's null dictionary values count as nulls."""
    mask = null_mask(arr)
    if pa.types.is_dictionary(arr.type) and arr.dictionary.null_count:
        dict_nulls = null_mask(arr.dictionary)
        idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        extra = dict_nulls[idx] if len(idx) else np.zeros(0, bool)
        mask = extra if mask is None else (mask | extra)
    return mask


def _is_identity(idx: np.ndarray) -> bool:
    return len(idx) == 0 or (idx[0] == 0 and bool(np.all(np.diff(idx) == 1)))
