"""Object stores through ``pyarrow.fs``: URIs, pylance's ``storage_options``, retries, range reads.

:func:`resolve_store` turns a URI (``s3://``, ``gs://``, ``az://``, ``memory://``, ``file://``)
or a path with ``filesystem=`` into an :class:`ObjectStore`: the filesystem, the path on it and
the :class:`RetryPolicy` the options asked for. :class:`ArrowFsSource` reads one object by
ranges: it merges ranges closer than :data:`REMOTE_COALESCE_GAP` (64 KiB, as the reference does
for object stores), splits ranges longer than :data:`PART_BYTES` into parts fetched at once on a
bounded thread pool, and retries transient failures with exponential backoff within a bounded
budget. A failure names the URI and says what went wrong (no such object or bucket, access
denied, server unreachable) instead of surfacing the SDK's text alone.

Retry and timeout keys (any scheme; pylance's names, lancefile's defaults):

* ``client_max_retries`` (3): retries of one request after a transient failure (a network
  error, a 5xx, throttling);
* ``client_retry_timeout`` (10 s): no retry starts once this much time has gone by since the
  first attempt;
* ``connect_timeout`` and ``timeout`` (S3; the SDK's defaults, 1 s and 3 s): per attempt, as
  seconds or a duration string (``"500ms"``, ``"5s"``, ``"1m"``).

Example::

    >>> store = resolve_store("memory://bucket/doc.bin", {"client_max_retries": "1"})
    >>> store.retry.max_retries, store.path
    (1, 'bucket/doc.bin')
    >>> store.write_bytes(b"0123456789")
    >>> bytes(store.open().read(3, 4))
    b'3456'
"""

from __future__ import annotations

import random
import re
import threading
import time
import weakref
from concurrent.futures import wait
from dataclasses import dataclass, field, replace

import pyarrow as pa

from . import s3
from .errors import InvalidInputError, LanceIOError
from .io import _BaseSource, check_range, new_buffer
from .threadpools import shared_pool

__all__ = ["ObjectStore", "RetryPolicy", "ArrowFsSource", "resolve_store", "resolve_filesystem", "is_uri", "file_uri_path",
           "REMOTE_COALESCE_GAP", "PART_BYTES", "IO_THREADS", "STORAGE_OPTION_KEYS"]

STORAGE_OPTION_KEYS = s3.STORAGE_OPTION_KEYS  # every storage_options key lancefile knows (lower case)

# Ranges of one object closer than this are fetched with one request: a round trip to an
# object store costs about as much as 64 KiB (the reference's block size for object stores).
REMOTE_COALESCE_GAP = 64 * 1024
# Ranges longer than this are fetched as parts of this size, several at once.
PART_BYTES = 8 * 1024 * 1024
# Parts in flight at once, for all reads of the process (a bounded pool).
IO_THREADS = 8

DEFAULT_MAX_RETRIES = 3
DEFAULT_RETRY_TIMEOUT = 10.0
RETRY_BASE_DELAY = 0.1
RETRY_MAX_DELAY = 2.0

_URI_SCHEMES = ("s3://", "gs://", "gcs://", "az://", "abfs://", "abfss://", "memory://", "file://")
_MEMORY_FS: dict = {}
_MEMORY_LOCK = threading.Lock()
CONDITIONAL_CREATE_MISSING = (
    "committing needs an atomic create-if-absent (S3's PutObject with If-None-Match: *), which lancefile "
    "sends on s3:// and memory:// only; pyarrow.fs cannot send it to gs://, az:// or a filesystem= given by "
    "the caller, and without it two writers could both make the same version. Write to a local path or s3://, "
    "or commit with pylance")


def is_uri(path) -> bool:
    """True for the object-store (and ``memory://``, ``file://``) URIs lancefile opens through pyarrow.fs."""
    return isinstance(path, str) and path.lower().startswith(_URI_SCHEMES)


def file_uri_path(path) -> str | None:
    """The local path a ``file://`` URI (or ``file:/abs/path``) names, percent-escapes decoded,
    as pyarrow reads it; None for anything else. Such a URI is opened as the local file it is:
    through pyarrow.fs a write would be staged in the temporary directory and copied.

    Example::

        >>> file_uri_path("file:///data/my%20table.lance"), file_uri_path("/data/t.lance")
        ('/data/my table.lance', None)
    """
    if not isinstance(path, str) or not path[:5].lower() == "file:":
        return None
    import pyarrow.fs as pafs

    try:
        return pafs.FileSystem.from_uri(path)[1]
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise InvalidInputError(f"{path}: not a local file URI: {exc}") from None


