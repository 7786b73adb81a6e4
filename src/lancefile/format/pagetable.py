"""A column's page table as arrays: one compiled pass over the ``ColumnMetadata`` bytes.

Reading a page's buffers, row count and encoding through the protobuf objects costs ~2.4 us
a page (a Python wrapper for every field); a take of a nested file touches 220 pages. The
same facts come out of the serialized message at ~20 ns a page: :func:`page_table` walks the
wire format of ``ColumnMetadata.pages`` once and returns, per page, its rows, priority,
buffers (flat arrays) and where its encoding's bytes lie in the message.

The protobuf parse of the message still runs first (it checks the wire format); this pass
only reads what that parse accepted. A page is *simple* when its fields have the usual form:
one ``Encoding`` holding one ``direct`` encoding, as many buffer offsets as sizes, at most
64 buffers, every buffer inside the file. Any other page keeps the protobuf path, which says
what is wrong with it; a message this pass cannot walk gives None and every page keeps it.

Example::

    >>> from lancefile._proto import file2_pb2
    >>> page = file2_pb2.ColumnMetadata.Page(buffer_offsets=[0, 64], buffer_sizes=[10, 20], length=7)
    >>> page.encoding.direct.encoding = b"xyz"
    >>> raw = file2_pb2.ColumnMetadata(pages=[page]).SerializeToString()
    >>> t = page_table(raw, 1, limit=100)
    >>> t.lengths.tolist(), t.buffers(0), t.encoding(0)
    ([7], [(0, 10), (64, 20)], b'xyz')
"""

from __future__ import annotations

import numpy as np

from .._jit import _Kernel, _helper

__all__ = ["PageTable", "page_table", "ColumnTables", "column_tables", "span_ids", "MAX_SIMPLE_BUFFERS"]

# more buffers than this in a page: the protobuf path (which checks them with numpy)
MAX_SIMPLE_BUFFERS = 64
_U62 = 1 << 62


@_helper
def _varint(raw, pos, end):
    """(value, position after it), or (0, -1) when no whole varint starts at ``pos``."""
    value = np.uint64(0)
    shift = 0
    while pos < end and shift < 64:
        b = raw[pos]
        pos += 1
        value |= np.uint64(b & 0x7F) << np.uint64(shift)
        if b < 0x80:
            return value, pos
        shift += 7
    return np.uint64(0), -1


@_helper
def _skip(raw, pos, end, wire):
    """The position after a field's value of wire type ``wire``; -1 when it cannot be skipped."""
    if wire == 0:
        _, pos = _varint(raw, pos, end)
        return pos
    if wire == 1:
        return pos + 8 if pos + 8 <= end else -1
    if wire == 5:
        return pos + 4 if pos + 4 <= end else -1
    if wire == 2:
        n, pos = _varint(raw, pos, end)
        if pos < 0 or n > np.uint64(end - pos):
            return -1
        return pos + np.int64(n)
    return -1  # groups (3, 4) and unknown wire types


@_helper
def _direct_span(raw, pos, end):
    """``Encoding`` at [pos, end): (lo, hi) of the one ``direct.encoding`` (field 2, then 1), or (-1, -1) when it
    is not exactly one ``direct`` holding exactly one ``encoding`` and nothing else."""
    lo = -1
    hi = -1
    seen = 0
    while pos < end:
        tag, pos = _varint(raw, pos, end)
        if pos < 0:
            return -1, -1
        field = tag >> np.uint64(3)
        wire = np.int64(tag & np.uint64(7))
        if field != 2 or wire != 2:
            return -1, -1  # indirect (1), none (3) or an unknown field: the protobuf path
        n, pos = _varint(raw, pos, end)
        if pos < 0 or n > np.uint64(end - pos):
            return -1, -1
        d_end = pos + np.int64(n)
        seen += 1
        inner = 0
        while pos < d_end:  # DirectEncoding
            tag, pos = _varint(raw, pos, d_end)
            if pos < 0:
                return -1, -1
            if tag >> np.uint64(3) == 1 and tag & np.uint64(7) == 2:
                m, pos = _varint(raw, pos, d_end)
                if pos < 0 or m > np.uint64(d_end - pos):
                    return -1, -1
                lo = pos
                hi = pos + np.int64(m)
                pos = hi
                inner += 1
            else:
                pos = _skip(raw, pos, d_end, np.int64(tag & np.uint64(7)))
                if pos < 0:
                    return -1, -1
        if inner != 1:
            return -1, -1
    if seen != 1:
        return -1, -1
    return lo, hi


