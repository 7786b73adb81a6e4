"""Fragments: the rows of a dataset version, stored in one or more data files plus deletions.

A fragment's data files each hold some of the schema's fields (columns added later live in
files of their own) for the same ``physical_rows`` rows; ``DataFile.fields[i]`` is stored in
the file's column ``column_indices[i]``. Deleted rows are listed by offset in a deletion file.
A field that no data file of a fragment holds reads as nulls, as in the reference.
"""

from __future__ import annotations

import os
import threading
from typing import Iterator

import numpy as np
import pyarrow as pa

from .._proto import table_pb2
from ..errors import CorruptFileError, InvalidInputError, LanceIOError
from ..format.schema import LanceField, LanceSchema
from ..encodings.arrowutil import filter_batch
from ..reader import LanceFileReader
from . import storage
from .deletion import read_deletion_vector

__all__ = ["LanceFragment", "DATA_DIR", "Projection", "check_positions", "record_batch"]

DATA_DIR = "data"


# What a dataset's blob-v2 column reads as (pylance 14.0.2's ``to_table``/``take``): each row's
# descriptor, as the data files store it; the bytes are fetched through it, not read inline
BLOB_V2_EXTENSION = b"lance.blob.v2"
BLOB_V2_DESCRIPTOR = pa.struct([pa.field("kind", pa.uint8(), False), pa.field("position", pa.uint64(), False),
                                pa.field("size", pa.uint64(), False), pa.field("blob_id", pa.uint32(), False),
                                pa.field("blob_uri", pa.string(), False)])
_BLOB_V2_METADATA = {b"lance-encoding:packed": b"true", b"lance-encoding:blob": b"true"}


def is_blob_v2(f: LanceField) -> bool:
    """A dataset field that is a blob-v2 column (a struct of data and uri, typed
    ``lance.blob.v2``), whose data files hold one descriptor a row."""
    name = f.metadata.get("ARROW:extension:name")
    return f.logical_type == "struct" and (name.encode() if isinstance(name, str) else name) == BLOB_V2_EXTENSION


def _as_read(f: LanceField, field: pa.Field) -> pa.Field:
    """The Arrow field a read returns for dataset field ``f`` (``field`` its schema's)."""
    return pa.field(field.name, BLOB_V2_DESCRIPTOR, field.nullable, _BLOB_V2_METADATA) if is_blob_v2(f) else field


class Projection:
    """Which dataset fields a read wants: ``[(top-level field, keep-tree or None)]``, resolved once."""

    def __init__(self, schema: LanceSchema, arrow_schema: pa.Schema, columns) -> None:
        from ..projection import resolve

        self.lance_schema = schema
        self.fields = resolve(schema, columns)
        if columns is None:
            by_name = {f.name: f for f in schema.fields}
            self.schema = pa.schema([_as_read(by_name[af.name], af) if af.name in by_name else af
                                     for af in arrow_schema], metadata=arrow_schema.metadata)
            return
        out = []
        for f, keep in self.fields:
            whole = _as_read(f, arrow_schema.field(arrow_schema.get_field_index(f.name)))
            out.append(whole if keep is None or is_blob_v2(f) else whole.with_type(_kept_type(f, whole.type, keep)))
        self.schema = pa.schema(out, metadata=arrow_schema.metadata)


def _kept_type(f: LanceField, t: pa.DataType, keep: dict | None) -> pa.DataType:
    """The Arrow type of field ``f`` (type ``t``) cut down to a keep-tree."""
    if keep is None:
        return t
    if pa.types.is_struct(t):
        by_id = {c.id: i for i, c in enumerate(f.children)}
        return pa.struct([t.field(by_id[cid]).with_type(_kept_type(f.children[by_id[cid]], t.field(by_id[cid]).type, sub))
                          for cid, sub in keep.items()])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        (cid, sub), = keep.items()
        item = t.value_field.with_type(_kept_type(f.children[0], t.value_type, sub))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(item, t.list_size)
        return pa.large_list(item) if pa.types.is_large_list(t) else pa.list_(item)
    return t


