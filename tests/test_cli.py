"""The command line: inspect and demo."""

from __future__ import annotations

import json

import pyarrow as pa

import lancefile
from lancefile.cli import main


def test_inspect_text_and_json(tmp_path, capsys):
    path = tmp_path / "f.lance"
    t = pa.table({"x": pa.array(range(1000)), "s": pa.array([str(i % 3) for i in range(1000)]),
                  "l": pa.array([[i] for i in range(1000)])})
    lancefile.write_table(t, path, max_page_bytes=4096, version="2.0")
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "version:   2.0 (footer 0.3)" in out and "rows:      1000" in out
    assert "dictionary(" in out  # low-cardinality strings
    assert main(["inspect", "--json", str(path)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == 1000 and info["footer_version"] == "0.3"
    assert [c["field"] for c in info["columns"]] == ["x", "s", "l", "l.item"]
    assert len(info["columns"][0]["pages"]) == 2  # 8000 bytes at 4096 per page
    assert sum(p["rows"] for p in info["columns"][0]["pages"]) == 1000


def test_inspect_default_version_file(tmp_path, capsys):
    path = tmp_path / "f.lance"
    lancefile.write_table(pa.table({"x": pa.array(range(1000)), "l": pa.array([[i] for i in range(1000)])}), path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "version:   2.2 (footer 2.2)" in out and "mini-block(" in out and "repetition index" in out


def test_inspect_bad_file_exits_nonzero(tmp_path, capsys):
    bad = tmp_path / "bad.lance"
    bad.write_bytes(b"not a lance file at all, just some text bytes")
    assert main(["inspect", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "not a Lance file" in err and "bad.lance" in err
    assert main(["inspect", str(tmp_path / "missing.lance")]) == 1
    assert "missing.lance" in capsys.readouterr().err


def test_demo_runs(tmp_path, capsys):
    assert main(["demo", "--rows", "2000", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "all reads match the source table" in out
    assert (tmp_path / "sample.lance").exists()


def test_inspect_shows_2_2_layouts_and_encoding_trees(capsys):
    """Per page: the structural layout and its compressive encoding tree (golden file by pylance)."""
    from pathlib import Path

    data = Path(__file__).parent / "data" / "2.2"
    assert main(["inspect", str(data / "lists.lance")]) == 0
    out = capsys.readouterr().out
    assert "version:   2.2 (footer 2.2)" in out
    assert "[0] list_int32.item: int32" in out
    assert "mini-block(values=flat(32), rep=bitpack(16->1), def=bitpack(16->2)" in out
    assert "layers=[nullable item, nullable+emptyable list]" in out
    assert main(["inspect", str(data / "long_text.lance")]) == 0
    assert "full-zip(values=fsst(variable(32))" in capsys.readouterr().out
    assert main(["inspect", str(data / "constant.lance")]) == 0
    assert "constant(value inline (4 bytes)" in capsys.readouterr().out
