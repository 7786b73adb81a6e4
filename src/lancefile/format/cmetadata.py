"""Arrow metadata as Arrow exports it through the C data interface: in order, with repeated
keys kept (``pa.Schema.metadata`` keeps neither), and for built-in extension types the
serialized parameters pyarrow offers no public call for.

Example::

    >>> import pyarrow as pa
    >>> exported_metadata_pairs(pa.schema([], metadata={"a": "1"}))
    [(b'a', b'1')]
"""

from __future__ import annotations

import ctypes
import struct

__all__ = ["exported_metadata_pairs"]


class _ArrowSchema(ctypes.Structure):
    """The C data interface's ``struct ArrowSchema``."""

    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def exported_metadata_pairs(obj) -> list[tuple[bytes, bytes]]:
    """The metadata key/value pairs of ``obj``'s (a schema's, a type's) ``__arrow_c_schema__``
    export, in order. The capsule releases the exported struct when collected."""
    capsule = obj.__arrow_c_schema__()
    exported = _ArrowSchema.from_address(_capsule_pointer(capsule, b"arrow_schema"))
    return _pairs(exported.metadata)


def _pairs(address: int | None) -> list[tuple[bytes, bytes]]:
    """C data interface metadata: int32 count, then (int32 length, bytes) key/value pairs."""
    if not address:
        return []

    def take(n: int) -> bytes:
        nonlocal address
        data = ctypes.string_at(address, n)
        address += n
        return data

    def take_sized() -> bytes:
        return take(struct.unpack("=i", take(4))[0])

    (count,) = struct.unpack("=i", take(4))
    return [(take_sized(), take_sized()) for _ in range(count)]
