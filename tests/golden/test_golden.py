"""Golden Lance 2.1 / 2.2 files written by pylance 14.0.2, read with lancefile.

The files, the data pylance's own reader returns for them (``<case>.arrow``) and a manifest of
their page layouts are in ``tests/data/<version>/`` (made by ``tests/data/make_golden.py``; see
``tests/data/README.md``). This module does not need pylance: it compares lancefile's reads with
the stored Arrow data.

For every (version, case) with an ``.arrow`` file:

* whole-file reads at batch sizes 1, 7 and 1000;
* ``read_range`` at the start, across every page edge and a sample of mini-block chunk edges (from
  the manifest), at the end, the whole file and an empty range;
* ``take_rows`` with sorted, unsorted and duplicate indices, and the first and last row;
* a projection of each top-level column, and of one dotted nested name when there is a struct.

A version's cases are skipped (not failed) while ``lancefile.format.version.VERSIONS[...].readable``
is False for it; they run as soon as the version is marked readable.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import lancefile
from lancefile.format.version import VERSIONS, FileVersion
from tests import datagen
from tests.conftest import assert_tables_equal

DATA = Path(__file__).resolve().parent.parent / "data"
GOLDEN_VERSIONS = {"2.1": FileVersion.V2_1, "2.2": FileVersion.V2_2}
READ_BATCH_SIZES = (1, 7, 1000)
MAX_CHUNK_EDGES = 8  # chunk edges tried per case (evenly spread); page edges are all tried


def open_reader(path: Path, columns: list[str] | None = None):
    """The reader under test."""
    return lancefile.LanceFileReader(str(path), columns=columns)


@functools.lru_cache(maxsize=None)
def manifest(version: str) -> dict:
    path = DATA / version / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else {"cases": []}


@functools.lru_cache(maxsize=8)
def expected_table(version: str, name: str) -> pa.Table:
    with ipc.open_file(str(DATA / version / f"{name}.arrow")) as f:
        return f.read_all()


def _skip_reason(version: str) -> str | None:
    fv = GOLDEN_VERSIONS[version]
    if VERSIONS[fv].readable:
        return None
    return (f"lancefile cannot read Lance {version} files yet "
            f"(lancefile.format.version.VERSIONS[FileVersion.{fv.name}].readable is False)")


def _params(extra=(None,)):
    out = []
    for version in GOLDEN_VERSIONS:
        reason = _skip_reason(version)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        for entry in manifest(version)["cases"]:
            if not entry.get("expected"):
                continue
            for x in extra:
                pid = f"{version}-{entry['name']}" + ("" if x is None else f"-bs{x}")
                args = (version, entry["name"]) if x is None else (version, entry["name"], x)
                out.append(pytest.param(*args, marks=marks, id=pid))
    return out


def _entry(version: str, name: str) -> dict:
    return next(e for e in manifest(version)["cases"] if e["name"] == name)


def _path(version: str, name: str) -> Path:
    return DATA / version / _entry(version, name)["file"]


def check(actual: pa.Table, expected: pa.Table, context: str) -> None:
    """Same schema (types, nullability and metadata) and the same values.

    Dictionary columns are compared by value after the type check: which dictionary items a batch
    carries (and in which order) is not part of the contract."""
    if not actual.schema.equals(expected.schema, check_metadata=True):
        raise AssertionError(f"{context}: schema differs\n--- lancefile\n"
                             f"{actual.schema.to_string(show_schema_metadata=True)}\n--- expected\n"
                             f"{expected.schema.to_string(show_schema_metadata=True)}")
    has_dict = any(datagen.has_dictionary(f.type) for f in expected.schema)
    assert_tables_equal(actual, expected, values_only=has_dict, check_metadata=True, context=context)


def _edges(entry: dict) -> list[int]:
    """Rows where some column's page or mini-block chunk starts (all pages, a sample of chunks)."""
    chunks = entry.get("chunk_row_starts", [])
    if len(chunks) > MAX_CHUNK_EDGES:
        chunks = [chunks[i] for i in np.linspace(0, len(chunks) - 1, MAX_CHUNK_EDGES).round().astype(int)]
    return sorted(set(entry.get("page_row_starts", [])) | set(chunks))


