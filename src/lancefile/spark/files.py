"""Finding the Lance files behind a path, and agreeing on their schema.

A path is a file, a directory (searched recursively; names starting with ``.`` or ``_``
are skipped, as Spark does, which also hides unfinished writes in ``_temporary``), or a
glob (``/data/2026-*/*.lance``, ``**`` allowed). ``file://`` URIs are accepted; other
schemes are refused with a clear error since lancefile reads local or mounted files.

Example::

    >>> import os, tempfile, pyarrow as pa, lancefile
    >>> d = tempfile.mkdtemp()
    >>> lancefile.write_table(pa.table({"x": [1, 2]}), os.path.join(d, "a.lance"))
    >>> [os.path.basename(f.path) for f in scan_files(d)]
    ['a.lance']
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

import pyarrow as pa

from ..errors import InvalidInputError, LanceIOError, SchemaMismatchError
from ..reader import LanceFileReader

__all__ = ["LanceFileInfo", "list_lance_files", "scan_files", "common_schema", "local_path", "is_hidden"]

LANCE_SUFFIX = ".lance"


@dataclass(frozen=True)
class LanceFileInfo:
    """What planning needs of one file: where, how many rows and bytes, its schema."""

    path: str
    num_rows: int
    num_bytes: int
    schema: pa.Schema


def local_path(path: str) -> str:
    """``path`` as a local filesystem path (``file://`` stripped); other URI schemes refused."""
    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif "://" in path:
        raise InvalidInputError(
            f"{path}: lancefile reads and writes local or mounted paths only (no {path.split('://')[0]}:// support)"
        )
    return os.path.abspath(os.path.expanduser(path))


def is_hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def _walk(directory: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not is_hidden(d))
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(LANCE_SUFFIX) and not is_hidden(f))
    return found


def list_lance_files(path: str, *, must_exist: bool = True) -> list[str]:
    """The Lance files a read of ``path`` covers, sorted."""
    p = local_path(path)
    if glob.has_magic(p):
        files: list[str] = []
        for hit in sorted(glob.glob(p, recursive=True)):
            files.extend(_walk(hit) if os.path.isdir(hit) else [hit] if hit.endswith(LANCE_SUFFIX) else [])
        if not files and must_exist:
            raise LanceIOError(f"no Lance files match {path}")
        return sorted(set(files))
    if os.path.isfile(p):
        return [p]
    if os.path.isdir(p):
        files = _walk(p)
        if not files and must_exist:
            raise LanceIOError(f"no .lance files under {path}")
        return files
    if must_exist:
        raise LanceIOError(f"path does not exist: {path}")
    return []


def scan_files(path: str) -> list[LanceFileInfo]:
    """Open each file's footer: rows, size and schema (no column data is read)."""
    infos = []
    for f in list_lance_files(path):
        with LanceFileReader(f) as r:
            infos.append(LanceFileInfo(f, r.num_rows(), os.path.getsize(f), r.schema))
    return infos


def _relaxed(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field nullable and no field metadata (for comparing files)."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _relaxed(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _relaxed(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(pa.field(t.value_field.name, _relaxed(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field(t.value_field.name, _relaxed(t.value_type)), t.list_size)
    return t


def common_schema(infos: list[LanceFileInfo]) -> pa.Schema:
    """The schema every file shares (a column is nullable if it is in any file).

    Files that disagree on column names, order or types raise :class:`SchemaMismatchError`
    naming both files and the first column that differs.
    """
    first = infos[0]
    fields = list(first.schema)
    for info in infos[1:]:
        s = info.schema
        if s.names != first.schema.names:
            raise SchemaMismatchError(
                f"Lance files disagree on their columns: {first.path} has {first.schema.names}, "
                f"{info.path} has {s.names}"
            )
        for i, (a, b) in enumerate(zip(fields, s)):
            if _relaxed(a.type) != _relaxed(b.type):
                raise SchemaMismatchError(
                    f"Lance files disagree on column {a.name!r}: {first.path} has {first.schema.field(i).type}, "
                    f"{info.path} has {b.type}"
                )
            if a.type != b.type:  # nested nullability differs: claim nothing
                fields[i] = a = a.with_type(_relaxed(a.type))
            if b.nullable and not a.nullable:
                fields[i] = a.with_nullable(True)
    return pa.schema(fields, metadata=first.schema.metadata)
