"""Repetition and definition levels: how 2.1+ pages store nulls and nesting.

Each leaf column carries, per *level entry*, a repetition level (where a new list starts)
and a definition level (how far down the nesting the entry is valid). The page lists its
layers **inner to outer** (``layers[0]`` is the leaf itself): item layers (the leaf, each
struct) and list layers (list, large_list, map).

*Definition levels* count from the leaf outwards: 0 is fully valid; a nullable item layer
takes one level (null), a list layer one or two (null = base+1, empty = base+2 for
``NULL_AND_EMPTY_LIST``; ``EMPTYABLE_LIST`` has only empty, ``NULLABLE_LIST`` only null).
*Repetition levels*: an entry that starts a row has ``max_rep`` (the number of list
layers), one that starts a new list ``d`` lists from the inside has ``d``, a continuation 0.
Entries under a null or empty list hold no value (*invisible*); all others do.

``list<int32>`` rows ``[1, 2], [], None, [3]`` with layers ``[ALL_VALID_ITEM,
NULL_AND_EMPTY_LIST]``::

    entry   rep  def  value
    1       1    0    1
    2       0    0    2
    []      1    2    -
    None    1    1    -
    3       1    0    3

Pages of one column may describe the same layers differently (one page all valid, the
next with nulls), so levels are first mapped to a *canonical* numbering (every item layer
one level, every list layer two), then :func:`unravel` turns them into Arrow offsets and
validity, outer layer first.

Example::

    >>> import numpy as np
    >>> layers = [Layer.ALL_VALID_ITEM, Layer.NULL_AND_EMPTY_LIST]
    >>> shape = [ITEM, LIST]
    >>> defs = canonical_defs(np.array([0, 0, 2, 1, 0], np.uint16), layers, shape, "p")
    >>> out = unravel(np.array([1, 0, 1, 1, 1], np.uint16), defs, shape, 4, "p")
    >>> out.layers[0].offsets.tolist(), out.layers[0].valid.tolist(), out.num_values
    ([0, 2, 2, 2, 3], [True, True, False, True], 3)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ...errors import CorruptFileError
from .. import kernels

__all__ = ["Layer", "ITEM", "LIST", "canonical_defs", "row_start_mismatch", "canonical_base", "unravel", "Unraveled", "LayerLevels",
           "is_list_layer", "max_visible_def", "page_max_visible", "def_mapping", "map_defs"]


class Layer(enum.IntEnum):
    """``lance.encodings21.RepDefLayer``."""

    UNSPECIFIED = 0
    ALL_VALID_ITEM = 1
    ALL_VALID_LIST = 2
    NULLABLE_ITEM = 3
    NULLABLE_LIST = 4
    EMPTYABLE_LIST = 5
    NULL_AND_EMPTY_LIST = 6


ITEM, LIST = "item", "list"
_LIST_LAYERS = {Layer.ALL_VALID_LIST, Layer.NULLABLE_LIST, Layer.EMPTYABLE_LIST, Layer.NULL_AND_EMPTY_LIST}
_ITEM_LAYERS = {Layer.ALL_VALID_ITEM, Layer.NULLABLE_ITEM}
# levels a layer takes in a page: (null level, empty level) offsets above the layer's base
_PAGE_LEVELS = {
    Layer.ALL_VALID_ITEM: (), Layer.NULLABLE_ITEM: ("null",),
    Layer.ALL_VALID_LIST: (), Layer.NULLABLE_LIST: ("null",), Layer.EMPTYABLE_LIST: ("empty",),
    Layer.NULL_AND_EMPTY_LIST: ("null", "empty"),
}
_CANONICAL = {ITEM: ("null",), LIST: ("null", "empty")}


def is_list_layer(layer: int) -> bool:
    return layer in _LIST_LAYERS


def canonical_base(shape: list[str]) -> list[int]:
    """The canonical def level just below each layer (inner to outer)."""
    out, level = [], 0
    for kind in shape:
        out.append(level)
        level += len(_CANONICAL[kind])
    return out


def max_visible_def(shape: list[str]) -> int:
    """Canonical defs up to this hold a value: the base of the innermost list layer."""
    bases = canonical_base(shape)
    for kind, base in zip(shape, bases):
        if kind == LIST:
            return base
    return bases[-1] + len(_CANONICAL[shape[-1]]) if shape else 0


def page_max_visible(layers: list[int]) -> int:
    """Page def levels up to this hold a value (levels of the layers below the first list)."""
    total = 0
    for layer in layers:
        if layer in _LIST_LAYERS:
            break
        total += len(_PAGE_LEVELS.get(Layer(layer), ()))
    else:
        return 1 << 16
    return total


def _lut(layers: list[int], shape: list[str], where: str) -> np.ndarray:
    """page def level -> canonical def level."""
    if len(layers) != len(shape):
        raise CorruptFileError(f"{where}: the page has {len(layers)} rep/def layers, the field needs {len(shape)}")
    lut = [0]
    for layer, kind, base in zip(layers, shape, canonical_base(shape)):
        try:
            layer = Layer(layer)
        except ValueError:
            raise CorruptFileError(f"{where}: unknown rep/def layer {layer}") from None
        if (kind == LIST) != (layer in _LIST_LAYERS) or layer is Layer.UNSPECIFIED:
            raise CorruptFileError(f"{where}: rep/def layer {layer.name} where the schema has a {kind}")
        for meaning in _PAGE_LEVELS[layer]:
            lut.append(base + 1 + _CANONICAL[kind].index(meaning))
    return np.array(lut, dtype=np.uint16)


def def_mapping(layers: list[int], shape: list[str], where: str) -> np.ndarray:
    """Check a page's layers against the field's shape; the page-def -> canonical-def table."""
    return _lut(layers, shape, where)


def map_defs(defs: np.ndarray | None, lut: np.ndarray, where: str) -> np.ndarray | None:
    """Page def levels -> canonical ones through :func:`def_mapping`'s table (None: no nulls)."""
    if defs is None:
        return None
    if len(lut) == 1:
        if len(defs) and defs.max() != 0:
            raise CorruptFileError(f"{where}: definition level {int(defs.max())} in a page without nulls")
        return None
    if np.array_equal(lut, np.arange(len(lut))):
        top = int(defs.max()) if len(defs) else 0
        if top >= len(lut):
            raise CorruptFileError(f"{where}: definition level {top} is above the page's {len(lut) - 1}")
        return defs
    try:
        return kernels.map_levels(defs, lut)  # checks every level against the table as it maps
    except ValueError as exc:
        raise CorruptFileError(f"{where}: {exc}") from None


