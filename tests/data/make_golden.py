"""Write the 2.1 / 2.2 golden files: Lance files written by pylance, with the data pylance reads back.

Run from the repository root (needs pylance, imported as ``lance``)::

    python tests/data/make_golden.py            # every case, both versions
    python tests/data/make_golden.py --only constant list_int32

For each version in :data:`VERSIONS` and each case in :data:`CASES` it writes

* ``tests/data/<version>/<case>.lance``: written with ``lance.file.LanceFileWriter(path, schema,
  version=..., **options)`` (one ``write_batch`` per batch of the case);
* ``tests/data/<version>/<case>.arrow``: an Arrow IPC file holding what
  ``lance.file.LanceFileReader(path).read_all(batch_size=rows).to_table()`` returns (no .arrow when
  pylance cannot read its own file; the error is in the manifest as ``reference_read_error``);
* ``tests/data/<version>/MANIFEST.json``: every case with its description, rows, columns, writer
  options, the pylance version, refusals, and for every physical column the page layouts and
  compressive encodings found by parsing the file's footer and column metadata;
* ``tests/data/README.md``: the case list and the coverage table printed at the end.

The data is seeded per case (``zlib.crc32`` of the case name), so a re-run writes the same data.
``tests/golden/test_golden.py`` reads the files with lancefile and compares with the .arrow files.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import struct
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for p in (str(ROOT), str(ROOT / "src")):
    if p not in sys.path:
        sys.path.insert(0, p)

from google.protobuf import any_pb2  # noqa: E402

from lancefile._proto import encodings_v2_1_pb2 as pb21  # noqa: E402
from lancefile._proto import file2_pb2  # noqa: E402
from tests.conftest import assert_tables_equal  # noqa: E402
from tests.datagen import random_array  # noqa: E402

VERSIONS = ("2.1", "2.2")
IPC_OPTIONS = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=19))
FOOTER = struct.Struct("<QQQIIHH4s")

# --------------------------------------------------------------------------------------------
# Encoding summaries (parsing the file ourselves)
# --------------------------------------------------------------------------------------------

LAYER_NAMES = {0: "UNSPECIFIED", 1: "ALL_VALID_ITEM", 2: "ALL_VALID_LIST", 3: "NULLABLE_ITEM",
               4: "NULLABLE_LIST", 5: "EMPTYABLE_LIST", 6: "NULL_AND_EMPTY_LIST"}
SCHEMES = {0: "unspecified", 1: "lz4", 2: "zstd"}
CONTEXTS = ("value", "rep", "def", "dictionary", "full_zip_value")


def _scheme(bc) -> str:
    s = SCHEMES.get(bc.scheme, str(bc.scheme))
    return f"{s}:{bc.level}" if bc.HasField("level") else s


def summarise_ce(ce, ctx: str, seen: set) -> str:
    """Compact text for a CompressiveEncoding; adds ``(ctx, variant)`` pairs to ``seen``."""
    kind = ce.WhichOneof("compression")
    if kind is None:
        seen.add((ctx, "MISSING"))
        return "MISSING"
    m = getattr(ce, kind)
    seen.add((ctx, kind))
    extra = []
    if kind in ("flat", "variable", "inline_bitpacking"):
        buf = m.data if kind == "flat" else m.values
        if m.HasField("data" if kind == "flat" else "values"):
            seen.add((ctx, f"{kind}+buffer_compression"))
            extra.append(_scheme(buf))
    if kind == "flat":
        return f"flat({', '.join([str(m.bits_per_value)] + extra)})"
    if kind == "variable":
        return f"variable({', '.join([summarise_ce(m.offsets, ctx, seen)] + extra)})"
    if kind == "inline_bitpacking":
        return f"inline_bitpacking({', '.join([str(m.uncompressed_bits_per_value)] + extra)})"
    if kind == "constant":
        return f"constant({len(m.value)}B)" if m.HasField("value") else "constant(null)"
    if kind == "out_of_line_bitpacking":
        return f"out_of_line_bitpacking({m.uncompressed_bits_per_value},{summarise_ce(m.values, ctx, seen)})"
    if kind == "fsst":
        header = struct.unpack_from("<Q", m.symbol_table)[0] if len(m.symbol_table) >= 8 else 0
        switch = (header >> 24) & 0xFF
        seen.add((ctx, "fsst" + ("(compressed)" if switch else "(uncompressed, switch 0)")))
        return f"fsst({header & 0xFF} symbols{'' if switch else ', switch 0'},{summarise_ce(m.values, ctx, seen)})"
    if kind == "dictionary":
        return (f"dictionary({summarise_ce(m.indices, ctx, seen)},{summarise_ce(m.items, ctx, seen)},"
                f"{m.num_dictionary_items})")
    if kind == "rle":
        return f"rle({summarise_ce(m.values, ctx, seen)},{summarise_ce(m.run_lengths, ctx, seen)})"
    if kind == "byte_stream_split":
        return f"byte_stream_split({summarise_ce(m.values, ctx, seen)})"
    if kind == "general":
        scheme = _scheme(m.compression)
        seen.add((ctx, f"general {scheme.split(':')[0]}"))
        return f"general({scheme},{summarise_ce(m.values, ctx, seen)})"
    if kind == "fixed_size_list":
        if m.has_validity:
            seen.add((ctx, "fixed_size_list+validity"))
        v = ",validity" if m.has_validity else ""
        return f"fixed_size_list({m.items_per_value}{v},{summarise_ce(m.values, ctx, seen)})"
    if kind == "packed_struct":
        bits = ",".join(map(str, m.bits_per_value))
        return f"packed_struct([{bits}],{summarise_ce(m.values, ctx, seen)})"
    if kind == "variable_packed_struct":
        parts = []
        for fe in m.fields:
            lay = fe.WhichOneof("layout")
            parts.append(f"{summarise_ce(fe.value, ctx, seen)}:{lay}={getattr(fe, lay) if lay else '?'}")
        return f"variable_packed_struct({'; '.join(parts)})"
    return kind


def _layers(layers) -> str:
    return "[" + ",".join(LAYER_NAMES.get(x, str(x)) for x in layers) + "]"


def summarise_layout(pl, seen: set) -> str:
    """Compact text for a PageLayout; adds layout features and ``(context, variant)`` to ``seen``."""
    kind = pl.WhichOneof("layout")
    if kind is None:  # a layout lancefile's proto does not know (e.g. 14.x delta_blob_layout = 5)
        seen.add(("layout", "UNKNOWN"))
        return "unknown_layout"
    m = getattr(pl, kind)
    seen.add(("layout", kind))
    if kind == "mini_block_layout":
        parts = [f"values={summarise_ce(m.value_compression, 'value', seen)}"]
        if m.HasField("rep_compression"):
            parts.append(f"rep={summarise_ce(m.rep_compression, 'rep', seen)}")
        if m.HasField("def_compression"):
            parts.append(f"def={summarise_ce(m.def_compression, 'def', seen)}")
        if m.HasField("dictionary"):
            seen.add(("layout", "mini_block_layout with dictionary"))
            parts.append(f"dict={summarise_ce(m.dictionary, 'dictionary', seen)} x{m.num_dictionary_items}")
        if m.repetition_index_depth:
            seen.add(("layout", "mini_block_layout with repetition index"))
            parts.append(f"rep_index_depth={m.repetition_index_depth}")
        if m.has_large_chunk:
            parts.append("has_large_chunk")
        parts.append(f"layers={_layers(m.layers)}")
        return f"mini_block({', '.join(parts)})"
    if kind == "constant_layout":
        parts = []
        if m.HasField("inline_value"):
            seen.add(("layout", "constant_layout with inline_value"))
            parts.append(f"inline_value={m.inline_value.hex()}")
        if m.HasField("rep_compression"):
            parts.append(f"rep={summarise_ce(m.rep_compression, 'rep', seen)}")
        if m.HasField("def_compression"):
            parts.append(f"def={summarise_ce(m.def_compression, 'def', seen)}")
        if m.HasField("rep_compression") or m.HasField("def_compression"):
            seen.add(("layout", "constant_layout with compressed levels"))
        if m.num_rep_values or m.num_def_values:
            parts.append(f"num_rep_values={m.num_rep_values}, num_def_values={m.num_def_values}")
        parts.append(f"layers={_layers(m.layers)}")
        return f"constant({', '.join(parts)})"
    if kind == "full_zip_layout":
        detail = m.WhichOneof("details")
        seen.add(("layout", f"full_zip_layout with {detail}"))
        return (f"full_zip({detail}={getattr(m, detail) if detail else '?'}, bits_rep={m.bits_rep}, "
                f"bits_def={m.bits_def}, values={summarise_ce(m.value_compression, 'full_zip_value', seen)}, "
                f"layers={_layers(m.layers)})")
    if kind == "blob_layout":
        return f"blob(inner={summarise_layout(m.inner_layout, seen)}, layers={_layers(m.layers)})"
    return kind


def _constant_buffer_features(pl, sizes: list[int], seen: set) -> None:
    """Constant layouts: which of value buffer / raw levels the page buffers hold."""
    m = pl.constant_layout
    nbuf = len(sizes)
    if nbuf == 0:
        seen.add(("layout", "constant_layout without buffers (simple all-null or inline constant)"))
        return
    has_levels = nbuf >= 2
    value_buffer = nbuf in (1, 3)
    if value_buffer:
        seen.add(("layout", "constant_layout with value buffer"))
    if has_levels and not (m.HasField("rep_compression") or m.HasField("def_compression")):
        seen.add(("layout", "constant_layout with raw u16 levels"))


def _chunk_rows(data: bytes, page, m) -> tuple[list[int], dict]:
    """Row offsets (within the page) where the mini-block chunks after the first start, plus facts.

    Without repetition the chunk word's log2 gives the value count (= rows); with a repetition
    index, its first entry per chunk is the number of rows completed in that chunk."""
    word = 4 if m.has_large_chunk else 2
    off, size = page.buffer_offsets[0], page.buffer_sizes[0]
    words = [int.from_bytes(data[off + i: off + i + word], "little") for i in range(0, size, word)]
    facts = {"chunks": len(words)}
    facts["max_chunk_bytes"] = max(((w >> 4) + 1) * 8 for w in words) if words else 0
    if m.repetition_index_depth:
        ro, rs = page.buffer_offsets[-1], page.buffer_sizes[-1]
        stride = m.repetition_index_depth + 1
        idx = np.frombuffer(data[ro: ro + rs], "<u8").reshape(-1, stride)
        facts["rows_split_across_chunks"] = int((idx[:-1, 1] > 0).sum())
        starts = np.cumsum(idx[:-1, 0]).tolist()
    else:
        counts = [1 << (w & 0xF) for w in words[:-1]]
        starts = np.cumsum(counts).tolist()
    return [int(s) for s in starts], facts


def inspect_file(path: Path) -> dict:
    """Footer version and, per physical column, its pages: rows, buffers and summaries."""
    data = path.read_bytes()
    _cms, _cmo, gbo, _ngb, ncol, major, minor, magic = FOOTER.unpack(data[-FOOTER.size:])
    assert magic == b"LANC", path
    table = data[gbo - 16 * ncol: gbo]
    columns, seen = [], set()
    for c in range(ncol):
        pos, size = struct.unpack_from("<QQ", table, 16 * c)
        cm = file2_pb2.ColumnMetadata()
        cm.ParseFromString(data[pos: pos + size])
        pages, first = [], 0
        for page in cm.pages:
            anym = any_pb2.Any()
            anym.ParseFromString(page.encoding.direct.encoding)
            pl = pb21.PageLayout()
            pl.ParseFromString(anym.value)
            entry = {"first_row": first, "rows": page.length, "buffer_sizes": list(page.buffer_sizes),
                     "layout": summarise_layout(pl, seen)}
            kind = pl.WhichOneof("layout")
            if kind == "constant_layout":
                _constant_buffer_features(pl, list(page.buffer_sizes), seen)
            if kind == "mini_block_layout":
                starts, facts = _chunk_rows(data, page, pl.mini_block_layout)
                entry.update(facts)
                entry["_chunk_row_starts"] = starts
                if facts["chunks"] > 1:
                    seen.add(("structure", "mini-block page with several chunks"))
                if facts.get("rows_split_across_chunks"):
                    seen.add(("structure", "list rows split across mini-block chunks"))
                if facts["max_chunk_bytes"] > 32 * 1024:
                    seen.add(("structure", "mini-block chunk > 32 KiB (u32 chunk word needed)"))
            if kind == "full_zip_layout" and len(page.buffer_sizes) > 1:
                width = page.buffer_sizes[1] // (page.length + 1) if page.length + 1 else 0
                seen.add(("structure", f"full-zip repetition index of u{8 * width}"))
            pages.append(entry)
            first += page.length
        if len(cm.pages) > 1:
            seen.add(("structure", "column with several pages"))
        columns.append({"path": f"column {c}", "pages": pages})
    return {"footer_version": f"{major}.{minor}", "columns": columns, "features": seen}


def leaf_paths(schema: pa.Schema) -> list[str]:
    """Names of the physical (leaf) columns of a 2.1+ file, in order (REFERENCE-NOTES §2.4)."""
    out: list[str] = []

    def walk(name: str, f: pa.Field) -> None:
        t, meta = f.type, f.metadata or {}
        packed = meta.get(b"packed", b"").lower() == b"true" or \
            meta.get(b"lance-encoding:packed", b"").lower() == b"true"
        if pa.types.is_struct(t) and t.num_fields and not packed:
            for i in range(t.num_fields):
                walk(f"{name}.{t.field(i).name}", t.field(i))
        elif pa.types.is_map(t):
            walk(f"{name}.entries.key", t.key_field)
            walk(f"{name}.entries.value", t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or \
                (pa.types.is_fixed_size_list(t) and pa.types.is_struct(t.value_type)):
            walk(f"{name}.{t.value_field.name}", t.value_field)
        else:
            out.append(name)

    for f in schema:
        walk(f.name, f)
    return out


# --------------------------------------------------------------------------------------------
# Data helpers
# --------------------------------------------------------------------------------------------

WORDS = np.array(("lance columnar file format page chunk value level dictionary string table arrow "
                  "reader writer encoding buffer offset repetition definition null empty struct list "
                  "the of and to in is for on with as at by from zip mini block constant bitpack").split())


def text(rng, n: int, lo: int, hi: int, null_fraction: float = 0.0, typ=pa.string()) -> pa.Array:
    """n strings of roughly lo..hi bytes made of words (compressible, FSST-friendly)."""
    out = []
    for k in rng.integers(lo, hi + 1, n):
        s, parts = 0, []
        while s < k:
            w = WORDS[rng.integers(len(WORDS))]
            parts.append(w)
            s += len(w) + 1
        out.append(" ".join(parts)[:k])
    return pa.array(out, typ, mask=mask(rng, n, null_fraction))


def mask(rng, n: int, fraction: float):
    if fraction <= 0:
        return None
    m = rng.random(n) < fraction
    return m if m.any() else None


def ints(rng, typ: pa.DataType, n: int, lo: int, hi: int, null_fraction: float = 0.0) -> pa.Array:
    vals = rng.integers(lo, hi, n, endpoint=True, dtype=typ.to_pandas_dtype())
    return pa.array(vals, typ, mask=mask(rng, n, null_fraction))


def rand(typ: pa.DataType, n: int, rng, null_fraction: float = 0.1, **kw) -> pa.Array:
    """Random values of any type (tests.datagen.random_array); struct rows null too (legal in 2.1+)."""
    return random_array(typ, n, rng, null_fraction=null_fraction, struct_nulls=True, **kw)


def sorted_runs(rng, n: int, distinct: int, typ: pa.DataType, null_fraction: float = 0.0) -> pa.Array:
    vals = np.sort(rng.integers(0, distinct, n))
    return pa.array(vals.astype(typ.to_pandas_dtype()), typ, mask=mask(rng, n, null_fraction))


def low_card(rng, pool: pa.Array, n: int, null_fraction: float = 0.0) -> pa.Array:
    """n values drawn from ``pool`` (nulls where the mask says)."""
    idx = rng.integers(0, len(pool), n)
    m = mask(rng, n, null_fraction)
    return pool.take(pa.array(idx, mask=m))


def lists(rng, values: pa.Array, n: int, max_len: int, null_fraction=0.1, empty_fraction=0.1,
          large: bool = False) -> pa.Array:
    """n lists over the first sum(lengths) of ``values``, with null and empty lists."""
    lengths = rng.integers(1, max_len + 1, n)
    nulls = rng.random(n) < null_fraction
    lengths[nulls | (rng.random(n) < empty_fraction)] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    assert offsets[-1] <= len(values), (offsets[-1], len(values))
    cls, otype = (pa.LargeListArray, pa.int64()) if large else (pa.ListArray, pa.int32())
    return cls.from_arrays(pa.array(offsets, otype), values.slice(0, int(offsets[-1])),
                           mask=pa.array(nulls) if nulls.any() else None)


def fld(name: str, typ: pa.DataType, metadata: dict | None = None, nullable: bool = True) -> pa.Field:
    return pa.field(name, typ, nullable, metadata)


def table(cols: list[tuple[pa.Field, pa.Array]]) -> pa.Table:
    return pa.Table.from_arrays([a for _, a in cols], schema=pa.schema([f for f, _ in cols]))


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    description: str
    build: Callable[[np.random.Generator], pa.Table]
    options: dict = field(default_factory=dict)  # LanceFileWriter keyword arguments
    batches: int = 1  # number of write_batch calls (equal slices of the table)
    versions: tuple = VERSIONS
    kind: str = "file"  # "file" (LanceFileWriter) or "dataset" (lance.write_dataset, data file copied)


CASES: list[Case] = []


def case(name: str, description: str, **kw):
    def deco(fn):
        CASES.append(Case(name, description, fn, **kw))
        return fn
    return deco


@case("ints", "Every integer type: narrow ranges (inline bitpacking), full ranges with negatives (flat), "
      "nulls in half of the columns; 1,200 rows (64-bit flat pages have 3 chunks, bitpacked ones 2).")
def _ints(rng):
    n, cols = 1200, []
    for i, t in enumerate([pa.int8(), pa.int16(), pa.int32(), pa.int64(),
                           pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]):
        info = np.iinfo(t.to_pandas_dtype())
        nf = 0.1 if i % 2 else 0.0
        cols.append((fld(f"{t}_narrow", t), ints(rng, t, n, 0, min(info.max, 100), nf)))
        cols.append((fld(f"{t}_wide", t), ints(rng, t, n, info.min, info.max, 0.1 - nf)))
    cols.append((fld("int32_negative", pa.int32()), ints(rng, pa.int32(), n, -50, -1)))
    cols.append((fld("int64_not_null", pa.int64(), nullable=False), ints(rng, pa.int64(), n, -10**15, 10**15)))
    return table(cols)


@case("floats", "float16/32/64 with NaN, -0.0, +-inf and nulls; float32 in [0,1) (bitpacks to 30 bits); "
      "low-cardinality float64 (2.2 dictionary).")
def _floats(rng):
    n, cols = 2000, []
    for t, dt in [(pa.float16(), np.float16), (pa.float32(), np.float32), (pa.float64(), np.float64)]:
        v = (rng.standard_normal(n) * 100).astype(dt)
        v[rng.integers(0, n, 40)] = np.nan
        v[rng.integers(0, n, 20)] = -0.0
        v[rng.integers(0, n, 10)] = np.inf
        v[rng.integers(0, n, 10)] = -np.inf
        v[:5] = [np.nan, -0.0, np.inf, -np.inf, 0.0]
        cols.append((fld(f"{t}_special", t), pa.array(v, t, mask=mask(rng, n, 0.1))))
    cols.append((fld("float32_unit", pa.float32()), pa.array(rng.random(n).astype(np.float32))))
    cols.append((fld("float64_lowcard", pa.float64()), pa.array(rng.integers(0, 50, n) / 8.0)))
    return table(cols)


@case("bool", "Booleans with and without nulls, and mostly-false; 5,000 rows (4,096 values a chunk).")
def _bool(rng):
    n = 5000
    return table([(fld("b", pa.bool_()), pa.array(rng.random(n) < 0.5)),
                  (fld("b_nulls", pa.bool_()), pa.array(rng.random(n) < 0.5, mask=mask(rng, n, 0.2))),
                  (fld("b_sparse", pa.bool_(), nullable=False), pa.array(rng.random(n) < 0.01))])


@case("temporal", "date32/64, time32/64 of each unit, timestamps of each unit with and without time zone "
      "(UTC, America/New_York, +05:30), durations of each unit; 10% nulls; 300 rows.")
def _temporal(rng):
    n, cols = 300, []
    types = [pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")]
    for unit in ("s", "ms", "us", "ns"):
        types += [pa.timestamp(unit), pa.timestamp(unit, "UTC")]
    types += [pa.timestamp("ms", "America/New_York"), pa.timestamp("us", "+05:30")]
    types += [pa.duration(u) for u in ("s", "ms", "us", "ns")]
    for t in types:
        name = str(t).replace("[", "_").replace("]", "").replace(", tz=", "_").replace("/", "_").replace(":", "")
        cols.append((fld(name.replace("+", "plus"), t), rand(t, n, rng)))
    return table(cols)


@case("decimal_fsb", "decimal128 (10,2) and (38,10), decimal256 (76,20), fixed_size_binary(16) and (3), "
      "random (high cardinality: flat 128/256 bits), with nulls; 500 rows.")
def _decimal_fsb(rng):
    n = 500
    types = [pa.decimal128(10, 2), pa.decimal128(38, 10), pa.decimal256(76, 20), pa.binary(16), pa.binary(3)]
    names = ["dec128_10_2", "dec128_38_10", "dec256_76_20", "fsb16", "fsb3"]
    return table([(fld(nm, t), rand(t, n, rng)) for nm, t in zip(names, types)])


@case("strings", "string/binary/large_string/large_binary, short random values (variable, no FSST: "
      "< 32 KiB a page), with nulls, without nulls, with empty values, and all empty; 600 rows.")
def _strings(rng):
    n = 600
    cols = [(fld(str(t), t), rand(t, n, rng)) for t in (pa.string(), pa.binary(), pa.large_string(),
                                                        pa.large_binary())]
    cols.append((fld("string_not_null", pa.string(), nullable=False), rand(pa.string(), n, rng, 0.0)))
    cols.append((fld("string_all_empty", pa.string()), pa.array([""] * n)))
    cols.append((fld("string_unicode", pa.string()), pa.array(
        ["é中ß€😀"[: k % 6] * (k % 4) for k in range(n)], mask=mask(rng, n, 0.05))))
    return table(cols)


@case("all_null", "All-null columns: int32, string, null type, struct rows, list<int32> of null lists, "
      "list<int32> whose items are all null, fixed_size_list<float32>[4] with all items null; 1,500 rows "
      "(> 1,024 levels).")
def _all_null(rng):
    n = 1500
    items_null = lists(rng, pa.nulls(10 * n, pa.int32()), n, 4, null_fraction=0.1)
    return table([
        (fld("int32", pa.int32()), pa.nulls(n, pa.int32())),
        (fld("string", pa.string()), pa.nulls(n, pa.string())),
        (fld("null", pa.null()), pa.nulls(n)),
        (fld("struct", pa.struct([("a", pa.int32())])), pa.nulls(n, pa.struct([("a", pa.int32())]))),
        (fld("list_null", pa.list_(pa.int32())), pa.nulls(n, pa.list_(pa.int32()))),
        (fld("list_items_null", pa.list_(pa.int32())), items_null),
        (fld("fsl_items_null", pa.list_(pa.float32(), 4)),
         pa.FixedSizeListArray.from_arrays(pa.nulls(4 * n, pa.float32()), 4)),
    ])


@case("constant", "One value repeated (2.2 ConstantLayout): int64 and bool and fixed_size_binary(16) "
      "(inline value), int32 with nulls (inline value + def levels), strings with and without nulls and "
      "fixed_size_binary(40) (value in a page buffer), list<int32> of one repeated item (constant with "
      "rep/def levels). 2.1 writes RLE / dictionaries instead.")
def _constant(rng):
    n = 2000
    s = np.full(n, "the same value", dtype=object)
    return table([
        (fld("int64", pa.int64()), pa.array(np.full(n, 1234567, np.int64))),
        (fld("int32_nulls", pa.int32()), pa.array(np.full(n, -7, np.int32), mask=mask(rng, n, 0.2))),
        (fld("bool", pa.bool_()), pa.array(np.ones(n, bool))),
        (fld("float64", pa.float64()), pa.array(np.full(n, 2.5))),
        (fld("fsb16", pa.binary(16)), pa.array([b"0123456789abcdef"] * n, pa.binary(16))),
        (fld("fsb40", pa.binary(40)), pa.array([bytes(range(40))] * n, pa.binary(40))),
        (fld("string", pa.string()), pa.array(s)),
        (fld("string_nulls", pa.string()), pa.array(s, mask=mask(rng, n, 0.3))),
        (fld("list_int32", pa.list_(pa.int32())), lists(rng, pa.array(np.full(5 * n, 9, np.int32)), n, 5)),
    ])


@case("runs", "Sorted values with long runs (RLE in mini-block values): int8/int32/int64/uint16, one with "
      "nulls, and sorted low-cardinality strings; 5,000 rows (RLE chunks of up to 4,096 values).")
def _runs(rng):
    n = 5000
    return table([
        (fld("int8_runs", pa.int8()), sorted_runs(rng, n, 40, pa.int8())),
        (fld("int32_runs", pa.int32()), sorted_runs(rng, n, 50, pa.int32())),
        (fld("int64_runs", pa.int64()), pa.array(np.sort(rng.integers(0, 50, n)) * 1_000_003)),
        (fld("uint16_runs_nulls", pa.uint16()), sorted_runs(rng, n, 30, pa.uint16(), 0.05)),
        (fld("string_runs", pa.string()), pa.array(np.sort(rng.choice(WORDS, n)))),
    ])


@case("dictionary", "Low-cardinality values that get a mini-block dictionary: strings (with nulls), "
      "large_string, int64, float64, decimal128, fixed_size_binary(16); 2,000 rows.")
def _dictionary(rng):
    n = 2000
    strs = text(rng, 60, 5, 30)
    return table([
        (fld("string", pa.string()), low_card(rng, strs, n, 0.1)),
        (fld("large_string", pa.large_string()), low_card(rng, strs.cast(pa.large_string()), n)),
        (fld("int64", pa.int64()), low_card(rng, pa.array(rng.integers(-2**62, 2**62, 200)), n, 0.05)),
        (fld("float64", pa.float64()), low_card(rng, pa.array(rng.standard_normal(100)), n)),
        (fld("dec128", pa.decimal128(20, 4)), low_card(rng, rand(pa.decimal128(20, 4), 50, rng, 0.0), n, 0.1)),
        (fld("fsb16", pa.binary(16)), low_card(rng, rand(pa.binary(16), 64, rng, 0.0), n)),
    ])


@case("fsst", "High-cardinality word strings, > 32 KiB a page, so mini-block values are FSST: string with "
      "nulls and large_string; 1,500 rows.")
def _fsst(rng):
    n = 1500
    return table([(fld("string", pa.string()), text(rng, n, 15, 45, 0.1)),
                  (fld("large_string", pa.large_string()), text(rng, n, 15, 45, 0.0, pa.large_string()))])


@case("long_text", "Values of 256 bytes and more, so the page is full-zip: word text (~55 KiB: FSST per "
      "value) with nulls, random binary of 256..300 bytes (< 32 KiB: plain variable), and text with "
      "lance-encoding:compression=lz4 (pylance writes General zstd level 0 per value instead); 100 rows.")
def _long_text(rng):
    n = 100
    bins = [rng.bytes(int(k)) for k in rng.integers(256, 301, n)]
    return table([(fld("text", pa.string()), text(rng, n, 400, 700, 0.1)),
                  (fld("binary", pa.binary()), pa.array(bins, pa.binary(), mask=mask(rng, n, 0.1))),
                  (fld("text_lz4", pa.string(), _meta(compression="lz4")), text(rng, n, 330, 360))])


@case("large_binary", "Four large_binary values of 33..40 KiB (and one null): full-zip with General zstd "
      "per value (automatic above 32 KiB); 4-bit random bytes, so the zipped page (~74 KiB) needs a u32 "
      "repetition index (the values share one random block, so the .arrow compresses well).")
def _large_binary(rng):
    block = rng.integers(0, 16, 40_000, dtype=np.uint8)
    vals = [bytes(np.roll(block, 7 * k)[:size]) for k, size in enumerate((40_000, 34_000, 36_000, 38_000))]
    vals.insert(2, None)
    return table([(fld("blob", pa.large_binary()), pa.array(vals, pa.large_binary()))])


@case("lists", "list<int32> with null lists, empty lists and null items (> 1,024 levels: out-of-line "
      "bitpacked rep/def; several chunks that split rows), large_list<int64> of wide values, "
      "list<string>; 1,200 rows.")
def _lists(rng):
    n = 1200
    return table([
        (fld("list_int32", pa.list_(pa.int32())), lists(rng, rand(pa.int32(), 6 * n, rng), n, 6)),
        (fld("large_list_int64", pa.large_list(pa.int64())),
         lists(rng, rand(pa.int64(), 4 * n, rng, 0.0), n, 4, large=True)),
        (fld("list_string", pa.list_(pa.string())), lists(rng, rand(pa.string(), 3 * n, rng), n, 3)),
    ])


@case("list_list", "list<list<int64>> with null and empty lists at both levels (NULL_AND_EMPTY_LIST twice, "
      "def levels 1..4) and null items; 1,500 rows.")
def _list_list(rng):
    n = 1500
    inner = lists(rng, rand(pa.int64(), 20 * n, rng, 0.05), 4 * n, 4)
    return table([(fld("ll", pa.list_(pa.list_(pa.int64()))), lists(rng, inner, n, 4))])


@case("structs", "struct<a:int32, b:string> with null rows and null children; struct containing a list "
      "(struct<a:int32, l:list<int64>>); list<struct<x:int32, y:float64>>; "
      "struct<ls:list<struct<p:int32, q:string>>, k:int64>; 400 rows.")
def _structs(rng):
    n = 400
    t1 = pa.struct([("a", pa.int32()), ("b", pa.string())])
    t2 = pa.struct([("a", pa.int32()), ("l", pa.list_(pa.int64()))])
    t3 = pa.list_(pa.struct([("x", pa.int32()), ("y", pa.float64())]))
    t4 = pa.struct([("ls", pa.list_(pa.struct([("p", pa.int32()), ("q", pa.string())]))), ("k", pa.int64())])
    return table([(fld(nm, t), rand(t, n, rng)) for nm, t in [("st", t1), ("st_list", t2), ("list_st", t3),
                                                               ("st_list_st", t4)]])


@case("deep_nesting", "Five list levels (list<list<list<list<list<int32>>>>>) and "
      "struct<l:list<struct<m:list<list<int16>>>>>, with nulls and empties at every level; 300 rows.")
def _deep(rng):
    n = 300
    t1 = pa.list_(pa.list_(pa.list_(pa.list_(pa.list_(pa.int32())))))
    t2 = pa.struct([("l", pa.list_(pa.struct([("m", pa.list_(pa.list_(pa.int16())))])))])
    return table([(fld("l5", t1), rand(t1, n, rng, max_list_len=3)),
                  (fld("s_l_s_ll", t2), rand(t2, n, rng, max_list_len=3))])


@case("fsl_vectors", "fixed_size_list<float32>[128] (512 bytes a row: full-zip, bits_per_value 4096) with "
      "null rows; fixed_size_list<float16>[128] with null items (full-zip FSL with validity bytes); 64 rows.")
def _fsl_vectors(rng):
    n = 64
    vals = pa.array((rng.integers(-64, 64, 128 * n) / 16).astype(np.float32))
    halves = pa.array((rng.integers(-64, 64, 128 * n) / 16).astype(np.float16), mask=rng.random(128 * n) < 0.05)
    return table([(fld("vec", pa.list_(pa.float32(), 128)),
                   pa.FixedSizeListArray.from_arrays(vals, 128, mask=pa.array(rng.random(n) < 0.1))),
                  (fld("vec_f16_item_nulls", pa.list_(pa.float16(), 128)),
                   pa.FixedSizeListArray.from_arrays(halves, 128))])


@case("fsl_small", "fixed_size_list<float32>[4] with null rows and null items; "
      "fixed_size_list<fixed_size_list<int8>[2]>[3]; list<fixed_size_list<float32>[2]>; "
      "fixed_size_list<int32>[4] without nulls; 1,000 rows.")
def _fsl_small(rng):
    n = 1000
    t2 = pa.list_(pa.list_(pa.int8(), 2), 3)
    t3 = pa.list_(pa.list_(pa.float32(), 2))
    return table([
        (fld("fsl4", pa.list_(pa.float32(), 4)), rand(pa.list_(pa.float32(), 4), n, rng)),
        (fld("fsl_fsl", t2), rand(t2, n, rng)),
        (fld("list_fsl", t3), rand(t3, n, rng)),
        (fld("fsl_int32_not_null", pa.list_(pa.field("item", pa.int32(), False), 4), nullable=False),
         pa.FixedSizeListArray.from_arrays(pa.array(rng.integers(0, 1000, 4 * n).astype(np.int32)), 4)),
    ])


@case("arrow_dictionary", "Arrow dictionary arrays: dictionary<int32, string> with null keys, "
      "dictionary<int8, int64>, dictionary<int16, large_string>; 1,000 rows.")
def _arrow_dict(rng):
    n = 1000
    cols = []
    for name, t in [("dict_int32_string", pa.dictionary(pa.int32(), pa.string())),
                    ("dict_int8_int64", pa.dictionary(pa.int8(), pa.int64())),
                    ("dict_int16_large_string", pa.dictionary(pa.int16(), pa.large_string()))]:
        cols.append((fld(name, t), rand(t, n, rng, 0.1 if "int32" in name else 0.0)))
    return table(cols)


@case("map", "map<string, int32> with null maps, empty maps and null values (2.2 only; 2.1 refuses); "
      "500 rows.")
def _map(rng):
    n = 500
    lengths = rng.integers(0, 4, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    m = int(offsets[-1])
    keys = pa.array([f"k{int(i)}" for i in rng.integers(0, 40, m)])
    vals = pa.array(rng.integers(-100, 100, m).astype(np.int32), mask=mask(rng, m, 0.1))
    null_rows = rng.random(n) < 0.1
    offsets_arr = pa.array(offsets, mask=np.concatenate([null_rows, [False]]))
    return table([(fld("m", pa.map_(pa.string(), pa.int32())), pa.MapArray.from_arrays(offsets_arr, keys, vals))])


@case("fsl_struct", "fixed_size_list<struct<x:int32, y:float32>>[3] alone in its file (2.2 only; pylance's "
      "own full read fails when other columns are beside it, REFERENCE-NOTES §11); 500 rows.")
def _fsl_struct(rng):
    n = 500
    t = pa.list_(pa.struct([("x", pa.int32()), ("y", pa.float32())]), 3)
    return table([(fld("fsl_st", t), rand(t, n, rng))])


@case("empty_struct", "An int32 column then an empty struct (struct<>) column, the empty struct last "
      "(REFERENCE-NOTES §11: a column after an empty struct reads back as nulls in pylance); 300 rows.")
def _empty_struct(rng):
    n = 300
    return table([(fld("id", pa.int32()), pa.array(np.arange(n, dtype=np.int32))),
                  (fld("empty", pa.struct([])), pa.array([{}] * n, pa.struct([])))])


def _meta(**kv) -> dict:
    return {f"lance-encoding:{k.replace('_', '-')}": str(v) for k, v in kv.items()}


@case("meta_compression", "Field metadata lance-encoding:compression: zstd (level 3) on int32 and lz4 on "
      "int64 (pylance picks General around byte stream split for them), zstd and lz4 (level 1) on strings "
      "(General around variable), fsst forced on short strings (< 32 KiB: FSST with switch 0), none on narrow "
      "ints (flat, no bitpacking), lance-encoding:bss=on with zstd on float32/float64; 2,000 rows.")
def _meta_compression(rng):
    n = 2000
    f32 = (rng.standard_normal(n) * 10).astype(np.float32)
    f64 = np.cumsum(rng.standard_normal(n))
    return table([
        (fld("int32_zstd", pa.int32(), _meta(compression="zstd", compression_level=3)),
         ints(rng, pa.int32(), n, 0, 1000)),
        (fld("int64_lz4", pa.int64(), _meta(compression="lz4")), ints(rng, pa.int64(), n, 0, 10**6, 0.1)),
        (fld("string_zstd", pa.string(), _meta(compression="zstd")), text(rng, n, 5, 20, 0.1)),
        (fld("string_lz4", pa.string(), _meta(compression="lz4", compression_level=1)), text(rng, n, 5, 12)),
        (fld("string_fsst", pa.string(), _meta(compression="fsst")), text(rng, n, 2, 8)),
        (fld("int16_none", pa.int16(), _meta(compression="none")), ints(rng, pa.int16(), n, 0, 10)),
        (fld("float32_bss", pa.float32(), _meta(compression="zstd", bss="on")), pa.array(f32)),
        (fld("float64_bss", pa.float64(), _meta(compression="zstd", bss="on")), pa.array(f64)),
    ])


@case("meta_rle_dict", "lance-encoding:rle-threshold, an extra guard on RLE (0.9: runs of 3 over large "
      "values still get RLE; 0.0: long runs get bitpacking instead of RLE) and "
      "dictionary thresholds: lance-encoding:dict-size-ratio (0.99: dictionary for mid-cardinality strings; "
      "0.05: no dictionary for low-cardinality strings), lance-encoding:dict-values-compression=zstd and =none "
      "(2.2: General zstd / plain dictionary values; 2.1 ignores it); 2,000 rows.")
def _meta_rle_dict(rng):
    n = 2000
    short_runs = np.repeat(rng.choice(rng.integers(2**29, 2**30, 8), n // 3 + 1), 3)[:n].astype(np.int32)
    long_runs = np.sort(rng.integers(0, 20, n)).astype(np.int32)
    pool = text(rng, 150, 8, 20)
    return table([
        (fld("int32_rle_09", pa.int32(), _meta(rle_threshold=0.9)), pa.array(short_runs)),
        (fld("int32_rle_0", pa.int32(), _meta(rle_threshold=0.0)), pa.array(long_runs)),
        (fld("string_dict_ratio_099", pa.string(), _meta(dict_size_ratio=0.99)), low_card(rng, text(rng, 700, 8, 16),
                                                                                          n)),
        (fld("string_dict_ratio_005", pa.string(), _meta(dict_size_ratio=0.05)), low_card(rng, pool, n)),
        (fld("string_dict_values_none", pa.string(), _meta(dict_values_compression="none")),
         low_card(rng, pool, n)),
        (fld("string_dict_zstd", pa.string(), _meta(dict_values_compression="zstd")), low_card(rng, pool, n, 0.1)),
    ])


@case("meta_structural", "lance-encoding:structural-encoding=fullzip on int32 with nulls, on strings with "
      "nulls and on list<int32>; =miniblock on 300-byte strings (which would be full-zip); 400 rows.")
def _meta_structural(rng):
    n = 400
    full, mini = _meta(structural_encoding="fullzip"), _meta(structural_encoding="miniblock")
    return table([
        (fld("int32_fullzip", pa.int32(), full), ints(rng, pa.int32(), n, -1000, 1000, 0.2)),
        (fld("string_fullzip", pa.string(), full), text(rng, n, 0, 30, 0.2)),
        (fld("list_fullzip", pa.list_(pa.int32()), full), lists(rng, rand(pa.int32(), 5 * n, rng), n, 5)),
        (fld("long_string_miniblock", pa.string(), mini), text(rng, n, 280, 320, 0.1)),
    ])


def packed_structs(rng, n: int, specs: list[tuple[str, pa.DataType, dict, float]]) -> pa.Table:
    """Struct columns ``(name, type, metadata, row null fraction)`` with null rows but no null children
    (packed structs refuse child nulls)."""
    cols = []
    for name, t, metadata, row_nulls in specs:
        kids = [rand(t.field(i).type, n, rng, 0.0) for i in range(t.num_fields)]
        m = mask(rng, n, row_nulls)
        cols.append((fld(name, t, metadata),
                     pa.StructArray.from_arrays(kids, fields=list(t), mask=None if m is None else pa.array(m))))
    return table(cols)


PACKED = {"packed": "true"}
PACKED_CASES = {  # name: (description, rows, [(column, struct type, metadata, row null fraction)])
    "meta_packed": (
        "Packed structs of fixed-width fields (mini-block PackedStruct): packed=true on struct<x:int32, "
        "y:float64, z:uint8> and lance-encoding:packed=true on struct<a:int64, b:int16> with null rows; 1,000 rows.",
        1000, [("packed_legacy", pa.struct([("x", pa.int32()), ("y", pa.float64()), ("z", pa.uint8())]), PACKED, 0.0),
               ("packed", pa.struct([("a", pa.int64()), ("b", pa.int16())]), _meta(packed="true"), 0.1)]),
    "meta_packed_variable": (
        "lance-encoding:packed=true on struct<a:int32, b:string, c:float64> with null rows, and on "
        "struct<x:int32, v:fixed_size_list<float32>[2]>: full-zip VariablePackedStruct (2.2 only; 2.1 refuses "
        "both); 500 rows.",
        500, [("packed_var", pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())]),
               _meta(packed="true"), 0.1),
              ("packed_fsl", pa.struct([("x", pa.int32()), ("v", pa.list_(pa.float32(), 2))]),
               _meta(packed="true"), 0.0)]),
}
for _name, (_description, _rows, _specs) in PACKED_CASES.items():
    case(_name, _description)(functools.partial(packed_structs, n=_rows, specs=_specs))


@case("meta_packed_child_nulls", "A packed struct<x:int32, y:float64> whose children hold nulls: refused by "
      "both versions (2.1 'Variable packed struct encoding is not enabled', 2.2 'Per-value compression not yet "
      "supported for block type Nullable'); 100 rows.")
def _meta_packed_child_nulls(rng):
    t = pa.struct([("x", pa.int32()), ("y", pa.float64())])
    return table([(fld("packed", t, _meta(packed="true")), rand(t, 100, rng, 0.2))])


@case("meta_blob", "lance-encoding:blob on large_binary (BlobLayout v1, descriptors in a mini-block "
      "PackedStruct, bytes out of line) with null and empty values; 40 rows of up to 1 KiB of text bytes.")
def _meta_blob(rng):
    n = 40
    vals = [v.encode() for v in text(rng, n, 1, 1024).to_pylist()]
    for i in range(0, n, 7):
        vals[i] = b""
    for i in range(3, n, 11):
        vals[i] = None
    return table([(fld("id", pa.int32()), pa.array(np.arange(n, dtype=np.int32))),
                  (fld("blob", pa.large_binary(), _meta(blob="true")), pa.array(vals, pa.large_binary()))])


@case("meta_minichunk", "lance-encoding:minichunk-size=65536 on ~42 KiB of strings with compression=none "
      "(2.2: the page is one ~42 KiB mini-block chunk, beyond what the u16 chunk word can describe; 2.1 "
      "warns and keeps its normal ~2 KiB chunks); 700 rows.")
def _meta_minichunk(rng):
    n = 700
    md = {**_meta(minichunk_size=65536), **_meta(compression="none")}
    return table([(fld("s", pa.string(), md), text(rng, n, 50, 70))])


@case("multi_page", "Eight write_batch calls of 40 rows with data_cache_bytes=1, so every column has 8 "
      "pages: int32, string with nulls, list<int32>, struct<a, b>, fixed_size_list<float32>[8] forced to "
      "full-zip, dictionary<int32, string> (a dictionary per page), a constant column.",
      options={"data_cache_bytes": 1}, batches=8)
def _multi_page(rng):
    n = 320
    st = pa.struct([("a", pa.int32()), ("b", pa.string())])
    return table([
        (fld("int32", pa.int32()), ints(rng, pa.int32(), n, -10**6, 10**6, 0.05)),
        (fld("string", pa.string()), rand(pa.string(), n, rng)),
        (fld("list_int32", pa.list_(pa.int32())), lists(rng, rand(pa.int32(), 5 * n, rng), n, 5)),
        (fld("struct", st), rand(st, n, rng)),
        (fld("fsl8_fullzip", pa.list_(pa.float32(), 8), _meta(structural_encoding="fullzip")),
         pa.FixedSizeListArray.from_arrays(pa.array((rng.integers(0, 64, 8 * n) / 4).astype(np.float32)), 8)),
        (fld("dictionary", pa.dictionary(pa.int32(), pa.string())),
         pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 20, n).astype(np.int32), mask=mask(rng, n, 0.1)),
                                        text(rng, 20, 4, 10))),
        (fld("constant", pa.int64()), pa.array(np.full(n, 42, np.int64))),
    ])


@case("multi_chunk", "One page a column with many mini-block chunks: int64 (flat, 512 values a chunk), "
      "short word strings (< 32 KiB: variable, ~4 KiB chunks), list<int16> rows split across chunks, "
      "nullable uint8 bitpacked (1,024 values a chunk), and a bool (one chunk); 3,000 rows.")
def _multi_chunk(rng):
    n = 3000
    return table([
        (fld("int64", pa.int64()), ints(rng, pa.int64(), n, -2**63, 2**63 - 1)),
        (fld("string", pa.string()), text(rng, n, 2, 10, 0.1)),
        (fld("list_int16", pa.list_(pa.int16())), lists(rng, ints(rng, pa.int16(), 8 * n, -1000, 1000, 0.1), n, 8)),
        (fld("bool", pa.bool_()), pa.array(rng.random(n) < 0.3)),
        (fld("uint8", pa.uint8()), ints(rng, pa.uint8(), n, 0, 20, 0.1)),
    ])


@case("levels_rle", "Levels with long runs (2.2 writes rep/def levels as RLE): int32 whose nulls come in "
      "blocks of 700 rows, list<int32> of one item each with null lists in blocks; 5,000 rows.")
def _levels_rle(rng):
    n = 5000
    null_blocks = (np.arange(n) // 700) % 2 == 1
    one = pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)),
                                   pa.array(rng.integers(0, 100, n).astype(np.int32)))
    one = pa.ListArray.from_arrays(one.offsets, one.values, mask=pa.array(null_blocks))
    return table([
        (fld("int32_null_blocks", pa.int32()), pa.array(rng.integers(0, 10**6, n).astype(np.int32),
                                                        mask=null_blocks)),
        (fld("list_one_item", pa.list_(pa.int32())), one),
    ])


@case("meta_general", "General compression around other mini-block encodings, with "
      "lance-encoding:compression and lance-encoding:bss=off: zstd around inline bitpacking (int64 of 40 bits "
      "with constant high bits; int32 with nulls), zstd and lz4 around RLE (runs of 3 over 8 large values), "
      "zstd around flat float32 (bss auto); 5,000 rows.")
def _meta_general(rng):
    n = 5000
    pool = rng.integers(2**29, 2**30, 8)
    runs = np.repeat(rng.choice(pool, n // 3 + 1), 3)[:n].astype(np.int32)
    off = _meta(compression="zstd", bss="off")
    return table([
        (fld("int64_zstd_bitpacked", pa.int64(), off), pa.array(2**39 + rng.integers(0, 2**20, n))),
        (fld("int32_nulls_zstd_bitpacked", pa.int32(), off), ints(rng, pa.int32(), n, 0, 2**30, 0.3)),
        (fld("int32_zstd_rle", pa.int32(), off), pa.array(runs)),
        (fld("int32_lz4_rle", pa.int32(), _meta(compression="lz4", bss="off")), pa.array(runs[::-1].copy())),
        (fld("float32_zstd", pa.float32(), _meta(compression="zstd")),
         pa.array(rng.standard_normal(n).astype(np.float32))),
    ])


@case("dictionary_large", "2.2 dictionaries of int64 values stored bitpacked: 500 distinct values "
      "(dictionary items inline-bitpacked, 64 bits) and 1,100 distinct values (dictionary items "
      "out-of-line bitpacked); 2.1 bitpacks the values without a dictionary; 5,000 rows.")
def _dictionary_large(rng):
    n = 5000
    return table([(fld("int64_500", pa.int64()), pa.array(rng.integers(0, 500, n) * 7)),
                  (fld("int64_1100", pa.int64()), pa.array(rng.integers(0, 1100, n) * 7, mask=mask(rng, n, 0.05)))])


@case("fullzip_tiny", "Tiny forced full-zip pages (lance-encoding:structural-encoding=fullzip) whose "
      "repetition index fits in u8: strings of 0..3 bytes and list<int8>; 30 rows.")
def _fullzip_tiny(rng):
    n = 30
    full = _meta(structural_encoding="fullzip")
    return table([(fld("s", pa.string(), full), text(rng, n, 0, 3)),
                  (fld("l", pa.list_(pa.int8()), full),
                   lists(rng, pa.array(rng.integers(0, 100, 3 * n).astype(np.int8)), n, 2, 0.1, 0.1))])


@case("meta_dict_ratio_zero", "lance-encoding:dict-size-ratio=0 on low-cardinality strings: pylance "
      "panics (a refusal, recorded); 200 rows.")
def _meta_dict_ratio_zero(rng):
    return table([(fld("s", pa.string(), _meta(dict_size_ratio=0.0)), low_card(rng, text(rng, 10, 4, 8), 200))])


WIDE_TYPES = [pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.string(), pa.bool_(), pa.uint8(),
              pa.large_binary(), pa.timestamp("us", "UTC"), pa.date32(), pa.decimal128(12, 3), pa.binary(4),
              pa.list_(pa.int32()), pa.struct([("a", pa.int16()), ("b", pa.string())]),
              pa.list_(pa.float32(), 3), pa.dictionary(pa.int32(), pa.string()), pa.int16(), pa.float16(),
              pa.large_list(pa.int8()), pa.null()]


def small_array(t: pa.DataType, n: int, rng, null_fraction: float) -> pa.Array:
    """Random small values of ``t`` (cheap to store: keeps the wide file small), nested types included."""
    m = mask(rng, n, null_fraction)
    if pa.types.is_null(t):
        return pa.nulls(n)
    if pa.types.is_boolean(t):
        return pa.array(rng.random(n) < 0.5, mask=m)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.array(rng.choice(WORDS, n), t, mask=m)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        width = t.byte_width if pa.types.is_fixed_size_binary(t) else None
        vals = [w.encode()[:width].ljust(width or 0, b"_") for w in rng.choice(WORDS, n)]
        return pa.array(vals, t, mask=m)
    if pa.types.is_dictionary(t):
        return pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 8, n).astype(np.int32), mask=m),
                                              small_array(t.value_type, 8, rng, 0.0))
    if pa.types.is_fixed_size_list(t):
        return pa.FixedSizeListArray.from_arrays(small_array(t.value_type, n * t.list_size, rng, null_fraction),
                                                 t.list_size, mask=None if m is None else pa.array(m))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return lists(rng, small_array(t.value_type, 3 * n, rng, null_fraction), n, 3, null_fraction,
                     large=pa.types.is_large_list(t))
    if pa.types.is_struct(t):
        kids = [small_array(t.field(i).type, n, rng, null_fraction) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=None if m is None else pa.array(m))
    if pa.types.is_date32(t):
        return pa.array(rng.integers(0, 100, n).astype(np.int32), mask=m).view(t)
    if pa.types.is_decimal(t):
        return pa.array(rng.integers(0, 100, n).astype(np.int8), mask=m).cast(t)
    return pa.array(rng.integers(0, 100, n), pa.int64(), mask=m).cast(t)


@case("wide", "300 columns of 20 mixed types (ints, floats, strings, lists, structs, fixed_size_list, "
      "dictionary, null type...), small values, 100 rows.")
def _wide(rng):
    n = 100
    cols = []
    for i in range(300):
        t = WIDE_TYPES[i % len(WIDE_TYPES)]
        cols.append((fld(f"c{i:03d}", t), small_array(t, n, rng, 0.1 if i % 3 else 0.0)))
    return table(cols)


@case("blob_v2", "Blob v2 (lance.blob.v2 extension, written only by lance.write_dataset at 2.2): the data "
      "file of a one-fragment dataset with an int32 id and a blob column (inline bytes, a null, an empty "
      "value); 8 rows.", versions=("2.2",), kind="dataset")
def _blob_v2(rng):
    import lance

    n = 8
    vals = [rng.bytes(int(k)) for k in rng.integers(10, 500, n)]
    vals[2], vals[5] = None, b""
    return pa.table({"id": pa.array(np.arange(n, dtype=np.int32)), "blob": lance.blob_array(vals)})


# --------------------------------------------------------------------------------------------
# Writing one case
# --------------------------------------------------------------------------------------------


def _clean_error(e: BaseException) -> str:
    msg = f"{type(e).__name__}: {e}"
    msg = msg.split(", /home/runner/")[0].split(", /Users/")[0]
    return " ".join(msg.split())[:500]


def _batches(t: pa.Table, k: int) -> list[pa.RecordBatch]:
    step = -(-t.num_rows // k) if t.num_rows else 1
    return [t.slice(i, step).combine_chunks().to_batches()[0] for i in range(0, t.num_rows, step)] or \
        t.to_batches()


def _write_file(path: Path, t: pa.Table, c: Case, version: str) -> None:
    import lance.file as lf

    with lf.LanceFileWriter(str(path), t.schema, version=version, **c.options) as w:
        for b in _batches(t, c.batches):
            w.write_batch(b)


def _write_dataset_file(path: Path, t: pa.Table, version: str) -> None:
    import lance

    with tempfile.TemporaryDirectory() as tmp:
        lance.write_dataset(t, tmp + "/ds", data_storage_version=version)
        files = sorted(Path(tmp, "ds", "data").glob("*.lance"))
        if len(files) != 1:
            raise RuntimeError(f"expected one data file, found {[f.name for f in files]}")
        shutil.copyfile(files[0], path)


def _describe_type(f: pa.Field) -> dict:
    d = {"name": f.name, "type": str(f.type), "nullable": f.nullable}
    if f.metadata:
        d["metadata"] = {k.decode(): v.decode(errors="replace") for k, v in f.metadata.items()}
    return d


def _same(a: pa.Table, b: pa.Table) -> list[str]:
    """Column names whose read-back differs from what was written (NaN-tolerant)."""
    out = []
    for name in b.column_names:
        if name not in a.column_names:
            out.append(f"{name} (missing)")
            continue
        ta, tb = a.select([name]), b.select([name])
        try:
            assert_tables_equal(tb, ta, check_metadata=True)
        except AssertionError as e:
            out.append(f"{name}: {' '.join(str(e).split())[:300]}")
    return out


def _reference_read(path: Path, rows: int, columns=None) -> tuple[pa.Table | None, str | None]:
    """pylance's whole-file read in one batch (metadata keys sorted, so the .arrow bytes are stable)."""
    import lance.file as lf

    try:
        got = lf.LanceFileReader(str(path), columns=columns).read_all(batch_size=max(1, rows)).to_table()
    except BaseException as e:  # pyo3 PanicException is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, _clean_error(e)
    fields = [f.with_metadata(dict(sorted(f.metadata.items()))) if f.metadata else f for f in got.schema]
    meta = dict(sorted(got.schema.metadata.items())) if got.schema.metadata else None
    got = got.combine_chunks()
    return pa.Table.from_arrays(got.columns, schema=pa.schema(fields, metadata=meta)), None


