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
