"""XXH3-64 of many ranges of one buffer by one compiled loop, without a Python step a range.

The checksums (:mod:`lancefile.format.checksums`) hash a write in 16 KiB blocks and a mini-block
page in ~4 KiB segments: a 1,000-column write has ~60,000 of them, and a Python call each
(``xxhash.xxh3_64_intdigest`` through ``map``) cost about as much as the hashing. The
``xxhash`` package's extension module exports libxxhash's ``XXH3_64bits_dispatch``;
:func:`hash_ranges` calls it from a numba loop (the GIL released). Where the symbol cannot be
found (a build that hides it) :func:`hash_ranges` returns None and the caller hashes range by
range as before: the same values either way.

Example::

    >>> import numpy as np, xxhash
    >>> data = np.frombuffer(b"abcdefgh", np.uint8)
    >>> got = hash_ranges(data, np.array([0, 3]), np.array([3, 5]))
    >>> got is None or got.tolist() == [xxhash.xxh3_64_intdigest(b"abc"), xxhash.xxh3_64_intdigest(b"defgh")]
    True
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from .._jit import _Kernel

__all__ = ["hash_ranges", "hash_loop_available"]


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
    import xxhash

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


def hash_ranges(data, starts, sizes) -> np.ndarray | None:
    """XXH3-64 of ``data[starts[i] : starts[i] + sizes[i]]`` for each i (uint64), or None when
    the compiled loop cannot run here. ``data`` is a bytes-like object or a uint8 array; the
    caller keeps every range inside it."""
    fn = _xxh3()
    if fn is None:
        return None
    if isinstance(data, np.ndarray):
        arr = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    else:
        arr = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    starts = np.ascontiguousarray(starts, np.int64)
    sizes = np.ascontiguousarray(sizes, np.int64)
    if len(starts) != len(sizes):
        raise ValueError(f"hash_ranges: {len(starts)} starts but {len(sizes)} sizes")
    out = np.empty(len(starts), np.uint64)
    bad = _k_hash_ranges(fn, arr, starts, sizes, out)
    if bad >= 0:
        raise ValueError(f"hash_ranges: range {bad} ({int(starts[bad])}, {int(sizes[bad])} bytes) lies outside "
                         f"the buffer of {arr.size} bytes")
    return out
