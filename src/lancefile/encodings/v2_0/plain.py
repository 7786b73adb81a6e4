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

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import LanceError
from ...format.container import ARRAY_ENCODING_URL
from ...io import read_spans
from ..arrowutil import array_from_fixed, fixed_width_bits
from ..selection import Selection
from .fields import LeafReader
from .flat import plain_rows

__all__ = ["PlainColumns"]

_PAGE_BUFFER = 0  # Buffer.buffer_type of a page's own buffer


def _flat_fixed(dtype: pa.DataType) -> bool:
    """Whether ``dtype``'s values are one fixed-width buffer (no children, no dictionary)."""
    return not (pa.types.is_nested(dtype) or pa.types.is_dictionary(dtype))


class _Group:
    """Leaf readers whose columns have the same pages (row bounds): ``members[k]`` is
    ``(reader index, dtype)``; :meth:`page` gives page ``p``'s positions, sizes and row
    widths as arrays (position -1: that column's page is not plain)."""

    __slots__ = ("bounds", "members", "readers", "_pages")

    def __init__(self, bounds: list[int]) -> None:
        self.bounds = bounds
        self.members: list[tuple[int, pa.DataType]] = []
        self.readers: list[LeafReader] = []
        self._pages: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def page(self, p: int, plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self._pages.get(p)
        if got is None:
            k = len(self.readers)
            pos, size, width = np.full(k, -1, np.int64), np.zeros(k, np.int64), np.ones(k, np.int64)
            for j, r in enumerate(self.readers):
                got = plan(r, p)
                if got is not None:
                    pos[j], size[j], width[j] = got
            pages = self._pages
            if pages and min(pages) < p:  # a forward scan has passed them
                for q in [q for q in list(pages) if q < p]:
                    pages.pop(q, None)
            got = pages[p] = (pos, size, width)
        return got


class PlainColumns:
    """Reads the plain fixed-width pages of many 2.0 leaf fields of a range at once.

    ``readers`` are a file reader's field readers; built once per file reader (the groups
    when first read), used by every read of it, from any thread.
    """

    def __init__(self, readers: list) -> None:
        self._readers = readers
        self._groups: list[_Group] | None = None
        self._plans: dict = {}  # (encoding bytes, dtype) -> (page buffer index, bytes a row) or None

    def _build(self) -> list[_Group]:
        groups: dict = {}
        for i, r in enumerate(self._readers):
            if type(r) is not LeafReader:
                continue
            bits = fixed_width_bits(r.dtype)
            if not bits or bits % 8:
                continue
            try:
                lengths = r.column.info.lengths
            except LanceError:
                continue  # its own reader says what is wrong
            g = groups.get(lengths)
            if g is None:
                g = groups[lengths] = _Group(r.column.bounds)
            g.members.append((i, r.dtype))
            g.readers.append(r)
        self._groups = list(groups.values())
        return self._groups

    def _plan(self, r: LeafReader, p: int) -> tuple[int, int, int] | None:
        """(position, size, bytes a row) of page ``p``'s values buffer for reader ``r``, or
        None when the page is not plain fixed-width rows of its type."""
        col = r.column
        try:
            page = col.info.pages[p]
            key = (page.encoding, r.dtype)
            plan = self._plans.get(key, False)
            if plan is False:
                plan = self._plans[key] = self._make_plan(col, p, page.encoding, r.dtype)
        except LanceError:
            return None  # (read by its own reader, which says what is wrong)
        if plan is None or plan[0] >= len(page.buffers):
            return None
        ref = page.buffers[plan[0]]
        return ref.position, ref.size, plan[1]

    @staticmethod
    def _make_plan(col, p: int, encoding: bytes, dtype: pa.DataType) -> tuple[int, int] | None:
        got = plain_rows(col.layout.message(encoding, ARRAY_ENCODING_URL, pb.ArrayEncoding, col.where(p)), dtype)
        if got is None:
            return None
        flat, w = got
        if int(flat.buffer.buffer_type) != _PAGE_BUFFER or w <= 0:
            return None
        return int(flat.buffer.buffer_index), w

    def read(self, sel: Selection, cache: dict) -> dict:
        """``{i: readers[i].read(sel, cache)}`` for the fields of range ``sel`` whose rows lie
        in one plain page each (at least two of them; else ``{}``). The arrays are valid and
        hold no nulls (nothing for the file reader's checks to find)."""
        out: dict = {}
        if len(self._readers) < 2 or not sel.is_range or not sel.count:
            return out
        groups = self._groups if self._groups is not None else self._build()
        picked, starts, lengths = [], [], []
        for g in groups:
            bounds = g.bounds
            if sel.stop > bounds[-1]:
                continue  # past the columns' rows: their readers say so
            p = bisect_right(bounds, sel.start) - 1
            if bisect_right(bounds, sel.stop - 1) - 1 != p:
                continue  # over two pages or more: LeafReader.read reads them in one go
            lo, hi = sel.start - bounds[p], sel.stop - bounds[p]
            pos, size, width = g.page(p, self._plan)
            ok = np.flatnonzero((pos >= 0) & (size // width >= hi))  # (no product to overflow)
            if not len(ok):
                continue
            picked.extend(g.members[k] for k in ok.tolist())
            starts.append(pos[ok] + lo * width[ok])
            lengths.append((hi - lo) * width[ok])
        if len(picked) < 2:
            return out
        source = self._readers[picked[0][0]].column.layout.source
        data, at = read_spans(source, np.concatenate(starts), np.concatenate(lengths))
        buf = pa.py_buffer(data)
        rows = sel.count
        for (i, dtype), a, n in zip(picked, at.tolist(), np.concatenate(lengths).tolist()):
            if _flat_fixed(dtype):
                out[i] = pa.Array.from_buffers(dtype, rows, [None, buf.slice(a, n)])
            else:
                out[i] = array_from_fixed(dtype, buf.slice(a, n), rows)
        return out
