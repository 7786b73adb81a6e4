"""``Fsst``: strings compressed with a static symbol table (Fast Static Symbol Table).

Proto: ``Fsst { bytes symbol_table = 1; CompressiveEncoding values = 2; }``

``symbol_table`` is 2,312 bytes: a u64 header (``"FSST" << 32 | switch << 24 | ... |
n_symbols``), ``n_symbols`` u64 symbols, then their lengths. ``values`` (a Variable)
holds each string's codes: a code ``c < 255`` stands for symbol ``c``, 255 escapes the
next byte. With the switch bit clear the strings are stored raw. One table per page.
Decoded by :func:`lancefile.encodings.kernels.fsst_decompress`.
"""

from __future__ import annotations

from ...errors import CorruptFileError
from .. import kernels
from ._buffers import located
from .base import Codec, Context, decode_miniblock, decode_variable_values, register
from .values import Var

__all__ = ["FsstCodec"]


def _expand(msg, codes: Var, where: str) -> Var:
    symbols, lengths, compressed = located(where, kernels.fsst_parse_symbol_table, msg.symbol_table)
    if not compressed:
        return codes
    data, offsets = located(where, kernels.fsst_decompress, codes.data, codes.offsets, symbols, lengths)
    return Var(offsets, data)


@register("fsst")
class FsstCodec(Codec):
    name = "fsst"
    contexts = frozenset({Context.MINIBLOCK, Context.VARIABLE_VALUE})

    def children(self, msg, ctx):
        return [(msg.values if msg.HasField("values") else None, ctx)]

    def check(self, msg, ctx, grammar, where):
        if len(msg.symbol_table) != kernels.FSST_SYMBOL_TABLE_SIZE:
            raise CorruptFileError(f"{where}: FSST symbol table has {len(msg.symbol_table)} bytes, "
                                   f"expected {kernels.FSST_SYMBOL_TABLE_SIZE}")
        if msg.values.WhichOneof("compression") != "variable":
            raise CorruptFileError(f"{where}: FSST codes must be stored as variable-width values")

    def num_buffers(self, msg):
        return 1

    def miniblock(self, msg, chunks, first):
        return _expand(msg, decode_miniblock(msg.values, chunks, first), chunks.where)

    def variable_values(self, msg, offsets, data, where):
        return _expand(msg, decode_variable_values(msg.values, offsets, data, where), where)

    def variable_spans(self, msg, data, starts, sizes, where):
        symbols, lengths, compressed = located(where, kernels.fsst_parse_symbol_table, msg.symbol_table)
        if not compressed or msg.values.variable.HasField("values"):
            return super().variable_spans(msg, data, starts, sizes, where)
        # the codes are decoded where they lie: no gathered copy of the page's codes
        out, offsets = located(where, kernels.fsst_decompress_spans, data, starts, sizes, symbols, lengths)
        return Var(offsets, out)

    def variable_spans_many(self, msgs, data, starts, sizes, counts, wheres):
        """Every page's strings in one pass, each page with its own symbol table (a take's
        rows on 15 pages of long text pay one call, not 15). None unless every page's codes
        are plain ``Variable`` values and every table compresses."""
        if any(m.values != msgs[0].values for m in msgs[1:]) or not msgs[0].HasField("values") or \
                msgs[0].values.WhichOneof("compression") != "variable" or msgs[0].values.variable.HasField("values"):
            return None
        tables = [m.symbol_table for m in msgs]
        try:
            parsed = kernels.fsst_parse_symbol_tables(tables)
        except CorruptFileError:
            return None  # each page's own decode says what is wrong with its table
        if not parsed[3].all():  # a page stored its strings raw
            return None
        try:
            out, offsets = kernels.fsst_decompress_spans_tables(data, starts, sizes, tables, counts, parsed)
        except CorruptFileError as exc:  # name the page of the string
            raise CorruptFileError(f"{wheres[getattr(exc, 'table', 0)]}: {exc}") from None
        return Var(offsets, out)
