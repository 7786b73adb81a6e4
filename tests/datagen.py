"""Named Arrow test tables for lancefile, with what the reference gives back for each.

Every entry of :data:`CATALOGUE` is a :class:`Entry` whose ``make(n_rows, seed)`` builds a
deterministic ``pa.Table`` (same arguments, same table) with nulls wherever Lance 2.0 can hold
them. ``expected_readback(table)`` is what pylance 14.0.2 returns after writing that table as
version "2.0" and reading it back: for most entries the table itself, for a few a documented
transformation (see :data:`QUIRKS` and each entry's ``note``). Those transformations were found
by experiment (``python tests/datagen.py --check`` re-checks every one of them against pylance).

:data:`REFUSED` lists tables that pylance 14.0.2 cannot round-trip as 2.0, with the error it gives:
most are refused by its writer, two (``stage="read"``) are written but cannot be read back.
lancefile must refuse all of them at write time, with a :class:`lancefile.LanceError`.

Comparisons: an entry's ``compare`` is ``"values"`` when its schema holds a dictionary (the
reference changes dictionary representation, see QUIRKS) and ``"equals"`` otherwise.

:data:`EDGE_CASES` are builders for unusual shapes (zero rows, all-null columns, sliced inputs,
many small batches, pages larger than ``max_page_bytes``, 1,000 columns).

The generic generator :func:`random_array` (any supported type, nested, with nulls) is shared with
the hypothesis property tests.

Example::

    >>> t = CATALOGUE["list_int32"].make(10, seed=1)
    >>> t.num_rows
    10
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "Entry",
    "Refused",
    "EdgeCase",
    "CATALOGUE",
    "REFUSED",
    "EDGE_CASES",
    "QUIRKS",
    "random_array",
    "column_paths",
    "expected_readback",
    "readback_type",
    "readback_schema",
    "normalize_dictionaries",
    "has_dictionary",
    "float_bits_type",
]

# Null fraction used by the catalogue (enough that every page of a few hundred rows has nulls).
NULL_FRACTION = 0.15
# Rows at which the pylance 2.0 writer starts dictionary-encoding low-cardinality strings.
DICT_MIN_ROWS = 100

BLOB_META = {b"lance-encoding:blob": b"true"}
PACKED_META = {b"packed": b"true"}


# --------------------------------------------------------------------------------------------
# Random arrays of any type
# --------------------------------------------------------------------------------------------

_ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-é中ß€😀"))


def _mask(rng: np.random.Generator, n: int, null_fraction: float) -> np.ndarray | None:
    if null_fraction <= 0 or n == 0:
        return None
    m = rng.random(n) < null_fraction
    return m if m.any() else None


def _mask_array(mask: np.ndarray | None) -> pa.Array | None:
    return None if mask is None else pa.array(mask, pa.bool_())


def _random_strings(rng: np.random.Generator, n: int, max_len: int = 24) -> list[str]:
    lengths = rng.integers(0, max_len + 1, n)
    chars = rng.choice(_ALPHABET, int(lengths.sum()))
    out, pos = [], 0
    for ln in lengths:
        out.append("".join(chars[pos : pos + ln]))
        pos += ln
    return out


def _random_bytes(rng: np.random.Generator, n: int, max_len: int = 40) -> list[bytes]:
    lengths = rng.integers(0, max_len + 1, n)
    blob = rng.bytes(int(lengths.sum()))
    out, pos = [], 0
    for ln in lengths:
        out.append(blob[pos : pos + ln])
        pos += ln
    return out


def _random_decimals(rng: np.random.Generator, n: int, precision: int, scale: int) -> list[decimal.Decimal]:
    out = []
    for _ in range(n):
        digits = int(rng.integers(1, precision + 1))
        # build the integer from 18-digit chunks so that precision 76 works
        v = 0
        remaining = digits
        while remaining > 0:
            k = min(remaining, 18)
            v = v * 10**k + int(rng.integers(0, 10**k))
            remaining -= k
        if rng.random() < 0.5:
            v = -v
        out.append(decimal.Decimal(v).scaleb(-scale))
    return out


_INT_TYPES = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
}
_TIME_RANGES = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}
_TS_SPAN = {"s": 4_000_000_000, "ms": 4_000_000_000_000, "us": 4_000_000_000_000_000, "ns": 2**62}


def random_array(
    typ: pa.DataType,
    n: int,
    rng: np.random.Generator,
    *,
    null_fraction: float = NULL_FRACTION,
    struct_nulls: bool = False,
    max_list_len: int = 5,
) -> pa.Array:
    """A random array of ``n`` values of ``typ`` (nested types recursively).

    Nulls appear with probability ``null_fraction`` at every level, except struct rows, which are
    null only when ``struct_nulls`` (Lance 2.0 cannot store struct validity). Lists get empty
    lists as well as null lists and null items.
    """
    mask = _mask(rng, n, null_fraction)
    m = _mask_array(mask)
    if pa.types.is_null(typ):
        return pa.nulls(n)
    if pa.types.is_boolean(typ):
        return pa.array(rng.random(n) < 0.5, typ, mask=mask)
    if typ in _INT_TYPES:
        dt = np.dtype(_INT_TYPES[typ])
        info = np.iinfo(dt)
        vals = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        return pa.array(vals, typ, mask=mask)
    if pa.types.is_float16(typ):
        return pa.array((rng.standard_normal(n) * 100).astype(np.float16), typ, mask=mask)
    if pa.types.is_float32(typ):
        return pa.array((rng.standard_normal(n) * 1e3).astype(np.float32), typ, mask=mask)
    if pa.types.is_float64(typ):
        return pa.array(rng.standard_normal(n) * 1e6, typ, mask=mask)
    if pa.types.is_date32(typ):
        return pa.array(rng.integers(-200_000, 200_000, n, dtype=np.int32), pa.int32(), mask=mask).view(typ)
    if pa.types.is_date64(typ):
        days = rng.integers(-200_000, 200_000, n, dtype=np.int64)
        return pa.array(days * 86_400_000, pa.int64(), mask=mask).view(typ)
    if pa.types.is_time32(typ) or pa.types.is_time64(typ):
        width = pa.int32() if pa.types.is_time32(typ) else pa.int64()
        vals = rng.integers(0, _TIME_RANGES[typ.unit], n, dtype=width.to_pandas_dtype())
        return pa.array(vals, width, mask=mask).view(typ)
    if pa.types.is_timestamp(typ):
        span = _TS_SPAN[typ.unit]
        return pa.array(rng.integers(-span, span, n, dtype=np.int64), pa.int64(), mask=mask).view(typ)
    if pa.types.is_duration(typ):
        info = np.iinfo(np.int64)
        vals = rng.integers(info.min, info.max, n, dtype=np.int64, endpoint=True)
        return pa.array(vals, pa.int64(), mask=mask).view(typ)
    if pa.types.is_decimal(typ):
        return pa.array(_random_decimals(rng, n, typ.precision, typ.scale), typ, mask=mask)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return pa.array(_random_strings(rng, n), typ, mask=mask)
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        return pa.array(_random_bytes(rng, n), typ, mask=mask)
    if pa.types.is_fixed_size_binary(typ):
        w = typ.byte_width
        blob = rng.bytes(n * w)
        return pa.array([blob[i * w : (i + 1) * w] for i in range(n)], typ, mask=mask)
    if pa.types.is_fixed_size_list(typ):
        values = random_array(typ.value_type, n * typ.list_size, rng,
                              null_fraction=null_fraction if typ.value_field.nullable else 0.0,
                              struct_nulls=struct_nulls, max_list_len=max_list_len)
        return pa.FixedSizeListArray.from_arrays(values, type=typ, mask=m)
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        lengths = rng.integers(0, max_list_len + 1, n)
        if mask is not None:
            lengths[mask] = 0  # keep null lists empty; tests of garbage under nulls are separate
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        values = random_array(typ.value_type, int(offsets[-1]), rng,
                              null_fraction=null_fraction if typ.value_field.nullable else 0.0,
                              struct_nulls=struct_nulls, max_list_len=max_list_len)
        cls = pa.ListArray if pa.types.is_list(typ) else pa.LargeListArray
        otype = pa.int32() if pa.types.is_list(typ) else pa.int64()
        return cls.from_arrays(pa.array(offsets, otype), values, type=typ, mask=m)
    if pa.types.is_struct(typ):
        children = [
            random_array(typ.field(i).type, n, rng, null_fraction=null_fraction if typ.field(i).nullable else 0.0,
                         struct_nulls=struct_nulls, max_list_len=max_list_len)
            for i in range(typ.num_fields)
        ]
        fields = [typ.field(i) for i in range(typ.num_fields)]
        if not fields:
            return pa.array([{}] * n, typ)
        return pa.StructArray.from_arrays(children, fields=fields, mask=m if struct_nulls else None)
    if pa.types.is_dictionary(typ):
        k = max(1, min(20, n))
        dictionary = random_array(typ.value_type, k, rng, null_fraction=0.0)
        dt = typ.index_type.to_pandas_dtype()
        idx = pa.array(rng.integers(0, k, n).astype(dt), typ.index_type, mask=mask)
        return pa.DictionaryArray.from_arrays(idx, dictionary)
    raise NotImplementedError(f"random_array: no generator for {typ}")


def _table(columns: dict[str, pa.Array] | Sequence[tuple[pa.Field, pa.Array]], metadata=None) -> pa.Table:
    if isinstance(columns, dict):
        return pa.table(columns, metadata=metadata)
    fields = [f for f, _ in columns]
    return pa.Table.from_arrays([a for _, a in columns], schema=pa.schema(fields, metadata=metadata))


# --------------------------------------------------------------------------------------------
# Schema helpers
# --------------------------------------------------------------------------------------------


def column_paths(schema: pa.Schema) -> list[str]:
    """Every projectable column name: top-level names and dotted paths into structs ("st.a").

    Paths stop at lists, fixed-size lists and packed structs (their children are not columns
    that can be projected on their own).
    """
    out: list[str] = []

    def walk(prefix: str, f: pa.Field) -> None:
        name = f"{prefix}{f.name}"
        out.append(name)
        meta = f.metadata or {}
        packed = meta.get(b"packed", b"").lower() == b"true" or b"lance-encoding:packed" in meta
        if pa.types.is_struct(f.type) and not packed:
            for i in range(f.type.num_fields):
                walk(name + ".", f.type.field(i))

    for f in schema:
        walk("", f)
    return out


def _map_type(typ: pa.DataType, fn: Callable[[pa.DataType], pa.DataType | None]) -> pa.DataType:
    """Rebuild ``typ`` bottom-up, replacing each type t by ``fn(t)`` when that is not None."""
    if pa.types.is_list(typ):
        t = pa.list_(typ.value_field.with_type(_map_type(typ.value_type, fn)))
    elif pa.types.is_large_list(typ):
        t = pa.large_list(typ.value_field.with_type(_map_type(typ.value_type, fn)))
    elif pa.types.is_map(typ):
        t = pa.map_(typ.key_field.with_type(_map_type(typ.key_type, fn)),
                    typ.item_field.with_type(_map_type(typ.item_type, fn)))
    elif pa.types.is_fixed_size_list(typ):
        t = pa.list_(typ.value_field.with_type(_map_type(typ.value_type, fn)), typ.list_size)
    elif pa.types.is_struct(typ):
        t = pa.struct([typ.field(i).with_type(_map_type(typ.field(i).type, fn)) for i in range(typ.num_fields)])
    else:
        t = typ
    r = fn(t)
    return t if r is None else r


def float_bits_type(typ: pa.DataType) -> pa.DataType:
    """``typ`` with every float replaced by the same-width int (for NaN-tolerant equality)."""
    repl = {pa.float16(): pa.int16(), pa.float32(): pa.int32(), pa.float64(): pa.int64()}
    return _map_type(typ, lambda t: repl.get(t))


# --------------------------------------------------------------------------------------------
# Expected read-back transformations (what pylance 14.0.2 does to a 2.0 round trip)
# --------------------------------------------------------------------------------------------


def has_dictionary(typ: pa.DataType) -> bool:
    """Whether ``typ`` is or contains a dictionary type."""
    found = []
    _map_type(typ, lambda t: found.append(t) if pa.types.is_dictionary(t) else None)
    return bool(found)


def _without_dictionaries(typ: pa.DataType) -> pa.DataType:
    return _map_type(typ, lambda t: t.value_type if pa.types.is_dictionary(t) else None)


def _undictionary(arr: pa.Array) -> pa.Array:
    """``arr`` with every dictionary (at any depth) replaced by its values, rebuilt from its
    parts (validity, offsets, children), where a cast refuses: nulls under a non-nullable
    field, which Arrow will not cast but a reader may give back (pylance does)."""
    typ = arr.type
    if pa.types.is_dictionary(typ):
        return arr.dictionary.take(arr.indices)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(typ):
        children = [_undictionary(arr.field(i)) for i in range(typ.num_fields)]  # (field() applies the offset)
        fields = [typ.field(i).with_type(c.type) for i, c in enumerate(children)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        cls, make = (pa.ListArray, pa.list_) if pa.types.is_list(typ) else (pa.LargeListArray, pa.large_list)
        values = _undictionary(arr.values)
        return cls.from_arrays(arr.offsets, values, type=make(typ.value_field.with_type(values.type)), mask=mask)
    if not has_dictionary(typ):
        return arr
    return pa.array(arr.to_pylist(), type=_without_dictionaries(typ))  # (maps, fixed-size lists: by value)


def normalize_dictionaries(table: pa.Table) -> pa.Table:
    """Cast every dictionary (at any depth) to its value type.

    Used to compare dictionary columns by value: the reference gives back different indices and
    dictionary items (e.g. an extra null item, concatenated dictionaries) that mean the same values.
    """
    cols, fields = [], []
    for f, col in zip(table.schema, table.columns):
        if has_dictionary(f.type):
            t = _without_dictionaries(f.type)
            try:
                col = col.cast(t)
            except pa.ArrowInvalid:  # e.g. a null struct row over non-nullable children: rebuild by parts
                col = pa.chunked_array([_undictionary(chunk) for chunk in col.chunks], type=t)
            f = f.with_type(t)
        cols.append(col)
        fields.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=table.schema.metadata))


def _readback_array(arr: pa.Array) -> pa.Array:
    """pylance 14.0.2's 2.0 round trip of one array (one page, one read batch); see QUIRKS."""
    typ = arr.type
    if isinstance(arr, pa.DictionaryArray):
        indices, dictionary = arr.indices, arr.dictionary
        if indices.null_count == 0 and dictionary.null_count == 0:
            return arr
        if indices.null_count and dictionary.null_count == 0:
            dictionary = pa.concat_arrays([dictionary, pa.nulls(1, dictionary.type)])
        # a key is valid only if it is valid and points at a valid item
        item_valid = pc.array_take(dictionary.is_valid(), indices.fill_null(0))
        valid = pc.and_(indices.is_valid(), item_valid)
        indices = pc.if_else(valid, indices, pa.scalar(None, indices.type))
        return pa.DictionaryArray.from_arrays(indices, dictionary)
    if not has_dictionary(typ):
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return type(arr).from_arrays(arr.offsets, _readback_array(arr.values), type=typ, mask=mask)
    if pa.types.is_struct(typ):
        children = [_readback_array(arr.field(i)) for i in range(typ.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(typ), mask=mask)
    return arr


def readback_type(typ: pa.DataType) -> pa.DataType:
    """The type pylance 14.0.2 reads back for ``typ``: fixed_size_list items become
    ``item``, nullable, without metadata (FSL is one leaf; its item field is not stored)."""
    return _map_type(typ, lambda t: pa.list_(pa.field("item", t.value_type), t.list_size)
                     if pa.types.is_fixed_size_list(t) else None)


def readback_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(readback_type(f.type)) for f in schema], metadata=schema.metadata)


