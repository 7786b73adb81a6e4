"""Turn benchmark records into the printed tables, ``RESULTS.md`` and ``results.json``.

Every ratio is a ratio of median *times* to pylance's: ``lancefile / pylance`` below 1.0
means lancefile is faster (for throughputs, its MB/s is 1/ratio times pylance's).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["write_report", "render", "evaluate_targets", "na_write", "OWN_TAKE_UNVERIFIED"]

LIB_ORDER = ("lancefile", "pylance", "parquet")
WRITE_OPS = ("write", "write, no fsync")
THROUGHPUT_OPS = (*WRITE_OPS, "scan bs=1024", "scan bs=65536", "scan 1 column", "read_range 1%",
                  "own file: scan bs=65536")
WRITE_RATIO_MAX = 1 / 0.8  # write throughput >= 0.8x pylance
# the version pylance writes by default: its write must be as fast as pylance's (issue 10)
DEFAULT_VERSION_WRITE_RATIO_MAX = 1.0
OPEN_RATIO_MAX = 2.0  # 2.1+: opening the 1,000-column file <= 2x pylance
PARQUET_ZSTD = "size, zstd"  # op of the parquet file written with zstd: sizes only
SIZE_VS_PARQUET = ("strings_lowcard", "numeric", "nested")  # tables whose 2.2 file must be <= parquet's (zstd)
WIDE_TABLE = "wide"  # the 1,000-column table
PAGE_GROWTH_MAX_MB = 128  # scanning one 512 MB page: bounded by the read chunk, not the page
PAGE_FULL_MB = 512
# "Bounded": between the two sizes the peak grows by less than one read chunk (16 MiB) plus
# 10% of the extra Arrow data; allocators (Arrow's jemalloc pool, glibc's per-thread arenas)
# keep freed chunks for reuse, so peaks move by that much from run to run.
BOUNDED_SLACK_MB = 16.8
BOUNDED_SLOPE = 0.10


def bounded_limit_mb(extra_arrow_mb: float) -> float:
    """How much a bounded peak may grow between two sizes ``extra_arrow_mb`` of Arrow data apart."""
    return BOUNDED_SLACK_MB + BOUNDED_SLOPE * extra_arrow_mb

# Why a target can be missed on this machine, printed under a miss. Kept with the code so
# they are revised with it; the profiles behind them are summarised in bench/README.md.
EXPLANATIONS = {
    "scan": (
        "A wide 2.0 table's plain numeric columns are read together since 2026-11-30: one compiled pass "
        "walks all their columns' metadata, each page is planned for all columns as arrays, a chunk's rows "
        "(or a take's) come in one batch of requests and each column is an Arrow array over them; their "
        "readers are made without parsing a column until one is read otherwise (standalone, pylance's "
        "1,000-column file: scan at 65536 35 -> 26 ms, pylance ~32; at 1024 61 -> 48, pylance ~60). A "
        "cell's first repetition is often 2-3x its others (memory not yet reused), and cells near 1.00 move "
        "by +-30% between runs on this shared machine. Until 2026-11-29 low-cardinality strings and lists "
        "in 2.0 decoded page by page in Python and every string was checked again, whole column at a time, "
        "in the caller's thread (the low-cardinality and nested scans at 65536: 1.9-2.0); now a field of "
        "leaves, structs and lists checks its leaves on the decoding threads (a dictionary page's strings "
        "once, as the dictionary; pure-ASCII strings in one pass), and 2.0 string and list offsets come "
        "from one compiled pass."
    ),
    "write": (
        "lancefile makes a finished file durable, pylance does not: every 32 MB written it starts flushing "
        "the file to disk on a background thread (fdatasync), and it fsyncs the file before renaming it into "
        "place. On this shared disk the flush of 200 MB takes 3-200 ms, depending on what else it is "
        "writing back (the 02:18 run of 2026-11-28: the vectors 54 ms to encode and write, 250 ms with the "
        "fsync); the background flushes overlap what they can with encoding. The 'write, no fsync' row is "
        "the same write without either. The rest is the write "
        "system calls (page cache copies, which pylance also makes) and, for strings, concatenating the "
        "buffered batches."
    ),
    "take": (
        "A 100-row take touches most pages of every column (12-15 pages a column here, 155 on the nested "
        "table's list columns). A fresh reader's take of mini-block pages works from the column's page table, "
        "parsed into arrays by one compiled pass over the column's metadata (lancefile/format/pagetable.py, "
        "since 2026-11-28): no decoder or page object a page; the touched pages' chunk metadata, repetition "
        "indexes and dictionaries come in one batch of requests and are checked as arrays, the chunks in "
        "another, and each run of pages of one encoding is decoded in one pass (the take of pylance's nested "
        "file: 7.5 -> 5.7 ms in alternating runs). A 2.0 take over low-cardinality string pages reads every "
        "touched page's index bytes and dictionary in one batch of requests (since 2026-11-29; 100 rows of "
        "pylance's file: ~3.6 -> ~2.5 ms), where it made two or three requests a page; a 2.0 take of up to "
        "4,096 rows reads the plain numeric columns together (the 1,000-column table: 155 -> 34 ms, pylance "
        "~145; since 2026-11-30), and a 2.0 take over plain string pages reads every page's wanted end "
        "offsets in one batch of requests and the rows' bytes in one more (pylance's long text: 2.07 -> "
        "0.78 ms in a loop; since 2026-11-30). Since 2026-11-30 a take out of the usual mini-block chunks of a "
        "column without lists (Flat values, bare or under zstd, levels likewise) is one compiled pass over the "
        "chunks (header, one libzstd call a buffer, the wanted entries), and a string column's dictionary "
        "lookups another; since d4f5051 (the same day) also values split into byte streams (lancefile's "
        "ids and floats), and a list column's usual chunks (bit-packed repetition, RLE or bit-packed "
        "definition levels, bit-packed or flat values: the nested table's, both writers') are one compiled "
        "pass that decodes each chunk's levels into a small scratch, walks the rows and copies out only the "
        "wanted rows' levels and values, checking every touched chunk's levels against its repetition index "
        "entry (paired against the tree before, fresh reader included: the nested take 0.74 of lancefile's "
        "file, 0.77 of pylance's). The measurement uses a freshly "
        "opened reader each time and 11 repetitions; a process's first two takes of the nested file also "
        "load compiled kernels for new argument types (~20 ms each). Each take is timed after a full "
        "garbage collection, which leaves the CPU caches cold: that costs lancefile's Python-side work more "
        "than pylance's compiled code (lancefile's own files: see the target on them)."
    ),
    "read_own": (
        "lancefile checks the checksums of every byte a take reads; pylance has none to check. A take of "
        "vectors reads the 16 KiB checksum blocks around each row and hashes them (reading the 16 KiB costs "
        "~1 us a 4 KiB page in the kernel's copy: 0.5 ms for 100 rows, against 0.17 ms for the 3 KB rows "
        "alone; the hashing ~0.06 ms); since 7b164da (2026-11-30) each request is read into a "
        "small buffer that stays in cache, checked and its rows copied out, where the whole blocks were "
        "kept and the rows gathered from them (paired: 0.93); a take of long strings "
        "reads the 4 KiB pieces of its page's checksum grid around each row (since 2026-11-29; 100 rows of "
        "the long text: 0.6 MB read for 0.2 MB of rows, 2.2 MB before); the 'own file: take 100, checksums "
        "not checked' column is the same take without the check. Since 2026-11-29 a mini-block chunk of 1 KiB "
        "or more has a checksum segment of its own and a local file's checked reads and their hashing are one "
        "compiled call: on the low-cardinality file the check costs ~0.1 ms (0.45-0.5 before). On that file "
        "at 2.2 a row's value and null level sit in zstd-coded chunks (entropy-coded dictionary indices, the "
        "price of a file smaller than parquet's): a take decodes ~300 small zstd frames (~1.3 ms), which "
        "both readers pay (in loops of 120 takes, lancefile's 2.1 and 2.2 takes of this table 2.6 and 4.0 "
        "ms, pylance's 2.9 and 4.0-4.1; interleaved in one process lancefile/pylance 0.97-1.13 a round of "
        "25, median ~1.06: 2026-11-29). Since "
        "2026-11-28 only the taken rows' null levels are picked out of them (the take: 4.1 -> 3.4 ms); since "
        "2026-11-30 the chunks' headers, values and levels are one compiled pass and the dictionary lookups "
        "another (paired with bench.pairs against the tree before, fresh reader included: 0.84, then 0.93). Each "
        "take is timed after a full garbage collection, which leaves the CPU caches cold; lancefile's "
        "Python-side work suffers more from that than pylance's compiled code."
    ),
    "size": (
        "lancefile's file also holds its checksums (8 bytes every 16 KiB, 0.05%, 20 bytes a page buffer "
        "of at most 16 KiB and a mini-block chunk of 1 KiB or more, 4 bytes every 4 KiB of long strings' "
        "pages: 0.05-0.93% of the file) and its zone statistics (a small bit-packed 2.1 file: about 20 bytes "
        "a column every 8,192 rows, plus the field list), which pylance does not write: 0.1-1.1 MB on these "
        "tables. lancefile's own encoding choices (floats of one "
        "magnitude byte-stream-split under LZ4; steadily growing integers byte-stream-split under zstd; 2.2 "
        "dictionary indices and null levels entropy-coded with zstd) more than pay for them on the bench's "
        "tables; a table whose pages none of them shrinks is pylance's data bytes plus those 0.05-0.1% "
        "(written with reference_encodings=True, statistics=False and checksums=False the file is "
        "pylance's byte for byte). Against parquet with zstd: parquet's pages are zstd-compressed whole, "
        "so data that only general compression shrinks (long text) stays larger in Lance, whose default "
        "pages are read a chunk at a time."
    ),
    "one_column": (
        "Opening reads the 64 KiB tail (footer, offset tables and the metadata that happens to lie in it), the "
        "schema, and then only the projected columns' metadata, coalesced into one request "
        "(FileLayout.prefetch_columns in lancefile/format/container.py); a scan reads only that column's pages."
    ),
    "memory": (
        "A scan holds about two decoded chunks (READ_CHUNK_BYTES, 16 MiB of Arrow data, or 6 MiB a column for "
        "projections of 3 columns or more, up to 64 MiB): the one being decoded and the one the caller's last batch still refers to; a writer "
        "holds data_cache_bytes (8 MiB) per column. The rest of the peak is freed memory the allocators keep "
        "for reuse (large reads go into Arrow's pool on purpose: refilling reused pages is ~4x cheaper than "
        "faulting in fresh ones; glibc's per-thread arenas for the two decoding threads), which varies by "
        "tens of MB from run to run: the long-text scan peaked 111, 115 and 115 MB above baseline at 0.5x, 1x "
        "and 2x the size."
    ),
}
EXPLANATIONS["read_take"] = EXPLANATIONS["take"]  # the same take path reads pylance's 2.1/2.2 files


def _fmt_time(s: float) -> str:
    if s is None or math.isnan(s):
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def _cell(rec: dict | None) -> str:
    if rec is None:
        return "-"
    t = rec["median"]
    if rec["op"] in THROUGHPUT_OPS and rec.get("arrow_mb"):
        return f"{_fmt_time(t)} ({rec['arrow_mb'] / t:,.0f} MB/s)"
    return _fmt_time(t)


def _ratio(a: dict | None, b: dict | None) -> float | None:
    if a is None or b is None or not b["median"]:
        return None
    return a["median"] / b["median"]


def _fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def _table(header: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A Markdown table padded to line up in a terminal too."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    align = align or "l" + "r" * (len(header) - 1)

    def line(cells):
        out = []
        for c, w, a in zip(cells, widths, align):
            out.append(str(c).ljust(w) if a == "l" else str(c).rjust(w))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2)) for w, a in zip(widths, align)) + "|"
    return "\n".join([line(header), sep] + [line(r) for r in rows])


def _index(records: list[dict]) -> dict:
    """(table, version, op, lib) -> record; parquet records serve every version."""
    out = {}
    for r in records:
        if r["op"] == "memory":
            continue
        out[(r["table"], r["version"], r["op"], r["lib"])] = r
        if r["lib"] == "parquet":
            out[(r["table"], "*", r["op"], "parquet")] = r
    return out


# lancefile's take of its own file without checking its checksums (pylance has none to check)
OWN_TAKE_UNVERIFIED = "own file: take 100, checksums not checked"
# lancefile-only measurements compare with this operation of the other libraries
SAME_AS = {"write, no fsync": "write", OWN_TAKE_UNVERIFIED: "own file: take 100"}


def _lookup(idx, table, version, op, lib):
    if lib != "lancefile":
        op = SAME_AS.get(op, op)
    return idx.get((table, version, op, lib)) or (idx.get((table, "*", op, lib)) if lib == "parquet" else None)


def _versions(records) -> list[str]:
    seen = []
    for r in records:
        if r["lib"] != "parquet" and r["version"] not in seen:
            seen.append(r["version"])
    return seen


def _tables(records) -> list[str]:
    seen = []
    for r in records:
        if r["table"] not in seen:
            seen.append(r["table"])
    return seen


def _ops(records) -> list[str]:
    """The timed operations (the parquet zstd file is there for its size only)."""
    seen = []
    for r in records:
        if r["op"] not in ("memory", PARQUET_ZSTD) and r["op"] not in seen:
            seen.append(r["op"])
    return seen


def na_write(result: dict, version: str) -> str | None:
    """What the tables say for lancefile's write at a version it cannot write (None: it writes it).

    ``lancefile_writes`` lists the versions lancefile wrote in the run (older results: all)."""
    writes = result.get("lancefile_writes")
    if writes is None or version in writes or "lancefile" not in result["machine"]["config"].get("libs", LIB_ORDER):
        return None
    return f"n/a (lancefile writes {', '.join(writes)} only)"


def timing_table(records: list[dict], version: str, na: str | None = None) -> str:
    """Medians and ratios, one row per table and operation; ``na``: lancefile's write cell where it
    cannot write this version."""
    idx = _index(records)
    rows = []
    for t in _tables(records):
        for op in _ops(records):
            recs = {lib: _lookup(idx, t, version, op, lib) for lib in LIB_ORDER}
            not_written = na is not None and op in WRITE_OPS and recs["lancefile"] is None and recs["pylance"] is not None
            if recs["lancefile"] is None and not not_written and (recs["pylance"] is None or op in SAME_AS):
                continue
            shown = {lib: (None if op in SAME_AS and lib != "lancefile" else recs[lib]) for lib in LIB_ORDER}
            rows.append([t, op, na if not_written else _cell(shown["lancefile"])]
                        + [_cell(shown[lib]) for lib in LIB_ORDER[1:]]
                        + ["n/a" if not_written else _fmt_ratio(_ratio(recs["lancefile"], recs["pylance"])),
                           "-" if op in SAME_AS else _fmt_ratio(_ratio(recs["parquet"], recs["pylance"]))])
    return _table(["table", "operation", *LIB_ORDER, "lancefile/pylance", "parquet/pylance"], rows, "llrrrrr")


def ratio_table(records: list[dict], version: str, na: str | None = None) -> str:
    """The compact view: one row per table, one column per operation, lancefile/pylance."""
    idx = _index(records)
    ops = _ops(records)
    rows = []
    for t in _tables(records):
        cells = []
        for op in ops:
            lf, pl = _lookup(idx, t, version, op, "lancefile"), _lookup(idx, t, version, op, "pylance")
            not_written = na is not None and op in WRITE_OPS and lf is None and pl is not None
            cells.append("n/a" if not_written else _fmt_ratio(_ratio(lf, pl)))
        rows.append([t] + cells)
    return _table(["lancefile/pylance", *ops], rows)


def _mb(rec: dict | None) -> str:
    return "-" if rec is None else f"{rec['file_mb']:,.1f}"


def size_table(records: list[dict], version: str, na: str | None = None) -> str:
    idx = _index(records)
    rows = []
    for t in _tables(records):
        recs = {lib: _lookup(idx, t, version, "write", lib) for lib in LIB_ORDER}
        if recs["pylance"] is None:
            continue
        arrow = recs["pylance"]["arrow_mb"]
        lf = na if na is not None and recs["lancefile"] is None else _mb(recs["lancefile"])
        ratio = _size_ratio(recs["lancefile"], recs["pylance"])
        zstd = _lookup(idx, t, version, PARQUET_ZSTD, "parquet")
        rows.append([t, f"{arrow:,.1f}", lf] + [_mb(recs[lib]) for lib in LIB_ORDER[1:]]
                    + [_mb(zstd), "-" if ratio is None else f"{ratio:.4f}"])
    return _table(["table", "Arrow MB", *(f"{lib} MB" for lib in LIB_ORDER), "parquet zstd MB",
                   "lancefile/pylance size"], rows)


def _size_ratio(a: dict | None, b: dict | None) -> float | None:
    return None if a is None or b is None or not b.get("file_mb") else a["file_mb"] / b["file_mb"]


def _size_target(records: list[dict], version: str) -> tuple[str, str, bool | None, str]:
    """lancefile's file ≤ pylance's on every table, and ≤ parquet's (zstd) on SIZE_VS_PARQUET."""
    idx = _index(records)
    misses, worst = [], None
    for t in _tables(records):
        lf = _lookup(idx, t, version, "write", "lancefile")
        r = _size_ratio(lf, _lookup(idx, t, version, "write", "pylance"))
        if r is None:
            continue
        worst = r if worst is None else max(worst, r)
        if r > 1.0:
            misses.append(f"{t}: {r:.4f}x pylance (+{(lf['file_mb'] - lf['file_mb'] / r) * 1e3:,.0f} KB)")
        zr = _size_ratio(lf, _lookup(idx, t, version, PARQUET_ZSTD, "parquet"))
        if t in SIZE_VS_PARQUET and zr is not None and zr > 1.0:
            misses.append(f"{t}: {zr:.3f}x parquet (zstd)")
    what = (f"{version} file size ≤ 1.0× pylance on every table, and ≤ parquet (zstd) on "
            f"{', '.join(SIZE_VS_PARQUET)}")
    if worst is None:
        return ("size", what, None, "not measured")
    detail = f"worst {worst:.4f}x pylance" + ("; missed: " + ", ".join(misses) if misses else "")
    return ("size", what, not misses, detail)


