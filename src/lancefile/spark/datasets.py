"""Lance datasets through the Spark source: reads by fragment, one committed version per write job.

Reading
    A path with a ``_versions/`` directory is a Lance dataset. The source opens its latest
    version (or ``option("version", N)``) once, on the driver, and pins it: every task of the
    query reads that version. A split is a range of physical rows of one fragment
    (:class:`DatasetSplit`; per ``splitRows``, or about ``splitBytes`` of the fragment's
    files); deleted rows are dropped as the task reads, and fragments whose rows are all
    deleted get no split.

Writing
    ``writer()`` on the driver checks the write against the dataset and makes the
    :class:`~lancefile.datasets.write.WritePlan` (the version it builds on, the schema with
    the dataset's field ids, the file version), which travels to the tasks in the pickled
    writer. Each task attempt writes its rows as new data files with
    :func:`~lancefile.datasets.write.write_fragments`, into a staging directory of its own
    (``<path>/_temporary/<job>/attempt-<id>/data/``, see :mod:`lancefile.spark.staging`),
    and returns the serialized fragments in its commit message. The driver's ``commit()``
    closes the job (renames its staging directory), moves the data files of the winning
    attempts into the dataset's ``data/`` (same file names: the fragments stay valid) and
    calls :func:`~lancefile.datasets.write.commit_fragments` once with their fragments: one
    new version per job, atomically, or none (the moved files are removed again when the
    commit fails). Then the staging directory goes, with whatever failed, retried,
    speculative or killed attempts left there; ``abort()`` removes it all. So the dataset's
    ``data/`` only ever receives files of a commit, and an attempt still running after the
    commit or abort removes its own files when it finds its directory gone.

Example::

    >>> import os, tempfile, pyarrow as pa, lancefile
    >>> root = tempfile.mkdtemp()
    >>> _ = lancefile.write_dataset(pa.table({"x": list(range(10))}), root, max_rows_per_file=4)
    >>> scan = DatasetScan.open(root, None)
    >>> [(s.fragment_id, s.start, s.stop) for s in scan.splits(3, 1)]
    [(0, 0, 3), (0, 3, 4), (1, 0, 3), (1, 3, 4), (2, 0, 2)]
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSourceArrowWriter, InputPartition, WriterCommitMessage

from .._proto import table_pb2
from ..datasets import dataset
from ..datasets.fragment import DATA_DIR, Projection, is_blob_v2
from ..datasets.write import DEFAULT_MAX_ROWS_PER_FILE, WritePlan, plan_write, write_fragments
from ..errors import (CorruptFileError, InvalidInputError, LanceError, LanceIOError, SchemaMismatchError,
                      UnsupportedTypeError)
from .files import resolve_name, row_ranges
from .options import WriteOptions
from .staging import StagedJob
from .types import (check_writable, spark_schema_for, stored_schema, target_arrow_schema, to_vectors,
                    vector_types, without_nullability)

from ..datasets.write import commit_fragments

__all__ = ["DatasetSplit", "DatasetScan", "DatasetCommitMessage", "LanceDatasetWriter", "dataset_writer",
           "RemoteDatasetWriter", "remote_dataset_writer",
           "fragment_files"]


# -- reading --------------------------------------------------------------------------

class DatasetSplit(InputPartition):
    """Physical rows ``[start, stop)`` of one fragment of one dataset version (or only ``ranges`` within them)."""

    def __init__(self, root: str, version: int, fragment_id: int, start: int, stop: int,
                 ranges: tuple[tuple[int, int], ...] | None = None) -> None:
        super().__init__((root, version, fragment_id, start, stop, ranges))
        self.root, self.version, self.fragment_id, self.start, self.stop = root, version, fragment_id, start, stop
        self.ranges = ranges or ((start, stop),)

    def matching(self, expr, cache: dict, storage_options: dict | None = None) -> list[tuple[int, int]]:
        """The fragment's physical row ranges its data file's statistics say may match ``expr``."""
        key = (self.root, self.version, self.fragment_id)
        if key not in cache:
            if (self.root, self.version) not in cache:
                cache[(self.root, self.version)] = dataset(self.root, version=self.version,
                                                           storage_options=storage_options or None)
            frag = cache[(self.root, self.version)].get_fragment(self.fragment_id)
            cache[key] = frag.matching_ranges(expr) if frag is not None else [(self.start, self.stop)]
        return cache[key]

    def narrowed(self, ranges: list[tuple[int, int]]) -> "DatasetSplit":
        return DatasetSplit(self.root, self.version, self.fragment_id, self.start, self.stop, tuple(ranges))

    def __repr__(self) -> str:
        return f"DatasetSplit({self.root!r}, v{self.version}, fragment {self.fragment_id}, {self.start}, {self.stop})"

    def batches(self, columns: list[str], batch_size: int,
                storage_options: dict | None = None) -> Iterator[pa.RecordBatch]:
        """The split's live rows (deleted rows dropped), projected to ``columns``."""
        frag = dataset(self.root, version=self.version,
                       storage_options=storage_options or None).get_fragment(self.fragment_id)
        if frag is None:
            raise CorruptFileError(f"{self.root}: version {self.version} has no fragment {self.fragment_id}")
        for a, b in self.ranges:
            yield from frag.to_batches(columns, batch_size=batch_size, start=a, stop=b)


