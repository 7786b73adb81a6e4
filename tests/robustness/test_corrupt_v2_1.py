"""Corrupt, truncated and forged Lance 2.1 / 2.2 files fail cleanly (README "Safe on bad input").

Files written by pylance (``tests/robustness/fuzz_v2_1.py``'s corpus) are mutated and read
with ``read_all``, ``read_range``, ``take_rows`` and ``metadata()``. Each read must give valid
Arrow data (``validate(full=True)``) or raise a :class:`lancefile.LanceError` that is not a
relabelled foreign exception (a Lance error whose cause is a foreign one; the reader no
longer wraps decoder exceptions, issue 13), naming the file,
and the column and page when the damage is in a page. Other data without an error is
accepted only when value bytes were changed.

* :func:`test_sampled_mutations_fail_cleanly`: a fixed, seeded sample (about 750) of every
  mutation kind of the fuzzer, restricted to what lancefile handles today (:data:`SAMPLE`).
* :func:`test_known_failure`: one minimal reproducer per failure signature the fuzzer
  found (:data:`KNOWN`); those that still fail are ``xfail(strict=True)`` and turn XPASS
  when fixed, the fixed ones stay as regression tests.

The fuzzer itself (``python tests/robustness/fuzz_v2_1.py --minutes N``) runs the same
mutations at random for as long as asked, in a watched worker process.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

pytest.importorskip("lance")

import lancefile  # noqa: E402
from tests.robustness import fuzz_v2_1 as fz  # noqa: E402

# Corpus cases used here. pylance writes them byte for byte the same on every run (its FSST
# training does not, so the FSST cases are left to the fuzzer).
NAMES = ["ints", "strings", "dict", "rle", "lists", "structs", "packed", "fsl", "fz_binary", "fz_fsl", "fz_list",
         "constant", "blob", "map", "compression", "multichunk", "multipage"]
SEED = 20261121


@dataclass
class Corpus:
    directory: Path
    maps: dict  # key -> fz.FileMap
    baselines: dict  # key -> the clean file's table

    def mutant(self, tmp_path: Path, key: str, spec: dict) -> str:
        path = tmp_path / f"{key}-mutant.lance"
        path.write_bytes(fz.apply(self.maps[key], spec))
        return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    directory = tmp_path_factory.mktemp("corpus-v2_1")
    files = fz.build_corpus(directory, NAMES)
    baselines = {k: lancefile.LanceFileReader(str(directory / f"{k}.lance")).read_all().to_table() for k in files}
    return Corpus(directory, {k: fz.parse_file(v) for k, v in files.items()}, baselines)


def _problems(m: fz.Mutation, ops: list, results: list[dict]) -> list[str]:
    out = []
    for op, res in zip(ops, results):
        sig = fz.signature(m, res)
        if sig:
            out.append(f"{m.kind} {json.dumps(m.spec)[:200]} {op[0]}: {sig}: {res.get('message', '')[:200]}")
    return out


# ------------------------------------------------------------------------------------------
# The sampled mutations
# ------------------------------------------------------------------------------------------

# kind -> (corpus cases, or None for all; mutations per case).
SAMPLE: dict[str, tuple[list | None, int]] = {
    "flip-data": (None, 4),
    "flip-chunk-meta": (None, 1),
    "flip-chunk-header": (None, 1),
    "flip-rep-index": (None, 2),
    "flip-fz-index": (None, 4),
    "flip-colmeta": (None, 2),
    "flip-tables": (None, 1),
    "flip-schema": (None, 1),
    "truncate-file": (None, 1),
    "truncate-buffer": (None, 1),
    "forge-chunk-word": (None, 1),
    "forge-chunk-header": (None, 1),
    "forge-rep-index": (None, 2),
    "forge-fullzip-len": (None, 6),
    "forge-constant-value": (None, 8),
    "forge-page-meta": (None, 1),
    "forge-layout": (None, 2),
    "forge-layout-multi": (None, 1),
    "forge-tables": (None, 1),
    "forge-schema": (None, 1),
    "fill-buffer": (None, 1),
}


def sampled_cases(corpus: Corpus):
    """(key, mutation, reads) of the sample, the same on every run."""
    for kind, (names, per_key) in SAMPLE.items():
        keys = sorted(k for k in corpus.maps if names is None or k.rsplit("-", 1)[0] in names)
        for key in keys:
            rng = random.Random(f"{SEED}:{kind}:{key}")
            made = 0
            for _ in range(20 * per_key):
                if made == per_key:
                    break
                m = fz.generate(rng, corpus.maps[key], kind)
                if m is None:
                    continue
                made += 1
                yield key, m, fz.read_ops(corpus.baselines[key].num_rows, rng)


def test_sample_covers_every_kind(corpus):
    assert set(SAMPLE) == set(fz.KINDS)
    assert {m.kind for _, m, _ in sampled_cases(corpus)} == set(fz.KINDS)


def test_sampled_mutations_fail_cleanly(corpus, tmp_path):
    problems, n = [], 0
    for key, m, ops in sampled_cases(corpus):
        path = corpus.mutant(tmp_path, key, m.spec)
        problems += [f"{key} " + p for p in _problems(m, ops, fz.run_case(path, ops, corpus.baselines[key]))]
        n += 1
    assert n > 300
    assert not problems, f"{len(problems)} of {n} mutated files read badly:\n" + "\n".join(problems[:30])


# ------------------------------------------------------------------------------------------
# One reproducer per failure signature
# ------------------------------------------------------------------------------------------


def _edit(path: list, value=None, op: str = "set", index: int | None = None) -> dict:
    e = {"path": path, "op": op}
    if value is not None:
        e["value"] = value
    if index is not None:
        e["index"] = index
    return e


def _layout(col: int, path: list, value=None, op: str = "set") -> dict:
    return {"op": "layout", "col": col, "page": 0, "edit": _edit(path, value, op)}


def _page_meta(col: int, path: list, value, index: int | None = None) -> dict:
    op = "set" if index is None else "set-item"
    return {"op": "colmeta", "col": col, "edit": _edit(["pages", 0] + path, value, op, index)}


def _schema(path: list, value) -> dict:
    return {"op": "schema", "edit": _edit(path, value)}


def _in_chunk(part: str, at: int, width: int, value: int, col: int = 0, buffer: int = 0) -> Callable:
    """A spec putting ``value`` into a part of chunk 0 (``at`` bytes into that part)."""

    def make(fm):
        cl = fz.chunk_layout(fm, col, 0, 0)
        base = cl[part][buffer][0] if part == "buffers" else cl[part][0]
        return {"op": "put", "region": cl["region"], "offset": base + at, "width": width, "value": value}

    return make


def _first_string_byte(fm) -> dict:
    """Byte 0 of the first value of ``strings``' column 0 set to 0xFF (invalid UTF-8)."""
    cl = fz.chunk_layout(fm, 0, 0, 0)
    start = cl["buffers"][0][0]
    region = fm.regions[cl["region"]][0]
    rel = int.from_bytes(fm.data[region + start: region + start + 4], "little")
    return {"op": "put", "region": cl["region"], "offset": start + rel, "width": 1, "value": 0xFF}


