"""Tests of lancefile.encodings.kernels.

Three tiers: exact bytes for small hand-made cases, hypothesis properties (round trips,
compiled kernels against their ``_py`` twins), and pages written by pylance 14.0.2 (the
oracle, used only here) decoded with our kernels and re-encoded byte for byte.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError, InvalidInputError

UINTS = [np.uint8, np.uint16, np.uint32, np.uint64]
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random_uints(seed: int, n: int, dtype, width: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64, endpoint=True)
    if width < 64:
        raw &= np.uint64((1 << width) - 1)
    return raw.astype(dtype)


@st.composite
def dtype_width(draw):
    dtype = draw(st.sampled_from(UINTS))
    bits = np.dtype(dtype).itemsize * 8
    return dtype, draw(st.integers(0, bits))


# --------------------------------------------------------------------------------------
# FastLanes
# --------------------------------------------------------------------------------------


def test_fastlanes_layout_u8_width1():
    # Row r of lane l holds value r*128 + l for T=8: value 389 = row 3, lane 5.
    v = np.zeros(1024, np.uint8)
    v[3 * 128 + 5] = 1
    packed = k.fastlanes_pack(v, 1)
    assert packed.size == 128
    assert packed[5] == 1 << 3 and np.count_nonzero(packed) == 1


def test_fastlanes_layout_follows_fl_order_u16():
    # T=16: rows 8..15 take FL_ORDER[1] = 4, i.e. values 64 + (r%8)*128 + lane.
    v = np.zeros(1024, np.uint16)
    v[64 + 7] = 1  # row 8, lane 7
    packed = k.fastlanes_pack(v, 1)
    assert packed.size == 64 and packed[7] == 1 << 8 and np.count_nonzero(packed) == 1


def test_fastlanes_word_crossing_u32_width3():
    # Row 10 of lane 0 is bits 30..32: it straddles words 0 and 1 (word k of lane l at k*32 + l).
    v = np.zeros(1024, np.uint32)
    row = 10
    idx = k.FL_ORDER[row // 8] * 16 + (row % 8) * 128
    v[idx] = 0b111
    packed = k.fastlanes_pack(v, 3)
    assert packed[0] == np.uint32(0b11 << 30)
    assert packed[32] == 1
    assert np.count_nonzero(packed) == 2


@PROPS
@given(dtype_width(), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_fastlanes_round_trip_and_matches_py(dw, chunks, seed):
    dtype, width = dw
    v = _random_uints(seed, 1024 * chunks, dtype, width)
    packed = k.fastlanes_pack(v, width)
    assert packed.dtype == np.dtype(dtype)
    assert packed.size == chunks * 1024 * width // (np.dtype(dtype).itemsize * 8)
    wpc = packed.size // chunks
    np.testing.assert_array_equal(packed[:wpc], k.fastlanes_pack_py(v[:1024], width))  # the slow twin: 1 chunk
    n = 1024 * chunks - seed % 1000
    out = k.fastlanes_unpack(packed, width, n, dtype)
    np.testing.assert_array_equal(out, v[:n])
    np.testing.assert_array_equal(k.fastlanes_unpack_py(packed[:wpc], width, min(n, 1024), dtype), v[: min(n, 1024)])
    # and from raw bytes
    np.testing.assert_array_equal(k.fastlanes_unpack(packed.tobytes(), width, n, dtype), v[:n])


@pytest.mark.parametrize("dtype", UINTS)
def test_fastlanes_width_edges(dtype):
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(7, 2048, dtype, bits)
    assert k.fastlanes_pack(v, 0).size == 0
    np.testing.assert_array_equal(k.fastlanes_unpack(np.empty(0, dtype), 0, 1500, dtype), np.zeros(1500, dtype))
    full = k.fastlanes_pack(v, bits)
    assert sorted(full.tolist()) == sorted(v.tolist())  # a permutation
    np.testing.assert_array_equal(k.fastlanes_unpack(full, bits, 2048, dtype), v)
    # high bits are dropped when packing narrower
    np.testing.assert_array_equal(k.fastlanes_unpack(k.fastlanes_pack(v, 1), 1, 2048, dtype), v & 1)


def test_fastlanes_unpack_signed_view():
    v = np.arange(-512, 512, dtype=np.int16)
    packed = k.fastlanes_pack(v, 16)
    np.testing.assert_array_equal(k.fastlanes_unpack(packed, 16, 1024, np.int16), v)


def test_fastlanes_errors():
    with pytest.raises(InvalidInputError):
        k.fastlanes_pack(np.zeros(1000, np.uint8), 3)
    with pytest.raises(InvalidInputError):
        k.fastlanes_pack(np.zeros(1024, np.uint8), 9)
    with pytest.raises(CorruptFileError):
        k.fastlanes_unpack(np.zeros(383, np.uint8), 3, 1024, np.uint8)
    with pytest.raises(CorruptFileError):
        k.fastlanes_unpack(b"\0" * 7, 3, 10, np.uint32)  # not whole words
    with pytest.raises(InvalidInputError):
        k.fastlanes_unpack(b"", 0, 10, np.float32)


# --------------------------------------------------------------------------------------
# InlineBitpacking / OutOfLineBitpacking / 2.0 bitpacking
# --------------------------------------------------------------------------------------


def test_inline_bitpacking_sizes_from_notes():
    buf = k.inline_bitpacking_encode((np.arange(1000) % 8).astype(np.uint8))
    assert len(buf) == 385 and buf[0] == 3
    assert k.inline_bitpacking_encode(np.zeros(700, np.uint32)) == b"\0\0\0\0"


@PROPS
@given(st.sampled_from(UINTS), st.integers(1, 3000), st.integers(0, 2**32 - 1), st.data())
def test_inline_bitpacking_round_trip(dtype, n, seed, data):
    bits = np.dtype(dtype).itemsize * 8
    # a different width in every chunk
    widths = [data.draw(st.integers(0, bits)) for _ in range(-(-n // 1024))]
    v = np.concatenate([_random_uints(seed + i, 1024, dtype, w) for i, w in enumerate(widths)])[:n]
    buf = k.inline_bitpacking_encode(v)
    out = k.inline_bitpacking_decode(buf, bits, n)
    np.testing.assert_array_equal(out, v)
    np.testing.assert_array_equal(k.inline_bitpacking_decode_py(buf, bits, n), v)
    # trailing padding after the last chunk is ignored
    np.testing.assert_array_equal(k.inline_bitpacking_decode(buf + b"\xfe" * 7, bits, n), v)


def test_inline_bitpacking_corrupt():
    buf = k.inline_bitpacking_encode(np.arange(2048, dtype=np.uint32))
    with pytest.raises(CorruptFileError, match="group 1: the buffer ends inside"):
        k.inline_bitpacking_decode(buf[:-4], 32, 2048)
    with pytest.raises(CorruptFileError, match="width word is above 16"):
        k.inline_bitpacking_decode(b"\x11\x00" + b"\0" * 4000, 16, 10)
    with pytest.raises(CorruptFileError):
        k.inline_bitpacking_decode(b"", 8, 1)
    with pytest.raises(CorruptFileError):
        k.inline_bitpacking_decode_py(buf[:-4], 32, 2048)


def test_out_of_line_tail_choice_from_notes():
    # 2-bit u16 levels, 1132 of them: 256 B packed + 108 raw u16 (216 B).
    levels = (np.arange(1132) % 4).astype(np.uint16)
    buf = k.out_of_line_bitpacking_encode(levels, 2)
    assert len(buf) == 256 + 216
    np.testing.assert_array_equal(k.out_of_line_bitpacking_decode(buf, 16, 2, 1132), levels)
    # 1-bit levels with a 164-value tail: padding is cheaper, two packed chunks.
    levels = (np.arange(1188) % 2).astype(np.uint16)
    buf = k.out_of_line_bitpacking_encode(levels)
    assert len(buf) == 256
    np.testing.assert_array_equal(k.out_of_line_bitpacking_decode(buf, 16, 1, 1188), levels)


@PROPS
@given(dtype_width(), st.integers(0, 3000), st.integers(0, 2**32 - 1))
def test_out_of_line_round_trip(dw, n, seed):
    dtype, width = dw
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(seed, n, dtype, width)
    buf = k.out_of_line_bitpacking_encode(v, width)
    tail = n % 1024
    wpc = 1024 * width // bits
    raw_tail = tail and not width * (1024 - tail) < (bits - width) * tail
    expected = (n // 1024) * wpc + (tail if raw_tail else (wpc if tail else 0))
    assert len(buf) == expected * bits // 8
    np.testing.assert_array_equal(k.out_of_line_bitpacking_decode(buf, bits, width, n), v)
    np.testing.assert_array_equal(k.out_of_line_bitpacking_decode_py(buf, bits, width, n), v)


def test_out_of_line_corrupt():
    with pytest.raises(CorruptFileError):
        k.out_of_line_bitpacking_decode(b"\0" * 100, 16, 1, 2048)


@PROPS
@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]),
       st.integers(0, 64), st.integers(0, 300), st.integers(0, 2**32 - 1))
def test_bitpacked_sequential_round_trip(dtype, width, n, seed):
    bits = np.dtype(dtype).itemsize * 8
    width = min(width, bits)
    signed = np.dtype(dtype).kind == "i"
    rng = np.random.default_rng(seed)
    if signed and width:
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        v = rng.integers(lo, hi, n, endpoint=True).astype(dtype)
    else:
        v = _random_uints(seed, n, np.dtype(f"u{bits // 8}"), width).view(dtype)
    buf = k.bitpacked_sequential_encode(v, width)
    assert len(buf) == -(-n * width // 8)
    out = k.bitpacked_sequential_decode(buf, width, n, signed, dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, v)
    np.testing.assert_array_equal(k.bitpacked_sequential_decode_py(buf, width, n, signed, dtype), v)


def test_bitpacked_sequential_bytes():
    # 1, 2, 3 at 2 bits: 01 | 10 | 11 from the low bit up = 0b00111001
    assert k.bitpacked_sequential_encode(np.array([1, 2, 3], np.uint8), 2) == b"\x39"
    out = k.bitpacked_sequential_decode(b"\x39", 2, 3, True, np.int32)
    np.testing.assert_array_equal(out, [1, -2, -1])
    with pytest.raises(CorruptFileError):
        k.bitpacked_sequential_decode(b"\x39", 3, 3, False, np.uint8)


@PROPS
@given(dtype_width(), st.integers(1, 2500), st.integers(0, 2**32 - 1))
def test_bitpacked_for_non_neg_round_trip(dw, n, seed):
    dtype, width = dw
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(seed, n, dtype, width)
    buf = k.bitpacked_for_non_neg_encode(v, width)
    assert len(buf) == -(-n // 1024) * 128 * width
    np.testing.assert_array_equal(k.bitpacked_for_non_neg_decode(buf, width, bits, n), v)
    np.testing.assert_array_equal(k.bitpacked_for_non_neg_decode_py(buf, width, bits, n), v)


# --------------------------------------------------------------------------------------
# FSST
# --------------------------------------------------------------------------------------


def _table(symbols: list[bytes], switch: int = 1) -> bytes:
    return k.fsst_make_symbol_table(
        np.array([int.from_bytes(s.ljust(8, b"\0"), "little") for s in symbols], dtype=np.uint64),
        np.array([len(s) for s in symbols], dtype=np.uint8),
        bool(switch),
    )


def test_fsst_table_header_from_notes():
    table = bytearray(_table([b"x"] * 255))
    assert len(table) == k.FSST_SYMBOL_TABLE_SIZE == 2312
    table[:8] = bytes.fromhex("ff00480154535346")  # 255 symbols, terminator 0, suffix_lim 72, switch 1
    symbols, lengths, compressed = k.fsst_parse_symbol_table(bytes(table))
    assert compressed and symbols.size == 255 and lengths.size == 255
    assert symbols.dtype == np.uint64 and lengths.dtype == np.uint8


def test_fsst_parse_lengths_follow_symbols():
    table = _table([b"ab", b"hello", b"12345678"])
    symbols, lengths, compressed = k.fsst_parse_symbol_table(table)
    assert compressed
    assert lengths.tolist() == [2, 5, 8]
    assert table[8 + 24 : 8 + 27] == b"\x02\x05\x08"
    assert int(symbols[0]) == int.from_bytes(b"ab", "little")


def test_fsst_parse_bad_tables():
    good = _table([b"ab"])
    with pytest.raises(CorruptFileError, match="2312"):
        k.fsst_parse_symbol_table(good[:-1])
    with pytest.raises(CorruptFileError, match="magic"):
        k.fsst_parse_symbol_table(b"\0" * 8 + good[8:])
    bad_len = bytearray(good)
    bad_len[16] = 9
    with pytest.raises(CorruptFileError, match="length"):
        k.fsst_parse_symbol_table(bytes(bad_len))
    symbols, lengths, compressed = k.fsst_parse_symbol_table(_table([], switch=0))
    assert not compressed and symbols.size == 0


def test_fsst_decompress_example():
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"hello", b" ", b"world"]))
    codes = np.frombuffer(b"\x00\x01\x02" + b"\xff!" + b"\x02\x00", np.uint8)
    data, offs = k.fsst_decompress(codes, np.array([0, 5, 5, 7]), symbols, lengths)
    assert bytes(data) == b"hello world!" + b"worldhello"
    assert offs.tolist() == [0, 12, 12, 22]


@pytest.mark.parametrize(
    "codes, offsets, match",
    [
        (b"\x00\xff", [0, 2], "truncated escape"),
        (b"\xff\x41\x00\xff", [0, 3, 4], "truncated escape"),  # escape cut by the string end
        (b"\x05", [0, 1], "no symbol"),
        (b"\x00\x00", [0, 3], "outside"),
        (b"\x00\x00", [2, 1], "decreasing"),
    ],
)
def test_fsst_decompress_corrupt(codes, offsets, match):
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"ab", b"c"]))
    with pytest.raises(CorruptFileError, match=match):
        k.fsst_decompress(np.frombuffer(codes, np.uint8), np.array(offsets), symbols, lengths)
    with pytest.raises(CorruptFileError):
        k.fsst_decompress_py(np.frombuffer(codes, np.uint8), np.array(offsets), symbols, lengths)


@PROPS
@given(st.lists(st.binary(min_size=1, max_size=8), min_size=0, max_size=255),
       st.lists(st.lists(st.integers(0, 300), max_size=20), max_size=30))
def test_fsst_decompress_matches_py(symbol_list, strings):
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table(symbol_list))
    n = len(symbol_list)
    codes, offsets = bytearray(), [0]
    for s in strings:
        for c in s:
            if c >= n or c >= 255:  # an escape with a literal byte
                codes += bytes([255, c % 256])
            else:
                codes.append(c)
        offsets.append(len(codes))
    codes_arr = np.frombuffer(bytes(codes), np.uint8)
    data, offs = k.fsst_decompress(codes_arr, np.array(offsets), symbols, lengths)
    pdata, poffs = k.fsst_decompress_py(codes_arr, np.array(offsets), symbols, lengths)
    assert bytes(data) == bytes(pdata)
    np.testing.assert_array_equal(offs, poffs)


def _strings(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    words = [b"lance", b"file", b"column", b"-", b"page", b"2024", b"zebra", b"\xff\xfe", b"chunk "]
    return [b"".join(words[j] for j in rng.integers(0, len(words), rng.integers(0, 12))) for _ in range(n)]


def test_fsst_compress_round_trip():
    strings = _strings(3000)
    data = b"".join(strings)
    offsets = np.cumsum([0] + [len(s) for s in strings])
    table, codes, code_offsets = k.fsst_compress(np.frombuffer(data, np.uint8), offsets)
    symbols, lengths, compressed = k.fsst_parse_symbol_table(table)
    assert compressed and 0 < symbols.size <= 255
    assert codes.size < len(data) / 2  # repetitive text compresses well
    out, out_offsets = k.fsst_decompress(codes, code_offsets, symbols, lengths)
    assert bytes(out) == data
    np.testing.assert_array_equal(out_offsets, offsets)


@PROPS
@given(st.lists(st.binary(max_size=40), max_size=50))
def test_fsst_compress_any_bytes(strings):
    data = b"".join(strings)
    offsets = np.cumsum([0] + [len(s) for s in strings])
    table, codes, code_offsets = k.fsst_compress(np.frombuffer(data, np.uint8), offsets)
    symbols, lengths, _ = k.fsst_parse_symbol_table(table)
    out, out_offsets = k.fsst_decompress(codes, code_offsets, symbols, lengths)
    assert bytes(out) == data
    np.testing.assert_array_equal(out_offsets, offsets)


# --------------------------------------------------------------------------------------
# RLE, byte stream split, bitmaps
# --------------------------------------------------------------------------------------


def test_rle_encode_splits_long_runs():
    v = np.array([7] * 600 + [8] + [7] * 255, dtype=np.int32)
    values, runs = k.rle_encode(v)
    assert values.tolist() == [7, 7, 7, 8, 7]
    assert runs.tolist() == [255, 255, 90, 1, 255] and runs.dtype == np.uint8
    np.testing.assert_array_equal(k.rle_expand(values, runs), v)


@PROPS
@given(st.lists(st.integers(0, 3), max_size=2000), st.sampled_from([np.uint8, np.int16, np.int64, np.float32]))
def test_rle_round_trip(items, dtype):
    v = np.repeat(np.array(items, dtype=dtype), 97)[: len(items) * 97]
    values, runs = k.rle_encode(v)
    assert runs.size == 0 or runs.min() >= 1
    np.testing.assert_array_equal(k.rle_expand(values, runs), v)
    np.testing.assert_array_equal(k.rle_expand_py(values, runs), v)


def test_rle_expand_checks():
    np.testing.assert_array_equal(k.rle_expand(np.array([1, 2]), np.array([3, 3], np.uint8), 4), [1, 1, 1, 2])
    with pytest.raises(CorruptFileError):
        k.rle_expand(np.array([1, 2]), np.array([3, 3], np.uint8), 7)
    with pytest.raises(CorruptFileError):
        k.rle_expand(np.array([1, 2]), np.array([3], np.uint8))


def test_rle_block_frame_from_notes():
    frame = bytes.fromhex("0a00000000000000" + "0000" * 5 + "ffffffff04")
    out = k.rle_block_decode(frame, 16, 1024)
    assert out.dtype == np.uint16 and out.size == 1024 and not out.any()
    assert k.rle_block_encode(np.zeros(1024, np.uint16)) == frame
    with pytest.raises(CorruptFileError):
        k.rle_block_decode(frame[:-1], 16, 1024)
    with pytest.raises(CorruptFileError):
        k.rle_block_decode(frame[:5], 16, 1024)


def test_byte_stream_split_layout():
    v = np.array([0x04030201, 0x08070605], dtype=np.uint32)
    assert k.byte_stream_split_encode(v) == bytes([1, 5, 2, 6, 3, 7, 4, 8])
    np.testing.assert_array_equal(k.byte_stream_split_decode(bytes([1, 5, 2, 6, 3, 7, 4, 8]), 32, 2), v)


@PROPS
@given(st.sampled_from([np.float32, np.float64, np.uint32, np.uint64]), st.integers(0, 1100), st.integers(0, 2**32 - 1))
def test_byte_stream_split_round_trip(dtype, n, seed):
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(seed, n, np.dtype(f"u{bits // 8}"), bits)
    buf = k.byte_stream_split_encode(v.view(dtype))
    out = k.byte_stream_split_decode(buf, bits, n)
    np.testing.assert_array_equal(out, v)
    if n < 200:
        np.testing.assert_array_equal(k.byte_stream_split_decode_py(buf, bits, n), v)


@PROPS
@given(st.lists(st.booleans(), max_size=100), st.integers(0, 20))
def test_bitmaps(bools, offset):
    buf = k.pack_bits_lsb([False] * offset + bools)
    assert len(buf) == -(-(offset + len(bools)) // 8)
    out = k.unpack_bits_lsb(buf, len(bools), offset)
    assert out.dtype == np.bool_ and out.tolist() == bools
    assert k.unpack_bits_lsb_py(buf, len(bools), offset).tolist() == bools


def test_bitmap_bit_order_and_bounds():
    assert k.pack_bits_lsb([True, False, False, False, False, False, False, False, False, True]) == b"\x01\x02"
    with pytest.raises(CorruptFileError):
        k.unpack_bits_lsb(b"\x01", 9)


def test_import_does_not_compile():
    # numba is imported on the first kernel call, never by importing the module
    import subprocess
    import sys

    code = "import sys, lancefile.encodings.kernels; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------------------
# Pages written by pylance 14.0.2
# --------------------------------------------------------------------------------------


def _read_pages(path) -> list[list[tuple[int, object, list[bytes]]]]:
    """(length, PageLayout, buffers) for every page of every column, read from the tail."""
    from google.protobuf import any_pb2

    from lancefile._proto import encodings_v2_1_pb2, file2_pb2

    with open(path, "rb") as f:
        data = f.read()
    _cm, _cmo, gbo_start, _ngb, ncols, _maj, _min = struct.unpack_from("<QQQIIHH", data, len(data) - 40)
    cmo = np.frombuffer(data, "<u8", 2 * ncols, gbo_start - 16 * ncols).reshape(ncols, 2)
    columns = []
    for pos, size in cmo:
        meta = file2_pb2.ColumnMetadata.FromString(data[pos : pos + size])
        pages = []
        for page in meta.pages:
            any_msg = any_pb2.Any.FromString(page.encoding.direct.encoding)
            layout = encodings_v2_1_pb2.PageLayout.FromString(any_msg.value)
            bufs = [data[o : o + s] for o, s in zip(page.buffer_offsets, page.buffer_sizes)]
            pages.append((page.length, layout, bufs))
        columns.append(pages)
    return columns


def _miniblock_chunks(layout, bufs):
    """Yield ``(num_values, num_levels, rep, def, [value buffers])`` per mini-block chunk."""
    large = layout.has_large_chunk
    words = np.frombuffer(bufs[0], "<u4" if large else "<u2")
    data = bufs[1]
    size_fmt = "<I" if large else "<H"
    remaining = layout.num_items
    pos = 0
    for i, word in enumerate(words.tolist()):
        nbytes = ((word >> 4) + 1) * 8
        nvals = 1 << (word & 15) if i < len(words) - 1 else remaining
        remaining -= nvals
        chunk = data[pos : pos + nbytes]
        pos += nbytes
        fields = ["<H"] + ["<H"] * layout.HasField("rep_compression") + ["<H"] * layout.HasField("def_compression")
        fields += [size_fmt] * layout.num_buffers
        values, h = [], 0
        for f in fields:
            values.append(struct.unpack_from(f, chunk, h)[0])
            h += struct.calcsize(f)
        nlev = values[0]
        rep_size = values[1] if layout.HasField("rep_compression") else 0
        def_size = values[1 + layout.HasField("rep_compression")] if layout.HasField("def_compression") else 0
        sizes = values[len(fields) - layout.num_buffers :]
        p = -(-h // 8) * 8
        parts = []
        for s in [rep_size, def_size, *sizes]:
            parts.append(chunk[p : p + s])
            p += -(-s // 8) * 8
        yield nvals, nlev, parts[0], parts[1], parts[2:]


def _write(path, table, version="2.1"):
    import lance.file

    with lance.file.LanceFileWriter(str(path), table.schema, version=version) as w:
        w.write_batch(table)
    return path


@pytest.fixture(scope="module")
def oracle_dir(tmp_path_factory):
    pytest.importorskip("lance")
    return tmp_path_factory.mktemp("oracle")


def _single_page(path):
    (pages,) = _read_pages(path)
    assert len(pages) == 1
    _length, layout, bufs = pages[0]
    assert layout.WhichOneof("layout") == "mini_block_layout"
    return layout.mini_block_layout, list(_miniblock_chunks(layout.mini_block_layout, bufs))


@pytest.mark.parametrize(
    "dtype, high, width",
    [(np.uint8, 8, 3), (np.uint32, 1024, 10), (np.int32, 1 << 30, 30), (np.uint64, 1 << 62, 62), (np.uint16, 1, 0)],
)
def test_oracle_inline_bitpacking(oracle_dir, dtype, high, width):
    import pyarrow as pa

    n = 5000
    rng = np.random.default_rng(width)
    v = rng.integers(0, high, n).astype(dtype)
    v[::997] = high - 1  # every chunk reaches the full width
    path = _write(oracle_dir / f"inline_{np.dtype(dtype).name}_{width}.lance", pa.table({"x": v}))
    layout, chunks = _single_page(path)
    bits = np.dtype(dtype).itemsize * 8
    assert layout.value_compression.inline_bitpacking.uncompressed_bits_per_value == bits
    decoded, start = [], 0
    for nvals, nlev, _rep, _def, (buf,) in chunks:
        assert nlev == 0 and nvals <= 1024
        assert int.from_bytes(buf[: bits // 8], "little") == width
        assert len(buf) == bits // 8 + 128 * width
        decoded.append(k.inline_bitpacking_decode(buf, bits, nvals))
        # our encoder writes the very same bytes
        assert k.inline_bitpacking_encode(v[start : start + nvals]) == buf
        start += nvals
    np.testing.assert_array_equal(np.concatenate(decoded).view(dtype), v)


def test_inline_bitpacking_decode_chunks():
    # several chunk buffers inside one "page" buffer, separated by 8-byte aligned headers
    rng = np.random.default_rng(5)
    pieces, offsets, counts, expected = [], [], [], []
    pos = 0
    for n in [1024, 1024, 17, 0, 3000, 1024, 5]:
        v = rng.integers(0, 1 << int(rng.integers(0, 33)), n, dtype=np.uint64).astype(np.uint32)
        buf = k.inline_bitpacking_encode(v)
        header = b"\xfe" * 8
        pieces.append(header + buf + b"\x00" * (-len(buf) % 8))
        offsets.append(pos + 8)
        counts.append(n)
        pos += len(pieces[-1])
        expected.append(v)
    page = b"".join(pieces)
    out = k.inline_bitpacking_decode_chunks(page, 32, offsets, counts)
    np.testing.assert_array_equal(out, np.concatenate(expected))
    full = k.inline_bitpacking_decode_chunks(page, 32, offsets[:2], counts[:2])
    np.testing.assert_array_equal(full, np.concatenate(expected[:2]))
    assert k.inline_bitpacking_decode_chunks(page, 32, [], []).size == 0
    with pytest.raises(CorruptFileError, match="chunk 1 starts"):
        k.inline_bitpacking_decode_chunks(page, 32, [8, 10], [1, 1])
    with pytest.raises(CorruptFileError, match="chunk 1"):
        k.inline_bitpacking_decode_chunks(page[: offsets[1] + 8], 32, offsets[:2], counts[:2])


def test_oracle_nullable_def_levels_out_of_line(oracle_dir):
    import pyarrow as pa

    n = 1_000_000
    rng = np.random.default_rng(1)
    v = rng.integers(0, 1000, n).astype(np.int32)
    nulls = rng.random(n) < 0.1
    path = _write(oracle_dir / "nullable.lance", pa.table({"x": pa.array(v, mask=nulls)}))
    layout, chunks = _single_page(path)
    ool = layout.def_compression.out_of_line_bitpacking
    assert ool.uncompressed_bits_per_value == 16 and ool.values.flat.bits_per_value == 1
    defs, vals = [], []
    for nvals, nlev, _rep, def_buf, (buf,) in chunks:
        assert nlev == nvals
        levels = k.out_of_line_bitpacking_decode(def_buf, 16, 1, nlev)
        assert k.out_of_line_bitpacking_encode(levels, 1) == def_buf
        defs.append(levels)
        vals.append(k.inline_bitpacking_decode(buf, 32, nvals))
    defs = np.concatenate(defs)
    vals = np.concatenate(vals).view(np.int32)
    # the same values through the batch API, straight from the page's chunk data buffer
    (pages,) = _read_pages(path)
    _length, page_layout, bufs = pages[0]
    value_offsets, counts, pos = [], [], 0
    for word in np.frombuffer(bufs[0], "<u2").tolist():
        nlev, def_size, value_size = struct.unpack_from("<HHH", bufs[1], pos)
        value_offsets.append(pos + 8 + -(-def_size // 8) * 8)
        counts.append(nlev)
        pos += ((word >> 4) + 1) * 8
    batch = k.inline_bitpacking_decode_chunks(bufs[1], 32, value_offsets, counts)
    np.testing.assert_array_equal(batch.view(np.int32), vals)
    np.testing.assert_array_equal(defs == 1, nulls)
    np.testing.assert_array_equal(vals[~nulls], v[~nulls])


def test_oracle_list_levels(oracle_dir):
    # rep/def levels of list<int32> with null and empty lists: OutOfLineBitpacking with
    # per-chunk tails; checked by counting rows, null lists and empty lists.
    import pyarrow as pa

    rows = []
    for i in range(5000):
        r = i % 7
        rows.append(None if r == 3 else ([] if r == 5 else list(range(i % 4 + 1))))
    path = _write(oracle_dir / "list.lance", pa.table({"l": pa.array(rows, pa.list_(pa.int32()))}))
    layout, chunks = _single_page(path)
    rep_w = layout.rep_compression.out_of_line_bitpacking.values.flat.bits_per_value
    def_w = layout.def_compression.out_of_line_bitpacking.values.flat.bits_per_value
    reps, defs, vals = [], [], []
    for nvals, nlev, rep_buf, def_buf, (buf,) in chunks:
        r = k.out_of_line_bitpacking_decode(rep_buf, 16, rep_w, nlev)
        d = k.out_of_line_bitpacking_decode(def_buf, 16, def_w, nlev)
        np.testing.assert_array_equal(k.out_of_line_bitpacking_decode_py(def_buf, 16, def_w, nlev), d)
        assert k.out_of_line_bitpacking_encode(r, rep_w) == rep_buf
        assert k.out_of_line_bitpacking_encode(d, def_w) == def_buf
        reps.append(r)
        defs.append(d)
        vals.append(k.inline_bitpacking_decode(buf, 32, nvals))
    reps, defs, vals = map(np.concatenate, (reps, defs, vals))
    assert int((reps == 1).sum()) == len(rows)
    assert int((defs == 1).sum()) == sum(r is None for r in rows)  # null list = base + 1
    assert int((defs == 2).sum()) == sum(r == [] for r in rows)  # empty list = base + 2
    flat = [x for r in rows if r for x in r]
    np.testing.assert_array_equal(vals, flat)


def test_oracle_rle_values(oracle_dir):
    import pyarrow as pa

    v = np.repeat(np.arange(100, dtype=np.int32), 1000)
    path = _write(oracle_dir / "rle.lance", pa.table({"r": v}))
    layout, chunks = _single_page(path)
    assert layout.value_compression.WhichOneof("compression") == "rle"
    out, start = [], 0
    for nvals, _nlev, _rep, _def, (values_buf, runs_buf) in chunks:
        values = np.frombuffer(values_buf, "<i4")
        runs = np.frombuffer(runs_buf, np.uint8)
        out.append(k.rle_expand(values, runs, nvals))
        ev, er = k.rle_encode(v[start : start + nvals])
        assert ev.tobytes() == values_buf and er.tobytes() == runs_buf
        start += nvals
    np.testing.assert_array_equal(np.concatenate(out), v)


def test_oracle_rle_level_frame_2_2(oracle_dir):
    import pyarrow as pa

    n = 200_000
    v = np.arange(n, dtype=np.int32)
    nulls = (np.arange(n) // 5000) % 2 == 1
    path = _write(oracle_dir / "rle22.lance", pa.table({"x": pa.array(v, mask=nulls)}), "2.2")
    layout, chunks = _single_page(path)
    assert layout.has_large_chunk and layout.def_compression.WhichOneof("compression") == "rle"
    defs = []
    for _nvals, nlev, _rep, def_buf, _bufs in chunks:
        d = k.rle_block_decode(def_buf, 16, nlev)
        assert k.rle_block_encode(d) == def_buf
        defs.append(d)
    np.testing.assert_array_equal(np.concatenate(defs) == 1, nulls)


def _variable_chunk(buf: bytes, nvals: int):
    offsets = np.frombuffer(buf, "<u4", nvals + 1).astype(np.int64)
    return np.frombuffer(buf, np.uint8), offsets


def test_oracle_fsst_strings(oracle_dir):
    import pyarrow as pa

    strings = [f"user-{(i * 7919) % 1000003:07d}-{'abcdefgh'[i % 8] * (i % 5)}" for i in range(20000)]
    path = _write(oracle_dir / "fsst.lance", pa.table({"s": pa.array(strings)}))
    layout, chunks = _single_page(path)
    fsst = layout.value_compression.fsst
    assert fsst.values.variable.offsets.flat.bits_per_value == 32
    symbols, lengths, compressed = k.fsst_parse_symbol_table(fsst.symbol_table)
    assert compressed and symbols.size > 0
    out = []
    for nvals, _nlev, _rep, _def, (buf,) in chunks:
        codes, offsets = _variable_chunk(buf, nvals)
        data, offs = k.fsst_decompress(codes, offsets, symbols, lengths)
        if len(out) == 0:
            pdata, poffs = k.fsst_decompress_py(codes, offsets, symbols, lengths)
            assert bytes(pdata) == bytes(data) and poffs.tolist() == offs.tolist()
        blob = bytes(data)
        out.extend(blob[offs[i] : offs[i + 1]].decode() for i in range(nvals))
    assert out == strings


def test_oracle_fsst_switch_off(oracle_dir):
    # forced FSST on < 32 KiB of strings: the table says "not compressed", data is raw
    import pyarrow as pa

    strings = [f"value-{i}" for i in range(300)]
    field = pa.field("s", pa.string(), metadata={"lance-encoding:compression": "fsst"})
    path = _write(oracle_dir / "fsst_off.lance", pa.table({"s": strings}, schema=pa.schema([field])))
    layout, chunks = _single_page(path)
    symbols, lengths, compressed = k.fsst_parse_symbol_table(layout.value_compression.fsst.symbol_table)
    assert not compressed and symbols.size == 0
    out = []
    for nvals, _nlev, _rep, _def, (buf,) in chunks:
        codes, offsets = _variable_chunk(buf, nvals)
        out.extend(bytes(codes[offsets[i] : offsets[i + 1]]).decode() for i in range(nvals))
    assert out == strings


def _rewrite_fsst_page(src_path, dst_path, strings: list[bytes], values_per_chunk: int = 256) -> None:
    """Copy a one-column 2.1 file written by pylance, replacing its only (FSST mini-block)
    page by one built from our ``fsst_compress`` output."""
    from google.protobuf import any_pb2

    from lancefile._proto import encodings_v2_1_pb2, file2_pb2

    with open(src_path, "rb") as f:
        src = f.read()
    _cm, _cmo, gbo_start, ngb, ncols, major, minor = struct.unpack_from("<QQQIIHH", src, len(src) - 40)
    assert (ngb, ncols, major, minor) == (1, 1, 2, 1)
    gb0_pos, gb0_size = struct.unpack_from("<QQ", src, gbo_start)
    cm_pos, cm_size = struct.unpack_from("<QQ", src, gbo_start - 16)
    column = file2_pb2.ColumnMetadata.FromString(src[cm_pos : cm_pos + cm_size])
    (page,) = column.pages
    any_msg = any_pb2.Any.FromString(page.encoding.direct.encoding)
    layout = encodings_v2_1_pb2.PageLayout.FromString(any_msg.value)

    data = b"".join(strings)
    offsets = np.cumsum([0] + [len(s) for s in strings])
    table, codes, code_offsets = k.fsst_compress(np.frombuffer(data, np.uint8), offsets)
    layout.mini_block_layout.value_compression.fsst.symbol_table = table

    words, chunks = [], []
    for start in range(0, len(strings), values_per_chunk):
        n = min(values_per_chunk, len(strings) - start)
        rel = code_offsets[start : start + n + 1] - code_offsets[start] + 4 * (n + 1)
        buf = rel.astype("<u4").tobytes() + codes[code_offsets[start] : code_offsets[start + n]].tobytes()
        buf += b"\x48" * (-len(buf) % 4)
        chunk = struct.pack("<HH", 0, len(buf)) + b"\xfe" * 4 + buf + b"\0" * (-len(buf) % 8)
        last = start + n == len(strings)
        words.append((len(chunk) // 8 - 1) << 4 | (0 if last else n.bit_length() - 1))
        chunks.append(chunk)
    meta, body = np.array(words, "<u2").tobytes(), b"".join(chunks)

    out = bytearray()

    def put(blob: bytes) -> int:
        out.extend(b"\0" * (-len(out) % 64))
        pos = len(out)
        out.extend(blob)
        return pos

    page.ClearField("buffer_offsets")
    page.ClearField("buffer_sizes")
    for blob in (meta, body):
        page.buffer_offsets.append(put(blob))
        page.buffer_sizes.append(len(blob))
    any_msg.value = layout.SerializeToString()
    page.encoding.direct.encoding = any_msg.SerializeToString()
    schema_pos = put(src[gb0_pos : gb0_pos + gb0_size])
    column_bytes = column.SerializeToString()
    cm_start = len(out)
    out.extend(column_bytes)
    cmo_start = len(out)
    out.extend(struct.pack("<QQ", cm_start, len(column_bytes)))
    gbo = len(out)
    out.extend(struct.pack("<QQ", schema_pos, gb0_size))
    out.extend(struct.pack("<QQQIIHH", cm_start, cmo_start, gbo, 1, 1, 2, 1) + b"LANC")
    with open(dst_path, "wb") as f:
        f.write(bytes(out))


def test_oracle_reads_our_fsst(oracle_dir):
    # pylance 14.0.2 decodes strings compressed by our fsst_compress with our table
    import lance.file
    import pyarrow as pa

    strings = [f"user-{(i * 7919) % 1000003:07d}-{'abcdefgh'[i % 8] * (i % 5)}é" for i in range(20000)]
    src = _write(oracle_dir / "fsst_src.lance", pa.table({"s": pa.array(strings)}))
    dst = oracle_dir / "fsst_ours.lance"
    _rewrite_fsst_page(src, dst, [s.encode() for s in strings])
    layout, chunks = _single_page(dst)
    assert len(chunks) == -(-20000 // 256)
    table = lance.file.LanceFileReader(str(dst)).read_all().to_table()
    assert table.column("s").to_pylist() == strings


def test_docstring_examples():
    import doctest

    assert doctest.testmod(k, raise_on_error=True).attempted > 0
