"""What compressive decoders produce: plain values, before nulls and nesting are applied.

Four shapes cover every 2.1/2.2 compressive encoding:

* :class:`Fixed` ``count`` values of ``bits`` bits, little-endian, back to back
  (``bits == 1``: an LSB-first bitmap, as Arrow's booleans);
* :class:`Var` variable-width values: ``offsets`` (int64, ``count + 1`` entries from 0)
  into ``data``;
* :class:`Fsl` a fixed-size list layer: ``dim`` items a value, the items' validity (or
  None) and the items themselves;
* :class:`Struct` the children of a packed struct, one :class:`Values` each.

:func:`to_arrow` turns them into an Arrow array of a given type; :func:`concat`,
:func:`take` and :func:`cut` combine and select without going through Arrow.

Example::

    >>> import numpy as np, pyarrow as pa
    >>> v = Fixed(np.arange(3, dtype="<i4").view(np.uint8), 32, 3)
    >>> to_arrow(take(v, np.array([2, 0])), pa.int32()).to_pylist()
    [2, 0]
    >>> s = Var(np.array([0, 1, 3]), np.frombuffer(b"abc", np.uint8))
    >>> to_arrow(concat([s, s]), pa.string()).to_pylist()
    ['a', 'bc', 'a', 'bc']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...errors import CorruptFileError
from ..arrowutil import array_from_fixed, fixed_size_lists, gather_ranges, range_indices, safe_array

__all__ = ["Values", "Fixed", "Var", "Fsl", "Struct", "count_of", "concat", "take", "cut", "to_arrow",
           "as_uint", "repeat_value"]


@dataclass
class Fixed:
    data: np.ndarray  # uint8
    bits: int
    count: int

    def __post_init__(self) -> None:
        if self.data.size * 8 < self.count * self.bits:
            raise CorruptFileError(
                f"{self.data.size} bytes cannot hold {self.count} values of {self.bits} bits"
            )


@dataclass
class Var:
    offsets: np.ndarray  # int64, count + 1 entries, offsets[0] == 0
    data: np.ndarray  # uint8

    @property
    def count(self) -> int:
        return len(self.offsets) - 1


@dataclass
class Fsl:
    dim: int
    validity: np.ndarray | None  # bool per item (count * dim), None when all valid
    items: "Values"

    @property
    def count(self) -> int:
        return count_of(self.items) // self.dim if self.dim else 0


@dataclass
class Struct:
    children: list
    count: int


Values = Fixed | Var | Fsl | Struct


def count_of(v: Values) -> int:
    return v.count


def as_uint(v: Values, bits: int, what: str) -> np.ndarray:
    """The values of a :class:`Fixed` of ``bits`` bits as a numpy unsigned array."""
    if not isinstance(v, Fixed) or v.bits != bits:
        got = f"{v.bits}-bit values" if isinstance(v, Fixed) else type(v).__name__
        raise CorruptFileError(f"{what} must decode to {bits}-bit integers, not {got}")
    width = bits // 8
    return v.data[: v.count * width].view(f"<u{width}")


def _bools(v: Fixed) -> np.ndarray:
    return np.unpackbits(v.data, count=v.count, bitorder="little").view(np.bool_)


def _from_bools(b: np.ndarray) -> Fixed:
    return Fixed(np.packbits(b, bitorder="little"), 1, len(b))


def concat(parts: list[Values]) -> Values:
    """Values of several pages or chunks, back to back."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    if isinstance(first, Fixed):
        widths = {p.bits for p in parts}
        if len(widths) > 1 and 0 in widths:  # value-less (all-null) parts take the others' width
            bits = max(widths)
            parts = [p if p.bits else Fixed(np.zeros((p.count * bits + 7) // 8, np.uint8), bits, p.count)
                     for p in parts]
            first = parts[0]
        if first.bits == 1:
            return _from_bools(np.concatenate([_bools(p) for p in parts]))
        w = first.bits // 8
        return Fixed(np.concatenate([p.data[: p.count * w] for p in parts]), first.bits, sum(p.count for p in parts))
    if isinstance(first, Var):
        sizes = [p.offsets[-1] for p in parts]
        shifts = np.cumsum([0] + sizes[:-1])
        offsets = np.concatenate([[0]] + [p.offsets[1:] + s for p, s in zip(parts, shifts)])
        return Var(offsets.astype(np.int64), np.concatenate([p.data[: p.offsets[-1]] for p in parts]))
    if isinstance(first, Fsl):
        valid = None
        if any(p.validity is not None for p in parts):
            valid = np.concatenate([p.validity if p.validity is not None else np.ones(p.count * p.dim, bool)
                                    for p in parts])
        return Fsl(first.dim, valid, concat([p.items for p in parts]))
    return Struct([concat([p.children[i] for p in parts]) for i in range(len(first.children))],
                  sum(p.count for p in parts))


def take(v: Values, idx: np.ndarray) -> Values:
    """The values at positions ``idx`` (int64, any order)."""
    idx = np.asarray(idx, dtype=np.int64)
    if isinstance(v, Fixed):
        if v.bits == 0:
            return Fixed(v.data[:0], 0, len(idx))
        if v.bits == 1:
            return _from_bools(_bools(v)[idx])
        if v.bits % 8:
            raise CorruptFileError(f"cannot select {v.bits}-bit values")
        w = v.bits // 8
        rows = v.data[: v.count * w].reshape(v.count, w)
        return Fixed(rows[idx].reshape(-1), v.bits, len(idx))
    if isinstance(v, Var):
        starts, ends = v.offsets[idx], v.offsets[idx + 1]
        lengths = ends - starts
        offsets = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Var(offsets, gather_ranges(v.data, starts, lengths))
    if isinstance(v, Fsl):
        items = range_indices(idx * v.dim, np.full(len(idx), v.dim, dtype=np.int64))
        valid = None if v.validity is None else v.validity[items]
        return Fsl(v.dim, valid, take(v.items, items))
    return Struct([take(c, idx) for c in v.children], len(idx))


def cut(v: Values, start: int, stop: int) -> Values:
    """Values ``[start, stop)``, without copying where the shape allows."""
    if start == 0 and stop == v.count:
        return v
    if isinstance(v, Fixed) and v.bits % 8 == 0:
        w = v.bits // 8
        return Fixed(v.data[start * w : stop * w], v.bits, stop - start)
    if isinstance(v, Var):
        base = v.offsets[start]
        return Var(v.offsets[start : stop + 1] - base, v.data[base : v.offsets[stop]])
    if isinstance(v, Fsl):
        valid = None if v.validity is None else v.validity[start * v.dim : stop * v.dim]
        return Fsl(v.dim, valid, cut(v.items, start * v.dim, stop * v.dim))
    return take(v, np.arange(start, stop, dtype=np.int64))


def repeat_value(v: Values, n: int) -> Values:
    """One value repeated ``n`` times (constant pages)."""
    return take(v, np.zeros(n, dtype=np.int64))


def _validity_buffer(valid: np.ndarray | None) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def to_arrow(v: Values, dtype: pa.DataType) -> pa.Array:
    """An Arrow array of type ``dtype`` holding ``v`` (no top-level nulls)."""
    if isinstance(v, Var):
        return _var_to_arrow(v, dtype)
    if isinstance(v, Fsl):
        if not pa.types.is_fixed_size_list(dtype) or dtype.list_size != v.dim:
            raise CorruptFileError(f"a fixed-size list of {v.dim} items cannot be read as {dtype}")
        items = to_arrow(v.items, dtype.value_type)
        if v.validity is not None and not v.validity.all():
            items = _with_validity(items, v.validity)
        return fixed_size_lists(items, dtype, v.count)
    if isinstance(v, Struct):
        if not pa.types.is_struct(dtype) or dtype.num_fields != len(v.children):
            raise CorruptFileError(f"a packed struct of {len(v.children)} fields cannot be read as {dtype}")
        fields = [dtype.field(i) for i in range(dtype.num_fields)]
        kids = [to_arrow(c, f.type) for c, f in zip(v.children, fields)]
        return pa.StructArray.from_arrays(kids, fields=fields) if kids else pa.array([{}] * v.count, dtype)
    return _fixed_to_arrow(v, dtype)


def _with_validity(arr: pa.Array, valid: np.ndarray) -> pa.Array:
    """``arr`` with nulls where ``valid`` is False (``arr`` itself has none)."""
    if pa.types.is_fixed_size_list(arr.type):
        d = arr.type.list_size
        return fixed_size_lists(arr.values.slice(arr.offset * d, len(arr) * d), arr.type, len(arr), valid)
    if pa.types.is_struct(arr.type):
        fields = [arr.type.field(i) for i in range(arr.type.num_fields)]
        return pa.StructArray.from_arrays(arr.flatten(), fields=fields, mask=pa.array(~valid))
    return safe_array(arr.type, len(arr), [_validity_buffer(valid)] + arr.buffers()[1:],
                                 offset=arr.offset)


def _fixed_to_arrow(v: Fixed, dtype: pa.DataType) -> pa.Array:
    if pa.types.is_null(dtype):
        return pa.nulls(v.count)
    if v.bits == 0:  # values without a width (all null, or fixed_size_binary(0)): zeros of the type's width
        bits = _fixed_bits(dtype)
        width = 1 if pa.types.is_boolean(dtype) else 8 if bits is None else bits
        v = Fixed(np.zeros((v.count * width + 7) // 8, np.uint8), width, v.count)
    if pa.types.is_boolean(dtype):
        if v.bits == 8:  # full-zip booleans: one byte a value (what pylance 14.0.2 writes)
            data = np.asarray(v.data, np.uint8)[: v.count]
            if len(data) < v.count:
                raise CorruptFileError(f"{len(data)} bytes hold fewer than {v.count} 8-bit booleans")
            return safe_array(dtype, v.count, [None, pa.py_buffer(np.packbits(data != 0, bitorder="little"))])
        if v.bits != 1:
            raise CorruptFileError(f"booleans must be stored as 1-bit or 8-bit values, not {v.bits}-bit")
        return safe_array(dtype, v.count, [None, pa.py_buffer(v.data)])
    want = _fixed_bits(dtype)
    if want != v.bits:
        raise CorruptFileError(f"{v.bits}-bit values cannot be read as {dtype} ({want} bits)")
    return array_from_fixed(dtype, v.data, v.count)


def _fixed_bits(dtype: pa.DataType) -> int | None:
    if pa.types.is_fixed_size_list(dtype):
        inner = _fixed_bits(dtype.value_type)
        return None if inner is None else inner * dtype.list_size
    try:
        return dtype.bit_width
    except ValueError:
        return None


_VAR_TYPES = {
    pa.string(): np.int32, pa.binary(): np.int32,
    pa.large_string(): np.int64, pa.large_binary(): np.int64,
}


def _var_to_arrow(v: Var, dtype: pa.DataType) -> pa.Array:
    storage = dtype.storage_type if isinstance(dtype, pa.ExtensionType) else dtype
    if pa.types.is_dictionary(storage):
        raise CorruptFileError(f"values without a dictionary cannot be read as {dtype}")
    off_type = _VAR_TYPES.get(storage)
    if off_type is None:
        raise CorruptFileError(f"variable-width values cannot be read as {dtype}")
    offsets = v.offsets
    if off_type is np.int32 and len(offsets) and offsets[-1] > np.iinfo(np.int32).max:
        raise CorruptFileError(f"{offsets[-1]} bytes of values do not fit a {dtype} array (use the large type)")
    # UTF-8 is checked with everything else decoded, by the reader (lancefile.checks)
    return safe_array(storage, v.count, [None, pa.py_buffer(offsets.astype(off_type)), pa.py_buffer(v.data)])
