"""Tests of lancefile.encodings.kernels.fastlanes and .bitpacking: FastLanes, InlineBitpacking,
OutOfLineBitpacking and the 2.0 BitpackedForNonNeg (exact bytes, properties, pylance pages)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError, InvalidInputError
from tests.encodings.kernels.conftest import PROPS, UINTS, _random_uints, _read_pages, _single_page, _write, dtype_width


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
def test_fastlanes_full_width_is_the_slow_twins_permutation(dtype):
    # at W == T packing is a permuted copy, compiled in its own loop order: both ways, every
    # chunk, against the plain-Python twin and the layout's formula
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(11, 3 * 1024, dtype, bits)
    packed = k.fastlanes_pack(v, bits)
    lanes = 1024 // bits
    for c in range(3):
        chunk = v[c * 1024 : (c + 1) * 1024]
        np.testing.assert_array_equal(packed[c * 1024 : (c + 1) * 1024], k.fastlanes_pack_py(chunk, bits))
        row, lane = 13 % bits, 5 % lanes
        assert packed[c * 1024 + row * lanes + lane] == chunk[k.FL_ORDER[row // 8] * 16 + (row % 8) * 128 + lane]
    np.testing.assert_array_equal(k.fastlanes_unpack(packed, bits, 3000, dtype), v[:3000])
    np.testing.assert_array_equal(k.fastlanes_unpack_py(packed[:1024], bits, 1024, dtype), v[:1024])


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


@pytest.mark.parametrize("dtype", UINTS)
def test_fastlanes_every_width_matches_py(dtype):
    # The compiled loops run over slices and branch on word crossings per row: every width
    # of every word size, two chunks (the second's words start after the first's), against
    # the plain twin, with bits above the width set in the input.
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(11, 2048, dtype, bits)
    for width in range(bits + 1):
        packed = k.fastlanes_pack(v, width)
        wpc = k.fastlanes_words_per_chunk(width, bits)
        for c in range(2):
            chunk = v[c * 1024 : (c + 1) * 1024]
            np.testing.assert_array_equal(packed[c * wpc : (c + 1) * wpc], k.fastlanes_pack_py(chunk, width))
        low = v & dtype((1 << width) - 1) if width < bits else v
        np.testing.assert_array_equal(k.fastlanes_unpack(packed, width, 2048, dtype), low)
        np.testing.assert_array_equal(k.fastlanes_unpack_py(packed[:wpc], width, 1024, dtype), low[:1024])


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
# InlineBitpacking / OutOfLineBitpacking / 2.0 BitpackedForNonNeg
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
    with pytest.raises(CorruptFileError, match="width word is not in 0..16"):
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
@given(dtype_width(), st.integers(1, 2500), st.integers(0, 2**32 - 1))
def test_bitpacked_for_non_neg_round_trip(dw, n, seed):
    dtype, width = dw
    bits = np.dtype(dtype).itemsize * 8
    v = _random_uints(seed, n, dtype, width)
    buf = k.bitpacked_for_non_neg_encode(v, width)
    assert len(buf) == -(-n // 1024) * 128 * width
    np.testing.assert_array_equal(k.bitpacked_for_non_neg_decode(buf, width, bits, n), v)
    np.testing.assert_array_equal(k.bitpacked_for_non_neg_decode_py(buf, width, bits, n), v)


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


# --------------------------------------------------------------------------------------
# Pages written by pylance 14.0.2
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# Taking single values out of InlineBitpacking chunks
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_inline_bitpacking_take_chunks_matches_full_decode(bits):
    # every width 0..T appears in some 1024-value group; chunks of odd sizes (partial groups)
    rng = np.random.default_rng(bits)
    dtype = np.dtype(f"uint{bits}")
    pieces, offsets, sizes, counts = [], [], [], []
    pos = 0
    for width in range(bits + 1):
        n = int(rng.choice([1, 17, 1024, 1500, 3072]))
        hi = (1 << width) - 1
        v = (rng.integers(0, 1 << 62, n, dtype=np.uint64) & np.uint64(hi)).astype(dtype) if width < 64 \
            else rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        buf = k.inline_bitpacking_encode(v)
        pieces.append(b"\xab" * 8 + buf + b"\x00" * (-len(buf) % 8))
        offsets.append(pos + 8)
        sizes.append(len(buf))
        counts.append(n)
        pos += len(pieces[-1])
    page = b"".join(pieces)
    full = k.inline_bitpacking_decode_chunks(page, bits, offsets, counts, sizes)
    positions = np.sort(rng.choice(full.size, size=min(full.size, 4000), replace=False))
    got = k.inline_bitpacking_take_chunks(page, bits, offsets, counts, sizes, positions)
    assert got.dtype == full.dtype
    np.testing.assert_array_equal(got, full[positions])
    every = k.inline_bitpacking_take_chunks(page, bits, offsets, counts, sizes, np.arange(full.size))
    np.testing.assert_array_equal(every, full)
    assert k.inline_bitpacking_take_chunks(page, bits, offsets, counts, sizes, []).size == 0


def test_inline_bitpacking_take_chunks_checks_its_input():
    v = np.arange(2000, dtype=np.uint32)
    buf = k.inline_bitpacking_encode(v)
    with pytest.raises(InvalidInputError, match="positions"):
        k.inline_bitpacking_take_chunks(buf, 32, [0], [2000], [len(buf)], [2000])
    with pytest.raises(CorruptFileError, match="InlineBitpacking"):  # the second group's header is cut off
        k.inline_bitpacking_take_chunks(buf[:600], 32, [0], [2000], [600], [0])
    with pytest.raises(CorruptFileError, match="whole 32-bit words"):
        k.inline_bitpacking_take_chunks(buf, 32, [2], [2000], [len(buf) - 4], [0])


@pytest.mark.parametrize("dtype", UINTS)
def test_chunk_bit_widths_short_tail_and_stop(dtype):
    from lancefile.encodings.kernels.fastlanes import _chunk_bit_widths

    bits = np.dtype(dtype).itemsize * 8
    v = np.zeros(2500, dtype)  # chunks of 1024, 1024 and a 452-value tail
    v[5] = 3
    v[1024 + 7] = dtype(1) << dtype(bits - 1)
    v[2048 + 451] = 1 << 4
    assert _chunk_bit_widths(v).tolist() == [2, bits, 5]
    # the widths stop at the first group of `stop_at` bits or more
    assert _chunk_bit_widths(v, stop_at=bits).tolist() == [2, bits]
    assert _chunk_bit_widths(v, stop_at=2).tolist() == [2]
    assert _chunk_bit_widths(v[:0]).size == 0
    # the same as padding the tail with zeros
    padded = np.concatenate([v, np.zeros(3072 - 2500, dtype)])
    assert _chunk_bit_widths(padded).tolist() == [2, bits, 5]