def _layout_key(info: dict) -> list:
    """What must not change for an old .lance to be kept: pages and layouts (FSST symbol counts aside)."""
    return [[(p["rows"], re.sub(r"fsst\(\d+ symbols", "fsst(", p["layout"])) for p in col["pages"]]
            for col in info["columns"]]


def _keep_old(old: Path, new: Path, rows: int) -> bool:
    """Whether the existing file is as good as the new one: same layouts and the same pylance read.

    pylance's FSST training and its field-metadata hash maps make the bytes differ from run to run;
    keeping the old file when nothing else changed makes a re-run leave the checkout unchanged."""
    if not old.exists():
        return False
    if _layout_key(inspect_file(old)) != _layout_key(inspect_file(new)):
        return False
    (a, ea), (b, eb) = _reference_read(old, rows), _reference_read(new, rows)
    return ea == eb and (a is None or (a.schema == b.schema and _same(a, b) == []))


def _write_case_file(c: Case, t: pa.Table, version: str, path: Path) -> str | None:
    """Write the case to ``path`` (keeping an equivalent old file); the refusal message if pylance refuses."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        if c.kind == "dataset":
            _write_dataset_file(tmp, t, version)
        else:
            _write_file(tmp, t, c, version)
    except BaseException as e:  # a refusal; pyo3 PanicException is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        tmp.unlink(missing_ok=True)
        path.unlink(missing_ok=True)
        return ("" if isinstance(e, Exception) else "panic: ") + _clean_error(e)
    if _keep_old(path, tmp, t.num_rows):
        tmp.unlink()
    else:
        tmp.replace(path)
    return None


def make_case(c: Case, version: str, outdir: Path) -> tuple[dict, set]:
    import lance

    entry: dict = {"name": c.name, "description": c.description, "pylance_version": lance.__version__,
                   "writer": "lance.write_dataset" if c.kind == "dataset" else "lance.file.LanceFileWriter",
                   "writer_options": {"version": version, **c.options}}
    rng = np.random.default_rng(zlib.crc32(c.name.encode()))
    t = c.build(rng)
    entry["rows"] = t.num_rows
    entry["columns"] = [_describe_type(f) for f in t.schema]
    if c.kind == "file":
        entry["write_batches"] = [b.num_rows for b in _batches(t, c.batches)]
    path = outdir / f"{c.name}.lance"
    arrow_path = outdir / f"{c.name}.arrow"
    arrow_path.unlink(missing_ok=True)
    refused = _write_case_file(c, t, version, path)
    if refused is not None:
        entry["refused"] = refused
        return entry, set()
    entry["file"] = path.name
    entry["file_bytes"] = path.stat().st_size
    info = inspect_file(path)
    entry["footer_version"] = info["footer_version"]
    names = leaf_paths(t.schema)
    if len(names) == len(info["columns"]):
        for col, nm in zip(info["columns"], names):
            col["path"] = nm
    entry["physical_columns"] = info["columns"]
    pages, chunks = set(), set()
    for col in info["columns"]:
        # fixed_size_list<struct> pages count rows x list size (REFERENCE-NOTES §11): scale back to rows
        total = sum(p["rows"] for p in col["pages"])
        per_row = total // t.num_rows if t.num_rows and total % t.num_rows == 0 else 1
        for p in col["pages"]:
            pages.add(p["first_row"] // per_row)
            chunks.update((p["first_row"] + s) // per_row for s in p.pop("_chunk_row_starts", []))
    pages, chunks = sorted(pages - {0}), sorted(chunks - {0})
    entry["page_row_starts"] = [r for r in pages if r < t.num_rows]
    entry["chunk_row_starts"] = [r for r in chunks if r < t.num_rows]
    features = {(k, v, c.name) for k, v in info["features"]}
    got, error = _reference_read(path, t.num_rows)
    if error is not None:
        entry["reference_read_error"] = error
        entry["reference_column_reads"] = {
            name: _reference_read(path, t.num_rows, [name])[1] or "ok" for name in t.column_names}
        return entry, features
    with ipc.new_file(str(arrow_path), got.schema, options=IPC_OPTIONS) as w:
        w.write_table(got)
    entry["expected"] = arrow_path.name
    if got.schema != t.schema or any(f.metadata != g.metadata for f, g in zip(got.schema, t.schema)):
        entry["expected_columns"] = [_describe_type(f) for f in got.schema]
    if c.kind == "file":
        diffs = _same(t, got)
        entry["reads_back_as_written"] = not diffs
        if diffs:
            entry["read_back_differences"] = diffs
    small, _ = _reference_read(path, 1000)  # the oracle reads the same whatever the batch size
    try:
        assert_tables_equal(small, got, values_only=True)
    except AssertionError as e:
        entry["note_batch_size"] = f"pylance's read_all(batch_size=1000) differs from the one-batch read: {e}"
    return entry, features


# --------------------------------------------------------------------------------------------
# Coverage
# --------------------------------------------------------------------------------------------

LAYOUT_ROWS = [
    "mini_block_layout", "mini_block_layout with dictionary", "mini_block_layout with repetition index",
    "constant_layout", "constant_layout without buffers (simple all-null or inline constant)",
    "constant_layout with inline_value", "constant_layout with value buffer", "constant_layout with raw u16 levels",
    "constant_layout with compressed levels", "full_zip_layout", "full_zip_layout with bits_per_value",
    "full_zip_layout with bits_per_offset", "blob_layout",
]
CE_VARIANTS = ["flat", "variable", "constant", "out_of_line_bitpacking", "inline_bitpacking", "fsst",
               "fsst(compressed)", "fsst(uncompressed, switch 0)", "dictionary", "rle", "byte_stream_split",
               "general", "general lz4", "general zstd", "fixed_size_list", "fixed_size_list+validity",
               "packed_struct", "variable_packed_struct", "flat+buffer_compression",
               "variable+buffer_compression", "inline_bitpacking+buffer_compression"]
STRUCTURE_ROWS = ["column with several pages", "mini-block page with several chunks",
                  "list rows split across mini-block chunks", "mini-block chunk > 32 KiB (u32 chunk word needed)",
                  "full-zip repetition index of u8", "full-zip repetition index of u16",
                  "full-zip repetition index of u32", "full-zip repetition index of u64"]

# Why a variant never appears in the golden set (what pylance 14.0.2 did when we tried, or the notes).
NEVER_REASONS = {
    "layout: constant_layout with inline_value": "Version 2.1 accepts only the all-null ConstantLayout "
    "(REFERENCE-NOTES §4.1); 2.1 writes constant columns as RLE or a one-item dictionary (case `constant`).",
    "layout: constant_layout with value buffer": "As above: 2.1 only has the all-null form.",
    "layout: constant_layout with compressed levels": "Version 2.1 keeps raw u16 levels in all-null pages (case "
    "`all_null`).",
    "structure: mini-block chunk > 32 KiB (u32 chunk word needed)": "The 2.1 u16 chunk grammar caps a chunk at "
    "32 KiB; lance-encoding:minichunk-size >= 32 KiB is ignored with a warning (case `meta_minichunk`).",
    "structure: full-zip repetition index of u32": "Needs more than 64 KiB of zipped data in one full-zip page.",
    "structure: full-zip repetition index of u64": "Needs a full-zip page larger than 4 GiB.",
    "dictionary: in no context": "14.0.2 never writes the Dictionary compressive encoding: a dictionary is a "
    "mini-block page buffer described by MiniBlockLayout.dictionary (REFERENCE-NOTES §5.7, §11).",
    "variable_packed_struct: in no context": "Version 2.1 refuses packed structs with variable-width (or "
    "fixed_size_list) children (case `meta_packed_variable`).",
    "flat+buffer_compression: in no context": "The BufferCompression fields inside Flat / Variable / "
    "InlineBitpacking are never set by 14.0.2: general compression is always the General wrapper "
    "(REFERENCE-NOTES §5, §11).",
    "variable+buffer_compression: in no context": "As above.",
    "inline_bitpacking+buffer_compression: in no context": "As above.",
}

CONTEXT_GAPS = """Gaps inside the encoding table (a `·` where a reader might expect a `✓`), as pylance 14.0.2
behaves:

