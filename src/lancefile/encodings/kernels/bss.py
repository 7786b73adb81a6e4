"""Byte-stream-split: byte j of value i at ``j*n + i`` within one chunk of n values.

E.g. the uint32 values ``0x04030201, 0x08070605`` split to the bytes ``01 05 02 06 03 07 04 08``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ._common import _byte_view, _uint_dtype

__all__ = ["byte_stream_split_encode", "byte_stream_split_decode"]


def byte_stream_split_encode(values) -> bytes:
    """One chunk of byte-stream-split: byte j of value i goes to ``j*n + i``."""
    arr = np.ascontiguousarray(values).reshape(-1)
    width = arr.dtype.itemsize
    return arr.view(np.uint8).reshape(arr.size, width).T.tobytes()


def byte_stream_split_decode(buf, bits: int, num_values: int) -> np.ndarray:
    """Undo :func:`byte_stream_split_encode` for one chunk; returns unsigned words of ``bits``
    (view them as float32/float64 as needed)."""
    dtype = _uint_dtype(bits)
    n = int(num_values)
    raw = _byte_view(buf)
    need = n * dtype.itemsize
    if raw.size < need:
        raise CorruptFileError(f"byte-stream-split chunk has {raw.size} bytes; {n} values need {need}")
    return np.ascontiguousarray(raw[:need].reshape(dtype.itemsize, n).T).view(dtype).reshape(n)


def byte_stream_split_decode_py(buf, bits: int, num_values: int) -> np.ndarray:
    """Plain-Python :func:`byte_stream_split_decode` (reference for the tests)."""
    raw = bytes(_byte_view(buf))
    w = bits // 8
    n = int(num_values)
    vals = [int.from_bytes(bytes(raw[j * n + i] for j in range(w)), "little") for i in range(n)]
    return np.array(vals, dtype=np.uint64).astype(_uint_dtype(bits))
