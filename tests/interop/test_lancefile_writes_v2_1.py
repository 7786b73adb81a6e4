"""lancefile writes versions 2.1 and 2.2; pylance (the oracle) and lancefile read them back.

Every catalogue entry pylance can write at a version, and every edge case, is written by
lancefile at that version (one batch, then many small batches with small pages) and must
read back, through pylance and through lancefile, exactly as ``expected_readback(table)``.
pylance's read_range and take_rows over the file must agree with the table too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from tests import datagen
from tests.conftest import assert_tables_equal, reference_read, reference_reader, reference_take

N_ROWS = 300
SEED = 23
VERSIONS = ("2.1", "2.2")
CASES = [(v, name) for v in VERSIONS for name in datagen.catalogue_for(v)]


def _write(data, path, version, *, schema=None, **options) -> Path:
    batches = data.to_batches() if isinstance(data, pa.Table) else list(data)
    schema = schema or (data.schema if isinstance(data, pa.Table) else batches[0].schema)
    with lancefile.LanceFileWriter(str(path), schema, version=version, **options) as w:
        for b in batches:
            w.write_batch(b)
    return Path(path)


def _lancefile_read(path, batch_size=1024) -> pa.Table:
    return lancefile.LanceFileReader(str(path)).read_all(batch_size=batch_size).to_table()


def _table(e, seed):
    return e.make(max(N_ROWS, e.min_rows), seed)


@pytest.mark.parametrize("version, name", CASES, ids=[f"v{v}-{n}" for v, n in CASES])
def test_catalogue_one_batch(version, name, lance_path):
    e = datagen.CATALOGUE[name]
    t = _table(e, SEED)
    _write(t, lance_path, version)
    values_only = e.compare == "values"
    exp = e.expected_readback(t)
    if version not in e.reference_misreads:
        got = reference_read(lance_path, batch_size=100_000)
        assert_tables_equal(got, exp, values_only=values_only, check_metadata=True,
                            context=f"pylance read of a lancefile {version} file")
    assert_tables_equal(_lancefile_read(lance_path), exp, values_only=values_only, check_metadata=True,
                        context=f"lancefile read of its own {version} file")
    md = reference_reader(lance_path).metadata()
    assert (md.major_version, md.minor_version) == tuple(int(x) for x in version.split("."))


@pytest.mark.parametrize("version, name", CASES, ids=[f"v{v}-{n}" for v, n in CASES])
def test_catalogue_many_pages(version, name, lance_path):
    """Batches of 37 rows flushed page by page: many pages per column, ranges and takes across them."""
    e = datagen.CATALOGUE[name]
    t = _table(e, SEED + 1)
    _write(t.to_batches(max_chunksize=37), lance_path, version, schema=t.schema, data_cache_bytes=1,
           max_page_bytes=4096)
    exp = datagen.expected_readback(t)
    assert_tables_equal(_lancefile_read(lance_path, batch_size=64), exp, values_only=True, check_metadata=True,
                        context="lancefile read")
    if version in e.reference_misreads:
        return
    assert_tables_equal(reference_read(lance_path, batch_size=64), exp, values_only=True, check_metadata=True,
                        context="pylance read")
    n = t.num_rows
    rng = np.random.default_rng(5)
    idx = np.unique(rng.integers(0, n, min(n, 40)))
    assert_tables_equal(reference_take(lance_path, idx), exp.take(idx), values_only=True, context="pylance take")
    lo = n // 3
    hi = min(n, lo + 50)
    got = reference_reader(lance_path).read_range(lo, hi - lo).to_table()
    assert_tables_equal(got, exp.slice(lo, hi - lo), values_only=True,
                        context="pylance read_range")


EDGES = [(v, name) for v in VERSIONS for name in datagen.EDGE_CASES]


@pytest.mark.parametrize("version, name", EDGES, ids=[f"v{v}-{n}" for v, n in EDGES])
def test_edge_case(version, name, lance_path):
    ec = datagen.EDGE_CASES[name]
    bs = ec.batches(SEED)
    schema = bs[0].schema
    _write(bs, lance_path, version, schema=schema, **ec.write_options)
    exp = datagen.expected_readback(pa.Table.from_batches(bs, schema=schema))
    values_only = ec.compare == "values"
    assert_tables_equal(reference_read(lance_path), exp, values_only=values_only, context="pylance read")
    assert_tables_equal(_lancefile_read(lance_path), exp, values_only=values_only, context="lancefile read")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("offset", [1, 13, 64])
def test_sliced_input(version, offset, lance_path):
    t = datagen.CATALOGUE["mixed"].make(400, 3).slice(offset, 250)
    _write(t, lance_path, version)
    exp = datagen.expected_readback(t)
    assert_tables_equal(reference_read(lance_path), exp, values_only=True, context="pylance read")
    assert_tables_equal(_lancefile_read(lance_path), exp, values_only=True, context="lancefile read")