* **general in rep/def**: levels are compressed with bitpacking, RLE (2.2) or flat; `lance-encoding:compression`
  on the field does not reach them (tried with zstd/lz4 and level blocks that defeat bitpacking and RLE).
* **general lz4 in full-zip values**: asking for lz4 gives General zstd level 0 per value (`long_text.text_lz4`).
* **constant CE**: written only as the item values of an all-null fixed_size_list in full-zip (`all_null`).
* **full-zip values** are compressed per value: Flat, FixedSizeList or Constant (fixed width), Variable, FSST,
  General zstd or VariablePackedStruct (variable width); never bitpacking, RLE or byte stream split, and FSST there
  is always a trained table (`long_text`, `meta_structural`).
* **byte_stream_split**: only mini-block values, only with `lance-encoding:compression` set (auto or `bss=on`);
  14.0.2 also picks it for int32/int64 under zstd or lz4 (`meta_compression`).
* **rle in 2.1 levels**: 2.1 bitpacks levels; RLE levels are 2.2 only (`levels_rle`, `multi_page`).
* **dictionary items**: Variable, Flat, General(lz4|zstd) around those (2.2), InlineBitpacking(64) and
  OutOfLineBitpacking(64) (2.2 `dictionary_large`); never FSST or RLE. 2.1 dictionaries are never compressed and
  2.1 ignores `lance-encoding:dict-values-compression`.
