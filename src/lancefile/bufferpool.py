"""Large buffers, recycled: the memory lancefile reads file bytes into and decodes columns into.

lancefile takes its large buffers from Arrow's memory pool. pyarrow's default pool (mimalloc)
hands the memory freed in the last second or so back to the operating system all at once, and
the next read to reach that memory faults it in again: the kernel zero-fills every page before
the read or the decode writes it. Between scans almost all of a scan's memory is free, so one
scan in several paid for its whole output a second time (the bench's numeric table at batch
size 65,536: 45-50 ms a scan, 95-185 ms when it met purged memory; those scans' extra time was
the kernel's ``clear_page``).

This module keeps the large buffers lancefile freed and hands them to the next request of the
same size class (or up to twice its size), so scans that follow each other land in memory already mapped. A buffer comes
back only when the last object using it is gone (the array it became, a slice of it, an Arrow
buffer over it, a consumer's zero-copy view): nothing lancefile handed out is reused while
anything can still see it. Contents are undefined, as ``np.empty``'s.

What is kept is bounded: at most :func:`limit` bytes (:data:`DEFAULT_LIMIT_BYTES`, change it
with :func:`set_limit`; 0 turns recycling off), nothing longer than :data:`IDLE_SECONDS` after
it was freed (a timer thread drops it when the process stops reading), and a request no kept
buffer fits first drops as many of the oldest kept bytes as it takes, so recycling does not add
to the memory a read holds at its peak. :func:`release` drops everything kept at once.

Example::

    >>> from lancefile import bufferpool
    >>> a = bufferpool.allocate(4 << 20)       # 4 MiB, contents undefined
    >>> a.nbytes, a.dtype.name
    (4194304, 'uint8')
    >>> del a                                   # freed: kept for the next request of its size
    >>> bufferpool.cached_bytes() >= 4 << 20
    True
    >>> b = bufferpool.allocate(4 << 20)       # the same memory again
    >>> bufferpool.release(); bufferpool.cached_bytes()
    0
"""

from __future__ import annotations

import collections
import os
import threading
import time
import weakref

import numpy as np
import pyarrow as pa

__all__ = ["allocate", "cached_bytes", "limit", "set_limit", "release", "stats", "size_class",
           "POOL_BYTES", "RECYCLE_BYTES", "DEFAULT_LIMIT_BYTES", "IDLE_SECONDS"]

# Below this, numpy's own allocator (small blocks, reused by the C library)
POOL_BYTES = 64 * 1024
# From this size on, buffers are recycled here (a recycled buffer costs ~5 us of bookkeeping)
RECYCLE_BYTES = 1 << 20
# Freed buffers kept, at most (the bench's 1,000-column scan reuses ~400 MB)
DEFAULT_LIMIT_BYTES = 512 << 20
# A freed buffer not reused for this long goes back to Arrow's pool
IDLE_SECONDS = 10.0

_lock = threading.Lock()  # over _kept and the counts
_kept: dict[int, list[tuple[float, pa.Buffer]]] = {}  # size -> (time freed, buffer), oldest first
# Buffers given back and not yet sorted into _kept. A buffer comes back from a finalizer, which
# runs wherever the last reference went, even inside a locked section here (a collection
# triggered by an allocation): it only appends to this queue, which takes no lock.
_returned: collections.deque = collections.deque()
_state = {"kept": 0, "limit": DEFAULT_LIMIT_BYTES, "hits": 0, "misses": 0, "timer": None}
_timer_lock = threading.RLock()
# Tests set a byte value here: every buffer handed out is filled with it, so a decoder that
# leaves bytes unwritten (and so would pass on a previous file's bytes) shows in its output.
_POISON: int | None = None


def size_class(nbytes: int) -> int:
    """The size a request of ``nbytes`` is rounded up to: eight classes a doubling, so a kept
    buffer serves every request within 12.5% below its size.

    Example::

        >>> [size_class(n) for n in (1 << 20, (1 << 20) + 1, 3_000_000)]
        [1048576, 1179648, 3145728]
    """
    n = int(nbytes)
    shift = max(n.bit_length() - 4, 0)
    return -(-n >> shift) << shift


def allocate(nbytes: int) -> np.ndarray:
    """``nbytes`` writable bytes (a uint8 array, contents undefined), 64-byte aligned when
    64 KiB or more; from 1 MiB on recycled (see the module's doc).

    Example::

        >>> allocate(10).shape
        (10,)
    """
    n = int(nbytes)
    if n < POOL_BYTES:
        out = np.empty(n, np.uint8)
    elif n < RECYCLE_BYTES or _state["limit"] <= 0:
        out = np.frombuffer(pa.allocate_buffer(n), np.uint8)
    else:
        out = _recycled(n)
    if _POISON is not None:
        out.fill(_POISON)
    return out


def _recycled(n: int) -> np.ndarray:
    size = size_class(n)
    raw = _take(size)
    if raw is None:
        raw = pa.allocate_buffer(size)
    block = np.frombuffer(raw, np.uint8)
    # when the last user of ``block`` is gone, ``raw`` comes back here
    weakref.finalize(block, _give_back, raw).atexit = False
    return block if block.size == n else block[:n]