# -- retries -------------------------------------------------------------------------------
# What the AWS SDK (through pyarrow) says of a failure it should not be retried for, and of
# one it may: a GetObject failure loses its response body in pyarrow ("Failed to flush
# response stream"), so INTERNAL_FAILURE counts as transient.
_PERMANENT = re.compile(r"ACCESS_DENIED|INVALID_ACCESS_KEY|SIGNATURE_DOES_NOT_MATCH|NO_SUCH_BUCKET|NO_SUCH_KEY|"
                        r"RESOURCE_NOT_FOUND|HTTP status 4(?!08|29)\d\d")
_TRANSIENT = re.compile(r"NETWORK_CONNECTION|SLOW_DOWN|SERVICE_UNAVAILABLE|THROTTL|INTERNAL_FAILURE|"
                        r"REQUEST_TIMEOUT|REQUEST_TIME_TOO_SKEWED|HTTP status (?:5\d\d|408|429)|curlCode|"
                        r"[Tt]imeout|[Cc]onnection (?:reset|refused|aborted)")


def is_transient(exc: BaseException) -> bool:
    """Whether a failed request may succeed if tried again (network, 5xx, throttling)."""
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
        return False
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    text = str(exc)
    return not _PERMANENT.search(text) and bool(_TRANSIENT.search(text))


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a failed request is tried again: exponential backoff with jitter.

    A request is attempted at most ``1 + max_retries`` times; a retry starts only if it can
    start within ``timeout`` seconds of the first attempt. Failures that cannot pass by
    themselves (no such object, access denied) are not retried.

    Example::

        >>> calls = []
        >>> def flaky():
        ...     calls.append(1)
        ...     if len(calls) < 3:
        ...         raise ConnectionError("connection reset")
        ...     return "ok"
        >>> RetryPolicy(max_retries=3, base_delay=0.001).call("s3://b/k", "read", flaky), len(calls)
        ('ok', 3)
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    timeout: float = DEFAULT_RETRY_TIMEOUT
    base_delay: float = RETRY_BASE_DELAY
    max_delay: float = RETRY_MAX_DELAY

    def delays(self):
        """The pauses before each retry (seconds), before jitter."""
        return [min(self.max_delay, self.base_delay * 2**i) for i in range(self.max_retries)]

    def call(self, name: str, what: str, fn, store: "ObjectStore | None" = None):
        """``fn()``, tried again after transient failures; a final failure is a :class:`LanceIOError`."""
        start = time.monotonic()
        attempt = 0
        while True:
            try:
                return fn()
            except (OSError, ValueError, pa.ArrowException) as exc:
                if isinstance(exc, LanceIOError):
                    raise
                attempt += 1
                elapsed = time.monotonic() - start
                delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
                if not is_transient(exc) or attempt > self.max_retries or elapsed + delay > self.timeout:
                    raise store_error(name, what, exc, attempt, time.monotonic() - start, store) from exc
                time.sleep(delay)


def store_error(name: str, what: str, exc: BaseException, attempts: int, elapsed: float,
                store: "ObjectStore | None" = None) -> LanceIOError:
    """A :class:`LanceIOError` naming the URI and saying what the failure means."""
    text = str(exc)
    tries = f" (gave up after {attempts} attempts in {elapsed:.1f} s; storage_options client_max_retries, " \
            f"client_retry_timeout)" if attempts > 1 else ""
    if isinstance(exc, FileNotFoundError) or "NO_SUCH_KEY" in text:
        if store is not None and store.bucket_missing():
            return LanceIOError(f"cannot {what} {name}: bucket {store.path.split('/', 1)[0]!r} does not exist")
        return LanceIOError(f"cannot {what} {name}: no such object")
    if "NO_SUCH_BUCKET" in text:
        return LanceIOError(f"cannot {what} {name}: the bucket does not exist")
    if re.search(r"ACCESS_DENIED|INVALID_ACCESS_KEY|SIGNATURE_DOES_NOT_MATCH|HTTP status 403", text) or \
            isinstance(exc, PermissionError):
        return LanceIOError(f"cannot {what} {name}: access denied: check the credentials (aws_access_key_id, "
                            f"aws_secret_access_key, aws_session_token) and the permissions on the bucket ({text})")
    if re.search(r"NETWORK_CONNECTION|curlCode|[Cc]onnection (?:reset|refused|aborted)", text) or \
            isinstance(exc, ConnectionError):
        return LanceIOError(f"cannot {what} {name}: the object store cannot be reached ({text}){tries}")
    return LanceIOError(f"cannot {what} {name}: {text}{tries}")