def row_start_mismatch(rep: np.ndarray, max_rep: int, entries: np.ndarray, completed: np.ndarray,
                       partial: np.ndarray) -> int:
    """The first of chunks decoded back to back (``entries`` level entries each) whose levels
    end another number of rows than its repetition index entry says (``completed``; a chunk
    with ``partial`` > 0 ends inside a row), or -1. The rows a chunk's levels end: its row
    starts, but the last when it ends inside a row, and the row it opens inside. A damaged
    level that moves, adds or drops a row start is caught here: without it, the rows after
    the chunk would be numbered off by one, silently.

    Example: rows ``[a, b] [c | d]`` cut into chunks of 3 and 1 entries::

        >>> row_start_mismatch(np.array([1, 0, 1, 0]), 1, np.array([3, 1]), np.array([1, 1]), np.array([1, 0]))
        -1
        >>> row_start_mismatch(np.array([1, 1, 1, 0]), 1, np.array([3, 1]), np.array([1, 1]), np.array([1, 0]))
        0
    """
    cuts = np.zeros(len(entries) + 1, np.int64)
    np.cumsum(entries, out=cuts[1:])
    is_start = np.asarray(rep) == max_rep
    seen = np.zeros(len(is_start) + 1, np.int64)
    np.cumsum(is_start, out=seen[1:])
    ends = seen[cuts[1:]] - seen[cuts[:-1]]
    filled = np.flatnonzero(np.asarray(entries) > 0)
    ends[filled] += ~is_start[cuts[filled]]
    bad = np.flatnonzero(ends - (np.asarray(partial) > 0) != completed)
    return int(bad[0]) if len(bad) else -1


def canonical_defs(defs: np.ndarray | None, layers: list[int], shape: list[str], where: str) -> np.ndarray | None:
    """Map a page's def levels to the canonical numbering of ``shape`` (checks the layers)."""
    return map_defs(defs, _lut(layers, shape, where), where)


@dataclass
class LayerLevels:
    """One layer, over its slots: validity (None: all valid) and, for lists, offsets."""

    kind: str
    valid: np.ndarray | None
    offsets: np.ndarray | None = None  # int64, slots + 1 (lists only)


@dataclass
class Unraveled:
    layers: list[LayerLevels]  # outer to inner
    num_values: int  # slots of the leaf layer = values the page holds for these rows


