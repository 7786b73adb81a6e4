"""Where a dataset's files live: a local directory (a ``str`` path) or an object store.

A dataset's *root* is either a local path or a :class:`lancefile.objectstore.ObjectStore`
(``s3://``, ``gs://``, ``az://``, ``memory://``); the functions here take either and do the
same thing, so the manifest, deletion, fragment and commit code handles both alike. Committing
a version needs an atomic create-if-absent of its manifest (:func:`create_if_absent`): a hard
link locally, ``PutObject`` with ``If-None-Match: *`` on S3 (as pylance commits there), a lock
on ``memory://``; stores without one (gs://, az://, a caller's ``filesystem=``) are read-only
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
import uuid

from ..errors import CorruptFileError, InvalidInputError, LanceError, LanceIOError
from ..objectstore import ObjectStore, file_uri_path, is_uri, resolve_store
from ..tempfiles import sync_directory

__all__ = ["Root", "dataset_root", "name", "join", "list_names", "read_small", "source", "is_remote",
           "refuse_remote_write", "inside", "make_dirs", "put_file", "remove", "create_if_absent",
           "list_files", "exists", "can_commit"]

Root = "str | ObjectStore"

REMOTE_WRITE_REFUSAL = (
    "committing a dataset version needs an atomic create-if-absent of the new manifest, which lancefile makes on "
    "local paths, s3:// (PutObject with If-None-Match: *) and memory://; pyarrow.fs cannot send one to gs://, "
    "az:// or a filesystem= given by the caller, and without it a concurrent commit would silently replace "
    "another. Write the dataset to a local path or s3://, or commit it with pylance; lancefile reads datasets "
    "on every store")


def dataset_root(uri, storage_options: dict | None = None) -> "str | ObjectStore":
    """The root of dataset ``uri``: an absolute local path, or an :class:`ObjectStore` for a URI."""
    path = os.fspath(uri)
    if not isinstance(path, str):
        raise InvalidInputError(f"a dataset is named by a str path or URI, not {path!r}")
    local = file_uri_path(path)  # file:///abs/path or file:/abs/path, as pylance accepts
    if local is not None:
        if storage_options:
            raise InvalidInputError(f"{path}: storage_options are for object stores, not local paths")
        path = local
    elif is_uri(path):
        return resolve_store(path.rstrip("/"), storage_options)
    elif "://" in path:
        raise InvalidInputError(f"{path}: lancefile reads datasets on local paths and s3://, gs://, az://, "
                                f"memory:// URIs (not {path.split('://')[0]}://)")
    elif storage_options:
        raise InvalidInputError(f"{path}: storage_options are for object stores (s3://...), not local paths")
    return os.path.abspath(os.path.expanduser(path))


def is_dataset(path: str) -> bool:
    """Whether ``path`` (a local path or an object-store URI) is a Lance dataset's directory."""
    if is_uri(path) and file_uri_path(path) is None:
        try:
            return bool(list_names(join(dataset_root(path), "_versions")))
        except LanceError:
            return False
    return os.path.isdir(os.path.join(file_uri_path(path) or path, "_versions"))


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


def can_commit(root) -> bool:
    """Whether lancefile can commit versions of a dataset at ``root`` (see :data:`REMOTE_WRITE_REFUSAL`)."""
    import pyarrow.fs as pafs

    from ..objectstore import _MEMORY_FS

    if not isinstance(root, ObjectStore):
        return True
    if isinstance(root.fs, pafs.S3FileSystem):
        return root.uses_boto3()
    return root.fs is _MEMORY_FS.get("memory")


def refuse_remote_write(root, what: str = "write a dataset") -> None:
    """Raise :class:`LanceIOError` if versions of ``root`` cannot be committed (:data:`REMOTE_WRITE_REFUSAL`)."""
    if not can_commit(root):
        from ..s3 import boto3_available

        if root.options is not None and not boto3_available():
            raise LanceIOError(f"cannot {what} at {root.uri}: committing on s3:// needs boto3 (PutObject with "
                               f"If-None-Match: *, which pyarrow.fs cannot send): pip install 'lancefile[s3]'")
        raise LanceIOError(f"cannot {what} at {root.uri}: {REMOTE_WRITE_REFUSAL}")


# -- writing (the commit protocol's primitives) ------------------------------------------------

def make_dirs(directory) -> None:
    """Create a local directory (and its parents); object stores need none."""
    if not isinstance(directory, ObjectStore):
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise LanceIOError(f"cannot create {directory}: {exc.strerror or exc}") from exc


def _place_local(loc: str, data: bytes, exclusive: bool) -> bool:
    """Write ``data`` to a synced temporary file beside ``loc``, then give it the name ``loc``:
    by hard link when ``exclusive`` (False if ``loc`` exists), else by replacing it."""
    directory, base = os.path.split(loc)
    tmp = os.path.join(directory, f".{uuid.uuid4().hex[:12]}.{base}-tmp")  # no reader takes this name
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if not exclusive:
            os.replace(tmp, loc)
        else:
            try:
                os.link(tmp, loc)
            except FileExistsError:
                return False
        sync_directory(directory)  # the new name survives a crash too (the temporary one is gone by then)
        return True
    except OSError as exc:
        raise LanceIOError(f"cannot write {loc}: {exc.strerror or exc}") from exc
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def put_file(loc, data: bytes) -> None:
    """Write a whole small file (transaction, deletion file) so that no reader sees it half-written."""
    if isinstance(loc, ObjectStore):
        loc.write_bytes(data)  # an object appears whole or not at all
    else:
        _place_local(loc, data, exclusive=False)


def create_if_absent(loc, data: bytes) -> bool:
    """Make the file ``loc`` hold ``data`` only if it does not exist, atomically; False if it does.

    Locally the bytes go to a synced temporary file, then are hard-linked to ``loc``: the link
    creates the name or fails (never ``rename``, which replaces). On object stores:
    :meth:`ObjectStore.put_if_absent`.
    """
    if isinstance(loc, ObjectStore):
        return loc.put_if_absent(data)
    return _place_local(loc, data, exclusive=True)


def remove(loc) -> None:
    """Remove a file if it is there (a best effort: cleaning up after a failure must not fail)."""
    try:
        if isinstance(loc, ObjectStore):
            loc.delete()
        else:
            os.unlink(loc)
    except (OSError, LanceIOError):
        pass


def exists(loc) -> bool:
    if isinstance(loc, ObjectStore):
        return loc.exists()
    return os.path.exists(loc)


def list_files(directory) -> list[tuple[str, float]]:
    """``(name, modified time in seconds)`` of the files directly in ``directory`` (none if it is missing)."""
    if isinstance(directory, ObjectStore):
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(directory.path, allow_not_found=True, recursive=False)
        infos = directory.call("list", lambda: directory.fs.get_file_info(selector))
        return [(i.base_name, i.mtime.timestamp() if i.mtime is not None else 0.0)
                for i in infos if i.type == pafs.FileType.File]
    out = []
    for n in list_names(directory) or []:
        try:
            out.append((n, os.stat(os.path.join(directory, n)).st_mtime))
        except OSError:
            pass
    return out