def _pool():
    """The bounded pool that fetches parts of large ranges (:data:`IO_THREADS` threads)."""
    return shared_pool("io", IO_THREADS)


def coalesce(ranges, gap: int) -> list[tuple[int, int]]:
    """``(offset, length)`` ranges merged where less than ``gap`` bytes apart, sorted.

    Example::

        >>> coalesce([(100, 10), (0, 10), (15, 5)], gap=8)
        [(0, 20), (100, 10)]
    """
    out: list[list[int]] = []
    for off, n in sorted((int(o), int(n)) for o, n in ranges if n > 0):
        if out and off <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], off + n)
        else:
            out.append([off, off + n])
    return [(a, b - a) for a, b in out]


class _Prefetched:
    """A range being fetched in the background: its buffer fills as its parts arrive."""

    __slots__ = ("start", "stop", "buf", "futures", "step", "__weakref__")

    def __init__(self, start: int, buf: memoryview, parts: tuple[list, int]) -> None:
        self.start, self.stop, self.buf = start, start + len(buf), buf
        self.futures, self.step = parts

    def view(self, offset: int, length: int) -> memoryview:
        """The bytes at ``offset``, once the parts holding them have arrived (not the others)."""
        lo = offset - self.start
        for f in self.futures[lo // self.step : -(-(lo + length) // self.step)]:
            f.result()  # raises what the fetch raised (after its retries)
        return self.buf[lo : lo + length]


class ArrowFsSource(_BaseSource):
    """One object of a ``pyarrow.fs.FileSystem`` (S3, GCS, Azure, memory, local), read by ranges.

    Each request is one ranged GET (``read_at``, which is thread-safe). Ranges closer than
    :data:`REMOTE_COALESCE_GAP` are merged (:meth:`read_many`, :func:`lancefile.io.read_spans`);
    a range longer than :data:`PART_BYTES` is fetched as parts at once on a pool of
    :data:`IO_THREADS`. Opening costs one metadata request (HEAD on S3: pyarrow.fs has no way
    to read an object's last bytes without knowing its size). Every request is retried under
    ``retry`` (:class:`RetryPolicy`).

    :meth:`prefetch` starts fetching ranges a reader is about to need (a scan's next pages,
    :mod:`lancefile.prefetch`), coalesced and in parallel; a later read that lies inside one
    of them waits for it instead of making a request of its own. The source holds them weakly:
    they live as long as the caller keeps what :meth:`prefetch` returned (a scan, its chunks).

    Example::

        >>> import pyarrow.fs as pafs
        >>> fs = pafs._MockFileSystem()
        >>> with fs.open_output_stream("x.bin") as f:
        ...     _ = f.write(b"0123456789")
        >>> bytes(ArrowFsSource(fs, "x.bin").read(3, 4))
        b'3456'
    """

    thread_safe = True
    coalesce_gap = REMOTE_COALESCE_GAP
    remote = True  # a request costs a round trip: widen reads rather than add requests

    def __init__(self, filesystem, path: str, name: str | None = None, *, retry: RetryPolicy | None = None,
                 store: "ObjectStore | None" = None) -> None:
        self.name = name or path
        self._retry = retry or RetryPolicy()
        self._f = self._retry.call(self.name, "open", lambda: filesystem.open_input_file(path), store)
        self._size = self._f.size()
        self._prefetched: list[weakref.ref] = []
        self._plock = threading.Lock()

    def prefetch(self, ranges) -> list:
        """Start fetching ``ranges`` (``(offset, length)``, coalesced) in the background.

        Returns the fetches (already running ones included); reads find them while the caller
        holds on to this list.
        """
        out: list[_Prefetched] = []
        with self._plock:
            live = sorted((e for e in (r() for r in self._prefetched) if e is not None), key=lambda e: e.start)
            missing = []
            for off, n in ranges:  # bytes already fetched (a page shared with the last chunk) are kept
                if off < 0 or off + n > self._size:
                    continue  # the reads themselves will report it
                pos, end = off, off + n
                for e in live:
                    if e.stop <= pos or e.start >= end:
                        continue
                    if e.start > pos:
                        missing.append((pos, e.start - pos))
                    pos = max(pos, e.stop)
                    if not any(e is o for o in out):
                        out.append(e)
                if pos < end:
                    missing.append((pos, end - pos))
            for off, n in coalesce(missing, self.coalesce_gap):
                buf = new_buffer(n).cast("B")
                out.append(_Prefetched(off, buf, self._submit_parts(off, buf)))
                live.append(out[-1])
            self._prefetched = [weakref.ref(e) for e in live]
        return out

    def _cached(self, offset: int, length: int):
        """The bytes at ``offset`` if prefetches hold them all (one, or several end to end), else None."""
        if not self._prefetched:
            return None
        end = offset + length
        with self._plock:
            hits = sorted((e for e in (r() for r in self._prefetched)
                           if e is not None and e.start < end and e.stop > offset), key=lambda e: e.start)
        pos, pieces = offset, []
        for e in hits:
            if e.start > pos:
                return None  # a gap: not all of it was prefetched
            if e.stop > pos:
                pieces.append((e, pos, min(e.stop, end)))
                pos = min(e.stop, end)
            if pos >= end:
                break
        if pos < end:
            return None
        if len(pieces) == 1:
            return pieces[0][0].view(offset, length)
        out = new_buffer(length).cast("B")  # a read across two prefetches: their bytes joined
        for e, a, b in pieces:
            out[a - offset : b - offset] = e.view(a, b - a)
        return out

    def _submit_parts(self, offset: int, out: memoryview) -> tuple[list, int]:
        """Fetch ``len(out)`` bytes at ``offset`` into ``out`` as parts on the pool: (their futures, part size)."""
        length = len(out)
        n = -(-length // PART_BYTES)
        step = -(-length // n)  # equal parts, each at most PART_BYTES

        def part(lo: int) -> None:
            hi = min(lo + step, length)
            out[lo:hi] = memoryview(self._get(offset + lo, hi - lo))

        return [_pool().submit(part, lo) for lo in range(0, length, step)], step

    def _get(self, offset: int, length: int):
        if self._f.closed:
            raise LanceIOError(f"{self.name}: the file is closed")
        data = self._retry.call(self.name, f"read {length} bytes at {offset} of", lambda: self._f.read_at(length, offset))
        if len(data) != length:
            raise LanceIOError(f"{self.name}: short read at {offset} ({len(data)} of {length} bytes)")
        return data

    def read(self, offset: int, length: int) -> memoryview:
        check_range(self.name, self._size, offset, length)
        if length == 0:
            return memoryview(b"")
        hit = self._cached(offset, length)
        if hit is not None:
            return hit
        if length > PART_BYTES:
            out = new_buffer(length)
            self.read_into(offset, out)
            return out
        return memoryview(self._get(offset, length))

    def read_into(self, offset: int, out: memoryview) -> None:
        out = memoryview(out).cast("B")
        length = len(out)
        check_range(self.name, self._size, offset, length)
        hit = self._cached(offset, length) if length else None
        if hit is not None:
            out[:] = hit
            return
        if length <= PART_BYTES:
            if length:
                out[:] = memoryview(self._get(offset, length))
            return
        futures, _ = self._submit_parts(offset, out)
        try:
            for f in futures:
                f.result()
        finally:
            wait(futures)  # never leave a part writing into the caller's buffer after an error

    def close(self) -> None:
        with self._plock:
            self._prefetched = []
        self._f.close()


# -- resolving URIs ------------------------------------------------------------------------
def _retry_policy(uri: str, options: dict) -> RetryPolicy:
    policy = RetryPolicy()
    if "client_max_retries" in options:
        value = options["client_max_retries"]
        try:
            retries = int(str(value))
        except ValueError:
            retries = -1
        if retries < 0:
            raise InvalidInputError(f"{uri}: storage option client_max_retries={value!r} is not a whole number >= 0")
        policy = replace(policy, max_retries=retries)
    if "client_retry_timeout" in options:
        policy = replace(policy, timeout=s3.duration(uri, "client_retry_timeout", options["client_retry_timeout"]))
    return policy


@dataclass(frozen=True)
class ObjectStore:
    """A location on a filesystem reached through pyarrow.fs: ``fs``, ``path`` on it, ``uri`` to name it.

    Example::

        >>> store = resolve_store("memory://bucket/dir")
        >>> store.child("a.bin").write_bytes(b"abc")
        >>> [name for name, _ in store.list()], store.child("a.bin").read_bytes()
        (['a.bin'], b'abc')
    """

    fs: object
    path: str
    uri: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    # the storage_options the store was made from (a conditional create on S3 needs them)
    options: tuple | None = field(default=None, repr=False, compare=False)

    def child(self, *parts: str) -> "ObjectStore":
        """The store of ``path/part/...`` (parts joined with ``/``)."""
        tail = "/".join(p.strip("/") for p in parts if p)
        return replace(self, path=f"{self.path.rstrip('/')}/{tail}" if self.path else tail,
                       uri=f"{self.uri.rstrip('/')}/{tail}")

    def call(self, what: str, fn):
        return self.retry.call(self.uri, what, fn, self)

    def open(self) -> ArrowFsSource:
        """The object as a byte source (one metadata request)."""
        return ArrowFsSource(self.fs, self.path, self.uri, retry=self.retry, store=self)

    def read_bytes(self, limit: int | None = None) -> bytes:
        """The whole object (one GET after the HEAD); more than ``limit`` bytes is an error."""
        src = self.open()
        try:
            if limit is not None and src.size > limit:
                raise LanceIOError(f"{self.uri}: {src.size} bytes is more than the {limit} expected")
            return bytes(src.read(0, src.size))
        finally:
            src.close()

    def write_bytes(self, data: bytes) -> None:
        """Write the whole object (replacing it); on S3 one PutObject when it is at most a part."""
        if self.uses_boto3() and len(data) <= PART_BYTES:
            self.call("write", lambda: s3.put(self.path, self.options, data))
            return

        def put() -> None:
            self.make_parent()
            with self.fs.open_output_stream(self.path) as out:
                out.write(data)
        self.call("write", put)

    def make_parent(self) -> None:
        """Create the directory the path lies in, where the filesystem has directories (not S3's)."""
        import pyarrow.fs as pafs

        parent = self.path.rpartition("/")[0]
        if parent and not isinstance(self.fs, pafs.S3FileSystem):
            self.fs.create_dir(parent, recursive=True)

    def info(self):
        """The ``pyarrow.fs.FileInfo`` of the path (type NotFound if nothing is there)."""
        return self.call("look up", lambda: self.fs.get_file_info(self.path))

    def list(self) -> list[tuple[str, int]]:
        """``(name, size)`` of the objects directly below the path (none if the path does not exist)."""
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(self.path, allow_not_found=True, recursive=False)
        infos = self.call("list", lambda: self.fs.get_file_info(selector))
        return [(i.base_name, int(i.size or 0)) for i in infos if i.type == pafs.FileType.File]

    def delete(self) -> None:
        self.call("delete", lambda: self.fs.delete_file(self.path))

    def uses_boto3(self) -> bool:
        """Whether writes and lookups go to S3 through boto3 (:mod:`lancefile.s3`): an S3 store
        lancefile made from storage_options, with boto3 installed."""
        import pyarrow.fs as pafs

        return isinstance(self.fs, pafs.S3FileSystem) and self.options is not None and s3.boto3_available()

    def exists(self) -> bool:
        """Whether an object is at the key (on S3 one HEAD; pyarrow.fs also lists, for a directory)."""
        import pyarrow.fs as pafs

        if self.uses_boto3():
            return self.call("look up", lambda: s3.head(self.path, self.options))
        return self.info().type != pafs.FileType.NotFound

    def put_if_absent(self, data: bytes) -> bool:
        """Create the object with ``data`` only if nothing is at the key; False if something is.

        Atomic against every other writer that creates the key this way (pylance included):
        on S3 one ``PutObject`` with ``If-None-Match: *`` (sent through boto3, since
        pyarrow.fs cannot send it); on ``memory://`` (this process only) under a lock. Other
        stores cannot do it through pyarrow.fs and raise :class:`LanceIOError`.

        Example::

            >>> store = resolve_store("memory://put-if-absent-doc/k")
            >>> store.put_if_absent(b"first"), store.put_if_absent(b"second"), store.read_bytes()
            (True, False, b'first')
        """
        import pyarrow.fs as pafs

        if isinstance(self.fs, pafs.S3FileSystem):
            if self.options is None:  # a filesystem= of the caller's: its endpoint and keys are unknown
                raise LanceIOError(f"cannot create {self.uri} atomically: {CONDITIONAL_CREATE_MISSING}")
            return self.call("create", lambda: s3.put(self.path, self.options, data, if_none_match="*"))
        if self.fs is _MEMORY_FS.get("memory"):
            with _MEMORY_LOCK:
                if self.fs.get_file_info(self.path).type != pafs.FileType.NotFound:
                    return False
                self.make_parent()
                with self.fs.open_output_stream(self.path) as out:
                    out.write(data)
                return True
        raise LanceIOError(f"cannot create {self.uri} atomically: {CONDITIONAL_CREATE_MISSING}")

    def bucket_missing(self) -> bool:
        """Whether the path's bucket does not exist on an S3 store (one request; False if unsure)."""
        import pyarrow.fs as pafs

        if not isinstance(self.fs, pafs.S3FileSystem) or not self.path:
            return False
        try:
            return self.fs.get_file_info(self.path.split("/", 1)[0]).type == pafs.FileType.NotFound
        except (OSError, ValueError):
            return False


def resolve_store(uri: str, storage_options: dict | None = None, filesystem=None) -> ObjectStore:
    """The :class:`ObjectStore` of a URI, built from pylance-style ``storage_options``.

    ``memory://`` is one process-wide in-memory filesystem (as ``fsspec``'s), for tests and
    examples. With ``filesystem=`` (a ``pyarrow.fs`` or fsspec filesystem) ``uri`` is a path on it.
    """
    import pyarrow.fs as pafs

    options = dict(storage_options or {})
    if storage_options is not None and not isinstance(storage_options, dict):
        raise InvalidInputError(f"{uri}: storage_options must be a dict, not {type(storage_options).__name__}")
    retry = _retry_policy(uri, options)
    if filesystem is not None:
        if not isinstance(filesystem, pafs.FileSystem):
            try:  # an fsspec filesystem
                filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
            except Exception as exc:  # noqa: BLE001 - anything not a filesystem
                raise LanceIOError(f"{uri}: filesystem= must be a pyarrow.fs.FileSystem or an fsspec filesystem, "
                                   f"not {type(filesystem).__name__}") from exc
        path = uri.split("://", 1)[1] if is_uri(uri) else uri
        return ObjectStore(filesystem, path, uri, retry)
    scheme, _, rest = uri.partition("://")
    scheme = scheme.lower()
    if scheme == "s3":
        return ObjectStore(s3.s3_filesystem(uri, options), rest, uri, retry,
                           tuple(sorted((str(k).lower(), str(v)) for k, v in options.items())))
    other = {k: v for k, v in options.items() if k.lower() not in s3.RETRY_KEYS}
    if scheme == "memory":
        if "memory" not in _MEMORY_FS:
            _MEMORY_FS["memory"] = pafs._MockFileSystem()
        fs = _MEMORY_FS["memory"]
    elif scheme == "file":
        fs = pafs.LocalFileSystem()
    else:
        fs = None
    if other:
        raise LanceIOError(f"{uri}: storage_options other than client_max_retries/client_retry_timeout are "
                           f"supported for s3:// only; pass filesystem= (a configured pyarrow.fs or fsspec "
                           f"filesystem) for {scheme}://")
    if fs is not None:
        return ObjectStore(fs, rest, uri, retry)
    try:
        fs, path = pafs.FileSystem.from_uri(uri)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise LanceIOError(f"{uri}: cannot open a filesystem for this URI: {exc}") from exc
    return ObjectStore(fs, path, uri, retry)


def resolve_filesystem(uri: str, storage_options: dict | None = None, filesystem=None):
    """``(pyarrow.fs.FileSystem, path)`` for a URI (see :func:`resolve_store`).

    Example::

        >>> fs, path = resolve_filesystem("memory://bucket/a.lance")
        >>> type(fs).__name__, path
        ('_MockFileSystem', 'bucket/a.lance')
    """
    store = resolve_store(uri, storage_options, filesystem)
    return store.fs, store.path
