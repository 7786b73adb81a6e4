"""SQL filter text (``filter="id > 5 AND s LIKE 'a%'"``), against pylance 14.0.2's reading of the same text.

One table with nulls in every column, NaNs among the floats, dates, timestamps and a struct;
read as a pylance dataset (several fragments) and as a lancefile file. Fixed conditions, random
ones (hypothesis) and bad ones.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import lancefile
from lancefile.sqlfilter import MAX_DEPTH, sql_to_expression

lance = pytest.importorskip("lance")

N = 300


def _table() -> pa.Table:
    return pa.table({
        "k": np.arange(N),
        "id": pa.array([None if i % 11 == 0 else i % 50 - 10 for i in range(N)], pa.int64()),
        "f": pa.array([None if i % 13 == 0 else float("nan") if i % 17 == 0 else (i % 40) / 4 for i in range(N)]),
        "s": pa.array([None if i % 7 == 0 else ["apple", "banana", "cherry", "a_b", "100%"][i % 5] + str(i % 3)
                       for i in range(N)]),
        "b": pa.array([None if i % 5 == 0 else bool(i % 2) for i in range(N)]),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(N)], pa.timestamp("us")),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 30) for i in range(N)], pa.date32()),
        "st": pa.array([None if i % 9 == 0 else {"x": i % 6} for i in range(N)], pa.struct([("x", pa.int32())])),
    })


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("sql")
    uri, path = str(root / "ds"), str(root / "f.lance")
    t = _table()
    lance.write_dataset(t, uri, max_rows_per_file=100)
    lancefile.write_table(t, path)
    return uri, path


def _rows(table: pa.Table) -> list:
    return sorted(table["k"].to_pylist())


def _check(data, q: str) -> None:
    uri, path = data
    want = _rows(lance.dataset(uri).to_table(filter=q))
    assert _rows(lancefile.dataset(uri).to_table(filter=q)) == want, q
    assert _rows(lancefile.read_table(path, filters=q)) == want, q
    assert lancefile.dataset(uri).count_rows(filter=q) == len(want), q


CONDITIONS = [
    "id > 5", "id >= 5 AND id < 20", "NOT id > 5", "id = 3 OR id = -3", "id <> 3", "id != 3", "id == 3",
    "f > 2", "f <= 2", "NOT f > 2", "f = f", "f != 2.5", "f BETWEEN 0 AND 1000", "NOT f < 1000", "f + 1 > 1000",
    "1000 < f", "f > id", "id < f", "NOT f <= id", "f = id",
    "s LIKE 'a%'", "s LIKE 'a\\_b%'", "s NOT LIKE '%an%'", "s > 'b'", "s = 'apple0'", "s IN ('apple0', 'banana1')",
    "b", "NOT b", "b = TRUE", "b IS NULL", "b IS NOT NULL AND NOT b",
    "ts >= TIMESTAMP '2024-01-05 10:00:00'", "d = DATE '2024-01-03'", "d BETWEEN DATE '2024-01-03' AND DATE '2024-01-09'",
    "st.x > 2", "st.x IS NULL", "st IS NULL", "st IS NOT NULL AND st.x = 0",
    "id IN (1, 2, 3)", "id NOT IN (1, 2, 3)", "id NOT IN (1, NULL)", "id IN (1, NULL)", "NOT (id IN (1, 2))",
    "id BETWEEN -2 AND 4", "id NOT BETWEEN -2 AND 4", "id + 1 = 3", "id * 2 > 30", "-id > 5", "id - 2 * 3 < 0",
    "NOT (id > 5 AND s = 'apple0')", "id > 5 OR s IS NULL", "(id > 5 OR f < 1) AND NOT (b OR s LIKE 'c%')",
    "`s` = 'cherry2'", "id = NULL", "NOT (id = NULL)", "TRUE", "FALSE", "NOT NOT id > 3",
    "f IN (0.5, 1.0)", "f NOT IN (0.5, 1.0)",
    # division and remainder (integers truncate toward zero; the remainder has the dividend's sign)
    "id % 3 = 1", "id % 3 = -1", "id % -4 = 2", "id / 3 = -2", "id / 2 > 4", "id * 3 % 7 = 2", "id % 7 + 1 = 2",
    "id / 2.0 = 2.5", "(id + 1) * 2 > 3", "(id * 2) % 3 = 2", "-(id + 1) > 0", "(id - 1) IN (2, 6)", "((id)) = 3",
    "(f) > 2", "f % 2 = 0.5", "f % 1.5 > 0.5", "f / 2 > 1", "f % 2 > 0", "st.x % 4 = 1", "NOT id % 2 = 0",
    # IS [NOT] TRUE / FALSE: never unknown; ILIKE
    "b IS TRUE", "b IS NOT TRUE", "b IS FALSE", "b IS NOT FALSE", "NOT b IS TRUE", "(id > 5) IS TRUE",
    "(id > 5) IS NOT FALSE", "NOT ((f > 2) IS FALSE)", "s ILIKE 'APPLE%'", "s NOT ILIKE '%AN%'", "NOT s ILIKE 'a\\_B%'",
    # functions (lancefile.sqlfunctions) and CAST
    "lower(s) = 'apple0'", "UPPER(s) LIKE 'BAN%'", "length(s) = 6", "char_length(s) > 5", "character_length(s) = 4",
    "octet_length(s) = 5", "abs(id) = 3", "abs(f) > 5", "ltrim(s, 'a') LIKE 'pple%'", "rtrim(s, '012') = 'apple'",
    "btrim(s, 'a0') = 'pple'", "ltrim(s) = 'apple0'", "starts_with(s, 'ch')", "NOT ends_with(s, '1')",
    "regexp_like(s, '^[ab]')", "replace(s, 'a', 'o') = 'opple0'", "reverse(s) = '0elppa'", "concat(s, '-') = 'apple0-'",
    "concat(s, s) = ''", "coalesce(id, -100) = -100", "coalesce(s, 'none') = 'none'", "coalesce(f, 99.0) > 50",
    "isnan(f)", "NOT isnan(f)", "round(f) = 3", "round(f, 1) = 2.5", "round(id) = 5", "sqrt(id) = 3",
    "CAST(id AS double) / 4 = 2.5", "CAST(id AS string) LIKE '1%'", "cast(k AS int) % 100 = 7", "cast(id AS bigint) > 30",
    "upper(lower(s)) = 'CHERRY2'", "abs(id - 10) < 3", "length(s) + 1 = 7", "(abs(id)) = 3",
    "lower(s) IN ('apple0', 'cherry1')", "abs(f) BETWEEN 1 AND 2",
]


@pytest.mark.parametrize("q", CONDITIONS)
def test_condition_matches_pylance(data, q):
    _check(data, q)


def test_delete_and_count_with_sql_text(tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    t = _table()
    lancefile.write_dataset(t, ours, max_rows_per_file=100)
    lance.write_dataset(t, theirs, max_rows_per_file=100)
    q = "f > 7 OR s LIKE 'b%' OR id IS NULL"
    lancefile.dataset(ours).delete(q)
    lance.dataset(theirs).delete(q)
    assert _rows(lancefile.dataset(ours).to_table()) == _rows(lance.dataset(theirs).to_table())
    assert _rows(lance.dataset(ours).to_table()) == _rows(lance.dataset(theirs).to_table())


# -- random conditions -----------------------------------------------------------------------

_int = st.integers(-12, 45).map(str)
_num = _int | st.sampled_from(["2.5", "0.25", "-1.5", "9.75"])
_cmp = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
# pylance refuses a decimal literal against an integer column: integers there
_int_col = st.sampled_from(["id", "st.x", "id + 1", "-id", "id % 7", "id / 3", "-id % -4", "(id + 3) * 2", "-(id - 1)"])
_float_col = st.sampled_from(["f", "f * 2", "f - 1", "f / 4", "f % 2.5"])  # not -f: see test_negative_nan
_str_lit = st.sampled_from(["'apple0'", "'banana1'", "'b'", "'cherry'", "'a_b2'", "''"])
_leaf = st.one_of(
    st.builds(lambda c, o, v: f"{c} {o} {v}", _int_col, _cmp, _int),
    st.builds(lambda c, o, v: f"{c} {o} {v}", _float_col, _cmp, _num),
    st.builds(lambda o, v: f"s {o} {v}", _cmp, _str_lit),
    st.builds(lambda c, o, d: f"{c} {o} {d}", st.just("f"), _cmp, st.just("id")),
    st.builds(lambda c, n: f"{c} IS {n}NULL", st.sampled_from(["id", "f", "s", "b", "st", "st.x"]),
              st.sampled_from(["", "NOT "])),
    st.builds(lambda c, n, vs: f"{c} {n}IN ({', '.join(vs)})", st.sampled_from(["id", "st.x"]),
              st.sampled_from(["", "NOT "]), st.lists(st.integers(-12, 45).map(str) | st.just("NULL"), min_size=1,
                                                      max_size=4)),
    st.builds(lambda c, n, a, b: f"{c} {n}BETWEEN {a} AND {b}", _int_col, st.sampled_from(["", "NOT "]), _int, _int),
    st.builds(lambda c, n, a, b: f"{c} {n}BETWEEN {a} AND {b}", _float_col, st.sampled_from(["", "NOT "]), _num, _num),
    st.builds(lambda n, op, p: f"s {n}{op} '{p}'", st.sampled_from(["", "NOT "]), st.sampled_from(["LIKE", "ILIKE"]),
              st.sampled_from(["a%", "%an%", "_pple%", "%1", "cherry_", "%", "A%", "%AN%"])),
    st.builds(lambda c, n, v: f"{c} IS {n}{v}", st.sampled_from(["b", "(id > 5)", "(s LIKE 'a%')"]),
              st.sampled_from(["", "NOT "]), st.sampled_from(["TRUE", "FALSE"])),
    st.sampled_from(["b", "NOT b", "TRUE", "FALSE"]),
)
_cond = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.builds(lambda a, o, b: f"({a}) {o} ({b})", inner, st.sampled_from(["AND", "OR"]), inner),
        st.builds(lambda a: f"NOT ({a})", inner),
    ),
    max_leaves=6,
)


def _sql(node, row):
    """SQL's value (True, False or None: unknown) of a parsed condition on one row, in plain
    Python: the oracle for what pylance gets wrong (below). Floats in total order (NaN last)."""
    import math
    import re

    from lancefile.sqlfilter import _CONDITIONS

    kind = node[0]

    def key(v):
        return (1, 0.0) if isinstance(v, float) and math.isnan(v) else (0, v)

    if kind == "field":
        v = row[node[1][0]]
        return v if len(node[1]) == 1 or v is None else v[node[1][1]]
    if kind == "lit":
        return node[1]
    if kind in ("arith", "neg"):
        args = [_sql(a, row) for a in node[2:4]] if kind == "arith" else [_sql(node[1], row)]
        if any(a is None for a in args):
            return None
        if kind == "neg":
            return -args[0]
        a, b = args
        if node[1] in "/%" and all(isinstance(v, int) for v in args):  # C's division: toward zero
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return q if node[1] == "/" else a - q * b
        if node[1] == "%":
            return math.fmod(a, b)
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[node[1]]
    if kind == "not":
        v = _sql(node[1], row)
        return None if v is None else not v
    if kind in ("and", "or"):
        vals = [_sql(p, row) for p in node[1]]
        if kind == "and":
            return False if False in vals else None if None in vals else True
        return True if True in vals else None if None in vals else False
    if kind == "cmp":
        a, b = _sql(node[2], row), _sql(node[3], row)
        if a is None or b is None:
            return None
        a, b = key(a), key(b)
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[node[1]]
    if kind == "isnull":
        return (_sql(node[1], row) is None) != node[2]
    if kind == "istrue":
        return (_sql(node[1], row) is node[2]) != node[3]
    if kind == "in":
        x = _sql(node[1], row)
        vals = [_sql(v, row) for v in node[2]]
        got = None if x is None else True if any(v is not None and key(v) == key(x) for v in vals) else (
            None if None in vals else False)
        return got if got is None or not node[3] else not got
    if kind == "between":
        lo = _sql(("cmp", ">=", node[1], node[2]), row)
        hi = _sql(("cmp", "<=", node[1], node[3]), row)
        got = _sql(("and", [("lit", lo), ("lit", hi)]), row)
        return got if got is None or not node[4] else not got
    if kind == "like":
        x = _sql(node[1], row)
        if x is None:
            return None
        rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in node[2])
        return (re.fullmatch(rx, x, re.S | (re.I if node[4] else 0)) is not None) != node[3]
    if kind == "bool":
        return _sql(node[1], row) if node[1][0] in _CONDITIONS or node[1][0] != "lit" else node[1][1]
    raise AssertionError(kind)


@settings(max_examples=150, deadline=None, derandomize=True,  # pylance has its own SQL bugs: a fixed sample
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=_cond)
def test_random_conditions_match_sql_and_pylance(data, q):
    from lancefile.sqlfilter import _Parser

    uri, path = data
    tree = _Parser(q).parse()
    table = _table()
    want = [r["k"] for r in table.to_pylist() if _sql(tree, r) is True]
    ours = _rows(lancefile.dataset(uri).to_table(filter=q))
    assert ours == want, q
    assert _rows(lancefile.read_table(path, filters=q)) == want, q
    if " IN (" not in q:
        # pylance 14.0.2 gets IN lists joined by OR / NOT wrong (see test_in_lists_under_or):
        # there the SQL oracle above is the judge
        assert _rows(lance.dataset(uri).to_table(filter=q)) == want, q


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("q, where", [
    ("", "empty"), ("id >", "position 4"), ("id = 'a", "position 5"), ("id IN ()", "position 7"),
    ("id IS 5", "position 6"), ("id ~ 2", "position 3"), ("(id = 1", "position 7"), ("1 = 1)", "position 5"),
    ("st.", "position 3"), ("id BETWEEN 1", "position 12"), ("s LIKE 5", "position 7"), ("id NOT 5", "position 7"),
    ("s ILIKE 5", "position 8"), ("b IS NOT 5", "position 9"), ("id % > 1", "position 5"), ("id / = 1", "position 5"),
    ("nofunc(s) = 1", "unknown function nofunc"), ("lower(s, 1) = 'a'", "takes 1 argument, not 2"),
    ("cast(id AS blob) = 1", "CAST to 'blob'"), ("cast(id) = 1", "expected AS"), ("starts_with(s, s)", "must be a literal"),
    ("round(f, 1.5) = 1", "must be an integer"), ("lower(s = 'a'", "in lower"), ("replace(s, 1, 'a') = 'b'", "'string'"),
    ("d = DATE 'soon'", "not a date"), ("id + (id > 1) > 2", "used as a value"), ("5", "not a condition"),
    ("NOT " * (MAX_DEPTH + 1) + "b", "deeper"), ("+".join(["id"] * (MAX_DEPTH + 2)) + " > 1", "deeper"),
])
def test_bad_conditions_name_what_and_where(data, q, where):
    uri, path = data
    with pytest.raises(lancefile.InvalidInputError, match=where):
        lancefile.dataset(uri).to_table(filter=q)
    with pytest.raises(lancefile.InvalidInputError, match=where):
        lancefile.read_table(path, filters=q)


@pytest.mark.interop
@pytest.mark.parametrize("q", ["ltrim(s) = 'a'", "rtrim(s) = 'b'", "btrim(s) = 'b'", "ltrim(s) LIKE '\ta%'",
                               "length(btrim(s)) = 1", "upper(s) = ' A'", "reverse(s) = ' b '"])
def test_trims_take_spaces_only(tmp_path, q):
    t = pa.table({"k": [0, 1, 2, 3, 4], "s": [" a", "\ta", "  b ", "b\t", None]})
    uri = str(tmp_path / "ds")
    lance.write_dataset(t, uri)
    want = _rows(lance.dataset(uri).to_table(filter=q))
    assert _rows(lancefile.dataset(uri).to_table(filter=q)) == want


def test_an_integer_division_by_zero_is_a_clear_error(data):
    """pylance raises ArrowInvalid ("Divide by zero error"); lancefile an InvalidInputError
    naming the filter. A float division by zero is IEEE's: no error."""
    uri, path = data
    for q in ("id / (id - id) > 1", "id % 0 = 1"):
        with pytest.raises(lancefile.InvalidInputError, match="failed on the data: divide by zero"):
            lancefile.dataset(uri).to_table(filter=q)
        with pytest.raises(lancefile.InvalidInputError, match="divide by zero"):
            lancefile.read_table(path, filters=q)
        with pytest.raises(Exception, match="(?i)divide by zero"):
            lance.dataset(uri).to_table(filter=q)
    _check(data, "f / 0 > 1000 AND f != 0")  # (0.0 / 0 is a NaN with its sign bit set: see test_negative_nan)


