"""Running mutated files through lancefile in watched worker processes, and classifying what happens.

A campaign (:func:`run_campaign`) builds the corpus, derives case ``i`` of seed ``S`` from
``random.Random(f"{S}:{i}")`` alone (a corpus file, a mutation kind and spec, and the reads to
try), and hands cases to worker processes (``python -m lancefile.fuzz --worker``). A worker
warms up on the clean files, then limits its address space (``--memory-mb`` above what it
uses) and runs each case's reads on the mutated file and on the clean one: open, metadata,
full read, range, take, projection and :func:`lancefile.verify`. A worker that dies is a
*crash*, one that does not answer within ``--timeout`` seconds a *hang*; both are replaced.
Both limits are for files of up to :data:`SCALE_BYTES`; a larger corpus file gets time in
proportion to its size, and every worker's address space grows by :data:`MEMORY_PER_BYTE`
times the largest file's bytes (an 11 MB pylance file of lists reads legitimately in 2.5-5 s
and ~700 MB, which the plain limits reported as hangs and over-allocations).

Each read ends in one of these outcomes, and a case takes its worst (problems first):

=====================  ======================================================================
``crash``              the worker process died (a signal, an abort)                  problem
``hang``               no answer within the timeout                                  problem
``foreign``            an exception that is not a ``lancefile.LanceError``            problem
``over-allocation``    a MemoryError: something allocated before checking a size      problem
``invalid-arrow``      a result that fails ``validate(full=True)``                    problem
``unnamed-error``      a LanceError whose message does not name the file             problem
``undetected``         other data, no error, from a page or column metadata flip in a
                       file with checksums                                           problem
``silent-diff``        other data, no error (a file without checksums; a forged value
                       that decodes; nothing can tell)
``detected``           a ChecksumError
``error``              another LanceError naming the file
``same``               the same result as the clean file
=====================  ======================================================================
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import tempfile
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from . import corpus as corpus_mod
from .filemap import FileMap, parse
from .mutations import DATA_KINDS, KINDS, apply, generate

__all__ = ["run_campaign", "Report", "CLASSES", "PROBLEMS", "make_case", "run_ops", "worker_main", "case_timeout",
           "worker_memory_mb", "SCALE_BYTES", "MEMORY_PER_BYTE"]

CLASSES = ("crash", "hang", "foreign", "over-allocation", "invalid-arrow", "unnamed-error", "undetected",
           "silent-diff", "detected", "error", "same")
PROBLEMS = CLASSES[:7]
_RANK = {c: i for i, c in enumerate(CLASSES)}
# The timeout and memory limit hold for corpus files up to this size (the generated ones are
# 0.1-0.4 MB); a case of a larger file gets size / SCALE_BYTES times the timeout
SCALE_BYTES = 1 << 20
# A worker may add this many bytes of address space per byte of the largest corpus file, on top
# of --memory-mb (a full read, the clean file's too, the columns as Arrow and numpy's temporaries)
MEMORY_PER_BYTE = 64


def case_timeout(timeout: float, file_bytes: int) -> float:
    """Seconds a case of a ``file_bytes`` corpus file may take before it counts as a hang.

    Example::

        >>> case_timeout(20.0, 300_000), case_timeout(20.0, 11 << 20)
        (20.0, 220.0)
    """
    return timeout * max(1.0, file_bytes / SCALE_BYTES)


def worker_memory_mb(memory_mb: int, largest_bytes: int) -> int:
    """The address space (MB) a worker may add once warm, for a corpus whose largest file has
    ``largest_bytes``: ``memory_mb`` plus :data:`MEMORY_PER_BYTE` per byte of that file.

    Example::

        >>> worker_memory_mb(1024, 300_000), worker_memory_mb(1024, 11 << 20)
        (1043, 1728)
    """
    return memory_mb + -(-MEMORY_PER_BYTE * largest_bytes // (1 << 20))


# -- cases --------------------------------------------------------------------------------------

@dataclass
class CorpusFile:
    name: str  # unique in the corpus: the file name, with its directory for added files
    path: str
    fm: FileMap
    rows: int
    columns: list  # projectable column names (top-level and one nested level)
    checksums: bool


def _describe(path: str, name: str | None = None) -> CorpusFile:
    from ..reader import LanceFileReader

    with open(path, "rb") as fh:
        data = fh.read()
    reader = LanceFileReader(path)
    names = list(reader.schema.names)
    names += [p for p in reader.field_paths().values() if "." in p and p.count(".") == 1]
    return CorpusFile(name or os.path.basename(path), path, parse(data), reader.num_rows(), names,
                      bool(getattr(reader, "has_checksums", False)))


def describe_corpus(paths: list[str], generated: str) -> list[CorpusFile]:
    """The corpus files, sorted by name (a case picks a file by its position)."""
    files = []
    for p in paths:
        name = os.path.basename(p)
        if os.path.dirname(os.path.abspath(p)) != os.path.abspath(generated):
            name = f"{os.path.basename(os.path.dirname(os.path.abspath(p)))}/{name}"
        files.append(_describe(p, name))
    return sorted(files, key=lambda f: f.name)


def make_case(files: list[CorpusFile], seed, i: int, kinds=KINDS) -> dict | None:
    """Case ``i`` of campaign ``seed``: the same dict every time for the same corpus."""
    rng = random.Random(f"{seed}:{i}")
    cf = files[rng.randrange(len(files))]
    m = None
    for _ in range(10):
        m = generate(rng, cf.fm, rng.choice(kinds))
        if m is not None:
            break
    if m is None:
        return None
    n = max(cf.rows, 1)
    start = rng.randrange(n)
    ops = [["open"], ["metadata"], ["all", rng.choice([7, 100, 1024])], ["range", start, rng.randrange(n - start + 1)],
           ["take", sorted(rng.sample(range(n), min(n, rng.choice([1, 3, 20]))), reverse=rng.random() < 0.3)],
           ["project", rng.sample(cf.columns, min(len(cf.columns), rng.choice([1, 2])))], ["verify"]]
    return {"case": i, "seed": seed, "file": cf.name, "version": cf.fm.version, "clean": cf.path, "kind": m.kind,
            "spec": m.spec, "page": m.page, "column": m.column, "ops": ops, "checksums": cf.checksums}


# -- reading (in the worker) --------------------------------------------------------------------

def _innermost(tb) -> str:
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if "lancefile" in f.filename] or frames
    f = ours[-1] if ours else None
    return f"{f.filename.rsplit('lancefile/', 1)[-1]}:{f.lineno} ({f.name})" if f else "?"


def _do(path: str, op: list):
    import lancefile

    kind = op[0]
    if kind == "verify":  # (lancefile builds before verify() existed: skipped, so the fuzzer can measure them)
        return lancefile.verify(path).checksums_present if hasattr(lancefile, "verify") else None
    reader = lancefile.LanceFileReader(path, columns=op[1] if kind == "project" else None)
    with reader:
        if kind == "open":
            return (str(reader.schema), reader.num_rows())
        if kind == "metadata":
            meta = reader.metadata()
            return (meta.num_rows, meta.version, [len(c.pages) for c in meta.columns])
        if kind == "all":
            return reader.read_all(batch_size=op[1]).to_table()
        if kind == "range":
            return reader.read_range(op[1], op[2]).to_table()
        if kind == "take":
            return reader.take_rows(op[1]).to_table()
        if kind == "project":
            return reader.read_all().to_table()
    raise ValueError(kind)  # pragma: no cover


# Exceptions that are bugs wherever they come from: one of them as the cause of a Lance error
# means the error hides it (a relabelled bug), and a MemoryError means an allocation came
# before the check that should have refused it.
_BUGS = (MemoryError, IndexError, KeyError, TypeError, AttributeError, OverflowError, ZeroDivisionError,
         AssertionError, NameError, RecursionError)


def _bug_cause(exc: BaseException) -> BaseException | None:
    seen = 0
    cause = exc.__cause__
    while cause is not None and seen < 20:
        if isinstance(cause, _BUGS):
            return cause
        cause, seen = cause.__cause__, seen + 1
    return None


def _same(a, b) -> bool:
    import pyarrow as pa

    if isinstance(a, pa.Table) and isinstance(b, pa.Table):
        return a.schema.equals(b.schema) and a.equals(b)
    return a == b


def run_ops(path: str, clean: str, ops: list, clean_cache: dict | None = None) -> list[dict]:
    """Run each op on ``path`` and compare with the clean file: one result dict per op."""
    import pyarrow as pa

    import lancefile

    checksum_error = getattr(lancefile, "ChecksumError", ())  # (older builds have none)
    out = []
    for op in ops:
        res = {"op": op[0]}
        try:
            got = _do(path, op)
        except checksum_error as exc:
            res.update(outcome="detected", type="ChecksumError", message=str(exc)[:300])
        except lancefile.LanceError as exc:
            cause = _bug_cause(exc)
            if cause is not None:  # a bug or an over-allocation relabelled as a Lance error
                res.update(outcome="over-allocation" if isinstance(cause, MemoryError) else "foreign",
                           type=f"{type(exc).__name__} from {type(cause).__name__}", message=str(exc)[:300],
                           where=_innermost(cause.__traceback__))
            else:
                res.update(outcome="error" if path in str(exc) else "unnamed-error", type=type(exc).__name__,
                           message=str(exc)[:300], where=_innermost(exc.__traceback__))
        except MemoryError as exc:
            res.update(outcome="over-allocation", type=type(exc).__name__, message=str(exc)[:300],
                       where=_innermost(exc.__traceback__))
        except Exception as exc:  # noqa: BLE001 - classifying anything is the point
            res.update(outcome="foreign", type=type(exc).__name__, message=str(exc)[:300],
                       where=_innermost(exc.__traceback__))
        else:
            if isinstance(got, pa.Table):
                try:
                    got.validate(full=True)
                except pa.ArrowException as exc:
                    res.update(outcome="invalid-arrow", message=str(exc)[:300])
                    out.append(res)
                    continue
            key = (clean, json.dumps(op))
            want = None if clean_cache is None else clean_cache.get(key)
            if want is None:
                try:
                    want = _do(clean, op)
                except lancefile.LanceError as exc:  # e.g. a range the clean file has not
                    want = ("error", type(exc).__name__)
                if clean_cache is not None and len(clean_cache) < 4096:
                    clean_cache[key] = want
            res["outcome"] = "same" if _same(got, want) else "silent-diff"
        out.append(res)
    return out


def classify(case: dict, results: list[dict]) -> str:
    worst = "same"
    for res in results:
        c = res["outcome"]
        if c == "silent-diff" and case.get("checksums") and case["kind"] in DATA_KINDS:
            c = "undetected"
        if _RANK[c] < _RANK[worst]:
            worst = c
    return worst


def worker_main(memory_mb: int) -> None:
    """The worker loop: warm up, limit memory, then one JSON case a line in, one result line out."""
    import warnings

    warnings.simplefilter("ignore")  # unusable statistics warn; the outcome is what counts
    first = json.loads(sys.stdin.readline())
    cache: dict = {}
    for path in first.get("warm", []):
        try:
            run_ops(path, path, [["all", 1024], ["take", [0]], ["metadata"], ["verify"]], cache)
        except Exception:  # noqa: BLE001
            pass
    _limit_memory(memory_mb)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        case = json.loads(line)
        results = run_ops(case["path"], case["clean"], case["ops"], cache)
        print(json.dumps(results), flush=True)


def _limit_memory(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    with open("/proc/self/statm") as fh:
        vm = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = vm + memory_mb * (1 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


# -- the campaign (in the parent) ---------------------------------------------------------------

class _Worker:
    def __init__(self, warm: list[str], memory_mb: int, directory: str) -> None:
        self.warm, self.memory_mb, self.directory = warm, memory_mb, directory
        self.proc = None

    def _start(self) -> None:
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        self.proc = subprocess.Popen([sys.executable, "-m", "lancefile.fuzz", "--worker", "--memory-mb",
                                      str(self.memory_mb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.proc.stdin.write(json.dumps({"warm": self.warm}) + "\n")
        self.proc.stdin.flush()
        line = self._readline(300)
        if line is None or not json.loads(line).get("ready"):
            raise RuntimeError(f"fuzz worker did not start: {self._stderr()}")

    def _readline(self, timeout: float) -> str | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        return self.proc.stdout.readline() or None

    def _stderr(self) -> str:
        try:
            return self.proc.stderr.read()[-2000:] if self.proc.poll() is not None else ""
        except Exception:  # noqa: BLE001
            return ""

    def run(self, case: dict, timeout: float) -> tuple[str, list[dict], str]:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
            line = self._readline(timeout)
        except (BrokenPipeError, OSError):
            line = None
        if line is not None:
            return "ok", json.loads(line), ""
        if self.proc.poll() is None:  # alive but silent: a hang
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return "hang", [], ""
        code, err = self.proc.returncode, self._stderr()
        self.proc = None
        return "crash", [], f"exit code {code}: {err.strip().splitlines()[-1] if err.strip() else ''}"

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@dataclass
class Report:
    cases: int = 0
    seed: object = 0
    counts: dict = field(default_factory=lambda: {c: 0 for c in CLASSES})
    by_kind: dict = field(default_factory=dict)  # kind -> {class: count}
    by_version: dict = field(default_factory=dict)  # version -> {class: count}
    problems: list = field(default_factory=list)  # one entry per problem case (capped)
    signatures: dict = field(default_factory=dict)  # problem signature -> count

    @property
    def ok(self) -> bool:
        return not any(self.counts[c] for c in PROBLEMS)

    def add(self, case: dict, cls: str, results: list[dict], detail: str) -> None:
        self.cases += 1
        self.counts[cls] += 1
        self.by_kind.setdefault(case["kind"], {}).setdefault(cls, 0)
        self.by_kind[case["kind"]][cls] += 1
        version = case["version"]
        self.by_version.setdefault(version, {}).setdefault(cls, 0)
        self.by_version[version][cls] += 1
        if cls in PROBLEMS:
            bad = [r for r in results if r.get("outcome") == cls or (cls == "undetected" and r.get("outcome") == "silent-diff")]
            first = bad[0] if bad else {}
            sig = f"{cls} | {first.get('type', '')} | {first.get('where', detail)}"
            self.signatures[sig] = self.signatures.get(sig, 0) + 1
            if len(self.problems) < 200:
                self.problems.append({"case": case["case"], "class": cls, "file": case["file"], "kind": case["kind"],
                                      "spec": case["spec"], "detail": detail or first})

    def to_json(self) -> dict:
        return {"cases": self.cases, "seed": self.seed, "counts": self.counts, "by_kind": self.by_kind,
                "by_version": self.by_version, "signatures": self.signatures, "problems": self.problems}

    def summary(self) -> str:
        lines = [f"{self.cases} cases (seed {self.seed}): " + ", ".join(f"{c} {n}" for c, n in self.counts.items() if n)]
        for v in sorted(self.by_version):
            lines.append(f"  {v}: " + ", ".join(f"{c} {n}" for c, n in sorted(self.by_version[v].items(),
                                                                             key=lambda kv: _RANK[kv[0]])))
        for sig, n in sorted(self.signatures.items(), key=lambda kv: -kv[1])[:30]:
            lines.append(f"  {n:6d}  {sig}")
        return "\n".join(lines)


def run_campaign(cases: int, seed=0, *, jobs: int | None = None, timeout: float = 20.0, memory_mb: int = 1024,
                 out: str | None = None, corpus_dir: str | None = None, extra=(), kinds=KINDS,
                 versions=corpus_mod.VERSIONS, names=None, start: int = 0, progress=None) -> Report:
    """Run cases ``start .. start + cases - 1`` of campaign ``seed``; see the module doc."""
    work = out or tempfile.mkdtemp(prefix="lancefile-fuzz-")
    corpus_dir = corpus_dir or os.path.join(work, "corpus")
    paths = corpus_mod.build(corpus_dir, names=names, versions=versions, extra=extra)
    files = describe_corpus(paths, corpus_dir)
    jobs = jobs or max(1, min(4, os.cpu_count() or 1))
    memory_mb = worker_memory_mb(memory_mb, max(os.path.getsize(f.path) for f in files))
    sizes = {f.name: os.path.getsize(f.path) for f in files}
    report = Report(seed=seed)
    lock = threading.Lock()
    pending = iter(range(start, start + cases))
    mutants = os.path.join(work, "mutants")
    os.makedirs(mutants, exist_ok=True)

    def loop(w: int) -> None:
        worker = _Worker([f.path for f in files], memory_mb, mutants)
        by_name = {f.name: f for f in files}
        try:
            while True:
                with lock:
                    i = next(pending, None)
                if i is None:
                    return
                case = make_case(files, seed, i, kinds)
                if case is None:
                    continue
                path = os.path.join(mutants, f"w{w}.lance")
                with open(path, "wb") as fh:
                    fh.write(apply(by_name[case["file"]].fm, case["spec"]))
                status, results, detail = worker.run(dict(case, path=path),
                                                     case_timeout(timeout, sizes[case["file"]]))
                cls = status if status in ("crash", "hang") else classify(case, results)
                with lock:
                    report.add(case, cls, results, detail)
                    if cls in PROBLEMS and out:
                        _keep(out, case, cls, path, results, detail)
                    if progress is not None:
                        progress(report)
        finally:
            worker.close()

    with ThreadPoolExecutor(jobs) as pool:
        for f in [pool.submit(loop, w) for w in range(jobs)]:
            f.result()
    if out:
        with open(os.path.join(out, "report.json"), "w") as fh:
            json.dump(report.to_json(), fh, indent=1)
    return report


def _keep(out: str, case: dict, cls: str, path: str, results: list, detail: str) -> None:
    repro = os.path.join(out, "repro")
    os.makedirs(repro, exist_ok=True)
    base = os.path.join(repro, f"{cls}-{case['seed']}-{case['case']}")
    with open(path, "rb") as src, open(base + ".lance", "wb") as dst:
        dst.write(src.read())
    with open(base + ".json", "w") as fh:
        json.dump({**case, "results": results, "detail": detail}, fh, indent=1)
