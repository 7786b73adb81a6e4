"""The ``lance`` data source for PySpark's Python Data Source API.

:class:`LanceDataSource` plans reads and writes on the driver; :class:`LanceReader`
(or :class:`LanceFilteringReader` when ``pushFilters`` is on) reads one split per task
and hands Spark Arrow batches cast exactly to its schema.

What a path is decides how it is read: a Lance dataset (a directory with ``_versions/``)
is read at one version, fragment by fragment, without its deleted rows
(:mod:`lancefile.spark.datasets`); anything else is a file, a directory of files or a glob
(:mod:`lancefile.spark.files`), read file by file. Paths may be object-store URIs
(``s3://``/``s3a://``...; storage options and ``fs.s3a.*`` settings: :mod:`lancefile.spark.remote`).

Writes go to a dataset (:class:`~lancefile.spark.datasets.LanceDatasetWriter`: one new
version per job) unless the ``format`` option says ``files`` or the path is an existing
directory of plain Lance files; then :class:`LanceFilesWriter` writes each task's rows to
files of its own, which become visible only when the driver commits::

    <path>/_temporary/<job>/attempt-<task attempt>/part-00003-<job>-000.lance   (tasks)
    <path>/part-00003-<job>-000.lance                                           (commit)

Readers skip names starting with ``_`` or ``.``; commit moves the files that the winning
attempts reported and deletes ``_temporary/<job>`` with whatever failed, retried or
speculative attempts left; abort deletes it too. With ``overwrite`` the commit first
removes the Lance files already under ``<path>``. On an object store (``format=files``
only; a dataset commit there is refused, see :mod:`lancefile.datasets.storage`) the tasks
write to ``<path>/_temporary/<job>/attempt-<id>/`` keys, and commit moves (copies) the
winners' objects into place.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa
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
from .datasets import DatasetScan, dataset_writer
from .files import (LanceFileInfo, common_schema, is_dataset, list_lance_files, local_path, resolve_name,
                    row_ranges, scan_files)
from .options import ReadOptions, WriteOptions
from .remote import is_remote_dataset, is_remote_path
from .staging import StagedJob
from .types import (check_writable, conform_batch, spark_schema_for, stored_schema, target_arrow_schema,
                    to_vectors, vector_types, without_nullability)

__all__ = ["LanceDataSource", "LanceReader", "LanceFilteringReader", "LanceFilesWriter", "LanceSplit",
           "LanceCommitMessage", "FileScan"]


# -- planning a read ------------------------------------------------------------------

class LanceSplit(InputPartition):
    """Rows ``[start, stop)`` of one file (or only ``ranges`` within them): the unit of work of one read task."""

    def __init__(self, path: str, start: int, stop: int, ranges: tuple[tuple[int, int], ...] | None = None) -> None:
        super().__init__((path, start, stop, ranges))
        self.path, self.start, self.stop = path, start, stop
        self.ranges = ranges or ((start, stop),)

    def __repr__(self) -> str:
        return f"LanceSplit({self.path!r}, {self.start}, {self.stop})"

    def batches(self, columns: list[str], batch_size: int,
                storage_options: dict | None = None) -> Iterator[pa.RecordBatch]:
        with LanceFileReader(self.path, storage_options or None, columns) as reader:
            for a, b in self.ranges:
                yield from reader.read_range(a, b - a, batch_size=batch_size)

    def matching(self, expr, cache: dict, storage_options: dict | None = None) -> list[tuple[int, int]]:
        """The file's row ranges its statistics say may match ``expr`` (read once per file)."""
        if self.path not in cache:
            with LanceFileReader(self.path, storage_options or None) as reader:
                cache[self.path] = reader.matching_ranges(expr)
        return cache[self.path]

    def narrowed(self, ranges: list[tuple[int, int]]) -> "LanceSplit":
        return LanceSplit(self.path, self.start, self.stop, tuple(ranges))


def plan_splits(infos: list[LanceFileInfo], split_rows: int | None, split_bytes: int) -> list[LanceSplit]:
    """One split per file, or per ``split_rows`` rows (by default ~``split_bytes`` of file)."""
    return [LanceSplit(info.path, start, stop) for info in infos
            for start, stop in row_ranges(info.num_rows, info.num_bytes, split_rows, split_bytes)]


