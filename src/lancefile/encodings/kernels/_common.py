"""Shared machinery of the kernels: lazy numba compilation and small array helpers.

:class:`_Kernel` compiles a loop with ``numba.njit(cache=True)`` on its first call, so
importing a kernels module neither imports numba nor compiles anything.  The helpers turn
integer arrays and bytes-like buffers into the 1-D little-endian unsigned words of 8, 16,
32 or 64 bits that every layout in this package is made of, and check bit widths.
"""

from __future__ import annotations

import numpy as np

from ... import bufferpool
from ..._jit import _compile_helpers, _helper, _Kernel  # noqa: F401 (the kernels' machinery)
from ...errors import CorruptFileError, InvalidInputError
from ...threadpools import PARALLEL_DECODE_BYTES, in_halves, run_parallel  # noqa: F401 (the kernels' too)

__all__ = ["bit_width"]

_UINT = {8: np.dtype("<u1"), 16: np.dtype("<u2"), 32: np.dtype("<u4"), 64: np.dtype("<u8")}
_U64_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


# --------------------------------------------------------------------------------------
# Lazy numba compilation (lancefile._jit, shared with the I/O layer below)
# --------------------------------------------------------------------------------------

def store_u64(out, pos, value) -> None:
    """Write ``value`` as 8 little-endian bytes at ``out[pos]`` (any alignment).

    Compiled kernels get one unaligned 8-byte store instead (an LLVM intrinsic, made when
    the first kernel that calls it compiles); this plain version is the reference.
    """
    for k in range(8):
        out[pos + k] = (value >> (8 * k)) & 0xFF


def _make_store_u64():
    import llvmlite.ir as ir
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def _store_u64(typingctx, arr, idx, val):
        def codegen(context, builder, signature, args):
            arr_v, idx_v, val_v = args
            ary = context.make_array(signature.args[0])(context, builder, arr_v)
            ptr = builder.bitcast(builder.gep(ary.data, [idx_v]), ir.IntType(64).as_pointer())
            builder.store(context.cast(builder, val_v, signature.args[2], types.uint64), ptr).align = 1

        return types.void(arr, idx, val), codegen

    return _store_u64


store_u64._lancefile_intrinsic = _make_store_u64


def load_u64(data, pos):
    """The 8 little-endian bytes at ``data[pos]`` as an integer (any alignment; the caller
    makes sure 8 bytes are there). Compiled kernels get one unaligned 8-byte load."""
    value = 0
    for k in range(8):
        value |= int(data[pos + k]) << (8 * k)
    return np.uint64(value)


def _make_load_u64():
    import llvmlite.ir as ir
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def _load_u64(typingctx, arr, idx):
        def codegen(context, builder, signature, args):
            arr_v, idx_v = args
            ary = context.make_array(signature.args[0])(context, builder, arr_v)
            ptr = builder.bitcast(builder.gep(ary.data, [idx_v]), ir.IntType(64).as_pointer())
            load = builder.load(ptr)
            load.align = 1
            return load

        return types.uint64(arr, idx), codegen

    return _load_u64


load_u64._lancefile_intrinsic = _make_load_u64


# --------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------


# Outputs come from lancefile.bufferpool: Arrow's pool, large ones recycled, so the next
# chunk's output lands in pages already mapped. Fresh memory from the OS is faulted in page by
# page, which costs more than decoding into it, and much more when two threads do it at once
# (measured: unpacking 24 MB on two threads took 3.5x one thread's time).
def empty(n: int, dtype) -> np.ndarray:
    """An uninitialised array of ``n`` values (:func:`lancefile.bufferpool.allocate`'s memory)."""
    dtype = np.dtype(dtype)
    return bufferpool.allocate(int(n) * dtype.itemsize).view(dtype)


def _uint_dtype(bits: int) -> np.dtype:
    try:
        return _UINT[int(bits)]
    except (KeyError, TypeError, ValueError):
        raise InvalidInputError(f"unsupported word size {bits!r}; expected 8, 16, 32 or 64 bits") from None


def _unsigned_view(values) -> np.ndarray:
    """The values as a contiguous 1-D unsigned array of the same width (raw bits kept)."""
    arr = np.ascontiguousarray(values).reshape(-1)
    if arr.dtype.kind not in "iu" or arr.dtype.itemsize not in (1, 2, 4, 8):
        raise InvalidInputError(f"expected 8/16/32/64-bit integers, got dtype {arr.dtype}")
    target = _UINT[arr.dtype.itemsize * 8]
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and not np.little_endian):
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.view(target)


def _byte_view(buf) -> np.ndarray:
    """Any bytes-like object or array as a 1-D uint8 array, without copying."""
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf).reshape(-1).view(np.uint8)
    return np.frombuffer(buf, dtype=np.uint8)


def _words(buf, dtype: np.dtype, what: str) -> np.ndarray:
    """``buf`` as an aligned 1-D array of little-endian words of ``dtype``."""
    if isinstance(buf, np.ndarray) and buf.dtype == dtype and buf.ndim == 1 and buf.flags.c_contiguous and buf.flags.aligned:
        return buf
    raw = _byte_view(buf)
    if raw.size % dtype.itemsize:
        raise CorruptFileError(
            f"{what}: {raw.size} bytes is not a whole number of {dtype.itemsize * 8}-bit words"
        )
    words = raw.view(dtype)
    return words if words.flags.aligned else words.copy()


def _check_width(width: int, bits: int) -> int:
    width = int(width)
    if not 0 <= width <= bits:
        raise InvalidInputError(f"bit width {width} is outside 0..{bits}")
    return width


def bit_width(values) -> int:
    """Bits needed for the largest raw unsigned pattern in ``values`` (0 for all zeros).

    Signed values are taken as their raw bits, so a negative value needs the full width
    (the reference's ``Stat::BitWidth``).
    """
    arr = _unsigned_view(values)
    if arr.size == 0:
        return 0
    return int(np.bitwise_or.reduce(arr)).bit_length()
