"""One regression test per finding of the 2.0 corruption campaign (issue 13, "Why").

Each test forges the file the finding was about (with :mod:`lancefile.fuzz.filemap`) and
checks that lancefile now refuses it with a Lance error naming the file, or (writer findings)
that the write fails cleanly. Files are written without checksums (and read without checking
them where they have some) so the forged bytes reach the checks under test.
"""

from __future__ import annotations

import io
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lancefile
from lancefile.encodings import arrowutil
from lancefile.fuzz.filemap import parse, rebuild
from lancefile.tempfiles import is_temporary

PLAIN = {"checksums": False, "statistics": False}


def _write(tmp_path, table, version="2.0", name="f.lance", **options) -> bytes:
    path = tmp_path / name
    lancefile.write_table(table, path, version=version, **{**PLAIN, **options})
    return path.read_bytes()


def _sample(tmp_path, version="2.0") -> bytes:
    t = pa.table({"a": pa.array(np.arange(100, dtype=np.int64)), "s": pa.array([f"v{i}" for i in range(100)]),
                  "l": pa.array([[i] for i in range(100)])})
    return _write(tmp_path, t, version)


def _forge_schema(data: bytes, edit) -> bytes:
    fm = parse(data)
    edit(fm.descriptor)
    return rebuild(fm, schema=fm.descriptor.SerializeToString())


def _refused(tmp_path, data: bytes, error=lancefile.CorruptFileError, match=None, ops=("all", "take", "meta")):
    """Every read op raises ``error`` (never another exception), naming the file."""
    path = tmp_path / "forged.lance"
    path.write_bytes(data)
    for op in ops:
        with pytest.raises(error, match=match) as info:
            reader = lancefile.LanceFileReader(path, verify_checksums=False)
            if op == "all":
                reader.read_all().to_table()
            elif op == "take":
                reader.take_rows([0, reader.num_rows() - 1]).to_table()
            else:
                reader.metadata()
                reader.read_all().to_table()
        assert str(path) in str(info.value), info.value


