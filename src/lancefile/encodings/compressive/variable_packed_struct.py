"""``VariablePackedStruct`` (2.2): a packed struct with variable-width fields, row by row.

Proto::

    VariablePackedStruct { repeated FieldEncoding fields = 1; }
    FieldEncoding { CompressiveEncoding value = 1; oneof layout { uint64 bits_per_value = 2; uint64 bits_per_length = 3; } }

Full-zip only. Each row is one variable-width value: fixed fields give their bytes,
variable fields ``[length (bits_per_length)][bytes]``. ``(a: int32 = 0, b: "s0")`` is
``00000000 | 02000000 7330``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ..arrowutil import gather_ranges
from .base import Codec, Context, decode_fixed_values, decode_variable_values, register
from .values import Struct

__all__ = ["VariablePackedStructCodec"]


@register("variable_packed_struct")
class VariablePackedStructCodec(Codec):
    name = "variable_packed_struct"
    contexts = frozenset({Context.VARIABLE_VALUE})

    def label(self, msg) -> str:
        return f"variable_packed_struct({len(msg.fields)} fields)"

    def children(self, msg, ctx):
        return [(f.value if f.HasField("value") else None,
                 Context.FIXED_VALUE if f.WhichOneof("layout") == "bits_per_value" else Context.VARIABLE_VALUE)
                for f in msg.fields]

    def check(self, msg, ctx, grammar, where):
        if not grammar.variable_packed_struct:
            raise CorruptFileError(f"{where}: variable packed structs are not part of this version's grammar")
        for f in msg.fields:
            kind = f.WhichOneof("layout")
            width = f.bits_per_value if kind == "bits_per_value" else f.bits_per_length
            if kind is None or width % 8 or not width or (kind == "bits_per_length" and width not in (8, 16, 32, 64)):
                raise CorruptFileError(f"{where}: variable packed struct field with layout {kind} of {width} bits")

    def variable_values(self, msg, offsets, data, where):
        n = len(offsets) - 1
        # an empty row is a null struct (full-zip stores only its control word): its fields
        # read as zeros / empty values, hidden by the null
        rows = np.flatnonzero(offsets[1:] > offsets[:-1])
        cursor = offsets[rows].astype(np.int64)
        ends = offsets[rows + 1]
        m = len(rows)
        children = []
        for i, f in enumerate(msg.fields):
            if f.WhichOneof("layout") == "bits_per_value":
                w = int(f.bits_per_value) // 8
                if np.any(cursor + w > ends):
                    raise CorruptFileError(f"{where}: packed struct field {i} runs past its row")
                full = np.zeros((n, w), dtype=np.uint8)
                full[rows] = gather_ranges(data, cursor, np.full(m, w, dtype=np.int64)).reshape(m, w)
                cursor += w
                children.append(decode_fixed_values(f.value, full, where))
            else:
                lw = int(f.bits_per_length) // 8
                if np.any(cursor + lw > ends):
                    raise CorruptFileError(f"{where}: packed struct field {i} runs past its row")
                lengths = gather_ranges(data, cursor, np.full(m, lw, dtype=np.int64)).view(f"<u{lw}").astype(np.int64)
                cursor += lw
                if np.any(lengths < 0) or np.any(cursor + lengths > ends):
                    raise CorruptFileError(f"{where}: packed struct field {i} runs past its row")
                all_lengths = np.zeros(n, dtype=np.int64)
                all_lengths[rows] = lengths
                child_offsets = np.zeros(n + 1, dtype=np.int64)
                np.cumsum(all_lengths, out=child_offsets[1:])
                body = gather_ranges(data, cursor, lengths)
                cursor += lengths
                children.append(decode_variable_values(f.value, child_offsets, body, where))
        if np.any(cursor != ends):
            raise CorruptFileError(f"{where}: packed struct rows have bytes left over after their fields")
        return Struct(children, n)