@dataclass(frozen=True)
class FileScan:
    """What planning a read needs of a set of Lance files (the counterpart of
    :class:`~lancefile.spark.datasets.DatasetScan`)."""

    infos: tuple[LanceFileInfo, ...]
    storage_options: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def open(cls, path: str, storage_options: dict | None = None) -> "FileScan":
        return cls(tuple(scan_files(path, storage_options)), dict(storage_options or {}))

    @property
    def schema(self) -> pa.Schema:
        return common_schema(list(self.infos))

    def resolve(self, columns) -> list[str]:
        schema = self.infos[0].schema
        return [resolve_name(c, schema) for c in columns]

    def projected_schema(self, columns) -> pa.Schema:
        with LanceFileReader(self.infos[0].path, self.storage_options or None, self.resolve(columns)) as r:
            return r.schema

    def splits(self, split_rows: int | None, split_bytes: int) -> list[LanceSplit]:
        return plan_splits(list(self.infos), split_rows, split_bytes)


def _struct_paths(want: T.DataType, have: T.DataType, prefix: str) -> list[str] | None:
    """Dotted child paths when ``want`` is a narrower struct of ``have``; None when whole."""
    if not (isinstance(want, T.StructType) and isinstance(have, T.StructType)) or want.names == have.names:
        return None
    out = []
    for f in want.fields:
        if f.name not in have.names:
            raise ColumnNotFoundError(f"column {prefix}.{f.name!r} of the given schema is not in the Lance data")
        sub = _struct_paths(f.dataType, have[f.name].dataType, f"{prefix}.{f.name}")
        out.extend(sub if sub is not None else [f"{prefix}.{f.name}"])
    return out


def _projection(wanted: T.StructType, available: T.StructType) -> list[str]:
    """Column paths to read so the file gives ``wanted`` (a user schema or ``columns``)."""
    paths = []
    for f in wanted.fields:
        name = f.name
        if name not in available.names:  # Spark's names are case-insensitive
            folded = [n for n in available.names if n.lower() == name.lower()]
            if len(folded) != 1:
                raise ColumnNotFoundError(
                    f"column {name!r} is not in the Lance data; it has {', '.join(available.names)}"
                )
            name = folded[0]
        have = available[name].dataType
        sub = _struct_paths(f.dataType, have, name)
        if sub is None and without_nullability(f.dataType) != without_nullability(have):
            raise SchemaMismatchError(
                f"column {f.name!r}: the given schema says {f.dataType.simpleString()}, "
                f"the Lance data holds {have.simpleString()}"
            )
        paths.extend(sub if sub is not None else [name])
    return paths


class LanceReader(DataSourceReader):
    """Reads splits (of Lance files or dataset fragments) as Arrow batches in Spark's exact schema."""

    def __init__(self, options: ReadOptions, schema: T.StructType, splits: list[InputPartition],
                 columns: list[str]) -> None:
        self.options = options
        self.schema = schema
        self.columns = columns
        self.splits = splits
        self.filters: list = []

    def partitions(self) -> list[InputPartition]:
        """The splits, less the rows the files' statistics rule out for the pushed filters.

        A split none of whose zones can match is dropped (no task starts for it); the others
        read only their zones that may match. Files without statistics keep every split.
        """
        expr = F.pruning_expression(self.filters, self.schema) if self.filters else None
        if expr is None:
            return list(self.splits)
        out, cache = [], {}
        for split in self.splits:
            try:
                ranges = split.matching(expr, cache, self.options.storage_options)
            except Exception:  # noqa: BLE001 - pruning is an optimisation: any doubt, read it all
                out.append(split)
                continue
            mine = [(max(a, split.start), min(b, split.stop)) for a, b in ranges if b > split.start and a < split.stop]
            if mine:
                out.append(split.narrowed(mine))
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not hasattr(partition, "batches"):  # Spark's placeholder when there is nothing to read
            return
        target = target_arrow_schema(self.schema)
        for batch in partition.batches(self.columns, self.options.batch_size, self.options.storage_options):
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


