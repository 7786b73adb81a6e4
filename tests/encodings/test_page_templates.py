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


def _list_file(tmp_path, checksums=False):
    rng = np.random.default_rng(1)
    n = 60_000
    lens = rng.integers(0, 5, n)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    t = pa.table({"v": pa.ListArray.from_arrays(offsets, pa.array(rng.integers(0, 1 << 30, int(lens.sum()))))})
    p = tmp_path / "lists.lance"
    with lancefile.LanceFileWriter(p, version="2.2", max_page_bytes=64 * 1024, checksums=checksums) as w:
        for b in t.to_batches(max_chunksize=5_000):
            w.write_batch(b)
    return p, t


def test_a_damaged_repetition_index_among_pages_read_together_is_named(tmp_path):
    # the pages' chunk metadata and repetition indexes are parsed in one pass; a page failing
    # its checks is left to its own parse, which names it
    p, t = _list_file(tmp_path)
    pages = lancefile.LanceFileReader(p)._layout.column(0).pages
    assert len(pages) > 5
    starts = np.concatenate([[0], np.cumsum([pages[i].length for i in range(len(pages))])])
    index = pages[3].buffers[-1]
    raw = bytearray(p.read_bytes())
    first = int.from_bytes(raw[index.position : index.position + 8], "little")
    raw[index.position : index.position + 8] = (first + 1).to_bytes(8, "little")  # one row too many ends
    p.write_bytes(bytes(raw))
    with pytest.raises(lancefile.errors.CorruptFileError, match=r"page 3\b.*repetition index counts"):
        lancefile.LanceFileReader(p).take_rows([starts[2] + 1, starts[3] + 2, starts[4] + 3]).to_table()
    # rows of the other pages still read
    ok = np.array([starts[2] + 1, starts[4] + 3])
    assert lancefile.LanceFileReader(p).take_rows(ok).to_table().equals(t.take(pa.array(ok)))


def test_a_leaf_hashes_once_and_as_its_fields():
    """A leaf keys the decoder templates (looked up for every page a read touches): its hash
    is computed when it is made, equal leaves hash alike, and different ones apart."""
    import pyarrow as pa

    from lancefile.encodings.structural import repdef
    from lancefile.encodings.structural.base import Leaf
    from lancefile.format.version import GRAMMAR_2_1, GRAMMAR_2_2

    t = pa.struct([("a", pa.int64()), ("b", pa.string())])
    a = Leaf(t, (repdef.ITEM, repdef.LIST), GRAMMAR_2_2, "2.2")
    b = Leaf(pa.struct([("a", pa.int64()), ("b", pa.string())]), (repdef.ITEM, repdef.LIST), GRAMMAR_2_2, "2.2")
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert hash(a) == hash((t, (repdef.ITEM, repdef.LIST), GRAMMAR_2_2, "2.2"))
    others = [Leaf(pa.int64(), (repdef.ITEM, repdef.LIST), GRAMMAR_2_2, "2.2"),
              Leaf(t, (repdef.ITEM,), GRAMMAR_2_2, "2.2"), Leaf(t, (repdef.ITEM, repdef.LIST), GRAMMAR_2_1, "2.1")]
    assert all(o != a for o in others) and len({a, *others}) == 4
