"""The filter benchmark (``python -m bench.filters``) still runs: a smoke run on a tiny table.

Not a timed test: it checks that every library answered every case with the right rows (the
bench itself refuses a wrong row count), that pylance built its zone-map index, and that the
report has every row and the write cost of statistics; never how fast anything was.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("lance", reason="the benchmark compares against pylance (the test extra)")


def test_bench_filters_smoke_run(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "bench.filters", "--rows", "30000", "--repeat", "1", "--write-scale", "0.0005",
         "--write-repeat", "1", "--write-tables", "numeric,strings_lowcard", "--silent", "--out", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = (tmp_path / "FILTER-RESULTS.md").read_text()
    for case in ("| 0.1 % |", "| 1 % |", "| 10 % |", "| none |"):
        assert case in report
    assert "zone map" in report and "ZONEMAP" in report
    assert "| numeric |" in report and "| strings_lowcard |" in report  # the write cost of statistics
