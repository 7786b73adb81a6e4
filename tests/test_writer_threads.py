"""2.1+ writes encode several fields at once on the write pool and queue small writes.

The file's bytes must not depend on either: pages are written in field order whatever
order the encodings finish in, and queued pieces land where a direct write would put them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile import sink as sink_mod
from lancefile import writer as writer_mod


def _table(n: int = 40_000) -> pa.Table:
    rng = np.random.default_rng(3)
    cols = {f"i{k}": pa.array(rng.integers(0, 10 ** (k + 1), n)) for k in range(4)}
    cols["f"] = pa.array(rng.random(n))
    cols["s"] = pa.array([f"s{v}" for v in rng.integers(0, 500, n)])
    cols["l"] = pa.array([[int(v)] * int(v % 4) for v in rng.integers(0, 100, n)])
    return pa.table(cols)


def _write(path, t, version, batch_rows):
    with lancefile.LanceFileWriter(path, t.schema, version=version, data_cache_bytes=50_000,
                                   max_page_bytes=120_000) as w:
        for b in t.to_batches(max_chunksize=batch_rows):
            w.write_batch(b)
    return path.read_bytes()


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_threaded_field_encoding_writes_the_same_bytes(tmp_path, monkeypatch, version):
    t = _table()
    monkeypatch.setattr(writer_mod, "WRITE_THREADS", 1)
    serial = _write(tmp_path / "serial.lance", t, version, 3_000)
    monkeypatch.setattr(writer_mod, "WRITE_THREADS", 3)
    monkeypatch.setattr(writer_mod, "_THREAD_MIN_BYTES", 0)  # every field on the pool
    threaded = _write(tmp_path / "threaded.lance", t, version, 3_000)
    assert threaded == serial
    assert lancefile.read_table(tmp_path / "threaded.lance").equals(t)


def test_queued_writes_land_where_direct_writes_would(tmp_path, monkeypatch):
    t = _table(20_000)
    monkeypatch.setattr(sink_mod, "_QUEUE_BYTES", 0)  # every write goes out at once
    direct = _write(tmp_path / "direct.lance", t, "2.2", 1_000)
    monkeypatch.setattr(sink_mod, "_QUEUE_BYTES", 1 << 30)  # everything waits for the tail
    queued = _write(tmp_path / "queued.lance", t, "2.2", 1_000)
    assert queued == direct
    lancefile.verify(tmp_path / "queued.lance")


@pytest.mark.parametrize("values", [
    np.arange(5000, dtype=np.int64),  # all distinct: no dictionary
    np.repeat(np.arange(50, dtype=np.int64) * 10 ** 12, 100),  # 50 wide values: a dictionary
    np.concatenate([np.zeros(2000), np.random.default_rng(0).random(3000)]),  # zeros: the slow test decides
    np.where(np.arange(5000) % 3 == 0, np.nan, np.arange(5000) % 40 * 1e300),  # NaNs and few values
])
def test_sorted_head_precheck_changes_no_dictionary_decision(tmp_path, monkeypatch, values):
    """The cheap all-distinct precheck of 64-bit pages gives the bytes the full test gives."""
    from lancefile.encodings import strategy

    t = pa.table({"v": pa.array(values)})
    lancefile.write_table(t, tmp_path / "fast.lance", version="2.2")
    monkeypatch.setattr(strategy, "_distinct_head", lambda values, k: False)
    lancefile.write_table(t, tmp_path / "slow.lance", version="2.2")
    assert (tmp_path / "fast.lance").read_bytes() == (tmp_path / "slow.lance").read_bytes()
    np.testing.assert_array_equal(lancefile.read_table(tmp_path / "fast.lance").column("v").to_numpy(), values)
