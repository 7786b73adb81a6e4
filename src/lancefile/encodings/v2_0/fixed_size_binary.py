"""Strings or binary values that all have one length (2.0 ``FixedSizeBinary``; read side).

Proto: ``lance.encodings.FixedSizeBinary { bytes, byte_width }``. ``bytes`` (a ``Flat{8}``: byte units) holds the values
back to back, ``byte_width`` each; offsets are implied (``i * byte_width``). ``["ab", "cd"]``
with width 2 is ``61 62 63 64``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..arrowutil import to_uint8, safe_array
from ..registry import register_array_decoder
from ..selection import Selection
from .binary import build_binary
from .flat import flat_bytes
from .spans import read_spans

__all__ = ["decode_fixed_size_binary"]


@register_array_decoder("fixed_size_binary")
def decode_fixed_size_binary(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    w = int(msg.byte_width)
    inner = msg.bytes
    if inner.WhichOneof("array_encoding") != "flat":
        raise page.error("FixedSizeBinary bytes must be a Flat encoding")
    n = sel.count
    if sel.is_range:
        data = to_uint8(flat_bytes(inner.flat, page, sel.start * w, n * w))
    else:
        data = read_spans(page, inner.flat.buffer, sel.indices * w, np.full(n, w, dtype=np.int64))
    offsets = np.arange(n + 1, dtype=np.int64) * w
    if pa.types.is_fixed_size_binary(dtype):
        return safe_array(dtype, n, [None, pa.py_buffer(data)])
    return build_binary(dtype, offsets, data, None)