@dataclass(frozen=True)
class DatasetScan:
    """What planning a read needs of one dataset version: plain data, so it pickles.

    ``fragments`` holds ``(fragment id, physical rows, live rows, bytes of its data files)``.
    """

    root: str
    version: int
    schema: pa.Schema
    fragments: tuple[tuple[int, int, int, int], ...]
    storage_options: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def open(cls, root: str, version: int | None, storage_options: dict | None = None) -> "DatasetScan":
        ds = dataset(root, version=version, storage_options=storage_options or None)
        frags = []
        for frag in ds.get_fragments():
            nbytes = 0
            for df, path in zip(frag.metadata.files, frag.data_files()):
                nbytes += df.file_size_bytes or (os.path.getsize(path) if os.path.exists(path) else 0)
            frags.append((frag.fragment_id, frag.physical_rows, frag.count_rows(), nbytes))
        read_schema = Projection(ds._lance_schema, ds.schema, None).schema  # blob-v2 columns: their descriptors
        return cls(root, ds.version, read_schema, tuple(frags), dict(storage_options or {}))

    def resolve(self, columns) -> list[str]:
        return [resolve_name(c, self.schema) for c in columns]

    def projected_schema(self, columns) -> pa.Schema:
        """The Arrow schema a read of ``columns`` (dotted names allowed) gives."""
        ds = dataset(self.root, version=self.version, storage_options=self.storage_options or None)
        return Projection(ds._lance_schema, ds.schema, self.resolve(columns)).schema

    def splits(self, split_rows: int | None, split_bytes: int) -> list[DatasetSplit]:
        return [DatasetSplit(self.root, self.version, fid, start, stop)
                for fid, physical, live, nbytes in self.fragments if live
                for start, stop in row_ranges(physical, nbytes, split_rows, split_bytes)]


# -- writing --------------------------------------------------------------------------

@dataclass
class DatasetCommitMessage(WriterCommitMessage):
    """What one task attempt wrote: its new fragments, serialized (data file names inside),
    and its staging directory (``attempt-<id>``), where the files wait for the commit."""

    fragments: list[bytes]
    attempt: str


def fragment_files(fragments: Iterable[bytes]) -> set[str]:
    """Names (under ``data/``) of the data files of serialized fragments."""
    names = set()
    for raw in fragments:
        f = table_pb2.DataFragment()
        f.ParseFromString(raw)
        names.update(df.path for df in f.files)
    return names