def _in_child(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter: an abort there fails the test instead of killing pytest."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


# -- process aborts (SIGABRT in pyarrow) ----------------------------------------------------


def test_dictionary_type_without_dictionary_is_refused_not_aborted(tmp_path):
    """A forged ``dict:`` logical type over plain values: pyarrow aborted on the array built for it."""
    forged = _forge_schema(_sample(tmp_path), lambda d: setattr(d.schema.fields[0], "logical_type",
                                                                "dict:int64:int32:false"))
    path = tmp_path / "dict.lance"
    path.write_bytes(forged)
    code = f"""
import lancefile
try:
    lancefile.read_table({str(path)!r})
except lancefile.CorruptFileError as exc:
    print("refused:", exc)
"""
    done = _in_child(code)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout


def test_offset_table_entry_pointing_at_another_column(tmp_path):
    """Column 0's metadata entry pointing at column 1's metadata: its pages decode as the wrong type."""
    fm = parse(_sample(tmp_path))
    forged = rebuild(fm, cmo=lambda e: [e[1], *e[1:]])
    path = tmp_path / "cmo.lance"
    path.write_bytes(forged)
    done = _in_child(f"""
import lancefile
for op in ("all", "take"):
    try:
        r = lancefile.LanceFileReader({str(path)!r})
        r.read_all().to_table() if op == "all" else r.take_rows([0, 99]).to_table()
    except lancefile.CorruptFileError as exc:
        print("refused:", exc)
""")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("refused:") == 2 and "column 0" in done.stdout


def test_safe_array_refuses_a_dictionary_type_and_short_buffers():
    with pytest.raises(lancefile.CorruptFileError, match="without a dictionary"):
        arrowutil.safe_array(pa.dictionary(pa.int32(), pa.string()), 1, [None, pa.py_buffer(bytes(4))])
    with pytest.raises(lancefile.CorruptFileError, match="do not make 3 values"):
        arrowutil.safe_array(pa.int64(), 3, [None, pa.py_buffer(bytes(16))])
    with pytest.raises(lancefile.CorruptFileError, match="do not make"):
        arrowutil.safe_array(pa.int64(), 1, [None, pa.py_buffer(bytes(8)), pa.py_buffer(bytes(8))])


# -- foreign exceptions ----------------------------------------------------------------------


def test_page_length_past_int64(tmp_path):
    """OverflowError in container.py: a page length of 2**63 or more."""
    fm = parse(_sample(tmp_path))
    fm.metas[0].pages[0].length = 2**63 + 5
    _refused(tmp_path, rebuild(fm, metas=fm.metas), match="rows")


@pytest.mark.parametrize("logical", ["fixed_size_binary:-5", "fixed_size_list:int32:-1", "fixed_size_list:int8:2147483648",
                                     "fixed_size_list:int64:99999999999999999999", "fixed_size_binary:3000000000",
                                     "fixed_size_list:struct:-2", "fixed_size_list:int32:0", "fixed_size_list:struct:0"])
def test_bad_sizes_in_logical_types(tmp_path, logical):
    """ArrowInvalid / IndexError / OverflowError from sizes pyarrow misreads (-1 makes a plain list)."""
    forged = _forge_schema(_sample(tmp_path), lambda d: setattr(d.schema.fields[0], "logical_type", logical))
    _refused(tmp_path, forged, match="logical type")


def test_row_count_past_int64(tmp_path):
    _refused(tmp_path, _forge_schema(_sample(tmp_path), lambda d: setattr(d, "length", 2**64 - 1)), match="rows")


def test_duplicate_top_level_names(tmp_path):
    """ValueError in reader.py (and silently wrong types): two top-level fields named alike."""
    forged = _forge_schema(_sample(tmp_path), lambda d: setattr(d.schema.fields[1], "name", "a"))
    _refused(tmp_path, forged, match="two fields named 'a'")


def test_negative_dictionary_index(tmp_path):
    """ArrowIndexError in v2_0/dictionary.py: an index that is negative in a signed key type."""
    idx = pa.array(np.arange(50, dtype=np.int32) % 5)
    t = pa.table({"d": pa.DictionaryArray.from_arrays(idx, pa.array(["a", "b", "c", "d", "e"]))})
    data = bytearray(_write(tmp_path, t))
    fm = parse(bytes(data))
    pos, size = fm.regions["c0p0b0"]  # the keys
    data[pos : pos + 4] = (-7).to_bytes(4, "little", signed=True)
    _refused(tmp_path, bytes(data), match="dictionary index")


def test_null_adjustment_past_int64(tmp_path):
    """OverflowError in v2_0/offsets.py: a u64 null adjustment of 2**63 or more."""
    fm = parse(_write(tmp_path, pa.table({"s": pa.array(["ab", None, "c"] * 10)})))
    from lancefile.fuzz.filemap import page_encoding, set_page_encoding

    enc = page_encoding(fm, fm.metas[0], 0)
    enc.binary.null_adjustment = 2**64 - 1
    set_page_encoding(fm, fm.metas[0], 0, enc)
    path = tmp_path / "adj.lance"
    path.write_bytes(rebuild(fm, metas=fm.metas))
    try:  # any outcome but a foreign exception: the nulls are gone, the values are still in the buffer
        lancefile.read_table(path)
    except lancefile.LanceError as exc:
        assert str(path) in str(exc)


# -- allocation before range checks ----------------------------------------------------------


def test_take_on_forged_spans_checks_before_allocating(tmp_path):
    """take_rows on forged Binary ends allocated up to 7e18 bytes before finding them outside the file."""
    t = pa.table({"s": pa.array([f"value-{i}" for i in range(1000)])})
    data = bytearray(_write(tmp_path, t))
    fm = parse(bytes(data))
    pos, _ = fm.regions["c0p0b0"]  # the u64 end offsets
    data[pos + 8 * 900 : pos + 8 * 901] = (2**62).to_bytes(8, "little")  # row 900 ends 4 EiB on
    path = tmp_path / "spans.lance"
    path.write_bytes(bytes(data))
    reader = lancefile.LanceFileReader(path)
    tracemalloc.start()
    try:
        with pytest.raises(lancefile.CorruptFileError, match="needs bytes") as info:
            reader.take_rows([3, 900]).to_table()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(path) in str(info.value)
    assert peak < 10 << 20, peak


def test_read_spans_checks_every_range_first():
    from lancefile.encodings.v2_0 import spans
    from lancefile.format.container import BufferRef

    class Page:
        def ref(self, buffer):
            return BufferRef(0, 100)

        def error(self, msg):
            return lancefile.CorruptFileError(msg)

        def read_into(self, *args):  # pragma: no cover - never reached
            raise AssertionError("read before the ranges were checked")

    for n in (3, 200):  # the plain-Python and the numpy paths
        starts = np.zeros(n, np.int64)
        lengths = np.ones(n, np.int64)
        lengths[-1] = 2**62
        with pytest.raises(lancefile.CorruptFileError, match="needs bytes"):
            spans.read_spans(Page(), 0, starts, lengths)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 990), st.integers(0, 10)), min_size=1, max_size=150),
       st.sampled_from([0, 4, 64]))
def test_read_spans_reads_ranges_out_of_order_right(ranges, gap):
    """Ranges of a take come sorted, but forged binary offsets give them in any order: each
    range's bytes are still its own, on the plain-Python path (64 ranges or fewer) and the
    numpy one (found by the fuzzer: a range before the one ahead of it came out empty)."""
    from lancefile.encodings.v2_0 import spans
    from lancefile.format.container import BufferRef

    buf = bytes(range(256)) * 4

    class Page:
        def ref(self, buffer):
            return BufferRef(0, len(buf))

        def error(self, msg):  # pragma: no cover - every range here is inside the buffer
            return lancefile.CorruptFileError(msg)

        def read_into(self, buffer, starts, lengths, out):
            pos = 0
            for a, n in zip(np.asarray(starts).tolist(), np.asarray(lengths).tolist()):
                out[pos : pos + n] = np.frombuffer(buf[a : a + n], np.uint8)
                pos += n

    starts = np.array([a for a, _ in ranges], np.int64)
    lengths = np.array([n for _, n in ranges], np.int64)
    got = spans.read_spans(Page(), 0, starts, lengths, gap)
    assert bytes(got) == b"".join(buf[a : a + n] for a, n in ranges)


