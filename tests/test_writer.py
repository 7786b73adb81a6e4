"""The writer's lifecycle and options: nothing at the destination unless close() succeeds."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.format.container import read_layout
from lancefile.io import LocalFileSource
from tests.conftest import reference_read


def _table(n=10):
    return pa.table({"x": pa.array(np.arange(n, dtype=np.int64)), "s": pa.array([str(i) for i in range(n)])})


def _only(tmp_path):
    return sorted(os.listdir(tmp_path))


def test_exception_inside_with_leaves_nothing(tmp_path):
    path = tmp_path / "f.lance"
    with pytest.raises(RuntimeError):
        with lancefile.LanceFileWriter(path, _table().schema) as w:
            w.write_batch(_table())
            raise RuntimeError("boom")
    assert _only(tmp_path) == []


def test_schema_mismatch_is_clear_and_leaves_nothing(tmp_path):
    path = tmp_path / "f.lance"
    bad = pa.table({"x": pa.array([1.5]), "s": pa.array(["a"])})
    with pytest.raises(lancefile.SchemaMismatchError, match="'x' is double in the batch but int64"):
        with lancefile.LanceFileWriter(path, _table().schema) as w:
            w.write_batch(bad)
    assert _only(tmp_path) == []
    with pytest.raises(lancefile.SchemaMismatchError, match="columns"):
        with lancefile.LanceFileWriter(path, _table().schema) as w:
            w.write_batch(pa.table({"y": [1]}))
    assert _only(tmp_path) == []


def test_nulls_in_non_nullable_field(tmp_path):
    schema = pa.schema([pa.field("x", pa.int32(), nullable=False)])
    with pytest.raises(lancefile.InvalidInputError, match="non-null"):
        with lancefile.LanceFileWriter(tmp_path / "f.lance", schema) as w:
            w.write_batch(pa.RecordBatch.from_arrays([pa.array([1, None], pa.int32())], schema=schema))
    assert _only(tmp_path) == []


def test_struct_nulls_refused_in_2_0(tmp_path):
    st = pa.array([{"a": 1}, None])
    with pytest.raises(lancefile.UnsupportedTypeError, match="struct validity"):
        lancefile.write_table(pa.table({"st": st}), tmp_path / "f.lance", version="2.0")
    assert _only(tmp_path) == []


@pytest.mark.parametrize("dtype", [pa.map_(pa.string(), pa.int32()), pa.dense_union([pa.field("a", pa.int32())]),
                                   pa.month_day_nano_interval()])
def test_unsupported_types_name_the_field(tmp_path, dtype):
    with pytest.raises(lancefile.UnsupportedTypeError, match="bad"):
        lancefile.LanceFileWriter(tmp_path / "f.lance", pa.schema([pa.field("bad", dtype)]), version="2.0")
    assert _only(tmp_path) == []


@pytest.mark.parametrize("dtype", [pa.dense_union([pa.field("a", pa.int32())]), pa.month_day_nano_interval()])
def test_unsupported_types_name_the_field_at_the_default_version(tmp_path, dtype):
    with pytest.raises(lancefile.UnsupportedTypeError, match="bad"):
        lancefile.LanceFileWriter(tmp_path / "f.lance", pa.schema([pa.field("bad", dtype)]))
    assert _only(tmp_path) == []


def test_nothing_visible_before_close(tmp_path):
    path = tmp_path / "f.lance"
    w = lancefile.LanceFileWriter(path, _table().schema)
    w.write_batch(_table())
    assert not path.exists()
    assert w.close() == 10
    assert path.exists() and _only(tmp_path) == ["f.lance"]
    assert w.close() == 10  # idempotent
    with pytest.raises(lancefile.InvalidInputError, match="closed"):
        w.write_batch(_table())


def test_abandoned_writer_cleans_up(tmp_path):
    w = lancefile.LanceFileWriter(tmp_path / "f.lance", _table().schema)
    w.write_batch(_table())
    del w
    import gc

    gc.collect()
    assert _only(tmp_path) == []


def test_no_schema_no_data(tmp_path):
    w = lancefile.LanceFileWriter(tmp_path / "f.lance")
    with pytest.raises(lancefile.InvalidInputError, match="no schema"):
        w.close()
    assert _only(tmp_path) == []


def test_schema_from_first_batch_and_global_buffers(tmp_path):
    path = tmp_path / "f.lance"
    w = lancefile.LanceFileWriter(path, statistics=False, checksums=False)  # each would be one more buffer
    assert w.add_global_buffer(b"early") == 1  # before the schema is known
    w.write_batch(_table())
    assert w.add_global_buffer(b"late") == 2
    w.add_schema_metadata("k", "v")
    w.close()
    r = lancefile.LanceFileReader(path)
    assert r.read_global_buffer(1) == b"early" and r.read_global_buffer(2) == b"late"
    assert r.schema.metadata[b"k"] == b"v"
    with pytest.raises(lancefile.InvalidInputError, match="global buffer 3"):
        r.read_global_buffer(3)


@pytest.mark.parametrize("version", ["2.3", "next", "legacy", "9.9"])
def test_unwritable_versions(tmp_path, version):
    with pytest.raises(lancefile.UnsupportedVersionError):
        lancefile.LanceFileWriter(tmp_path / "f.lance", _table().schema, version=version)
    assert _only(tmp_path) == []


def test_direct_io_alignment(tmp_path):
    path = tmp_path / "f.lance"
    lancefile.write_table(_table(5000), path, alignment=4096, max_page_bytes=16 * 1024)
    layout = read_layout(LocalFileSource(path))
    offsets = [b.position for c in range(layout.num_columns) for p in layout.column(c).pages for b in p.buffers]
    assert len(offsets) > 4 and all(o % 4096 == 0 for o in offsets)
    assert layout.global_buffers[0].position % 4096 == 0
    lance_file = pytest.importorskip("lance.file")
    assert lance_file.LanceFileReader(str(path)).read_all().to_table().equals(_table(5000))


@pytest.mark.parametrize("opts", [{"max_page_bytes": 0}, {"alignment": 3}, {"data_cache_bytes": -1}])
def test_bad_options(tmp_path, opts):
    with pytest.raises(lancefile.InvalidInputError):
        lancefile.LanceFileWriter(tmp_path / "f.lance", _table().schema, **opts)


def test_missing_directory(tmp_path):
    with pytest.raises(lancefile.LanceIOError, match="does not exist"):
        lancefile.LanceFileWriter(tmp_path / "nope" / "f.lance", _table().schema)


def test_write_table_from_reader_and_metadata(tmp_path):
    path = tmp_path / "f.lance"
    t = _table(100)
    lancefile.write_table(pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=7)), path,
                          schema_metadata={"origin": "test"})
    r = lancefile.LanceFileReader(path)
    assert r.read_all().to_table().equals(t)
    assert r.schema.metadata[b"origin"] == b"test"


@pytest.mark.parametrize("t", [pa.int8(), pa.uint16(), pa.int64(), pa.float16(), pa.float64(), pa.date32(),
                               pa.date64(), pa.timestamp("us", "UTC"), pa.time32("s"), pa.time64("ns"),
                               pa.duration("s"), pa.month_day_nano_interval()])
def test_value_bytes_is_arrows_nbytes_without_validity(t):
    # the writer counts pending bytes as len * value bytes for these (Arrow's nbytes is ~2 us a call)
    from lancefile.writer import _value_bytes

    w = _value_bytes(t)
    assert w > 0
    a = pa.Array.from_buffers(t, 10, [None, pa.py_buffer(np.zeros(10 * w, np.uint8))]).slice(3, 5)
    assert a.buffers()[0] is None and a.nbytes == len(a) * w


@pytest.mark.parametrize("t", [pa.bool_(), pa.string(), pa.decimal128(10, 2), pa.list_(pa.int8()),
                               pa.dictionary(pa.int32(), pa.string()), pa.struct([("a", pa.int8())])])
def test_value_bytes_zero_for_other_types(t):
    from lancefile.writer import _value_bytes

    assert _value_bytes(t) == 0


def _synced_writes(tmp_path, monkeypatch, fail_after=None):
    """Write ~1 MB in small batches with a background flush every 64 KiB; ``os.fdatasync``
    is counted and, after ``fail_after`` calls, fails as a full disk would."""
    import errno

    import lancefile.sink as sink_mod

    monkeypatch.setattr(sink_mod, "_SYNC_EVERY_BYTES", 64 << 10)
    monkeypatch.setattr(sink_mod, "_QUEUE_BYTES", 16 << 10)
    calls = []
    real = getattr(os, "fdatasync", os.fsync)

    def fake(fd):
        calls.append(fd)
        if fail_after is not None and len(calls) > fail_after:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fdatasync" if hasattr(os, "fdatasync") else "fsync", fake)
    path = tmp_path / "f.lance"
    t = pa.table({"x": pa.array(np.random.default_rng(0).integers(0, 2**62, 128_000))})
    with lancefile.LanceFileWriter(path, t.schema, version="2.0", max_page_bytes=32 << 10) as w:
        for b in t.to_batches(max_chunksize=8_000):
            w.write_batch(b)
    return path, t, calls


def test_written_bytes_flushed_to_disk_while_writing(tmp_path, monkeypatch):
    path, t, calls = _synced_writes(tmp_path, monkeypatch)
    assert calls  # flushed while the data went out (a flush starts once the previous one ended)
    assert lancefile.read_table(path).equals(t)


def test_failed_background_flush_fails_the_write_and_leaves_nothing(tmp_path, monkeypatch):
    with pytest.raises(lancefile.LanceIOError, match="No space left"):
        _synced_writes(tmp_path, monkeypatch, fail_after=0)
    assert _only(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "writev"), reason="writes through os.writev")
def test_failed_write_on_the_writer_thread_fails_the_write_and_leaves_nothing(tmp_path, monkeypatch):
    """Queued pieces are written on the sink's writer thread while encoding goes on: a disk
    that fills up there fails the write in the caller's thread, and no file is left."""
    import errno
    import threading

    import lancefile.sink as sink_mod

    monkeypatch.setattr(sink_mod, "_QUEUE_BYTES", 16 << 10)
    real, threads = os.writev, []

    def full_after_two(fd, views):
        threads.append(threading.current_thread())
        if len(threads) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, views)

    monkeypatch.setattr(os, "writev", full_after_two)
    t = pa.table({"x": pa.array(np.random.default_rng(0).integers(0, 2**62, 64_000))})
    with pytest.raises(lancefile.LanceIOError, match="No space left"):
        with lancefile.LanceFileWriter(tmp_path / "f.lance", t.schema, max_page_bytes=32 << 10) as w:
            for b in t.to_batches(max_chunksize=8_000):
                w.write_batch(b)
    assert threading.current_thread() not in threads  # the writes did run on the writer thread
    assert _only(tmp_path) == []


