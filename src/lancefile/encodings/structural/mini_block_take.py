"""A take's rows out of several mini-block pages of one column, once their chunk table is known.

:func:`take_rows` is the second half of a many-page take: which chunks hold the rows, one
batch of requests for them, one decode, the rows' level entries and values cut out, and
dictionary indices resolved. Both ways of getting there share it: the pages' decoders
(:func:`.mini_block_many.take_pages`) and the column's page table arrays
(:mod:`.mini_block_fast`, a fresh reader's take).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...errors import ChecksumError, CorruptFileError
from ...io import read_spans
from .. import kernels
from .base import EntrySpans, PagePart, relocated, select_part, values_to_arrow
from .repdef import row_start_mismatch

__all__ = ["Decoded", "chunks_needed", "decode_chunks", "take_rows"]


class Decoded(NamedTuple):
    """What :func:`decode_chunks` gives: per chunk its page (``item``), whether it starts a run
    of neighbouring chunks of one page (``brk``; lists only, else None) and its first row (from the column's start); per wanted row its row in the column and, without lists, its entry (``positions``);
    the decoded levels, entries per chunk and values; whether they were cut to the rows."""

    item: np.ndarray
    brk: np.ndarray | None
    first_row: np.ndarray
    rows: np.ndarray
    positions: np.ndarray | None
    rep: np.ndarray | None
    defs: np.ndarray | None
    entries: np.ndarray
    values: object
    taken: bool


def chunks_needed(table, local_rows: np.ndarray, lens: np.ndarray, page_error) -> np.ndarray:
    """Which chunks of ``table`` (a ``_ChunkTable``) hold the rows: item k's page-local rows are
    the k-th stretch (``lens[k]`` long) of ``local_rows``. ``page_error(k, message)`` makes
    the error naming item k's page."""
    try:
        return kernels.rep_index_chunks_many(table.ended, table.partial, table.chunk_bounds, local_rows,
                                             np.concatenate([[0], np.cumsum(lens)]))
    except ValueError as exc:
        k, row = exc.args
        c0, c1 = table.chunk_bounds[k], table.chunk_bounds[k + 1]
        raise page_error(k, f"row {row} is past the {int(table.ended[c0:c1].sum())} rows of the page's "
                            f"chunks") from None


def decode_chunks(dec0, page0, table, ids, row0: np.ndarray, local_rows: np.ndarray, lens: np.ndarray, where,
                  take: bool) -> Decoded:
    """Chunks ``ids`` of ``table`` fetched (neighbours in one request) and decoded in one pass
    with the first page's decoder: item k's page-local rows are the k-th stretch (``lens[k]``
    long) of ``local_rows``, its first row in the column ``row0[k]``. ``take``: only the rows'
    values are wanted (a take), which the decoder may cut out at once."""
    item = table.item_of[ids]
    brk = None  # where a run of neighbouring chunks of one page begins (lists only)
    if dec0.leaf.max_rep:
        brk = np.ones(len(ids), bool)
        brk[1:] = (np.diff(ids) > 1) | (item[1:] != item[:-1])
    sizes, counts = table.sizes[ids], table.counts[ids]
    first_row = row0[item] + table.first[ids]  # rows numbered from the column's start
    rows = local_rows + np.repeat(row0, lens)
    # every chunk's bytes in one buffer: neighbours and near neighbours in one request each
    data, base = read_spans(page0.layout.source, table.data_at[item] + table.offsets[ids], sizes)
    positions = None
    if take and brk is not None and dec0.take_lists is not None:  # a list column's usual chunks: one pass
        got = dec0._take_lists(data, base, sizes, counts, first_row, brk, table.ended[ids], table.partial[ids], rows)
        if got is not None:
            rep, defs, row_len, values = got
            return Decoded(item, brk, first_row, rows, None, rep, defs, row_len, values, True)
    if not dec0.leaf.max_rep:  # entries are values, one per row: known before decoding
        chunk = np.searchsorted(first_row, rows, side="right") - 1
        positions = (np.cumsum(counts) - counts)[chunk] + rows - first_row[chunk]
    try:
        rep, defs, entries, values, taken = dec0._decode(page0, data, base, sizes, counts,
                                                         positions if take else None)
    except CorruptFileError as exc:
        if isinstance(exc, ChecksumError):  # located already: the bytes, not the decoding
            raise
        raise relocated(exc, page0, where) from None
    return Decoded(item, brk, first_row, rows, positions, rep, defs, entries, values, taken)


def take_rows(dec0, page0, table, row0: np.ndarray, wanted: list, where, page_error, resolve) -> PagePart:
    """Sorted rows of the pages of ``table``: ``wanted[k]`` page k's page-local rows, ``row0[k]``
    its first row in the column. ``dec0``/``page0``: the first page's decoder and data (the
    chunks decode with its encoding: the pages share it but for counts). ``resolve(indices,
    value_cuts, entry_cuts, defs)``: dictionary indices (page k's between ``value_cuts[k]``
    and ``value_cuts[k + 1]``) as the values."""
    leaf = dec0.leaf
    n = len(wanted)
    lens = np.fromiter((len(w) for w in wanted), np.int64, n)
    local_rows = np.concatenate(wanted)
    ids = np.flatnonzero(chunks_needed(table, local_rows, lens, page_error))
    got = decode_chunks(dec0, page0, table, ids, row0, local_rows, lens, where, take=True)
    rep, defs, entries, values, rows, positions = got.rep, got.defs, got.entries, got.values, got.rows, got.positions
    if got.taken:  # the values and levels were cut to the rows already
        return _taken_part(dec0, page0, rep, defs, values, entries if leaf.max_rep else None, lens, where, resolve)
    if leaf.max_rep:
        k = row_start_mismatch(rep, leaf.max_rep, entries, table.ended[ids], table.partial[ids])
        if k >= 0:
            raise page_error(int(got.item[k]), f"the levels of chunk {int(ids[k] - table.chunk_bounds[got.item[k]])} "
                                               f"end other rows than its repetition index says "
                                               f"({int(table.ended[ids[k]])})")
        try:
            starts, lengths = kernels.row_spans(rep, leaf.max_rep, entries, got.first_row, got.brk, rows)
        except ValueError as exc:
            raise CorruptFileError(f"{where}: {exc}") from None
    else:
        starts, lengths = positions, np.ones(len(rows), np.int64)
    spans = EntrySpans(starts.astype(np.int64), lengths.astype(np.int64))
    if not dec0.has_dict:
        return select_part(rep, defs, values_to_arrow(values, leaf.dtype, page0.where), spans, leaf, len(rows), where)
    part = select_part(rep, defs, dec0._indices(values, page0), spans, leaf, len(rows), where)
    # each page has its own dictionary: its rows are looked up in it
    row_cuts = np.concatenate([[0], np.cumsum(lens)])
    entry_cuts = np.concatenate([[0], np.cumsum(lengths)])[row_cuts]
    if part.defs is None:  # every entry holds a value
        value_cuts = entry_cuts
    else:  # a take's few entries: counted at once
        visible = part.defs <= leaf.max_visible
        value_cuts = np.concatenate([[0], np.cumsum(visible)])[entry_cuts]
    part.values = resolve(part.values.to_numpy(zero_copy_only=False), value_cuts, entry_cuts, part.defs)
    part.validated = True  # gathered from the checked dictionaries
    return part


def _taken_part(dec0, page0, rep, defs, values, row_len, lens: np.ndarray, where, resolve) -> PagePart:
    """:func:`take_rows`' part when the decoder cut the values and levels to the rows: what
    ``select_part`` gives, without spans. ``row_len``: each row's level entries (None: one
    each, a column without lists)."""
    leaf = dec0.leaf
    arr = values_to_arrow(values, leaf.dtype, page0.where) if not dec0.has_dict else dec0._indices(values, page0)
    n = int(lens.sum())
    n_entries = n if row_len is None else int(row_len.sum())
    n_visible = n_entries if defs is None else int(np.count_nonzero(defs <= leaf.max_visible))
    if (defs is not None and len(defs) != n_entries) or (rep is not None and len(rep) != n_entries) \
            or len(arr) != n_visible:
        raise CorruptFileError(f"{where}: {len(arr)} values for {n_visible} visible level entries")
    part = PagePart(rep, defs, arr, n)
    if not dec0.has_dict:
        return part
    row_cuts = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=row_cuts[1:])
    entry_cuts = row_cuts
    if row_len is not None:
        entry_cuts = np.zeros(len(row_len) + 1, np.int64)
        np.cumsum(row_len, out=entry_cuts[1:])
        entry_cuts = entry_cuts[row_cuts]
    if defs is None:  # every entry holds a value
        value_cuts = entry_cuts
    else:
        value_cuts = np.zeros(n_entries + 1, np.int64)
        np.cumsum(defs <= leaf.max_visible, out=value_cuts[1:])
        value_cuts = value_cuts[entry_cuts]
    part.values = resolve(arr.to_numpy(zero_copy_only=False), value_cuts, entry_cuts, defs)
    part.validated = True  # gathered from the checked dictionaries
    return part
