"""LSB-first bitmaps (bool values, validity): bit i is bit ``i % 8`` of byte ``i // 8``.

E.g. ten booleans with only the first and the last set pack to ``01 02``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ._common import _byte_view

__all__ = ["pack_bits_lsb", "unpack_bits_lsb"]


def unpack_bits_lsb(buf, num: int, offset: int = 0) -> np.ndarray:
    """Bits ``offset .. offset+num`` of an LSB-first bitmap (bit i = bit i%8 of byte i//8)."""
    raw = _byte_view(buf)
    num, offset = int(num), int(offset)
    need = -(-(offset + num) // 8)
    if offset < 0 or num < 0 or raw.size < need:
        raise CorruptFileError(f"bitmap of {raw.size} bytes cannot hold bits [{offset}, {offset + num})")
    first = offset // 8
    bits = np.unpackbits(raw[first:need], bitorder="little")
    start = offset - 8 * first
    return bits[start : start + num].view(np.bool_)


def unpack_bits_lsb_py(buf, num: int, offset: int = 0) -> np.ndarray:
    """Plain-Python :func:`unpack_bits_lsb` (reference for the tests)."""
    raw = bytes(_byte_view(buf))
    return np.array([(raw[(offset + i) // 8] >> ((offset + i) % 8)) & 1 for i in range(num)], dtype=np.bool_)


def pack_bits_lsb(bools) -> bytes:
    """Pack booleans into an LSB-first bitmap, the last byte zero-padded."""
    return np.packbits(np.asarray(bools, dtype=np.bool_).reshape(-1), bitorder="little").tobytes()