def versions_size_table(records: list[dict]) -> str:
    """pylance's file size per table at every version (the file both Lance readers read), and parquet's."""
    idx = _index(records)
    versions = _versions(records)
    if len(versions) < 2:
        return ""
    rows = []
    for t in _tables(records):
        pl = [_lookup(idx, t, v, "write", "pylance") for v in versions]
        first = next((r for r in pl if r is not None), None)
        if first is None:
            continue
        rows.append([t, f"{first['arrow_mb']:,.1f}"] + [_mb(r) for r in pl] + [_mb(_lookup(idx, t, "*", "write", "parquet"))])
    return _table(["table", "Arrow MB", *(f"pylance {v} MB" for v in versions), "parquet MB"], rows)


NUMBA_NOTE = ("`*`: numba and the kernels it compiled or loaded from its cache came into the process during the "
              "measured operation (lancefile imports numba on a 2.1+ decoder's first call): a fixed cost per process "
              "(numba's import alone is ~60 MB), not data the reader holds.")


def _growth(m: dict) -> str:
    return f"{m['growth_mb']:,.0f}" + (" *" if m.get("numba_loaded") else "")


def _size_mb(mb: float) -> str:
    return f"{mb:,.0f}" if mb >= 10 else f"{mb:.2g}"


def memory_table(records: list[dict], version: str, na: str | None = None) -> str:
    mem = [r for r in records if r["op"] == "memory" and (r["version"] == version or r["lib"] == "parquet")]
    if not mem:
        return ""
    tables = _tables(mem)
    mem.sort(key=lambda r: (tables.index(r["table"]), r["fraction"], LIB_ORDER.index(r["lib"])))
    rows = []
    for r in mem:
        w = r["write"]
        by = r.get("file_by", r["lib"])
        rows.append([r["table"], f"{r['fraction']:g}x ({r['arrow_mb']:,.0f} MB of Arrow data, {r['file_mb']:,.0f} MB file"
                     + ("" if by == r["lib"] else f" by {by}") + ")",
                     r["lib"],
                     (na or "n/a") if w is None else _growth(w), "n/a" if w is None else f"{w['peak_mb']:,.0f}",
                     _growth(r["scan"]), f"{r['scan']['peak_mb']:,.0f}", _live(r["scan"])])
    out = _table(["table", "size", "library", "write: peak - baseline MB", "write: peak RSS MB",
                  "scan: peak - baseline MB", "scan: peak RSS MB", "scan: peak live Arrow MB"], rows, "lllrrrrr")
    if any(m and m.get("numba_loaded") for r in mem for m in (r["write"], r["scan"])):
        out += "\n\n" + NUMBA_NOTE
    return out


