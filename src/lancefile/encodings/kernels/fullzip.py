"""Full-zip item scanning: split a run of ``[control word][value]`` items.

A full-zip page stores each level entry as an optional control word (1, 2 or 4 bytes,
``rep << def_bits | def``) followed, for entries that hold a value, by the value: a
fixed number of bytes, or (variable width) a u32/u64 length and that many bytes. Fixed
values follow every *visible* entry (``def <= max_visible``), variable ones only the
valid entries (``def == 0``). E.g. with a 1-byte control word, 1 def bit and u32
lengths, ``"ab", null`` is ``00 02000000 6162 | 01``.

:func:`fullzip_scan` walks the bytes once to count the items and check every length
against the buffer, then once more to fill the outputs.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ._common import _byte_view, _Kernel, empty

__all__ = ["fullzip_scan", "fullzip_zip"]


@_Kernel
def _k_fullzip(data, ctrl_bytes, ctrl_bits, def_bits, max_visible, fixed, len_bytes, fill, rep, dfn, vstart, vlen):
    # Returns (items, status): status 0 ok, 1 = an item runs past the end, 2 = a control
    # word has bits set above its rep and def bits.
    n = data.shape[0]
    pos = 0
    i = 0
    def_mask = (1 << def_bits) - 1
    while pos < n:
        ctrl = 0
        if ctrl_bytes:
            if pos + ctrl_bytes > n:
                return i, 1
            for b in range(ctrl_bytes):
                ctrl |= np.int64(data[pos + b]) << (8 * b)
            if ctrl >> ctrl_bits:
                return i, 2
            pos += ctrl_bytes
        d = ctrl & def_mask
        start = -1
        length = -1
        if fixed >= 0:
            if d <= max_visible:
                if pos + fixed > n:
                    return i, 1
                start = pos
                length = fixed
                pos += fixed
        elif d == 0:
            if pos + len_bytes > n:
                return i, 1
            ln = 0
            for b in range(len_bytes):
                ln |= np.int64(data[pos + b]) << (8 * b)
            pos += len_bytes
            if ln < 0 or pos + ln > n:
                return i, 1
            start = pos
            length = ln
            pos += ln
        if fill:
            rep[i] = ctrl >> def_bits
            dfn[i] = d
            vstart[i] = start
            vlen[i] = length
        i += 1
    return i, 0


def fullzip_scan(data, ctrl_bytes: int, def_bits: int, max_visible: int, fixed_bytes: int, len_bytes: int,
                 rep_bits: int = 16):
    """``(rep, def, value_start, value_length)`` per item of a run of full-zip items.

    ``fixed_bytes`` is the width of fixed values, or -1 for variable-width values with
    ``len_bytes`` (4 or 8) lengths. ``value_start``/``value_length`` are -1 for items
    without a value. Raises :class:`CorruptFileError` if an item runs past the end or a
    control word has bits above ``rep_bits + def_bits``.
    """
    raw = _byte_view(data)
    empty16, empty64 = np.zeros(0, np.uint16), np.zeros(0, np.int64)
    ctrl_bits = rep_bits + def_bits
    count, status = _k_fullzip(raw, ctrl_bytes, ctrl_bits, def_bits, max_visible, fixed_bytes, len_bytes, False,
                               empty16, empty16, empty64, empty64)
    if status == 1:
        raise CorruptFileError(f"full-zip item {count} runs past the end of its {raw.size} bytes")
    if status == 2:
        raise CorruptFileError(f"full-zip item {count} has a control word wider than {ctrl_bits} bits")
    rep = empty(count, np.uint16)
    dfn = empty(count, np.uint16)
    vstart = empty(count, np.int64)
    vlen = empty(count, np.int64)
    _k_fullzip(raw, ctrl_bytes, ctrl_bits, def_bits, max_visible, fixed_bytes, len_bytes, True, rep, dfn, vstart,
               vlen)
    return rep, dfn, vstart, vlen


def fullzip_scan_py(data, ctrl_bytes, def_bits, max_visible, fixed_bytes, len_bytes):
    """Plain-Python :func:`fullzip_scan` (reference for the tests)."""
    raw = bytes(_byte_view(data))
    out, pos = [], 0
    while pos < len(raw):
        if pos + ctrl_bytes > len(raw):
            raise CorruptFileError("full-zip item runs past the end")
        ctrl = int.from_bytes(raw[pos : pos + ctrl_bytes], "little")
        pos += ctrl_bytes
        d = ctrl & ((1 << def_bits) - 1)
        start = length = -1
        if fixed_bytes >= 0 and d <= max_visible:
            start, length = pos, fixed_bytes
        elif fixed_bytes < 0 and d == 0:
            length = int.from_bytes(raw[pos : pos + len_bytes], "little")
            start = pos + len_bytes
        if start >= 0:
            if start + length > len(raw):
                raise CorruptFileError("full-zip item runs past the end")
            pos = start + length
        out.append((ctrl >> def_bits, d, start, length))
    cols = list(zip(*out)) or [(), (), (), ()]
    return (np.array(cols[0], np.uint16), np.array(cols[1], np.uint16),
            np.array(cols[2], np.int64), np.array(cols[3], np.int64))


@_Kernel
def _k_zip(ctrl, ctrl_bytes, vidx, starts, lens, len_bytes, data, out_pos, out):
    for i in range(ctrl.shape[0]):
        p = out_pos[i]
        c = ctrl[i]
        for b in range(ctrl_bytes):
            out[p + b] = (c >> (8 * b)) & 0xFF
        p += ctrl_bytes
        j = vidx[i]
        if j >= 0:
            n = lens[j]
            for b in range(len_bytes):
                out[p + b] = (n >> (8 * b)) & 0xFF
            p += len_bytes
            s = starts[j]
            out[p : p + n] = data[s : s + n]


def fullzip_zip(ctrl, ctrl_bytes: int, vidx, starts, lens, len_bytes: int, data) -> tuple[np.ndarray, np.ndarray]:
    """Build a full-zip buffer: entry ``i`` is its control word (``ctrl_bytes`` LE bytes),
    then, when ``vidx[i] >= 0``, value ``j = vidx[i]``: its length (``len_bytes`` LE bytes,
    0 for fixed-width values) and ``data[starts[j] : starts[j] + lens[j]]``.

    Returns ``(buffer, entry_starts)`` where ``entry_starts`` has one more element (the
    total). The inverse of :func:`fullzip_scan`.
    """
    vidx = np.ascontiguousarray(vidx, dtype=np.int64)
    lens = np.ascontiguousarray(lens, dtype=np.int64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ctrl = np.ascontiguousarray(ctrl, dtype=np.int64)
    has = vidx >= 0
    sizes = np.full(vidx.shape[0], ctrl_bytes, dtype=np.int64)
    sizes[has] += len_bytes + lens[vidx[has]]
    pos = np.zeros(vidx.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=pos[1:])
    out = empty(int(pos[-1]), np.uint8)
    if vidx.shape[0]:
        _k_zip(ctrl, ctrl_bytes, vidx, starts, lens, len_bytes, _byte_view(data), pos, out)
    return out, pos
