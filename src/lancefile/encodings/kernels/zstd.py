"""zstd frames decoded by one compiled loop that calls libzstd itself, without the GIL.

python-zstandard's C backend decodes a batch of frames in one call
(``multi_decompress_to_buffer``) but holds the GIL throughout and hands back one Python
buffer a frame, which are then joined. The same package also ships its cffi build of
libzstd (``zstandard._cffi``); :func:`zstd_decompress_into` takes ``ZSTD_decompressDCtx``
from there and calls it from a numba loop, once a frame, straight into the caller's output:
no Python object a frame, no join, and other threads run meanwhile.

Every frame must decode to exactly its announced size (its capacity in the output): a frame
that announces more than its slot, is damaged or decodes short stops the loop, and the
caller's frame-by-frame path then says which buffer is wrong and why. Without the cffi build
(:func:`zstd_available` is False) the caller keeps to python-zstandard's own calls.

Example::

    >>> import numpy as np, zstandard
    >>> if zstd_available():
    ...     frames = [zstandard.ZstdCompressor().compress(b) for b in (b"abc" * 5, b"xy")]
    ...     raw = np.frombuffer(b"".join(frames), np.uint8)
    ...     out = np.zeros(17, np.uint8)
    ...     bad = zstd_decompress_into(raw, np.array([0, len(frames[0])]), np.array([len(frames[0]), len(frames[1])]),
    ...                                out, np.array([0, 15]), np.array([15, 2]))
    ...     print(bad, bytes(out))
    ... else:
    ...     print(-1, b"abcabcabcabcabcxy")
    -1 b'abcabcabcabcabcxy'
"""

from __future__ import annotations

import ctypes
import functools
import threading

import numpy as np

from ._common import _Kernel

__all__ = ["zstd_available", "zstd_decompress_into", "zstd_plan"]

_LOCAL = threading.local()


@functools.lru_cache(maxsize=None)
def _library():
    """(``ZSTD_decompressDCtx`` as a ctypes function, cffi's ffi, lib), or None where
    python-zstandard has no cffi build."""
    try:
        from zstandard import _cffi
    except ImportError:  # pragma: no cover - the wheels ship it
        return None
    ffi, lib = _cffi.ffi, _cffi.lib
    try:
        address = int(ffi.cast("uintptr_t", ffi.addressof(lib, "ZSTD_decompressDCtx")))
    except (AttributeError, TypeError):  # pragma: no cover - an unexpected build
        return None
    proto = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                             ctypes.c_void_p, ctypes.c_size_t)
    return proto(address), ffi, lib


def zstd_available() -> bool:
    """Whether :func:`zstd_decompress_into` can run here."""
    return _library() is not None


def _context() -> int:
    """This thread's decompression context (made once, freed with the thread), as an address."""
    got = getattr(_LOCAL, "dctx", None)
    if got is None:
        _, ffi, lib = _library()
        raw = lib.ZSTD_createDCtx()
        if raw == ffi.NULL:
            raise MemoryError("libzstd could not allocate a decompression context")
        ptr = ffi.gc(raw, lib.ZSTD_freeDCtx)
        got = _LOCAL.dctx = (ptr, int(ffi.cast("uintptr_t", ptr)))
    return got[1]


@_Kernel
def _k_zstd_into(decompress, dctx, raw, starts, sizes, out, out_starts, announced):
    # Frame i is raw[starts[i] : starts[i] + sizes[i]] and must fill out[out_starts[i]:][:announced[i]]
    # exactly; returns the first i that does not (an error code, a short frame), else -1.
    src = raw.ctypes.data
    dst = out.ctypes.data
    for i in range(starts.shape[0]):
        got = decompress(dctx, dst + out_starts[i], announced[i], src + starts[i], sizes[i])
        if np.int64(got) != announced[i]:
            return i
    return -1


def zstd_decompress_into(raw: np.ndarray, starts, sizes, out: np.ndarray, out_starts, announced) -> int:
    """Decode the zstd frames ``raw[starts[i]:][:sizes[i]]`` into ``out[out_starts[i]:]``, each
    to exactly ``announced[i]`` bytes: -1 when all did, else the first frame that did not
    (what it wrote is undefined). The caller checks that every frame and slot lies inside
    ``raw`` and ``out``."""
    fn = _library()[0]
    args = [np.ascontiguousarray(x, np.int64) for x in (starts, sizes, out_starts, announced)]
    return int(_k_zstd_into(fn, _context(), raw, args[0], args[1], out, args[2], args[3]))


@_Kernel
def _k_zstd_plan(raw, starts, sizes, magic, reserved, limit_max, ratio, slack, align, announced, usual, out_starts):
    # Framed buffer i: raw[starts[i]:][:sizes[i]] = u64 size + one frame. Reads each size and
    # checks the usual form (not a bare frame, 0 < size <= min(limit_max, ratio * frame +
    # slack)); lays the usual buffers' outputs out aligned (the others take no room, announce
    # 0) and returns their total.
    at = 0
    for i in range(starts.shape[0]):
        s, z = starts[i], sizes[i]
        announced[i] = 0
        usual[i] = False
        out_starts[i] = at
        if z < 12:
            continue
        if raw[s] == magic[0] and raw[s + 1] == magic[1] and raw[s + 2] == magic[2] and raw[s + 3] == magic[3] \
                and (raw[s + 4] & reserved) == 0:
            continue
        a = np.uint64(0)
        for k in range(8):
            a |= np.uint64(raw[s + k]) << np.uint64(8 * k)
        limit = min(limit_max, ratio * (z - 8) + slack)
        if a == 0 or a > np.uint64(limit):
            continue
        announced[i] = np.int64(a)
        usual[i] = True
        at += np.int64(a) + (-np.int64(a)) % align
    return at


def zstd_plan(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, magic: bytes, reserved: int, limit_max: int,
              ratio: int, slack: int, align: int):
    """``(announced, usual, out_starts, total)`` of framed zstd buffers (u64 size + one frame),
    in one compiled pass: each buffer's announced size (0 when not of the usual form) and
    whether it has the usual form (not a bare frame, announcing more than 0 and at most
    ``min(limit_max, ratio * frame + slack)``), and the usual outputs laid out back to back,
    each at a multiple of ``align``. The caller keeps every buffer inside ``raw``."""
    n = len(starts)
    announced, out_starts = np.empty(n, np.int64), np.empty(n, np.int64)
    usual = np.empty(n, np.bool_)
    total = int(_k_zstd_plan(raw, np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(sizes, np.int64),
                             np.frombuffer(magic, np.uint8), reserved, limit_max, ratio, slack, align, announced,
                             usual, out_starts))
    return announced, usual, out_starts, total
