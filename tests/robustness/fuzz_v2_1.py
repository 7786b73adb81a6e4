"""Fuzz lancefile's Lance 2.1 / 2.2 read path with corrupted files written by pylance.

Run from the repository root (needs pylance 14.0.2, imported as ``lance``)::

    python tests/robustness/fuzz_v2_1.py --minutes 10            # ~10 minutes, results in /tmp/lancefile-fuzz
    python tests/robustness/fuzz_v2_1.py --minutes 60 --out DIR --seed 7 --kinds flip-data forge-layout
    python tests/robustness/fuzz_v2_1.py --replay DIR/repro/<signature>.json   # re-run one reproducer

It writes a corpus of small valid files with ``lance.file.LanceFileWriter(path, schema,
version=...)`` at 2.1 and 2.2 (:data:`CORPUS`: bitpacked / nullable ints, strings, FSST,
dictionaries, RLE, lists, structs, packed structs, fixed-size lists, full-zip strings,
binaries, embeddings and lists, constant and all-null pages, blobs, maps, zstd/lz4),
then mutates them (:data:`KINDS`: byte flips per region, truncations, forged sizes in
chunk words, chunk headers, repetition indexes and full-zip items, forged ``PageLayout``
/ ``ColumnMetadata`` / schema protobuf fields, forged footer and offset tables) and reads
each mutant with ``LanceFileReader`` (``metadata()``, ``read_all``, ``read_range``,
``take_rows``) in a worker process watched for crashes, hangs (``--timeout``) and
memory (an address-space limit and the peak RSS of every case).

Every read must succeed with valid Arrow data (``validate(full=True)``) or raise a
:class:`lancefile.LanceError` that is not a relabelled foreign exception (``__cause__`` a
foreign exception; the old ``cannot decode rows`` wrapper is gone since issue 13); when the damage lies in a page the
message must name the column and the page. Outcomes are counted per mutation kind; each
distinct failure signature keeps its smallest reproducer (``DIR/repro/*.lance`` + ``.json``
with the mutation, replayable with ``--replay``) and ``DIR/report.json`` / ``report.md``
summarise the run.

The corpus, the file map, the mutations and the checks are importable: the regression
test ``tests/robustness/test_corrupt_v2_1.py`` uses them in-process.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import random
import re
import struct
import sys
import time
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "src")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from google.protobuf import any_pb2  # noqa: E402
from google.protobuf.descriptor import FieldDescriptor as FD  # noqa: E402

import lancefile  # noqa: E402
from lancefile.fuzz import filemap  # noqa: E402
from lancefile.fuzz.mutations import apply_edit  # noqa: E402
from lancefile._proto import encodings_v2_1_pb2 as pb  # noqa: E402
from lancefile._proto import file2_pb2, file_pb2  # noqa: E402
from tests import datagen  # noqa: E402

FOOTER = struct.Struct("<QQQIIHH4s")
PAGE_LAYOUT_URL = "/lance.encodings21.PageLayout"
VERSIONS = ("2.1", "2.2")

# ------------------------------------------------------------------------------------------
# The corpus: small files written by pylance
# ------------------------------------------------------------------------------------------

_BLOB = {b"lance-encoding:blob": b"true"}
_PACKED = {b"packed": b"true"}


def _meta(**kv) -> dict:
    return {f"lance-encoding:{k}".encode(): str(v).encode() for k, v in kv.items()}


def _rnd(typ, n, rng, nulls=0.2, **kw):
    return datagen.random_array(typ, n, rng, null_fraction=nulls, **kw)


def _ints(rng):
    n = 3000
    return pa.table({"narrow": pa.array(rng.integers(0, 900, n).astype(np.int32)),
                     "nullable": pa.array(rng.integers(-(1 << 40), 1 << 40, n), mask=rng.random(n) < 0.2),
                     "u8": pa.array(rng.integers(0, 7, n).astype(np.uint8)),
                     "flag": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1)})


def _strings(rng):
    return pa.table({"s": _rnd(pa.string(), 800, rng), "b": _rnd(pa.binary(), 800, rng, 0.0)})


def _fsst(rng):  # ~37 KB of text: FSST
    n = 1500
    return pa.table({"s": pa.array(datagen._text(n, 3, 10, 40), mask=rng.random(n) < 0.05)})


def _dict(rng):
    n = 2000
    words = [f"word-{i:03d}-" + "x" * (i % 7) for i in range(30)]
    pick = rng.integers(0, 30, n)
    return pa.table({"s": pa.array([words[i] for i in pick], mask=rng.random(n) < 0.1),
                     "d": pa.DictionaryArray.from_arrays(pa.array(pick.astype(np.int32)), pa.array(words))})


def _rle(rng):
    n = 3000
    run = np.repeat(rng.integers(-10**12, 10**12, n // 50 + 1), 50)[:n]
    small = np.repeat(rng.integers(0, 100, n // 300 + 1), 300)[:n].astype(np.int32)
    return pa.table({"i64": pa.array(run), "i32": pa.array(small, mask=rng.random(n) < 0.02)})


def _lists(rng):
    n = 500
    return pa.table({"shapes": datagen._list_shapes(n, 5).column(0),
                     "ll": _rnd(pa.list_(pa.list_(pa.int32())), n, rng),
                     "ls": _rnd(pa.list_(pa.string()), n, rng)})


def _structs(rng):
    n = 600
    inner = pa.struct([("x", pa.int16()), ("l", pa.list_(pa.int32()))])
    return pa.table({"st": _rnd(pa.struct([("a", pa.int32()), ("b", pa.string())]), n, rng, 0.3, struct_nulls=True),
                     "nest": _rnd(pa.struct([("inner", inner), ("y", pa.float64())]), n, rng, 0.25,
                                  struct_nulls=True)})


def _packed(rng):
    typ = pa.struct([("a", pa.int32()), ("b", pa.float64()), ("c", pa.int8())])
    return pa.Table.from_arrays([_rnd(typ, 1000, rng, 0.0)], schema=pa.schema([pa.field("ps", typ, True, _PACKED)]))


def _fsl(rng):
    return pa.table({"v": _rnd(pa.list_(pa.float32(), 8), 800, rng, 0.1),
                     "vi": _rnd(pa.list_(pa.int16(), 3), 800, rng, 0.0)})


def _fz_strings(rng):  # values of 300-700 bytes: full-zip (FSST)
    n = 150
    vals = [x * 12 for x in datagen._text(n, 7, 25, 60)]
    return pa.table({"t": pa.array(vals, mask=rng.random(n) < 0.2), "t2": pa.array(vals[::-1], pa.large_string())})


def _fz_binary(rng):  # ~40 KB random values: full-zip, zstd per value
    return pa.table({"b": pa.array([rng.bytes(40_000 + 17 * i) if i % 3 else None for i in range(5)],
                                   pa.large_binary())})


def _fz_fsl(rng):  # fixed_size_list<float32>[128]: full-zip
    n = 80
    vals = rng.random(n * 128, dtype=np.float32)
    return pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(vals), 128),
                     "emb_nulls": pa.FixedSizeListArray.from_arrays(pa.array(vals[::-1].copy()), 128,
                                                                    mask=pa.array(rng.random(n) < 0.2))})


def _fz_list(rng):  # lists of long strings: full-zip with repetition
    rows = []
    for _ in range(60):
        r = rng.random()
        rows.append(None if r < 0.1 else [] if r < 0.2 else
                    [("z" * 300 + str(j)) if rng.random() > 0.2 else None for j in range(int(rng.integers(1, 4)))])
    return pa.table({"ll": pa.array(rows, pa.list_(pa.string()))})


def _constant(rng):
    n = 1000
    m = rng.random(n) < 0.2
    return pa.table({"i64": pa.array(np.full(n, 1234567, np.int64)),
                     "i32_nulls": pa.array(np.full(n, -7, np.int32), mask=m),
                     "s": pa.array(["the same value"] * n), "s_nulls": pa.array(["same"] * n, mask=m),
                     "nul": pa.nulls(n, pa.int32()), "lnul": pa.nulls(n, pa.list_(pa.int32()))})


def _blob(rng):
    n = 12
    arr = pa.array([rng.bytes(int(k)) for k in rng.integers(0, 3000, n)], pa.large_binary(),
                   mask=np.arange(n) % 5 == 2)
    return pa.Table.from_arrays([arr], schema=pa.schema([pa.field("blob", pa.large_binary(), True, _BLOB)]))


def _map(rng):
    return datagen._map_table(300, 11)


def _compression(rng):
    n = 1500
    s = datagen._text(n, 9, 10, 40)
    fields = [pa.field("zs", pa.string(), True, _meta(compression="zstd")),
              pa.field("ls", pa.string(), True, _meta(compression="lz4")),
              pa.field("zi", pa.int64(), True, _meta(compression="zstd"))]
    arrays = [pa.array(s), pa.array(s[::-1], mask=rng.random(n) < 0.1), pa.array(rng.integers(0, 1 << 30, n))]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _multichunk(rng):  # lists over several chunks: a repetition index with many entries
    return pa.table({"l": _rnd(pa.list_(pa.int32()), 4000, rng, 0.1)})


def _multipage(rng):  # several pages per column (one per batch)
    n = 1200
    return pa.table({"i": pa.array(rng.integers(0, 1 << 20, n).astype(np.int32), mask=rng.random(n) < 0.1),
                     "s": _rnd(pa.string(), n, rng, 0.1), "l": _rnd(pa.list_(pa.int16()), n, rng, 0.1)})


@dataclass(frozen=True)
class CorpusCase:
    make: object
    versions: tuple = VERSIONS
    batches: int = 1


CORPUS: dict[str, CorpusCase] = {
    "ints": CorpusCase(_ints), "strings": CorpusCase(_strings), "fsst": CorpusCase(_fsst),
    "dict": CorpusCase(_dict), "rle": CorpusCase(_rle), "lists": CorpusCase(_lists),
    "structs": CorpusCase(_structs), "packed": CorpusCase(_packed), "fsl": CorpusCase(_fsl),
    "fz_strings": CorpusCase(_fz_strings), "fz_binary": CorpusCase(_fz_binary), "fz_fsl": CorpusCase(_fz_fsl),
    "fz_list": CorpusCase(_fz_list), "constant": CorpusCase(_constant), "blob": CorpusCase(_blob),
    "map": CorpusCase(_map, ("2.2",)), "compression": CorpusCase(_compression),
    "multichunk": CorpusCase(_multichunk), "multipage": CorpusCase(_multipage, batches=3),
}


def write_case(name: str, version: str, path: str) -> None:
    """Write corpus case ``name`` at ``version`` with pylance (seeded: the same data every time)."""
    import lance.file as lf

    case = CORPUS[name]
    table = case.make(np.random.default_rng(zlib.crc32(name.encode())))
    with lf.LanceFileWriter(str(path), table.schema, version=version) as w:
        step = -(-table.num_rows // case.batches)
        for b in range(case.batches):
            w.write_batch(table.slice(b * step, step))


def build_corpus(directory, names=None, versions=VERSIONS) -> dict[str, bytes]:
    """``{"<name>-<version>": file bytes}`` for the chosen corpus cases."""
    out = {}
    os.makedirs(directory, exist_ok=True)
    for name in names or CORPUS:
        for version in versions:
            if version not in CORPUS[name].versions:
                continue
            path = os.path.join(directory, f"{name}-{version}.lance")
            if not os.path.exists(path):
                write_case(name, version, path)
            out[f"{name}-{version}"] = Path(path).read_bytes()
    return out


# ------------------------------------------------------------------------------------------
# The file map: where everything is
# ------------------------------------------------------------------------------------------


def _pad8(n: int) -> int:
    return n + (-n) % 8


@dataclass
class PageMap:
    col: int
    page: int
    length: int
    kind: str  # mini_block_layout, full_zip_layout, constant_layout, blob_layout, ?
    layout: object  # the parsed PageLayout (None if unparsable)
    buffers: list  # [(pos, size)]
    roles: list  # a role per buffer: chunk-meta, chunks, dict, rep-index, fz-items, fz-index, const-value, levels
    chunk_headers: list = field(default_factory=list)  # [(abs pos, header bytes, word bytes)]


@dataclass
class FileMap:
    data: bytes
    footer: tuple
    colmeta: list  # [(pos, size)]
    metas: list  # parsed ColumnMetadata
    gbo: list  # [(pos, size)]
    pages: list  # [PageMap]
    regions: dict  # name -> (pos, size)

    @property
    def num_columns(self) -> int:
        return self.footer[4]


def parse_file(data: bytes) -> FileMap:
    cms, cmo, gbo_start, ng, nc, major, minor, _ = FOOTER.unpack(data[-40:])
    colmeta = [struct.unpack_from("<QQ", data, gbo_start - 16 * nc + 16 * c) for c in range(nc)]
    gbo = [struct.unpack_from("<QQ", data, gbo_start + 16 * g) for g in range(ng)]
    metas, pages = [], []
    regions = {"footer": (len(data) - 40, 40), "cmo": (gbo_start - 16 * nc, 16 * nc), "gbo": (gbo_start, 16 * ng),
               "schema": gbo[0], "colmeta": (cms, gbo_start - 16 * nc - cms)}
    owned = np.zeros(cms, bool)
    owned[gbo[0][0]: gbo[0][0] + gbo[0][1]] = True
    for c, (pos, size) in enumerate(colmeta):
        meta = file2_pb2.ColumnMetadata.FromString(data[pos: pos + size])
        metas.append(meta)
        regions[f"colmeta{c}"] = (pos, size)
        for p, page in enumerate(meta.pages):
            bufs = list(zip(page.buffer_offsets, page.buffer_sizes))
            for k, (a, n) in enumerate(bufs):
                regions[f"c{c}p{p}b{k}"] = (a, n)
                owned[a: a + n] = True
            pages.append(_map_page(data, c, p, page, bufs))
    # bytes before the metadata owned by no page or global buffer: padding and blob values
    free = np.flatnonzero(~owned)
    if len(free):
        regions["other"] = (int(free[0]), int(free[-1] - free[0] + 1))
    return FileMap(data, (cms, cmo, gbo_start, ng, nc, major, minor), colmeta, metas, gbo, pages, regions)


def _map_page(data, c, p, page, bufs) -> PageMap:
    try:
        anyv = any_pb2.Any.FromString(page.encoding.direct.encoding)
        layout = pb.PageLayout.FromString(anyv.value)
        kind = layout.WhichOneof("layout") or "?"
    except Exception:
        layout, kind = None, "?"
    pm = PageMap(c, p, page.length, kind, layout, bufs, ["?"] * len(bufs))
    if kind == "blob_layout":
        kind = "mini_block_layout" if layout.blob_layout.inner_layout.HasField("mini_block_layout") else "?"
    if kind == "mini_block_layout" and len(bufs) >= 2:
        msg = _mini_block_msg(pm)
        roles = ["chunk-meta", "chunks"] + (["dict"] if msg.HasField("dictionary") else [])
        if msg.repetition_index_depth:
            roles.append("rep-index")
        pm.roles[: len(roles)] = roles[: len(bufs)]
        word = 4 if msg.has_large_chunk else 2
        raw = np.frombuffer(data[bufs[0][0]: bufs[0][0] + bufs[0][1]], np.uint8)
        words = raw[: len(raw) - len(raw) % word].view(f"<u{word}").astype(np.int64)
        header = _pad8(2 + 2 * msg.HasField("rep_compression") + 2 * msg.HasField("def_compression")
                       + word * int(msg.num_buffers))
        at = 0
        for w in words.tolist():
            pm.chunk_headers.append((bufs[1][0] + at, header, word))
            at += ((w >> 4) + 1) * 8
    elif kind == "full_zip_layout":
        pm.roles[:2] = ["fz-items", "fz-index"][: len(bufs)]
    elif kind == "constant_layout":
        roles = {1: ["const-value"], 2: ["levels", "levels"], 3: ["const-value", "levels", "levels"]}
        pm.roles = roles.get(len(bufs), pm.roles)
    return pm


def page_map(fm: FileMap, col: int, page: int) -> PageMap:
    return next(p for p in fm.pages if p.col == col and p.page == page)


def _mini_block_msg(p: PageMap):
    return p.layout.blob_layout.inner_layout.mini_block_layout if p.kind == "blob_layout" \
        else p.layout.mini_block_layout


def chunk_layout(fm: FileMap, col: int, page: int, chunk: int) -> dict:
    """Where the parts of one mini-block chunk are, relative to the page's chunk buffer (``region``).

    ``{"region", "header", "num_levels": (offset, 2), "rep_size"/"def_size": (offset, 2) or None,
    "buffer_sizes": [(offset, width)], "rep"/"def": (offset, size), "buffers": [(offset, size)]}``
    """
    p = page_map(fm, col, page)
    msg = _mini_block_msg(p)
    region = f"c{col}p{page}b1"
    base = fm.regions[region][0]
    at, header, word = p.chunk_headers[chunk]
    h = at - base
    u = lambda off, w: int.from_bytes(fm.data[at + off: at + off + w], "little")  # noqa: E731
    out = {"region": region, "header": h, "num_levels": (h, 2), "rep_size": None, "def_size": None}
    pos = 2
    for name in ("rep", "def"):
        if msg.HasField(f"{name}_compression"):
            out[f"{name}_size"] = (h + pos, 2)
            pos += 2
    out["buffer_sizes"] = [(h + pos + word * k, word) for k in range(int(msg.num_buffers))]
    cur = h + header
    for name in ("rep", "def"):
        size = u(out[f"{name}_size"][0] - h, 2) if out[f"{name}_size"] else 0
        out[name] = (cur, size)
        cur += _pad8(size)
    out["buffers"] = []
    for off, w in out["buffer_sizes"]:
        size = u(off - h, w)
        out["buffers"].append((cur, size))
        cur += _pad8(size)
    return out


# ------------------------------------------------------------------------------------------
# Rebuilding a file with changed metadata
# ------------------------------------------------------------------------------------------


def page_layout(meta, page: int):
    anyv = any_pb2.Any.FromString(meta.pages[page].encoding.direct.encoding)
    return pb.PageLayout.FromString(anyv.value)


def set_page_layout(meta, page: int, layout) -> None:
    anyv = any_pb2.Any(type_url=PAGE_LAYOUT_URL, value=layout.SerializeToString())
    meta.pages[page].encoding.direct.encoding = anyv.SerializeToString()


_FOOTER_NAMES = {"cms": "column_meta_start", "cmo": "cmo_table_start", "gbo": "gbo_table_start",
                 "ng": "num_global_buffers", "nc": "num_columns", "major": "major", "minor": "minor"}


def rebuild(fm: FileMap, metas=None, schema: bytes | None = None, footer: dict | None = None) -> bytes:
    """The file with new column metadata (messages or bytes) and/or a new schema descriptor
    (:func:`lancefile.fuzz.filemap.rebuild`; ``footer`` keys as in :data:`_FOOTER_NAMES`)."""
    return filemap.rebuild(filemap.parse(fm.data), metas=metas if metas is not None else fm.metas, schema=schema,
                           footer={_FOOTER_NAMES[k]: v for k, v in (footer or {}).items()})


def descriptor(fm: FileMap):
    pos, size = fm.gbo[0]
    return file_pb2.FileDescriptor.FromString(fm.data[pos: pos + size])


# ------------------------------------------------------------------------------------------
# Mutations: a spec (JSON-able dict) and its deterministic application
# ------------------------------------------------------------------------------------------

_INTS = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 1023, 1024, 4095, 4096,
         65535, 65536, 2**31 - 1, 2**32 - 1, 2**40, 2**63 - 1, 2**64 - 1]
_LOGICAL = ["int8", "int16", "int32", "int64", "uint8", "uint64", "float", "double", "halffloat", "bool", "string",
            "large_string", "binary", "large_binary", "fixed_size_binary:16", "fixed_size_binary:3",
            "decimal:128:10:2", "date32:day", "timestamp:us:-", "null", "struct", "list", "large_list",
            "fixed_size_list:float:128", "fixed_size_list:int32:2", "dict:string:int32:false", "map", "nonsense"]


def _field_max(fd) -> int:
    return {FD.TYPE_UINT32: 2**32 - 1, FD.TYPE_INT32: 2**31 - 1, FD.TYPE_INT64: 2**63 - 1,
            FD.TYPE_UINT64: 2**64 - 1, FD.TYPE_ENUM: 2**31 - 1}.get(fd.type, 2**64 - 1)


def _int_choices(rng: random.Random, current: int, fd=None) -> int:
    cands = _INTS + [current - 1, current + 1, current * 2, current // 2, current + 8, current - 8]
    hi = _field_max(fd) if fd is not None else 2**64 - 1
    lo = -(2**31) if fd is not None and fd.type in (FD.TYPE_INT32, FD.TYPE_ENUM) else 0
    cands = [c for c in cands if lo <= c <= hi and c != current] or [0]
    return rng.choice(cands)


def _proto_paths(msg, prefix=()):
    """Every mutable place of a message: (path, field descriptor, kind) with kind scalar/repeated/bytes/message."""
    out = []
    for fd in msg.DESCRIPTOR.fields:
        path = prefix + (fd.name,)
        if fd.containing_oneof is not None and msg.WhichOneof(fd.containing_oneof.name) != fd.name:
            if fd.type != FD.TYPE_MESSAGE:
                out.append((path, fd, "bytes" if fd.type == FD.TYPE_BYTES else "scalar"))
            continue
        if fd.is_repeated:
            out.append((path, fd, "repeated"))
            if fd.type == FD.TYPE_MESSAGE and not fd.message_type.GetOptions().map_entry:
                for i, sub in enumerate(getattr(msg, fd.name)):
                    out += _proto_paths(sub, path + (i,))
        elif fd.type == FD.TYPE_MESSAGE:
            if msg.HasField(fd.name):
                out.append((path, fd, "message"))
                out += _proto_paths(getattr(msg, fd.name), path)
        elif fd.type == FD.TYPE_BYTES:
            out.append((path, fd, "bytes"))
        else:
            out.append((path, fd, "scalar"))
    return out


def _walk(msg, path):
    for step in path[:-1]:
        msg = msg[step] if isinstance(step, int) else getattr(msg, step)
    return msg, path[-1]


apply_proto_edit = apply_edit  # one edit language for both fuzzers (lancefile.fuzz.mutations)


_CE_SAMPLES = None


def _compressive_samples() -> list[bytes]:
    """Small CompressiveEncoding trees used to swap a variant for another."""
    global _CE_SAMPLES
    if _CE_SAMPLES is None:
        C = pb.CompressiveEncoding
        flat = lambda b: C(flat=pb.Flat(bits_per_value=b))  # noqa: E731
        _CE_SAMPLES = [x.SerializeToString() for x in [
            flat(0), flat(1), flat(8), flat(16), flat(32), flat(64), flat(128), flat(7),
            C(variable=pb.Variable(offsets=flat(32))), C(variable=pb.Variable(offsets=flat(64))),
            C(variable=pb.Variable(offsets=flat(16))),
            C(constant=pb.Constant(value=b"\x01\x00\x00\x00")), C(constant=pb.Constant()),
            C(inline_bitpacking=pb.InlineBitpacking(uncompressed_bits_per_value=32)),
            C(inline_bitpacking=pb.InlineBitpacking(uncompressed_bits_per_value=16)),
            C(out_of_line_bitpacking=pb.OutOfLineBitpacking(uncompressed_bits_per_value=16, values=flat(3))),
            C(rle=pb.Rle(values=flat(32), run_lengths=flat(8))), C(rle=pb.Rle(values=flat(16), run_lengths=flat(8))),
            C(byte_stream_split=pb.ByteStreamSplit(values=flat(32))),
            C(general=pb.General(compression=pb.BufferCompression(scheme=2), values=flat(32))),
            C(general=pb.General(compression=pb.BufferCompression(scheme=1),
                                 values=C(variable=pb.Variable(offsets=flat(32))))),
            C(fixed_size_list=pb.FixedSizeList(items_per_value=4, values=flat(32))),
            C(fixed_size_list=pb.FixedSizeList(items_per_value=8, values=flat(32), has_validity=True)),
            C(packed_struct=pb.PackedStruct(bits_per_value=[32, 64], values=flat(96))),
            C(fsst=pb.Fsst(symbol_table=b"\0" * 2312, values=C(variable=pb.Variable(offsets=flat(32))))),
            C(dictionary=pb.Dictionary(indices=flat(8), items=flat(32), num_dictionary_items=3)),
            C(variable_packed_struct=pb.VariablePackedStruct(fields=[
                pb.VariablePackedStruct.FieldEncoding(value=flat(32), bits_per_value=32)])),
            C(),
        ]]
    return _CE_SAMPLES


def random_proto_edit(rng: random.Random, msg, skip=()) -> dict:
    """A random edit of one field of ``msg`` (JSON-able)."""
    places = [p for p in _proto_paths(msg) if p[0][-1] not in skip]
    if not places:
        return None
    path, fd, kind = rng.choice(places)
    parent, name = _walk(msg, path)
    edit = {"path": list(path), "field": ".".join(str(s) for s in path)}
    if kind == "scalar":
        if fd.type == FD.TYPE_BOOL:
            return {**edit, "op": "set", "value": not getattr(parent, name)}
        if fd.type == FD.TYPE_ENUM:
            return {**edit, "op": "set", "value": rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 99])}
        if fd.type == FD.TYPE_STRING:
            return {**edit, "op": "set", "value": rng.choice(["", "x", getattr(parent, name) + "x"])}
        return {**edit, "op": "set", "value": _int_choices(rng, int(getattr(parent, name)), fd)}
    if kind == "bytes":
        cur = getattr(parent, name)
        r = rng.random()
        if r < 0.2 and fd.has_presence:
            return {**edit, "op": "clear"}
        if r < 0.45 and cur:
            new = cur[: rng.randrange(len(cur))]
        elif r < 0.6:
            new = cur + bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 8, 40])))
        elif r < 0.85 and cur:
            b = bytearray(cur)
            b[rng.randrange(len(b))] ^= rng.randrange(1, 256)
            new = bytes(b)
        else:
            new = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 2, 4, 8, 16, 33])))
        return {**edit, "op": "set-bytes", "value": new.hex()}
    if kind == "message":
        if fd.message_type.name == "CompressiveEncoding" and rng.random() < 0.7:
            return {**edit, "op": "replace-message", "value": rng.choice(_compressive_samples()).hex()}
        return {**edit, "op": "clear"}
    # repeated
    rep = getattr(parent, name)
    if fd.type == FD.TYPE_MESSAGE and (fd.message_type.GetOptions().map_entry or not len(rep)):
        return {**edit, "op": "clear"}
    r = rng.random()
    if len(rep) and r < 0.35:
        return {**edit, "op": "del", "index": rng.randrange(len(rep))}
    if fd.type == FD.TYPE_MESSAGE:
        return {**edit, "op": "append", "value": {"copy": rng.randrange(len(rep))}}
    val = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 99]) if fd.type == FD.TYPE_ENUM else _int_choices(rng, 0, fd)
    if len(rep) and r < 0.7:
        return {**edit, "op": "set-item", "index": rng.randrange(len(rep)), "value": val}
    return {**edit, "op": "append", "value": val}


@dataclass
class Mutation:
    kind: str
    spec: dict
    page: tuple | None  # (col, page) whose bytes or metadata were changed, if any
    col: int | None = None
    data: bool = False  # only value bytes changed: other data without an error is acceptable
    detail: str = ""  # what was changed, without positions (groups silent differences)


def _pick_page(rng, fm: FileMap, want=None) -> PageMap | None:
    pages = [p for p in fm.pages if want is None or want(p)]
    return rng.choice(pages) if pages else None


def _rel(fm: FileMap, region: str, rel: int) -> int:
    return fm.regions[region][0] + rel


def apply(fm: FileMap, spec: dict) -> bytes:
    """The mutated file bytes of ``spec`` (deterministic)."""
    op = spec["op"]
    if op in ("xor", "put"):
        out = bytearray(fm.data)
        at = _rel(fm, spec["region"], spec["offset"])
        if op == "xor":
            out[at] ^= spec["mask"]
        else:
            w = spec["width"]
            out[at: at + w] = (spec["value"] & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
        return bytes(out)
    if op == "fill":
        out = bytearray(fm.data)
        a, n = fm.regions[spec["region"]]
        out[a: a + n] = bytes([spec["byte"]]) * n
        return bytes(out)
    if op == "truncate":
        return fm.data[: spec["length"]]
    if op == "layout":
        metas = [copy.deepcopy(m) for m in fm.metas]
        lay = page_layout(metas[spec["col"]], spec["page"])
        for edit in spec.get("edits") or [spec["edit"]]:
            apply_proto_edit(lay, edit)
        set_page_layout(metas[spec["col"]], spec["page"], lay)
        return rebuild(fm, metas)
    if op == "colmeta":
        metas = [copy.deepcopy(m) for m in fm.metas]
        apply_proto_edit(metas[spec["col"]], spec["edit"])
        return rebuild(fm, metas)
    if op == "schema":
        d = descriptor(fm)
        apply_proto_edit(d, spec["edit"])
        return rebuild(fm, schema=d.SerializeToString())
    if op == "footer":
        return rebuild(fm, footer={spec["field"]: spec["value"]})
    raise ValueError(op)


# -- generators, one per mutation kind ------------------------------------------------------

def _flip(rng, fm, region, kind, page=None) -> Mutation:
    a, n = fm.regions[region]
    spec = {"op": "xor", "region": region, "offset": rng.randrange(n),
            "mask": (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(1, 256)}
    return Mutation(kind, spec, page)


def _page_region(rng, fm, roles) -> tuple[str, PageMap] | None:
    cands = [(f"c{p.col}p{p.page}b{k}", p) for p in fm.pages for k, r in enumerate(p.roles)
             if r in roles and p.buffers[k][1] > 0]
    return rng.choice(cands) if cands else None


def gen_flip_data(rng, fm):
    got = _page_region(rng, fm, {"chunks", "dict", "fz-items", "const-value", "levels"})
    if got is None or rng.random() < 0.05 and "other" in fm.regions:
        m = _flip(rng, fm, "other", "flip-data")
        m.data = True
        return m
    region, p = got
    m = _flip(rng, fm, region, "flip-data", (p.col, p.page))
    m.data = True
    # keep chunk headers out of this kind (they have their own)
    start = fm.regions[region][0] + m.spec["offset"]
    for h, size, _ in p.chunk_headers:
        if h <= start < h + size:
            m.kind, m.data = "flip-chunk-header", False
    return m


def gen_flip_role(role, kind):
    def gen(rng, fm):
        got = _page_region(rng, fm, {role})
        if got is None:
            return None
        region, p = got
        return _flip(rng, fm, region, kind, (p.col, p.page))
    return gen


def _pick_chunk(rng, fm) -> tuple[PageMap, dict] | None:
    """A random mini-block chunk: its page and :func:`chunk_layout`."""
    p = _pick_page(rng, fm, lambda p: p.chunk_headers)
    if p is None:
        return None
    return p, chunk_layout(fm, p.col, p.page, rng.randrange(len(p.chunk_headers)))


def gen_flip_chunk_header(rng, fm):
    got = _pick_chunk(rng, fm)
    if got is None:
        return None
    p, cl = got
    header = cl["rep"][0] - cl["header"]
    spec = {"op": "xor", "region": cl["region"], "offset": cl["header"] + rng.randrange(header),
            "mask": (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(1, 256)}
    return Mutation("flip-chunk-header", spec, (p.col, p.page))


def gen_flip_colmeta(rng, fm):
    c = rng.randrange(fm.num_columns)
    m = _flip(rng, fm, f"colmeta{c}", "flip-colmeta")
    m.col = c
    return m


def gen_flip_tables(rng, fm):
    return _flip(rng, fm, rng.choice(["footer", "cmo", "gbo"]), "flip-tables")


def gen_flip_schema(rng, fm):
    return _flip(rng, fm, "schema", "flip-schema")


def gen_truncate_file(rng, fm):
    n = len(fm.data)
    length = rng.choice([rng.randrange(n), n - rng.randrange(1, 41), n - 40 - rng.randrange(1, 200)])
    return Mutation("truncate-file", {"op": "truncate", "length": max(0, length)}, None)


def gen_truncate_buffer(rng, fm):
    p = _pick_page(rng, fm, lambda p: p.buffers)
    if p is None:
        return None
    k = rng.randrange(len(p.buffers))
    size = p.buffers[k][1]
    new = rng.choice([0, max(size - 1, 0), size // 2, max(size - 8, 0), rng.randrange(size + 1)])
    edit = {"path": ["pages", p.page, "buffer_sizes"], "op": "set-item", "index": k, "value": new,
            "field": f"pages.{p.page}.buffer_sizes[{k}]"}
    return Mutation("truncate-buffer", {"op": "colmeta", "col": p.col, "edit": edit}, (p.col, p.page))


def _put(rng, region, offset, width, kind, page, values=None):
    value = rng.choice(values or [0, 1, 0xFF, 0xFFFF, 0xFFFFFFFF, 0x7FFF, 0x8000, rng.randrange(1 << (8 * width))])
    return Mutation(kind, {"op": "put", "region": region, "offset": offset, "width": width, "value": value}, page)


def gen_forge_chunk_word(rng, fm):
    p = _pick_page(rng, fm, lambda p: p.chunk_headers)
    if p is None:
        return None
    word = p.chunk_headers[0][2]
    i = rng.randrange(len(p.chunk_headers))
    return _put(rng, f"c{p.col}p{p.page}b0", i * word, word, "forge-chunk-word", (p.col, p.page),
                [0, 0xF, 0x10, 0xFFFF, 0xFFFFFFFF, 0xFFF0, 0x1F, 0x7FFF, rng.randrange(1 << (8 * word))])


def gen_forge_chunk_header(rng, fm):
    got = _pick_chunk(rng, fm)
    if got is None:
        return None
    p, cl = got
    slots = [cl["num_levels"]] + [cl[k] for k in ("rep_size", "def_size") if cl[k]] + cl["buffer_sizes"]
    off, width = rng.choice(slots)
    return _put(rng, cl["region"], off, width, "forge-chunk-header", (p.col, p.page))


def gen_forge_rep_index(rng, fm):
    got = _page_region(rng, fm, {"rep-index", "fz-index"})
    if got is None:
        return None
    region, p = got
    k = p.roles.index("rep-index" if "rep-index" in p.roles else "fz-index")
    size = p.buffers[k][1]
    width = 8 if p.roles[k] == "rep-index" else max(1, size // (p.length + 1))
    if width not in (1, 2, 4, 8):
        width = 1
    i = rng.randrange(max(1, size // width))
    return _put(rng, region, i * width, width, "forge-rep-index", (p.col, p.page),
                [0, 1, 2, 0xFF, 0xFFFF, 0xFFFFFFFF, 2**63, 2**64 - 1, rng.randrange(1 << (8 * width))])


def gen_forge_fullzip_len(rng, fm):
    p = _pick_page(rng, fm, lambda p: p.kind == "full_zip_layout" and p.layout.full_zip_layout.bits_per_offset
                   and p.buffers and p.buffers[0][1] > 8)
    if p is None:
        return None
    fz = p.layout.full_zip_layout
    ctrl = 0 if not (fz.bits_rep + fz.bits_def) else 1 if fz.bits_rep + fz.bits_def <= 8 else 2
    lw = fz.bits_per_offset // 8
    # walk to a random valid item's length word
    data, (a, n) = fm.data, p.buffers[0]
    pos, offs = 0, []
    dmask = (1 << fz.bits_def) - 1
    while pos < n and len(offs) < 200:
        c = int.from_bytes(data[a + pos: a + pos + ctrl], "little") if ctrl else 0
        pos += ctrl
        if c & dmask == 0:
            offs.append(pos)
            ln = int.from_bytes(data[a + pos: a + pos + lw], "little")
            pos += lw + ln
    if not offs:
        return None
    return _put(rng, f"c{p.col}p{p.page}b0", rng.choice(offs), lw, "forge-fullzip-len", (p.col, p.page),
                [0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 2**63, 2**64 - 1, n, n + 1, rng.randrange(n)])


def gen_forge_constant(rng, fm):
    got = _page_region(rng, fm, {"const-value"})
    if got is None:
        return None
    region, p = got
    size = fm.regions[region][1]
    off = rng.choice([0, 4, 8] if size >= 12 else [0])
    return _put(rng, region, off, 4, "forge-constant-value", (p.col, p.page),
                [0, 1, 2, 3, 9, 0xFFFF, 0xFFFFFFFF, size, size + 1])


def gen_forge_page_meta(rng, fm):
    p = _pick_page(rng, fm)
    if p is None:
        return None
    meta = fm.metas[p.col]
    page = meta.pages[p.page]
    r = rng.random()
    pre = ["pages", p.page]
    if r < 0.3:
        edit = {"path": pre + ["length"], "op": "set",
                "value": rng.choice([0, 1, p.length - 1, p.length + 1, 2 * p.length, 2**32, 2**40, 2**63 - 1])}
    elif r < 0.55 and len(page.buffer_offsets):
        k = rng.randrange(len(page.buffer_offsets))
        off = page.buffer_offsets[k]
        edit = {"path": pre + ["buffer_offsets"], "op": "set-item", "index": k,
                "value": rng.choice([0, off + 1, off - 1, off + 8, len(fm.data), len(fm.data) - 1, 2**63, 2**64 - 1])}
        edit["value"] = max(0, edit["value"])
    elif r < 0.75 and len(page.buffer_sizes):
        k = rng.randrange(len(page.buffer_sizes))
        size = page.buffer_sizes[k]
        edit = {"path": pre + ["buffer_sizes"], "op": "set-item", "index": k,
                "value": rng.choice([size + 1, size + 8, 2 * size, len(fm.data), 2**63, 2**64 - 1])}
    elif r < 0.85:
        name = rng.choice(["buffer_offsets", "buffer_sizes"])
        if not len(getattr(page, name)):
            return None
        edit = {"path": pre + [name], "op": "del", "index": rng.randrange(len(getattr(page, name)))}
    elif r < 0.92:
        edit = {"path": ["pages"], "op": rng.choice(["del", "append"]), "index": p.page, "value": {"copy": p.page}}
    else:
        edit = {"path": pre + ["encoding", "direct", "encoding"], "op": "set-bytes",
                "value": rng.choice([b"", b"\x0a\x00", page.encoding.direct.encoding[:-3]]).hex()}
    edit["field"] = ".".join(map(str, edit["path"]))
    return Mutation("forge-page-meta", {"op": "colmeta", "col": p.col, "edit": edit}, (p.col, p.page))


def gen_forge_layout(rng, fm):
    p = _pick_page(rng, fm, lambda p: p.layout is not None)
    if p is None:
        return None
    edit = random_proto_edit(rng, p.layout)
    if edit is None:
        return None
    # new bytes of a constant or a symbol table are values; clearing them is not
    data = edit["path"][-1] in _VALUE_FIELDS and edit["op"] == "set-bytes" and bool(edit["value"])
    return Mutation("forge-layout", {"op": "layout", "col": p.col, "page": p.page, "edit": edit}, (p.col, p.page),
                    data=data)


def gen_forge_layout_multi(rng, fm):
    """Two to four edits of one page's layout at once (past the first consistency check)."""
    p = _pick_page(rng, fm, lambda p: p.layout is not None)
    if p is None:
        return None
    lay = copy.deepcopy(p.layout)
    edits = []
    for _ in range(rng.randrange(2, 5)):
        e = random_proto_edit(rng, lay, skip=_VALUE_FIELDS)
        if e is None:
            break
        try:
            apply_proto_edit(lay, e)
        except Exception:
            continue
        edits.append(e)
    if not edits:
        return None
    return Mutation("forge-layout-multi", {"op": "layout", "col": p.col, "page": p.page, "edits": edits},
                    (p.col, p.page))