def _paths_in_file(dfield: LanceField, keep: dict | None, fmap: dict[int, LanceField], fpaths: dict[int, str],
                   out: list[str]) -> None:
    """The file's dotted names for the part of dataset field ``dfield`` a keep-tree asks for.

    Fields are matched by id (through ``DataFile.fields``/``column_indices``), never by
    position or name: after a struct child is dropped or renamed, the file still holds the
    old children under the old names.
    """
    ffield = fmap.get(dfield.id)
    if ffield is None:
        raise CorruptFileError(f"field {dfield.name!r} (id {dfield.id}) is not in the data file that holds its parent")
    if is_blob_v2(dfield):  # the file holds the descriptors, not the dataset's data and uri children
        out.append(fpaths[ffield.id])
        return
    if keep is None:
        if _same_shape(dfield, ffield, fmap) or not dfield.children:
            out.append(fpaths[ffield.id])
            return
        keep = {c.id: None for c in dfield.children}  # read the children the dataset still has
    by_id = {c.id: c for c in dfield.children}
    for cid, sub in keep.items():
        _paths_in_file(by_id[cid], sub, fmap, fpaths, out)


def _same_shape(d: LanceField, f: LanceField, fmap: dict[int, LanceField]) -> bool:
    """Whether file field ``f`` holds exactly dataset field ``d``: same children, matched by id, all the way down."""
    if len(d.children) != len(f.children) or d.logical_type != f.logical_type:
        return False
    return all(fmap.get(dc.id) is fc and _same_shape(dc, fc, fmap) for dc, fc in zip(d.children, f.children))


def _pair_down(d: LanceField, f: LanceField, fmap: dict[int, LanceField]) -> None:
    """Children of a matched pair that own no column of their own (packed structs): by name, else by position."""
    by_name = {c.name: c for c in f.children}
    for i, dc in enumerate(d.children):
        fc = fmap.get(dc.id)
        if fc is None:
            fc = by_name.get(dc.name) or (f.children[i] if len(f.children) == len(d.children) else None)
            if fc is None:
                continue
            fmap[dc.id] = fc
        _pair_down(dc, fc, fmap)


def _conform(arr, t: pa.DataType, where: str):
    """``arr`` as type ``t``: the same type but for field names (after a rename) or nullability,
    viewed; a value of the same kind (a struct child cast with ``alter_columns``: int32 to
    int64), cast. Anything else is a manifest that disagrees with its data file: an error,
    never the bits read as another type."""
    if arr.type == t:
        return arr
    if _shape(arr.type) == _shape(t):
        try:
            return arr.view(t)
        except (pa.ArrowException, TypeError):
            pass
    if _kind(arr.type) == _kind(t):
        try:
            return arr.cast(t)
        except (pa.ArrowException, TypeError) as exc:
            raise CorruptFileError(f"{where}: the data file holds {arr.type} where the dataset says {t}: {exc}") \
                from None
    raise CorruptFileError(f"{where}: the data file holds {arr.type} where the dataset says {t}")


def _shape(t: pa.DataType):
    """``t`` without field names, nullability or metadata: what a view can change."""
    if pa.types.is_struct(t):
        return ("struct", tuple(_shape(t.field(i).type) for i in range(t.num_fields)))
    if pa.types.is_fixed_size_list(t):
        return ("fsl", t.list_size, _shape(t.value_type))
    if pa.types.is_large_list(t):
        return ("large_list", _shape(t.value_type))
    if pa.types.is_list(t):
        return ("list", _shape(t.value_type))
    if pa.types.is_map(t):
        return ("map", _shape(t.key_type), _shape(t.item_type))
    return t


