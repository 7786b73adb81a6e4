"""Decoders and encoders found by the protobuf oneof name of their encoding.

Each encoding module registers its decoder under the name of the oneof field that
selects it (``"flat"``, ``"nullable"``, ``"binary"``...), so dispatch is a dictionary
lookup and an unknown encoding gives an error naming it.

Example::

    >>> from lancefile.encodings.registry import ARRAY_DECODERS
    >>> "flat" in ARRAY_DECODERS   # after lancefile.encodings.v2_0 is imported
    True
"""

from __future__ import annotations

from typing import Callable

from ..errors import CorruptFileError, UnsupportedEncodingError

__all__ = ["ARRAY_DECODERS", "register_array_decoder", "decode_array"]

# oneof name of lance.encodings.ArrayEncoding -> decode(msg, page, dtype, sel) -> pa.Array
ARRAY_DECODERS: dict[str, Callable] = {}


def register_array_decoder(name: str):
    def wrap(fn):
        if name in ARRAY_DECODERS:
            raise RuntimeError(f"two decoders registered for {name!r}")
        ARRAY_DECODERS[name] = fn
        return fn

    return wrap


def decode_array(enc, page, dtype, sel):
    """Decode the rows ``sel`` of a page encoded with the 2.0 ArrayEncoding ``enc``."""
    name = enc.WhichOneof("array_encoding")
    if name is None:
        raise CorruptFileError(f"{page.where}: array encoding has no variant set (unknown or missing encoding)")
    fn = ARRAY_DECODERS.get(name)
    if fn is None:
        raise UnsupportedEncodingError(
            f"{page.where}: this file uses encoding {name!r} and no decoder is registered for it"
        )
    return fn(getattr(enc, name), page, dtype, sel)