@_helper
def _walk_column(raw, pos, end, limit, p, n_off, lengths, prios, first, nbuf, enc_lo, enc_hi, simple, offs, sizes):
    # Walks one ColumnMetadata message at raw[pos:end], filling page slots from ``p`` and
    # buffer slots from ``n_off``. Returns (pages seen, next buffer slot, the column's own
    # encoding span (lo, hi): (-1, -1) when it has none, (-2, -2) when it is not one plain
    # direct encoding, and how many column buffer offsets and sizes it lists), pages seen
    # being -1 when the message cannot be walked (or has more pages than the arrays).
    # Buffers of page q: offs/sizes[first[q] : first[q] + nbuf[q]].
    n_pages = lengths.shape[0]
    cap = offs.shape[0]
    p0 = p
    col_lo = -1
    col_hi = -1
    col_bufs = 0
    while pos < end:
        tag, pos = _varint(raw, pos, end)
        if pos < 0:
            return -1, n_off, col_lo, col_hi, col_bufs
        wire = np.int64(tag & np.uint64(7))
        field = tag >> np.uint64(3)
        if field == 1 and wire == 2:  # the column's Encoding
            n, pos = _varint(raw, pos, end)
            if pos < 0 or n > np.uint64(end - pos):
                return -1, n_off, col_lo, col_hi, col_bufs
            e_end = pos + np.int64(n)
            lo, hi = _direct_span(raw, pos, e_end)
            if col_lo != -1 or lo < 0:
                col_lo = -2
                col_hi = -2
            else:
                col_lo = lo
                col_hi = hi
            pos = e_end
            continue
        if field == 3 or field == 4:  # the column's buffer offsets and sizes
            col_bufs += 1
        if field != 2 or wire != 2:
            pos = _skip(raw, pos, end, wire)
            if pos < 0:
                return -1, n_off, col_lo, col_hi, col_bufs
            continue
        n, pos = _varint(raw, pos, end)
        if pos < 0 or n > np.uint64(end - pos) or p >= n_pages:
            return -1, n_off, col_lo, col_hi, col_bufs
        p_end = pos + np.int64(n)
        first[p] = n_off
        n_size = n_off
        lengths[p] = 0
        prios[p] = 0
        encodings = 0
        lo = -1
        hi = -1
        ok = True
        while pos < p_end:
            tag, pos = _varint(raw, pos, p_end)
            if pos < 0:
                return -1, n_off, col_lo, col_hi, col_bufs
            field = tag >> np.uint64(3)
            wire = np.int64(tag & np.uint64(7))
            if (field == 1 or field == 2) and (wire == 0 or wire == 2):
                stop = p_end
                if wire == 2:
                    m, pos = _varint(raw, pos, p_end)
                    if pos < 0 or m > np.uint64(p_end - pos):
                        return -1, n_off, col_lo, col_hi, col_bufs
                    stop = pos + np.int64(m)
                while True:
                    if wire == 2 and pos >= stop:
                        break
                    v, pos = _varint(raw, pos, stop)
                    if pos < 0:
                        return -1, n_off, col_lo, col_hi, col_bufs
                    if field == 1:
                        if n_off >= cap:
                            return -1, n_off, col_lo, col_hi, col_bufs
                        offs[n_off] = v
                        n_off += 1
                    else:
                        if n_size >= cap:
                            return -1, n_off, col_lo, col_hi, col_bufs
                        sizes[n_size] = v
                        n_size += 1
                    if wire == 0:
                        break
            elif field == 3 and wire == 0:
                v, pos = _varint(raw, pos, p_end)
                if pos < 0:
                    return -1, n_off, col_lo, col_hi, col_bufs
                lengths[p] = np.int64(v) if v < np.uint64(_U62) else -1  # -1: the protobuf path's
            elif field == 5 and wire == 0:
                v, pos = _varint(raw, pos, p_end)
                if pos < 0:
                    return -1, n_off, col_lo, col_hi, col_bufs
                prios[p] = np.int64(v) if v < np.uint64(_U62) else -1
            elif field == 4 and wire == 2:
                m, pos = _varint(raw, pos, p_end)
                if pos < 0 or m > np.uint64(p_end - pos):
                    return -1, n_off, col_lo, col_hi, col_bufs
                e_end = pos + np.int64(m)
                lo, hi = _direct_span(raw, pos, e_end)
                encodings += 1
                pos = e_end
            else:
                pos = _skip(raw, pos, p_end, wire)
                if pos < 0:
                    return -1, n_off, col_lo, col_hi, col_bufs
        if pos != p_end:
            return -1, n_off, col_lo, col_hi, col_bufs
        count = n_off - first[p]
        if (n_size - first[p] != count or count > MAX_SIMPLE_BUFFERS or encodings != 1 or lo < 0
                or lengths[p] < 0 or prios[p] < 0):
            ok = False
        top = max(n_off, n_size)  # unequal lists (not simple): padded, so that pages stay back to back
        for j in range(n_off, top):
            offs[j] = 0
        for j in range(n_size, top):
            sizes[j] = 0
        n_off = top
        count = top - first[p]
        if ok:
            for j in range(first[p], first[p] + count):
                a = offs[j]
                s = sizes[j]
                if a > np.uint64(limit) or s > np.uint64(limit) - a:
                    ok = False
                    break
        nbuf[p] = count
        enc_lo[p] = lo
        enc_hi[p] = hi
        simple[p] = ok
        p += 1
    return p - p0, n_off, col_lo, col_hi, col_bufs