def _kind(t: pa.DataType):
    """What a cast keeps: integers and floats are numbers, strings and binaries are bytes, and
    nested types the kinds of their children (a struct's one by one)."""
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_struct(t):
        return ("struct", tuple(_kind(t.field(i).type) for i in range(t.num_fields)))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ("list", _kind(t.value_type))
    if pa.types.is_fixed_size_list(t):
        return ("fsl", t.list_size, _kind(t.value_type))
    return _shape(t)


class _FileHandle:
    """One data file of a fragment: which dataset top-level field each of its file fields holds."""

    def __init__(self, path: str, reader: LanceFileReader, tops: dict[int, LanceField]) -> None:
        self.path = path
        self.reader = reader
        self.tops = tops  # dataset top-level field id -> that field in the file's schema
        self.fmap: dict[int, LanceField] = {}  # dataset field id -> the file's field holding it
        self.fpaths: dict[int, str] = {}  # file field id -> its dotted path in the file
        self._readers: dict[tuple[str, ...], LanceFileReader] = {}

    def projected(self, names: list[str]) -> LanceFileReader:
        """A reader of the file's columns ``names`` (dotted paths), made once per projection."""
        key = tuple(names)
        if key == tuple(self.reader.schema.names):
            return self.reader
        if key not in self._readers:
            self._readers[key] = LanceFileReader(self.reader._source, columns=names)
        return self._readers[key]