def unravel(rep: np.ndarray | None, defs: np.ndarray | None, shape: list[str], num_rows: int,
            where: str, inner_only: bool = False) -> Unraveled:
    """Offsets and validity of every layer (outer first) from canonical levels.

    ``rep``/``defs`` cover exactly ``num_rows`` rows; None means all zero (no lists / no
    nulls). A list layer's children start at entries with ``rep >= depth - 1`` that are
    defined through the list; offsets count them per list.

    ``inner_only``: only the item layers inside the innermost list are wanted (a leaf whose
    lists and outer structs are built from a sibling's levels). Their slots are the entries
    defined through the innermost list, found in one vectorised pass; the outer layers are
    returned as None.
    """
    if rep is None and len(shape) == 1 and shape[0] == ITEM:  # a flat leaf (a wide table's columns): one item layer
        n = len(defs) if defs is not None else num_rows
        if n != num_rows:
            raise CorruptFileError(f"{where}: {n} level entries for {num_rows} rows")
        valid = None if defs is None or not n or defs.max() <= 0 else defs <= 0
        return Unraveled([LayerLevels(ITEM, valid)], n)
    bases = canonical_base(shape)
    max_rep = sum(kind == LIST for kind in shape)
    if max_rep and rep is None:
        raise CorruptFileError(f"{where}: a page of a list field has no repetition levels")
    n = len(rep) if rep is not None else (len(defs) if defs is not None else num_rows)
    if defs is not None and len(defs) != n:
        raise CorruptFileError(f"{where}: {len(defs)} definition levels but {n} repetition levels")
    if rep is None:
        if n != num_rows:
            raise CorruptFileError(f"{where}: {n} level entries for {num_rows} rows")
        pos = None  # every entry is a row: positions are 0..n-1
    else:
        if n and rep.max() > max_rep:
            raise CorruptFileError(f"{where}: repetition level {int(rep.max())} above the field's {max_rep}")
        starts = rep == max_rep
        if inner_only:
            rows = int(np.count_nonzero(starts))
            if rows != num_rows or (n and not starts[0]):
                raise CorruptFileError(f"{where}: repetition levels start {rows} rows, {num_rows} expected")
            pos = None
        else:
            pos = np.flatnonzero(starts)
            if len(pos) != num_rows or (n and pos[0] != 0):
                raise CorruptFileError(f"{where}: repetition levels start {len(pos)} rows, {num_rows} expected")
    out: list[LayerLevels | None] = []
    depth = max_rep
    first = len(shape) - 1
    if inner_only and max_rep:
        # the innermost list's children: entries defined through it (rep >= 0 always holds),
        # and the item layers inside it, in one compiled pass
        first = shape.index(LIST) - 1
        outer: list[LayerLevels | None] = [None] * (len(shape) - 1 - first)
        if defs is None:
            return Unraveled(outer + [LayerLevels(ITEM, None) for _ in range(first + 1)], n)
        m, valids = kernels.inner_validity(defs, bases[first + 1], [bases[k] for k in range(first, -1, -1)])
        return Unraveled(outer + [LayerLevels(ITEM, v) for v in valids], m)
    at = d = None  # the defs at ``pos`` (gathered once for the layers that share them)
    inside = None  # set under the innermost list: its slots are the entries with defs up to this
    for k in range(first, -1, -1):
        base = bases[k]
        if shape[k] == ITEM and (defs is None or (inside is not None and not kernels.any_between(defs, base, inside))):
            out.append(LayerLevels(ITEM, None))  # no slot is null here: nothing gathered
            continue
        if defs is not None and (d is None or at is not pos):
            at, d = pos, (defs if pos is None else defs[pos])
        if shape[k] == ITEM:
            valid = None if d is None or not len(d) or d.max() <= base else d <= base
            out.append(LayerLevels(ITEM, valid))
            continue
        # a list: valid unless null here or above (an empty list, base + 2, is valid)
        valid = None if d is None or not len(d) or d.max() <= base else (d <= base) | (d == base + 2)
        # children start at entries with rep >= depth - 1 defined through the list; a list's
        # offset = children that start before the list's own first entry
        children, offsets = kernels.list_layer(rep, defs, depth, base, pos)
        out.append(LayerLevels(LIST, valid, offsets))
        pos = children
        if depth == 1:  # every entry continues the innermost lists: its children are the defined ones
            inside = base
        depth -= 1
    return Unraveled(out, n if pos is None else len(pos))
