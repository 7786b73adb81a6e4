"""Bad datasets and bad arguments: always a lancefile.LanceError that names the file, never a raw error.

A small pylance dataset (2 fragments, a deletion file, 3 versions) is copied into a fresh directory
and damaged: the manifest truncated / garbage / wrong magic / wrong offsets, a data file missing or
truncated, a deletion file missing / garbage / of the wrong schema, an unknown reader feature flag
(the manifest re-encoded with ``lancefile._proto.table_pb2``), mixed manifest naming schemes; plus an
empty directory, a directory of unrelated files, a nonexistent path, versions that do not exist,
lancefile's file API pointed at a dataset directory, out-of-range takes, unknown columns and bad
``write_dataset`` arguments.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.dataset.conftest import (
    assert_same_table,
    decode_manifest,
    latest_manifest,
    manifest_paths,
    pylance_refuses,
    reencode_manifest,
    simple_table,
    version_of_manifest_name,
)

lance = pytest.importorskip("lance")
import lancefile

pytestmark = pytest.mark.interop


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _latest_manifest(uri) -> Path:
    return latest_manifest(uri)


def _manifest_for(uri, version: int) -> Path:
    return next(p for p in manifest_paths(uri) if version_of_manifest_name(p.name) == version)


def _read_everything(uri, **kw) -> None:
    """Open and read the whole dataset (any step may raise)."""
    ds = lancefile.dataset(uri, **kw)
    ds.count_rows()
    ds.to_table()
    for _ in ds.to_batches():
        pass
    n = ds.count_rows()
    if n:
        ds.take([0, n - 1])
    for f in ds.get_fragments():
        f.to_table()


def _expect_lance_error(uri, must_mention: str | list[str], **kw) -> lancefile.LanceError:
    """Reading ``uri`` raises a LanceError whose message contains one of ``must_mention``."""
    with pytest.raises(lancefile.LanceError) as ei:
        _read_everything(uri, **kw)
    msg = str(ei.value)
    names = [must_mention] if isinstance(must_mention, str) else must_mention
    assert any(n in msg for n in names), f"the error does not name {names}: {type(ei.value).__name__}: {msg}"
    return ei.value


# --------------------------------------------------------------------------------------------
# The base dataset
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_dataset(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("bad-base") / "base.lance")
    lance.write_dataset(simple_table(40), uri, max_rows_per_file=20)
    lance.write_dataset(simple_table(10, 40), uri, mode="append")
    lance.dataset(uri).delete("id IN (1, 2, 21, 45)")
    assert lance.dataset(uri).version == 3
    assert len(os.listdir(Path(uri) / "_deletions")) == 3
    return uri


@pytest.fixture
def ds_copy(base_dataset, tmp_path) -> str:
    dst = str(tmp_path / "copy.lance")
    shutil.copytree(base_dataset, dst)
    return dst


def _data_files(uri) -> list[str]:
    return sorted(f.path for fr in lance.dataset(uri).get_fragments() for f in fr.metadata.files)


# --------------------------------------------------------------------------------------------
# Controls: the copy and a re-encoded manifest with nothing changed still read fine
# --------------------------------------------------------------------------------------------


def test_control_copy_reads(ds_copy):
    assert_same_table(lancefile.dataset(ds_copy).to_table(), lance.dataset(ds_copy).to_table(), "copy")


def test_control_reencoded_manifest_reads(ds_copy):
    expected = lance.dataset(ds_copy).to_table()
    reencode_manifest(_latest_manifest(ds_copy), lambda m: None)
    assert_same_table(lance.dataset(ds_copy).to_table(), expected, "pylance after re-encode")
    assert_same_table(lancefile.dataset(ds_copy).to_table(), expected, "lancefile after re-encode")


# --------------------------------------------------------------------------------------------
# Damaged manifests
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncated_half", "truncated_to_10", "empty", "garbage", "wrong_magic",
                                    "offset_past_end", "negative_offset", "length_past_end", "zero_length"])
def test_damaged_latest_manifest(ds_copy, damage):
    path = _latest_manifest(ds_copy)
    raw = path.read_bytes()
    pos = struct.unpack_from("<q", raw, len(raw) - 16)[0]
    rng = np.random.default_rng(1)
    new = {
        "truncated_half": lambda: raw[: len(raw) // 2],
        "truncated_to_10": lambda: raw[:10],
        "empty": lambda: b"",
        "garbage": lambda: rng.integers(0, 256, len(raw), dtype=np.uint8).tobytes(),
        "wrong_magic": lambda: raw[:-4] + b"NOPE",
        "offset_past_end": lambda: raw[:-16] + struct.pack("<q", len(raw) + 100) + raw[-8:],
        "negative_offset": lambda: raw[:-16] + struct.pack("<q", -5) + raw[-8:],
        "length_past_end": lambda: raw[:pos] + struct.pack("<I", 1 << 30) + raw[pos + 4:],
        "zero_length": lambda: raw[:pos] + struct.pack("<I", 0) + raw[pos + 4:],
    }[damage]()
    path.write_bytes(new)
    _expect_lance_error(ds_copy, path.name)


def test_damaged_old_manifest_only_breaks_that_version(ds_copy):
    path = _manifest_for(ds_copy, 1)
    path.write_bytes(path.read_bytes()[:30])
    # the latest version still reads
    assert_same_table(lancefile.dataset(ds_copy).to_table(), lance.dataset(ds_copy).to_table(), "latest")
    _expect_lance_error(ds_copy, path.name, version=1)
    # versions() reads every manifest: pylance fails on the broken one, lancefile must name it
    pylance_refuses(lambda: lance.dataset(ds_copy).versions())
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.dataset(ds_copy).versions()
    assert path.name in str(ei.value), str(ei.value)


@pytest.mark.parametrize("flag", [64, 512, 4096, 1 << 20])
def test_unknown_reader_feature_flag(ds_copy, flag):
    path = _latest_manifest(ds_copy)

    def edit(m):
        m.reader_feature_flags |= flag
        m.writer_feature_flags |= flag

    reencode_manifest(path, edit)
    pylance_refuses(lambda: lance.dataset(ds_copy).to_table())  # the oracle refuses it too
    err = _expect_lance_error(ds_copy, [path.name, "feature"])
    assert path.name in str(err) or str(flag) in str(err), str(err)


def test_unknown_writer_feature_flag_refuses_append(ds_copy):
    """A reader flag it knows but a writer flag it does not: lancefile must not write to it."""
    path = _latest_manifest(ds_copy)

    def edit(m):
        m.writer_feature_flags |= 64

    reencode_manifest(path, edit)
    before = sorted(p.name for p in manifest_paths(ds_copy))
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(simple_table(2, 900), ds_copy, mode="append")
    assert sorted(p.name for p in manifest_paths(ds_copy)) == before


def test_both_manifest_naming_schemes(ds_copy):
    """A V1 name next to V2 names: pylance refuses ("multiple manifest naming schemes"); so must we."""
    v2 = _manifest_for(ds_copy, 2)
    shutil.copyfile(v2, Path(ds_copy) / "_versions" / "2.manifest")
    pylance_refuses(lambda: lance.dataset(ds_copy))
    _expect_lance_error(ds_copy, ["manifest", "_versions", "naming"])


def test_versions_dir_without_manifests(ds_copy):
    for p in manifest_paths(ds_copy):
        p.unlink()
    _expect_lance_error(ds_copy, [os.path.basename(ds_copy), "_versions"])


def test_manifest_version_field_differs_from_name(ds_copy):
    """The manifest's version field says 7 while its name says 3: a clear error or pylance's reading."""
    path = _latest_manifest(ds_copy)

    def edit(m):
        m.version = 7

    reencode_manifest(path, edit)
    try:
        ds = lancefile.dataset(ds_copy)
        got = ds.to_table()
    except lancefile.LanceError as exc:
        assert path.name in str(exc), str(exc)
        return
    assert_same_table(got, lance.dataset(ds_copy).to_table(), "version field != name")


# --------------------------------------------------------------------------------------------
# Data files and deletion files
# --------------------------------------------------------------------------------------------


def test_missing_data_file(ds_copy):
    victim = _data_files(ds_copy)[1]
    os.remove(Path(ds_copy) / "data" / victim)
    _expect_lance_error(ds_copy, victim)


def test_truncated_data_file(ds_copy):
    victim = _data_files(ds_copy)[0]
    p = Path(ds_copy) / "data" / victim
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    _expect_lance_error(ds_copy, victim)


def test_garbage_data_file(ds_copy):
    victim = _data_files(ds_copy)[0]
    p = Path(ds_copy) / "data" / victim
    p.write_bytes(b"\x07" * p.stat().st_size)
    _expect_lance_error(ds_copy, victim)


def test_missing_data_file_time_travel(ds_copy):
    """A data file version 1 uses (and the latest too): reading version 1 names the missing file."""
    victim = lance.dataset(ds_copy, version=1).get_fragments()[0].metadata.files[0].path
    assert victim in _data_files(ds_copy)
    os.remove(Path(ds_copy) / "data" / victim)
    _expect_lance_error(ds_copy, victim, version=1)


def _deletion_file(uri) -> Path:
    return min((Path(uri) / "_deletions").iterdir())  # fragment 0's


@pytest.mark.parametrize("damage", ["garbage", "empty", "missing", "truncated"])
def test_bad_arrow_deletion_file(ds_copy, damage):
    p = _deletion_file(ds_copy)
    assert p.suffix == ".arrow"
    raw = p.read_bytes()
    if damage == "garbage":
        p.write_bytes(np.random.default_rng(2).integers(0, 256, len(raw), dtype=np.uint8).tobytes())
    elif damage == "empty":
        p.write_bytes(b"")
    elif damage == "truncated":
        p.write_bytes(raw[: len(raw) - 20])
    else:
        p.unlink()
    _expect_lance_error(ds_copy, p.name)


@pytest.mark.parametrize("schema", [
    pa.schema([pa.field("row_id", pa.int32(), nullable=False)]),
    pa.schema([pa.field("row_id", pa.uint32(), nullable=True)]),
    pa.schema([pa.field("other", pa.uint32(), nullable=False)]),
])
def test_deletion_file_with_wrong_schema(ds_copy, schema):
    """pylance refuses any schema but exactly `row_id: uint32 not null` (DATASET-NOTES §4)."""
    p = _deletion_file(ds_copy)
    with pa.ipc.new_file(str(p), schema) as w:
        w.write_batch(pa.record_batch([pa.array([1], schema.field(0).type)], schema=schema))
    pylance_refuses(lambda: lance.dataset(ds_copy).to_table())
    _expect_lance_error(ds_copy, p.name)


def test_deletion_offset_out_of_range(ds_copy):
    """A deleted offset beyond physical_rows: a clear error or pylance's reading, never a raw error."""
    p = _deletion_file(ds_copy)
    schema = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])
    frag_id = int(p.name.split("-")[0])
    n_deleted = next(f.metadata.deletion_file.num_deleted_rows for f in lance.dataset(ds_copy).get_fragments()
                     if f.fragment_id == frag_id)
    with pa.ipc.new_file(str(p), schema) as w:
        w.write_batch(pa.record_batch([pa.array([10**6 + k for k in range(n_deleted)], pa.uint32())],
                                      schema=schema))
    try:
        got = lancefile.dataset(ds_copy).to_table()
    except lancefile.LanceError as exc:
        assert p.name in str(exc), str(exc)
        return
    try:
        want = lance.dataset(ds_copy).to_table()
    except Exception:  # noqa: BLE001 - any pylance error: it refuses the file
        pytest.fail("lancefile read a deletion file with out-of-range offsets that pylance refuses")
    assert_same_table(got, want, "out-of-range deletion offsets")


