"""Shared fixtures and helpers for the lancefile tests.

* ``reference_write`` / ``reference_read``: the oracle, pylance 14.0.2 (``lance.file``).
* ``assert_tables_equal``: Table.equals after combining chunks, NaN-tolerant, with a readable diff.
* Tests under ``tests/interop/`` are marked ``interop`` automatically (``pytest -m "not interop"``
  runs the rest).
* Hypothesis profiles: ``ci`` (loaded when the environment variable CI is set) and ``dev``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable, Sequence

import pyarrow as pa
import pytest

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:  # so that test modules can `from tests import datagen` (importlib mode)
    sys.path.insert(0, str(_ROOT))
try:  # src layout: use the checkout when the package is not installed
    import lancefile  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    sys.path.insert(0, str(_ROOT / "src"))

from hypothesis import HealthCheck, settings  # noqa: E402

from tests import datagen  # noqa: E402

# --------------------------------------------------------------------------------------------
# Hypothesis
# --------------------------------------------------------------------------------------------

settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",  # manual bug hunting: HYPOTHESIS_PROFILE=thorough pytest tests/test_properties.py
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

# --------------------------------------------------------------------------------------------
# Markers
# --------------------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "interop: exchanges files with the reference implementation (pylance)")
    # every buffer lancefile allocates comes filled with this byte: a reader or writer that
    # leaves bytes unwritten (and would pass on a recycled buffer's old bytes) fails a test
    from lancefile import bufferpool

    bufferpool._POISON = 0xA5


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    interop_dir = Path(__file__).parent / "interop"
    for item in items:
        if interop_dir in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.interop)


# --------------------------------------------------------------------------------------------
# The oracle
# --------------------------------------------------------------------------------------------


def reference_write(
    data: pa.Table | pa.RecordBatch | Sequence[pa.RecordBatch],
    path: str | os.PathLike,
    version: str = "2.0",
    *,
    schema: pa.Schema | None = None,
    global_buffers: Iterable[bytes] = (),
    schema_metadata: dict[str, str] | None = None,
    **kw,
) -> str:
    """Write ``data`` with pylance's LanceFileWriter (one write_batch per batch); return the path."""
    import lance.file as lf

    if isinstance(data, pa.Table):
        schema = schema or data.schema
        batches = data.to_batches()
    elif isinstance(data, pa.RecordBatch):
        schema = schema or data.schema
        batches = [data]
    else:
        batches = list(data)
        schema = schema or batches[0].schema
    path = str(path)
    with lf.LanceFileWriter(path, schema, version=version, **kw) as w:
        for buf in global_buffers:
            w.add_global_buffer(buf)
        for k, v in (schema_metadata or {}).items():
            w.add_schema_metadata(k, v)
        for b in batches:
            w.write_batch(b)
    return path


def reference_reader(path: str | os.PathLike, columns: Sequence[str] | None = None):
    import lance.file as lf

    return lf.LanceFileReader(str(path), columns=list(columns) if columns is not None else None)


def reference_read(path: str | os.PathLike, columns: Sequence[str] | None = None, *,
                   batch_size: int = 1024) -> pa.Table:
    """Read the whole file with pylance."""
    return reference_reader(path, columns).read_all(batch_size=batch_size).to_table()


def reference_take(path: str | os.PathLike, indices: Sequence[int], columns: Sequence[str] | None = None,
                   *, batch_size: int = 1024) -> pa.Table:
    """pylance's take_rows for any indices (it only accepts strictly increasing ones).

    Takes the sorted distinct indices with pylance, then reorders/duplicates with Arrow.
    """
    import numpy as np

    idx = np.asarray(indices, dtype=np.int64)
    uniq, inverse = np.unique(idx, return_inverse=True)
    reader = reference_reader(path, columns)
    got = reader.take_rows(uniq.tolist(), batch_size=batch_size).to_table()
    if len(uniq) == len(idx) and (np.diff(idx) > 0).all():
        return got
    return got.take(pa.array(inverse.astype(np.int64)))


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------


def write_by(writer: str, table: pa.Table, path, version: str, **lancefile_options) -> None:
    """``table`` written at ``version`` by ``writer``: ``"lancefile"`` (``write_table`` with
    ``lancefile_options``) or ``"pylance"`` (its defaults), for fixtures run over both."""
    if writer == "lancefile":
        import lancefile

        lancefile.write_table(table, path, version=version, **lancefile_options)
    else:
        reference_write(table, path, version=version)


def page_encodings(path) -> list[str]:
    """The description of every page of the file (``inspect``'s), column after column."""
    import lancefile

    md = lancefile.LanceFileReader(str(path)).metadata()
    return [p.encoding for c in md.columns for p in c.pages]


def write_in_batches(table: pa.Table, path, chunk: int | None = None, **options) -> None:
    """``table`` written by lancefile's ``LanceFileWriter(path, schema, **options)``, in
    batches of ``chunk`` rows (one batch by default)."""
    import lancefile

    with lancefile.LanceFileWriter(str(path), table.schema, **options) as w:
        for b in table.to_batches(max_chunksize=chunk or max(table.num_rows, 1)):
            w.write_batch(b)