@_Kernel
def _k_page_table(raw, limit, lengths, prios, first, nbuf, enc_lo, enc_hi, simple, offs, sizes):
    # The page table of one ColumnMetadata message (all of ``raw``): the number of pages seen,
    # or -1 when the message cannot be walked (or has more pages than the arrays).
    got = _walk_column(raw, 0, raw.shape[0], limit, 0, 0, lengths, prios, first, nbuf, enc_lo, enc_hi, simple,
                       offs, sizes)
    return got[0]


@_Kernel
def _k_column_tables(raw, starts, ends, limit, col_first, col_pages, col_lo, col_hi, col_bufs, lengths, prios, first,
                     nbuf, enc_lo, enc_hi, simple, offs, sizes):
    # The page tables of many ColumnMetadata messages (message c: raw[starts[c]:ends[c]]) in
    # shared arrays: column c's pages are slots col_first[c] : col_first[c] + col_pages[c]
    # (col_pages[c] = -1: not walked). Returns the page slots used.
    p = 0
    n_off = 0
    for c in range(starts.shape[0]):
        got, n_next, lo, hi, bufs = _walk_column(raw, starts[c], ends[c], limit, p, n_off, lengths, prios, first,
                                                 nbuf, enc_lo, enc_hi, simple, offs, sizes)
        col_first[c] = p
        col_pages[c] = got
        col_lo[c] = lo
        col_hi[c] = hi
        col_bufs[c] = bufs
        if got > 0:
            p += got
            n_off = n_next
    return p


class PageTable:
    """Every page of one column, as arrays (see the module's description).

    ``lengths``: rows per page (int64; -1 for a count of 2**62 or more, which only the
    protobuf path gives). ``simple``: whether page ``i``'s buffers and
    encoding below are the page's (else only its length is, and the protobuf path reads it).
    ``first``/``nbuf``: page ``i``'s buffers are ``positions[first[i] : first[i] + nbuf[i]]``
    and ``sizes[...]`` (int64, inside the file for simple pages; other pages' are not theirs).
    """

    __slots__ = ("raw", "lengths", "priorities", "first", "nbuf", "positions", "sizes", "simple", "_lo", "_hi",
                 "_bufs")

    def __init__(self, raw: bytes, lengths, priorities, first, nbuf, positions, sizes, simple, lo, hi) -> None:
        self.raw = raw
        self.lengths, self.priorities, self.first, self.nbuf = lengths, priorities, first, nbuf
        self.positions, self.sizes, self.simple = positions, sizes, simple
        self._lo, self._hi = lo.tolist(), hi.tolist()
        self._bufs = None

    def __len__(self) -> int:
        return len(self.lengths)

    def encoding(self, i: int) -> bytes:
        """Page ``i``'s ``direct.encoding`` bytes (a simple page's)."""
        return self.raw[self._lo[i] : self._hi[i]]

    def buffers(self, i: int) -> list[tuple[int, int]]:
        """Page ``i``'s ``(position, size)`` pairs (a simple page's), as Python ints."""
        got = self._bufs
        if got is None:
            got = self._bufs = (self.first.tolist(), self.nbuf.tolist(), self.positions.tolist(), self.sizes.tolist())
        first, nbuf, pos, sizes = got
        a = first[i]
        b = a + nbuf[i]
        return list(zip(pos[a:b], sizes[a:b]))


