"""``lancefile head`` and ``lancefile convert`` (lancefile.tools): output formats, round trips
through Parquet, CSV, Arrow IPC and Lance files and datasets (read back by pylance), bad input."""

from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import lancefile
from lancefile.cli import main
from lancefile.tools import convert, head, print_rows

lance = pytest.importorskip("lance")


def _table(n=5000) -> pa.Table:
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "s": pa.array([None if i % 10 == 0 else f"name{i}" for i in range(n)]),
        "f": pa.array(np.arange(n) / 7.0),
        "l": pa.array([[i, i + 1] if i % 3 else [] for i in range(n)], pa.list_(pa.int32())),
        "st": pa.array([{"a": i, "b": str(i)} for i in range(n)]),
    })


@pytest.fixture
def parquet(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(_table(), path, row_group_size=1000)
    return path


@pytest.mark.parametrize("version", [None, "2.0", "2.1"])
def test_parquet_to_lance_file_and_back(tmp_path, parquet, version):
    dst = str(tmp_path / "t.lance")
    assert convert(parquet, dst, version=version, batch_size=700) == 5000
    assert lancefile.read_table(dst).equals(_table())
    assert lance.file.LanceFileReader(dst).read_all().to_table().equals(_table())
    assert lancefile.LanceFileReader(dst).version == (version or "2.2")
    for ext in ("parquet", "arrow"):
        back = str(tmp_path / f"back.{ext}")
        assert convert(dst, back) == 5000
        got = pq.read_table(back) if ext == "parquet" else pa.ipc.open_file(back).read_all()
        assert got.equals(_table())


def test_csv_both_ways(tmp_path):
    t = pa.table({"id": np.arange(300), "x": np.arange(300) * 0.5, "s": [f"v{i}" for i in range(300)]})
    src = str(tmp_path / "in.csv")
    pcsv.write_csv(t, src)
    assert convert(src, str(tmp_path / "c.lance")) == 300
    assert lancefile.read_table(str(tmp_path / "c.lance")).equals(t)
    assert convert(str(tmp_path / "c.lance"), str(tmp_path / "out.csv")) == 300
    assert pcsv.read_csv(str(tmp_path / "out.csv")).equals(t)


def test_to_and_from_datasets(tmp_path, parquet):
    uri = str(tmp_path / "ds")
    convert(parquet, uri, dst_format="lance-dataset")
    convert(parquet, uri, dst_format="lance-dataset", mode="append")
    assert lance.dataset(uri).count_rows() == 10_000 and len(lance.dataset(uri).versions()) == 2
    lance.dataset(uri).delete("id < 100")
    out = str(tmp_path / "from-ds.lance")
    assert convert(uri, out) == 9_800  # deleted rows stay behind
    assert lancefile.read_table(out).num_rows == 9_800


def test_directory_of_parquet_files(tmp_path):
    d = tmp_path / "parts"
    d.mkdir()
    t = _table(100)
    pq.write_table(t.slice(0, 60), str(d / "a.parquet"))
    pq.write_table(t.slice(60), str(d / "b.parquet"))
    assert convert(str(d), str(tmp_path / "all.lance")) == 100
    assert lancefile.read_table(str(tmp_path / "all.lance")).sort_by("id").equals(t)


def test_failed_conversion_leaves_nothing(tmp_path):
    src = str(tmp_path / "bad.csv")
    with open(src, "w") as f:
        f.write("id,x\n" + "".join(f"{i},{i}\n" for i in range(200_000)) + "oops,1\n")
    for dst in ("bad.lance", "bad.parquet"):
        with pytest.raises(pa.ArrowInvalid):
            convert(src, str(tmp_path / dst), batch_size=1000)
    assert sorted(os.listdir(tmp_path)) == ["bad.csv"]


def test_existing_destination_and_bad_names(tmp_path, parquet):
    dst = str(tmp_path / "t.lance")
    convert(parquet, dst)
    with pytest.raises(lancefile.LanceIOError, match="exists"):
        convert(parquet, dst)
    assert convert(parquet, dst, overwrite=True) == 5000
    with pytest.raises(lancefile.InvalidInputError, match="same"):
        convert(dst, dst, overwrite=True)
    with pytest.raises(lancefile.LanceIOError, match="no such file"):
        convert(str(tmp_path / "missing.parquet"), str(tmp_path / "x.lance"))
    with pytest.raises(lancefile.InvalidInputError, match="format"):
        convert(str(tmp_path / "t.lance"), str(tmp_path / "x.xlsx"))
    with pytest.raises(lancefile.InvalidInputError, match="mode"):
        convert(parquet, str(tmp_path / "ds"), dst_format="lance-dataset", mode="upsert")


def test_head_of_files_and_datasets(tmp_path, parquet):
    path, uri = str(tmp_path / "t.lance"), str(tmp_path / "ds")
    convert(parquet, path)
    lancefile.write_dataset(_table(), uri, max_rows_per_file=1000)
    lancefile.dataset(uri).delete("id < 1500")
    assert head(path, 3).equals(_table().slice(0, 3))
    assert head(path, 0).num_rows == 0
    assert head(path, 10**9).num_rows == 5000
    assert head(path, 4, columns=["s"], where="id >= 4990 OR s IS NULL")["s"].to_pylist() == [None] * 4
    assert head(path, 20, where="id >= 4990")["id"].to_pylist() == list(range(4990, 5000))
    assert head(uri, 2, columns=["id"])["id"].to_pylist() == [1500, 1501]
    assert head(uri, 3, where="id > 4000")["id"].to_pylist() == [4001, 4002, 4003]
    with pytest.raises(lancefile.InvalidInputError, match="at least 0"):
        head(path, -1)


def test_print_formats():
    t = pa.table({"id": [1, 2], "s": ["a\nb", None], "b": [b"\x00\x01", b"x" * 100], "l": [[1], []],
                  "d": pa.array([0, 1], pa.date32())})
    out = io.StringIO()
    print_rows(t, "table", out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["id", "s", "b", "l", "d"] and lines[-1] == "(2 rows)"
    assert "a\\nb" in lines[2] and "0001" in lines[2] and "<100 bytes>" in lines[3] and "null" in lines[3]
    out = io.StringIO()
    print_rows(t, "json", out)
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    assert rows[0] == {"id": 1, "s": "a\nb", "b": "0001", "l": [1], "d": "1970-01-01"}
    out = io.StringIO()
    print_rows(t, "csv", out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["id", "s", "b", "l", "d"] and rows[1][0] == "1" and rows[1][3] == "[1]"
    with pytest.raises(lancefile.InvalidInputError, match="format"):
        print_rows(t, "xml", io.StringIO())


def test_cli_head_and_convert(tmp_path, parquet, capsys):
    dst = str(tmp_path / "t.lance")
    assert main(["convert", parquet, dst, "--progress"]) == 0
    out, err = capsys.readouterr()
    assert "5,000 rows" in out and "rows" in err and "100%" in err
    assert main(["head", dst, "-n", "2", "-c", "id,s", "-w", "id > 10", "-f", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ['"id","s"', '11,"name11"', '12,"name12"']
    assert main(["head", dst, "-w", "id >"]) == 1
    assert "position 4" in capsys.readouterr().err
    assert main(["convert", parquet, dst]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["convert", parquet, str(tmp_path / "ds"), "--dataset", "--lance-version", "2.0"]) == 0
    assert lance.dataset(str(tmp_path / "ds")).data_storage_version == "2.0"
    with pytest.raises(SystemExit):
        main(["head", dst, "-n", "-3"])
