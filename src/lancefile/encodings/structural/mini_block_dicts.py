"""The string dictionaries of many mini-block pages, read as one: a take's lookups in them.

A take of a dictionary-encoded column touches a page (and its dictionary) for nearly every
row. :func:`dictionary_blocks` lays every page's ``Variable`` dictionary block out in one
array (compressed ones decompressed in one pass), and :func:`look_up` copies out only the
items the take's indices name, checked: a few hundred bytes for 100 rows instead of 70
dictionaries built. Both work on byte arrays, whichever way the dictionaries were read (the
pages' decoders, or a column's page table).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from .. import kernels
from ..arrowutil import validate_values
from ..compressive._buffers import decompress_spans
from ..compressive.values import Var
from ..compressive.variable import block_parts, block_parts_many
from .base import values_to_arrow

__all__ = ["MAX_PAGE_ITEMS", "dictionary_blocks", "look_up", "look_up_blocks"]

MAX_PAGE_ITEMS = 1 << 48


def dictionary_blocks(enc, counts, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, where, page_where,
                      gather: bool = True):
    """The ``Variable`` dictionary blocks of several pages sharing dictionary encoding ``enc``
    (``counts``: items of each; page k's encoded block is ``data[starts[k]:][:sizes[k]]``):
    ``(bytes, offsets, first offset of each block, where its items' bytes start, items of
    each, bytes after that start)``, all blocks in one array (see :func:`block_parts_many`),
    each block's first and last offsets checked against its bytes. Compressed blocks are
    decompressed in one pass and their headers read with numpy; others (or blocks out of the
    usual form) are read one by one. ``where()`` names the pages, ``page_where(k)`` page k.
    None when a dictionary is something else or fails a check: a page's own load then says
    what is wrong. ``gather=False``: ``offsets`` may be any array holding every block's
    offsets at ``first[i]...`` (u32 words of the decompressed bytes: nothing copied), for
    lookups."""
    kind = enc.WhichOneof("compression")
    inner = enc.general.values if kind == "general" else enc
    if inner.WhichOneof("compression") != "variable" or max(counts) > MAX_PAGE_ITEMS:
        return None
    n = np.asarray(counts, np.int64)
    parts = None
    try:
        if kind == "general":
            out, ostarts, osizes = decompress_spans(enc.general.compression, data, starts, sizes, where())
            parts = block_parts_many(inner.variable, out[: len(out) // 4 * 4], ostarts, osizes, n, gather)
            if parts is None:  # not the usual form: page by page
                data, starts, sizes = out, ostarts, osizes
        if parts is None:
            one = [block_parts(inner.variable, data[a : a + z], k, page_where(i))
                   for i, (a, z, k) in enumerate(zip(starts.tolist(), sizes.tolist(), n.tolist()))]
            room = np.fromiter((len(body) for _, body in one), np.int64, len(one))
            out = np.concatenate([body for _, body in one])
            parts = (np.concatenate([off for off, _ in one]), np.cumsum(n + 1) - (n + 1), np.cumsum(room) - room)
            ostarts, osizes = parts[2], room
    except CorruptFileError:
        return None
    offs, first, body = parts
    firsts, lasts = offs[first], offs[first + n]
    room = ostarts + osizes - body
    if np.any(firsts < 0) or np.any(lasts < firsts) or np.any(lasts > room):
        return None
    return out, offs, first, body, n, room


def look_up(dtype: pa.DataType, blocks: tuple, idx: np.ndarray, value_cuts: np.ndarray, where):
    """The values that dictionary indices ``idx`` name (``idx[value_cuts[k]:value_cuts[k + 1]]``
    index page k's dictionary; ``blocks``: :func:`dictionary_blocks` with ``gather=False``),
    as one checked Arrow array of ``dtype``. None when an index lies outside its page's
    dictionary (e.g. garbage under a null) or the items fail a check: the general path then
    says what is wrong."""
    out, offs, first, body, n, room = blocks
    at = kernels.page_indices(idx, value_cuts, first, n)  # each value's offset, page by page
    if at is None:
        return None
    page = np.repeat(np.arange(len(n)), np.diff(value_cuts))
    lo, hi = offs[at].astype(np.int64), offs[at + 1].astype(np.int64)
    if np.any(lo < 0) or np.any(hi < lo) or np.any(hi > room[page]):
        return None
    lengths = hi - lo
    offsets = np.zeros(len(at) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = values_to_arrow(Var(offsets, kernels.gather_bytes(out, body[page] + lo, lengths)), dtype, where)
    try:
        return validate_values(values, where)
    except CorruptFileError:
        return None


def look_up_blocks(dtype: pa.DataType, enc, counts, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
                   idx: np.ndarray, value_cuts: np.ndarray, where):
    """:func:`dictionary_blocks` then :func:`look_up`, for the usual dictionaries (``Variable``
    blocks of u32 offsets, bare or under general compression) in one compiled pass
    (:func:`~lancefile.encodings.kernels.dictionary_take`) and one gather. None when a
    dictionary is anything else or fails a check: the pair then reads it (and names what is
    wrong)."""
    kind = enc.WhichOneof("compression")
    inner = enc.general.values if kind == "general" else enc
    if inner.WhichOneof("compression") != "variable" or inner.variable.HasField("values"):
        return None
    if kind == "general":
        try:
            data, starts, sizes = decompress_spans(enc.general.compression, data, starts, sizes, str(where))
        except CorruptFileError:
            return None
    got = kernels.dictionary_take(data, starts, sizes, counts, idx, value_cuts)
    if got is None:
        return None
    offsets, src = got
    values = values_to_arrow(Var(offsets, kernels.gather_bytes(data, src, np.diff(offsets))), dtype, where)
    try:
        return validate_values(values, where)
    except CorruptFileError:
        return None
