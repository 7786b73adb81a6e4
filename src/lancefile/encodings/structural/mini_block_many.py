"""Mini-block pages read many at a time: several pages of one column (a take, a scan over
consecutive pages) or one page each of several columns (a wide table's columns).

:mod:`.mini_block` decodes one page; the functions here gather what many pages need (their
chunk metadata, repetition indexes and dictionaries in one batch of requests, their chunks
in another), decode all chunks in one pass and cut the result back per page or per column,
so a read pays one page's Python instead of one per page. ``MiniBlockPage.take_pages`` and
``MiniBlockPage.read_columns`` are these functions.
"""

from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa

from ...errors import ChecksumError, CorruptFileError
from ...io import read_spans
from .. import kernels
from ..arrowutil import concat_arrays, range_indices, take_array, validate_values
from ..compressive._buffers import as_bytes
from ..compressive.values import Var
from .base import EntrySpans, PagePart, Where, pages_where, relocated, select_part, values_to_arrow
from .mini_block_dicts import MAX_PAGE_ITEMS, dictionary_blocks, look_up
from .mini_block_take import chunks_needed, decode_chunks, take_rows

__all__ = ["KEEP_DICTIONARY_BYTES", "MAX_CHUNK_VALUES", "MAX_PAGE_ITEMS", "PendingChunks", "read_columns",
           "take_pages"]

# A mini-block page's buffers (see :mod:`.mini_block`): chunk metadata, chunks, dictionary;
# the repetition index, when there is one, is the last.
_META, _DATA, _DICT = 0, 1, 2
# A page's decoded dictionary is kept for the reader's life when it is this small.
KEEP_DICTIONARY_BYTES = 1 << 20
# A chunk's value count is a power of two of at most 2**15 (4 bits of log2), the last chunk's
# the remainder; neither can exceed the u16 level count of a chunk.
MAX_CHUNK_VALUES = 1 << 16
# A repetition index entry (rows ended, unfinished row's entries) above this is damage.
_HUGE_COUNT = 1 << 40


def take_pages(items: list) -> PagePart:
    """Rows of several pages with one encoding (``batch_key``), decoded in one pass.

    ``items``: ``(decoder, page, page-local selection, first row of the page in the
    read)``: sorted unique rows (a take) or row ranges (a scan over consecutive pages).
    The chunks every page needs are fetched in one batch of requests and decoded
    together, so a read that touches 20 pages pays one page's Python, not 20.
    """
    dec0, page0 = items[0][0], items[0][1]
    last = items[-1][1]
    where = Where(lambda: pages_where(page0, last))  # formatted only for a message
    table = _chunk_table(items, _prime(items))
    row0 = np.fromiter((it[3] for it in items), np.int64, len(items))
    if not items[0][2].is_range:
        return take_rows(dec0, page0, table, row0, [local.indices for _, _, local, _ in items], where,
                         lambda k, msg: items[k][1].error(msg),
                         lambda idx, value_cuts, entry_cuts, defs: _resolve(items, idx, value_cuts, entry_cuts, defs,
                                                                           where))
    return _range_pages(items, dec0, page0, table, row0, where)


