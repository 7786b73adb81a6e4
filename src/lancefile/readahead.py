"""Batches decoded ahead of the consumer: ``batch_readahead``.

:func:`readahead` runs a batch generator on a background thread and hands its batches over
through a queue of at most ``depth`` batches (a scan's small batches in lists of ~64K rows),
so reading and decoding the next batches (their
requests to an object store above all) overlap with whatever the consumer does with the
current one. ``depth=0`` runs the generator in the caller's thread. The generator is closed,
and the thread ended, when the consumer stops early; an error in the generator is raised to
the consumer at the point where the batch would have come.

Example::

    >>> list(readahead(lambda: iter(range(5)), depth=2))
    [0, 1, 2, 3, 4]
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, Iterable, Iterator, TypeVar

from .errors import InvalidInputError

__all__ = ["readahead", "DEFAULT_BATCH_READAHEAD", "GROUP_ROWS", "group_batches", "grouped_depth"]

T = TypeVar("T")

# pylance's default for read_all / read_range / take_rows
DEFAULT_BATCH_READAHEAD = 16
# how often a blocked producer looks whether the consumer has gone away (seconds)
_POLL = 0.05

_BATCH, _END, _ERROR = 0, 1, 2


# A scan hands its batches over in lists of about this many rows (whole batches, one at least):
# small batches go over together, large ones one by one as before.
GROUP_ROWS = 1 << 16


def group_batches(batch_size: int) -> int:
    """How many batches of ``batch_size`` rows a scan hands over together."""
    return max(1, GROUP_ROWS // batch_size)


def grouped_depth(depth: int, batch_size: int) -> int:
    """The lists a scan may have waiting for ``depth`` batches of read-ahead (0: none; one at least)."""
    return 0 if depth <= 0 else max(1, depth // group_batches(batch_size))


def check_readahead(depth) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise InvalidInputError(f"batch_readahead must be a whole number >= 0, not {depth!r}")
    return depth


def readahead(make: Callable[[], Iterable], depth: int, grouped: bool = False) -> Iterator:
    """Iterate ``make()`` with up to ``depth`` items produced ahead on a background thread.

    The first two items are made in the caller's thread (a read of one batch, as most takes
    are, starts no thread); the items after them are read ahead on the thread.

    ``grouped``: ``make()`` yields lists of items (a scan's batches, ~:data:`GROUP_ROWS` rows
    of one decoded chunk), handed over a list at a time, at most ``depth`` lists waiting (see
    :func:`grouped_depth`): a scan of small batches then pays one hand-over between threads
    a list, not one a batch (~17 us each: a 400,000-row scan at batch size 1024 spent 27 ms on
    them). The items come out one by one either way; the first two still from the caller's
    thread."""
    if depth <= 0:
        if not grouped:
            yield from make()
            return
        gen = iter(make())
        try:
            for group in gen:
                yield from group
        finally:
            _close(gen)
        return
    gen = iter(make())
    rest: list = []  # what the caller's thread left of the group it started
    made = 0
    # the first two items come from the caller's thread: a one-batch read starts no thread
    while made < 2:
        try:
            item = next(gen)
        except StopIteration:
            return
        except BaseException:
            _close(gen)
            raise
        items = iter(item if grouped else (item,))
        for one in items:
            try:
                yield one
            except GeneratorExit:
                _close(gen)
                raise
            made += 1
            if made == 2:
                rest = list(items)
                break
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            try:
                if rest and not put((_BATCH, rest)):
                    return
                for item in gen:
                    if not put((_BATCH, item)):
                        return
            finally:
                close = getattr(gen, "close", None)
                if close is not None:
                    close()
            put((_END, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer as it is
            put((_ERROR, exc))

    thread = threading.Thread(target=produce, name="lancefile-readahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = q.get()
            if kind == _BATCH:
                if grouped:
                    yield from value
                else:
                    yield value
            elif kind == _END:
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join()


def _close(gen) -> None:
    close = getattr(gen, "close", None)
    if close is not None:
        close()
