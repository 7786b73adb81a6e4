"""Fixtures for the Spark data source tests.

One local-mode SparkSession serves the whole run (starting Spark takes ~10 s). It runs
``local[2,2]``: two cores, and a failed task is retried once, so tests can see what a
failed attempt leaves behind. Filter pushdown is enabled at the session level; a read
only pushes filters when it also says ``.option("pushFilters", "true")``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):  # pragma: no cover - depends on the machine
    pytest.skip("Spark needs Java (no java on PATH, no JAVA_HOME)", allow_module_level=True)

import lancefile.spark  # noqa: E402

SPARK_DIR = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SPARK_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    session = lancefile.spark.session(
        "local[2,2]",
        "lancefile-tests",
        push_filters=True,
        **{
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.memory": "2g",
            "spark.local.dir": str(tmp_path_factory.mktemp("spark-local")),
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def out(tmp_path) -> str:
    """A destination directory that does not exist yet."""
    return str(tmp_path / "out")


def lance_files(path: str) -> list[str]:
    """Visible .lance files under ``path`` (what a reader would see), relative and sorted."""
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        found += [os.path.relpath(os.path.join(root, f), path) for f in files
                  if f.endswith(".lance") and not f.startswith(("_", "."))]
    return sorted(found)


def all_entries(path: str) -> list[str]:
    """Every file and directory under ``path``, hidden ones included."""
    out = []
    for root, dirs, files in os.walk(path):
        out += [os.path.relpath(os.path.join(root, n), path) for n in dirs + files]
    return sorted(out)