def _live(m: dict) -> str:
    """Peak memory held in pyarrow's pool (pylance allocates in Rust: not seen there)."""
    v = m.get("arrow_live_mb")
    return "-" if v is None or v < 0.5 else f"{v:,.0f}"


def _largest_page_mb(page: dict) -> float:
    return max((b for col in page["page_bytes"] for b in col), default=0) / 1e6


def one_page_text(page: dict) -> str:
    """The one-page memory run: pylance's single write_batch, then each Lance reader's scan."""
    pages = [len(col) for col in page["page_bytes"]]
    w = page["write"].get("pylance")
    intro = (f"{page['rows']:,} rows of fixed_size_list<float32>[128] ({_size_mb(page['arrow_mb'])} MB of Arrow data) "
             f"written by pylance at {page['version']} in one write_batch: {', '.join(map(str, pages))} page(s) in "
             f"{len(pages)} column(s), the largest {_size_mb(_largest_page_mb(page))} MB "
             f"(file {_size_mb(page['file_mb'])} MB)"
             + (f"; that write peaked {w['growth_mb']:,.0f} MB above a baseline holding the batch" if w else "")
             + f". Each Lance reader then scans the file with batch_size={page['batch_size']} in a fresh process; "
             "baseline: RSS after imports and opening the file.")
    rows = [[lib, _growth(m), f"{m['peak_mb']:,.0f}", _live(m), _fmt_time(m["seconds"])]
            for lib, m in page["scan"].items()]
    out = intro + "\n\n" + _table(["library", "scan: peak - baseline MB", "scan: peak RSS MB",
                                    "scan: peak live Arrow MB", "scan time"], rows, "lrrrr")
    if any(m.get("numba_loaded") for m in page["scan"].values()):
        out += "\n\n" + NUMBA_NOTE
    return out


