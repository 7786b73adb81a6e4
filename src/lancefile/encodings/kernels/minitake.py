"""A take's values and def levels out of mini-block chunks in one compiled pass.

The usual chunk of a column without lists holds one value buffer of fixed-width values
(``Flat``, bare or under zstd: lancefile's entropy-coded dictionary indices; or split into
byte streams under zstd: its integers and floats) and, when the
column has nulls, its def levels (u16 words, bare or under zstd). For a take of a few
rows per chunk, :func:`miniblock_take_flat` parses each chunk's header, decompresses its
value buffer and levels (one libzstd call each, no Python between chunks) and copies out
the wanted entries' values and levels.

It never raises on the bytes: anything out of that usual form (a bare zstd frame, a size
the frame does not announce, buffers that do not fill their chunk) makes it return a
nonzero code, and the caller decodes those chunks the general way, which says what is
wrong and where.

Example: two 2.2 chunks of u8 values without levels, entries 1 and 5 taken::

    >>> import numpy as np
    >>> chunk = lambda vals: np.concatenate([np.array([0, 0, len(vals), 0, 0, 0, 0, 0], np.uint8),
    ...                                      np.array(vals + [0] * (-len(vals) % 8), np.uint8)])
    >>> raw = np.concatenate([chunk([10, 11, 12, 13]), chunk([20, 21, 22, 23])])
    >>> got = miniblock_take_flat(raw, np.array([0, 16]), np.array([16, 32]), np.array([4, 4]),
    ...                           np.array([1, 5]), False, 4, 1, False, 0)
    >>> got[0].tolist(), got[1]
    ([11, 21], None)
"""

from __future__ import annotations

import threading

import numpy as np

from ._common import _byte_view, _helper, _Kernel, empty
from .zstd import _context, _library

__all__ = ["miniblock_take_flat"]

_LOCAL = threading.local()

# a zstd value buffer or level buffer may announce at most this many bytes a chunk (a chunk
# holds at most 65,536 values of at most 8 bytes, or 65,536 u16 levels)
_MAX_ANNOUNCED = 1 << 19
# zstd's smallest frame codes at most this many bytes a compressed byte (+ slack): a frame
# announcing more is damage, found before a byte is decoded
_RATIO, _SLACK = 1024, 1 << 12
_MAGIC = np.frombuffer(b"\x28\xb5\x2f\xfd", np.uint8)


@_helper
def _u(data, p, n):
    v = np.int64(0)
    for b in range(n):
        v |= np.int64(data[p + b]) << (8 * b)
    return v


