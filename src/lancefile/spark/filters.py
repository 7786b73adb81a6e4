"""Exact evaluation of Spark's pushed filters on Arrow record batches.

Spark drops a filter it has pushed to a source from its own plan, so what the source
accepts it must apply with Spark's exact semantics; whatever :func:`accepts` declines
goes back to Spark. The semantics kept here:

* SQL three-valued logic: a comparison with a null is unknown and the row is dropped,
  ``NOT unknown`` is unknown; ``<=>`` (``EqualNullSafe``) is never unknown.
* Floating point: Spark orders ``NaN`` above every other value and equal to itself
  (IEEE says neither), and ``-0.0 = 0.0``.
* Strings compare by their UTF-8 bytes (Spark's default ``UTF8_BINARY`` collation);
  ``LIKE 'abc%'``, ``'%abc'`` and ``'%abc%'`` are byte-wise prefix, suffix and substring tests.

Timestamps compare as instants (Spark hands an aware datetime). Filters on columns of
other types (nested values, intervals...) are declined: Spark still applies them, so
answers stay exact. (Spark 4.3 pushes no filter on ``timestamp_ntz`` or binary columns.)

Example::

    >>> import pyarrow as pa
    >>> from pyspark.sql.datasource import GreaterThan, Not, EqualTo
    >>> b = pa.record_batch({"x": pa.array([1.0, float("nan"), None, 3.0])})
    >>> evaluate([GreaterThan(("x",), 2.0)], b).column("x").to_pylist()
    [nan, 3.0]
    >>> evaluate([Not(EqualTo(("x",), 1.0))], b).num_rows
    2
"""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import datasource as D
from pyspark.sql import types as T

from ..encodings.arrowutil import filter_batch
from ..sqlliterals import both_zeros

__all__ = ["accepts", "evaluate", "mask", "pruning_expression"]

_COMPARISONS = (D.EqualTo, D.EqualNullSafe, D.GreaterThan, D.GreaterThanOrEqual, D.LessThan, D.LessThanOrEqual)
_STRING_OPS = (D.StringStartsWith, D.StringEndsWith, D.StringContains)

# Spark types whose literals and Arrow values compare exactly, with the Python types
# Spark uses for their literals.
_LITERALS: dict[type, tuple[type, ...]] = {
    T.BooleanType: (bool,),
    T.ByteType: (int,),
    T.ShortType: (int,),
    T.IntegerType: (int,),
    T.LongType: (int,),
    T.FloatType: (int, float),
    T.DoubleType: (int, float),
    T.DecimalType: (int, decimal.Decimal),
    T.StringType: (str,),
    T.DateType: (datetime.date,),
    T.TimestampType: (datetime.datetime,),  # Spark passes an aware datetime (UTC)
}


def _column_type(schema: T.StructType, path: tuple[str, ...]) -> T.DataType | None:
    dt: T.DataType = schema
    for name in path:
        if not isinstance(dt, T.StructType) or name not in dt.names:
            return None
        dt = dt[name].dataType
    return dt


def _literal_ok(dt: T.DataType, value) -> bool:
    kinds = _LITERALS.get(type(dt))
    if kinds is None or value is None:
        return False
    if isinstance(value, bool) and not isinstance(dt, T.BooleanType):
        return False
    if isinstance(dt, T.DateType) and isinstance(value, datetime.datetime):
        return False
    if isinstance(dt, T.TimestampType) and getattr(value, "tzinfo", None) is None:
        return False  # a naive instant would be ambiguous
    if isinstance(dt, T.StringType) and getattr(dt, "collation", "UTF8_BINARY") not in ("UTF8_BINARY", None):
        return False
    if not isinstance(value, kinds):
        return False
    if isinstance(value, float) or isinstance(dt, (T.FloatType, T.DoubleType)):
        return True
    from pyspark.sql.pandas.types import to_arrow_type

    try:  # the literal must be representable in the column's type (range, decimal scale)
        pa.scalar(value, type=to_arrow_type(dt, timezone="UTC"))
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return False
    return True


def accepts(f: D.Filter, schema: T.StructType) -> bool:
    """Whether :func:`evaluate` applies ``f`` exactly on batches of ``schema``.

    Never raises: a filter it cannot judge is declined and left to Spark.
    """
    try:
        return _accepts(f, schema)
    except Exception:  # noqa: BLE001 - declining is always safe
        return False