# -- invalid Arrow results ---------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_invalid_utf8_is_refused(tmp_path, version):
    data = bytearray(_write(tmp_path, pa.table({"s": pa.array([f"hello{i}" for i in range(10)])}), version))
    i = data.find(b"hello0")  # row 0: every op reads it
    assert i > 0
    data[i] = 0xFF
    _refused(tmp_path, bytes(data), match="UTF8|UTF-8")


def test_num_columns_larger_than_the_schema(tmp_path):
    fm = parse(_sample(tmp_path))
    _refused(tmp_path, rebuild(fm, metas=fm.metas + [fm.metas[-1]]), match="needs 4 columns .* has 5")


def test_non_nullable_field_with_nulls(tmp_path):
    data = _write(tmp_path, pa.table({"a": pa.array([1, None, 3]), "st": pa.array([{"x": 1}, {"x": None}, None])}),
                  "2.2")
    forged = _forge_schema(data, lambda d: setattr(d.schema.fields[0], "nullable", False))
    _refused(tmp_path, forged, match="'a' is declared non-nullable", ops=("all",))
    # a nested non-nullable child: nulls under a valid parent are refused, under a null parent allowed
    forged = _forge_schema(data, lambda d: setattr(d.schema.fields[2], "nullable", False))
    _refused(tmp_path, forged, match=r"'st\.x' is declared non-nullable", ops=("all",))
    path = tmp_path / "nested.lance"
    path.write_bytes(forged)
    assert lancefile.LanceFileReader(path).take_rows([0, 2]).to_table().num_rows == 2


# -- lancefile's own bugs stay visible ------------------------------------------------------------


def test_reader_does_not_relabel_its_own_bugs(tmp_path, monkeypatch):
    """IndexError / ValueError from lancefile's code are bugs: they are not turned into CorruptFileError."""
    from lancefile.encodings.v2_0 import fields

    path = tmp_path / "ok.lance"
    path.write_bytes(_sample(tmp_path))

    for exc in (IndexError("a bug"), ValueError("another bug")):
        def broken(*args, exc=exc, **kwargs):
            raise exc

        monkeypatch.setattr(fields.LeafReader, "read", broken)
        with pytest.raises(type(exc), match="bug") as info:
            lancefile.read_table(path)
        assert not isinstance(info.value, lancefile.LanceError)


# -- the nested-list encoder bug -------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_list_of_lists_without_inner_lists_at_an_offset(tmp_path, version):
    """ListEncoder raised IndexError on a list<list<...>> page with no inner lists at a nonzero offset."""
    t = pa.table({"ll": pa.array([[[1], [2]], [], None], pa.list_(pa.list_(pa.int64())))}).slice(1)
    path = tmp_path / "ll.lance"
    lancefile.write_table(t, path, version=version)
    assert lancefile.read_table(path).equals(t)
    lance_file = pytest.importorskip("lance.file")
    assert lance_file.LanceFileReader(str(path)).read_all().to_table().equals(t)
    deeper = pa.table({"l3": pa.array([[[[1]]], [], [[]], None], pa.list_(pa.list_(pa.list_(pa.int64()))))}).slice(1)
    lancefile.write_table(deeper, path, version=version)
    assert lancefile.read_table(path).equals(deeper)


# -- paths that are not regular files ---------------------------------------------------------------


def test_directories_and_datasets_are_refused(tmp_path):
    with pytest.raises(lancefile.LanceIOError, match="is a directory"):
        lancefile.LanceFileReader(tmp_path)
    (tmp_path / "ds" / "_versions").mkdir(parents=True)
    with pytest.raises(lancefile.LanceIOError, match="lancefile.dataset"):
        lancefile.read_table(tmp_path / "ds")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.lance"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            lancefile.LanceFileReader(fifo)
        except lancefile.LanceIOError as exc:
            outcome.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "opening a FIFO blocked"
    assert outcome and "not a regular file" in str(outcome[0])


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_is_refused():
    with pytest.raises(lancefile.LanceIOError, match="not a regular file"):
        lancefile.LanceFileReader("/dev/null")


# -- the writer: temporary files, OS errors, bad input ------------------------------------------------


def _temporaries(directory) -> list[str]:
    return [n for n in os.listdir(directory) if is_temporary(n)]


