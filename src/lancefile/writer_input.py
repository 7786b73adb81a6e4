"""What a :class:`~lancefile.LanceFileWriter` makes of the caller's data before encoding it:
schema metadata as text, a warning for types stored as others (views), the bytes a value of a
plain type takes, and a table column's chunks joined.

Example::

    >>> import pyarrow as pa
    >>> _value_bytes(pa.int32()), _value_bytes(pa.bool_()), _metadata_text(b"v", "value")
    (4, 0, 'v')
"""

from __future__ import annotations

import warnings

import pyarrow as pa

from .errors import InvalidInputError, StorageTypeWarning

__all__: list[str] = []  # private to the writer


def _metadata_text(value, what: str) -> str:
    """Schema metadata is text: ``str`` as is, ``bytes`` if UTF-8 (what the reference accepts)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInputError(f"schema metadata {what} is not valid UTF-8: {bytes(value)!r}") from None
    raise InvalidInputError(f"schema metadata {what} must be str (or UTF-8 bytes), not {type(value).__name__}")


_VIEW_TYPES = {pa.string_view(): "string", pa.binary_view(): "binary"}


def _warn_stored_types(schema: pa.Schema) -> None:
    """Say so when a type is stored as another one, as the reference does (views become plain types)."""
    def views(t: pa.DataType):
        if isinstance(t, pa.BaseExtensionType):  # (not hashed: a Python extension type may not be)
            return
        if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
            yield t
        elif pa.types.is_dictionary(t):
            yield from views(t.value_type)
        else:
            for i in range(t.num_fields):
                yield from views(t.field(i).type)

    for f in schema:
        for t in views(f.type):
            warnings.warn(f"column {f.name!r}: {t} values are stored as {_VIEW_TYPES[t]} (Lance has no view types, "
                          f"as in the reference) and read back as {_VIEW_TYPES[t]}", StorageTypeWarning, stacklevel=4)
            break


def _value_bytes(t: pa.DataType) -> int:
    """Bytes a value for a type held in one buffer of whole-byte values (0 for the others):
    an array of it without a validity buffer takes ``len * that`` bytes, as Arrow's nbytes says."""
    if pa.types.is_boolean(t) or not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)):
        return 0
    try:
        bits = t.bit_width
    except ValueError:
        return 0
    return bits // 8 if bits % 8 == 0 else 0


def _has_extension(t: pa.DataType) -> bool:
    if isinstance(t, pa.BaseExtensionType):
        return True
    if pa.types.is_dictionary(t):
        return _has_extension(t.value_type)
    return any(_has_extension(t.field(i).type) for i in range(t.num_fields))


def _combined(column: pa.ChunkedArray) -> pa.Array:
    """A table column's chunks as one array: ``concat_arrays`` (a quarter of ``combine_chunks``'s
    time on pyarrow 26 for a wide table's 24 chunks of 1,048 floats; it unifies differing
    dictionaries too), ``combine_chunks`` for no chunks (which ``concat_arrays`` refuses)."""
    return pa.concat_arrays(column.chunks) if column.num_chunks else column.combine_chunks()