def test_bad_bitmap_deletion_file(tmp_path):
    uri = str(tmp_path / "bitmap.lance")
    lance.write_dataset(simple_table(5200), uri)
    lance.dataset(uri).delete("id < 5100")
    p = _deletion_file(uri)
    assert p.suffix == ".bin"
    p.write_bytes(b"\x3a\x30\x00\x00" + b"\xff" * 40)  # roaring cookie, then nonsense
    _expect_lance_error(uri, p.name)


@pytest.mark.parametrize("version", ["2.3", "legacy"])
def test_dataset_of_a_version_lancefile_does_not_read(tmp_path, version):
    """pylance writes 2.3 ("next", unstable) and legacy 0.1 data files; lancefile reads neither, and says
    so with an UnsupportedVersionError naming the file (a legacy file is not a corrupt file)."""
    import warnings

    uri = str(tmp_path / f"v{version}.lance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lance.write_dataset(simple_table(10), uri, data_storage_version=version)
    assert lance.dataset(uri).count_rows() == 10
    data_file = _data_files(uri)[0]
    with pytest.raises(lancefile.UnsupportedVersionError) as ei:
        _read_everything(uri)
    assert data_file in str(ei.value) or "manifest" in str(ei.value), str(ei.value)
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(simple_table(2, 10), uri, mode="append")
    assert lance.dataset(uri).version == 1


# --------------------------------------------------------------------------------------------
# Not a dataset / no such dataset / no such version
# --------------------------------------------------------------------------------------------


def test_empty_directory(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    _expect_lance_error(str(d), "empty")


def test_directory_of_unrelated_files(tmp_path):
    d = tmp_path / "junk"
    (d / "sub").mkdir(parents=True)
    (d / "readme.txt").write_text("hello")
    (d / "sub" / "x.bin").write_bytes(b"\0" * 100)
    _expect_lance_error(str(d), "junk")


def test_directory_of_lance_files(tmp_path):
    """A directory of plain Lance files (no _versions/) is not a dataset."""
    d = tmp_path / "files"
    d.mkdir()
    lancefile.write_table(simple_table(5), str(d / "a.lance"))
    _expect_lance_error(str(d), "files")


def test_nonexistent_path(tmp_path):
    _expect_lance_error(str(tmp_path / "nope" / "missing.lance"), "missing.lance")


def test_path_is_a_file(tmp_path):
    p = tmp_path / "plain.lance"
    lancefile.write_table(simple_table(5), str(p))
    _expect_lance_error(str(p), "plain.lance")


@pytest.mark.parametrize("version", [4, 99, 0, 2**40])
def test_version_that_does_not_exist(ds_copy, version):
    pylance_refuses(lambda: lance.dataset(ds_copy, version=version))
    _expect_lance_error(ds_copy, os.path.basename(ds_copy), version=version)


def test_checkout_version_that_does_not_exist(ds_copy):
    ds = lancefile.dataset(ds_copy)
    with pytest.raises(lancefile.LanceError) as ei:
        ds.checkout_version(42)
    assert os.path.basename(ds_copy) in str(ei.value) or "42" in str(ei.value), str(ei.value)


def test_negative_version(ds_copy):
    with pytest.raises(lancefile.LanceError):
        lancefile.dataset(ds_copy, version=-1).to_table()


def test_file_api_on_dataset_directory(ds_copy):
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.read_table(ds_copy)
    assert "lancefile.dataset" in str(ei.value), str(ei.value)
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.LanceFileReader(ds_copy)
    assert "lancefile.dataset" in str(ei.value), str(ei.value)


# --------------------------------------------------------------------------------------------
# Bad arguments on a good dataset
# --------------------------------------------------------------------------------------------


def test_take_out_of_range(ds_copy):
    ds = lancefile.dataset(ds_copy)
    n = ds.count_rows()
    pylance_refuses(lambda: lance.dataset(ds_copy).take([n]))  # the oracle refuses too
    for bad in ([n], [0, n + 5], [-1 - n], [2**40]):
        with pytest.raises(lancefile.LanceError):
            ds.take(bad)


def test_unknown_column(ds_copy):
    ds = lancefile.dataset(ds_copy)
    pylance_refuses(lambda: lance.dataset(ds_copy).to_table(columns=["nope"]))
    for call in (lambda: ds.to_table(columns=["nope"]), lambda: list(ds.to_batches(columns=["id", "nope"])),
                 lambda: ds.take([0], columns=["nope"]), lambda: ds.get_fragments()[0].to_table(columns=["nope"])):
        with pytest.raises(lancefile.LanceError) as ei:
            call()
        assert "nope" in str(ei.value)


@pytest.mark.parametrize("kwargs", [
    {"mode": "bogus"},
    {"max_rows_per_file": 0},
    {"max_rows_per_file": -3},
    {"data_storage_version": "9.9"},
    {"data_storage_version": "legacy"},
])
def test_bad_write_arguments(tmp_path, kwargs):
    uri = str(tmp_path / "args.lance")
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(simple_table(3), uri, **kwargs)
    assert not (Path(uri) / "_versions").exists() or not manifest_paths(uri)


@pytest.mark.parametrize("data", [42, "not a table", [1, 2, 3], None])
def test_bad_write_data(tmp_path, data):
    with pytest.raises(lancefile.LanceError):
        lancefile.write_dataset(data, str(tmp_path / "data.lance"))


def test_write_onto_plain_file(tmp_path):
    p = tmp_path / "plain.lance"
    lancefile.write_table(simple_table(3), str(p))
    before = p.read_bytes()
    for mode in ("create", "append", "overwrite"):
        with pytest.raises(lancefile.LanceError):
            lancefile.write_dataset(simple_table(3), str(p), mode=mode)
    assert p.read_bytes() == before


def test_append_onto_damaged_dataset(ds_copy):
    path = _latest_manifest(ds_copy)
    path.write_bytes(b"garbage" * 10)
    before = sorted(p.name for p in manifest_paths(ds_copy))
    with pytest.raises(lancefile.LanceError) as ei:
        lancefile.write_dataset(simple_table(3, 500), ds_copy, mode="append")
    assert path.name in str(ei.value), str(ei.value)
    assert sorted(p.name for p in manifest_paths(ds_copy)) == before


# --------------------------------------------------------------------------------------------
def _address_space_limited(fn, limit: int = 3 << 30):
    """Run ``fn`` in a child process whose address space is capped; returns what it printed."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        import lancefile
        try:
            {fn}
            print("NO ERROR")
        except lancefile.LanceError as exc:
            print("LANCE ERROR", exc)
        except BaseException as exc:
            print("OTHER", type(exc).__name__, exc)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stdout


def test_a_deletion_bitmap_of_billions_is_refused_before_it_is_listed(tmp_path):
    """A run-length bitmap of 212 KB can hold ~1e9 offsets: listing them took ~4 GB. Its size
    and largest offset are checked against the fragment first."""
    from pyroaring import BitMap

    uri = str(tmp_path / "bomb.lance")
    lancefile.write_dataset(simple_table(20_000), uri)
    lancefile.dataset(uri).delete("id > 100")
    p = _deletion_file(uri)
    assert p.suffix == ".bin"
    bm = BitMap()
    bm.add_range(0, (1 << 16) * 15_000)
    bm.run_optimize()
    p.write_bytes(bm.serialize())
    out = _address_space_limited(f"lancefile.dataset({uri!r}).to_table()")
    assert out.startswith("LANCE ERROR") and p.name in out and "for a fragment of 20000 rows" in out, out


def test_a_compressed_deletion_file_is_sized_before_it_is_decompressed(tmp_path):
    """61 KB of zstd stating 500 million row ids (2 GB) for a fragment of 300 rows: the rows and
    bytes the file's metadata states are checked before pyarrow allocates them."""
    uri = str(tmp_path / "bomb.lance")
    lancefile.write_dataset(simple_table(300), uri)
    lancefile.dataset(uri).delete("id < 100")
    p = _deletion_file(uri)
    assert p.suffix == ".arrow"
    schema = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])
    with pa.ipc.new_file(str(p), schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(pa.table([pa.array(np.zeros(500_000_000, np.uint32))], schema=schema))
    assert p.stat().st_size < 100_000
    out = _address_space_limited(f"lancefile.dataset({uri!r}).to_table()")
    assert out.startswith("LANCE ERROR") and "500000000 row ids" in out and p.name in out, out


def test_the_ipc_sizes_match_what_pyarrow_reads():
    from lancefile.datasets.ipcsize import IpcLayoutError, ipc_rows_and_bytes

    schema = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])
    for compression in (None, "zstd", "lz4"):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, schema, options=pa.ipc.IpcWriteOptions(compression=compression)) as w:
            for n in (0, 5, 3000):
                w.write_table(pa.table([pa.array(np.arange(n, dtype=np.uint32))], schema=schema))
        data = sink.getvalue().to_pybytes()
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
        rows, size = ipc_rows_and_bytes(data)
        assert rows == table.num_rows == 3005
        assert 4 * rows <= size <= 4 * rows + 3 * 64
        for cut in (len(data) // 2, len(data) - 12, 20):  # damaged metadata: an error, never a crash
            with pytest.raises(IpcLayoutError):
                ipc_rows_and_bytes(data[:cut] + data[-10:])


@pytest.mark.parametrize("edit", [lambda m: setattr(m, "max_fragment_id", (1 << 32) - 1),
                                  lambda m: setattr(m.fragments[0], "id", (1 << 64) - 1)])
def test_an_append_past_the_last_fragment_id_is_refused(tmp_path, edit):
    """max_fragment_id is a uint32: an append that would pass it was a bare protobuf ValueError."""
    uri = str(tmp_path / "ids.lance")
    t = simple_table(3)
    lancefile.write_dataset(t, uri)
    _edit_latest(uri, edit)
    files = set(os.listdir(os.path.join(uri, "data")))
    with pytest.raises(lancefile.CorruptFileError, match="largest a manifest holds"):
        lancefile.write_dataset(simple_table(2, 10), uri, mode="append")
    assert set(os.listdir(os.path.join(uri, "data"))) == files
    assert lancefile.dataset(uri).to_table().equals(t)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _rewrite_manifest_body(uri, make_body) -> None:
    """Replace the latest manifest's section with ``make_body(manifest)`` (raw protobuf bytes)."""
    path = _latest_manifest(uri)
    raw = path.read_bytes()
    pos, m = decode_manifest(raw)
    body = make_body(m)
    path.write_bytes(raw[:pos] + struct.pack("<I", len(body)) + body + struct.pack("<qhh", pos, 0, 2) + b"LANC")


def _with_fragments(m, fragment_bytes) -> bytes:
    rest = type(m)()
    rest.CopyFrom(m)
    del rest.fragments[:]
    return rest.SerializeToString() + b"".join(b"\x12" + _varint(len(f)) + f for f in fragment_bytes)


@pytest.mark.parametrize("where", ["manifest", "fragment"])
def test_a_known_field_with_the_wrong_wire_type_is_refused(tmp_path, where):
    """One flipped bit in a tag: Python's protobuf kept the field as an unknown one and the
    fragment (or the field inside it) was silently dropped; pylance refuses ("invalid wire type")."""
    uri = str(tmp_path / "wire.lance")
    lancefile.write_dataset(simple_table(9), uri, max_rows_per_file=3)

    def body(m):
        frags = [f.SerializeToString() for f in m.fragments]
        if where == "manifest":  # fragment 1's entry (field 2) tagged as field 3, version (a varint)
            out = _with_fragments(m, frags)
            entry = b"\x12" + _varint(len(frags[1])) + frags[1]
            at = out.index(entry)
            return out[:at] + b"\x1a" + out[at + 1:]
        frags[1] += b"\x22\x01\x05"  # physical_rows (field 4, a varint) as a length-delimited field
        return _with_fragments(m, frags)

    _rewrite_manifest_body(uri, body)
    with pytest.raises(lancefile.CorruptFileError, match="wrong wire type"):
        lancefile.dataset(uri)
    if where == "manifest":
        with pytest.raises(Exception, match="invalid wire type"):
            lance.dataset(uri)


def test_fields_of_a_newer_writer_are_still_read(tmp_path):
    """A field number this library does not know (a newer writer's) is allowed, as the
    reference allows them: only known fields with the wrong wire type are refused."""
    uri = str(tmp_path / "newer.lance")
    t = simple_table(9)
    lancefile.write_dataset(t, uri, max_rows_per_file=3)
    extra = b"\xb8\x3e\x07"  # field 999, a varint
    _rewrite_manifest_body(uri, lambda m: _with_fragments(m, [f.SerializeToString() + extra for f in m.fragments])
                           + extra)
    assert lancefile.dataset(uri).to_table().equals(t)
    assert lance.dataset(uri).to_table().equals(t)


def test_no_version_can_follow_the_last_version_number(tmp_path):
    uri = str(tmp_path / "last.lance")
    t = simple_table(3)
    lancefile.write_dataset(t, uri)
    _edit_latest(uri, lambda m: setattr(m, "version", (1 << 64) - 1))
    path = _latest_manifest(uri)
    path.rename(path.with_name(f"{0:020d}.manifest"))  # its name: (2**64 - 1) - version
    assert lancefile.dataset(uri).version == (1 << 64) - 1
    assert lancefile.dataset(uri).to_table().equals(t)
    with pytest.raises(lancefile.CorruptFileError, match="the last a manifest can number"):
        lancefile.write_dataset(simple_table(2, 10), uri, mode="append")
    with pytest.raises(lancefile.CorruptFileError, match="the last a manifest can number"):
        lancefile.dataset(uri).delete("id = 1")


def test_a_fragment_without_data_files_is_refused(tmp_path):
    """It read as physical_rows rows of nulls; pylance: "Fragment 0 does not contain any data"."""
    uri = str(tmp_path / "nofiles.lance")
    lancefile.write_dataset(simple_table(6), uri, max_rows_per_file=3)
    _edit_latest(uri, lambda m: m.fragments[0].ClearField("files"))
    with pytest.raises(lancefile.CorruptFileError, match="fragment 0 has 3 rows but no data files"):
        lancefile.dataset(uri).to_table()
    with pytest.raises(Exception, match="does not contain any data"):
        lance.dataset(uri).to_table()


def test_a_non_nullable_field_missing_from_a_fragment_is_refused(tmp_path):
    """Nulls were made up for it; pylance: "Found unmasked nulls for non-nullable field"."""
    uri = str(tmp_path / "missing.lance")
    t = pa.table({"id": pa.array([1, 2], pa.int64()), "x": pa.array([3, 4], pa.int64())},
                 schema=pa.schema([pa.field("id", pa.int64()), pa.field("x", pa.int64(), nullable=False)]))
    lancefile.write_dataset(t, uri)

    def forget_x(m):
        x = next(f.id for f in m.fields if f.name == "x")
        df = m.fragments[0].files[0]
        keep = [(f, c) for f, c in zip(df.fields, df.column_indices) if f != x]
        del df.fields[:], df.column_indices[:]
        df.fields.extend(f for f, _ in keep)
        df.column_indices.extend(c for _, c in keep)

    _edit_latest(uri, forget_x)
    with pytest.raises(lancefile.CorruptFileError, match="holds the field, which is not nullable"):
        lancefile.dataset(uri).to_table()
    assert lancefile.dataset(uri).to_table(columns=["id"])["id"].to_pylist() == [1, 2]


def test_the_nulls_of_a_huge_absent_column_are_not_allocated(tmp_path):
    """A field no data file holds (a column added later) reads as nulls; one typed
    fixed_size_list<int64>[1e9] asked for 24 GB for 3 rows."""
    uri = str(tmp_path / "absent.lance")
    lancefile.write_dataset(simple_table(3), uri)

    def add_field(m):
        top = max(f.id for f in m.fields) + 1
        m.fields.add(name="vec", id=top, parent_id=-1, logical_type="fixed_size_list:int64:1000000000",
                     nullable=True)

    _edit_latest(uri, add_field)
    out = _address_space_limited(f"lancefile.dataset({uri!r}).to_table()")
    assert out.startswith("LANCE ERROR") and "would take 24000000000 bytes" in out, out


def test_an_empty_bitmap_deletion_file_is_a_clear_error(tmp_path):
    uri = str(tmp_path / "empty-bitmap.lance")
    lance.write_dataset(simple_table(5200), uri)
    lance.dataset(uri).delete("id < 5100")
    p = _deletion_file(uri)
    p.write_bytes(b"")
    _expect_lance_error(uri, p.name)


@pytest.mark.parametrize("logical", ["double", "string", "bool", "fixed_size_list:int64:2"])
def test_a_manifest_type_the_data_file_does_not_hold(tmp_path, logical):
    """The bits of int64 5 read as a double (2.5e-323), and strings converted, without a word: a
    view only renames, a cast only converts within a kind (numbers, text)."""
    uri = str(tmp_path / "types.lance")
    lancefile.write_dataset(pa.table({"x": pa.array([5, 6], pa.int64())}), uri)

    def retype(m):
        f = next(f for f in m.fields if f.name == "x")
        f.logical_type = logical

    _edit_latest(uri, retype)
    if logical == "double":  # a number of another width: converted, as alter_columns would have
        assert lancefile.dataset(uri).to_table()["x"].to_pylist() == [5.0, 6.0]
    else:
        with pytest.raises(lancefile.CorruptFileError, match="the data file holds int64 where the dataset says"):
            lancefile.dataset(uri).to_table()


def test_a_schema_nested_too_deep_is_refused_not_recursed(tmp_path):
    uri = str(tmp_path / "deep.lance")
    lancefile.write_dataset(simple_table(3), uri)

    def deepen(m):
        for i in range(500):
            m.fields.add(name=f"n{i}", id=100 + i, parent_id=99 + i if i else -1,
                         logical_type="struct" if i < 499 else "int64", nullable=True)

    _edit_latest(uri, deepen)
    with pytest.raises(lancefile.CorruptFileError, match="nests deeper than the 63 levels"):
        lancefile.dataset(uri)
    t = pa.int64()
    for _ in range(63):
        t = pa.struct([("a", t)])
    with pytest.raises(lancefile.UnsupportedTypeError, match="nests deeper than the 63 levels"):
        lancefile.write_table(pa.table({"x": pa.array([None], t)}), str(tmp_path / "deep.lance.file"))


def test_a_manifest_name_past_the_last_version_is_not_a_version(tmp_path):
    """'99999999999999999999.manifest' parsed as a negative version, and versions() listed the
    copy under it: [3, 1, 2, 3]; pylance lists [1, 2, 3]."""
    from lancefile.datasets.manifest import parse_manifest_name

    uri = str(tmp_path / "stray.lance")
    for i in range(3):
        lancefile.write_dataset(simple_table(2, 10 * i), uri, mode="append" if i else "create")
    shutil.copy(_latest_manifest(uri), os.path.join(uri, "_versions", "99999999999999999999.manifest"))
    assert parse_manifest_name("99999999999999999999.manifest") is None
    assert [v["version"] for v in lancefile.dataset(uri).versions()] == [1, 2, 3]
    assert [v["version"] for v in lance.dataset(uri).versions()] == [1, 2, 3]


def test_reading_no_columns_keeps_the_live_rows(tmp_path):
    """A zero-column read of a fragment with deletions gave 0 rows (the filter of a batch with no
    columns lost its length); count_rows and pylance say 5."""
    uri = str(tmp_path / "nocols.lance")
    lancefile.write_dataset(simple_table(8), uri)
    lancefile.dataset(uri).delete("id < 3")
    ds = lancefile.dataset(uri)
    assert ds.count_rows() == 5 == lance.dataset(uri).to_table(columns=[]).num_rows
    assert ds.to_table(columns=[]).num_rows == 5
    assert sum(b.num_rows for b in ds.to_batches(columns=[])) == 5
    assert ds.get_fragments()[0].to_table(columns=[]).num_rows == 5
    # a take of no columns over several fragments: Arrow's concat_tables and take drop the rows
    lancefile.write_dataset(simple_table(8, 100), uri, mode="append")
    ds = lancefile.dataset(uri)
    assert ds.take([0, 7, 12, 7], columns=[]).num_rows == 4


# Manifests that point at the wrong things
# --------------------------------------------------------------------------------------------


def _edit_latest(uri, edit) -> None:
    reencode_manifest(_latest_manifest(uri), edit)


def _first_frag_file(m):
    return m.fragments[0].files[0]


_POINTER_DAMAGE = {
    # what is changed in the latest manifest -> (edit, which file the error must name)
    "file_size_too_big": (lambda m: setattr(_first_frag_file(m), "file_size_bytes",
                                            _first_frag_file(m).file_size_bytes + 8), "data"),
    "file_size_too_small": (lambda m: setattr(_first_frag_file(m), "file_size_bytes",
                                              _first_frag_file(m).file_size_bytes - 8), "data"),
    "physical_rows_too_many": (lambda m: setattr(m.fragments[1], "physical_rows", m.fragments[1].physical_rows + 2),
                               "data1"),
    "column_index_out_of_file": (lambda m: _first_frag_file(m).column_indices.__setitem__(1, 17), "data"),
    "fields_and_indices_differ": (lambda m: _first_frag_file(m).column_indices.__delitem__(-1), "data"),
    "num_deleted_rows_wrong": (lambda m: setattr(m.fragments[0].deletion_file, "num_deleted_rows", 1), "deletion"),
    "unknown_deletion_type": (lambda m: setattr(m.fragments[0].deletion_file, "file_type", 5), "deletion_any"),
}


@pytest.mark.parametrize("damage", list(_POINTER_DAMAGE))
def test_manifest_pointing_at_wrong_things(ds_copy, damage):
    """pylance refuses each of these too (or, for num_deleted_rows, silently miscounts)."""
    edit, names = _POINTER_DAMAGE[damage]
    before = lance.dataset(ds_copy)
    files = {"data": before.get_fragments()[0].metadata.files[0].path,
             "data1": before.get_fragments()[1].metadata.files[0].path}
    frag0 = before.get_fragments()[0]
    d = frag0.metadata.deletion_file
    _edit_latest(ds_copy, edit)
    must = f"{frag0.fragment_id}-{d.read_version}-{d.id}" if names.startswith("deletion") else files[names]
    if names != "deletion":
        pylance_refuses(lambda: lance.dataset(ds_copy).to_table())
    _expect_lance_error(ds_copy, must)


def test_data_file_path_escaping_the_dataset(ds_copy, tmp_path):
    """DataFile.path is relative to data/; '../' must not reach files outside the dataset (pylance keeps it
    inside data/ by URL-encoding the path, so it finds nothing)."""
    outside = tmp_path / "outside.lance"
    lancefile.write_table(simple_table(20), str(outside))  # a valid Lance file, 2 levels above data/

    def edit(m):
        _first_frag_file(m).path = "../../outside.lance"
        _first_frag_file(m).file_size_bytes = outside.stat().st_size

    _edit_latest(ds_copy, edit)
    assert (Path(ds_copy) / "data" / "../../outside.lance").resolve() == outside.resolve()
    pylance_refuses(lambda: lance.dataset(ds_copy).to_table())
    with pytest.raises(lancefile.LanceError) as ei:
        _read_everything(ds_copy)
    assert "outside.lance" in str(ei.value), str(ei.value)


def test_data_file_is_a_directory(ds_copy):
    victim = _data_files(ds_copy)[0]
    p = Path(ds_copy) / "data" / victim
    p.unlink()
    p.mkdir()
    _expect_lance_error(ds_copy, victim)


# --------------------------------------------------------------------------------------------
# FIFOs in place of files must be refused, not block the reader forever
# --------------------------------------------------------------------------------------------


def _read_guarded(uri, fifo: Path, wait: float = 2.0):
    """Read in a thread; if it is still blocked after ``wait`` s, unblock it by opening the FIFO for
    writing (the reader then sees EOF). Returns (blocked, exception or None)."""
    import threading
    import time

    out: dict = {}

    def run():
        try:
            _read_everything(uri)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            out["exc"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(wait)
    blocked = th.is_alive()
    if blocked:
        deadline = time.monotonic() + 10
        while th.is_alive() and time.monotonic() < deadline:
            try:
                fd = os.open(str(fifo), os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
            th.join(0.1)
    return blocked, out.get("exc")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("which", ["manifest", "data", "deletion"])
def test_fifo_instead_of_file(ds_copy, which):
    if which == "manifest":
        p = _latest_manifest(ds_copy)
    elif which == "data":
        p = Path(ds_copy) / "data" / _data_files(ds_copy)[0]
    else:
        p = _deletion_file(ds_copy)
    p.unlink()
    os.mkfifo(str(p))
    blocked, exc = _read_guarded(ds_copy, p)
    assert not blocked, f"reading the dataset blocked on the FIFO {p.name}"
    assert isinstance(exc, lancefile.LanceError), f"{type(exc).__name__}: {exc}"
    assert p.name in str(exc), str(exc)


# --------------------------------------------------------------------------------------------
# Findings of the dataset fuzzing of 2026-11-27
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("deleted", [10**6, 2**63, 2**64 - 2])
def test_more_deleted_rows_than_rows(ds_copy, deleted):
    """count_rows was negative and take raised OverflowError when a fragment's deletion file
    claimed more deleted rows than the fragment has."""
    path = _latest_manifest(ds_copy)

    def edit(m):
        frag = next(f for f in m.fragments if f.HasField("deletion_file"))
        frag.deletion_file.num_deleted_rows = deleted

    reencode_manifest(path, edit)
    _expect_lance_error(ds_copy, [path.name])
    with pytest.raises(lancefile.CorruptFileError, match="deleted rows, more than"):
        lancefile.dataset(ds_copy).count_rows()


def test_fragment_rows_past_any_count(ds_copy):
    path = _latest_manifest(ds_copy)
    reencode_manifest(path, lambda m: setattr(m.fragments[0], "physical_rows", 2**64 - 1))
    with pytest.raises(lancefile.CorruptFileError, match="rows"):
        lancefile.dataset(ds_copy).count_rows()


def test_extension_metadata_that_does_not_fit_its_field(ds_copy, tmp_path):
    """ArrowInvalid (JsonExtensionType over int64) from the schema's field metadata: now a
    CorruptFileError naming the manifest, and the writer refuses such a schema."""
    path = _latest_manifest(ds_copy)

    def edit(m):
        f = next(f for f in m.fields if f.name == "id")
        f.metadata["ARROW:extension:name"] = b"arrow.json"
        f.metadata["ARROW:extension:metadata"] = b""

    reencode_manifest(path, edit)
    _expect_lance_error(ds_copy, [path.name])
    bad = pa.schema([pa.field("id", pa.int64(), metadata={"ARROW:extension:name": "arrow.json",
                                                          "ARROW:extension:metadata": ""})])
    with pytest.raises(lancefile.InvalidInputError, match="extension metadata"):
        lancefile.write_table(pa.table({"id": [1]}).cast(bad), str(tmp_path / "x.lance"))
    assert not os.path.exists(tmp_path / "x.lance")


@pytest.mark.parametrize("seconds", [-2**63, -62135596801, 2**63 - 1])
def test_timestamp_that_is_not_a_date(ds_copy, seconds):
    """OSError / ValueError / OverflowError from datetime.fromtimestamp in versions()."""
    path = _latest_manifest(ds_copy)
    reencode_manifest(path, lambda m: setattr(m.timestamp, "seconds", seconds))
    with pytest.raises(lancefile.CorruptFileError, match="not a date"):
        lancefile.dataset(ds_copy).versions()


@pytest.mark.parametrize("rows", [2**32 + 1, 2**40, 2**61])
def test_fragment_rows_beyond_row_addresses(ds_copy, rows):
    """A fragment of 2**40 rows made its deletion file's size limit 8 TB (MemoryError) and, with
    no data files, filled 2**40 nulls (a hang growing by GBs): a fragment holds 2**32 rows at most."""
    path = _latest_manifest(ds_copy)
    reencode_manifest(path, lambda m: setattr(m.fragments[0], "physical_rows", rows))
    with pytest.raises(lancefile.CorruptFileError, match="more than a fragment can hold"):
        lancefile.dataset(ds_copy).to_table()


def test_field_moved_out_of_its_struct(tmp_path):
    """IndexError in fragment._read: a manifest whose struct child became a top-level field."""
    uri = str(tmp_path / "st.lance")
    t = pa.table({"id": pa.array(np.arange(20)),
                  "st": pa.array([{"a": i, "b": [i]} for i in range(20)])})
    lance.write_dataset(t, uri, max_rows_per_file=10)
    path = _latest_manifest(uri)

    def edit(m):
        next(f for f in m.fields if f.name == "b").parent_id = -1

    reencode_manifest(path, edit)
    _expect_lance_error(uri, ["fields", "columns", "schema"])
