"""Temporary files of writes in progress: named to be recognised, locked while alive, swept when stale.

A write goes to ``.<name>.<12 hex digits>.tmp`` beside its destination and is renamed into
place when it succeeds; every failure Python sees removes it. A process killed mid-write
(SIGKILL, power loss) cannot, so the writer holds an exclusive ``flock`` on its temporary file
for the file's whole life: the kernel drops the lock when the process dies, whatever killed it.
The next write into the same directory (at most once every :data:`SWEEP_INTERVAL` seconds per
directory and process) removes every temporary file of that pattern that nobody holds locked
and that is older than :data:`STALE_AFTER` seconds (which covers the instant between a file's
creation and its lock). :func:`remove_stale` does the same on demand.

Example::

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> tmp = temporary_path(os.path.join(d, "data.lance"))
    >>> is_temporary(os.path.basename(tmp))
    True
    >>> open(tmp, "wb").close()           # left behind by a writer that was killed
    >>> os.utime(tmp, (0, 0))             # ... long ago
    >>> [os.path.basename(p) == os.path.basename(tmp) for p in remove_stale(d)]
    [True]
    >>> os.listdir(d)
    []
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
import uuid

from .errors import LanceIOError

__all__ = ["temporary_path", "is_temporary", "create_locked", "remove_stale", "sweep_once", "STALE_AFTER",
           "SWEEP_INTERVAL", "NAME_MAX", "sweep_staging", "STAGING_PREFIX", "STAGING_STALE_AFTER",
           "sync_directory", "EMBEDDED_PREFIX"]

try:  # POSIX advisory locks; elsewhere stale files are only swept by age
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

# A temporary file untouched for this long and not locked belongs to a dead writer (the age
# only covers the instant between a writer creating its file and locking it).
STALE_AFTER = 1.0
# Each process sweeps a directory at most this often.
SWEEP_INTERVAL = 60.0
# Without locks (no fcntl) only files this old are taken for dead.
_UNLOCKED_STALE_AFTER = 24 * 3600.0

_PATTERN = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
# The longest file name most file systems allow, in bytes, and what a temporary name adds
NAME_MAX = 255
_TEMP_EXTRA = len(".") + len(".0123456789ab.tmp")
_swept: dict[str, float] = {}
_SWEPT_MAX = 4096  # directories remembered at most (each costs ~200 bytes)
_swept_lock = threading.Lock()


def temporary_path(path: str) -> str:
    """Where a write to ``path`` goes until it is complete: ``<dir>/.<name>.<12 hex>.tmp``,
    the name cut (at a character) where the whole would pass :data:`NAME_MAX` bytes: a
    destination name of up to 255 bytes is written like any other.

    Example::

        >>> os.path.basename(temporary_path("/d/" + "n" * 250 + ".lance"))[:5], len(os.path.basename(
        ...     temporary_path("/d/" + "n" * 250 + ".lance")))
        ('.nnnn', 255)
    """
    directory, name = os.path.split(os.path.abspath(path))
    raw = os.fsencode(name)
    if len(raw) > NAME_MAX - _TEMP_EXTRA:
        name = os.fsdecode(raw[: NAME_MAX - _TEMP_EXTRA].decode("utf-8", "ignore").encode("utf-8"))
    return os.path.join(directory, f".{name}.{uuid.uuid4().hex[:12]}.tmp")


def is_temporary(name: str) -> bool:
    """Whether a file name is that of a lancefile write in progress (or of a dead one)."""
    return _PATTERN.fullmatch(name) is not None


def create_locked(path: str):
    """Create ``path`` (it must not exist) for unbuffered binary writing, locked while open."""
    try:
        f = open(path, "xb", buffering=0)
    except OSError as exc:
        raise LanceIOError(f"cannot create the temporary file {path}: {exc.strerror or exc}") from exc
    if fcntl is not None:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a file system without flock: the file is swept by age only
            pass
    return f


def remove_stale(directory: str) -> list[str]:
    """Remove the temporary files in ``directory`` left by writers that died; return their paths."""
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not is_temporary(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        age = now - st.st_mtime
        if age < (STALE_AFTER if fcntl is not None else _UNLOCKED_STALE_AFTER):
            continue
        if _unlink_if_unlocked(entry.path):
            removed.append(entry.path)
    return removed


def _unlink_if_unlocked(path: str) -> bool:
    if fcntl is None:  # pragma: no cover - Windows
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it
        try:
            os.unlink(path)  # unlinked while we hold the lock: no writer can be starting on it
            return True
        except OSError:
            return False
    finally:
        os.close(fd)


def sync_directory(directory: str) -> None:
    """Make a rename or a new name in ``directory`` durable (fsync of the directory): a file
    fsynced and then renamed is only sure to be found under its new name after a crash once
    its directory is synced too. Where directories cannot be synced (Windows, some network
    file systems) this does nothing."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # EINVAL: a file system that does not sync directories
        pass
    finally:
        os.close(fd)


# Private staging directories (``<system temp>/lancefile-upload-*``, :mod:`lancefile.remote`;
# ``lancefile-embedded-*``, a file's statistics being written) left empty by a dead writer are
# removed once untouched this long: a live writer may make its directory long before its
# first batch (and makes it again if a sweep took it)
STAGING_PREFIX = "lancefile-upload-"
EMBEDDED_PREFIX = "lancefile-embedded-"
STAGING_STALE_AFTER = 3600.0


def sweep_staging(root: str | None = None) -> list[str]:
    """Remove what writers killed while staging a file for an object store or a file object,
    or while writing a file's statistics, left in ``root`` (the system temporary directory):
    their temporary files, as
    :func:`remove_stale` does, then their directories once empty and untouched for
    :data:`STAGING_STALE_AFTER` seconds. Returns the paths removed. At most once every
    :data:`SWEEP_INTERVAL` seconds a process, like :func:`sweep_once`."""
    import tempfile

    root = os.path.abspath(root or tempfile.gettempdir())
    key = os.path.join(root, STAGING_PREFIX + "*")
    if not _due(key):
        return []
    removed = []
    try:
        entries = [e for e in os.scandir(root) if e.name.startswith((STAGING_PREFIX, EMBEDDED_PREFIX))]
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            removed += remove_stale(entry.path)
            if now - entry.stat(follow_symlinks=False).st_mtime >= STAGING_STALE_AFTER:
                os.rmdir(entry.path)  # only when empty (a live writer's file is never removed)
                removed.append(entry.path)
        except OSError:
            continue
    return removed


def _due(key: str) -> bool:
    """Whether ``key`` was not swept by this process in the last :data:`SWEEP_INTERVAL` s (and
    mark it swept now)."""
    now = time.monotonic()
    with _swept_lock:
        last = _swept.get(key)
        if last is not None and now - last < SWEEP_INTERVAL:
            return False
        if len(_swept) >= _SWEPT_MAX:  # a process writing into many directories: forget the old ones
            for old in [k for k, t in _swept.items() if now - t >= SWEEP_INTERVAL]:
                del _swept[old]
            if len(_swept) >= _SWEPT_MAX:  # forgetting costs one more sweep, never a wrong one
                _swept.clear()
        _swept[key] = now
    return True


def sweep_once(directory: str) -> None:
    """:func:`remove_stale` unless this process swept ``directory`` in the last :data:`SWEEP_INTERVAL` s."""
    key = os.path.abspath(directory)
    if _due(key):
        remove_stale(key)