def _accepts(f: D.Filter, schema: T.StructType) -> bool:
    if isinstance(f, D.Not):
        return _accepts(f.child, schema)
    dt = _column_type(schema, f.attribute)
    if dt is None:
        return False
    if isinstance(f, (D.IsNull, D.IsNotNull)):
        return True
    if isinstance(f, _STRING_OPS):
        return isinstance(dt, T.StringType) and _literal_ok(dt, f.value)
    if isinstance(f, D.In):
        return len(f.value) > 0 and all(v is None or _literal_ok(dt, v) for v in f.value)
    if isinstance(f, _COMPARISONS):
        return _literal_ok(dt, f.value)
    return False


def _column(batch: pa.RecordBatch, path: tuple[str, ...]) -> pa.Array:
    arr = batch.column(batch.schema.get_field_index(path[0]))
    for name in path[1:]:
        # a null struct makes its children null, as in Spark
        arr = pc.struct_field(arr, name)
    return arr


def _is_float(arr: pa.Array) -> bool:
    return pa.types.is_floating(arr.type)


def _nan(arr: pa.Array) -> pa.Array:
    return pc.is_nan(arr)


def _compare(f: D.Filter, arr: pa.Array) -> pa.Array:
    value = f.value
    if isinstance(f, D.EqualNullSafe):
        inner = _compare(D.EqualTo(f.attribute, value), arr)
        return pc.fill_null(inner, False)
    if _is_float(arr):
        return _float_compare(f, arr, float(value))
    lit = pa.scalar(value, type=arr.type)
    if isinstance(f, D.EqualTo):
        return pc.equal(arr, lit)
    if isinstance(f, D.GreaterThan):
        return pc.greater(arr, lit)
    if isinstance(f, D.GreaterThanOrEqual):
        return pc.greater_equal(arr, lit)
    if isinstance(f, D.LessThan):
        return pc.less(arr, lit)
    return pc.less_equal(arr, lit)


def _with_nulls(arr: pa.Array, value: bool) -> pa.Array:
    """``value`` on every row, unknown where ``arr`` is null."""
    return pc.if_else(pc.is_null(arr), pa.scalar(None, pa.bool_()), value)


def _float_compare(f: D.Filter, arr: pa.Array, value: float) -> pa.Array:
    """Comparisons in Spark's float order: NaN is the largest value and equals itself."""
    col_nan = _nan(arr)
    if value != value:  # literal NaN
        if isinstance(f, D.EqualTo) or isinstance(f, D.GreaterThanOrEqual):
            return col_nan
        if isinstance(f, D.GreaterThan):
            return _with_nulls(arr, False)
        if isinstance(f, D.LessThan):
            return pc.invert(col_nan)
        return _with_nulls(arr, True)  # <= NaN: every non-null value
    lit = pa.scalar(value, type=arr.type)
    if isinstance(f, D.EqualTo):
        return pc.equal(arr, lit)  # NaN = x is false already
    if isinstance(f, D.GreaterThan):
        return pc.or_(pc.greater(arr, lit), col_nan)
    if isinstance(f, D.GreaterThanOrEqual):
        return pc.or_(pc.greater_equal(arr, lit), col_nan)
    if isinstance(f, D.LessThan):
        return pc.less(arr, lit)  # NaN < x is false already
    return pc.less_equal(arr, lit)


def _in(f: D.In, arr: pa.Array) -> pa.Array:
    values = [v for v in f.value if v is not None]
    has_null = len(values) < len(f.value)
    if _is_float(arr):
        # is_in tells -0.0 from 0.0 by their bits; Spark does not: a zero stands for both
        found = pc.is_in(arr, value_set=both_zeros(pa.array([v for v in values if v == v], type=arr.type)))
        if any(v != v for v in values):
            found = pc.or_(found, _nan(arr))
    else:
        found = pc.is_in(arr, value_set=pa.array(values, type=arr.type))
    found = pc.if_else(pc.is_null(arr), pa.scalar(None, pa.bool_()), found)
    if has_null:
        # x IN (..., NULL) is true when found, else unknown
        found = pc.if_else(found, True, pa.scalar(None, pa.bool_()))
    return found


def _string(f: D.Filter, arr: pa.Array) -> pa.Array:
    pattern = f.value
    if isinstance(f, D.StringStartsWith):
        return pc.starts_with(arr, pattern)
    if isinstance(f, D.StringEndsWith):
        return pc.ends_with(arr, pattern)
    return pc.match_substring(arr, pattern)


