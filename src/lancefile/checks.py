"""Checks of decoded data before it reaches the caller.

Decoders check every size, offset and count they read; what they build is then checked as a
whole, so a file whose bytes decode to something Arrow would misread (string values that are
not UTF-8, list offsets past their values, dictionary indices past the dictionary) or to nulls
in a field the schema declares non-nullable is refused as a :class:`~lancefile.CorruptFileError`
naming the file, field, columns, pages and rows, never handed over.

``pyarrow.Array.validate(full=True)`` does the work in Arrow's compiled code (UTF-8 with SIMD,
about 17 GB/s here), so the cost is a few percent of a scan of long strings and nothing for
fixed-width columns. 2.1+ readers check each leaf's values in full on the decoding threads
(strings gathered from a dictionary are checked once, as the dictionary) and leave only
Arrow's layout check of the assembled nested array to :func:`check_decoded` (``full=False``).

Example::

    >>> import pyarrow as pa
    >>> bad = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(b"\\0\\0\\0\\0\\1\\0\\0\\0"), pa.py_buffer(b"\\xff")])
    >>> try:
    ...     check_decoded(bad, pa.field("s", pa.string()), lambda: "f.lance: field 's'")
    ... except CorruptFileError as exc:
    ...     print(str(exc)[:45])
    f.lance: field 's': the decoded values are no
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from .errors import CorruptFileError

__all__ = ["check_decoded"]


def check_decoded(arr: pa.Array, field: pa.Field, where: Callable[[], str], full: bool = True) -> None:
    """Raise :class:`CorruptFileError` unless ``arr`` is valid Arrow data fitting ``field``.

    ``where`` makes the location part of the message (only called on failure). ``full=False``
    when the decoder checked every leaf's values in full already (2.1+ structural readers:
    :func:`lancefile.encodings.arrowutil.validate_values`): Arrow's layout check then remains.
    """
    try:
        arr.validate(full=full)
    except pa.ArrowException as exc:
        raise CorruptFileError(f"{where()}: the decoded values are not valid Arrow data ({exc})") from None
    bad = _null_in_non_nullable(field, arr, None)
    if bad is not None:
        raise CorruptFileError(f"{where()}: field {bad!r} is declared non-nullable but the file holds nulls in it")


def _has_non_nullable(field: pa.Field) -> bool:
    if not field.nullable:
        return True
    t = field.type
    if pa.types.is_struct(t):
        return any(_has_non_nullable(t.field(i)) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_non_nullable(t.value_field)
    return False  # maps: Arrow's own validation covers their non-nullable keys


def _null_in_non_nullable(field: pa.Field, arr: pa.Array, parent_valid) -> str | None:
    """The dotted name of a non-nullable field holding a null (under a valid parent), or None."""
    if not _has_non_nullable(field):
        return None
    if not field.nullable and arr.null_count:
        if parent_valid is None or pc.any(pc.and_(arr.is_null(), parent_valid)).as_py():
            return field.name
    t = arr.type
    if pa.types.is_struct(t):
        valid = arr.is_valid() if arr.null_count else None
        if parent_valid is not None:
            valid = parent_valid if valid is None else pc.and_(valid, parent_valid)
        for i in range(t.num_fields):
            bad = _null_in_non_nullable(t.field(i), arr.field(i), valid)
            if bad is not None:
                return f"{field.name}.{bad}"
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        bad = _null_in_non_nullable(t.value_field, arr.flatten(), None)
        if bad is not None:
            return f"{field.name}.{bad}"
    return None