def _append_order(spark_schema: T.StructType, stored: pa.Schema, root: str) -> list[int]:
    """For each dataset column, the position of the data's column feeding it (matched by name,
    case-insensitively when unambiguous); the data must have exactly the dataset's columns, of
    the Spark types the dataset reads as."""
    want = spark_schema_for(stored)
    names = spark_schema.names
    order = []
    for f in want.fields:
        hits = [i for i, n in enumerate(names) if n == f.name] or \
            [i for i, n in enumerate(names) if n.lower() == f.name.lower()]
        if len(hits) != 1:
            raise SchemaMismatchError(f"{root}: cannot append: the dataset has column {f.name!r}, the data "
                                      f"{'has several matching ones' if hits else 'does not'} (data columns: "
                                      f"{', '.join(names)}; dataset columns: {', '.join(want.names)})")
        have = spark_schema.fields[hits[0]].dataType
        if without_nullability(have) != without_nullability(f.dataType):
            raise SchemaMismatchError(
                f"{root}: cannot append column {f.name!r} of type {have.simpleString()}: the dataset stores it as "
                f"{stored.field(f.name).type} (read by Spark as {f.dataType.simpleString()})")
        order.append(hits[0])
    extra = [n for i, n in enumerate(names) if i not in order]
    if extra:
        raise SchemaMismatchError(f"{root}: cannot append columns the dataset does not have: {', '.join(extra)} "
                                  f"(dataset columns: {', '.join(want.names)}); overwrite to change the schema")
    return order


def _check_vectors(dims: dict[str, int], stored: pa.Schema, root: str) -> None:
    """On append, ``vectorColumns`` must agree with how the dataset stores those columns."""
    for name, dim in dims.items():
        i = stored.get_field_index(name)
        t = stored.field(i).type if i >= 0 else None
        if t is None or not pa.types.is_fixed_size_list(t) or t.list_size != dim:
            raise SchemaMismatchError(f"{root}: option vectorColumns says {name}={dim}, but the dataset stores "
                                      f"{name!r} as {t if t is not None else 'nothing (no such column)'}")


