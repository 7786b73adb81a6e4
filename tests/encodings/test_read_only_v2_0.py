"""2.0 encodings that current writers never emit but readers must decode.

Each test builds a one-column 2.0 file by hand (our own page encoder messages and buffers,
written through the writer's sink), then checks that lancefile *and* the reference decode
it to the expected values: the reference is the judge of what the bytes mean.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from google.protobuf import empty_pb2

import lancefile
from lancefile._proto import encodings_v2_0_pb2 as pb
from lancefile._proto import file2_pb2
from lancefile.encodings import kernels
from lancefile.encodings.compression import compress_buffer
from lancefile.encodings.registry import ARRAY_DECODERS
from lancefile.encodings.page import EncodedPage
from lancefile.encodings.v2_0.flat import encode_flat
from lancefile.encodings.v2_0.nullable import wrap_no_nulls
from lancefile.format.container import COLUMN_ENCODING_URL, pack_any
from lancefile.format.schema import LanceSchema, descriptor_bytes
from lancefile.sink import FileSink as _Sink

lance_file = pytest.importorskip("lance.file")


def handmade(path, field: pa.Field, pages: list[EncodedPage]) -> str:
    sink = _Sink(str(path), 64, 1)
    for page in pages:
        sink.add_page(0, page)
    values = pb.ColumnEncoding(values=empty_pb2.Empty())
    col_enc = file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(COLUMN_ENCODING_URL, values)))
    rows = sum(p.length for p in pages)
    sink.write_tail(descriptor_bytes(LanceSchema.from_arrow(pa.schema([field])), rows), [], [col_enc], (0, 3))
    sink.file.close()
    return str(path)


def _check(path, expected: pa.Array):
    ours = lancefile.read_table(path).column(0).combine_chunks()
    theirs = lance_file.LanceFileReader(path).read_all().to_table().column(0).combine_chunks()
    assert theirs.equals(expected), "the reference reads the hand-made page differently than intended"
    assert ours.equals(expected)
    idx = np.array([len(expected) - 1, 0, len(expected) // 2])
    assert lancefile.LanceFileReader(path).take_rows(idx).to_table().column(0).combine_chunks().equals(expected.take(idx))
    assert lancefile.LanceFileReader(path).read_range(3, len(expected) - 5).to_table().column(0).combine_chunks().equals(
        expected.slice(3, len(expected) - 5))


@pytest.mark.parametrize("width, signed, dtype", [(3, False, np.uint8), (10, False, np.uint16), (13, True, np.int32),
                                                  (33, True, np.int64), (1, False, np.uint32)])
def test_bitpacked(tmp_path, width, signed, dtype):
    rng = np.random.default_rng(width)
    lo, hi = (-(1 << (width - 1)), 1 << (width - 1)) if signed else (0, 1 << width)
    values = rng.integers(lo, hi, 2500).astype(dtype)
    buf = kernels.bitpacked_sequential_encode(values, width)
    bits = np.dtype(dtype).itemsize * 8
    enc = pb.ArrayEncoding(bitpacked=pb.Bitpacked(compressed_bits_per_value=width, uncompressed_bits_per_value=bits,
                                                  buffer=pb.Buffer(buffer_index=0), signed=signed))
    arr = pa.array(values)
    _check(handmade(tmp_path / "f.lance", pa.field("x", arr.type), [EncodedPage(wrap_no_nulls(enc), [buf], len(values))]), arr)


@pytest.mark.parametrize("width, dtype", [(5, np.uint8), (11, np.uint16), (20, np.uint32), (40, np.uint64)])
def test_bitpacked_for_non_neg(tmp_path, width, dtype):
    values = np.random.default_rng(width).integers(0, 1 << width, 2100).astype(dtype)
    buf = kernels.bitpacked_for_non_neg_encode(values, width)
    bits = np.dtype(dtype).itemsize * 8
    enc = pb.ArrayEncoding(bitpacked_for_non_neg=pb.BitpackedForNonNeg(
        compressed_bits_per_value=width, uncompressed_bits_per_value=bits, buffer=pb.Buffer(buffer_index=0)))
    arr = pa.array(values)
    _check(handmade(tmp_path / "f.lance", pa.field("x", arr.type), [EncodedPage(wrap_no_nulls(enc), [buf], len(values))]), arr)


def _binary_page_parts(strings: list[bytes]):
    lengths = np.array([len(s) for s in strings], dtype=np.int64)
    ends = np.cumsum(lengths).astype("<u8")
    return ends, b"".join(strings)


def test_fsst(tmp_path):
    words = [b"lance", b"columnar", b"format", b"arrow", b"vector"]
    rng = np.random.default_rng(0)
    strings = [b" ".join(words[i] for i in rng.integers(0, 5, 6)) for _ in range(3000)]
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in strings])]).astype(np.int64)
    table_bytes, codes, code_offsets = kernels.fsst_compress(np.frombuffer(b"".join(strings), np.uint8), offsets)
    ends = code_offsets[1:].astype("<u8")
    inner = pb.ArrayEncoding(binary=pb.Binary(indices=wrap_no_nulls(encode_flat(64, 0)), bytes=encode_flat(8, 1),
                                              null_adjustment=int(code_offsets[-1]) + 1))
    enc = pb.ArrayEncoding(fsst=pb.Fsst(binary=inner, symbol_table=table_bytes))
    expected = pa.array(strings, pa.binary())
    assert len(codes) < offsets[-1] / 2  # it really compressed
    _check(handmade(tmp_path / "f.lance", pa.field("s", pa.binary()), [EncodedPage(enc, [ends, codes], len(strings))]),
           expected)


def test_fixed_size_binary_strings(tmp_path):
    strings = [f"{i:06d}".encode() for i in range(1000)]
    enc = pb.ArrayEncoding(fixed_size_binary=pb.FixedSizeBinary(bytes=encode_flat(8, 0), byte_width=6))
    expected = pa.array([s.decode() for s in strings], pa.string())
    _check(handmade(tmp_path / "f.lance", pa.field("s", pa.string()), [EncodedPage(enc, [b"".join(strings)], 1000)]),
           expected)


@pytest.mark.parametrize("scheme", ["zstd", "lz4"])
def test_compressed_flat_bytes_and_multi_page(tmp_path, scheme):
    strings = [f"row {i % 37} of a repetitive column".encode() for i in range(2000)]
    pages = []
    for part in (strings[:1200], strings[1200:]):
        ends, body = _binary_page_parts(part)
        enc = pb.ArrayEncoding(binary=pb.Binary(indices=wrap_no_nulls(encode_flat(64, 0)),
                                                bytes=encode_flat(8, 1, scheme), null_adjustment=len(body) + 1))
        pages.append(EncodedPage(enc, [ends, compress_buffer(body, scheme)], len(part)))
    _check(handmade(tmp_path / "f.lance", pa.field("s", pa.large_binary()), pages), pa.array(strings, pa.large_binary()))


def test_every_2_0_variant_has_a_decoder():
    """Every ArrayEncoding variant a 2.0 file can hold is decodable (list/struct at field level)."""
    variants = {f.name for f in pb.ArrayEncoding.DESCRIPTOR.oneofs_by_name["array_encoding"].fields}
    early_2_1 = {"constant", "inline_bitpacking", "out_of_line_bitpacking", "variable",
                 "packed_struct_fixed_width_mini_block", "block", "rle", "general_mini_block", "byte_stream_split"}
    field_level = {"list", "struct"}
    assert variants - early_2_1 - field_level <= set(ARRAY_DECODERS)
    assert not (set(ARRAY_DECODERS) & early_2_1)


def test_unknown_encoding_is_named(tmp_path):
    enc = pb.ArrayEncoding(rle=pb.Rle(bits_per_value=32))
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [EncodedPage(enc, [], 10)])
    with pytest.raises(lancefile.UnsupportedEncodingError, match="no decoder registered for array encoding 'rle'"):
        lancefile.read_table(path)
    empty = pb.ArrayEncoding()
    path = handmade(tmp_path / "g.lance", pa.field("x", pa.int32()), [EncodedPage(empty, [], 10)])
    with pytest.raises(lancefile.CorruptFileError, match="column 0 page 0"):
        lancefile.read_table(path)


def test_buffer_index_out_of_range(tmp_path):
    enc = wrap_no_nulls(encode_flat(32, 3))
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [EncodedPage(enc, [bytes(40)], 10)])
    with pytest.raises(lancefile.CorruptFileError, match="page buffer 3, but there are only 1"):
        lancefile.read_table(path)


def test_short_buffer(tmp_path):
    enc = wrap_no_nulls(encode_flat(64, 0))
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int64()), [EncodedPage(enc, [bytes(40)], 10)])
    with pytest.raises(lancefile.CorruptFileError, match="too short"):
        lancefile.read_table(path)
