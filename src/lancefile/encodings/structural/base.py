"""What every 2.1+ page layout decoder shares: the leaf description and what a page gives.

A page layout (mini-block, full-zip, constant, blob) decodes the rows a read asks for
into a :class:`PagePart`: the rows' repetition and (canonical) definition levels, and
the values of their visible entries as an Arrow array of the leaf's type. The field layer
(:mod:`.fields`) concatenates parts across pages and builds the nested Arrow array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from ...format.version import Grammar
from .. import kernels
from ..arrowutil import range_indices
from ..compressive.values import Values, to_arrow
from .repdef import LIST, max_visible_def

__all__ = ["Leaf", "PagePart", "EntrySpans", "PageLayoutBase", "select_part", "values_to_arrow", "pages_where",
           "relocated", "Where"]


@dataclass(frozen=True)
class Leaf:
    """One leaf column as the decoders need to know it."""

    dtype: pa.DataType  # the Arrow type of the leaf's values (storage type)
    shape: tuple  # layer kinds, inner to outer (repdef.ITEM / repdef.LIST)
    grammar: Grammar
    version: str  # "2.1", "2.2": for messages

    max_rep: int = 0  # list layers (derived from ``shape``)
    max_visible: int = 0  # canonical def levels up to this hold a value (derived from ``shape``)

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_rep", sum(kind == LIST for kind in self.shape))
        object.__setattr__(self, "max_visible", max_visible_def(list(self.shape)))
        # hashed once: a leaf keys the decoder templates, looked up for every page a read
        # touches, and hashing a nested Arrow type and the grammar cost ~1.5 us each time
        object.__setattr__(self, "_hash", hash((self.dtype, self.shape, self.grammar, self.version)))

    def __hash__(self) -> int:
        return self._hash


class PageLayoutBase:
    """What page-layout decoders share: built (and checked) once per distinct encoding.

    Pages whose encodings are byte-identical (a wide table's columns, a column's pages)
    share one parsed and checked decoder: :meth:`for_page` copies it with the page's own
    row count, message prefix and empty per-page state (see :meth:`_reset`).
    """

    rows: int
    where: str
    batches_ranges = True  # take_pages (where a layout has one) also reads ranges over several pages

    def for_page(self, rows: int, where: str):
        new = object.__new__(type(self))  # a shallow copy, without copy.copy's generic protocol
        new.__dict__.update(self.__dict__)
        new.rows, new.where = rows, where
        new._reset()
        return new

    def _reset(self) -> None:
        """Forget per-page state (chunk metadata, decoded levels...)."""

    @staticmethod
    def shape_key(msg) -> bytes | None:
        """What of an encoding message its checks depend on (None: all of it). Pages whose
        messages differ only in counts (a column's pages) then share one checked decoder,
        each with its own message (:meth:`with_message`)."""
        return None

    def with_message(self, msg, rows: int, where: str):
        """A copy for a page whose message has this one's :meth:`shape_key`."""
        new = self.for_page(rows, where)
        new.msg = msg
        return new


def message_key(msg, *cleared: str) -> bytes:
    """``msg`` serialized without the fields ``cleared``: what pages whose encodings differ
    only in those fields (their counts, say) have in common."""
    key = type(msg)()
    key.CopyFrom(msg)
    for name in cleared:
        key.ClearField(name)
    return key.SerializeToString(deterministic=True)


@dataclass
class PagePart:
    """Decoded rows of one page: levels per entry and values per visible entry."""

    rep: np.ndarray | None  # uint16 or None (no lists)
    defs: np.ndarray | None  # canonical def levels, or None (no nulls)
    values: pa.Array  # visible entries' values (garbage under nulls)
    num_rows: int
    validated: bool = False  # values already checked in full (e.g. gathered from a checked dictionary)


@dataclass
class EntrySpans:
    """Where the wanted rows' level entries are in a decoded run: ``[start, start+length)``."""

    starts: np.ndarray  # int64
    lengths: np.ndarray  # int64

    @property
    def contiguous(self) -> bool:
        s, n = self.starts, self.lengths
        return len(s) <= 1 or bool(np.all(s[1:] == s[:-1] + n[:-1]))

    def indices(self) -> np.ndarray:
        return range_indices(self.starts, self.lengths)


class Where:
    """A message prefix (``where`` of the checks) made only when a message needs it.

    Naming the pages of a read costs searches and formatting; a wide table's scan would pay
    that for every column of every chunk, for messages it never prints. Format it (as the
    checks do: ``f"{where}: ..."``) or ``str`` it to get the text.

    Example::

        >>> w = Where(lambda: "f.lance: column 3 pages 1-2")
        >>> f"{w}: bad level"
        'f.lance: column 3 pages 1-2: bad level'
    """

    __slots__ = ("_make", "_text")

    def __init__(self, make) -> None:
        self._make, self._text = make, None

    def __str__(self) -> str:
        if self._text is None:
            self._text = self._make()
        return self._text

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def pages_where(first, last) -> str:
    """``path: column 3 pages 2-5 (field 'x')``: where a read of several pages of one column is
    (``first``/``last``: their :class:`~lancefile.encodings.page.PageData`)."""
    head = f"{first.layout.path}: column {first.column.index} page {first.page_index}"
    label = first.where[len(head):] if first.where.startswith(head) else ""
    return f"{first.layout.path}: column {first.column.index} pages {first.page_index}-{last.page_index}{label}"


def relocated(exc: Exception, first, where: str) -> CorruptFileError:
    """``exc`` from decoding several pages at once, named by their range ``where``: a message
    that names the first page alone (the pages were decoded as one) gets the range instead of
    a second prefix."""
    msg = str(exc)
    own = first.where + ": "
    return CorruptFileError(f"{where}: {msg[len(own):] if msg.startswith(own) else msg}")


def values_to_arrow(values: Values, dtype: pa.DataType, where: str) -> pa.Array:
    try:
        return to_arrow(values, dtype)
    except CorruptFileError as exc:
        raise CorruptFileError(f"{where}: {exc}") from None


def select_part(rep, defs, values: pa.Array, spans: EntrySpans, leaf: Leaf, num_rows: int,
                where: str) -> PagePart:
    """Cut the wanted rows out of a decoded run of entries (levels + visible values)."""
    n_entries = len(rep) if rep is not None else (len(defs) if defs is not None else len(values))
    if leaf.max_rep == 0:
        # no lists: every entry is visible and holds a value
        if len(values) != n_entries:
            raise CorruptFileError(f"{where}: {len(values)} values for {n_entries} level entries")
        if spans.contiguous:
            a = int(spans.starts[0]) if len(spans.starts) else 0
            b = a + int(spans.lengths.sum())
            return PagePart(None, None if defs is None else defs[a:b], values.slice(a, b - a), num_rows)
        idx = spans.indices()
        return PagePart(None, None if defs is None else defs[idx], values.take(pa.array(idx)), num_rows)
    if spans.contiguous:
        # values before the span and in it: counts of visible entries, no running sum
        a = int(spans.starts[0]) if len(spans.starts) else 0
        b = a + int(spans.lengths.sum())
        if defs is None:
            n_visible, va, vb = n_entries, a, b
        else:
            top = leaf.max_visible
            before, inside = np.count_nonzero(defs[:a] <= top), np.count_nonzero(defs[a:b] <= top)
            n_visible = before + inside + np.count_nonzero(defs[b:] <= top)
            va, vb = before, before + inside
        if n_visible != len(values):
            raise CorruptFileError(f"{where}: {len(values)} values for {n_visible} visible level entries")
        return PagePart(rep[a:b], None if defs is None else defs[a:b], values.slice(va, vb - va), num_rows)
    if defs is None:  # every entry holds a value
        if n_entries != len(values):
            raise CorruptFileError(f"{where}: {len(values)} values for {n_entries} visible level entries")
        idx = spans.indices()
        return PagePart(rep[idx], None, values.take(pa.array(idx)), num_rows)
    s, n = spans.starts, spans.lengths
    if len(s) and (s[0] < 0 or n.min() < 0 or s[-1] + n[-1] > n_entries):
        raise CorruptFileError(f"{where}: rows' level entries lie outside the {n_entries} decoded")
    if len(s) > 1 and np.any(s[1:] < s[:-1] + n[:-1]):  # not in order: a running count
        visible = defs <= leaf.max_visible
        n_visible = int(visible.sum())
        idx = spans.indices()
        value_pos = (np.cumsum(visible) - 1)[idx]
        value_pos[~visible[idx]] = -1
    else:  # a take's rows, in order: counted in one pass, no array as long as the levels
        idx, value_pos, n_visible = kernels.span_values(defs, leaf.max_visible, s, n)
    if n_visible != len(values):
        raise CorruptFileError(f"{where}: {len(values)} values for {n_visible} visible level entries")
    return PagePart(rep[idx], defs[idx], values.take(pa.array(value_pos[value_pos >= 0])), num_rows)
