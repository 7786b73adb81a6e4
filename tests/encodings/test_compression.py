"""Tests of lancefile.encodings.compression: framing, interop with the codec libraries and
pyarrow, bad input, and buffers written by pylance 14.0.2 (test-only oracle)."""

from __future__ import annotations

import re
import struct

import lz4.block
import numpy as np
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from lancefile.encodings import kernels
from lancefile.encodings.compression import (
    MAX_DECOMPRESSED_BYTES,
    compress_buffer,
    decompress_buffer,
    decompress_many,
    normalize_scheme,
)
from lancefile.errors import CorruptFileError, UnsupportedEncodingError

SCHEMES = ["zstd", "lz4"]


def test_docstring_examples():
    import doctest

    from lancefile.encodings import compression

    assert doctest.testmod(compression, raise_on_error=True).attempted > 0


def test_framing_bytes():
    assert compress_buffer(b"abc", "lz4") == bytes.fromhex("03000000 30616263")
    z = compress_buffer(b"abc", "zstd")
    assert z[:8] == struct.pack("<Q", 3) and z[8:12] == b"\x28\xb5\x2f\xfd"
    assert compress_buffer(b"abc", "zstd", level=0) == z  # 0 = zstd's default level, 3


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=5000), st.sampled_from(SCHEMES), st.integers(1, 30))
def test_round_trip(data, scheme, repeat):
    data = data * repeat
    packed = compress_buffer(data, scheme)
    assert decompress_buffer(packed, scheme) == data
    assert decompress_buffer(memoryview(packed), scheme) == data
    assert decompress_buffer(np.frombuffer(packed, np.uint8), scheme) == data


@pytest.mark.parametrize("scheme", SCHEMES)
def test_empty(scheme):
    assert decompress_buffer(b"", scheme) == b""
    assert decompress_buffer(compress_buffer(b"", scheme), scheme) == b""


def test_scheme_names():
    assert normalize_scheme("ZSTD") == "zstd" and normalize_scheme(1) == "lz4" and normalize_scheme(2) == "zstd"
    for bad in ("snappy", 0, 3, None):
        with pytest.raises(UnsupportedEncodingError):
            normalize_scheme(bad)


# -- interop with the libraries -----------------------------------------------------------

DATA = b"".join(b"row %d of the lance interop test; " % i for i in range(5000))


def test_zstd_ours_to_library():
    packed = compress_buffer(DATA, "zstd", level=7)
    (n,) = struct.unpack_from("<Q", packed)
    assert n == len(DATA)
    assert zstandard.ZstdDecompressor().decompress(packed[8:], max_output_size=n) == DATA


def test_zstd_library_to_ours():
    # a streaming frame without a content size, as the reference's writer makes
    obj = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
    frame = obj.compress(DATA) + obj.flush()
    assert decompress_buffer(struct.pack("<Q", len(DATA)) + frame, "zstd") == DATA
    # bare frames, with and without content size, are recognised by their magic
    assert decompress_buffer(frame, "zstd") == DATA
    assert decompress_buffer(zstandard.ZstdCompressor().compress(DATA), "zstd") == DATA
    # several frames back to back
    two = zstandard.ZstdCompressor().compress(DATA[:1000]) + frame
    assert decompress_buffer(two, "zstd") == DATA[:1000] + DATA


def test_zstd_pyarrow_frame():
    pa = pytest.importorskip("pyarrow")
    frame = pa.Codec("zstd").compress(DATA, asbytes=True)
    assert decompress_buffer(frame, "zstd") == DATA
    assert decompress_buffer(struct.pack("<Q", len(DATA)) + frame, "zstd") == DATA


def test_lz4_ours_to_library():
    pa = pytest.importorskip("pyarrow")
    packed = compress_buffer(DATA, "lz4")
    assert lz4.block.decompress(packed) == DATA  # lz4's own size prefix is the same u32
    (n,) = struct.unpack_from("<I", packed)
    assert pa.Codec("lz4_raw").decompress(packed[4:], decompressed_size=n, asbytes=True) == DATA


def test_lz4_library_to_ours():
    pa = pytest.importorskip("pyarrow")
    body = pa.Codec("lz4_raw").compress(DATA, asbytes=True)
    assert decompress_buffer(struct.pack("<I", len(DATA)) + body, "lz4") == DATA
    body = lz4.block.compress(DATA, mode="high_compression", store_size=False)
    assert decompress_buffer(struct.pack("<I", len(DATA)) + body, "lz4") == DATA


