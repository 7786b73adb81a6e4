"""Deleting rows from a dataset: :meth:`LanceDataset.delete`.

Rows are never rewritten: each fragment with newly matching rows gets a new deletion file
holding all its deleted offsets (old and new), as the reference does; a fragment left with
no live row is dropped from the version. The new version's transaction is a ``Delete``, so
the reference's conflict checks understand it. A concurrent append is rebased over; any
other concurrent change raises :class:`~lancefile.CommitConflictError`.

Example::

    >>> import pyarrow as pa, pyarrow.compute as pc, lancefile, tempfile
    >>> ds = lancefile.write_dataset(pa.table({"id": list(range(10))}), tempfile.mkdtemp())
    >>> ds = ds.delete(pc.field("id") < 3)
    >>> ds.version, ds.count_rows(), ds.to_table().column("id").to_pylist()[:2]
    (2, 7, [3, 4])
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa

from .._proto import table_pb2
from ..errors import InvalidInputError
from ..predicate import check_filter, filter_rows, to_expression
from .deletion import BITMAP_THRESHOLD, write_deletion_file
from .manifest import FLAG_DELETION_FILES, LoadedManifest, check_writer_flags
from .write import _library_version, commit_loop, newer_operations, next_version

__all__ = ["delete_rows"]

_ROW = "__lancefile_offset"


def _matching_offsets(frag, expr, columns: list[str]) -> np.ndarray:
    """Physical offsets of the fragment's live rows that match ``expr``."""
    found = []
    for a, b in frag.matching_ranges(expr):
        pos = a
        for batch in frag.to_batches(columns=columns, start=a, stop=b, with_deleted=True, batch_size=1 << 16):
            n = batch.num_rows
            rows = batch.append_column(_ROW, pa.array(np.arange(pos, pos + n, dtype=np.int64)))
            found.append(filter_rows(rows, expr).column(_ROW).to_numpy())
            pos += n
    hits = np.concatenate(found) if found else np.zeros(0, np.int64)
    return np.setdiff1d(hits, frag.deleted_offsets().astype(np.int64), assume_unique=False)


def delete_rows(ds, filter) -> LoadedManifest | None:
    """Delete the rows of ``ds`` matching ``filter``; returns the new version's manifest (None: no row matched)."""
    expr = to_expression(filter, ds.schema)
    if expr is None:
        raise InvalidInputError("delete needs a predicate; to remove every row, overwrite the dataset")
    fields = check_filter(expr, ds.schema, ds.uri)
    check_writer_flags(ds._manifest, ds._loaded.path)
    columns = ds.schema.names if fields is None else sorted({p[0] for p in fields})
    read_version = ds.version
    updated: dict[int, table_pb2.DataFragment] = {}
    removed: list[int] = []
    for frag in ds.get_fragments():
        new = _matching_offsets(frag, expr, columns)
        if not len(new):
            continue
        offsets = np.union1d(frag.deleted_offsets().astype(np.int64), new)
        if len(offsets) == frag.physical_rows:
            removed.append(frag.fragment_id)
            continue
        fresh = not frag.metadata.HasField("deletion_file")
        kind = "arrow" if fresh and len(offsets) < BITMAP_THRESHOLD else ("bitmap" if not fresh else None)
        info = write_deletion_file(ds._root, frag.fragment_id, read_version, offsets, kind=kind)
        pb = table_pb2.DataFragment()
        pb.CopyFrom(frag.metadata)
        pb.deletion_file.CopyFrom(info)
        updated[frag.fragment_id] = pb
    if not updated and not removed:
        return None
    predicate = str(expr)

    def make(base: LoadedManifest, base_version: int, txn_name: str, txn_uuid: str):
        old = base.manifest
        m = table_pb2.Manifest()
        m.CopyFrom(old)
        del m.fragments[:]
        for f in old.fragments:
            if f.id in removed:
                continue
            m.fragments.append(updated.get(f.id, f))
        m.version = next_version(old, ds._root)
        now = time.time_ns()
        m.timestamp.seconds, m.timestamp.nanos = divmod(now, 1_000_000_000)
        m.transaction_file = txn_name
        m.writer_version.library = "lancefile"
        m.writer_version.version = _library_version()
        m.writer_version.ClearField("prerelease")
        m.writer_version.ClearField("build_metadata")
        has_deletions = any(f.HasField("deletion_file") for f in m.fragments)
        for name in ("reader_feature_flags", "writer_feature_flags"):
            flags = getattr(m, name) & ~FLAG_DELETION_FILES
            setattr(m, name, flags | (FLAG_DELETION_FILES if has_deletions else 0))
        txn = table_pb2.Transaction(read_version=base_version, uuid=txn_uuid)
        txn.delete.updated_fragments.extend(updated.values())
        txn.delete.deleted_fragment_ids.extend(removed)
        txn.delete.predicate = predicate
        return m, txn, base.index_section

    def why_not(since: int, latest: LoadedManifest) -> str | None:
        for v, op in newer_operations(ds._root, since, latest):
            if op != "append":
                return f"version {v} was made by {'an unknown operation' if op is None else repr(op)}"
        return None

    return commit_loop(ds._root, _scheme(ds), "delete", ds._loaded, read_version, make, why_not)


def _scheme(ds) -> str:
    from .storage import name

    return "v2" if len(name(ds._loaded.path).rsplit("/", 1)[-1]) == 29 else "v1"
