"""XXH3-64 of many ranges of one buffer by one compiled loop, without a Python step a range.

The checksums (:mod:`lancefile.format.checksums`) hash a write in 16 KiB blocks and a mini-block
page in ~4 KiB segments: a 1,000-column write has ~60,000 of them, and a Python call each
(``xxhash.xxh3_64_intdigest`` through ``map``) cost about as much as the hashing. The
``xxhash`` package's extension module exports libxxhash's ``XXH3_64bits_dispatch``;
:func:`hash_ranges` calls it from a numba loop (the GIL released). Where the symbol cannot be
found (a build that hides it) the same functions hash range by range with ``xxhash``'s
Python calls: the same values either way.

Example::

    >>> import numpy as np, xxhash
    >>> data = np.frombuffer(b"abcdefgh", np.uint8)
    >>> got = hash_ranges(data, np.array([0, 3]), np.array([3, 5]))
    >>> got.tolist() == [xxhash.xxh3_64_intdigest(b"abc"), xxhash.xxh3_64_intdigest(b"defgh")]
    True
"""

from __future__ import annotations

import ctypes
import functools
import threading

import numpy as np
import xxhash

from .._jit import _helper, _Kernel
from ..io import _coalesce, fetch_requests, new_buffer, ranges_total
from ..localfile import preads
from ..threadpools import PARALLEL_DECODE_BYTES, in_halves

__all__ = ["hash_ranges", "hash_loop_available", "widen_reads", "check_reads", "read_checked", "read_checked_packed"]


@functools.lru_cache(maxsize=None)
def _xxh3():
    """``XXH3_64bits(const void*, size_t) -> u64`` from the xxhash extension, or None."""
    try:
        import xxhash._xxhash as ext

        lib = ctypes.CDLL(ext.__file__)
    except (ImportError, OSError):  # pragma: no cover - not a loadable module
        return None
    # the dispatching entry picks the CPU's widest vector code (AVX2: ~3x the plain one)
    fn = getattr(lib, "XXH3_64bits_dispatch", None) or getattr(lib, "XXH3_64bits", None)
    if fn is None:  # pragma: no cover - a build that hides its symbols
        return None
    fn.restype, fn.argtypes = ctypes.c_uint64, [ctypes.c_void_p, ctypes.c_size_t]
    probe = b"lancefile checksum probe"
    if fn(probe, len(probe)) != xxhash.xxh3_64_intdigest(probe):  # pragma: no cover - not the function we know
        return None
    proto = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t)
    return proto(ctypes.cast(fn, ctypes.c_void_p).value)


def hash_loop_available() -> bool:
    """Whether :func:`hash_ranges` runs compiled here."""
    return _xxh3() is not None


@_Kernel
def _k_hash_ranges(xxh3, data, starts, sizes, out):
    # -1, or the first range that does not lie inside data (nothing hashed from it on)
    base = data.ctypes.data
    n = data.shape[0]
    for i in range(starts.shape[0]):
        s, k = starts[i], sizes[i]
        if s < 0 or k < 0 or s + k > n:
            return i
        out[i] = xxh3(base + s, k)
    return -1


def hash_ranges(data, starts, sizes) -> np.ndarray:
    """XXH3-64 of ``data[starts[i] : starts[i] + sizes[i]]`` for each i (uint64), ``data`` a
    bytes-like object or an array of bytes: one compiled loop, or where it cannot run, a
    Python call a range. A range outside ``data`` raises ValueError."""
    if isinstance(data, np.ndarray):
        arr = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    else:
        arr = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    starts = np.ascontiguousarray(starts, np.int64)
    sizes = np.ascontiguousarray(sizes, np.int64)
    if len(starts) != len(sizes):
        raise ValueError(f"hash_ranges: {len(starts)} starts but {len(sizes)} sizes")
    fn = _xxh3()
    out = np.empty(len(starts), np.uint64)
    if fn is None:
        bad = ranges_total(starts, sizes, arr.size)
        bad = -1 - bad if bad < 0 else -1
        if bad < 0:
            out = _python_hashes(memoryview(arr), starts, sizes)
    else:
        bad = _k_hash_ranges(fn, arr, starts, sizes, out)
    if bad >= 0:
        raise ValueError(f"hash_ranges: range {bad} ({int(starts[bad])}, {int(sizes[bad])} bytes) lies outside "
                         f"the buffer of {arr.size} bytes")
    return out


