"""Column projections: which fields (and which parts of nested ones) a read asks for.

A projection is ``[(top-level field, keep-tree or None)]`` in the order asked. A keep-tree
maps child field ids (in the order asked for) to their own keep-trees; None means the whole
field. Like the reference, ``["st.b", "st.a"]`` gives ``struct<b, a>``, paths may pass
through lists (``"ls.item.x"``) and packed structs, and naming a whole field after some of
its children appends the rest. Used by :class:`~lancefile.LanceFileReader` and by dataset
reads alike.

Example::

    >>> import pyarrow as pa
    >>> from lancefile.format.schema import LanceSchema
    >>> s = LanceSchema.from_arrow(pa.schema([("st", pa.struct([("a", pa.int8()), ("b", pa.int8())])), ("x", pa.int8())]))
    >>> [(f.name, keep) for f, keep in resolve(s, ["st.b", "x"])]
    [('st', {2: None}), ('x', None)]
"""

from __future__ import annotations

from .errors import ColumnNotFoundError, InvalidInputError
from .format.schema import LanceField, LanceSchema

__all__ = ["resolve", "field_path", "kept"]


def resolve(schema: LanceSchema, columns) -> list[tuple[LanceField, dict | None]]:
    """The projection of ``columns`` (None: every field, whole) over ``schema``."""
    if columns is None:
        return [(f, None) for f in schema.fields]
    if isinstance(columns, str):
        columns = [columns]
    order: list[LanceField] = []
    keeps: dict[int, dict | None] = {}
    for name in columns:
        path = field_path(schema, name)  # fields from the top down
        if path[0].id not in keeps:
            order.append(path[0])
            keeps[path[0].id] = {}
        _keep_path(keeps, path)
    return [(f, keeps[f.id] or None) for f in order]


def field_path(schema: LanceSchema, name: str) -> list[LanceField]:
    """The chain of fields named by ``"a"`` or ``"a.b.c"``."""
    if not isinstance(name, str):
        raise InvalidInputError(f"column names must be strings, not {type(name).__name__}")
    parts = name.split(".")
    level = schema.fields
    chain: list[LanceField] = []
    for i, part in enumerate(parts):
        match = [f for f in level if f.name == part]
        if not match:
            where = ".".join(parts[:i]) or "the file"
            names = ", ".join(repr(f.name) for f in level)
            raise ColumnNotFoundError(f"no column {name!r}: {where} has no field {part!r} (fields: {names})")
        chain.append(match[0])
        level = match[0].children
    return chain


def _keep_path(holder: dict, path: list[LanceField]) -> None:
    """Mark ``path`` (top-level field first) in a keep-tree."""
    f, rest = path[0], path[1:]
    node = holder[f.id]
    if node is None:
        return  # already whole
    if not rest:
        holder[f.id] = _whole(f, node)
        return
    node.setdefault(rest[0].id, {})
    _keep_path(node, rest)


def _whole(f: LanceField, node: dict) -> dict | None:
    """Keep all of ``f``, after the children already asked for (in their order)."""
    if not node or not f.children:
        return None
    by_id = {c.id: c for c in f.children}
    out = {cid: (None if sub is None else _whole(by_id[cid], sub)) for cid, sub in node.items()}
    for c in f.children:
        out.setdefault(c.id, None)
    return out


def kept(keep: dict, g: LanceField) -> bool:
    """Whether field ``g`` is named anywhere in a keep-tree (used for size estimates)."""
    stack = [keep]
    while stack:
        node = stack.pop()
        if g.id in node:
            return True
        stack.extend(v for v in node.values() if v is not None)
    return False
