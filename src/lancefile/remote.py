"""Where a writer's finished file goes when the destination is not a local path.

:class:`RemoteTarget` stands for an object-store URI (through ``pyarrow.fs``) or a writable
binary file object. The writer builds the file in a private local directory, as for a local
path; :meth:`RemoteTarget.send` then streams the complete file to the destination. An
object store's upload only makes the object visible when it completes (a single PUT, or
S3's CompleteMultipartUpload), so a failed write leaves nothing at the key.

Example::

    >>> import io
    >>> RemoteTarget.of(io.BytesIO()).name
    '<BytesIO>'
    >>> RemoteTarget.of("/tmp/x.lance") is None
    True
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import uuid

from .errors import InvalidInputError, LanceIOError
from . import s3
from .objectstore import IO_THREADS, ObjectStore, is_uri, resolve_store
from .tempfiles import STAGING_PREFIX, sweep_staging

__all__ = ["RemoteTarget", "local_path"]

# The finished file is sent in pieces of this size (a multipart upload's part size on S3).
SEND_CHUNK_BYTES = 8 * 1024 * 1024


def local_path(path) -> str:
    """A local destination path, checked: its directory exists and it is not a directory."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"a Lance file is written to a path, URI or writable binary file object, "
                                f"not {type(path).__name__}")
    out = os.fspath(path)
    if isinstance(out, bytes):
        raise InvalidInputError(f"a Lance file is written to a str path, not bytes: {out!r}")
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise LanceIOError(f"cannot write {out}: directory {directory} does not exist")
    if os.path.isdir(out):
        raise LanceIOError(f"cannot write {out}: it is a directory")
    try:
        mode = os.lstat(out).st_mode
    except OSError:
        return out
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):  # the rename would put a file in its place
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise LanceIOError(f"cannot write {out}: it is {kind}, which a Lance file would replace")
    return out


class RemoteTarget:
    """A destination reached by streaming: a filesystem path or a file object."""

    def __init__(self, name: str, store: ObjectStore | None = None, fileobj=None) -> None:
        self.name = name
        self._store, self._fileobj = store, fileobj
        # write straight to the key: only for names no reader looks at before a commit names them
        self._direct = False
        sweep_staging()  # what writers killed while staging left (at most once a minute)
        self._dir = tempfile.mkdtemp(prefix=STAGING_PREFIX)
        self.staging = os.path.join(self._dir, "file.lance")

    def ensure_staging(self) -> None:
        """Make the staging directory again if a sweep took it (it was empty and untouched for
        an hour: a writer that waited that long for its first batch)."""
        os.makedirs(self._dir, exist_ok=True)

    @classmethod
    def of(cls, dest, storage_options: dict | None = None, filesystem=None) -> "RemoteTarget | None":
        """The target for ``dest``, or None for a local path."""
        if hasattr(dest, "write") and not isinstance(dest, (str, os.PathLike)):
            if storage_options or filesystem is not None:
                raise InvalidInputError("storage_options and filesystem apply to paths and URIs, not file objects")
            if getattr(dest, "closed", False) or (hasattr(dest, "writable") and not dest.writable()):
                raise InvalidInputError(f"cannot write a Lance file to {type(dest).__name__}: it is not writable")
            name = str(getattr(dest, "name", None) or f"<{type(dest).__name__}>")
            return cls(name, fileobj=dest)
        if isinstance(dest, ObjectStore):  # lancefile's own: a dataset's data file, under a name never reused
            target = cls(dest.uri, store=dest)
            target._direct = True
            return target
        if isinstance(dest, (str, os.PathLike)) and (filesystem is not None or is_uri(os.fspath(dest))):
            uri = os.fspath(dest)
            return cls(uri, store=resolve_store(uri, storage_options, filesystem))
        if storage_options:
            raise InvalidInputError(f"{dest}: storage_options apply to object-store URIs (s3://...)")
        return None

    def send(self) -> None:
        """Stream the finished staging file to the destination, then remove the staging directory."""
        try:
            if self._fileobj is not None:
                with open(self.staging, "rb") as src:
                    shutil.copyfileobj(src, self._fileobj, SEND_CHUNK_BYTES)
                return
            # a transient failure uploads the whole file again (to a new temporary key)
            self._store.call("write", self._upload)
        except (OSError, ValueError) as exc:
            if isinstance(exc, LanceIOError):
                raise
            raise LanceIOError(f"cannot write {self.name}: {exc}") from exc
        finally:
            self.discard()

    def _upload(self) -> None:
        fs, path = self._store.fs, self._store.path
        parent, _, base = path.rpartition("/")
        if self._store.uses_boto3():
            # boto3 makes the object visible only when the upload completes and aborts a failed
            # multipart upload: straight to the key, no temporary key, no 5 GB CopyObject limit
            s3.upload_file(path, self._store.options, self.staging, SEND_CHUNK_BYTES, IO_THREADS)
            return
        self._store.make_parent()
        if self._direct:  # nobody reads the key before a commit names it: no temporary key, no copy
            try:
                with open(self.staging, "rb") as src, fs.open_output_stream(path) as out:
                    while chunk := src.read(SEND_CHUNK_BYTES):
                        out.write(chunk)
            except BaseException:
                try:
                    fs.delete_file(path)
                except (OSError, ValueError):
                    pass
                raise
            return
        tmp = f"{parent}/.{base}.{uuid.uuid4().hex[:12]}.tmp" if parent else f".{base}.{uuid.uuid4().hex[:12]}.tmp"
        try:
            with open(self.staging, "rb") as src, fs.open_output_stream(tmp) as out:
                while chunk := src.read(SEND_CHUNK_BYTES):
                    out.write(chunk)
            fs.move(tmp, path)
        except BaseException:
            try:
                fs.delete_file(tmp)
            except (OSError, ValueError):
                pass
            raise

    def discard(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)
