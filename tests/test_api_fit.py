"""The API as users of pylance and pyarrow.parquet expect it (issue 14): argument order,
read_schema/read_metadata, the Arrow stream protocol, size_bytes, reads after close, writes
to file objects and to ``memory://`` URIs."""

import io
import os

import pyarrow as pa
import pytest

import lancefile
from lancefile import InvalidInputError, LanceError, LanceIOError

TABLE = pa.table({"id": pa.array(range(10), pa.int64()), "s": [str(i) for i in range(10)]})


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "t.lance")
    lancefile.write_table(TABLE, p)
    return p


def test_reader_positional_order_is_pylances(path):
    assert lancefile.LanceFileReader(path, None, ["s"]).schema.names == ["s"]
    assert lancefile.LanceFileReader(path, columns=["id"]).schema.names == ["id"]
    with pytest.raises(InvalidInputError, match="columns="):
        lancefile.LanceFileReader(path, ["s"])


def test_iter_batches_order_matches_read_table(path):
    got = list(lancefile.iter_batches(path, ["s"], batch_size=4))
    assert [b.num_rows for b in got] == [4, 4, 2] and got[0].schema.names == ["s"]
    with pytest.raises(InvalidInputError, match="batch_size=4"):
        list(lancefile.iter_batches(path, 4))


def test_read_schema_and_metadata(path):
    assert lancefile.read_schema(path).equals(TABLE.schema)
    meta = lancefile.read_metadata(path)
    assert meta.num_rows == 10 and meta.version == "2.2"


def test_results_are_an_arrow_stream(path):
    reader = lancefile.LanceFileReader(path)
    assert pa.table(reader.read_all()).equals(TABLE)
    stream = pa.RecordBatchReader.from_stream(reader.read_range(2, 3))
    assert stream.read_all().column("id").to_pylist() == [2, 3, 4]


def test_duckdb_reads_results(path):
    import duckdb

    results = lancefile.LanceFileReader(path).read_all()  # noqa: F841 - read by name below
    assert duckdb.sql("select sum(id) from results").fetchall()[0][0] == 45
    taken = lancefile.LanceFileReader(path).take_rows([1, 3, 8])  # noqa: F841
    assert duckdb.sql("select list(id order by id) from taken").fetchall()[0][0] == [1, 3, 8]


def test_polars_reads_results(path):
    import polars as pl

    frame = pl.DataFrame(lancefile.LanceFileReader(path).read_all())  # through __arrow_c_stream__
    assert frame.height == 10 and frame["id"].sum() == 45
    part = pl.DataFrame(lancefile.LanceFileReader(path).read_range(2, 3))
    assert part["id"].to_list() == [2, 3, 4]


def test_size_bytes(path):
    import os

    assert lancefile.LanceFileReader(path).size_bytes() == os.path.getsize(path)


def test_read_after_close_is_a_clear_error(path):
    reader = lancefile.LanceFileReader(path)
    lazy = reader.read_all()
    reader.close()
    for call in (reader.read_all, lambda: reader.take_rows([1]), lambda: reader.read_range(0, 1), lazy.to_table):
        with pytest.raises(LanceIOError, match=r"t\.lance.*closed"):
            call()


def test_write_to_file_object():
    buf = io.BytesIO()
    lancefile.write_table(TABLE, buf)
    assert lancefile.read_table(buf.getvalue()).equals(TABLE)
    with pytest.raises(InvalidInputError, match="not writable"):
        lancefile.write_table(TABLE, io.BufferedReader(io.BytesIO(b"")))
    with pytest.raises(InvalidInputError, match="int"):
        lancefile.write_table(TABLE, 5)


def test_failed_write_to_file_object_writes_nothing():
    buf = io.BytesIO()
    with pytest.raises(LanceError):
        with lancefile.LanceFileWriter(buf, TABLE.schema) as w:
            w.write_batch(pa.table({"other": [1]}))
    assert buf.getvalue() == b""


