"""The Lance schema: Arrow schema <-> ``lance.file.Schema`` and the FileDescriptor of global buffer 0.

A Lance file stores its schema as a flat, pre-order list of ``Field`` messages (nested fields
included) inside a ``FileDescriptor`` that also holds the row count. Each field carries a
*logical type* string (``"int64"``, ``"timestamp:us:UTC"``, ``"list.struct"``, ...), its id, its
parent's id (-1 at the top level), nullability and metadata::

    a: int32, ls: list<item: struct<x: string>>   (schema metadata {"m": "1"}, 1 row)

    FileDescriptor
      schema.fields  [0] name="a"    id=0 parent_id=-1 logical_type="int32"       encoding=PLAIN
                     [1] name="ls"   id=1 parent_id=-1 logical_type="list.struct" encoding=PLAIN
                     [2] name="item" id=2 parent_id=1  logical_type="struct"
                     [3] name="x"    id=3 parent_id=2  logical_type="string"      encoding=VAR_BINARY
      schema.metadata {"m": b"1"}
      length 1

In: a ``pyarrow.Schema`` (:meth:`LanceSchema.from_arrow`) or the bytes of global buffer 0
(:func:`parse_descriptor`). Out: a tree of :class:`LanceField`, the proto messages, and the Arrow
schema the reference reader (pylance 14.0.2) gives back for such a file.

Example::

    >>> import pyarrow as pa
    >>> schema = LanceSchema.from_arrow(pa.schema([("a", pa.int32()), ("ls", pa.list_(pa.string()))]))
    >>> [(f.name, f.id, f.parent_id, f.logical_type) for f in schema.walk()]
    [('a', 0, -1, 'int32'), ('ls', 1, -1, 'list'), ('item', 2, 1, 'string')]
    >>> back, rows = parse_descriptor(descriptor_bytes(schema, 3))
    >>> rows, back.to_arrow() == schema.to_arrow()
    (3, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field

import pyarrow as pa
from google.protobuf.message import DecodeError

from .._proto import file_pb2
from .cmetadata import exported_metadata_pairs
from ..errors import (
    ColumnNotFoundError,
    CorruptFileError,
    InvalidInputError,
    LanceError,
    UnsupportedTypeError,
)
from .logical_types import (  # noqa: F401  (re-exported: schema users import them from here)
    _has_child_fields,
    _LIST_TYPES,
    _logical_type,
    _storage,
    arrow_type_of,
    BFLOAT16,
    BLOB_KEY,
    CLUSTERING_KEY_POSITION_KEY,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    LANCE_JSON,
    logical_type_of,
    PACKED_KEYS,
    PRIMARY_KEY_KEY,
    PRIMARY_KEY_POSITION_KEY,
)
from .container import MAX_ROWS
from .version import FileVersion

__all__ = [
    "LanceField",
    "LanceSchema",
    "logical_type_of",
    "arrow_type_of",
    "descriptor_bytes",
    "parse_descriptor",
    "EXTENSION_NAME_KEY",
    "EXTENSION_METADATA_KEY",
    "BLOB_KEY",
    "PACKED_KEYS",
    "PRIMARY_KEY_KEY",
    "PRIMARY_KEY_POSITION_KEY",
    "CLUSTERING_KEY_POSITION_KEY",
]

# ids given to blob-v2 descriptor fields, which the reference writes without ids (-2, -3, ...)
BLOB_V2_CHILD_IDS = -2
# levels of nesting lancefile writes and reads: what pylance reads back (Arrow's C data interface
# imports 64 levels of ArrowSchema, the table's struct among them); the walks of the tree recurse
MAX_SCHEMA_DEPTH = 63
# Field numbers the reference (14.0.2) writes but our file.proto does not declare yet.
_PRIMARY_KEY_POSITION_FIELD = 13
_CLUSTERING_KEY_POSITION_FIELD = 15
_U32 = re.compile(r"\+?[0-9]+")  # what Rust's str::parse::<u32> accepts


@dataclass(eq=False)
class LanceField:
    """One field of a Lance schema, with its nested fields as ``children``.

    ``metadata`` holds the field metadata as stored (bytes values). ``arrow_type`` is the Arrow
    *storage* type the field reads back as, rebuilt from ``logical_type`` and the children;
    registered extension types are applied by :meth:`LanceSchema.to_arrow`.

    Example::

        >>> f = LanceSchema.from_arrow(pa.schema([("v", pa.list_(pa.float32(), 2))])).field("v")
        >>> f.logical_type, f.arrow_type, f.children
        ('fixed_size_list:float:2', FixedSizeListType(fixed_size_list<item: float>[2]), [])
        >>> f.to_arrow()
        pyarrow.Field<v: fixed_size_list<item: float>[2]>
    """

    name: str
    id: int
    parent_id: int
    logical_type: str
    nullable: bool
    metadata: dict[str, bytes]
    extension_name: str = ""
    children: list[LanceField] = dataclass_field(default_factory=list)

    @property
    def arrow_type(self) -> pa.DataType:
        """The Arrow storage type, rebuilt from ``logical_type`` and the children."""
        return arrow_type_of(self.logical_type, [child.to_arrow() for child in self.children])

    @property
    def arrow_metadata(self) -> dict[str, str]:
        """The metadata the reference reader attaches to the Arrow field (values as lossy UTF-8)."""
        out = {key: value.decode("utf-8", "replace") for key, value in self.metadata.items()}
        if self.extension_name:
            out[EXTENSION_NAME_KEY] = self.extension_name
        if self.logical_type == "json":
            out[EXTENSION_NAME_KEY] = LANCE_JSON
        return out

    def to_arrow(self) -> pa.Field:
        """This field as a ``pyarrow.Field`` (storage type, metadata included)."""
        if not self.children and not self.metadata and not self.extension_name and self.logical_type != "json":
            return pa.field(self.name, arrow_type_of(self.logical_type), self.nullable)  # the common leaf
        return pa.field(self.name, self.arrow_type, self.nullable, metadata=self.arrow_metadata or None)

    def walk(self) -> Iterator[LanceField]:
        """This field and all nested fields, in pre-order (self first)."""
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def is_packed_struct(self) -> bool:
        """A struct stored as one column (2.1+ rule: ``packed`` or ``lance-encoding:packed`` is "true", any case)."""
        return self.logical_type == "struct" and any(
            self.metadata.get(key, b"").decode("utf-8", "replace").lower() == "true" for key in PACKED_KEYS
        )

    def is_packed_struct_for(self, version: FileVersion) -> bool:
        """:attr:`is_packed_struct` under the rule of ``version``.

        The 2.0 writer also packs a struct that merely *has* ``lance-encoding:packed``, whatever
        its value (checked on pylance 14.0.2: ``"false"`` and ``""`` pack in 2.0, not in 2.1+).
        """
        if version is FileVersion.V2_0 and self.logical_type == "struct" and PACKED_KEYS[1] in self.metadata:
            return True
        return self.is_packed_struct

    @property
    def is_blob(self) -> bool:
        """A large_binary field marked ``lance-encoding:blob`` (any value), stored out of line."""
        return self.logical_type == "large_binary" and BLOB_KEY in self.metadata

    @property
    def unenforced_primary_key_position(self) -> int | None:
        """None unless the field is part of the unenforced primary key; 0 means "order by field id"."""
        position = _parse_u32(self.metadata.get(PRIMARY_KEY_POSITION_KEY))
        if position is not None:
            return position
        flag = self.metadata.get(PRIMARY_KEY_KEY)
        if flag is not None and flag.decode("utf-8", "replace").lower() in ("true", "1", "yes"):
            return 0
        return None

    @property
    def unenforced_clustering_key_position(self) -> int | None:
        """The position from ``lance-schema:unenforced-clustering-key:position``, if it is a u32."""
        return _parse_u32(self.metadata.get(CLUSTERING_KEY_POSITION_KEY))


def _parse_u32(value: bytes | None) -> int | None:
    if value is None:
        return None
    text = value.decode("utf-8", "replace")
    return int(text) if _U32.fullmatch(text) and int(text) < 2**32 else None


def _legacy_encoding(dt: pa.DataType) -> int:
    """The v1 ``encoding`` hint the reference still writes (checked on 14.0.2, maps included)."""
    if pa.types.is_dictionary(dt):
        return file_pb2.DICTIONARY
    if dt in (pa.string(), pa.binary(), pa.large_string(), pa.large_binary()):
        return file_pb2.VAR_BINARY
    if pa.types.is_null(dt) or pa.types.is_struct(dt):
        return file_pb2.NONE
    return file_pb2.PLAIN  # fixed-stride types, list offsets, maps


def _field_to_proto(f: LanceField) -> file_pb2.Field:
    pb = file_pb2.Field(
        name=f.name,
        id=f.id,
        parent_id=f.parent_id,
        logical_type=f.logical_type,
        nullable=f.nullable,
        encoding=_legacy_encoding(f.arrow_type),
        extension_name=f.extension_name,
        metadata=f.metadata,
        unenforced_primary_key=f.unenforced_primary_key_position is not None,
    )
    # Fields 13/15 are not in our file.proto yet; merging them in as wire bytes keeps them as
    # unknown fields, which protobuf serialises after the known ones (the reference's order too).
    extra = _varint_field(_PRIMARY_KEY_POSITION_FIELD, f.unenforced_primary_key_position or 0)
    extra += _varint_field(_CLUSTERING_KEY_POSITION_FIELD, f.unenforced_clustering_key_position or 0)
    if extra:
        pb.MergeFromString(extra)
    return pb


def _varint_field(number: int, value: int) -> bytes:
    """A proto3 varint field, or nothing for the default 0."""
    if not value:
        return b""
    out = bytearray([number << 3])  # wire type 0; numbers < 16 fit one tag byte
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field_from_proto(pb: file_pb2.Field) -> LanceField:
    return LanceField(
        name=pb.name,
        id=pb.id,
        parent_id=pb.parent_id,
        logical_type=pb.logical_type,
        nullable=pb.nullable,
        metadata=dict(pb.metadata) if len(pb.metadata) else {},
        extension_name=pb.extension_name,
    )


def _field_from_arrow(af: pa.Field, path: str) -> LanceField:
    dt, metadata = _storage_and_metadata(af, path)
    extension_name = metadata.get(EXTENSION_NAME_KEY, b"").decode()
    try:
        logical = _logical_type(dt, extension_name)
    except UnsupportedTypeError as exc:
        raise UnsupportedTypeError(f"field {path!r}: {exc}") from None
    return LanceField(
        name=af.name,
        id=-1,
        parent_id=-1,
        logical_type=logical,
        nullable=af.nullable,
        metadata=metadata,
        extension_name=extension_name,
        children=[_field_from_arrow(child, f"{path}.{child.name}") for child in _arrow_children(dt, logical)],
    )


def _arrow_children(dt: pa.DataType, logical: str) -> list[pa.Field]:
    if not _has_child_fields(logical):
        return []
    if logical == "struct":
        return list(dt)
    if logical == "map":
        return [dt.field(0)]  # the "entries" struct<key, value>
    return [dt.value_field]  # list, large_list, fixed_size_list<struct>


def _storage_and_metadata(af: pa.Field, path: str) -> tuple[pa.DataType, dict[str, bytes]]:
    """Storage type and field metadata as the reference sees them (extension keys added)."""
    metadata = _checked_metadata(af.metadata, f"field {path!r}")
    if isinstance(af.type, pa.BaseExtensionType):
        metadata.update(_extension_keys(af.type))
        return af.type.storage_type, metadata
    return af.type, metadata


def _checked_metadata(raw: dict[bytes, bytes] | None, where: str) -> dict[str, bytes]:
    """Arrow metadata as str -> bytes; the reference refuses keys or values that are not UTF-8."""
    out = {}
    for key, value in (raw or {}).items():
        try:
            value.decode("utf-8")
            out[key.decode("utf-8")] = value
        except UnicodeDecodeError:
            raise InvalidInputError(f"{where}: metadata {key!r} is not valid UTF-8") from None
    return out


def _extension_keys(dt: pa.BaseExtensionType) -> dict[str, bytes]:
    """``ARROW:extension:name`` / ``:metadata`` exactly as Arrow exports them to the reference.

    pyarrow has no public call for the serialized parameters of its built-in extension types
    (uuid, fixed_shape_tensor...), so read them from the type's C data interface export.
    """
    keys = {key.decode("utf-8", "replace"): value for key, value in exported_metadata_pairs(dt)}
    return {key: value for key, value in keys.items() if key in (EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)}


# --------------------------------------------------------------------------------------------
# Schemas


def _type_depth(t: pa.DataType) -> int:
    """Levels of nesting below ``t`` (0 for a plain type), counted without recursion."""
    deepest, stack = 0, [(t, 0)]
    while stack:
        t, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(t, pa.ExtensionType):
            t = t.storage_type
        kids = [t.field(i).type for i in range(t.num_fields)] if t.num_fields and not pa.types.is_dictionary(t) else []
        stack.extend((k, d + 1) for k in kids)
    return deepest


@dataclass(eq=False)
class LanceSchema:
    """A Lance schema: top-level :class:`LanceField` trees plus schema metadata (bytes values).

    Example::

        >>> s = LanceSchema.from_arrow(pa.schema([("st", pa.struct([("a", pa.int8())]))], metadata={"k": "v"}))
        >>> s.field("st.a").id, s.metadata
        (1, {'k': b'v'})
        >>> s.to_arrow()
        st: struct<a: int8>
          child 0, a: int8
        -- schema metadata --
        k: 'v'
    """

    fields: list[LanceField]
    metadata: dict[str, bytes] = dataclass_field(default_factory=dict)

    @classmethod
    def from_arrow(cls, schema: pa.Schema) -> LanceSchema:
        """Describe an Arrow schema as the reference writer would; ids are pre-order from 0.

        Raises :class:`UnsupportedTypeError` for types Lance cannot hold (naming the field) and
        :class:`InvalidInputError` for schemas the reference refuses (dotted or duplicate
        top-level names, non-UTF-8 metadata, bad primary keys).
        """
        for af in schema:
            if _type_depth(af.type) >= MAX_SCHEMA_DEPTH:
                raise UnsupportedTypeError(f"field {af.name!r} nests deeper than the {MAX_SCHEMA_DEPTH} levels "
                                           f"lancefile writes")
        out = cls(
            fields=[_field_from_arrow(af, af.name) for af in schema],
            metadata=_checked_metadata(schema.metadata, "schema"),
        )
        for index, f in enumerate(out.walk()):
            f.id = index
            for child in f.children:
                child.parent_id = index
        out._validate()
        return out

    @classmethod
    def from_proto(cls, pb: file_pb2.Schema, *, path: str = "<file>") -> LanceSchema:
        """Rebuild the tree from the flat field list; a broken tree raises :class:`CorruptFileError`.

        Each field hangs under the earlier field whose id is its ``parent_id`` (-1: top level).
        """
        by_id: dict[int, LanceField] = {}
        depth: dict[int, int] = {}
        top: list[LanceField] = []
        blob_v2: LanceField | None = None  # the blob-v2 struct whose id-less children follow it
        for pf in pb.fields:
            f = _field_from_proto(pf)
            if f.id == -1 and f.parent_id == -1 and blob_v2 is not None:
                # pylance 14.0.2 writes a blob-v2 struct's descriptor fields (kind, position,
                # size, blob_id, blob_uri) with id and parent id -1, right after the struct:
                # they belong to it by position. They get ids of their own below any real one.
                f.id, f.parent_id = BLOB_V2_CHILD_IDS - len(blob_v2.children), blob_v2.id
                blob_v2.children.append(f)
                continue
            blob_v2 = f if f.logical_type == "struct" and BLOB_KEY in f.metadata else None
            if f.id < 0 or f.id in by_id:
                raise CorruptFileError(f"{path}: schema field {f.name!r} has a negative or repeated id {f.id}")
            if f.parent_id == -1:
                top.append(f)
                depth[f.id] = 1
            elif f.parent_id in by_id:
                by_id[f.parent_id].children.append(f)
                depth[f.id] = depth[f.parent_id] + 1
                if depth[f.id] > MAX_SCHEMA_DEPTH:  # the walks over the tree recurse a level at a time
                    raise CorruptFileError(f"{path}: schema field {f.name!r} (id {f.id}) nests deeper than the "
                                           f"{MAX_SCHEMA_DEPTH} levels lancefile reads")
            else:
                raise CorruptFileError(
                    f"{path}: schema field {f.name!r} (id {f.id}) has parent_id {f.parent_id}, "
                    "which no earlier field has"
                )
            by_id[f.id] = f
        _check_unique_names(top, path, "the schema")  # nested duplicates are legal: the reference writes them
        out = cls(fields=top, metadata=dict(pb.metadata))
        try:  # building the Arrow schema checks every type; on failure find the innermost culprit
            out._storage = out.to_arrow_storage()
        except (LanceError, ValueError, pa.ArrowException) as exc:
            out._check_types(path)
            raise CorruptFileError(f"{path}: the schema does not describe valid Arrow types: {exc}") from None
        return out

    def _check_types(self, path: str) -> None:
        # Children before parents (reversed pre-order), so the error names the innermost culprit.
        for f in reversed(list(self.walk())):
            try:
                f.to_arrow()
            except (LanceError, ValueError, pa.ArrowException) as exc:
                raise CorruptFileError(f"{path}: schema field {f.name!r} (id {f.id}): {exc}") from None

    def _validate(self) -> None:
        seen: set[str] = set()
        for f in self.fields:
            if "." in f.name:
                raise InvalidInputError(
                    f"top-level field {f.name!r} cannot contain '.'; use a struct field for nesting"
                )
            if f.name in seen:
                raise InvalidInputError(f"duplicate top-level field name {f.name!r}")
            seen.add(f.name)
        for f, ancestors in _walk_with_ancestors(self.fields, ()):
            if f.unenforced_primary_key_position is not None:
                _check_primary_key(f, ancestors)

    def to_proto(self) -> file_pb2.Schema:
        """The ``lance.file.Schema`` message: every field in pre-order, then the metadata."""
        return file_pb2.Schema(fields=[_field_to_proto(f) for f in self.walk()], metadata=self.metadata)

    def to_arrow(self, storage: pa.Schema | None = None) -> pa.Schema:
        """The Arrow schema the reference reader gives for a file with this schema.

        Extension types registered with pyarrow (``arrow.uuid``, ``lance.bfloat16`` once
        ``lance`` is imported...) come back as extension types, as through the C data interface.
        ``storage``: this schema's :meth:`to_arrow_storage`, if already made.
        """
        schema = storage if storage is not None else self.to_arrow_storage()
        if not any(f.extension_name or f.logical_type == "json" or EXTENSION_NAME_KEY in f.metadata
                   or BFLOAT16 in f.logical_type for f in self.walk()):  # every source of extension metadata
            return schema
        # An IPC round trip is pyarrow's public way to turn ARROW:extension:* metadata into types.
        return pa.ipc.read_schema(schema.serialize())

    def to_arrow_storage(self) -> pa.Schema:
        """:meth:`to_arrow` with storage types instead of extension types (what readers decode)."""
        cached = self.__dict__.get("_storage")  # set by from_proto: a file's schema does not change
        if cached is not None:
            return cached
        metadata = {key: value.decode("utf-8", "replace") for key, value in self.metadata.items()}
        return pa.schema([f.to_arrow() for f in self.fields], metadata=metadata or None)

    def walk(self) -> Iterator[LanceField]:
        """Every field, nested ones included, in pre-order (the order of ids)."""
        for f in self.fields:
            yield from f.walk()

    def field(self, path: str) -> LanceField:
        """The field at a dotted path such as ``"a"``, ``"st.a"`` or ``"ls.item.x"``.

        Names that contain dots themselves (allowed below the top level) are matched whole first.
        """
        found = _find(self.fields, path)
        if found is None:
            names = ", ".join(repr(f.name) for f in self.fields) or "none"
            raise ColumnNotFoundError(f"no field {path!r} in the schema (top-level fields: {names})")
        return found


def _check_unique_names(fields: list[LanceField], path: str, where: str) -> None:
    """Top-level fields must have distinct names (the reference refuses others): a projection could not tell them apart."""
    if len(fields) > 1 and len({f.name for f in fields}) != len(fields):
        seen: set[str] = set()
        dup = next(f.name for f in fields if f.name in seen or seen.add(f.name))
        raise CorruptFileError(f"{path}: {where} has two fields named {dup!r}")


def _find(fields: list[LanceField], path: str) -> LanceField | None:
    for f in fields:
        if f.name == path:
            return f
    for f in fields:
        if path.startswith(f.name + "."):
            found = _find(f.children, path[len(f.name) + 1 :])
            if found is not None:
                return found
    return None


def _walk_with_ancestors(
    fields: list[LanceField], ancestors: tuple[LanceField, ...]
) -> Iterator[tuple[LanceField, tuple[LanceField, ...]]]:
    for f in fields:
        yield f, ancestors
        yield from _walk_with_ancestors(f.children, (*ancestors, f))


def _check_primary_key(f: LanceField, ancestors: tuple[LanceField, ...]) -> None:
    """The reference's rules: a leaf, non-nullable all the way up, and not inside a list."""
    if f.children:
        raise InvalidInputError(f"primary key field {f.name!r} must be a leaf, not {f.logical_type}")
    for node in (*ancestors, f):
        if node.nullable:
            raise InvalidInputError(
                f"primary key field {f.name!r} and all its ancestors must be non-nullable ({node.name!r} is nullable)"
            )
        if node.logical_type in _LIST_TYPES:
            raise InvalidInputError(f"primary key field {f.name!r} must not be inside a list ({node.name!r})")


