"""2.1/2.2 pages built by hand, byte for byte: layouts from the notes, and the version grammar.

Each file has one column whose pages we write ourselves (a ``PageLayout`` message and its
buffers, through the writer's sink, footer 2.1 or 2.2). Valid pages must read the same in
lancefile and in the reference (pylance 14.0.2 is the judge of what the bytes mean); pages a
version's grammar does not allow must be refused with an error naming the file, the column,
the page and what is wrong.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from google.protobuf import empty_pb2

import lancefile
from lancefile._proto import encodings_v2_0_pb2 as pb20
from lancefile._proto import encodings_v2_1_pb2 as pb
from lancefile._proto import file2_pb2
from lancefile.encodings import kernels
from lancefile.encodings.page import EncodedPage
from lancefile.encodings.structural.fields import PAGE_LAYOUT_URL
from lancefile.format.container import COLUMN_ENCODING_URL, pack_any
from lancefile.format.schema import LanceSchema, descriptor_bytes
from lancefile.sink import FileSink as _Sink

lance_file = pytest.importorskip("lance.file")

FOOTERS = {"2.1": (2, 1), "2.2": (2, 2)}


def handmade(path, field: pa.Field, pages: list[EncodedPage], version: str) -> str:
    sink = _Sink(str(path), 64, 1, page_url=PAGE_LAYOUT_URL)
    for page in pages:
        sink.add_page(0, page)
    values = pb20.ColumnEncoding(values=empty_pb2.Empty())
    col_enc = file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(encoding=pack_any(COLUMN_ENCODING_URL, values)))
    rows = sum(p.length for p in pages)
    sink.write_tail(descriptor_bytes(LanceSchema.from_arrow(pa.schema([field])), rows), [], [col_enc],
                    FOOTERS[version])
    sink.file.close()
    return str(path)


def flat(bits: int) -> pb.CompressiveEncoding:
    return pb.CompressiveEncoding(flat=pb.Flat(bits_per_value=bits))


def chunk(version: str, buffers: list[bytes], levels: int = 0, rep: bytes | None = None,
          defs: bytes | None = None) -> bytes:
    """One mini-block chunk: header (sizes u16 in 2.1, u32 in 2.2), padding 0xFE, buffers padded to 8."""
    word = "<I" if version == "2.2" else "<H"
    head = struct.pack("<H", levels)
    head += b"".join(struct.pack("<H", len(x)) for x in (rep, defs) if x is not None)
    head += b"".join(struct.pack(word, len(b)) for b in buffers)
    out = head + b"\xfe" * (-len(head) % 8)
    for b in [x for x in (rep, defs) if x is not None] + buffers:
        out += b + b"\xfe" * (-len(b) % 8)
    return out


def chunk_meta(version: str, chunks: list[bytes], counts: list[int]) -> bytes:
    """Chunk-metadata words: ((bytes/8 - 1) << 4) | log2(count) (0 for the last chunk)."""
    fmt = "<I" if version == "2.2" else "<H"
    words = []
    for i, (c, n) in enumerate(zip(chunks, counts)):
        log = 0 if i == len(chunks) - 1 else int(n).bit_length() - 1
        words.append(struct.pack(fmt, ((len(c) // 8 - 1) << 4) | log))
    return b"".join(words)


def miniblock_page(version: str, values: np.ndarray, per_chunk: int, **layout) -> EncodedPage:
    """A page of flat fixed-width values, ``per_chunk`` a chunk, no levels."""
    raw = np.ascontiguousarray(values)
    parts = [raw[i : i + per_chunk] for i in range(0, len(raw), per_chunk)] or [raw[:0]]
    chunks = [chunk(version, [p.tobytes()]) for p in parts]
    msg = pb.MiniBlockLayout(value_compression=flat(raw.dtype.itemsize * 8), layers=[pb.REPDEF_ALL_VALID_ITEM],
                             num_buffers=1, num_items=len(raw), has_large_chunk=version == "2.2", **layout)
    return EncodedPage(pb.PageLayout(mini_block_layout=msg),
                       [chunk_meta(version, chunks, [len(p) for p in parts]), b"".join(chunks)], len(raw))


def both_read(path) -> tuple[pa.Table, pa.Table]:
    return lancefile.read_table(path), lance_file.LanceFileReader(path).read_all().to_table()


# ------------------------------------------------------------------------------------------
# Valid pages: exact bytes, read alike by lancefile and the reference
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version, header", [("2.1", "0000 0c00 fefe fefe"), ("2.2", "0000 0c000000 fefe")])
def test_chunk_header_bytes_from_the_notes(version, header):
    """REFERENCE-NOTES §4.2: three int32 in one chunk, no levels."""
    got = chunk(version, [np.array([1, 2, 3], "<i4").tobytes()])
    assert got[:8] == bytes.fromhex(header)
    assert got[8:] == bytes.fromhex("01000000 02000000 03000000 fefefefe")


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_handmade_miniblock_pages_read_alike(tmp_path, version):
    values = np.arange(-1500, 1500, dtype=np.int32) * 7
    page = miniblock_page(version, values, per_chunk=1024)
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [page, page], version)
    ours, theirs = both_read(path)
    expected = pa.table({"x": pa.array(np.concatenate([values, values]))})
    assert theirs.equals(expected) and ours.equals(expected)
    r = lancefile.LanceFileReader(path)
    assert r.take_rows([5999, 0, 3000, 1023, 1024]).to_table().column(0).to_pylist() == \
        expected.column(0).take([5999, 0, 3000, 1023, 1024]).to_pylist()


def test_handmade_levels_and_bitpacked_values_2_2(tmp_path):
    """Def levels as the 2.2 RLE block frame, values inline-bitpacked (hand-encoded)."""
    values = (np.arange(100) % 5).astype(np.int64)
    defs = np.where(np.arange(100) % 7 == 0, 1, 0).astype(np.uint16)
    buf = kernels.inline_bitpacking_encode(values)
    c = chunk("2.2", [buf], levels=100, defs=kernels.rle_block_encode(defs))
    rle = pb.CompressiveEncoding(rle=pb.Rle(values=flat(16), run_lengths=flat(8)))
    msg = pb.MiniBlockLayout(def_compression=rle, layers=[pb.REPDEF_NULLABLE_ITEM], num_buffers=1, num_items=100,
                             has_large_chunk=True, value_compression=pb.CompressiveEncoding(
                                 inline_bitpacking=pb.InlineBitpacking(uncompressed_bits_per_value=64)))
    page = EncodedPage(pb.PageLayout(mini_block_layout=msg), [chunk_meta("2.2", [c], [100]), c], 100)
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int64()), [page], "2.2")
    ours, theirs = both_read(path)
    expected = pa.array(values, mask=defs == 1)
    assert theirs.column(0).combine_chunks().equals(expected)
    assert ours.column(0).combine_chunks().equals(expected)


def test_handmade_constant_layout_2_2(tmp_path):
    """A 2.2 ConstantLayout: the value inline, no buffers (REFERENCE-NOTES §4.5)."""
    msg = pb.ConstantLayout(layers=[pb.REPDEF_ALL_VALID_ITEM], inline_value=struct.pack("<q", 1234567))
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int64()), [EncodedPage(pb.PageLayout(constant_layout=msg),
                                                                                   [], 500)], "2.2")
    ours, theirs = both_read(path)
    assert theirs.column(0).to_pylist() == ours.column(0).to_pylist() == [1234567] * 500


# ------------------------------------------------------------------------------------------
# The per-version grammar: what one version allows and the other does not
# ------------------------------------------------------------------------------------------


def _refused(path, *fragments):
    with pytest.raises(lancefile.LanceError) as info:
        lancefile.read_table(path)
    msg = str(info.value)
    assert str(path) in msg and "column 0 page 0" in msg, msg
    for fragment in fragments:
        assert fragment in msg, msg
    return msg


@pytest.mark.parametrize("page_version, footer_version, fragment", [
    ("2.2", "2.1", "Lance 2.1 mini-block pages cannot use the u32 chunk grammar"),
    ("2.1", "2.2", "Lance 2.2 mini-block pages require the u32 chunk grammar"),
])
def test_chunk_grammar_must_match_the_version(tmp_path, page_version, footer_version, fragment):
    page = miniblock_page(page_version, np.arange(10, dtype=np.int32), per_chunk=1024)
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [page], footer_version)
    _refused(path, fragment)
    with pytest.raises(Exception):  # the reference refuses it too
        lance_file.LanceFileReader(path).read_all().to_table()


def test_constant_with_a_value_is_2_2_only(tmp_path):
    msg = pb.ConstantLayout(layers=[pb.REPDEF_ALL_VALID_ITEM], inline_value=struct.pack("<i", 7))
    path = handmade(tmp_path / "f.lance", pa.field("x", pa.int32()),
                    [EncodedPage(pb.PageLayout(constant_layout=msg), [], 10)], "2.1")
    _refused(path, "only accepts the all-null form of constant page layout")


def test_variable_packed_struct_is_2_2_only(tmp_path):
    vps = pb.VariablePackedStruct(fields=[
        pb.VariablePackedStruct.FieldEncoding(value=flat(32), bits_per_value=32),
        pb.VariablePackedStruct.FieldEncoding(value=pb.CompressiveEncoding(variable=pb.Variable(offsets=flat(32))),
                                              bits_per_length=32)])
    msg = pb.FullZipLayout(bits_per_offset=32, num_items=1, num_visible_items=1, layers=[pb.REPDEF_ALL_VALID_ITEM],
                           value_compression=pb.CompressiveEncoding(variable_packed_struct=vps))
    row = struct.pack("<iI", 5, 2) + b"ab"
    data = struct.pack("<I", len(row)) + row
    field = pa.field("s", pa.struct([("a", pa.int32()), ("b", pa.string())]), metadata={"packed": "true"})
    page = EncodedPage(pb.PageLayout(full_zip_layout=msg), [data, struct.pack("<BB", 0, len(data))], 1)
    ok = handmade(tmp_path / "ok.lance", field, [page], "2.2")
    assert lancefile.read_table(ok).column(0).to_pylist() == [{"a": 5, "b": "ab"}]
    assert lance_file.LanceFileReader(ok).read_all().to_table().column(0).to_pylist() == [{"a": 5, "b": "ab"}]
    _refused(handmade(tmp_path / "bad.lance", field, [page], "2.1"), "variable packed structs",
             "not part of this version's grammar")


def test_rle_levels_are_2_2_only(tmp_path):
    defs = np.zeros(10, np.uint16)
    c = chunk("2.1", [np.arange(10, dtype="<i4").tobytes()], levels=10, defs=kernels.rle_block_encode(defs))
    rle = pb.CompressiveEncoding(rle=pb.Rle(values=flat(16), run_lengths=flat(8)))
    msg = pb.MiniBlockLayout(def_compression=rle, value_compression=flat(32), layers=[pb.REPDEF_NULLABLE_ITEM],
                             num_buffers=1, num_items=10)
    page = EncodedPage(pb.PageLayout(mini_block_layout=msg), [chunk_meta("2.1", [c], [10]), c], 10)
    _refused(handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [page], "2.1"), "RLE-compressed levels")


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("values, fragment", [
    (pb.CompressiveEncoding(rle=pb.Rle(values=pb.CompressiveEncoding(inline_bitpacking=pb.InlineBitpacking(
        uncompressed_bits_per_value=32)), run_lengths=flat(8))), "RLE requires flat"),
    (pb.CompressiveEncoding(out_of_line_bitpacking=pb.OutOfLineBitpacking(uncompressed_bits_per_value=32,
                                                                          values=flat(3))),
     "'out_of_line_bitpacking' cannot appear in mini-block values"),
    (pb.CompressiveEncoding(dictionary=pb.Dictionary()), "'dictionary' cannot appear in mini-block values"),
    (pb.CompressiveEncoding(general=pb.General(compression=pb.BufferCompression(scheme=1))),
     "'general' is missing its nested encoding"),
    (pb.CompressiveEncoding(), "compressive encoding has no variant set"),
])
def test_encoding_trees_a_context_cannot_hold(tmp_path, version, values, fragment):
    c = chunk(version, [np.arange(10, dtype="<i4").tobytes()])
    msg = pb.MiniBlockLayout(value_compression=values, layers=[pb.REPDEF_ALL_VALID_ITEM], num_buffers=1, num_items=10,
                             has_large_chunk=version == "2.2")
    page = EncodedPage(pb.PageLayout(mini_block_layout=msg), [chunk_meta(version, [c], [10]), c], 10)
    _refused(handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [page], version), fragment,
             f"file version {version}")


def test_unknown_page_layout_is_named(tmp_path):
    page = EncodedPage(pb.PageLayout(), [], 10)
    _refused(handmade(tmp_path / "f.lance", pa.field("x", pa.int32()), [page], "2.2"), "page layout has no variant set")
