"""Column metadata from one compiled walk (lancefile.format.walked) against protobuf's parse."""

from __future__ import annotations

from contextlib import contextmanager
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lancefile
import lancefile.reader
from lancefile.errors import LanceError
from lancefile.format.container import read_layout
from lancefile.format.walked import MIN_COLUMNS, WalkedPages, load_columns
from lancefile.fuzz.filemap import parse, rebuild
from lancefile.io import open_source

lance = pytest.importorskip("lance")


def _table(n_cols: int, rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(n_cols):
        kind = i % 6
        if kind == 0:
            cols[f"i{i}"] = pa.array(rng.integers(-1000, 1000, rows))
        elif kind == 1:
            v = rng.random(rows)
            cols[f"f{i}"] = pa.array(v, mask=v < 0.2)
        elif kind == 2:
            cols[f"s{i}"] = pa.array([f"v{x}" for x in rng.integers(0, 50, rows)])
        elif kind == 3:
            cols[f"l{i}"] = pa.array([list(range(x % 4)) for x in range(rows)], pa.list_(pa.int32()))
        elif kind == 4:
            cols[f"t{i}"] = pa.array([{"a": int(x), "b": str(x)} for x in rng.integers(0, 9, rows)])
        else:
            cols[f"b{i}"] = pa.array(rng.random(rows) < 0.5)
    return pa.table(cols)


def _write(path, table, writer: str, version: str) -> None:
    if writer == "pylance":
        with lance.file.LanceFileWriter(str(path), table.schema, version=version, max_page_bytes=4096,
                                        data_cache_bytes=4096) as w:
            for batch in table.to_batches(max_chunksize=300):
                w.write_batch(batch)
    else:
        lancefile.write_table(table, path, version=version, max_page_bytes=4096)


def _layout(path):
    return read_layout(open_source(str(path)))


@contextmanager
def _walk(on: bool):
    """Readers that use the walk (as shipped) or never (every column by protobuf)."""
    if on:
        yield
    else:
        with mock.patch.object(lancefile.reader, "load_columns", lambda *a, **k: 0):
            yield


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_walked_columns_equal_protobufs(tmp_path, writer, version):
    path = tmp_path / "w.lance"
    _write(path, _table(30, 3000), writer, version)
    plain = _layout(path)
    walked = _layout(path)
    n = walked.num_columns
    walked.prefetch_columns(range(n))
    assert load_columns(walked, range(n)) == n
    assert any(len(plain.column(c).lengths) > 3 for c in range(n))  # multi-page columns
    for c in range(n):
        a, b = plain.column(c), walked.column(c)
        assert isinstance(b.pages, WalkedPages)
        assert (b.index, b.encoding, b.buffers, b.lengths) == (a.index, a.encoding, a.buffers, a.lengths)
        assert list(b.pages) == list(a.pages)
        assert b.pages[-1] == a.pages[-1] and b.pages[1:3] == a.pages[1:3]
        assert b.data_bytes == a.data_bytes and b.data_bytes_estimate(4) == a.data_bytes_estimate(4)
        assert b.page_starts.tolist() == a.page_starts.tolist()
        ta, tb = a.pages.table, b.pages.table
        assert tb.lengths.tolist() == ta.lengths.tolist()
        assert [tb.buffers(i) for i in range(len(tb))] == [ta.buffers(i) for i in range(len(ta))]
        assert [tb.encoding(i) for i in range(len(tb))] == [ta.encoding(i) for i in range(len(ta))]


def test_few_columns_are_left_to_protobuf(tmp_path):
    path = tmp_path / "few.lance"
    _write(path, _table(MIN_COLUMNS + 4, 100), "lancefile", "2.2")
    layout = _layout(path)
    assert load_columns(layout, range(MIN_COLUMNS - 1)) == 0
    assert not any(layout.has_column(c) for c in range(layout.num_columns))
    assert load_columns(layout, range(MIN_COLUMNS - 1), min_columns=1) == MIN_COLUMNS - 1
    assert load_columns(layout, range(layout.num_columns), min_columns=1) == layout.num_columns - MIN_COLUMNS + 1


def _forged(tmp_path, edit) -> str:
    src = tmp_path / "src.lance"
    lancefile.write_table(_table(20, 500), src, version="2.2", checksums=False, statistics=False)
    fm = parse(src.read_bytes())
    metas = list(fm.metas)
    edit(metas)
    out = tmp_path / "forged.lance"
    out.write_bytes(rebuild(fm, metas=metas))
    return str(out)


def _outcome(path: str, on: bool):
    with _walk(on):
        try:
            r = lancefile.LanceFileReader(path)
            return ("ok", r.read_all().to_table(), r.take_rows([0, 250, 499]).to_table())
        except LanceError as exc:
            return ("error", type(exc), str(exc))


def _column_buffer(metas):
    metas[3].buffer_offsets.append(0)
    metas[3].buffer_sizes.append(8)


def _unequal_buffer_lists(metas):
    metas[5].pages[0].buffer_sizes.append(1)


def _indirect_encoding(metas):
    metas[7].pages[0].encoding.indirect.buffer_location = 5


def _buffer_past_the_end(metas):
    metas[8].pages[0].buffer_offsets[0] = 1 << 40


def _no_encoding(metas):
    metas[9].pages[0].ClearField("encoding")


def _indirect_column_encoding(metas):
    metas[10].encoding.indirect.buffer_location = 5


@pytest.mark.parametrize("edit, column", [(_column_buffer, 3), (_unequal_buffer_lists, 5), (_indirect_encoding, 7),
                                          (_buffer_past_the_end, 8), (_no_encoding, 9),
                                          (_indirect_column_encoding, 10)])
def test_columns_of_another_form_keep_the_protobuf_path(tmp_path, edit, column):
    path = _forged(tmp_path, edit)
    layout = _layout(path)
    layout.prefetch_columns(range(20))
    assert load_columns(layout, range(20)) == 19
    assert not layout.has_column(column) and layout.has_column(column - 1)
    with_walk, without = _outcome(path, True), _outcome(path, False)
    assert with_walk[0] == without[0]
    if with_walk[0] == "error":
        assert with_walk[1:] == without[1:]
        assert f"column {column}" in with_walk[2]
    else:
        assert with_walk[1].equals(without[1]) and with_walk[2].equals(without[2])


def test_damaged_metadata_is_found_by_its_checksum(tmp_path):
    path = tmp_path / "ck.lance"
    lancefile.write_table(_table(20, 500), path, version="2.2")
    fm = parse(path.read_bytes())
    pos, size = fm.cmo[6]
    data = bytearray(path.read_bytes())
    data[pos + size // 2] ^= 0x01
    path.write_bytes(bytes(data))
    for on in (True, False):
        with _walk(on), pytest.raises(lancefile.ChecksumError, match="column 6"):
            lancefile.LanceFileReader(path).read_all().to_table()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_cols=st.integers(MIN_COLUMNS, 40), rows=st.integers(0, 3000), version=st.sampled_from(["2.1", "2.2"]),
       seed=st.integers(0, 5), data=st.data())
def test_reads_equal_with_and_without_the_walk(tmp_path_factory, n_cols, rows, version, seed, data):
    path = tmp_path_factory.mktemp("walk") / "t.lance"
    table = _table(n_cols, rows, seed)
    page_bytes = data.draw(st.sampled_from([1024, 8192, 1 << 20]))
    lancefile.write_table(table, path, version=version, max_page_bytes=page_bytes)
    start = data.draw(st.integers(0, rows))
    count = data.draw(st.integers(0, rows - start))
    idx = sorted(data.draw(st.lists(st.integers(0, max(rows - 1, 0)), max_size=50))) if rows else []
    got = {}
    for on in (True, False):
        with _walk(on):
            r = lancefile.LanceFileReader(path)
            got[on] = (r.read_range(start, count).to_table(), r.take_rows(idx).to_table(),
                       r.read_all(batch_size=700).to_table(), r.metadata())
    assert got[True][0].equals(table.slice(start, count))
    assert got[True][1].equals(table.take(pa.array(idx, pa.int64())))
    assert got[True][2].equals(table)
    assert got[True][3] == got[False][3]


@pytest.mark.parametrize("read", ["range", "take", "scan"])
def test_a_wide_read_parses_no_column_with_protobuf(tmp_path, read):
    path = tmp_path / "wide.lance"
    table = _table(40, 2000)
    _write(path, table, "pylance", "2.2")
    from lancefile.format.container import FileLayout

    def refuse(self, index):
        raise AssertionError(f"column {index} parsed with protobuf")

    with mock.patch.object(FileLayout, "_parse_column", refuse):
        r = lancefile.LanceFileReader(path)
        if read == "range":
            assert r.read_range(700, 600).to_table().equals(table.slice(700, 600))
        elif read == "take":
            assert r.take_rows([3, 900, 1999]).to_table().equals(table.take([3, 900, 1999]))
        else:
            assert r.read_all(batch_size=512).to_table().equals(table)


def test_metadata_of_a_wide_file_describes_each_distinct_encoding_once(tmp_path):
    path = tmp_path / "wide.lance"
    _write(path, _table(40, 2000), "pylance", "2.2")
    import lancefile.format.container as container

    calls = []
    real = container.unpack_any

    def counting(data, *args, **kwargs):
        calls.append(bytes(data))
        return real(data, *args, **kwargs)

    with mock.patch.object(container, "unpack_any", counting):
        meta = lancefile.LanceFileReader(path).metadata()
    encodings = [p.encoding for c in meta.columns for p in c.pages]
    assert len(encodings) > 200 and len(set(encodings)) < len(encodings)
    assert len(calls) == len(set(calls))  # each distinct page encoding parsed once
    with _walk(False):
        assert lancefile.LanceFileReader(path).metadata() == meta


def test_the_kept_arrays_are_sized_by_pages_not_by_metadata_bytes(tmp_path):
    # the walk's arrays are made for the worst case (a page in 2 bytes of metadata); what a
    # reader keeps must be the slots used, not ~32x the metadata
    path = tmp_path / "w.lance"
    _write(path, _table(30, 3000), "lancefile", "2.2")
    layout = _layout(path)
    n = layout.num_columns
    layout.prefetch_columns(range(n))
    t, _ = layout.column_tables(list(range(n)))
    pages = int(t.pages.sum())
    buffers = int(t.nbuf.sum())
    metadata = int((t.ends - t.starts).sum())
    assert pages * 40 < metadata  # the worst-case sizing would be far larger than the pages
    for a in (t.lengths, t.priorities, t.first, t.nbuf, t.simple, t.encoding_ids):
        assert len(a) == pages and (a.base is None or a.base.nbytes <= 6 * 8 * pages)
    for a in (t.positions, t.sizes):
        assert len(a) == buffers and (a.base is None or a.base.nbytes <= 2 * 8 * buffers)


def test_metadata_in_a_fresh_process_does_not_load_numba(tmp_path):
    # the walk is a compiled kernel: numba's first call (~0.5 s) would cost a one-shot
    # inspection (the CLI's info) far more than parsing the columns with protobuf
    import subprocess
    import sys

    path = tmp_path / "wide.lance"
    _write(path, _table(40, 500), "pylance", "2.2")
    code = ("import sys, lancefile; m = lancefile.LanceFileReader(sys.argv[1]).metadata(); "
            "print(len(m.columns), 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(lancefile.LanceFileReader(path).metadata().columns.__len__()), "False"]
