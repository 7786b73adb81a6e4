"""A take over several plain 2.0 ``Binary`` pages in two batches of requests.

A 100-row take of a long-text column touches 12-15 pages. Through each page's decoder that
is two rounds of reads a page (the rows' end offsets, then their bytes) and a page's worth of
Python around them, ~0.1 ms each. :func:`take_pages` reads every page's wanted end offsets
in one batch of requests, then every row's bytes in one more, and builds one array: the
pages whose offsets are plain u64 and bytes plain, uncompressed. A page out of that form, or
whose offsets or bytes fail a check, is left to its own decoder, which says what is wrong.

Example (the pages of a file written by pylance at 2.0 are of this form)::

    >>> import numpy as np, pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.lance")
    >>> t = pa.table({"s": [f"row {i}" * (i % 7) for i in range(5000)]})
    >>> lancefile.write_table(t, path, version="2.0", max_page_bytes=8192)
    >>> got = lancefile.LanceFileReader(path).take_rows([3, 1500, 4999]).to_table()
    >>> got.column("s").to_pylist() == t.column("s").take([3, 1500, 4999]).to_pylist()
    True
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from ...io import read_spans
from .. import kernels
from ..arrowutil import is_var_binary, validate_values
from .binary import build_binary
from .flat import _is_compressed, plain_flat

__all__ = ["take_pages"]

_INT64_MAX = int(np.iinfo(np.int64).max)


def _plan(enc, page, local):
    """(ends position, bytes position, bytes size, null adjustment) of a plain Binary page
    whose rows ``local`` lie in its ends buffer, else None."""
    if enc.WhichOneof("array_encoding") != "binary":
        return None
    msg = enc.binary
    ends = plain_flat(msg.indices)
    if ends is None or int(ends.bits_per_value) != 64 or _is_compressed(ends) or \
            msg.bytes.WhichOneof("array_encoding") != "flat" or _is_compressed(msg.bytes.flat) or \
            int(msg.bytes.flat.bits_per_value) != 8:
        return None
    ends_ref, bytes_ref = page.ref(ends.buffer), page.ref(msg.bytes.flat.buffer)
    if local.stop * 8 > ends_ref.size:
        return None
    return ends_ref.position, bytes_ref.position, bytes_ref.size, int(msg.null_adjustment)


def take_pages(column, pieces: list, cache: dict, dtype: pa.DataType, validate: bool) -> dict:
    """``{i: rows of pieces[i]}`` for the plain Binary pages of a take (``pieces``: (page,
    page-local sorted indices), as :meth:`ColumnPages.split` gives them), read in two batches
    of requests for all of them; ``validate``: check the values in full (UTF-8 of strings).
    Empty when fewer than two pages qualify or a check fails: the pages' own decoders then
    read them and say what is wrong."""
    if len(pieces) < 2 or not is_var_binary(dtype):
        return {}
    chosen, plans = [], []
    for i, (p, local) in enumerate(pieces):
        if local.count == 0 or local.is_range:
            continue
        plan = _plan(column.encoding(p), column.page(p, cache), local)
        if plan is not None:
            chosen.append(i)
            plans.append(plan)
    if len(chosen) < 2:
        return {}
    idx = [pieces[i][1].indices for i in chosen]
    counts = np.fromiter(map(len, idx), np.int64, len(idx))
    rows = np.concatenate(idx).astype(np.int64)
    page_of = np.repeat(np.arange(len(chosen)), counts)
    ends_pos, bytes_pos, bytes_size = (np.array(x, np.int64) for x in list(zip(*plans))[:3])
    # a page's null adjustment (a u64; 0, or one past int64, means no row of it is null)
    adjust = np.array([a if 0 < a <= _INT64_MAX else 0 for *_, a in plans], np.int64)
    # each row's stored end and the one before it (none before a page's first row): 16 bytes, or 8
    first = rows == 0
    data, at = read_spans(column.layout.source, ends_pos[page_of] + 8 * (rows - 1 + first), 16 - 8 * first)
    eight = np.full(len(rows), 8, np.int64)
    end_raw = kernels.gather_bytes(data, at + 8 - 8 * first, eight).view("<u8")
    prev_raw = kernels.gather_bytes(data, at, eight).view("<u8")
    adj = adjust[page_of]
    end, valid = _adjusted(end_raw, adj)
    start = np.where(first, 0, _adjusted(prev_raw, adj)[0])
    lengths = end - start
    if np.any(lengths < 0) or np.any(start < 0) or np.any(end > bytes_size[page_of]):
        return {}  # the pages' decoders name the bad offsets
    data, at = read_spans(column.layout.source, bytes_pos[page_of] + start, lengths)
    offsets = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    try:
        values = build_binary(dtype, offsets, kernels.gather_bytes(data, at, lengths), valid)
        if validate:
            values = validate_values(values, column.where(pieces[chosen[0]][0]))
    except CorruptFileError:
        return {}
    out, row = {}, 0
    for i, n in zip(chosen, counts.tolist()):
        out[i] = values.slice(row, n)
        row += n
    return out


def _adjusted(raw: np.ndarray, adjustment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~.offsets.split_adjusted` with each row's own page's adjustment (0: none)."""
    v = raw.astype(np.int64)
    valid = (adjustment == 0) | (v < adjustment)
    return np.where(valid, v, v - adjustment), valid