def one_column_text(records: list[dict], version: str) -> str:
    recs = [r for r in records if r["op"] == "scan 1 column" and (r["version"] == version or r["lib"] == "parquet")]
    if not recs:
        return ""
    recs.sort(key=lambda r: LIB_ORDER.index(r["lib"]))  # parquet's record comes from the first version
    rows = [[r["table"], r["lib"], _cell(r), f"{r['rchar_bytes']:,}"] for r in recs]
    out = _table(["table", "library", "time", "bytes read (rchar)"], rows, "llrr")
    for r in recs:
        c = r.get("counted")
        if c:
            out += (f"\n\nlancefile through its CountingSource: opening read {c['open_bytes']:,} bytes in "
                    f"{c['open_requests']} request(s); the whole scan {c['total_bytes']:,} bytes in "
                    f"{c['total_requests']} request(s), of which the column's pages are {c['column_page_bytes']:,} "
                    f"bytes (file: {c['file_bytes']:,} bytes); column metadata parsed: {c['column_metadata_parsed']} "
                    f"column(s).")
    return out


def startup_text(startup: dict | None) -> str:
    if not startup:
        return ""
    rows = [[m, _fmt_time(v["seconds"]), "yes" if v["numba_imported"] else "no"] for m, v in startup["import"].items()]
    out = _table(["import", "time (fresh process, median)", "numba imported"], rows, "lrl")
    rows = []
    for label, v in startup["first_call"].items():
        f, s = v["first"], v["second"]
        rows.append([label, _fmt_time(v["import"]), _fmt_time(f["write"]), _fmt_time(s["write"]),
                     _fmt_time(f["read"]), _fmt_time(s["read"]), _fmt_time(f["take"]), _fmt_time(s["take"]),
                     _fmt_time(v.get("kernels_first_call")), "yes" if v.get("numba_imported") else "no"])
    out += "\n\n" + _table(["process", "import", "1st write", "2nd write", "1st read", "2nd read", "1st take",
                            "2nd take", "numba kernels 1st call", "numba loaded by 2.0 calls"], rows, "lrrrrrrrrl")
    return out