def test_unknown_column_and_wrong_types(data):
    uri, path = data
    with pytest.raises(lancefile.ColumnNotFoundError, match="nope"):
        lancefile.dataset(uri).to_table(filter="nope > 1")
    with pytest.raises(lancefile.InvalidInputError, match="cannot apply"):
        lancefile.read_table(path, filters="s > 5")
    with pytest.raises(lancefile.InvalidInputError, match="string"):
        sql_to_expression(5)


def test_text_literals_read_as_the_column_type(data):
    """Beyond the reference: '2024-01-05' against a timestamp or date column."""
    uri, _ = data
    ds = lancefile.dataset(uri)
    assert _rows(ds.to_table(filter="ts >= '2024-01-05 10:00:00'")) == _rows(
        lance.dataset(uri).to_table(filter="ts >= TIMESTAMP '2024-01-05 10:00:00'"))
    assert _rows(ds.to_table(filter="d IN ('2024-01-03', '2024-01-04')")) == _rows(
        lance.dataset(uri).to_table(filter="d = DATE '2024-01-03' OR d = DATE '2024-01-04'"))


def test_zones_are_skipped_with_sql_text(tmp_path):
    """The statistics prune a SQL condition as they prune the same Expression."""
    import pyarrow.compute as pc

    path = str(tmp_path / "z.lance")
    lancefile.write_table(pa.table({"x": np.arange(100_000)}), path, statistics_zone_rows=1000)
    r = lancefile.LanceFileReader(path)
    assert r.matching_ranges("x >= 5000 AND x < 7000") == r.matching_ranges((pc.field("x") >= 5000) & (pc.field("x") < 7000))
    assert r.matching_ranges("x >= 5000 AND x < 7000") == [(5000, 7000)]


