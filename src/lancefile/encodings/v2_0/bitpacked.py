"""Bit-packed integers, read side only (2.0 ``Bitpacked`` and ``BitpackedForNonNeg``).

Current 2.0 writers never emit these, but older files may hold them.

* ``Bitpacked``: value i at bit offset ``i * w`` (LSB first), sign-extended when
  ``signed``. Values ``1, 2, 3`` at w=2 are the byte ``0b00111001 = 0x39``.
* ``BitpackedForNonNeg``: FastLanes 1024-value chunks at width w, last chunk zero-padded
  (see :mod:`lancefile.encodings.kernels`).

The page's buffer is decoded once and the wanted rows taken from it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import kernels
from ..arrowutil import array_from_fixed, fixed_width_bits, to_uint8
from ..registry import register_array_decoder
from ..selection import Selection

__all__ = ["decode_bitpacked", "decode_bitpacked_for_non_neg"]

_DT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SDT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _finish(values: np.ndarray, dtype: pa.DataType, sel: Selection, page) -> pa.Array:
    if sel.stop > len(values):
        raise page.error(f"bit-packed buffer holds {len(values)} values, fewer than row {sel.stop - 1}")
    picked = values[sel.start : sel.stop] if sel.is_range else values[sel.indices]
    return array_from_fixed(dtype, np.ascontiguousarray(picked).view(np.uint8), len(picked))


@register_array_decoder("bitpacked")
def decode_bitpacked(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    w, bits = int(msg.compressed_bits_per_value), int(msg.uncompressed_bits_per_value)
    if bits not in _DT or fixed_width_bits(dtype) != bits or not 0 <= w <= bits:
        raise page.error(f"Bitpacked {w}->{bits} bits cannot decode to {dtype}")

    def decode_all():
        buf = to_uint8(page.read(msg.buffer))
        count = (len(buf) * 8) // w if w else sel.stop
        out = _SDT[bits] if msg.signed else _DT[bits]
        return kernels.bitpacked_sequential_decode(buf, w, count, bool(msg.signed), out)

    values = page.cached(("bitpacked", msg.SerializeToString()), decode_all)
    return _finish(values, dtype, sel, page)


@register_array_decoder("bitpacked_for_non_neg")
def decode_bitpacked_for_non_neg(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    w, bits = int(msg.compressed_bits_per_value), int(msg.uncompressed_bits_per_value)
    if bits not in _DT or fixed_width_bits(dtype) != bits or not 0 <= w <= bits:
        raise page.error(f"BitpackedForNonNeg {w}->{bits} bits cannot decode to {dtype}")

    def decode_all():
        buf = to_uint8(page.read(msg.buffer))
        chunk_bytes = 1024 * w // 8
        chunks = len(buf) // chunk_bytes if chunk_bytes else (sel.stop + 1023) // 1024
        return kernels.bitpacked_for_non_neg_decode(buf, w, bits, chunks * 1024)

    values = page.cached(("bitpacked-nn", msg.SerializeToString()), decode_all)
    return _finish(values, dtype, sel, page)
