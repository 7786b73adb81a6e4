"""Pushed filters skip splits and zones by the files' statistics (no Spark session needed to plan)."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

import lancefile

D = pytest.importorskip("pyspark.sql.datasource")
from lancefile.spark.source import LanceDataSource  # noqa: E402


def _plan(path: str, filters, **options):
    src = LanceDataSource({"path": path, "pushFilters": "true", **options})
    reader = src.reader(src.schema())
    before = len(reader.partitions())
    rejected = list(reader.pushFilters(filters))
    return reader, before, reader.partitions(), rejected


def _rows(reader, parts) -> int:
    return sum(b.num_rows for p in parts for b in reader.read(p))


@pytest.fixture(scope="module")
def sorted_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("sorted")
    d = root / "files"
    d.mkdir()
    n = 400_000
    t = pa.table({"key": np.arange(n), "x": np.random.default_rng(0).random(n),
                  "s": pa.array([f"k{i:07d}" for i in range(n)])})
    for i in range(4):
        lancefile.write_table(t.slice(i * n // 4, n // 4), os.path.join(d, f"part-{i}.lance"))
    lancefile.write_dataset(t, str(root / "ds"), max_rows_per_file=100_000)
    return str(d), t


def test_selective_filter_starts_few_tasks_and_reads_its_zones(sorted_files):
    d, t = sorted_files
    reader, before, parts, rejected = _plan(d, [D.GreaterThanOrEqual(("key",), 150_000), D.LessThan(("key",), 160_000)],
                                           splitRows="20000")
    assert rejected == [] and before == 20 and len(parts) <= 2
    assert sum(b - a for p in parts for a, b in p.ranges) <= 2 * 8192 + 10_000
    assert _rows(reader, parts) == 10_000


def test_files_and_fragments_outside_the_range_get_no_task(sorted_files):
    d, t = sorted_files
    ds = os.path.join(os.path.dirname(d), "ds")
    reader, before, parts, _ = _plan(ds, [D.LessThan(("key",), 1000)])
    assert before == 4 and len(parts) == 1 and _rows(reader, parts) == 1000
    reader, before, parts, _ = _plan(d, [D.GreaterThan(("key",), 10**9)])
    assert parts == [] and _rows(reader, parts) == 0


@pytest.mark.parametrize("filters, want", [
    ([D.StringStartsWith(("s",), "k00001")], 100),
    ([D.Not(D.LessThan(("key",), 399_990))], 10),
    ([D.In(("key",), (5, 250_000, None))], 2),
    ([D.EqualNullSafe(("key",), 77)], 1),
    ([D.IsNull(("x",))], 0),
])
def test_pruned_reads_give_exact_answers(sorted_files, filters, want):
    d, t = sorted_files
    reader, before, parts, rejected = _plan(d, filters, splitRows="20000")
    assert rejected == []
    assert _rows(reader, parts) == want
    assert len(parts) <= max(1, want)


def test_files_without_statistics_keep_every_split(tmp_path):
    t = pa.table({"key": np.arange(50_000)})
    lancefile.write_table(t, tmp_path / "a.lance", statistics=False)
    reader, before, parts, _ = _plan(str(tmp_path), [D.LessThan(("key",), 10)], splitRows="10000")
    assert len(parts) == before == 5 and _rows(reader, parts) == 10