def test_negative_nan(data):
    """The one documented difference: the reference orders a NaN with its sign bit set (``-f``
    of a NaN) before every number; lancefile orders every NaN after."""
    uri, _ = data
    nan_rows = [k for k, v in zip(_table()["k"].to_pylist(), _table()["f"].to_pylist()) if v is not None and v != v]
    assert set(nan_rows) <= set(_rows(lance.dataset(uri).to_table(filter="-f < -1000")))
    assert not set(nan_rows) & set(_rows(lancefile.dataset(uri).to_table(filter="-f < -1000")))
    assert set(nan_rows) <= set(_rows(lancefile.dataset(uri).to_table(filter="-f > 1000")))


def test_in_lists_under_or(data):
    """pylance 14.0.2 rewrites IN lists joined by OR as if no value were null: each of these
    keeps rows SQL drops (x NOT IN (..., NULL) is never true; a null x is never in or out of a
    list). lancefile keeps SQL's answer, checked against the plain-Python oracle."""
    from lancefile.sqlfilter import _Parser

    uri, _ = data
    table = _table().to_pylist()
    for q in ["id NOT IN (0) OR id NOT IN (NULL)", "id NOT IN (0) OR id NOT IN (1)",
              "(id NOT IN (NULL)) OR (id NOT IN (1))", "NOT ((id IN (NULL)) AND (id IN (0)))"]:
        want = [r["k"] for r in table if _sql(_Parser(q).parse(), r) is True]
        assert _rows(lancefile.dataset(uri).to_table(filter=q)) == want, q
        assert lance.dataset(uri).count_rows(filter=q) > len(want), q  # the reference's extra rows


