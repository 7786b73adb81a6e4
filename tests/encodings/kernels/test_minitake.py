"""The one-pass take out of the usual mini-block chunks (:mod:`lancefile.encodings.kernels.minitake`):
the entries it gives against the chunks' own bytes, every way out of the usual form sending the
take the general way, and takes of lancefile's files going through it."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

import lancefile
from lancefile.cli import inspect_file
from lancefile.encodings import kernels
from lancefile.encodings.kernels.minitake import miniblock_take_flat
from lancefile.encodings.structural import mini_block
from tests.encodings.kernels.conftest import PROPS


def _zstd(raw: bytes) -> bytes:
    return struct.pack("<Q", len(raw)) + zstandard.ZstdCompressor().compress(raw)


def _pad(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 8)


def _chunk(values: np.ndarray, defs: np.ndarray | None, zvals: bool, zdefs: bool, bare: bool = False) -> bytes:
    """A 2.2 chunk (u32 buffer sizes): ``u16 levels [u16 def size] u32 value size``, padded
    (``bare``: the values a zstd frame without Lance's size prefix)."""
    vb = values.tobytes()
    vb = zstandard.ZstdCompressor().compress(vb) if bare else _zstd(vb) if zvals else vb
    head = struct.pack("<H", len(values))
    db = b""
    if defs is not None:
        db = defs.astype("<u2").tobytes()
        db = _zstd(db) if zdefs else db
        head += struct.pack("<H", len(db))
    head += struct.pack("<I", len(vb))
    return _pad(head) + _pad(db) + _pad(vb)


def _chunks(parts):
    blobs = [_chunk(*p) for p in parts]
    base = np.cumsum([0] + [len(b) for b in blobs])
    return np.frombuffer(b"".join(blobs), np.uint8), base[:-1], base[1:]


@PROPS
@given(st.data(), st.sampled_from([1, 2, 4, 8]), st.booleans(), st.booleans(), st.booleans())
def test_taken_entries_are_the_chunks_own(data, width, has_def, zvals, zdefs):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    counts = np.array(data.draw(st.lists(st.integers(0, 300), min_size=1, max_size=6)), np.int64)
    dtype = np.dtype(f"<u{width}")
    vals = [rng.integers(0, 2 ** (8 * width) - 1, n, dtype=np.uint64).astype(dtype) for n in counts]
    defs = [rng.integers(0, 3, n).astype(np.uint16) if has_def else None for n in counts]
    raw, base, ends = _chunks([(v, d, zvals, zdefs) for v, d in zip(vals, defs)])
    total = int(counts.sum())
    if not total:
        return
    positions = np.sort(rng.choice(total, data.draw(st.integers(1, min(total, 40))), replace=False))
    got = miniblock_take_flat(raw, base, ends, counts, positions, has_def, 4, width, zvals, zdefs)
    assert got is not None
    assert np.array_equal(got[0].view(dtype), np.concatenate(vals)[positions])
    if has_def:
        assert np.array_equal(got[1], np.concatenate(defs)[positions])
    else:
        assert got[1] is None


@PROPS
@given(st.data(), st.sampled_from([2, 4, 8]), st.booleans(), st.booleans())
def test_split_values_are_taken_from_their_streams(data, width, zvals, has_def):
    """ByteStreamSplit values (lancefile's integers and floats): byte b of a chunk's value i at
    ``b * count + i``, under zstd or bare."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    counts = np.array(data.draw(st.lists(st.integers(1, 300), min_size=1, max_size=5)), np.int64)
    dtype = np.dtype(f"<u{width}")
    vals = [rng.integers(0, 2 ** (8 * width) - 1, n, dtype=np.uint64).astype(dtype) for n in counts]
    # the streams, as n values of the width (so the chunk counts n)
    split = [np.ascontiguousarray(v.view(np.uint8).reshape(-1, width).T).reshape(-1).view(dtype) for v in vals]
    defs = [rng.integers(0, 3, n).astype(np.uint16) if has_def else None for n in counts]
    raw, base, ends = _chunks([(s, d, zvals, True) for s, d in zip(split, defs)])
    total = int(counts.sum())
    positions = np.sort(rng.choice(total, data.draw(st.integers(1, min(total, 40))), replace=False))
    got = miniblock_take_flat(raw, base, ends, counts, positions, has_def, 4, width, zvals, True, True)
    assert got is not None
    assert np.array_equal(got[0].view(dtype), np.concatenate(vals)[positions])
    if has_def:
        assert np.array_equal(got[1], np.concatenate(defs)[positions])


def _usual():
    vals = [np.arange(10, dtype=np.uint8), np.arange(20, 30, dtype=np.uint8)]
    defs = [np.zeros(10, np.uint16), np.ones(10, np.uint16)]
    return vals, defs


@pytest.mark.parametrize("damage", ["bare frame", "announces too little", "announces too much", "bad frame",
                                    "short chunk", "long chunk", "decodes short", "level count", "position past the chunks", "unsorted",
                                    "negative position", "flat values too short", "levels announce too little", "flat levels too short"])
def test_out_of_the_usual_form_goes_the_general_way(damage):
    vals, defs = _usual()
    zvals, zdefs = damage != "flat values too short", True
    parts = [(v, d, zvals, zdefs) for v, d in zip(vals, defs)]
    raw, base, ends = _chunks(parts)
    raw = raw.copy()
    counts, positions, has_def = np.array([10, 10]), np.array([3, 15]), True
    header = 8  # u16 levels, u16 def size, u32 value size
    def_bytes = len(_pad(_zstd(defs[0].astype("<u2").tobytes())))
    v_at = header + def_bytes  # the first chunk's value buffer
    if damage == "bare frame":  # the general path reads those; this kernel leaves them to it
        raw, base, ends = _chunks([(*parts[0], True), parts[1]])
    elif damage == "announces too little":
        raw[v_at : v_at + 8] = np.frombuffer(struct.pack("<Q", 9), np.uint8)
    elif damage == "announces too much":
        raw[v_at : v_at + 8] = np.frombuffer(struct.pack("<Q", 1 << 40), np.uint8)
    elif damage == "bad frame":
        raw[v_at + 12 : v_at + 16] ^= 0xFF
    elif damage == "short chunk":
        ends = ends.copy()
        ends[0] -= 8
    elif damage == "long chunk":  # bytes after the buffers, inside the chunk
        ends = ends.copy()
        ends[0] += 8
    elif damage == "decodes short":  # a frame of 9 values, announcing 9, in a chunk of 10
        raw, base, ends = _chunks([(vals[0][:9], defs[0], True, True), parts[1]])
        raw = raw.copy()
        raw[0] = 10
    elif damage == "level count":
        raw[0] = 9
    elif damage == "position past the chunks":
        positions = np.array([3, 20])
    elif damage == "unsorted":
        positions = np.array([15, 3])
    elif damage == "negative position":
        positions = np.array([-1, 3])
    elif damage == "flat values too short":  # no levels to give the count away
        raw, base, ends = _chunks([(v, None, False, False) for v in vals])
        counts, has_def = np.array([11, 9]), False
    elif damage == "flat levels too short":  # 9 bare levels for 10 values
        raw, base, ends = _chunks([(vals[0], defs[0][:9], False, False), (vals[1], defs[1], False, False)])
        zvals = zdefs = False
    elif damage == "levels announce too little":
        raw[header : header + 8] = np.frombuffer(struct.pack("<Q", 4), np.uint8)
    assert miniblock_take_flat(raw, base, ends, counts, positions, has_def, 4, 1, zvals, zdefs) is None


def test_the_usual_chunks_are_taken():
    """The undamaged form of the cases above: the kernel answers (so each None above is the damage)."""
    vals, defs = _usual()
    for zvals in (True, False):
        raw, base, ends = _chunks([(v, d, zvals, True) for v, d in zip(vals, defs)])
        got = miniblock_take_flat(raw, base, ends, np.array([10, 10]), np.array([3, 15]), True, 4, 1, zvals, True)
        assert got[0].tolist() == [3, 25] and got[1].tolist() == [0, 1]


@pytest.fixture()
def coded(tmp_path):
    rng = np.random.default_rng(0)
    n = 50_000
    words = np.array([f"c{i}" for i in range(20)])[np.minimum(rng.geometric(0.3, n) - 1, 19)]
    t = pa.table({"s": pa.array(words, mask=rng.random(n) < 0.02),
                  "k": pa.array(rng.integers(-2**62, 2**62, n))})
    path = tmp_path / "coded.lance"
    lancefile.write_table(t, path)
    encs = [c["pages"][0]["encoding"] for c in inspect_file(str(path))["columns"]]
    assert "def=zstd" in encs[0] and "values=zstd" in encs[0], encs[0]  # the layouts these tests are about
    assert "values=flat(64)" in encs[1] and "def=" not in encs[1], encs[1]
    return path, t


def test_lancefile_files_take_through_it(coded, monkeypatch):
    path, t = coded
    answered = []
    real = kernels.miniblock_take_flat
    monkeypatch.setattr(kernels, "miniblock_take_flat", lambda *a: answered.append(real(*a)) or answered[-1])
    monkeypatch.setattr(mini_block.MiniBlockPage, "_levels_at",
                        staticmethod(lambda *a: pytest.fail("the take went the general way")))
    rng = np.random.default_rng(1)
    nulls = np.flatnonzero(t.column("s").is_null().to_numpy(zero_copy_only=False))
    for idx in (np.sort(rng.choice(t.num_rows, 100, replace=False)), np.array([0, 4095, 4096, t.num_rows - 1]),
                nulls[:50]):
        got = lancefile.LanceFileReader(path).take_rows(idx).to_table()
        assert got.equals(t.take(idx)), idx
    assert answered and all(a is not None for a in answered)


def test_a_damaged_frame_is_named_by_the_general_path(coded, tmp_path):
    """A zstd frame damaged in the file: the kernel declines, the general path names the page."""
    path, t = coded
    reader = lancefile.LanceFileReader(path)
    data = bytearray(path.read_bytes())
    page = reader.metadata().columns[0].pages[0]
    at = page.buffers[1].position + 64  # inside the page's chunks, past the first chunk's header
    data[at : at + 16] = b"\xff" * 16
    bad = tmp_path / "bad.lance"
    bad.write_bytes(bytes(data))
    with pytest.raises(lancefile.CorruptFileError):
        lancefile.LanceFileReader(bad, verify_checksums=False).take_rows(np.arange(0, 4000, 37)).to_table()


def test_split_integers_of_lancefile_files_take_through_it(tmp_path, monkeypatch):
    """lancefile's sequential ids (zstd over byte streams) take through the kernel."""
    t = pa.table({"id": np.arange(300_000, dtype=np.int64), "f": np.linspace(0, 1, 300_000, dtype=np.float32)})
    path = tmp_path / "ids.lance"
    lancefile.write_table(t, path)
    encs = [c["pages"][0]["encoding"] for c in inspect_file(str(path))["columns"]]
    assert all("byte_stream_split" in e for e in encs), encs  # the layout this test is about
    answered = []
    real = kernels.miniblock_take_flat
    monkeypatch.setattr(kernels, "miniblock_take_flat", lambda *a: answered.append(real(*a)) or answered[-1])
    idx = np.sort(np.random.default_rng(2).choice(t.num_rows, 100, replace=False))
    assert lancefile.LanceFileReader(path).take_rows(idx).to_table().equals(t.take(idx))
    assert answered and all(a is not None for a in answered)