def _take(size: int) -> pa.Buffer | None:
    """A kept buffer for a request of class ``size``: of that class (the most recently freed),
    else the smallest kept one up to twice as large; else None, after dropping as many of the
    oldest kept bytes as the new buffer will take (so the peak does not grow by them)."""
    with _lock:
        dropped = _absorb(time.monotonic())
        fits = [s for s in _kept if size <= s <= 2 * size]
        if fits:
            _state["hits"] += 1
            raw = _pop(min(fits), -1)
        else:
            _state["misses"] += 1
            raw, freed = None, 0
            while _kept and freed < size:
                dropped.append(_pop_oldest())
                freed += dropped[-1].size
    del dropped  # back to Arrow's pool
    return raw


def _give_back(raw: pa.Buffer) -> None:
    """A freed buffer (the finalizer of the array :func:`allocate` returned): queued, and the
    idle timer started if it is not running."""
    _returned.append((time.monotonic(), raw))
    if _state["timer"] is None:
        _schedule(IDLE_SECONDS)


def _absorb(now: float) -> list:
    """Sort the returned buffers into _kept; remove what is over the limit or idle too long
    (under _lock; the removed buffers are returned for the caller to drop)."""
    dropped = []
    while _returned:
        freed_at, raw = _returned.popleft()
        _kept.setdefault(raw.size, []).append((freed_at, raw))
        _state["kept"] += raw.size
    while _state["kept"] > _state["limit"]:
        dropped.append(_pop_oldest())
    for size in [s for s, free in _kept.items() if now - free[0][0] > IDLE_SECONDS]:
        while size in _kept and now - _kept[size][0][0] > IDLE_SECONDS:
            dropped.append(_pop(size, 0))
    return dropped


def _pop(size: int, at: int) -> pa.Buffer:
    """Remove the kept buffer at index ``at`` of class ``size`` (under _lock)."""
    free = _kept[size]
    raw = free.pop(at)[1]
    if not free:
        del _kept[size]
    _state["kept"] -= size
    return raw


def _pop_oldest() -> pa.Buffer:
    """Remove the kept buffer freed longest ago (under _lock, with something kept)."""
    return _pop(min(_kept, key=lambda s: _kept[s][0][0]), 0)


def _schedule(delay: float) -> None:
    with _timer_lock:
        if _state["timer"] is not None:
            return
        timer = threading.Timer(delay, _sweep)
        timer.daemon = True
        try:
            timer.start()
        except RuntimeError:  # the interpreter is shutting down
            return
        _state["timer"] = timer


def _sweep() -> None:
    """The timer: drop what sat idle too long; come back while anything is kept."""
    with _lock:
        now = time.monotonic()
        dropped = _absorb(now)
        oldest = min((free[0][0] for free in _kept.values()), default=None)
    with _timer_lock:
        _state["timer"] = None
    if oldest is not None or _returned:
        wait = IDLE_SECONDS if oldest is None else IDLE_SECONDS - (now - oldest)
        _schedule(max(wait, 0.0) + 0.05)
    del dropped


def cached_bytes() -> int:
    """Bytes of freed buffers kept for reuse now (they count in ``pa.total_allocated_bytes()``)."""
    with _lock:
        dropped = _absorb(time.monotonic())
        kept = _state["kept"]
    del dropped
    return kept


def limit() -> int:
    """The most bytes of freed buffers kept (:data:`DEFAULT_LIMIT_BYTES` unless set)."""
    return _state["limit"]


def set_limit(nbytes: int) -> None:
    """Keep at most ``nbytes`` of freed buffers (0: recycle nothing); drops any excess now.

    Example::

        >>> set_limit(0); allocate(2 << 20).nbytes; cached_bytes()
        2097152
        0
        >>> set_limit(DEFAULT_LIMIT_BYTES)
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
        raise ValueError(f"the buffer pool's limit must be a whole number of bytes, 0 or more, not {nbytes!r}")
    with _lock:
        _state["limit"] = int(nbytes)
        dropped = _absorb(time.monotonic())
    del dropped


def release() -> None:
    """Drop every kept buffer now (Arrow's pool returns the memory to the system later)."""
    with _lock:
        dropped = _absorb(time.monotonic())
        dropped += [raw for free in _kept.values() for _, raw in free]
        _kept.clear()
        _state["kept"] = 0
    del dropped


def stats() -> dict:
    """Counts since the process started: ``hits`` (requests served by a kept buffer),
    ``misses`` (new buffers), ``kept`` (bytes kept now) and ``limit``."""
    kept = cached_bytes()
    return {"hits": _state["hits"], "misses": _state["misses"], "kept": kept, "limit": _state["limit"]}


def _forget_in_child() -> None:
    """A forked child has neither the parent's timer thread nor a usable copy of its locks."""
    global _lock, _timer_lock
    _lock = threading.Lock()
    _timer_lock = threading.RLock()
    _kept.clear()
    _returned.clear()
    _state.update(kept=0, timer=None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