# -- bad input ----------------------------------------------------------------------------


def test_zstd_corrupt():
    packed = compress_buffer(DATA, "zstd")
    with pytest.raises(CorruptFileError, match="zstd"):
        decompress_buffer(packed[:-10], "zstd")  # truncated frame
    with pytest.raises(CorruptFileError, match="announces"):
        decompress_buffer(struct.pack("<Q", len(DATA) - 1) + packed[8:], "zstd")
    with pytest.raises(CorruptFileError, match="announces"):
        decompress_buffer(struct.pack("<Q", len(DATA) + 1) + packed[8:], "zstd")
    with pytest.raises(CorruptFileError):
        decompress_buffer(b"\x05\0\0\0\0\0\0\0garbage!", "zstd")
    with pytest.raises(CorruptFileError):
        decompress_buffer(b"\x28\xb5\x2f\xfd\x00", "zstd")  # bare frame cut short


def test_absurd_sizes_rejected_before_allocating():
    small = compress_buffer(b"x" * 100, "zstd")[8:]
    with pytest.raises(CorruptFileError, match="claims"):
        decompress_buffer(struct.pack("<Q", 1 << 62) + small, "zstd")
    with pytest.raises(CorruptFileError, match="claims"):
        decompress_buffer(struct.pack("<I", 0xFFFF_FFFF) + b"\x10abcdefgh", "lz4")
    # the cap is a parameter
    with pytest.raises(CorruptFileError, match="claims"):
        decompress_buffer(compress_buffer(bytes(10_000), "zstd"), "zstd", max_output_size=9_999)
    assert MAX_DECOMPRESSED_BYTES >= 1 << 32


def test_highly_compressible_is_not_mistaken_for_absurd():
    zeros = bytes(64 << 20)
    for scheme in SCHEMES:
        packed = compress_buffer(zeros, scheme)
        assert decompress_buffer(packed, scheme) == zeros


def test_bare_zstd_frame_output_capped():
    frame = zstandard.ZstdCompressor().compress(bytes(1 << 20))
    with pytest.raises(CorruptFileError, match="limit"):
        decompress_buffer(frame, "zstd", max_output_size=1000)


def test_lz4_corrupt():
    packed = compress_buffer(DATA, "lz4")
    with pytest.raises(CorruptFileError, match="too short"):
        decompress_buffer(b"\x01\x00", "lz4")
    with pytest.raises(CorruptFileError):
        decompress_buffer(packed[:-20], "lz4")
    with pytest.raises(CorruptFileError, match="announces"):
        decompress_buffer(struct.pack("<I", len(DATA) + 7) + packed[4:], "lz4")
    with pytest.raises(CorruptFileError):
        decompress_buffer(struct.pack("<I", len(DATA) - 7) + packed[4:], "lz4")
    with pytest.raises(CorruptFileError):
        decompress_buffer(b"\0\0\0\0\x50abcde", "lz4")  # 0 announced but data follows


# -- many buffers at once (decompress_many) ---------------------------------------------


def _pack_many(buffers: list[bytes], gap: int = 3):
    """Buffers back to back with ``gap`` junk bytes before each: (data, starts, sizes)."""
    parts, starts, pos = [], [], 0
    for b in buffers:
        parts += [b"\xee" * gap, b]
        starts.append(pos + gap)
        pos += gap + len(b)
    return (np.frombuffer(b"".join(parts), np.uint8), np.array(starts, np.int64),
            np.array([len(b) for b in buffers], np.int64))


def _unpack_many(out, starts, sizes) -> list[bytes]:
    assert all(s % 8 == 0 for s in starts.tolist())
    return [bytes(out[s : s + n]) for s, n in zip(starts.tolist(), sizes.tolist())]


_PIECE = st.one_of(st.binary(max_size=300), st.builds(lambda b, k: b * k, st.binary(min_size=1, max_size=9),
                                                       st.integers(1, 400)))


@settings(max_examples=60, deadline=None)
@given(st.lists(_PIECE, max_size=8), st.sampled_from(SCHEMES), st.integers(0, 5))
def test_decompress_many_equals_one_by_one(pieces, scheme, gap):
    packed = [compress_buffer(p, scheme) for p in pieces]
    packed += [b""]  # an empty buffer decompresses to nothing, as decompress_buffer's
    out = _unpack_many(*decompress_many(*_pack_many(packed, gap), scheme))
    assert out == [decompress_buffer(p, scheme) for p in packed] == pieces + [b""]