def _unnamed(what: str, where: str, message: str) -> str:
    """The reason of a clean error whose message lacks the file or the page."""
    return f"message-without-{what} | CorruptFileError | lancefile/{where}: '{message}'"


@dataclass
class Known:
    key: str
    spec: dict | Callable  # an fz.apply spec, or a function of the FileMap giving one
    kind: str  # the mutation kind it belongs to (for the data-change rule)
    signature: str = ""  # what the fuzzer found
    failing: bool = False  # still fails today: xfail(strict=True, signature=signature)
    crash: bool = False  # read in a child interpreter (it crashed the interpreter when found)
    data: bool = False  # only value bytes change
    ops: tuple = (["metadata"], ["all"], ["range", 0, 1], ["range", 1, 2], ["take", [0, -1]])


BITPACK = ["mini_block_layout", "value_compression", "inline_bitpacking", "uncompressed_bits_per_value"]
FSL_ITEMS = ["mini_block_layout", "value_compression", "fixed_size_list", "items_per_value"]
OOL_WIDTH = ["mini_block_layout", "def_compression", "out_of_line_bitpacking", "values", "flat", "bits_per_value"]
BITPACK_16 = "2a020810"  # CompressiveEncoding{inline_bitpacking{uncompressed_bits_per_value: 16}}
FLAT_2_40 = "0a0708808080808020"  # CompressiveEncoding{flat{bits_per_value: 2**40}}
RLE_16 = "420c0a040a02081012040a020808"  # CompressiveEncoding{rle{values: flat(16), run_lengths: flat(8)}}
PACKED_WIDTH = ["mini_block_layout", "value_compression", "packed_struct", "values", "flat", "bits_per_value"]
KNOWN: dict[str, Known] = {
    # crashes
    "dictionary-leaf-without-dictionary": Known(
        "dict-2.2", _layout(1, ["mini_block_layout", "dictionary"], op="clear"), "forge-layout", crash=True,
        signature="crash | abort: arrow/array/array_dict.cc:84 Check failed: (data->dictionary) != (nullptr) @ "
                  "lancefile/encodings/arrowutil.py (array_from_fixed): a dictionary field's page has no dictionary"),
    "schema-says-dictionary": Known(
        "rle-2.2", _schema(["schema", "fields", 1, "logical_type"], "dict:string:int32:false"), "forge-schema",
        crash=True, signature="crash | abort: array_dict.cc:84 Check failed: (data->dictionary) != (nullptr) @ "
                              "arrowutil.py (array_from_fixed): a plain column whose schema says dictionary"),
    "negative-bitpacking-width-segfault": Known(
        "dict-2.1", _layout(1, BITPACK, 64), "forge-layout", crash=True,
        signature="crash | SIGSEGV @ lancefile/encodings/kernels/fastlanes.py (_unpack_chunks): a u64 inline "
                  "bitpacking width word with its top bit set is a negative width (_k_inline_scan checks W > T only)"),
    "rle-levels-length-overflow-segfault": Known(
        "multichunk-2.2", _layout(0, ["mini_block_layout", "rep_compression"], RLE_16, "replace-message"),
        "forge-layout", crash=True, ops=(["take", [539, 868, 1770]],),
        signature="crash | SIGSEGV @ lancefile/encodings/kernels/rle.py (rle_block_decode_many): _k_rle_blocks' "
                  "check s + 8 + vbytes + runs > end overflows int64 for a huge values length (levels of "
                  "non-adjacent chunks; one chunk alone gets a clean error)"),
    "negative-bitpacking-width-garbage": Known(
        "lists-2.1", _in_chunk("buffers", 0, 8, 1 << 63), "forge-chunk-header",
        signature="silent-diff | a u64 inline bitpacking width word of 2**63 decodes to other values without an "
                  "error (fastlanes.py _k_inline_scan: negative width)"),
    # foreign exceptions (relabelled by the reader)
    "chunk-word-zero": Known(
        "rle-2.2", {"op": "put", "region": "c0p0b0", "offset": 0, "width": 4, "value": 0}, "forge-chunk-word",
        signature="relabelled | IndexError | lancefile/encodings/structural/mini_block.py (_u16): index N is out "
                  "of bounds"),
    "num-items-above-int64": Known(
        "rle-2.1", _layout(1, ["mini_block_layout", "num_items"], 2**64 - 1), "forge-layout",
        signature="relabelled | OverflowError | lancefile/encodings/kernels/miniblock.py (miniblock_chunk_words), "
                  "before that structural/mini_block.py (_read_chunks): int too big to convert"),
    "fsl-items-per-value-above-int64": Known(
        "fsl-2.1", _layout(0, FSL_ITEMS, 2**64 - 1), "forge-layout",
        signature="relabelled | OverflowError | lancefile/encodings/compressive/fixed_size_list.py (miniblock): "
                  "Python int too large to convert to C long"),
    "fsl-items-per-value-huge": Known(
        "fsl-2.1", _layout(0, FSL_ITEMS, 2**63 - 1), "forge-layout",
        signature="relabelled | ValueError | lancefile/encodings/arrowutil.py (range_indices): negative dimensions "
                  "are not allowed (read_range); message without file from kernels/gather.py (read_all, take)"),
    "dictionary-of-zero-items": Known(
        "lists-2.2", _layout(0, ["mini_block_layout", "num_dictionary_items"], 0), "forge-layout",
        signature="relabelled | ArrowIndexError | lancefile/encodings/structural/mini_block.py (_resolve_dictionary): "
                  "Index 0 out of bounds (take_rows; read_all gets a clean error)"),
    "null-type-over-non-nullable-field": Known(
        "map-2.2", _schema(["schema", "fields", 2, "logical_type"], "null"), "forge-schema",
        signature="foreign | ValueError | lancefile/format/schema.py (to_arrow): A null type field may not be "
                  "non-nullable (raised by LanceFileReader(), not relabelled)"),
    "blob-field-of-other-type": Known(
        "blob-2.1", _schema(["schema", "fields", 0, "logical_type"], "int32"), "forge-schema",
        signature="relabelled | ArrowInvalid, ArrowNotImplementedError | lancefile/encodings/structural/blob.py "
                  "(read): blob values cast to the field's forged type"),
    "struct-field-forged-over-leaf": Known(
        "structs-2.1", _schema(["schema", "fields", 1, "logical_type"], "struct"), "forge-schema",
        signature="relabelled | ValueError | lancefile/encodings/structural/fields.py (_build): Type's expected "
                  "number of children (2) did not match the passed number (0)"),
    "struct-forged-over-list-item": Known(
        "constant-2.2", _schema(["schema", "fields", 6, "logical_type"], "struct"), "forge-schema",
        signature="relabelled | ValueError | lancefile/encodings/structural/fields.py (_build): Type's expected "
                  "number of buffers (2) did not match the passed number (1)"),
    # huge allocations
    "constant-page-length-2**40": Known(
        "constant-2.2", _page_meta(2, ["length"], 2**40), "forge-page-meta",
        signature="huge-allocation | MemoryError | lancefile/encodings/structural/constant.py (read): a constant "
                  "page's values are materialised for its forged length (page rows are not checked against the "
                  "file's rows)"),
    "flat-width-2**40": Known(
        "ints-2.1", _layout(0, ["mini_block_layout", "value_compression"], FLAT_2_40, "replace-message"),
        "forge-layout",
        signature="huge-allocation | MemoryError (375 TiB) | lancefile/encodings/kernels/miniblock.py "
                  "(miniblock_plain_values, miniblock_plain_take): flat values of 2**40 bits"),
    "all-null-page-length-2**40": Known(
        "constant-2.2", _page_meta(4, ["length"], 2**40), "forge-page-meta",
        signature="huge-allocation | MemoryError | lancefile/encodings/structural/constant.py (_all_levels)"),
    "list-page-num-items-huge": Known(
        "map-2.2", _layout(2, ["mini_block_layout", "num_items"], 2**63 - 1), "forge-layout",
        signature="huge-allocation | MemoryError (64 PiB) | lancefile/encodings/kernels/bitpacking.py (_inline_scan): "
                  "a list page's num_items is not checked before allocating"),
    # messages without the file, or without the page
    "flat-levels-too-short": Known(
        "rle-2.2", _layout(1, ["mini_block_layout", "def_compression"], "0a020808", "replace-message"),
        "forge-layout", signature=_unnamed("file", "encodings/compressive/values.py (Fixed.__post_init__)",
                                           "N bytes cannot hold N values of N bits")),
    "packed-struct-width-huge": Known(
        "packed-2.1", _layout(0, PACKED_WIDTH, 2**64 - 1), "forge-layout",
        signature=_unnamed("file", "encodings/kernels/gather.py (gather)",
                           "a byte range lies outside the N-byte buffer")),
    "full-zip-list-items-zeroed": Known(
        "fz_list-2.1", {"op": "fill", "region": "c0p0b0", "byte": 0}, "fill-buffer",
        signature=_unnamed("page", "encodings/structural/repdef.py (unravel)",
                           "repetition levels start N rows, N expected")),
    "full-zip-list-length-forged": Known(
        "map-2.2", {"op": "xor", "region": "c2p0b1", "offset": 192, "mask": 172}, "flip-data", data=True,
        signature=_unnamed("page", "encodings/structural/repdef.py (unravel)",
                           "repetition level N above the field's N")),
    "full-zip-index-shortened": Known(
        "fz_binary-2.1", _page_meta(0, ["buffer_sizes"], 12, index=1), "truncate-buffer",
        signature=_unnamed("page", "encodings/structural/repdef.py (unravel)", "N level entries for N rows")),
    "map-levels-flipped": Known(
        "map-2.2", {"op": "xor", "region": "c1p0b1", "offset": 38, "mask": 8}, "flip-data", data=True,
        signature=_unnamed("page", "encodings/structural/fields.py (_build)", "column N gives N values for N slots")),
    "page-length-zero": Known(
        "rle-2.1", _page_meta(1, ["length"], 0), "forge-page-meta",
        signature=_unnamed("page", "encodings/columns.py (split)", "column N has N rows, fewer than the N needed")),
    "blob-size-2**63": Known(  # earlier: relabelled ArrowInvalid 'Negative offsets in binary array' (blob.py)
        "blob-2.1", _in_chunk("buffers", 8, 8, 1 << 63), "forge-chunk-header",
        signature=_unnamed("page", "io.py (check_range)", "range [N, -N) lies outside the file of N bytes")),
    # invalid Arrow data
    "blob-size-wraps": Known(
        "blob-2.2", _in_chunk("buffers", 8, 8, (1 << 64) - 8), "forge-chunk-header",
        signature="invalid-arrow | non-monotonic offset: a blob descriptor size of 2**64 - 8 gives a negative "
                  "large_binary length"),
    "invalid-utf8": Known(
        "strings-2.1", _first_string_byte, "flip-data", data=True,
        signature="invalid-arrow | Invalid UTF8 sequence: string values are not validated"),
    # other data without an error, where a check could tell
    "file-rows-below-page-rows": Known(
        "rle-2.1", _schema(["length"], 0), "forge-schema",
        signature="silent-diff | rows: the schema's row count is not checked against the pages' rows"),
    "bitpacked-chunk-zeroed": Known(
        "dict-2.1", {"op": "fill", "region": "c1p0b1", "byte": 0}, "fill-buffer",
        signature="silent-diff | inline bitpacking ignores the chunk's value buffer size (0 here) and reads on"),
    "variable-chunk-count-forged": Known(
        "strings-2.1", {"op": "xor", "region": "c1p0b0", "offset": 0, "mask": 4}, "flip-chunk-meta",
        ops=(["range", 126, 92], ["take", [162, 175, 202]]),
        signature="silent-diff | a chunk-metadata bit flip changes a variable-width chunk's value count; only the "
                  "chunks a read decodes are checked, and a read that skips that chunk places later rows wrongly "
                  "(no checksum in the format can tell)",
        failing=True),
    "chunk-sizes-short-of-buffer": Known(
        "multichunk-2.2", {"op": "put", "region": "c0p0b0", "offset": 8, "width": 4, "value": 0}, "forge-chunk-word",
        ops=(["take", [2716]],),
        signature="silent-diff | mini-block chunk sizes that fall short of the chunk buffer are not refused (chunk 2 "
                  "forged to 8 bytes: a take reads the wrong row)"),
    "bitpacked-width-forged": Known(
        "dict-2.2", _layout(1, ["mini_block_layout", "value_compression"], BITPACK_16, "replace-message"),
        "forge-layout", ops=(["take", [1710, 1300, 835]],),
        signature="silent-diff | 32-bit packed dictionary indices read as 16-bit packed ones: the packed groups "
                  "are not checked to fill the chunk's value buffer (read_all gets a clean error)"),
    "constant-without-value": Known(
        "constant-2.2", _layout(0, ["constant_layout", "inline_value"], op="clear"), "forge-layout",
        signature="silent-diff | a constant page with all-valid layers and no value reads as nulls"),
    "constant-of-zero-bytes": Known(
        "constant-2.2", _layout(0, ["constant_layout", "inline_value"], "", "set-bytes"), "forge-layout",
        signature="silent-diff | a constant of 0 bytes for an int64 column reads as zeros (values.py _fixed_to_arrow "
                  "takes 0-bit values as zeros of any type; a dictionary forged to constant{} reads the same)"),
    "chunk-bytes-left-over": Known(
        "ints-2.1", _layout(3, ["mini_block_layout", "def_compression"], op="clear"), "forge-layout",
        signature="silent-diff | a mini-block chunk whose buffers end before the chunk does is not refused (here the "
                  "definition levels are read as the values)"),
    "out-of-line-width-zero": Known(
        "rle-2.1", _layout(1, OOL_WIDTH, 0), "forge-layout",
        signature="silent-diff | out-of-line bitpacking of width 0 ignores the bytes its buffer holds"),
    "full-zip-control-bits": Known(
        "fz_fsl-2.2", _page_meta(1, ["buffer_offsets"], 40961, index=0), "forge-page-meta",
        signature="silent-diff | full-zip control words with bits above bits_rep + bits_def are not refused (here "
                  "the items are read one byte off)"),
}