def _range_pages(items: list, dec0, page0, table: _ChunkTable, row0: np.ndarray, where) -> PagePart:
    """:func:`take_pages` of row ranges: every chunk from each page's first wanted row to its
    last, the rows' entries one run from the first page's first row to the last's last."""
    leaf = dec0.leaf
    n = len(items)
    # the rows each page needs: a range's first and last (where its entries start and end;
    # one row when they are the same), page after page
    lo = np.fromiter((local.start for _, _, local, _ in items), np.int64, n)
    hi = np.fromiter((local.stop for _, _, local, _ in items), np.int64, n) - 1
    lens = np.where(hi > lo, 2, 1)
    keep = np.ones(2 * n, bool)
    keep[1::2] = hi > lo
    local_rows = np.column_stack([lo, hi]).ravel()[keep]
    need = chunks_needed(table, local_rows, lens, lambda k, msg: items[k][1].error(msg))
    ids = np.flatnonzero(need)
    item = table.item_of[ids]
    first_of = np.searchsorted(item, np.arange(n))  # every chunk from each page's first needed one to its last
    last_of = np.searchsorted(item, np.arange(n), side="right") - 1
    ids = range_indices(ids[first_of], ids[last_of] - ids[first_of] + 1)
    got = decode_chunks(dec0, page0, table, ids, row0, local_rows, lens, where, take=False)
    rep, defs, entries, values = got.rep, got.defs, got.entries, got.values
    if leaf.max_rep:
        starts, lengths = _range_spans(items, rep, entries, got.first_row, got.brk, np.bincount(got.item, minlength=n),
                                       local_rows + np.repeat(row0, lens), lens, where)
    else:  # entries are values, one per row
        starts, lengths = got.positions, np.ones(len(got.rows), np.int64)
    spans = EntrySpans(starts.astype(np.int64), lengths.astype(np.int64))
    # one run of entries, from the first page's first row to the last's last
    per_item = np.concatenate([[0], np.cumsum(lens)])
    item_start = spans.starts[per_item[:-1]]
    item_end = spans.starts[per_item[1:] - 1] + spans.lengths[per_item[1:] - 1]
    if np.any(item_end[:-1] != item_start[1:]):
        raise CorruptFileError(f"{where}: the pages' level entries do not follow each other")
    a, b = int(item_start[0]), int(item_end[-1])
    spans = EntrySpans(np.array([a], np.int64), np.array([b - a], np.int64))
    n_rows = sum(it[2].count for it in items)
    entry_cuts = np.append(item_start - a, b - a)
    if not dec0.has_dict:
        return select_part(rep, defs, values_to_arrow(values, leaf.dtype, page0.where), spans, leaf, n_rows, where)
    part = select_part(rep, defs, dec0._indices(values, page0), spans, leaf, n_rows, where)
    # each page has its own dictionary: look its rows up in it
    if part.defs is None:  # every entry holds a value
        value_cuts = entry_cuts
    else:
        visible = part.defs <= leaf.max_visible  # counted page by page: a cumsum of every entry costs 10x
        value_cuts = np.zeros(len(entry_cuts), np.int64)
        for k in range(len(items)):
            value_cuts[k + 1] = value_cuts[k] + np.count_nonzero(visible[entry_cuts[k] : entry_cuts[k + 1]])
    part.values = _resolve_loaded(items, part.values.to_numpy(zero_copy_only=False), value_cuts, entry_cuts,
                                  part.defs)
    part.validated = True  # gathered from the checked dictionaries
    return part


def _resolve(items: list, idx: np.ndarray, value_cuts, entry_cuts, defs, where) -> pa.Array:
    """A take's dictionary indices ``idx`` (page k's: ``idx[value_cuts[k]:value_cuts[k + 1]]``)
    as the pages' values: only the items used copied out of the dictionaries when it can be."""
    looked_up = _look_up(items, idx, value_cuts, where)
    if looked_up is not None:
        return looked_up  # the items copied out were checked
    return _resolve_loaded(items, idx, value_cuts, entry_cuts, defs)


def _resolve_loaded(items: list, idx: np.ndarray, value_cuts, entry_cuts, defs) -> pa.Array:
    """Dictionary indices as values, from the pages' loaded (and checked) dictionaries."""
    together = _load_dictionaries(items)
    if together is not None:  # every page's dictionary is a slice of one array: one take
        whole, firsts, sizes = together
        shifted = kernels.page_indices(idx, value_cuts, firsts, sizes) if len(sizes) == len(items) else None
        if shifted is not None:
            return take_array(whole, shifted)
    pieces = []
    for k, (dec, page, _, _) in enumerate(items):
        a, b = int(value_cuts[k]), int(value_cuts[k + 1])
        d = None if defs is None else defs[entry_cuts[k] : entry_cuts[k + 1]]
        pieces.append(dec._resolve_dictionary(page, idx[a:b], d))
    return concat_arrays(pieces, items[0][0].leaf.dtype)


