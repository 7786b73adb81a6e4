"""The type mapping between Spark SQL and Arrow/Lance, in both directions.

Reading (Lance → Spark), :func:`spark_type_for` maps a file's Arrow type:

==============================================  ====================================
Arrow type in the file                          Spark type
==============================================  ====================================
bool                                            boolean
int8 / int16 / int32 / int64                    tinyint / smallint / int / bigint
uint8 / uint16 / uint32                         smallint / int / bigint (widened)
uint64                                          decimal(20,0) (exact)
float16 / float32, float64                      float, double
decimal128/256 with precision <= 38             decimal(p,s)
string / large_string / string_view             string
binary / large_binary / binary_view / fsb       binary
date32 / date64                                 date
timestamp with a time zone                      timestamp (instant, microseconds)
timestamp without a time zone                   timestamp_ntz (microseconds)
time32 / time64                                 time(6)
duration                                        interval day to second
list / large_list / fixed_size_list             array (vectors arrive as arrays)
struct                                          struct
map                                             map
dictionary<K, V>                                V (decoded)
null                                            void
extension types                                 their storage type
==============================================  ====================================

Nanosecond timestamps, times and durations are truncated to microseconds, Spark's
precision. Anything else (unions, decimals wider than 38 digits, intervals of months)
raises :class:`~lancefile.UnsupportedTypeError` naming the column.

Writing (Spark → Lance), Spark hands the writer Arrow batches; every Spark type except
those in :data:`UNWRITABLE` is stored as that Arrow type (``timestamp`` as
``timestamp[us, tz=UTC]``, ``timestamp_ntz`` as ``timestamp[us]``, ``interval day to
second`` as ``duration[us]``, ``char``/``varchar`` as ``string``). A column named in the
``vectorColumns`` option (``emb=768``) is stored as ``fixed_size_list<T, 768>``, ``T``
being its element type (``float`` for ``array<float>``); it reads back as ``array<T>``.

Example::

    >>> import pyarrow as pa
    >>> spark_type_for(pa.list_(pa.float32(), 4), "emb").simpleString()
    'array<float>'
    >>> spark_type_for(pa.dictionary(pa.int32(), pa.string()), "cat").simpleString()
    'string'
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from ..format.version import DEFAULT_VERSION
from ..errors import ColumnNotFoundError, InvalidInputError, UnsupportedTypeError

__all__ = [
    "spark_type_for",
    "spark_schema_for",
    "target_arrow_schema",
    "conform_batch",
    "check_writable",
    "vector_target",
    "vector_types",
    "stored_schema",
    "to_vectors",
    "without_nullability",
]

MAX_SPARK_DECIMAL_PRECISION = 38

_SIMPLE = {
    pa.bool_(): T.BooleanType(),
    pa.int8(): T.ByteType(),
    pa.int16(): T.ShortType(),
    pa.int32(): T.IntegerType(),
    pa.int64(): T.LongType(),
    pa.uint8(): T.ShortType(),
    pa.uint16(): T.IntegerType(),
    pa.uint32(): T.LongType(),
    pa.uint64(): T.DecimalType(20, 0),
    pa.float16(): T.FloatType(),
    pa.float32(): T.FloatType(),
    pa.float64(): T.DoubleType(),
    pa.date32(): T.DateType(),
    pa.date64(): T.DateType(),
    pa.null(): T.NullType(),
}


def spark_type_for(typ: pa.DataType, column: str, nullable: bool = True) -> T.DataType:
    """The Spark type a Lance column of Arrow type ``typ`` is read as (see the module table).

    ``nullable``: whether the column itself may be null. The children of a struct that may be
    null are nullable in Spark whatever the file says: a null row has nulls in every child,
    and Spark's ``toArrow`` refuses those under a child declared NOT NULL."""
    if isinstance(typ, pa.ExtensionType):
        return spark_type_for(typ.storage_type, column, nullable)
    simple = _SIMPLE.get(typ)
    if simple is not None:
        return simple
    if pa.types.is_dictionary(typ):
        return spark_type_for(typ.value_type, column, nullable)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return T.StringType()
    if (pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_binary_view(typ)
            or pa.types.is_fixed_size_binary(typ)):
        return T.BinaryType()
    if pa.types.is_decimal(typ):
        if typ.precision > MAX_SPARK_DECIMAL_PRECISION:
            raise UnsupportedTypeError(
                f"column {column!r}: {typ} has more digits than Spark's decimal allows ({MAX_SPARK_DECIMAL_PRECISION})"
            )
        return T.DecimalType(typ.precision, typ.scale)
    if pa.types.is_timestamp(typ):
        return T.TimestampType() if typ.tz is not None else T.TimestampNTZType()
    if pa.types.is_time(typ):
        return T.TimeType(6)
    if pa.types.is_duration(typ):
        return T.DayTimeIntervalType(T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND)
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        item = typ.value_field
        return T.ArrayType(spark_type_for(item.type, f"{column}.{item.name}", item.nullable),
                           containsNull=item.nullable)
    if pa.types.is_struct(typ):
        kids = [typ.field(i) for i in range(typ.num_fields)]
        return T.StructType([
            T.StructField(f.name, spark_type_for(f.type, f"{column}.{f.name}", f.nullable or nullable),
                          nullable=f.nullable or nullable)
            for f in kids
        ])
    if pa.types.is_map(typ):
        return T.MapType(spark_type_for(typ.key_type, f"{column}.key", False),
                         spark_type_for(typ.item_type, f"{column}.value", typ.item_field.nullable),
                         valueContainsNull=typ.item_field.nullable)
    raise UnsupportedTypeError(f"column {column!r}: Arrow type {typ} has no Spark SQL equivalent")


