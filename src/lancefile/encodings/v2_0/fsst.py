"""FSST-compressed binary (2.0 ``Fsst``; read side only).

Proto: ``lance.encodings.Fsst { binary, symbol_table }``. ``binary`` decodes to the
compressed strings (each compressed on its own); ``symbol_table`` is the 2312-byte table
described in :func:`lancefile.encodings.kernels.fsst_parse_symbol_table`. Code byte
``c < 255`` expands to symbol ``c``; ``255`` escapes the next byte as a literal.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import kernels
from ..registry import decode_array, register_array_decoder
from ..selection import Selection
from .binary import build_binary, decode_binary_parts

__all__ = ["decode_fsst"]


@register_array_decoder("fsst")
def decode_fsst(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    symbols, lengths, compressed = page.cached(
        ("fsst-table", id(msg)), lambda: kernels.fsst_parse_symbol_table(bytes(msg.symbol_table))
    )
    inner = msg.binary
    if inner.WhichOneof("array_encoding") == "binary":
        offsets, codes, valid = decode_binary_parts(inner.binary, page, sel)
    else:
        arr = decode_array(inner, page, pa.large_binary(), sel)
        bufs = arr.buffers()

        offsets = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
        codes = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
        codes = codes[offsets[0] : offsets[-1]]
        offsets = offsets - offsets[0]
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
    if compressed:
        data, offsets = kernels.fsst_decompress(codes, offsets, symbols, lengths)
    else:
        data = codes
    return build_binary(dtype, offsets, data, valid)
