"""pylance 14.0.2 writes versions 2.0, 2.1 and 2.2; lancefile reads.

For every catalogue entry and edge case, pylance writes the file and pylance's own reader is the
oracle: lancefile's read_all / projection / read_range / take_rows must return what pylance
returns for the same call on the same file.

Every case runs once per file version (``datagen.READ_VERSIONS``; an entry lists the versions
at which pylance can write it). Each catalogue entry is written twice:

* ``one_page``: one write_batch, default options (one page per column);
* ``paged``: batches of 37 rows with ``data_cache_bytes=1`` and ``max_page_bytes=4096``, so that
  every column has many pages and ranges/takes cross page boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.format.version import resolve_version
from tests import datagen
from tests.conftest import (
    assert_tables_equal,
    reference_read,
    reference_reader,
    reference_take,
    reference_write,
)

N_ROWS = 300
SEED = 7
PAGED_OPTIONS = {"data_cache_bytes": 1, "max_page_bytes": 4096}
PAGED_BATCH_ROWS = 37


VERSIONS = datagen.READ_VERSIONS


@dataclass(frozen=True)
class FileCase:
    """One file written by pylance at one file version."""

    name: str  # e.g. "int8-one_page", "edge_zero_rows"
    version: str
    batches: tuple
    schema: pa.Schema
    options: dict = field(default_factory=dict)
    values_only: bool = False

    @property
    def id(self) -> str:
        return f"v{self.version}-{self.name}"

    @property
    def num_rows(self) -> int:
        return sum(b.num_rows for b in self.batches)


def _catalogue_cases(version: str) -> list[FileCase]:
    out = []
    for name, e in datagen.CATALOGUE.items():
        if version not in e.versions or version in e.reference_misreads:
            continue  # pylance cannot write it / reads it wrong (test_reference_misreads covers those)
        t = e.make(max(N_ROWS, e.min_rows), SEED)
        values_only = e.compare == "values"
        out.append(FileCase(f"{name}-one_page", version, tuple(t.to_batches()), t.schema, dict(e.write_options),
                            values_only))
        if e.reference_multi_batch:
            out.append(FileCase(f"{name}-paged", version, tuple(t.to_batches(max_chunksize=PAGED_BATCH_ROWS)),
                                t.schema, {**e.write_options, **PAGED_OPTIONS}, values_only))
    return out


def _edge_cases(version: str) -> list[FileCase]:
    out = []
    for name, ec in datagen.EDGE_CASES.items():
        bs = ec.batches(SEED)
        out.append(FileCase(f"edge_{name}", version, tuple(bs), bs[0].schema,
                            {**ec.write_options, **ec.reference_options}, values_only=ec.compare == "values"))
    return out


CASES = [c for v in VERSIONS for c in _catalogue_cases(v) + _edge_cases(v)]
CASES_BY_ID = {c.id: c for c in CASES}


def case_of(name: str, version: str = "2.0") -> FileCase:
    return CASES_BY_ID[f"v{version}-{name}"]


ONE_PAGE_CASES = [c for c in CASES if not c.name.endswith("-paged")]
# ranges and takes: the multi-page variant when there is one, else the single-page file
ACCESS_CASES = [c for c in CASES if c.name.endswith("-paged") or c.name.startswith("edge_")
                or f"v{c.version}-{c.name[: -len('-one_page')]}-paged" not in CASES_BY_ID]


@pytest.fixture(scope="session")
def written(tmp_path_factory):
    """case id -> path of the file pylance wrote (written on first use, once per session)."""
    root = tmp_path_factory.mktemp("reference-writes")
    cache: dict[str, Path] = {}

    def get(case: FileCase) -> Path:
        if case.id not in cache:
            path = root / f"{case.id}.lance"
            reference_write(list(case.batches), path, case.version, schema=case.schema, **case.options)
            cache[case.id] = path
        return cache[case.id]

    return get


def _ids(case: FileCase) -> str:
    return case.id


# --------------------------------------------------------------------------------------------
# The oracle itself (documents the read-back quirks; cheap)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n, e in datagen.CATALOGUE.items() if "2.0" in e.versions])
def test_oracle_expected_readback(name, tmp_path):
    """pylance's own 2.0 round trip gives exactly datagen's expected_readback(table)."""
    e = datagen.CATALOGUE[name]
    t = e.make(N_ROWS, SEED)
    path = reference_write(t, tmp_path / "t.lance", **e.write_options)
    got = reference_read(path, batch_size=100_000)
    assert_tables_equal(got, e.expected_readback(t), check_metadata=True, context=f"pylance round trip of {name}")


# --------------------------------------------------------------------------------------------
# Whole-file reads
# --------------------------------------------------------------------------------------------


def _read_all_params():
    out = []
    for c in CASES:
        sizes = [1024] if c.num_rows > 2000 else [1024, 7]
        if c.name.endswith("-paged"):
            sizes = [100]
        out += [pytest.param(c, bs, id=f"{c.id}-bs{bs}") for bs in sizes]
    return out


@pytest.mark.parametrize("case,batch_size", _read_all_params())
def test_read_all(case: FileCase, batch_size: int, written):
    path = written(case)
    expected = reference_read(path, batch_size=batch_size)
    reader = lancefile.LanceFileReader(str(path))
    got = reader.read_all(batch_size=batch_size).to_table()
    assert_tables_equal(got, expected, values_only=case.values_only, check_metadata=True,
                        context=f"read_all(batch_size={batch_size})")


@pytest.mark.parametrize("case", ONE_PAGE_CASES + [c for c in CASES if c.name.endswith("-paged")][:5], ids=_ids)
def test_read_all_batches(case: FileCase, written):
    """to_batches(): same batch lengths as pylance (full batches, then the remainder)."""
    path = written(case)
    batch_size = 64
    expected = [b.num_rows for b in reference_reader(path).read_all(batch_size=batch_size).to_batches()]
    got = [b.num_rows for b in lancefile.LanceFileReader(str(path)).read_all(batch_size=batch_size).to_batches()]
    assert sum(got) == case.num_rows
    assert all(n <= batch_size for n in got), got
    assert got == expected


@pytest.mark.parametrize("case", ONE_PAGE_CASES, ids=_ids)
def test_schema_and_counts(case: FileCase, written):
    path = written(case)
    ref = reference_reader(path)
    reader = lancefile.LanceFileReader(str(path))
    assert reader.num_rows() == ref.num_rows() == case.num_rows
    ref_schema = ref.metadata().schema
    assert reader.schema.equals(ref_schema, check_metadata=True), (
        f"schema differs:\n--- lancefile\n{reader.schema.to_string(show_schema_metadata=True)}\n"
        f"--- pylance\n{ref_schema.to_string(show_schema_metadata=True)}")
    md = reader.metadata()
    assert (md.major_version, md.minor_version) == resolve_version(case.version, for_write=False).footer
    assert md.version == case.version
    assert md.num_rows == case.num_rows


# --------------------------------------------------------------------------------------------
# Projection
# --------------------------------------------------------------------------------------------


def _projection_params():
    out = []
    for c in ONE_PAGE_CASES:
        paths = datagen.column_paths(c.schema)
        if len(paths) > 8:  # wide tables: a sample, first and last included
            paths = paths[:3] + paths[len(paths) // 2 : len(paths) // 2 + 2] + paths[-3:]
        out += [pytest.param(c, (p,), id=f"{c.id}-{p}") for p in paths]
        if len(c.schema) > 1:  # several columns, in reverse order
            names = tuple(reversed(c.schema.names[:3]))
            out.append(pytest.param(c, names, id=f"{c.id}-{'+'.join(names)}"))
        siblings = {}  # struct children, in reverse order (pylance returns the requested order)
        for p in datagen.column_paths(c.schema):
            if "." in p:
                siblings.setdefault(p.rsplit(".", 1)[0], []).append(p)
        for kids in list(siblings.values())[:2]:
            if len(kids) > 1:
                names = tuple(reversed(kids))
                out.append(pytest.param(c, names, id=f"{c.id}-{'+'.join(names)}"))
    return out


@pytest.mark.parametrize("case,columns", _projection_params())
def test_projection(case: FileCase, columns: tuple, written):
    path = written(case)
    expected = reference_read(path, columns=list(columns))
    got = lancefile.LanceFileReader(str(path), columns=list(columns)).read_all().to_table()
    assert_tables_equal(got, expected, values_only=case.values_only, check_metadata=True,
                        context=f"columns={list(columns)}")


@pytest.mark.parametrize("case", [case_of(n, v) for v in VERSIONS for n in ("struct_mixed-paged", "struct_list_struct-paged",
                                                                          "edge_larger_than_page")], ids=_ids)
def test_projection_with_range_and_take(case: FileCase, written):
    path = written(case)
    nested = [p for p in datagen.column_paths(case.schema) if "." in p]
    columns = [nested[0], case.schema.names[0]]
    n = case.num_rows
    start, length = n // 3, n // 3
    exp = reference_reader(path, columns).read_range(start, length).to_table()
    got = lancefile.LanceFileReader(str(path), columns=columns).read_range(start, length).to_table()
    assert_tables_equal(got, exp, values_only=case.values_only, context=f"columns={columns} read_range")
    idx = sorted({0, 5, n // 2, n - 1})
    exp = reference_take(path, idx, columns)
    got = lancefile.LanceFileReader(str(path), columns=columns).take_rows(idx).to_table()
    assert_tables_equal(got, exp, values_only=case.values_only, context=f"columns={columns} take_rows")


# --------------------------------------------------------------------------------------------
# read_range
# --------------------------------------------------------------------------------------------

RANGE_KINDS = ["start", "middle", "end", "whole", "crossing_pages", "zero_rows_middle", "zero_rows_at_end",
               "single_last"]


def _ranges(kind: str, n: int) -> list[tuple[int, int]]:
    if kind == "start":
        return [(0, min(n, 10))]
    if kind == "middle":
        return [(n // 3, max(0, n // 3))]
    if kind == "end":
        return [(max(0, n - 17), min(n, 17))]
    if kind == "whole":
        return [(0, n)]
    if kind == "crossing_pages":  # windows at many positions; with 37-row batches some cross pages
        return [(max(0, s - 5), min(11, n - max(0, s - 5))) for s in range(PAGED_BATCH_ROWS, n, PAGED_BATCH_ROWS * 2)]
    if kind == "zero_rows_middle":
        return [(n // 2, 0)]
    if kind == "zero_rows_at_end":
        return [(n, 0)]
    if kind == "single_last":
        return [(n - 1, 1)] if n else []
    raise ValueError(kind)


@pytest.mark.parametrize("kind", RANGE_KINDS)
@pytest.mark.parametrize("case", ACCESS_CASES, ids=_ids)
def test_read_range(case: FileCase, kind: str, written):
    path = written(case)
    ref = reference_reader(path)
    reader = lancefile.LanceFileReader(str(path))
    for start, length in _ranges(kind, case.num_rows):
        expected = ref.read_range(start, length).to_table()
        got = reader.read_range(start, length).to_table()
        assert_tables_equal(got, expected, values_only=case.values_only, context=f"read_range({start}, {length})")


# --------------------------------------------------------------------------------------------
# take_rows
# --------------------------------------------------------------------------------------------

TAKE_KINDS = ["random_sorted", "unsorted", "duplicates", "first_last", "single_middle", "empty", "every_row"]


def _take_indices(kind: str, n: int) -> list[int]:
    rng = np.random.default_rng(n + len(kind))
    if n == 0:
        return []
    if kind == "random_sorted":
        return sorted(rng.choice(n, size=min(n, 25), replace=False).tolist())
    if kind == "unsorted":
        return rng.choice(n, size=min(n, 25), replace=False).tolist()
    if kind == "duplicates":
        return rng.integers(0, n, 30).tolist() + [0, 0, n - 1, n - 1]
    if kind == "first_last":
        return [0, n - 1]
    if kind == "single_middle":
        return [n // 2]
    if kind == "empty":
        return []
    if kind == "every_row":
        return list(range(n))
    raise ValueError(kind)


@pytest.mark.parametrize("kind", TAKE_KINDS)
@pytest.mark.parametrize("case", ACCESS_CASES, ids=_ids)
def test_take_rows(case: FileCase, kind: str, written):
    path = written(case)
    idx = _take_indices(kind, case.num_rows)
    if case.num_rows > 2000 and kind == "every_row":
        idx = idx[::7]
    expected = reference_take(path, idx)
    got = lancefile.LanceFileReader(str(path)).take_rows(idx).to_table()
    assert_tables_equal(got, expected, values_only=case.values_only, context=f"take_rows({kind}: {idx[:12]}...)")


@pytest.mark.parametrize("version", VERSIONS)
def test_take_rows_accepts_numpy_and_arrow(version, written):
    case = case_of("mixed-paged", version)
    path = written(case)
    idx = [3, 1, 250, 1]
    expected = reference_take(path, idx)
    reader = lancefile.LanceFileReader(str(path))
    for form in (np.array(idx, dtype=np.int64), np.array(idx, dtype=np.uint32), pa.array(idx, pa.uint64())):
        got = reader.take_rows(form).to_table()
        assert_tables_equal(got, expected, values_only=True, context=f"take_rows({type(form).__name__})")


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

ERROR_CASES = [case_of(n, v) for v in VERSIONS
               for n in ("mixed-one_page", "mixed-paged", "edge_larger_than_page", "edge_zero_rows")]


@pytest.mark.parametrize("case", ERROR_CASES, ids=_ids)
@pytest.mark.parametrize("where", ["n", "n_plus_5_after_valid", "huge", "negative"])
def test_take_out_of_range_raises(case: FileCase, where: str, written):
    path = written(case)
    n = case.num_rows
    bad = {"n": n, "n_plus_5_after_valid": n + 5, "huge": 2**40, "negative": -1}[where]
    idx = [bad] if where != "n_plus_5_after_valid" or n == 0 else [0, bad]
    reader = lancefile.LanceFileReader(str(path))
    with pytest.raises(lancefile.LanceError) as info:
        reader.take_rows(idx).to_table()
    assert str(bad) in str(info.value), f"message does not name the index {bad}: {info.value}"


@pytest.mark.parametrize("case", ERROR_CASES, ids=_ids)
@pytest.mark.parametrize("bounds", ["past_end", "start_past_end"])
def test_read_range_out_of_range_raises(case: FileCase, bounds: str, written):
    path = written(case)
    n = case.num_rows
    start, length = {"past_end": (max(0, n - 1), 2), "start_past_end": (n + 1, 1)}[bounds]
    with pytest.raises(Exception):  # the oracle refuses too
        reference_reader(path).read_range(start, length).to_table()
    with pytest.raises(lancefile.LanceError):
        lancefile.LanceFileReader(str(path)).read_range(start, length).to_table()


# pylance refuses "nope", "ST" and "" but silently accepts "st.nope" (gives st: struct<>) and "i8.x"
# (gives i8): see datagen.QUIRKS["projection"]. lancefile must refuse all of them.
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("column", ["nope", "st.nope", "i8.x", "ST", ""])
def test_missing_column_raises(column: str, version: str, written):
    path = written(case_of("mixed-one_page", version))
    if column in ("nope", "ST", ""):
        with pytest.raises(Exception):  # the oracle refuses too
            reference_read(path, columns=[column])
    with pytest.raises(lancefile.LanceError) as info:
        lancefile.LanceFileReader(str(path), columns=[column]).read_all().to_table()
    if column:
        assert column in str(info.value) or column.split(".")[-1] in str(info.value), (
            f"message does not name the column {column!r}: {info.value}")


@pytest.mark.parametrize("version", VERSIONS)
def test_read_table_and_iter_batches(version, written):
    """The pyarrow.parquet-style helpers agree with the reader."""
    case = case_of("mixed-paged", version)
    path = written(case)
    expected = reference_read(path)
    assert_tables_equal(lancefile.read_table(str(path)), expected, values_only=True, context="read_table")
    assert_tables_equal(lancefile.read_table(str(path), columns=["st.a", "s"]),
                        reference_read(path, columns=["st.a", "s"]), values_only=True, context="read_table(columns)")
    batches = list(lancefile.iter_batches(str(path), batch_size=50))
    assert all(b.num_rows <= 50 for b in batches)
    assert_tables_equal(pa.Table.from_batches(batches), expected, values_only=True, context="iter_batches")


# --------------------------------------------------------------------------------------------
# Files pylance writes but cannot read back: lancefile reads them or raises a LanceError
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,version", [(n, v) for n, e in datagen.CATALOGUE.items() for v in e.reference_misreads])
def test_reference_misreads(name, version, tmp_path):
    """Files pylance writes but reads back wrong: lancefile gives the data that was written."""
    e = datagen.CATALOGUE[name]
    t = e.make(N_ROWS, SEED)
    path = reference_write(t, tmp_path / "t.lance", version, **e.write_options)
    assert not reference_read(path).equals(e.expected_readback(t)), "pylance now reads it right: update the entry"
    reader = lancefile.LanceFileReader(str(path))
    assert_tables_equal(reader.read_all().to_table(), e.expected_readback(t), context=f"{name} at {version}")
    assert_tables_equal(reader.take_rows([7, 0, 299]).to_table(), e.expected_readback(t).take([7, 0, 299]))


@pytest.mark.parametrize("name", [n for n, r in datagen.REFUSED.items() if r.stage == "read"])
def test_reference_unreadable_files(name, tmp_path):
    r = datagen.REFUSED[name]
    t = r.make(20, SEED)
    path = reference_write(t, tmp_path / "t.lance")
    try:
        got = lancefile.LanceFileReader(str(path)).read_all().to_table()
    except lancefile.LanceError:
        return
    assert_tables_equal(got, t, values_only=True, context=f"lancefile read of pylance's {name} file")
