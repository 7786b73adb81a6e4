"""A short run of the corruption fuzzer (``python -m lancefile.fuzz``) over every version lancefile reads.

The campaign's corpus is written by lancefile (with and without checksums) plus pylance's
golden files in ``tests/data``; every case runs in worker processes under a memory limit and
a timeout. No case may crash, hang, raise a foreign exception, over-allocate, return invalid
Arrow data, raise an error that does not name the file, or miss corruption of a checksummed
file's pages or column metadata. For a long campaign see the README ("Robustness").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lancefile.fuzz import PROBLEMS, run_campaign
from lancefile.fuzz import corpus as corpus_mod
from lancefile.fuzz.mutations import KINDS
from lancefile.fuzz.runner import describe_corpus, make_case

GOLDEN = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    report = run_campaign(600, seed="ci", jobs=2, out=str(out), extra=[str(GOLDEN)], timeout=60)
    return report, out


def test_short_campaign_finds_no_problem(campaign):
    report, out = campaign
    assert report.cases == 600
    problems = {c: report.counts[c] for c in PROBLEMS if report.counts[c]}
    assert not problems, f"{problems}\n{report.summary()}\n" + json.dumps(report.problems[:5], indent=1)[:4000]
    assert set(report.by_version) >= {"2.0", "2.1", "2.2"}
    assert set(report.by_kind) == set(KINDS)
    assert report.counts["detected"] > 0 and report.counts["error"] > 0  # the mutations bite
    assert json.loads((out / "report.json").read_text())["cases"] == 600


def test_cases_are_reproducible(campaign, tmp_path):
    _, out = campaign
    corpus_dir = out / "corpus"
    paths = corpus_mod.build(str(corpus_dir), extra=[str(GOLDEN)])
    files = describe_corpus(paths, str(corpus_dir))
    again = describe_corpus(corpus_mod.build(str(tmp_path / "corpus"), extra=[str(GOLDEN)]), str(tmp_path / "corpus"))
    for i in (0, 17, 599):
        a, b = make_case(files, "ci", i), make_case(again, "ci", i)
        assert {k: a[k] for k in ("file", "kind", "spec", "ops")} == {k: b[k] for k in ("file", "kind", "spec", "ops")}


def test_limits_grow_with_the_corpus_files(tmp_path, monkeypatch):
    """A case of a corpus file over SCALE_BYTES gets time in proportion to its size, and every
    worker's address space grows with the largest file: an 11 MB file's legitimate reads were
    reported as hangs and over-allocations under the limits meant for 0.1-0.4 MB files."""
    import numpy as np
    import pyarrow as pa

    import lancefile
    from lancefile.fuzz import runner

    big = tmp_path / "extra" / "big.lance"
    big.parent.mkdir()
    lancefile.write_table(pa.table({"x": np.random.default_rng(0).random(400_000)}), big, checksums=False)
    size = big.stat().st_size
    assert size > 2 * runner.SCALE_BYTES
    seen = {"memory": set(), "timeouts": {}}

    class Recorder:  # stands in for the worker process: records the limits it is given
        def __init__(self, warm, memory_mb, directory):
            seen["memory"].add(memory_mb)

        def run(self, case, timeout):
            seen["timeouts"].setdefault(case["file"], set()).add(timeout)
            return "crash", [], ""

        def close(self):
            pass

    monkeypatch.setattr(runner, "_Worker", Recorder)
    runner.run_campaign(40, seed="limits", jobs=1, timeout=20.0, memory_mb=1000, corpus_dir=str(tmp_path / "c"),
                        extra=[str(big.parent)], names=["ints"], versions=("2.2",))
    assert seen["memory"] == {1000 + -(-runner.MEMORY_PER_BYTE * size // (1 << 20))}
    timeouts = seen["timeouts"]
    assert timeouts.pop("extra/big.lance") == {20.0 * size / runner.SCALE_BYTES}
    assert timeouts and all(t == {20.0} for t in timeouts.values())  # the small generated files keep 20 s
