"""Full-zip pages read many at a time: a take or a range whose rows fall on several pages.

:mod:`.full_zip` reads one page: the index entries of its rows, then their bytes, then a
scan of the items and the decoding of their values. A take of 100 rows of a long-text
column touches ~15 pages; page by page that is two rounds of requests and a chain of
decoders each. Here the index entries of every page come in one batch of requests, the
rows' bytes in another, one scan covers all rows (the pages share the item layout:
``batch_key``), and values are decoded once, or once per page where the pages'
value encodings differ (an FSST symbol table is per page). A range of rows over several
pages (a scan's chunk) reads one span of index entries and one of rows a page, and its
values are decoded into one array (page by page, each page's strings were copied once
more to join them). ``FullZipPage.take_pages`` is :func:`take_pages`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from ...io import read_packed, read_spans
from .. import kernels
from ..compressive import decode_fixed_values, decode_variable_spans_many
from ..compressive.values import Var
from ..arrowutil import concat_arrays
from .base import EntrySpans, PagePart, Where, pages_where, select_part, values_to_arrow
from .repdef import canonical_defs

__all__ = ["take_pages"]

_DATA, _INDEX = 0, 1


def take_pages(items: list) -> PagePart:
    """Rows of several full-zip pages with one item layout, decoded in one pass.

    ``items``: ``(decoder, page, page-local selection of sorted unique rows, first row of
    the page)``, pages with a repetition index (lists or variable-width values), or pages
    of fixed-size rows (their rows' bytes are found without one). Every index entry and
    every row is checked against its page's buffers before it is read, as a single page's
    read checks them.
    """
    dec0, page0 = items[0][0], items[0][1]
    last = items[-1][1]
    where = Where(lambda: pages_where(page0, last))  # formatted only for a message
    n = len(items)
    if items[0][2].is_range and dec0.has_index:
        return _range_rows(items, where)
    local = [it[2].indices for it in items]
    per = np.fromiter((len(x) for x in local), np.int64, n)
    rows = np.concatenate(local)
    item = np.repeat(np.arange(n), per)
    data_ref = [it[1].ref(_DATA) for it in items]
    data_pos = np.fromiter((r.position for r in data_ref), np.int64, n)
    data_size = np.fromiter((r.size for r in data_ref), np.int64, n)
    source = page0.layout.source
    if not dec0.has_index:
        return _fixed_rows(items, rows, item, per, data_pos, data_size, where)
    starts, lengths = _row_ranges(items, rows, item, data_size, source)
    data = read_packed(source, data_pos[item] + starts, lengths)  # the rows back to back, without the gaps
    page_bytes = np.concatenate([[0], np.cumsum(np.bincount(item, lengths, minlength=n).astype(np.int64))])
    return _decode_rows(items, data, page_bytes, len(rows), where)


def _range_rows(items: list, where) -> PagePart:
    """:func:`take_pages` of row ranges (pages with a repetition index): each page's index
    entries for its rows in one span, checked (inside the item buffer, never going back),
    then its rows' bytes in one span; all pages' spans in one batch of requests each."""
    n = len(items)
    source = items[0][1].layout.source
    lo = np.fromiter((it[2].start for it in items), np.int64, n)
    hi = np.fromiter((it[2].stop for it in items), np.int64, n)
    widths, index_pos = _index_widths(items)
    raw, at = read_spans(source, index_pos + lo * widths, (hi - lo + 1) * widths)
    first = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    for k, (w, a, count) in enumerate(zip(widths.tolist(), at.tolist(), (hi - lo).tolist())):
        bounds = raw[a : a + (count + 1) * w].view(f"<u{w}")
        size = items[k][1].ref(_DATA).size
        if int(bounds[-1]) > size or (count and np.any(bounds[1:] < bounds[:-1])):
            raise items[k][1].error(f"repetition index points outside the {size}-byte item buffer or goes back")
        first[k], end[k] = int(bounds[0]), int(bounds[-1])
    data_pos = np.fromiter((it[1].ref(_DATA).position for it in items), np.int64, n)
    lengths = end - first
    data, at = read_spans(source, data_pos + first, lengths)
    page_bytes = np.concatenate([[0], np.cumsum(lengths)])
    if not np.array_equal(at, page_bytes[:-1]):  # gaps read between the pages' rows
        data = kernels.gather_bytes(data, at, lengths)
    return _decode_rows(items, data, page_bytes, int((hi - lo).sum()), where)


def _decode_rows(items: list, data: np.ndarray, page_bytes: np.ndarray, count: int, where) -> PagePart:
    """The ``count`` rows whose bytes are ``data`` (page k's in ``data[page_bytes[k] :
    page_bytes[k + 1]]``): one scan of their items, their values decoded (:func:`_values`)."""
    dec0 = items[0][0]
    try:
        rep, defs, vstart, vlen = kernels.fullzip_scan(data, dec0.ctrl, dec0.def_bits, dec0.max_visible,
                                                       dec0.fixed, dec0.len_bytes, int(dec0.msg.bits_rep))
    except CorruptFileError as exc:
        raise CorruptFileError(f"{where}: {exc}") from None
    if not dec0.msg.bits_rep:
        rep = None
    if not dec0.def_bits:
        defs = None
    arr = _values(items, data, defs, vstart, vlen, page_bytes, where)
    if defs is not None:
        defs = canonical_defs(defs, dec0.layers, list(dec0.leaf.shape), where)
    n_entries = len(rep) if rep is not None else (len(defs) if defs is not None else len(arr))
    spans = EntrySpans(np.array([0], np.int64), np.array([n_entries], np.int64))
    return select_part(rep, defs, arr, spans, dec0.leaf, count, where)


def _fixed_rows(items: list, rows: np.ndarray, item: np.ndarray, per: np.ndarray, data_pos: np.ndarray,
                data_size: np.ndarray, where: str) -> PagePart:
    """Rows of pages of fixed-size rows (control word + value, no index; a vector column's
    pages): every page's rows in one batch of requests, their values decoded at once where
    the pages' value encodings are equal."""
    dec0, page0 = items[0][0], items[0][1]
    stride = dec0.ctrl + dec0.fixed
    page_rows = np.fromiter((dec.rows for dec, *_ in items), np.int64, len(items))
    bad = np.flatnonzero(data_size != stride * page_rows)
    if len(bad):
        k = int(bad[0])
        raise items[k][1].error(f"{int(data_size[k])} bytes of full-zip items for {int(page_rows[k])} rows of "
                                f"{stride} bytes")
    lengths = np.full(len(rows), stride, np.int64)
    data = read_packed(page0.layout.source, data_pos[item] + rows * stride, lengths)  # the rows back to back
    defs, block = dec0.split_fixed_rows(data[: len(rows) * stride].reshape(len(rows), stride), where)
    encodings = [dec.msg.value_compression for dec, *_ in items]
    if all(e == encodings[0] for e in encodings[1:]):
        values = values_to_arrow(decode_fixed_values(encodings[0], block, page0.where), dec0.leaf.dtype, where)
    else:  # page by page
        cuts = np.concatenate([[0], np.cumsum(per)]).tolist()
        values = concat_arrays([values_to_arrow(decode_fixed_values(e, block[a:b], page.where), dec0.leaf.dtype,
                                                page.where)
                                for e, (_, page, *_), a, b in zip(encodings, items, cuts[:-1], cuts[1:])],
                               dec0.leaf.dtype)
    if defs is not None:
        defs = canonical_defs(defs, dec0.layers, list(dec0.leaf.shape), where)
    n_entries = len(defs) if defs is not None else len(values)
    spans = EntrySpans(np.array([0], np.int64), np.array([n_entries], np.int64))
    return select_part(None, defs, values, spans, dec0.leaf, len(rows), where)


