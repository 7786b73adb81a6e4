"""Access to one page's buffers for decoders, with every range checked.

A :class:`PageData` resolves the 2.0 ``Buffer`` references (page, column or file
buffers), reads whole buffers or byte ranges of them through the file's byte source, and
caches whole-buffer reads (dictionaries, decompressed buffers) for the page's lifetime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from ..errors import CorruptFileError
from ..format.container import BufferRef, ColumnInfo, FileLayout, PageInfo
from ..io import read_into, read_packed

# ranges from which :meth:`PageData.read_into` hands a source that has ``read_many_into`` all of
# them in one call (fewer: a Python loop, which costs less than the call)
MANY_RANGES = 4

__all__ = ["PageData", "EncodedPage"]

_PAGE, _COLUMN, _FILE = 0, 1, 2


class PageData:
    def __init__(self, layout: FileLayout, column: ColumnInfo, page_index: int, label: str = "") -> None:
        self.layout = layout
        self.column = column
        self.page_index = page_index
        self.page: PageInfo = column.pages[page_index]
        self._label = label
        self._cache: dict = {}

    @cached_property
    def where(self) -> str:
        """``path: column 3 page 2 (label)``: made when first needed (most reads never need it)."""
        label = f" ({self._label})" if self._label else ""
        return f"{self.layout.path}: column {self.column.index} page {self.page_index}{label}"

    @property
    def num_rows(self) -> int:
        return self.page.length

    def error(self, msg: str) -> CorruptFileError:
        return CorruptFileError(f"{self.where}: {msg}")

    def ref(self, buffer) -> BufferRef:
        """Resolve a 2.0 ``Buffer`` message (or a plain page-buffer index)."""
        if isinstance(buffer, int):
            kind, index = _PAGE, buffer
        else:
            kind, index = int(buffer.buffer_type), int(buffer.buffer_index)
        if kind == _PAGE:
            table = self.page.buffers
        elif kind == _COLUMN:
            table = self.column.buffers
        elif kind == _FILE:
            table = self.layout.global_buffers
        else:
            table = None
        if table is None:
            raise self.error(f"unknown buffer type {kind}")
        if index >= len(table):
            names = {_PAGE: "page", _COLUMN: "column", _FILE: "file"}
            raise self.error(f"refers to {names[kind]} buffer {index}, but there are only {len(table)}")
        return table[index]

    def read(self, buffer) -> memoryview:
        ref = self.ref(buffer)
        key = ("whole", ref)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = self.layout.read_buffer(ref)
        return got

    def prime(self, ref: BufferRef, data) -> None:
        """Hand over a whole buffer read with others (:meth:`read` then returns it)."""
        self._cache[("whole", ref)] = data

    def read_range(self, buffer, start: int, length: int) -> memoryview:
        ref = self.ref(buffer)
        if start < 0 or length < 0 or start + length > ref.size:
            raise self.error(f"needs bytes [{start}, {start + length}) of a {ref.size}-byte buffer")
        key = ("whole", ref)
        if key in self._cache:
            return self._cache[key][start : start + length]
        return self.layout.source.read(ref.position + start, length)

    def read_ranges(self, buffer, ranges: Sequence[tuple[int, int]]) -> list[memoryview]:
        ref = self.ref(buffer)
        for start, length in ranges:
            if start < 0 or length < 0 or start + length > ref.size:
                raise self.error(f"needs bytes [{start}, {start + length}) of a {ref.size}-byte buffer")
        return self.layout.source.read_many([(ref.position + s, n) for s, n in ranges])

    def read_ranges_of(self, parts: Sequence[tuple[object, int, int]]) -> list[memoryview]:
        """Byte ranges ``(buffer, start, length)`` of several buffers, nearby ones in one request."""
        refs = []
        for buffer, start, length in parts:
            ref = self.ref(buffer)
            if start < 0 or length < 0 or start + length > ref.size:
                raise self.error(f"needs bytes [{start}, {start + length}) of a {ref.size}-byte buffer")
            refs.append((ref.position + start, length))
        return self.layout.source.read_many(refs)

    def read_packed(self, buffer, starts, lengths) -> np.ndarray:
        """Byte ranges (int arrays) of a buffer, checked against it, back to back
        (:func:`~lancefile.io.read_packed`: a checksummed local file checks each request in a
        small buffer and copies the ranges out)."""
        ref = self.ref(buffer)
        s, n = np.asarray(starts, np.int64), np.asarray(lengths, np.int64)
        bad = (s < 0) | (n < 0) | (s > ref.size - n)
        if bad.any():
            i = int(np.argmax(bad))
            raise self.error(f"needs bytes [{int(s[i])}, {int(s[i]) + int(n[i])}) of a {ref.size}-byte buffer")
        return read_packed(self.layout.source, s + ref.position, n)

    def read_into(self, buffer, starts, lengths, out: np.ndarray) -> None:
        """Read byte ranges (arrays or lists) of a buffer back to back into ``out``, one request
        each (a source that reads many ranges in one call, a local file's compiled ``pread``
        loop, gets them all at once)."""
        ref = self.ref(buffer)
        many = getattr(self.layout.source, "read_many_into", None)
        if many is not None and len(starts) >= MANY_RANGES:
            s, n = np.asarray(starts, np.int64), np.asarray(lengths, np.int64)
            bad = (s < 0) | (n < 0) | (s > ref.size - n)
            if bad.any():
                i = int(np.argmax(bad))
                raise self.error(f"needs bytes [{int(s[i])}, {int(s[i]) + int(n[i])}) of a {ref.size}-byte buffer")
            many(s + ref.position, n, np.cumsum(n) - n, memoryview(out).cast("B"))
            return
        if isinstance(starts, np.ndarray):
            starts, lengths = starts.tolist(), lengths.tolist()
        size, base, pos = ref.size, ref.position, 0
        source = self.layout.source
        fill = getattr(source, "read_into", None) or (lambda offset, out: read_into(source, offset, out))
        view = memoryview(out).cast("B")
        for start, length in zip(starts, lengths):
            if start < 0 or length < 0 or start + length > size:
                raise self.error(f"needs bytes [{start}, {start + length}) of a {size}-byte buffer")
            fill(base + start, view[pos : pos + length])
            pos += length

    def cached_value(self, key):
        """What :meth:`cached` memoised under ``key``, or None."""
        return self._cache.get(key)

    def cached(self, key, make):
        """Memoise an expensive derived value (a decompressed buffer, a dictionary)."""
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = make()
        return got


@dataclass
class EncodedPage:
    """What an encoder hands the writer: the page's encoding message, buffers and rows."""

    encoding: object  # a protobuf message (2.0 ArrayEncoding, 2.1+ PageLayout)
    buffers: list  # bytes-like (or a list of bytes-like pieces, back to back), in buffer-index order
    length: int
    # buffer index -> ascending offsets in that buffer where a read of part of it starts (a
    # mini-block page's chunks): the writer hashes runs between them on their own (checksums)
    cuts: dict = field(default_factory=dict)
    # buffer index -> step: the writer hashes that buffer in pieces of ``step`` bytes (a grid,
    # :mod:`lancefile.format.grids`: a full-zip page's rows and repetition index)
    grids: dict = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """The bytes of the page's buffers (before their alignment padding in the file)."""
        return sum(sum(map(_size, b)) if isinstance(b, list) else _size(b) for b in self.buffers)


def _size(buf) -> int:
    return buf.nbytes if hasattr(buf, "nbytes") else len(buf)
