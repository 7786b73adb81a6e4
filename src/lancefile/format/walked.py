"""Column metadata of many columns at once, without protobuf objects: :func:`load_columns`.

A reader of a wide 2.1+ table builds a reader a column, and each parsed its column's
``ColumnMetadata`` with protobuf and built its pages' Python objects: ~7 us a column, 7 ms of
a fresh reader's 1% range of a 1,000-column table. :func:`load_columns` walks the metadata
of all the columns a read needs in one compiled pass (:meth:`.FileLayout.column_tables`, the
metadata checksums checked as it goes) and gives the layout a :class:`.ColumnInfo` for every
column whose pages all have the usual form (see :mod:`.pagetable`: *simple* pages). Their
pages (:class:`WalkedPages`) are made from the walk's arrays when a read first touches them.
Any other column keeps the protobuf path (:meth:`.FileLayout.column`), which says what is
wrong with it.

Example::

    >>> import os, tempfile, pyarrow as pa, lancefile
    >>> from lancefile.format.container import read_layout
    >>> from lancefile.io import open_source
    >>> path = os.path.join(tempfile.mkdtemp(), "wide.lance")
    >>> lancefile.write_table(pa.table({f"c{i}": [i, i + 1] for i in range(20)}), path)
    >>> layout = read_layout(open_source(path))
    >>> load_columns(layout, range(20), min_columns=1)
    20
    >>> info = layout.column(3)
    >>> info.lengths, info.pages[0].length, type(info.pages).__name__
    ((2,), 2, 'WalkedPages')
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from .container import MAX_ROWS, BufferRef, ColumnInfo, FileLayout, PageInfo, Pages
from .pagetable import ColumnTables, PageTable, page_table

__all__ = ["load_columns", "WalkedPages", "MIN_COLUMNS"]

# With fewer columns, parsing each one's metadata costs less than the walk's set-up.
MIN_COLUMNS = 16

_new_tuple = tuple.__new__
_BUFFER_REF = repeat(BufferRef)


class _Shared:
    """What the columns of one walk share: its arrays (a file of 1,000 columns of 1,000 pages
    has a million page slots: as Python ints they would take ~300 MB) and each distinct page
    encoding's bytes."""

    __slots__ = ("tables", "first", "nbuf", "positions", "sizes", "lengths", "priorities", "encoding_ids",
                 "encodings")

    def __init__(self, tables: ColumnTables) -> None:
        self.tables = tables
        self.first, self.nbuf = tables.first, tables.nbuf
        self.positions, self.sizes = tables.positions, tables.sizes
        self.lengths, self.priorities = tables.lengths, tables.priorities
        self.encoding_ids = tables.encoding_ids
        self.encodings: dict[int, bytes] = {}

    def page(self, q: int) -> PageInfo:
        """The :class:`.PageInfo` of page slot ``q`` (a simple page's)."""
        a = self.first.item(q)
        b = a + self.nbuf.item(q)
        refs = tuple(map(_new_tuple, _BUFFER_REF, zip(self.positions[a:b].tolist(), self.sizes[a:b].tolist())))
        i = self.encoding_ids.item(q)
        enc = self.encodings.get(i)
        if enc is None:
            enc = self.encodings[i] = self.tables.encoding_bytes(i)
        return _new_tuple(PageInfo, (refs, self.lengths.item(q), enc, self.priorities.item(q)))


class WalkedPages(Pages):
    """A column's pages from a walk of many columns' metadata: every page simple, each one's
    :class:`.PageInfo` made from the walk's arrays when first used."""

    def __init__(self, shared: _Shared, q0: int, n: int, message: tuple, limit: int, where: str) -> None:
        self._made = [None] * n
        self._limit, self._where = limit, where
        self._shared, self._q0 = shared, q0
        self._span = message  # (start, end) of the column's message in the walk's bytes
        self._table: PageTable | None | bool = False

    @property
    def table(self) -> PageTable | None:
        got = self._table
        if got is False:
            a, b = self._span
            got = self._table = page_table(self._shared.tables.raw[a:b].tobytes(), len(self._made), self._limit)
        return got

    def _make(self, i: int) -> PageInfo:
        return self._shared.page(self._q0 + i)

    def stored_bytes(self, indices) -> int:
        s = self._shared
        q = self._q0 + np.asarray(list(indices), np.int64)
        if not len(q):
            return 0
        ends = np.cumsum(s.nbuf[q])  # the pages' buffer slots, back to back, summed at once
        slots = np.arange(ends[-1]) - np.repeat(ends - s.nbuf[q], s.nbuf[q]) + np.repeat(s.first[q], s.nbuf[q])
        return int(s.sizes[slots].sum())


def load_columns(layout: FileLayout, indices, min_columns: int = MIN_COLUMNS) -> int:
    """Give ``layout`` the :class:`.ColumnInfo` of columns ``indices`` (those not parsed yet,
    their metadata in memory: see :meth:`.FileLayout.prefetch_columns`) from one compiled
    walk of their metadata; return how many it took. Columns the walk cannot take (a page
    or column encoding of another form, column buffers, rows past ``MAX_ROWS``) and all of
    them when fewer than ``min_columns`` are asked for are left to :meth:`.FileLayout.column`."""
    todo = [i for i in dict.fromkeys(indices) if not layout.has_column(i)]
    if len(todo) < max(min_columns, 1):
        return 0
    got = layout.column_tables(todo)
    if got is None:
        return 0
    t, positions = got
    ok = np.asarray(positions) >= 0
    k = np.where(ok, np.asarray(positions), 0)
    pages, q0 = t.pages[k], t.first_page[k]
    ok &= (pages >= 0) & ~t.has_buffers[k] & (t.column_encoding_ids[k] != -2)
    # per column: its pages all simple, and its rows well within MAX_ROWS (sums over its page
    # slots, in floats: a column near the limit takes the protobuf path, which sums exactly)
    marks = np.concatenate([[0], np.cumsum(~t.simple)])
    rows = np.concatenate([[0.0], np.cumsum(t.lengths.astype(np.float64))])
    n = np.maximum(pages, 0)
    ok &= (marks[q0 + n] == marks[q0]) & (rows[q0 + n] - rows[q0] < MAX_ROWS / 2)
    shared = _Shared(t)
    limit = layout.file_size
    col_ids = t.column_encoding_ids[k].tolist()
    spans = list(zip(t.starts.tolist(), t.ends.tolist()))
    lengths = t.lengths.tolist()  # (dropped on return: each column keeps a tuple of its own)
    column_encodings: dict[int, bytes] = {-1: b""}
    taken = 0
    for c, good, q, start, m, cid in zip(todo, ok.tolist(), k.tolist(), q0.tolist(), n.tolist(), col_ids):
        if not good:
            continue
        enc = column_encodings.get(cid)
        if enc is None:
            enc = column_encodings[cid] = t.column_encoding(cid)
        where = f"{layout.path}: column {c}"
        walked = WalkedPages(shared, start, m, spans[q], limit, where)
        layout.adopt_column(ColumnInfo(c, enc, walked, (), tuple(lengths[start : start + m])))
        taken += 1
    return taken

