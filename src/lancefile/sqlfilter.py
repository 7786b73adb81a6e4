"""SQL ``WHERE`` conditions as filters: ``"id > 10 AND name LIKE 'a%'"``, as pylance takes them.

pylance's ``to_table(filter=...)``, ``count_rows(filter=...)`` and ``delete(...)`` take SQL
text; :func:`sql_to_expression` turns the same text into a ``pyarrow.compute.Expression``, which
every lancefile read evaluates (and prunes zones with, through the files' statistics).

Supported, with SQL's meaning:

* comparisons ``= == != <> < <= > >=`` between columns, literals and ``+ - * / %`` arithmetic
  (``/`` of two integers truncates toward zero; ``%`` is the remainder of that division, with
  the sign of the dividend; an integer division by zero is an error, and so is an integer
  overflow, where the reference wraps around);
* ``AND``, ``OR``, ``NOT`` and parentheses; a boolean column on its own;
* ``x IS [NOT] NULL``, ``x IS [NOT] TRUE``, ``x IS [NOT] FALSE`` (never unknown: a null is
  neither), ``x [NOT] IN (v, ...)``, ``x [NOT] BETWEEN a AND b``, ``x [NOT] LIKE 'p%_'``,
  ``x [NOT] ILIKE 'p%_'`` (ignoring case);
* literals: integers, decimals (``1.5``, ``2e3``), ``'strings'`` (``''`` for a quote), ``TRUE``,
  ``FALSE``, ``NULL``, ``DATE '2024-01-31'``, ``TIMESTAMP '2024-01-31 12:00:00'``;
* the functions of :mod:`lancefile.sqlfunctions` (``lower``, ``upper``, ``abs``, ``length``,
  ``ltrim``/``rtrim``/``btrim``, ``starts_with``, ``ends_with``, ``regexp_like``, ``replace``,
  ``reverse``, ``concat``, ``coalesce``, ``isnan``, ``sqrt``, ``round``, ``array_length``,
  ``cardinality``...) and ``CAST(x AS type)``, as pylance names them;
* column names as words, in double quotes or backquotes (``"my col"``, ```order```), and
  ``a.b`` for field ``b`` of struct column ``a``.

Floats order as in the reference (IEEE total order): a NaN equals a NaN and is greater than
every number, so ``f > 2`` keeps the NaNs of ``f`` and ``f < 2`` does not (Arrow's own
comparisons say false for both). The reference orders a NaN with its sign bit set (``-f`` of a
NaN) before every number; here every NaN sorts last.

Beyond the reference: a string compared with a date, time, timestamp or decimal column is read
as a value of that column's type (``ts > '2024-01-01'``; the reference wants
``TIMESTAMP '2024-01-01 00:00:00'``), identifiers may be double-quoted, and an IN list may mix
integers and decimals.

SQL's three-valued logic is kept: a comparison with a null is unknown, and a row is kept only
where the whole condition is true, so ``NOT (x = 1)`` drops the rows where ``x`` is null, and
``x NOT IN (1, NULL)`` keeps no row. (The condition is put in negation normal form: each ``NOT``
moves down to a comparison, which it reverses.)

Example::

    >>> import pyarrow as pa
    >>> t = pa.table({"id": [1, 2, 3, None], "name": ["ab", "b", None, "ac"]})
    >>> t.filter(sql_to_expression("id >= 2 OR name LIKE 'a%'", t.schema)).to_pydict()
    {'id': [1, 2, 3, None], 'name': ['ab', 'b', None, 'ac']}
    >>> t.filter(sql_to_expression("NOT (id IN (1, 2))", t.schema))["id"].to_pylist()
    [3]
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidInputError
from .sqlfunctions import CAST_TYPES, FUNCTIONS, NOT_LITERAL, call, number_kind
from .sqlliterals import as_decimal, both_zeros, literal_array, takes_text

__all__ = ["sql_to_expression"]

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<str>'(?:[^']|'')*')
  | (?P<qid>"(?:[^"]|"")+"|`(?:[^`]|``)+`)
  | (?P<word>[^\W\d]\w*)
  | (?P<op><=|>=|<>|!=|==|[=<>(),.+\-*/%])
""", re.VERBOSE)

