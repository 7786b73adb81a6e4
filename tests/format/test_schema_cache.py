"""Opening a file parses its schema once per distinct schema bytes and version: the files of
a dataset, or one file opened again, share the parsed objects (a 1,000-column schema is most
of a wide file's open), and nothing a reader does changes them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.encodings import versions  # where the parsed schemas are kept (VersionCodec.open_schema)


def _wide(n_cols: int, rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({f"c{i}": rng.random(rows) for i in range(n_cols)})


def test_files_with_one_schema_share_its_parse(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "_SCHEMAS", {})
    a, b = tmp_path / "a.lance", tmp_path / "b.lance"
    ta, tb = _wide(50, 100, 1), _wide(50, 100, 2)
    lancefile.write_table(ta, a)
    lancefile.write_table(tb, b)
    ra, rb = lancefile.LanceFileReader(a), lancefile.LanceFileReader(b, columns=["c7", "c3"])
    assert ra._lance_schema is rb._lance_schema and len(versions._SCHEMAS) == 1
    assert rb.read_all().to_table().equals(tb.select(["c7", "c3"]))  # a projection of the shared schema
    assert ra.read_all().to_table().equals(ta)
    assert lancefile.LanceFileReader(a).schema.equals(ta.schema)  # unchanged by the projected reader


@pytest.mark.parametrize("other", ["2.0", "2.1"])
def test_the_version_is_part_of_the_key(tmp_path, monkeypatch, other):
    # the same schema bytes lay fields out in columns differently in 2.0 and 2.1+
    monkeypatch.setattr(versions, "_SCHEMAS", {})
    t = pa.table({"s": pa.array([{"x": 1, "y": "a"}, {"x": 2, "y": None}]), "l": pa.array([[1, 2], None])})
    p22, po = tmp_path / "a.lance", tmp_path / "b.lance"
    lancefile.write_table(t, p22, version="2.2")
    lancefile.write_table(t, po, version=other)
    assert lancefile.LanceFileReader(p22).read_all().to_table().equals(t)
    assert lancefile.LanceFileReader(po).read_all().to_table().equals(t)
    assert len(versions._SCHEMAS) == 2


def test_the_cache_stays_small(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "_SCHEMAS", {})
    for i in range(versions._MAX_SCHEMAS + 3):
        p = tmp_path / f"f{i}.lance"
        lancefile.write_table(pa.table({f"col{i}": [i]}), p)
        assert lancefile.LanceFileReader(p).read_all().to_table().column(0).to_pylist() == [i]
        assert len(versions._SCHEMAS) <= versions._MAX_SCHEMAS
