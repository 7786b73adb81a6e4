"""Takes from mini-block pages whose def levels are zstd-coded u16 words (lancefile's own
choice for low-cardinality text): only the taken entries' levels are picked out of the
decompressed chunks, and damage there is named.

These are the general path's tests (``general_path``: the one-pass kernel of
``tests/encodings/kernels/test_minitake.py`` turned off), which every chunk out of the
usual form still takes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.cli import inspect_file
from lancefile.encodings.structural import mini_block


def _skewed(rng, n: int, null_share: float) -> pa.Table:
    vals = np.array([f"c{i}" for i in range(20)])[np.minimum(rng.geometric(0.3, n) - 1, 19)]
    return pa.table({"s": pa.array(vals, mask=rng.random(n) < null_share),
                     "k": pa.array(np.arange(n, dtype=np.int64))})


@pytest.fixture()
def general_path(monkeypatch):
    from lancefile.encodings import kernels

    monkeypatch.setattr(kernels, "miniblock_take_flat", lambda *a: None)


@pytest.fixture()
def coded(tmp_path, general_path):
    t = _skewed(np.random.default_rng(0), 50_000, 0.02)
    path = tmp_path / "coded.lance"
    lancefile.write_table(t, path)
    enc = inspect_file(str(path))["columns"][0]["pages"][0]["encoding"]
    assert "def=zstd" in enc and "values=zstd" in enc, enc  # the layout these tests are about
    return path, t


def test_taken_levels_are_picked_not_decoded_whole(coded, monkeypatch):
    path, t = coded
    picked = []
    real = mini_block.MiniBlockPage._levels_at
    monkeypatch.setattr(mini_block.MiniBlockPage, "_levels_at",
                        staticmethod(lambda *a: picked.append(len(a[-1])) or real(*a)))
    monkeypatch.setattr(mini_block.MiniBlockPage, "_levels",
                        lambda *a: pytest.fail("the take decoded every level of its chunks"))
    rng = np.random.default_rng(1)
    for idx in (np.sort(rng.choice(t.num_rows, 100, replace=False)), np.array([0, 4095, 4096, t.num_rows - 1]),
                np.flatnonzero(t.column("s").is_null().to_numpy(zero_copy_only=False))[:50]):
        got = lancefile.LanceFileReader(path).take_rows(idx).to_table()
        assert got.equals(t.take(idx)), idx
    assert picked


def test_a_take_and_a_scan_agree_on_every_null(coded):
    path, t = coded
    nulls = np.flatnonzero(t.column("s").is_null().to_numpy(zero_copy_only=False))
    got = lancefile.LanceFileReader(path).take_rows(nulls).to_table()
    assert got.column("s").null_count == len(nulls)
    assert lancefile.read_table(path).equals(t)


def test_levels_shorter_than_their_count_are_named(coded, monkeypatch):
    """A chunk whose decompressed def levels hold fewer words than its level count."""
    path, t = coded
    real = mini_block.decompress_spans

    def short(*a, **k):
        out, starts, sizes = real(*a, **k)
        return out, starts, sizes - 2

    monkeypatch.setattr(mini_block, "decompress_spans", short)
    with pytest.raises(lancefile.CorruptFileError, match="levels are too short"):
        lancefile.LanceFileReader(path).take_rows(np.array([5, 9000])).to_table()