def _prime(items: list) -> list:
    """Fetch, in one batch of requests, what the pages of ``items`` (``(decoder, page,
    ...)``) have not read yet and will: chunk metadata, repetition index, dictionary.

    Dictionaries are handed to their pages (which then find them in memory instead of asking
    for them one by one); the chunk metadata and repetition indexes are returned, as
    ``[(metadata, index) or None]`` per item, for :func:`_parse_chunk_words`."""
    fetched: list = [None] * len(items)
    owners, starts, sizes = [], [], []  # (item, buffer) of each range
    for k, (dec, page, *_) in enumerate(items):
        bufs = page.page.buffers
        n = len(bufs)
        if dec._chunks is None and n >= dec._buffers_needed():  # else its own read says what is wrong
            ref = bufs[_META]
            owners.append((k, _META))
            starts.append(ref.position)
            sizes.append(ref.size)
            if dec.depth:
                ref = bufs[n - 1]
                owners.append((k, -1))
                starts.append(ref.position)
                sizes.append(ref.size)
        if dec.has_dict and n > _DICT and dec.loaded_dictionary(page) is None:
            ref = bufs[_DICT]
            owners.append((k, _DICT))
            starts.append(ref.position)
            sizes.append(ref.size)
    if len(owners) < 2:
        return fetched
    data, at = read_spans(items[0][1].layout.source, starts, sizes)
    for (k, b), a, size in zip(owners, at.tolist(), sizes):
        view = data[a : a + size]
        if b == _DICT:
            page = items[k][1]
            page.prime(page.page.buffers[_DICT], view)
        elif b == _META:
            fetched[k] = [view, None]
        else:
            fetched[k][1] = view
    return fetched


def _load_dictionaries(items: list):
    """Decode the variable-width dictionaries of the pages of ``items`` not loaded yet as
    one Arrow array (built and validated once), each page keeping its slice of it: a take
    touching 70 pages pays for one array, not 70.

    Returns ``(array, first item of each page's dictionary in it, items of each)`` so that
    all lookups can be one ``take`` (the pages loaded before, e.g. the one a scan's
    previous chunk ended in, are appended: dictionaries are small next to their pages),
    or None.
    """
    todo = [(dec, page) for dec, page, *_ in items if dec.loaded_dictionary(page) is None]
    if not todo or pa.types.is_dictionary(todo[0][0].leaf.dtype):
        return None
    dtype = todo[0][0].leaf.dtype
    got = _variable_dictionaries(todo)
    if got is None:
        return None  # fixed-width items, or a page whose own load reports what is wrong
    offsets, data, counts = got
    where = pages_where(todo[0][1], todo[-1][1])
    whole = values_to_arrow(Var(offsets, data), dtype, where)
    try:
        validate_values(whole, where)
    except CorruptFileError:  # name the page whose dictionary is bad
        at = 0
        for (_, page), n in zip(todo, counts):
            validate_values(whole.slice(at, n), f"{page.where}: dictionary")
            at += n
        raise
    at = 0
    for (dec, page), n in zip(todo, counts):
        mine = whole.slice(at, n)
        at += n
        page.cached("dictionary", lambda mine=mine: mine)
        if mine.nbytes <= KEEP_DICTIONARY_BYTES:
            dec._dictionary = mine
    if len(todo) != len(items):
        dicts = [dec.loaded_dictionary(page) for dec, page, *_ in items]
        if any(d is None or d.type != dtype for d in dicts):
            return None
        whole = pa.concat_arrays(dicts)
        counts = [len(d) for d in dicts]
    sizes = np.asarray(counts, np.int64)
    return whole, np.cumsum(sizes) - sizes, sizes


def _variable_dictionaries(todo: list):
    """``(offsets, bytes, items of each page)`` of the pages' variable-width dictionaries
    (``Variable`` blocks, under general compression or not) laid end to end, every page's
    offsets checked in one pass over all of them; None when a page's dictionary is something
    else or fails a check (its own load then says what is wrong, naming the page)."""
    blocks = _dictionary_blocks(todo)
    if blocks is None:
        return None
    out, offs, first, body, n, _ = blocks
    firsts, lasts = offs[first], offs[first + n]
    nbytes = lasts - firsts
    keep = np.ones(len(offs), bool)
    keep[first + n] = False  # a page's last offset is the next one's first
    shift = np.repeat(np.cumsum(nbytes) - nbytes - firsts, n)
    offsets = np.append(offs[keep] + shift, nbytes.sum())
    if np.any(np.diff(offsets) < 0):
        return None
    return offsets, kernels.gather_bytes(out, body + firsts, nbytes), n.tolist()


