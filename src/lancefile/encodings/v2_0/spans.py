"""Fetch many small byte ranges of one buffer with few reads (for takes)."""

from __future__ import annotations

from itertools import accumulate

import numpy as np

from ...io import COALESCE_GAP, new_buffer
from ..arrowutil import gather_ranges

__all__ = ["read_spans"]

# Up to this many ranges are grouped with plain Python: numpy's per-call cost would be
# most of the work (a take of a few rows per page).
SMALL_SPANS = 64


def read_spans(page, buffer, starts: np.ndarray, lengths: np.ndarray, gap: int = COALESCE_GAP):
    """Read the byte ranges (sorted by start) of ``buffer``; return their bytes concatenated.

    Nearby ranges are merged into one request; the result holds each range's bytes in
    order, so range i is ``out[cum[i]:cum[i]+lengths[i]]``. Ranges out of order (forged
    offsets) are read right too: a range that starts before the one ahead of it starts a
    request of its own.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(starts) == 0:
        return np.empty(0, dtype=np.uint8)
    size = page.ref(buffer).size
    if len(starts) <= SMALL_SPANS:
        starts_l, lengths_l = starts.tolist(), lengths.tolist()
        for s, n in zip(starts_l, lengths_l):
            if s < 0 or n < 0 or s + n > size:
                raise page.error(f"needs bytes [{s}, {s + n}) of a {size}-byte buffer")
        return _read_few(page, buffer, starts_l, lengths_l, gap)
    # every range inside the buffer before anything is allocated (forged offsets may ask for 2**63 bytes)
    bad = (lengths < 0) | (lengths > size) | (starts < 0) | (starts > size - lengths)
    if bad.any():
        i = int(np.argmax(bad))
        raise page.error(f"needs bytes [{int(starts[i])}, {int(starts[i]) + int(lengths[i])}) of a {size}-byte buffer")
    ends = starts + lengths
    run_end = np.maximum.accumulate(ends)
    new = np.empty(len(starts), dtype=bool)
    new[0] = True
    new[1:] = (starts[1:] > run_end[:-1] + gap) | (starts[1:] < starts[:-1])
    heads = np.flatnonzero(new)
    g_start = starts[heads]
    g_end = np.maximum.reduceat(ends, heads)
    g_len = g_end - g_start
    concat = _alloc(int(g_len.sum()))
    page.read_into(buffer, g_start, g_len, concat)  # every group straight into place
    g_out = np.concatenate([[0], np.cumsum(g_len)[:-1]])
    gid = np.cumsum(new) - 1
    pos = starts - g_start[gid] + g_out[gid]
    w = int(lengths[0])
    if w > 1 and len(concat) % w == 0 and not np.any(lengths != w) and not np.any(pos % w):
        # equal, aligned spans (fixed-width values or rows): gather whole rows
        out = _alloc(len(pos) * w)
        np.take(concat.reshape(-1, w), pos // w, axis=0, out=out.reshape(-1, w))
        return out
    return gather_ranges(concat, pos, lengths)


def _read_few(page, buffer, starts: list[int], lengths: list[int], gap: int) -> np.ndarray:
    """:func:`read_spans` for a few ranges: the same requests, without numpy's overheads."""
    g_start: list[int] = []
    g_end: list[int] = []
    group: list[int] = []  # the group of each range
    for s, n in zip(starts, lengths):
        e = s + n
        if g_end and g_start[-1] <= s <= g_end[-1] + gap:
            if e > g_end[-1]:
                g_end[-1] = e
        else:
            g_start.append(s)
            g_end.append(e)
        group.append(len(g_start) - 1)
    if len(g_start) == len(starts):  # one range a group: read them straight into place
        out = _alloc(sum(lengths))
        page.read_into(buffer, starts, lengths, out)
        return out
    g_len = [e - s for s, e in zip(g_start, g_end)]
    concat = _alloc(sum(g_len))
    page.read_into(buffer, g_start, g_len, concat)
    g_out = [0, *accumulate(g_len)]
    out = _alloc(sum(lengths))
    pos = 0
    for s, n, g in zip(starts, lengths, group):
        at = g_out[g] + s - g_start[g]
        out[pos : pos + n] = concat[at : at + n]
        pos += n
    return out


def _alloc(n: int) -> np.ndarray:
    return np.frombuffer(new_buffer(n), dtype=np.uint8)
