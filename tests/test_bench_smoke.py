"""The benchmark suite (``python -m bench``) still runs: a smoke run on tiny tables.

Not a timed test: it checks that every table, library and operation produced a sane
result and that the report was written, never how fast anything was.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("lance", reason="the benchmark compares against pylance (the test extra)")


def test_bench_smoke_run(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--silent", "--out", str(out), "--workdir", str(tmp_path / "work")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]

    from bench.data import TABLES
    from bench.run import writable_versions

    result = json.loads((out / "results.json").read_text())
    records = [r for r in result["records"] if r["op"] != "memory"]
    for version in writable_versions():
        for table in TABLES:
            for op in ("write", "scan bs=1024", "scan bs=65536", "take 100", "take 10000", "read_range 1%", "open"):
                for lib in ("lancefile", "pylance"):
                    got = [r for r in records if (r["table"], r["version"], r["op"], r["lib"]) == (table, version, op, lib)]
                    assert len(got) == 1, (table, version, op, lib)
                    assert all(t > 0 and math.isfinite(t) for t in got[0]["times"])
                assert any(r["table"] == table and r["op"] == op and r["lib"] == "parquet" for r in records)
    assert any(r["op"] == "scan 1 column" and r["lib"] == "lancefile" and r["counted"] for r in records)
    mem = [r for r in result["records"] if r["op"] == "memory"]
    assert {r["lib"] for r in mem} == {"lancefile", "pylance", "parquet"}
    assert all(r["write"]["peak_mb"] > 0 and r["scan"]["peak_mb"] > 0 for r in mem)
    assert result["startup"]["import"]["lancefile"]["numba_imported"] is False  # numba stays off the import path
    assert result["checks"]  # the libraries read each other's files back

    text = (out / "RESULTS.md").read_text()
    assert "ratios to pylance" in text and "## Start-up" in text and "targets" in text
    assert text == proc.stdout  # what is printed is what is written
    for table in TABLES:
        assert f"| {table} " in text
