"""Writing a Lance dataset: :func:`write_dataset`, and the two halves it is made of.

A write is planned (:func:`plan_write`: which version it builds on, the schema with the
dataset's field ids, the Lance file version), its data files are written
(:func:`write_fragments`, which can run anywhere, e.g. in Spark tasks) and the new version is
committed once (:func:`commit_fragments`). Nothing is visible until the commit's manifest
appears under its final name, which happens atomically (a hard link that fails if another
writer took the version). When another writer did, an append or overwrite is rebased on the
newer version and retried if the versions in between allow it; otherwise
:class:`~lancefile.CommitConflictError` is raised and nothing of the write is visible.

Example::

    >>> import pyarrow as pa, lancefile, tempfile
    >>> uri = tempfile.mkdtemp()
    >>> ds = lancefile.write_dataset(pa.table({"a": [1, 2]}), uri)
    >>> ds = lancefile.write_dataset(pa.table({"a": [3]}), uri, mode="append")
    >>> ds.version, ds.to_table().column("a").to_pylist()
    (2, [1, 2, 3])
    >>> lancefile.write_dataset(pa.table({"a": [9]}), uri, mode="overwrite").to_table().to_pydict()
    {'a': [9]}
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Iterable

import pyarrow as pa

from .._proto import file_pb2, table_pb2
from ..errors import CommitConflictError, CorruptFileError, InvalidInputError, LanceIOError, SchemaMismatchError
from ..format.schema import LanceSchema
from ..format.version import resolve_version
from ..writer import LanceFileWriter
from .core import LanceDataset
from .storage import (dataset_root, is_remote, join, make_dirs, put_file, refuse_remote_write, remove)
from .storage import name as location_name
from .fragment import DATA_DIR
from .manifest import (FLAG_DELETION_FILES, FLAG_MIXED_FILE_VERSIONS, FLAG_TABLE_CONFIG, VERSIONS_DIR,
                       LoadedManifest, check_reader_flags, check_writer_flags, commit_manifest_file,
                       encode_manifest, list_manifests, manifest_file_name, read_manifest,
                       write_hint)

__all__ = ["write_dataset", "WritePlan", "plan_write", "write_fragments", "commit_fragments",
           "DEFAULT_MAX_ROWS_PER_FILE"]

DEFAULT_MAX_ROWS_PER_FILE = 1024 * 1024
TRANSACTIONS_DIR = "_transactions"
MAX_FRAGMENT_ID = (1 << 32) - 1  # Manifest.max_fragment_id is a uint32
COMMIT_RETRIES = 20
MODES = ("create", "append", "overwrite")
_COMPATIBLE_WITH_APPEND = {"append", "delete", "update", "rewrite", "reserve_fragments", "create_index",
                           "update_config", "data_replacement"}


def _library_version() -> str:
    from .. import __version__

    return __version__


@dataclass
class WritePlan:
    """What one write builds on and produces; plain data, so it can travel to Spark tasks."""

    root: object                   # a local path (str) or an ObjectStore (lancefile.datasets.storage)
    mode: str                      # "create", "append" or "overwrite" (resolved)
    read_version: int              # the version the write builds on (0: none)
    scheme: str                    # manifest naming scheme of the dataset ("v1" or "v2")
    schema: pa.Schema              # the Arrow schema written
    fields: bytes                  # file_pb2.Schema of the dataset (with its field ids), serialized
    file_version: str              # Lance file version of the new data files ("2.2"...)
    data_format: str               # the dataset's data_format.version after the commit
    max_rows_per_file: int = DEFAULT_MAX_ROWS_PER_FILE
    extra: dict = field(default_factory=dict)
    # the manifest the write builds on, as read when planning (not sent to Spark tasks)
    base: LoadedManifest | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "base": None}

    def lance_schema(self) -> LanceSchema:
        pb = file_pb2.Schema()
        pb.ParseFromString(self.fields)
        return LanceSchema.from_proto(pb)


def _latest(root: str) -> tuple[LoadedManifest | None, str]:
    manifests = list_manifests(root)
    if not manifests:
        return None, "v2"
    loaded = read_manifest(manifests[-1].path)
    return loaded, manifests[-1].scheme


def plan_write(uri, schema: pa.Schema, *, mode: str = "create", max_rows_per_file: int = DEFAULT_MAX_ROWS_PER_FILE,
               data_storage_version: str | None = None, storage_options: dict | None = None) -> WritePlan:
    """Check a write against the dataset's latest version and decide what it writes."""
    if mode not in MODES:
        raise InvalidInputError(f"mode must be one of {', '.join(map(repr, MODES))}, not {mode!r}")
    if isinstance(max_rows_per_file, bool) or not isinstance(max_rows_per_file, int) or max_rows_per_file <= 0:
        raise InvalidInputError(f"max_rows_per_file must be a positive integer, not {max_rows_per_file!r}")
    if not isinstance(schema, pa.Schema):
        raise InvalidInputError(f"schema must be a pyarrow Schema, not {type(schema).__name__}")
    root = dataset_root(uri, storage_options)
    refuse_remote_write(root)
    if not is_remote(root) and os.path.exists(root) and not os.path.isdir(root):
        raise LanceIOError(f"cannot write a dataset at {root}: a file is in the way")
    base, scheme = _latest(root)
    if base is not None:
        check_reader_flags(base.manifest, base.path)
        check_writer_flags(base.manifest, base.path)
        if mode == "create":
            raise InvalidInputError(f"{location_name(root)}: a dataset already exists here (version {base.manifest.version}); "
                                    "use mode='append' or mode='overwrite'")
    elif mode != "create":
        mode = "create"  # append or overwrite on nothing creates, as in the reference
    requested = resolve_version(data_storage_version, for_write=True).name if data_storage_version else None
    if mode == "append":
        current = LanceDataset(root, base, base.manifest.version)
        lance_schema = current._lance_schema
        _check_append_schema(schema, current.schema, root)
        schema = current.schema
        data_format = current.data_storage_version
        file_version = requested or data_format
        resolve_version(file_version, for_write=True)  # a dataset of a version lancefile cannot write
    else:
        lance_schema = LanceSchema.from_arrow(schema)
        # an overwrite keeps the dataset's file version unless told otherwise, as the reference does
        kept = LanceDataset(root, base, base.manifest.version).data_storage_version if base is not None else None
        file_version = requested or kept or resolve_version(None).name
        resolve_version(file_version, for_write=True)
        data_format = file_version
    return WritePlan(root=root, mode=mode, read_version=base.manifest.version if base else 0, scheme=scheme,
                     schema=schema, fields=lance_schema.to_proto().SerializeToString(), file_version=file_version,
                     data_format=data_format, max_rows_per_file=max_rows_per_file, base=base)


