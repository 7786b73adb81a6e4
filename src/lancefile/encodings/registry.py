"""Decoders found by the protobuf oneof name of their encoding, one registry per message.

Each encoding module registers its handler under the name of the oneof field that
selects it, so dispatch is a dictionary lookup and an unknown encoding gives an error
naming it, the message it came from and where it was met:

* :data:`ARRAY`: 2.0 ``lance.encodings.ArrayEncoding`` (``"flat"``, ``"nullable"``...);
  a handler is ``decode(msg, page, dtype, sel) -> pa.Array``.
* :data:`LAYOUT`: 2.1+ ``lance.encodings21.PageLayout`` (``"mini_block_layout"``...);
  a handler is a page-layout class of :mod:`lancefile.encodings.structural`.
* :data:`COMPRESSIVE`: 2.1+ ``lance.encodings21.CompressiveEncoding`` (``"flat"``,
  ``"inline_bitpacking"``...); a handler is a codec of :mod:`lancefile.encodings.compressive`.

Example::

    >>> from lancefile.encodings.registry import ARRAY, COMPRESSIVE
    >>> import lancefile.encodings.v2_0, lancefile.encodings.compressive
    >>> "flat" in ARRAY and "inline_bitpacking" in COMPRESSIVE
    True
    >>> COMPRESSIVE.get("xyz", where="f.lance: column 0 page 3 (file version 2.2)")
    Traceback (most recent call last):
    ...
    lancefile.errors.UnsupportedEncodingError: f.lance: column 0 page 3 (file version 2.2): no decoder registered for compressive encoding 'xyz'
"""

from __future__ import annotations

from ..errors import CorruptFileError, UnsupportedEncodingError

__all__ = ["Registry", "ARRAY", "LAYOUT", "COMPRESSIVE", "ARRAY_DECODERS", "register_array_decoder",
           "decode_array"]


class Registry:
    """Handlers keyed by the oneof names of one protobuf message."""

    def __init__(self, kind: str, oneof: str) -> None:
        self.kind = kind  # e.g. "compressive encoding", used in messages
        self.oneof = oneof  # the oneof field of the message
        self._handlers: dict[str, object] = {}

    def register(self, name: str):
        """Decorator: register a handler (function, class or instance) under ``name``."""

        def wrap(handler):
            if name in self._handlers:
                raise RuntimeError(f"two handlers registered for {self.kind} {name!r}")
            self._handlers[name] = handler
            return handler

        return wrap

    def __contains__(self, name: str) -> bool:
        return name in self._handlers

    def names(self) -> list[str]:
        return sorted(self._handlers)

    def get(self, name: str, *, where: str):
        handler = self._handlers.get(name)
        if handler is None:
            raise UnsupportedEncodingError(f"{where}: no decoder registered for {self.kind} {name!r}")
        return handler

    def which(self, msg, *, where: str) -> tuple[str, object]:
        """``(oneof name, the set sub-message)`` of ``msg``; an empty oneof is a corrupt file."""
        name = msg.WhichOneof(self.oneof)
        if name is None:
            raise CorruptFileError(f"{where}: {self.kind} has no variant set (unknown or missing encoding)")
        return name, getattr(msg, name)

    def lookup(self, msg, *, where: str):
        """``(name, sub-message, handler)`` for the variant set in ``msg``."""
        name, sub = self.which(msg, where=where)
        return name, sub, self.get(name, where=where)


ARRAY = Registry("array encoding", "array_encoding")
LAYOUT = Registry("page layout", "layout")
COMPRESSIVE = Registry("compressive encoding", "compression")

# The 2.0 names, kept for the 2.0 encoding modules.
ARRAY_DECODERS = ARRAY._handlers
register_array_decoder = ARRAY.register


def decode_array(enc, page, dtype, sel):
    """Decode the rows ``sel`` of a page encoded with the 2.0 ArrayEncoding ``enc``."""
    name, sub, fn = ARRAY.lookup(enc, where=page.where)
    return fn(sub, page, dtype, sel)