def test_collector_paused_while_writing_and_restored_after(tmp_path, monkeypatch):
    """The cyclic collector is off inside write_batch and close, back on after them, and left
    off after them when the caller had turned it off."""
    import gc

    import lancefile.sink as sink_mod

    seen = []
    real = sink_mod.FileSink.add_page

    def add_page(self, column, page):
        seen.append(gc.isenabled())
        return real(self, column, page)

    monkeypatch.setattr(sink_mod.FileSink, "add_page", add_page)
    t = pa.table({"x": np.arange(10_000), "s": pa.array([str(i) for i in range(10_000)])})
    assert gc.isenabled()
    with lancefile.LanceFileWriter(tmp_path / "a.lance", t.schema, data_cache_bytes=1 << 10) as w:
        w.write_batch(t)  # pages written here (a small data cache) ...
        assert gc.isenabled()
    assert gc.isenabled() and seen and not any(seen)  # ... and at close
    gc.disable()
    try:
        lancefile.write_table(t, tmp_path / "b.lance")
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert lancefile.read_table(tmp_path / "b.lance").equals(t)


def test_two_writers_on_two_threads_write_exact_files(tmp_path, monkeypatch):
    """Sinks share the writer threads; each keeps its own pieces in order (one queue of its
    own in flight), so two files written at once come out exact."""
    import threading

    import lancefile.sink as sink_mod

    monkeypatch.setattr(sink_mod, "_QUEUE_BYTES", 8 << 10)  # many queues, interleaved on the threads
    rng = np.random.default_rng(4)
    tables = [pa.table({"x": rng.integers(0, 2**62, 60_000), "s": pa.array([f"v{i % 977}" for i in range(60_000)])})
              for _ in range(2)]
    errors = []

    def write(k):
        try:
            with lancefile.LanceFileWriter(tmp_path / f"{k}.lance", tables[k].schema, max_page_bytes=16 << 10) as w:
                for b in tables[k].to_batches(max_chunksize=5_000):
                    w.write_batch(b)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    for k in range(2):
        assert lancefile.read_table(tmp_path / f"{k}.lance").equals(tables[k])
        lancefile.verify(tmp_path / f"{k}.lance")  # raises on any damaged byte


