"""Which rows of a page (or column) a read wants: a contiguous range or sorted indices.

Decoders receive a :class:`Selection` in page-local row numbers. A range lets them read
one contiguous slice of each buffer (zero-copy where Arrow allows); sorted, unique indices
let the fixed-width and binary decoders fetch only the bytes of the wanted rows.

Example::

    >>> Selection.of_range(10, 20).count
    10
    >>> (Selection.of_indices([3, 9]).start, Selection.of_indices([3, 9]).stop)
    (3, 10)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Selection"]


@dataclass(frozen=True)
class Selection:
    start: int
    stop: int
    indices: np.ndarray | None = None  # sorted, unique, int64; None means the range

    @staticmethod
    def of_range(start: int, stop: int) -> "Selection":
        return Selection(int(start), int(stop))

    @staticmethod
    def of_indices(indices) -> "Selection":
        idx = np.asarray(indices, dtype=np.int64)
        if len(idx) == 0:
            return Selection(0, 0)
        return Selection(int(idx[0]), int(idx[-1]) + 1, idx)

    @staticmethod
    def sorted_indices(indices: np.ndarray, start: int, stop: int) -> "Selection":
        """Sorted unique int64 ``indices`` known to run from ``start`` to ``stop - 1`` (the
        caller's checks; a take's pages are split this way, hundreds at a time): no copy, no
        checks, and none of the frozen dataclass's per-field set-up."""
        sel = object.__new__(Selection)
        sel.__dict__.update(start=start, stop=stop, indices=indices)
        return sel

    @property
    def is_range(self) -> bool:
        return self.indices is None

    @property
    def count(self) -> int:
        return self.stop - self.start if self.indices is None else len(self.indices)

    def as_indices(self) -> np.ndarray:
        if self.indices is None:
            return np.arange(self.start, self.stop, dtype=np.int64)
        return self.indices

    def dense(self) -> bool:
        """True when reading the covering range and taking is cheaper than gathering."""
        return self.indices is None or (self.stop - self.start) <= 4 * len(self.indices) + 64

    def shift(self, delta: int) -> "Selection":
        if self.indices is None:
            return Selection(self.start + delta, self.stop + delta)
        return Selection(self.start + delta, self.stop + delta, self.indices + delta)

    def scale(self, factor: int) -> "Selection":
        """Rows -> items of a fixed-size list with ``factor`` items per row."""
        if self.indices is None:
            return Selection(self.start * factor, self.stop * factor)
        items = (self.indices[:, None] * factor + np.arange(factor, dtype=np.int64)).ravel()
        return Selection(self.start * factor, self.stop * factor, items)
