"""The byte-range interface through which every read goes.

A :class:`ByteSource` knows its size and returns byte ranges; every range is checked
against the size before it is read, so a corrupt offset gives a :class:`CorruptFileError`
instead of a short read or a huge allocation. :class:`CountingSource` wraps another
source and counts requests and bytes, which is how the tests show that a projection or a
take reads only what it needs.

Example::

    >>> src = InMemorySource(b"hello world")
    >>> bytes(src.read(6, 5))
    b'world'
"""

from __future__ import annotations

import ctypes
import functools
import os
import stat
import threading
from concurrent.futures import wait
from typing import Protocol, Sequence

import numpy as np
import pyarrow as pa

from ._jit import _Kernel
from .errors import CorruptFileError, LanceIOError, UnsupportedTypeError
from .threadpools import may_split, shared_pool

__all__ = ["ByteSource", "LocalFileSource", "InMemorySource", "FileObjectSource", "CountingSource", "SliceSource",
           "open_source", "read_into", "read_spans", "fetch_spans", "new_buffer", "ranges_total"]

# Ranges of a local file closer than this are fetched in one request (a read costs about as
# much as 4 KiB). A source may say otherwise with a ``coalesce_gap`` attribute: object stores
# use 64 KiB (lancefile.objectstore.REMOTE_COALESCE_GAP), as the reference does.
COALESCE_GAP = 4 * 1024
_PREADV = hasattr(os, "preadv")
# Buffers at least this large come from Arrow's memory pool, which reuses freed memory: a
# scan's chunks then land in pages already mapped, where fresh memory from the OS costs
# more to fault in than the read itself (~4x for a 200 MB read here).
POOL_BUFFER_BYTES = 64 * 1024


def new_buffer(n: int) -> memoryview:
    """``n`` writable bytes (contents undefined), from Arrow's pool when large."""
    if n >= POOL_BUFFER_BYTES:
        return memoryview(pa.allocate_buffer(n)).cast("B")  # unsigned bytes, as a bytearray's
    return memoryview(bytearray(n))


class ByteSource(Protocol):
    """What the reader needs from storage: a size and byte ranges."""

    name: str

    @property
    def size(self) -> int: ...

    def read(self, offset: int, length: int) -> memoryview: ...

    def read_many(self, ranges: Sequence[tuple[int, int]]) -> list[memoryview]: ...

    def close(self) -> None: ...

    # Optional: ``read_into(offset, out)`` fills the writable buffer ``out`` with the bytes at
    # ``offset`` (one request, no intermediate copy); see :func:`read_into`. A true
    # ``thread_safe`` attribute lets a reader issue reads from several threads at once;
    # ``coalesce_gap`` is the gap below which two ranges are better read as one (see
    # :func:`coalesce_gap`); a true ``remote`` attribute says each request is a round trip
    # (so reads are widened rather than split into more requests); ``read_spans(starts,
    # lengths, gap)`` replaces :func:`fetch_spans` for :func:`read_spans` (see there).


def coalesce_gap(source) -> int:
    """The gap (bytes) below which ``source`` reads two ranges as one request."""
    return int(getattr(source, "coalesce_gap", COALESCE_GAP))


def read_into(source: ByteSource, offset: int, out: memoryview) -> None:
    """Read ``len(out)`` bytes at ``offset`` into ``out``, as one request of ``source``."""
    fn = getattr(source, "read_into", None)
    if fn is not None:
        fn(offset, out)
    else:
        out[:] = source.read(offset, len(out))


