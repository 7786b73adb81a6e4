"""A pause of Python's cyclic garbage collector for one call: :func:`gc_paused`.

A write of a 1,000-column batch leaves thousands of tracked Arrow objects pending, a scan
chunk of 1,000 columns makes as many, and a take of a nested file makes a few objects for
each of hundreds of pages: the collections they trigger (full ones, with many objects
alive: 50-80 ms each) cost 5-40% of those calls. Nothing
lancefile makes in them is a reference cycle that needs the collector, so the calls run
with it paused and switch it back on after, if it was on. Calls on several threads share
one pause: the collector is back on when the last of them ends. (What a reader builds holds
no cycles either, so a dropped reader is freed at once: see the weak references in
:mod:`lancefile.format.container` and :mod:`lancefile.encodings.structural.mini_block_many`.)

Example::

    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["gc_paused"]

_LOCK = threading.Lock()
_STATE = [0, False]  # calls inside a pause; whether the first of them switched the collector off


@contextmanager
def gc_paused():
    """The collector off for the ``with`` block (and back on after, if it was on)."""
    with _LOCK:
        if _STATE[0] == 0:
            _STATE[1] = gc.isenabled()
            gc.disable()
        _STATE[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE[0] -= 1
            if _STATE[0] == 0 and _STATE[1]:
                gc.enable()
