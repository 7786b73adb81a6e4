"""Disagreements with pylance 14.0.2 found by hunting unusual but valid files (2026-11-30).

Each test names the finding it pins. pylance writes (or reads) the file; lancefile must read
what pylance reads, and what lancefile writes pylance must read, or lancefile must refuse to
write it with a clear error before any byte is written.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import lancefile
from tests.conftest import assert_tables_equal, reference_read, reference_write

pytestmark = pytest.mark.interop

_NONE_COLUMNS = {
    "string": pa.array(["a", "bb", None, "ccc", ""], pa.string()),
    "binary": pa.array([b"a", None, b"xyz", b"", b"\x00"], pa.binary()),
    "large_string": pa.array(["a", None, "", "dd", "e"], pa.large_string()),
    "list_of_strings": pa.array([["a"], None, [], ["b", None], ["c"]], pa.list_(pa.string())),
    "int64": pa.array([1, 2, None, 4, 5], pa.int64()),
}


def _with_compression_none(name: str) -> pa.Table:
    field = pa.field("c", _NONE_COLUMNS[name].type, metadata={"lance-encoding:compression": "none"})
    return pa.Table.from_arrays([_NONE_COLUMNS[name]], schema=pa.schema([field]))


@pytest.mark.parametrize("name", sorted(_NONE_COLUMNS))
def test_compression_none_in_2_0_files(name, tmp_path):
    """pylance's 2.0 writer names the scheme ``none`` on a field asking for no compression;
    lancefile refused such pages ("unsupported buffer compression scheme 'none'")."""
    table = _with_compression_none(name)
    path = reference_write(table, tmp_path / "pl.lance", "2.0")
    assert_tables_equal(lancefile.read_table(path), reference_read(path))
    assert_tables_equal(lancefile.read_table(path), table)
    ours = tmp_path / "lf.lance"
    lancefile.write_table(table, ours, version="2.0")
    assert_tables_equal(reference_read(ours), table)