def _chunked_table(rng, rows_per_chunk, chunks, with_nulls):
    """A Table whose columns are chunked differently (numbers, nullable text, one chunk of
    ints, and UUIDs: an extension type, written as its storage type)."""
    def pieces(make):
        return pa.chunked_array([make(k) for k in range(chunks)])

    n = rows_per_chunk
    x = pieces(lambda k: pa.array(rng.random(n)))
    s = pieces(lambda k: pa.array([None if with_nulls and i % 7 == 0 else f"v{k}-{i}" for i in range(n)]))
    u = pa.chunked_array([pa.array(rng.integers(0, 100, n * chunks), pa.int32())])  # one chunk
    ids = pieces(lambda k: pa.ExtensionArray.from_storage(
        pa.uuid(), pa.array([rng.bytes(16) for _ in range(n)], pa.binary(16))))
    return pa.table({"x": x, "s": s, "u": u, "id": ids})


@pytest.mark.parametrize("version", ["2.0", "2.2"])
@pytest.mark.parametrize("cache", [8 << 20, 20_000])
def test_a_table_gives_the_file_of_its_batches(tmp_path, version, cache):
    """A Table handed over whole is taken column by column when no column fills the data
    cache, else batch by batch: either way the file is byte for byte the one its record
    batches make, written one at a time (and a second table after it, the same)."""
    rng = np.random.default_rng(3)
    t1 = _chunked_table(rng, 3_000, 4, True)
    t2 = _chunked_table(rng, 1_000, 3, False)
    whole, parts = tmp_path / "whole.lance", tmp_path / "parts.lance"
    with lancefile.LanceFileWriter(whole, t1.schema, version=version, data_cache_bytes=cache) as w:
        w.write_batch(t1)
        w.write_batch(t2)
    with lancefile.LanceFileWriter(parts, t1.schema, version=version, data_cache_bytes=cache) as w:
        for t in (t1, t2):
            for b in t.to_batches():
                w.write_batch(b)
    assert whole.read_bytes() == parts.read_bytes()
    got = lancefile.read_table(whole)
    assert got.equals(pa.concat_tables([t1, t2]).combine_chunks())