class LanceFilesWriter(StagedJob, DataSourceArrowWriter):
    """Writes one task's Arrow batches to staged Lance files (``format=files``; see the module docstring)."""

    def __init__(self, options: WriteOptions, schema: T.StructType, overwrite: bool, job_id: str) -> None:
        self.options = options
        self.spark_schema = schema
        self.overwrite = overwrite
        self.job_id = job_id
        self.root = local_path(options.path)
        self.vectors = vector_types(schema, options.vector_columns)

    # -- on the executors -------------------------------------------------------------
    def _lance_schema(self, schema: pa.Schema) -> pa.Schema:
        """The Arrow schema written: vectors as fixed_size_list, field metadata applied."""
        return stored_schema(schema, self.vectors, self.options.field_metadata)

    def _prepare(self, batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
        arrays = list(batch.columns)
        for i, f in enumerate(schema):
            if f.name in self.vectors and arrays[i].type != f.type:
                arrays[i] = to_vectors(arrays[i], f.type, f.name)
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _writer(self, path: str, schema: pa.Schema) -> LanceFileWriter:
        return LanceFileWriter(path, schema, version=self.options.file_version, max_page_bytes=self.options.max_page_bytes)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> LanceCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx else 0
        staging, _inode = self.open_attempt()
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
        self.cleanup()

    def abort(self, messages) -> None:
        self.cleanup()

    def _write_empty(self) -> None:
        """An empty job still leaves one zero-row file, so the schema can be read back."""
        schema = self._lance_schema(target_arrow_schema(self.spark_schema))
        name = f"part-00000-{self.job_id}-000.lance"
        self._writer(os.path.join(self.root, name), schema).close()


# -- the data source ------------------------------------------------------------------

class LanceDataSource(DataSource):
    """``spark.read.format("lance")`` / ``df.write.format("lance")``: see :mod:`lancefile.spark`."""

    #: the session's ``fs.s3a.*`` settings when the source was registered (:func:`with_hadoop_settings`)
    hadoop: dict = {}

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def __init__(self, options) -> None:
        super().__init__(options)
        self._found: FileScan | DatasetScan | None = None

    def _scan(self) -> FileScan | DatasetScan:
        """The files or dataset version the read covers, found once: this object is pickled
        after ``schema()`` and ``reader()`` runs on the copy, so a dataset read stays at the
        version it was planned on."""
        if self._found is None:
            opts = ReadOptions.parse(self.options, self.hadoop)
            if is_remote_path(opts.path):
                so = opts.storage_options
                if is_remote_dataset(opts.path, so):
                    self._found = DatasetScan.open(opts.path.rstrip("/"), opts.version, so)
                elif opts.version is not None:
                    raise InvalidInputError(f"option 'version' picks a version of a Lance dataset, and {opts.path} "
                                            f"is not one (it has no _versions/)")
                else:
                    self._found = FileScan.open(opts.path, so)
                return self._found
            root = local_path(opts.path)
            if is_dataset(root):
                self._found = DatasetScan.open(root, opts.version)
            elif opts.version is not None:
                raise InvalidInputError(f"option 'version' picks a version of a Lance dataset, and {opts.path} is "
                                        f"not one (it has no _versions/ directory)")
            else:
                self._found = FileScan.open(opts.path)
        return self._found

    def schema(self) -> T.StructType:
        opts = ReadOptions.parse(self.options, self.hadoop)
        scan = self._scan()
        if opts.columns:
            return spark_schema_for(scan.projected_schema(opts.columns))
        return spark_schema_for(scan.schema)

    def reader(self, schema: T.StructType) -> LanceReader:
        opts = ReadOptions.parse(self.options, self.hadoop)
        scan = self._scan()
        available = spark_schema_for(scan.schema)
        if opts.columns and without_nullability(schema) == without_nullability(
                spark_schema_for(scan.projected_schema(opts.columns))):
            columns = scan.resolve(opts.columns)  # may reach through lists, which a schema cannot say
        else:
            columns = _projection(schema, available)
        cls = LanceFilteringReader if opts.push_filters else LanceReader
        return cls(opts, schema, scan.splits(opts.split_rows, opts.split_bytes), columns)

    def writer(self, schema: T.StructType, overwrite: bool):
        opts = WriteOptions.parse(self.options, self.hadoop)
        if is_remote_path(opts.path):
            return _remote_writer(opts, schema, overwrite)
        root = local_path(opts.path)
        if os.path.isfile(root):
            raise LanceIOError(f"cannot write to {opts.path}: it is a file; the lance source writes a directory "
                               f"(a Lance dataset, or Lance files with format=files)")
        _check_names(schema)
        exists = is_dataset(root)
        if _layout(opts, root, exists) == "dataset":
            return dataset_writer(opts, schema, overwrite, root, exists)
        check_writable(schema, opts.file_version)
        writer = LanceFilesWriter(opts, schema, overwrite, uuid.uuid4().hex[:12])
        os.makedirs(writer.staging)  # tasks stage their files in here
        return writer


def with_hadoop_settings(settings: dict) -> type:
    """:class:`LanceDataSource`, or a subclass carrying a session's ``fs.s3a.*`` settings.

    Spark pickles the registered class into the workers that plan reads and writes, where the
    session cannot be asked; a class made here travels with its settings.
    """
    if not settings:
        return LanceDataSource
    return type("LanceDataSourceWithS3A", (LanceDataSource,), {"hadoop": dict(settings), "__module__": __name__})


def _check_names(schema: T.StructType) -> None:
    """What the file schema refuses, refused before any task starts."""
    for f in schema.fields:
        if "." in f.name:
            raise InvalidInputError(
                f"column {f.name!r}: Lance column names cannot contain '.' (it separates nested names); rename it"
            )


def _layout(opts: WriteOptions, root: str, dataset_here: bool) -> str:
    """``dataset`` or ``files``: the ``format`` option, else ``files`` only for an existing
    directory of plain Lance files (written before datasets), so old users keep their layout."""
    files_here = not dataset_here and os.path.isdir(root) and bool(list_lance_files(root, must_exist=False))
    return _chosen_layout(opts, dataset_here, files_here)


def _chosen_layout(opts: WriteOptions, dataset_here: bool, files_here: bool) -> str:
    """The ``format`` option checked against what the path holds, or the layout it implies."""
    if opts.format == "files" and dataset_here:
        raise InvalidInputError(f"{opts.path} is a Lance dataset: format=files would add files its versions do "
                                f"not list; write with format=dataset (the default) or to another path")
    if opts.format == "dataset" and files_here:
        raise InvalidInputError(f"{opts.path} holds Lance files that are not a dataset: write them with "
                                f"format=files, or write the dataset to another path")
    return opts.format or ("files" if files_here else "dataset")


# -- writing Lance files to an object store ---------------------------------------------

class RemoteFilesWriter(LanceFilesWriter):
    """``format=files`` on an object store: tasks write ``<path>/_temporary/<job>/attempt-<id>/``
    objects (each upload complete or absent), the driver moves the winners' into place.

    An object store has no directory to rename, so an attempt still running after the
    commit (a late speculative one) can leave objects under ``_temporary``; readers skip them.
    """

    def __init__(self, options: WriteOptions, schema: T.StructType, overwrite: bool, job_id: str) -> None:
        self.options = options
        self.spark_schema = schema
        self.overwrite = overwrite
        self.job_id = job_id
        self.root = options.path.rstrip("/")
        self.vectors = vector_types(schema, options.vector_columns)

    @property
    def staging(self) -> str:
        return f"{self.root}/_temporary/{self.job_id}"

    def _store(self, uri: str):
        from ..objectstore import resolve_store

        return resolve_store(uri, self.options.storage_options)

    def open_attempt(self) -> tuple[str, int]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = ctx.taskAttemptId() if ctx else uuid.uuid4().hex[:8]
        return f"{self.staging}/attempt-{attempt}", 0

    def _writer(self, path: str, schema: pa.Schema) -> LanceFileWriter:
        return LanceFileWriter(path, schema, version=self.options.file_version,
                               max_page_bytes=self.options.max_page_bytes,
                               storage_options=self.options.storage_options)

    def commit(self, messages) -> None:
        from .remote import list_remote_files

        root = self._store(self.root)
        existing = list_remote_files(self.root, self.options.storage_options, must_exist=False)
        if self.overwrite:
            for uri, _ in existing:
                self._store(uri).delete()
        moved = 0
        for msg in messages:
            for staged, name, _rows, _bytes in (msg.files if msg is not None else []):
                src = self._store(staged)
                root.call("move", lambda src=src, name=name: root.fs.move(src.path, root.child(name).path))
                moved += 1
        if moved == 0 and (self.overwrite or not existing):
            self._write_empty()
        self.cleanup()

    def _write_empty(self) -> None:
        schema = self._lance_schema(target_arrow_schema(self.spark_schema))
        self._writer(f"{self.root}/part-00000-{self.job_id}-000.lance", schema).close()

    def cleanup(self) -> None:
        staging = self._store(self.staging)
        try:
            staging.call("remove", lambda: staging.fs.delete_dir(staging.path))
        except LanceIOError:
            pass  # nothing was staged


def _remote_writer(opts: WriteOptions, schema: T.StructType, overwrite: bool):
    """The writer of a job whose path is on an object store: a dataset version, or Lance files."""
    from ..datasets.storage import dataset_root, join, list_names, refuse_remote_write
    from .datasets import remote_dataset_writer
    from .remote import list_remote_files

    _check_names(schema)
    root = dataset_root(opts.path, opts.storage_options or None)
    exists = bool(list_names(join(root, "_versions")))
    files_here = not exists and opts.format != "files" and bool(
        list_remote_files(opts.path, opts.storage_options, must_exist=False))
    if _chosen_layout(opts, exists, files_here) == "dataset":
        refuse_remote_write(root, "write a Lance dataset from Spark (to write plain Lance files there, use "
                                  ".option('format', 'files'))")
        return remote_dataset_writer(opts, schema, overwrite, exists)
    check_writable(schema, opts.file_version)
    return RemoteFilesWriter(opts, schema, overwrite, uuid.uuid4().hex[:12])
