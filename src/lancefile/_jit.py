"""Lazy numba compilation, for every layer: :class:`_Kernel` compiles a loop with
``numba.njit(cache=True, nogil=True)`` on its first call, so importing a module that
defines kernels neither imports numba nor compiles anything.

The encodings' kernels (:mod:`lancefile.encodings.kernels`) and the I/O layer's
(:mod:`lancefile.io`) use it; it sits below both. numba is a hard dependency: when it cannot
be imported (not installed, or a release that refuses this numpy), the first kernel call
raises :class:`ImportError` saying so. The plain functions are not run in its place: they
are untested as Python (ctypes arguments, integer wrap-around and NaN bit patterns differ)
and would be ~1000x slower.

numba keys its on-disk cache on the kernel's own source file, but a compiled kernel holds
the code of the helpers it calls and the values of the module-level arrays it reads, which
may live in other files: edit ``fastlanes._fl_unpack`` and every kernel elsewhere that calls
it would load its old machine code from the cache (a 3x slower W=64 unpack was found that
way, and a helper whose meaning changed would give wrong answers). So each kernel's cache
entries are also keyed on the contents of every file its helpers, intrinsics and imported
constants come from (:func:`_dependency_stamp`); a change there compiles it afresh.

Example::

    >>> def double(x):
    ...     return 2 * x
    >>> _Kernel(double)(21)
    42
"""

from __future__ import annotations

import functools
import hashlib
import sys
import threading
import types

__all__ = ["_Kernel", "_helper", "_compile_helpers", "numba_loaded"]

_COMPILE_LOCK = threading.Lock()


class _Kernel:
    """A loop compiled with ``numba.njit(cache=True)`` on its first call.

    numba is imported only then, so ``import lancefile`` stays cheap. Without a working numba
    the call raises :class:`ImportError` (see the module doc).
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
                except ImportError as exc:  # not installed, or refusing this numpy: say which
                    raise ImportError(f"lancefile needs numba for its compiled kernels ({self.py_func.__name__} "
                                      f"here), and `import numba` failed: {exc}. Install a numba release that "
                                      "supports the installed numpy (pip install -U numba numpy).") from exc
                _compile_helpers(self.py_func, numba)
                self._compiled = _njit_cached(self.py_func, numba)
        return self._compiled


def numba_loaded() -> bool:
    """Whether this process has imported numba (a first compiled call costs ~0.5 s: numba's
    import and first dispatch; after that, a kernel loaded from the cache costs milliseconds)."""
    return "numba" in sys.modules


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
            _INTRINSIC_FILES[id(g[name])] = helper.__code__.co_filename
        elif getattr(helper, "_lancefile_helper", False) and not hasattr(helper, "py_func"):
            _compile_helpers(helper, numba)
            g[name] = _njit_cached(helper, numba)


# -- the on-disk cache, keyed on every file a kernel's code comes from ----------------------------

_FROZEN = (int, float, complex, bool, bytes, str, tuple)  # values numba compiles in as constants
_INTRINSIC_FILES: dict = {}  # id of an intrinsic made by _compile_helpers -> the file of its plain twin


def _njit_cached(fn, numba):
    """``numba.njit(nogil=True)`` of ``fn`` with an on-disk cache whose entries also carry
    :func:`_dependency_stamp` of ``fn`` (numba's own key: ``fn``'s file and bytecode)."""
    dispatcher = numba.njit(nogil=True)(fn)
    try:
        dispatcher._cache = _dependent_cache_class()(fn, _dependency_stamp(fn))
    except Exception:  # pragma: no cover - e.g. no writable cache directory: compile each process
        pass
    return dispatcher


@functools.lru_cache(maxsize=None)
def _dependent_cache_class():
    from numba.core.caching import FunctionCache

    class DependentCache(FunctionCache):
        """numba's cache of one function, its index keys extended by a stamp of its sources."""

        def __init__(self, py_func, stamp: str) -> None:
            super().__init__(py_func)
            self._lancefile_stamp = stamp

        def _index_key(self, sig, codegen):
            return (*super()._index_key(sig, codegen), self._lancefile_stamp)

    return DependentCache


def _dependency_stamp(fn) -> str:
    """A hash of the contents of every source file ``fn``'s compiled code depends on: its
    own, its helpers' and intrinsics' (recursively), and the files that define the
    module-level constants (arrays, numbers, tuples) it and they read.

    Example::

        >>> len(_dependency_stamp(_dependency_stamp))
        64
    """
    files: set[str] = set()
    _collect_sources(fn, files, set())
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode("utf-8", "replace") + b"\0" + _file_digest(path))
    return h.hexdigest()


def _collect_sources(fn, files: set, seen: set) -> None:
    code = getattr(fn, "__code__", None)
    if code is None or id(fn) in seen:
        return
    seen.add(id(fn))
    files.add(code.co_filename)
    g = getattr(fn, "__globals__", {})
    for name in _names(code):
        obj = g.get(name)
        if obj is None or isinstance(obj, types.ModuleType):
            continue
        target = getattr(obj, "py_func", obj)  # a helper compiled already
        if getattr(target, "_lancefile_helper", False) or getattr(obj, "_lancefile_intrinsic", None) is not None:
            _collect_sources(target, files, seen)
        elif id(obj) in _INTRINSIC_FILES:  # an intrinsic made already
            files.add(_INTRINSIC_FILES[id(obj)])
        elif _is_frozen(obj):
            files.update(_defined_in(name, obj))


def _names(code) -> set:
    """The global names ``code`` and the functions nested in it read."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


def _is_frozen(obj) -> bool:
    if isinstance(obj, _FROZEN):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, (np.ndarray, np.generic))


def _defined_in(name: str, obj) -> set:
    """The files of the lancefile modules that hold ``obj`` under ``name`` (where an
    imported constant comes from; over-inclusive, which only costs a recompile)."""
    found = set()
    for mod_name, mod in list(sys.modules.items()):
        if (mod_name == "lancefile" or mod_name.startswith("lancefile.")) and mod is not None:
            path = getattr(mod, "__file__", None)
            if path and getattr(mod, "__dict__", {}).get(name) is obj:
                found.add(path)
    return found


@functools.lru_cache(maxsize=None)
def _file_digest(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).digest()
    except OSError:  # e.g. a kernel defined in an interactive session: its bytecode is keyed already
        return b""
