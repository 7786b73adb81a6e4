"""A take's rows out of the mini-block chunks of a list column in one compiled pass.

A 2.2 list column's chunks (the reference's and lancefile's alike) usually hold their
repetition levels bit packed out of line (u16 at one width), their definition levels as an
RLE block (u16 runs) or bit packed like the repetition, and their values bit packed inline
(FastLanes groups of 1024 with their own widths) or flat. The general way decodes every level and value of every touched chunk into arrays,
finds the wanted rows' entries among them and gathers those: for a 100-row take of a nested
column, ~70,000 entries decoded in a dozen array passes to keep ~250.
:func:`miniblock_take_lists` does it chunk by chunk: the levels go to a small scratch that
stays in cache, the wanted rows' entries are copied out as the rows are walked, and only
their values are unpacked, each straight from its packed words.

Every touched chunk is checked as the general way checks it (header and buffers, the
levels' framing, every def level against the page's table, the value groups' widths and
sizes, one value for each visible entry, the rows its levels end against its repetition
index entry). It never raises on the bytes: anything out of
that form returns None, and the caller decodes the chunks the general way, which says what
is wrong and where.

Example: one chunk of two rows, ``[7, 8]`` and ``[9]`` (one bit of repetition, no def
levels, u64 values at 4 bits), row 1 taken::

    >>> import numpy as np
    >>> from lancefile.encodings.kernels import fastlanes_pack
    >>> rep = fastlanes_pack(np.array([1, 0, 1] + [0] * 1021, np.uint16), 1).view(np.uint8)
    >>> vals = np.concatenate([np.array([4], np.uint64),
    ...                        fastlanes_pack(np.array([7, 8, 9] + [0] * 1021, np.uint64), 4)]).view(np.uint8)
    >>> head = np.array([3, len(rep), len(vals), 0], np.uint16).view(np.uint8)  # levels, sizes, pad
    >>> chunk = np.concatenate([head, rep, vals])
    >>> got = miniblock_take_lists(chunk, np.array([0]), np.array([len(chunk)]), np.array([3]), np.array([0]),
    ...                            np.array([True]), np.array([2]), np.array([0]), np.array([1]), 1, 0, 2, np.array([0]),
    ...                            1, None, 64, True)
    >>> rep_out, defs_out, row_len, values = got
    >>> rep_out.tolist(), defs_out, row_len.tolist(), values.view(np.uint64).tolist()
    ([1], None, [1], [9])
"""

from __future__ import annotations

import threading

import numpy as np

from ._common import _byte_view, _helper, _Kernel
from .fastlanes import _FL_ORDER, _fl_unpack

__all__ = ["miniblock_take_lists"]

_MAX_LEVELS = 1 << 16  # a chunk's level count is a u16
_MAX_GROUPS = _MAX_LEVELS // 1024 + 1


@_helper
def _le(data, p, n):
    v = np.uint64(0)
    for b in range(n):
        v |= np.uint64(data[p + b]) << np.uint64(8 * b)
    return v


@_helper
def _value(raw, at, gstart, gwidth, T, v):
    # Value v of an InlineBitpacking buffer at byte ``at`` whose groups start at word
    # gstart[g] (of the buffer) with width gwidth[g]: read straight from its packed words.
    g = v >> 10
    i = v & 1023
    W = gwidth[g]
    if W == 0:
        return np.uint64(0)
    lanes = 1024 // T
    lane = i % lanes
    row = _FL_ORDER[((i & 127) - lane) >> 4] * 8 + (i >> 7)
    bit = row * W
    k = bit // T
    s = bit - k * T
    nb = T // 8
    src = at + (gstart[g] + lanes * k + lane) * nb
    x = _le(raw, src, nb) >> np.uint64(s)
    if s + W > T:
        x |= _le(raw, src + lanes * nb, nb) << np.uint64(T - s)
    if W < 64:
        x &= (np.uint64(1) << np.uint64(W)) - np.uint64(1)
    return x


