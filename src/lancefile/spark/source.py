"""The ``lance`` data source for PySpark's Python Data Source API.

:class:`LanceDataSource` plans reads and writes on the driver; :class:`LanceReader`
(or :class:`LanceFilteringReader` when ``pushFilters`` is on) reads one split per task
and hands Spark Arrow batches cast exactly to its schema; :class:`LanceWriter` writes
each task's rows to files of its own, which become visible only when the driver commits.

How a write stays invisible until it is committed::

    <path>/_temporary/<job>/attempt-<task attempt>/part-00003-<job>-000.lance   (tasks)
    <path>/part-00003-<job>-000.lance                                           (commit)

Readers skip names starting with ``_`` or ``.``; commit moves the files that the winning
attempts reported and deletes ``_temporary/<job>`` with whatever failed, retried or
speculative attempts left; abort deletes it too. With ``overwrite`` the commit first
removes the Lance files already under ``<path>``.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from ..errors import ColumnNotFoundError, InvalidInputError, LanceIOError, SchemaMismatchError
from ..reader import LanceFileReader
from ..writer import LanceFileWriter
from . import SHORT_NAME
from . import filters as F
from .files import LanceFileInfo, common_schema, is_hidden, list_lance_files, local_path, scan_files
from .options import ReadOptions, WriteOptions
from .types import check_writable, conform_batch, spark_schema_for, target_arrow_schema, vector_target

__all__ = ["LanceDataSource", "LanceReader", "LanceFilteringReader", "LanceWriter", "LanceSplit", "LanceCommitMessage"]

STAGING_DIR = "_temporary"


# -- planning a read ------------------------------------------------------------------

class LanceSplit(InputPartition):
    """Rows ``[start, stop)`` of one file: the unit of work of one read task."""

    def __init__(self, path: str, start: int, stop: int) -> None:
        super().__init__((path, start, stop))
        self.path, self.start, self.stop = path, start, stop

    def __repr__(self) -> str:
        return f"LanceSplit({self.path!r}, {self.start}, {self.stop})"


def plan_splits(infos: list[LanceFileInfo], split_rows: int | None, split_bytes: int) -> list[LanceSplit]:
    """One split per file, or per ``split_rows`` rows (by default ~``split_bytes`` of file)."""
    splits = []
    for info in infos:
        if info.num_rows == 0:
            continue
        rows = split_rows or max(1, int(split_bytes * info.num_rows / max(info.num_bytes, 1)))
        for start in range(0, info.num_rows, rows):
            splits.append(LanceSplit(info.path, start, min(start + rows, info.num_rows)))
    return splits


def _struct_paths(want: T.DataType, have: T.DataType, prefix: str) -> list[str] | None:
    """Dotted child paths when ``want`` is a narrower struct of ``have``; None when whole."""
    if not (isinstance(want, T.StructType) and isinstance(have, T.StructType)) or want.names == have.names:
        return None
    out = []
    for f in want.fields:
        if f.name not in have.names:
            raise ColumnNotFoundError(f"column {prefix}.{f.name!r} of the given schema is not in the Lance files")
        sub = _struct_paths(f.dataType, have[f.name].dataType, f"{prefix}.{f.name}")
        out.extend(sub if sub is not None else [f"{prefix}.{f.name}"])
    return out


def _without_nullability(dt: T.DataType) -> T.DataType:
    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(f.name, _without_nullability(f.dataType)) for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_without_nullability(dt.elementType))
    if isinstance(dt, T.MapType):
        return T.MapType(_without_nullability(dt.keyType), _without_nullability(dt.valueType))
    return dt


def _projection(wanted: T.StructType, available: T.StructType) -> list[str]:
    """Column paths to read so the file gives ``wanted`` (a user schema or ``columns``)."""
    paths = []
    for f in wanted.fields:
        name = f.name
        if name not in available.names:  # Spark's names are case-insensitive
            folded = [n for n in available.names if n.lower() == name.lower()]
            if len(folded) != 1:
                raise ColumnNotFoundError(
                    f"column {name!r} is not in the Lance files; they have {', '.join(available.names)}"
                )
            name = folded[0]
        have = available[name].dataType
        sub = _struct_paths(f.dataType, have, name)
        if sub is None and _without_nullability(f.dataType) != _without_nullability(have):
            raise SchemaMismatchError(
                f"column {f.name!r}: the given schema says {f.dataType.simpleString()}, "
                f"the Lance files hold {have.simpleString()}"
            )
        paths.extend(sub if sub is not None else [name])
    return paths


def _resolve_name(name: str, schema: pa.Schema) -> str:
    """``name`` (dotted for nested fields) spelled as in the file; Spark matches names
    case-insensitively, and so do we when exactly one field matches."""
    if "." not in name and name in schema.names:
        return name
    parts, out = name.split("."), []
    fields = list(schema)
    for part in parts:
        exact = [f for f in fields if f.name == part]
        folded = exact or [f for f in fields if f.name.lower() == part.lower()]
        if len(folded) != 1:
            return name  # unknown or ambiguous: the reader reports it
        f = folded[0]
        out.append(f.name)
        t = f.type
        while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            fields = [t.value_field]
            t = None
        if t is not None:
            fields = [t.field(i) for i in range(t.num_fields)] if pa.types.is_struct(t) else []
    return ".".join(out)


def _columns(columns: tuple[str, ...], infos: list[LanceFileInfo]) -> list[str]:
    schema = infos[0].schema
    return [_resolve_name(c, schema) for c in columns]


def _columns_schema(columns: tuple[str, ...], infos: list[LanceFileInfo]) -> T.StructType:
    """The Spark schema of the ``columns`` option, as the reader projects it."""
    with LanceFileReader(infos[0].path, columns=_columns(columns, infos)) as r:
        return spark_schema_for(r.schema)


class LanceReader(DataSourceReader):
    """Reads splits of Lance files as Arrow batches in Spark's exact schema."""

    def __init__(self, options: ReadOptions, schema: T.StructType, infos: list[LanceFileInfo],
                 columns: list[str]) -> None:
        self.options = options
        self.schema = schema
        self.columns = columns
        self.splits = plan_splits(infos, options.split_rows, options.split_bytes)
        self.filters: list = []

    def partitions(self) -> list[InputPartition]:
        return list(self.splits)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, LanceSplit):  # Spark's placeholder when there is nothing to read
            return
        target = target_arrow_schema(self.schema)
        with LanceFileReader(partition.path, columns=self.columns) as reader:
            batches = reader.read_range(partition.start, partition.stop - partition.start,
                                        batch_size=self.options.batch_size)
            for batch in batches:
                batch = F.evaluate(self.filters, conform_batch(batch, target))
                if batch.num_rows:
                    yield batch


