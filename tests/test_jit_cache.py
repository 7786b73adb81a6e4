"""numba's on-disk cache must not hand back a kernel compiled against old helpers or constants.

numba keys a cached kernel on its own source file; lancefile's kernels also call helpers and
read constant arrays from other files (``fastlanes._fl_unpack`` from ``bitpacking``). These
tests compile a kernel in a fresh process, change only the file its helper (or an imported
constant) lives in, and check the next process runs the new code, while an unchanged file
still loads from the cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

KERNEL = textwrap.dedent("""
    import numpy as np
    from lancefile._jit import _Kernel
    from helpers_mod import SCALE, value

    @_Kernel
    def kernel(x):
        return value(x) + SCALE[0] * x
""")


def _helpers(offset: int, scale: int) -> str:
    return textwrap.dedent(f"""
        import numpy as np
        from lancefile._jit import _helper

        SCALE = np.array([{scale}], dtype=np.int64)

        @_helper
        def value(x):
            return x + {offset}
    """)


RUN = textwrap.dedent("""
    import json, sys
    import kern_mod
    got = int(kern_mod.kernel(1))
    stats = kern_mod.kernel._compiled.stats
    print(json.dumps({"got": got, "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
""")


def _run(root) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), *sys.path]), PYTHONDONTWRITEBYTECODE="1",
               NUMBA_CACHE_DIR=str(root / "cache"))
    out = subprocess.run([sys.executable, "-c", RUN], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_changed_helper_file_recompiles_the_kernels_that_call_it(tmp_path):
    (tmp_path / "kern_mod.py").write_text(KERNEL)
    (tmp_path / "helpers_mod.py").write_text(_helpers(1, 10))
    first = _run(tmp_path)
    assert first == {"got": 12, "hits": 0, "misses": 1}
    again = _run(tmp_path)
    assert again == {"got": 12, "hits": 1, "misses": 0}  # nothing changed: loaded from the cache

    (tmp_path / "helpers_mod.py").write_text(_helpers(2, 10))  # only the helper's file changes
    assert _run(tmp_path) == {"got": 13, "hits": 0, "misses": 1}

    # only an imported constant changes (it lives in the helper's file here; a constant from a file
    # with no helper is the next test's _FL_ORDER)
    (tmp_path / "helpers_mod.py").write_text(_helpers(2, 20))
    assert _run(tmp_path)["got"] == 23
    assert _run(tmp_path) == {"got": 23, "hits": 1, "misses": 0}


def test_the_stamp_follows_helpers_intrinsics_and_imported_constants():
    from lancefile import _jit
    from lancefile.encodings.kernels import bitpacking, fastlanes, lz4

    files = set()
    _jit._collect_sources(bitpacking._k_inline_decode.py_func, files, set())
    assert fastlanes.__file__ in files  # _fl_unpack, called from another file
    files = set()
    _jit._collect_sources(bitpacking._k_fl_gather.py_func, files, set())
    assert fastlanes.__file__ in files  # _FL_ORDER, an array imported from there
    common = sys.modules["lancefile.encodings.kernels._common"].__file__
    users = [k for k in vars(lz4).values() if isinstance(k, _jit._Kernel) and "load_u64" in k.py_func.__code__.co_names]
    assert users, "lz4 has a kernel that reads with load_u64"
    import numba

    _jit._compile_helpers(users[0].py_func, numba)  # as its compilation does: load_u64 is an intrinsic now
    files = set()
    _jit._collect_sources(users[0].py_func, files, set())
    assert common in files  # the intrinsic's file


def test_a_kernel_without_a_working_numba_raises_rather_than_running_as_python(monkeypatch):
    """numba that cannot be imported (absent, or refusing the installed numpy, as releases do)
    must stop the kernel with an ImportError naming numba, not run the plain function: those
    are untested as Python (ctypes arguments, wrap-around, NaN payloads) and gave wrong floats."""
    from lancefile._jit import _Kernel

    def double(x):
        return 2 * x

    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now raises ImportError
    kernel = _Kernel(double)
    with pytest.raises(ImportError, match=r"needs numba .*double.*pip install"):
        kernel(21)
    assert kernel._compiled is None  # nothing cached: a later call with numba back compiles it


def test_reads_and_writes_without_numba_fail_clearly_and_leave_no_file(tmp_path):
    """End to end in a fresh process whose numba import fails: a read raises the ImportError
    (it used to warn and return floats with other NaN bits), and a write leaves nothing."""
    fixture = os.path.join(os.path.dirname(__file__), "data", "2.2", "floats.lance")
    out = tmp_path / "out.lance"
    code = textwrap.dedent(f"""
        import sys
        sys.modules["numba"] = None
        import pyarrow as pa, lancefile
        for call in (lambda: lancefile.read_table({fixture!r}),
                     lambda: lancefile.write_table(pa.table({{"x": list(range(5000))}}), {str(out)!r})):
            try:
                call()
            except ImportError as exc:
                print("ImportError", "needs numba" in str(exc))
            else:
                print("no error")
    """)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.stdout.split("\n")[:2] == ["ImportError True", "ImportError True"], got.stderr[-2000:]
    assert not out.exists() and os.listdir(tmp_path) == []