def _row_ranges(items: list, rows: np.ndarray, item: np.ndarray, data_size: np.ndarray, source):
    """(start, length) in its page's item buffer of every row, from the pages' repetition
    indexes: two entries a row, all pages' entries in one batch of requests."""
    widths, index_pos = _index_widths(items)
    w = widths[item]
    raw, at = read_spans(source, index_pos[item] + rows * w, 2 * w)
    bounds = np.empty((len(rows), 2), np.int64)
    for width in np.unique(widths).tolist():
        mine = np.flatnonzero(w == width)
        got = kernels.gather_bytes(raw, at[mine], np.full(len(mine), 2 * width, np.int64))
        bounds[mine] = got.view(f"<u{width}").reshape(-1, 2)
    lengths = bounds[:, 1] - bounds[:, 0]
    bad = np.flatnonzero((bounds[:, 0] < 0) | (lengths < 0) | (bounds[:, 1] > data_size[item]))
    if len(bad):
        k = int(item[bad[0]])
        raise items[k][1].error(f"repetition index points outside the {int(data_size[k])}-byte item buffer "
                                f"or goes back")
    return bounds[:, 0], lengths


def _index_widths(items: list) -> tuple[np.ndarray, np.ndarray]:
    """(bytes an entry, file position) of each page's repetition index, checked: an entry a
    row and one more, of 1, 2, 4 or 8 bytes."""
    n = len(items)
    widths = np.zeros(n, np.int64)
    index_pos = np.zeros(n, np.int64)
    for k, (dec, page, *_) in enumerate(items):
        if len(page.page.buffers) < 2:
            raise page.error("full-zip page has no repetition index")
        ref = page.ref(_INDEX)
        width, rem = divmod(ref.size, dec.rows + 1)
        if rem or width not in (1, 2, 4, 8):
            raise page.error(f"repetition index of {ref.size} bytes for {dec.rows} rows")
        widths[k], index_pos[k] = width, ref.position
    return widths, index_pos