def evaluate_targets(result: dict, version: str) -> list[tuple[str, str, bool | None, str]]:
    """[(key, target, met?, detail)] for the lancefile targets of one version."""
    records = result["records"]
    idx = _index(records)
    tables = _tables(records)
    out = []

    def worst(ops, limit, only=None):
        items = []
        for t in only or tables:
            for op in ops:
                r = _ratio(_lookup(idx, t, version, op, "lancefile"), _lookup(idx, t, version, op, "pylance"))
                if r is not None:
                    items.append((r, t, op))
        if not items:
            return None, "not measured"
        items.sort(reverse=True)
        misses = [f"{t} {op}: {r:.2f}" for r, t, op in items if r > limit]
        r, t, op = items[0]
        detail = f"worst {r:.2f} ({t}, {op})"
        if misses:
            detail += "; over the limit: " + ", ".join(misses)
        return r <= limit, detail

    def write_target():
        limit = DEFAULT_VERSION_WRITE_RATIO_MAX if version == "2.2" else WRITE_RATIO_MAX
        met, d = worst(["write"], limit)
        if "write, no fsync" in _ops(records):
            d += "; without lancefile's fsync (pylance does none): " + worst(["write, no fsync"], limit)[1]
        out.append(("write", f"write throughput >= {1 / limit:.1f}x pylance (time ratio <= {limit:.2f})", met, d))

    scan_ops = [op for op in _ops(records) if op.startswith("scan bs=")]
    if version != "2.0":
        # files lancefile reads (pylance wrote them): read targets, in time ratios to pylance
        met, d = worst(scan_ops, 1.0)
        out.append(("read_scan", f"{version} scan ≥ 1.0× pylance (time ratio ≤ 1.0 on every table, both batch sizes)",
                    met, d))
        own = [op for op in _ops(records) if op.startswith("own file: ") and op not in SAME_AS]
        if own:
            met, d = worst(own, 1.0)
            out.append(("read_own", f"reads of the {version} files lancefile wrote ≥ 1.0× pylance reading the same "
                        "files (scan bs=65536, take 100)", met, d))
        met, d = worst(["scan 1 column"], 1.0)
        out.append(("read_one_column", "one-column scan of the wide table ≤ 1.0× pylance", met, d))
        met, d = worst(["take 100"], 1.0)
        out.append(("read_take", "100-row take ≤ 1.0× pylance", met, d))
        met, d = worst(["open"], OPEN_RATIO_MAX, only=[t for t in tables if t == WIDE_TABLE])
        out.append(("read_open", f"open of the 1,000-column file ≤ {OPEN_RATIO_MAX:g}× pylance", met, d))
        if any((r["op"], r["lib"], r["version"]) == ("write", "lancefile", version) for r in records):
            write_target()  # once lancefile writes this version
            if version == "2.2":  # the version whose sizes the targets are about
                out.append(_size_target(records, version))
        out += _memory_targets(result, version)
        return out

    met, d = worst(scan_ops, 1.0)
    out.append(("scan", "full scan time <= 1.0x pylance on every table (both batch sizes)", met, d))
    write_target()
    met, d = worst([op for op in _ops(records) if op.startswith("take ")], 1.0)
    out.append(("take", "take_rows latency <= 1.0x pylance", met, d))

    one = [r for r in records if r["op"] == "scan 1 column" and r["lib"] == "lancefile" and r["version"] == version]
    if one and one[0].get("counted"):
        c = one[0]["counted"]
        data_read = c["total_bytes"] - c["open_bytes"]
        pages_ok = c["column_metadata_parsed"] == 1 and data_read <= c["column_page_bytes"] + 4096
        # what opening needs: the tail read (footer and offset tables), the schema and the
        # column's own metadata (a few hundred bytes)
        needed = c["tail_read_bytes"] + c["schema_bytes"] + 4096
        meta_ok = c["open_bytes"] <= needed
        pl = next((r for r in records if r["op"] == "scan 1 column" and r["lib"] == "pylance"
                   and r["version"] == version), None)
        out.append(("one_column", "one-column scan of the wide table reads only that column's metadata and pages",
                    pages_ok and meta_ok,
                    f"pages: after opening it read {data_read:,} bytes for {c['column_page_bytes']:,} bytes of the "
                    f"column's pages ({'only those' if pages_ok else 'MORE'}), {c['column_metadata_parsed']} column "
                    f"metadata parsed; opening read {c['open_bytes']:,} bytes in {c['open_requests']} request(s): "
                    f"the {c['tail_read_bytes']:,}-byte tail, the {c['schema_bytes']:,}-byte schema and the "
                    f"column's metadata (the metadata region of all {c['num_columns']:,} columns is "
                    f"{c['metadata_region_bytes']:,} bytes)"
                    + ("" if meta_ok else f", {c['open_bytes'] - needed + 4096:,} bytes more than the schema, "
                       "the tail and one column's metadata")
                    + (f"; pylance read {pl['rchar_bytes']:,} bytes in all (rchar)" if pl else "")))
    else:
        out.append(("one_column", "one-column scan reads only that column", None, "not measured"))

    out += _memory_targets(result, version)
    return out


