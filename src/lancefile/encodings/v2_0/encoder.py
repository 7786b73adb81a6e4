"""Writing 2.0 columns: Arrow arrays in, pages (encoding + buffers) out.

The :class:`FieldEncoder` tree mirrors the 2.0 column layout (see :mod:`.fields`): each
field owning a column appends :class:`EncodedPage` objects to it through a
:class:`PageSink`. Which encoding a page gets is decided here, in one place, the way the
reference's 2.0 writer decides it:

* fixed-width values -> ``Nullable{no_nulls|some_nulls|all_nulls}`` around ``Flat``;
* string/binary -> ``Binary`` (``Flat`` bytes, compressed if the field metadata asks for
  ``lance-encoding:compression = zstd|lz4``), or a ``Dictionary`` for ``string`` pages of
  at least 100 values with fewer than 100 distinct ones;
* Arrow dictionaries -> ``Dictionary`` of the encoded keys and the encoded values;
* fixed-size lists -> ``FixedSizeList`` of the encoded items;
* packed structs (``packed: true``) -> ``PackedStruct``; blobs -> out-of-line bytes and a
  packed ``(position, size)`` page; lists -> ``List`` offsets pages plus the item column;
  structs -> a header column with one ``SimpleStruct`` page written at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import UnsupportedTypeError
from ...format.schema import LanceField
from ...format.version import FileVersion
from ..arrowutil import binary_parts, fixed_bytes, fixed_width_bits, is_empty_fixed_binary, null_mask, validity_bytes
from ..compression import compress_buffer
from ..page import EncodedPage
from .binary import encode_binary
from .dictionary import encode_dictionary
from .fixed_size_list import encode_fixed_size_list
from .flat import encode_flat
from .nullable import all_nulls, wrap_no_nulls, wrap_some_nulls
from .packed_struct import encode_packed_struct

__all__ = ["PageSink", "build_encoder", "column_encodings", "DICT_MIN_VALUES", "DICT_MAX_CARDINALITY"]

# Automatic dictionary for string pages: at least this many values, fewer distinct ones.
DICT_MIN_VALUES = 100
DICT_MAX_CARDINALITY = 100
COMPRESSION_KEY = "lance-encoding:compression"
COMPRESSION_LEVEL_KEY = "lance-encoding:compression-level"


class PageSink(Protocol):
    def add_page(self, column: int, page: EncodedPage) -> None: ...

    def write_out_of_line(self, data: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Write values back to back (each aligned); return their file positions."""
        ...


# -- leaf pages -----------------------------------------------------------------------

@dataclass
class _Buffers:
    items: list = field(default_factory=list)

    def add(self, data) -> int:
        self.items.append(data)
        return len(self.items) - 1


def _encode_values(arr: pa.Array | pa.ChunkedArray, bufs: _Buffers, opts: dict) -> pb.ArrayEncoding:
    """Encoding of a fixed-width or FSL array (validity handled by the caller).

    A ChunkedArray (see :func:`_chunkable`) gives a buffer of several pieces, written back
    to back: the same bytes as its concatenation, without making that copy.
    """
    t = arr.type
    if pa.types.is_fixed_size_list(t):
        d = t.list_size
        if isinstance(arr, pa.ChunkedArray):
            items = pa.chunked_array([_fsl_items(c) for c in arr.chunks], type=t.value_type)
        else:
            items = _fsl_items(arr)
        inner = all_nulls() if pa.types.is_null(items.type) else _encode_nullable(items, bufs, opts)
        return encode_fixed_size_list(d, inner)
    if isinstance(arr, pa.ChunkedArray):
        pieces = [fixed_bytes(c) for c in arr.chunks if len(c)]
        return encode_flat(fixed_width_bits(t), bufs.add(pieces[0] if len(pieces) == 1 else pieces))
    return encode_flat(fixed_width_bits(t), bufs.add(fixed_bytes(arr)))


def _fsl_items(arr: pa.FixedSizeListArray) -> pa.Array:
    d = arr.type.list_size
    return arr.values.slice(arr.offset * d, len(arr) * d)


def _chunkable(arr: pa.ChunkedArray) -> bool:
    """Whether pages can be written straight from the chunks: byte-aligned fixed-width
    values (or fixed-size lists of them) without validity buffers at any level, so their
    concatenation would have none either and is exactly the values' bytes; anything else
    is concatenated first."""
    t = arr.type
    while pa.types.is_fixed_size_list(t):
        t = t.value_type
    if pa.types.is_dictionary(t) or pa.types.is_null(t) or pa.types.is_boolean(t):
        return False
    bits = fixed_width_bits(t)
    return bits is not None and bits % 8 == 0 and all(_no_validity(c) for c in arr.chunks)


