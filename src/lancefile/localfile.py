"""Local files: :class:`LocalFileSource`, read with ``pread``.

Many ranges are read by one compiled loop of ``pread`` calls that holds no GIL; a read of
:data:`SPLIT_READ_BYTES` or more goes in two halves at once, the second on a helper thread
(copying from the page cache runs at one core's speed), unless the thread already shares
the cores with others (:func:`lancefile.threadpools.cores_shared`).

Example::

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bytes.bin")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"hello world")
    >>> src = LocalFileSource(path)
    >>> bytes(src.read(6, 5)), src.size
    (b'world', 11)
    >>> src.close()
"""

from __future__ import annotations

import ctypes
import functools
import os
import stat
from concurrent.futures import wait

import numpy as np

from ._jit import _helper, _Kernel
from .bufferpool import POOL_BYTES
from .errors import LanceIOError
from .io import _BaseSource, check_range, new_buffer
from .threadpools import may_split, shared_pool

__all__ = ["LocalFileSource", "SPLIT_READ_BYTES"]

_PREADV = hasattr(os, "preadv")

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
def _pread_loop(pread, fd, buf, starts, lengths, at):
    return preads(pread, fd, buf, starts, lengths, at)


@_helper
def preads(pread, fd, buf, starts, lengths, at):
    # pread(fd, buf + at[i], lengths[i], starts[i]) for each i: returns the first i that read
    # short (or failed), else -1 (also compiled into lancefile.format.hashloop's checked reads)
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
        if length >= POOL_BYTES:  # into a buffer of the pool's; smaller: a bytes object
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

    def pread_handle(self):
        """``(pread, fd)``: the C library's ``pread`` (a ctypes function) and this file's
        descriptor, for a compiled loop that reads and checks in one call
        (:func:`lancefile.format.hashloop.read_checked`); None without ``pread`` or once closed."""
        pread = _libc_pread()
        return None if pread is None or self._fd < 0 else (pread, self._fd)

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