def _memory_targets(result: dict, version: str) -> list[tuple[str, str, bool | None, str]]:
    """Peak memory independent of the file size (write and scan; scan only where lancefile does
    not write), and at the one-page version the scan of one big page."""
    out = []
    mem = [r for r in result["records"] if r["op"] == "memory" and r["lib"] == "lancefile" and r["version"] == version]
    ops = [op for op in ("write", "scan") if any(r[op] is not None for r in mem)]
    key = "memory" if version == "2.0" else "read_memory"
    fracs = sorted({r["fraction"] for r in mem})
    if len(fracs) >= 2:
        bad, details = [], []
        for t in _tables(mem):
            small = next(r for r in mem if r["table"] == t and r["fraction"] == fracs[0])
            big = next(r for r in mem if r["table"] == t and r["fraction"] == fracs[-1])
            extra_mb = big["arrow_mb"] - small["arrow_mb"]
            limit = bounded_limit_mb(extra_mb)
            for op in ops:
                grow = big[op]["growth_mb"] - small[op]["growth_mb"]
                details.append(f"{t} {op} {small[op]['growth_mb']:.0f}->{big[op]['growth_mb']:.0f} MB")
                if grow <= limit:
                    continue
                live_small, live_big = small[op].get("arrow_live_mb", 0), big[op].get("arrow_live_mb", 0)
                if op == "scan" and live_big >= 0.5 and live_big - live_small <= limit:
                    # what the reader holds stayed the same: the allocators kept more freed memory
                    details[-1] += (f" (RSS; the Arrow data held peaked at {live_small:.0f} and {live_big:.0f} MB, "
                                    "the rest is freed memory the allocators keep)")
                    continue
                bad.append(f"{t} {op} (+{grow:.0f} MB for +{extra_mb:.0f} MB of Arrow data)")
        what = ("streaming write and batch scan" if "write" in ops
                else "batch scan (of pylance's file: lancefile does not write this version)")
        out.append((key, f"{what} peak memory bounded (independent of file size)", not bad,
                    ("grows with the file: " + ", ".join(bad) + "; " if bad else "")
                    + f"peak above baseline at {fracs[0]:g}x -> {fracs[-1]:g}x (bounded: grows by less than "
                    f"{BOUNDED_SLACK_MB:g} MB + {BOUNDED_SLOPE:.0%} of the extra Arrow data): " + ", ".join(details)))
    elif mem:
        out.append((key, "peak memory bounded", None, "measured at one size only (use the full run to compare sizes)"))
    page = result.get("one_page")
    if page and page["version"] == version and "lancefile" in page["scan"]:
        lf, pl = page["scan"]["lancefile"], page["scan"].get("pylance")
        big = _largest_page_mb(page)
        live = _live(lf)
        d = (f"lancefile {lf['growth_mb']:,.0f} MB above baseline (peak RSS {lf['peak_mb']:,.0f} MB"
             + ("" if live == "-" else f", Arrow data held at most {live} MB")
             + (", numba loaded during the scan" if lf.get("numba_loaded") else "")
             + f") scanning a {_size_mb(big)} MB page at batch_size {page['batch_size']}"
             + (f"; pylance {pl['growth_mb']:,.0f} MB" if pl else ""))
        if big < 0.9 * PAGE_FULL_MB:
            d += f"; at this scale the page is {_size_mb(big)} MB, not {PAGE_FULL_MB} MB (the full run measures that)"
        if any(len(col) != 1 for col in page["page_bytes"]):
            d += f"; pylance wrote {[len(col) for col in page['page_bytes']]} pages per column, not one"
        out.append(("one_page", f"{version} scan of a {PAGE_FULL_MB} MB page: peak memory growth ≤ {PAGE_GROWTH_MAX_MB} MB",
                    lf["growth_mb"] <= PAGE_GROWTH_MAX_MB, d))
    return out