def _no_validity(arr: pa.Array) -> bool:
    if arr.buffers()[0] is not None:
        return False
    return _no_validity(_fsl_items(arr)) if pa.types.is_fixed_size_list(arr.type) else True


def _encode_nullable(arr: pa.Array, bufs: _Buffers, opts: dict) -> pb.ArrayEncoding:
    n, nulls = len(arr), arr.null_count
    if nulls == n:  # includes the empty page, as the reference writes it
        return all_nulls()
    if nulls:
        validity = encode_flat(1, bufs.add(validity_bytes(arr)))
        return wrap_some_nulls(validity, _encode_values(arr, bufs, opts))
    return wrap_no_nulls(_encode_values(arr, bufs, opts))


def _encode_binary(arr: pa.Array, bufs: _Buffers, opts: dict) -> pb.ArrayEncoding:
    offsets, data = binary_parts(arr)
    base = int(offsets[0])
    ends = offsets[1:] - base
    total = int(ends[-1]) if len(ends) else 0
    adj = total + 1
    mask = null_mask(arr)
    if mask is not None:
        ends = np.where(mask, ends + adj, ends)
    body = data[base : base + total]
    scheme, level = opts.get("compression"), opts.get("level")
    if scheme in ("zstd", "lz4"):
        body = compress_buffer(body, scheme, level)
    else:
        scheme = None
    i_idx = bufs.add(ends.astype("<u8"))
    b_idx = bufs.add(body)
    return encode_binary(i_idx, b_idx, adj, scheme, level)


def _encode_auto_dictionary(arr: pa.Array, bufs: _Buffers, opts: dict) -> pb.ArrayEncoding | None:
    if len(arr) < DICT_MIN_VALUES or not pa.types.is_string(arr.type):
        return None
    # The head of the page bounds the distinct count from below: most pages are rejected
    # without hashing every value.
    if pc.count_distinct(arr.slice(0, 4 * DICT_MAX_CARDINALITY)).as_py() >= DICT_MAX_CARDINALITY:
        return None
    if pc.count_distinct(arr).as_py() >= DICT_MAX_CARDINALITY:
        return None
    enc = pc.dictionary_encode(arr)
    idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64) + 1
    i_idx = bufs.add(idx.astype(np.uint8))
    dictionary = enc.dictionary
    if len(dictionary) == 0:  # an all-null page: the reference still stores one (null) item
        dictionary = pa.nulls(1, arr.type)
    items = _encode_binary(dictionary, bufs, {})
    return encode_dictionary(wrap_no_nulls(encode_flat(8, i_idx)), items, len(dictionary))


def _encode_dictionary_array(arr: pa.DictionaryArray, bufs: _Buffers, opts: dict) -> pb.ArrayEncoding:
    """Keys like a primitive of the key type, values like the value type.

    Null keys become an extra null item at the end of the dictionary, as the reference
    writes them: ``[x, null, yy]`` over ``{x, yy}`` is indices ``0 2 1``, items ``[x, yy, null]``.
    """
    indices, dictionary = arr.indices, arr.dictionary
    if indices.null_count:
        extra = len(dictionary)
        indices = indices.fill_null(pa.scalar(extra, indices.type))
        dictionary = pa.concat_arrays([dictionary, pa.nulls(1, dictionary.type)])
    return encode_dictionary(_encode_nullable(indices, bufs, opts), encode_leaf(dictionary, bufs, opts), len(dictionary))


def encode_leaf(arr: pa.Array, bufs: _Buffers, opts: dict) -> pb.ArrayEncoding:
    t = arr.type
    if pa.types.is_null(t):
        return all_nulls()
    if pa.types.is_dictionary(t):
        return _encode_dictionary_array(arr, bufs, opts)
    if _is_binary(t):
        return _encode_auto_dictionary(arr, bufs, opts) or _encode_binary(arr, bufs, opts)
    if fixed_width_bits(t) is not None or pa.types.is_fixed_size_list(t):
        return _encode_nullable(arr, bufs, opts)
    raise UnsupportedTypeError(f"Lance 2.0 cannot store {t} as a leaf column")


def _is_binary(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t) or pa.types.is_binary_view(t))


# -- field encoders ---------------------------------------------------------------------

