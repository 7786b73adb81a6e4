"""The container: footer, offset tables and metadata checks on good, corrupt and foreign files."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile.format.container import FOOTER_LEN, read_layout
from lancefile.io import CountingSource, InMemorySource

_FOOTER = struct.Struct("<QQQIIHH4s")


def _sample_bytes(tmp_path) -> bytes:
    t = pa.table({"a": pa.array(np.arange(300, dtype=np.int64)), "s": pa.array([f"v{i}" for i in range(300)]),
                  "l": pa.array([[i, i + 1] for i in range(300)])})
    path = tmp_path / "s.lance"
    lancefile.write_table(t, path, version="2.0", statistics=False, checksums=False)  # the structural checks alone
    return path.read_bytes()


def _with_footer(data: bytes, **changes) -> bytes:
    fields = list(_FOOTER.unpack(data[-FOOTER_LEN:]))
    names = ["cm", "cmo", "gbo", "ng", "nc", "major", "minor", "magic"]
    for k, v in changes.items():
        fields[names.index(k)] = v
    return data[:-FOOTER_LEN] + _FOOTER.pack(*fields)


def test_footer_fields_match_layout(tmp_path):
    data = _sample_bytes(tmp_path)
    cm, cmo, gbo, ng, nc, major, minor, magic = _FOOTER.unpack(data[-FOOTER_LEN:])
    assert magic == b"LANC" and (major, minor) == (0, 3)
    assert nc == 4 and ng == 1  # a, s, l offsets, l items
    assert gbo + 16 * ng == len(data) - FOOTER_LEN  # GBO table right before the footer
    assert cmo + 16 * nc == gbo  # CMO table right before the GBO table
    gb0_pos, gb0_size = struct.unpack("<QQ", data[gbo : gbo + 16])
    assert gb0_pos % 64 == 0 and gb0_pos + gb0_size == cm  # schema right before column metadata


def test_metadata_arrives_in_one_read(tmp_path):
    data = _sample_bytes(tmp_path)
    src = CountingSource(InMemorySource(data))
    layout = read_layout(src)
    for i in range(layout.num_columns):
        layout.column(i)
    lancefile.LanceFileReader(src)
    assert src.requests == 2  # read_layout's one tail read, and the reader's own one


@pytest.mark.parametrize(
    "mutate, error, text",
    [
        (lambda d: b"", lancefile.NotALanceFileError, "too short"),
        (lambda d: d[:10], lancefile.NotALanceFileError, "too short"),
        (lambda d: d[:-1], lancefile.NotALanceFileError, "magic"),
        (lambda d: d[: len(d) // 2], lancefile.LanceError, ""),
        (lambda d: b"PAR1" + bytes(100) + b"PAR1", lancefile.NotALanceFileError, "not a Lance file"),
        (lambda d: _with_footer(d, ng=2**31), lancefile.CorruptFileError, "global buffers"),
        (lambda d: _with_footer(d, nc=2**31), lancefile.CorruptFileError, "columns"),
        (lambda d: _with_footer(d, ng=0), lancefile.CorruptFileError, "0 global buffers"),
        (lambda d: _with_footer(d, gbo=2**62), lancefile.CorruptFileError, "global buffers"),
        (lambda d: _with_footer(d, cm=2**60), lancefile.CorruptFileError, "column metadata"),
        (lambda d: _with_footer(d, major=0, minor=2), lancefile.UnsupportedVersionError, "legacy"),
        (lambda d: _with_footer(d, major=2, minor=9), lancefile.UnsupportedVersionError, "2.9"),
        # a 2.0 file relabelled 2.1: its list column has an offsets column 2.1 does not lay out
        (lambda d: _with_footer(d, major=2, minor=1), lancefile.CorruptFileError, "as Lance 2.1 lays fields out"),
        (lambda d: _with_footer(d, major=2, minor=3), lancefile.UnsupportedVersionError, "2.3"),
    ],
    ids=["empty", "tiny", "no-magic", "truncated", "parquet", "huge-gb-count", "huge-col-count",
         "no-schema", "gbo-past-end", "cm-past-end", "legacy", "unknown-version", "2.0-pages-labelled-2.1",
         "not-yet-2.3"],
)
def test_bad_files_give_clear_errors(tmp_path, mutate, error, text):
    bad = mutate(_sample_bytes(tmp_path))
    with pytest.raises(error) as info:
        lancefile.LanceFileReader(bad).read_all().to_table()
    assert text in str(info.value)


def test_corrupt_offset_tables(tmp_path):
    data = bytearray(_sample_bytes(tmp_path))
    cm, cmo, gbo, ng, nc, *_ = _FOOTER.unpack(bytes(data[-FOOTER_LEN:]))
    bad = bytearray(data)
    struct.pack_into("<QQ", bad, gbo, 2**40, 10)  # schema buffer past the end
    with pytest.raises(lancefile.CorruptFileError, match="global buffer"):
        lancefile.LanceFileReader(bytes(bad))
    bad = bytearray(data)
    struct.pack_into("<QQ", bad, cmo, cm, 2**33)  # column 0 metadata too large
    with pytest.raises(lancefile.CorruptFileError, match="column 0"):
        lancefile.LanceFileReader(bytes(bad)).read_all().to_table()


def test_random_corruption_never_crashes(tmp_path):
    """Flip bytes anywhere: the reader returns data or raises a LanceError, nothing else."""
    data = _sample_bytes(tmp_path)
    rng = np.random.default_rng(7)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        bad = bytearray(data)
        for pos in rng.integers(0, len(bad), 3):
            bad[pos] = int(rng.integers(0, 256))
        try:
            lancefile.LanceFileReader(bytes(bad)).read_all().to_table()
            outcomes["ok"] += 1
        except lancefile.LanceError:
            outcomes["error"] += 1
        except (pa.ArrowInvalid, OverflowError, ValueError) as exc:  # pragma: no cover - reported as a failure
            pytest.fail(f"non-Lance error {type(exc).__name__}: {exc}")
    assert outcomes["error"] > 30, outcomes  # damage to the footer/metadata/offsets is detected


def test_zero_byte_file_on_disk(tmp_path):
    p = tmp_path / "empty.lance"
    p.write_bytes(b"")
    with pytest.raises(lancefile.NotALanceFileError, match="empty.lance"):
        lancefile.LanceFileReader(str(p))


def test_missing_file():
    with pytest.raises(lancefile.LanceIOError, match="no/such"):
        lancefile.LanceFileReader("/no/such/file.lance")