@_helper
def _ool_levels(raw, at, size, n, W, scr_words, out):
    # n u16 levels of an OutOfLineBitpacking buffer (raw[at:at + size], width W: whole groups,
    # then the tail packed or raw) into out. Returns 0, or a code > 0 when out of that form.
    if at % 2 or size % 2:
        return 3
    wc = size // 2
    wpc = 64 * W
    full = n // 1024
    tail = n - full * 1024
    raw_tail = tail > 0 and wc == full * wpc + tail
    if wc != full * wpc + (tail if raw_tail else (wpc if tail > 0 else 0)):
        return 4
    for j in range(wc):
        scr_words[j] = np.uint16(raw[at + 2 * j]) | (np.uint16(raw[at + 2 * j + 1]) << np.uint16(8))
    for g in range(full):
        _fl_unpack(scr_words, g * wpc, W, 16, out, g * 1024)
    if tail > 0:
        if raw_tail:
            for j in range(tail):
                out[full * 1024 + j] = scr_words[full * wpc + j]
        else:
            _fl_unpack(scr_words, full * wpc, W, 16, out, full * 1024)
    return 0


@_helper
def _chunk_levels(raw, q, end, def_kind, def_w, word, rep_w, lut, scr_words, scr_rep, scr_def):
    # Header, repetition and definition levels of the chunk at raw[q:end] (levels into
    # scr_rep/scr_def, defs mapped through lut). Returns (0, levels, values start, values
    # size), or (code > 0, ...) when the chunk is not of the usual form.
    has_def = def_kind > 0
    header = 2 + 2 + 2 * has_def + word
    header += (-header) % 8
    if q < 0 or q + header > end or end > raw.shape[0]:
        return 1, 0, 0, 0
    n = np.int64(_le(raw, q, 2))
    rsz = np.int64(_le(raw, q + 2, 2))
    dsz = np.int64(_le(raw, q + 4, 2)) if has_def else np.int64(0)
    vsz = np.int64(_le(raw, q + 4 + 2 * has_def, word))
    r_at = q + header
    d_at = r_at + rsz + (-rsz) % 8
    v_at = d_at + dsz + (-dsz) % 8
    if v_at + vsz + (-vsz) % 8 != end:  # the buffers fill the chunk exactly
        return 2, 0, 0, 0
    code = _ool_levels(raw, r_at, rsz, n, rep_w, scr_words, scr_rep)
    if code:
        return code, 0, 0, 0
    top = lut.shape[0]
    if def_kind == 2:  # bit packed like the repetition
        code = _ool_levels(raw, d_at, dsz, n, def_w, scr_words, scr_def)
        if code:
            return 10 + code, 0, 0, 0  # 13, 14
        for e in range(n):
            if scr_def[e] >= top:
                return 7, 0, 0, 0
            scr_def[e] = lut[scr_def[e]]
    elif def_kind == 1:  # an RLE block of u16 runs
        if dsz < 8:
            return 5, 0, 0, 0
        head = _le(raw, d_at, 8)
        if head >> np.uint64(63):  # (an int64 would read it as negative)
            return 8, 0, 0, 0
        vbytes = np.int64(head)
        if vbytes % 2 or vbytes > dsz - 8:
            return 9, 0, 0, 0
        runs = vbytes // 2
        if runs > dsz - 8 - vbytes:
            return 10, 0, 0, 0
        pos = 0
        r = 0
        while pos < n:
            if r >= runs:
                return 6, 0, 0, 0
            d = np.int64(_le(raw, d_at + 8 + 2 * r, 2))
            if d >= top:
                return 7, 0, 0, 0
            m = min(np.int64(raw[d_at + 8 + vbytes + r]), n - pos)
            scr_def[pos : pos + m] = lut[d]
            pos += m
            r += 1
    return 0, n, v_at, vsz