def _rows_per_page(arr: pa.Array | pa.ChunkedArray, max_page_bytes: int) -> int:
    n = len(arr)
    if n == 0:
        return 1
    if isinstance(arr, pa.ChunkedArray):
        # sized as its concatenation is (chunkable: no validity buffers), so pages split
        # where they would after concatenating
        nbytes = n * fixed_width_bits(arr.type) // 8
    else:
        nbytes = arr.nbytes
    per_row = max(1.0, nbytes / n)
    return max(1, int(max_page_bytes // per_row))


class FieldEncoder:
    # whether encode() takes a pa.ChunkedArray (the writer's buffered batches, unconcatenated)
    accepts_chunks = False

    def encode(self, arr: pa.Array, sink: PageSink) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def finish(self, sink: PageSink) -> None:
        pass


@dataclass
class LeafEncoder(FieldEncoder):
    column: int
    max_page_bytes: int
    opts: dict
    in_list: bool = False  # items of a list get a page even when a list page holds no items
    accepts_chunks = True

    def encode(self, arr: pa.Array | pa.ChunkedArray, sink: PageSink) -> None:
        if isinstance(arr, pa.ChunkedArray) and not _chunkable(arr):
            arr = arr.combine_chunks()
        if len(arr) == 0 and self.in_list:
            bufs = _Buffers()
            sink.add_page(self.column, EncodedPage(encode_leaf(arr, bufs, self.opts), bufs.items, 0))
            return
        step = _rows_per_page(arr, self.max_page_bytes)
        for off in range(0, len(arr), step):
            part = arr.slice(off, step)
            bufs = _Buffers()
            enc = encode_leaf(part, bufs, self.opts)
            sink.add_page(self.column, EncodedPage(enc, bufs.items, len(part)))


@dataclass
class PackedStructEncoder(FieldEncoder):
    column: int
    max_page_bytes: int

    name: str = ""

    def encode(self, arr: pa.Array, sink: PageSink) -> None:
        kids = arr.flatten()
        nulls = arr.null_count + sum(k.null_count for k in kids)
        if nulls:
            raise UnsupportedTypeError(
                f"packed struct {self.name!r} holds {nulls} null value(s); Lance 2.0 packed structs cannot store nulls"
            )
        step = _rows_per_page(arr, self.max_page_bytes)
        for off in range(0, len(arr), step):
            parts = [k.slice(off, step) for k in kids]
            n = len(parts[0]) if parts else min(step, len(arr) - off)
            cols = [fixed_bytes(p).reshape(n, -1) for p in parts]
            rows = np.hstack(cols) if cols else np.empty((n, 0), np.uint8)
            enc = encode_packed_struct([p.type for p in parts], 0)
            sink.add_page(self.column, EncodedPage(enc, [np.ascontiguousarray(rows)], n))


@dataclass
class BlobEncoder(FieldEncoder):
    """Blob bytes go out of line; the page holds (position, size) pairs, null = (1, 0)."""

    column: int
    max_page_bytes: int

    def encode(self, arr: pa.Array, sink: PageSink) -> None:
        step = max(1, self.max_page_bytes // 16)  # 16 descriptor bytes a row
        for off in range(0, len(arr), step):
            part = arr.slice(off, step)
            offsets, data = binary_parts(part)
            sizes = np.diff(offsets)
            mask = null_mask(part)
            if mask is not None:
                sizes = np.where(mask, 0, sizes)
            body = data[offsets[0] : offsets[-1]] if len(part) else np.empty(0, np.uint8)
            if mask is not None and mask.any():  # drop the bytes under nulls
                keep = np.repeat(~mask, np.diff(offsets))
                body = body[keep]
            positions = sink.write_out_of_line(body, sizes)
            positions = np.where(sizes == 0, 0, positions)
            if mask is not None:
                positions = np.where(mask, 1, positions)
            desc = np.stack([positions.astype("<u8"), sizes.astype("<u8")], axis=1)
            enc = encode_packed_struct([pa.uint64(), pa.uint64()], 0)
            sink.add_page(self.column, EncodedPage(enc, [np.ascontiguousarray(desc)], len(part)))


@dataclass
class StructEncoder(FieldEncoder):
    column: int
    name: str
    children: list[FieldEncoder]
    rows: int = 0

    def encode(self, arr: pa.Array, sink: PageSink) -> None:
        if arr.null_count:
            raise UnsupportedTypeError(
                f"The struct field {self.name!r} contains {arr.null_count} null value(s), but Lance file "
                "version 2.0 does not encode struct validity; use 2.1 or later"
            )
        self.rows += len(arr)
        for child, values in zip(self.children, arr.flatten()):
            child.encode(values, sink)

    def finish(self, sink: PageSink) -> None:
        for c in self.children:
            c.finish(sink)
        sink.add_page(self.column, EncodedPage(pb.ArrayEncoding(struct=pb.SimpleStruct()), [], self.rows))


@dataclass
class ListEncoder(FieldEncoder):
    """Offsets pages (``List``) of at most ``max_page_bytes``, each followed by its items."""

    column: int
    items: FieldEncoder
    max_page_bytes: int
    in_list: bool = False

    def encode(self, arr: pa.Array, sink: PageSink) -> None:
        n = len(arr)
        large = pa.types.is_large_list(arr.type)
        if n:
            raw = np.frombuffer(arr.buffers()[1], dtype=np.int64 if large else np.int32)
            offsets = raw[arr.offset : arr.offset + n + 1].astype(np.int64)
        else:  # no lists (e.g. the items of empty outer lists, at any offset): one empty page in a list
            offsets = np.zeros(1, np.int64)
        mask = null_mask(arr)
        step = max(1, self.max_page_bytes // 8)
        for off in (range(0, n, step) if n or not self.in_list else [0]):
            hi = min(n, off + step)
            base, end = int(offsets[off]), int(offsets[hi])
            span = end - base
            ends = offsets[off + 1 : hi + 1] - base
            if mask is not None:
                ends = np.where(mask[off:hi], ends + span + 1, ends)
            enc = pb.ArrayEncoding(list=pb.List(
                offsets=wrap_no_nulls(encode_flat(64, 0)), null_offset_adjustment=span + 1, num_items=span,
            ))
            sink.add_page(self.column, EncodedPage(enc, [ends.astype("<u8")], hi - off))
            self.items.encode(arr.values.slice(base, span), sink)

    def finish(self, sink: PageSink) -> None:
        self.items.finish(sink)


def _leaf_options(f: LanceField) -> dict:
    md = {k: (v.decode("utf-8", "replace") if isinstance(v, bytes) else v) for k, v in f.metadata.items()}
    opts: dict = {}
    scheme = md.get(COMPRESSION_KEY, "").strip().lower()
    if scheme in ("zstd", "lz4"):
        opts["compression"] = scheme
        if md.get(COMPRESSION_LEVEL_KEY):
            try:
                opts["level"] = int(md[COMPRESSION_LEVEL_KEY])
            except ValueError:
                pass
    return opts


def build_encoder(f: LanceField, columns: dict[int, int], max_page_bytes: int, in_list: bool = False) -> FieldEncoder:
    t = f.arrow_type
    col = columns[f.id]
    if "lance-encoding:blob" in f.metadata and not f.is_blob:  # structs and lists too, as the reference
        raise UnsupportedTypeError(f"field {f.name!r}: blob columns must be large_binary, not {t}")
    if pa.types.is_struct(t):
        if f.is_packed_struct_for(FileVersion.V2_0):
            for c in f.children:
                if fixed_width_bits(c.arrow_type) is None or fixed_width_bits(c.arrow_type) % 8:
                    raise UnsupportedTypeError(
                        f"packed struct {f.name!r}: child {c.name!r} ({c.arrow_type}) is not byte-aligned fixed-width; "
                        "Lance 2.0 packs fixed-width children only"
                    )
            return PackedStructEncoder(col, max_page_bytes, f.name)
        kids = [build_encoder(c, columns, max_page_bytes, in_list) for c in f.children]
        return StructEncoder(col, f.name, kids)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ListEncoder(col, build_encoder(f.children[0], columns, max_page_bytes, True), max_page_bytes, in_list)
    if f.is_blob:
        return BlobEncoder(col, max_page_bytes)
    if pa.types.is_map(t):
        raise UnsupportedTypeError(f"field {f.name!r}: Lance 2.0 cannot store map columns (use 2.2)")
    if is_empty_fixed_binary(t):
        raise UnsupportedTypeError(f"field {f.name!r}: Lance 2.0 cannot store {t} values (use 2.2; neither "
                                   "lancefile nor pylance can read them at 2.0)")
    if pa.types.is_fixed_size_list(t):
        inner = t.value_type
        while pa.types.is_fixed_size_list(inner):
            inner = inner.value_type
        if pa.types.is_dictionary(inner) or (fixed_width_bits(inner) is None and not pa.types.is_null(inner)):
            raise UnsupportedTypeError(f"field {f.name!r}: Lance 2.0 stores fixed_size_list of fixed-width values only, not {t}")
    return LeafEncoder(col, max_page_bytes, _leaf_options(f), in_list)


def column_encodings(schema, columns: dict[int, int]) -> list[pb.ColumnEncoding]:
    """The ColumnEncoding of every column: ``values``, or ``blob{values}`` for blob columns."""
    from google.protobuf import empty_pb2

    values = pb.ColumnEncoding(values=empty_pb2.Empty())
    out = [values] * len(columns)
    for f in schema.walk():
        if f.id in columns and f.is_blob:
            out[columns[f.id]] = pb.ColumnEncoding(blob=pb.Blob(inner=values))
    return out