def test_memory_uri_round_trip_and_no_partial_object():
    import pyarrow.fs as pafs

    uri = "memory://apifit/dir/t.lance"
    lancefile.write_table(TABLE, uri)
    assert lancefile.read_table(uri, ["s"]).column("s").equals(TABLE.column("s"))
    fs = pafs._MockFileSystem()
    with pytest.raises(LanceError):
        with lancefile.LanceFileWriter("bucket/bad.lance", TABLE.schema, filesystem=fs) as w:
            w.write_batch(TABLE)
            raise LanceError("stop")
    assert fs.get_file_info(pafs.FileSelector("", recursive=True)) == []
    lancefile.write_table(TABLE, "bucket/ok.lance", filesystem=fs)
    assert [i.path for i in fs.get_file_info(pafs.FileSelector("", recursive=True)) if i.is_file] == ["bucket/ok.lance"]
    assert lancefile.read_table("bucket/ok.lance", filesystem=fs).equals(TABLE)


def test_file_uris_are_local_files_written_in_place(tmp_path, monkeypatch):
    """A file:// URI is the local file it names (percent-escapes decoded, as pyarrow and pylance
    read it): written through the local writer, not staged in the temporary directory and
    copied as through pyarrow.fs."""
    from lancefile import objectstore

    def no_store(*a, **k):
        raise AssertionError("a file:// URI went through pyarrow.fs")

    monkeypatch.setattr(objectstore, "resolve_store", no_store)
    monkeypatch.setattr("lancefile.remote.resolve_store", no_store)
    monkeypatch.setattr("lancefile.datasets.storage.resolve_store", no_store)
    uri = (tmp_path / "my table.lance").as_uri()
    assert "%20" in uri
    lancefile.write_table(TABLE, uri)
    assert sorted(os.listdir(tmp_path)) == ["my table.lance"]
    assert lancefile.read_table(uri).equals(TABLE)
    assert lancefile.read_table("file:" + str(tmp_path / "my%20table.lance")).equals(TABLE)
    with lancefile.LanceFileWriter(uri.replace("my%20table", "w"), TABLE.schema) as w:
        w.write_batch(TABLE)
    assert w.path == str(tmp_path / "w.lance")
    ds_uri = (tmp_path / "ds").as_uri()
    lancefile.write_dataset(TABLE, ds_uri)
    assert lancefile.dataset(ds_uri).to_table().equals(TABLE)
    from lancefile.datasets.storage import is_dataset
    assert is_dataset(ds_uri) and is_dataset(str(tmp_path / "ds"))
    with pytest.raises(InvalidInputError, match="storage_options"):
        lancefile.write_table(TABLE, uri, storage_options={"region": "x"})
    with pytest.raises(LanceError, match="not a local file URI"):
        lancefile.write_table(TABLE, "file://otherhost/t.lance")
    with pytest.raises(LanceError, match="not a local file URI"):
        lancefile.read_table("file://otherhost/t.lance")


def test_uri_errors_name_the_uri():
    with pytest.raises(LanceIOError, match="memory://apifit/missing.lance"):
        lancefile.read_table("memory://apifit/missing.lance")
    with pytest.raises(LanceIOError, match="storage_options"):
        lancefile.read_table("gs://b/k.lance", storage_options={"x": "y"})
    with pytest.raises(LanceIOError, match="allow_http"):
        lancefile.read_table("s3://b/k.lance", storage_options={"aws_endpoint": "http://localhost:1"})


def test_cli_version_json_schema_and_bad_rows(tmp_path, capsys):
    import json

    from lancefile.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("lancefile ")
    p = str(tmp_path / "n.lance")
    lancefile.write_table(pa.table({"st": pa.array([{"x": 1}])}), p)
    assert main(["inspect", "--json", p]) == 0
    schema = json.loads(capsys.readouterr().out)["schema"]
    assert schema[0]["children"] == [{"name": "x", "type": "int64", "nullable": True}]
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--rows", "-5"])
    assert exc.value.code == 2 and "positive number of rows" in capsys.readouterr().err


def test_cli_closed_pipe_is_quiet(tmp_path):
    import subprocess
    import sys

    p = str(tmp_path / "wide.lance")
    lancefile.write_table(pa.table({f"c{i}": [i] for i in range(300)}), p)
    proc = subprocess.run(f"{sys.executable} -m lancefile inspect {p} | head -1", shell=True,
                          capture_output=True, text=True, timeout=60)
    assert proc.stderr == "", proc.stderr
