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

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["shared_pool"]

_POOLS: dict[tuple[str, int], ThreadPoolExecutor] = {}
_LOCK = threading.Lock()


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


def _forget_pools() -> None:
    """In a forked child the parent's worker threads do not exist: start new pools there."""
    global _LOCK
    _POOLS.clear()
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)