_KILLED_WRITER = """
import sys, numpy as np, pyarrow as pa, lancefile
t = pa.table({"x": np.arange(1 << 16), "s": pa.array([str(i) for i in range(1 << 16)])})
with lancefile.LanceFileWriter(sys.argv[1], t.schema, data_cache_bytes=1 << 16) as w:
    print("writing", flush=True)
    while True:
        w.write_batch(t)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_write_leaves_nothing_and_the_next_write_sweeps(tmp_path):
    dest = tmp_path / "out.lance"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for delay in (0.0, 0.05, 0.3):
        proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(dest)], stdout=subprocess.PIPE, env=env)
        assert proc.stdout.readline().strip() == b"writing"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not dest.exists()
        # what a killed process cannot remove (each new writer sweeps its predecessors' when stale)
        assert _temporaries(tmp_path)
    time.sleep(1.1)  # older than STALE_AFTER
    lancefile.write_table(pa.table({"x": [1]}), tmp_path / "next.lance")
    assert _temporaries(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == ["next.lance"]


def test_a_live_writers_temporary_file_is_not_swept(tmp_path, monkeypatch):
    from lancefile import tempfiles

    monkeypatch.setattr(tempfiles, "STALE_AFTER", 0.0)
    w = lancefile.LanceFileWriter(tmp_path / "a.lance", pa.schema([("x", pa.int64())]))
    w.write_batch(pa.table({"x": [1, 2]}))
    (tmp_name,) = _temporaries(tmp_path)
    assert tmp_name.startswith(".a.lance.") and tmp_name.endswith(".tmp")
    assert tempfiles.remove_stale(str(tmp_path)) == []  # locked by the live writer
    w.close()
    assert lancefile.read_table(tmp_path / "a.lance").num_rows == 2
    assert _temporaries(tmp_path) == []


def test_failed_writes_remove_their_temporary_file(tmp_path):
    with pytest.raises(lancefile.SchemaMismatchError):
        with lancefile.LanceFileWriter(tmp_path / "f.lance") as w:
            w.write_batch(pa.table({"x": [1]}))
            w.write_batch(pa.table({"x": ["a"]}))
    with pytest.raises(RuntimeError):
        with lancefile.LanceFileWriter(tmp_path / "g.lance") as w:
            w.write_batch(pa.table({"x": [1]}))
            raise RuntimeError("caller failed")
    assert os.listdir(tmp_path) == []


def test_writes_leave_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
    # Finding (2026-11-30): the statistics' embedded files were made in a directory kept for the
    # process's life and removed at exit; processes that end without exit handlers (Spark's
    # Python workers, forked pool workers) left one each (280 in /tmp on this machine).
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    table = pa.table({"x": list(range(50)), "s": [str(i) for i in range(50)]})
    for version in ("2.0", "2.1", "2.2"):
        lancefile.write_table(table, tmp_path / f"{version}.lance", version=version)
        assert lancefile.read_table(tmp_path / f"{version}.lance").equals(table)
    assert os.listdir(scratch) == []


def test_sweeps_remember_a_bounded_number_of_directories(tmp_path, monkeypatch):
    from lancefile import tempfiles

    monkeypatch.setattr(tempfiles, "_swept", {})
    for i in range(tempfiles._SWEPT_MAX + 500):
        tempfiles.sweep_once(str(tmp_path / f"d{i}"))
    assert 0 < len(tempfiles._swept) <= tempfiles._SWEPT_MAX
    # a directory swept a moment ago is still remembered: the next write into it does not sweep
    monkeypatch.setattr(tempfiles, "remove_stale", lambda d: pytest.fail(f"swept {d} again"))
    tempfiles.sweep_once(str(tmp_path / f"d{tempfiles._SWEPT_MAX + 499}"))


_KILLED_STAGING_WRITER = """
import io, sys, numpy as np, pyarrow as pa, lancefile
t = pa.table({"x": np.arange(1 << 16), "s": pa.array([str(i) for i in range(1 << 16)])})
with lancefile.LanceFileWriter(io.BytesIO(), t.schema, data_cache_bytes=1 << 16) as w:
    print("writing", flush=True)
    while True:
        w.write_batch(t)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_writes_to_file_objects_are_swept_from_the_temporary_folder(tmp_path, monkeypatch):
    # Finding (2026-11-30, a helper's SIGKILL probe): a write to a file object or an object
    # store stages the file in <system temp>/lancefile-upload-*/; a writer killed there left
    # its partial file for good, since every later writer swept only its own new directory.
    import tempfile

    from lancefile import tempfiles

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch), PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_STAGING_WRITER], stdout=subprocess.PIPE, env=env)
    assert proc.stdout.readline().strip() == b"writing"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (staged,) = os.listdir(scratch)
    assert staged.startswith(tempfiles.STAGING_PREFIX) and _temporaries(scratch / staged)
    old_empty = scratch / (tempfiles.STAGING_PREFIX + "old")
    old_empty.mkdir()
    os.utime(old_empty, (0, 0))  # a dead writer's emptied directory, long ago
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(tempfiles, "_swept", {})
    time.sleep(1.1)  # older than STALE_AFTER
    live = lancefile.LanceFileWriter(io.BytesIO(), pa.schema([("x", pa.int64())]))  # sweeps, then stages
    live.write_batch(pa.table({"x": [1, 2]}))
    assert _temporaries(scratch / staged) == []  # the dead writer's partial file is gone
    assert not old_empty.exists()
    assert tempfiles.sweep_staging(str(scratch)) == []  # once a minute: nothing more now
    monkeypatch.setattr(tempfiles, "_swept", {})
    monkeypatch.setattr(tempfiles, "STALE_AFTER", 0.0)
    assert not any(p.endswith(".tmp") for p in tempfiles.sweep_staging(str(scratch)))  # the live one is locked
    out = io.BytesIO()
    live2 = lancefile.LanceFileWriter(out)  # no schema: nothing is staged before the first batch
    os.rmdir(live2._remote._dir)  # which came after a sweep took the empty directory
    live2.write_batch(pa.table({"x": [3]}))
    live2.close()
    assert lancefile.read_table(io.BytesIO(out.getvalue())).column("x").to_pylist() == [3]
    live.close()