def conform_for_write(batch: pa.RecordBatch, schema: pa.Schema, order: list[int]) -> pa.RecordBatch:
    """Spark's batch as ``schema`` (the plan's): columns picked by ``order``, vectors made
    fixed-size, other types cast exactly; nulls in a non-nullable column are an error."""
    arrays = []
    for f, i in zip(schema, order):
        arr = batch.column(i)
        if arr.type != f.type:
            if pa.types.is_fixed_size_list(f.type) and (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
                arr = to_vectors(arr, f.type, f.name)
            else:
                try:
                    cast = arr.cast(f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise SchemaMismatchError(f"column {f.name!r}: cannot store {arr.type} values as "
                                              f"{f.type}: {exc}") from None
                if pa.types.is_floating(f.type) and pa.types.is_floating(arr.type) and \
                        pc.any(pc.and_(pc.is_finite(arr), pc.invert(pc.is_finite(cast)))).as_py():
                    # Arrow's safe cast lets 70000.0 become float16's inf
                    raise SchemaMismatchError(f"column {f.name!r}: cannot store {arr.type} values as {f.type}: "
                                              f"a value is out of its range")
                arr = cast
        if not f.nullable and arr.null_count:
            raise InvalidInputError(f"column {f.name!r} holds nulls, but the dataset's column is not nullable")
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _byte_groups(batches: Iterator[pa.RecordBatch], max_bytes: int) -> Iterator[Iterator[pa.RecordBatch]]:
    """``batches`` in consecutive groups of about ``max_bytes`` of Arrow data (a batch is cut
    where a group fills up); each group must be consumed before the next is asked for."""
    pending: list[pa.RecordBatch] = []
    exhausted = False

    def group() -> Iterator[pa.RecordBatch]:
        nonlocal exhausted
        used = 0
        while True:
            batch = pending.pop() if pending else next(batches, None)
            if batch is None:
                exhausted = True
                return
            row_bytes = max(1, batch.nbytes // max(batch.num_rows, 1))
            room = max(1, (max_bytes - used) // row_bytes)
            if batch.num_rows > room:
                pending.append(batch.slice(room))
                batch = batch.slice(0, room)
            used += batch.num_rows * row_bytes
            yield batch
            if used >= max_bytes:
                return

    while not exhausted:
        yield group()


class LanceDatasetWriter(StagedJob, DataSourceArrowWriter):
    """Writes one task's rows as new fragments of a dataset; the driver commits them (module docstring)."""

    def __init__(self, plan: WritePlan, order: list[int], max_bytes: int | None, job_id: str,
                 created_root: bool) -> None:
        self.plan = plan
        self.root = plan.root
        self.order = order
        self.max_bytes = max_bytes
        self.job_id = job_id
        self.created_root = created_root

    # -- on the executors -------------------------------------------------------------
    def write(self, iterator: Iterator[pa.RecordBatch]) -> DatasetCommitMessage:
        attempt, inode = self.open_attempt()
        plan = replace(self.plan, root=attempt)  # write_fragments writes into <attempt>/data/
        batches = (conform_for_write(b, plan.schema, self.order) for b in iterator)
        fragments: list[bytes] = []
        try:
            if self.max_bytes:
                for group in _byte_groups(batches, self.max_bytes):
                    fragments += write_fragments(plan, group)
            else:
                fragments = write_fragments(plan, batches)
        except BaseException as exc:
            if self.attempt_closed(attempt, inode):
                raise self._too_late() from exc
            shutil.rmtree(attempt, ignore_errors=True)
            raise
        if self.attempt_closed(attempt, inode):
            raise self._too_late()
        return DatasetCommitMessage(fragments, os.path.basename(attempt))

    def _too_late(self) -> LanceIOError:
        return LanceIOError(f"{self.staging}: the write job was committed or aborted before this task "
                            f"finished; its files were removed")

    # -- on the driver ----------------------------------------------------------------
    def commit(self, messages) -> None:
        closed = self.close_staging()
        wins = [m for m in messages if m is not None]
        fragments = [f for m in wins for f in m.fragments]
        moved: list[str] = []
        try:
            data = os.path.join(self.root, DATA_DIR)
            os.makedirs(data, exist_ok=True)
            for m in wins:
                for name in sorted(fragment_files(m.fragments)):
                    if closed is None:
                        raise LanceIOError(f"{self.staging} is gone: cannot commit the files of the write job")
                    os.replace(os.path.join(closed, m.attempt, DATA_DIR, name), os.path.join(data, name))
                    moved.append(name)
            commit_fragments(self.plan, fragments)
        except BaseException:
            if not self._landed(set(moved)):
                self._remove(moved)
            raise
        finally:
            self.cleanup()

    def abort(self, messages) -> None:
        self.close_staging()
        self.cleanup()
        if self.created_root:  # a failed first write leaves no trace
            for d in (os.path.join(self.root, DATA_DIR), self.root):
                try:
                    os.rmdir(d)
                except OSError:
                    pass

    def _landed(self, names: set[str]) -> bool:
        """Whether the latest version references these files (a commit that raised after its
        version became visible must not lose its data)."""
        if not names:
            return False
        try:
            latest = dataset(self.root)
        except LanceError:
            return False
        return any(df.path in names for frag in latest.get_fragments() for df in frag.metadata.files)

    def _remove(self, names: Iterable[str]) -> None:
        for name in names:
            try:
                os.unlink(os.path.join(self.root, DATA_DIR, name))
            except FileNotFoundError:
                pass


def _plan(opts: WriteOptions, spark_schema: T.StructType, overwrite: bool, root, exists: bool,
          storage_options: dict | None = None) -> tuple[WritePlan, list[int]]:
    """The write plan of a job into the dataset at ``root`` and the order of the Spark columns in it."""
    if opts.max_page_bytes:
        raise InvalidInputError("option maxPageBytes applies to format=files writes only; "
                                "dataset writes use the default page size")
    max_rows = opts.max_rows_per_file or DEFAULT_MAX_ROWS_PER_FILE
    where = opts.path if storage_options is not None else root
    if exists and not overwrite:
        current = dataset(where, storage_options=storage_options)
        blobs = [f.name for f in current._lance_schema.fields if is_blob_v2(f)]
        if blobs:  # they read as descriptors; what an append should store there is the bytes
            raise UnsupportedTypeError(f"{root}: cannot append: column(s) {', '.join(map(repr, blobs))} are Lance 2.2 "
                                       f"blob columns, which lancefile does not write; append with pylance")
        _check_vectors(opts.vector_columns, current.schema, root)
        plan = plan_write(where, current.schema, mode="append", max_rows_per_file=max_rows,
                          data_storage_version=opts.version, storage_options=storage_options)
        order = _append_order(spark_schema, plan.schema, root)
    else:
        arrow = stored_schema(target_arrow_schema(spark_schema), vector_types(spark_schema, opts.vector_columns),
                              opts.field_metadata)
        plan = plan_write(where, arrow, mode="overwrite" if overwrite else "append", max_rows_per_file=max_rows,
                          data_storage_version=opts.version, storage_options=storage_options)
        order = list(range(len(arrow)))
    check_writable(spark_schema, plan.file_version)
    return plan, order


def dataset_writer(opts: WriteOptions, spark_schema: T.StructType, overwrite: bool, root: str,
                   exists: bool) -> LanceDatasetWriter:
    """Plan a write job into the dataset at ``root`` (``exists``: a dataset is there)."""
    plan, order = _plan(opts, spark_schema, overwrite, root, exists)
    created = not os.path.exists(root)
    writer = LanceDatasetWriter(plan, order, opts.max_bytes_per_file, uuid.uuid4().hex[:12], created)
    os.makedirs(writer.staging)  # tasks write their files in here
    return writer


class RemoteDatasetWriter(DataSourceArrowWriter):
    """A write job into a dataset on an object store (s3://, memory://).

    An object store has no directory to rename, and a data file is invisible until a
    manifest names it: each task uploads its files straight into the dataset's ``data/``
    under fresh random names (each upload complete or absent) and returns their fragments;
    the driver commits them as one version (a conditional create of the manifest, as on a
    local path). A task that fails removes its own files, ``abort()`` removes the files of
    the tasks that reported, a failed commit removes them all. Only a task killed mid-way
    or a late speculative attempt can leave unreferenced files, as in the reference:
    :meth:`lancefile.LanceDataset.cleanup_orphans` removes them.
    """

    def __init__(self, plan: WritePlan, order: list[int], max_bytes: int | None) -> None:
        self.plan = plan
        self.order = order
        self.max_bytes = max_bytes

    def write(self, iterator: Iterator[pa.RecordBatch]) -> DatasetCommitMessage:
        from ..datasets.write import _remove_files

        batches = (conform_for_write(b, self.plan.schema, self.order) for b in iterator)
        fragments: list[bytes] = []
        try:
            if self.max_bytes:
                for group in _byte_groups(batches, self.max_bytes):
                    fragments += write_fragments(self.plan, group)
            else:
                fragments = write_fragments(self.plan, batches)
        except BaseException:
            _remove_files(self.plan.root, fragments)
            raise
        return DatasetCommitMessage(fragments, "")

    def commit(self, messages) -> None:
        from ..datasets.write import _latest, _remove_files

        fragments = [f for m in messages if m is not None for f in m.fragments]
        try:
            commit_fragments(self.plan, fragments)
        except BaseException:
            names = fragment_files(fragments)
            try:
                latest, _ = _latest(self.plan.root)
            except LanceError:
                latest = None
            landed = latest is not None and any(df.path in names for f in latest.manifest.fragments for df in f.files)
            if not landed:  # a commit that raised after its version became visible keeps its data
                _remove_files(self.plan.root, fragments)
            raise

    def abort(self, messages) -> None:
        from ..datasets.write import _remove_files

        _remove_files(self.plan.root, [f for m in messages or [] if m is not None for f in m.fragments])


def remote_dataset_writer(opts: WriteOptions, spark_schema: T.StructType, overwrite: bool,
                          exists: bool) -> RemoteDatasetWriter:
    """Plan a write job into the dataset at the object-store URI ``opts.path``."""
    plan, order = _plan(opts, spark_schema, overwrite, opts.path, exists, dict(opts.storage_options or {}))
    return RemoteDatasetWriter(plan, order, opts.max_bytes_per_file)
