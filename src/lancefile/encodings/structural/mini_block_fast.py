"""A take of a fresh reader over many mini-block pages of one column, from the page table.

A 100-row take of a column of 155 small pages (pylance cuts a nested column's pages at
~8 KB of data) touches ~70 of them. Through the pages' decoders that is a decoder, a page
object and a dozen attribute reads a page before anything is fetched, ~15 us each. Here
the column's page table (:mod:`lancefile.format.pagetable`) gives every touched page's
buffers at once; the pages' encodings are looked up by their bytes (one template each,
shared with the decoders), their chunk metadata, repetition indexes and dictionaries come
in one batch of requests and are checked as arrays, and the rows are decoded as
:func:`.mini_block_take.take_rows` decodes them for the decoders' way.

It keeps no state: a page that fails any check, or anything out of the usual (a
dictionary-typed field, pages whose encodings differ in more than their counts), sends the
take the decoders' way, which says what is wrong and where.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from ...io import read_spans
from .. import kernels
from ..arrowutil import is_var_binary, take_array, validate_values
from ..compressive import decode_block
from ..page import PageData
from .base import PagePart, Where, values_to_arrow
from .mini_block import MiniBlockPage
from .mini_block_dicts import MAX_PAGE_ITEMS, dictionary_blocks, look_up, look_up_blocks
from .mini_block_many import _ChunkTable, chunk_words
from .mini_block_take import take_rows

__all__ = ["take_fresh"]

_META, _DATA, _DICT = 0, 1, 2


class _Fallback(Exception):
    """Something the decoders' way must look at (and name): the take goes that way."""


def _fallback(k, msg):
    return _Fallback(msg)


def take_fresh(column, sel) -> list[PagePart] | None:
    """Sorted unique rows ``sel`` of a leaf column (``column``: its ``LeafColumn``, none of whose
    pages has a decoder yet), when they lie in two or more mini-block pages: a part for each run
    of neighbouring pages of one encoding (but for counts), in order. None when the take is to
    go through the pages' decoders."""
    pages = column.pages
    if sel.count < 2 or sel.stop > pages.num_rows or sel.stop <= pages.bounds[1]:  # one page: its decoder reads it
        return None
    idx = sel.indices
    starts = pages.starts
    page_of = np.searchsorted(starts, idx, side="right") - 1
    cut = np.flatnonzero(page_of[1:] != page_of[:-1]) + 1
    table = getattr(pages.info.pages, "table", None)  # built now, when first needed
    if not len(cut) or table is None:
        return None
    touched = page_of[np.concatenate([[0], cut])]
    if not table.simple[touched].all():
        return None
    plist = touched.tolist()
    try:
        tmpls = [column.template(p, table.encoding(p)) for p in plist]
    except CorruptFileError:
        return None
    if any(type(t) is not MiniBlockPage or t.batch_key is None or t.plain_width for t in tmpls):
        return None
    runs = [0]  # where each run of pages sharing a batch_key starts
    for k in range(1, len(tmpls)):
        a, b = tmpls[k - 1].batch_key, tmpls[k].batch_key
        if a is not b and a != b:
            runs.append(k)
    runs.append(len(tmpls))
    if tmpls[0].has_dict and pa.types.is_dictionary(column.leaf.dtype):
        return None
    first, nbuf = table.first[touched], table.nbuf[touched]
    if any(int(nbuf[runs[r]:runs[r + 1]].min()) < tmpls[runs[r]]._buffers_needed() for r in range(len(runs) - 1)):
        return None
    try:
        return _take(column, tmpls, touched, plist, runs, _split(idx - starts[page_of], cut), first, nbuf)
    except (_Fallback, CorruptFileError):
        return None


def _split(values: np.ndarray, cut: np.ndarray) -> list[np.ndarray]:
    """``np.split(values, cut)`` by slicing (a take's rows over 50 pages: np.split's Python
    costs 4 us a piece)."""
    bounds = [0, *cut.tolist(), len(values)]
    return [values[a:b] for a, b in zip(bounds, bounds[1:])]


