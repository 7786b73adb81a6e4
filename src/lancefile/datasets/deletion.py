"""Deletion vectors: which row offsets of a fragment are deleted.

Stored under ``_deletions/{fragment id}-{read version}-{id}`` as either an Arrow IPC file of
one non-nullable ``row_id: uint32`` column (``.arrow``, what the reference writes for fewer
than 5,000 deleted rows) or a 32-bit Roaring bitmap in the portable serialization (``.bin``).

Example::

    >>> import tempfile, numpy as np
    >>> root = tempfile.mkdtemp()
    >>> info = write_deletion_file(root, 3, 7, np.array([5, 1, 3]))
    >>> info.file_type == info.ARROW_ARRAY, info.num_deleted_rows
    (True, 3)
    >>> read_deletion_vector(root, 3, info, physical_rows=10).tolist()
    [1, 3, 5]
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from .._proto import table_pb2
from ..errors import CorruptFileError
from .ipcsize import IpcLayoutError, ipc_rows_and_bytes

__all__ = ["DELETIONS_DIR", "BITMAP_THRESHOLD", "deletion_file_path", "deletion_file_name", "read_deletion_vector", "write_deletion_file"]

DELETIONS_DIR = "_deletions"
BITMAP_THRESHOLD = 5000  # the reference writes a bitmap from this many deleted rows on
_SCHEMA = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])
_ARROW, _BITMAP = table_pb2.DeletionFile.ARROW_ARRAY, table_pb2.DeletionFile.BITMAP


def deletion_file_path(root, fragment_id: int, info: table_pb2.DeletionFile):
    """Where a fragment's deletion file lives (the name is rebuilt, never stored): a path, or an
    object for a dataset on an object store."""
    from .storage import join

    return join(root, DELETIONS_DIR, deletion_file_name(fragment_id, info))


def deletion_file_name(fragment_id: int, info: table_pb2.DeletionFile) -> str:
    """The name of a fragment's deletion file in ``_deletions/``."""
    suffix = "arrow" if info.file_type == _ARROW else "bin"
    return f"{fragment_id}-{info.read_version}-{info.id}.{suffix}"


def read_deletion_vector(root, fragment_id: int, info: table_pb2.DeletionFile,
                         physical_rows: int) -> np.ndarray:
    """The sorted, unique deleted offsets (uint32) of one fragment.

    Raises :class:`CorruptFileError` naming the file when it does not parse, holds an offset
    outside the fragment, or disagrees with the manifest's ``num_deleted_rows``.
    """
    from .storage import name, read_small

    loc = deletion_file_path(root, fragment_id, info)
    path = name(loc)
    if info.file_type not in (_ARROW, _BITMAP):
        raise CorruptFileError(f"{path}: unknown deletion file type {info.file_type}")
    # a deletion file holds at most one u32 (or a bitmap's bit) per row; allow generous framing
    data = read_small(loc, f"deletion file of fragment {fragment_id}", 64 * 1024 + 8 * physical_rows)
    if info.file_type == _ARROW:
        offsets = _parse_arrow(data, path, physical_rows)
    else:
        offsets = _parse_bitmap(data, path, physical_rows)
    if len(offsets) > 1 and not np.all(offsets[1:] > offsets[:-1]):  # pylance writes them sorted
        offsets = np.unique(offsets)
    if len(offsets) and int(offsets[-1]) >= physical_rows:
        raise CorruptFileError(
            f"{path}: deletes row offset {int(offsets[-1])} but fragment {fragment_id} has {physical_rows} rows")
    if info.num_deleted_rows and info.num_deleted_rows != len(offsets):
        raise CorruptFileError(
            f"{path}: holds {len(offsets)} deleted rows but the manifest says {info.num_deleted_rows}")
    return offsets


_IPC_OPTIONS = ipc.IpcReadOptions(use_threads=False)