@_Kernel
def _k_take_lists(raw, base, ends, counts, first_row, run_break, completed, partial, wanted, max_rep, max_visible,
                  def_kind, def_w, word, T, packed, rep_w, lut, scr_words, scr_rep, scr_def, gstart, gwidth, out_rep,
                  out_def, out_vals, row_len):
    # Returns (code, entries out, values out): code -1 when every wanted row was taken, else
    # >= 0 (the general way decodes the chunks and names what is wrong).
    K = wanted.shape[0]
    nc = base.shape[0]
    nb = T // 8
    k = 0
    cur = -1
    ne = 0
    nv = 0
    for ci in range(nc):
        if run_break[ci] and cur >= 0:
            row_len[cur] = ne - row_len[cur]
            cur = -1
        code, n, v_at, vsz = _chunk_levels(raw, base[ci], ends[ci], def_kind, def_w, word, rep_w, lut, scr_words,
                                           scr_rep, scr_def)
        if code:
            return code, 0, 0
        visible = n
        if def_kind:  # count the entries that hold a value
            visible = 0
            for e in range(n):
                if scr_def[e] <= max_visible:
                    visible += 1
        if visible != counts[ci]:
            return 20, 0, 0
        # the rows that end here, by the levels, as the repetition index says: a row start but
        # the last (when the chunk ends inside a row), and the row it opens inside
        starts = 0
        for e in range(n):
            if scr_rep[e] == max_rep:
                starts += 1
        opens_inside = 1 if n > 0 and scr_rep[0] != max_rep else 0
        if starts + opens_inside - (1 if partial[ci] > 0 else 0) != completed[ci]:
            return 31, 0, 0
        if not packed:  # Flat values: the buffer holds them all
            if vsz < counts[ci] * nb:
                return 21, 0, 0
        else:  # InlineBitpacking groups that fill their buffer exactly
            if v_at % nb or vsz % nb:
                return 22, 0, 0
            groups = (counts[ci] + 1023) // 1024
            if groups > gstart.shape[0]:
                return 23, 0, 0
            limit = vsz // nb
            w = 0
            for g in range(groups):
                if w >= limit:
                    return 24, 0, 0
                head = _le(raw, v_at + w * nb, nb)
                if head > np.uint64(T):
                    return 25, 0, 0
                W = np.int64(head)
                gstart[g] = w + 1
                gwidth[g] = W
                w += 1 + (1024 * W) // T
                if w > limit:
                    return 26, 0, 0
            if w != limit:
                return 27, 0, 0
        if cur < 0 and (k == K or (ci + 1 < nc and wanted[k] > first_row[ci + 1])):
            continue  # no wanted row in this chunk (checked all the same)
        rid = first_row[ci]
        if n > 0 and scr_rep[0] != max_rep:
            rid += 1
        vis = 0
        for e in range(n):
            if scr_rep[e] == max_rep:
                if cur >= 0:
                    row_len[cur] = ne - row_len[cur]
                    cur = -1
                    if k == K or (ci + 1 < nc and wanted[k] > first_row[ci + 1]):
                        break  # the next wanted row starts in a later chunk
                if k < K and wanted[k] < rid:
                    return 28, 0, 0  # a wanted row is not where the index says
                if k < K and wanted[k] == rid:
                    row_len[k] = ne  # where its entries start, until it ends
                    cur = k
                    k += 1
                rid += 1
            d = scr_def[e] if def_kind else 0
            if cur >= 0:
                if ne >= out_rep.shape[0]:
                    return 30, 0, 0  # out of room: the caller makes more
                out_rep[ne] = scr_rep[e]
                out_def[ne] = d
                ne += 1
                if d <= max_visible:
                    if nv >= out_vals.shape[0]:
                        return 30, 0, 0
                    if packed:
                        out_vals[nv] = _value(raw, v_at, gstart, gwidth, T, vis)
                    else:
                        out_vals[nv] = _le(raw, v_at + vis * nb, nb)
                    nv += 1
            if d <= max_visible:
                vis += 1
    if cur >= 0:
        row_len[cur] = ne - row_len[cur]
    if k < K:
        return 29, 0, 0
    return -1, ne, nv


