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
import pyarrow.compute as pc

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


def has_required_children(schema: pa.Schema) -> bool:
    """Whether any field below the top level of ``schema`` is declared non-nullable (then
    :func:`null_in_required_child` looks at each batch)."""
    def below(t: pa.DataType) -> bool:
        if pa.types.is_struct(t) or pa.types.is_map(t) or _is_list(t):
            kids = [t.field(i) for i in range(t.num_fields)] if pa.types.is_struct(t) else \
                [t.key_field, t.item_field] if pa.types.is_map(t) else [t.value_field]
            return any(not k.nullable or below(k.type) for k in kids)
        return False

    return any(below(f.type) for f in schema)


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def null_in_required_child(arr, t: pa.DataType, path: str) -> str | None:
    """The dotted path of a non-nullable field below ``arr`` (of type ``t``) that holds a null
    where its parent holds a value, or None. Arrow does not check this (a cast to a
    non-nullable item keeps the nulls), and pylance refuses such files: "Non-nullable field".

    Example::

        >>> t = pa.list_(pa.field("item", pa.float32(), nullable=False))
        >>> null_in_required_child(pa.array([[1.0, None]], pa.list_(pa.float32())).cast(t), t, "v")
        'v.item'
        >>> null_in_required_child(pa.array([[1.0], None]).cast(t), t, "v") is None
        True
    """
    if isinstance(arr, pa.ChunkedArray):
        for chunk in arr.chunks:
            found = null_in_required_child(chunk, t, path)
            if found is not None:
                return found
        return None
    if pa.types.is_struct(t):
        parent_valid = arr.is_valid() if arr.null_count else None
        for i in range(t.num_fields):
            f, child = t.field(i), arr.field(i)
            where = f"{path}.{f.name}"
            if not f.nullable and child.null_count:
                bad = child.is_null() if parent_valid is None else pc.and_(child.is_null(), parent_valid)
                if pc.any(bad).as_py():
                    return where
            found = null_in_required_child(child, f.type, where)
            if found is not None:
                return found
        return None
    if pa.types.is_map(t):
        keys, items = arr.keys, arr.items  # (a null map row holds no entries)
        for f, child in ((t.key_field, keys), (t.item_field, items)):
            if not f.nullable and child.null_count:
                return f"{path}.{f.name}"
            found = null_in_required_child(child, f.type, f"{path}.{f.name}")
            if found is not None:
                return found
        return None
    if _is_list(t):
        values = arr.flatten()  # the values of the valid rows (of the slice)
        f = t.value_field
        # (a fixed_size_list's non-nullable items may hold nulls: pylance writes and reads them)
        if not f.nullable and values.null_count and not pa.types.is_fixed_size_list(t):
            return f"{path}.{f.name}"
        return null_in_required_child(values, f.type, f"{path}.{f.name}")
    return None