def test_a_table_path_counts_pending_bytes_and_flushes_later(tmp_path, monkeypatch):
    """Tables taken whole count their bytes: a field fills the data cache over several of
    them and is flushed then, not at close only."""
    import lancefile.writer as wmod

    flushed = []
    real = wmod.LanceFileWriter._flush_fields
    monkeypatch.setattr(wmod.LanceFileWriter, "_flush_fields",
                        lambda self, fields: flushed.append(list(fields)) or real(self, fields))
    t = pa.table({"x": pa.array(np.arange(1_000, dtype=np.int64))})  # 8,000 bytes a table
    with lancefile.LanceFileWriter(tmp_path / "f.lance", t.schema, data_cache_bytes=20_000) as w:
        for _ in range(5):
            w.write_batch(t)
        assert w._pending_bytes[0] < 20_000
        assert [0] in flushed  # the third table would have reached 24,000 bytes: batch by batch, flushed
    assert lancefile.read_table(tmp_path / "f.lance").column("x").to_pylist() == list(range(1_000)) * 5


def test_a_table_with_a_bad_column_is_refused_whole(tmp_path):
    """A Table with nulls in a non-nullable field is refused before anything of it is taken."""
    schema = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.int64())])
    bad = pa.Table.from_arrays([pa.array([1, None]), pa.array([1, 2])], schema=schema)
    good = pa.Table.from_arrays([pa.array([5, 6], pa.int64()), pa.array([7, 8], pa.int64())], schema=schema)
    path = tmp_path / "f.lance"
    with lancefile.LanceFileWriter(path, schema) as w:
        w.write_batch(good)
        with pytest.raises(lancefile.InvalidInputError, match="non-null"):
            w.write_batch(bad)
        w.write_batch(good)
    assert lancefile.read_table(path).column("a").to_pylist() == [5, 6, 5, 6]