def test_a_killed_statistics_write_is_swept_from_the_temporary_folder(tmp_path, monkeypatch):
    # Finding (2026-11-30): a writer killed while writing a file's statistics (an embedded file
    # in <temp>/lancefile-embedded-*/) left that directory and its partial file for good.
    import tempfile

    from lancefile import tempfiles

    scratch = tmp_path / "tmp"
    dead = scratch / (tempfiles.EMBEDDED_PREFIX + "dead")
    dead.mkdir(parents=True)
    partial = dead / ".embedded.lance.0123456789ab.tmp"
    partial.write_bytes(b"half a statistics file")
    os.utime(partial, (0, 0))
    os.utime(dead, (0, 0))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(tempfiles, "_swept", {})
    table = pa.table({"x": list(range(100))})
    lancefile.write_table(table, tmp_path / "f.lance")  # writes statistics, so sweeps first
    assert not partial.exists()
    assert lancefile.read_table(tmp_path / "f.lance").equals(table)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_destination_that_is_not_a_regular_file_is_refused(tmp_path):
    # Finding (2026-11-30, a helper's probe): a FIFO or a device at the destination was replaced
    # by the written file (as root, /dev/null). A symlink is still replaced, as pylance does.
    fifo = tmp_path / "p.lance"
    os.mkfifo(fifo)
    with pytest.raises(lancefile.LanceIOError, match=r"p\.lance: it is a FIFO"):
        lancefile.write_table(pa.table({"x": [1]}), fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(os.listdir(tmp_path)) == ["p.lance"]
    device = tmp_path / "null.lance"  # never /dev/null itself: a regression would replace it
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError):  # not root, or no mknod
        pass
    else:
        with pytest.raises(lancefile.LanceIOError, match="it is a device"):
            lancefile.LanceFileWriter(device)
        assert stat.S_ISCHR(os.lstat(device).st_mode)
        device.unlink()
    (tmp_path / "v1.lance").write_bytes(b"old")
    os.symlink(tmp_path / "v1.lance", tmp_path / "latest.lance")
    lancefile.write_table(pa.table({"x": [1]}), tmp_path / "latest.lance")
    assert not os.path.islink(tmp_path / "latest.lance") and (tmp_path / "v1.lance").read_bytes() == b"old"


def test_destination_that_is_a_directory(tmp_path):
    (tmp_path / "d.lance").mkdir()
    with pytest.raises(lancefile.LanceIOError, match="is a directory"):
        lancefile.write_table(pa.table({"x": [1]}), tmp_path / "d.lance")
    w = lancefile.LanceFileWriter(tmp_path / "e.lance", pa.schema([("x", pa.int64())]))
    (tmp_path / "e.lance").mkdir()  # appears during the write
    with pytest.raises(lancefile.LanceIOError, match="is a directory"):
        w.close()
    assert _temporaries(tmp_path) == []


def test_directory_removed_during_the_write(tmp_path):
    d = tmp_path / "sub"
    d.mkdir()
    w = lancefile.LanceFileWriter(d / "f.lance", pa.schema([("x", pa.int64())]))
    w.write_batch(pa.table({"x": [1]}))
    for name in os.listdir(d):
        os.unlink(d / name)
    d.rmdir()
    with pytest.raises(lancefile.LanceIOError, match=str(d / "f.lance")) as info:
        w.close()
    assert isinstance(info.value, OSError)


