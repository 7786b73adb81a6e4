"""Whole pages fetched ahead of a scan's decoding, for sources where a request is a round trip.

A scan decodes rows in chunks (:class:`lancefile.LanceFileReader`); the decoders then read each
page's buffers one after another (a mini-block page's small metadata buffer, then its values),
which on an object store costs a round trip each. :func:`prefetch_pages` hands a source that
can :meth:`~lancefile.objectstore.ArrowFsSource.prefetch` the byte ranges of every page of
the projected columns that holds rows of the chunk, before the decoders start: they are
fetched coalesced and in parallel, and the decoders' reads find them in memory, as the
reference's scheduler does. Ranges are widened to whole 16 KiB checksum blocks, which is what
checked reads ask for. The fetched pages live in the scan's page cache (``holder``) for the
chunk being decoded and the one read ahead, and go with it when the scan ends. Local sources
have no ``prefetch`` and pay nothing.

Example::

    >>> import pyarrow as pa, lancefile
    >>> lancefile.write_table(pa.table({"a": list(range(100))}), "memory://prefetch-doc/a.lance")
    >>> r = lancefile.LanceFileReader("memory://prefetch-doc/a.lance")
    >>> ranges = page_ranges(r._layout, [0], 0, 100)   # the page's buffers: (offset, length)
    >>> len(ranges) > 0 and all(n > 0 for _, n in ranges)
    True
"""

from __future__ import annotations

import numpy as np

from .format.checksums import BLOCK_BYTES

__all__ = ["prefetch_pages", "page_ranges"]


def page_ranges(layout, columns, start: int, stop: int) -> list[tuple[int, int]]:
    """``(offset, length)`` of the buffers of the pages of ``columns`` holding rows [start, stop).

    Columns whose pages do not count rows (2.0 nested values) are left out.
    """
    out = []
    for c in columns:
        info = layout.column(c)
        starts = info.page_starts
        if not len(info.pages) or int(starts[-1]) != layout.num_rows:
            continue
        p0 = max(int(np.searchsorted(starts, start, side="right")) - 1, 0)
        p1 = min(int(np.searchsorted(starts, stop, side="left")), len(info.pages))
        for page in info.pages[p0:p1]:
            out.extend((b.position, b.size) for b in page.buffers if b.size)
    return out


# the key of a scan's page cache under which the prefetched pages of its last chunks are kept
HOLDER_KEY = "lancefile.prefetch"


def prefetch_pages(source, layout, columns, start: int, stop: int, holder: dict) -> None:
    """Ask ``source`` to fetch the pages of rows [start, stop) ahead, if it can.

    ``columns`` is a sequence of column indices, or a function giving one (called only when
    the source prefetches). ``holder`` (a scan's page cache) keeps the pages of the last two
    calls alive: the chunk being decoded and the one read ahead.
    """
    prefetch = getattr(source, "prefetch", None)
    if prefetch is None or stop <= start:
        return
    cols = columns() if callable(columns) else columns
    ranges = page_ranges(layout, cols, start, stop)
    if not ranges:
        return
    size = source.size
    b = BLOCK_BYTES
    fetched = prefetch([((o // b) * b, min(size, -(-(o + n) // b) * b) - (o // b) * b) for o, n in ranges])
    held = holder.setdefault(HOLDER_KEY, [])
    held.append(fetched)
    del held[:-2]