* **packed_struct in full-zip**: fixed-width packed structs are always mini-block; packed structs with a
  variable-width or fixed_size_list child become VariablePackedStruct in full-zip (2.2).
* **rows split across pages**: never seen. 14.0.2 cuts list pages at row boundaries (each page's repetition index
  sums to `Page.length`, checked on 2,000 rows of ~100 items, which gave 4 pages), so the golden set has rows split
  across mini-block chunks but not across pages.
* **Refused** (recorded in the manifests as `refused`): map and fixed_size_list<struct> in 2.1; packed structs
  with variable-width or fixed_size_list children in 2.1; packed structs whose children hold nulls (both versions);
  `lance-encoding:dict-size-ratio=0` (a panic, both versions).
* **blob v2** (`2.2/blob_v2.lance`, the data file of a `lance.write_dataset` dataset): pylance's own file reader
  cannot read it whole (the descriptor children have field id -1, REFERENCE-NOTES §4.7/§8); it reads the `id`
  column alone. No .arrow; see `reference_read_error` and `reference_column_reads` in the manifest.
* **Byte-for-byte reproducibility**: the expected data (.arrow) is reproducible; the .lance bytes are not where
  pylance trains FSST or stores a field's metadata (a hash map), so the script keeps an existing .lance when the
  new one has the same page layouts and the same pylance read-back.
