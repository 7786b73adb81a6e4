"""The public API type-checks in user code: ``mypy --strict`` on ``tests/typecheck/public_api.py``
(the package ships ``py.typed``), and the checker does see lancefile's annotations (a wrong call is
reported)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

HERE = os.path.dirname(__file__)


def _mypy(path: str, cache: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                           "--ignore-missing-imports", "--cache-dir", cache, "--no-error-summary", path],
                          capture_output=True, text=True, timeout=600)


def test_user_code_type_checks(tmp_path):
    done = _mypy(os.path.join(HERE, "typecheck", "public_api.py"), str(tmp_path / "cache"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_wrong_calls_are_reported(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import lancefile\n"
        "r = lancefile.LanceFileReader('x.lance')\n"
        "n: str = r.num_rows()\n"                       # an int
        "r.read_range('0', 10)\n"                        # start is an int
        "lancefile.read_table('x.lance', batch_size='big')\n"
        "ds = lancefile.dataset('d')\n"
        "v: str = ds.count_rows()\n")
    done = _mypy(str(bad), str(tmp_path / "cache"))
    assert done.returncode == 1
    lines = {int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line}
    assert lines == {3, 4, 5, 7}, done.stdout
