"""The main job, ``lancefile pipeline``: generated and user sources, the summary, bad input."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import lancefile
from lancefile.cli import main as cli_main
from lancefile.spark.job import PipelineConfig, run_pipeline
from tests.conftest import reference_read
from tests.spark.conftest import lance_files


def _all_rows(path: str) -> pa.Table:
    return lancefile.dataset(path).to_table()


def test_pipeline_on_the_generated_sample(spark, tmp_path):
    import lance

    out = str(tmp_path / "out")
    text = io.StringIO()
    cfg = PipelineConfig(rows=3000, dim=8, out=out, partitions=2, max_rows_per_file=1000, stop_spark=False)
    summary = run_pipeline(cfg, out=text)
    table = _all_rows(out)
    assert summary["rows"] == table.num_rows == 3000
    ds = lancefile.dataset(out)
    files = [p for f in ds.get_fragments() for p in f.data_files()]
    assert summary["files"] == len(files) == len(lance_files(out)) >= 4  # every file under out is referenced
    assert summary["bytes"] == sum(os.path.getsize(p) for p in files)
    assert [v["version"] for v in summary["versions"]] == [1, 2] and summary["version"] == ds.version == 2
    assert summary["versions"][1]["rows"] == 3000 and 0 < summary["appended"] < 3000
    assert summary["versions"][0]["rows"] == lancefile.dataset(out, version=1).count_rows() == 3000 - summary["appended"]
    want = pc.sum(pc.and_(pc.equal(table["category"], "sports"), pc.greater(table["score"], 0.5))).as_py()
    assert summary["matched"] == want > 0
    assert table.schema.field("emb").type.list_size == 8
    assert sorted(table.column("id").to_pylist()) == list(range(3000))
    assert reference_read(files[0]).num_rows <= 1000
    assert lance.dataset(out).count_rows() == 3000 and lance.dataset(out, version=1).count_rows() == 3000 - summary["appended"]
    printed = text.getvalue()
    assert "[6/6]" in printed and "summary" in printed and "3,000 written and read back" in printed
    assert "versions: 1 (" in printed
    assert len(summary["sample"]) == 5 and all(r["category"] == "sports" for r in summary["sample"])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_pipeline_from_a_user_file(spark, tmp_path, fmt):
    table = pa.table({"id": list(range(500)), "kind": [["click", "view"][i % 2] for i in range(500)],
                      "value": [i / 10 for i in range(500)]})
    src = str(tmp_path / f"events.{fmt}")
    (pq.write_table if fmt == "parquet" else pacsv.write_csv)(table, src)
    out = str(tmp_path / "out")
    cfg = PipelineConfig(source=src, out=out, columns=["id", "value"], where="value >= 25", stop_spark=False,
                         show=3)
    summary = run_pipeline(cfg, out=io.StringIO())
    assert summary["rows"] == 500 and summary["matched"] == 250
    assert [r["id"] for r in summary["sample"]] == [250, 251, 252]
    assert _all_rows(out).sort_by("id").column("kind").to_pylist() == table.column("kind").to_pylist()


@pytest.mark.parametrize("args, message", [
    (["--source", "/nonexistent/data.parquet"], "source not found: /nonexistent/data.parquet"),
    (["--source", "{tmp}/data.txt"], "cannot tell the format of"),
    (["--rows", "0"], "--rows and --dim must be positive"),
    (["--out", "{tmp}/data.txt"], "is a file"),
    (["--out", "{tmp}/files"], "holds Lance files that are not a dataset"),
])
def test_bad_input_fails_fast_with_status_2(tmp_path, capsys, monkeypatch, args, message):
    (tmp_path / "data.txt").write_text("x")
    (tmp_path / "files").mkdir()
    lancefile.write_table(pa.table({"x": [1]}), str(tmp_path / "files" / "part-0.lance"))
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    status = cli_main(["pipeline", *[a.format(tmp=tmp_path) for a in args]])
    assert status == 2
    assert message in capsys.readouterr().err
    assert os.listdir(temp) == []      # no empty lancefile-pipeline-* directory left behind


def test_a_failed_run_removes_the_temporary_output_it_made(tmp_path, monkeypatch):
    import lancefile.spark.job as job

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = []

    def fail(cfg, target, *rest):
        made.append(target)
        open(os.path.join(target, "part-0.lance"), "wb").close()
        raise RuntimeError("Spark died")

    monkeypatch.setattr(job, "_run", fail)
    with pytest.raises(RuntimeError, match="Spark died"):
        run_pipeline(PipelineConfig(rows=10, dim=2), out=io.StringIO())
    assert len(made) == 1 and os.path.basename(made[0]).startswith("lancefile-pipeline-")
    assert os.listdir(tmp_path) == []


def test_a_bad_filter_is_reported_not_raised(spark, tmp_path, capsys):
    from lancefile.spark.job import add_arguments, run_from_args
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--rows", "100", "--dim", "2", "--out", str(tmp_path / "o"), "--where", "no_such_col > 1"])
    assert run_from_args(args, stop_spark=False) == 2
    assert "no_such_col" in capsys.readouterr().err


@pytest.mark.slow
def test_the_readme_run_command(tmp_path):
    """``lancefile pipeline`` as a user runs it: its own Spark, in a fresh process."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "lancefile", "pipeline", "--rows", "2000", "--dim", "4", "--out", str(out),
         "--master", "local[2]", "--conf", "spark.ui.enabled=false"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2,000 written and read back" in proc.stdout
    assert _all_rows(str(out)).num_rows == 2000