def _parse_arrow(data: bytes, path: str, physical_rows: int) -> np.ndarray:
    try:  # what the batches hold and decompress to, from the metadata, before Arrow allocates it
        rows, size = ipc_rows_and_bytes(data)
    except IpcLayoutError as exc:
        raise CorruptFileError(f"{path}: the deletion file is not a valid Arrow IPC file: {exc}") from None
    if rows > physical_rows or size > 64 * 1024 + 8 * physical_rows:
        raise CorruptFileError(f"{path}: the deletion file holds {rows} row ids ({size} bytes once read) "
                               f"for a fragment of {physical_rows} rows")
    try:
        # a few KB: Arrow's thread pool costs more than it saves (18 us a file instead of 65)
        reader = ipc.open_file(pa.py_buffer(data), options=_IPC_OPTIONS)
        if not reader.schema.equals(_SCHEMA, check_metadata=True):
            raise CorruptFileError(f"{path}: a deletion file must hold one column row_id: uint32 not null, "
                                   f"not {reader.schema}")
        chunks = [reader.get_batch(i).column(0) for i in range(reader.num_record_batches)]
        for c in chunks:
            c.validate(full=True)
            if c.null_count:
                raise CorruptFileError(f"{path}: the deleted row ids contain nulls")
    except CorruptFileError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptFileError(f"{path}: the deletion file is not a valid Arrow IPC file: {exc}") from None
    if not chunks:
        return np.zeros(0, np.uint32)
    return np.concatenate([c.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.uint32, copy=False)


def _parse_bitmap(data: bytes, path: str, physical_rows: int) -> np.ndarray:
    from pyroaring import BitMap

    try:
        bitmap = BitMap.deserialize(data)
    except (ValueError, OverflowError, MemoryError, IndexError) as exc:  # (an empty file: IndexError)
        raise CorruptFileError(f"{path}: the deletion bitmap is not a valid portable Roaring bitmap: {exc}") from None
    # checked before the offsets are listed: a run-length bitmap of a few KB can hold billions
    if len(bitmap) > physical_rows or (len(bitmap) and bitmap.max() >= physical_rows):
        raise CorruptFileError(f"{path}: the deletion bitmap holds {len(bitmap)} offsets up to {bitmap.max()} "
                               f"for a fragment of {physical_rows} rows")
    return np.asarray(bitmap.to_array(), dtype=np.uint32) if len(bitmap) else np.zeros(0, np.uint32)


def write_deletion_file(root: str, fragment_id: int, read_version: int, offsets,
                        kind: str | None = None) -> table_pb2.DeletionFile:
    """Write the deletion vector ``offsets`` of a fragment; returns its manifest entry.

    ``kind`` is ``"arrow"`` or ``"bitmap"``; by default, as the reference chooses: Arrow
    below :data:`BITMAP_THRESHOLD` deleted rows, a bitmap from there on. The file appears
    under its final name only once complete.
    """
    offsets = np.unique(np.asarray(offsets, dtype=np.int64))
    if len(offsets) and (offsets[0] < 0 or offsets[-1] > 0xFFFFFFFF):
        raise ValueError("deleted row offsets must fit in uint32")
    if kind is None:
        kind = "arrow" if len(offsets) < BITMAP_THRESHOLD else "bitmap"
    info = table_pb2.DeletionFile(file_type=_ARROW if kind == "arrow" else _BITMAP, read_version=read_version,
                                  id=random.getrandbits(63), num_deleted_rows=len(offsets))
    if kind == "arrow":
        sink = pa.BufferOutputStream()
        table = pa.table([pa.array(offsets.astype(np.uint32), pa.uint32())], schema=_SCHEMA)
        with ipc.new_file(sink, _SCHEMA, options=ipc.IpcWriteOptions(compression="zstd")) as w:
            w.write_table(table)
        data = sink.getvalue().to_pybytes()
    else:
        from pyroaring import BitMap

        data = BitMap(offsets.astype(np.uint32)).serialize()
    from .storage import join, make_dirs, put_file

    make_dirs(join(root, DELETIONS_DIR))
    put_file(deletion_file_path(root, fragment_id, info), data)
    return info
