"""Decoding the fields of a scan chunk on the shared read pool.

A scan reads its rows in chunks (:meth:`lancefile.LanceFileReader.read_all`). Each chunk's
fields are decoded as tasks on ``READ_THREADS`` threads: a field reader that can be split
(2.1+: one task per leaf column, ``parts`` / ``assemble``) gives several tasks, so the leaves
of one wide struct or list share the cores too; other readers are one task each. Reads, numpy,
numba kernels and Arrow release the GIL, so the tasks' I/O and decoding overlap.

:func:`submit_fields` only starts the tasks: a scan starts the next chunk before it waits for
the current one, so a chunk's slowest leaf never leaves a core idle.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "f.lance")
    >>> lancefile.write_table(pa.table({"a": list(range(10)), "b": ["x"] * 10}), path)
    >>> from lancefile.encodings.selection import Selection
    >>> reader = lancefile.LanceFileReader(path)
    >>> tasks = submit_fields(reader._field_readers, Selection.of_range(2, 5), {})
    >>> [a.to_pylist() for a in tasks.result()]
    [[2, 3, 4], ['x', 'x', 'x']]
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import wait

import pyarrow as pa

from .encodings.selection import Selection
from .threadpools import cores_shared, shared_pool

__all__ = ["READ_THREADS", "FieldTasks", "submit_fields", "decode_here", "decoding_here"]

READ_THREADS = max(1, min(4, os.cpu_count() or 1))
# a whole read of at most INLINE_ROWS rows with at most INLINE_TASKS tasks is decoded in the
# caller's thread (``inline=True``): such tasks are mostly Python (few values), which threads
# would only make wait for the GIL, at a context switch or two each (measured: a 4-column
# filtered read of one 8,192-row zone 2.8 -> 1.9 ms); many small tasks (a wide table) still
# gain from overlapping their I/O, and so do the chunks of a scan, however small each is
INLINE_ROWS = 16 * 1024
INLINE_TASKS = 8

_HERE = threading.local()


@contextlib.contextmanager
def decode_here():
    """Within this block, reads made by this thread decode in it and never use the read pool.

    For callers that already run several reads at once on their own threads (a dataset scan
    reads fragments two at a time): the cores are busy, and tasks handed on to the read pool
    would only add threads contending for the GIL. Measured on pylance's 10-fragment nested
    dataset with the read pool off (``READ_THREADS = 1``, which this does for such threads
    only): scan 1.04 -> 0.97x pylance's time (medians of 6 alternating runs).
    """
    before = getattr(_HERE, "on", False)
    _HERE.on = True
    try:
        with cores_shared():
            yield
    finally:
        _HERE.on = before


def decoding_here() -> bool:
    """Whether this thread is inside :func:`decode_here`."""
    return getattr(_HERE, "on", False)


class FieldTasks:
    """The decoding tasks of one chunk: :meth:`result` waits for them and gives the arrays."""

    def __init__(self, readers, sel: Selection, cache: dict, inline: bool = False) -> None:
        self._readers = readers
        self._split = [hasattr(r, "parts") for r in readers]
        self._tasks: list[tuple[int, object]] = []
        for i, r in enumerate(readers):
            if self._split[i]:
                self._tasks.extend((i, part) for part in r.parts(sel, cache))
            else:
                self._tasks.append((i, lambda r=r: r.read(sel, cache)))
        self._sel = sel
        if (inline and sel.count <= INLINE_ROWS and len(self._tasks) <= INLINE_TASKS) or READ_THREADS <= 1:
            self._futures = None  # run by result(), in order, in the caller's thread
        else:
            pool = shared_pool("read", READ_THREADS)
            self._futures = [pool.submit(_unsplit, task) for _, task in self._tasks]

    def wait(self) -> None:
        """Return once no task runs any more (they share the scan's page cache)."""
        if self._futures is not None:
            wait(self._futures)

    def result(self) -> list[pa.Array]:
        if self._futures is None:
            results = [task() for _, task in self._tasks]
        else:
            try:
                results = [f.result() for f in self._futures]
            finally:
                self.wait()  # never leave work running on the page cache after an error
        out = []
        for i, r in enumerate(self._readers):
            mine = [res for (j, _), res in zip(self._tasks, results) if j == i]
            out.append(r.assemble(self._sel, mine) if self._split[i] else mine[0])
        return out


def _unsplit(task):
    """``task()`` on a pool thread: the pool's threads share the cores already, so their
    reads and decodes are not split over a helper thread as well
    (:func:`lancefile.threadpools.cores_shared`)."""
    with cores_shared():
        return task()


def submit_fields(readers, sel: Selection, cache: dict, inline: bool = False) -> FieldTasks:
    """Start decoding ``readers``' fields for ``sel`` on the shared read pool (``inline``: the
    whole read is ``sel``, and a small one is decoded in the caller's thread instead)."""
    return FieldTasks(readers, sel, cache, inline)