def _take(column, tmpls, touched, plist, runs, wanted, first, nbuf) -> list[PagePart]:
    """:func:`take_fresh` once the pages are known: every page's chunk metadata, repetition
    index and dictionary in one batch of requests, then each run of pages decoded together."""
    pages = column.pages
    table = pages.info.pages.table
    n = len(plist)
    pos, size = table.positions, table.sizes
    deep = np.fromiter((t.depth > 0 for t in tmpls), bool, n)
    dicts = np.fromiter((t.has_dict for t in tmpls), bool, n)
    index_i, dict_i = (first + nbuf - 1)[deep], (first + _DICT)[dicts]  # the last buffer; buffer 2
    got = np.concatenate([first, index_i, dict_i])
    buf, at = read_spans(pages.layout.source, pos[got], size[got])
    index_at, dict_at = np.zeros(n, np.int64), np.zeros(n, np.int64)
    index_at[deep] = at[n : n + len(index_i)]
    dict_at[dicts] = at[n + len(index_i) :]
    rows, starts = table.lengths[touched], pages.starts[touched]
    parts = []
    for a, b in zip(runs, runs[1:]):
        parts.append(_take_run(column, tmpls[a:b], plist[a:b], wanted[a:b], first[a:b], nbuf[a:b], rows[a:b],
                               starts[a:b], buf, at[a:b], index_at[a:b], dict_at[a:b]))
    return parts


def _take_run(column, tmpls, plist, wanted, first, nbuf, rows, row0, buf, meta_at, index_at, dict_at) -> PagePart:
    """The rows of a run of pages of one encoding (but for counts), their buffers read."""
    pages = column.pages
    table = pages.info.pages.table
    pos, size = table.positions, table.sizes
    t0 = tmpls[0]
    meta_sizes = size[first]
    index = index_sizes = None
    if t0.depth:
        index_sizes = size[first + nbuf - 1]
        index = kernels.gather_bytes(buf, index_at, index_sizes)
    parsed = chunk_words(t0.word, t0.depth, column.leaf.max_rep, kernels.gather_bytes(buf, meta_at, meta_sizes),
                         meta_sizes, [t.msg.num_items for t in tmpls], size[first + _DATA], rows, index, index_sizes)
    if parsed is None or not parsed[0].all():
        raise _Fallback("chunk metadata the pages' own parse must read")
    _, arrays, per = parsed
    chunks = _ChunkTable((), (*arrays, per, pos[first + _DATA], rows))
    p0, p1 = plist[0], plist[-1]
    layout = pages.layout
    page0 = PageData(layout, pages.info, p0, pages.label)
    dec0 = t0.for_page(int(rows[0]), pages.where(p0))
    where = Where(lambda: f"{layout.path}: column {pages.index} pages {p0}-{p1}"
                          f"{' (' + pages.label + ')' if pages.label else ''}")
    resolve = None
    if t0.has_dict:

        def resolve(indices, value_cuts, entry_cuts, defs):
            counts = [t.msg.num_dictionary_items for t in tmpls]
            dict_sizes = size[first + _DICT]
            if is_var_binary(column.leaf.dtype):
                values = look_up_blocks(column.leaf.dtype, t0.msg.dictionary, counts, buf, dict_at, dict_sizes,
                                        indices, value_cuts, where)
                if values is not None:
                    return values
            blocks = dictionary_blocks(t0.msg.dictionary, counts, buf, dict_at, dict_sizes, lambda: str(where),
                                       lambda k: pages.where(plist[k]), gather=False)
            if blocks is not None:  # strings: only the items used are copied out
                values = look_up(column.leaf.dtype, blocks, indices, value_cuts, where)
            else:  # fixed-width items (or blocks out of the usual form): every page's decoded
                values = _fixed_look_up(column.leaf.dtype, t0.msg.dictionary, counts, buf, dict_at, dict_sizes,
                                        indices, value_cuts, lambda k: pages.where(plist[k]))
            if values is None:
                raise _Fallback("a dictionary the pages' own loads must read")
            return values

    return take_rows(dec0, page0, chunks, row0, wanted, where, _fallback, resolve)


def _fixed_look_up(dtype, enc, counts, buf, dict_at, dict_sizes, indices, value_cuts, page_where):
    """Dictionary indices as values when the pages' dictionaries are not string blocks (an
    integer column's): each page's dictionary decoded and checked, all laid end to end, one
    take. None when an index lies outside its page's dictionary (garbage under a null, or
    damage: the decoders' way tells which)."""
    if max(counts) > MAX_PAGE_ITEMS:
        return None
    dicts = []
    for k, (a, z, n) in enumerate(zip(dict_at.tolist(), dict_sizes.tolist(), counts)):
        where = page_where(k)
        items = values_to_arrow(decode_block(enc, buf[a : a + z], int(n), where), dtype, where)
        dicts.append(validate_values(items, f"{where}: dictionary"))
    sizes = np.fromiter(map(len, dicts), np.int64, len(dicts))
    at = kernels.page_indices(indices, value_cuts, np.cumsum(sizes) - sizes, sizes)
    return None if at is None else take_array(pa.concat_arrays(dicts), at)