@pytest.mark.parametrize("chunks,type_", [
    ([[1.5, None], [2.5], []], pa.float64()),
    ([["a", "bb"], [None, "ccc"]], pa.string()),
    ([[[1, 2], None], [[]]], pa.list_(pa.int32())),
    ([], pa.int64()),
])
def test_a_table_columns_chunks_are_combined_as_arrow_combines_them(chunks, type_):
    from lancefile.writer import _combined

    column = pa.chunked_array(chunks, type_)
    got = _combined(column)
    assert isinstance(got, pa.Array) and got.type == type_ and got.equals(column.combine_chunks())


def test_dictionary_chunks_with_different_dictionaries_combine_to_the_same_values(tmp_path):
    from lancefile.writer import _combined

    column = pa.chunked_array([pa.array(["x", "y", None]).dictionary_encode(), pa.array(["z", "x"]).dictionary_encode()])
    got = _combined(column)
    assert got.to_pylist() == column.to_pylist() == ["x", "y", None, "z", "x"]
    t = pa.table({"d": column})
    p = tmp_path / "d.lance"
    lancefile.write_table(t, p)
    assert lancefile.LanceFileReader(p).read_all().to_table().column("d").to_pylist() == column.to_pylist()


@pytest.mark.skipif(not hasattr(os, "writev"), reason="writes through os.writev")
def test_a_writer_that_gave_up_never_reports_success(tmp_path, monkeypatch):
    """After a failed write_batch (the disk filled up), a caller that catches the error and
    closes anyway gets the error again, not a row count for a file that is not there; so
    does a second close after a failed one, and size_bytes. An explicit abort() does the same;
    abort() after a successful close keeps the file."""
    import errno

    import lancefile.sink as sink_mod

    monkeypatch.setattr(sink_mod, "_QUEUE_BYTES", 16 << 10)
    real, calls = os.writev, []

    def full_after_two(fd, views):
        calls.append(fd)
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, views)

    t = pa.table({"x": pa.array(np.random.default_rng(0).integers(0, 2**62, 64_000))})
    path = tmp_path / "f.lance"
    monkeypatch.setattr(os, "writev", full_after_two)
    w = lancefile.LanceFileWriter(path, t.schema, max_page_bytes=32 << 10, data_cache_bytes=32 << 10)
    with pytest.raises(lancefile.LanceIOError, match="No space left"):
        for _ in range(20):  # the writer thread's failure shows in a later write_batch
            for b in t.to_batches(max_chunksize=8_000):
                w.write_batch(b)
    monkeypatch.setattr(os, "writev", real)  # the disk has room again: still no success
    for call in (w.close, w.close, w.size_bytes, lambda: w.write_batch(t)):
        with pytest.raises(lancefile.LanceIOError, match=r"aborted after an error \(.*No space left.*nothing was"):
            call()
    assert _only(tmp_path) == []

    w = lancefile.LanceFileWriter(path, t.schema)  # a close that fails, then one retried
    w.write_batch(t)
    monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with pytest.raises(lancefile.LanceIOError, match="I/O error"):
        w.close()
    monkeypatch.undo()
    with pytest.raises(lancefile.LanceIOError, match="aborted after an error"):
        w.close()
    assert _only(tmp_path) == []

    w = lancefile.LanceFileWriter(path, t.schema)
    w.write_batch(t)
    w.abort()
    with pytest.raises(lancefile.InvalidInputError, match="the writer was aborted, and nothing was written"):
        w.close()
    assert _only(tmp_path) == []

    with lancefile.LanceFileWriter(path, t.schema) as w:
        w.write_batch(t)
    w.abort()  # too late to give up: the file stays
    assert w.close() == t.num_rows and lancefile.read_table(path).equals(t)


@pytest.mark.parametrize("stem", ["n" * 244, "é" * 122, "x"])
def test_names_up_to_the_file_system_limit_are_written(tmp_path, stem):
    """The temporary file's name adds 18 bytes to the destination's: a legal name of up to 255
    bytes (counted in UTF-8) is still written, its temporary name cut at a character."""
    from lancefile import tempfiles

    name = stem + ".lance"
    assert len(os.fsencode(name)) <= 250
    tmp = os.path.basename(tempfiles.temporary_path(str(tmp_path / name)))
    assert len(os.fsencode(tmp)) <= tempfiles.NAME_MAX and tempfiles.is_temporary(tmp) and tmp.isprintable()
    lancefile.write_table(_table(), tmp_path / name)
    assert _only(tmp_path) == [name] and lancefile.read_table(tmp_path / name).equals(_table())


