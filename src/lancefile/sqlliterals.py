"""SQL literals as Arrow values for :mod:`lancefile.sqlfilter`: of the type of the column they
are compared with (a string against a timestamp column, a number against a decimal one), and
IN lists as value sets Arrow's ``is_in`` matches the way SQL compares.

Example::

    >>> import pyarrow as pa
    >>> literal_array(["2024-01-31"], pa.date32()).to_pylist()
    [datetime.date(2024, 1, 31)]
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidInputError

__all__ = ["as_decimal", "both_zeros", "decimal_members", "literal_array", "takes_text"]


def as_decimal(value) -> _decimal.Decimal | None:
    """An integer or float literal as the exact decimal it is written as (``1.5``, ``2e3`` ->
    ``2000``), or None (not a number, NaN or infinite, or past 38 digits). Arrow compares a
    decimal column with a decimal of any scale; an int64 literal it would widen to 20 digits
    of the column's scale, past a decimal128(10, 1) column's precision ('Precision is not
    great enough'), where pylance compares them."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    d = _decimal.Decimal(value) if isinstance(value, int) else _decimal.Decimal(repr(value))
    if not d.is_finite():
        return None
    if d == d.to_integral_value():
        d = d.quantize(_decimal.Decimal(1))
    return d if len(d.as_tuple().digits) <= 38 else None


def decimal_members(values: list, target: pa.DataType) -> pa.Array:
    """An IN list of numbers against a decimal column, as values of the column's type: a number
    the column cannot hold exactly (more digits after the point than its scale, or too many) can
    equal none of its values and is left out."""
    kept = []
    for v in values:
        d = as_decimal(v)
        if d is None:
            raise InvalidInputError(f"bad SQL filter: {v!r} cannot be compared with a {target} column")
        try:
            kept.append(pa.array([d], target)[0])
        except (pa.ArrowException, ValueError, OverflowError):
            continue
    return pa.array([x.as_py() for x in kept], target)


def takes_text(t: pa.DataType) -> bool:
    return (pa.types.is_temporal(t) or pa.types.is_decimal(t)) and not pa.types.is_interval(t)


def literal_array(values: list, target: pa.DataType | None) -> pa.Array:
    """The literals of an IN list (or one literal) as an Arrow array, of ``target``'s type where
    they are text or times and the column temporal or decimal."""
    if target is not None and takes_text(target) and all(isinstance(v, (str, _dt.date)) for v in values):
        try:
            if all(isinstance(v, str) for v in values):
                return pa.array([v.strip() for v in values], pa.string()).cast(target)
            return pa.array(values).cast(target)
        except (pa.ArrowException, ValueError, TypeError) as exc:
            raise InvalidInputError(f"bad SQL filter: cannot read {values!r} as {target}: {exc}") from None
    if target is not None and pa.types.is_decimal(target) and all(isinstance(v, (int, float)) for v in values):
        return decimal_members(values, target)
    try:
        arr = pa.array(values)
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        raise InvalidInputError(f"bad SQL filter: the values {values!r} are not of one type: {exc}") from None
    if target is not None and arr.type != target and (pa.types.is_integer(target) or pa.types.is_floating(target)) \
            and (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        if pa.types.is_floating(arr.type) and pa.types.is_integer(target):
            return arr  # decimals against an integer column: compared as they are
        try:  # an IN list of the column's own type: Arrow does not widen a value set
            return arr.cast(target, safe=True)
        except (pa.ArrowException, ValueError):  # e.g. integers past an int8 column's range
            return arr.cast(pa.float64()) if pa.types.is_integer(arr.type) else arr
    return arr


def both_zeros(arr: pa.Array) -> pa.Array:
    """A float IN list holding a zero holds both zeros: SQL compares numbers (``-0.0 = 0.0``,
    as the ``=`` of the same filter does, and pylance's IN), where Arrow's ``is_in`` tells floats
    apart by their bits.

    Example::

        >>> both_zeros(pa.array([0.0, 2.5])).to_pylist()
        [0.0, 2.5, 0.0, -0.0]
    """
    if not pa.types.is_floating(arr.type) or not pc.any(pc.equal(arr, 0)).as_py():
        return arr
    zeros = np.array([0.0, -0.0], dtype=arr.type.to_pandas_dtype())
    return pa.concat_arrays([arr, pa.array(zeros, arr.type)])
