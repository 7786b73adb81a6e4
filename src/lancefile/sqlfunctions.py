"""The SQL functions a filter may call (``lower(name) = 'ab'``, ``CAST(x AS double) / 2 > 1``),
as pylance's SQL names them, each as the Arrow compute function that gives the same answer.

:mod:`lancefile.sqlfilter` parses a call to ``("func", name, [arguments])`` and asks
:func:`call` for its expression. A function that is not here is refused with the list of
those that are.

Example::

    >>> import pyarrow as pa
    >>> from lancefile.sqlfilter import sql_to_expression
    >>> t = pa.table({"s": [" Ab", "ab", None], "x": [-3, 2, 5]})
    >>> t.filter(sql_to_expression("lower(ltrim(s)) = 'ab' AND abs(x) > 2", t.schema))["x"].to_pylist()
    [-3]
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidInputError

__all__ = ["FUNCTIONS", "CAST_TYPES", "NOT_LITERAL", "call", "number_kind"]

# name -> (fewest arguments, most arguments (None: any), arguments that must be literals)
_ARITY = {
    "lower": (1, 1, ()), "upper": (1, 1, ()), "abs": (1, 1, ()),
    "length": (1, 1, ()), "char_length": (1, 1, ()), "character_length": (1, 1, ()), "octet_length": (1, 1, ()),
    "ltrim": (1, 2, (1,)), "rtrim": (1, 2, (1,)), "btrim": (1, 2, (1,)),
    "starts_with": (2, 2, (1,)), "ends_with": (2, 2, (1,)), "regexp_like": (2, 2, (1,)),
    "replace": (3, 3, (1, 2)), "reverse": (1, 1, ()), "concat": (1, None, ()), "coalesce": (1, None, ()),
    "isnan": (1, 1, ()), "sqrt": (1, 1, ()), "round": (1, 2, (1,)),
    "array_length": (1, 1, ()), "cardinality": (1, 1, ()),
}
FUNCTIONS = tuple(sorted(_ARITY))

# CAST(x AS <name>): the type names pylance takes (``INT UNSIGNED`` and the like too)
CAST_TYPES = {
    "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "integer": pa.int32(), "bigint": pa.int64(),
    "tinyint unsigned": pa.uint8(), "smallint unsigned": pa.uint16(), "int unsigned": pa.uint32(),
    "integer unsigned": pa.uint32(), "bigint unsigned": pa.uint64(),
    "float": pa.float32(), "real": pa.float32(), "double": pa.float64(),
    "string": pa.string(), "varchar": pa.string(), "text": pa.string(), "boolean": pa.bool_(), "bool": pa.bool_(),
    "date": pa.date32(),
}


def _text(v, name: str, k: int) -> str:
    if not isinstance(v, str):
        raise InvalidInputError(f"bad SQL filter: argument {k + 1} of {name}() must be a 'string', not {v!r}")
    return v


def call(name: str, args: list, literals: list) -> pc.Expression:
    """The expression of ``name(args...)``; ``literals``: each argument's Python value when it is
    a literal, else :data:`NOT_LITERAL`."""
    low, high, must = _ARITY[name]
    if len(args) < low or (high is not None and len(args) > high):
        want = f"{low}" if low == high else f"{low} to {high}" if high is not None else f"{low} or more"
        raise InvalidInputError(f"bad SQL filter: {name}() takes {want} argument{'s' if high != 1 else ''}, "
                                f"not {len(args)}")
    for k in must:
        if k < len(args) and literals[k] is NOT_LITERAL:
            raise InvalidInputError(f"bad SQL filter: argument {k + 1} of {name}() must be a literal")
    x = args[0]
    if name == "lower":
        return pc.utf8_lower(x)
    if name == "upper":
        return pc.utf8_upper(x)
    if name == "abs":
        return pc.abs_checked(x)
    if name in ("length", "char_length", "character_length"):
        return pc.utf8_length(x)
    if name == "octet_length":
        return pc.binary_length(x)
    if name in ("ltrim", "rtrim", "btrim"):  # spaces only, or the characters given
        chars = _text(literals[1], name, 1) if len(args) > 1 else " "
        return getattr(pc, {"ltrim": "utf8_ltrim", "rtrim": "utf8_rtrim", "btrim": "utf8_trim"}[name])(
            x, characters=chars)
    if name == "starts_with":
        return pc.starts_with(x, pattern=_text(literals[1], name, 1))
    if name == "ends_with":
        return pc.ends_with(x, pattern=_text(literals[1], name, 1))
    if name == "regexp_like":
        return pc.match_substring_regex(x, pattern=_text(literals[1], name, 1))
    if name == "replace":
        return pc.replace_substring(x, pattern=_text(literals[1], name, 1), replacement=_text(literals[2], name, 2))
    if name == "reverse":
        return pc.utf8_reverse(x)
    if name == "concat":  # a null argument counts as '' (the reference's concat)
        return pc.binary_join_element_wise(*args, pc.scalar(""), null_handling="replace", null_replacement="")
    if name == "coalesce":
        return pc.coalesce(*args)
    if name == "isnan":
        return pc.is_nan(x)
    if name == "sqrt":
        return pc.sqrt(x.cast(pa.float64(), safe=False))
    if name == "round":  # halves away from zero, as the reference
        digits = literals[1] if len(args) > 1 else 0
        if not isinstance(digits, int) or isinstance(digits, bool):
            raise InvalidInputError(f"bad SQL filter: argument 2 of round() must be an integer, not {digits!r}")
        return pc.round(x.cast(pa.float64(), safe=False), ndigits=digits, round_mode="half_towards_infinity")
    if name in ("array_length", "cardinality"):
        return pc.list_value_length(x)
    raise AssertionError(name)


class _NotLiteral:
    def __repr__(self) -> str:
        return "a column or an expression"


NOT_LITERAL = _NotLiteral()


def number_kind(name: str, kinds: list) -> str | None:
    """"int" or "float" for what ``name`` returns given its arguments' kinds, None if unknown."""
    if name in ("length", "char_length", "character_length", "octet_length", "array_length", "cardinality"):
        return "int"
    if name in ("sqrt", "round"):
        return "float"
    if name == "abs":
        return kinds[0]
    return None