def _check_append_schema(got: pa.Schema, want: pa.Schema, root: str) -> None:
    if got.names != want.names:
        raise SchemaMismatchError(f"{location_name(root)}: cannot append columns {got.names} to a dataset with columns {want.names}")
    for a, b in zip(got, want):
        if a.type != b.type and _nullable(a.type) != _nullable(b.type):
            raise SchemaMismatchError(f"{location_name(root)}: cannot append column {a.name!r} of type {a.type} to a dataset "
                                      f"where it is {b.type}")


def _as_field(column: pa.Array, f: pa.Field, root) -> pa.Array:
    """An appended column as the dataset's field ``f`` (they differ at most in nullability)."""
    if column.type == f.type:
        return column
    try:
        return column.cast(f.type)
    except (pa.ArrowException, ValueError) as exc:  # a null where the dataset's field allows none
        raise InvalidInputError(f"{location_name(root)}: cannot append column {f.name!r}: {exc}") from None


def _nullable(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field nullable: the types an append may differ by, at any depth
    as at the top (pylance appends struct<a: int32> to struct<a: int32 not null>; a null where
    the dataset has none is then refused by the file writer)."""
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_nullable(True).with_type(_nullable(t.field(i).type))
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_nullable(t.key_type), _nullable(t.item_type), t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_nullable(True).with_type(_nullable(t.value_type)), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_nullable(True).with_type(_nullable(t.value_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_nullable(True).with_type(_nullable(t.value_type)))
    return t


def _data_file_name() -> str:
    """A random data file name whose first 24 characters are bits, spreading object-store prefixes."""
    u = uuid.uuid4().bytes
    return "".join(f"{b:08b}" for b in u[:3]) + u[3:].hex() + ".lance"


def _batches(data, schema: pa.Schema | None) -> tuple[pa.Schema, Iterable[pa.RecordBatch]]:
    if isinstance(data, pa.Table):
        if schema is not None and not data.schema.equals(schema, check_metadata=False):
            data = data.cast(schema)
        return (schema or data.schema), data.to_batches()
    if isinstance(data, pa.RecordBatch):
        return _batches(pa.Table.from_batches([data]), schema)
    if isinstance(data, pa.RecordBatchReader):
        return (schema or data.schema), data
    if hasattr(data, "__arrow_c_stream__") and not isinstance(data, (list, tuple)):
        reader = pa.RecordBatchReader.from_stream(data)
        return (schema or reader.schema), reader
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        if schema is None:
            try:
                first = next(it)
            except StopIteration:
                raise InvalidInputError("write_dataset got no batches and no schema to create the dataset with") from None
            if not isinstance(first, (pa.RecordBatch, pa.Table)):
                raise InvalidInputError(f"write_dataset takes batches, not {type(first).__name__}")

            def chain():
                yield first
                yield from it

            return first.schema, chain()
        return schema, it
    raise InvalidInputError(f"write_dataset takes a pyarrow Table, RecordBatch, RecordBatchReader or an iterable of "
                            f"RecordBatches, not {type(data).__name__}")


def write_fragments(plan: WritePlan, batches: Iterable[pa.RecordBatch | pa.Table]) -> list[bytes]:
    """Write ``batches`` as new data files of the dataset; returns their fragments (serialized).

    Files hold at most ``plan.max_rows_per_file`` rows, one fragment each, with id 0 (ids are
    handed out at commit). On any failure the files written so far are removed.
    """
    lance_schema = plan.lance_schema()
    dataset_ids = [f.id for f in lance_schema.walk()]
    data_dir = join(plan.root, DATA_DIR)
    major, minor = (int(x) for x in plan.file_version.split("."))
    out: list[table_pb2.DataFragment] = []
    written: list = []
    writer: LanceFileWriter | None = None
    rows = 0

    def finish() -> None:
        nonlocal writer, rows
        w, writer = writer, None
        n = w.close()
        file_ids = [f.id for f in w._lance_schema.walk()]
        to_dataset = dict(zip(file_ids, dataset_ids))
        columns = sorted(w._columns.items(), key=lambda kv: kv[1])
        out.append(table_pb2.DataFragment(
            physical_rows=n,
            files=[table_pb2.DataFile(path=w_name, fields=[to_dataset[f] for f, _ in columns],
                                      column_indices=[c for _, c in columns], file_major_version=major,
                                      file_minor_version=minor, file_size_bytes=w.size_bytes())]))
        rows = 0

    try:
        for batch in batches:
            if isinstance(batch, pa.Table):
                parts = batch.to_batches()
            elif isinstance(batch, pa.RecordBatch):
                parts = [batch]
            else:
                raise InvalidInputError(f"write_dataset takes record batches, not {type(batch).__name__}")
            for part in parts:
                if not part.schema.equals(plan.schema, check_metadata=False):
                    _check_append_schema(part.schema, plan.schema, plan.root)
                    columns = [_as_field(c, f, plan.root) for c, f in zip(part.columns, plan.schema)]
                    part = pa.RecordBatch.from_arrays(columns, schema=plan.schema)
                pos = 0
                while pos < part.num_rows:
                    if writer is None:
                        make_dirs(data_dir)
                        w_name = _data_file_name()
                        path = join(data_dir, w_name)
                        writer = LanceFileWriter(path, plan.schema, version=plan.file_version)
                        written.append(path)
                    take = min(part.num_rows - pos, plan.max_rows_per_file - rows)
                    writer.write_batch(part.slice(pos, take))
                    rows += take
                    pos += take
                    if rows == plan.max_rows_per_file:
                        finish()
        if writer is not None:
            finish()
    except BaseException:
        if writer is not None:
            writer.abort()
        for p in written:
            remove(p)
        raise
    return [f.SerializeToString() for f in out]


def _operation(txn: table_pb2.Transaction | None) -> str | None:
    return None if txn is None else txn.WhichOneof("operation")


def _build(plan: WritePlan, base: LoadedManifest | None, fragments: list[table_pb2.DataFragment],
           txn_name: str) -> tuple[table_pb2.Manifest, bytes | None]:
    """The new version's manifest (on top of ``base``) and the index section it carries over."""
    lance_schema_pb = file_pb2.Schema()
    lance_schema_pb.ParseFromString(plan.fields)
    old = base.manifest if base is not None else None
    m = table_pb2.Manifest()
    m.fields.extend(lance_schema_pb.fields)
    index = None
    if plan.mode == "append":
        m.schema_metadata.update(old.schema_metadata)
        m.fragments.extend(old.fragments)
        index = base.index_section
    else:
        m.schema_metadata.update(lance_schema_pb.metadata)
    next_id = 0
    if old is not None:
        ids = [f.id for f in old.fragments]
        if old.HasField("max_fragment_id"):
            ids.append(old.max_fragment_id)
        next_id = max(ids) + 1 if ids else 0
    if next_id + len(fragments) - 1 > MAX_FRAGMENT_ID:  # the manifest's max_fragment_id is a uint32
        raise CorruptFileError(f"{location_name(plan.root)}: version {old.version} already uses fragment id "
                               f"{next_id - 1}; new fragments would pass the largest a manifest holds "
                               f"({MAX_FRAGMENT_ID})")
    for i, f in enumerate(fragments):
        g = table_pb2.DataFragment()
        g.CopyFrom(f)
        g.id = next_id + i
        m.fragments.append(g)
    if m.fragments or (old is not None and old.HasField("max_fragment_id")):
        m.max_fragment_id = max([f.id for f in m.fragments] + ([old.max_fragment_id] if old is not None and
                                                                old.HasField("max_fragment_id") else []))
    m.version = next_version(old, plan.root)
    now = time.time_ns()
    m.timestamp.seconds, m.timestamp.nanos = divmod(now, 1_000_000_000)
    m.transaction_file = txn_name
    m.writer_version.library = "lancefile"
    m.writer_version.version = _library_version()
    m.data_format.file_format = "lance"
    m.data_format.version = plan.data_format
    if old is not None:
        m.config.update(old.config)
        m.table_metadata.update(old.table_metadata)
    mixed = any(f"{df.file_major_version}.{df.file_minor_version}" != plan.data_format
                for frag in m.fragments for df in frag.files)
    flags = (FLAG_DELETION_FILES if any(f.HasField("deletion_file") for f in m.fragments) else 0) | \
        (FLAG_MIXED_FILE_VERSIONS if mixed or (old is not None and
                                               old.reader_feature_flags & FLAG_MIXED_FILE_VERSIONS) else 0)
    m.reader_feature_flags = flags
    m.writer_feature_flags = flags | (FLAG_TABLE_CONFIG if m.config else 0)
    return m, index


def _transaction(plan: WritePlan, read_version: int, txn_uuid: str,
                 fragments: list[table_pb2.DataFragment]) -> table_pb2.Transaction:
    txn = table_pb2.Transaction(read_version=read_version, uuid=txn_uuid)
    if plan.mode == "append":
        txn.append.fragments.extend(fragments)
    else:
        pb = file_pb2.Schema()
        pb.ParseFromString(plan.fields)
        txn.overwrite.fragments.extend(fragments)
        txn.overwrite.schema.extend(pb.fields)
        txn.overwrite.schema_metadata.update(pb.metadata)
    return txn


MAX_VERSION = (1 << 64) - 1  # Manifest.version is a uint64


def next_version(old: table_pb2.Manifest | None, root) -> int:
    """The version a commit on top of ``old`` makes (1 for a new dataset)."""
    if old is None:
        return 1
    if old.version >= MAX_VERSION:
        raise CorruptFileError(f"{location_name(root)}: version {old.version} is the last a manifest can number; "
                               f"no version can follow it")
    return old.version + 1


def _write_transaction(root, name: str, txn: table_pb2.Transaction):
    directory = join(root, TRANSACTIONS_DIR)
    make_dirs(directory)
    loc = join(directory, name)
    put_file(loc, txn.SerializeToString())
    return loc


def _comparable(fields) -> list:
    """Schema fields as compared for a rebase: an empty ``dictionary`` message (pylance writes
    one on every dictionary field of a manifest; lancefile's schemas have none) says nothing."""
    out = []
    for f in fields:
        if f.HasField("dictionary") and f.dictionary == type(f.dictionary)():
            f = type(f).FromString(f.SerializeToString())
            f.ClearField("dictionary")
        out.append(f)
    return out


def _why_not_rebase(plan: WritePlan, root: str, since: int, latest: LoadedManifest) -> str | None:
    """Why the write cannot go on top of the versions committed after ``since``; None if it can."""
    if plan.mode == "overwrite":
        return None  # an overwrite replaces whatever came in between
    if plan.mode == "create":
        return f"another writer created the dataset (now at version {latest.manifest.version})"
    pb = file_pb2.Schema()
    pb.ParseFromString(plan.fields)
    if _comparable(latest.manifest.fields) != _comparable(pb.fields):
        return f"the schema changed in version {latest.manifest.version}"
    for v, op in newer_operations(root, since, latest):
        if op not in _COMPATIBLE_WITH_APPEND:
            return f"version {v} was made by {'an unknown operation' if op is None else repr(op)}"
    return None


def commit_loop(root, scheme: str, what: str, base: LoadedManifest | None, read_version: int,
                make, why_not_rebase) -> LoadedManifest:
    """Commit one new version, rebasing on newer versions while ``why_not_rebase`` allows.

    ``make(base, read_version, txn_name)`` gives ``(manifest, transaction, index_section)``
    for a version on top of ``base``; ``why_not_rebase(since, latest)`` says why the
    operation cannot go on top of ``latest`` (None if it can). Returns the new version's
    manifest; raises :class:`CommitConflictError` having made nothing visible.
    """
    for _attempt in range(COMMIT_RETRIES):
        txn_name_uuid = str(uuid.uuid4())
        txn_name = f"{read_version}-{txn_name_uuid}.txn"
        manifest, txn, index = make(base, read_version, txn_name, txn_name_uuid)
        txn_path = _write_transaction(root, txn_name, txn)
        try:
            data = encode_manifest(manifest, txn, index)
            done = commit_manifest_file(root, manifest.version, scheme, data)
        except BaseException:  # no version refers to the transaction: it goes too
            remove(txn_path)
            raise
        if done:
            write_hint(root, manifest.version)
            where = join(root, VERSIONS_DIR, manifest_file_name(manifest.version, scheme))
            committed = LoadedManifest(manifest, location_name(where), len(data), index)  # as read back
            committed._inline = txn
            return committed
        remove(txn_path)  # never referenced: another writer took the version
        latest, _scheme = _latest(root)
        if latest is None:
            raise CommitConflictError(f"{location_name(root)}: version {manifest.version} exists but cannot be listed")
        check_writer_flags(latest.manifest, latest.path)
        reason = why_not_rebase(read_version, latest)
        if reason is not None:
            raise CommitConflictError(f"{location_name(root)}: cannot commit this {what} on top of version "
                                      f"{latest.manifest.version}: {reason}; nothing was committed")
        base, read_version = latest, latest.manifest.version
    raise CommitConflictError(f"{location_name(root)}: gave up after {COMMIT_RETRIES} attempts: other writers kept committing first")


def newer_operations(root: str, since: int, latest: LoadedManifest) -> list[tuple[int, str | None]]:
    """(version, operation) of every version after ``since`` up to ``latest`` (None: unknown or missing)."""
    by_version = {m.version: m for m in list_manifests(root)}
    out = []
    for v in range(since + 1, latest.manifest.version + 1):
        if v not in by_version:
            out.append((v, None))
            continue
        loaded = latest if v == latest.manifest.version else read_manifest(by_version[v].path)
        out.append((v, _operation(loaded.transaction(root))))
    return out


def commit_fragments(plan: WritePlan, fragments: list[bytes]) -> LanceDataset:
    """Commit the fragments written for ``plan`` as one new version; returns the dataset at it."""
    committed = _commit(plan, fragments)
    return LanceDataset(plan.root, committed, committed.manifest.version)


def _commit(plan: WritePlan, fragments: list[bytes]) -> LoadedManifest:
    """Commit; returns the new version's manifest (or raises, having made nothing visible)."""
    frags = []
    for raw in fragments:
        f = table_pb2.DataFragment()
        f.ParseFromString(raw)
        frags.append(f)
    root = plan.root
    base = plan.base if plan.base is not None and plan.base.manifest.version == plan.read_version else None
    if plan.read_version and base is None:
        manifests = {m.version: m for m in list_manifests(root)}
        if plan.read_version not in manifests:
            raise CommitConflictError(f"{location_name(root)}: version {plan.read_version}, which this write builds on, is gone")
        base = read_manifest(manifests[plan.read_version].path)

    def make(base, read_version, txn_name, txn_uuid):
        txn = _transaction(plan, read_version, txn_uuid, frags)
        manifest, index = _build(plan, base, frags, txn_name)
        return manifest, txn, index

    return commit_loop(root, plan.scheme, plan.mode, base, plan.read_version, make,
                       lambda since, latest: _why_not_rebase(plan, root, since, latest))


def write_dataset(data, uri, *, mode: str = "create", schema: pa.Schema | None = None,
                  max_rows_per_file: int = DEFAULT_MAX_ROWS_PER_FILE, data_storage_version: str | None = None,
                  storage_options: dict | None = None) -> LanceDataset:
    """Write ``data`` as a new version of the dataset at ``uri`` (``lance.write_dataset``-like).

    Parameters
    ----------
    data:
        A Table, RecordBatch, RecordBatchReader, or an iterable of RecordBatches.
    mode:
        ``"create"`` (the default; an error if a dataset exists), ``"append"`` or
        ``"overwrite"``. Append and overwrite create the dataset when there is none.
    schema:
        The schema to write (data is cast to it); by default the data's.
    max_rows_per_file:
        Rows per data file (= per fragment).
    data_storage_version:
        The Lance file version of new data files: ``"2.2"`` (the default, as pylance's
        ``"stable"``), ``"2.1"`` or ``"2.0"``; appends default to the dataset's version.

    Returns the dataset at the version committed. On failure no new version appears and the
    data files written for it are removed.

    Example::

        >>> import pyarrow as pa, lancefile, tempfile
        >>> root = tempfile.mkdtemp()
        >>> ds = lancefile.write_dataset(pa.table({"x": [1, 2]}), root)
        >>> ds = lancefile.write_dataset(pa.table({"x": [3]}), root, mode="append")
        >>> ds.version, ds.to_table().column("x").to_pylist()
        (2, [1, 2, 3])
    """
    schema, batches = _batches(data, schema)
    plan = plan_write(uri, schema, mode=mode, max_rows_per_file=max_rows_per_file,
                      data_storage_version=data_storage_version, storage_options=storage_options)
    made = _new_directories(plan.root)
    try:
        fragments = write_fragments(plan, batches)
        try:
            committed = _commit(plan, fragments)
        except BaseException:
            _remove_files(plan.root, fragments)
            raise
    except BaseException:
        for directory in made:  # a failed create leaves no empty dataset folders behind
            try:
                os.rmdir(directory)  # only if still empty
            except OSError:
                pass
        raise
    return LanceDataset(plan.root, committed, committed.manifest.version)


def _new_directories(root) -> list[str]:
    """The local directories a write may make under ``root`` (and ``root``) that do not exist
    yet, innermost first: what to remove again, when empty, after a failure."""
    if is_remote(root):
        return []
    subdirs = [join(root, d) for d in (DATA_DIR, TRANSACTIONS_DIR, VERSIONS_DIR)]
    return [d for d in [*subdirs, root] if not os.path.exists(d)]


def _remove_files(root, fragments: list[bytes]) -> None:
    for raw in fragments:
        f = table_pb2.DataFragment()
        f.ParseFromString(raw)
        for df in f.files:
            remove(join(root, DATA_DIR, df.path))