def _cast(arr: pa.Array, typ: pa.DataType) -> pa.Array:
    """``arr.cast(typ)``, child by child for structs: pyarrow's struct cast fails on a
    ``list<null>`` child ("offsets larger than values array") even when that child is unchanged."""
    if arr.type == typ:
        return arr
    if pa.types.is_struct(typ) and pa.types.is_struct(arr.type) and arr.offset == 0:
        children = [_cast(arr.field(i), typ.field(i).type) for i in range(typ.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(typ), mask=arr.is_null() if arr.null_count else None)
    return arr.cast(typ)


def expected_readback(table: pa.Table) -> pa.Table:
    """What pylance 14.0.2 gives back after writing ``table`` as 2.0 in one batch and reading it.

    Exact (``Table.equals``) for one written batch read back as one batch. Two changes were
    found (:data:`QUIRKS`): dictionary arrays with null keys or null items, and the item field of
    fixed-size lists (renamed ``item``, nullable, metadata dropped). Everything else comes back
    unchanged, including field and schema metadata, nullability, list item names, time zones,
    blob columns (plain ``large_binary`` with the blob metadata kept) and packed structs.
    For several written batches compare with ``normalize_dictionaries`` (values only).
    """
    schema = readback_schema(table.schema)
    cols = []
    for f, c in zip(schema, table.columns):
        chunks = [_readback_array(ch) for ch in c.chunks] or [pa.array([], c.type)]
        if f.type != c.type:
            chunks = [_cast(ch, f.type) for ch in chunks]
        cols.append(pa.chunked_array(chunks, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


QUIRKS: dict[str, str] = {
    "dictionary_null_item": (
        "Dictionary columns with null keys: the 2.0 writer stores the null as a dictionary *item*. "
        "If the dictionary has no null item, one null item is appended and null keys point at it; if "
        "it already has one, null keys point at that. On read, a key is null exactly when its item is "
        "null. So [0,1,null,2] over [x,y,z] reads back as [0,1,null,2] over [x,y,z,null], and keys "
        "that pointed at a null item become null keys. Unused items are kept. Same at any depth "
        "(list<dict>, struct<dict>). Values are unchanged."
    ),
    "dictionary_batches_concatenated": (
        "Several written batches with different dictionaries end up in one page whose dictionary is "
        "the concatenation of the batches' dictionaries (indices shifted), not a unified dictionary."
    ),
    "fsl_item_field_normalized": (
        "fixed_size_list<it: int8 not null>[2] reads back as fixed_size_list<item: int8>[2]: the FSL "
        "item field is always named 'item', nullable, without metadata, at any depth (FSL is a leaf in "
        "the Lance schema, logical type 'fixed_size_list:int8:2'). list/large_list item fields keep "
        "their name, nullability and metadata."
    ),
    "blob_reads_as_large_binary": (
        "A blob column (large_binary + lance-encoding:blob) reads back through lance.file as the plain "
        "large_binary values, field metadata included."
    ),
    "nested_struct_multi_batch_panics": (
        "The 2.0 writer panics (pyo3 PanicException 'assertion failed: end <= self.len()', in "
        "write_batch) when a struct directly inside a struct is written in more than one write_batch "
        "call. One batch works; struct<list<struct>> and list<struct> in many batches work."
    ),
    "max_page_bytes_only_splits_big_arrays": (
        "max_page_bytes splits an array handed to the encoder that is larger than it (a big single "
        "batch, or what the 8 MiB per-column data cache accumulated). Several small batches that "
        "stay in the cache until close() are flushed as one page regardless of max_page_bytes; "
        "data_cache_bytes controls when the cache flushes. Even then, list offsets columns are never "
        "split (20K lists -> one 160 KB offsets page with max_page_bytes=64 KiB) and string pages "
        "overshoot a little (~78 KB)."
    ),
    "struct_null_type_with_dictionary": (
        "Reader bug: a struct that holds a dictionary and, nested one level deeper, a null type reads "
        "back as an invalid Arrow array. struct<list<null>, dict> and struct<dict, fsl<null>>: every "
        "read fails ('Length spanned by list offsets (N) larger than values array'); "
        "struct<dict, struct<null>>: read_all and take_rows work, read_range fails ('Struct child "
        "array #0 has length smaller than expected'). struct<null, dict> (null as a direct child), "
        "and list<null> next to a dictionary at top level, are fine."
    ),
    "fsl_struct_unreadable": (
        "fixed_size_list<struct> is accepted by the 2.0 writer but the file cannot be read back: "
        "'The projection specified the column index 1 but there are only 1 columns in the file'."
    ),
    "fsl_dictionary_panics": (
        "fixed_size_list<dictionary> is accepted by the 2.0 writer; reading it panics "
        "(pyo3 PanicException 'not yet implemented', a BaseException)."
    ),
    "take_rows_strictly_increasing": (
        "LanceFileReader.take_rows requires strictly increasing indices (no duplicates, sorted): "
        "otherwise ValueError 'Indices must be sorted' / 'not strictly increasing'."
    ),
    "out_of_range": (
        "take_rows([n]) -> ValueError 'cannot read Indices(...) from columns with n rows'; "
        "read_range past the end -> ValueError 'cannot read Range(a..b) from columns with n rows'; "
        "read_range(n, 0) and take_rows([]) give 0 rows."
    ),
    "projection": (
        "columns=['st.a'] gives st: struct<a>; ['st.b', 'st.a'] gives st: struct<b, a> (requested order); "
        "['ls.item.x'] (through a list) gives the whole ls column; a missing top-level column -> OSError "
        "\"Field 'nope' not found\" (names are case-sensitive), '' -> 'Field path cannot be empty'; but a "
        "missing child is accepted silently: ['st.nope'] gives st: struct<> and ['i8.x'] gives i8."
    ),
    "writer_leaves_files": (
        "pylance leaves a file behind when write_batch fails or an exception leaves the `with` block "
        "(lancefile must not)."
    ),
}


# --------------------------------------------------------------------------------------------
# The catalogue
# --------------------------------------------------------------------------------------------

READ_VERSIONS = ("2.0", "2.1", "2.2")  # the file versions lancefile reads
V2_1_ON = ("2.1", "2.2")


@dataclass(frozen=True)
class Entry:
    """One named test table.

    ``compare`` is how a reader's result is compared with ``expected_readback(table)``:
    ``"equals"`` (Table.equals after combining chunks, NaN-tolerant) or ``"values"`` (decode
    dictionaries first, then as ``"equals"``).
    """

    name: str
    make: Callable[[int, int], pa.Table]
    expected_readback: Callable[[pa.Table], pa.Table] = expected_readback
    compare: str = "equals"
    note: str = ""
    write_options: dict = field(default_factory=dict)
    # False when pylance 14.0.2 cannot write this table in several batches (QUIRKS)
    reference_multi_batch: bool = True
    # file versions at which pylance 14.0.2 writes and reads the table
    versions: tuple = READ_VERSIONS
    # versions whose pylance read-back is wrong: compare with expected_readback(table) instead
    reference_misreads: tuple = ()
    min_rows: int = 0  # some encodings need more rows than the tests' default

    @property
    def schema(self) -> pa.Schema:
        return self.make(0, 0).schema


@dataclass(frozen=True)
class Refused:
    """A table pylance 14.0.2 cannot round-trip as version 2.0.

    ``stage`` is where pylance fails: ``"write"`` (write_batch/close raises) or ``"read"`` (the
    writer accepts it but the file cannot be read back; lancefile should refuse it at write time).
    ``writer_schema``, when set, is passed to the writer instead of the table's own schema.
    ``panics`` means pylance raises a pyo3 PanicException (a BaseException) rather than an Exception.
    """

    name: str
    make: Callable[[int, int], pa.Table]
    error: str  # a regex that pylance's error message matches
    note: str = ""
    stage: str = "write"
    writer_schema: pa.Schema | None = None
    panics: bool = False


@dataclass(frozen=True)
class EdgeCase:
    """An unusual shape. ``batches(seed)`` gives the record batches to write, in order."""

    name: str
    batches: Callable[[int], list[pa.RecordBatch]]
    write_options: dict = field(default_factory=dict)  # for both writers
    compare: str = "equals"
    note: str = ""
    reference_options: dict = field(default_factory=dict)  # extra options for pylance's writer only

    def table(self, seed: int = 0) -> pa.Table:
        bs = self.batches(seed)
        return pa.Table.from_batches(bs)


def _single(typ: pa.DataType, *, name: str = "c", null_fraction: float = NULL_FRACTION,
            metadata: dict | None = None, nullable: bool = True) -> Callable[[int, int], pa.Table]:
    def make(n: int, seed: int) -> pa.Table:
        rng = np.random.default_rng(seed)
        arr = random_array(typ, n, rng, null_fraction=null_fraction if nullable else 0.0)
        return _table([(pa.field(name, typ, nullable, metadata), arr)])

    return make


def _multi(spec: Sequence[tuple[str, pa.DataType]] | Sequence[pa.Field], *,
           null_fraction: float = NULL_FRACTION) -> Callable[[int, int], pa.Table]:
    fields = [f if isinstance(f, pa.Field) else pa.field(f[0], f[1]) for f in spec]

    def make(n: int, seed: int) -> pa.Table:
        rng = np.random.default_rng(seed)
        cols = [(f, random_array(f.type, n, rng, null_fraction=null_fraction if f.nullable else 0.0)) for f in fields]
        return _table(cols)

    return make


CATALOGUE: dict[str, Entry] = {}


def catalogue_for(version: str) -> list[str]:
    """Names of the catalogue entries pylance writes at ``version``."""
    return [name for name, e in CATALOGUE.items() if version in e.versions]


def _add(name: str, make, **kw) -> None:
    assert name not in CATALOGUE, name
    if "compare" not in kw and any(has_dictionary(f.type) for f in make(0, 0).schema):
        kw["compare"] = "values"
    CATALOGUE[name] = Entry(name, make, **kw)


# --- fixed-width primitives ---
for _t in [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]:
    _add(str(_t), _single(_t))
_add("float16", _single(pa.float16()))
_add("float32", _single(pa.float32()))
_add("float64", _single(pa.float64()))


def _float_special(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    cols = {}
    for t, dt in [(pa.float16(), np.float16), (pa.float32(), np.float32), (pa.float64(), np.float64)]:
        fi = np.finfo(dt)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fi.smallest_subnormal, fi.max, fi.min, -1.5], dt)
        vals = rng.choice(specials, n)
        cols[f"f{dt().itemsize * 8}"] = pa.array(vals, t, mask=_mask(rng, n, NULL_FRACTION))
    return pa.table(cols)


_add("float_special", _float_special, note="NaN, +-inf, -0.0, subnormals")
_add("bool", _single(pa.bool_()))
_add("date32", _single(pa.date32()))
_add("date64", _single(pa.date64()))
_add("time32_s", _single(pa.time32("s")))
_add("time32_ms", _single(pa.time32("ms")))
_add("time64_us", _single(pa.time64("us")))
_add("time64_ns", _single(pa.time64("ns")))
_TZS = {"naive": None, "utc": "UTC", "new_york": "America/New_York", "plus0530": "+05:30"}
for _u in ["s", "ms", "us", "ns"]:
    _add(f"timestamp_{_u}", _multi([(k, pa.timestamp(_u, tz)) for k, tz in _TZS.items()]),
         note="one column per time zone: none, UTC, America/New_York, +05:30")
for _u in ["s", "ms", "us", "ns"]:
    _add(f"duration_{_u}", _single(pa.duration(_u)))
_add("decimal128_10_2", _single(pa.decimal128(10, 2)))
_add("decimal128_38_10", _single(pa.decimal128(38, 10)))
_add("decimal128_5_0", _single(pa.decimal128(5, 0)))
_add("decimal256_76_20", _single(pa.decimal256(76, 20)))
_add("decimal256_40_0", _single(pa.decimal256(40, 0)))
_add("fixed_size_binary_16", _single(pa.binary(16)))
_add("fixed_size_binary_3", _single(pa.binary(3)))
_add("non_nullable", _multi([pa.field("i", pa.int32(), False), pa.field("s", pa.string(), False),
                             pa.field("f", pa.list_(pa.float32(), 4), False),
                             pa.field("l", pa.list_(pa.field("item", pa.int64(), False)), False)]),
     note="fields declared non-nullable, no nulls")

# --- variable width ---
_add("string", _single(pa.string()))
_add("large_string", _single(pa.large_string()))
_add("binary", _single(pa.binary()))
_add("large_binary", _single(pa.large_binary()))


def _all_empty_strings(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"s": pa.array([""] * n, pa.string(), mask=_mask(rng, n, NULL_FRACTION)),
                     "b": pa.array([b""] * n, pa.large_binary())})


_add("empty_strings", _all_empty_strings, note="only empty strings and nulls")


def _long_strings(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    vals = ["x" * int(k) + str(i) for i, k in enumerate(rng.integers(200, 2000, n))]
    return pa.table({"s": pa.array(vals, pa.string(), mask=_mask(rng, n, NULL_FRACTION))})


_add("long_strings", _long_strings, note="values of 200-2000 bytes")


def _low_card(typ: pa.DataType, *, distinct: int = 20, null_fraction: float = NULL_FRACTION, metadata=None):
    def make(n: int, seed: int) -> pa.Table:
        rng = np.random.default_rng(seed)
        pool = [f"category-{i:03d}" for i in range(distinct)]
        vals = [pool[i] for i in rng.integers(0, distinct, n)]
        return _table([(pa.field("s", typ, True, metadata), pa.array(vals, typ, mask=_mask(rng, n, null_fraction)))])

    return make


_add("low_card_string", _low_card(pa.string(), null_fraction=0.0),
     note="<100 distinct, >=100 rows: the 2.0 writer dictionary-encodes it (u8 1-based indices)")
_add("low_card_string_nulls", _low_card(pa.string()), note="as low_card_string, with nulls (index 0 = null)")
_add("low_card_string_99", _low_card(pa.string(), distinct=99), note="99 distinct: still dictionary")
_add("low_card_large_string", _low_card(pa.large_string()), note="large_string is never dictionary-encoded")
_add("low_card_binary", _low_card(pa.binary()), note="binary is never dictionary-encoded")


def _one_value(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"s": pa.array(["the same value"] * n, pa.string(), mask=_mask(rng, n, NULL_FRACTION)),
                     "i": pa.array(np.full(n, 1234567, np.int64))})


_add("constant_values", _one_value, note="one distinct string (dictionary) and a constant int64")

for _codec in ["zstd", "lz4"]:
    _meta = {b"lance-encoding:compression": _codec.encode()}
    _add(f"string_{_codec}", _single(pa.string(), metadata=_meta))
    _add(f"large_binary_{_codec}", _single(pa.large_binary(), metadata=_meta))
    _add(f"low_card_string_{_codec}", _low_card(pa.string(), metadata=_meta))
    _add(f"int32_{_codec}", _single(pa.int32(), metadata=_meta),
         note="compression metadata on a fixed-width column: ignored by the 2.0 writer")
_add("string_zstd_level", _single(pa.string(), metadata={b"lance-encoding:compression": b"zstd",
                                                          b"lance-encoding:compression-level": b"9"}))

# --- fixed-size lists ---
_add("fsl_f32_8", _single(pa.list_(pa.float32(), 8), null_fraction=0.0), note="embeddings, no nulls")
_add("fsl_f32_128", _single(pa.list_(pa.float32(), 128), null_fraction=0.0), note="embeddings dim 128")


def _fsl_nulls(row_nulls: bool, item_nulls: bool, dim: int = 4, item: pa.DataType | None = None):
    item = item or pa.float32()
    typ = pa.list_(item, dim)

    def make(n: int, seed: int) -> pa.Table:
        rng = np.random.default_rng(seed)
        values = random_array(item, n * dim, rng, null_fraction=NULL_FRACTION if item_nulls else 0.0)
        m = _mask_array(_mask(rng, n, NULL_FRACTION)) if row_nulls else None
        return pa.table({"v": pa.FixedSizeListArray.from_arrays(values, type=typ, mask=m)})

    return make


_add("fsl_f32_row_nulls", _fsl_nulls(True, False))
_add("fsl_f32_item_nulls", _fsl_nulls(False, True))
_add("fsl_f32_row_item_nulls", _fsl_nulls(True, True))
_add("fsl_int64_3", _single(pa.list_(pa.int64(), 3)))
_add("fsl_f16_4", _single(pa.list_(pa.float16(), 4)))
_add("fsl_f64_2", _single(pa.list_(pa.float64(), 2)))
_add("fsl_bool_5", _single(pa.list_(pa.bool_(), 5)))
_add("fsl_fsb_2", _single(pa.list_(pa.binary(4), 2)))
_add("fsl_named_non_null_item", _single(pa.list_(pa.field("emb", pa.float32(), False), 4)),
     note="FSL item named 'emb', non-null: reads back as 'item', nullable (QUIRKS)")
_add("fsl_fsl_int8", _single(pa.list_(pa.list_(pa.int8(), 2), 3)), note="fixed_size_list<fixed_size_list<int8,2>,3>")
_add("fsl_fsl_f32_nonnull", _single(pa.list_(pa.list_(pa.float32(), 2), 2), null_fraction=0.0))

# --- lists ---
_add("list_int32", _single(pa.list_(pa.int32())))
_add("large_list_int64", _single(pa.large_list(pa.int64())))
_add("list_string", _single(pa.list_(pa.string())))
_add("list_large_binary", _single(pa.list_(pa.large_binary())))
_add("list_bool", _single(pa.list_(pa.bool_())))
_add("list_float64", _single(pa.list_(pa.float64())))
_add("list_decimal128", _single(pa.list_(pa.decimal128(12, 3))))
_add("list_timestamp_tz", _single(pa.list_(pa.timestamp("us", "America/New_York"))))
_add("list_list_int32", _single(pa.list_(pa.list_(pa.int32()))))
_add("list_list_list_int16", _single(pa.list_(pa.list_(pa.list_(pa.int16())))), note="depth 3")
_add("large_list_list_string", _single(pa.large_list(pa.list_(pa.string()))))
_add("list_large_list_list_string", _single(pa.list_(pa.large_list(pa.list_(pa.string())))), note="depth 3")
_add("list_fsl_f32", _single(pa.list_(pa.list_(pa.float32(), 4))))
_add("list_named_item", _single(pa.list_(pa.field("element", pa.int32(), True, {"k": "v"}))),
     note="list item named 'element' with metadata: kept")
_add("list_non_null_items", _single(pa.list_(pa.field("item", pa.int32(), nullable=False))),
     note="item field declared non-nullable")


def _list_shapes(n: int, seed: int) -> pa.Table:
    """Lists with a fixed pattern of null, empty and non-empty lists plus a random part."""
    rng = np.random.default_rng(seed)
    pattern = [None, [], [1], [None], [2, None, 3], [], None, [4, 5, 6, 7]]
    vals = [pattern[i % len(pattern)] for i in range(n)]
    all_empty = [[] for _ in range(n)]
    all_null = [None] * n
    mixed = [None if rng.random() < 0.5 else [] for _ in range(n)]
    return pa.table({
        "pattern": pa.array(vals, pa.list_(pa.int64())),
        "all_empty": pa.array(all_empty, pa.list_(pa.int32())),
        "all_null": pa.array(all_null, pa.list_(pa.int32())),
        "null_or_empty": pa.array(mixed, pa.large_list(pa.string())),
    })


_add("list_shapes", _list_shapes, note="null lists, empty lists, null items, all-empty, all-null columns")


def _list_garbage_under_nulls(n: int, seed: int) -> pa.Table:
    """Null lists whose offsets still span items (legal Arrow; the items are not part of the value)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = pa.array(rng.integers(0, 1000, int(offsets[-1]), dtype=np.int32))
    mask = _mask_array(_mask(rng, n, 0.3))
    return pa.table({"l": pa.ListArray.from_arrays(pa.array(offsets), values, mask=mask)})


_add("list_garbage_under_nulls", _list_garbage_under_nulls, note="null lists with non-empty offset spans")

# --- structs ---
_add("struct", _multi([("st", pa.struct([("a", pa.int32()), ("b", pa.string())]))]),
     note="struct rows never null (2.0); children nullable")
_add("struct_nested", _multi([("st", pa.struct([("inner", pa.struct([("x", pa.float64()), ("y", pa.bool_())])),
                                                 ("z", pa.large_string())]))]),
     reference_multi_batch=False, note="struct<struct>; pylance panics writing it in >1 batch (QUIRKS)")
_add("struct_with_list", _multi([("st", pa.struct([("l", pa.list_(pa.int64())), ("k", pa.int32())]))]))
_add("struct_with_fsl", _multi([("st", pa.struct([("v", pa.list_(pa.float32(), 3)), ("id", pa.uint16())]))]))
_add("list_struct", _single(pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))),
     note="list<struct>; struct items never null")
_add("large_list_struct", _single(pa.large_list(pa.struct([("x", pa.float32()), ("y", pa.list_(pa.int8()))]))))
_add("struct_list_struct", _multi([("st", pa.struct([("l", pa.list_(pa.struct([("p", pa.int16()),
                                                                                ("q", pa.string())]))),
                                                      ("r", pa.date32())]))]), note="depth 3")
_add("struct_non_nullable_children", _multi([pa.field("st", pa.struct([pa.field("a", pa.int64(), False),
                                                                       pa.field("b", pa.string(), False)]), False)]))
_add("struct_mixed", _multi([("id", pa.int64()), ("st", pa.struct([("a", pa.int32()), ("b", pa.string()),
                                                                   ("c", pa.list_(pa.float32(), 2))])),
                             ("tail", pa.string())]),
     note="struct between plain columns (column index bookkeeping)")

# --- dictionaries ---
for _k in [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]:
    _add(f"dict_{_k}_string", _single(pa.dictionary(_k, pa.string())),
         note="null keys come back as a null dictionary item (see QUIRKS)")
_add("dict_int32_string_no_nulls", _single(pa.dictionary(pa.int32(), pa.string()), null_fraction=0.0))
_add("dict_int32_large_string", _single(pa.dictionary(pa.int32(), pa.large_string())))
_add("dict_int64_large_string", _single(pa.dictionary(pa.int64(), pa.large_string())))
_add("dict_int32_binary", _single(pa.dictionary(pa.int32(), pa.binary())))
_add("dict_int8_int64", _single(pa.dictionary(pa.int8(), pa.int64())))
_add("dict_int16_float32", _single(pa.dictionary(pa.int16(), pa.float32())))
_add("dict_int32_float16", _single(pa.dictionary(pa.int32(), pa.float16())))


def _dict_null_items(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    dictionary = pa.array(["x", None, "z", "unused", None])
    idx = pa.array(rng.integers(0, 5, n).astype(np.int32), pa.int32(), mask=_mask(rng, n, NULL_FRACTION))
    return pa.table({"d": pa.DictionaryArray.from_arrays(idx, dictionary)})


_add("dict_null_in_dictionary", _dict_null_items,
     note="dictionary items include nulls and an unused item; keys pointing at null items read back null")
_add("list_dict_string", _single(pa.list_(pa.dictionary(pa.int32(), pa.string()))))
_add("large_list_dict_large_string", _single(pa.large_list(pa.dictionary(pa.int16(), pa.large_string()))))
_add("struct_dict", _multi([("st", pa.struct([("d", pa.dictionary(pa.int8(), pa.string())), ("x", pa.int32())]))]))

# --- null type, all-null ---
_add("null_type", _single(pa.null()))
_add("list_null", _single(pa.list_(pa.null())))
_add("fsl_null_3", _single(pa.list_(pa.null(), 3)))
_add("struct_with_null_child", _multi([("st", pa.struct([("n", pa.null()), ("a", pa.int32())]))]))
_add("struct_empty", _multi([("st", pa.struct([])), ("i", pa.int16())]), reference_misreads=V2_1_ON,
     note="struct<>: one column, no children; pylance 2.1+ reads the column after it as all null (QUIRKS)")

# --- packed struct ---
_PACKED_T = pa.struct([("x", pa.int32()), ("y", pa.float64()), ("z", pa.uint8()), ("v", pa.list_(pa.float32(), 2))])
_add("packed_struct", _single(_PACKED_T, name="ps", metadata=PACKED_META, null_fraction=0.0), versions=("2.0", "2.2"),
     note='struct with field metadata {"packed": "true"}: one column, row-major')
_add("packed_struct_lance_key", _single(pa.struct([("a", pa.int64()), ("b", pa.int16())]), name="ps",
                                        metadata={b"lance-encoding:packed": b"true"}, null_fraction=0.0))

# --- blob ---
_add("blob", _single(pa.large_binary(), name="blob", metadata=BLOB_META),
     note='large_binary with {"lance-encoding:blob": "true"}')


def _blob_big(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    vals = [rng.bytes(int(k)) for k in rng.integers(0, 5000, n)]
    return _table([(pa.field("blob", pa.large_binary(), True, BLOB_META),
                    pa.array(vals, pa.large_binary(), mask=_mask(rng, n, NULL_FRACTION)))])


_add("blob_big_values", _blob_big)


def _wide_mixed(n: int, seed: int) -> pa.Table:
    """One column of many catalogue types side by side (names = entry names)."""
    rng = np.random.default_rng(seed)
    types = {
        "i8": pa.int8(), "u64": pa.uint64(), "f16": pa.float16(), "f64": pa.float64(), "b": pa.bool_(),
        "d32": pa.date32(), "ts": pa.timestamp("ns", "+05:30"), "dec": pa.decimal128(20, 4),
        "s": pa.string(), "lb": pa.large_binary(), "fsb": pa.binary(5), "emb": pa.list_(pa.float32(), 8),
        "l": pa.list_(pa.list_(pa.int32())), "st": pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))]),
        "ls": pa.list_(pa.struct([("x", pa.int64())])), "dict": pa.dictionary(pa.int32(), pa.string()),
        "n": pa.null(),
    }
    return pa.table({k: random_array(t, n, rng) for k, t in types.items()})


_add("mixed", _wide_mixed, compare="values", note="many types side by side")


# --------------------------------------------------------------------------------------------
# Tables pylance refuses to write as 2.0
# --------------------------------------------------------------------------------------------

REFUSED: dict[str, Refused] = {}


def _refuse(name: str, make, error: str, note: str = "", **kw) -> None:
    REFUSED[name] = Refused(name, make, error, note, **kw)


def _struct_with_nulls(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    typ = pa.struct([("a", pa.int32()), ("b", pa.string())])
    arr = random_array(typ, n, rng, struct_nulls=True, null_fraction=0.3)
    return pa.table({"st": arr})


def _typed(typ: pa.DataType, values: Callable[[int], list], name: str = "c", metadata=None):
    def make(n: int, seed: int) -> pa.Table:
        return _table([(pa.field(name, typ, True, metadata), pa.array(values(n), typ))])

    return make


_refuse("struct_null_rows", _struct_with_nulls, r"does not encode struct validity")
_refuse("map_string_int32", _typed(pa.map_(pa.string(), pa.int32()), lambda n: [[("k", i)] for i in range(n)]),
        r"(?i)no field encoding|not supported|map")
_refuse("fsl_string", _typed(pa.list_(pa.string(), 2), lambda n: [["a", "b"]] * n), r"(?i)panic",
        note="pylance panics in a background thread (RuntimeError wrapping JoinError::Panic)")
_refuse("fsl_list_int32", _typed(pa.list_(pa.list_(pa.int32()), 2), lambda n: [[[1], [2, 3]]] * n),
        r"(?i)unsupported data type")
_refuse("fsl_struct", _typed(pa.list_(pa.struct([("a", pa.int32())]), 2), lambda n: [[{"a": 1}, {"a": 2}]] * n),
        r"projection specified the column index 1", stage="read",
        note="written without complaint, unreadable (QUIRKS fsl_struct_unreadable)")
_refuse("fsl_dictionary", lambda n, s: pa.table({"c": pa.FixedSizeListArray.from_arrays(
    pa.DictionaryArray.from_arrays(pa.array([i % 3 for i in range(2 * n)], pa.int32()),
                                   pa.array(["a", "b", "c"])), 2)}),
    r"not yet implemented", stage="read", panics=True, note="written, reading panics")
_refuse("dict_list_values", lambda n, s: pa.table({"c": pa.DictionaryArray.from_arrays(
    pa.array([i % 2 for i in range(n)], pa.int32()), pa.array([[1], [2, 3]], pa.list_(pa.int32())))}),
    r"does not parse back")
_refuse("dict_fsb_values", lambda n, s: pa.table({"c": pa.DictionaryArray.from_arrays(
    pa.array([i % 2 for i in range(n)], pa.int32()), pa.array([b"abcd", b"efgh"], pa.binary(4)))}),
    r"does not parse back")
_refuse("packed_struct_var_width", _typed(pa.struct([("a", pa.int32()), ("s", pa.string())]),
                                          lambda n: [{"a": i, "s": str(i)} for i in range(n)],
                                          metadata=PACKED_META), r"only implemented for fixed-width")
_refuse("packed_struct_child_nulls", lambda n, s: pa.Table.from_arrays(
    [pa.StructArray.from_arrays([pa.array([1, None] * (n // 2), pa.int32()), pa.array([1.5] * (n // 2 * 2))],
                                names=["a", "b"])],
    schema=pa.schema([pa.field("ps", pa.struct([("a", pa.int32()), ("b", pa.float64())]), metadata=PACKED_META)])),
    r"only implemented for fixed-width", note="packed struct children may not hold nulls in 2.0")
_refuse("packed_struct_bool_child", _typed(pa.struct([("a", pa.int32()), ("b", pa.bool_())]),
                                           lambda n: [{"a": i, "b": True} for i in range(n)], metadata=PACKED_META),
        r"only supports full-byte buffers")
_refuse("packed_struct_null_child", _typed(pa.struct([("a", pa.int32()), ("b", pa.null())]),
                                           lambda n: [{"a": i, "b": None} for i in range(n)], metadata=PACKED_META),
        r"(?i)internal error", note="pylance fails with an internal error (MaxLength statistics)")
_refuse("blob_on_binary", _typed(pa.binary(), lambda n: [b"x"] * n, metadata=BLOB_META), r"(?i)large_binary")
_refuse("blob_on_string", _typed(pa.string(), lambda n: ["x"] * n, metadata=BLOB_META), r"(?i)large_binary")
# pylance's 2.0 writer refuses string_view / binary_view ("Cannot encode a data block"); lancefile
# stores them as string / binary, which both readers read back (see test_view_types_stored_as_plain).
_refuse("list_view", _typed(pa.list_view(pa.int32()), lambda n: [[1, 2]] * n), r"(?i)unsupported data type")
_refuse("dense_union", lambda n, s: pa.table({"u": pa.UnionArray.from_dense(
    pa.array([0] * n, pa.int8()), pa.array(list(range(n)), pa.int32()), [pa.array(list(range(n)), pa.int32())])}),
    r"(?i)unsupported data type")
_refuse("run_end_encoded", lambda n, s: pa.table({"r": pa.RunEndEncodedArray.from_arrays(
    pa.array([n], pa.int32()), pa.array([7], pa.int64()))}), r"(?i)unsupported data type")
_refuse("interval_month_day_nano", _typed(pa.month_day_nano_interval(), lambda n: [(1, 2, 3)] * n),
        r"(?i)unsupported data type")
_refuse("decimal32", _typed(pa.decimal32(5, 2), lambda n: [decimal.Decimal("1.25")] * n), r"(?i)unsupported data type")
_refuse("decimal64", _typed(pa.decimal64(12, 2), lambda n: [decimal.Decimal("1.25")] * n), r"(?i)unsupported data type")
_refuse("non_nullable_with_nulls", lambda n, s: pa.table({"x": pa.array([1, None] * (n // 2), pa.int32())}),
        r"(?i)null values even though the field is marked non-null",
        writer_schema=pa.schema([pa.field("x", pa.int32(), False)]),
        note="writer schema says non-null, the batch (nullable field) has nulls")
_refuse("non_nullable_list_item_with_nulls",
        lambda n, s: pa.table({"l": pa.array([[1, None]] * n, pa.list_(pa.int32()))}),
        r"(?i)null values even though the field is marked non-null",
        writer_schema=pa.schema([pa.field("l", pa.list_(pa.field("item", pa.int32(), False)))]))


# --- 2.1+ only: types 2.0 refuses, and the structural / compressive encodings of 2.1 and 2.2 ---


def _struct_nulls_nested(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    inner = pa.struct([("x", pa.int32()), ("l", pa.list_(pa.string()))])
    typ = pa.struct([("inner", inner), ("y", pa.float64())])
    return pa.table({"st": random_array(typ, n, rng, struct_nulls=True, null_fraction=0.25),
                     "ls": random_array(pa.list_(pa.struct([("p", pa.int16()), ("q", pa.string())])), n, rng,
                                        struct_nulls=True, null_fraction=0.25)})


def _map_table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        r = rng.random()
        if r < 0.1:
            rows.append(None)
        elif r < 0.2:
            rows.append([])
        else:
            rows.append([(f"k{j}", None if rng.random() < 0.2 else int(rng.integers(0, 1000)))
                         for j in range(int(rng.integers(1, 4)))])
    nested = [None if v is None else [v, []] for v in rows]
    return pa.table({"m": pa.array(rows, pa.map_(pa.string(), pa.int32())),
                     "lm": pa.array(nested, pa.list_(pa.map_(pa.string(), pa.int32())))})


def _packed_var(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    typ = pa.struct([("a", pa.int32()), ("s", pa.string()), ("b", pa.large_binary()), ("f", pa.float64())])
    arr = random_array(typ, n, rng, null_fraction=0.0)
    valid = pa.array(rng.random(n) > 0.2)
    arr = pa.StructArray.from_arrays(arr.flatten(), fields=list(typ), mask=pc.invert(valid))
    return _table([(pa.field("ps", typ, True, PACKED_META), arr)])


def _fsl_struct(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    typ = pa.list_(pa.struct([("a", pa.int32()), ("b", pa.float32())]), 2)
    return pa.table({"fs": random_array(typ, n, rng, null_fraction=0.0)})


def _text(n: int, seed: int, lo: int = 10, hi: int = 40) -> list[str]:
    rng = np.random.default_rng(seed)
    words = ["lance", "arrow", "column", "page", "vector", "table", "spark", "data", "file", "chunk", "zip"]
    out = []
    for k in rng.integers(lo, hi, n):
        out.append(" ".join(words[i] for i in rng.integers(0, len(words), max(1, int(k) // 5)))[: int(k)])
    return out


def _fsst_strings(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    vals = _text(n, seed)
    return pa.table({"s": pa.array(vals, pa.string(), mask=_mask(rng, n, 0.05)),
                     "ls": pa.array(vals, pa.large_string())})


def _huge_binary(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = min(n, 24)
    vals = [rng.bytes(40_000 + 17 * i) if i % 5 else None for i in range(n)]
    return pa.table({"b": pa.array(vals, pa.large_binary())})


def _runs(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    run = np.repeat(rng.integers(-10**12, 10**12, n // 50 + 1), 50)[:n]
    small = np.repeat(rng.integers(0, 100, n // 300 + 1), 300)[:n].astype(np.int32)
    return pa.table({"i64": pa.array(run), "i32": pa.array(small, mask=_mask(rng, n, 0.02)),
                     "u8": pa.array(np.repeat(np.arange(n // 500 + 1) % 250, 500)[:n].astype(np.uint8))})


def _low_card_numbers(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, 40, n)
    i64 = rng.integers(-10**15, 10**15, 40)[pick]
    f64 = rng.random(40)[pick]
    dec = [decimal.Decimal(int(v)).scaleb(-2) for v in rng.integers(0, 10**9, 40)[pick]]
    fsb = [rng.bytes(16) for _ in range(40)]
    return pa.table({"i64": pa.array(i64, mask=_mask(rng, n, 0.1)), "f64": pa.array(f64),
                     "dec": pa.array(dec, pa.decimal128(12, 2)), "fsb": pa.array([fsb[i] for i in pick], pa.binary(16)),
                     "u64": pa.array(i64.astype(np.uint64))})


def _constants(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    mask = _mask(rng, n, 0.2)
    return pa.table({
        "i64": pa.array(np.full(n, 1234567, np.int64)),
        "i32_nulls": pa.array(np.full(n, -7, np.int32), mask=mask),
        "s": pa.array(["the same value"] * n),
        "s_nulls": pa.array(["same"] * n, mask=mask),
        "b": pa.array([True] * n),
        "emb": pa.array([[0.5] * 16] * n, pa.list_(pa.float32(), 16)),
        "d": pa.array([decimal.Decimal("12.50")] * n, pa.decimal128(10, 2)),
        "l": pa.array([[1, 2]] * n, pa.list_(pa.int32())),
    })


def _narrow(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"i8": pa.array(rng.integers(-3, 4, n).astype(np.int8)),
                     "u16": pa.array(rng.integers(0, 900, n).astype(np.uint16)),
                     "i32": pa.array(rng.integers(0, 1 << 20, n).astype(np.int32), mask=_mask(rng, n, 0.3)),
                     "i64": pa.array(rng.integers(-(1 << 40), 1 << 40, n)),
                     "ts": pa.array(rng.integers(1_600_000_000_000_000, 1_700_000_000_000_000, n),
                                    pa.timestamp("us", "UTC"))})


def _deep_lists(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    t = pa.int16()
    for _ in range(5):
        t = pa.list_(t)
    return pa.table({"d5": random_array(t, n, rng, null_fraction=0.2)})


def _fsl_all_null_items(n: int, seed: int) -> pa.Table:
    values = pa.nulls(4 * n, pa.float32())
    return pa.table({"v": pa.FixedSizeListArray.from_arrays(values, 4)})


def _meta(**kv) -> dict:
    return {f"lance-encoding:{k.replace('_', '-')}".encode(): str(v).encode() for k, v in kv.items()}


_add("struct_null_rows", _struct_with_nulls, versions=V2_1_ON, note="struct rows that are null (2.1+)")
_add("struct_nulls_nested", _struct_nulls_nested, versions=V2_1_ON, reference_multi_batch=False,
     note="null structs at two depths, with a list inside, and list<struct> with null structs")
_add("map_string_int32", _map_table, versions=("2.2",), note="map (2.2 only): null, empty and nested in a list")
_add("packed_struct_var_width", _packed_var, versions=("2.2",),
     note="packed struct with string and binary fields: full-zip VariablePackedStruct (2.2 only)")
_add("fsl_struct", _fsl_struct, versions=("2.2",), reference_multi_batch=False,
     note="fixed_size_list<struct>[2] (2.2 only); pylance reads it only alone in its file")
_add("fsst_strings", _fsst_strings, versions=V2_1_ON, min_rows=4000,
     note="~100 KB of high-cardinality text: FSST mini-block")
_add("long_text_fsst", lambda n, s: pa.table({"t": pa.array([x * 30 for x in _text(n, s, 20, 60)])}),
     versions=V2_1_ON, min_rows=400, note="values over 256 bytes: full-zip with FSST")
_add("huge_binary", _huge_binary, versions=V2_1_ON, reference_multi_batch=False,
     note="40 KB random values: full-zip, each value zstd-compressed")
_add("sorted_runs", _runs, versions=V2_1_ON, min_rows=5000, note="long runs: RLE")
_add("low_card_numbers", _low_card_numbers, versions=V2_1_ON, min_rows=3000,
     note="40 distinct 64/128-bit values: dictionaries in 2.2")
_add("constants", _constants, versions=V2_1_ON, min_rows=2000,
     note="constant columns: 2.2 ConstantLayout (inline and buffered values, with nulls)")
_add("narrow_ints", _narrow, versions=V2_1_ON, min_rows=5000, note="narrow ranges: bitpacking, several chunks")
_add("deep_lists", _deep_lists, versions=V2_1_ON, note="list nested five deep, nulls at every level")
_add("fsl_all_null_items", _fsl_all_null_items, versions=V2_1_ON,
     note="fixed_size_list whose items are all null: full-zip FSL over Constant")
_add("list_many_items", _single(pa.list_(pa.int32())), versions=V2_1_ON, min_rows=20_000,
     note="lists over many chunks and pages: the repetition index")
for _codec in ["zstd", "lz4"]:
    _add(f"float_bss_{_codec}", _multi([pa.field("f32", pa.float32(), True, _meta(compression=_codec, bss="on")),
                                        pa.field("f64", pa.float64(), True, _meta(compression=_codec, bss="on"))]),
         versions=V2_1_ON, min_rows=5000, note="byte-stream-split under general compression")
    _add(f"ints_{_codec}_level", _multi([pa.field("i", pa.int64(), True, _meta(compression=_codec,
                                                                                compression_level=7))]),
         versions=V2_1_ON, min_rows=5000, note="general compression of mini-block chunks")
_add("rle_threshold", _multi([pa.field("i", pa.int32(), True, _meta(rle_threshold="0.9"))]), versions=V2_1_ON,
     min_rows=3000, note="lance-encoding:rle-threshold")
_add("dict_size_ratio", _low_card(pa.string(), distinct=200, metadata=_meta(dict_size_ratio="0.99")),
     versions=V2_1_ON, min_rows=3000, note="lance-encoding:dict-size-ratio")
_add("structural_fullzip", _multi([pa.field("i", pa.int32(), True, _meta(structural_encoding="fullzip")),
                                   pa.field("s", pa.string(), True, _meta(structural_encoding="fullzip")),
                                   pa.field("l", pa.list_(pa.int64()), True, _meta(structural_encoding="fullzip"))]),
     versions=V2_1_ON, note="lance-encoding:structural-encoding=fullzip on narrow values")
_add("structural_miniblock", _multi([pa.field("s", pa.string(), True, _meta(structural_encoding="miniblock"))]),
     versions=V2_1_ON, note="lance-encoding:structural-encoding=miniblock")
_add("compression_fsst_forced", _multi([pa.field("s", pa.string(), True, _meta(compression="fsst"))]),
     versions=V2_1_ON, note="lance-encoding:compression=fsst on a small page")
_add("compression_none", _multi([pa.field("s", pa.string(), True, _meta(compression="none")),
                                 pa.field("i", pa.int64(), True, _meta(compression="none"))]),
     versions=V2_1_ON, min_rows=3000, note="lance-encoding:compression=none")
_add("minichunk_size", _multi([pa.field("s", pa.string(), True, _meta(minichunk_size=65536 * 2))]),
     versions=V2_1_ON, min_rows=20_000, note="lance-encoding:minichunk-size: large chunks in 2.2")


# --------------------------------------------------------------------------------------------
# Edge cases
# --------------------------------------------------------------------------------------------

EDGE_CASES: dict[str, EdgeCase] = {}


def _edge(name: str, batches, **kw) -> None:
    EDGE_CASES[name] = EdgeCase(name, batches, **kw)


def _zero_rows(seed: int) -> list[pa.RecordBatch]:
    return _wide_mixed(0, seed).to_batches() or [pa.RecordBatch.from_pylist([], schema=_wide_mixed(0, seed).schema)]


_edge("zero_rows", _zero_rows, compare="values", note="every mixed type, 0 rows")


def _all_null(seed: int) -> list[pa.RecordBatch]:
    n = 300
    types = {
        "i32": pa.int32(), "u8": pa.uint8(), "f64": pa.float64(), "b": pa.bool_(), "ts": pa.timestamp("ms", "UTC"),
        "dec": pa.decimal256(50, 5), "s": pa.string(), "ls": pa.large_string(), "bin": pa.binary(),
        "fsb": pa.binary(7), "emb": pa.list_(pa.float32(), 4), "l": pa.list_(pa.int64()),
        "ll": pa.large_list(pa.list_(pa.string())), "dict": pa.dictionary(pa.int32(), pa.string()),
        "n": pa.null(),
    }
    cols = {k: pa.nulls(n, t) for k, t in types.items()}
    cols["st"] = pa.StructArray.from_arrays([pa.nulls(n, pa.int32()), pa.nulls(n, pa.string())], names=["a", "b"])
    return pa.table(cols).to_batches()


_edge("all_null", _all_null, compare="values", note="every column entirely null (struct: children all null)")


def _sliced_table(seed: int) -> list[pa.RecordBatch]:
    t = _wide_mixed(517, seed)
    return t.slice(13).to_batches()


_edge("sliced_table", _sliced_table, compare="values", note="table.slice(13): every array has offset 13")


def _sliced_odd(seed: int) -> list[pa.RecordBatch]:
    t = _wide_mixed(700, seed)
    return t.slice(3, 401).to_batches()


_edge("sliced_odd_offset_and_length", _sliced_odd, compare="values", note="bitmaps at offset 3, length 401")


def _deep_offsets(seed: int) -> list[pa.RecordBatch]:
    """Arrays whose children have non-zero offsets or whose offsets do not start at zero."""
    rng = np.random.default_rng(seed)
    n = 300
    # list whose offsets start at 5 and whose values are themselves a slice
    values = random_array(pa.int32(), 2000, rng).slice(11)
    lengths = rng.integers(0, 5, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]) + 5
    lst = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
    # string array sliced, whose offsets buffer starts non-zero
    strings = random_array(pa.string(), n + 40, rng).slice(40)
    # struct built from sliced children
    st = pa.StructArray.from_arrays([random_array(pa.int64(), n + 7, rng).slice(7),
                                     random_array(pa.string(), n + 9, rng).slice(9)], names=["a", "b"])
    # fixed-size list whose values have an offset
    fvals = random_array(pa.float32(), 4 * n + 3, rng).slice(3)
    fsl = pa.FixedSizeListArray.from_arrays(fvals, 4)
    boolean = random_array(pa.bool_(), n + 5, rng).slice(5)
    dct = random_array(pa.dictionary(pa.int16(), pa.string()), n + 2, rng).slice(2)
    nested = random_array(pa.list_(pa.list_(pa.string())), n + 17, rng).slice(17)
    return pa.table({"l": lst, "s": strings, "st": st, "fsl": fsl, "b": boolean, "d": dct,
                     "ll": nested}).to_batches()


_edge("child_offsets", _deep_offsets, compare="values",
      note="list offsets not starting at 0, sliced children inside list/struct/fsl, sliced bitmaps")


def _many_small_batches(seed: int) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(seed)
    t = _wide_mixed(600, seed)
    out, pos = [], 0
    while pos < t.num_rows:
        k = int(rng.integers(1, 8))
        out.append(t.slice(pos, k).combine_chunks().to_batches()[0])
        pos += k
    return out


_edge("many_small_batches", _many_small_batches, compare="values", note="~150 batches of 1-7 rows")


def _with_empty_batches(seed: int) -> list[pa.RecordBatch]:
    t = _wide_mixed(50, seed)
    b = t.combine_chunks().to_batches()[0]
    return [b.slice(0, 0), b.slice(0, 20), b.slice(20, 0), b.slice(20, 30), b.slice(50, 0)]


_edge("empty_batches_between", _with_empty_batches, compare="values", note="zero-row batches mixed in")

BIG_PAGE_BYTES = 64 * 1024


def _big_columns(seed: int) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(seed)
    n = 20_000
    t = pa.table({
        "i64": random_array(pa.int64(), n, rng),                     # 160 KB -> 3+ pages
        "s": random_array(pa.string(), n, rng),                      # ~250 KB
        "emb": random_array(pa.list_(pa.float32(), 16), n, rng),     # 1.28 MB
        "l": random_array(pa.list_(pa.int32()), n, rng),
        "b": random_array(pa.bool_(), n, rng),
        "st": random_array(pa.struct([("a", pa.float64()), ("b", pa.large_string())]), n, rng),
    })
    return t.to_batches(max_chunksize=5_000)


_edge("larger_than_page", _big_columns, write_options={"max_page_bytes": BIG_PAGE_BYTES},
      reference_options={"data_cache_bytes": BIG_PAGE_BYTES},
      note=f"20K rows in 4 batches, max_page_bytes={BIG_PAGE_BYTES}: several pages per column. pylance "
           "only splits an array that arrives larger than max_page_bytes; data accumulated from several "
           "batches is flushed at close as one page, hence data_cache_bytes for the reference writer")


def _thousand_columns(seed: int) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(seed)
    n = 20
    kinds = [pa.int32(), pa.float64(), pa.string(), pa.bool_(), pa.list_(pa.int16())]
    cols = {f"c{i:04d}": random_array(kinds[i % len(kinds)], n, rng) for i in range(1000)}
    return pa.table(cols).to_batches()


_edge("thousand_columns", _thousand_columns, note="1,000 columns of 20 rows")


def _single_row(seed: int) -> list[pa.RecordBatch]:
    return _wide_mixed(1, seed).to_batches()


_edge("single_row", _single_row, compare="values")


# --------------------------------------------------------------------------------------------
# Self-check against pylance (python tests/datagen.py --check)
# --------------------------------------------------------------------------------------------


def _pylance_write(batches: Sequence[pa.RecordBatch] | pa.Table, path: str, schema: pa.Schema | None = None,
                   **opts) -> None:
    import lance.file as lf

    if isinstance(batches, pa.Table):
        schema = schema or batches.schema
        batches = batches.to_batches()
    schema = schema or batches[0].schema
    with lf.LanceFileWriter(path, schema, version="2.0", **opts) as w:
        for b in batches:
            w.write_batch(b)


def _pylance_round_trip(table_or_batches, path: str, schema: pa.Schema | None = None, **opts) -> pa.Table:
    import lance.file as lf

    _pylance_write(table_or_batches, path, schema, **opts)
    return lf.LanceFileReader(path).read_all().to_table()


def _check(names: Iterable[str] | None = None, n_rows: int = 300) -> int:  # pragma: no cover - manual tool
    """Re-derive every recorded fact from pylance; print one line per entry; return #failures."""
    import re
    import tempfile

    failures = 0
    with tempfile.TemporaryDirectory() as d:
        for name, e in CATALOGUE.items():
            if names and name not in names:
                continue
            t = e.make(n_rows, 0)
            try:
                got = _pylance_round_trip(t, f"{d}/{name}.lance", **e.write_options)
            except BaseException as exc:  # noqa: BLE001 - pyo3 panics are BaseExceptions
                print(f"FAIL  {name}: pylance refused: {type(exc).__name__}: {exc}")
                failures += 1
                continue
            exp = e.expected_readback(t)
            exact = got.schema.equals(exp.schema, check_metadata=True) and _nan_equal(got, exp)
            raw = _nan_equal(got, t)
            print(f"{'ok   ' if exact else 'FAIL '} {name}  (exact={exact}, unchanged={raw}, compare={e.compare})")
            failures += not exact
        for name, ec in EDGE_CASES.items():
            if names and name not in names:
                continue
            bs = ec.batches(0)
            try:
                got = _pylance_round_trip(bs, f"{d}/{name}.lance", bs[0].schema, **ec.write_options,
                                          **ec.reference_options)
            except BaseException as exc:  # noqa: BLE001
                print(f"FAIL  edge {name}: {type(exc).__name__}: {exc}")
                failures += 1
                continue
            exp = pa.Table.from_batches(bs, schema=bs[0].schema)
            ok = _nan_equal(normalize_dictionaries(got), normalize_dictionaries(exp))
            print(f"{'ok   ' if ok else 'FAIL '} edge {name}  (rows={got.num_rows}, raw={_nan_equal(got, exp)})")
            failures += not ok
        for name, r in REFUSED.items():
            if names and name not in names:
                continue
            path = f"{d}/{name}.lance"
            stage = "write"
            try:
                _pylance_write(r.make(n_rows, 0), path, r.writer_schema)
                stage = "read"
                import lance.file as lf

                lf.LanceFileReader(path).read_all().to_table()
            except BaseException as exc:  # noqa: BLE001
                ok = re.search(r.error, str(exc)) is not None and stage == r.stage
                ok = ok and (r.panics == (not isinstance(exc, Exception)))
                print(f"{'ok   ' if ok else 'FAIL '} refused {name} at {stage}: {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:140]}")
                failures += not ok
            else:
                print(f"FAIL  refused {name}: pylance accepted and read it")
                failures += 1
    return failures


def _nan_equal(a: pa.Table, b: pa.Table) -> bool:
    a, b = a.combine_chunks(), b.combine_chunks()
    if a.equals(b):
        return True
    if a.schema != b.schema:
        return False
    for ca, cb in zip(a.columns, b.columns):
        ca, cb = ca.combine_chunks(), cb.combine_chunks()
        if ca.equals(cb):
            continue
        bt = float_bits_type(ca.type)
        if bt == ca.type or not ca.view(bt).equals(cb.view(bt)):
            return False
    return True


if __name__ == "__main__":  # pragma: no cover
    import sys

    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    sys.exit(1 if _check(args or None) else 0)
