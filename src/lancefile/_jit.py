"""Lazy numba compilation, for every layer: :class:`_Kernel` compiles a loop with
``numba.njit(cache=True, nogil=True)`` on its first call, so importing a module that
defines kernels neither imports numba nor compiles anything.

The encodings' kernels (:mod:`lancefile.encodings.kernels`) and the I/O layer's
(:mod:`lancefile.io`) use it; it sits below both. Without numba the plain function runs
(correct, slow) and a warning says so.

Example::

    >>> def double(x):
    ...     return 2 * x
    >>> _Kernel(double)(21)
    42
"""

from __future__ import annotations

import functools
import threading
import warnings

__all__ = ["_Kernel", "_helper", "_compile_helpers"]

_COMPILE_LOCK = threading.Lock()


class _Kernel:
    """A loop compiled with ``numba.njit(cache=True)`` on its first call.

    numba is imported only then, so ``import lancefile`` stays cheap.  Without numba the
    plain function runs (correct, slow) and a warning says so.
    """

    def __init__(self, fn):
        self.py_func = fn
        self._compiled = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args):
        compiled = self._compiled
        if compiled is None:
            compiled = self._compile()
        return compiled(*args)

    def _compile(self):
        with _COMPILE_LOCK:
            if self._compiled is None:
                try:
                    import numba
                except ImportError:  # pragma: no cover - numba is a hard dependency
                    warnings.warn("numba is not installed; lancefile kernels run as slow Python", stacklevel=3)
                    self._compiled = self.py_func
                else:
                    _compile_helpers(self.py_func, numba)
                    try:
                        self._compiled = numba.njit(cache=True, nogil=True)(self.py_func)
                    except Exception:  # pragma: no cover - e.g. no writable cache directory
                        self._compiled = numba.njit(nogil=True)(self.py_func)
        return self._compiled


def _helper(fn):
    """Mark a plain function that kernels call: it is compiled with them (see _compile_helpers)."""
    fn._lancefile_helper = True
    return fn


def _compile_helpers(fn, numba) -> None:
    """Replace the helpers ``fn`` calls (in its module) by their numba versions, recursively,
    so that the compiled kernel calls compiled code."""
    g = fn.__globals__
    for name in fn.__code__.co_names:
        helper = g.get(name)
        make = getattr(helper, "_lancefile_intrinsic", None)
        if make is not None:
            g[name] = make()
        elif getattr(helper, "_lancefile_helper", False) and not hasattr(helper, "py_func"):
            _compile_helpers(helper, numba)
            g[name] = numba.njit(cache=True, nogil=True)(helper)
