"""``Constant``: one value for every position (or none at all: every position is null).

Proto: ``Constant { optional bytes value = 1; }``

Seen in blocks and in full-zip fixed-width values; e.g. a full-zip
``fixed_size_list<float>[4]`` whose items are all null is ``FixedSizeList{has_validity,
values: Constant{}}``: each row holds only its item-validity byte. Without a value the
decoded values have no width (``Fixed(bits=0)``); the reader fills them with zeros of
the column's type. Page-level constants use the ConstantLayout instead.
"""

from __future__ import annotations

import numpy as np

from .base import Codec, Context, register
from .values import Fixed, repeat_value

__all__ = ["ConstantCodec"]


def _constant(msg, n: int) -> Fixed:
    if not msg.HasField("value") or not len(msg.value):
        return Fixed(np.zeros(0, np.uint8), 0, n)
    one = np.frombuffer(msg.value, dtype=np.uint8)
    return repeat_value(Fixed(one, 8 * len(one), 1), n)


@register("constant")
class ConstantCodec(Codec):
    name = "constant"
    contexts = frozenset({Context.BLOCK, Context.FIXED_VALUE})

    def label(self, msg) -> str:
        return f"constant({len(msg.value)} bytes)" if msg.HasField("value") else "constant(null)"

    def block(self, msg, data, num_values, where):
        return _constant(msg, num_values)

    def fixed_values(self, msg, rows, where):
        return _constant(msg, rows.shape[0])