# text-like data: LZ4 writes it as many short literals and short matches (the sequences of a
# string dictionary), which the decoder copies in whole words past their ends
_WORDS = st.lists(st.sampled_from([b"alpha", b"be", b"gamma-ray", b"x", b"delta_", b"epsilon!", b"zeta zeta",
                                   b"0123456789abcdefghij"]), max_size=500).map(b"".join)


@settings(max_examples=80, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=6), st.integers(0, 5))
def test_decompress_many_short_sequences(pieces, gap):
    packed = [compress_buffer(p, "lz4") for p in pieces]
    assert _unpack_many(*decompress_many(*_pack_many(packed, gap), "lz4")) == pieces


def test_decompress_many_zstd_bare_and_multi_frame():
    one = zstandard.ZstdCompressor().compress(b"abc" * 50)
    unknown = zstandard.ZstdCompressor(write_content_size=False).compress(b"xyz" * 70)
    framed_two = struct.pack("<Q", 360) + one + zstandard.ZstdCompressor().compress(b"q" * 210)
    framed_unknown = struct.pack("<Q", 210) + unknown
    buffers = [one, framed_two, framed_unknown, compress_buffer(b"k" * 9, "zstd")]
    got = _unpack_many(*decompress_many(*_pack_many(buffers), "zstd"))
    assert got == [decompress_buffer(b, "zstd") for b in buffers]
    assert got[1] == b"abc" * 50 + b"q" * 210


def test_decompress_many_names_the_bad_buffer():
    good = compress_buffer(DATA, "lz4")
    with pytest.raises(CorruptFileError, match="LZ4 buffer 1 of 3"):
        decompress_many(*_pack_many([good, good[:-20], good]), "lz4")
    with pytest.raises(CorruptFileError, match="LZ4 buffer 2 of 3.*too short"):
        decompress_many(*_pack_many([good, good, b"\x01\x00"]), "lz4")
    with pytest.raises(CorruptFileError, match="LZ4 buffer 0 of 1.*claim"):
        decompress_many(*_pack_many([struct.pack("<I", 0xFFFF_FFFF) + b"\x10abcdefgh"]), "lz4")
    z = compress_buffer(DATA, "zstd")
    with pytest.raises(CorruptFileError, match="zstd buffer 1 of 2"):
        decompress_many(*_pack_many([z, z[:-10]]), "zstd")
    with pytest.raises(CorruptFileError, match="zstd buffer 0 of 1.*claims"):
        decompress_many(*_pack_many([struct.pack("<Q", 1 << 62) + z[8:]]), "zstd")
    data, starts, sizes = _pack_many([good])
    with pytest.raises(CorruptFileError, match="outside"):
        decompress_many(data, starts, sizes + 1, "lz4")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SCHEMES), st.binary(min_size=1, max_size=3000), st.integers(1, 20),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, 2))
def test_decompress_many_damaged(scheme, data, repeat, flips, cut):
    """Damaged buffers: a CorruptFileError or, where the one-buffer path decodes them too,
    the same bytes; never another exception."""
    packed = bytearray(compress_buffer(data * repeat, scheme))
    for at, value in flips:
        packed[at % len(packed)] = value
    if cut:
        packed = packed[: len(packed) - cut * 7]
    buf = bytes(packed)
    try:
        want = decompress_buffer(buf, scheme)
    except CorruptFileError:
        want = None
    good = compress_buffer(data, scheme)
    for k, buffers in enumerate(([buf], [good, buf, good])):  # alone, and among good ones (zstd: one call for all)
        try:
            got = _unpack_many(*decompress_many(*_pack_many(buffers), scheme))[k]
        except CorruptFileError:
            continue
        if want is not None:
            assert got == want


_RUNS = st.lists(st.tuples(st.integers(0, 255), st.integers(1, 90)), max_size=40).map(
    lambda runs: b"".join(bytes([b]) * k for b, k in runs))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_RUNS, st.binary(max_size=200)), max_size=6))