def page_table(raw, n_pages: int, limit: int) -> PageTable | None:
    """The page table of a serialized ``ColumnMetadata`` (``raw``) that protobuf parsed into
    ``n_pages`` pages, buffers checked against ``limit`` (the file's size); None when the
    message is not walked here (its pages then take the protobuf path)."""
    raw = bytes(raw)
    cols = np.empty((6, n_pages), np.int64)
    lengths, prios, first, nbuf, lo, hi = cols
    simple = np.empty(n_pages, np.bool_)
    cap = len(raw) // 2 + 1  # a buffer takes an offset and a size of a byte or more
    flat = np.empty((2, cap), np.uint64)
    got = _k_page_table(np.frombuffer(raw, np.uint8), np.int64(limit), lengths, prios, first, nbuf, lo, hi, simple,
                        flat[0], flat[1])
    if got != n_pages:
        return None
    total = int(first[-1] + nbuf[-1]) if n_pages else 0
    # as int64: a simple page's buffers lie inside the file (< 2**63); others' are not used
    positions, sizes = flat[:, :total].view(np.int64)
    return PageTable(raw, lengths, prios, first, nbuf, positions, sizes, simple, lo, hi)


@_Kernel
def _k_span_hashes(raw, lo, hi, out):
    # out[i]: a 64-bit FNV-1a hash of raw[lo[i]:hi[i]] and its length (0 where lo[i] < 0)
    for i in range(lo.shape[0]):
        a = lo[i]
        if a < 0:
            out[i] = 0
            continue
        h = np.uint64(14695981039346656037)
        for k in range(a, hi[i]):
            h = (h ^ np.uint64(raw[k])) * np.uint64(1099511628211)
        out[i] = (h ^ np.uint64(hi[i] - a)) * np.uint64(1099511628211)


@_Kernel
def _k_spans_equal(raw, lo, hi, which, other, ok):
    # ok[j]: whether span which[j] holds the same bytes as span other[j]
    for j in range(which.shape[0]):
        a = lo[which[j]]
        b = lo[other[j]]
        n = hi[which[j]] - a
        same = hi[other[j]] - b == n
        k = 0
        while same and k < n:
            if raw[a + k] != raw[b + k]:
                same = False
            k += 1
        ok[j] = same


