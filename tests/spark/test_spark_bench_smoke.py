"""``bench/spark_compare.py --smoke`` runs end to end and writes its report (no speed assertions).

The benchmark starts its own local-mode Spark, so it runs in a subprocess (a PySpark driver
JVM is one per process and other tests may hold one open here).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "spark_compare.py"
OPS = ("write", "full read (noop sink)", "count()", "sum(value), no projection",
       "projected read (id, category, value)", "sum(value), projected", "read emb only (noop)")


def test_spark_compare_smoke(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.skip("java is not on PATH: Spark needs a JVM (Java 17+)")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    cmd = [sys.executable, str(SCRIPT), "--smoke", "--out", str(out), "--workdir", str(tmp_path / "work")]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:  # timed out: its Spark JVM is in the same process group
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.decode(errors="replace")
    assert proc.returncode == 0, f"exit {proc.returncode}\n{text[-6000:]}"

    md = (out / "SPARK-RESULTS.md").read_text()
    assert "| operation | lance (s) | parquet (s) | lance / parquet |" in md
    for op in OPS:
        assert f"| {op} | " in md, f"no row for {op!r} in\n{md}"
    for word in ("cpu_count", "python", "pyspark", "pyarrow", "20,000 rows"):
        assert word in md, f"{word!r} missing from\n{md}"

    results = json.loads((out / "spark-results.json").read_text())
    assert [r["op"] for r in results["results"]] == list(OPS)
    for r in results["results"]:
        assert len(r["lance"]) == len(r["parquet"]) == 1
        assert r["lance_median"] > 0 and r["parquet_median"] > 0
    assert results["data"]["rows"] == 20_000
    assert results["data"]["lance_files"] >= 1 and results["data"]["parquet_files"] >= 1
    assert not (tmp_path / "work").exists(), "the scratch directory was not removed"
    assert "| write |" in text  # the table is printed too