def spark_schema_for(schema: pa.Schema) -> T.StructType:
    """The Spark schema of a Lance file's Arrow schema."""
    return T.StructType([T.StructField(f.name, spark_type_for(f.type, f.name, f.nullable), nullable=f.nullable)
                         for f in schema])


def target_arrow_schema(schema: T.StructType) -> pa.Schema:
    """The exact Arrow schema PySpark expects from a Python data source's ``read``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


def _lossy_time(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t)


def _contains(t: pa.DataType, pred) -> bool:
    if pred(t):
        return True
    if isinstance(t, pa.ExtensionType):
        return _contains(t.storage_type, pred)
    if pa.types.is_dictionary(t):
        return _contains(t.value_type, pred)
    return any(_contains(t.field(i).type, pred) for i in range(t.num_fields))


def conform_array(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` cast to ``target``: dictionaries decoded, vectors as lists, time truncated to µs."""
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if arr.type == target:
        return arr
    # Spark holds microseconds; nanosecond values are truncated as Spark's Parquet reader does.
    return arr.cast(target, safe=not _contains(arr.type, _lossy_time))


def conform_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """A batch whose schema equals ``target`` exactly (names, types, nullability)."""
    if batch.schema.equals(target):
        return batch
    arrays = [conform_array(batch.column(i), target.field(i).type) for i in range(batch.num_columns)]
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# -- writing ---------------------------------------------------------------------------

#: Spark types a Lance file cannot store, with the reason given to the user (maps: only before 2.2).
UNWRITABLE = {
    "MapType": "map columns need Lance file version 2.2 or later (option version='2.2', the default)",
    "YearMonthIntervalType": "Arrow has no type PySpark can hand over for year-month intervals",
    "CalendarIntervalType": "calendar intervals have no Arrow equivalent",
    "VariantType": "variant values have no Lance encoding yet",
    "GeographyType": "geography values have no Lance encoding yet",
    "GeometryType": "geometry values have no Lance encoding yet",
}


def _holds_maps(version: str) -> bool:
    from ..format.version import resolve_version

    grammar = resolve_version(version, for_write=False).grammar
    return grammar is not None and grammar.maps


def check_writable(schema: T.StructType, version: str = DEFAULT_VERSION.value) -> None:
    """Raise :class:`UnsupportedTypeError` naming the first column Lance cannot store."""

    def visit(dt: T.DataType, name: str) -> None:
        reason = UNWRITABLE.get(type(dt).__name__)
        if isinstance(dt, T.UserDefinedType):
            visit(dt.sqlType(), name)
            return
        if reason is not None and not (isinstance(dt, T.MapType) and _holds_maps(version)):
            raise UnsupportedTypeError(f"column {name!r} ({dt.simpleString()}): {reason}")
        if isinstance(dt, T.ArrayType):
            visit(dt.elementType, f"{name}.element")
        elif isinstance(dt, T.MapType):
            visit(dt.keyType, f"{name}.key")
            visit(dt.valueType, f"{name}.value")
        elif isinstance(dt, T.StructType):
            for f in dt.fields:
                visit(f.dataType, f"{name}.{f.name}")

    for f in schema.fields:
        visit(f.dataType, f.name)


