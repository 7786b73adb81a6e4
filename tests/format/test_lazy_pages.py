"""A column's pages are parsed and checked when a read first uses them: a damaged page that a
read does not touch does not stop it, one that it touches is named, and ``lancefile verify``
checks them all."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.errors import CorruptFileError
from lancefile.fuzz import filemap


@pytest.fixture
def damaged(tmp_path):
    t = pa.table({"a": np.arange(30_000, dtype=np.int64), "b": np.arange(30_000, dtype=np.float64)})
    p = tmp_path / "pages.lance"
    lancefile.write_table(t, p, version="2.2", max_page_bytes=64 * 1024, checksums=False)
    fm = filemap.parse(p.read_bytes())
    meta = fm.metas[0]
    assert len(meta.pages) >= 3
    last = len(meta.pages) - 1
    meta.pages[last].buffer_offsets[0] = len(fm.data) * 2  # outside the file
    p.write_bytes(filemap.rebuild(fm, metas=fm.metas))
    starts = np.cumsum([0] + [pg.length for pg in meta.pages])
    return p, t, last, int(starts[last])


def test_untouched_damaged_page_does_not_stop_a_read(damaged):
    p, t, last, first_row = damaged
    reader = lancefile.LanceFileReader(p)
    assert reader.read_range(0, 1000).to_table().equals(t.slice(0, 1000))
    assert reader.take_rows([1, 5, first_row - 1]).to_table().equals(t.take(pa.array([1, 5, first_row - 1])))


def test_a_read_of_the_damaged_page_names_it(damaged):
    p, _, last, first_row = damaged
    with pytest.raises(CorruptFileError, match=rf"column 0 page {last}: buffer 0 .* lies outside the file"):
        lancefile.LanceFileReader(p).take_rows([first_row]).to_table()
    with pytest.raises(CorruptFileError, match=rf"page {last}"):
        lancefile.read_table(p)


def test_verify_checks_every_page(damaged):
    p, *_ = damaged
    with pytest.raises(CorruptFileError, match="outside the file"):
        lancefile.verify(p, decode=False)
