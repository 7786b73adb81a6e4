"""What an Arrow IPC file would take to read, from its metadata alone: :func:`ipc_rows_and_bytes`.

A deletion file (``_deletions/*.arrow``) is a small Arrow IPC file whose buffers may be
compressed. Arrow allocates each compressed buffer's size as the buffer's 8-byte prefix says
before it decompresses it, so 60 KB of zstd can ask for gigabytes. Here the file's footer and
each record batch's message are read (FlatBuffers, every offset checked against the bytes)
for the rows the batches hold and the bytes their buffers decompress to, so the caller can
refuse a file that claims more than its fragment could have before pyarrow reads it.

Example::

    >>> import pyarrow as pa, pyarrow.ipc as ipc
    >>> sink = pa.BufferOutputStream()
    >>> t = pa.table({"row_id": pa.array([1, 5, 9], pa.uint32())})
    >>> with ipc.new_file(sink, t.schema, options=ipc.IpcWriteOptions(compression="zstd")) as w:
    ...     w.write_table(t)
    >>> ipc_rows_and_bytes(sink.getvalue().to_pybytes())
    (3, 12)
"""

from __future__ import annotations

import struct

__all__ = ["ipc_rows_and_bytes", "IpcLayoutError"]

_MAGIC = b"ARROW1"
_RECORD_BATCH = 3  # MessageHeader.RecordBatch
_DICTIONARY_BATCH = 2


class IpcLayoutError(ValueError):
    """The metadata does not parse: an offset outside the bytes, or a message of an unexpected kind."""


class _Table:
    """One FlatBuffers table of ``buf`` at ``pos``: fields read by their index in the schema."""

    def __init__(self, buf: bytes, pos: int) -> None:
        self.buf, self.pos = buf, pos
        vt = pos - _get(buf, "<i", pos)
        self.vt, self.vt_len = vt, _get(buf, "<H", vt)

    def _field(self, i: int) -> int:
        at = 4 + 2 * i
        return 0 if at + 2 > self.vt_len else _get(self.buf, "<H", self.vt + at)

    def scalar(self, i: int, fmt: str, default=0):
        off = self._field(i)
        return default if off == 0 else _get(self.buf, fmt, self.pos + off)

    def table(self, i: int) -> "_Table | None":
        off = self._field(i)
        if off == 0:
            return None
        at = self.pos + off
        return _Table(self.buf, at + _get(self.buf, "<I", at))

    def structs(self, i: int, size: int) -> list[int]:
        """Where each struct of a vector of ``size``-byte structs starts."""
        off = self._field(i)
        if off == 0:
            return []
        at = self.pos + off
        vec = at + _get(self.buf, "<I", at)
        n = _get(self.buf, "<I", vec)
        if vec + 4 + n * size > len(self.buf):
            raise IpcLayoutError(f"a vector of {n} entries runs past the metadata")
        return [vec + 4 + k * size for k in range(n)]


def _get(buf: bytes, fmt: str, at: int):
    if at < 0 or at + struct.calcsize(fmt) > len(buf):
        raise IpcLayoutError(f"an offset ({at}) lies outside the metadata ({len(buf)} bytes)")
    return struct.unpack_from(fmt, buf, at)[0]


def ipc_rows_and_bytes(data: bytes) -> tuple[int, int]:
    """``(rows, bytes)``: the rows of every record batch of Arrow IPC file ``data``, and the bytes
    its buffers (and its dictionaries') take once read: a compressed buffer's stated
    uncompressed size, an uncompressed buffer's length. Raises :class:`IpcLayoutError`."""
    n = len(data)
    if n < 2 * len(_MAGIC) + 4 or data[:6] != _MAGIC or data[-6:] != _MAGIC:
        raise IpcLayoutError("no ARROW1 magic at both ends")
    footer_len = _get(data, "<i", n - 10)
    if not 0 < footer_len <= n - 16:
        raise IpcLayoutError(f"a footer of {footer_len} bytes in a file of {n}")
    footer_buf = data[n - 10 - footer_len : n - 10]
    footer = _Table(footer_buf, _get(footer_buf, "<I", 0))
    rows = size = 0
    for kind, index in ((_DICTIONARY_BATCH, 2), (_RECORD_BATCH, 3)):
        for block in footer.structs(index, 24):  # Block: offset i64, metaDataLength i32 (+4 pad), bodyLength i64
            offset, meta_len = _get(footer_buf, "<q", block), _get(footer_buf, "<i", block + 8)
            body_len = _get(footer_buf, "<q", block + 16)
            if offset < 0 or meta_len < 8 or body_len < 0 or offset + meta_len + body_len > n:
                raise IpcLayoutError(f"a message block [{offset}, +{meta_len}+{body_len}) outside the file")
            start = offset + (8 if _get(data, "<i", offset) == -1 else 4)  # continuation marker, then length
            message_buf = data[start : offset + meta_len]
            message = _Table(message_buf, _get(message_buf, "<I", 0))
            if message.scalar(1, "<B") != kind:
                raise IpcLayoutError(f"a block of the footer holds a message of type {message.scalar(1, '<B')}")
            header = message.table(2)
            if header is None:
                raise IpcLayoutError("a message without its header")
            if kind == _DICTIONARY_BATCH:
                header = header.table(1)  # DictionaryBatch.data: a RecordBatch
                if header is None:
                    raise IpcLayoutError("a dictionary batch without its data")
            else:
                rows += header.scalar(0, "<q")
            compressed = header.table(3) is not None
            body = offset + meta_len
            for buf in header.structs(2, 16):  # Buffer: offset i64, length i64 (in the body)
                b_off, b_len = _get(message_buf, "<q", buf), _get(message_buf, "<q", buf + 8)
                if b_off < 0 or b_len < 0 or b_off + b_len > body_len:
                    raise IpcLayoutError(f"a buffer [{b_off}, +{b_len}) outside its message body ({body_len} bytes)")
                if compressed and b_len >= 8:
                    stated = _get(data, "<q", body + b_off)  # -1: stored uncompressed
                    size += b_len - 8 if stated == -1 else max(stated, 0)
                else:
                    size += b_len
    return rows, size