"""


def coverage(all_features: dict[str, set]) -> tuple[list[str], list[str]]:
    """Markdown lines of the coverage tables, and the list of (version, variant) never seen."""
    lines, never = [], []

    def cell(v: str, key: tuple) -> str:
        cases = sorted({c for (k, var, c) in all_features[v] if (k, var) == key})
        if not cases:
            return "—"
        return ", ".join(cases[:4]) + (f" (+{len(cases) - 4})" if len(cases) > 4 else "")

    def row_table(title: str, keys: list[tuple]) -> None:
        lines.extend([f"**{title}**", "", "| variant | " + " | ".join(VERSIONS) + " |",
                      "|---|" + "---|" * len(VERSIONS)])
        for key in keys:
            lines.append(f"| {key[1]} | " + " | ".join(cell(v, key) for v in VERSIONS) + " |")
        lines.append("")

    row_table("Page layouts", [("layout", r) for r in LAYOUT_ROWS])
    ctx_keys = [(ctx, var) for var in CE_VARIANTS for ctx in CONTEXTS]
    lines.extend(["**Compressive encodings by context** (✓ = in the golden set; the cases are in MANIFEST.json)",
                  "", "| variant | " + " | ".join(f"{ctx} {v}" for ctx in CONTEXTS for v in VERSIONS) + " |",
                  "|---|" + "---|" * (len(CONTEXTS) * len(VERSIONS))])
    for var in CE_VARIANTS:
        cells = []
        for ctx in CONTEXTS:
            for v in VERSIONS:
                hit = any((k, x) == (ctx, var) for (k, x, _c) in all_features[v])
                cells.append("✓" if hit else "·")
        lines.append(f"| {var} | " + " | ".join(cells) + " |")
    lines.append("")
    row_table("Structure", [("structure", r) for r in STRUCTURE_ROWS])
    for v in VERSIONS:
        present = {(k, x) for (k, x, _c) in all_features[v]}
        for key in [("layout", r) for r in LAYOUT_ROWS] + [("structure", r) for r in STRUCTURE_ROWS]:
            if key not in present:
                never.append((v, f"{key[0]}: {key[1]}"))
        for var in CE_VARIANTS:
            ctxs = [ctx for ctx in CONTEXTS if (ctx, var) not in present]
            if len(ctxs) == len(CONTEXTS):
                never.append((v, f"{var}: in no context"))
    extra = sorted({(k, x) for v in VERSIONS for (k, x, _c) in all_features[v]}
                   - {("layout", r) for r in LAYOUT_ROWS} - {("structure", r) for r in STRUCTURE_ROWS}
                   - {(ctx, var) for ctx in CONTEXTS for var in CE_VARIANTS})
    if extra:
        lines.extend(["Also seen: " + ", ".join(f"{k}:{x}" for k, x in extra), ""])
    return lines, never


def print_coverage(all_features: dict[str, set]) -> list[str]:
    lines, never = coverage(all_features)
    print("\n".join(lines))
    print("Never seen:")
    for v, item in never:
        print(f"  {v} {item}")
    return lines


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="case names to (re)write; the manifest keeps the others")
    ap.add_argument("--out", default=str(HERE), help="output folder (default: tests/data)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    all_features: dict[str, set] = {}
    manifests: dict[str, dict] = {}
    for version in VERSIONS:
        vdir = out / version
        vdir.mkdir(parents=True, exist_ok=True)
        mpath = vdir / "MANIFEST.json"
        old = json.loads(mpath.read_text()) if args.only and mpath.exists() else {"cases": []}
        old_by_name = {e["name"]: e for e in old["cases"]}
        entries, feats = [], set()
        for c in CASES:
            if args.only and c.name not in args.only:
                if c.name in old_by_name:
                    e = old_by_name[c.name]
                    entries.append(e)
                    if e.get("file"):
                        feats |= {(k, x, c.name) for k, x in inspect_file(vdir / e["file"])["features"]}
                continue
            if version not in c.versions:
                entries.append({"name": c.name, "description": c.description,
                                "skipped": f"only written for version(s) {', '.join(c.versions)}"})
                continue
            print(f"{version} {c.name}", flush=True)
            e, f = make_case(c, version, vdir)
            entries.append(e)
            feats |= f
        import lance

        manifests[version] = {"version": version, "pylance_version": lance.__version__,
                              "generator": "tests/data/make_golden.py", "cases": entries}
        mpath.write_text(dump_json(manifests[version]))
        all_features[version] = feats
    lines = print_coverage(all_features)
    write_readme(out, manifests, lines, coverage(all_features)[1])
    return 0


def dump_json(obj, indent: int = 0, width: int = 160) -> str:
    """JSON with every object or list that fits in ``width`` characters on one line."""
    flat = json.dumps(obj, ensure_ascii=False)
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
    leafy = all(not isinstance(v, dict) and not (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v))
                for v in values)  # only scalars and lists of scalars: one line however long
    if not isinstance(obj, (dict, list)) or not obj or len(flat) + indent <= width or leafy:
        return flat if indent else flat + "\n"
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {dump_json(v, indent + 1, width)}" for k, v in obj.items()]
        out = "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    else:
        out = "[\n" + ",\n".join(pad + dump_json(v, indent + 1, width) for v in obj) + "\n" + " " * indent + "]"
    return out if indent else out + "\n"


README_HEAD = """# Golden files: Lance 2.1 and 2.2 written by pylance {pylance}