def mask(f: D.Filter, batch: pa.RecordBatch) -> pa.Array:
    """The three-valued truth of ``f`` on each row of ``batch`` (null = unknown)."""
    if isinstance(f, D.Not):
        return pc.invert(mask(f.child, batch))
    arr = _column(batch, f.attribute)
    if isinstance(f, D.IsNull):
        return pc.is_null(arr)
    if isinstance(f, D.IsNotNull):
        return pc.is_valid(arr)
    if isinstance(f, _STRING_OPS):
        return _string(f, arr)
    if isinstance(f, D.In):
        return _in(f, arr)
    return _compare(f, arr)


def evaluate(filters, batch: pa.RecordBatch) -> pa.RecordBatch:
    """The rows of ``batch`` for which every filter is true (unknown drops the row)."""
    if not filters or batch.num_rows == 0:
        return batch
    keep = None
    for f in filters:
        m = mask(f, batch)
        keep = m if keep is None else pc.and_kleene(keep, m)
    # filter() drops rows whose mask is null by default, as WHERE does
    return filter_batch(batch, keep)


# -- zone pruning -----------------------------------------------------------------------------

def pruning_expression(filters, schema: T.StructType) -> pc.Expression | None:
    """An Arrow expression true on every row where all ``filters`` are true in Spark's semantics.

    Used only to skip zones and files by their statistics (:meth:`LanceFileReader.matching_ranges`);
    the filters themselves are still applied to the rows read. Filters it cannot translate are
    left out (the AND of the rest is still true wherever all are), and under NOT only exact
    translations are used, so negation never turns a superset into a subset. None: nothing to prune by.
    """
    parts = [e for e in (_translate(f, schema, negated=False) for f in filters) if e is not None]
    if not parts:
        return None
    out = parts[0]
    for e in parts[1:]:
        out = out & e
    return out


def _translate(f: D.Filter, schema: T.StructType, negated: bool) -> pc.Expression | None:
    try:
        if isinstance(f, D.Not):
            inner = _translate(f.child, schema, not negated)
            return None if inner is None else ~inner
        dt = _column_type(schema, f.attribute)
        if dt is None or not _accepts(f, schema):
            return None
        col = pc.field(*f.attribute)
        if isinstance(f, D.IsNull):
            return col.is_null()
        if isinstance(f, D.IsNotNull):
            return col.is_valid()
        floating = isinstance(dt, (T.FloatType, T.DoubleType))
        if isinstance(f, D.StringStartsWith):
            return _prefix_range(col, f.value)
        if isinstance(f, _STRING_OPS):
            return None
        if isinstance(f, D.In):
            values = [v for v in f.value if v is not None]
            if len(values) < len(f.value) and negated:
                return None  # NOT (x IN (.., NULL)) is unknown where x is not found, not true
            if floating:
                nan = any(v != v for v in values)
                numbers = [float(v) for v in values if v == v]  # a zero stands for both zeros, as in _in
                e = col.isin(both_zeros(pa.array(numbers, pa.float64()))) if numbers else None
                if nan:
                    e = col.is_nan() if e is None else (e | col.is_nan())
                return e
            return col.isin(values)
        if isinstance(f, D.EqualNullSafe):
            if negated or f.value is None:
                return None
            f = D.EqualTo(f.attribute, f.value)
        value = f.value
        if floating:
            value = float(value)
            if value != value:
                return None
        lit = pa.scalar(value)
        cmp = {D.EqualTo: col == lit, D.GreaterThan: col > lit, D.GreaterThanOrEqual: col >= lit,
               D.LessThan: col < lit, D.LessThanOrEqual: col <= lit}[type(f)]
        if floating and isinstance(f, (D.GreaterThan, D.GreaterThanOrEqual)):
            cmp = cmp | col.is_nan()  # Spark orders NaN above every number
        return cmp
    except Exception:  # noqa: BLE001 - no pruning is always safe
        return None


def _prefix_range(col: pc.Expression, prefix: str) -> pc.Expression | None:
    """``prefix <= col < next(prefix)``: exactly the strings starting with ``prefix`` (code point order)."""
    if not prefix:
        return col.is_valid()
    chars = list(prefix)
    while chars:
        c = ord(chars[-1]) + 1
        if 0xD800 <= c <= 0xDFFF:
            c = 0xE000
        if c <= 0x10FFFF:
            return (col >= prefix) & (col < "".join(chars[:-1]) + chr(c))
        chars.pop()
    return col >= prefix
