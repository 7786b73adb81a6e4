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

import os
import threading
from concurrent.futures import wait
from typing import Protocol, Sequence

import numpy as np
import pyarrow as pa

from . import bufferpool
from ._jit import _helper, _Kernel
from .errors import CorruptFileError, LanceIOError, UnsupportedTypeError
from .threadpools import shared_pool

__all__ = ["ByteSource", "LocalFileSource", "InMemorySource", "FileObjectSource", "CountingSource", "SliceSource",
           "open_source", "read_into", "read_spans", "read_packed", "fetch_spans", "fetch_requests", "new_buffer",
           "ranges_total"]

# Ranges of a local file closer than this are fetched in one request (a read costs about as
# much as 4 KiB). A source may say otherwise with a ``coalesce_gap`` attribute: object stores
# use 64 KiB (lancefile.objectstore.REMOTE_COALESCE_GAP), as the reference does.
COALESCE_GAP = 4 * 1024
def new_buffer(n: int) -> memoryview:
    """``n`` writable bytes (contents undefined): :func:`lancefile.bufferpool.allocate`'s, so
    a large read lands in pages already mapped (fresh memory from the OS costs more to fault
    in than the read itself, ~4x for a 200 MB read here)."""
    return memoryview(bufferpool.allocate(n))


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


def read_packed(source: ByteSource, starts, lengths, gap: int | None = None) -> np.ndarray:
    """The bytes of many ranges back to back (range ``i`` at ``sum(lengths[:i])``), read as
    :func:`read_spans` reads them. A source with a ``read_packed(starts, lengths, gap)``
    method (checked int64 arrays) reads them its own way: a checksummed local file reads each
    request into a small buffer, checks it and copies the ranges out, instead of keeping
    the whole blocks around a take's rows and gathering the rows from them.

    Example::

        >>> read_packed(InMemorySource(b"0123456789"), [6, 1], [2, 3]).tobytes()
        b'67123'
    """
    s = np.asarray(starts, dtype=np.int64).reshape(-1)
    n = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if s.shape != n.shape:
        raise ValueError("starts and lengths must be equally long")
    packed = getattr(source, "read_packed", None)
    if packed is not None and len(s):
        if gap is None:
            gap = coalesce_gap(source)
        bad = ranges_total(s, n, source.size)
        if bad < 0:
            check_range(source.name, source.size, int(s[-1 - bad]), int(n[-1 - bad]))
        return packed(s, n, gap)
    data, at = read_spans(source, s, n, gap)
    return pack_spans(data, at, n)


def pack_spans(data: np.ndarray, at: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Ranges ``data[at[i]:][:n[i]]`` back to back: ``data`` itself when they are already."""
    if not len(n):
        return np.zeros(0, np.uint8)
    if int(at[0]) == 0 and (len(n) == 1 or not np.any(at[1:] - at[:-1] - n[:-1])):
        return data[: int(n.sum())]
    out = np.frombuffer(new_buffer(int(n.sum())), np.uint8)
    _k_pack(data, np.ascontiguousarray(at, np.int64), np.ascontiguousarray(n, np.int64), out)
    return out


@_Kernel
def _k_pack(data, at, n, out):
    # ranges data[at[i]:][:n[i]] back to back into out (also kernels.gather_bytes' loop)
    o = 0
    for i in range(at.shape[0]):
        out[o : o + n[i]] = data[at[i] : at[i] + n[i]]
        o += n[i]


def fetch_spans(source: ByteSource, s: np.ndarray, n: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`read_spans` once the ranges are checked: int64 ``s`` and ``n``, read with
    ``source.read_into``, ranges less than ``gap`` apart in one request (planned by one
    compiled pass, :func:`_k_coalesce`)."""
    k = len(s)
    b_start, b_len, b_out, at = (np.empty(k, np.int64) for _ in range(4))
    m, total = _k_coalesce(np.ascontiguousarray(s, np.int64), np.ascontiguousarray(n, np.int64), gap, b_start, b_len,
                           b_out, at)
    buf = new_buffer(int(total))
    fetch_requests(source, b_start[:m], b_len[:m], b_out[:m], buf)
    return np.frombuffer(buf, np.uint8), at


def fetch_requests(source: ByteSource, b_start: np.ndarray, b_len: np.ndarray, b_out: np.ndarray, buf) -> None:
    """Request ``j`` (checked ranges, int64 arrays): ``b_len[j]`` bytes of ``source`` from
    ``b_start[j]`` into ``buf`` at ``b_out[j]``; an object store's requests go out at once,
    a local file's through its compiled ``pread`` loop."""
    m = len(b_start)
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
    return _coalesce(s, n, gap, b_start, b_len, b_out, at)


@_helper
def _coalesce(s, n, gap, b_start, b_len, b_out, at):
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
    from .localfile import LocalFileSource
    from .objectstore import file_uri_path, is_uri, resolve_store

    local = file_uri_path(source) if filesystem is None else None
    if local is not None:  # a local file, read as one
        if storage_options:
            raise LanceIOError(f"{source}: storage_options apply to object-store URIs (s3://...), not to local files")
        source = local
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
    if name == "LocalFileSource":  # lancefile.localfile (which builds on this module)
        from .localfile import LocalFileSource

        return LocalFileSource
    # moved to lancefile.objectstore; still importable from here
    if name in ("ArrowFsSource", "resolve_filesystem", "is_uri"):
        from . import objectstore

        return getattr(objectstore, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