Written by `tests/data/make_golden.py` (do not edit by hand; regenerate instead). For each version folder
(`2.1/`, `2.2/`) and each case:

* `<case>.lance`: written by pylance's `lance.file.LanceFileWriter(path, schema, version=..., **options)`
  (or, for `blob_v2`, the data file of a `lance.write_dataset` dataset);
* `<case>.arrow`: Arrow IPC file (zstd-compressed buffers) of what pylance's own reader returns for the
  whole file (`LanceFileReader(path).read_all(batch_size=rows).to_table()`); missing when pylance cannot
  read its own file (then the manifest has `reference_read_error`);
* `MANIFEST.json`: per case the description, rows, columns, writer options, pylance version, refusals
  (`refused`), and per physical column every page with its rows, buffer sizes, a summary of its
  `PageLayout` and compressive encodings, and its mini-block chunk boundaries (`chunk_row_starts`).
  `page_row_starts` / `chunk_row_starts` at case level are the rows where some column's page / chunk
  starts: the golden tests read ranges across them.

`tests/golden/test_golden.py` reads every `.lance` with lancefile and compares with the `.arrow` (whole file
at several batch sizes, ranges at page and chunk edges, takes, projections). It does not need pylance. It is
skipped for a version while `lancefile.format.version.VERSIONS[...].readable` is False.