# -- a take's checked reads (ChecksummedSource.read_spans) ------------------------------------


@_helper
def _last_at_or_before(pos, a):
    # the last i with pos[i] <= a (pos ascending), or -1
    lo, hi = 0, pos.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if pos[mid] <= a:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@_Kernel
def _k_widen(s, n, covered, block, seg_pos, seg_size, grid_pos, grid_size, grid_step, ws, we, b0, nb, seg):
    _widen(s, n, covered, block, seg_pos, seg_size, grid_pos, grid_size, grid_step, ws, we, b0, nb, seg)


@_helper
def _widen(s, n, covered, block, seg_pos, seg_size, grid_pos, grid_size, grid_step, ws, we, b0, nb, seg):
    # Range r, [s, s + n): inside a segment (the last starting at or before s), read that
    # segment whole (seg[r]); else inside a grid g, its pieces around the range (seg[r] =
    # -2 - g, b0[r] the first piece); else below ``covered``, read whole blocks (b0[r], nb[r]
    # of them), on to the range's end; else as it is.
    for r in range(s.shape[0]):
        a = s[r]
        e = a + n[r]
        i = _last_at_or_before(seg_pos, a)
        g = _last_at_or_before(grid_pos, a)
        b0[r] = 0
        nb[r] = 0
        seg[r] = -1
        if i >= 0 and e <= seg_pos[i] + seg_size[i]:
            seg[r] = i
            ws[r] = seg_pos[i]
            we[r] = seg_pos[i] + seg_size[i]
        elif g >= 0 and e <= grid_pos[g] + grid_size[g]:
            step = grid_step[g]
            k0 = (a - grid_pos[g]) // step
            k1 = max(k0 + 1, -(-(e - grid_pos[g]) // step))
            seg[r] = -2 - g
            b0[r] = k0
            ws[r] = grid_pos[g] + k0 * step
            we[r] = min(grid_pos[g] + k1 * step, grid_pos[g] + grid_size[g])
        elif a < covered:
            first = a // block
            last = -(-min(e, covered) // block)
            b0[r] = first
            nb[r] = last - first
            ws[r] = first * block
            we[r] = max(min(last * block, covered), e)
        else:
            ws[r] = a
            we[r] = e


@_Kernel
def _k_check_read(xxh3, data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash, grid_step, grid_first,
                  grid_hash, bad_blocks):
    return _check(xxh3, data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash, grid_step, grid_first,
                  grid_hash, bad_blocks)


@_helper
def _check(xxh3, data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash, grid_step, grid_first, grid_hash,
           bad_blocks):
    # Each block of the widened ranges (block b0[r] + j at data[at[r] + j * block:]) and each
    # segment read (seg[r] >= 0: data[at[r]:][:size[r]]) hashed once and compared, and each
    # grid piece read (seg[r] <= -2) compared by its hash's low 32 bits. Returns (blocks that
    # differ, written to bad_blocks; the first segment that differs or -1; the first grid
    # piece that differs, counted over all grids, or -1); (-1, -1, -1) when a range lies
    # outside data (a bug, never read past).
    total = 0
    nseg = 0
    for r in range(nb.shape[0]):
        total += nb[r]
        if seg[r] >= 0:
            nseg += 1
    blk = np.empty(total, np.int64)
    pos = np.empty(total, np.int64)
    k = 0
    ordered = True
    for r in range(nb.shape[0]):
        for j in range(nb[r]):
            blk[k] = b0[r] + j
            pos[k] = at[r] + j * block
            if k > 0 and blk[k] < blk[k - 1]:
                ordered = False
            k += 1
    if not ordered:
        order = np.argsort(blk, kind="mergesort")
        blk = blk[order]
        pos = pos[order]
    base = data.ctypes.data
    limit = data.shape[0]
    nbad = 0
    for k in range(total):
        if k > 0 and blk[k] == blk[k - 1]:
            continue
        b = blk[k]
        length = min(b * block + block, covered) - b * block
        if pos[k] < 0 or pos[k] + length > limit:
            return -1, -1, -1
        if xxh3(base + pos[k], length) != block_hash[b]:
            bad_blocks[nbad] = b
            nbad += 1
    ids = np.empty(nseg, np.int64)
    rows = np.empty(nseg, np.int64)
    k = 0
    for r in range(seg.shape[0]):
        if seg[r] >= 0:
            ids[k] = seg[r]
            rows[k] = r
            k += 1
    order = np.argsort(ids, kind="mergesort")
    for k in range(nseg):
        i = ids[order[k]]
        if k > 0 and i == ids[order[k - 1]]:
            continue
        r = rows[order[k]]
        if at[r] < 0 or at[r] + size[r] > limit:
            return -1, -1, -1
        if xxh3(base + at[r], size[r]) != seg_hash[i]:
            return nbad, i, -1
    mask = np.uint64(0xFFFFFFFF)
    for r in range(seg.shape[0]):
        if seg[r] > -2:
            continue
        g = -2 - seg[r]
        step = grid_step[g]
        if at[r] < 0 or at[r] + size[r] > limit:
            return -1, -1, -1
        j = 0
        while j * step < size[r]:
            length = min(step, size[r] - j * step)
            if (xxh3(base + at[r] + j * step, length) & mask) != np.uint64(grid_hash[grid_first[g] + b0[r] + j]):
                return nbad, -1, grid_first[g] + b0[r] + j
            j += 1
    return nbad, -1, -1


_NO_GRIDS = tuple(np.zeros(0, np.int64) for _ in range(4)) + (np.zeros(0, np.uint32),)


def _grid_arrays(grids) -> tuple:
    """(positions, sizes, steps, first pieces, hashes) of a :class:`~lancefile.format.grids.Grids`."""
    return _NO_GRIDS if grids is None or not len(grids) else (grids.pos, grids.size, grids.step, grids.first,
                                                              grids.hashes)


def widen_reads(s: np.ndarray, n: np.ndarray, covered: int, block: int, seg_pos: np.ndarray, seg_size: np.ndarray,
                grids=None):
    """``(ws, we, b0, nb, seg)``, int64 arrays, of a take's ranges ``[s, s + n)`` in a file
    whose checksums cover ``[0, covered)`` in blocks of ``block`` bytes plus the segments
    ``seg_pos``/``seg_size`` (ascending) and ``grids``: what to read (``[ws, we)``), and the
    blocks (``nb`` from ``b0``), the segment (``seg`` >= 0) or grid g (``seg`` = -2 - g, its
    pieces from ``b0``) that checks it (``seg`` -1: blocks). One compiled pass."""
    k = len(s)
    ws, we, b0, nb, seg = (np.empty(k, np.int64) for _ in range(5))
    gpos, gsize, gstep, _, _ = _grid_arrays(grids)
    _k_widen(s, n, covered, block, seg_pos, seg_size, gpos, gsize, gstep, ws, we, b0, nb, seg)
    return ws, we, b0, nb, seg


def check_reads(data: np.ndarray, at, size, b0, nb, seg, block: int, covered: int, block_hash, seg_hash,
                grids=None):
    """Hash what :func:`widen_reads` planned, read into ``data`` (range r at ``at[r]``,
    ``size[r]`` bytes), each block and segment once: ``(bad blocks, ascending; the first bad
    segment or -1; the first bad grid piece or -1)``. One compiled loop, or where it cannot
    run, a Python call a block."""
    fn = _xxh3()
    arrays = _grid_arrays(grids)
    if fn is None:
        return _check_reads_python(data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash, arrays)
    _, _, gstep, gfirst, ghash = arrays

    def run(a: int, b: int):  # ranges [a, b)
        bad = np.empty(int(nb[a:b].sum()), np.int64)
        nbad, seg_bad, piece_bad = _k_check_read(fn, data, at[a:b], size[a:b], b0[a:b], nb[a:b], seg[a:b], block,
                                                 covered, block_hash, seg_hash, gstep, gfirst, ghash, bad)
        if nbad < 0:
            raise AssertionError("a checked read's block lies outside the bytes read")  # pragma: no cover - a bug
        return bad[:nbad], int(seg_bad), int(piece_bad)

    parts = in_halves(run, size, int(size.sum()), PARALLEL_DECODE_BYTES)  # a large take's reads: on two cores
    segs = [x for _, x, _ in parts if x >= 0]
    pieces = [x for _, _, x in parts if x >= 0]
    return np.unique(np.concatenate([b for b, _, _ in parts])), min(segs, default=-1), min(pieces, default=-1)


@_Kernel
def _k_plan_reads(s, n, covered, block, seg_pos, seg_size, grid_pos, grid_size, grid_step, gap, ws, we, b0, nb, seg,
                  b_start, b_len, b_out, at):
    # _widen, then the widened ranges coalesced into requests (io._coalesce): (requests, bytes)
    _widen(s, n, covered, block, seg_pos, seg_size, grid_pos, grid_size, grid_step, ws, we, b0, nb, seg)
    return _coalesce(ws, we - ws, gap, b_start, b_len, b_out, at)


@_Kernel
def _k_pread_check(pread, fd, xxh3, data, b_start, b_len, b_out, at, size, b0, nb, seg, block, covered, block_hash,
                   seg_hash, grid_step, grid_first, grid_hash, bad_blocks):
    # Request j read by pread(fd) into data at b_out[j], then _check of what was read:
    # (-1, _check's three answers), or (the first request that read short, 0, -1, -1).
    short = preads(pread, fd, data, b_start, b_len, b_out)
    if short >= 0:
        return np.int64(short), np.int64(0), np.int64(-1), np.int64(-1)
    nbad, seg_bad, piece_bad = _check(xxh3, data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash,
                                      grid_step, grid_first, grid_hash, bad_blocks)
    return np.int64(-1), np.int64(nbad), np.int64(seg_bad), np.int64(piece_bad)


def read_checked(source, s: np.ndarray, n: np.ndarray, gap: int, covered: int, block: int, seg_pos, seg_size,
                 block_hash, seg_hash, grids=None):
    """A take's ranges ``[s, s + n)`` (checked int64 arrays) read from ``source`` and checked:
    :func:`widen_reads`, the widened ranges coalesced into requests (gaps under ``gap``),
    read and :func:`check_reads`. ``(data, at, bad blocks, bad segment, bad piece)``, range
    ``i`` being ``data[at[i]:][:n[i]]``. From a local file (a source with ``pread_handle()``)
    the reading and the hashing are one compiled call, the planning another: a take's
    checked reads cost two calls, as its unchecked ones do (a 100-row take of a 2-column
    low-cardinality file makes 4 batches of reads)."""
    k = len(s)
    ws, we, b0, nb, seg, b_start, b_len, b_out, at = (np.empty(k, np.int64) for _ in range(9))
    gpos, gsize, gstep, gfirst, ghash = _grid_arrays(grids)
    m, total = _k_plan_reads(s, n, covered, block, seg_pos, seg_size, gpos, gsize, gstep, gap, ws, we, b0, nb, seg,
                             b_start, b_len, b_out, at)
    b_start, b_len, b_out, size = b_start[:m], b_len[:m], b_out[:m], we - ws
    buf = new_buffer(int(total))
    data = np.frombuffer(buf, np.uint8)
    fn, handle = _xxh3(), getattr(source, "pread_handle", None)
    handle = handle() if handle is not None and fn is not None and total < PARALLEL_DECODE_BYTES else None
    if handle is not None and data.flags.writeable:
        bad = np.empty(int(nb.sum()), np.int64)
        short, nbad, seg_bad, piece_bad = _k_pread_check(handle[0], handle[1], fn, data, b_start, b_len, b_out, at,
                                                         size, b0, nb, seg, block, covered, block_hash, seg_hash,
                                                         gstep, gfirst, ghash, bad)
        if nbad < 0:
            raise AssertionError("a checked read's block lies outside the bytes read")  # pragma: no cover - a bug
        if short < 0:
            return data, at + (s - ws), bad[:nbad], int(seg_bad), int(piece_bad)
    fetch_requests(source, b_start, b_len, b_out, buf)  # (after a short read: read again, which says why)
    bad, seg_bad, piece_bad = check_reads(data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash, grids)
    return data, at + (s - ws), bad, seg_bad, piece_bad


@_Kernel
def _k_pread_check_packed(pread, fd, xxh3, scratch, b_start, b_len, b_out, at, size, b0, nb, seg, skip, n, block,
                          covered, block_hash, seg_hash, grid_step, grid_first, grid_hash, bad_blocks, out):
    # Request j read by pread(fd) into scratch, its ranges checked (_check) and their bytes
    # (n[r] from skip[r] into the widened range at at[r]) copied to out, one after another:
    # (-1, blocks that differ, first bad segment, first bad piece), or (the first request
    # that read short, 0, -1, -1); (-2, ...) when a range lies outside its request (a bug).
    k = at.shape[0]
    base = scratch.ctypes.data
    r = 0
    o = 0
    nbad = 0
    seg_bad = np.int64(-1)
    piece_bad = np.int64(-1)
    for j in range(b_start.shape[0]):
        if pread(fd, base, b_len[j], b_start[j]) != b_len[j]:
            return np.int64(j), np.int64(0), np.int64(-1), np.int64(-1)
        lo = b_out[j]
        hi = lo + b_len[j]
        r0 = r
        while r < k and at[r] < hi:
            r += 1
        got, s_bad, p_bad = _check(xxh3, scratch, at[r0:r] - lo, size[r0:r], b0[r0:r], nb[r0:r], seg[r0:r], block,
                                   covered, block_hash, seg_hash, grid_step, grid_first, grid_hash, bad_blocks[nbad:])
        if got < 0:
            return np.int64(-2), np.int64(0), np.int64(-1), np.int64(-1)
        nbad += got
        if s_bad >= 0 and seg_bad < 0:
            seg_bad = s_bad
        if p_bad >= 0 and piece_bad < 0:
            piece_bad = p_bad
        for q in range(r0, r):
            a = at[q] - lo + skip[q]
            if a < 0 or a + n[q] > b_len[j]:
                return np.int64(-2), np.int64(0), np.int64(-1), np.int64(-1)
            out[o : o + n[q]] = scratch[a : a + n[q]]
            o += n[q]
    return np.int64(-1), np.int64(nbad), seg_bad, piece_bad


# the largest request :func:`read_checked_packed` reads through its scratch buffer
PACKED_REQUEST_BYTES = 1 << 20
_LOCAL = threading.local()


def read_checked_packed(source, s: np.ndarray, n: np.ndarray, gap: int, covered: int, block: int, seg_pos, seg_size,
                        block_hash, seg_hash, grids=None):
    """:func:`read_checked`'s ranges back to back, ``(data, bad blocks, bad segment, bad
    piece)``, from a local file: each request (the widened ranges, coalesced) read into a
    per-thread scratch buffer, checked, and its ranges' bytes copied out, in one compiled
    call. A take of 100 vectors of 3 KB hashes their 16 KiB blocks (2 MB) in a buffer that
    stays in cache, where :func:`read_checked` writes all 2 MB to memory and a gather copies
    the rows out of it. None when it cannot run here (no local file handle or compiled
    hashing, ranges out of order, a request over :data:`PACKED_REQUEST_BYTES`, or a read
    large enough for two threads): :func:`read_checked` then reads."""
    fn, handle = _xxh3(), getattr(source, "pread_handle", None)
    if fn is None or handle is None or (len(s) > 1 and np.any(s[1:] < s[:-1])):  # (requests in the ranges' order)
        return None
    k = len(s)
    ws, we, b0, nb, seg, b_start, b_len, b_out, at = (np.empty(k, np.int64) for _ in range(9))
    gpos, gsize, gstep, gfirst, ghash = _grid_arrays(grids)
    m, total = _k_plan_reads(s, n, covered, block, seg_pos, seg_size, gpos, gsize, gstep, gap, ws, we, b0, nb, seg,
                             b_start, b_len, b_out, at)
    if not m or total >= PARALLEL_DECODE_BYTES or int(b_len[:m].max()) > PACKED_REQUEST_BYTES:
        return None
    handle = handle()
    if handle is None:
        return None
    scratch = getattr(_LOCAL, "scratch", None)
    if scratch is None:
        scratch = _LOCAL.scratch = np.empty(PACKED_REQUEST_BYTES, np.uint8)
    out = np.frombuffer(new_buffer(int(n.sum())), np.uint8)
    bad = np.empty(int(nb.sum()), np.int64)
    short, nbad, seg_bad, piece_bad = _k_pread_check_packed(handle[0], handle[1], fn, scratch, b_start[:m], b_len[:m],
                                                            b_out[:m], at, we - ws, b0, nb, seg, s - ws, n, block,
                                                            covered, block_hash, seg_hash, gstep, gfirst, ghash, bad,
                                                            out)
    if short == -2:
        raise AssertionError("a checked read's range lies outside its request")  # pragma: no cover - a bug
    if short >= 0:
        return None  # a short read: read_checked reads again, and says why
    return out, bad[:nbad], int(seg_bad), int(piece_bad)


def _python_hashes(view: memoryview, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """:func:`hash_ranges` without the compiled loop: ``map`` rather than a Python step a range."""
    ends = (starts + sizes).tolist()
    return np.fromiter(map(xxhash.xxh3_64_intdigest, map(view.__getitem__, map(slice, starts.tolist(), ends))),
                       np.uint64, len(ends))


def _check_reads_python(data, at, size, b0, nb, seg, block, covered, block_hash, seg_hash, grids=_NO_GRIDS):
    """:func:`check_reads` without the compiled loop (the same answers): blocks and segments
    found once each with numpy, hashed by :func:`hash_ranges`; grid pieces one by one."""
    view = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    bad = np.zeros(0, np.int64)
    total = int(nb.sum())
    if total:
        span = np.repeat(np.arange(len(nb)), nb)
        k = np.arange(total) - np.repeat(np.cumsum(nb) - nb, nb)
        blocks, first = np.unique(b0[span] + k, return_index=True)
        length = np.minimum(blocks * block + block, covered) - blocks * block
        bad = blocks[hash_ranges(view, (at[span] + k * block)[first], length) != block_hash[blocks]]
    seg_bad = -1
    mine = np.flatnonzero(seg >= 0)
    if len(mine):
        ids, first = np.unique(seg[mine], return_index=True)
        rows = mine[first]
        wrong = np.flatnonzero(hash_ranges(view, at[rows], size[rows]) != seg_hash[ids])
        if len(wrong):
            seg_bad = int(ids[wrong[0]])
    _, _, gstep, gfirst, ghash = grids
    for r in np.flatnonzero(seg <= -2).tolist():
        g = -2 - int(seg[r])
        step, a, z = int(gstep[g]), int(at[r]), int(size[r])
        for j in range(-(-z // step)):
            piece = int(gfirst[g]) + int(b0[r]) + j
            got = xxhash.xxh3_64_intdigest(view[a + j * step : a + min((j + 1) * step, z)]) & 0xFFFFFFFF
            if got != int(ghash[piece]):
                return bad, seg_bad, piece
    return bad, seg_bad, -1