def _read_in_child(path: str, clean: str, ops: list) -> list[dict]:
    results, code, stderr = fz.run_in_child(path, clean, ops)
    if code != 0:
        tail = stderr.strip().splitlines()[-1:] or [""]
        results.append({"outcome": "crash", "type": f"exit code {code}", "where": tail[0][:200]})
    return results


def _params():
    for name, k in KNOWN.items():
        marks = [pytest.mark.xfail(strict=True, reason=k.signature)] if k.failing else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_known_failure(corpus, tmp_path, name):
    k = KNOWN[name]
    fm = corpus.maps[k.key]
    spec = k.spec(fm) if callable(k.spec) else k.spec
    rows = corpus.baselines[k.key].num_rows
    ops = [[op[0], [i % rows for i in op[1]]] if op[0] == "take" else list(op) for op in k.ops]
    path = corpus.mutant(tmp_path, k.key, spec)
    m = fz.Mutation(k.kind, spec, (0, 0) if "schema" not in k.kind else None, data=k.data)
    if k.crash:
        results = _read_in_child(path, str(corpus.directory / f"{k.key}.lance"), ops)
    else:
        results = fz.run_case(path, ops, corpus.baselines[k.key])
    problems = _problems(m, ops, results)
    assert not problems, "\n".join(problems)