def render(result: dict, markdown: bool = True) -> str:
    m = result["machine"]
    records = result["records"]
    c = m["config"]
    parts = ["# lancefile benchmark results", ""]
    parts.append(
        f"Machine: {m['cpu_count']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB, {m['platform']}; "
        f"Python {m['python']}, pyarrow {m['pyarrow']}, pylance {m['pylance']}, numpy {m['numpy']}, "
        f"numba {m['numba']}, lancefile {m['lancefile']}. Run {m['date']}, load average "
        f"{m['loadavg_start']:.1f} at the start and {m.get('loadavg_end') or 0:.1f} at the end; the suite took "
        f"{m.get('seconds', 0):.0f} s."
    )
    writes = result.get("lancefile_writes")
    parts.append("")
    parts.append(
        f"Config: scale {c['scale']:g} (about {200 * c['scale']:g} MB of Arrow data per table), medians of "
        f"{c['repeat']} runs for writes, {c.get('repeat_scan', c['repeat'])} for scans and {c['repeat_fast']} for the "
        "rest, libraries interleaved. "
        "Both Lance readers read the same file (written by pylance), except in the 'own file' columns, where "
        "both read the file lancefile wrote; parquet reads its own file written with pyarrow's defaults. Files are in the page cache. Lance versions: " + ", ".join(c.get("versions", []))
        + (f" (lancefile writes {', '.join(writes)} only: its write is n/a at the others)" if writes else "")
        + ". Command: `python -m bench"
        + (" --smoke" if c.get("smoke") else " --quick" if c.get("quick") else "")
        + ("" if c.get("smoke") or c.get("quick") or c["scale"] == 1 else f" --scale {c['scale']:g}")
        + ("" if c.get("smoke") or c["repeat"] == 3 else f" --repeat {c['repeat']}")
        + ("" if c.get("smoke") or c["repeat_fast"] == 11 else f" --repeat-fast {c['repeat_fast']}")
        + ("" if c.get("smoke") or c.get("repeat_scan", 7) == 7 else f" --repeat-scan {c['repeat_scan']}")
        + ("" if c.get("versions") == result.get("lancefile_reads", c.get("versions"))
           else f" --versions {','.join(c['versions'])}")
        + "".join(f" --{k.replace('_', '-')}" for k in ("no_memory", "no_startup") if c.get(k)) + "`."
    )
    parts.append("")
    parts.append("Ratios are of median times, `x / pylance`: below 1.00 is faster than pylance.")
    page = result.get("one_page")
    for version in _versions(records):
        na = na_write(result, version)
        parts += ["", f"## Lance {version}: ratios to pylance (lancefile time / pylance time)", "",
                  ratio_table(records, version, na)]
        if na:
            parts += ["", f"lancefile's write at {version}: {na}. Every read reads the file pylance wrote."]
        parts += ["", f"## Lance {version}: medians", "", timing_table(records, version, na)]
        parts += ["", f"## Lance {version}: file sizes", "", size_table(records, version, na)]
        one = one_column_text(records, version)
        if one:
            parts += ["", f"## Lance {version}: one column of the wide table", "", one]
        mem = memory_table(records, version, na)
        if mem:
            parts += ["", f"## Lance {version}: peak memory (fresh process per measurement)", "",
                      "Streaming write of generated batches (~8 MB each) and a scan with batch_size=1024 of the "
                      "file that write produced"
                      + (f" (lancefile, which does not write {version}, scans pylance's)" if na else "")
                      + ". Baseline: RSS after imports, set-up and a warm-up write and scan of 20,000 rows (so "
                      "what a library loads once per process, such as numba's kernels, is not counted as data: "
                      "the start-up section measures it), just before the operation. Where lancefile's peaks at "
                      "the two sizes look like growth with the file, each was measured twice more and the "
                      "median run is shown (its runs are in results.json, `runs_mb`).", "", mem]
        if page and page["version"] == version:
            parts += ["", f"## Lance {version}: scan of one {_size_mb(_largest_page_mb(page))} MB page", "",
                      one_page_text(page)]
        parts += ["", f"## Lance {version}: targets", ""]
        for key, name, met, detail in evaluate_targets(result, version):
            mark = "n/a" if met is None else ("MET" if met else "MISSED")
            parts.append(f"- **{mark}** {name}: {detail}")
            if met is False and EXPLANATIONS.get(key):
                parts.append(f"  - Why: {EXPLANATIONS[key]}")
    sizes = versions_size_table(records)
    if sizes:
        parts += ["", "## File sizes across versions", "",
                  "MB on disk of pylance's file at each version (the file both Lance readers read) and of parquet's, "
                  "for the same data.", "", sizes]
    st = startup_text(result.get("startup"))
    if st:
        parts += ["", "## Start-up", "",
                  "Import time in a fresh process (it includes pyarrow's own import for every library but "
                  "`pyarrow` itself), with lancefile's bytecode caches written first, as an install writes them. "
                  "First and second calls on a small table (2,000 rows of every benchmark "
                  "type) in a fresh process; the lancefile runs use a private numba cache, first empty (cold) "
                  "and then filled by that first run (warm).", "", st]
    if result.get("checks"):
        parts += ["", "## Cross-checks", ""] + [f"- {c}" for c in result["checks"]]
    return "\n".join(parts) + "\n"


def write_report(result: dict, out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    text = render(result)
    (out / "RESULTS.md").write_text(text)
    (out / "results.json").write_text(json.dumps(result, indent=1, default=str))
    return text