class LanceFilteringReader(LanceReader):
    """A :class:`LanceReader` that applies the filters it can evaluate exactly.

    Used when the ``pushFilters`` option is ``true``; Spark must then run with
    ``spark.sql.python.filterPushdown.enabled=true``.
    """

    def pushFilters(self, filters):
        for f in filters:
            if F.accepts(f, self.schema):
                self.filters.append(f)
            else:
                yield f


# -- writing --------------------------------------------------------------------------

@dataclass
class LanceCommitMessage(WriterCommitMessage):
    """What one task wrote: ``(staged path, final name, rows, Arrow bytes)`` per file."""

    files: list[tuple[str, str, int, int]]


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


class LanceWriter(DataSourceArrowWriter):
    """Writes one task's Arrow batches to staged Lance files (see the module docstring)."""

    def __init__(self, options: WriteOptions, schema: T.StructType, overwrite: bool, job_id: str) -> None:
        self.options = options
        self.spark_schema = schema
        self.overwrite = overwrite
        self.job_id = job_id
        self.root = local_path(options.path)
        self.vectors = {name: vector_target(schema[name], dim) if name in schema.names else None
                        for name, dim in options.vector_columns.items()}
        for name, t in self.vectors.items():
            if t is None:
                raise ColumnNotFoundError(f"option vectorColumns: column {name!r} is not in the data ({', '.join(schema.names)})")

    @property
    def staging(self) -> str:
        return os.path.join(self.root, STAGING_DIR, self.job_id)

    # -- on the executors -------------------------------------------------------------
    def _lance_schema(self, schema: pa.Schema) -> pa.Schema:
        """The Arrow schema written: vectors as fixed_size_list, field metadata applied."""
        fields = [
            f.with_type(pa.list_(f.type.value_field.with_name("item"), self.vectors[f.name].list_size))
            if self.vectors.get(f.name) and pa.types.is_list(f.type) else f
            for f in schema
        ]
        struct = pa.struct(fields)
        for column, md in self.options.field_metadata.items():
            struct = _set_metadata(struct, column.split("."), md, column)
        return pa.schema([struct.field(i) for i in range(struct.num_fields)])

    def _prepare(self, batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
        arrays = list(batch.columns)
        for i, f in enumerate(schema):
            if self.vectors.get(f.name) and arrays[i].type != f.type:
                arrays[i] = _to_vectors(arrays[i], f.type, f.name)
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _writer(self, path: str, schema: pa.Schema) -> LanceFileWriter:
        return LanceFileWriter(path, schema, version=self.options.version, max_page_bytes=self.options.max_page_bytes)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> LanceCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx else 0
        attempt = ctx.taskAttemptId() if ctx else uuid.uuid4().hex[:8]
        staging = os.path.join(self.staging, f"attempt-{attempt}")
        try:
            # the driver made the job's directory; if it is gone the job was aborted
            os.mkdir(staging)
        except FileNotFoundError:
            raise LanceIOError(f"{self.staging} is gone: the write job was aborted") from None
        max_rows = self.options.max_rows_per_file
        max_bytes = self.options.max_bytes_per_file
        files: list[tuple[str, str, int, int]] = []
        writer: LanceFileWriter | None = None
        rows = nbytes = 0
        schema = None
        try:
            for batch in iterator:
                if schema is None:
                    schema = self._lance_schema(batch.schema)
                batch = self._prepare(batch, schema)
                row_bytes = max(1, batch.nbytes // max(batch.num_rows, 1))
                offset = 0
                while offset < batch.num_rows:
                    if writer is None:
                        name = f"part-{partition:05d}-{self.job_id}-{len(files):03d}.lance"
                        writer = self._writer(os.path.join(staging, name), schema)
                        rows = nbytes = 0
                    take = batch.num_rows - offset
                    if max_rows:
                        take = min(take, max_rows - rows)
                    if max_bytes:
                        take = min(take, max(1, (max_bytes - nbytes) // row_bytes))
                    piece = batch.slice(offset, take)
                    writer.write_batch(piece)
                    offset += take
                    rows += take
                    nbytes += take * row_bytes
                    if (max_rows and rows >= max_rows) or (max_bytes and nbytes >= max_bytes):
                        writer.close()
                        files.append((writer.path, os.path.basename(writer.path), rows, nbytes))
                        writer = None
            if writer is not None:
                writer.close()
                files.append((writer.path, os.path.basename(writer.path), rows, nbytes))
                writer = None
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        return LanceCommitMessage(files)

    # -- on the driver ----------------------------------------------------------------
    def commit(self, messages) -> None:
        if self.overwrite:
            for old in list_lance_files(self.root, must_exist=False):
                os.unlink(old)
        moved = 0
        for msg in messages:
            for staged, name, _rows, _bytes in (msg.files if msg is not None else []):
                os.replace(staged, os.path.join(self.root, name))
                moved += 1
        if moved == 0 and not list_lance_files(self.root, must_exist=False):
            self._write_empty()
        self._cleanup()

    def abort(self, messages) -> None:
        self._cleanup()

    def _write_empty(self) -> None:
        """An empty job still leaves one zero-row file, so the schema can be read back."""
        schema = self._lance_schema(target_arrow_schema(self.spark_schema))
        name = f"part-00000-{self.job_id}-000.lance"
        self._writer(os.path.join(self.root, name), schema).close()

    def _cleanup(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
        try:
            os.rmdir(os.path.join(self.root, STAGING_DIR))
        except OSError:
            pass  # another job is still writing, or it never existed


def _to_vectors(arr: pa.Array, typ: pa.DataType, name: str) -> pa.Array:
    lengths = pc.list_value_length(arr)
    bad = pc.and_(pc.is_valid(lengths), pc.not_equal(lengths, typ.list_size))
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        raise InvalidInputError(
            f"vector column {name!r}: a row has {lengths[row].as_py()} values, expected {typ.list_size} "
            f"(option vectorColumns)"
        )
    return arr.cast(typ)


# -- the data source ------------------------------------------------------------------

class LanceDataSource(DataSource):
    """``spark.read.format("lance")`` / ``df.write.format("lance")``: see :mod:`lancefile.spark`."""

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def __init__(self, options) -> None:
        super().__init__(options)
        self._infos: list[LanceFileInfo] | None = None

    def _scan(self) -> list[LanceFileInfo]:
        if self._infos is None:
            self._infos = scan_files(ReadOptions.parse(self.options).path)
        return self._infos

    def schema(self) -> T.StructType:
        opts = ReadOptions.parse(self.options)
        infos = self._scan()
        if opts.columns:
            return _columns_schema(opts.columns, infos)
        return spark_schema_for(common_schema(infos))

    def reader(self, schema: T.StructType) -> LanceReader:
        opts = ReadOptions.parse(self.options)
        infos = self._scan()
        available = spark_schema_for(common_schema(infos))
        if opts.columns and _without_nullability(schema) == _without_nullability(_columns_schema(opts.columns, infos)):
            columns = _columns(opts.columns, infos)  # may reach through lists, which a schema cannot say
        else:
            columns = _projection(schema, available)
        cls = LanceFilteringReader if opts.push_filters else LanceReader
        return cls(opts, schema, infos, columns)

    def writer(self, schema: T.StructType, overwrite: bool) -> LanceWriter:
        opts = WriteOptions.parse(self.options)
        check_writable(schema, opts.version)
        root = local_path(opts.path)
        if os.path.isfile(root):
            raise LanceIOError(f"cannot write to {opts.path}: it is a file; the lance source writes a directory of files")
        for f in schema.fields:  # what the file schema refuses, refused before any task starts
            if "." in f.name:
                raise InvalidInputError(
                    f"column {f.name!r}: Lance column names cannot contain '.' (it separates nested names); rename it"
                )
        writer = LanceWriter(opts, schema, overwrite, uuid.uuid4().hex[:12])
        os.makedirs(writer.staging)  # tasks stage their files in here
        return writer
