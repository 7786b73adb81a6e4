"""Page decoders are parsed and checked once per encoding *shape*: a column's mini-block
pages differ only in their counts, so one checked decoder serves them all, each page with
its own message (its own counts); a page whose encoding differs otherwise is checked itself."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.encodings.structural import fields
from lancefile.encodings.structural.mini_block import MiniBlockPage


@pytest.fixture
def inits(monkeypatch):
    calls = []
    real = MiniBlockPage.__init__

    def counting(self, msg, *args, **kwargs):
        calls.append(msg.num_items)
        real(self, msg, *args, **kwargs)

    monkeypatch.setattr(MiniBlockPage, "__init__", counting)
    monkeypatch.setattr(fields, "_TEMPLATES", {})
    return calls


def test_pages_that_differ_in_counts_share_one_checked_decoder(tmp_path, inits):
    rng = np.random.default_rng(0)
    n = 60_000
    lists = pa.ListArray.from_arrays(np.arange(0, 3 * n + 1, 3, dtype=np.int32),
                                     pa.array(rng.integers(0, 1 << 20, 3 * n)))
    t = pa.table({"v": lists})
    p = tmp_path / "pages.lance"
    with lancefile.LanceFileWriter(p, version="2.2", max_page_bytes=64 * 1024) as w:
        for b in t.to_batches(max_chunksize=5_000):
            w.write_batch(b)
    reader = lancefile.LanceFileReader(p)
    pages = reader.metadata().columns[0].pages
    assert len(pages) > 5 and len({pg.length for pg in pages}) > 1  # pages of different counts
    rows = np.arange(0, n, 997)
    assert reader.take_rows(rows).to_table().equals(t.take(pa.array(rows)))
    assert len(inits) == 1  # one parse and check for every page, not one per distinct count
    assert reader.read_all().to_table().equals(t)  # each page decoded with its own counts
