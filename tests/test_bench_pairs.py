"""``python -m bench.pairs`` (paired A/B timing of two lancefile trees) still runs: two
workers, every operation, the report line; never how fast anything was."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("lance", reason="the file read is written by pylance (the test extra)")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "bench.pairs", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("op,table", [("scan", "numeric"), ("take", "nested"), ("range", "embeddings"),
                                      ("write", "strings_lowcard")])
def test_pairs_of_one_tree_against_itself(op, table):
    proc = _run("--base", str(ROOT), "--table", table, "--op", op, "--scale", "0.002", "--pairs", "3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    m = re.fullmatch(rf"{table} {op}( bs=1024)? \(3 pairs\): base ([0-9.]+) ms, new ([0-9.]+) ms, "
                     r"paired new/base ([0-9.]+)\n", proc.stdout)
    assert m, proc.stdout
    base, new, paired = (float(x) for x in m.groups()[1:])
    assert base > 0 and new > 0 and paired > 0


def test_pairs_needs_a_base_and_a_pair():
    assert _run("--table", "numeric").returncode == 2
    proc = _run("--base", str(ROOT), "--pairs", "0")
    assert proc.returncode == 2 and "--pairs must be at least 1" in proc.stderr


def test_a_tree_is_this_checkout_a_directory_or_a_revision(tmp_path):
    sys.path.insert(0, str(ROOT))
    try:
        from bench.pairs import _src
    finally:
        sys.path.remove(str(ROOT))
    assert _src(None, tmp_path, "x") == ROOT / "src"
    assert _src(str(ROOT), tmp_path, "x") == ROOT / "src"
    other = tmp_path / "copy"
    (other / "src" / "lancefile").mkdir(parents=True)
    assert _src(str(other), tmp_path, "x") == other / "src"
