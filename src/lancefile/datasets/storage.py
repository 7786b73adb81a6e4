"""Where a dataset's files live: a local directory (a ``str`` path) or an object store.

A dataset's *root* is either a local path or a :class:`lancefile.objectstore.ObjectStore`
(``s3://``, ``gs://``, ``az://``, ``memory://``); the functions here take either and do the
same thing, so the manifest, deletion and fragment code reads both alike. Object stores are
read-only here: committing a version needs an atomic create-if-absent of the manifest
(:data:`REMOTE_WRITE_REFUSAL`).

Example::

    >>> from lancefile.objectstore import resolve_store
    >>> root = resolve_store("memory://storage-doc/ds")
    >>> join(root, "_versions").child("1.manifest").write_bytes(b"m")
    >>> name(join(root, "_versions")), list_names(join(root, "_versions"))
    ('memory://storage-doc/ds/_versions', ['1.manifest'])
    >>> read_small(join(root, "_versions", "1.manifest"), "manifest", 10)
    b'm'
"""

from __future__ import annotations

import os
import posixpath

from ..errors import CorruptFileError, InvalidInputError, LanceIOError
from ..objectstore import ObjectStore, is_uri, resolve_store

__all__ = ["Root", "dataset_root", "name", "join", "list_names", "read_small", "source", "is_remote",
           "refuse_remote_write", "inside"]

Root = "str | ObjectStore"

REMOTE_WRITE_REFUSAL = (
    "committing a dataset version needs an atomic create-if-absent of the new manifest (S3's PutObject with "
    "If-None-Match: *, a conditional create on GCS and Azure), so that two writers can never both make the same "
    "version; pyarrow.fs, through which lancefile reaches object stores, cannot send such a request, and without it "
    "a concurrent commit would silently replace another. Write the dataset to a local path and copy it, or commit "
    "it with pylance; lancefile reads datasets on object stores")


def dataset_root(uri, storage_options: dict | None = None) -> "str | ObjectStore":
    """The root of dataset ``uri``: an absolute local path, or an :class:`ObjectStore` for a URI."""
    path = os.fspath(uri)
    if not isinstance(path, str):
        raise InvalidInputError(f"a dataset is named by a str path or URI, not {path!r}")
    if path.startswith("file:") and not path.startswith("file://"):  # file:/abs/path, as pylance accepts
        path = "file://" + path[len("file:"):]
    if path.startswith("file://"):
        if storage_options:
            raise InvalidInputError(f"{path}: storage_options are for object stores, not local paths")
        path = path[len("file://"):]
    elif is_uri(path):
        return resolve_store(path.rstrip("/"), storage_options)
    elif "://" in path:
        raise InvalidInputError(f"{path}: lancefile reads datasets on local paths and s3://, gs://, az://, "
                                f"memory:// URIs (not {path.split('://')[0]}://)")
    elif storage_options:
        raise InvalidInputError(f"{path}: storage_options are for object stores (s3://...), not local paths")
    return os.path.abspath(os.path.expanduser(path))


def is_remote(root) -> bool:
    return isinstance(root, ObjectStore)


def name(root) -> str:
    """The path or URI that names ``root`` in messages."""
    return root.uri if isinstance(root, ObjectStore) else root


def join(root, *parts: str):
    """``root/part/...``: a path for a local root, an :class:`ObjectStore` for a remote one."""
    return root.child(*parts) if isinstance(root, ObjectStore) else os.path.join(root, *parts)


def list_names(directory) -> list[str] | None:
    """The names of the files directly in ``directory``; None if it does not exist."""
    if isinstance(directory, ObjectStore):
        found = directory.list()
        return [n for n, _ in found] if found or directory.info().type.name == "Directory" else None
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LanceIOError(f"cannot list {directory}: {exc.strerror}") from exc


def read_small(loc, what: str, limit: int) -> bytes:
    """The whole file at ``loc`` (a manifest, deletion file, transaction), at most ``limit`` bytes."""
    if not isinstance(loc, ObjectStore):
        from .manifest import read_regular_file

        return read_regular_file(loc, what, limit)
    try:
        return loc.read_bytes(limit)
    except LanceIOError as exc:
        if "no such object" in str(exc):
            raise LanceIOError(f"{loc.uri}: the {what} does not exist") from None
        if "more than the" in str(exc):
            raise CorruptFileError(f"{loc.uri}: too large for a {what} ({exc})") from None
        raise


def source(loc):
    """What :class:`lancefile.LanceFileReader` opens for the file at ``loc``."""
    return loc.open() if isinstance(loc, ObjectStore) else loc


def inside(root, sub: str, relative: str):
    """``root/sub/relative``, refused (None) unless ``relative`` stays inside ``root/sub``."""
    if not relative or "\0" in relative or relative.startswith(("/", "\\")) or os.path.isabs(relative):
        return None
    if isinstance(root, ObjectStore):
        norm = posixpath.normpath(relative)
        if norm == ".." or norm.startswith("../") or norm == ".":
            return None
        return root.child(sub, norm)
    base = os.path.join(root, sub)
    path = os.path.normpath(os.path.join(base, relative))
    if os.path.commonpath([path, base]) != os.path.normpath(base):
        return None
    return path


def refuse_remote_write(root, what: str = "write a dataset") -> None:
    """Raise :class:`LanceIOError` if ``root`` is on an object store (see :data:`REMOTE_WRITE_REFUSAL`)."""
    if isinstance(root, ObjectStore):
        raise LanceIOError(f"cannot {what} at {root.uri}: {REMOTE_WRITE_REFUSAL}")