def _ranges(entry: dict) -> list[tuple[int, int]]:
    n = entry["rows"]
    out = [(0, min(n, 10)), (max(0, n - 10), min(n, 10)), (0, n), (n // 2, 0), (n - 1, 1)]
    for e in _edges(entry):  # a few rows either side of each edge
        start = max(0, e - 2)
        out.append((start, min(4, n - start)))
    edges = _edges(entry)
    if len(edges) >= 2:  # one range over several edges
        out.append((edges[0] - 1, edges[-1] - edges[0] + 2))
    return out


# --------------------------------------------------------------------------------------------
# The data set itself (runs without pylance, whatever lancefile can read)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", list(GOLDEN_VERSIONS))
def test_golden_files_present(version):
    """Every file the manifest names is in the checkout, with the footer version it claims."""
    cases = manifest(version)["cases"]
    assert cases, f"tests/data/{version}/MANIFEST.json is missing or empty"
    for entry in cases:
        for key in ("file", "expected"):
            if entry.get(key):
                path = DATA / version / entry[key]
                assert path.is_file(), f"{path} is missing (is it ignored by .gitignore?)"
        if entry.get("file"):
            footer = (DATA / version / entry["file"]).read_bytes()[-40:]
            assert footer[-4:] == b"LANC"
            major, minor = int.from_bytes(footer[32:34], "little"), int.from_bytes(footer[34:36], "little")
            assert f"{major}.{minor}" == version == entry["footer_version"], entry["name"]
        if entry.get("expected"):
            assert expected_table(version, entry["name"]).num_rows == entry["rows"], entry["name"]


# --------------------------------------------------------------------------------------------
# Reads
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version,name,batch_size", _params(READ_BATCH_SIZES))
def test_read_all(version, name, batch_size):
    expected = expected_table(version, name)
    batches = open_reader(_path(version, name)).read_all(batch_size=batch_size).to_batches()
    sizes = [b.num_rows for b in batches]
    assert all(s <= batch_size for s in sizes), f"batches larger than {batch_size}: {sizes[:20]}"
    assert sum(sizes) == expected.num_rows
    got = pa.Table.from_batches(batches) if batches else expected.schema.empty_table()
    check(got, expected, f"{version}/{name} read_all(batch_size={batch_size})")


@pytest.mark.parametrize("version,name", _params())
def test_read_range(version, name):
    entry, expected = _entry(version, name), expected_table(version, name)
    reader = open_reader(_path(version, name))
    for start, n in _ranges(entry):
        got = reader.read_range(start, n, batch_size=3 if n <= 12 else 1000).to_table()
        check(got, expected.slice(start, n), f"{version}/{name} read_range({start}, {n})")


@pytest.mark.parametrize("version,name", _params())
def test_take_rows(version, name):
    entry, expected = _entry(version, name), expected_table(version, name)
    n = entry["rows"]
    reader = open_reader(_path(version, name))
    edges = [e for e in _edges(entry) if 0 < e < n][:6]
    around = sorted({0, n - 1, n // 2, *edges, *(e - 1 for e in edges)})
    rng = np.random.default_rng(n)
    takes = {
        "first": [0],
        "last": [n - 1],
        "sorted": around,
        "unsorted": rng.permutation(around).tolist(),
        "duplicates": [n - 1, 0, n - 1, *edges[:2], *edges[:2], 0],
        "random": sorted(rng.choice(n, size=min(n, 25), replace=False).tolist()),
    }
    for kind, idx in takes.items():
        got = reader.take_rows(idx).to_table()
        check(got, expected.take(pa.array(idx, pa.int64())), f"{version}/{name} take_rows {kind} {idx}")


def _nested_name(schema: pa.Schema) -> tuple[str, str] | None:
    """(top-level struct name, child name) for a projectable struct child (not packed, not blob)."""
    for f in schema:
        meta = f.metadata or {}
        packed = meta.get(b"packed", b"").lower() == b"true" or \
            meta.get(b"lance-encoding:packed", b"").lower() == b"true"
        if pa.types.is_struct(f.type) and f.type.num_fields and not packed:
            return f.name, f.type.field(f.type.num_fields - 1).name
    return None


def _struct_child(expected: pa.Table, name: str, child: str) -> pa.Table:
    """The expected result of projecting ``name.child``: the struct with only that child."""
    f = expected.schema.field(name)
    col = expected.column(name).combine_chunks()
    kid = f.type.field(child)
    arr = pa.StructArray.from_arrays([col.field(child)], fields=[kid],
                                     mask=col.is_null() if col.null_count else None)
    field = pa.field(name, pa.struct([kid]), f.nullable, f.metadata)
    return pa.Table.from_arrays([arr], schema=pa.schema([field], metadata=expected.schema.metadata))


@pytest.mark.parametrize("version,name", _params())
def test_projection(version, name):
    expected = expected_table(version, name)
    path = _path(version, name)
    for col in expected.column_names:
        got = open_reader(path, [col]).read_all().to_table()
        check(got, expected.select([col]), f"{version}/{name} columns=[{col!r}]")
    nested = _nested_name(expected.schema)
    if nested:
        dotted = ".".join(nested)
        got = open_reader(path, [dotted]).read_all().to_table()
        check(got, _struct_child(expected, *nested), f"{version}/{name} columns=[{dotted!r}]")


def test_blob_v2_descriptors():
    """2.2 blob v2 (a dataset's data file): pylance's file reader cannot read it (its schema gives
    the descriptor fields id -1); lancefile reads the descriptors, which point at the bytes."""
    import zlib

    path = DATA / "2.2" / "blob_v2.lance"
    rng = np.random.default_rng(zlib.crc32(b"blob_v2"))  # make_golden.py's data for the case
    values = [rng.bytes(int(k)) for k in rng.integers(10, 500, 8)]
    values[2], values[5] = None, b""
    reader = open_reader(path)
    table = reader.read_all().to_table()
    assert table.column("id").to_pylist() == list(range(8))
    assert [f.name for f in table.schema.field("blob").type] == ["kind", "position", "size", "blob_id", "blob_uri"]
    raw = path.read_bytes()
    for want, desc in zip(values, table.column("blob").to_pylist()):
        if want is None:
            assert desc is None
            continue
        assert desc["kind"] == 0 and desc["blob_uri"] == ""  # inline: bytes in this file
        assert raw[desc["position"] : desc["position"] + desc["size"]] == want
    sizes = open_reader(path, ["blob.size"]).take_rows([7, 2, 0]).to_table().column("blob").to_pylist()
    assert sizes == [{"size": len(values[7])}, None, {"size": len(values[0])}]