def gen_forge_tables(rng, fm):
    r = rng.random()
    n = len(fm.data)
    if r < 0.5:
        name = rng.choice(["cms", "cmo", "gbo", "ng", "nc", "major", "minor"])
        idx = ["cms", "cmo", "gbo", "ng", "nc", "major", "minor"].index(name)
        cur = fm.footer[idx]
        vals = {"major": [0, 1, 2, 3, 65535], "minor": [0, 1, 2, 3, 4, 7, 65535]}.get(
            name, [0, 1, cur - 1, cur + 1, cur + 16, n, 2**31, 2**32 - 1] + ([2**63, 2**64 - 1] if idx < 3 else []))
        limit = 2**64 - 1 if idx < 3 else 2**32 - 1 if idx < 5 else 2**16 - 1
        return Mutation("forge-tables", {"op": "footer", "field": name,
                                         "value": min(limit, max(0, rng.choice(vals)))}, None)
    region = rng.choice(["cmo", "gbo"])
    a, size = fm.regions[region]
    if size < 16:
        return None
    entry = rng.randrange(size // 16)
    return _put(rng, region, 16 * entry + rng.choice([0, 8]), 8, "forge-tables", None,
                [0, 1, n, n - 1, 2**63, 2**64 - 1, rng.randrange(n)])


def gen_forge_schema(rng, fm):
    d = descriptor(fm)
    r = rng.random()
    rows = int(d.length)
    if r < 0.3:
        edit = {"path": ["length"], "op": "set",
                "value": rng.choice([0, 1, rows - 1, rows + 1, 2 * rows, 2**32, 2**40, 2**63 - 1])}
    elif r < 0.65:
        i = rng.randrange(len(d.schema.fields))
        edit = {"path": ["schema", "fields", i, "logical_type"], "op": "set", "value": rng.choice(_LOGICAL)}
    else:
        edit = random_proto_edit(rng, d)
        if edit is None:
            return None
    edit["field"] = ".".join(map(str, edit["path"]))
    edit["value"] = max(0, edit["value"]) if isinstance(edit.get("value"), int) and edit["path"] == ["length"] \
        else edit.get("value")
    if edit["value"] is None:
        del edit["value"]
    return Mutation("forge-schema", {"op": "schema", "edit": edit}, None)


def gen_fill_buffer(rng, fm):
    p = _pick_page(rng, fm, lambda p: any(n for _, n in p.buffers))
    if p is None:
        return None
    k = rng.choice([k for k, (_, n) in enumerate(p.buffers) if n])
    return Mutation("fill-buffer", {"op": "fill", "region": f"c{p.col}p{p.page}b{k}",
                                    "byte": rng.choice([0, 0xFF, 0x80])}, (p.col, p.page),
                    data=p.roles[k] in DATA_ROLES - {"chunks"})


KINDS = {
    "flip-data": gen_flip_data,
    "flip-chunk-meta": gen_flip_role("chunk-meta", "flip-chunk-meta"),
    "flip-chunk-header": gen_flip_chunk_header,
    "flip-rep-index": gen_flip_role("rep-index", "flip-rep-index"),
    "flip-fz-index": gen_flip_role("fz-index", "flip-fz-index"),
    "flip-colmeta": gen_flip_colmeta,
    "flip-tables": gen_flip_tables,
    "flip-schema": gen_flip_schema,
    "truncate-file": gen_truncate_file,
    "truncate-buffer": gen_truncate_buffer,
    "forge-chunk-word": gen_forge_chunk_word,
    "forge-chunk-header": gen_forge_chunk_header,
    "forge-rep-index": gen_forge_rep_index,
    "forge-fullzip-len": gen_forge_fullzip_len,
    "forge-constant-value": gen_forge_constant,
    "forge-page-meta": gen_forge_page_meta,
    "forge-layout": gen_forge_layout,
    "forge-layout-multi": gen_forge_layout_multi,
    "forge-tables": gen_forge_tables,
    "forge-schema": gen_forge_schema,
    "fill-buffer": gen_fill_buffer,
}
# a forged schema may declare other types: a different result schema is then no error
SCHEMA_KINDS = {"flip-schema", "forge-schema"}
# buffers whose bytes are values (or levels): changing them may give other data without an error
DATA_ROLES = {"chunks", "dict", "fz-items", "const-value", "levels"}


# how often each kind runs in a campaign (the protobuf and size forgeries reach the most code)
WEIGHTS = {"forge-layout": 4, "forge-layout-multi": 2, "forge-chunk-header": 2, "forge-page-meta": 2,
           "forge-schema": 2, "flip-data": 2, "flip-chunk-header": 2, "forge-rep-index": 2}


def _role(fm: FileMap, region: str) -> str:
    got = re.fullmatch(r"c(\d+)p(\d+)b(\d+)", region)
    if not got:
        return region.rstrip("0123456789")
    c, p, b = map(int, got.groups())
    page = next(x for x in fm.pages if x.col == c and x.page == p)
    return f"{page.kind.replace('_layout', '')}:{page.roles[b]}"


def describe(fm: FileMap, spec: dict) -> str:
    """What a mutation changes, without positions: a protobuf field path or a buffer role."""
    if "edits" in spec:
        return f"{spec['op']}:multi"
    if "edit" in spec:
        path = ".".join(str(x) for x in spec["edit"]["path"] if not isinstance(x, int))
        return f"{spec['op']}:{path}:{spec['edit']['op']}"
    if "region" in spec:
        return f"{spec['op']}:{_role(fm, spec['region'])}"
    return spec["op"] + (f":{spec['field']}" if "field" in spec else "")


_VALUE_FIELDS = ("inline_value", "symbol_table", "value")


def _strip_values(msg) -> None:
    """Clear the fields that hold values (not sizes) in a parsed message tree."""
    for fd, val in msg.ListFields():
        if fd.name in _VALUE_FIELDS and fd.type == FD.TYPE_BYTES:
            msg.ClearField(fd.name)
        elif fd.name == "encoding" and fd.type == FD.TYPE_BYTES:  # a page's serialized Any(PageLayout)
            try:
                anyv = any_pb2.Any.FromString(val)
                lay = pb.PageLayout.FromString(anyv.value)
            except Exception:
                continue
            _strip_values(lay)
            msg.encoding = lay.SerializeToString()
        elif fd.type == FD.TYPE_MESSAGE:
            for sub in (val if fd.is_repeated else [val]):
                if not (fd.message_type.GetOptions().map_entry):
                    _strip_values(sub)


def _only_values_changed(fm: FileMap, data: bytes, col: int) -> bool:
    """Whether a flipped column metadata still parses and differs only in value bytes (inline constants...)."""
    pos, size = fm.colmeta[col]
    try:
        new = file2_pb2.ColumnMetadata.FromString(data[pos: pos + size])
    except Exception:
        return False
    old = copy.deepcopy(fm.metas[col])
    _strip_values(old)
    _strip_values(new)
    return old.SerializeToString(deterministic=True) == new.SerializeToString(deterministic=True)


def generate(rng: random.Random, fm: FileMap, kind: str) -> Mutation | None:
    for _ in range(5):
        m = KINDS[kind](rng, fm)
        if m is not None:
            m.detail = describe(fm, m.spec)
            if m.kind == "flip-colmeta" and _only_values_changed(fm, apply(fm, m.spec), m.col):
                m.data = True
            return m
    return None


# ------------------------------------------------------------------------------------------
# Reading a mutant and judging the outcome
# ------------------------------------------------------------------------------------------

_SRC = str(ROOT / "src" / "lancefile")
_PAGE_RE = re.compile(r"column \d+ page \d+")
_COL_RE = re.compile(r"column \d+")


def _frames(tb):
    return [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(tb)]


def escape_point(exc: BaseException) -> str:
    """``file:line (function)`` of the innermost lancefile frame the exception passed through."""
    frames = _frames(exc.__traceback__)
    ours = [f for f in frames if "/lancefile/" in f[0] and f[2] != "__call__"]
    f = (ours or frames or [("?", 0, "?")])[-1]
    name = f[0].split("src/")[-1] if "src/" in f[0] else os.path.basename(f[0])
    return f"{name}:{f[1]} ({f[2]})"


def judge_exception(exc: BaseException, path: str = "") -> dict:
    """{"outcome": lance-error | foreign | relabelled, "type", "message", "where", "names_page", ...}."""
    msg = str(exc)
    if isinstance(exc, lancefile.LanceError):
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, lancefile.LanceError):
            return {"outcome": "relabelled", "type": type(cause).__name__, "message": str(cause)[:400],
                    "wrapper": msg[:300], "where": escape_point(cause)}
        if "cannot decode rows" in msg:
            return {"outcome": "relabelled", "type": "?", "message": msg[:400], "where": escape_point(exc)}
        return {"outcome": "lance-error", "type": type(exc).__name__, "message": msg[:400],
                "where": escape_point(exc), "names_page": bool(_PAGE_RE.search(msg)),
                "names_column": bool(_COL_RE.search(msg)), "names_file": not path or path in msg}
    return {"outcome": "foreign", "type": type(exc).__name__, "message": msg[:400], "where": escape_point(exc)}


