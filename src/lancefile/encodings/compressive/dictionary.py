"""``Dictionary`` (the compressive variant): not decodable anywhere.

Proto: ``Dictionary { CompressiveEncoding indices = 1; CompressiveEncoding items = 2; uint32 num_dictionary_items = 3; }``

2.1/2.2 dictionaries live in the mini-block layout (``MiniBlockLayout.dictionary``); the
reference's grammar admits this message in no context, so neither do we. It is
registered so that a file using it gets "cannot appear in ..." rather than "unknown".
"""

from __future__ import annotations

from .base import Codec, register

__all__ = ["DictionaryCodec"]


@register("dictionary")
class DictionaryCodec(Codec):
    name = "dictionary"
    contexts = frozenset()
