"""Which field-level layer reads and writes each file version.

The reader and writer never import a version's modules directly: they ask
:func:`codec_for` and use the three entry points of what it returns, so the 2.1/2.2
structural layer plugs in here without touching the container or the public API.

Example::

    >>> from lancefile.format.version import resolve_version
    >>> codec_for(resolve_version("2.0")).name
    '2.0'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import CorruptFileError, UnsupportedVersionError
from ..format.version import FileVersion, VersionInfo

__all__ = ["VersionCodec", "codec_for"]


@dataclass(frozen=True)
class VersionCodec:
    name: str
    # schema -> {field id: column index}
    assign_columns: Callable
    # (layout, field, columns, projection keep-tree) -> FieldReader, built once per file
    # reader; each read passes it a fresh page-cache dict: reader.read(selection, cache)
    build_reader: Callable
    # (field, columns, max_page_bytes) -> FieldEncoder
    build_encoder: Callable
    # (schema, columns) -> ColumnEncoding message per column
    column_encodings: Callable
    # how pages describe their encoding: the Any type URL and the message class
    page_encoding_url: str
    page_encoding_message: type
    # page encoding message -> a one-line summary (``mini-block(values=bitpack(8), ...)``)
    describe_page: Callable

    def open_schema(self, raw: bytes, path: str = "<file>") -> tuple:
        """``(LanceSchema, rows, column of each field, Arrow storage schema, Arrow schema)`` of
        a file's descriptor (global buffer 0) as this version lays it out, parsed once per
        distinct bytes and version: parsing 1,000 fields into Python objects is most of
        opening a wide file (~5 ms), and the files of a dataset, or a file opened again,
        share one parse. The objects are shared: never change them.

        Example::

            >>> from lancefile.format.version import resolve_version
            >>> codec = codec_for(resolve_version("2.2"))
            >>> a = codec.open_schema(bytes.fromhex("0a00"))
            >>> a is codec.open_schema(bytes.fromhex("0a00")), a[1]
            (True, 0)
        """
        key = (bytes(raw), self.name)
        got = _SCHEMAS.get(key)
        if got is None:
            from ..format.schema import parse_descriptor

            schema, rows = parse_descriptor(raw, path=path)
            storage = schema.to_arrow_storage()
            try:
                arrow = schema.to_arrow(storage)
            except (ValueError, TypeError) as exc:  # ArrowInvalid: extension metadata its type cannot hold
                raise CorruptFileError(f"{path}: the schema's extension metadata does not fit its fields: {exc}") from None
            got = (schema, rows, self.assign_columns(schema), storage, arrow)
            if len(_SCHEMAS) >= _MAX_SCHEMAS:
                _SCHEMAS.clear()
            _SCHEMAS[key] = got
        return got


# Parsed schemas by their bytes and version (VersionCodec.open_schema). Small: a 1,000-column
# schema's objects take a few MB. Never mutated once made.
_SCHEMAS: dict = {}
_MAX_SCHEMAS = 8


def _v2_0(info: VersionInfo) -> VersionCodec:
    from .._proto import encodings_v2_0_pb2 as pb
    from ..format.container import ARRAY_ENCODING_URL
    from .v2_0.encoder import build_encoder, column_encodings
    from .v2_0.fields import assign_columns, build_reader

    from .v2_0.summary import describe_array

    return VersionCodec("2.0", assign_columns, build_reader, build_encoder, column_encodings,
                        ARRAY_ENCODING_URL, pb.ArrayEncoding, describe_array)


def _structural(info: VersionInfo) -> VersionCodec:
    from functools import partial

    from .._proto import encodings_v2_1_pb2 as pb
    from . import compressive, structural  # noqa: F401  (registers the codecs and page layouts)
    from .structural.encoder import build_encoder, column_encodings
    from .structural.fields import PAGE_LAYOUT_URL, assign_columns, build_reader
    from .structural.summary import describe_page

    return VersionCodec(info.name, assign_columns, build_reader, partial(build_encoder, grammar=info.grammar),
                        column_encodings, PAGE_LAYOUT_URL, pb.PageLayout, describe_page)


_CODECS: dict[FileVersion, Callable[[VersionInfo], VersionCodec]] = {
    FileVersion.V2_0: _v2_0,
    FileVersion.V2_1: _structural,
    FileVersion.V2_2: _structural,
}


def codec_for(version: VersionInfo) -> VersionCodec:
    make = _CODECS.get(version.version)
    if make is None:
        raise UnsupportedVersionError(f"Lance file version {version.name} has no encoding layer in lancefile yet")
    return make(version)
