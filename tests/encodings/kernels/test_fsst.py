"""Tests of lancefile.encodings.kernels.fsst: tables, decompression, compression, pylance pages."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lancefile.encodings import kernels as k
from lancefile.errors import CorruptFileError, InvalidInputError
from tests.encodings.kernels.conftest import PROPS, _single_page, _write


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


@pytest.mark.parametrize("bad_half", [None, 0, 1])
def test_fsst_decompress_in_two_halves(monkeypatch, bad_half):
    """Large inputs decode on two threads: same bytes and offsets, errors name the right string."""
    from lancefile.encodings.kernels import fsst as fsst_module

    monkeypatch.setattr(fsst_module, "PARALLEL_FSST_BYTES", 16)
    rng = np.random.default_rng(5)
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"ab", b"cde", b"fghijklm"]))
    raw = rng.integers(0, 3, 3000).astype(np.uint8)
    raw[3::10] = 255  # escapes, each followed by a literal (never a string's last byte)
    offsets = np.arange(0, 3001, 10)
    if bad_half is not None:
        raw[500 + 2000 * bad_half] = 9  # a code with no symbol, in string 50 or 250
        raw[499 + 2000 * bad_half] = 0
        with pytest.raises(CorruptFileError, match=f"FSST string {50 + 200 * bad_half} "):
            k.fsst_decompress(raw, offsets, symbols, lengths)
        return
    data, offs = k.fsst_decompress(raw, offsets, symbols, lengths)
    pdata, poffs = k.fsst_decompress_py(raw, offsets, symbols, lengths)
    assert bytes(data) == bytes(pdata)
    np.testing.assert_array_equal(offs, poffs)


@pytest.mark.parametrize("threshold", [16, 1 << 30])  # two halves on two threads, or one
def test_fsst_decompress_spans_reads_strings_in_place(monkeypatch, threshold):
    """Strings scattered in a buffer (as in a full-zip page, between length words) decode
    the same as the same strings back to back; a span outside the buffer is refused."""
    from lancefile.encodings.kernels import fsst as fsst_module

    monkeypatch.setattr(fsst_module, "PARALLEL_FSST_BYTES", threshold)
    rng = np.random.default_rng(9)
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"ab", b"cde", b"fghijklm"]))
    sizes = rng.integers(0, 12, 400)
    codes = rng.integers(0, 3, int(sizes.sum())).astype(np.uint8)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    gaps = rng.integers(0, 5, len(sizes))  # filler bytes (0xee: no symbol) between strings
    buf = bytearray()
    starts = []
    for i, g in enumerate(gaps):
        buf += b"\xee" * int(g)
        starts.append(len(buf))
        buf += codes[offsets[i] : offsets[i + 1]].tobytes()
    data, offs = k.fsst_decompress_spans(np.frombuffer(bytes(buf), np.uint8), starts, sizes, symbols, lengths)
    edata, eoffs = k.fsst_decompress(codes, offsets, symbols, lengths)
    assert bytes(data) == bytes(edata)
    np.testing.assert_array_equal(offs, eoffs)
    with pytest.raises(CorruptFileError, match="FSST string 1 has offsets .* outside"):
        k.fsst_decompress_spans(np.frombuffer(bytes(buf), np.uint8), [0, len(buf) - 1], [0, 5], symbols, lengths)


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


def _greedy_codes_py(strings: list[bytes], symbols: list[bytes]) -> list[bytes]:
    """FSST compression by the book: at each position the longest symbol that starts there
    (the first of equals), else the escape code 255 and the byte."""
    code_of: dict[bytes, int] = {}
    for code, sym in enumerate(symbols):
        code_of.setdefault(sym, code)
    out = []
    for s in strings:
        b, p = bytearray(), 0
        while p < len(s):
            for n in range(min(8, len(s) - p), 0, -1):
                if s[p : p + n] in code_of:
                    b.append(code_of[s[p : p + n]])
                    p += n
                    break
            else:
                b += bytes([255, s[p]])
                p += 1
        out.append(bytes(b))
    return out


_SOME_SYMBOLS = [b"lance", b"lan", b"la", b"l", b"file", b"fi", b"f", b"column", b"col", b"colu", b"co", b"page",
                 b"pag", b"20", b"2024", b" ", b"e", b"ee", b"eee", b"eeee", b"eeeeeeee", b"\xff\xfe", b"\x00", b"zebra!!",
                 b"ze", b"z"]


@PROPS
@given(strings=st.lists(st.one_of(st.binary(max_size=60), st.lists(st.sampled_from(
           [b"lance", b"file", b"column", b"-", b"page", b"2024", b"zebra!!", b"\xff\xfe", b"eeeeeeeeee", b"l", b"co"]),
           max_size=12).map(b"".join)), max_size=60),
       trained=st.booleans(), threads=st.booleans())
def test_fsst_compress_is_the_greedy_longest_match(strings, trained, threads):
    # the codes, string by string, are those of the plain greedy match, whether the table is
    # trained or given (several symbols sharing a 3-byte start, and 1- and 2-byte ones), in
    # one part or two halves on two threads
    data = np.frombuffer(b"".join(strings), np.uint8)
    offsets = np.cumsum([0] + [len(s) for s in strings])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(k.fsst, "PARALLEL_FSST_BYTES", 1 if threads else 1 << 30)
        if trained:
            table, codes, code_offsets = k.fsst_compress(data, offsets)
            symbols, lengths, _ = k.fsst_parse_symbol_table(table)
        else:
            syms = sorted(_SOME_SYMBOLS, key=lambda t: (-len(t), t))
            symbols = np.array([int.from_bytes(t.ljust(8, b"\0"), "little") for t in syms], dtype=np.uint64)
            lengths = np.array([len(t) for t in syms], dtype=np.uint8)
            table, codes, code_offsets = k.fsst_compress(data, offsets, symbols, lengths)
    toks = [int(v).to_bytes(8, "little")[: int(n)] for v, n in zip(symbols, lengths)]
    want = _greedy_codes_py(strings, toks)
    np.testing.assert_array_equal(code_offsets, np.cumsum([0] + [len(w) for w in want]))
    assert codes.tobytes() == b"".join(want)


@PROPS
@given(st.lists(st.one_of(st.binary(max_size=40), st.sampled_from([b"abcabcabcabc", b"\x00" * 17, b"\xff" * 9,
                                                                    b"hello world, hello"])), max_size=80))
def test_fsst_training_matches_py(strings):
    # the compiled training picks the same symbols, in the same order, as the plain one
    # (ties in gain broken by the token bytes, longest symbols first)
    data = np.frombuffer(b"".join(strings), np.uint8)
    offsets = np.cumsum([0] + [len(s) for s in strings])
    got, want = k.fsst_build_symbol_table(data, offsets), k.fsst_build_symbol_table_py(data, offsets)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_fsst_training_matches_py_on_a_sampled_text():
    # more than FSST_SAMPLE_BYTES: both train on the same random sample of the strings
    rng = np.random.default_rng(5)
    words = [b"lance", b"columnar", b"file", b"format", b"arrow", b" ", b", ", b"pages"]
    strings = [b"".join(words[i] for i in rng.integers(0, len(words), rng.integers(5, 60))) for _ in range(2000)]
    data = np.frombuffer(b"".join(strings), np.uint8)
    offsets = np.cumsum([0] + [len(s) for s in strings])
    from lancefile.encodings.kernels.fsst import FSST_SAMPLE_BYTES

    assert offsets[-1] > FSST_SAMPLE_BYTES
    got, want = k.fsst_build_symbol_table(data, offsets), k.fsst_build_symbol_table_py(data, offsets)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert len(got[0]) == 255


# --------------------------------------------------------------------------------------
# Pages written by pylance 14.0.2
# --------------------------------------------------------------------------------------


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


def test_a_few_strings_far_apart_are_decoded_on_the_calling_thread(monkeypatch):
    """Decoding is split over two threads by the code bytes to decode, not by how far apart
    the strings lie (a take's rows scattered over an 11 MB page are a few kilobytes)."""
    from lancefile import threadpools as _common  # run_parallel's pool
    from lancefile.encodings.kernels import fsst as fsst_mod

    sym = [int.from_bytes(b"abc", "little")]
    data = np.zeros(fsst_mod.PARALLEL_FSST_BYTES + 100, np.uint8)  # code 0 = "abc" everywhere
    monkeypatch.setattr(_common, "shared_pool", lambda *a: (_ for _ in ()).throw(AssertionError("pool used")))
    out, offs = k.fsst_decompress_spans(data, [0, len(data) - 4], [2, 4], sym, [3])
    assert bytes(out) == b"abc" * 6 and offs.tolist() == [0, 6, 18]
    half = len(data) // 2
    with pytest.raises(AssertionError, match="pool used"):  # a large input still goes to two threads
        k.fsst_decompress_spans(data, [0, half], [half, len(data) - half], sym, [3])


# --- several symbol tables in one call (a take's rows over many full-zip pages) ----------


@st.composite
def _tables_and_strings(draw):
    """1-5 tables of 1-8 random symbols, each with 0-30 strings of valid codes (escapes
    included), laid out with filler bytes between the strings."""
    k_tables = draw(st.integers(1, 5))
    tables, counts, strings = [], [], []
    for _ in range(k_tables):
        syms = draw(st.lists(st.binary(min_size=1, max_size=8), min_size=1, max_size=8))
        tables.append(_table(syms))
        n = draw(st.integers(0, 30))
        counts.append(n)
        for _ in range(n):
            codes = draw(st.lists(st.one_of(st.integers(0, len(syms) - 1), st.just(-1)), max_size=20))
            s = bytearray()
            for c in codes:
                s += bytes([255, 0x41]) if c < 0 else bytes([c])
            strings.append(bytes(s))
    return tables, counts, strings


def _paths(mp, path: str) -> None:
    """Route every decode the way ``path`` says: two passes ("measure") or one ("one-pass"),
    on one thread or in two halves ("... halves"); one-pass outputs sized from a 4-byte
    sample, so that they must grow."""
    from lancefile.encodings.kernels import fsst as fsst_module

    one_pass, halves = path.startswith("one-pass"), path.endswith("halves")
    mp.setattr(fsst_module, "ONE_PASS_FSST_BYTES", 1 if one_pass else 1 << 40)
    mp.setattr(fsst_module, "PARALLEL_FSST_BYTES", 1 if halves else 1 << 40)
    mp.setattr(fsst_module, "HALVES_FSST_BYTES", 1 if halves else 1 << 40)
    mp.setattr(fsst_module, "_SAMPLE_CODE_BYTES", 4)


_PATHS = ["measure", "measure halves", "one-pass", "one-pass halves"]


@settings(deadline=None)
@given(case=_tables_and_strings(), path=st.sampled_from(_PATHS))
def test_decompress_spans_tables_equals_one_table_at_a_time(case, path):
    tables, counts, strings = case
    buf, starts = bytearray(), []
    for s in strings:
        buf += b"\xee\xee"  # filler between the strings: never read
        starts.append(len(buf))
        buf += s
    sizes = [len(s) for s in strings]
    with pytest.MonkeyPatch.context() as mp:
        _paths(mp, path)
        data, offs = k.fsst_decompress_spans_tables(np.frombuffer(bytes(buf) or b"\0", np.uint8), starts, sizes,
                                                    tables, counts)
    want, at = b"", 0
    for table, n in zip(tables, counts):
        symbols, lengths, _ = k.fsst_parse_symbol_table(table)
        codes = b"".join(strings[at : at + n])
        one, _ = k.fsst_decompress(np.frombuffer(codes or b"\0", np.uint8)[: len(codes)],
                                   np.concatenate([[0], np.cumsum(sizes[at : at + n], dtype=np.int64)]),
                                   symbols, lengths)
        want += bytes(one)
        at += n
    assert bytes(data) == want
    assert offs[0] == 0 and len(offs) == len(strings) + 1 and offs[-1] == len(want)


def test_parse_symbol_tables_equals_one_at_a_time():
    tables = [_table([b"ab", b"hello", b"12345678"]), _table([b"x"] * 255), _table([], switch=0), _table([b"q"])]
    symbols, lengths, n, compressed = k.fsst_parse_symbol_tables(tables)
    assert symbols.shape == lengths.shape == (4, 256)
    for i, t in enumerate(tables):
        s1, l1, c1 = k.fsst_parse_symbol_table(t)
        assert n[i] == len(s1) and compressed[i] == c1
        assert symbols[i, : n[i]].tolist() == s1.tolist() and lengths[i, : n[i]].tolist() == l1.tolist()
        assert not symbols[i, n[i] :].any() and not lengths[i, n[i] :].any()


def test_bad_tables_and_strings_are_named_by_table():
    good = _table([b"ab"])
    bad_len = bytearray(good)
    bad_len[16] = 9
    with pytest.raises(CorruptFileError, match="symbol table 1 has a symbol length outside"):
        k.fsst_parse_symbol_tables([good, bytes(bad_len)])
    with pytest.raises(CorruptFileError, match="symbol table 2 has a bad magic"):
        k.fsst_parse_symbol_tables([good, good, b"\0" * 8 + good[8:]])
    with pytest.raises(CorruptFileError, match="symbol table 0 has 2311 bytes"):
        k.fsst_parse_symbol_tables([good[:-1]])
    # string 1 of table 1 uses code 1, which table 1 (one symbol) does not have
    with pytest.raises(CorruptFileError, match="FSST string 1 of symbol table 1 uses a code with no symbol") as exc:
        k.fsst_decompress_spans_tables(bytes([0, 0, 0, 1]), [0, 1, 2, 3], [1, 1, 1, 1], [good, good], [2, 2])
    assert exc.value.table == 1
    with pytest.raises(InvalidInputError, match="table 1 stores its strings raw"):
        k.fsst_decompress_spans_tables(bytes([0]), [0], [1], [good, _table([b"a"], switch=0)], [1, 0])


# --- one pass over the codes (large inputs: a scan's pages) ------------------------------


def _expanding(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` strings whose expansion grows along the input: the first are escapes (2 code
    bytes -> 1 byte), the last 8-byte symbols (1 -> 8), so an output sized from the first
    strings is too small for the rest."""
    sizes = rng.integers(0, 40, n)
    codes = bytearray()
    for i, size in enumerate(sizes):
        if i < n // 3:
            codes += bytes([255, 0x41]) * (int(size) // 2) + bytes([1]) * (int(size) % 2)
        else:
            codes += rng.integers(0, 3, int(size)).astype(np.uint8).tobytes()
    return np.frombuffer(bytes(codes), np.uint8), np.concatenate([[0], np.cumsum(sizes)])


@pytest.mark.parametrize("path", _PATHS)
def test_one_pass_decodes_as_two_passes(path):
    """Every way of decoding gives the plain-Python bytes and offsets, including a one-pass
    output that must grow (its size estimate comes from strings that expand least)."""
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"ab", b"c", b"fghijklm"]))
    codes, offsets = _expanding(np.random.default_rng(3), 3000)
    with pytest.MonkeyPatch.context() as mp:
        _paths(mp, path)
        data, offs = k.fsst_decompress(codes, offsets, symbols, lengths)
    pdata, poffs = k.fsst_decompress_py(codes, offsets, symbols, lengths)
    assert bytes(data) == bytes(pdata)
    np.testing.assert_array_equal(offs, poffs)
    assert len(data) == offs[-1]  # cut to its size


@pytest.mark.parametrize("path", ["one-pass", "one-pass halves"])
@pytest.mark.parametrize("bad, code, match", [(10, 9, "no symbol"), (2500, 9, "no symbol"),
                                               (2999, 255, "truncated escape")])
def test_one_pass_names_the_bad_string(path, bad, code, match):
    """A damaged string is named as the measuring pass names it, wherever it lies: in the
    sample, after the output grew, in the second half."""
    from lancefile.encodings.kernels import fsst as fsst_module

    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"ab", b"c", b"fghijklm"]))
    rng = np.random.default_rng(4)
    codes, offsets = _expanding(rng, 3000)
    codes = codes.copy()
    while offsets[bad + 1] == offsets[bad]:  # a string with codes
        bad -= 1
    last = offsets[bad + 1] - 1
    codes[last] = code
    if last > offsets[bad]:
        codes[last - 1] = 0  # a symbol or an escape's literal: the last byte is read as a code either way
    with pytest.MonkeyPatch.context() as mp:
        _paths(mp, path)
        with pytest.raises(CorruptFileError, match=f"FSST string {bad} .*{match}"):
            k.fsst_decompress(codes, offsets, symbols, lengths)
    assert fsst_module._RUNNING == [0]  # the decode is no longer counted as running


def test_one_pass_halves_only_when_alone(monkeypatch):
    """Two one-pass decodes at once (a scan's two chunks) each keep to one thread; a decode
    on its own splits in two."""
    from lancefile import threadpools as _common  # run_parallel's pool
    from lancefile.encodings.kernels import fsst as fsst_module

    _paths(monkeypatch, "one-pass halves")
    used = []
    real = _common.shared_pool
    monkeypatch.setattr(_common, "shared_pool", lambda *a: used.append(a) or real(*a))
    symbols, lengths, _ = k.fsst_parse_symbol_table(_table([b"ab", b"c", b"fghijklm"]))
    codes, offsets = _expanding(np.random.default_rng(5), 200)
    k.fsst_decompress(codes, offsets, symbols, lengths)
    assert used
    used.clear()
    monkeypatch.setattr(fsst_module, "_RUNNING", [1])  # another decode under way
    data, offs = k.fsst_decompress(codes, offsets, symbols, lengths)
    assert not used
    assert bytes(data) == bytes(k.fsst_decompress_py(codes, offsets, symbols, lengths)[0])
