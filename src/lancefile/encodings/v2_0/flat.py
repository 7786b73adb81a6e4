"""Flat: raw little-endian values at a fixed bit width (2.0 ``Flat``).

Proto: ``lance.encodings.Flat { bits_per_value, buffer, compression }``.

Layout: value i occupies bytes ``[i*w, (i+1)*w)`` of the buffer, ``w = bits_per_value/8``.
``bits_per_value = 1`` is an LSB-first bitmap (value i is bit ``i % 8`` of byte ``i // 8``).
Three int32 values ``1, 2, -1`` are ``01000000 02000000 ffffffff``; booleans
``T, F, T, T`` are the single byte ``0b00001101 = 0d``.

A set ``compression`` (``zstd``/``lz4``) means the whole buffer is compressed as one unit
(framing in :mod:`lancefile.encodings.compression`); it is decompressed once per page.

Decoding a row range returns an array whose Arrow offset is ``start % 8``: the read starts
at the byte holding row ``start - start % 8``, so bitmaps need no shifting and a validity
bitmap decoded over the same range lines up with the values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ..arrowutil import array_from_fixed, fixed_width_bits, to_uint8
from ..compression import decompress_buffer
from ..registry import register_array_decoder
from ..selection import Selection
from .spans import read_spans

__all__ = ["decode_flat", "decode_flat_rows", "flat_bytes", "encode_flat", "plain_flat", "plain_values", "plain_rows"]


def _decompressed(msg, page) -> np.ndarray:
    scheme = msg.compression.scheme
    return page.cached(
        ("decompressed", msg.buffer.buffer_type, msg.buffer.buffer_index),
        lambda: to_uint8(decompress_buffer(page.read(msg.buffer), scheme)),
    )


def _is_compressed(msg) -> bool:
    """Whether a 2.0 Flat buffer is compressed: a scheme is named, and it is not ``"none"``
    (pylance writes that for a field whose ``lance-encoding:compression`` is ``none``: the
    bytes as they are)."""
    return msg.HasField("compression") and msg.compression.scheme.strip().lower() not in ("", "none")


def flat_bytes(msg, page, start: int, length: int):
    """Bytes ``[start, start+length)`` of a Flat buffer, decompressing when needed."""
    if _is_compressed(msg):
        data = _decompressed(msg, page)
        if start + length > len(data):
            raise page.error(f"needs bytes [{start}, {start + length}) of a {len(data)}-byte decompressed buffer")
        return data[start : start + length]
    return page.read_range(msg.buffer, start, length)


def plain_flat(enc):
    """The Flat message of ``Flat`` or ``Nullable{no_nulls{Flat}}`` (values without nulls), else None."""
    kind = enc.WhichOneof("array_encoding")
    if kind == "nullable" and enc.nullable.WhichOneof("nullability") == "no_nulls":
        enc = enc.nullable.no_nulls.values
        kind = enc.WhichOneof("array_encoding")
    return enc.flat if kind == "flat" else None


def plain_rows(enc, dtype: pa.DataType):
    """(Flat message, bytes a row) when rows of ``dtype`` lie side by side, uncompressed and
    byte-aligned, in one Flat buffer: ``[Nullable{no_nulls}]Flat`` of the type's width, or
    such a fixed-size list over plain Flat items. Else None."""
    kind = enc.WhichOneof("array_encoding")
    if kind == "nullable" and enc.nullable.WhichOneof("nullability") == "no_nulls":
        enc = enc.nullable.no_nulls.values
        kind = enc.WhichOneof("array_encoding")
    bits = fixed_width_bits(dtype)
    if bits is None or bits % 8:
        return None
    if kind == "fixed_size_list":
        fsl = enc.fixed_size_list
        if fsl.has_validity or not pa.types.is_fixed_size_list(dtype) or int(fsl.dimension) != dtype.list_size:
            return None
        flat = plain_flat(fsl.items)
        if flat is None or int(flat.bits_per_value) * dtype.list_size != bits:
            return None
    elif kind == "flat":
        flat = enc.flat
        if int(flat.bits_per_value) != bits:
            return None
    else:
        return None
    return (None if _is_compressed(flat) else (flat, bits // 8))


def plain_values(msg, page, sel: Selection, dtype: str) -> np.ndarray | None:
    """Rows ``sel`` of an uncompressed, byte-aligned Flat buffer as a numpy array of ``dtype``
    (a view for a range), or None when :func:`decode_flat` must decode them (compressed or
    bitmap). The same reads as :func:`decode_flat_rows`, without building an Arrow array."""
    bits = int(msg.bits_per_value)
    if bits % 8 or _is_compressed(msg):
        return None
    w = bits // 8
    size = page.ref(msg.buffer).size
    if sel.stop * w > size:
        raise page.error(f"Flat buffer of {size} bytes is too short for rows up to {sel.stop}")
    if sel.is_range or sel.dense():
        values = np.frombuffer(page.read_range(msg.buffer, sel.start * w, sel.count * w if sel.is_range
                                               else (sel.stop - sel.start) * w), dtype=dtype)
        return values if sel.is_range else values[sel.indices - sel.start]
    return read_spans(page, msg.buffer, sel.indices * w, np.full(len(sel.indices), w, dtype=np.int64)).view(dtype)


def flat_size(msg, page) -> int:
    return len(_decompressed(msg, page)) if _is_compressed(msg) else page.ref(msg.buffer).size


@register_array_decoder("flat")
def decode_flat(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    bits = int(msg.bits_per_value)
    want = fixed_width_bits(dtype)
    if want != bits:
        raise page.error(f"Flat encoding has {bits} bits per value but type {dtype} needs {want}")
    return decode_flat_rows(msg, page, dtype, sel, bits)


def decode_flat_rows(msg, page, dtype: pa.DataType, sel: Selection, bits: int) -> pa.Array:
    """Rows of ``bits`` bits each (``bits_per_value`` times the values in a row, checked by
    the caller), e.g. a fixed-size list's rows over its Flat items: a take then fetches
    whole rows instead of every item separately."""
    if sel.count == 0:
        return pa.array([], type=dtype)
    size = flat_size(msg, page)
    if sel.is_range or sel.dense():
        first = sel.start - sel.start % 8
        if bits % 8 == 0:
            w = bits // 8
            lo, hi = first * w, sel.stop * w
        else:
            lo, hi = first * bits // 8, (sel.stop * bits + 7) // 8
        if hi > size:
            raise page.error(f"Flat buffer of {size} bytes is too short for rows up to {sel.stop}")
        arr = array_from_fixed(dtype, flat_bytes(msg, page, lo, hi - lo), sel.stop - sel.start, sel.start % 8)
        if sel.is_range:
            return arr
        return arr.take(pa.array(sel.indices - sel.start))
    idx = sel.indices
    if bits % 8 == 0:
        w = bits // 8
        if (idx[-1] + 1) * w > size:
            raise page.error(f"Flat buffer of {size} bytes is too short for row {idx[-1]}")
        if _is_compressed(msg):
            data = _decompressed(msg, page).reshape(-1, w)[idx]
        else:
            data = read_spans(page, msg.buffer, idx * w, np.full(len(idx), w, dtype=np.int64))
        return array_from_fixed(dtype, data, len(idx))
    # bitmaps: fetch the bytes holding the wanted bits, then pick the bits
    byte_idx = idx // 8
    if byte_idx[-1] >= size:
        raise page.error(f"bitmap of {size} bytes is too short for row {idx[-1]}")
    uniq, inv = np.unique(byte_idx, return_inverse=True)
    if _is_compressed(msg):
        got = _decompressed(msg, page)[uniq]
    else:
        got = read_spans(page, msg.buffer, uniq, np.ones(len(uniq), dtype=np.int64))
    bitvals = (got[inv] >> (idx % 8).astype(np.uint8)) & 1
    return pa.array(bitvals.astype(bool), type=dtype)


def encode_flat(bits: int, buffer_index: int, compression: str | None = None, level: int | None = None) -> pb.ArrayEncoding:
    """The ArrayEncoding message for a Flat buffer (the writer supplies the bytes)."""
    flat = pb.Flat(bits_per_value=bits, buffer=pb.Buffer(buffer_index=buffer_index))
    if compression:
        flat.compression.scheme = compression
        if level is not None:
            flat.compression.level = level
    return pb.ArrayEncoding(flat=flat)
