from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Encoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NONE: _ClassVar[Encoding]
    PLAIN: _ClassVar[Encoding]
    VAR_BINARY: _ClassVar[Encoding]
    DICTIONARY: _ClassVar[Encoding]
    RLE: _ClassVar[Encoding]
NONE: Encoding
PLAIN: Encoding
VAR_BINARY: Encoding
DICTIONARY: Encoding
RLE: Encoding

class FileDescriptor(_message.Message):
    __slots__ = ("schema", "length")
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    schema: Schema
    length: int
    def __init__(self, schema: _Optional[_Union[Schema, _Mapping]] = ..., length: _Optional[int] = ...) -> None: ...

class Schema(_message.Message):
    __slots__ = ("fields", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bytes
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bytes] = ...) -> None: ...
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    fields: _containers.RepeatedCompositeFieldContainer[Field]
    metadata: _containers.ScalarMap[str, bytes]
    def __init__(self, fields: _Optional[_Iterable[_Union[Field, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, bytes]] = ...) -> None: ...

class Dictionary(_message.Message):
    __slots__ = ("offset", "length")
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    offset: int
    length: int
    def __init__(self, offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class Field(_message.Message):
    __slots__ = ("type", "name", "id", "parent_id", "logical_type", "nullable", "encoding", "dictionary", "extension_name", "metadata", "unenforced_primary_key")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        PARENT: _ClassVar[Field.Type]
        REPEATED: _ClassVar[Field.Type]
        LEAF: _ClassVar[Field.Type]
    PARENT: Field.Type
    REPEATED: Field.Type
    LEAF: Field.Type
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bytes
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bytes] = ...) -> None: ...
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    LOGICAL_TYPE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    DICTIONARY_FIELD_NUMBER: _ClassVar[int]
    EXTENSION_NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    UNENFORCED_PRIMARY_KEY_FIELD_NUMBER: _ClassVar[int]
    type: Field.Type
    name: str
    id: int
    parent_id: int
    logical_type: str
    nullable: bool
    encoding: Encoding
    dictionary: Dictionary
    extension_name: str
    metadata: _containers.ScalarMap[str, bytes]
    unenforced_primary_key: bool
    def __init__(self, type: _Optional[_Union[Field.Type, str]] = ..., name: _Optional[str] = ..., id: _Optional[int] = ..., parent_id: _Optional[int] = ..., logical_type: _Optional[str] = ..., nullable: _Optional[bool] = ..., encoding: _Optional[_Union[Encoding, str]] = ..., dictionary: _Optional[_Union[Dictionary, _Mapping]] = ..., extension_name: _Optional[str] = ..., metadata: _Optional[_Mapping[str, bytes]] = ..., unenforced_primary_key: _Optional[bool] = ...) -> None: ...