## Regenerate

```
python tests/data/make_golden.py                 # everything (needs pylance {pylance})
python tests/data/make_golden.py --only lists    # one case, both versions; the manifest keeps the others
```

The data is seeded per case, so a re-run gives the same expected data (.arrow). pylance's .lance bytes are not
always the same from run to run (FSST training, field metadata kept in a hash map), so the script keeps an
existing .lance when the new one has the same page layouts and reads back the same; a re-run over a checkout
therefore changes nothing (check with `git status`). The manifest's `refused` / `reference_read_error` fields
record what pylance would not write or read.

Summary notation: `mini_block(values=…, rep=…, def=…, dict=… xN, layers=[innermost…outermost])`,
`full_zip(bits_per_value|bits_per_offset=…, bits_rep, bits_def, values=…)`, `constant(inline_value=hex, …)`,
`blob(inner=…)`; encodings `flat(bits)`, `variable(offsets)`, `inline_bitpacking(bits)`,
`out_of_line_bitpacking(bits,flat(packed bits))`, `fsst(N symbols[, switch 0],values)`, `rle(values,runs)`,
`general(lz4|zstd[:level],inner)`, `byte_stream_split(inner)`, `fixed_size_list(dim[,validity],inner)`,
`packed_struct([bits…],inner)`, `variable_packed_struct(field:layout=bits; …)`.

