"""Mutations of Lance files: each a JSON-able spec, generated from a seed and applied exactly.

A generator takes a ``random.Random`` and a :class:`~lancefile.fuzz.filemap.FileMap` and gives a
:class:`Mutation` (or None when the file has nothing of that kind); :func:`apply` turns the
spec into the mutated file's bytes, the same bytes every time. The kinds:

=====================  ===================================================================
``flip-page``          one byte of a page buffer xor-ed (the data a checksum must catch)
``flip-colmeta``       one byte of a column's metadata protobuf
``flip-schema``        one byte of global buffer 0 (the schema)
``flip-tail``          one byte of the footer or the offset tables
``flip-any``           one byte anywhere (padding, global buffers, checksums included)
``truncate``           the file cut short
``forge-footer``       a footer field set to an edge value (0, 1, 2**32-1, past the end...)
``forge-table``        an offset-table entry set to an edge value or to another entry
``forge-colmeta``      a ColumnMetadata field (page lengths, buffer offsets and sizes...)
``forge-encoding``     a field of a page's encoding tree (2.0 ArrayEncoding, 2.1+ PageLayout)
``forge-schema``       a schema field: logical type, name, nullability, ids, row count
``forge-data``         an edge-value integer written into a page buffer (sizes, offsets, words)
``swap-encoding``      a page's encoding replaced by another page's
=====================  ===================================================================

Example::

    >>> import random, pyarrow as pa, lancefile, tempfile, os
    >>> from lancefile.fuzz.filemap import parse
    >>> path = os.path.join(tempfile.mkdtemp(), "m.lance")
    >>> lancefile.write_table(pa.table({"a": list(range(100))}), path, version="2.1", statistics=False)
    >>> fm = parse(open(path, "rb").read())
    >>> m = generate(random.Random(1), fm, "flip-page")
    >>> m.kind, m.page, len(apply(fm, m.spec)) == len(fm.data)
    ('flip-page', (0, 0), True)
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass

from google.protobuf.descriptor import FieldDescriptor as FD

from .filemap import FileMap, page_encoding, rebuild, set_page_encoding

__all__ = ["Mutation", "KINDS", "DATA_KINDS", "generate", "apply"]

EDGE_INTS = [0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256, 1023, 1024, 4096, 65535, 65536,
             2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 - 1]
LOGICAL_TYPES = ["int8", "int32", "int64", "uint64", "float", "double", "bool", "string", "large_string", "binary",
                 "large_binary", "null", "struct", "list", "large_list", "list.struct", "map", "date32:day",
                 "timestamp:us:-", "decimal:128:10:2", "decimal:256:-1:2", "fixed_size_binary:16",
                 "fixed_size_binary:-5", "fixed_size_binary:0", "fixed_size_binary:99999999999",
                 "fixed_size_list:float:8", "fixed_size_list:int32:-1", "fixed_size_list:int8:2147483648",
                 "fixed_size_list:struct:2", "dict:string:int32:false", "dict:int64:int8:false",
                 "dict:string:uint64:false", "json", "halffloat", "nonsense", ""]


@dataclass
class Mutation:
    kind: str
    spec: dict  # what :func:`apply` needs, JSON-able
    page: tuple | None = None  # (column, page) whose bytes or metadata changed
    column: int | None = None  # column whose metadata changed


# -- generic protobuf edits ---------------------------------------------------------------

def _places(msg, prefix=()):
    """(path, field descriptor, kind) of every editable place of a message."""
    out = []
    for fd in msg.DESCRIPTOR.fields:
        path = prefix + (fd.name,)
        oneof = fd.containing_oneof
        if oneof is not None and msg.WhichOneof(oneof.name) != fd.name:
            continue
        if fd.is_repeated:
            out.append((path, fd, "repeated"))
            if fd.type == FD.TYPE_MESSAGE and not fd.message_type.GetOptions().map_entry:
                for i, sub in enumerate(getattr(msg, fd.name)):
                    out += _places(sub, path + (i,))
        elif fd.type == FD.TYPE_MESSAGE:
            if msg.HasField(fd.name):
                out.append((path, fd, "message"))
                out += _places(getattr(msg, fd.name), path)
        else:
            out.append((path, fd, "bytes" if fd.type == FD.TYPE_BYTES else "scalar"))
    return out


def _parent(msg, path):
    for step in path[:-1]:
        msg = msg[step] if isinstance(step, int) else getattr(msg, step)
    return msg, path[-1]


_MAX = {FD.TYPE_INT32: 2**31 - 1, FD.TYPE_SINT32: 2**31 - 1, FD.TYPE_UINT32: 2**32 - 1,
        FD.TYPE_INT64: 2**63 - 1, FD.TYPE_SINT64: 2**63 - 1, FD.TYPE_UINT64: 2**64 - 1, FD.TYPE_ENUM: 2**31 - 1}
_SIGNED = (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_ENUM)


def _int_for(rng: random.Random, fd, current: int) -> int:
    hi = _MAX.get(fd.type, 2**64 - 1)
    lo = -(hi + 1) if fd.type in _SIGNED else 0
    cands = EDGE_INTS + [-1, -2, current - 1, current + 1, current * 2, current // 2, current + 64]
    cands = [c for c in cands if lo <= c <= hi and c != current]
    return rng.choice(cands or [0])


def proto_edit(rng: random.Random, msg, *, strings=None) -> dict | None:
    """A random edit of one place of ``msg`` (JSON-able), or None if it has none."""
    places = _places(msg)
    if not places:
        return None
    path, fd, kind = rng.choice(places)
    parent, name = _parent(msg, path)
    edit = {"path": list(path)}
    if kind == "scalar":
        if fd.type == FD.TYPE_BOOL:
            return {**edit, "op": "set", "value": not getattr(parent, name)}
        if fd.type == FD.TYPE_STRING:
            pool = (strings or {}).get(fd.name) or ["", "x", getattr(parent, name) + "x"]
            return {**edit, "op": "set", "value": rng.choice(pool)}
        if fd.type in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
            return {**edit, "op": "set", "value": rng.choice([0.0, -1.0, 1e300])}
        return {**edit, "op": "set", "value": _int_for(rng, fd, int(getattr(parent, name)))}
    if kind == "bytes":
        cur = bytes(getattr(parent, name))
        r = rng.random()
        if r < 0.3 and cur:
            new = cur[: rng.randrange(len(cur))]
        elif r < 0.6 and cur:
            b = bytearray(cur)
            b[rng.randrange(len(b))] ^= rng.randrange(1, 256)
            new = bytes(b)
        else:
            new = cur + bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 8])))
        return {**edit, "op": "set-bytes", "value": new.hex()}
    if kind == "message":
        return {**edit, "op": "clear"}
    rep = getattr(parent, name)
    if fd.type == FD.TYPE_MESSAGE:
        if not len(rep) or fd.message_type.GetOptions().map_entry:
            return {**edit, "op": "clear"}
        if rng.random() < 0.5:
            return {**edit, "op": "del", "index": rng.randrange(len(rep))}
        return {**edit, "op": "dup", "index": rng.randrange(len(rep))}
    if len(rep) and rng.random() < 0.3:
        return {**edit, "op": "del", "index": rng.randrange(len(rep))}
    value = _int_for(rng, fd, int(rep[0]) if len(rep) else 0)
    if len(rep) and rng.random() < 0.7:
        return {**edit, "op": "set-item", "index": rng.randrange(len(rep)), "value": value}
    return {**edit, "op": "append", "value": value}


def apply_edit(msg, edit: dict) -> None:
    """Apply one edit (a :func:`proto_edit` spec, or a hand-written one) to ``msg`` in place."""
    parent, name = _parent(msg, tuple(edit["path"]))
    op = edit["op"]
    if op == "set":
        setattr(parent, name, edit["value"])
    elif op == "set-bytes":
        setattr(parent, name, bytes.fromhex(edit["value"]))
    elif op == "clear":
        parent.ClearField(name)
    elif op == "del":
        del getattr(parent, name)[edit["index"]]
    elif op == "dup":
        rep = getattr(parent, name)
        rep.add().CopyFrom(rep[edit["index"]])
    elif op == "set-item":
        getattr(parent, name)[edit["index"]] = edit["value"]
    elif op == "append":
        rep = getattr(parent, name)
        if isinstance(edit["value"], dict):  # {"copy": i}: a copy of entry i, at the end
            rep.add().CopyFrom(rep[edit["value"]["copy"]])
        else:
            rep.append(edit["value"])
    elif op == "replace-message":  # a sub-message replaced by a serialized one (hex)
        getattr(parent, name).CopyFrom(type(getattr(parent, name)).FromString(bytes.fromhex(edit["value"])))
    else:  # pragma: no cover - specs come from proto_edit
        raise ValueError(f"unknown edit {op!r}")


# -- the kinds ------------------------------------------------------------------------------

def _flip(rng, fm: FileMap, region: str, kind: str, **info) -> Mutation | None:
    pos, size = fm.regions[region]
    if size <= 0 or pos + size > len(fm.data):
        return None
    mask = 1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)
    return Mutation(kind, {"op": "xor", "at": pos + rng.randrange(size), "mask": mask}, **info)


def _page_buffers(fm: FileMap) -> list[str]:
    return sorted(r for r, (pos, size) in fm.regions.items() if r[0] == "c" and r[1].isdigit() and size > 0)


def _page_of(region: str) -> tuple[int, int]:
    c, rest = region[1:].split("p")
    return int(c), int(rest.split("b")[0])


def gen_flip_page(rng, fm):
    bufs = _page_buffers(fm)
    if not bufs:
        return None
    region = rng.choice(bufs)
    return _flip(rng, fm, region, "flip-page", page=_page_of(region))


def gen_flip_colmeta(rng, fm):
    if not fm.num_columns:
        return None
    c = rng.randrange(fm.num_columns)
    return _flip(rng, fm, f"colmeta{c}", "flip-colmeta", column=c)


def gen_flip_schema(rng, fm):
    return _flip(rng, fm, "schema", "flip-schema")


def gen_flip_tail(rng, fm):
    return _flip(rng, fm, rng.choice([r for r in ("footer", "cmo", "gbo") if fm.regions[r][1]]), "flip-tail")


def gen_flip_any(rng, fm):
    return Mutation("flip-any", {"op": "xor", "at": rng.randrange(len(fm.data)), "mask": rng.randrange(1, 256)})


def gen_truncate(rng, fm):
    n = len(fm.data)
    cut = rng.choice([rng.randrange(n), n - rng.randrange(1, 41), max(0, n - 40 - rng.randrange(1, 400)), 0, 39])
    return Mutation("truncate", {"op": "truncate", "length": max(0, min(cut, n - 1))})


def gen_forge_footer(rng, fm):
    name = rng.choice(["column_meta_start", "cmo_table_start", "gbo_table_start", "num_global_buffers",
                       "num_columns", "major", "minor"])
    cur = fm.footer[name]
    limit = 2**16 - 1 if name in ("major", "minor") else 2**32 - 1 if name.startswith("num_") else 2**64 - 1
    value = rng.choice([v for v in EDGE_INTS + [cur + 1, max(cur - 1, 0), len(fm.data)] if 0 <= v <= limit and v != cur])
    return Mutation("forge-footer", {"op": "footer", "field": name, "value": value})


def gen_forge_table(rng, fm):
    table = "cmo" if fm.num_columns and rng.random() < 0.7 else "gbo"
    n = len(fm.cmo if table == "cmo" else fm.gbo)
    i, part = rng.randrange(n), rng.randrange(2)
    if n > 1 and rng.random() < 0.3:  # the entry of another column / buffer
        return Mutation("forge-table", {"op": "table", "table": table, "index": i, "copy": (i + rng.randrange(1, n)) % n},
                        column=i if table == "cmo" else None)
    value = rng.choice(EDGE_INTS + [len(fm.data)])
    return Mutation("forge-table", {"op": "table", "table": table, "index": i, "part": part, "value": value},
                    column=i if table == "cmo" else None)


def gen_forge_colmeta(rng, fm):
    cols = [c for c, m in enumerate(fm.metas) if m is not None]
    if not cols:
        return None
    c = rng.choice(cols)
    edit = proto_edit(rng, fm.metas[c])
    if edit is None:
        return None
    page = edit["path"][1] if edit["path"][0] == "pages" and len(edit["path"]) > 2 else None
    return Mutation("forge-colmeta", {"op": "colmeta", "col": c, "edit": edit},
                    page=(c, page) if page is not None else None, column=c)


def gen_forge_encoding(rng, fm):
    pages = fm.pages()
    if not pages:
        return None
    c, p = rng.choice(pages)
    try:
        enc = page_encoding(fm, fm.metas[c], p)
    except Exception:
        return None
    edit = proto_edit(rng, enc)
    if edit is None:
        return None
    return Mutation("forge-encoding", {"op": "encoding", "col": c, "page": p, "edit": edit}, page=(c, p), column=c)


def gen_forge_schema(rng, fm):
    if fm.descriptor is None:
        return None
    strings = {"logical_type": LOGICAL_TYPES,
               "name": ["", "x", "a.b"] + [f.name for f in fm.descriptor.schema.fields]}
    edit = proto_edit(rng, fm.descriptor, strings=strings)
    return None if edit is None else Mutation("forge-schema", {"op": "schema", "edit": edit})


def gen_forge_data(rng, fm):
    bufs = [r for r in _page_buffers(fm) if fm.regions[r][1] >= 8]
    if not bufs:
        return None
    region = rng.choice(bufs)
    pos, size = fm.regions[region]
    width = rng.choice([1, 2, 4, 8])
    at = pos + rng.randrange(0, size - width + 1, width)
    value = rng.choice([v for v in EDGE_INTS if v < 1 << (8 * width)] + [(1 << (8 * width)) - 1])
    return Mutation("forge-data", {"op": "put", "at": at, "width": width, "value": value}, page=_page_of(region))


def gen_swap_encoding(rng, fm):
    pages = fm.pages()
    if len(pages) < 2:
        return None
    a, b = rng.sample(pages, 2)
    return Mutation("swap-encoding", {"op": "swap", "a": list(a), "b": list(b)}, page=a, column=a[0])


GENERATORS = {
    "flip-page": gen_flip_page, "flip-colmeta": gen_flip_colmeta, "flip-schema": gen_flip_schema,
    "flip-tail": gen_flip_tail, "flip-any": gen_flip_any, "truncate": gen_truncate,
    "forge-footer": gen_forge_footer, "forge-table": gen_forge_table, "forge-colmeta": gen_forge_colmeta,
    "forge-encoding": gen_forge_encoding, "forge-schema": gen_forge_schema, "forge-data": gen_forge_data,
    "swap-encoding": gen_swap_encoding,
}
KINDS = tuple(GENERATORS)
# Kinds that change only page bytes or column metadata: in a file with checksums, every one of
# them must be detected (never silently different data).
DATA_KINDS = ("flip-page", "flip-colmeta")


def generate(rng: random.Random, fm: FileMap, kind: str) -> Mutation | None:
    return GENERATORS[kind](rng, fm)


def apply(fm: FileMap, spec: dict) -> bytes:
    """The bytes of the file mutated by ``spec``."""
    op = spec["op"]
    if op == "xor":
        out = bytearray(fm.data)
        out[spec["at"]] ^= spec["mask"]
        return bytes(out)
    if op == "put":
        out = bytearray(fm.data)
        w = spec["width"]
        out[spec["at"] : spec["at"] + w] = (spec["value"] & ((1 << 8 * w) - 1)).to_bytes(w, "little")
        return bytes(out)
    if op == "truncate":
        return fm.data[: spec["length"]]
    if op == "footer":
        return rebuild(fm, footer={spec["field"]: spec["value"]})
    if op == "table":
        def forge(entries):
            entries = list(entries)
            i = spec["index"]
            if "copy" in spec:
                entries[i] = entries[spec["copy"]]
            else:
                pair = list(entries[i])
                pair[spec["part"]] = spec["value"]
                entries[i] = tuple(pair)
            return entries
        return rebuild(fm, **{spec["table"]: forge})
    if op == "colmeta":
        metas = [copy.deepcopy(m) for m in fm.metas]
        apply_edit(metas[spec["col"]], spec["edit"])
        return rebuild(fm, metas=metas)
    if op == "encoding":
        metas = [copy.deepcopy(m) for m in fm.metas]
        enc = page_encoding(fm, metas[spec["col"]], spec["page"])
        apply_edit(enc, spec["edit"])
        set_page_encoding(fm, metas[spec["col"]], spec["page"], enc)
        return rebuild(fm, metas=metas)
    if op == "schema":
        d = copy.deepcopy(fm.descriptor)
        apply_edit(d, spec["edit"])
        return rebuild(fm, schema=d.SerializeToString())
    if op == "swap":
        metas = [copy.deepcopy(m) for m in fm.metas]
        (ca, pa_), (cb, pb_) = spec["a"], spec["b"]
        metas[ca].pages[pa_].encoding.CopyFrom(fm.metas[cb].pages[pb_].encoding)
        return rebuild(fm, metas=metas)
    raise ValueError(f"unknown mutation {op!r}")  # pragma: no cover