def test_lz4_runs_compressor(pieces):
    """Blocks whose matches are byte runs: read by lz4 itself and by decompress_many, smaller
    than the input when a run is long."""
    data = np.frombuffer(b"".join(pieces), np.uint8)
    sizes = np.array([len(p) for p in pieces], np.int64)
    starts = np.cumsum(sizes) - sizes
    packed, psizes = kernels.lz4_compress_runs_many(data, starts, sizes)
    pstarts = np.cumsum(psizes) - psizes
    for p, s, z in zip(pieces, pstarts.tolist(), psizes.tolist()):
        framed = bytes(packed[s : s + z])
        assert decompress_buffer(framed, "lz4") == p
        assert lz4.block.decompress(framed) == p  # the u32 prefix is lz4's own store_size
        longest = max((len(m.group(0)) for m in re.finditer(rb"(.)\1*", p, re.S)), default=0)
        if longest >= 64:
            assert z < len(p)
    assert _unpack_many(*decompress_many(packed, pstarts, psizes, "lz4")) == pieces


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(_RUNS, st.binary(max_size=200)), max_size=6), st.sampled_from([(0, 1), (8, 8), (3, 16)]))
def test_lz4_runs_compressor_framed(pieces, frame):
    """With a gap before each block and padding after it, the blocks are the same bytes, each
    at the framed start (:class:`FramedBuffers`'s for a gap of 8), and every other byte is
    the fill byte."""
    gap, align = frame
    data = np.frombuffer(b"".join(pieces), np.uint8)
    sizes = np.array([len(p) for p in pieces], np.int64)
    starts = np.cumsum(sizes) - sizes
    plain, psizes = kernels.lz4_compress_runs_many(data, starts, sizes)
    framed, fsizes = kernels.lz4_compress_runs_many(data, starts, sizes, gap=gap, align=align, fill=0xFE)
    assert fsizes.tolist() == psizes.tolist()
    padded = -(-fsizes // align) * align
    fstarts = np.cumsum(padded + gap) - padded
    assert len(framed) == int((padded + gap).sum())
    pstarts = np.cumsum(psizes) - psizes
    other = np.ones(len(framed), bool)
    for a, b, z in zip(fstarts.tolist(), pstarts.tolist(), psizes.tolist()):
        assert bytes(framed[a : a + z]) == bytes(plain[b : b + z])
        other[a : a + z] = False
    assert np.all(framed[other] == 0xFE)
    if gap == 8 and align == 8:
        from lancefile.encodings.compressive.chunks import FramedBuffers

        assert FramedBuffers(framed, fsizes).starts.tolist() == fstarts.tolist()


def test_framed_float_pages_are_the_bytes_of_copied_ones(tmp_path, monkeypatch):
    """Split-float pages are compressed straight into the page's layout (FramedBuffers); the
    file is the one the copying path writes, and reads back (float fields encoded one at a
    time: together they take encode_many's way, tested in test_encode_many.py)."""
    import pyarrow as pa

    import lancefile
    from lancefile import writer as W
    from lancefile.encodings.structural import encoder as E

    t = pa.table({f"c{i}": np.random.default_rng(i).random(30_000) for i in range(3)})
    for version in ("2.1", "2.2"):
        seen = []
        real = E._miniblock_page
        monkeypatch.setattr(W, "_MANY_BYTES", 0)

        def spy(sh, mc, *a, **k):
            if mc.encoding.WhichOneof("compression") == "general":  # (not the statistics' own pages)
                seen.append(type(mc.buffers[0]).__name__)
            return real(sh, mc, *a, **k)

        monkeypatch.setattr(E, "_miniblock_page", spy)
        lancefile.write_table(t, tmp_path / "framed.lance", version=version)
        assert seen == ["FramedBuffers"] * 3, seen
        monkeypatch.setattr(E, "FramedBuffers", type("NotFramed", (), {}))  # the copying path
        monkeypatch.setattr(W, "_MANY_BYTES", 0)
        lancefile.write_table(t, tmp_path / "copied.lance", version=version)
        monkeypatch.undo()
        assert (tmp_path / "framed.lance").read_bytes() == (tmp_path / "copied.lance").read_bytes()
        assert lancefile.read_table(tmp_path / "framed.lance").equals(t)


# -- buffers written by pylance 14.0.2 ------------------------------------------------------


def _write(path, table, version):
    import lance.file

    with lance.file.LanceFileWriter(str(path), table.schema, version=version) as w:
        w.write_batch(table)
    return str(path)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_oracle_2_0_compressed_binary(tmp_path, scheme):
    # 2.0 Binary: buffer 0 = offsets, buffer 1 = all string bytes compressed as one unit
    pa = pytest.importorskip("pyarrow")
    lance_file = pytest.importorskip("lance.file")
    strings = [f"row {i} " * (i % 5) for i in range(3000)]
    field = pa.field("s", pa.string(), metadata={"lance-encoding:compression": scheme})
    path = _write(tmp_path / "c.lance", pa.table({"s": strings}, schema=pa.schema([field])), "2.0")
    page = lance_file.LanceFileReader(path).metadata().columns[0].pages[0]
    assert f'scheme: "{scheme}"' in page.encoding
    desc = page.buffers[1]
    with open(path, "rb") as f:
        f.seek(desc.position)
        blob = f.read(desc.size)
    assert decompress_buffer(blob, scheme) == "".join(strings).encode()


def _page_chunks(path):
    """Mini-block chunks (num_values, value buffers) of the only page of a 2.1 file."""
    from google.protobuf import any_pb2

    from lancefile._proto import encodings_v2_1_pb2, file2_pb2

    with open(path, "rb") as f:
        data = f.read()
    _cm, _cmo, gbo_start, _ngb, _ncols, _maj, _min = struct.unpack_from("<QQQIIHH", data, len(data) - 40)
    pos, size = struct.unpack_from("<QQ", data, gbo_start - 16)
    (page,) = file2_pb2.ColumnMetadata.FromString(data[pos : pos + size]).pages
    layout = encodings_v2_1_pb2.PageLayout.FromString(any_pb2.Any.FromString(page.encoding.direct.encoding).value)
    mb = layout.mini_block_layout
    assert not mb.has_large_chunk and not mb.HasField("def_compression") and not mb.HasField("rep_compression")
    meta = data[page.buffer_offsets[0] : page.buffer_offsets[0] + page.buffer_sizes[0]]
    words = np.frombuffer(meta, "<u2").tolist()
    at, remaining, chunks = page.buffer_offsets[1], mb.num_items, []
    for i, word in enumerate(words):
        nvals = 1 << (word & 15) if i < len(words) - 1 else remaining
        remaining -= nvals
        sizes = struct.unpack_from(f"<{mb.num_buffers}H", data, at + 2)
        p = at + -(-(2 + 2 * mb.num_buffers) // 8) * 8
        bufs = []
        for s in sizes:
            bufs.append(data[p : p + s])
            p += -(-s // 8) * 8
        chunks.append((nvals, bufs))
        at += ((word >> 4) + 1) * 8
    return mb, chunks


@pytest.mark.parametrize(
    "scheme, arrow_type, values",
    [
        ("zstd", "float32", np.random.default_rng(0).random(5000).astype(np.float32)),
        ("lz4", "int32", np.random.default_rng(1).integers(0, 100_000, 5000).astype(np.int32)),
    ],
)
def test_oracle_2_1_general_miniblock(tmp_path, scheme, arrow_type, values):
    # General{scheme, ByteStreamSplit{Flat}}: value buffer 0 of every chunk compressed alone
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("lance.file")
    meta = {"lance-encoding:compression": scheme, "lance-encoding:bss": "on"}
    field = pa.field("v", getattr(pa, arrow_type)(), metadata=meta)
    path = _write(tmp_path / "g.lance", pa.table({"v": values}, schema=pa.schema([field])), "2.1")
    mb, chunks = _page_chunks(path)
    general = mb.value_compression.general
    assert general.compression.scheme == {"lz4": 1, "zstd": 2}[scheme]
    assert general.values.byte_stream_split.values.flat.bits_per_value == 32
    out, start = [], 0
    for nvals, (buf,) in chunks:
        raw = decompress_buffer(buf, general.compression.scheme)
        out.append(kernels.byte_stream_split_decode(raw, 32, nvals))
        assert kernels.byte_stream_split_encode(values[start : start + nvals]) == raw
        start += nvals
    np.testing.assert_array_equal(np.concatenate(out).view(values.dtype), values)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_buffer_compression_inside_miniblock_encodings(scheme):
    """Flat.data, InlineBitpacking.values and Variable.values carry an optional compression of
    each chunk's buffer: decoded (all chunks in one pass) as the uncompressed chunks are."""
    import pyarrow as pa

    from lancefile._proto import encodings_v2_1_pb2 as pb
    from lancefile.encodings.compressive.base import Chunks, decode_miniblock
    from lancefile.encodings.compressive.encode import miniblock_values
    from lancefile.encodings.strategy import FieldParams, Strategy

    bc = pb.BufferCompression(scheme=1 if scheme == "lz4" else 2)
    cases = {"inline_bitpacking": pa.array(np.arange(3000, dtype=np.int64) * 7),
             "flat": pa.array(np.random.default_rng(0).integers(-2**62, 2**62, 3000)),
             "variable": pa.array([f"v{i}" * (i % 5) for i in range(300)])}  # (too little for FSST)
    for kind, arr in cases.items():
        mc = miniblock_values(arr, Strategy(FieldParams(), own_choices=False))
        assert mc.encoding.WhichOneof("compression") == kind
        enc = pb.CompressiveEncoding()
        enc.CopyFrom(mc.encoding)
        getattr(getattr(enc, kind), "data" if kind == "flat" else "values").CopyFrom(bc)
        pieces = [mc.buffers[0].piece(c) for c in range(len(mc.counts))]
        packed = [np.frombuffer(compress_buffer(p, scheme), np.uint8) for p in pieces]

        def chunks(parts):
            sizes = np.array([len(p) for p in parts], np.int64)
            return Chunks(np.concatenate(parts), (np.cumsum(sizes) - sizes)[None, :], sizes[None, :],
                          mc.counts, "test")

        want, got = decode_miniblock(mc.encoding, chunks(pieces)), decode_miniblock(enc, chunks(packed))
        if kind == "variable":
            assert np.array_equal(got.offsets, want.offsets) and bytes(got.data) == bytes(want.data)
        else:
            n = want.count * want.bits // 8
            assert got.count == want.count and bytes(got.data[:n]) == bytes(want.data[:n])


@pytest.mark.parametrize("sizes", [[4096, 4096, 4096, 100], [8, 16, 24], [4096, 4095, 4096]])
def test_decompress_many_zstd_whole_pieces(sizes):
    """Outputs whose sizes keep the next one aligned come back joined; others are placed
    one by one at aligned starts. Either way each buffer is its own bytes."""
    rng = np.random.default_rng(len(sizes))
    pieces = [rng.integers(0, 7, n).astype(np.uint8).tobytes() for n in sizes]
    got = _unpack_many(*decompress_many(*_pack_many([compress_buffer(p, "zstd") for p in pieces], 5), "zstd"))
    assert got == pieces


def test_entropy_compress_many_round_trip():
    from lancefile.encodings.compression import entropy_compress_many

    rng = np.random.default_rng(3)
    levels = (rng.random(10_000) < 0.01).astype("<u2")
    sizes = np.array([8192, 8192, 3616], np.int64)
    packed, out_sizes = entropy_compress_many(levels, sizes)
    assert out_sizes.sum() == len(packed) and out_sizes.sum() < levels.nbytes / 20
    out, starts, n = decompress_many(packed, np.cumsum(out_sizes) - out_sizes, out_sizes, "zstd")
    assert n.tolist() == sizes.tolist()
    assert b"".join(bytes(out[s : s + k]) for s, k in zip(starts.tolist(), n.tolist())) == levels.tobytes()


def test_zstd_frames_decompressed_in_one_call():
    """Usual zstd buffers (u64 size + a frame) are decompressed by one call of the C backend,
    each into exactly its announced size; a frame that decodes to another size, or not at
    all, makes that call give up (None), and decompress_many's frame-by-frame path names it."""
    from lancefile.encodings.compression import _zstd_batch, _zstd_usual

    pieces = [bytes(range(256)) * 9, b"k" * 4096, b"abc" * 31]
    packed = [compress_buffer(p, "zstd") for p in pieces]

    def batch(buffers):
        data, starts, sizes = _pack_many(buffers, 5)
        announced, usual, _, _ = _zstd_usual(data, starts, sizes, 1 << 30)
        assert usual.all()
        return _zstd_batch(zstandard.ZstdDecompressor(), data, starts, sizes, announced)

    got = batch(packed)
    assert got is not None and [bytes(got[i]) for i in range(len(got))] == pieces
    for delta in (1, -1):  # announced one byte more, one byte less than the frame holds
        wrong = struct.pack("<Q", len(pieces[1]) + delta) + packed[1][8:]
        assert batch([packed[0], wrong, packed[2]]) is None
        with pytest.raises(CorruptFileError, match="zstd buffer 1 of 3"):
            decompress_many(*_pack_many([packed[0], wrong, packed[2]]), "zstd")
    assert batch([packed[0][:-5], packed[1]]) is None  # a truncated frame


def test_zstd_decompressor_is_reused_per_thread_and_survives_errors():
    """One zstd decompressor a thread, reused call after call (a new one costs more than a
    chunk's decoding): a damaged call leaves it able to decode the next, and threads do not
    share it."""
    import threading

    from lancefile.encodings import compression

    pieces = [b"abc" * 500, bytes(range(256)) * 3]
    good = _pack_many([compress_buffer(p, "zstd") for p in pieces])
    first = compression._decompressor()
    assert compression._decompressor() is first
    z = compress_buffer(DATA, "zstd")
    with pytest.raises(CorruptFileError):
        decompress_many(*_pack_many([z, z[:-10]]), "zstd")
    assert _unpack_many(*decompress_many(*good, "zstd")) == pieces
    assert compression._decompressor() is first
    other = []
    t = threading.Thread(target=lambda: other.append((compression._decompressor(),
                                                      _unpack_many(*decompress_many(*good, "zstd")))))
    t.start()
    t.join()
    assert other[0][0] is not first and other[0][1] == pieces


# --- zstd frames by the compiled loop that calls libzstd (kernels.zstd) --------------------


def _without_compiled_loop(mp) -> None:
    from lancefile.encodings.kernels import zstd as zstd_kernel

    mp.setattr(zstd_kernel, "_library", lambda: None)


def test_zstd_compiled_loop_decodes_into_its_slots_and_stops_at_a_bad_frame():
    """Each frame fills exactly its slot of the output (bytes between slots untouched); a frame
    that announces more or less than it holds, is cut short or is not zstd at all is reported
    by its index, the frames before it decoded."""
    from lancefile.encodings.kernels import zstd_available, zstd_decompress_into

    if not zstd_available():  # pragma: no cover - the wheels ship the cffi build
        pytest.skip("python-zstandard without its cffi build")
    pieces = [bytes(range(256)) * 9, b"k" * 4096, b"abc" * 31]
    frames = [zstandard.ZstdCompressor().compress(p) for p in pieces]

    def run(frames, announced):
        raw = np.frombuffer(b"".join(frames), np.uint8)
        starts = np.cumsum([0] + [len(f) for f in frames[:-1]])
        out_starts = np.cumsum([0] + [a + 8 for a in announced[:-1]])
        out = np.full(int(out_starts[-1]) + announced[-1] + 8, 0xEE, np.uint8)
        bad = zstd_decompress_into(raw, starts, [len(f) for f in frames], out, out_starts, np.array(announced))
        return bad, out, out_starts

    sizes = [len(p) for p in pieces]
    bad, out, at = run(frames, sizes)
    assert bad == -1
    assert [bytes(out[a : a + n]) for a, n in zip(at, sizes)] == pieces
    assert all(bytes(out[a + n : a + n + 8]) == b"\xee" * 8 for a, n in zip(at, sizes))  # nothing past a slot
    for delta in (1, -1):  # the middle frame announced one byte more, one less than it holds
        bad, out, at = run(frames, [sizes[0], sizes[1] + delta, sizes[2]])
        assert bad == 1 and bytes(out[: sizes[0]]) == pieces[0]
        assert bytes(out[at[1] + sizes[1] + delta : at[1] + sizes[1] + delta + 8]) == b"\xee" * 8
    assert run([frames[0], frames[1][:-7], frames[2]], sizes)[0] == 1  # cut short
    assert run([frames[0], frames[1], b"\x00" * 40], sizes)[0] == 2  # not a frame


def test_zstd_compiled_loop_context_per_thread():
    import threading

    from lancefile.encodings.kernels import zstd as zstd_kernel

    if not zstd_kernel.zstd_available():  # pragma: no cover
        pytest.skip("python-zstandard without its cffi build")
    mine = zstd_kernel._context()
    assert zstd_kernel._context() == mine  # made once a thread
    other = []
    t = threading.Thread(target=lambda: other.append(zstd_kernel._context()))
    t.start()
    t.join()
    assert other[0] != mine


@pytest.mark.parametrize("compiled", [True, False])
def test_decompress_many_zstd_with_and_without_the_compiled_loop(compiled):
    """The compiled loop, python-zstandard's batch call and the frame-by-frame path give the
    same bytes, and the same errors naming the buffer."""
    pieces = [bytes(range(256)) * 9, b"", b"k" * 4096, b"abc" * 31]
    packed = [compress_buffer(p, "zstd") for p in pieces]
    z = compress_buffer(DATA, "zstd")
    with pytest.MonkeyPatch.context() as mp:
        if not compiled:
            _without_compiled_loop(mp)
        assert _unpack_many(*decompress_many(*_pack_many(packed, 3), "zstd")) == pieces
        assert _unpack_many(*decompress_many(*_pack_many(packed[:1]), "zstd")) == pieces[:1]
        for delta in (1, -1):
            wrong = struct.pack("<Q", len(pieces[2]) + delta) + packed[2][8:]
            with pytest.raises(CorruptFileError, match="zstd buffer 2 of 4"):
                decompress_many(*_pack_many([packed[0], packed[1], wrong, packed[3]]), "zstd")
        with pytest.raises(CorruptFileError, match="zstd buffer 1 of 2"):
            decompress_many(*_pack_many([z, z[:-10]]), "zstd")


def test_decompress_many_zstd_uses_the_compiled_loop(monkeypatch):
    from lancefile.encodings.kernels import zstd as zstd_kernel

    if not zstd_kernel.zstd_available():  # pragma: no cover
        pytest.skip("python-zstandard without its cffi build")
    from lancefile.encodings import compression

    monkeypatch.setattr(compression, "_zstd_batch", lambda *a: pytest.fail("the batch call was used"))
    pieces = [b"abc" * 500, bytes(range(256)) * 3]
    assert _unpack_many(*decompress_many(*_pack_many([compress_buffer(p, "zstd") for p in pieces]), "zstd")) == pieces


def test_zstd_plan_agrees_with_the_usual_form_rule():
    """The compiled plan says, buffer by buffer, what the usual-form rule says in plain Python
    (a u64 size, not a bare frame, 0 < size <= min(cap, 64 x frame + slack)), and lays the
    usual buffers' outputs out aligned, the others taking no room."""
    from lancefile.encodings import compression as C

    def rule(buf: bytes, cap: int):
        if len(buf) < 12 or (buf[:4] == C._ZSTD_MAGIC and not buf[4] & C._ZSTD_FHD_RESERVED):
            return 0
        (size,) = struct.unpack_from("<Q", buf)
        limit = min(cap, C._ZSTD_FAST_MAX, C._ZSTD_FAST_RATIO * (len(buf) - 8) + C._ZSTD_SLACK)
        return size if 0 < size <= limit else 0

    good = [compress_buffer(p, "zstd") for p in (b"abc" * 50, bytes(range(256)) * 3, b"z" * 5)]
    bare = compress_buffer(b"q" * 40, "zstd")[8:]  # a frame without its size
    huge = struct.pack("<Q", 1 << 30) + good[0][8:]  # announces far past the fast limit
    zero = struct.pack("<Q", 0) + good[0][8:]
    short = good[2][:11]
    cap = C.MAX_DECOMPRESSED_BYTES
    for buffers in (good, [good[0], bare, good[1], huge, zero, short, good[2]]):
        for align in (1, 8):
            raw, starts, sizes = _pack_many(buffers)
            announced, usual, out_starts, total = C._zstd_usual(raw, starts, sizes, cap, align)
            want = [rule(b, cap) for b in buffers]
            assert announced.tolist() == want and usual.tolist() == [w > 0 for w in want]
            padded = [w + -w % align for w in want]
            assert out_starts.tolist() == [sum(padded[:i]) for i in range(len(want))] and total == sum(padded)
    assert C._zstd_usual(*_pack_many(good), cap)[0].tolist() == [150, 768, 5]
    # and decompress_many still reads a batch with odd buffers, through the careful path
    raw, starts, sizes = _pack_many([good[0], bare, good[1]])
    assert _unpack_many(*decompress_many(raw, starts, sizes, "zstd")) == [b"abc" * 50, b"q" * 40, bytes(range(256)) * 3]


def test_lz4_frames_split_and_checked_in_one_pass():
    """Blocks, sizes and announced sizes of framed LZ4 buffers (an empty one announcing 0);
    a buffer too short for its prefix is named before one that announces too much."""
    from lancefile.encodings.compression import lz4_frames

    good = compress_buffer(b"xyz" * 40, "lz4")
    over = struct.pack("<I", 1 << 20) + b"\x10abcdefgh"
    raw, starts, sizes = _pack_many([good, b"", good])
    block_starts, block_sizes, announced = lz4_frames(raw, starts, sizes)
    assert block_starts.tolist() == [starts[0] + 4, starts[1], starts[2] + 4]
    assert block_sizes.tolist() == [len(good) - 4, 0, len(good) - 4] and announced.tolist() == [120, 0, 120]
    with pytest.raises(CorruptFileError, match="LZ4 buffer 2 of 3: 2 bytes is too short"):
        lz4_frames(*_pack_many([over, good, b"\x01\x00"]))
    with pytest.raises(CorruptFileError, match=r"LZ4 buffer 1 of 2: 9 compressed bytes claim 1048576 .*limit of 2359\)"):
        lz4_frames(*_pack_many([good, over]))