# --------------------------------------------------------------------------------------------
# FileDescriptor (global buffer 0)


def descriptor_bytes(schema: LanceSchema, num_rows: int) -> bytes:
    """The serialized ``FileDescriptor`` for global buffer 0 (map entries sorted by key).

    Byte for byte what pylance writes for ``a: int8`` and 2 rows: ``0a 1a`` schema, ``0a 18``
    field, ``12 01 61`` name "a", (id 0 left out), ``20 ff..01`` parent_id -1, ``2a 04 int8``,
    ``30 01`` nullable, ``38 01`` encoding PLAIN, then ``10 02`` length 2.

    Example::

        >>> descriptor_bytes(LanceSchema.from_arrow(pa.schema([("a", pa.int8())])), 2).hex()
        '0a1a0a1812016120ffffffffffffffffff012a04696e7438300138011002'
    """
    if not 0 <= num_rows < 2**64:
        raise InvalidInputError(f"num_rows must fit in a u64, got {num_rows}")
    message = file_pb2.FileDescriptor(schema=schema.to_proto(), length=num_rows)
    return message.SerializeToString(deterministic=True)


def parse_descriptor(data: bytes, *, path: str = "<file>") -> tuple[LanceSchema, int]:
    """Parse global buffer 0 into ``(schema, num_rows)``; bad bytes raise :class:`CorruptFileError`.

    Example::

        >>> schema, rows = parse_descriptor(bytes.fromhex("0a00"))
        >>> schema.fields, rows
        ([], 0)
    """
    message = file_pb2.FileDescriptor()
    try:
        message.ParseFromString(bytes(data))
    except DecodeError as exc:
        raise CorruptFileError(f"{path}: global buffer 0 is not a Lance FileDescriptor ({exc})") from None
    if not message.HasField("schema"):
        raise CorruptFileError(f"{path}: the FileDescriptor in global buffer 0 has no schema")
    if message.length > MAX_ROWS:
        raise CorruptFileError(f"{path}: the FileDescriptor says {message.length} rows, more than {MAX_ROWS}")
    return LanceSchema.from_proto(message.schema, path=path), message.length