def test_keywords_and_unicode_as_column_names():
    import datetime

    t = pa.table({"date": pa.array([datetime.date(2024, 1, 1), datetime.date(2024, 1, 5)]), "größe": [1, 2],
                  "Timestamp": [1, 2], "my col": [5, 6]})
    for q, want in [("date > DATE '2024-01-02'", 1), ("größe = 2", 1), ("Timestamp = 1", 1), ("date IS NULL", 0),
                    ("`my col` = 6 AND \"my col\" = 6", 1), ("`date` = '2024-01-05'", 1)]:
        assert t.filter(sql_to_expression(q, t.schema)).num_rows == want, q


def test_long_chains_of_and_or(tmp_path):
    """A condition of thousands of terms nests log2 deep (a left-deep tree overflowed the
    recursion limit at ~500 terms)."""
    path = str(tmp_path / "chain.lance")
    lancefile.write_table(pa.table({"a": np.arange(100)}), path)
    ors = " OR ".join(f"a = {i}" for i in range(0, 3000, 3))
    assert lancefile.read_table(path, filters=ors)["a"].to_pylist() == list(range(0, 100, 3))
    ands = " AND ".join(f"a >= {i}" for i in range(0, 60, 3)) + " AND NOT (" + ors + ")"
    assert lancefile.read_table(path, filters=ands)["a"].to_pylist() == [a for a in range(57, 100) if a % 3]
    assert lancefile.read_table(path, filters=" AND ".join(f"a != {i}" for i in range(99)))["a"].to_pylist() == [99]
    t = pa.table({"st": pa.array([{"date": 1}, {"date": 2}])})
    assert t.filter(sql_to_expression("st.date = 2", t.schema)).num_rows == 1