def same_data(a: pa.Table, b: pa.Table) -> bool:
    try:
        return datagen._nan_equal(a, b)
    except Exception:
        return False


def read_ops(num_rows: int, rng: random.Random) -> list:
    """The reads of one case: metadata, everything, a range, a take."""
    ops = [["metadata"], ["all"]]
    if num_rows:
        start = rng.randrange(num_rows)
        ops.append(["range", start, rng.randrange(1, num_rows - start + 1)])
        k = rng.choice([1, 3, 17])
        idx = sorted(rng.randrange(num_rows) for _ in range(k)) if rng.random() < 0.6 else \
            [rng.randrange(num_rows) for _ in range(k)]
        ops.append(["take", idx])
    return ops


def run_op(path: str, op: list, baseline: pa.Table) -> dict:
    """One read of a (possibly corrupt) file, judged."""
    try:
        reader = lancefile.LanceFileReader(path)
        if op[0] == "metadata":
            reader.metadata()
            return {"outcome": "ok"}
        if op[0] == "all":
            got, want = reader.read_all().to_table(), baseline
        elif op[0] == "range":
            if op[1] + op[2] > reader.num_rows():
                return {"outcome": "ok", "note": "range outside forged row count"}
            got, want = reader.read_range(op[1], op[2]).to_table(), baseline.slice(op[1], op[2])
        else:
            if max(op[1]) >= reader.num_rows():
                return {"outcome": "ok", "note": "take outside forged row count"}
            got, want = reader.take_rows(op[1]).to_table(), baseline.take(op[1])
    except BaseException as exc:  # noqa: BLE001 - judged
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return judge_exception(exc, path)
    try:
        got.validate(full=True)
    except Exception as exc:  # noqa: BLE001
        return {"outcome": "invalid-arrow", "type": type(exc).__name__, "message": str(exc)[:300],
                "where": "validate(full=True)"}
    expected_rows = baseline.num_rows if op[0] == "all" else want.num_rows
    if got.num_rows != expected_rows:
        return {"outcome": "silent-diff", "what": "rows", "rows": got.num_rows, "expected_rows": expected_rows}
    if not got.schema.equals(want.schema):
        return {"outcome": "silent-diff", "what": "schema"}
    if not same_data(got, want):
        return {"outcome": "silent-diff", "what": "data"}
    return {"outcome": "ok"}