def _first_difference(a: pa.Array, b: pa.Array) -> int:
    """Index of the first differing element of two equal-length arrays (-1 if none)."""
    lo, hi = 0, len(a)
    if a.equals(b):
        return -1
    # binary search on prefixes: prefix [0, mid) equal?
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _bits(a.slice(0, mid)).equals(_bits(b.slice(0, mid))):
            lo = mid
        else:
            hi = mid
    return lo


def _bits(a: pa.Array) -> pa.Array:
    bt = datagen.float_bits_type(a.type)
    return a if bt == a.type else a.view(bt)


def _column_equal(a: pa.Array, b: pa.Array) -> bool:
    if a.equals(b):
        return True
    bt = datagen.float_bits_type(a.type)
    return bt != a.type and a.view(bt).equals(b.view(bt))


def _short(v, limit: int = 200) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + "..."


def _value(arr: pa.Array, i: int) -> str:
    """Element i for a message (as_py fails for e.g. out-of-range ns timestamps)."""
    if i < 0:
        return "-"
    try:
        return _short(arr[i].as_py())
    except (ValueError, OverflowError, ArithmeticError):
        return _short(" ".join(arr.slice(i, 1).to_string().split()))


def _combine(col: pa.ChunkedArray) -> pa.Array:
    if col.num_chunks == 0:
        return pa.array([], col.type)
    if pa.types.is_dictionary(col.type) and col.num_chunks > 1:
        # chunks may carry different dictionaries; compare their values chunk by chunk instead
        return pa.concat_arrays([c.dictionary_decode() for c in col.chunks])
    return col.combine_chunks()


def assert_tables_equal(actual: pa.Table, expected: pa.Table, *, values_only: bool = False,
                        check_metadata: bool = False, context: str = "") -> None:
    """Assert two tables are equal, with a readable message on failure.

    Compares the schema (names, types, nullability; metadata too if ``check_metadata``), the row
    count, then each column with ``Array.equals`` after combining chunks. NaNs compare equal to
    NaNs with the same bits. ``values_only`` decodes dictionaries (at any depth) on both sides
    first, for data whose dictionary representation may legitimately differ.
    """
    prefix = f"{context}: " if context else ""
    if values_only:
        actual = datagen.normalize_dictionaries(actual)
        expected = datagen.normalize_dictionaries(expected)
    if actual.column_names != expected.column_names:
        raise AssertionError(f"{prefix}column names differ:\n  actual:   {actual.column_names}\n"
                             f"  expected: {expected.column_names}")
    for fa, fe in zip(actual.schema, expected.schema):
        if not fa.equals(fe, check_metadata=check_metadata):
            raise AssertionError(f"{prefix}field {fe.name!r} differs:\n  actual:   {fa} "
                                 f"metadata={fa.metadata}\n  expected: {fe} metadata={fe.metadata}")
    if check_metadata and actual.schema.metadata != expected.schema.metadata:
        raise AssertionError(f"{prefix}schema metadata differs:\n  actual:   {actual.schema.metadata}\n"
                             f"  expected: {expected.schema.metadata}")
    if actual.num_rows != expected.num_rows:
        raise AssertionError(f"{prefix}row count differs: actual {actual.num_rows}, expected {expected.num_rows}")
    problems = []
    for name, ca, ce in zip(expected.column_names, actual.columns, expected.columns):
        a, e = _combine(ca), _combine(ce)
        if _column_equal(a, e):
            continue
        if pa.types.is_dictionary(a.type) and not values_only and _column_equal(a.dictionary_decode(),
                                                                                e.dictionary_decode()):
            problems.append(f"column {name!r}: same values, different dictionary representation\n"
                            f"    actual dictionary ({len(a.dictionary)} items):   {_short(a.dictionary.to_pylist())}\n"
                            f"    expected dictionary ({len(e.dictionary)} items): {_short(e.dictionary.to_pylist())}")
            continue
        i = _first_difference(a, e)
        problems.append(f"column {name!r} ({a.type}): first difference at row {i} of {len(e)}\n"
                        f"    actual:   {_value(a, i)}\n"
                        f"    expected: {_value(e, i)}")
    if problems:
        raise AssertionError(prefix + "tables differ:\n  " + "\n  ".join(problems))


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture
def lance_path(tmp_path: Path) -> Path:
    """A fresh path for one Lance file (the file does not exist yet)."""
    return tmp_path / "data.lance"


@pytest.fixture(name="reference_write")
def _reference_write_fixture():
    return reference_write


@pytest.fixture(name="reference_read")
def _reference_read_fixture():
    return reference_read


@pytest.fixture(name="assert_tables_equal")
def _assert_tables_equal_fixture():
    return assert_tables_equal


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lance-files")