def _values(items: list, data: np.ndarray, defs, vstart: np.ndarray, vlen: np.ndarray, page_bytes: np.ndarray,
            where: str):
    """The visible entries' values as one Arrow array: decoded at once where the pages' value
    encodings are equal, else in runs of pages that one call decodes (FSST pages with their
    own tables: see :func:`decode_variable_spans_many`) or page by page (a page's entries are
    those whose bytes lie in its rows)."""
    dec0 = items[0][0]
    visible = None if defs is None else defs <= dec0.max_visible
    if dec0.fixed >= 0:  # every visible entry has a value of ``fixed`` bytes
        keep = np.flatnonzero(vlen >= 0)
        starts, lengths = vstart[keep], vlen[keep]
    else:  # valid entries have bytes, null ones are empty
        vs, vl = (vstart, vlen) if visible is None else (vstart[visible], vlen[visible])
        has = vl >= 0
        starts, lengths = np.where(has, vs, 0), np.where(has, vl, 0)
    encodings = [dec.msg.value_compression for dec, *_ in items]
    if all(e == encodings[0] for e in encodings[1:]):
        bounds = np.array([0, len(starts)], np.int64)
        encodings, items = encodings[:1], items[:1]
    else:  # entries of page k: their bytes lie in [page_bytes[k], page_bytes[k + 1])
        where_at = np.where(lengths > 0, starts, -1)
        # an empty value belongs to the page of the value before it (any page decodes it alike)
        where_at = np.maximum.accumulate(where_at) if len(where_at) else where_at
        cuts = np.searchsorted(where_at, page_bytes[1:-1], side="left")
        bounds = np.concatenate([[0], cuts, [len(starts)]])
    if dec0.fixed < 0:  # runs of pages in one call each (FSST pages, a symbol table each, too)
        parts = decode_variable_spans_many(encodings, data, starts, lengths, np.diff(bounds), _Wheres(items))
    else:
        parts = []
        for k, (dec, page, *_) in enumerate(items):
            a, b = int(bounds[k]), int(bounds[k + 1])
            if b > a:
                got = kernels.gather_bytes(data, starts[a:b], lengths[a:b])
                parts.append(decode_fixed_values(dec.msg.value_compression, got.reshape(b - a, dec0.fixed),
                                                 page.where))
    dtype = dec0.leaf.dtype
    if not parts:  # no visible values
        return pa.array([], dtype)
    if len(parts) > 1 and all(isinstance(p, Var) for p in parts):  # one Arrow array built, not one a page
        offsets = [parts[0].offsets]
        base = int(parts[0].offsets[-1])
        for p in parts[1:]:
            offsets.append(p.offsets[1:] + base)
            base += int(p.offsets[-1])
        parts = [Var(np.concatenate(offsets), np.concatenate([p.data for p in parts]))]
    if len(parts) == 1:
        return values_to_arrow(parts[0], dtype, where)
    return concat_arrays([values_to_arrow(p, dtype, where) for p in parts], dtype)


class _Wheres:
    """The pages' ``where``, each a :class:`~.base.Where` made into text only for a message
    (a take's 15 FSST pages would otherwise each format theirs for nothing)."""

    __slots__ = ("items",)

    def __init__(self, items: list) -> None:
        self.items = items

    def __getitem__(self, k: int) -> Where:
        page = self.items[k][1]
        return Where(lambda: page.where)

    def __len__(self) -> int:
        return len(self.items)
