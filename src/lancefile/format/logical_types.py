"""Lance logical type strings <-> Arrow types (``"int64"``, ``"timestamp:us:UTC"``, ``"list.struct"``...).

Every field of a Lance schema names its type with a *logical type* string; this module maps
Arrow types to them (what the reference writer writes) and back (what the reference reader
gives). :mod:`lancefile.format.schema` builds fields and schemas on top of it.

Example::

    >>> logical_type_of(pa.timestamp("ms", "UTC")), arrow_type_of("fixed_size_list:float:4")
    ('timestamp:ms:UTC', FixedSizeListType(fixed_size_list<item: float>[4]))
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import pyarrow as pa

from ..errors import InvalidInputError, UnsupportedTypeError

__all__ = ["logical_type_of", "arrow_type_of", "EXTENSION_NAME_KEY", "EXTENSION_METADATA_KEY", "BLOB_KEY",
           "PACKED_KEYS", "PRIMARY_KEY_KEY", "PRIMARY_KEY_POSITION_KEY", "CLUSTERING_KEY_POSITION_KEY"]

EXTENSION_NAME_KEY = "ARROW:extension:name"
EXTENSION_METADATA_KEY = "ARROW:extension:metadata"
BLOB_KEY = "lance-encoding:blob"
PACKED_KEYS = ("packed", "lance-encoding:packed")  # legacy key first
PRIMARY_KEY_KEY = "lance-schema:unenforced-primary-key"
PRIMARY_KEY_POSITION_KEY = "lance-schema:unenforced-primary-key:position"
CLUSTERING_KEY_POSITION_KEY = "lance-schema:unenforced-clustering-key:position"

LANCE_JSON = "lance.json"  # JSONB bytes in large_binary, logical type "json"
ARROW_JSON = "arrow.json"  # JSON text; the reference converts it to lance.json on write
BFLOAT16 = "lance.bfloat16"  # fixed_size_binary(2); has its own spelling inside fixed_size_list


_UNITS = ("s", "ms", "us", "ns")

# Logical types without parameters (besides units). "json" is read-only: it comes from
# lance.json fields, never from a plain Arrow type.
_SIMPLE_TYPES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "bool": pa.bool_(),
    "int8": pa.int8(),
    "uint8": pa.uint8(),
    "int16": pa.int16(),
    "uint16": pa.uint16(),
    "int32": pa.int32(),
    "uint32": pa.uint32(),
    "int64": pa.int64(),
    "uint64": pa.uint64(),
    "halffloat": pa.float16(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "large_string": pa.large_string(),
    "large_binary": pa.large_binary(),
    "json": pa.large_binary(),
    "date32:day": pa.date32(),
    "date64:ms": pa.date64(),
    "time32:s": pa.time32("s"),
    "time32:ms": pa.time32("ms"),
    "time64:us": pa.time64("us"),
    "time64:ns": pa.time64("ns"),
    **{f"duration:{unit}": pa.duration(unit) for unit in _UNITS},
}
_SIMPLE_NAMES: dict[pa.DataType, str] = {
    **{dt: name for name, dt in _SIMPLE_TYPES.items() if name != "json"},
    pa.string_view(): "string",  # the reference stores views as their plain types
    pa.binary_view(): "binary",
}
_LIST_TYPES = {
    "list": pa.list_,
    "list.struct": pa.list_,
    "large_list": pa.large_list,
    "large_list.struct": pa.large_list,
}
_FSL_STRUCT = re.compile(r"fixed_size_list:struct:([^:]+)")


# --------------------------------------------------------------------------------------------
# Arrow type -> logical type


def logical_type_of(dt: pa.DataType) -> str:
    """The Lance logical type string of an Arrow type (the table in REFERENCE-NOTES §2.2).

    Nested types give only their own layer (``struct``, ``list``...); their children get their own
    fields. Extension types are stored as their storage type, except ``lance.json``.

    Example::

        >>> logical_type_of(pa.timestamp("us", "+05:30"))
        'timestamp:us:+05:30'
        >>> logical_type_of(pa.list_(pa.list_(pa.float32(), 2), 2))
        'fixed_size_list:fixed_size_list:float:2:2'
        >>> logical_type_of(pa.dictionary(pa.int32(), pa.string()))
        'dict:string:int32:false'
    """
    if isinstance(dt, pa.BaseExtensionType):
        return _logical_type(dt.storage_type, dt.extension_name)
    return _logical_type(dt, "")


def _logical_type(dt: pa.DataType, extension_name: str) -> str:
    """Logical type of a field of storage type ``dt`` tagged with ``extension_name``."""
    if extension_name == LANCE_JSON and dt == pa.large_binary():
        return "json"
    if extension_name == ARROW_JSON and dt in (pa.string(), pa.large_string()):
        # The reference rewrites the values into its JSONB form; storing the text would make
        # a file that the reference misreads, so refuse until that conversion exists here.
        raise UnsupportedTypeError(
            "arrow.json columns are stored by Lance as JSONB (lance.json), a conversion lancefile "
            "does not do; store the column as a plain string instead"
        )
    simple = _SIMPLE_NAMES.get(dt)
    if simple is not None:
        return simple
    return _parametric_logical_type(dt)


def _parametric_logical_type(dt: pa.DataType) -> str:
    types = pa.types
    if types.is_decimal128(dt) or types.is_decimal256(dt):
        return f"decimal:{dt.bit_width}:{dt.precision}:{dt.scale}"
    if types.is_time32(dt) or types.is_time64(dt):
        return f"time{dt.bit_width}:{dt.unit}"
    if types.is_timestamp(dt):
        return f"timestamp:{dt.unit}:{dt.tz or '-'}"
    if types.is_fixed_size_binary(dt):
        return f"fixed_size_binary:{dt.byte_width}"
    if types.is_struct(dt):
        return "struct"
    if types.is_map(dt):
        if dt.keys_sorted:
            raise UnsupportedTypeError(f"{dt} has keys_sorted=True, which Lance cannot store")
        return "map"
    if types.is_list(dt) or types.is_large_list(dt):
        prefix = "list" if types.is_list(dt) else "large_list"
        return f"{prefix}.struct" if types.is_struct(_storage(dt.value_type)) else prefix
    if types.is_fixed_size_list(dt):
        return _fixed_size_list_logical_type(dt)
    if types.is_dictionary(dt):
        return _dictionary_logical_type(dt)
    raise UnsupportedTypeError(f"Arrow type {dt} is not supported by the Lance format")


def _fixed_size_list_logical_type(dt: pa.FixedSizeListType) -> str:
    size = dt.list_size
    if size <= 0:
        raise UnsupportedTypeError(f"{dt}: a fixed_size_list dimension must be positive")
    item = _storage(dt.value_type)
    if pa.types.is_struct(item):
        return f"fixed_size_list:struct:{size}"  # the only FSL whose item gets its own field
    if _extension_name(dt.value_field) == BFLOAT16 and item == pa.binary(2):
        return f"fixed_size_list:{BFLOAT16}:{size}"
    inner = logical_type_of(item)
    if _has_child_fields(inner):  # list, map or fixed_size_list<struct> items
        raise UnsupportedTypeError(f"Arrow type {dt} is not supported by the Lance format")
    return f"fixed_size_list:{inner}:{size}"


def _dictionary_logical_type(dt: pa.DictionaryType) -> str:
    # Dictionary values have no field, so no field metadata: an extension value type (even
    # lance.json) is just its storage type here.
    value = logical_type_of(_storage(dt.value_type))
    logical = f"dict:{value}:{logical_type_of(dt.index_type)}:false"
    try:
        _leaf_type(logical)
    except UnsupportedTypeError:
        # The format cannot spell it: "dict:" strings split on every ':' into exactly 4 parts.
        raise UnsupportedTypeError(
            f"dictionary type {dt} cannot be stored: its logical type {logical!r} does not parse back"
        ) from None
    return logical


def _has_child_fields(logical: str) -> bool:
    """Whether fields of this logical type have child fields in the schema."""
    return logical in _LIST_TYPES or logical in ("struct", "map") or bool(_FSL_STRUCT.fullmatch(logical))


def _storage(dt: pa.DataType) -> pa.DataType:
    return dt.storage_type if isinstance(dt, pa.BaseExtensionType) else dt


def _extension_name(f: pa.Field) -> str:
    if isinstance(f.type, pa.BaseExtensionType):
        return f.type.extension_name
    return (f.metadata or {}).get(EXTENSION_NAME_KEY.encode(), b"").decode("utf-8", "replace")


# --------------------------------------------------------------------------------------------
# logical type -> Arrow type


def arrow_type_of(logical: str, children: Iterable[pa.Field] = ()) -> pa.DataType:
    """The Arrow type a field of this logical type reads back as; the inverse of :func:`logical_type_of`.

    ``children`` are the field's child fields (already converted) for struct, list, large_list,
    map and fixed_size_list-of-struct; other types take none. Unknown strings raise
    :class:`UnsupportedTypeError`, a wrong number of children :class:`InvalidInputError`.

    Example::

        >>> arrow_type_of("fixed_size_list:float:4")
        FixedSizeListType(fixed_size_list<item: float>[4])
        >>> arrow_type_of("list", [pa.field("item", pa.int64())])
        ListType(list<item: int64>)
        >>> arrow_type_of("timestamp:ns:-")
        TimestampType(timestamp[ns])
    """
    children = list(children)
    if not children and logical not in _CONTAINER_TYPES and not logical.startswith("fixed_size_list:struct:"):
        return _leaf_type(logical)  # the common case, cached
    if logical in _LIST_TYPES:
        return _LIST_TYPES[logical](_only_child(logical, children))
    if logical == "struct":
        return pa.struct(children)
    if logical == "map":
        return _map_type(_only_child(logical, children))
    fsl_struct = _FSL_STRUCT.fullmatch(logical)
    if fsl_struct:
        item = _only_child(logical, children)
        try:
            return pa.list_(item, _parse_dimension(fsl_struct.group(1)))
        except ValueError as exc:
            raise UnsupportedTypeError(f"bad Lance logical type {logical!r}: {exc}") from None
    if children:
        raise InvalidInputError(f"logical type {logical!r} takes no child fields, got {len(children)}")
    return _leaf_type(logical)


_CONTAINER_TYPES = frozenset(["struct", "map", *_LIST_TYPES])


def _only_child(logical: str, children: list[pa.Field]) -> pa.Field:
    if len(children) != 1:
        raise InvalidInputError(f"logical type {logical!r} needs exactly one child field, got {len(children)}")
    return children[0]


def _map_type(entries: pa.Field) -> pa.DataType:
    if not pa.types.is_struct(entries.type) or entries.type.num_fields != 2:
        raise InvalidInputError(f"a map's child must be a struct of (key, value), got {entries.type}")
    key, value = entries.type.field(0), entries.type.field(1)
    # Arrow normalises the names (and key nullability) of a map's fields; so does the reference reader.
    return pa.map_(
        pa.field("key", key.type, nullable=False, metadata=key.metadata),
        pa.field("value", value.type, nullable=value.nullable, metadata=value.metadata),
    )


@lru_cache(maxsize=1024)  # wide files repeat a handful of logical types thousands of times
def _leaf_type(logical: str) -> pa.DataType:
    """Parse a logical type that has no child fields."""
    simple = _SIMPLE_TYPES.get(logical)
    if simple is not None:
        return simple
    head = logical.split(":", 1)[0]
    parse = _LEAF_PARSERS.get(head)
    if parse is None:
        raise UnsupportedTypeError(f"unknown Lance logical type {logical!r}")
    try:
        return parse(logical)
    except (ValueError, TypeError, pa.ArrowException) as exc:
        # ArrowInvalid is a ValueError; pyarrow refuses bad precisions, widths, index types...
        raise UnsupportedTypeError(f"bad Lance logical type {logical!r}: {exc}") from None


def _parse_fixed_size_list(logical: str) -> pa.DataType:
    parts = logical.split(":")
    if len(parts) < 3:
        raise ValueError("expected fixed_size_list:{item}:{size}")
    size = _parse_dimension(parts[-1])
    inner = ":".join(parts[1:-1])
    if inner == BFLOAT16:
        item = pa.field("item", pa.binary(2), metadata={EXTENSION_NAME_KEY: BFLOAT16, EXTENSION_METADATA_KEY: ""})
    else:
        item = pa.field("item", _leaf_type(inner))
    return pa.list_(item, size)


def _parse_fixed_size_binary(logical: str) -> pa.DataType:
    parts = logical.split(":")
    if len(parts) != 2:
        raise ValueError("expected fixed_size_binary:{width}")
    return pa.binary(_parse_size(parts[1]))


def _parse_dictionary(logical: str) -> pa.DataType:
    parts = logical.split(":")
    if len(parts) != 4:  # dict:{value}:{index}:{ordered}; the reference ignores "ordered"
        raise ValueError("expected dict:{value}:{index}:false")
    return pa.dictionary(_leaf_type(parts[2]), _leaf_type(parts[1]))


def _parse_decimal(logical: str) -> pa.DataType:
    parts = logical.split(":")
    if len(parts) != 4 or parts[1] not in ("128", "256"):
        raise ValueError("expected decimal:{128|256}:{precision}:{scale}")
    make = pa.decimal128 if parts[1] == "128" else pa.decimal256
    return make(_parse_int(parts[2]), _parse_int(parts[3]))


def _parse_timestamp(logical: str) -> pa.DataType:
    parts = logical.split(":", 2)  # the zone may itself contain ':' ("+05:30")
    if len(parts) != 3 or parts[1] not in _UNITS:
        raise ValueError("expected timestamp:{s|ms|us|ns}:{zone or -}")
    return pa.timestamp(parts[1], None if parts[2] == "-" else parts[2])


_LEAF_PARSERS = {
    "fixed_size_list": _parse_fixed_size_list,
    "fixed_size_binary": _parse_fixed_size_binary,
    "dict": _parse_dictionary,
    "decimal": _parse_decimal,
    "timestamp": _parse_timestamp,
}


def _parse_int(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text):  # int() would also take " 1", "1_0", "١"
        raise ValueError(f"{text!r} is not an integer")
    return int(text)


# Arrow keeps list sizes and byte widths in an int32.
_MAX_SIZE = 2**31 - 1


def _parse_dimension(text: str) -> int:
    """A fixed_size_list dimension: positive, as the reference requires (it neither writes nor
    reads a dimension of 0; pyarrow dies of SIGFPE on some arrays of one)."""
    value = _parse_size(text)
    if value == 0:
        raise ValueError("a fixed_size_list dimension must be a positive integer, not 0")
    return value


def _parse_size(text: str) -> int:
    """A list size or byte width: unsigned, as the reference parses them, and within Arrow's int32.

    pyarrow takes a negative size as "no size" (``pa.list_(t, -1)`` is a plain list) and builds
    ``fixed_size_binary[-5]``, so a forged sign must never reach it.
    """
    value = _parse_int(text)
    if not 0 <= value <= _MAX_SIZE:
        raise ValueError(f"size {value} is outside [0, {_MAX_SIZE}]")
    return value


# --------------------------------------------------------------------------------------------
# Fields