def span_ids(raw: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, reps)``: equal ids for spans ``raw[lo[i]:hi[i]]`` that hold equal bytes (numbered
    by first appearance; -1 where ``lo[i] < 0``), and the index of each id's first span.

    Spans are grouped by a hash (time linear in their bytes: a column of a thousand pages
    whose encodings all differ compared each with each took seconds), and every span is then
    compared with its group's first, so that spans whose hashes collide without their bytes
    being equal get ids of their own.

    Example::

        >>> raw = np.frombuffer(b"abcabcxy", np.uint8)
        >>> ids, reps = span_ids(raw, np.array([0, 3, 6, -1]), np.array([3, 6, 8, -1]))
        >>> ids.tolist(), reps.tolist()
        ([0, 0, 1, -1], [0, 2])
    """
    ids = np.full(len(lo), -1, np.int64)
    valid = np.flatnonzero(lo >= 0)
    if not len(valid):
        return ids, np.zeros(0, np.int64)
    hashes = np.empty(len(lo), np.uint64)
    _k_span_hashes(raw, lo, hi, hashes)
    _, first, inverse = np.unique(hashes[valid], return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # groups numbered by their first span's place
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    group = rank[inverse.reshape(-1)]
    reps = valid[first[order]]
    ok = np.empty(len(valid), np.bool_)
    _k_spans_equal(raw, lo, hi, valid, reps[group], ok)
    bad = np.flatnonzero(~ok)
    if len(bad):  # hashes alike, bytes not: ids of their own
        group[bad] = len(reps) + np.arange(len(bad))
        reps = np.concatenate([reps, valid[bad]])
    ids[valid] = group
    return ids, reps


class ColumnTables:
    """The page tables of many columns at once (:func:`column_tables`), in shared arrays.

    Column ``c`` (in the order asked for; its message is ``raw[starts[c]:ends[c]]``) has
    ``pages[c]`` pages (-1: its message was not walked here), in slots ``first_page[c]`` on;
    ``column_encoding_ids[c]`` names its own encoding (-1: none; -2: not one plain direct
    encoding; equal ids: equal bytes, which ``column_encoding(id)`` gives) and
    ``has_buffers[c]`` says it lists buffers of its own. Per page slot ``q``: ``lengths``,
    ``priorities``, ``simple``, ``first``/``nbuf`` (its buffers in ``positions``/``sizes``) and
    ``encoding_ids`` (likewise, ``encoding_bytes(id)``).
    """

    __slots__ = ("raw", "starts", "ends", "first_page", "pages", "has_buffers", "column_encoding_ids", "lengths",
                 "priorities", "first", "nbuf", "positions", "sizes", "simple", "encoding_ids", "_col_lo", "_col_hi",
                 "_col_reps", "_enc_lo", "_enc_hi", "_reps")

    def column_encoding(self, i: int) -> bytes:
        """The bytes of distinct column encoding ``i`` (see ``column_encoding_ids``)."""
        c = int(self._col_reps[i])
        return bytes(self.raw[self._col_lo[c] : self._col_hi[c]])

    def encoding_bytes(self, i: int) -> bytes:
        """The bytes of distinct page encoding ``i`` (see ``encoding_ids``)."""
        q = int(self._reps[i])
        return bytes(self.raw[self._enc_lo[q] : self._enc_hi[q]])


def column_tables(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray, limit: int) -> ColumnTables:
    """The page tables of the ``ColumnMetadata`` messages ``raw[starts[c]:ends[c]]`` (uint8
    array; int64 bounds inside it), walked by one compiled pass; buffers are checked against
    ``limit`` (the file's size). What the pass cannot walk is marked for the protobuf path."""
    size = int((ends - starts).sum())
    worst = max(1, size // 2 + 1)  # a page takes two bytes or more, a buffer as many
    # First with room for what real files hold (a page in 16 bytes or more, a buffer in 4: ~7x
    # the metadata's bytes); a column that did not fit is walked again with room for the worst.
    page_slots, buffer_slots = min(worst, size // 16 + 64), min(worst, size // 4 + 64)
    t = _walk_tables(raw, starts, ends, limit, page_slots, buffer_slots)
    if (t.pages < 0).any() and min(page_slots, buffer_slots) < worst:
        t = _walk_tables(raw, starts, ends, limit, worst, worst)
    t.column_encoding_ids, t._col_reps = span_ids(raw, t._col_lo, t._col_hi)
    t.column_encoding_ids[t._col_lo == -2] = -2
    t.encoding_ids, t._reps = span_ids(raw, t._enc_lo, t._enc_hi)
    return t


def _walk_tables(raw, starts, ends, limit: int, page_slots: int, buffer_slots: int) -> ColumnTables:
    """:func:`column_tables`' walk with room for ``page_slots`` pages and ``buffer_slots``
    buffers (a column that does not fit is marked not walked, as one that cannot be)."""
    k = len(starts)
    t = ColumnTables()
    t.raw, t.starts, t.ends = raw, starts, ends
    cols = np.empty((5, k), np.int64)
    t.first_page, t.pages, t._col_lo, t._col_hi, bufs = cols
    per_page = np.empty((6, page_slots), np.int64)
    t.lengths, t.priorities, t.first, t.nbuf, t._enc_lo, t._enc_hi = per_page
    t.simple = np.empty(page_slots, np.bool_)
    flat = np.empty((2, buffer_slots), np.uint64)
    used = _k_column_tables(raw, starts, ends, np.int64(limit), t.first_page, t.pages, t._col_lo, t._col_hi, bufs,
                            t.lengths, t.priorities, t.first, t.nbuf, t._enc_lo, t._enc_hi, t.simple, flat[0], flat[1])
    # kept: the slots used, not the room made for them (readers keep the tables)
    total = int(t.first[used - 1] + t.nbuf[used - 1]) if used else 0
    t.lengths, t.priorities, t.first, t.nbuf, t._enc_lo, t._enc_hi = per_page[:, :used].copy()
    t.simple = t.simple[:used].copy()
    t.has_buffers = bufs > 0
    # as int64: a simple page's buffers lie inside the file (< 2**63); others' are not used
    t.positions, t.sizes = flat[:, :total].copy().view(np.int64)
    return t
