"""The benchmark suite: lancefile vs pylance vs pyarrow.parquet on the same tables.

Run ``python -m bench`` from the repository root (``--help`` for the options,
``bench/README.md`` for what is measured). Prints medians and ratios to pylance and writes
``RESULTS.md`` and ``results.json`` to ``--out`` (default: ``bench/``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import libs as L
from .data import ONE_PAGE, TABLES
from .measure import machine, median, read_chars, rotate, run_child, timed
from .report import OWN_TAKE_UNVERIFIED, PARQUET_ZSTD, bounded_limit_mb, write_report

SCAN_BATCH_SIZES = (1024, 65536)  # the reference's default and a large one
TAKE_SIZES = (100, 10_000)
MEMORY_TABLES = ("numeric", "strings_lowcard", "strings_text", "embeddings", "nested")
# a bounded writer or scanner peaks the same at both sizes (at 0.5x the writers' per-column
# caches are still filling: lancefile's nested 2.2 write peaked 76, 133, 130, 134 MB at 0.5-4x)
MEMORY_FRACTIONS = (1.0, 2.0)
MEMORY_AGAIN = 2  # more runs of a peak that looks like it grew with the file (the median is kept)
NO_FSYNC = "+no-fsync"
NO_VERIFY = "+no-verify"
PAGE_VERSION = "2.2"  # the one-page memory run: pylance writes one page per column at 2.1/2.2
PAGE_BATCH_SIZE = 1024


def _table_versions(flag: str) -> list[str]:
    from lancefile.format.version import VERSIONS

    return [v.name for v in VERSIONS.values() if getattr(v, flag)]


def readable_versions() -> list[str]:
    """Every version lancefile can read, from its one version table (the default ``--versions``)."""
    return _table_versions("readable")


def writable_versions() -> list[str]:
    """Every version lancefile can write; at the others only pylance and parquet write."""
    return _table_versions("writable")


def _page_in(path) -> None:
    """Read a file once, to bring its pages into the page cache before timed takes and ranges.

    This machine's page cache keeps little (22 GB free, 1.2 GB cached, files read an hour before
    ~10-60% resident), so the scans before a take did not always leave the file there: in one
    run pylance's 100-row takes of the long text spread over 3-20 ms against 2.7-3.7 another
    time, the cell then measuring the disk. A directory (a dataset) is read file by file."""
    paths = [Path(path)] if Path(path).is_file() else [q for q in Path(path).rglob("*") if q.is_file()]
    for q in paths:
        with open(q, "rb", buffering=0) as f:
            while f.read(8 << 20):
                pass


def _suffix(lib: str) -> str:
    return "parquet" if lib == "parquet" else "lance"


def _byte_compile(module: str) -> None:
    """Write ``module``'s bytecode caches, as ``pip install`` does: from a source checkout run
    with PYTHONDONTWRITEBYTECODE (or after an edit), each import would compile the modules
    whose caches are stale (~50 ms for lancefile's, measured 2026-11-30), which no installed
    copy pays."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            compileall.compile_dir(location, quiet=1)


class Runner:
    def __init__(self, args) -> None:
        self.args = args
        self.work = Path(args.workdir)
        self.records: list[dict] = []
        self.checks: list[str] = []
        self.lf_writes = set(writable_versions())
        self.t_start = time.perf_counter()

    def log(self, msg: str) -> None:
        if not self.args.silent:
            print(f"[{time.perf_counter() - self.t_start:6.1f}s] {msg}", file=sys.stderr, flush=True)

    def add(self, table: str, version: str, op: str, lib: str, times: list[float], mb: float | None = None,
            **extra) -> None:
        self.records.append({"table": table, "version": version, "op": op, "lib": lib, "times": times,
                             "median": median(times), "arrow_mb": mb, **extra})

    def writes(self, lib: str, version: str) -> bool:
        """Whether ``lib`` writes its own file at ``version`` (lancefile: only where it can)."""
        return lib != "lancefile" or version in self.lf_writes

    def interleaved(self, libs: list[str], reps: int, fn) -> dict[str, list[float]]:
        """Run ``fn(lib, rep)`` (which returns seconds) ``reps`` times per library, interleaved."""
        out: dict[str, list[float]] = {lib: [] for lib in libs}
        for rep in range(reps):
            for lib in rotate(libs, rep):
                out[lib].append(fn(lib, rep))
        return out

    # -- one table, one version ---------------------------------------------------------------
    def table(self, name: str, version: str, table, parquet_done: bool) -> None:
        a = self.args
        spec = TABLES[name]
        mb = table.nbytes / 1e6
        rows = table.num_rows
        libs = [lib for lib in a.libs if L.LIBS[lib].versioned or not parquet_done]
        paths = {lib: self.work / f"{name}-{version}-{lib}.{_suffix(lib)}" for lib in libs}

        def write(lib, rep):
            real = lib.removesuffix(NO_FSYNC)
            path = paths[real]
            if path.exists():
                path.unlink()
            if lib == real:
                return timed(lambda: L.LIBS[lib].write(path, table.schema, table, version))[0]
            # lancefile flushes the file to disk (background fdatasyncs while writing, an fsync
            # before renaming it into place), pylance does not: this run shows what that
            # durability costs (both skipped in this process only)
            saved = {n: getattr(os, n) for n in ("fsync", "fdatasync") if hasattr(os, n)}
            for n in saved:
                setattr(os, n, lambda fd: None)
            try:
                return timed(lambda: L.LIBS[real].write(path, table.schema, table, version))[0]
            finally:
                for n, fn in saved.items():
                    setattr(os, n, fn)

        # lancefile's write (and its no-fsync run) only at versions it writes: the report says n/a
        writers = [lib for lib in libs if self.writes(lib, version)]
        self.log(f"{name} v{version}: write ({mb:.0f} MB, {rows:,} rows) by {', '.join(writers)}")
        runs = writers + ([f"lancefile{NO_FSYNC}"] if "lancefile" in writers else [])
        for lib, ts in self.interleaved(runs, a.repeat, write).items():
            real = lib.removesuffix(NO_FSYNC)
            op = "write" if lib == real else "write, no fsync"
            self.add(name, version, op, real, ts, mb, file_mb=paths[real].stat().st_size / 1e6)

        if "parquet" in libs:  # the size the targets compare with: parquet with zstd (not timed)
            zpath = self.work / f"{name}-zstd.parquet"
            dt = timed(lambda: L.parquet_zstd_write(zpath, table))[0]
            self.add(name, version, PARQUET_ZSTD, "parquet", [dt], mb, file_mb=zpath.stat().st_size / 1e6)
            zpath.unlink()

        # Both Lance readers read the same file, the reference's: same pages, same bytes.
        read_paths = {lib: (paths["pylance"] if lib in L.LANCE_LIBS else paths[lib]) for lib in libs}
        self._check(name, version, table, {lib: paths[lib] for lib in writers})
        for bs in SCAN_BATCH_SIZES:
            self.log(f"{name} v{version}: scan batch_size={bs}")
            # not timed, at each batch size and for both Lance readers alike: lancefile's first
            # 2.1+ read in a process compiles (or loads) numba kernels, and its first scan at a
            # batch size is often 2-3x the next ones (fresh memory: the kernel zeroes it; README
            # "Speed")
            for lib in L.LANCE_LIBS:
                if lib in libs:
                    L.LIBS[lib].scan(L.LIBS[lib].open(read_paths[lib]), bs)

            def scan(lib, rep, bs=bs):
                m = L.LIBS[lib]
                dt, got = timed(lambda: m.scan(m.open(read_paths[lib]), bs))
                if got != rows:
                    raise RuntimeError(f"{lib} scanned {got} rows of {name}, expected {rows}")
                return dt

            for lib, ts in self.interleaved(libs, a.repeat_scan, scan).items():
                self.add(name, version, f"scan bs={bs}", lib, ts, mb)

        if "lancefile" in writers:
            self._own_file(name, version, table, libs, paths["lancefile"], mb)

        if spec.one_column:
            self._one_column(name, version, spec.one_column, table, libs, read_paths)

        self.log(f"{name} v{version}: open, take, read_range")
        for p in set(read_paths.values()):  # the file read whole once: its pages in the page cache
            _page_in(p)
        rng = np.random.default_rng(7)
        for k in TAKE_SIZES:
            k_eff = min(k, rows)
            idx_sets = [np.sort(rng.choice(rows, k_eff, replace=False)).astype(np.int64) for _ in range(a.repeat_fast)]

            def take(lib, rep, idx_sets=idx_sets):
                m = L.LIBS[lib]
                reader = m.open(read_paths[lib])  # opened outside the timing: this is the take alone
                dt, got = timed(lambda: m.take(reader, idx_sets[rep]))
                if got.num_rows != len(idx_sets[rep]):
                    raise RuntimeError(f"{lib} took {got.num_rows} rows, expected {len(idx_sets[rep])}")
                return dt

            for lib, ts in self.interleaved(libs, a.repeat_fast, take).items():
                self.add(name, version, f"take {k}", lib, ts, None, rows_taken=k_eff)

        start, n = rows // 2, max(1, rows // 100)

        def rng_read(lib, rep):
            m = L.LIBS[lib]
            reader = m.open(read_paths[lib])
            dt, got = timed(lambda: m.read_range(reader, start, n))
            if got.num_rows != n:
                raise RuntimeError(f"{lib} read_range gave {got.num_rows} rows, expected {n}")
            return dt

        for lib, ts in self.interleaved(libs, a.repeat_fast, rng_read).items():
            self.add(name, version, "read_range 1%", lib, ts, mb * n / rows, range=[start, n])

        def open_(lib, rep):
            return timed(lambda: L.LIBS[lib].open(read_paths[lib]))[0]

        for lib, ts in self.interleaved(libs, a.repeat_fast, open_).items():
            self.add(name, version, "open", lib, ts)

        if not a.keep:
            for p in paths.values():
                p.unlink(missing_ok=True)

    def _check(self, name, version, table, written) -> None:
        """Cross-check on sampled rows: lancefile reads pylance's file and its own; pylance reads
        lancefile's. ``written``: lib -> the file it wrote (no lancefile file where it cannot write)."""
        pairs = [(r, w) for r, w in (("lancefile", "pylance"), ("pylance", "lancefile"), ("lancefile", "lancefile"))
                 if r in self.args.libs and w in written]
        if not pairs:
            return
        idx = np.unique(np.linspace(0, table.num_rows - 1, min(50, table.num_rows)).astype(np.int64))
        want = table.take(idx)
        for reader_lib, path_lib in pairs:
            m = L.LIBS[reader_lib]
            got = m.take(m.open(written[path_lib]), idx)
            if not got.equals(want):
                raise RuntimeError(f"{reader_lib} reading the {path_lib} file of {name} v{version} gave different rows")
        read = ["{} reads {} file".format(r, "its own" if r == w else w + "'s") for r, w in pairs]
        self.checks.append(f"{name} v{version}: " + "; ".join(read) + " (sampled rows equal)")

    def _own_file(self, name, version, table, libs, path, mb) -> None:
        """Both Lance readers on the file lancefile wrote: a scan and a 100-row take."""
        lance_libs = [lib for lib in L.LANCE_LIBS if lib in libs]
        rows = table.num_rows
        bs = SCAN_BATCH_SIZES[-1]
        self.log(f"{name} v{version}: reads of lancefile's file")

        def scan(lib, rep):
            m = L.LIBS[lib]
            dt, got = timed(lambda: m.scan(m.open(path), bs))
            if got != rows:
                raise RuntimeError(f"{lib} scanned {got} rows of lancefile's {name}, expected {rows}")
            return dt

        for lib, ts in self.interleaved(lance_libs, self.args.repeat, scan).items():
            self.add(name, version, f"own file: scan bs={bs}", lib, ts, mb)
        _page_in(path)
        rng = np.random.default_rng(11)
        k = min(100, rows)
        idx_sets = [np.sort(rng.choice(rows, k, replace=False)).astype(np.int64) for _ in range(self.args.repeat_fast)]

        def take(lib, rep):
            real = lib.removesuffix(NO_VERIFY)
            m = L.LIBS[real]
            # lancefile checks the checksums of what a take reads, pylance has none to check:
            # the same take without that check shows what the check costs
            reader = m.open(path) if lib == real else m.open(path, None, verify_checksums=False)
            return timed(lambda: m.take(reader, idx_sets[rep]))[0]

        runs = lance_libs + ([f"lancefile{NO_VERIFY}"] if "lancefile" in lance_libs else [])
        for lib, ts in self.interleaved(runs, self.args.repeat_fast, take).items():
            real = lib.removesuffix(NO_VERIFY)
            op = "own file: take 100" if lib == real else OWN_TAKE_UNVERIFIED
            self.add(name, version, op, real, ts, None, rows_taken=k)

    def _one_column(self, name, version, column, table, libs, read_paths) -> None:
        """Scan one column of the wide table: time, and bytes read (rchar; lancefile also counted)."""
        from lancefile.io import CountingSource, LocalFileSource

        self.log(f"{name} v{version}: scan of one column ({column})")
        rows = table.num_rows
        chars: dict[str, list[int]] = {lib: [] for lib in libs}

        def scan(lib, rep):
            m = L.LIBS[lib]
            before = read_chars()
            dt, got = timed(lambda: m.scan(m.open(read_paths[lib], [column]), SCAN_BATCH_SIZES[0]))
            chars[lib].append(read_chars() - before)
            if got != rows:
                raise RuntimeError(f"{lib} scanned {got} rows of {column}, expected {rows}")
            return dt

        times = self.interleaved(libs, self.args.repeat_fast, scan)
        # lancefile's own count, through its byte-range interface
        src = CountingSource(LocalFileSource(read_paths["lancefile"])) if "lancefile" in libs else None
        counted = None
        if src is not None:
            import lancefile

            reader = lancefile.LanceFileReader(src, columns=[column])
            opened = (src.requests, src.bytes_read)
            L.LIBS["lancefile"].scan(reader, SCAN_BATCH_SIZES[0])
            meta = lancefile.LanceFileReader(read_paths["lancefile"]).metadata()
            col_index = table.schema.get_field_index(column)
            page_bytes = sum(b.size for p in meta.columns[col_index].pages for b in p.buffers)
            from lancefile.format.container import TAIL_READ_BYTES

            counted = {"open_requests": opened[0], "open_bytes": opened[1], "total_requests": src.requests,
                       "total_bytes": src.bytes_read, "column_page_bytes": page_bytes,
                       "file_bytes": meta.file_size, "num_columns": len(meta.columns),
                       "tail_read_bytes": min(TAIL_READ_BYTES, meta.file_size),
                       "schema_bytes": meta.global_buffers[0].size,
                       "metadata_region_bytes": meta.num_column_metadata_bytes,
                       "column_metadata_parsed": len(reader._layout._columns)}
            src.close()
        mb = table.column(column).nbytes / 1e6
        for lib, ts in times.items():
            self.add(name, version, "scan 1 column", lib, ts, mb, rchar_bytes=int(median(chars[lib])),
                     **({"counted": counted} if lib == "lancefile" else {}))

    # -- memory -------------------------------------------------------------------------------
    def memory(self, version: str) -> None:
        """A streaming write and a batch scan of its file, per library, each in a fresh process.
        Where lancefile cannot write, it scans the file pylance wrote (its ``write`` is None)."""
        a = self.args
        tables = [t for t in a.tables if t in MEMORY_TABLES]
        if a.smoke:
            tables = tables[:1]
        fractions = (1.0,) if (a.quick or a.smoke) else MEMORY_FRACTIONS
        libs = [lib for lib in a.libs if L.LIBS[lib].versioned or version == a.versions[0]]
        libs.sort(key=lambda lib: not self.writes(lib, version))  # pylance's file before lancefile scans it
        for name in tables:
            spec = TABLES[name]
            mine = {}  # (lib, fraction) -> its record
            for frac in fractions:
                rows = max(1, int(spec.rows_for(a.scale) * frac))
                paths = {lib: self.work / f"mem-{name}-{lib}.{_suffix(lib)}" for lib in libs}
                for lib in libs:
                    w, s, path = self._memory_once(name, version, lib, rows, paths)
                    mine[lib, frac] = {"table": name, "version": version, "op": "memory", "lib": lib,
                                       "fraction": frac, "rows": rows, "write": w, "scan": s,
                                       "file_by": lib if self.writes(lib, version) else "pylance",
                                       "arrow_mb": rows * spec.bytes_per_row / 1e6,
                                       "file_mb": path.stat().st_size / 1e6}
                    self.records.append(mine[lib, frac])
                for p in paths.values():
                    p.unlink(missing_ok=True)
            if len(fractions) >= 2 and "lancefile" in libs:  # the library whose peak has a target
                self._memory_again(name, version, "lancefile", [mine["lancefile", f] for f in fractions])

    def _memory_once(self, name, version, lib, rows, paths):
        """One streaming write (where ``lib`` writes ``version``) and one scan of its file, each
        in a fresh process: (write, scan, path of the file scanned)."""
        own = self.writes(lib, version)
        path = paths[lib if own else "pylance"]
        self.log(f"memory: {name} {rows:,} rows {lib}" + ("" if own else " (scan of pylance's file)"))
        common = ["--lib", lib, "--table", name, "--rows", str(rows), "--path", str(path), "--version", version]
        w = run_child(["memory", "--op", "write", *common]) if own else None
        s = run_child(["memory", "--op", "scan", "--batch-size", str(SCAN_BATCH_SIZES[0]), *common])
        return w, s, path

    def _memory_again(self, name, version, lib, recs) -> None:
        """A peak that looks like it grew with the file (by more than the report allows) is
        measured twice more at each size, and each size keeps the run of median growth: a
        peak's timing (when freed memory goes back, which thread's arena holds it) moves it by
        tens of MB from run to run, one way or the other. ``recs``: the smallest size first."""
        small, big = recs[0], recs[-1]
        limit = bounded_limit_mb(big["arrow_mb"] - small["arrow_mb"])
        ops = [op for op in ("write", "scan") if small[op] is not None]
        if not any(big[op]["growth_mb"] - small[op]["growth_mb"] > limit for op in ops):
            return
        runs = [{op: [r[op]] for op in ops} for r in recs]
        for _ in range(MEMORY_AGAIN):
            for r, mine in zip(recs, runs):
                paths = {x: self.work / f"mem-{name}-{x}.{_suffix(x)}" for x in ("pylance", lib)}
                if not self.writes(lib, version):  # the file it scans is pylance's: written first, not measured
                    self._memory_once(name, version, "pylance", r["rows"], paths)
                w, s, _ = self._memory_once(name, version, lib, r["rows"], paths)
                for op in ops:
                    mine[op].append(w if op == "write" else s)
                for p in paths.values():
                    p.unlink(missing_ok=True)
        for r, mine in zip(recs, runs):
            for op, got in mine.items():
                median_run = sorted(got, key=lambda m: m["growth_mb"])[len(got) // 2]
                r[op] = dict(median_run, runs_mb=[round(m["growth_mb"], 1) for m in got])

    def one_page(self) -> dict:
        """Peak memory of scanning one big page: pylance writes ONE_PAGE in a single write_batch
        at PAGE_VERSION (one page per column), then each Lance reader scans it in a fresh process."""
        import lance.file

        a = self.args
        rows = ONE_PAGE.rows_for(a.scale)
        path = self.work / "one-page.lance"
        common = ["--table", ONE_PAGE.name, "--rows", str(rows), "--path", str(path), "--version", PAGE_VERSION]
        self.log(f"memory: one page, {rows:,} rows written by pylance at {PAGE_VERSION} in one write_batch")
        w = run_child(["memory", "--op", "write-one-batch", "--lib", "pylance", *common])
        meta = lance.file.LanceFileReader(str(path)).metadata()
        pages = [[sum(b.size for b in p.buffers) for p in c.pages] for c in meta.columns]
        out = {"version": PAGE_VERSION, "rows": rows, "arrow_mb": rows * ONE_PAGE.bytes_per_row / 1e6,
               "file_mb": path.stat().st_size / 1e6, "page_bytes": pages, "batch_size": PAGE_BATCH_SIZE,
               "write": {"pylance": w}, "scan": {}}
        for lib in L.LANCE_LIBS:
            if lib in a.libs:
                self.log(f"memory: one page, {lib} scan")
                out["scan"][lib] = run_child(["memory", "--op", "scan", "--lib", lib,
                                              "--batch-size", str(PAGE_BATCH_SIZE), *common])
        path.unlink(missing_ok=True)
        return out

    # -- start-up -----------------------------------------------------------------------------
    def startup(self) -> dict:
        a = self.args
        reps = 1 if a.smoke else 5
        out: dict = {"import": {}, "first_call": {}}
        _byte_compile("lancefile")
        for module in ("pyarrow", "lancefile", "lance", "pyarrow.parquet"):
            self.log(f"import time: {module}")
            got = [run_child(["import", module]) for _ in range(reps)]
            out["import"][module] = {"seconds": median([g["seconds"] for g in got]),
                                     "numba_imported": any(g["numba_imported"] for g in got)}
        cache = self.work / "numba-cache"
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir()
        d = self.work / "first-call"
        d.mkdir(exist_ok=True)
        runs = [("lancefile", "cold numba cache", {"NUMBA_CACHE_DIR": str(cache)}),
                ("lancefile", "warm numba cache", {"NUMBA_CACHE_DIR": str(cache)}),
                ("pylance", "", {}), ("parquet", "", {})]
        # every library writes its small table there: a version lancefile writes
        version = next((v for v in a.versions if v in self.lf_writes), writable_versions()[0])
        for lib, label, env in runs:
            if lib not in a.libs:
                continue
            self.log(f"first call: {lib} {label}")
            args = ["first-call", "--lib", lib, "--dir", str(d), "--version", version]
            args += ["--kernels"] if lib == "lancefile" and not a.smoke else []  # compiling takes seconds
            out["first_call"][f"{lib} ({label})" if label else lib] = run_child(args, env=env)
            for f in d.iterdir():
                f.unlink()
        return out

    # -- everything ---------------------------------------------------------------------------
    def run(self) -> dict:
        a = self.args
        info = machine()
        info["config"] = {k: v for k, v in vars(a).items() if k not in ("workdir", "out", "silent")}
        result: dict = {"machine": info, "records": self.records, "checks": self.checks,
                        "lancefile_reads": readable_versions(), "lancefile_writes": writable_versions()}
        for name in a.tables:
            spec = TABLES[name]
            rows = spec.rows_for(a.scale)
            self.log(f"generating {name}: {rows:,} rows")
            table = spec.table(rows)
            for i, version in enumerate(a.versions):
                self.table(name, version, table, parquet_done=i > 0)
            del table
        if not a.no_memory:
            for version in a.versions:
                self.memory(version)
            if PAGE_VERSION in a.versions:
                result["one_page"] = self.one_page()
        if not a.no_startup:
            result["startup"] = self.startup()
        info["loadavg_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        info["seconds"] = round(time.perf_counter() - self.t_start, 1)
        return result


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=None,
                   help="table size as a fraction of ~200 MB of Arrow data (default 1.0)")
    p.add_argument("--quick", action="store_true", help="scale 0.25, memory at one size only (~1.5 min)")
    p.add_argument("--smoke", action="store_true", help="tiny tables, one repetition (seconds; for CI)")
    p.add_argument("--repeat", type=int, default=None, help="repetitions of writes (default 3)")
    p.add_argument("--repeat-scan", type=int, default=None,
                   help="repetitions of the scans (default 7: single scans of one file move by 10-25%% on a "
                        "shared machine, with outliers of up to 2x; medians of 3, then of 5, flipped cells near "
                        "1.0 from run to run)")
    p.add_argument("--repeat-fast", type=int, default=None,
                   help="repetitions of takes, ranges, opens and the one-column scan (default 11)")
    p.add_argument("--tables", default=",".join(TABLES), help=f"comma-separated subset of {','.join(TABLES)}")
    p.add_argument("--libs", default=",".join(L.LIBS), help="comma-separated subset of lancefile,pylance,parquet")
    p.add_argument("--versions", default=None,
                   help="Lance versions (default: every version lancefile reads; where it cannot write, "
                        "its write is n/a and it reads pylance's file)")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    p.add_argument("--no-startup", action="store_true", help="skip import time and first-call latency")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent),
                   help="directory for RESULTS.md and results.json (default: bench/)")
    p.add_argument("--workdir", default=None, help="where the data files go (default: a new temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep the data files")
    p.add_argument("--silent", action="store_true", help="no progress lines on stderr")
    a = p.parse_args(argv)
    if a.scale is None:
        a.scale = 0.0002 if a.smoke else 0.25 if a.quick else 1.0
    if a.repeat is None:
        a.repeat = 1 if a.smoke else 3
    if a.repeat_scan is None:
        a.repeat_scan = 1 if a.smoke else 7
    if a.repeat_fast is None:
        a.repeat_fast = 1 if a.smoke else 11
    a.tables = [t for t in a.tables.split(",") if t]
    a.libs = [x for x in a.libs.split(",") if x]
    a.versions = readable_versions() if a.versions is None else [v for v in a.versions.split(",") if v]
    for v in a.versions:
        if v not in readable_versions():
            p.error(f"lancefile does not read Lance {v} (it reads {', '.join(readable_versions())})")
    for t in a.tables:
        if t not in TABLES:
            p.error(f"unknown table {t!r}")
    for x in a.libs:
        if x not in L.LIBS:
            p.error(f"unknown library {x!r}")
    if "pylance" not in a.libs:
        p.error("pylance is the reference every ratio is taken against; keep it in --libs")
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    own_workdir = a.workdir is None
    a.workdir = a.workdir or tempfile.mkdtemp(prefix="lancefile-bench-")
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    try:
        result = Runner(a).run()
    finally:
        if own_workdir and not a.keep:
            shutil.rmtree(a.workdir, ignore_errors=True)
    text = write_report(result, Path(a.out))
    print(text, end="")
    return 0