class LanceFragment:
    """One fragment of a dataset version (``lance.fragment.LanceFragment``-like).

    Example::

        >>> import pyarrow as pa, lancefile, tempfile
        >>> ds = lancefile.write_dataset(pa.table({"x": [1, 2, 3]}), tempfile.mkdtemp(), max_rows_per_file=2)
        >>> [(f.fragment_id, f.count_rows()) for f in ds.get_fragments()]
        [(0, 2), (1, 1)]
    """

    def __init__(self, dataset, pb: table_pb2.DataFragment) -> None:
        self._dataset = dataset
        self.metadata = pb
        self.fragment_id: int = pb.id
        self.physical_rows: int = pb.physical_rows
        self._deleted: np.ndarray | None = None
        self._files: list[_FileHandle] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LanceFragment(id={self.fragment_id}, physical_rows={self.physical_rows}, files={len(self.metadata.files)})"

    # -- metadata -------------------------------------------------------------------------------
    def data_files(self) -> list[str]:
        """Paths of the fragment's data files."""
        return [storage.name(storage.join(self._dataset._root, DATA_DIR, f.path)) for f in self.metadata.files]

    @property
    def num_deletions(self) -> int:
        """How many of the fragment's rows are deleted."""
        if not self.metadata.HasField("deletion_file"):
            return 0
        n = self.metadata.deletion_file.num_deleted_rows
        return n if n else len(self.deleted_offsets())

    def count_rows(self) -> int:
        """Live (not deleted) rows."""
        return self.physical_rows - self.num_deletions

    def deleted_offsets(self) -> np.ndarray:
        """Sorted offsets (uint32) of the fragment's deleted rows."""
        if self._deleted is None:
            if self.metadata.HasField("deletion_file"):
                self._deleted = read_deletion_vector(self._dataset._root, self.fragment_id,
                                                     self.metadata.deletion_file, self.physical_rows)
            else:
                self._deleted = np.zeros(0, np.uint32)
        return self._deleted

    # -- files ----------------------------------------------------------------------------------
    def _handles(self) -> list[_FileHandle]:
        if self._files is None and not self.metadata.files and self.physical_rows:
            raise CorruptFileError(f"{self._dataset._loaded.path}: fragment {self.fragment_id} has "
                                   f"{self.physical_rows} rows but no data files")
        if self._files is None:
            with self._lock:
                if self._files is None:
                    self._files = [self._open(df) for df in self.metadata.files]
        return self._files

    def _open(self, df: table_pb2.DataFile) -> _FileHandle:
        root = self._dataset._root
        loc = storage.inside(root, DATA_DIR, df.path)
        if loc is None:
            raise CorruptFileError(f"{self._dataset._loaded.path}: fragment {self.fragment_id} names data file "
                                   f"{df.path!r}, which is not inside {storage.name(storage.join(root, DATA_DIR))}")
        path = storage.name(loc)
        try:
            reader = LanceFileReader(storage.source(loc))
        except LanceIOError as exc:
            if storage.is_remote(loc) and "no such object" in str(exc) or \
                    not storage.is_remote(loc) and not os.path.exists(path):
                raise LanceIOError(f"{path}: data file of fragment {self.fragment_id} does not exist") from None
            raise exc
        where = f"{path} (fragment {self.fragment_id})"
        if reader.num_rows() != self.physical_rows:
            raise CorruptFileError(f"{where}: holds {reader.num_rows()} rows but the manifest says "
                                   f"the fragment has {self.physical_rows}")
        if df.file_size_bytes and reader._source.size != df.file_size_bytes:
            raise CorruptFileError(f"{where}: is {reader._source.size} bytes but the manifest says {df.file_size_bytes}")
        if len(df.fields) != len(df.column_indices) and len(df.column_indices):
            raise CorruptFileError(f"{where}: the manifest lists {len(df.fields)} fields but "
                                   f"{len(df.column_indices)} column indices")
        tops: dict[int, LanceField] = {}
        owners = reader.column_owners()
        ftop = _top_of(reader._lance_schema)
        fparent = _parents(reader._lance_schema)
        dtop = self._dataset._top_of
        dparent = self._dataset._parent_of
        fmap: dict[int, LanceField] = {}
        columns = list(df.column_indices) if len(df.column_indices) else None
        for i, fid in enumerate(df.fields):
            if fid not in dtop:
                continue  # a dropped field, still listed by its old file
            if columns is None:
                continue  # a file with no column indices holds nothing the reference would read
            owner = owners.get(columns[i])
            if owner is None:
                raise CorruptFileError(f"{where}: field {fid} is said to be in column {columns[i]}, "
                                       f"which the file does not have")
            d, f = dtop[fid], ftop[owner.id]
            if tops.setdefault(d.id, f) is not f:
                raise CorruptFileError(f"{where}: the columns of field {d.name!r} belong to different file fields")
            # the field and its ancestors, matched level by level up to the top
            did, g = fid, owner
            while did is not None and g is not None:
                if fmap.setdefault(did, g) is not g:
                    raise CorruptFileError(f"{where}: field {did} matches two fields of the file")
                parent = dparent.get(did)
                did, g = (parent.id if parent is not None else None), fparent.get(g.id)
        for d_id, f in list(fmap.items()):
            if d_id in tops:
                _pair_down(self._dataset._by_id[d_id], f, fmap)
        handle = _FileHandle(path, reader, tops)
        handle.fmap, handle.fpaths = fmap, reader.field_paths()
        return handle

    # -- reading --------------------------------------------------------------------------------
    def _plan(self, projection: Projection) -> list[tuple[_FileHandle | None, list[str]]]:
        """Per projected top-level field: the file that holds it and the file's names to read."""
        plan = []
        handles = self._handles()
        for f, keep in projection.fields:
            holder = next((h for h in handles if f.id in h.tops), None)
            if holder is None:
                plan.append((None, []))
                continue
            names: list[str] = []
            _paths_in_file(f, keep, holder.fmap, holder.fpaths, names)
            plan.append((holder, names))
        return plan

    def _absent(self, f: pa.Field, n: int) -> pa.Array:
        """``n`` nulls for field ``f``, which none of the fragment's data files holds (a column
        added after it was written). A non-nullable field, or one whose nulls would take more
        than :data:`MAX_ABSENT_BYTES` (a fixed_size_list of a billion values), is a damaged
        manifest: the reference refuses it ("Found unmasked nulls for non-nullable field")."""
        where = f"{self.data_files()} (fragment {self.fragment_id}), field {f.name!r}"
        if not f.nullable:
            raise CorruptFileError(f"{where}: no data file of the fragment holds the field, which is not nullable")
        size = n * _null_bytes(f.type)
        if size > MAX_ABSENT_BYTES:
            raise CorruptFileError(f"{where}: no data file holds the field, and {n} rows of its nulls would take "
                                   f"{size} bytes")
        return pa.nulls(n, f.type)

    def _read(self, projection: Projection, start: int, stop: int, batch_size: int,
              offsets: np.ndarray | None = None) -> Iterator[pa.RecordBatch]:
        """Batches of physical rows [start, stop) (or of ``offsets``, in their order), deleted rows kept."""
        plan = self._plan(projection)
        schema = projection.schema
        by_file: dict[int, list[int]] = {}  # fields from one file are read together
        for i, (h, _names) in enumerate(plan):
            if h is not None:
                by_file.setdefault(id(h), []).append(i)
        streams = []
        for idxs in by_file.values():
            h = plan[idxs[0]][0]
            reader = h.projected([n for i in idxs for n in plan[i][1]])
            res = (reader.read_range(start, stop - start, batch_size=batch_size) if offsets is None
                   else reader.take_rows(offsets, batch_size=batch_size))
            streams.append((idxs, iter(res)))
        total = (stop - start) if offsets is None else len(offsets)
        done = 0
        while done < total:
            cols: list = [None] * len(plan)
            n = min(batch_size, total - done)
            for idxs, it in streams:
                batch = next(it)
                if batch.num_rows != n:
                    raise CorruptFileError(f"fragment {self.fragment_id}: a data file gave {batch.num_rows} rows "
                                           f"where {n} were expected")
                if batch.num_columns != len(idxs):  # a manifest whose fields do not match the file's
                    raise CorruptFileError(
                        f"{self.data_files()} (fragment {self.fragment_id}): gave {batch.num_columns} columns "
                        f"({', '.join(batch.schema.names)}) for the {len(idxs)} fields "
                        f"{[schema.field(i).name for i in idxs]} the manifest places there")
                for j, i in enumerate(idxs):  # one column per top-level field, in the order asked
                    cols[i] = _conform(batch.column(j), schema.field(i).type,
                                       f"{self.data_files()} (fragment {self.fragment_id}), field {schema.field(i).name!r}")
            for i, c in enumerate(cols):
                if c is None:
                    cols[i] = self._absent(schema.field(i), n)
            yield record_batch(cols, schema, n)
            done += n

    def to_batches(self, columns=None, *, batch_size: int = 1024, start: int = 0, stop: int | None = None,
                   with_deleted: bool = False, _projection: Projection | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the fragment's live rows, or those among physical rows ``[start, stop)``.

        Physical row ranges are what splits of a scan are made of (a Spark task reads one);
        deleted rows are dropped unless ``with_deleted``.
        """
        projection = _projection or Projection(self._dataset._lance_schema, self._dataset.schema, columns)
        stop = self.physical_rows if stop is None else stop
        if not 0 <= start <= stop <= self.physical_rows:
            raise InvalidInputError(f"fragment {self.fragment_id}: rows [{start}, {stop}) are outside its "
                                    f"{self.physical_rows} rows")
        deleted = None if with_deleted else self.deleted_offsets()
        if deleted is not None and len(deleted):
            lo, hi = np.searchsorted(deleted, [start, stop])
            if hi - lo == stop - start:
                return  # every row of the range is deleted
        pos = start
        for batch in self._read(projection, start, stop, batch_size):
            n = batch.num_rows
            if deleted is not None and len(deleted):
                lo, hi = np.searchsorted(deleted, [pos, pos + n])
                if hi > lo:
                    keep = np.ones(n, dtype=bool)
                    keep[deleted[lo:hi].astype(np.int64) - pos] = False
                    batch = filter_batch(batch, keep)
            pos += n
            if batch.num_rows:
                yield batch

    def to_table(self, columns=None) -> pa.Table:
        """The fragment's live rows as a Table."""
        projection = Projection(self._dataset._lance_schema, self._dataset.schema, columns)
        return pa.Table.from_batches(list(self.to_batches(batch_size=1 << 16, _projection=projection)),
                                     schema=projection.schema)

    def matching_ranges(self, expr) -> list[tuple[int, int]]:
        """Physical row ranges that may hold rows matching ``expr``, from the data file's statistics.

        Only a fragment stored in one data file whose fields keep the dataset's names is
        pruned; any other gets its whole range (the filter is applied to the rows anyway).
        """
        whole = [(0, self.physical_rows)] if self.physical_rows else []
        handles = self._handles()
        if len(handles) != 1:
            return whole
        h = handles[0]
        paths = self._dataset._paths
        if any(h.fpaths.get(f.id) != paths[did] for did, f in h.fmap.items()):
            return whole  # a renamed field: the file's statistics are under its old name
        return h.reader.matching_ranges(expr)

    def live_offsets(self, positions: np.ndarray) -> np.ndarray:
        """Physical offsets of the live rows at ``positions`` (0-based among live rows)."""
        deleted = self.deleted_offsets()
        if not len(deleted):
            return positions
        # the k-th live row is at k + (number of deleted offsets <= it); solve by searching
        # positions in (deleted - rank), which is non-decreasing
        shifted = deleted.astype(np.int64) - np.arange(len(deleted), dtype=np.int64)
        return positions + np.searchsorted(shifted, positions, side="right")

    def _take_physical(self, offsets: np.ndarray, projection: Projection) -> pa.Table:
        batches = list(self._read(projection, 0, 0, max(len(offsets), 1), offsets=offsets))
        return pa.Table.from_batches(batches, schema=projection.schema)


MAX_ABSENT_BYTES = 1 << 34  # the nulls of a column no data file holds, for one batch


def _null_bytes(t: pa.DataType) -> int:
    """The bytes a null row of type ``t`` takes in memory (fixed-size lists hold their values)."""
    if pa.types.is_fixed_size_list(t):
        return t.list_size * max(1, _null_bytes(t.value_type))
    if pa.types.is_struct(t):
        return 1 + sum(_null_bytes(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_fixed_size_binary(t):
        return t.byte_width
    return 8


def record_batch(columns: list, schema: pa.Schema, num_rows: int) -> pa.RecordBatch:
    """A batch of ``columns``; with no columns it still has ``num_rows`` rows."""
    if columns:
        return pa.RecordBatch.from_arrays(columns, schema=schema)
    empty = pa.Array.from_buffers(pa.struct([]), num_rows, [None], children=[])
    return pa.RecordBatch.from_struct_array(empty).replace_schema_metadata(schema.metadata)


def _parents(schema: LanceSchema) -> dict[int, LanceField | None]:
    """field id -> its parent field (None at the top)."""
    out: dict[int, LanceField | None] = {}
    for g in schema.walk():
        out.setdefault(g.id, None)
        for c in g.children:
            out[c.id] = g
    return out


def _top_of(schema: LanceSchema) -> dict[int, LanceField]:
    """field id -> its top-level ancestor."""
    out: dict[int, LanceField] = {}
    for top in schema.fields:
        for g in top.walk():
            out[g.id] = top
    return out


def check_positions(indices, total: int, what: str) -> np.ndarray:
    """``indices`` as int64 in [0, total), or an :class:`InvalidInputError` naming the first bad one."""
    if isinstance(indices, (pa.Array, pa.ChunkedArray)):
        indices = indices.to_numpy()
    idx = np.asarray(indices)
    if idx.ndim != 1 or (len(idx) and not np.issubdtype(idx.dtype, np.integer)):
        raise InvalidInputError(f"{what} indices must be a one-dimensional sequence of integers")
    idx = idx.astype(np.int64, copy=False)
    bad = (idx < 0) | (idx >= total)
    if bad.any():
        raise InvalidInputError(f"{what}: index {int(idx[np.argmax(bad)])} is out of range for {total} rows")
    return idx

