"""Finding the Lance files behind a path, and agreeing on their schema.

A path is a Lance dataset (a directory with ``_versions/``: read through its manifest, see
:mod:`lancefile.spark.datasets`), a file, a directory (searched recursively; names starting
with ``.`` or ``_`` are skipped, as Spark does, which also hides unfinished writes in
``_temporary``), or a glob (``/data/2026-*/*.lance``, ``**`` allowed). A dataset met
inside a directory or glob, or its ``data/`` directory, is refused: its files hold deleted
rows and old versions, so reading them as loose files would be silently wrong.
``file://`` URIs are accepted; other schemes are refused with a clear error since
lancefile reads local or mounted files.

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

__all__ = ["LanceFileInfo", "list_lance_files", "scan_files", "common_schema", "local_path", "is_hidden",
           "is_dataset", "resolve_name", "row_ranges"]

LANCE_SUFFIX = ".lance"
VERSIONS_DIR = "_versions"  # what makes a directory a Lance dataset


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


def is_dataset(path: str) -> bool:
    """Whether ``path`` (a local path) is the directory of a Lance dataset."""
    return os.path.isdir(os.path.join(path, VERSIONS_DIR))


def _refuse_dataset_parts(directory: str, path: str) -> None:
    """A dataset, or a dataset's ``data/``, reached while listing loose files is an error."""
    for d in (directory, os.path.dirname(directory)):
        if is_dataset(d):
            raise LanceIOError(
                f"{d} is a Lance dataset, met while listing the Lance files of {path}: read it by its own "
                f"path (its files also hold deleted rows and older versions, so they are not read loose)"
            )


def _walk(directory: str, path: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(directory):
        _refuse_dataset_parts(root, path)
        dirs[:] = sorted(d for d in dirs if not is_hidden(d))
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(LANCE_SUFFIX) and not is_hidden(f))
    return found


def list_lance_files(path: str, *, must_exist: bool = True) -> list[str]:
    """The Lance files a read of ``path`` covers, sorted."""
    p = local_path(path)
    if glob.has_magic(p):
        files: list[str] = []
        for hit in sorted(glob.glob(p, recursive=True)):
            if os.path.isdir(hit):
                files.extend(_walk(hit, path))
            elif hit.endswith(LANCE_SUFFIX):
                _refuse_dataset_parts(os.path.dirname(hit), path)
                files.append(hit)
        if not files and must_exist:
            raise LanceIOError(f"no Lance files match {path}")
        return sorted(set(files))
    if os.path.isfile(p):
        return [p]
    if os.path.isdir(p):
        files = _walk(p, path)
        if not files and must_exist:
            raise LanceIOError(f"{path} is neither a Lance dataset (it has no {VERSIONS_DIR}/ directory) nor a "
                               f"directory of Lance files (no .lance files under {path})")
        return files
    if must_exist:
        raise LanceIOError(f"path does not exist: {path}")
    return []


def scan_files(path: str, storage_options: dict | None = None) -> list[LanceFileInfo]:
    """Open each file's footer: rows, size and schema (no column data is read).

    ``path`` may be an object-store URI (:func:`lancefile.spark.remote.list_remote_files`).
    """
    from .remote import is_remote_path, list_remote_files

    if is_remote_path(path):
        found = list_remote_files(path, storage_options or {})
    else:
        found = [(f, os.path.getsize(f)) for f in list_lance_files(path)]
    infos = []
    for f, size in found:
        with LanceFileReader(f, storage_options or None) as r:
            infos.append(LanceFileInfo(f, r.num_rows(), size, r.schema))
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


def row_ranges(num_rows: int, num_bytes: int, split_rows: int | None, split_bytes: int) -> list[tuple[int, int]]:
    """Row ranges ``[start, stop)`` of ``split_rows`` rows (by default about ``split_bytes`` each)."""
    rows = split_rows or max(1, int(split_bytes * num_rows / max(num_bytes, 1)))
    return [(start, min(start + rows, num_rows)) for start in range(0, num_rows, rows)]


def resolve_name(name: str, schema: pa.Schema) -> str:
    """``name`` (dotted for nested fields) spelled as in ``schema``; Spark matches names
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
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            fields = [t.value_field]  # a list's values are named by its item field: "tags.item.name"
        else:
            fields = [t.field(i) for i in range(t.num_fields)] if pa.types.is_struct(t) else []
    return ".".join(out)
