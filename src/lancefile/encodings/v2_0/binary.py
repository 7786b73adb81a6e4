"""Binary: variable-width values as end offsets plus bytes (2.0 ``Binary``).

Proto: ``lance.encodings.Binary { indices, bytes, null_adjustment }``.

``indices`` (usually ``Nullable{no_nulls{Flat{64}}}``, page buffer 0) holds, per row, the
cumulative *end* offset of the row in ``bytes`` (``Flat{8}``, page buffer 1); the leading 0
is not stored. A null row stores ``end + null_adjustment`` where
``null_adjustment = total_bytes + 1``, so ``v >= null_adjustment`` means null.
``["ab", null, "c"]`` has 3 bytes, ``null_adjustment = 4``, indices ``[2, 6, 3]`` (u64) and
bytes ``61 62 63``. ``bytes`` may be compressed as a whole (``Flat.compression``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import CorruptFileError
from ..arrowutil import gather_ranges, to_uint8, safe_array
from ..registry import decode_array, register_array_decoder
from ..selection import Selection
from .flat import _decompressed, _is_compressed, flat_bytes, plain_flat, plain_values
from .offsets import range_offsets, row_spans, split_adjusted
from .spans import read_spans

__all__ = ["decode_binary", "decode_binary_parts", "decode_small_binary", "build_binary"]


def _ends(msg, page, sel: Selection):
    """(ends, valid) of the rows in ``sel`` as int64 / bool numpy arrays."""
    flat = plain_flat(msg.indices)
    if flat is not None and int(flat.bits_per_value) == 64:
        raw = plain_values(flat, page, sel, "<u8")  # the usual reads, without an Arrow array
        if raw is not None:
            return split_adjusted(raw, int(msg.null_adjustment))
    raw = decode_array(msg.indices, page, pa.uint64(), sel)
    return split_adjusted(raw.to_numpy(zero_copy_only=False), int(msg.null_adjustment))


def _bytes(msg, page, starts: np.ndarray, lengths: np.ndarray, contiguous: bool) -> np.ndarray:
    enc = msg.bytes
    if enc.WhichOneof("array_encoding") != "flat":
        raise page.error(f"Binary bytes use {enc.WhichOneof('array_encoding')!r}, expected flat")
    flat = enc.flat
    if contiguous:
        lo = int(starts[0]) if len(starts) else 0
        hi = int(starts[-1] + lengths[-1]) if len(starts) else 0
        return to_uint8(flat_bytes(flat, page, lo, hi - lo))
    if _is_compressed(flat):
        return gather_ranges(_decompressed(flat, page), starts, lengths)
    return read_spans(page, flat.buffer, starts, lengths)


def decode_binary_parts(msg, page, sel: Selection):
    """Decode to (offsets int64 starting at 0, data uint8, valid bool) for the rows of ``sel``."""
    if sel.count == 0:
        return np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.uint8), np.empty(0, dtype=bool)
    starts, ends, valid = row_spans(sel, lambda s: _ends(msg, page, s))
    lengths = ends - starts
    if np.any(lengths < 0) or (len(starts) and starts[0] < 0):
        raise page.error("Binary offsets are not increasing")
    data = _bytes(msg, page, starts, lengths, sel.is_range)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, data, valid


# A dictionary's items up to this size are read with their end offsets in one request.
SMALL_BINARY_BYTES = 1024 * 1024


def decode_small_binary(msg, page, n: int):
    """(offsets, data, valid) of rows ``[0, n)`` when the ends and the bytes are plain, uncompressed
    Flat buffers and the bytes are small (a page's dictionary): one request for both; else None."""
    ends_flat = plain_flat(msg.indices)
    if msg.bytes.WhichOneof("array_encoding") != "flat" or ends_flat is None:
        return None
    bytes_flat = msg.bytes.flat
    if int(ends_flat.bits_per_value) != 64 or _is_compressed(ends_flat) or _is_compressed(bytes_flat):
        return None
    ends_ref, bytes_ref = page.ref(ends_flat.buffer), page.ref(bytes_flat.buffer)
    if bytes_ref.size > SMALL_BINARY_BYTES or n == 0:
        return None
    if n * 8 > ends_ref.size:
        raise page.error(f"Flat buffer of {ends_ref.size} bytes is too short for rows up to {n}")
    raw, data = page.read_ranges_of([(ends_flat.buffer, 0, n * 8), (bytes_flat.buffer, 0, bytes_ref.size)])
    ends, valid = split_adjusted(np.frombuffer(raw, dtype="<u8"), int(msg.null_adjustment))
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = ends
    if np.any(offsets[1:] < offsets[:-1]):
        raise page.error("Binary offsets are not increasing")
    if offsets[-1] > bytes_ref.size:
        raise page.error(f"needs bytes [0, {int(offsets[-1])}) of a {bytes_ref.size}-byte buffer")
    return offsets, to_uint8(data)[: int(offsets[-1])], valid


def build_binary(dtype: pa.DataType, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None) -> pa.Array:
    """An Arrow string/binary array from int64 offsets, bytes and an optional validity."""
    n = len(offsets) - 1
    large = pa.types.is_large_string(dtype) or pa.types.is_large_binary(dtype)
    if not large:
        if offsets[-1] > np.iinfo(np.int32).max:
            raise CorruptFileError(f"{offsets[-1]} bytes of values do not fit a {dtype} array (use the large type)")
        offsets = offsets.astype(np.int32, copy=False)
    bitmap = None
    if valid is not None and not valid.all():
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return safe_array(dtype, n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)])


def _range_parts(msg, page, sel: Selection, dtype: pa.DataType):
    """(offsets, bytes, validity or None) of a range of rows whose ends are plain u64 and bytes
    Flat: the offsets in the width of ``dtype``'s Arrow array, made in one compiled pass
    (:func:`.offsets.range_offsets`); None for any other layout."""
    if msg.bytes.WhichOneof("array_encoding") != "flat":
        return None
    large = pa.types.is_large_string(dtype) or pa.types.is_large_binary(dtype)
    got = range_offsets(msg.indices, page, sel, int(msg.null_adjustment),
                        lambda what: page.error(f"Binary offsets are not increasing ({what})"),
                        np.int64 if large else np.int32)
    if got is None:
        return None
    offsets, valid, first = got
    return offsets, to_uint8(flat_bytes(msg.bytes.flat, page, first, int(offsets[-1]))), valid


@register_array_decoder("binary")
def decode_binary(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    got = _range_parts(msg, page, sel, dtype) if sel.is_range and sel.count else None
    offsets, data, valid = got if got is not None else decode_binary_parts(msg, page, sel)
    return build_binary(dtype, offsets, data, valid)


def encode_binary(indices_buffer: int, bytes_buffer: int, null_adjustment: int,
                  compression: str | None = None, level: int | None = None) -> pb.ArrayEncoding:
    from .flat import encode_flat
    from .nullable import wrap_no_nulls

    return pb.ArrayEncoding(binary=pb.Binary(
        indices=wrap_no_nulls(encode_flat(64, indices_buffer)),
        bytes=encode_flat(8, bytes_buffer, compression, level),
        null_adjustment=null_adjustment,
    ))