def vector_target(field: T.StructField, dim: int) -> pa.DataType:
    """The ``fixed_size_list`` type a vector column (``array<float|double|...>``) is stored as."""
    from pyspark.sql.pandas.types import to_arrow_type

    if not isinstance(field.dataType, T.ArrayType) or not isinstance(field.dataType.elementType, T.NumericType):
        raise InvalidInputError(
            f"vector column {field.name!r} must be an array of numbers, not {field.dataType.simpleString()}"
        )
    if dim <= 0:
        raise InvalidInputError(f"vector column {field.name!r}: dimension must be positive, not {dim}")
    item = to_arrow_type(field.dataType.elementType)
    return pa.list_(pa.field("item", item, nullable=field.dataType.containsNull), dim)


def vector_types(schema: T.StructType, dims: dict[str, int]) -> dict[str, pa.DataType]:
    """The ``fixed_size_list`` type of each column of the ``vectorColumns`` option."""
    for name in dims:
        if name not in schema.names:
            raise ColumnNotFoundError(f"option vectorColumns: column {name!r} is not in the data ({', '.join(schema.names)})")
    return {name: vector_target(schema[name], dim) for name, dim in dims.items()}


def _set_metadata(typ: pa.DataType, path: list[str], md: dict[str, str], column: str) -> pa.DataType:
    if not pa.types.is_struct(typ):
        raise ColumnNotFoundError(f"option lance-encoding:*: column {column!r} is not in the data")
    idx = typ.get_field_index(path[0])
    if idx < 0:
        raise ColumnNotFoundError(f"option lance-encoding:*: column {column!r} is not in the data")
    fields = [typ.field(i) for i in range(typ.num_fields)]
    f = fields[idx]
    if len(path) == 1:
        fields[idx] = f.with_metadata({**(f.metadata or {}), **{k.encode(): v.encode() for k, v in md.items()}})
    else:
        fields[idx] = f.with_type(_set_metadata(f.type, path[1:], md, column))
    return pa.struct(fields)


def stored_schema(schema: pa.Schema, vectors: dict[str, pa.DataType],
                  field_metadata: dict[str, dict[str, str]]) -> pa.Schema:
    """The Arrow schema written for Spark's ``schema``: vectors as fixed_size_list, field metadata
    (``lance-encoding:*`` options, ``column`` or ``struct.child`` -> {key: value}) applied."""
    fields = [f.with_type(pa.list_(f.type.value_field.with_name("item"), vectors[f.name].list_size))
              if f.name in vectors and pa.types.is_list(f.type) else f for f in schema]
    struct = pa.struct(fields)
    for column, md in field_metadata.items():
        struct = _set_metadata(struct, column.split("."), md, column)
    return pa.schema([struct.field(i) for i in range(struct.num_fields)])


def to_vectors(arr: pa.Array, typ: pa.DataType, name: str) -> pa.Array:
    """A list array as ``fixed_size_list`` type ``typ``; a row of another length is an error."""
    lengths = pc.list_value_length(arr)
    bad = pc.and_(pc.is_valid(lengths), pc.not_equal(lengths, typ.list_size))
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        raise InvalidInputError(
            f"vector column {name!r}: a row has {lengths[row].as_py()} values, expected {typ.list_size} "
            f"(option vectorColumns, or the dataset's vector size)"
        )
    if not arr.null_count:
        return arr.cast(typ)
    # A null row holds no values in a list but list_size of them in a fixed_size_list: pyarrow's
    # cast reads them past the end of the values (garbage, or a crash of the worker). The null
    # rows get zeros, and stay null.
    size = typ.list_size
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    values = arr.values
    starts = np.where(valid, arr.offsets.to_numpy()[:-1], len(values))
    padded = pa.concat_arrays([values, pa.array(np.zeros(size), values.type)])
    picked = padded.take(pa.array((starts[:, None] + np.arange(size)).ravel()))
    return pa.FixedSizeListArray.from_arrays(picked, type=typ, mask=pa.array(~valid))


def without_nullability(dt: T.DataType) -> T.DataType:
    """``dt`` with every nested field nullable, and char/varchar as string (how Spark hands them over)."""
    if isinstance(dt, (T.CharType, T.VarcharType)):
        return T.StringType()
    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(f.name, without_nullability(f.dataType)) for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(without_nullability(dt.elementType))
    if isinstance(dt, T.MapType):
        return T.MapType(without_nullability(dt.keyType), without_nullability(dt.valueType))
    return dt