def _dictionary_blocks(pairs: list, gather: bool = True):
    """:func:`.mini_block_dicts.dictionary_blocks` of the pages of ``pairs`` (``(decoder, page)``,
    one encoding), their dictionaries read through the pages; None when a dictionary is
    something else or fails a check (a page's own load then says what is wrong)."""
    enc = pairs[0][0].msg.dictionary
    if any(dec.msg.dictionary != enc for dec, *_ in pairs[1:]):
        return None
    n = [int(dec.msg.num_dictionary_items) for dec, *_ in pairs]  # uint64 in the file
    try:
        raws = [as_bytes(page.read(_DICT)) for _, page, *_ in pairs]
    except CorruptFileError:
        return None
    sizes = np.fromiter(map(len, raws), np.int64, len(raws))
    return dictionary_blocks(enc, n, np.concatenate(raws), np.cumsum(sizes) - sizes, sizes,
                             lambda: pages_where(pairs[0][1], pairs[-1][1]), lambda k: pairs[k][1].where, gather)


def _look_up(items: list, idx: np.ndarray, value_cuts: np.ndarray, where: str):
    """A take's values from its pages' string dictionaries (``idx[value_cuts[k]:value_cuts[k +
    1]]`` index page k's): :func:`.mini_block_dicts.look_up` unless a page's dictionary is
    loaded already. None when this does not apply or something fails a check: the general
    path then says what is wrong."""
    dtype = items[0][0].leaf.dtype
    if pa.types.is_dictionary(dtype) or any(dec.loaded_dictionary(page) is not None for dec, page, *_ in items):
        return None
    blocks = _dictionary_blocks(items, gather=False)
    return None if blocks is None else look_up(dtype, blocks, idx, value_cuts, where)


def read_columns(items: list) -> list[PagePart]:
    """Rows of one page each of several columns, decoded in one pass.

    ``items``: ``(decoder, page, page-local selection)``, all ranges or all takes, every decoder with the same
    ``batch_key`` (the same encoding but for counts), no lists and no dictionary: a
    wide table's columns. Their chunk metadata comes in one batch of requests and is parsed
    in one pass, their chunks come in another, the chunks each column needs are found for
    all columns at once, and one decode serves them all, so a read of 1,000 columns pays
    one column's Python for the decoding, not 1,000. A part per item, in order.
    """
    dec0, page0 = items[0][0], items[0][1]
    leaf = dec0.leaf
    source = page0.layout.source
    table = _chunk_table(items, _prime(items))
    is_range = items[0][2].is_range
    where = f"{page0.where.split(' column ')[0]} columns {page0.column.index}-{items[-1][1].column.index}"
    key, first, item_of = table.key, table.first, table.item_of
    if is_range:
        lo = np.fromiter((local.start for _, _, local in items), np.int64, len(items))
        hi = np.fromiter((local.stop for _, _, local in items), np.int64, len(items))
        c0 = np.searchsorted(key, table.base + lo, side="right") - 1
        c1 = np.searchsorted(key, table.base + hi - 1, side="right")
        ids = range_indices(c0, c1 - c0)
        counts = table.counts[ids]
        entry0 = np.cumsum(counts) - counts  # each chunk's first entry in the decode
        picks = entry0[np.cumsum(c1 - c0) - (c1 - c0)] + lo - first[c0]  # where each column's rows start
    else:  # the chunks holding the rows, and each row's entry among them
        ids, picks = _take_picks(table, items, where)
        counts = table.counts[ids]
    sizes = table.sizes[ids]
    data, base = read_spans(source, table.data_at[item_of[ids]] + table.offsets[ids], sizes)
    positions = None if is_range else picks
    try:
        _, defs, _, values, taken = dec0._decode(page0, data, base, sizes, counts, positions)
    except CorruptFileError as exc:
        if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
            raise
        raise relocated(exc, page0, where) from None
    arr = values_to_arrow(values, leaf.dtype, where)
    total = int(counts.sum())
    if taken:  # the values (and levels) at the positions, in order
        if len(arr) != len(positions):
            raise CorruptFileError(f"{where}: {len(arr)} values for {len(positions)} rows")
    else:
        if len(arr) != total or (defs is not None and len(defs) != total):
            raise CorruptFileError(f"{where}: {len(arr)} values for {total} level entries")
        if positions is not None:
            arr = arr.take(pa.array(positions))
            defs = None if defs is None else defs[positions]
    parts = []
    at = 0
    for (_, _, local), pick in zip(items, picks.tolist() if is_range else picks):
        a, n = (pick, local.count) if is_range else (at, local.count)
        at += n
        parts.append(PagePart(None, None if defs is None else defs[a : a + n], arr.slice(a, n), n))
    return parts


