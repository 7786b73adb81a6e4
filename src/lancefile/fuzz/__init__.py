"""A reproducible corruption fuzzer for lancefile's read path.

Run a campaign from the command line (``--help`` lists every option)::

    python -m lancefile.fuzz --cases 50000 --seed 1 --out /tmp/fuzz        # the long one (~1 h on 2 cores)
    python -m lancefile.fuzz --cases 300 --seed 7                          # a short one
    python -m lancefile.fuzz --replay 1:4242 --out /tmp/fuzz               # one case again, with tracebacks
    python -m lancefile.fuzz --cases 2000 --corpus tests/data              # pylance's golden files too

It writes small files of every version lancefile reads (:mod:`lancefile.fuzz.corpus`), mutates
them (:mod:`lancefile.fuzz.mutations`: byte flips per region, truncations, forged footer,
offset tables, column metadata, page encodings, schema fields and data words), reads each
mutant in worker processes under a memory limit and a timeout, and counts the outcome of every
case (:mod:`lancefile.fuzz.runner`). The exit status is 1 when any case is a problem (crash,
hang, foreign exception, over-allocation, invalid Arrow data, an error not naming the file,
or undetected corruption in a file with checksums); ``--out`` keeps a reproducer of each.

Example::

    >>> import tempfile
    >>> report = run_campaign(4, seed=3, jobs=1, names=["ints"], versions=["2.2"], out=tempfile.mkdtemp())
    >>> report.cases, report.ok
    (4, True)
"""

from .runner import CLASSES, PROBLEMS, Report, run_campaign

__all__ = ["run_campaign", "Report", "CLASSES", "PROBLEMS"]
