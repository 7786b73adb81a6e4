"""The pages of one column, and how a row selection splits over them (any version).

Pages of a column cover its rows end to end, in order (``Page.length`` rows each), so a
selection of rows maps to (page, page-local selection) pairs by the pages' cumulative
row counts.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import numpy as np

from ..errors import CorruptFileError
from ..format.container import FileLayout
from .page import PageData
from .selection import Selection

__all__ = ["ColumnPages"]


class ColumnPages:
    """Decodes row selections of one column, page by page.

    Built once per file reader. What a read keeps while it runs (pages' fetched
    dictionaries and decompressed buffers) lives in the ``cache`` dict the read passes
    in: ``cache[column index][page index] -> PageData``.
    """

    def __init__(self, layout: FileLayout, index: int, url: str, message: type, label: str = "",
                 lazy: bool = False) -> None:
        self.layout = layout
        self.index = index
        if not lazy:  # (lazy: the column's metadata is parsed when info, bounds or num_rows are first asked for)
            self._load()
        self._url, self._message = url, message
        self.label = label  # e.g. "field 'a', file version 2.2": added to every message
        # every page's decoder carries its "where" (a take makes hundreds): made from two parts
        self._where_head = f"{layout.path}: column {index} page "
        self._where_tail = f" ({label})" if label else ""
        self._encodings: dict[int, object] = {}

    def _load(self) -> None:
        self.info = self.layout.column(self.index)
        # Python ints: page lookups without numpy overhead (a running sum: columns have few pages)
        self.bounds = list(accumulate(self.info.lengths, initial=0))
        self.num_rows = self.bounds[-1]

    def __getattr__(self, name: str):  # only for attributes not set yet: a lazy column's first use
        if name in ("info", "bounds", "num_rows"):
            self._load()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def starts(self) -> np.ndarray:
        """Cumulative row offsets: page i covers rows [starts[i], starts[i+1])."""
        return self.info.page_starts

    def page(self, i: int, cache: dict) -> PageData:
        pages = cache.get(self.index)
        if pages is None:
            pages = cache[self.index] = {}
        got = pages.get(i)
        if got is None:
            got = pages[i] = PageData(self.layout, self.info, i, self.label)
        return got

    def _evict_before(self, first: int, cache: dict) -> None:
        """Forget pages a forward scan has passed (their dictionaries, decompressed buffers).

        A scan decodes the next chunk while the current one finishes, so two threads may use
        one column's pages at once: the keys are copied at once (``list`` of a dict holds the
        GIL throughout), and a page forgotten under a thread that still reads it is only
        fetched again by it (``page`` makes a new entry), never read half-removed."""
        pages = cache.get(self.index)
        if pages and min(list(pages)) < first:
            for i in [i for i in list(pages) if i < first]:
                pages.pop(i, None)

    def where(self, i: int) -> str:
        return f"{self._where_head}{i}{self._where_tail}"

    def encoding(self, i: int):
        """The page's encoding message (parsed once)."""
        enc = self._encodings.get(i)
        if enc is None:
            enc = self._encodings[i] = self.layout.message(self.info.pages[i].encoding, self._url, self._message,
                                                           self.where(i))
        return enc

    def lone_page(self, sel: Selection) -> int:
        """The page holding every row of ``sel``, or -1 (rows over several pages, none, or past
        the column's end: :meth:`split` says which)."""
        if sel.count == 0 or sel.stop > self.num_rows:
            return -1
        bounds = self.bounds
        p = bisect_right(bounds, sel.start)
        return p - 1 if p == bisect_right(bounds, sel.stop - 1) else -1

    def split(self, sel: Selection, cache: dict):
        """Yield (page index, page-local selection) covering ``sel`` in order."""
        if sel.count == 0:
            return
        if sel.stop > self.num_rows:
            raise CorruptFileError(
                f"{self.layout.path}: column {self.index} has {self.num_rows} rows, fewer than the {sel.stop} needed"
            )
        bounds = self.bounds
        first = bisect_right(bounds, sel.start) - 1
        last = bisect_right(bounds, sel.stop - 1) - 1
        self._evict_before(first, cache)
        if sel.is_range:
            for p in range(first, last + 1):
                lo, hi = max(sel.start, bounds[p]), min(sel.stop, bounds[p + 1])
                if hi > lo:
                    yield p, Selection(lo - bounds[p], hi - bounds[p])
            return
        idx = sel.indices
        if first == last:
            yield first, Selection.of_indices(idx - bounds[first])
            return
        starts = self.starts
        page_of = np.searchsorted(starts, idx, side="right") - 1
        local = idx - starts[page_of]  # page-local rows, for every page at once
        cut = np.flatnonzero(np.diff(page_of)) + 1  # where each touched page's rows begin
        heads = np.concatenate([[0], cut]).tolist()
        ends = np.append(cut, len(idx)).tolist()
        make = Selection.sorted_indices
        for p, a, b, lo, hi in zip(page_of[heads].tolist(), heads, ends, local[heads].tolist(),
                                   local[np.array(ends) - 1].tolist()):
            yield p, make(local[a:b], lo, hi + 1)