def _take_picks(table: _ChunkTable, items: list, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(chunk ids, picks)`` of a take over one page each of several columns (see
    :func:`read_columns`). Columns paged alike share one selection, walked once a column by a
    compiled merge (a 10,000-row take of 1,000 columns: 10 million rows, where sorting them to
    find their chunks took 0.9 s); rows that do not ascend are searched for and sorted."""
    locals_ = [local for _, _, local in items]
    shared = all(local is locals_[0] for local in locals_)
    idx = locals_[0].indices if shared else np.concatenate([local.indices for local in locals_])
    lens = np.fromiter((local.count for local in locals_), np.int64, len(locals_))
    try:
        got = kernels.miniblock_take_picks(table.key, table.item_of, table.counts, table.base, idx, lens, shared)
    except ValueError as exc:
        (j,) = exc.args
        k = int(np.searchsorted(np.cumsum(lens), j, side="right"))
        raise CorruptFileError(f"{where}: row {int(locals_[k].indices[j - int(lens[:k].sum())])} of column "
                               f"{items[k][1].column.index}'s page lies past the rows of its chunks") from None
    if got is not None:
        return got
    if shared:
        idx = np.tile(idx, len(locals_))
    owner = np.repeat(table.base, lens)
    chunk_of = np.searchsorted(table.key, owner + idx, side="right") - 1
    ids, inverse = np.unique(chunk_of, return_inverse=True)
    counts = table.counts[ids]
    return ids, (np.cumsum(counts) - counts)[inverse] + idx - table.first[chunk_of]


class PendingChunks:
    """A page's chunks (``(offsets, sizes, counts, completed, partial)``) as a stretch of a
    many-page parse, cut out only when the page asks for them (:meth:`MiniBlockPage.chunks`):
    a take's pages rarely do, and cutting 5 arrays for each of 200 pages cost 0.3 ms."""

    __slots__ = ("arrays", "a", "b")

    def __init__(self, arrays: tuple, a: int, b: int) -> None:
        self.arrays, self.a, self.b = arrays, a, b

    def cut(self) -> tuple:
        a, b = self.a, self.b
        return tuple(None if x is None else x[a:b] for x in self.arrays)


class _ChunkTable:
    """The chunks of several pages (a column's, or one each of several columns), flat: per
    chunk its offset and size in its page's chunk buffer, its values, the rows that end in
    it and the unfinished row it leaves (the repetition index; without lists: its values,
    none), the page's rows before it and its item; per item the page's chunk buffer
    position, its first chunk (``chunk_bounds``) and ``base``, added to a row so that one
    sorted ``key`` (``base + first``) finds any item's rows with one search."""

    __slots__ = ("decoders", "offsets", "sizes", "counts", "ended", "partial", "first", "item_of", "data_at",
                 "chunk_bounds", "base", "key")

    def __init__(self, items: list, parsed: tuple | None = None) -> None:
        """``parsed``: every item's chunks back to back, as :func:`_parse_chunk_words` made
        them (``(offsets, sizes, counts, ended or None, partial or None, chunks per item, chunk
        buffer position per item, rows per item)``),
        or None to gather them from the items' decoders."""
        # weak: the table is kept by its first decoder, and a strong tuple would make a cycle of
        # every decoder of a take, which only the garbage collector could free
        self.decoders = tuple(weakref.ref(dec) for dec, *_ in items)
        if parsed is None:
            chunks = [dec.chunks(page) for dec, page, *_ in items]
            per = np.fromiter((len(c[2]) for c in chunks), np.int64, len(chunks))
            lists = chunks[0][3] is not None
            parsed = tuple(np.concatenate([c[j] for c in chunks]) if j < 3 or lists else None for j in range(5))
            data_at = np.fromiter((page.page.buffers[_DATA].position for _, page, *_ in items), np.int64,
                                  len(items))  # every page has its chunk buffer: checked by chunks()
            parsed += (per, data_at, np.fromiter((dec.rows for dec, *_ in items), np.int64, len(items)))
        self.offsets, self.sizes, self.counts, ended, partial, per, self.data_at, rows = parsed
        self.chunk_bounds = np.concatenate([[0], np.cumsum(per)])
        self.ended = self.counts if ended is None else ended
        self.partial = np.zeros(len(self.counts), np.int64) if partial is None else partial
        self.base = np.cumsum(rows + 1) - (rows + 1)  # item k's rows map to [base[k], base[k] + rows[k]]
        # each chunk's item, the rows of its page ended before it, and base + first
        self.item_of, self.first, self.key = kernels.miniblock_chunk_rows(self.ended, per, rows)


def _chunk_table(items: list, fetched: list) -> _ChunkTable:
    """The pages' :class:`_ChunkTable`: made once for a set of pages (a scan's batches over
    the same pages reuse it), the chunk metadata of pages not parsed yet parsed in one pass
    (``fetched``: what :func:`_prime` read for them)."""
    dec0 = items[0][0]
    cached = getattr(dec0, "_chunk_table", None)
    if cached is not None and len(cached.decoders) == len(items) and all(
            a() is b for a, (b, *_) in zip(cached.decoders, items)):
        return cached
    parsed = _parse_chunk_words(items, fetched)
    if parsed is not None:  # every page parsed just now, back to back: no gathering again
        table = dec0._chunk_table = _ChunkTable(items, parsed)
        return table
    for (dec, page, *_), got in zip(items, fetched):  # pages left to their own parse: hand over their buffers
        if dec._chunks is None and got is not None:
            bufs = page.page.buffers
            page.prime(bufs[_META], got[0])
            if got[1] is not None:
                page.prime(bufs[len(bufs) - 1], got[1])
    table = dec0._chunk_table = _ChunkTable(items)
    return table


def _parse_chunk_words(items: list, fetched: list) -> tuple | None:
    """Parse, all at once, the chunk metadata (and repetition indexes) of the pages of
    ``items`` not parsed yet, from the buffers :func:`_prime` fetched (``fetched``). A page
    whose metadata fails a check, or was not fetched, is left to its own parse, which says
    what is wrong with it. When every item was parsed here (a take on a fresh reader), their
    chunks back to back are returned for :class:`_ChunkTable`; else None."""
    # what is needed of each page, gathered in one pass (a take of a nested file: 70 pages a column)
    todo, metas, index, wanted, data_at, data_size, rows = [], [], [], [], [], [], []
    depth = -1
    for (dec, page, *_), g in zip(items, fetched):
        if dec._chunks is not None or g is None:
            continue
        if dec.depth != depth:
            if depth >= 0:
                return None  # pages of different depths: each parses its own
            depth = dec.depth
        todo.append(dec)
        metas.append(g[0])
        index.append(g[1])
        wanted.append(int(dec.msg.num_items))  # uint64 in the file: checked before numpy holds it
        ref = page.page.buffers[_DATA]
        data_at.append(ref.position)
        data_size.append(ref.size)
        rows.append(dec.rows)
    if len(todo) < 2:
        return None
    got = chunk_words(todo[0].word, depth, todo[0].leaf.max_rep, np.concatenate(metas),
                      np.fromiter(map(len, metas), np.int64, len(metas)), wanted, np.array(data_size, np.int64),
                      np.array(rows, np.int64), np.concatenate(index) if depth else None,
                      np.fromiter(map(len, index), np.int64, len(index)) if depth else None)
    if got is None:
        return None
    ok, arrays, per = got
    bounds = np.concatenate([[0], np.cumsum(per)]).tolist()
    for dec, good, a, b in zip(todo, ok.tolist(), bounds, bounds[1:]):
        if good:
            dec._chunks = PendingChunks(arrays, a, b)
    if len(todo) == len(items) and ok.all():
        return (*arrays, per, np.array(data_at, np.int64), np.array(rows, np.int64))
    return None


def chunk_words(word: int, depth: int, max_rep: int, metas: np.ndarray, nbytes: np.ndarray, num_items: list,
                data_size: np.ndarray, rows: np.ndarray, index: np.ndarray | None, index_sizes: np.ndarray | None):
    """The chunk metadata (and repetition indexes) of several pages of one encoding, parsed and
    checked at once: ``metas`` holds page k's ``nbytes[k]`` bytes of chunk words back to back,
    ``index`` (at ``depth`` > 0) its ``index_sizes[k]`` bytes of repetition index;
    ``num_items``, ``data_size``, ``rows``: each page's values, chunk buffer bytes and rows.
    ``(ok, (offsets, sizes, counts, completed, partial), chunks per page)``, ``ok[k]`` telling
    whether page k passed every check (a page that did not is left to its own parse, which
    says what is wrong); None when the pages cannot be parsed together."""
    if max(num_items) > MAX_PAGE_ITEMS:  # uint64 in the file: checked before numpy holds it
        return None
    num_items = np.array(num_items, np.int64)
    if np.any(nbytes % word):
        return None
    per = nbytes // word
    offsets, sizes, counts = kernels.miniblock_chunk_words_many(metas.view(f"<u{word}"), per, num_items)
    ends = np.cumsum(per)
    last = ends - 1
    ok = (per > 0) | (num_items == 0)
    has = per > 0
    ok[has] &= (counts[last[has]] >= 0) & (counts[last[has]] <= MAX_CHUNK_VALUES)
    ok[has] &= offsets[last[has]] + sizes[last[has]] <= data_size[has]
    completed = partial = None
    if depth:  # the repetition index: per chunk [rows ended, unfinished row's entries, ...]
        stride = depth + 1
        ok &= index_sizes == 8 * stride * per
        if not ok.all():
            if int((8 * stride * per)[~ok].sum()) > len(index):
                return None  # (a forged depth or chunk count: each page's own parse says what is wrong)
            parts = np.split(index, np.cumsum(index_sizes)[:-1])
            index = np.concatenate([x if good else np.zeros(8 * stride * n, np.uint8)
                                    for x, good, n in zip(parts, ok, per.tolist())])
        table = index.view("<u8").reshape(-1, stride)
        completed = table[:, 0].astype(np.int64)
        partial = table[:, 1].astype(np.int64)
        cut = np.concatenate([[0], ends])
        ended = np.concatenate([[0], np.cumsum(completed)])
        ok &= ended[cut[1:]] - ended[cut[:-1]] == rows
        big = (table[:, 0] > _HUGE_COUNT) | (table[:, 1] > _HUGE_COUNT)  # two columns: np.any(axis=1) costs 5x
        if big.any():  # a page with an absurd count is left to its own parse, which says what is wrong
            huge = np.concatenate([[0], np.cumsum(big)])
            ok &= huge[cut[1:]] == huge[cut[:-1]]
    elif not max_rep:
        ok &= num_items == rows  # no lists: a value a row
    else:
        return None  # lists without a repetition index: rows are found page by page
    return ok, (offsets, sizes, counts, completed, partial), per


def _range_spans(items, rep, entries, first_row, brk, chunk_counts, wanted, lens, where):
    """Entry spans of each page's first and last wanted rows, for a range over consecutive
    pages (``wanted``: those rows, from the column's start, ``lens[k]`` of them page k's;
    ``chunk_counts[k]``: page k's decoded chunks, ``brk`` where runs of neighbouring chunks
    begin). A page read whole spans all its decoded entries: its first row's span starts
    there, empty, and its last row's runs to its end. Only pages read in part (the range's
    first and last) are searched for their rows."""
    n_chunks = np.concatenate([[0], np.cumsum(chunk_counts)])
    at = np.concatenate([[0], np.cumsum(entries)])[n_chunks]  # each page's entries in the run
    row_at = np.concatenate([[0], np.cumsum(lens)])
    starts = np.repeat(at[:-1], lens).astype(np.int64)
    lengths = np.zeros(len(wanted), np.int64)
    lengths[row_at[1:] - 1] = at[1:] - at[:-1]
    for k, (dec, _, local, _) in enumerate(items):
        if local.start == 0 and local.stop == dec.rows:  # the last wanted row ends the page
            continue
        lo, hi = int(at[k]), int(at[k + 1])
        c0, c1 = n_chunks[k], n_chunks[k + 1]
        try:
            s, n = kernels.row_spans(rep[lo:hi], dec.leaf.max_rep, entries[c0:c1], first_row[c0:c1], brk[c0:c1],
                                     wanted[row_at[k] : row_at[k + 1]])
        except ValueError as exc:
            raise CorruptFileError(f"{where}: {exc}") from None
        starts[row_at[k] : row_at[k + 1]] = s + lo
        lengths[row_at[k] : row_at[k + 1]] = n
    return starts, lengths
