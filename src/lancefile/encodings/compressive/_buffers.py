"""Helpers shared by the compressive codecs: optional buffer compression, byte checks."""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ..compression import SCHEME_BY_PROTO, decompress_buffer, decompress_many

__all__ = ["decompress", "decompress_spans", "scheme_name", "as_bytes", "located"]


def scheme_name(bc, where: str) -> str:
    """``"lz4"``/``"zstd"`` of a ``BufferCompression`` message."""
    name = SCHEME_BY_PROTO.get(int(bc.scheme))
    if name is None:
        raise CorruptFileError(f"{where}: unknown buffer compression scheme {int(bc.scheme)}")
    return name


def located(where: str, fn, *args):
    """``fn(*args)``, with a kernel's CorruptFileError message prefixed by ``where``."""
    try:
        return fn(*args)
    except CorruptFileError as exc:
        raise CorruptFileError(f"{where}: {exc}") from None


def decompress(bc, data, where: str) -> np.ndarray:
    """Undo a ``BufferCompression`` (u32/u64 length prefix + LZ4 block / zstd frame)."""
    return np.frombuffer(located(where, decompress_buffer, data, scheme_name(bc, where)), dtype=np.uint8)


def as_bytes(data) -> np.ndarray:
    return data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)


def decompress_spans(bc, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, where: str, align: int = 8):
    """Undo a ``BufferCompression`` on every ``data[starts[i]:][:sizes[i]]`` at once:
    ``(out, out_starts, out_sizes)``, each output starting at a multiple of ``align``
    (:func:`~lancefile.encodings.compression.decompress_many`)."""
    return located(where, lambda: decompress_many(as_bytes(data), starts, sizes, scheme_name(bc, where), align=align))