def _arrow_problem(msg: str) -> str:
    """The innermost complaint of ``validate(full=True)``, without numbers."""
    last = msg.rsplit("Invalid: ", 1)[-1]
    return re.sub(r"\d+", "N", last)[:80]


def signature(m: Mutation, res: dict) -> str | None:
    """The failure signature of one judged read, or None when it is fine."""
    o = res["outcome"]
    if o == "ok":
        return None
    if o == "lance-error":
        if not res["names_file"]:
            return f"message-without-file | {res['type']} | {res['where']}"
        if m.page is not None and not res["names_page"]:
            return f"message-without-page | {res['type']} | {res['where']}"
        return None
    if o in ("foreign", "relabelled"):
        if res["type"] == "MemoryError" or "array is too big" in res["message"]:
            return f"huge-allocation | {res['type']} | {res['where']}"
        return f"{o} | {res['type']} | {res['where']}"
    if o == "invalid-arrow":
        return f"invalid-arrow | {_arrow_problem(res['message'])}"
    if o == "silent-diff":
        if m.data or (res["what"] == "schema" and m.kind in SCHEMA_KINDS):
            return None  # a changed value byte, or a schema that declares other types
        if res["what"] == "rows":
            return f"silent-diff | rows | {'fewer' if res['rows'] < res['expected_rows'] else 'more'}"
        return f"silent-diff | {res['what']} | {m.kind} | {m.detail}"
    return f"{o} | {res.get('type', '')} | {res.get('where', '')}"


