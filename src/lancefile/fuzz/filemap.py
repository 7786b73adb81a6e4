"""Where everything is in a Lance file, and the file rebuilt with changed metadata.

:func:`parse` maps a file (any v2 version) into named byte regions (``footer``, ``cmo``,
``gbo``, ``schema``, ``colmeta3``, ``c3p0b1`` for column 3 page 0 buffer 1, ``gb2`` for
global buffer 2) and parses the protobufs (FileDescriptor, ColumnMetadata, page encodings).
:func:`rebuild` writes the file again from edited messages: page data and global buffers keep
their places, the schema, column metadata, offset tables and footer are laid out anew, so
a forged field is exactly the change made.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.lance")
    >>> lancefile.write_table(pa.table({"a": [1, 2, 3]}), path, version="2.0", statistics=False)
    >>> fm = parse(open(path, "rb").read())
    >>> fm.version, fm.num_columns, sorted(r for r in fm.regions if r.startswith("c0p"))
    ('2.0', 1, ['c0p0b0'])
    >>> fm.descriptor.schema.fields[0].nullable = False
    >>> len(rebuild(fm, schema=fm.descriptor.SerializeToString())) > 0
    True
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError

from .._proto import encodings_v2_0_pb2, encodings_v2_1_pb2, file2_pb2, file_pb2

__all__ = ["FileMap", "parse", "rebuild", "page_encoding", "set_page_encoding", "FOOTER"]

FOOTER = struct.Struct("<QQQIIHH4s")
_FOOTER_FIELDS = ("column_meta_start", "cmo_table_start", "gbo_table_start", "num_global_buffers", "num_columns",
                  "major", "minor")
_URLS = {"2.0": "/lance.encodings.ArrayEncoding", "2.1": "/lance.encodings21.PageLayout"}


@dataclass
class FileMap:
    data: bytes
    footer: dict  # the footer's fields by name (see _FOOTER_FIELDS)
    version: str  # "2.0", "2.1", "2.2" (from the footer; "?" if unknown)
    gbo: list  # [(position, size)] of the global buffers
    cmo: list  # [(position, size)] of the column metadata entries
    metas: list  # parsed ColumnMetadata (None where unparsable)
    descriptor: object  # the parsed FileDescriptor (None if unparsable)
    regions: dict = field(default_factory=dict)  # name -> (position, size)

    @property
    def num_columns(self) -> int:
        return len(self.cmo)

    def pages(self) -> list[tuple[int, int]]:
        """(column, page) of every page."""
        return [(c, p) for c, m in enumerate(self.metas) if m is not None for p in range(len(m.pages))]


def _version(major: int, minor: int) -> str:
    return {(0, 3): "2.0", (2, 0): "2.0", (2, 1): "2.1", (2, 2): "2.2"}.get((major, minor), "?")


def parse(data: bytes) -> FileMap:
    """Map a well-formed Lance v2 file (raises ValueError for one that is not)."""
    if len(data) < FOOTER.size or data[-4:] != b"LANC":
        raise ValueError("not a Lance v2 file")
    *values, _ = FOOTER.unpack(data[-FOOTER.size:])
    footer = dict(zip(_FOOTER_FIELDS, values))
    nc, ng, gbo_start = footer["num_columns"], footer["num_global_buffers"], footer["gbo_table_start"]
    cmo_start = gbo_start - 16 * nc
    cmo = [struct.unpack_from("<QQ", data, cmo_start + 16 * c) for c in range(nc)]
    gbo = [struct.unpack_from("<QQ", data, gbo_start + 16 * g) for g in range(ng)]
    regions = {"footer": (len(data) - FOOTER.size, FOOTER.size), "cmo": (cmo_start, 16 * nc),
               "gbo": (gbo_start, 16 * ng), "schema": gbo[0]}
    for g, ref in enumerate(gbo[1:], start=1):
        regions[f"gb{g}"] = ref
    metas = []
    for c, (pos, size) in enumerate(cmo):
        regions[f"colmeta{c}"] = (pos, size)
        try:
            meta = file2_pb2.ColumnMetadata.FromString(data[pos : pos + size])
        except DecodeError:
            meta = None
        metas.append(meta)
        for p, page in enumerate(meta.pages if meta is not None else ()):
            for k, (a, n) in enumerate(zip(page.buffer_offsets, page.buffer_sizes)):
                regions[f"c{c}p{p}b{k}"] = (a, n)
    try:
        descriptor = file_pb2.FileDescriptor.FromString(data[gbo[0][0] : gbo[0][0] + gbo[0][1]])
    except DecodeError:
        descriptor = None
    return FileMap(data, footer, _version(footer["major"], footer["minor"]), gbo, cmo, metas, descriptor, regions)


def page_encoding(fm: FileMap, meta, page: int):
    """The parsed encoding of a page: a 2.0 ``ArrayEncoding`` or a 2.1+ ``PageLayout``."""
    anyv = any_pb2.Any.FromString(meta.pages[page].encoding.direct.encoding)
    cls = encodings_v2_0_pb2.ArrayEncoding if fm.version == "2.0" else encodings_v2_1_pb2.PageLayout
    return cls.FromString(anyv.value)


def set_page_encoding(fm: FileMap, meta, page: int, message) -> None:
    url = _URLS["2.0" if fm.version == "2.0" else "2.1"]
    meta.pages[page].encoding.direct.encoding = any_pb2.Any(type_url=url, value=message.SerializeToString()).SerializeToString()


def rebuild(fm: FileMap, *, schema: bytes | None = None, metas: list | None = None, footer: dict | None = None,
            cmo=None, gbo=None) -> bytes:
    """The file with a new schema descriptor, column metadata (messages or bytes), offset-table
    entries (``cmo``/``gbo``: functions from the new entries to forged ones) and footer fields."""
    cms = fm.footer["column_meta_start"]
    body = bytearray(fm.data[:cms])
    gbos = list(fm.gbo)
    if schema is not None:
        body += b"\0" * ((-len(body)) % 64)
        gbos[0] = (len(body), len(schema))
        body += schema
    cms = len(body)
    entries = []
    for i, m in enumerate(metas if metas is not None else fm.metas):
        if m is None:  # unparsable: its bytes as they were
            pos, size = fm.cmo[i]
            raw = fm.data[pos : pos + size]
        else:
            raw = m if isinstance(m, (bytes, bytearray)) else m.SerializeToString()
        entries.append((len(body), len(raw)))
        body += raw
    if cmo is not None:
        entries = cmo(entries)
    if gbo is not None:
        gbos = gbo(gbos)
    cmo_start = len(body)
    for pos, size in entries:
        body += struct.pack("<QQ", pos, size)
    gbo_start = len(body)
    for pos, size in gbos:
        body += struct.pack("<QQ", pos, size)
    f = dict(fm.footer, column_meta_start=cms, cmo_table_start=cmo_start, gbo_table_start=gbo_start,
             num_global_buffers=len(gbos), num_columns=len(entries))
    f.update(footer or {})
    body += FOOTER.pack(*(f[k] for k in _FOOTER_FIELDS), b"LANC")
    return bytes(body)
