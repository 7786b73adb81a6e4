"""Row filters: a ``pyarrow.compute.Expression`` (or pyarrow.parquet's DNF list), the columns
it reads, and which zones of a file it may match given their statistics.

An expression is taken apart through Arrow's own serialization of expressions (what pickling
an Expression produces: an Arrow IPC file whose schema metadata lists the tree in prefix
order and whose columns hold the literals), so literals keep their exact Arrow types. Zone
pruning is conservative: a construct it does not know keeps every zone, and the expression
itself is always evaluated on the rows read, so pruning can skip work but never change a
result.

Example::

    >>> import pyarrow.compute as pc
    >>> tree = parse(to_expression([("a", ">", 5), ("b", "in", ["x", "y"])]))
    >>> tree.name, [arg.name for arg in tree.args]
    ('and_kleene', ['greater', 'is_in'])
    >>> sorted(referenced_fields(pc.field("a") < 3))
    [('a',)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from .encodings.arrowutil import empty_table, filter_batch, unslice
from .errors import ColumnNotFoundError, InvalidInputError

__all__ = ["Node", "to_expression", "parse", "referenced_fields", "check_filter", "ZoneStats", "zones_may_match",
           "zone_outcomes", "filter_rows"]

_COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
_FLIP = {"equal": "equal", "not_equal": "not_equal", "less": "greater", "less_equal": "greater_equal",
         "greater": "less", "greater_equal": "less_equal"}


def to_expression(filters, schema: pa.Schema | None = None) -> pc.Expression | None:
    """A filter as an Expression: Expressions pass through, DNF lists are converted as
    pyarrow.parquet does, SQL text (``"id > 5 AND name LIKE 'a%'"``, as pylance takes) as
    :func:`lancefile.sqlfilter.sql_to_expression` reads it against ``schema``."""
    if filters is None:
        return None
    if isinstance(filters, pc.Expression):
        return filters
    if isinstance(filters, str):
        from .sqlfilter import sql_to_expression

        return sql_to_expression(filters, schema)
    if isinstance(filters, (list, tuple)):
        from pyarrow.parquet import filters_to_expression

        try:
            return filters_to_expression(list(filters))
        except (ValueError, TypeError, NotImplementedError, pa.ArrowException) as exc:
            raise InvalidInputError(f"bad filter {filters!r}: {exc}") from None
    raise InvalidInputError(f"a filter is a pyarrow.compute.Expression, SQL text or a list of (column, op, value) "
                            f"tuples, not {type(filters).__name__}")


@dataclass
class Node:
    """One node of an expression: a call (``name``, ``args``, ``options``), a field (``path``) or a literal."""

    kind: str  # "call", "field" or "literal"
    name: str = ""
    args: list["Node"] = field(default_factory=list)
    options: pa.Scalar | None = None
    path: tuple[str, ...] = ()
    value: pa.Scalar | None = None


_MEMO_SIZE = 64
_memo: dict[tuple, tuple] = {}  # (purpose, ids) -> (objects, result): a read parses and checks once


def _remember(purpose: str, objects: tuple, compute):
    """``compute()``, remembered for the same objects (an Expression and a schema, both
    immutable; kept alive with the entry, so their ids cannot be reused while it exists)."""
    key = (purpose,) + tuple(id(o) for o in objects)
    hit = _memo.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], objects)):
        return hit[1]
    result = compute()
    if len(_memo) >= _MEMO_SIZE:
        _memo.clear()
    _memo[key] = (objects, result)
    return result


def parse(expr: pc.Expression) -> Node | None:
    """The tree of ``expr`` (shared: never modify it), or None when its serialization is not understood."""
    return _remember("parse", (expr,), lambda: _parse(expr))


def _parse(expr: pc.Expression) -> Node | None:
    from .format.cmetadata import exported_metadata_pairs

    try:
        reduced = expr.__reduce__()
        table = ipc.open_file(reduced[1][0]).read_all()
        tokens = exported_metadata_pairs(table.schema)
    except Exception:  # any change in Arrow's private format: no pruning, still correct
        return None

    def column(index: bytes) -> pa.Scalar:
        return table.column(int(index))[0]

    # the tokens are the tree in prefix order; walked with a stack of the open calls (no
    # recursion: a chain of thousands of ORs is thousands deep), and/or chains made n-ary
    try:
        root, open_calls, pos = None, [], 0
        while pos < len(tokens):
            key, value = tokens[pos]
            pos += 1
            if key == b"call":
                open_calls.append((Node("call", name=value.decode()), value))
                continue
            if key == b"options":
                if not open_calls:
                    raise ValueError("options outside a call")
                open_calls[-1][0].options = column(value)
                continue
            if key == b"end":
                if not open_calls or open_calls[-1][1] != value:
                    raise ValueError("unbalanced call")
                done = open_calls.pop()[0]
            elif key == b"literal":
                done = Node("literal", value=column(value))
            elif key == b"field_ref":
                done = Node("field", path=(value.decode(),))
            elif key == b"nested_field_ref":
                names = []
                for _ in range(int(value)):
                    k, v = tokens[pos]
                    pos += 1
                    if k != b"field_ref":
                        raise ValueError("unexpected token in a nested field reference")
                    names.append(v.decode())
                done = Node("field", path=tuple(names))
            else:
                raise ValueError(f"unknown token {key!r}")
            if not open_calls:
                if root is not None or pos != len(tokens):
                    return None
                root = done
                continue
            parent = open_calls[-1][0]
            if parent.name in _CHAINS and done.kind == "call" and done.name == parent.name and done.options is None:
                parent.args.extend(done.args)  # (a or b) or c -> or(a, b, c): the same, Kleene or not
            else:
                parent.args.append(done)
        return root if not open_calls else None
    except (ValueError, IndexError, KeyError, UnicodeDecodeError):
        return None


_CHAINS = {"and_kleene", "and", "or_kleene", "or"}


def referenced_fields(expr: pc.Expression) -> set[tuple[str, ...]] | None:
    """Every field path ``expr`` reads; None when the expression could not be taken apart."""
    tree = parse(expr)
    if tree is None:
        return None
    out: set[tuple[str, ...]] = set()
    stack = [tree]
    while stack:
        n = stack.pop()
        if n.kind == "field":
            out.add(n.path)
        stack.extend(n.args)
    return out


def check_filter(expr: pc.Expression, schema: pa.Schema, where: str) -> set[tuple[str, ...]] | None:
    """Refuse a filter on a missing column, of the wrong types, or not boolean, naming it; returns its fields."""
    fields = _remember("check", (expr, schema), lambda: _check_filter(expr, schema, where))
    return None if fields is None else set(fields)


MAX_FILTER_DEPTH = 200  # levels of nesting a filter may have (and/or chains count as one)


def _depth(tree: Node) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((a, d + 1) for a in node.args)
    return deepest


def _walkable(expr: pc.Expression) -> Node | None:
    """The tree of ``expr`` when the recursive walks below may take it (None: too deep, or not
    understood; those constructs are left to Arrow's engine)."""
    tree = parse(expr)
    if tree is None:
        return None
    depth = _remember("depth", (expr,), lambda: _depth(tree))
    return tree if depth <= MAX_FILTER_DEPTH else None


def _check_filter(expr: pc.Expression, schema: pa.Schema, where: str) -> frozenset | None:
    tree = parse(expr)
    if tree is not None and _walkable(expr) is None:
        raise InvalidInputError(f"{where}: the filter nests {_depth(tree)} levels deep, more than the "
                                f"{MAX_FILTER_DEPTH} lancefile takes (chains of AND or OR count as one level)")
    fields = referenced_fields(expr)
    types = {}
    for path in sorted(fields or ()):
        level = schema
        for name in path:
            idx = level.get_field_index(name) if isinstance(level, pa.Schema) else (
                level.get_field_index(name) if pa.types.is_struct(level) else -1)
            if idx < 0:
                raise ColumnNotFoundError(f"{where}: the filter {expr} names column {'.'.join(path)!r}, "
                                          f"which is not in the data ({', '.join(schema.names)})")
            level = level.field(idx).type
        types[".".join(path)] = level
    try:
        probe = empty_table(schema).filter(expr)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        columns = ", ".join(f"{name!r} ({t})" for name, t in types.items())
        on = f" on column{'s' if len(types) > 1 else ''} {columns}" if types else ""
        raise InvalidInputError(f"{where}: cannot apply the filter {expr}{on}: {exc}") from None
    del probe
    return None if fields is None else frozenset(fields)


class _Unsupported(Exception):
    """A construct :func:`filter_rows` leaves to Arrow's expression engine."""


_DIRECT = _COMPARE | {"and_kleene", "or_kleene", "and", "or", "invert", "is_valid", "is_nan"}


def filter_rows(batch: pa.RecordBatch, expr: pc.Expression) -> pa.RecordBatch:
    """``batch.filter(expr)``, with the common constructs (comparisons with literals, and/or/not,
    is_in, is_null/is_valid/is_nan on top-level columns) evaluated by calling the compute
    functions the expression names, as Arrow's engine does, without its per-call set-up
    (most of the cost of filtering one zone); anything else goes to the engine."""
    tree = _walkable(expr)
    try:
        if tree is None:
            raise _Unsupported
        mask = _evaluate(tree, batch)
        if not isinstance(mask, (pa.Array, pa.ChunkedArray)) or mask.type != pa.bool_() or len(mask) != batch.num_rows:
            raise _Unsupported
    except (_Unsupported, pa.ArrowException, TypeError, ValueError, KeyError, IndexError, OverflowError):
        try:
            return unslice(batch).filter(expr)
        except pa.ArrowInvalid as exc:  # a value the filter cannot take: a division by zero, an overflow
            raise InvalidInputError(f"the filter {expr} failed on the data: {exc}") from None
    return filter_batch(batch, mask)  # null: dropped, as a filter expression drops it


def _evaluate(node: Node, batch: pa.RecordBatch):
    if node.kind == "literal":
        return node.value
    if node.kind == "field":
        if len(node.path) != 1 or batch.schema.get_field_index(node.path[0]) < 0:
            raise _Unsupported  # nested fields: how a null parent reads is the engine's business
        return batch.column(node.path[0])
    args = [_evaluate(a, batch) for a in node.args]
    if node.name in _CHAINS and node.options is None and len(args) > 2:  # a chain parse() made n-ary
        out = args[0]
        for a in args[1:]:
            out = pc.call_function(node.name, [out, a])
        return out
    if node.name in _DIRECT and node.options is None:
        return pc.call_function(node.name, args)
    opts = node.options
    if node.name == "is_null" and len(args) == 1 and opts is not None:
        return pc.is_null(args[0], nan_is_null=bool(opts["nan_is_null"].as_py()))
    if node.name == "is_in" and len(args) == 1 and opts is not None:
        behaviour = opts["null_matching_behavior"].as_py()
        if behaviour in (0, 1):  # MATCH, SKIP
            return pc.is_in(args[0], value_set=opts["value_set"].values, skip_nulls=behaviour == 1)
    raise _Unsupported


@dataclass
class ZoneStats:
    """Per-zone statistics of one column: arrays indexed by zone."""

    num_rows: np.ndarray
    null_count: np.ndarray
    nan_count: np.ndarray
    min: pa.Array  # null where unknown
    max: pa.Array


def zones_may_match(expr: pc.Expression, num_zones: int,
                    stats_for: Callable[[tuple[str, ...]], ZoneStats | None]) -> np.ndarray:
    """Which zones may hold a row for which ``expr`` is true (never False for one that does)."""
    return zone_outcomes(expr, num_zones, stats_for)[0]


def zone_outcomes(expr: pc.Expression, num_zones: int,
                  stats_for: Callable[[tuple[str, ...]], ZoneStats | None]) -> tuple[np.ndarray, np.ndarray]:
    """(may match, all match) per zone: whether some row may make ``expr`` true (never False
    for a zone where one does), and whether every row certainly does (never True for a zone
    where one does not: such zones need no filtering)."""
    tree = _walkable(expr)
    if tree is None:
        return np.ones(num_zones, dtype=bool), np.zeros(num_zones, dtype=bool)
    can_true, can_false, can_null = _Pruner(num_zones, stats_for).visit(tree)
    return np.asarray(can_true, dtype=bool), np.asarray(~can_false & ~can_null, dtype=bool)


class _Pruner:
    """(can be true, can be false, can be null) per zone, for each node of an expression.

    Each is an over-approximation: False only where no row of the zone can give that outcome.
    """

    def __init__(self, n: int, stats_for) -> None:
        self.n = n
        self.stats_for = stats_for
        self.all = np.ones(n, dtype=bool)
        self.none = np.zeros(n, dtype=bool)

    def unknown(self):
        return self.all, self.all, self.all

    def visit(self, node: Node):
        try:
            out = self._visit(node)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return self.unknown()
        return out

    def _visit(self, node: Node):
        if node.kind == "literal":
            v = node.value
            if pa.types.is_boolean(v.type):
                if not v.is_valid:
                    return self.none, self.none, self.all
                return (self.all, self.none, self.none) if v.as_py() else (self.none, self.all, self.none)
            return self.unknown()
        if node.kind == "field":
            st = self.stats_for(node.path)
            if st is None or not pa.types.is_boolean(st.min.type):
                return self.unknown()
            real = st.num_rows - st.null_count > 0
            return (real & _known(pc.equal(st.max, True)), real & _known(pc.equal(st.min, False)),
                    st.null_count > 0)
        name, args = node.name, node.args
        if name in ("and_kleene", "and", "or_kleene", "or"):
            parts = [self.visit(a) for a in args]
            ts, fs, ns = ([p[k] for p in parts] for k in range(3))
            null = np.logical_or.reduce(ns)  # (Kleene: false AND null is false; still a safe guess)
            if name.startswith("and"):
                return np.logical_and.reduce(ts), np.logical_or.reduce(fs), null
            return np.logical_or.reduce(ts), np.logical_and.reduce(fs), null
        if name == "invert" and len(args) == 1:
            t, f, n = self.visit(args[0])
            return f, t, n
        if name in _COMPARE and len(args) == 2:
            a, b = args
            if a.kind == "literal" and b.kind == "field":
                a, b, name = b, a, _FLIP[name]
            if a.kind == "field" and b.kind == "literal":
                st = self.stats_for(a.path)
                if st is None:
                    return self.unknown()
                if not b.value.is_valid:  # compared with null: every row is null
                    return self.none, self.none, self.all
                return self._compare(name, st, b.value) + (st.null_count > 0,)
            return self.unknown()
        if name in ("is_null", "is_valid") and len(args) == 1 and args[0].kind == "field":
            st = self.stats_for(args[0].path)
            if st is None:
                return self.unknown()
            opts = node.options.as_py() if node.options is not None else None
            nan_is_null = name == "is_null" and isinstance(opts, dict) and bool(opts.get("nan_is_null"))
            nulls = st.null_count + (st.nan_count if nan_is_null else 0)
            others = st.num_rows - nulls
            return (nulls > 0, others > 0, self.none) if name == "is_null" else (others > 0, nulls > 0, self.none)
        if name == "is_nan" and len(args) == 1 and args[0].kind == "field":
            st = self.stats_for(args[0].path)
            if st is None:
                return self.unknown()
            return st.nan_count > 0, st.num_rows - st.null_count - st.nan_count > 0, st.null_count > 0
        if name == "is_in" and len(args) == 1 and args[0].kind == "field" and node.options is not None:
            st = self.stats_for(args[0].path)
            got = None if st is None else self._is_in(st, node.options)
            return self.unknown() if got is None else got + (self.none,)  # MATCH / SKIP: never null
        return self.unknown()

    def _compare(self, op: str, st: ZoneStats, v: pa.Scalar):
        """(can be true, can be false) of ``field <op> v`` (v not null)."""
        nonnull = st.num_rows - st.null_count
        if pa.types.is_floating(v.type) and np.isnan(v.as_py()):
            return nonnull > 0, nonnull > 0
        real = nonnull - st.nan_count > 0
        nan = st.nan_count > 0
        lo, hi = st.min, st.max
        if op == "greater":
            return real & _known(pc.greater(hi, v)), (real & _known(pc.less_equal(lo, v))) | nan
        if op == "greater_equal":
            return real & _known(pc.greater_equal(hi, v)), (real & _known(pc.less(lo, v))) | nan
        if op == "less":
            return real & _known(pc.less(lo, v)), (real & _known(pc.greater_equal(hi, v))) | nan
        if op == "less_equal":
            return real & _known(pc.less_equal(lo, v)), (real & _known(pc.greater(hi, v))) | nan
        inside = real & _known(pc.less_equal(lo, v)) & _known(pc.greater_equal(hi, v))
        only = real & ~_known(pc.and_(pc.equal(lo, v), pc.equal(hi, v)), unknown=False)
        if op == "equal":
            return inside, only | nan
        return only | nan, inside  # not_equal

    def _is_in(self, st: ZoneStats, options: pa.Scalar):
        """(can be true, can be false) of ``is_in`` (None: not understood)."""
        opts = options.as_py()
        values = options["value_set"].values if hasattr(options["value_set"], "values") else None
        if values is None or not isinstance(opts, dict):
            return None
        behaviour = opts.get("null_matching_behavior", 0)
        has_null = values.null_count > 0
        values = values.drop_null()
        nonnull = st.num_rows - st.null_count
        real = nonnull - st.nan_count > 0
        nan = st.nan_count > 0
        ct = self.none.copy()
        for v in values:  # value sets of filters are small
            if pa.types.is_floating(v.type) and np.isnan(v.as_py()):
                ct |= nan
                continue
            ct |= real & _known(pc.less_equal(st.min, v)) & _known(pc.greater_equal(st.max, v))
        nulls = st.null_count > 0
        if behaviour == 0 and has_null:  # MATCH: a null row matches a null in the set
            ct |= nulls
        elif behaviour not in (0, 1):  # EMIT_NULL / INCONCLUSIVE: keep it simple, stay safe
            return None
        single = _known(pc.equal(st.min, st.max), unknown=False)
        if pa.types.is_floating(st.min.type):
            # is_in tells -0.0 from 0.0 (by bits) where min == max does not: a zone of zeros
            # (bounds may be -0.0 and 0.0) holds values is_in may see as different
            single &= ~_known(pc.equal(st.min, 0), unknown=True)
        null_is_false = not (behaviour == 0 and has_null)  # MATCH without a null in the set, or SKIP
        cf = (real & ~single) | nan | (nulls & null_is_false)
        if len(values):
            member = _known(pc.is_in(st.min, value_set=values.cast(st.min.type, safe=False)), unknown=False)
            cf |= real & single & ~member
        else:
            cf |= real
        return ct, cf


def _known(result, unknown: bool = True) -> np.ndarray:
    """A boolean compute result as numpy, with nulls (unknown bounds) read as ``unknown``."""
    return np.asarray(pc.fill_null(result, unknown).to_numpy(zero_copy_only=False), dtype=bool)