def miniblock_take_lists(raw, base, ends, counts, first_row, run_break, completed, partial, wanted, max_rep: int,
                         max_visible: int, word: int, lut, rep_width: int, def_levels, bits: int, packed: bool):
    """``(rep, defs, entries a row, values)`` of the sorted rows ``wanted`` (numbered from the
    column's start) of the mini-block chunks ``raw[base[c]:ends[c]]`` of a list column
    (``word``-byte value buffer sizes): repetition levels OutOfLineBitpacking of u16 at
    ``rep_width`` bits; definition levels ``def_levels``: None (none), ``"rle"`` (an RLE
    block of u16 runs) or a width (OutOfLineBitpacking of u16), mapped through ``lut``; one
    value buffer holding ``counts[c]`` values of ``bits`` bits, InlineBitpacking when
    ``packed``, else Flat. ``first_row[c]``: the rows ended before chunk c;
    ``run_break[c]``: chunk c does not follow its predecessor in its page; ``completed[c]``
    and ``partial[c]``: its repetition index entry (rows that end in it, entries of the row
    it ends inside), which its levels must agree with. ``defs`` is None
    when the page has no def levels or its table maps every level to 0; ``values`` are the
    visible entries' (``bits`` wide, as bytes). None when the chunks are not of that form:
    decode them the general way."""
    def_kind, def_width = (0, 0) if def_levels is None else (1, 0) if def_levels == "rle" else (2, int(def_levels))
    if bits not in (8, 16, 32, 64) or not 0 <= rep_width <= 16 or not 0 <= def_width <= 16:
        return None
    base, ends, counts, first_row, completed, partial, wanted = (
        np.ascontiguousarray(x, np.int64) for x in (base, ends, counts, first_row, completed, partial, wanted))
    lut16 = np.ascontiguousarray(lut, np.uint16)
    run_break = np.ascontiguousarray(run_break, np.bool_)
    raw = _byte_view(raw)
    scratch = _scratch()
    row_len = np.zeros(len(wanted), np.int64)
    # a guess first, then as many as the chunks can hold (65,535 levels, as many values)
    guess = 16 * len(wanted) + 1024
    for room, values in ((guess, min(guess, int(counts.sum()))), (_MAX_LEVELS * len(base), int(counts.sum()))):
        out_rep, out_def, out_vals = np.empty(room, np.uint16), np.empty(room, np.uint16), np.empty(values, np.uint64)
        code, ne, nv = _k_take_lists(raw, base, ends, counts, first_row, run_break, completed, partial, wanted, int(max_rep),
                                     int(max_visible), def_kind, def_width, int(word), int(bits), bool(packed),
                                     int(rep_width), lut16, *scratch, out_rep, out_def, out_vals, row_len)
        if code != 30:
            break
    if code >= 0:
        return None
    defs = out_def[:ne] if def_kind and len(lut16) > 1 else None
    values = out_vals[:nv].astype(np.dtype(f"<u{bits // 8}")).view(np.uint8)
    return out_rep[:ne], defs, row_len, values


_LOCAL = threading.local()


def _scratch() -> tuple:
    """This thread's room for one chunk's level words, levels and value groups (made once,
    ~400 KiB: fresh memory a call would cost its page faults)."""
    got = getattr(_LOCAL, "scratch", None)
    if got is None:
        levels = _MAX_LEVELS + 1024
        got = _LOCAL.scratch = (np.empty(levels, np.uint16), np.empty(levels, np.uint16), np.empty(levels, np.uint16),
                                np.empty(_MAX_GROUPS, np.int64), np.empty(_MAX_GROUPS, np.int64))
    return got