@_Kernel
def _k_take_flat(decompress, dctx, raw, base, ends, counts, positions, has_def, word, width, zvals, zdefs,
                 magic, scratch, out_vals, out_defs, bss):
    # Returns -1 when every entry was taken, else a code >= 0 (the chunks are not of the
    # usual form: the caller decodes them the general way).
    header = 2 + 2 * has_def + word
    header += (-header) % 8
    n_chunks = base.shape[0]
    vpart = scratch.shape[0] // 2  # scratch: the value bytes, then the levels
    src = raw.ctypes.data
    dst = scratch.ctypes.data
    c = -1
    first = np.int64(0)  # the entry number of chunk c's first entry
    v_at = np.int64(0)  # where chunk c's values start (in raw, or scratch when decompressed)
    d_at = np.int64(0)
    for i in range(positions.shape[0]):
        p = positions[i]
        if c < 0 or p >= first + counts[c]:
            if c >= 0:
                first += counts[c]
            c += 1
            while c < n_chunks and p >= first + counts[c]:
                first += counts[c]
                c += 1
            if c >= n_chunks:
                return 0
            q = base[c]
            if q < 0 or q + header > ends[c] or ends[c] > raw.shape[0]:
                return 1
            num_levels = _u(raw, q, 2)
            dsz = _u(raw, q + 2, 2) if has_def else np.int64(0)
            vsz = _u(raw, q + 2 + 2 * has_def, word)
            at = q + header
            d_raw = at
            at += dsz + (-dsz) % 8
            v_raw = at
            at += vsz + (-vsz) % 8
            if at != ends[c]:
                return 2
            if has_def and num_levels != counts[c]:
                return 3
            need = counts[c] * width
            if zvals:
                if vsz < 12:
                    return 4
                if raw[v_raw] == magic[0] and raw[v_raw + 1] == magic[1] and raw[v_raw + 2] == magic[2] \
                        and raw[v_raw + 3] == magic[3]:
                    return 5  # a bare frame: the general path decides
                a = _u(raw, v_raw, 8)
                if a < need or a > vpart or a > _RATIO * (vsz - 8) + _SLACK:
                    return 6
                if np.int64(decompress(dctx, dst, a, src + v_raw + 8, vsz - 8)) != a:
                    return 7
                v_at = 0
            else:
                if vsz < need:
                    return 8
                v_at = v_raw
            if has_def:
                need = counts[c] * 2
                if zdefs:
                    if dsz < 12:
                        return 9
                    if raw[d_raw] == magic[0] and raw[d_raw + 1] == magic[1] and raw[d_raw + 2] == magic[2] \
                            and raw[d_raw + 3] == magic[3]:
                        return 10
                    a = _u(raw, d_raw, 8)
                    if a < need or a > scratch.shape[0] - vpart or a > _RATIO * (dsz - 8) + _SLACK:
                        return 11
                    if np.int64(decompress(dctx, dst + vpart, a, src + d_raw + 8, dsz - 8)) != a:
                        return 12
                    d_at = vpart
                else:
                    if dsz < need:
                        return 13
                    d_at = d_raw
        local = p - first
        if local < 0:  # positions out of order (or negative)
            return 0
        # byte b of the entry: at local * width + b, or split into streams at b * count + local
        at = v_at + local * width
        step = np.int64(1)
        if bss:
            at = v_at + local
            step = counts[c]
        if zvals:
            for b in range(width):
                out_vals[i * width + b] = scratch[at + b * step]
        else:
            for b in range(width):
                out_vals[i * width + b] = raw[at + b * step]
        if has_def:
            if zdefs:
                out_defs[i] = np.uint16(scratch[d_at + 2 * local]) | (np.uint16(scratch[d_at + 2 * local + 1]) << 8)
            else:
                out_defs[i] = np.uint16(raw[d_at + 2 * local]) | (np.uint16(raw[d_at + 2 * local + 1]) << 8)
    return -1


def miniblock_take_flat(raw: np.ndarray, base: np.ndarray, ends: np.ndarray, counts: np.ndarray,
                        positions: np.ndarray, has_def: bool, word: int, width: int, zvals: bool, zdefs: bool,
                        bss: bool = False):
    """The values (``width`` bytes each, back to back) and def levels (u16, or None without
    levels) of the sorted entries ``positions`` (numbered across the chunks, whose entries
    are ``counts``) of the mini-block chunks ``raw[base[c]:ends[c]]`` (no rep levels, one
    value buffer, ``word``-byte buffer sizes): values ``Flat`` (``zvals``: under zstd;
    ``bss``: ``ByteStreamSplit`` of ``Flat``, byte b of a chunk's value i at ``b * count +
    i``), levels flat u16 (``zdefs``: under zstd). None when the chunks are not of that usual form
    or libzstd cannot be called from compiled code here: decode them the general way.
    Decompressed buffers must announce at least their chunk's values (levels), as the
    general path asks, and at most :data:`_MAX_ANNOUNCED` bytes."""
    lib = _library()
    if lib is None:  # no libzstd to call from compiled code: the general path decodes
        return None
    dctx = _context() if (zvals or zdefs) else 0
    n = len(positions)
    out_vals = empty(n * width, np.uint8)
    out_defs = empty(n, np.uint16) if has_def else np.zeros(0, np.uint16)
    scratch = _scratch() if (zvals or zdefs) else np.zeros(0, np.uint8)
    base, ends, counts, positions = (np.ascontiguousarray(x, np.int64) for x in (base, ends, counts, positions))
    got = _k_take_flat(lib[0], dctx, _byte_view(raw), base, ends, counts, positions, bool(has_def), int(word),
                       int(width), bool(zvals), bool(zdefs), _MAGIC, scratch, out_vals, out_defs, bool(bss))
    if got >= 0:
        return None
    return out_vals, (out_defs if has_def else None)


def _scratch() -> np.ndarray:
    """This thread's room for one chunk's decompressed values and levels (1 MiB, made once:
    a fresh one a call would cost a mapping and its page faults)."""
    got = getattr(_LOCAL, "scratch", None)
    if got is None:
        got = _LOCAL.scratch = np.empty(2 * _MAX_ANNOUNCED, np.uint8)
    return got

