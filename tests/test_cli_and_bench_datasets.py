"""``lancefile inspect DIR`` on a dataset, and the dataset benchmark's smoke run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.cli import main

ROOT = Path(__file__).resolve().parent.parent
lance = pytest.importorskip("lance")


@pytest.mark.interop
def test_inspect_dataset_text_and_json(tmp_path, capsys):
    uri = str(tmp_path / "ds")
    lance.write_dataset(pa.table({"id": np.arange(100)}), uri, max_rows_per_file=40)
    lance.dataset(uri).delete("id < 5")
    assert main(["inspect", uri]) == 0
    out = capsys.readouterr().out
    assert "version:   2 of 2" in out and "95 live in 3 fragment(s)" in out
    assert "fragment 0: 35 live of 40 rows" in out and "5 deleted (arrow)" in out
    assert main(["inspect", "--json", "--version", "1", uri]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["version"] == 1 and info["rows"] == 100
    assert [f["physical_rows"] for f in info["fragments"]] == [40, 40, 20]
    assert [v["version"] for v in info["versions"]] == [1, 2]
    assert all(f["deletion_file"] is None for f in info["fragments"])


def test_inspect_missing_dataset_version_is_an_error(tmp_path, capsys):
    uri = str(tmp_path / "ds")
    lancefile.write_dataset(pa.table({"a": [1]}), uri)
    assert main(["inspect", uri, "--version", "7"]) == 1
    assert "no version 7" in capsys.readouterr().err


@pytest.mark.interop
def test_dataset_bench_smoke_run(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "bench.datasets", "--scale", "0.002", "--repeat", "1",
                           "--repeat-fast", "1", "--small-fragments", "5", "--silent", "--out", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads((tmp_path / "dataset-results.json").read_text())
    ops = {(r["table"], r["op"]) for r in result["records"]}
    assert ops == {(t, op) for t in ("numeric", "strings_text", "nested")
                   for op in ("open", "scan", "take 100", "scan (lancefile-written)")} | \
        {("numeric, 5 fragments of 1,000 rows", op) for op in ("scan", "take 100")}
    assert all(r["lancefile"] > 0 and r["pylance"] > 0 for r in result["records"])
    assert "| numeric | scan |" in (tmp_path / "DATASET-RESULTS.md").read_text()
