"""Reading a Lance dataset: :func:`dataset` and :class:`LanceDataset`.

A dataset is a directory: ``_versions/`` holds one manifest per version, ``data/`` the Lance
files, ``_deletions/`` the deletion vectors. A version's manifest lists its schema and
fragments; this module reads any version, honouring deletions, columns added later (other
data files of a fragment) and fragments whose files have different Lance file versions.

Example::

    >>> import pyarrow as pa, lancefile, tempfile
    >>> uri = tempfile.mkdtemp()
    >>> _ = lancefile.write_dataset(pa.table({"id": [1, 2, 3]}), uri)
    >>> _ = lancefile.write_dataset(pa.table({"id": [4]}), uri, mode="append")
    >>> ds = lancefile.dataset(uri)
    >>> ds.version, ds.count_rows(), ds.to_table().column("id").to_pylist()
    (2, 4, [1, 2, 3, 4])
    >>> lancefile.dataset(uri, version=1).count_rows()
    3
    >>> ds.take([3, 0]).column("id").to_pylist()
    [4, 1]
"""

from __future__ import annotations

import datetime as _dt
import os
import posixpath
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa

from .._proto import file_pb2, table_pb2
from ..errors import CorruptFileError, InvalidInputError, LanceIOError, UnsupportedVersionError
from ..encodings.arrowutil import empty_table, unslice
from .._gcpause import gc_paused
from ..fieldtasks import decode_here
from ..format.schema import LanceSchema
from ..predicate import check_filter, filter_rows, to_expression
from .fragment import LanceFragment, Projection, _parents, _top_of, check_positions, record_batch
from .manifest import LoadedManifest, check_reader_flags, list_manifests, read_manifest
from . import storage
from .storage import dataset_root, is_remote, join, list_names, refuse_remote_write

__all__ = ["LanceDataset", "LanceScanner", "dataset", "dataset_root"]

DEFAULT_BATCH_SIZE = 1024
FRAGMENT_THREADS = max(1, min(4, os.cpu_count() or 1))  # fragments read at once by to_table and take
PARALLEL_FRAGMENT_BYTES = 512 << 10  # local fragments smaller than this (the bytes read) are read one by one
_FRAGMENT_POOL: ThreadPoolExecutor | None = None  # separate from the file readers' pool, which these threads use
_POOL_LOCK = threading.Lock()


def dataset(uri, *, version: int | None = None, storage_options: dict | None = None) -> "LanceDataset":
    """Open a Lance dataset at its latest version, or at ``version``.

    ``uri`` is a local path or an ``s3://``, ``gs://``, ``az://``, ``memory://`` URI, with
    ``storage_options`` in pylance's keys for object stores (see :mod:`lancefile.objectstore`).
    Raises :class:`LanceIOError` when ``uri`` holds no dataset, and :class:`InvalidInputError`
    when the version does not exist.

    Example::

        >>> import pyarrow as pa, lancefile, tempfile
        >>> uri = tempfile.mkdtemp()
        >>> _ = lancefile.write_dataset(pa.table({"id": [1, 2]}), uri)
        >>> lancefile.dataset(uri).to_table().column("id").to_pylist()
        [1, 2]
    """
    root = dataset_root(uri, storage_options)
    return LanceDataset._open(root, version)


