"""Tests of the lancefile.encodings.kernels package: lazy numba import and the doc example."""

from __future__ import annotations

from lancefile.encodings import kernels as k


def test_import_does_not_compile():
    # numba is imported on the first kernel call, never by importing the module
    import subprocess
    import sys

    code = "import sys, lancefile.encodings.kernels; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_docstring_examples():
    import doctest

    assert doctest.testmod(k, raise_on_error=True).attempted > 0
