"""The plain fixed-width 2.0 columns of a range, read together (a wide table's).

A 2.0 table of a thousand numeric columns stores each column's rows as one ``Flat`` buffer a
page (``[Nullable{no_nulls}]Flat``, uncompressed). Reading a range of rows column by column
costs Python a dozen calls a column (split the range over the pages, parse the page's
encoding, plan, fetch, wrap), ~30 us a column: a 1% range of the bench's 1,000-column table
took 32 ms that way, pylance 14.

:class:`PlainColumns` keeps, for the leaf fields of a read whose columns are paged alike, one
array of buffer positions, sizes and row widths a page, made when a read first touches that
page (each distinct encoding is parsed and planned once). A range that falls in one page of
such a group is then planned for all its columns with a few numpy operations, fetched with
one :func:`~lancefile.io.read_spans` and wrapped without copies, a ``from_buffers`` call a
column. A page that is not plain (nulls, compression, a buffer too short for the rows, a
metadata error) is left to its own reader, which reads it or says what is wrong.

Example::

    >>> import numpy as np, pyarrow as pa, tempfile, os, lancefile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.lance")
    >>> t = pa.table({f"c{i}": np.arange(100.0) + i for i in range(3)})
    >>> lancefile.write_table(t, path, version="2.0")
    >>> from lancefile.encodings.selection import Selection
    >>> readers = lancefile.LanceFileReader(path)._field_readers
    >>> got = PlainColumns(readers).read(Selection.of_range(10, 12), {})
    >>> sorted(got), got[2].to_pylist()
    ([0, 1, 2], [12.0, 13.0])
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import LanceError
from ...format.container import ARRAY_ENCODING_URL, COLUMN_ENCODING_URL, MAX_ROWS
from ...format.walked import MIN_COLUMNS
from ...io import read_spans
from ..arrowutil import array_from_fixed, checks_values, fixed_width_bits, is_flat_fixed
from ..selection import Selection
from .fields import LeafReader
from .flat import plain_rows

__all__ = ["PlainColumns", "TAKE_MAX_ROWS", "TAKE_READ_BYTES"]

_PAGE_BUFFER = 0  # Buffer.buffer_type of a page's own buffer
# takes of up to this many rows are read together (a row a column: a position each)
TAKE_MAX_ROWS = 4096
# a take's plain columns are fetched in batches holding about this many bytes
TAKE_READ_BYTES = 32 << 20
# from this many plain columns on, their pages are planned from one compiled walk of their
# metadata (fewer: each column's own parse costs less than the walk's set-up, ~0.3 ms)
TABLES_MIN_COLUMNS = MIN_COLUMNS


class _Group:
    """Leaf readers whose columns have the same pages (row bounds): ``members[k]`` is
    ``(reader index, dtype)``; :meth:`page` gives page ``p``'s positions, sizes and row
    widths as arrays (position -1: that column's page is not plain), made when first asked
    for and forgotten once a forward scan has passed it."""

    __slots__ = ("bounds", "members", "readers", "_pages")

    def __init__(self, bounds: list[int]) -> None:
        self.bounds = bounds
        self.members: list[tuple[int, pa.DataType]] = []
        self.readers: list[LeafReader] = []
        self._pages: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def page(self, p: int, owner: "PlainColumns") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self._pages.get(p)
        if got is None:
            got = self._plan_page(p, owner)
            pages = self._pages
            if pages and min(pages) < p:  # a forward scan has passed them
                for q in [q for q in list(pages) if q < p]:
                    pages.pop(q, None)
            pages[p] = got
        return got

    def take_spans(self, idx: np.ndarray, owner: "PlainColumns"):
        """For sorted unique rows ``idx``: ``(members, starts, widths, spread)``, the members
        whose pages holding those rows are all plain, the file position of each one's rows
        (a row per column), their row widths and the bytes between each one's first and last
        row (what a fetch may read); None when no member qualifies or a row is past the pages."""
        bounds = np.asarray(self.bounds, np.int64)
        if idx[-1] >= bounds[-1]:
            return None  # past the columns' rows: their readers say so
        page_of = np.searchsorted(bounds, idx, side="right") - 1
        local = idx - bounds[page_of]
        touched, first = np.unique(page_of, return_index=True)
        last = np.append(first[1:], len(idx)) - 1
        plans = [self.page(p, owner) for p in touched.tolist()]
        pos, size, width = (np.stack([q[j] for q in plans]) for j in range(3))
        w = width[0]
        # (sizes compared by division: no product to overflow)
        ok = ((pos >= 0) & (size // width > local[last][:, None]) & (width == w)).all(axis=0)
        ks = np.flatnonzero(ok)
        if not len(ks):
            return None
        row_page = np.repeat(np.arange(len(touched)), last - first + 1)
        starts = pos[row_page][:, ks].T + local[None, :] * w[ks][:, None]
        spread = int((local[last] - local[first] + 1).sum()) * w[ks]
        return ks, starts, w[ks], spread

    def _plan_page(self, p: int, owner: "PlainColumns") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Page ``p`` of each member, planned from its reader's page (a column at a time)."""
        k = len(self.readers)
        pos, size, width = np.full(k, -1, np.int64), np.zeros(k, np.int64), np.ones(k, np.int64)
        for j, r in enumerate(self.readers):
            got = owner.plan_page(r, p)
            if got is not None:
                pos[j], size[j], width[j] = got
        return pos, size, width


class _TableGroup(_Group):
    """A :class:`_Group` whose members' pages are planned from the columns' page tables
    (:meth:`~lancefile.format.container.FileLayout.column_tables`), every member at once:
    ``slots[k]`` is member k's first page slot, ``kinds[k]`` its row layout's index in the
    owner's kinds."""

    __slots__ = ("tables", "slots", "kinds")

    def __init__(self, bounds: list[int], tables) -> None:
        super().__init__(bounds)
        self.tables = tables
        self.slots: list[int] = []
        self.kinds: list[int] = []

    def _plan_page(self, p: int, owner: "PlainColumns") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = self.tables
        slots = np.asarray(self.slots, np.int64) + p
        kinds = np.asarray(self.kinds, np.int64)
        n_kinds = len(owner.kinds)
        keys, inverse = np.unique(t.encoding_ids[slots] * n_kinds + kinds, return_inverse=True)
        plans = [owner.plan_bytes(t, int(key) // n_kinds, int(key) % n_kinds) for key in keys.tolist()]
        index = np.array([bi for bi, _ in plans], np.int64)[inverse]
        width = np.array([w for _, w in plans], np.int64)[inverse]
        ok = t.simple[slots] & (index >= 0) & (index < t.nbuf[slots])
        at = t.first[slots] + np.where(ok, index, 0)
        return np.where(ok, t.positions[at], -1), np.where(ok, t.sizes[at], 0), width


class PlainColumns:
    """Reads the plain fixed-width pages of many 2.0 leaf fields of a range at once.

    ``readers`` are a file reader's field readers; built once per file reader (the groups
    when first read), used by every read of it, from any thread.
    """

    def __init__(self, readers: list) -> None:
        self._readers = readers
        self._groups: list[_Group] | None = None
        self._plans: dict = {}  # (encoding bytes, dtype) -> (page buffer index, bytes a row) or None
        self.kinds: list[pa.DataType] = []  # the row layouts of the table groups' members
        self._column_ok: dict = {}  # a column's own encoding bytes -> whether its pages hold values
        self._layout = None  # the file's (set with the table groups)

    def _build(self) -> list[_Group]:
        members, dtypes = [], []
        bits_of: dict = {}
        for i, r in enumerate(self._readers):
            if type(r) is LeafReader:
                bits = bits_of.get(r.dtype, False)
                if bits is False:  # (types whose values Arrow checks are left to their readers, which check them)
                    bits = bits_of[r.dtype] = None if checks_values(r.dtype) else fixed_width_bits(r.dtype)
                if bits and not bits % 8:
                    members.append((i, r))
                    dtypes.append(r.dtype)
        groups: dict = {}
        left = self._build_from_tables(members, dtypes, groups)
        for i, r in left:
            try:
                r.check_column()
                lengths = r.column.info.lengths
            except LanceError:
                continue  # its own reader says what is wrong
            g = groups.get(("reader", lengths))
            if g is None:
                g = groups[("reader", lengths)] = _Group(r.column.bounds)
            g.members.append((i, r.dtype))
            g.readers.append(r)
        self._groups = list(groups.values())
        return self._groups

    def _build_from_tables(self, members: list, dtypes: list, groups: dict) -> list:
        """Put the members whose columns' page tables come from one compiled pass in table
        groups; return the others (for the protobuf path, which also says what is wrong)."""
        if len(members) < TABLES_MIN_COLUMNS:
            return members
        layout = self._layout = members[0][1].column.layout
        got = layout.column_tables([r.column.index for _, r in members])
        if got is None:
            return members
        t, positions = got
        c = np.asarray(positions, np.int64)
        ok = c >= 0
        c[~ok] = 0
        n = t.pages[c]
        ok &= (n >= 1) & ~t.has_buffers[c]
        col_ids = t.column_encoding_ids[c]
        holds = np.array([self._holds_values(layout, t, i, members[0][1]) for i in range(int(col_ids.max()) + 1)]
                         + [True, False], np.bool_)  # (then -2: not plain, False; -1: none, True)
        ok &= holds[col_ids]
        first = t.first_page[c]
        one = ok & (n == 1)
        one_len = np.where(one, t.lengths[first], -1)
        one &= one_len >= 0
        kinds = self._kinds(dtypes)
        reader_ix = np.array([i for i, _ in members], np.int64)
        for length in np.unique(one_len[one]).tolist():  # columns of one page: grouped at once
            pick = np.flatnonzero(one & (one_len == length))
            g = groups[(length,)] = _TableGroup([0, length], t)
            g.members = [(i, dtypes[k]) for i, k in zip(reader_ix[pick].tolist(), pick.tolist())]
            g.slots, g.kinds = first[pick].tolist(), kinds[pick].tolist()
        lengths = t.lengths.tolist()
        left = []
        for k in np.flatnonzero(~one).tolist():  # columns of several pages: a key of their pages' rows each
            key = tuple(lengths[first[k] : first[k] + n[k]]) if ok[k] else ()
            if not key or min(key) < 0 or sum(key) > MAX_ROWS:
                left.append(members[k])
                continue
            g = groups.get(key)
            if g is None:
                g = groups[key] = _TableGroup(list(accumulate(key, initial=0)), t)
            g.members.append((members[k][0], dtypes[k]))
            g.slots.append(int(first[k]))
            g.kinds.append(int(kinds[k]))
        return left

    def _kinds(self, dtypes: list) -> np.ndarray:
        """Each dtype's index in :attr:`kinds` (added there when new)."""
        index = {d: k for k, d in enumerate(self.kinds)}
        out = np.empty(len(dtypes), np.int64)
        for j, d in enumerate(dtypes):
            k = index.get(d)
            if k is None:
                k = index[d] = len(self.kinds)
                self.kinds.append(d)
            out[j] = k
        return out

    def _holds_values(self, layout, t, i: int, r: LeafReader) -> bool:
        """Whether column encoding ``i`` of tables ``t`` is ``values`` (its pages hold the
        column's values), as a 2.0 leaf's must be."""
        enc = t.column_encoding(i)
        ok = self._column_ok.get(enc)
        if ok is None:
            try:
                msg = layout.message(enc, COLUMN_ENCODING_URL, pb.ColumnEncoding, r.column.where(0))
                ok = msg.WhichOneof("column_encoding") in (None, "values")
            except LanceError:
                ok = False
            self._column_ok[enc] = ok
        return ok

    def plan_bytes(self, t, encoding_id: int, kind: int) -> tuple[int, int]:
        """(page buffer index, bytes a row) of page encoding ``encoding_id`` of tables ``t`` for
        rows of ``self.kinds[kind]``; (-1, 1) when such pages are not plain rows of that type."""
        if encoding_id < 0:
            return -1, 1
        dtype = self.kinds[kind]
        enc = t.encoding_bytes(encoding_id)
        key = (enc, dtype)
        plan = self._plans.get(key, False)
        if plan is False:
            try:
                plan = self._make_plan(self._layout, enc, dtype, "")
            except LanceError:
                plan = None  # (read by its own reader, which says what is wrong)
            self._plans[key] = plan
        return (-1, 1) if plan is None else plan

    def plan_page(self, r: LeafReader, p: int) -> tuple[int, int, int] | None:
        """(position, size, bytes a row) of page ``p``'s values buffer for reader ``r``, or
        None when the page is not plain fixed-width rows of its type."""
        col = r.column
        try:
            page = col.info.pages[p]
            key = (page.encoding, r.dtype)
            plan = self._plans.get(key, False)
            if plan is False:
                plan = self._plans[key] = self._make_plan(col.layout, page.encoding, r.dtype, col.where(p))
        except LanceError:
            return None  # (read by its own reader, which says what is wrong)
        if plan is None or plan[0] >= len(page.buffers):
            return None
        ref = page.buffers[plan[0]]
        return ref.position, ref.size, plan[1]

    @staticmethod
    def _make_plan(layout, encoding: bytes, dtype: pa.DataType, where: str) -> tuple[int, int] | None:
        got = plain_rows(layout.message(encoding, ARRAY_ENCODING_URL, pb.ArrayEncoding, where), dtype)
        if got is None:
            return None
        flat, w = got
        if int(flat.buffer.buffer_type) != _PAGE_BUFFER or w <= 0:
            return None
        return int(flat.buffer.buffer_index), w

    def read(self, sel: Selection, cache: dict) -> dict:
        """``{i: readers[i].read(sel, cache)}`` for the fields whose rows of ``sel`` lie in
        plain pages (a range: in one page each; a take of up to :data:`TAKE_MAX_ROWS` rows: in
        any of their pages); at least two of them, else ``{}``. The arrays are valid and hold
        no nulls (nothing for the file reader's checks to find)."""
        if len(self._readers) < 2 or not sel.count:
            return {}
        groups = self._groups if self._groups is not None else self._build()
        if not sel.is_range:
            return self._take(groups, sel.indices) if sel.count <= TAKE_MAX_ROWS else {}
        picked, starts, lengths = [], [], []
        for g in groups:
            bounds = g.bounds
            if sel.stop > bounds[-1]:
                continue  # past the columns' rows: their readers say so
            p = bisect_right(bounds, sel.start) - 1
            if bisect_right(bounds, sel.stop - 1) - 1 != p:
                continue  # over two pages or more: LeafReader.read reads them in one go
            lo, hi = sel.start - bounds[p], sel.stop - bounds[p]
            pos, size, width = g.page(p, self)
            ok = np.flatnonzero((pos >= 0) & (size // width >= hi))  # (no product to overflow)
            if not len(ok):
                continue
            picked.extend(g.members[k] for k in ok.tolist())
            starts.append(pos[ok] + lo * width[ok])
            lengths.append((hi - lo) * width[ok])
        out: dict = {}
        if len(picked) < 2:
            return out
        lengths = np.concatenate(lengths)
        data, at = read_spans(self._source(picked), np.concatenate(starts), lengths)
        buf = pa.py_buffer(data)
        for (i, dtype), a, n in zip(picked, at.tolist(), lengths.tolist()):
            out[i] = _wrap(dtype, buf.slice(a, n), sel.count)
        return out

    def _source(self, picked: list):
        return self._readers[picked[0][0]].column.layout.source

    def _take(self, groups: list[_Group], idx: np.ndarray) -> dict:
        """:meth:`read` of sorted unique rows ``idx``: every row of every plain column is a
        range of its width; they are fetched in batches of about :data:`TAKE_READ_BYTES`
        (neighbouring rows in one request) and gathered column by column."""
        picked, starts, widths, spread = [], [], [], []
        for g in groups:
            got = g.take_spans(idx, self)
            if got is not None:
                ks, s, w, est = got
                picked.extend(g.members[k] for k in ks.tolist())
                starts.append(s)
                widths.append(w)
                spread.append(est)
        out: dict = {}
        if len(picked) < 2:
            return out
        starts, widths = np.concatenate(starts), np.concatenate(widths)
        # batches of columns: what one fetch holds at once (rows close together come with the bytes between)
        spread = np.concatenate(spread)
        batch = (np.cumsum(spread) - spread) // TAKE_READ_BYTES
        cuts = [0, *(np.flatnonzero(np.diff(batch)) + 1).tolist(), len(picked)]
        rows = len(idx)
        source = self._source(picked)
        for a, b in zip(cuts, cuts[1:]):
            w = widths[a:b]
            data, at = read_spans(source, starts[a:b].ravel(), np.repeat(w, rows))
            at = at.reshape(b - a, rows)
            for width in np.unique(w).tolist():  # a column's rows side by side, for each width at once
                ks = np.flatnonzero(w == width)
                values = data[at[ks][:, :, None] + np.arange(width)].reshape(len(ks), rows * width)
                buf = pa.py_buffer(values)
                n = rows * width
                for j, k in enumerate(ks.tolist()):
                    i, dtype = picked[a + k]
                    out[i] = _wrap(dtype, buf.slice(j * n, n), rows)
        return out


def _wrap(dtype: pa.DataType, buf: pa.Buffer, rows: int) -> pa.Array:
    """``rows`` plain values of ``dtype`` in ``buf`` (exactly their bytes), as an array."""
    if is_flat_fixed(dtype):
        return pa.Array.from_buffers(dtype, rows, [None, buf])
    return array_from_fixed(dtype, buf, rows)