## Cases
"""


def write_readme(out: Path, manifests: dict, cov_lines: list[str], never: list[str]) -> None:
    import lance

    lines = [README_HEAD.format(pylance=lance.__version__)]
    lines.append("| case | rows | " + " | ".join(VERSIONS) + " | what it is for |")
    lines.append("|---|---|" + "---|" * len(VERSIONS) + "---|")
    by_version = {v: {e["name"]: e for e in manifests[v]["cases"]} for v in VERSIONS}
    for c in CASES:
        cells = []
        for v in VERSIONS:
            e = by_version[v].get(c.name, {})
            if "refused" in e:
                cells.append("refused: " + e["refused"].replace("NotImplementedError: Not supported: ", ""))
            elif "skipped" in e:
                cells.append("not written")
            elif "reference_read_error" in e:
                cells.append(f"{e.get('file_bytes', 0):,} B, no .arrow: pylance cannot read it")
            else:
                cells.append(f"{e.get('file_bytes', 0):,} B")
        rows = next((by_version[v][c.name].get("rows") for v in VERSIONS if "rows" in by_version[v].get(c.name, {})),
                    "")
        lines.append(f"| `{c.name}` | {rows} | " + " | ".join(cells) + f" | {c.description} |")
    lines += ["", "## Coverage (generated from the files)", ""] + cov_lines
    lines += ["### Never seen in the golden set", ""]
    for item in dict.fromkeys(item for _v, item in never):
        versions = "/".join(v for v, i in never if i == item)
        lines.append(f"* {versions} {item}: {NEVER_REASONS.get(item, 'No case produced it.')}")
    lines += ["", CONTEXT_GAPS]
    (out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