def test_a_temporary_file_that_cannot_be_made_names_the_destination(tmp_path, monkeypatch):
    from lancefile import tempfiles

    fixed = "0123456789abcdef" * 2
    monkeypatch.setattr(tempfiles.uuid, "uuid4", lambda: type("U", (), {"hex": fixed})())
    blocker = tmp_path / ".f.lance.0123456789ab.tmp"
    blocker.write_bytes(b"someone else's")  # the temporary name is taken
    with pytest.raises(lancefile.LanceIOError, match=r"cannot write .*/f\.lance: cannot create the temporary file "
                                                     r".*\.f\.lance\.0123456789ab\.tmp: File exists"):
        lancefile.write_table(_table(), tmp_path / "f.lance")
    assert _only(tmp_path) == [blocker.name] and blocker.read_bytes() == b"someone else's"


def test_the_new_name_is_synced_after_the_rename(tmp_path, monkeypatch):
    """A finished file survives a crash only once its directory is synced after the rename
    (fsync of the file alone leaves the new name in memory): the writer and a dataset's commit
    both sync the destination's directory, after the name exists."""
    import stat as stat_mod

    real, synced_dirs = os.fsync, []

    def recording(fd):
        st = os.fstat(fd)
        if stat_mod.S_ISDIR(st.st_mode):
            synced_dirs.append((st.st_ino, sorted(n for n in os.listdir(tmp_path) if not n.startswith("."))))
        return real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    lancefile.write_table(_table(), tmp_path / "f.lance")
    assert synced_dirs == [(os.stat(tmp_path).st_ino, ["f.lance"])]
    synced_dirs.clear()
    lancefile.write_dataset(_table(), tmp_path / "ds")
    versions = os.stat(tmp_path / "ds" / "_versions").st_ino
    assert versions in [ino for ino, _ in synced_dirs]  # the manifest's name


_REQUIRED_CHILDREN = {
    # name: (non-nullable type, data with a null where it is refused, or None where both libraries write it)
    "list item": (pa.list_(pa.field("item", pa.float32(), nullable=False)), [[1.0, None]], True),
    "large_list item": (pa.large_list(pa.field("item", pa.float32(), nullable=False)), [[1.0, None]], True),
    "list, null row": (pa.list_(pa.field("item", pa.float32(), nullable=False)), [[1.0], None], False),
    "map value": (pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False)), [[("k", None)]], True),
    "map, null row": (pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False)), [[("k", 1)], None], False),
    "fixed_size_list item": (pa.list_(pa.field("item", pa.float32(), nullable=False), 2), [[1.0, None]], False),
    "struct<list<item>>": (pa.struct([("l", pa.list_(pa.field("item", pa.int64(), nullable=False)))]),
                           [{"l": [1, None]}], True),
}


@pytest.mark.interop
@pytest.mark.parametrize("name", list(_REQUIRED_CHILDREN))
def test_nulls_in_a_non_nullable_child_are_refused_as_pylance_refuses_them(tmp_path, name):
    """A cast to a non-nullable list item keeps the nulls (Arrow does not check), and a Spark
    append wrote such a file: no reader could open the dataset after. lancefile refuses what
    pylance refuses (a fixed_size_list's items both write and read back)."""
    import lance

    typ, rows, refused = _REQUIRED_CHILDREN[name]
    loose = pa.array(rows, _loosened(typ))
    table = pa.table({"c": loose.cast(typ)})
    path = tmp_path / "t.lance"
    if refused:
        with pytest.raises(lancefile.InvalidInputError, match="holds null values but is marked non-null"):
            lancefile.write_table(table, path)
        assert not path.exists()
        with pytest.raises(Exception, match="contained null values"):
            lance.write_dataset(table, str(tmp_path / "ds"))
    else:
        lancefile.write_table(table, path)
        assert lancefile.read_table(path).column("c").to_pylist() == rows
        assert reference_read(path).column("c").to_pylist() == rows


def _loosened(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field nullable."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _loosened(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _loosened(t.item_type))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_loosened(t.value_type), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(_loosened(t.value_type))
    if pa.types.is_list(t):
        return pa.list_(_loosened(t.value_type))
    return t