def read_spans(source: ByteSource, starts, lengths, gap: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Many byte ranges in one buffer: ``(data, at)``, range ``i`` being
    ``data[at[i] : at[i] + lengths[i]]``.

    Ranges less than ``gap`` bytes apart (by default the source's :func:`coalesce_gap`) are
    fetched with one request straight into the
    buffer, the bytes between them included (so nothing is copied twice); the plan is made
    with numpy, so ten thousand ranges cost ten thousand reads at most, not ten thousand
    Python iterations of bookkeeping as well. Every range is checked against the source's
    size before anything is allocated. A source with a ``read_spans(starts, lengths, gap)``
    method (checked int64 arrays) reads them its own way: a checksummed file widens a take's
    ranges to whole blocks and checks them together.

    Example::

        >>> data, at = read_spans(InMemorySource(b"0123456789"), [6, 1], [2, 3])
        >>> [bytes(data[a : a + n]) for a, n in zip(at, [2, 3])]
        [b'67', b'123']
    """
    s = np.asarray(starts, dtype=np.int64).reshape(-1)
    n = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if s.shape != n.shape:
        raise ValueError("starts and lengths must be equally long")
    if not len(s):
        return np.zeros(0, np.uint8), np.zeros(0, np.int64)
    if gap is None:
        gap = coalesce_gap(source)
    bad = ranges_total(s, n, source.size)
    if bad < 0:
        check_range(source.name, source.size, int(s[-1 - bad]), int(n[-1 - bad]))
    batched = getattr(source, "read_spans", None)  # a source with its own way (checksums)
    if batched is not None:
        return batched(s, n, gap)
    return fetch_spans(source, s, n, gap)


def fetch_spans(source: ByteSource, s: np.ndarray, n: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`read_spans` once the ranges are checked: int64 ``s`` and ``n``, read with
    ``source.read_into``, ranges less than ``gap`` apart in one request (planned by one
    compiled pass, :func:`_k_coalesce`)."""
    k = len(s)
    b_start, b_len, b_out, at = (np.empty(k, np.int64) for _ in range(4))
    m, total = _k_coalesce(np.ascontiguousarray(s, np.int64), np.ascontiguousarray(n, np.int64), gap, b_start, b_len,
                           b_out, at)
    b_start, b_len, b_out = b_start[:m], b_len[:m], b_out[:m]
    buf = new_buffer(int(total))
    if m > 1 and getattr(source, "remote", False):
        # an object store: the requests go out at once (a take's rows, a page's chunks)
        futures = [_fetch_pool().submit(read_into, source, a, buf[o : o + ln])
                   for a, ln, o in zip(b_start.tolist(), b_len.tolist(), b_out.tolist())]
        try:
            for f in futures:
                f.result()
        finally:
            wait(futures)
    else:
        many = getattr(source, "read_many_into", None)
        if many is not None:
            many(b_start, b_len, b_out, buf)
        else:
            for a, ln, o in zip(b_start.tolist(), b_len.tolist(), b_out.tolist()):
                read_into(source, a, buf[o : o + ln])
    return np.frombuffer(buf, np.uint8), at


def inherit(wrapper, inner) -> None:
    """Give a source that wraps ``inner`` the same ``thread_safe``, ``coalesce_gap`` and ``remote``."""
    wrapper.thread_safe = bool(getattr(inner, "thread_safe", False))
    wrapper.coalesce_gap = coalesce_gap(inner)
    wrapper.remote = bool(getattr(inner, "remote", False))


FETCH_THREADS = 8


def _fetch_pool():
    """Threads that issue the requests of one :func:`read_spans` at once on a remote source.

    Separate from :mod:`lancefile.objectstore`'s pool, whose tasks (parts of large ranges)
    these wait for: one pool waiting on itself could deadlock.
    """
    return shared_pool("fetch", FETCH_THREADS)


def check_range(name: str, size: int, offset: int, length: int, what: str = "range") -> None:
    """Raise CorruptFileError unless ``[offset, offset+length)`` lies inside ``size`` bytes."""
    if offset < 0 or length < 0 or offset + length > size:
        raise CorruptFileError(
            f"{name}: {what} [{offset}, {offset + length}) lies outside the file of {size} bytes"
        )


class _BaseSource:
    name: str
    _size: int
    coalesce_gap: int = COALESCE_GAP

    @property
    def size(self) -> int:
        return self._size

    def read_many(self, ranges: Sequence[tuple[int, int]]) -> list[memoryview]:
        """Read several ranges, fetching nearby ones with one request."""
        if not ranges:
            return []
        order = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
        out: list[memoryview | None] = [None] * len(ranges)
        groups = []  # (start, end, indices of the ranges it holds)
        i = 0
        while i < len(order):
            start = ranges[order[i]][0]
            end = start + ranges[order[i]][1]
            j = i + 1
            while j < len(order) and ranges[order[j]][0] <= end + self.coalesce_gap:
                end = max(end, ranges[order[j]][0] + ranges[order[j]][1])
                j += 1
            groups.append((start, end, order[i:j]))
            i = j
        if len(groups) > 1 and getattr(self, "remote", False):  # an object store: the requests go out at once
            blocks = list(_fetch_pool().map(lambda g: self.read(g[0], g[1] - g[0]), groups))
        else:
            blocks = [self.read(start, end - start) for start, end, _ in groups]
        for (start, _, members), block in zip(groups, blocks):
            for k in members:
                off, ln = ranges[k]
                out[k] = block[off - start : off - start + ln]
        return out  # type: ignore[return-value]

    def read_into(self, offset: int, out: memoryview) -> None:
        out[:] = self.read(offset, len(out))

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# read_many_into issues this many reads or more from its compiled loop (fewer: the Python
# loop, which costs less than the call into the compiled one)
_PREAD_LOOP_MIN = 4
# A local read of at least this many bytes goes in two halves, one on a helper thread:
# copying from the page cache runs at one core's speed (a 200 MB file here: 44 ms in one
# read, 25 ms in two at once), and a take of a wide file reads most of it.
SPLIT_READ_BYTES = 8 << 20


@functools.lru_cache(maxsize=None)
def _libc_pread():
    """The C library's ``pread`` as a ctypes function, or None where there is none."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).pread
    except (OSError, AttributeError, TypeError):  # e.g. Windows: no process-wide C library handle
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64]
    fn.restype = ctypes.c_ssize_t
    return fn


@_Kernel
def _k_ranges_total(starts, lengths, limit):
    # The bytes of ranges [starts[i], starts[i] + lengths[i]), or -1 - the first that does not
    # lie inside [0, limit).
    total = 0
    for i in range(starts.shape[0]):
        s, n = starts[i], lengths[i]
        if s < 0 or n < 0 or s + n > limit:
            return -1 - i
        total += n
    return total


def ranges_total(starts: np.ndarray, lengths: np.ndarray, limit: int) -> int:
    """The bytes of ranges ``[starts[i], starts[i] + lengths[i])`` (int64 arrays of equal
    length), or ``-1 - i`` for the first range ``i`` that does not lie inside
    ``[0, limit)``: the check every batch of ranges gets before it is read or copied, in one
    compiled pass (a min, a max, a sum and an addition in numpy).

    Example::

        >>> import numpy as np
        >>> ranges_total(np.array([0, 5]), np.array([5, 5]), 10), ranges_total(np.array([0, 6]), np.array([5, 5]), 10)
        (10, -2)
    """
    return int(_k_ranges_total(starts, lengths, limit))


@_Kernel
def _k_coalesce(s, n, gap, b_start, b_len, b_out, at):
    # Ranges [s[i], s[i] + n[i]) in order of start (stably), those less than ``gap`` past the
    # reach of the ones before in one request: request j reads b_len[j] bytes from b_start[j]
    # into the buffer at b_out[j]; range i lands at at[i]. Returns (requests, buffer bytes).
    k = s.shape[0]
    ordered = True
    for i in range(1, k):
        if s[i] < s[i - 1]:
            ordered = False
            break
    order = np.arange(k) if ordered else np.argsort(s, kind="mergesort")
    m = -1
    reach = 0
    total = 0
    for j in range(k):
        i = order[j]
        a = s[i]
        e = a + n[i]
        if m < 0 or a > reach + gap:
            if m >= 0:
                b_len[m] = reach - b_start[m]
                total += b_len[m]
            m += 1
            b_start[m] = a
            b_out[m] = total
            reach = e
        elif e > reach:
            reach = e
        at[i] = b_out[m] + a - b_start[m]
    if m >= 0:
        b_len[m] = reach - b_start[m]
        total += b_len[m]
    return m + 1, total


@_Kernel
def _pread_loop(pread, fd, buf, starts, lengths, at):
    # pread(fd, buf + at[i], lengths[i], starts[i]) for each i: returns the first i that read
    # short (or failed), else -1
    base = buf.ctypes.data
    for i in range(starts.shape[0]):
        if pread(fd, base + at[i], lengths[i], starts[i]) != lengths[i]:
            return i
    return -1


def _halves(starts, lengths, at) -> tuple[tuple, tuple]:
    """Ranges ``(starts, lengths, at)`` cut into two runs of about half the bytes each (the
    range the middle falls in split in two)."""
    s, n, a = (np.asarray(x, np.int64) for x in (starts, lengths, at))
    ends = np.cumsum(n)
    half = int(ends[-1]) // 2
    k = int(np.searchsorted(ends, half, side="right"))  # the range the middle byte lies in
    cut = half - (int(ends[k - 1]) if k else 0)  # its bytes before the middle
    first = (np.append(s[:k], s[k]), np.append(n[:k], cut), np.append(a[:k], a[k]))
    second = (np.append(s[k] + cut, s[k + 1 :]), np.append(n[k] - cut, n[k + 1 :]), np.append(a[k] + cut, a[k + 1 :]))
    return first, second


def _split_pool():
    """The helper thread reading the second half of a large local read."""
    return shared_pool("pread", 1)


class LocalFileSource(_BaseSource):
    """A local file read with ``os.pread`` (thread-safe, no shared file position)."""

    thread_safe = True

    def __init__(self, path: str | os.PathLike) -> None:
        self.name = os.fspath(path)
        self._fd = -1
        if os.path.isdir(self.name):
            if os.path.isdir(os.path.join(self.name, "_versions")):
                raise LanceIOError(f"{self.name} is a Lance dataset, not a Lance file: open it with "
                                   f"lancefile.dataset({self.name!r})")
            raise LanceIOError(f"cannot open {self.name}: it is a directory, not a Lance file")
        try:
            self._fd = os.open(self.name, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise LanceIOError(f"cannot open {self.name}: {exc.strerror}") from exc
        st = os.fstat(self._fd)
        if not stat.S_ISREG(st.st_mode):
            self.close()
            raise LanceIOError(f"cannot read {self.name}: not a regular file")
        self._size = st.st_size

    def read(self, offset: int, length: int) -> memoryview:
        check_range(self.name, self._size, offset, length)
        if self._fd < 0:
            raise LanceIOError(f"{self.name}: the file is closed")
        if length == 0:
            return memoryview(b"")
        if length >= POOL_BUFFER_BYTES:
            out = new_buffer(length)
            self.read_into(offset, out)
            return out
        data = os.pread(self._fd, length, offset)
        if len(data) != length:  # the file shrank under us
            raise LanceIOError(f"{self.name}: short read at {offset} ({len(data)} of {length} bytes)")
        return memoryview(data)

    def read_into(self, offset: int, out: memoryview) -> None:
        length = len(out)
        if offset < 0 or offset + length > self._size:
            check_range(self.name, self._size, offset, length)
        if self._fd < 0:
            raise LanceIOError(f"{self.name}: the file is closed")
        if length >= SPLIT_READ_BYTES and may_split():
            self.read_many_into([offset], [length], [0], out)
        else:
            self._read_one(offset, out)

    def _read_one(self, offset: int, out: memoryview) -> None:
        """One range straight into the caller's buffer (no bytes object, no copy)."""
        length = len(out)
        done = os.preadv(self._fd, [out], offset) if _PREADV else self._pread_into(out, offset)
        while done < length:  # a read may be short
            n = os.preadv(self._fd, [out[done:]], offset + done) if _PREADV else self._pread_into(out[done:], offset + done)
            if n <= 0:
                raise LanceIOError(f"{self.name}: short read at {offset} ({done} of {length} bytes)")
            done += n

    def read_many_into(self, starts, lengths, at, buf: memoryview) -> None:
        """:meth:`read_into` of ranges ``starts[i], lengths[i]`` into ``buf[at[i]:]`` (int64
        arrays or lists; checked ranges, :func:`fetch_spans`): one ``pread`` each, issued by
        one compiled loop that holds no GIL (a take's 700 requests cost their system calls
        and nothing more: half the time of a Python loop of ``preadv``); a short read is read
        again by itself, which says what is wrong. At least :data:`SPLIT_READ_BYTES` in all
        are read in two halves at once, the second on a helper thread."""
        if self._fd < 0:
            raise LanceIOError(f"{self.name}: the file is closed")
        if len(starts) and int(np.sum(lengths)) >= SPLIT_READ_BYTES and may_split():
            first, second = _halves(starts, lengths, at)
            helper = _split_pool().submit(self._read_many, *second, buf)
            try:
                self._read_many(*first, buf)
            except BaseException:
                helper.cancel()
                wait([helper])  # it writes into buf: never leave before it is done
                raise
            if helper.cancel():  # its thread was busy with another read's half: read it here
                self._read_many(*second, buf)
            else:
                helper.result()  # (its error, a short read, surfaces here)
            return
        self._read_many(starts, lengths, at, buf)

    def _read_many(self, starts, lengths, at, buf: memoryview) -> None:
        first = 0
        pread = _libc_pread()
        if pread is not None and len(starts) >= _PREAD_LOOP_MIN:
            out = np.frombuffer(buf, np.uint8)
            if out.flags.writeable:
                s, n, a = (np.ascontiguousarray(x, np.int64) for x in (starts, lengths, at))
                first = _pread_loop(pread, self._fd, out, s, n, a)
                if first < 0:
                    return
        starts, lengths, at = (list(x[first:]) if isinstance(x, list) else x[first:].tolist()
                               for x in (starts, lengths, at))
        if not _PREADV:
            for a, ln, o in zip(starts, lengths, at):
                self._read_one(a, buf[o : o + ln])
            return
        fd, preadv = self._fd, os.preadv
        for a, ln, o in zip(starts, lengths, at):
            out = buf[o : o + ln]
            if preadv(fd, [out], a) != ln:
                self._read_one(a, out)

    def _pread_into(self, out: memoryview, offset: int) -> int:
        data = os.pread(self._fd, len(out), offset)
        out[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass


class SliceSource(_BaseSource):
    """Bytes ``[offset, offset + size)`` of another source, read as a source of their own.

    Used for a Lance file embedded in a global buffer of another (lancefile's statistics):
    reads of the inner file become reads of just those ranges of the outer one.
    """

    def __init__(self, inner: ByteSource, offset: int, size: int, name: str | None = None) -> None:
        check_range(inner.name, inner.size, offset, size, "embedded file")
        self.inner, self.offset, self._size = inner, offset, size
        self.name = name or f"{inner.name}[{offset}:{offset + size}]"
        inherit(self, inner)

    def read(self, offset: int, length: int) -> memoryview:
        check_range(self.name, self._size, offset, length)
        return self.inner.read(self.offset + offset, length)

    def read_into(self, offset: int, out: memoryview) -> None:
        check_range(self.name, self._size, offset, len(out))
        read_into(self.inner, self.offset + offset, out)


class InMemorySource(_BaseSource):
    """A Lance file held in memory (bytes, bytearray, memoryview or a pyarrow Buffer)."""

    thread_safe = True

    def __init__(self, data, name: str = "<memory>") -> None:
        self._data = memoryview(data).cast("B")
        self._size = len(self._data)
        self.name = name

    def read(self, offset: int, length: int) -> memoryview:
        check_range(self.name, self._size, offset, length)
        return self._data[offset : offset + length]

    def read_into(self, offset: int, out: memoryview) -> None:
        check_range(self.name, self._size, offset, len(out))
        out[:] = self._data[offset : offset + len(out)]


class FileObjectSource(_BaseSource):
    """A seekable binary file object: ``open(..., "rb")``, ``io.BytesIO``, a pyarrow NativeFile.

    Example::

        >>> import io
        >>> bytes(FileObjectSource(io.BytesIO(b"0123456789")).read(3, 4))
        b'3456'
    """

    thread_safe = True  # seek + read happen under a lock

    def __init__(self, fileobj, name: str | None = None) -> None:
        self._f = fileobj
        self.name = name or str(getattr(fileobj, "name", None) or f"<{type(fileobj).__name__}>")
        self._lock = threading.Lock()
        try:
            self._size = fileobj.seek(0, os.SEEK_END)
        except (OSError, ValueError) as exc:
            raise LanceIOError(f"{self.name}: the file object is not seekable ({exc})") from exc

    def read(self, offset: int, length: int) -> memoryview:
        check_range(self.name, self._size, offset, length)
        with self._lock:  # seek + read must not interleave between threads
            self._f.seek(offset)
            data = self._f.read(length)
        if len(data) != length:
            raise LanceIOError(f"{self.name}: short read at {offset} ({len(data)} of {length} bytes)")
        return memoryview(data)


class CountingSource(_BaseSource):
    """Wraps a source and counts the requests and bytes that reach it.

    Example::

        >>> src = CountingSource(InMemorySource(bytes(100)))
        >>> _ = src.read(10, 20)
        >>> (src.requests, src.bytes_read)
        (1, 20)
    """

    def __init__(self, inner: ByteSource) -> None:
        self.inner = inner
        inherit(self, inner)
        self.name = inner.name
        self._size = inner.size
        self.requests = 0
        self.bytes_read = 0
        self.ranges: list[tuple[int, int]] = []
        self._lock = threading.Lock()

    def read(self, offset: int, length: int) -> memoryview:
        self._count(offset, length)
        return self.inner.read(offset, length)

    def read_into(self, offset: int, out: memoryview) -> None:
        self._count(offset, len(out))
        read_into(self.inner, offset, out)

    def _count(self, offset: int, length: int) -> None:
        with self._lock:
            self.requests += 1
            self.bytes_read += length
            self.ranges.append((offset, length))

    def reset(self) -> None:
        self.requests = 0
        self.bytes_read = 0
        self.ranges = []

    def close(self) -> None:
        self.inner.close()


def open_source(source, *, storage_options: dict | None = None, filesystem=None) -> ByteSource:
    """Turn a path or URI, bytes-like object, seekable file object or ByteSource into a ByteSource.

    URIs (``s3://``, ``gs://``, ``az://``, ``memory://``, ``file://``) and paths given with
    ``filesystem=`` are read through ``pyarrow.fs`` (:class:`lancefile.objectstore.ArrowFsSource`).
    """
    from .objectstore import is_uri, resolve_store

    if isinstance(source, (str, os.PathLike)) and (filesystem is not None or is_uri(source)):
        return resolve_store(os.fspath(source), storage_options, filesystem).open()
    if storage_options:
        raise LanceIOError(f"{source!r}: storage_options apply to object-store URIs (s3://...), not to this source")
    if isinstance(source, (str, os.PathLike)):
        return LocalFileSource(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return InMemorySource(source)
    if hasattr(source, "read_many") and hasattr(source, "size"):
        return source
    if hasattr(source, "seek") and hasattr(source, "read"):
        return FileObjectSource(source)
    if isinstance(source, pa.Buffer):
        return InMemorySource(source)
    raise UnsupportedTypeError(f"cannot read a Lance file from {type(source).__name__}")


def __getattr__(name: str):
    # moved to lancefile.objectstore; still importable from here
    if name in ("ArrowFsSource", "resolve_filesystem", "is_uri"):
        from . import objectstore

        return getattr(objectstore, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