@pytest.mark.skipif(sys.platform == "win32", reason="needs RLIMIT_FSIZE")
def test_file_size_limit(tmp_path):
    """EFBIG (a file-size limit) surfaces as LanceIOError naming the file; nothing is left behind."""
    dest = tmp_path / "big.lance"
    done = _in_child(f"""
import resource, numpy as np, pyarrow as pa, lancefile
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
try:
    x = np.random.default_rng(0).integers(-2**62, 2**62, 1 << 20)  # 8 MB that nothing compresses
    lancefile.write_table(pa.table({{"x": x}}), {str(dest)!r})
except lancefile.LanceIOError as exc:
    print("refused:", exc)
""")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout and str(dest) in done.stdout
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_permission_denied(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(lancefile.LanceIOError, match="cannot create"):
            lancefile.write_table(pa.table({"x": [1]}), d / "f.lance")
    finally:
        d.chmod(stat.S_IRWXU)


def test_writer_api_bad_inputs(tmp_path):
    t = pa.table({"x": [1, 2]})
    with pytest.raises(lancefile.InvalidInputError, match="path"):
        lancefile.LanceFileWriter(123)
    with pytest.raises(lancefile.InvalidInputError, match="pyarrow.Schema"):
        lancefile.LanceFileWriter(tmp_path / "a.lance", schema="x: int64")
    for option in ("max_page_bytes", "data_cache_bytes", "alignment"):
        with pytest.raises(lancefile.InvalidInputError, match=option):
            lancefile.write_table(t, tmp_path / "a.lance", **{option: "64"})
    with pytest.raises(lancefile.InvalidInputError, match="checksums"):
        lancefile.LanceFileWriter(tmp_path / "a.lance", checksums="yes")
    w = lancefile.LanceFileWriter(tmp_path / "a.lance")
    w.write_batch(t)
    with pytest.raises(lancefile.InvalidInputError, match="bytes"):
        w.add_global_buffer("text")
    with pytest.raises(lancefile.InvalidInputError, match="must be str"):
        w.add_schema_metadata("k", 1)
    with pytest.raises(lancefile.InvalidInputError, match="not valid UTF-8"):
        w.add_schema_metadata("k", b"\xff")
    w.add_schema_metadata("k", b"bytes")  # UTF-8 bytes: stored as the text, not as "b'bytes'"
    w.add_schema_metadata(b"k2", "v")
    with pytest.raises(lancefile.SchemaMismatchError):
        w.write_batch(pa.table({"y": [1]}))
    assert not (tmp_path / "a.lance").exists()  # the mismatch aborted the write
    w = lancefile.LanceFileWriter(tmp_path / "b.lance")
    w.write_batch(t)
    w.add_schema_metadata("k", b"bytes")
    w.close()
    assert lancefile.LanceFileReader(tmp_path / "b.lance").schema.metadata[b"k"] == b"bytes"
    with pytest.raises(lancefile.InvalidInputError, match="already closed"):
        w.write_batch(t)


def test_view_types_are_stored_with_a_warning(tmp_path):
    t = pa.table({"s": pa.array(["a", None], pa.string_view()), "b": pa.array([b"x", b"y"], pa.binary_view())})
    with pytest.warns(lancefile.StorageTypeWarning, match="stored as string") as caught:
        lancefile.write_table(t, tmp_path / "v.lance")
    assert any("stored as binary" in str(w.message) for w in caught)
    assert lancefile.read_table(tmp_path / "v.lance").schema.types == [pa.string(), pa.binary()]


def test_map_with_null_keys_is_refused_not_aborted(tmp_path):
    """A forged map whose key column holds nulls: Arrow aborts on a map built with null keys."""
    entries = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.int64())])
    t = pa.table({"m": pa.array([[{"key": "a", "value": 1}, {"key": None, "value": 2}], [{"key": "c", "value": 3}]],
                                pa.list_(entries))})
    forged = _forge_schema(_write(tmp_path, t, version="2.2"),
                           lambda d: setattr(d.schema.fields[0], "logical_type", "map"))
    path = tmp_path / "map.lance"
    path.write_bytes(forged)
    code = f"""
import lancefile
try:
    lancefile.LanceFileReader({str(path)!r}, verify_checksums=False).read_all().to_table()
except lancefile.CorruptFileError as exc:
    print("refused:", exc)
"""
    out = _in_child(code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused:" in out.stdout and "null entry or key" in out.stdout, out.stdout


# -- the 2.1/2.2 campaign of 2026-11-27 ----------------------------------------------------------


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_fixed_size_list_of_dimension_zero_is_refused_not_sigfpe(tmp_path, version):
    """SIGFPE (the interpreter died) in fields.py (with_validity): a schema forged to
    ``fixed_size_list:float:0`` over an all-null column; pyarrow's FixedSizeListArray.from_arrays
    divides by the list size. The reference refuses the dimension; so does lancefile now."""
    t = pa.table({"x": pa.array([None] * 10 + [[1.5]], pa.list_(pa.float32(), 1))})
    forged = _forge_schema(_write(tmp_path, t, version),
                           lambda d: setattr(d.schema.fields[0], "logical_type", "fixed_size_list:float:0"))
    path = tmp_path / "fsl0.lance"
    path.write_bytes(forged)
    done = _in_child(f"""
import lancefile
for op in ("all", "take"):
    try:
        r = lancefile.LanceFileReader({str(path)!r})
        r.read_all().to_table() if op == "all" else r.take_rows([0, 10]).to_table()
    except lancefile.CorruptFileError as exc:
        print("refused:", exc)
""")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("refused:") == 2 and "dimension" in done.stdout


def test_fixed_size_lists_of_size_zero_are_built_without_pyarrows_division():
    """Every fixed-size list lancefile builds goes through arrowutil.fixed_size_lists."""
    t = pa.list_(pa.float32(), 0)
    got = arrowutil.fixed_size_lists(pa.array([], pa.float32()), t, 3, np.array([True, False, True]))
    assert got.type == t and got.to_pylist() == [[], None, []]
    with pytest.raises(lancefile.CorruptFileError, match="lists of 2"):
        arrowutil.fixed_size_lists(pa.array([1.0, 2.0, 3.0], pa.float32()), pa.list_(pa.float32(), 2), 2)


def test_num_items_past_int64_in_a_column_of_many_pages(tmp_path):
    """OverflowError in mini_block_many.py (_parse_chunk_words): the chunk words of several pages
    are parsed together, and one page's num_items of 2**63 went into an int64 array unchecked."""
    from google.protobuf import any_pb2

    from lancefile._proto import encodings_v2_1_pb2 as pb

    t = pa.table({"x": pa.array(np.random.default_rng(0).integers(0, 2**40, 20_000))})
    fm = parse(_write(tmp_path, t, "2.2", max_page_bytes=32 << 10))
    pages = fm.metas[0].pages
    assert len(pages) > 2
    wrapper = any_pb2.Any.FromString(pages[1].encoding.direct.encoding)
    layout = pb.PageLayout.FromString(wrapper.value)
    layout.mini_block_layout.num_items = 2**63
    wrapper.value = layout.SerializeToString()
    pages[1].encoding.direct.encoding = wrapper.SerializeToString()
    _refused(tmp_path, rebuild(fm, metas=fm.metas), match="page 1 .*mini-block page of 9223372036854775808 values",
             ops=("all", "meta"))
    path = tmp_path / "forged.lance"
    with pytest.raises(lancefile.CorruptFileError, match="page 1 "):  # a take of rows in several pages
        lancefile.LanceFileReader(path).take_rows(np.arange(0, 20_000, 997)).to_table()


def test_zstd_size_claims_are_not_allocated_up_front():
    """MemoryError (under a memory limit) from decompress_many's one-call zstd path: a damaged
    1 MiB buffer whose length prefix and frame header both claimed 16 GiB was handed to
    python-zstandard, which allocates the claim before decoding (and, after a first fix, a
    40 MB one claiming 64x its size). Claims over 16 MiB or 64x now take the streaming path,
    which refuses the frame with a CorruptFileError."""
    done = _in_child("""
import resource, struct
import numpy as np
from lancefile.encodings.compression import decompress_many
from lancefile.errors import CorruptFileError
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
for size, claim in ((1 << 20, 1 << 34), (40 << 20, 64 * (40 << 20))):  # 16 GiB; 64x a large buffer
    frame = b"\\x28\\xb5\\x2f\\xfd" + bytes([0xE0]) + struct.pack("<Q", claim)
    frame += b"\\xff" * (size - len(frame))
    buf = np.frombuffer(struct.pack("<Q", claim) + frame, np.uint8)
    try:
        decompress_many(buf, [0], [len(buf)], "zstd")
    except CorruptFileError as exc:
        print("refused:", exc)
""")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("refused: zstd buffer 0 of 1") == 2


def test_errors_of_a_multi_page_read_name_the_pages_once(tmp_path):
    """A read decoding many pages of a column at once named the place twice
    (``f: column 0 pages 0-36: f: column 0 page 0 (field 's', ...): ...``): the message of the
    first page's decoder is now given the pages' range instead of a second prefix."""
    f = pa.field("s", pa.string(), metadata={"lance-encoding:compression": "zstd"})
    t = pa.table({"s": pa.array([f"value-{i % 977}-{'x' * (i % 13)}" for i in range(60000)])}, schema=pa.schema([f]))
    path = tmp_path / "pages.lance"
    lancefile.write_table(t, path, version="2.2", max_page_bytes=32 << 10, data_cache_bytes=1, checksums=False)
    page1 = lancefile.LanceFileReader(str(path)).metadata().columns[0].pages[1]
    data = bytearray(path.read_bytes())
    data[page1.buffers[1].position + 16] ^= 0xFF  # inside a chunk's zstd frame
    path.write_bytes(bytes(data))
    with pytest.raises(lancefile.CorruptFileError) as info:
        lancefile.read_table(path)
    msg = str(info.value)
    assert msg.count(str(path)) == 1 and re.search(r"column 0 pages 0-\d+ \(field 's'.*\): zstd buffer \d+ of", msg), msg


def test_a_forged_repetition_index_depth_is_refused_without_a_huge_allocation(tmp_path):
    """A take over many list pages parses their chunk words together; a page whose encoding
    claims a repetition index depth of 2**31 made that batch pad its index to 16 GiB (found by
    the fuzzer). The page is now left to its own parse, which names it."""
    from lancefile.fuzz.mutations import apply

    n = 20_000
    t = pa.table({"a": np.arange(n), "l": pa.array([list(range(i % 5)) for i in range(n)], pa.list_(pa.int32()))})
    path = tmp_path / "l.lance"
    lancefile.write_table(t, path, version="2.1", max_page_bytes=8 * 1024, **PLAIN)
    fm = parse(path.read_bytes())
    assert len(fm.metas[1].pages) > 3
    edit = {"path": ["mini_block_layout", "repetition_index_depth"], "op": "set", "value": 2**31}
    path.write_bytes(apply(fm, {"op": "encoding", "col": 1, "page": 1, "edit": edit}))
    reader = lancefile.LanceFileReader(path)
    rows = np.linspace(0, n - 1, 200).astype(int).tolist()
    tracemalloc.start()
    try:
        with pytest.raises(lancefile.CorruptFileError, match="repetition index .* at depth 2147483648"):
            reader.take_rows(rows).to_table()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak


def test_a_2_0_list_take_over_decreasing_offsets_is_a_clear_error(tmp_path):
    """Fuzz seed 49 case 5193: a byte flipped in a 2.0 list page's end offsets made the take's
    item indices go backwards, and the items' decoder raised a bare ArrowIndexError
    ("Index -20 out of bounds"). Rows taken in order own their items in order."""
    import numpy as np
    import pyarrow as pa

    import lancefile

    n = 300
    t = pa.table({"l": pa.array([[i, i + 1, i + 2] for i in range(n)], pa.list_(pa.int64()))})
    path = tmp_path / "l.lance"
    lancefile.write_table(t, path, version="2.0")
    data = bytearray(path.read_bytes())
    ends = (np.arange(1, n + 1, dtype="<u8") * 3).tobytes()
    at = bytes(data).find(ends)
    assert at >= 0  # the plain u64 end offsets, as 2.0 stores them
    row = 150  # its end moves far back: the next row's items start before this row's
    data[at + 8 * row : at + 8 * row + 8] = np.array([20], "<u8").tobytes()
    path.write_bytes(bytes(data))
    with pytest.raises(lancefile.CorruptFileError, match="list offsets decrease"):
        lancefile.LanceFileReader(path, verify_checksums=False).take_rows([54, 151, 241]).to_table()


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
@pytest.mark.parametrize("packed", [True, False])
def test_struct_children_of_one_name_project_by_position(tmp_path, version, packed):
    """Fuzz seed 51 case 1120: a forged schema gave a packed struct two children named 'a',
    and projecting 'packed.a' raised a bare KeyError (pyarrow's ``StructArray.field`` of a
    repeated name). Projected children are picked by position: the first of that name."""
    base = pa.StructArray.from_arrays([pa.array([1, 3]), pa.array([2, 4], pa.int16()), pa.array([5.0, 6.0])],
                                      names=["a", "a", "b"])
    md = {"lance-encoding:packed": "true"} if packed else None
    t = pa.table({"p": base}).cast(pa.schema([pa.field("p", base.type, metadata=md)]))
    path = tmp_path / "dup.lance"
    lancefile.write_table(t, path, version=version)
    for read in (lambda r: r.read_all().to_table(), lambda r: r.take_rows([1, 0]).to_table()):
        got = read(lancefile.LanceFileReader(path, columns=["p.b", "p.a"])).column("p").combine_chunks()
        assert got.type == pa.struct([("b", pa.float64()), ("a", pa.int64())])
        rows = [1, 0] if got.field(0).to_pylist() == [6.0, 5.0] else [0, 1]
        assert got.field(0).to_pylist() == [[5.0, 6.0][i] for i in rows]
        assert got.field(1).to_pylist() == [[1, 3][i] for i in rows]
        whole = read(lancefile.LanceFileReader(path)).column("p").combine_chunks()
        assert whole.type == base.type and whole.field(1).to_pylist() == [[2, 4][i] for i in rows]


def test_num_dictionary_items_past_int64_in_a_take_of_many_pages(tmp_path):
    """A page's num_dictionary_items of 2**64 - 1 (uint64 in the file) reached the compiled
    dictionary lookup of a fresh reader's take (kernels/dictblocks.py) as an int64 array:
    OverflowError. The lookup now declines it and the page's own load names it."""
    from google.protobuf import any_pb2

    from lancefile._proto import encodings_v2_1_pb2 as pb

    rng = np.random.default_rng(0)
    t = pa.table({"s": pa.array(np.array([f"w{i}" for i in range(30)])[rng.integers(0, 30, 60_000)])})
    fm = parse(_write(tmp_path, t, "2.2", max_page_bytes=16 << 10))
    pages = fm.metas[0].pages
    assert len(pages) > 2
    wrapper = any_pb2.Any.FromString(pages[1].encoding.direct.encoding)
    layout = pb.PageLayout.FromString(wrapper.value)
    assert layout.mini_block_layout.HasField("dictionary")  # the layout this is about
    layout.mini_block_layout.num_dictionary_items = 2**64 - 1
    wrapper.value = layout.SerializeToString()
    pages[1].encoding.direct.encoding = wrapper.SerializeToString()
    _refused(tmp_path, rebuild(fm, metas=fm.metas), match="page 1", ops=("all",))
    with pytest.raises(lancefile.CorruptFileError, match="page 1"):  # a take of rows in several pages
        lancefile.LanceFileReader(tmp_path / "forged.lance").take_rows(np.arange(0, 60_000, 997)).to_table()
