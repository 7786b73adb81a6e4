"""Named thread pools shared by the whole process, started on first use.

Several parts of lancefile run work on threads (a scan's field decoders, large kernels,
a dataset's fragments, object-store range requests). Each asks for its pool by name and
size here instead of keeping its own global: one place starts pools lazily under a lock
and forgets them in a forked child, where the parent's worker threads do not exist.

Example::

    >>> pool = shared_pool("doc-example", 2)
    >>> pool.submit(sum, [1, 2, 3]).result()
    6
    >>> shared_pool("doc-example", 2) is pool
    True
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

__all__ = ["shared_pool", "cores_shared", "may_split", "run_parallel", "halfway", "in_halves",
           "PARALLEL_DECODE_BYTES"]

# A decode (or hash) of at least this many bytes may go in two halves at once (see :func:`halfway`)
PARALLEL_DECODE_BYTES = 4 << 20

_POOLS: dict[tuple[str, int], ThreadPoolExecutor] = {}
_LOCK = threading.Lock()
_CORES = os.cpu_count() or 1
_SHARED = threading.local()


def shared_pool(name: str, workers: int) -> ThreadPoolExecutor:
    """The process's pool called ``name`` with ``workers`` threads (started on first use)."""
    key = (name, int(workers))
    pool = _POOLS.get(key)
    if pool is None:
        with _LOCK:
            pool = _POOLS.get(key)
            if pool is None:
                pool = _POOLS[key] = ThreadPoolExecutor(max_workers=key[1], thread_name_prefix=f"lancefile-{name}")
    return pool


@contextlib.contextmanager
def cores_shared():
    """Within this block, this thread's large reads and decodes are never split over a helper
    thread (:func:`may_split`): for threads that already share the cores with others (the
    read pool's workers, a dataset's fragments), where a helper would only contend.

    Example::

        >>> with cores_shared():
        ...     may_split()
        False
    """
    before = getattr(_SHARED, "on", False)
    _SHARED.on = True
    try:
        yield
    finally:
        _SHARED.on = before


def may_split() -> bool:
    """Whether this thread may hand half of a large read or decode to a helper thread: there
    is more than one core, and the thread is not inside :func:`cores_shared`."""
    return _CORES > 1 and not getattr(_SHARED, "on", False)


def run_parallel(fn, items) -> list:
    """``[fn(x) for x in items]``, the items after the first on a small thread pool.

    For compiled kernels, which release the GIL: two halves of a large decode then use
    both cores. Exceptions propagate; every item has finished when this returns.
    """
    items = list(items)
    if len(items) <= 1:
        return [fn(x) for x in items]
    futures = [shared_pool("kernel", 2).submit(fn, x) for x in items[1:]]
    try:
        first = fn(items[0])
    finally:
        wait(futures)
    return [first] + [f.result() for f in futures]


def halfway(weights, total: int, least: int) -> int:
    """Where to cut items of ``weights`` (``total`` in all) into two halves worked on at once
    (:func:`run_parallel`): the first item of the second half, or 0 for one piece (less than
    ``least`` in all, fewer than two items, or this thread shares the cores already:
    :func:`may_split`).

    Example::

        >>> halfway(np.array([1, 1, 1, 1]), 4, 2) if may_split() else 2
        2
    """
    if total < least or len(weights) < 2 or not may_split():
        return 0
    return min(max(int(np.searchsorted(np.cumsum(weights), total // 2)) + 1, 1), len(weights) - 1)


def in_halves(run, weights, total: int, least: int) -> list:
    """``[run(0, h), run(h, n)]`` worked on at once (``h``: :func:`halfway` of the ``n`` items of
    ``weights``), or ``[run(0, n)]`` when one piece is better."""
    h = halfway(weights, total, least)
    n = len(weights)
    return run_parallel(lambda ab: run(*ab), [(0, h), (h, n)]) if h else [run(0, n)]


def _forget_pools() -> None:
    """In a forked child the parent's worker threads do not exist: start new pools there."""
    global _LOCK
    _POOLS.clear()
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)