_CHILD = """
import json, sys
sys.path[:0] = {paths!r}
import lancefile
from tests.robustness import fuzz_v2_1 as fz
base = lancefile.LanceFileReader({clean!r}).read_all().to_table()
for op in json.loads({ops!r}):
    print(json.dumps(fz.run_op({path!r}, op, base)), flush=True)
"""


def run_in_child(path: str, clean: str, ops: list, timeout: float = 300) -> tuple[list[dict], int | None, str]:
    """The reads ``ops`` of ``path`` judged in a fresh interpreter (with faulthandler), against the clean
    file ``clean``: (results of the reads that finished, exit code or None after a timeout, stderr)."""
    import subprocess

    code = _CHILD.format(paths=[str(ROOT), str(ROOT / "src")], clean=clean, ops=json.dumps(ops), path=path)
    try:
        proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        code, stdout, stderr = None, out, err
    else:
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")], code, stderr


def diagnose_crash(data: bytes, key: str, ops: list, corpus_dir: str, timeout: float = 60) -> str:
    """Re-run a crashing case in a fresh interpreter: 'abort message @ file:line (function)'."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".lance", delete=False) as f:
        f.write(data)
    try:
        _, code, err = run_in_child(f.name, os.path.join(corpus_dir, key + ".lance"), ops, timeout)
    finally:
        os.unlink(f.name)
    lines = err.splitlines()
    if code is None:
        lines.insert(0, "hang")
    what = next((ln.strip() for ln in lines if "Check failed" in ln or "Fatal Python error" in ln
                 or ln.startswith("hang")), lines[0].strip() if lines else "no output")
    what = re.sub(r"^/arrow/cpp/src/", "", what)
    frame = next((ln.strip() for ln in lines if "/lancefile/" in ln and ln.strip().startswith("File")
                  and "in __call__" not in ln), "")
    m = re.search(r'src/(lancefile/[^"]+)", line (\d+) in (\w+)', frame)
    return f"{what[:120]} @ {m.group(1)}:{m.group(2)} ({m.group(3)})" if m else what[:120]


def run_case(path: str, ops: list, baseline: pa.Table) -> list[dict]:
    return [run_op(path, op, baseline) for op in ops]


# ------------------------------------------------------------------------------------------
# The watched worker
# ------------------------------------------------------------------------------------------

def _peak_rss_reset() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _peak_rss() -> int:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _worker(conn, corpus_dir: str, mem_limit: int) -> None:
    import resource

    baselines = {}
    for f in sorted(Path(corpus_dir).glob("*-2.*.lance")):
        baselines[f.stem] = lancefile.LanceFileReader(str(f)).read_all().to_table()
        for op in (["metadata"], ["range", 0, 1], ["take", [0]]):
            run_op(str(f), op, baselines[f.stem])  # compile kernels now
    vm = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            vm = int(line.split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + mem_limit, vm + mem_limit))
    scratch = os.path.join(os.path.dirname(corpus_dir), f"case-{os.getpid()}.lance")
    conn.send(("ready", vm))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        key, data, ops = msg
        with open(scratch, "wb") as f:
            f.write(data)
        _peak_rss_reset()
        base = _peak_rss()
        t0 = time.perf_counter()
        results = run_case(scratch, ops, baselines[key])
        conn.send((results, _peak_rss() - base, time.perf_counter() - t0))


class Watchdog:
    """One worker process at a time; restarted after a crash, a hang or a big allocation."""

    def __init__(self, corpus_dir: str, timeout: float, mem_limit: int) -> None:
        import multiprocessing as mp

        self.ctx = mp.get_context("spawn")
        self.corpus_dir, self.timeout, self.mem_limit = corpus_dir, timeout, mem_limit
        self.proc = self.conn = None
        self.restarts = 0

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.corpus_dir, self.mem_limit), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not self.conn.poll(600):
            raise RuntimeError("fuzz worker did not start")
        self.conn.recv()
        self.restarts += 1

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
            self.proc = None

    def run(self, key: str, data: bytes, ops: list):
        """(results per op, peak RSS growth, seconds) or ("crash"/"timeout", detail)."""
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send((key, data, ops))
        if self.conn.poll(self.timeout):
            try:
                return self.conn.recv()
            except EOFError:
                pass
            self.proc.join(5)
            code = self.proc.exitcode
            self.stop()
            return "crash", f"exit code {code}"
        alive = self.proc.is_alive()
        code = self.proc.exitcode
        self.stop()
        return ("timeout", f"no answer in {self.timeout} s") if alive else ("crash", f"exit code {code}")


# ------------------------------------------------------------------------------------------
# The campaign
# ------------------------------------------------------------------------------------------

def campaign(args) -> None:
    out = Path(args.out)
    (out / "repro").mkdir(parents=True, exist_ok=True)
    corpus_dir = out / "corpus"
    corpus = build_corpus(corpus_dir)
    maps = {k: parse_file(v) for k, v in corpus.items()}
    rows = {k: int(descriptor(m).length) for k, m in maps.items()}
    kinds = [k for k in args.kinds or KINDS for _ in range(WEIGHTS.get(k, 1))]
    rng = random.Random(args.seed)
    dog = Watchdog(str(corpus_dir), args.timeout, args.mem_limit_mb << 20)
    counts: dict = {}
    sigs: dict = {}
    log = open(out / "cases.jsonl", "w")
    deadline = time.time() + 60 * args.minutes
    n = 0
    big_rss = args.rss_limit_mb << 20
    try:
        while time.time() < deadline and (not args.cases or n < args.cases):
            kind = kinds[n % len(kinds)]
            key = rng.choice(sorted(maps))
            case_seed = rng.randrange(2**32)
            crng = random.Random(case_seed)
            m = generate(crng, maps[key], kind)
            if m is None:
                n += 1
                continue
            try:
                data = apply(maps[key], m.spec)
            except Exception as exc:  # a spec that cannot be built (e.g. proto out of range)
                counts.setdefault(kind, {}).setdefault("unbuildable", 0)
                counts[kind]["unbuildable"] += 1
                n += 1
                continue
            ops = read_ops(rows[key], crng)
            got = dog.run(key, data, ops)
            n += 1
            c = counts.setdefault(kind, {})
            c["cases"] = c.get("cases", 0) + 1
            case = {"n": n, "key": key, "kind": kind, "detail": m.detail, "data": m.data, "spec": m.spec,
                    "page": m.page, "ops": ops, "size": len(data)}
            found = []
            if got[0] in ("crash", "timeout"):
                c[got[0]] = c.get(got[0], 0) + 1
                detail = diagnose_crash(data, key, ops, str(corpus_dir))
                found.append(f"{got[0]} | {detail}")
                case["outcome"] = [got[0], got[1], detail]
            else:
                results, rss, secs = got
                case["results"], case["rss"], case["secs"] = results, rss, round(secs, 3)
                for r in results:
                    tag = r["outcome"]
                    if tag == "lance-error":
                        tag += "" if (m.page is None or r["names_page"]) else " (no page in message)"
                    c[tag] = c.get(tag, 0) + 1
                    s = signature(m, r)
                    if s:
                        found.append(s)
                if rss > big_rss:
                    c["huge-allocation"] = c.get("huge-allocation", 0) + 1
                    found.append(f"huge-allocation | {kind} | peak RSS +{rss >> 20} MiB")
                    dog.stop()
            for s in dict.fromkeys(found):
                entry = sigs.setdefault(s, {"count": 0, "kinds": {}, "best": None})
                entry["count"] += 1
                entry["kinds"][kind] = entry["kinds"].get(kind, 0) + 1
                if entry["best"] is None or len(data) < entry["best"]["size"]:
                    entry["best"] = case
                    h = hashlib.sha1(s.encode()).hexdigest()[:10]
                    (out / "repro" / f"{h}.lance").write_bytes(data)
                    (out / "repro" / f"{h}.json").write_text(json.dumps({"signature": s, **case}, indent=1,
                                                                        default=str))
            if found or n % 50 == 0:
                log.write(json.dumps(case, default=str) + "\n")
            if n % 500 == 0:
                _report(out, counts, sigs, n, dog.restarts)
                print(f"{n} cases, {len(sigs)} signatures, {int(deadline - time.time())} s left", flush=True)
    finally:
        dog.stop()
        log.close()
        _report(out, counts, sigs, n, dog.restarts)
    print(f"{n} cases; report in {out / 'report.md'}")


def _report(out: Path, counts, sigs, n, restarts) -> None:
    (out / "report.json").write_text(json.dumps({"cases": n, "worker_starts": restarts, "counts": counts,
                                                 "signatures": sigs}, indent=1, default=str))
    lines = [f"# lancefile 2.1/2.2 fuzz report: {n} cases, {restarts} worker starts", "",
             "| kind | cases | outcomes (per read) |", "|---|---:|---|"]
    for kind, c in sorted(counts.items()):
        rest = ", ".join(f"{k}: {v}" for k, v in sorted(c.items()) if k != "cases")
        lines.append(f"| {kind} | {c.get('cases', 0)} | {rest} |")
    lines += ["", "## Failure signatures", ""]
    for s, e in sorted(sigs.items(), key=lambda kv: -kv[1]["count"]):
        h = hashlib.sha1(s.encode()).hexdigest()[:10]
        b = e["best"]
        lines.append(f"* `{s}`: {e['count']} cases {e['kinds']}; repro `repro/{h}.lance` ({b['key']}, "
                     f"{json.dumps(b['spec'])[:300]})")
    (out / "report.md").write_text("\n".join(lines) + "\n")


def replay(path: str) -> None:
    case = json.loads(Path(path).read_text())
    data = Path(path).with_suffix(".lance")
    corpus_dir = Path(path).resolve().parent.parent / "corpus"
    baseline = lancefile.LanceFileReader(str(corpus_dir / f"{case['key']}.lance")).read_all().to_table()
    print(case["signature"])
    for op in case["ops"]:
        print(op, run_op(str(data), op, baseline))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--cases", type=int, default=0, help="stop after this many cases (0: time only)")
    ap.add_argument("--out", default="/tmp/lancefile-fuzz")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", nargs="*", choices=list(KINDS))
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a case may take")
    ap.add_argument("--mem-limit-mb", type=int, default=3072, help="address space the worker may add")
    ap.add_argument("--rss-limit-mb", type=int, default=256, help="peak RSS growth flagged as a huge allocation")
    ap.add_argument("--replay", help="a repro .json to run again")
    args = ap.parse_args(argv)
    if args.replay:
        replay(args.replay)
    else:
        campaign(args)


if __name__ == "__main__":
    main()
