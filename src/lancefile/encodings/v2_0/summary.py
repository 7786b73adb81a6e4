"""One-line summaries of 2.0 array encodings, for ``metadata()`` and ``lancefile inspect``.

Example::

    >>> from lancefile._proto import encodings_v2_0_pb2 as pb
    >>> describe_array(pb.ArrayEncoding(flat=pb.Flat(bits_per_value=64, buffer=pb.Buffer(buffer_index=0))))
    'flat(bits_per_value=64, buffer=#0)'
"""

from __future__ import annotations

__all__ = ["describe_array"]


def describe_array(msg) -> str:
    """``Nullable(NoNull(Flat(64)))``-style summary of a protobuf encoding tree."""
    from google.protobuf.message import Message

    if msg.DESCRIPTOR.name == "Buffer":  # 2.0 buffer reference: #index (page buffers) or kind#index
        kinds = {0: "", 1: "column", 2: "file"}
        return f"{kinds.get(msg.buffer_type, '?')}#{msg.buffer_index}"
    oneofs = [o.name for o in msg.DESCRIPTOR.oneofs]
    for o in oneofs:
        which = msg.WhichOneof(o)
        if which:
            return f"{which}({describe_array(getattr(msg, which))})"
    parts = []
    for fd, val in msg.ListFields():
        if isinstance(val, Message):
            parts.append(f"{fd.name}={describe_array(val)}")
        elif not isinstance(val, (str, bytes)) and hasattr(val, "__len__"):  # repeated
            items = [(describe_array(v) if isinstance(v, Message) else str(v)) for v in val]
            parts.append(f"{fd.name}=[{', '.join(items)}]")
        elif isinstance(val, bytes):
            parts.append(f"{fd.name}=<{len(val)} bytes>")
        else:
            parts.append(f"{fd.name}={val}")
    return ", ".join(parts)