@pytest.mark.interop
@pytest.mark.parametrize("expr", ["x = 0.0", "x IN (0.0)", "x IN (-0.0)", "x IN (0)", "x NOT IN (0.0)",
                                  "x NOT IN (-0.0, 1.0)", "x IN (1.0, 2.0)", "f32 IN (0.0)", "f32 NOT IN (-0.0)"])
def test_in_lists_treat_the_two_zeros_as_one(expr, tmp_path):
    """SQL compares numbers: -0.0 = 0.0 in IN as in =, as pylance does; Arrow's is_in told them
    apart by their bits, so `x IN (0.0)` missed -0.0 and `x NOT IN (0.0)` kept it (found by a
    helper's dataset hunt)."""
    import lance

    table = pa.table({"id": pa.array([0, 1, 2, 3], pa.int64()), "x": pa.array([-0.0, 0.0, 1.0, None]),
                      "f32": pa.array([-0.0, 0.0, 1.0, 2.0], pa.float32())})
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri)
    want = lance.dataset(uri).to_table(filter=expr)["id"].to_pylist()
    assert lancefile.dataset(uri).to_table(filter=expr)["id"].to_pylist() == want


_DECIMAL_ROWS = ("-200.0", "1.5", "3.0", "2.5", None)


def _decimal_dataset(tmp_path):
    import decimal

    import lance

    values = [None if v is None else decimal.Decimal(v) for v in _DECIMAL_ROWS]
    table = pa.table({"id": pa.array(range(len(values)), pa.int64()), "dec": pa.array(values, pa.decimal128(10, 1))})
    uri = str(tmp_path / "ds")
    lance.write_dataset(table, uri)
    return uri