_KEYWORDS = {"AND", "OR", "NOT", "IS", "NULL", "IN", "BETWEEN", "LIKE", "ILIKE", "TRUE", "FALSE", "DATE", "TIMESTAMP"}
_CMP = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_NEGATED = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_ARROW_CMP = {"=": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
              ">=": "greater_equal"}
_ARITH = {"+": "add", "-": "subtract", "*": "multiply"}
_CONDITIONS = {"or", "and", "not", "cmp", "isnull", "istrue", "in", "between", "like", "bool"}
MAX_DEPTH = 200  # nesting the parser follows before it calls the condition too deep


@dataclass(frozen=True)
class _Tok:
    kind: str  # num, str, id, kw, op, end
    text: str  # upper case for a keyword
    pos: int
    raw: str = ""  # as written


def _tokens(text: str) -> list[_Tok]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _error(text, pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        tok = m.group()
        raw = tok
        if kind == "word":
            kind = "kw" if tok.upper() in _KEYWORDS else "id"
            tok = tok.upper() if kind == "kw" else tok
        elif kind == "qid":
            kind, q = "id", tok[0]
            tok = raw = tok[1:-1].replace(q + q, q)
        if kind != "ws":
            out.append(_Tok(kind, tok, pos, raw))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


def _error(text: str, pos: int, what: str) -> InvalidInputError:
    return InvalidInputError(f"bad SQL filter {text!r}: {what} at position {pos}")


# -- the syntax tree ----------------------------------------------------------------------------
# ("or", [a, b, ...]) ("and", [...]) ("not", x) ("cmp", op, a, b) ("isnull", x, negated)
# ("istrue", x, TRUE?, negated) ("in", x, [values], negated) ("between", x, lo, hi, negated)
# ("like", x, pattern, negated, ignore case?)
# ("arith", op, a, b) ("neg", a) ("field", (names...)) ("lit", python value, type or None)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def take(self, kind: str, text: str | None = None) -> _Tok | None:
        t = self.tok
        if t.kind == kind and (text is None or t.text == text):
            self.i += 1
            return t
        return None

    def need(self, kind: str, text: str | None = None, what: str | None = None) -> _Tok:
        t = self.take(kind, text)
        if t is None:
            got = "the end" if self.tok.kind == "end" else repr(self.tok.text)
            raise _error(self.text, self.tok.pos, f"expected {what or text or kind}, found {got}")
        return t

    def parse(self):
        if self.tok.kind == "end":
            raise _error(self.text, 0, "the condition is empty")
        tree = self.or_()
        if self.tok.kind != "end":
            raise _error(self.text, self.tok.pos, f"unexpected {self.tok.text!r}")
        return tree

    def _deeper(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _error(self.text, self.tok.pos, f"the condition nests deeper than {MAX_DEPTH} levels")

    def or_(self):
        parts = [self.and_()]
        while self.take("kw", "OR"):
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def and_(self):
        parts = [self.not_()]
        while self.take("kw", "AND"):
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def not_(self):
        if self.take("kw", "NOT"):
            self._deeper()
            inner = self.not_()
            self.depth -= 1
            return ("not", inner)
        return self.predicate()

    def predicate(self):
        left = self.sum_()
        t = self.tok
        if t.kind == "op" and t.text in _CMP:
            self.i += 1
            return ("cmp", _CMP[t.text], left, self.sum_())
        if self.take("kw", "IS"):
            negated = bool(self.take("kw", "NOT"))
            for word in ("TRUE", "FALSE"):
                if self.take("kw", word):
                    return ("istrue", left, word == "TRUE", negated)
            self.need("kw", "NULL", "NULL, TRUE or FALSE after IS [NOT]")
            return ("isnull", left, negated)
        negated = bool(self.take("kw", "NOT"))
        if self.take("kw", "IN"):
            self.need("op", "(")
            values = [self.sum_()]
            while self.take("op", ","):
                values.append(self.sum_())
            self.need("op", ")")
            return ("in", left, values, negated)
        if self.take("kw", "BETWEEN"):
            lo = self.sum_()
            self.need("kw", "AND", "AND (BETWEEN a AND b)")
            return ("between", left, lo, self.sum_(), negated)
        for word in ("LIKE", "ILIKE"):
            if self.take("kw", word):
                pat = self.need("str", what=f"a 'pattern' after {word}")
                return ("like", left, _unquote(pat.text), negated, word == "ILIKE")
        if negated:
            raise _error(self.text, self.tok.pos, "expected IN, BETWEEN, LIKE or ILIKE after NOT")
        return ("bool", left)

    def sum_(self):
        left, depth = self.product(), self.depth
        while self.tok.kind == "op" and self.tok.text in "+-":
            op = self.tok.text
            self.i += 1
            self._deeper()  # each operator nests the tree one level deeper
            left = ("arith", op, left, self.product())
        self.depth = depth
        return left

    def product(self):
        left, depth = self.unary(), self.depth
        while self.tok.kind == "op" and self.tok.text in "*/%":
            op = self.tok.text
            self.i += 1
            self._deeper()
            left = ("arith", op, left, self.unary())
        self.depth = depth
        return left

    def unary(self):
        if self.take("op", "-"):
            self._deeper()
            inner = self.unary()
            self.depth -= 1
            if inner[0] == "lit" and isinstance(inner[1], (int, float)) and not isinstance(inner[1], bool):
                return ("lit", -inner[1], None)
            return ("neg", inner)
        return self.primary()

    def _call(self, name_tok: _Tok):
        """``name(arg, ...)`` (see :mod:`lancefile.sqlfunctions`) or ``CAST(x AS type)``, the name
        and ``(`` not yet taken."""
        name = name_tok.raw.lower()
        self.i += 2
        self._deeper()
        if name == "cast":
            x = _value_of(self.or_())
            as_ = self.take("id")
            if as_ is None or as_.raw.upper() != "AS":
                raise _error(self.text, self.tok.pos, "expected AS in CAST(x AS type)")
            words = []
            while self.tok.kind in ("id", "kw"):
                words.append(self.tok.raw.lower())
                self.i += 1
            type_name = " ".join(words)
            if type_name not in CAST_TYPES:
                raise _error(self.text, as_.pos, f"CAST to {type_name or 'nothing'!r}: the types are "
                                                 f"{', '.join(sorted(CAST_TYPES))}")
            self.need("op", ")", "')' after CAST(x AS type")
            self.depth -= 1
            return ("cast", x, type_name)
        if name not in FUNCTIONS:
            raise _error(self.text, name_tok.pos, f"unknown function {name}(); the functions are "
                                                  f"{', '.join(FUNCTIONS)} and CAST")
        args = []
        if not self.take("op", ")"):
            args.append(_value_of(self.or_()))
            while self.take("op", ","):
                args.append(_value_of(self.or_()))
            self.need("op", ")", f"')' or ',' in {name}()")
        self.depth -= 1
        return ("func", name, args)

    def primary(self):
        t = self.tok
        if self.take("op", "("):
            self._deeper()
            inner = self.or_()
            self.depth -= 1
            self.need("op", ")")
            return _value_of(inner)  # a value in parentheses: (id + 1) * 2
        if self.take("num"):
            text = t.text
            if any(c in text for c in ".eE"):
                return ("lit", float(text), None)
            return ("lit", int(text), None)
        if self.take("str"):
            return ("lit", _unquote(t.text), None)
        if t.kind == "kw":
            if self.take("kw", "TRUE"):
                return ("lit", True, None)
            if self.take("kw", "FALSE"):
                return ("lit", False, None)
            if self.take("kw", "NULL"):
                return ("lit", None, None)
            if t.text in ("DATE", "TIMESTAMP") and self.toks[self.i + 1].kind == "str":
                self.i += 1
                s = self.need("str")
                return ("lit", _typed(self.text, t.text, _unquote(s.text), s.pos), None)
        nxt = self.toks[min(self.i + 1, len(self.toks) - 1)]
        if t.kind == "id" and nxt.kind == "op" and nxt.text == "(" and self.text[t.pos] not in "\"`":
            return self._call(t)
        if self.take("id") or (t.text in ("DATE", "TIMESTAMP") and self.take("kw")):  # a column named date
            names = [t.raw]
            while self.take("op", "."):
                sub = self.take("id") or self.take("kw")  # a field may be named like a keyword
                if sub is None:
                    self.need("id", what="a field name after '.'")
                names.append(sub.raw)
            return ("field", tuple(names))
        got = "the end" if t.kind == "end" else repr(t.text)
        raise _error(self.text, t.pos, f"expected a column, a value or '(', found {got}")


def _value_of(node):
    """A value in parentheses or as an argument parses as ``("bool", value)``: the value."""
    return node[1] if node[0] == "bool" and node[1][0] not in _CONDITIONS else node


def _unquote(s: str) -> str:
    return s[1:-1].replace("''", "'")


def _typed(text: str, kind: str, value: str, pos: int):
    try:
        if kind == "DATE":
            return _dt.date.fromisoformat(value.strip())
        return _dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise _error(text, pos, f"{value!r} is not a {kind.lower()}") from None


# -- negation normal form and the expression ------------------------------------------------


class _Builder:
    def __init__(self, schema: pa.Schema | None) -> None:
        self.schema = schema

    def cond(self, node, negated: bool = False) -> pc.Expression:
        """``node`` (or NOT ``node``) as an expression that is true exactly where SQL says true."""
        kind = node[0]
        if kind == "not":
            return self.cond(node[1], not negated)
        if kind in ("and", "or"):
            conj = (kind == "and") != negated  # De Morgan
            parts = [self.cond(p, negated) for p in node[1]]
            while len(parts) > 1:  # a balanced tree: "a = 1 OR a = 2 OR ..." of thousands nests log2 deep
                pairs = [(x & y) if conj else (x | y) for x, y in zip(parts[::2], parts[1::2])]
                parts = pairs + parts[len(pairs) * 2:]
            return parts[0]
        if kind == "cmp":
            op = _NEGATED[node[1]] if negated else node[1]
            a, b = self.value(node[2]), self.value(node[3])
            if _is_null(a) or _is_null(b):
                return pc.scalar(False)  # unknown either way: never true
            a, b = self._coerce(node[2], a, node[3], b)
            return self._compare(op, a, self._nan_kind(node[2]), b, self._nan_kind(node[3]))
        if kind == "isnull":
            x = self.value(node[1])
            return x.is_valid() if node[2] != negated else x.is_null()
        if kind == "in":
            return self._in(node, negated)
        if kind == "between":
            x, lo, hi = node[1], node[2], node[3]
            inside = ("and", [("cmp", ">=", x, lo), ("cmp", "<=", x, hi)])
            return self.cond(inside, negated != node[4])
        if kind == "like":
            x = self.value(node[1])
            m = pc.match_like(x, pattern=node[2], ignore_case=node[4])
            return ~m if negated != node[3] else m  # invert keeps a null (unknown) null
        if kind == "istrue":  # never unknown: a null (or unknown condition) is neither true nor false
            inner = node[1] if node[1][0] in _CONDITIONS else ("bool", node[1])
            m = pc.coalesce(self.cond(inner, not node[2]), pc.scalar(False))
            return ~m if negated != node[3] else m
        if kind == "bool":
            inner = node[1]
            if inner[0] in _CONDITIONS:  # a condition in parentheses
                return self.cond(inner, negated)
            if inner[0] == "lit":
                if inner[1] is None:
                    return pc.scalar(False)
                if not isinstance(inner[1], bool):
                    raise InvalidInputError(f"bad SQL filter: {inner[1]!r} is not a condition")
                return pc.scalar(inner[1] != negated)
            x = self.value(inner)
            return ~x if negated else x
        raise InvalidInputError(f"bad SQL filter: a value ({_describe(node)}) is not a condition")

    @staticmethod
    def _compare(op: str, a, a_kind: str, b, b_kind: str) -> pc.Expression:
        """``a op b`` in the reference's order of floats: a NaN equals a NaN and is greater than
        every number (IEEE total order), where Arrow's comparisons say false. True exactly where
        that comparison is; null where a side is null. A kind is "nan" (may be NaN), "lit" (a
        literal: never null) or "" (neither)."""
        if op in (">", ">="):
            a, a_kind, b, b_kind, op = b, b_kind, a, a_kind, "<" if op == ">" else "<="
        plain = getattr(pc, _ARROW_CMP[op])(a, b)
        if "nan" not in (a_kind, b_kind):
            return plain
        na = pc.is_nan(a) if a_kind == "nan" else None
        nb = pc.is_nan(b) if b_kind == "nan" else None
        if op in ("<", "<="):  # a number below a NaN (and, for <=, a NaN at a NaN)
            if nb is None:
                return plain
            if na is not None:
                return plain | (nb if op == "<=" else (~na & nb))  # null a: ~na and na are null
            return plain | (nb if a_kind == "lit" else (nb & pc.is_valid(a)))  # a null a stays unknown
        both = None if na is None or nb is None else (na & nb)
        if op == "=":
            return plain if both is None else plain | both
        return plain if both is None else ~(pc.equal(a, b) | both)  # "!=": NaN != NaN is false

    def _nan_kind(self, node) -> str:
        """"nan" where ``node`` can be NaN (a float column, or arithmetic on one), "lit" for a
        literal, else ""."""
        if node[0] == "lit":
            return "lit"
        if node[0] == "field":
            t = self._field_type(node)
            return "nan" if t is not None and pa.types.is_floating(t) else ""
        if node[0] == "arith":
            return "nan" if "nan" in (self._nan_kind(node[2]), self._nan_kind(node[3])) else ""
        if node[0] == "neg":
            return "nan" if self._nan_kind(node[1]) == "nan" else ""
        if node[0] == "cast":
            return "nan" if pa.types.is_floating(CAST_TYPES[node[2]]) else ""
        if node[0] == "func":
            if node[1] in ("sqrt", "round"):
                return "nan"
            if node[1] in ("abs", "coalesce"):
                return "nan" if "nan" in [self._nan_kind(a) for a in node[2]] else ""
        return ""

    def _in(self, node, negated: bool) -> pc.Expression:
        x_node, items, not_in = node[1], node[2], node[3]
        negated = negated != not_in
        if any(i[0] != "lit" for i in items):  # columns or arithmetic in the list: equalities
            parts = [("cmp", "=", x_node, i) for i in items]
            return self.cond(("or", parts), negated)
        values = [i[1] for i in items]
        has_null = any(v is None for v in values)
        values = [v for v in values if v is not None]
        x = self.value(x_node)
        if negated:
            if has_null:  # x NOT IN (..., NULL) is never true
                return pc.scalar(False)
            if not values:
                return x.is_valid()
        elif not values:
            return pc.scalar(False)
        target = self._field_type(x_node)
        arr = both_zeros(literal_array(values, target))
        member = pc.is_in(x, value_set=arr, skip_nulls=True)
        return (~member & x.is_valid()) if negated else member

    def value(self, node) -> pc.Expression:
        kind = node[0]
        if kind == "field":
            return pc.field(*node[1])
        if kind == "lit":
            return pc.scalar(node[1])
        if kind == "arith":
            a, b = self.value(node[2]), self.value(node[3])
            if node[1] in "/%":
                return self._divide(node, a, b)
            return getattr(pc, _ARITH[node[1]] + "_checked")(a, b)
        if kind == "neg":
            return pc.negate_checked(self.value(node[1]))
        if kind == "func":
            return call(node[1], [self.value(a) for a in node[2]],
                        [a[1] if a[0] == "lit" else NOT_LITERAL for a in node[2]])
        if kind == "cast":
            return self.value(node[1]).cast(CAST_TYPES[node[2]])
        raise InvalidInputError(f"bad SQL filter: a condition ({_describe(node)}) is used as a value")

    def _divide(self, node, a, b) -> pc.Expression:
        """``a / b`` (``%``: the remainder) as the reference computes it. Integers: division
        truncated toward zero, a zero divisor an error; the remainder ``a - (a / b) * b`` has the
        sign of ``a`` (C's ``%``). Otherwise both sides as float64: IEEE division (a zero divisor
        gives an infinity or NaN), and the remainder of ``fmod``, ``a - trunc(a / b) * b`` (``a``
        itself for a finite ``a`` over an infinite ``b``). Arrow has no remainder function."""
        kinds = {self._number_kind(node[2]), self._number_kind(node[3])}
        if kinds == {"int"} or None in kinds:  # (an unknown type: Arrow's own rules)
            quotient = pc.divide_checked(a, b)
            if node[1] == "/":
                return quotient
            return pc.subtract_checked(a, pc.multiply_checked(quotient, b))
        a, b = a.cast(pa.float64(), safe=False), b.cast(pa.float64(), safe=False)  # big integers round
        if node[1] == "/":
            return pc.divide(a, b)
        rem = pc.subtract(a, pc.multiply(pc.trunc(pc.divide(a, b)), b))
        return pc.if_else(pc.is_inf(b) & pc.is_finite(a), a, rem)

    def _number_kind(self, node) -> str | None:
        """"int" where ``node`` is an integer (a column, a literal, or arithmetic of those),
        "float" where it may be a float, None where the schema does not say."""
        kind = node[0]
        if kind == "lit":
            v = node[1]
            return "float" if isinstance(v, float) else "int" if isinstance(v, int) else None
        if kind == "field":
            t = self._field_type(node)
            return None if t is None else "int" if pa.types.is_integer(t) else "float"
        if kind == "neg":
            return self._number_kind(node[1])
        if kind == "arith":
            kinds = {self._number_kind(node[2]), self._number_kind(node[3])}
            return "int" if kinds == {"int"} else None if None in kinds else "float"
        if kind == "cast":
            t = CAST_TYPES[node[2]]
            return "int" if pa.types.is_integer(t) else "float" if pa.types.is_floating(t) else None
        if kind == "func":
            return number_kind(node[1], [self._number_kind(a) for a in node[2]])
        return None

    def _field_type(self, node) -> pa.DataType | None:
        if node[0] != "field" or self.schema is None:
            return None
        level = self.schema
        for name in node[1]:
            if not (isinstance(level, pa.Schema) or pa.types.is_struct(level)):
                return None
            idx = level.get_field_index(name)
            if idx < 0:
                return None
            level = level.field(idx).type
        return level

    def _coerce(self, na, a, nb, b):
        """A string, date or timestamp literal compared with a temporal or decimal column is read
        as a value of that column's type (``ts > '2024-01-01'``)."""
        for lit, col, left in ((nb, na, True), (na, nb, False)):
            t = self._field_type(col)
            if lit[0] != "lit" or t is None or not takes_text(t):
                continue
            if isinstance(lit[1], (str, _dt.date)):
                s = literal_array([lit[1]], t)[0]
                return (a, pc.scalar(s)) if left else (pc.scalar(s), b)
            number = as_decimal(lit[1]) if pa.types.is_decimal(t) else None
            if number is not None:  # a number against a decimal column: as the decimal it reads as
                return (a, pc.scalar(number)) if left else (pc.scalar(number), b)
        return a, b


def _is_null(e: pc.Expression) -> bool:
    return e.equals(pc.scalar(None))


def _describe(node) -> str:
    if node[0] == "field":
        return ".".join(node[1])
    if node[0] == "lit":
        return repr(node[1])
    return node[0]


def sql_to_expression(text: str, schema: pa.Schema | None = None) -> pc.Expression:
    """The SQL condition ``text`` as a ``pyarrow.compute.Expression``.

    ``schema`` (the data's) lets a string literal compared with a date, timestamp or decimal
    column be read as that type. Raises :class:`~lancefile.InvalidInputError`, naming the
    position, on a condition it cannot read.

    Example::

        >>> str(sql_to_expression("a = 1 AND NOT b IS NULL"))
        '((a == 1) and is_valid(b))'
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"a SQL filter is a string, not {type(text).__name__}")
    return _Builder(schema).cond(_Parser(text).parse())