class LanceDataset:
    """One version of a Lance dataset (``lance.LanceDataset``-like; read with :func:`dataset`).

    Methods read only the files the asked-for columns live in; deleted rows never appear.

    Example::

        >>> import pyarrow as pa, pyarrow.compute as pc, lancefile, tempfile
        >>> root = tempfile.mkdtemp()
        >>> _ = lancefile.write_dataset(pa.table({"id": list(range(6))}), root, max_rows_per_file=4)
        >>> ds = lancefile.dataset(root).delete(pc.field("id") == 2)
        >>> ds.version, ds.count_rows(), len(ds.get_fragments())
        (2, 5, 2)
        >>> ds.take([0, 2]).column("id").to_pylist(), lancefile.dataset(root, version=1).count_rows()
        ([0, 3], 6)
    """

    def __init__(self, root, loaded: LoadedManifest, latest: int) -> None:
        self._root = root  # a local path, or an ObjectStore (lancefile.datasets.storage)
        self._loaded = loaded
        m = loaded.manifest
        self._manifest = m
        self._latest = latest
        try:
            self._lance_schema = LanceSchema.from_proto(
                file_pb2.Schema(fields=m.fields, metadata=dict(m.schema_metadata)), path=loaded.path)
            # (extension metadata that does not fit its field's type fails here: ArrowInvalid is a ValueError)
            self.schema: pa.Schema = self._lance_schema.to_arrow()
        except (ValueError, TypeError) as exc:
            raise CorruptFileError(f"{loaded.path}: the schema does not hold together: {exc}") from None
        self._top_of = _top_of(self._lance_schema)
        self._parent_of = _parents(self._lance_schema)
        self._by_id = {f.id: f for f in self._lance_schema.walk()}
        self._paths = {fid: ".".join(f.name for f in chain) for fid, chain in _chains(self._lance_schema).items()}
        legacy = m.data_format.version.startswith("0.") or any(
            df.file_major_version == 0 for f in m.fragments for df in f.files)
        if legacy:
            raise UnsupportedVersionError(
                f"{loaded.path}: this dataset version holds legacy (v1, Lance 0.x) data files, which lancefile "
                "does not read; rewrite it with data_storage_version='2.0' or later")
        self._fragments = [LanceFragment(self, f) for f in m.fragments]
        ids = [f.fragment_id for f in self._fragments]
        if len(set(ids)) != len(ids):
            raise CorruptFileError(f"{loaded.path}: two fragments have the same id")

    @classmethod
    def _open(cls, root, version: int | None) -> "LanceDataset":
        manifests = list_manifests(root)
        if not manifests:
            if is_remote(root):
                if list_names(join(root, "_versions")) is None and list_names(root) is None:
                    raise LanceIOError(f"{root.uri}: no such dataset (nothing at this URI)")
                raise LanceIOError(f"{root.uri}: not a Lance dataset (no manifests in {root.uri}/_versions)")
            if not os.path.exists(root):
                raise LanceIOError(f"{root}: no such dataset (the path does not exist)")
            if not os.path.isdir(root):
                raise LanceIOError(f"{root}: not a Lance dataset (a file, not a directory; "
                                   "read a Lance file with lancefile.read_table)")
            raise LanceIOError(f"{root}: not a Lance dataset (no manifests in {os.path.join(root, '_versions')})")
        latest = manifests[-1].version
        if version is None:
            chosen = manifests[-1]
        else:
            if isinstance(version, bool) or not isinstance(version, (int, np.integer)):
                raise InvalidInputError(f"version must be an integer, not {version!r}")
            chosen = next((m for m in manifests if m.version == version), None)
            if chosen is None:
                raise InvalidInputError(f"{storage.name(root)}: dataset has no version {version} "
                                        f"(versions: {', '.join(str(m.version) for m in manifests)})")
        loaded = read_manifest(chosen.path)
        if loaded.manifest.version != chosen.version:
            raise CorruptFileError(f"{chosen.path}: the manifest says version {loaded.manifest.version} but its "
                                   f"name says {chosen.version}")
        check_reader_flags(loaded.manifest, chosen.path)
        return cls(root, loaded, latest)

    # -- versions -----------------------------------------------------------------------------
    @property
    def uri(self) -> str:
        """The path or URI the dataset was opened at."""
        return storage.name(self._root)

    @property
    def version(self) -> int:
        """The version this object reads."""
        return self._manifest.version

    @property
    def latest_version(self) -> int:
        """The newest version when this object was opened."""
        return self._latest

    @property
    def data_storage_version(self) -> str:
        """The Lance file version of the dataset's data files (``"2.2"``, ``"2.0"``...)."""
        fmt = self._manifest.data_format.version
        if fmt:
            return fmt
        for f in self._manifest.fragments:
            for df in f.files:
                return f"{df.file_major_version}.{df.file_minor_version}"
        return "2.2"

    @property
    def timestamp(self) -> _dt.datetime:
        """When this version was committed (UTC)."""
        return _timestamp(self._manifest, self._loaded.path)

    def versions(self) -> list[dict]:
        """Every version: ``{"version", "timestamp", "metadata"}`` dicts, oldest first."""
        out = []
        for m in list_manifests(self._root):
            loaded = read_manifest(m.path)
            out.append({"version": loaded.manifest.version, "timestamp": _timestamp(loaded.manifest, loaded.path),
                        "metadata": dict(loaded.manifest.table_metadata)})
        return out

    def checkout_version(self, version: int) -> "LanceDataset":
        """The same dataset at another version."""
        return LanceDataset._open(self._root, version)

    # -- fragments ----------------------------------------------------------------------------
    def get_fragments(self) -> list[LanceFragment]:
        """The fragments of this version, in scan order."""
        return list(self._fragments)

    def get_fragment(self, fragment_id: int) -> LanceFragment | None:
        """The fragment with id ``fragment_id`` in this version; None if it has none."""
        return next((f for f in self._fragments if f.fragment_id == fragment_id), None)

    def count_rows(self, filter=None) -> int:
        """Live rows of this version (deleted rows are not counted), or those matching ``filter``."""
        if filter is None:
            return sum(f.count_rows() for f in self._fragments)
        return sum(b.num_rows for b in self.to_batches(columns=[], batch_size=1 << 16, filter=filter))

    def __len__(self) -> int:
        return self.count_rows()

    # -- reading ------------------------------------------------------------------------------
    def _scan(self, columns, filter) -> tuple[Projection, Projection, object]:
        """(output projection, projection read, filter expression or None)."""
        projection = Projection(self._lance_schema, self.schema, columns)
        expr = to_expression(filter, self.schema)
        if expr is None:
            return projection, projection, None
        fields = check_filter(expr, self.schema, self.uri)
        needed = self.schema.names if fields is None else sorted({p[0] for p in fields})
        have = {f.name for f, keep in projection.fields if keep is None}
        extra = [n for n in needed if n not in have]
        if not extra:
            return projection, projection, expr
        names = list(columns if columns is not None else self.schema.names)
        if isinstance(columns, str):
            names = [columns]
        return projection, Projection(self._lance_schema, self.schema, names + extra), expr

    def _fragment_batches(self, frag: LanceFragment, scan, batch_size: int) -> Iterator[pa.RecordBatch]:
        out, read, expr = scan
        if expr is None:
            yield from frag.to_batches(batch_size=batch_size, _projection=out)
            return
        width = len(out.fields)
        for a, b in frag.matching_ranges(expr):
            for batch in frag.to_batches(batch_size=batch_size, start=a, stop=b, _projection=read):
                batch = filter_rows(batch, expr)
                if read is not out:
                    batch = record_batch(batch.columns[:width], out.schema, batch.num_rows)
                if batch.num_rows:
                    yield batch

    def to_batches(self, columns: Sequence[str] | None = None, *, batch_size: int = DEFAULT_BATCH_SIZE,
                   filter=None, offset: int | None = None, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the live rows, fragment after fragment, as batches of at most ``batch_size`` rows.

        ``filter`` (a ``pyarrow.compute.Expression``, a DNF list or SQL text, as in
        :func:`lancefile.read_table`) keeps the matching rows only; zones whose statistics
        rule it out are not read. ``offset`` skips that many of the rows (after the filter),
        ``limit`` stops after that many, as pylance's; without a filter, the fragments and
        rows before ``offset`` are not read.

        Example::

            >>> import lancefile, pyarrow as pa, tempfile, os
            >>> uri = os.path.join(tempfile.mkdtemp(), "d.lance")
            >>> ds = lancefile.write_dataset(pa.table({"a": list(range(10))}), uri, max_rows_per_file=4)
            >>> [b["a"].to_pylist() for b in ds.to_batches(offset=3, limit=4)]
            [[3], [4, 5, 6]]
        """
        batch_size = _check_batch_size(batch_size)
        scan = self._scan(columns, filter)
        skip, left = _check_window(offset, limit)
        if left is None and not skip:
            for frag in self._fragments:
                yield from self._fragment_batches(frag, scan, batch_size)
            return
        for frag in self._fragments:
            if left == 0:
                return
            if scan[2] is None:  # no filter: the window is found from the fragments' live counts
                live = frag.count_rows()
                if skip >= live:
                    skip -= live
                    continue
                stop = live if left is None else min(live, skip + left)
                first, last = (int(x) for x in frag.live_offsets(np.array([skip, stop - 1], np.int64)))
                batches = frag.to_batches(batch_size=batch_size, start=first, stop=last + 1, _projection=scan[0])
                skip = 0
            else:
                batches = self._fragment_batches(frag, scan, batch_size)
            for batch in batches:
                if skip >= batch.num_rows:
                    skip -= batch.num_rows
                    continue
                batch = batch.slice(skip, None if left is None else left)
                skip = 0
                if left is not None:
                    left -= batch.num_rows
                if batch.num_rows:
                    yield batch
                if left == 0:
                    return

    def to_table(self, columns: Sequence[str] | None = None, *, batch_size: int = 1 << 16,
                 filter=None, offset: int | None = None, limit: int | None = None) -> pa.Table:
        """All live rows (or the given columns, or the rows matching ``filter``) as one Table;
        ``offset`` and ``limit`` cut a window of them, as in :meth:`to_batches`.

        Example::

            >>> import lancefile, pyarrow as pa, tempfile, os
            >>> uri = os.path.join(tempfile.mkdtemp(), "d.lance")
            >>> ds = lancefile.write_dataset(pa.table({"a": list(range(10))}), uri, max_rows_per_file=4)
            >>> ds.to_table(filter=pa.compute.field("a") >= 5, offset=1, limit=2)["a"].to_pylist()
            [6, 7]
        """
        batch_size = _check_batch_size(batch_size)
        scan = self._scan(columns, filter)
        if offset is not None or limit is not None:
            batches = self.to_batches(columns, batch_size=batch_size, filter=filter, offset=offset, limit=limit)
            return pa.Table.from_batches(list(batches), schema=scan[0].schema)
        share = len(scan[1].fields) / max(1, len(self.schema))
        parts = _map_fragments(lambda frag: list(self._fragment_batches(frag, scan, batch_size)), self._fragments,
                               _worth_threads(self._root, self._fragments, share))
        return pa.Table.from_batches([b for part in parts for b in part], schema=scan[0].schema)

    def head(self, num_rows: int, columns: Sequence[str] | None = None, *, filter=None) -> pa.Table:
        """The first ``num_rows`` live rows (matching ``filter``), as pylance's ``head``; reads
        only the fragments and rows they come from.

        Example::

            >>> import lancefile, pyarrow as pa, tempfile, os
            >>> uri = os.path.join(tempfile.mkdtemp(), "d.lance")
            >>> lancefile.write_dataset(pa.table({"a": [1, 2, 3]}), uri).head(2)["a"].to_pylist()
            [1, 2]
        """
        return self.to_table(columns, filter=filter, limit=num_rows)

    def to_reader(self, columns: Sequence[str] | None = None, *, batch_size: int = DEFAULT_BATCH_SIZE,
                  filter=None, offset: int | None = None, limit: int | None = None) -> pa.RecordBatchReader:
        """A ``pyarrow.RecordBatchReader`` over the live rows (as :meth:`to_batches`), read as pulled."""
        scan = self._scan(columns, filter)
        _check_window(offset, limit)
        return pa.RecordBatchReader.from_batches(
            scan[0].schema, self.to_batches(columns, batch_size=batch_size, filter=filter, offset=offset, limit=limit))

    def scanner(self, columns: Sequence[str] | None = None, *, filter=None, limit: int | None = None,
                offset: int | None = None, batch_size: int = DEFAULT_BATCH_SIZE) -> "LanceScanner":
        """A scan to run later, as pylance's ``scanner``: its arguments are checked now; it runs
        with ``to_table()``, ``to_batches()``, ``to_reader()`` or ``count_rows()``.

        Example::

            >>> import lancefile, pyarrow as pa, tempfile, os
            >>> uri = os.path.join(tempfile.mkdtemp(), "d.lance")
            >>> ds = lancefile.write_dataset(pa.table({"a": list(range(10))}), uri)
            >>> sc = ds.scanner(filter="a >= 4", limit=3)
            >>> sc.projected_schema.names, sc.count_rows(), sc.to_table()["a"].to_pylist()
            (['a'], 3, [4, 5, 6])
        """
        return LanceScanner(self, columns, filter, limit, offset, batch_size)

    def take(self, indices, columns: Sequence[str] | None = None) -> pa.Table:
        """Rows at ``indices``: positions among the live rows of this version, in the order given."""
        projection = Projection(self._lance_schema, self.schema, columns)
        live = np.array([f.count_rows() for f in self._fragments], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(live)])
        idx = check_positions(indices, int(starts[-1]), f"{self.uri} take")
        if not len(idx):
            return empty_table(projection.schema)
        if not len(projection.schema):  # no columns: only the count (Arrow's concat and take lose it)
            return pa.Table.from_batches([record_batch([], projection.schema, len(idx))])
        which = np.searchsorted(starts, idx, side="right") - 1
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(len(self._fragments) + 1))
        work = [(k, order[bounds[k]:bounds[k + 1]]) for k in range(len(self._fragments)) if bounds[k + 1] > bounds[k]]

        def take_from(item):
            k, sel = item
            frag = self._fragments[k]
            return frag._take_physical(frag.live_offsets(idx[sel] - starts[k]), projection)

        pieces = _map_fragments(take_from, work, is_remote(self._root))  # locally, a few rows a fragment: GIL-bound
        placed = [sel for _, sel in work]
        table = pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]
        positions = np.concatenate(placed)
        if len(pieces) > 1 or np.any(positions != np.arange(len(positions))):
            back = np.empty_like(positions)
            back[positions] = np.arange(len(positions))
            table = unslice(table).take(pa.array(back))
        return table

    # -- changing -----------------------------------------------------------------------------
    def delete(self, filter) -> "LanceDataset":
        """Delete the rows matching ``filter`` (an Expression, DNF list or SQL text such as
        ``"id < 100"``, as pylance's ``delete``); returns the dataset at the new version.

        Writes deletion files (the rows themselves stay in their data files until compaction,
        as in the reference); when nothing matches, no version is made.
        """
        from .delete import delete_rows

        refuse_remote_write(self._root, "delete rows of the dataset")
        committed = delete_rows(self, filter)
        return self if committed is None else LanceDataset(self._root, committed, committed.manifest.version)

    def cleanup_orphans(self, *, older_than_seconds: float = 3600.0, dry_run: bool = False) -> list[str]:
        """Remove files no version refers to: what writes killed mid-way leave behind.

        A write that fails in Python removes its own files; a process killed while writing
        can leave data files, deletion files, transaction files and temporary files that no
        manifest names. This removes those last modified more than ``older_than_seconds``
        ago (so writes in progress are never touched), in ``data/``, ``_deletions/``,
        ``_transactions/`` and ``_versions/``; manifests and everything any version refers to
        stay. Returns the paths removed (or that would be, with ``dry_run``).
        """
        import time as _time

        from .deletion import DELETIONS_DIR, deletion_file_name
        from .manifest import VERSIONS_DIR

        from . import storage

        refuse_remote_write(self._root, "remove files of the dataset")
        keep: dict[str, set[str]] = {"data": set(), DELETIONS_DIR: set(), "_transactions": set()}
        versions = storage.join(self._root, VERSIONS_DIR)
        # detached versions (pylance's commit(detached=True): _versions/d<N>.manifest) keep their files too
        detached = [storage.join(versions, n) for n in storage.list_names(versions) or []
                    if n.startswith("d") and n.endswith(".manifest") and n[1:-len(".manifest")].isdigit()]
        for path in [m.path for m in list_manifests(self._root)] + detached:
            loaded = read_manifest(path)
            if loaded.manifest.transaction_file:
                keep["_transactions"].add(os.path.basename(loaded.manifest.transaction_file))
            for f in loaded.manifest.fragments:
                keep["data"].update(posixpath.normpath(df.path) for df in f.files)
                if f.HasField("deletion_file"):
                    keep[DELETIONS_DIR].add(deletion_file_name(f.id, f.deletion_file))
        cutoff = _time.time() - older_than_seconds
        removed = []
        for sub in ("data", DELETIONS_DIR, "_transactions", VERSIONS_DIR):
            directory = storage.join(self._root, sub)
            for name, mtime in storage.list_files(directory):
                if name in keep.get(sub, ()) or (sub == VERSIONS_DIR and (name.endswith(".manifest") or
                                                                           name.endswith(".json"))):
                    continue  # (a manifest, attached or not, is never an orphan)
                if mtime > cutoff:
                    continue
                loc = storage.join(directory, name)
                if not dry_run:
                    storage.remove(loc)
                removed.append(storage.name(loc))
        return removed

    def __repr__(self) -> str:
        return (f"LanceDataset({self.uri!r}, version={self.version}, fragments={len(self._fragments)}, "
                f"schema={self.schema.names})")


class LanceScanner:
    """A scan of one dataset version, made by :meth:`LanceDataset.scanner`."""

    def __init__(self, ds: LanceDataset, columns, filter, limit, offset, batch_size: int) -> None:
        self._scan = ds._scan(columns, filter)  # columns and filter checked here, not when it runs
        self._skip, self._limit = _check_window(offset, limit)
        self._kw = dict(batch_size=_check_batch_size(batch_size), filter=filter, offset=offset, limit=limit)
        self._ds, self._columns = ds, columns

    @property
    def projected_schema(self) -> pa.Schema:
        """The schema of the rows it returns."""
        return self._scan[0].schema

    @property
    def dataset_schema(self) -> pa.Schema:
        return self._ds.schema

    def to_table(self) -> pa.Table:
        return self._ds.to_table(self._columns, **self._kw)

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        return self._ds.to_batches(self._columns, **self._kw)

    def to_reader(self) -> pa.RecordBatchReader:
        return self._ds.to_reader(self._columns, **self._kw)

    def count_rows(self) -> int:
        """The rows it returns (without reading them when there is no filter)."""
        total = self._ds.count_rows(self._kw["filter"])
        total = max(0, total - self._skip)
        return total if self._limit is None else min(total, self._limit)

    def __repr__(self) -> str:
        return f"LanceScanner({self._ds.uri!r}, columns={self.projected_schema.names}, {self._kw})"


def _chains(schema: LanceSchema) -> dict[int, list]:
    """field id -> the fields from the top down to it."""
    out: dict[int, list] = {}

    def visit(f, above: list) -> None:
        out[f.id] = above + [f]
        for c in f.children:
            visit(c, out[f.id])

    for f in schema.fields:
        visit(f, [])
    return out


def _map_fragments(fn, items: list, parallel: bool = True) -> list:
    """``[fn(x) for x in items]``, on :data:`FRAGMENT_THREADS` threads when there are several
    and ``parallel`` (see :func:`_worth_threads`).

    Fragments are independent files: reading two at once overlaps their I/O and decoding
    (which release the GIL), as the reference scans fragments in parallel. Results keep
    the order of ``items``. The cyclic collector is paused for the whole call, as for one
    file's read (:mod:`lancefile._gcpause`): with each fragment's read switching it back
    on, a scan of 2,000 small fragments spent 0.6 of its 1.6 s in collections.
    """
    with gc_paused():
        if len(items) < 2 or FRAGMENT_THREADS < 2 or not parallel:
            return [fn(x) for x in items]
        global _FRAGMENT_POOL
        with _POOL_LOCK:
            if _FRAGMENT_POOL is None:
                _FRAGMENT_POOL = ThreadPoolExecutor(FRAGMENT_THREADS, thread_name_prefix="lancefile-fragment")

        def run(x):
            with decode_here():  # the fragments keep the cores busy: no read pool under them
                return fn(x)

        return list(_FRAGMENT_POOL.map(run, items))


def _worth_threads(root, fragments: list, share: float) -> bool:
    """Whether reading ``fragments`` (``share`` of each file's bytes wanted) on several threads
    pays: always for an object store (the requests' latency overlaps), on local files only
    when a fragment holds enough to decode (:data:`PARALLEL_FRAGMENT_BYTES` on average).
    Small fragments are Python work under the GIL: two threads over 200 fragments of 1,000
    rows took 250 ms where one took 160."""
    if is_remote(root):
        return True
    if len(fragments) < 2:
        return False
    total = 0
    for frag in fragments:
        size = sum(df.file_size_bytes for df in frag.metadata.files)
        total += size if size else 8 * frag.physical_rows * max(1, len(frag.metadata.files[0].fields)
                                                                 if frag.metadata.files else 1)
    return total * share >= PARALLEL_FRAGMENT_BYTES * len(fragments)


def _forget_pool() -> None:
    global _FRAGMENT_POOL, _POOL_LOCK
    _FRAGMENT_POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


_EPOCH = _dt.datetime(1970, 1, 1)


def _timestamp(m: table_pb2.Manifest, path: str) -> _dt.datetime:
    ts = m.timestamp
    try:  # nanoseconds cut to microseconds, as pylance mostly gives them (rounding made half 1 us later)
        return _EPOCH + _dt.timedelta(seconds=ts.seconds, microseconds=ts.nanos // 1000)
    except (OverflowError, ValueError, OSError):  # seconds past what a datetime (or the platform) holds
        raise CorruptFileError(f"{path}: the version's timestamp ({ts.seconds} s) is not a date") from None


def _check_window(offset, limit) -> tuple[int, int | None]:
    """(rows to skip, rows to return or None for all) from ``offset`` and ``limit``."""
    for name, v in (("offset", offset), ("limit", limit)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0):
            raise InvalidInputError(f"{name} must be a non-negative integer, not {v!r}")
    return (0 if offset is None else int(offset)), (None if limit is None else int(limit))


def _check_batch_size(batch_size) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
        raise InvalidInputError(f"batch_size must be a positive integer, not {batch_size!r}")
    return int(batch_size)
