"""Fetch many small byte ranges of one buffer with few reads (for takes)."""

from __future__ import annotations

import numpy as np

from ...io import COALESCE_GAP
from ..arrowutil import gather_ranges, to_uint8

__all__ = ["read_spans"]


def read_spans(page, buffer, starts: np.ndarray, lengths: np.ndarray, gap: int = COALESCE_GAP):
    """Read the byte ranges (sorted by start) of ``buffer``; return their bytes concatenated.

    Nearby ranges are merged into one request; the result holds each range's bytes in
    order, so range i is ``out[cum[i]:cum[i]+lengths[i]]``.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(starts) == 0:
        return np.empty(0, dtype=np.uint8)
    ends = starts + lengths
    run_end = np.maximum.accumulate(ends)
    new = np.empty(len(starts), dtype=bool)
    new[0] = True
    new[1:] = starts[1:] > run_end[:-1] + gap
    heads = np.flatnonzero(new)
    g_start = starts[heads]
    g_end = np.maximum.reduceat(ends, heads)
    blocks = page.read_ranges(buffer, list(zip(g_start.tolist(), (g_end - g_start).tolist())))
    concat = np.concatenate([to_uint8(b) for b in blocks]) if len(blocks) > 1 else to_uint8(blocks[0])
    g_out = np.concatenate([[0], np.cumsum(g_end - g_start)[:-1]])
    gid = np.cumsum(new) - 1
    pos = starts - g_start[gid] + g_out[gid]
    return gather_ranges(concat, pos, lengths)
