"""The object-storage benchmark (``python -m bench.s3``) still runs: a tiny run, results checked
for sanity (both libraries read both files, the server counted requests), never for speed."""

from __future__ import annotations

import pytest

pytest.importorskip("lance", reason="the benchmark compares against pylance (the test extra)")
pytest.importorskip("moto.server")


def test_bench_s3_smoke(tmp_path):
    from bench import s3

    out = tmp_path / "S3.md"
    s3.main(["--rows", "3000", "--repeat", "1", "--take-repeat", "1", "--out", str(out), "--silent"])
    text = out.read_text()
    assert text.count("| pylance's file") == 2 and text.count("| lancefile's file") == 2
    for line in text.splitlines():
        if line.startswith("| pylance's file") or line.startswith("| lancefile's file"):
            assert " 0 (0+0)" not in line, line  # every read reached the server