@pytest.mark.interop
@pytest.mark.parametrize("expr", ["dec = -200", "dec > 1", "dec IN (3)", "dec IN (3, -200)", "dec NOT IN (3)",
                                  "1 < dec", "dec != 3", "dec >= -200"])
def test_integers_against_a_decimal_column(expr, tmp_path):
    """An integer literal against a decimal column reads as a decimal, as pylance compares
    them: Arrow widened the int64 literal past a decimal128(10, 1) column's precision and
    refused ('Precision is not great enough'), and an IN list of integers raised a bare
    ArrowInvalid (found by a helper's dataset hunt)."""
    import lance

    uri = _decimal_dataset(tmp_path)
    want = lance.dataset(uri).to_table(filter=expr)["id"].to_pylist()
    assert lancefile.dataset(uri).to_table(filter=expr)["id"].to_pylist() == want


@pytest.mark.parametrize("expr,want", [("dec = 1.50", [1]), ("dec IN (3, 1.5)", [1, 2]), ("dec IN (1.25)", []),
                                       ("dec NOT IN (3, 1.25)", [0, 1, 3]), ("dec <= 2.5", [0, 1, 3]),
                                       ("dec > -1e3", [1, 2, 3, 0])])
def test_decimal_literals_against_a_decimal_column(expr, want, tmp_path):
    """Beyond pylance (which refuses a float literal against a decimal column): the literal is
    the exact decimal written, so 1.25 equals no value of a column of scale 1."""
    uri = _decimal_dataset(tmp_path)
    assert sorted(lancefile.dataset(uri).to_table(filter=expr)["id"].to_pylist()) == sorted(want)
