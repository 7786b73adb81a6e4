"""The 2.0 sequential ``Bitpacked`` layout: value i at bit ``i*W`` of the buffer, LSB first.

With ``signed`` the top bit of each W-bit value is its sign (two's complement).  Worked
example: 1, 2, 3 at W=2 are ``01 | 10 | 11`` from the low bit up, the byte ``0x39``; read
back as signed they are 1, -2, -1.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError, InvalidInputError
from ._common import _U64_ONES, _byte_view, _check_width, _Kernel, _uint_dtype, _unsigned_view

__all__ = ["bitpacked_sequential_encode", "bitpacked_sequential_decode"]


@_Kernel
def _k_seq_unpack(data, width, n, signed, out):
    # ``data`` carries 9 zero bytes of slack past the last value, so loads never run off.
    # Signed values are sign-extended in 64 bits; the store into ``out`` keeps the low bits.
    mask = _U64_ONES if width == 64 else (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    sign = np.uint64(0)
    if signed and 0 < width < 64:
        sign = np.uint64(1) << np.uint64(width - 1)
    for i in range(n):
        bit = i * width
        b = bit >> 3
        s = bit & 7
        nbytes = (s + width + 7) >> 3
        v = np.uint64(0)
        for j in range(min(nbytes, 8)):
            v |= np.uint64(data[b + j]) << np.uint64(8 * j)
        v >>= np.uint64(s)
        if nbytes > 8:
            v |= np.uint64(data[b + 8]) << np.uint64(64 - s)
        v &= mask
        out[i] = (v ^ sign) - sign


def bitpacked_sequential_decode(buf, width: int, num_values: int, signed: bool, out_dtype) -> np.ndarray:
    """Decode the 2.0 ``Bitpacked`` layout: value i at bit ``i*width``, LSB first.

    With ``signed`` the top bit of each value is its sign (two's complement, extended to
    ``out_dtype``).  ``width`` may not exceed the bits of ``out_dtype``.
    """
    out_dtype = np.dtype(out_dtype)
    if out_dtype.kind not in "iu":
        raise InvalidInputError(f"Bitpacked decodes integers, not {out_dtype}")
    bits = out_dtype.itemsize * 8
    width = _check_width(width, min(bits, 64))
    n = int(num_values)
    raw = _byte_view(buf)
    need = -(-n * width // 8)
    if raw.size < need:
        raise CorruptFileError(f"Bitpacked buffer has {raw.size} bytes; {n} values of {width} bits need {need}")
    padded = np.zeros(need + 9, dtype=np.uint8)
    padded[:need] = raw[:need]
    out = np.empty(n, dtype=_uint_dtype(bits))
    if n:
        _k_seq_unpack(padded, width, n, bool(signed), out)
    return out.view(out_dtype.newbyteorder("<"))


def bitpacked_sequential_decode_py(buf, width, num_values, signed, out_dtype) -> np.ndarray:
    """Plain-Python :func:`bitpacked_sequential_decode` (reference for the tests)."""
    raw = int.from_bytes(bytes(_byte_view(buf)), "little")
    out = []
    for i in range(int(num_values)):
        v = (raw >> (i * width)) & ((1 << width) - 1)
        if signed and width and v >> (width - 1):
            v -= 1 << width
        out.append(v)
    out_dtype = np.dtype(out_dtype)
    bits = out_dtype.itemsize * 8
    return np.array([v % (1 << bits) for v in out], dtype=np.uint64).astype(_uint_dtype(bits)).view(out_dtype)


def bitpacked_sequential_encode(values, width: int) -> bytes:
    """Encode the 2.0 ``Bitpacked`` layout (low ``width`` bits of each value, LSB first)."""
    arr = _unsigned_view(values)
    width = _check_width(width, arr.dtype.itemsize * 8)
    bits = np.unpackbits(arr.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    return np.packbits(bits[:, :width].reshape(-1), bitorder="little").tobytes()
