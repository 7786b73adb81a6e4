"""``BlobLayout``: large binary values stored out of line, pages of (position, size).

Proto: ``BlobLayout { PageLayout inner_layout = 1; repeated RepDefLayer layers = 2; }``

A ``large_binary`` field marked ``lance-encoding:blob`` keeps its values outside the
pages (each 64-byte aligned, anywhere in the file); the page holds one descriptor per
level entry, ``struct<position: u64, size: u64>``, in an inner layout (a mini-block of
``PackedStruct{64, 64}``). An empty value is ``(0, 0)``; a null one has size 0 and
``position = def << 16 | rep`` (``0x10000`` for a null row). The real rep/def layers are
in ``layers``. A read decodes the descriptors of its rows, then fetches just their bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..arrowutil import safe_array
from ...errors import CorruptFileError, UnsupportedEncodingError
from ..page import PageData
from ..registry import LAYOUT
from ..selection import Selection
from .base import Leaf, PageLayoutBase, PagePart
from .repdef import ITEM, canonical_defs

__all__ = ["BlobPage"]

_DESCRIPTOR = pa.struct([("position", pa.uint64()), ("size", pa.uint64())])


@LAYOUT.register("blob_layout")
class BlobPage(PageLayoutBase):
    def __init__(self, msg, leaf: Leaf, page_rows: int, where: str) -> None:
        if leaf.max_rep:
            raise UnsupportedEncodingError(f"{where}: blob columns inside lists are not supported "
                                           "(the reference cannot read them either)")
        if not msg.HasField("inner_layout"):
            raise CorruptFileError(f"{where}: blob page has no inner layout")
        if not (pa.types.is_large_binary(leaf.dtype) or pa.types.is_binary(leaf.dtype)):
            raise CorruptFileError(f"{where}: a blob page in a column of type {leaf.dtype} (blobs are binary)")
        self.msg, self.leaf, self.rows, self.where = msg, leaf, page_rows, where
        self.layers = list(msg.layers)
        canonical_defs(None, self.layers, list(leaf.shape), where)
        inner_leaf = Leaf(_DESCRIPTOR, (ITEM,), leaf.grammar, leaf.version)
        name, sub, cls = LAYOUT.lookup(msg.inner_layout, where=where)
        if cls is BlobPage:
            raise CorruptFileError(f"{where}: a blob page inside a blob page")
        self.inner = cls(sub, inner_leaf, page_rows, where)

    def for_page(self, rows: int, where: str):
        new = super().for_page(rows, where)
        new.inner = self.inner.for_page(rows, where)
        return new

    def read(self, sel: Selection, page: PageData) -> PagePart:
        desc = self.inner.read(sel, page).values
        if desc.null_count:
            raise page.error("blob descriptors hold nulls")
        pos = desc.field("position").to_numpy(zero_copy_only=False).astype(np.uint64)
        size = desc.field("size").to_numpy(zero_copy_only=False).astype(np.uint64)
        null = (size == 0) & (pos != 0)
        defs = np.where(null, pos >> np.uint64(16), 0).astype(np.int64)
        if np.any(defs > 0xFFFF) or np.any(null & ((pos & np.uint64(0xFFFF)) != 0)):
            raise page.error("blob descriptor of a null value has a repetition level or a level above 16 bits")
        defs = canonical_defs(defs.astype(np.uint16), self.layers, list(self.leaf.shape), page.where)
        source = page.layout.source
        if np.any(size > np.uint64(source.size)):
            raise page.error(f"a blob descriptor's size is larger than the file of {source.size} bytes")
        keep = np.flatnonzero(~null & (size > 0))
        starts, lengths = pos[keep].astype(np.int64), size[keep].astype(np.int64)
        if len(keep) and (np.any(pos[keep] > np.uint64(source.size)) or np.any(starts + lengths > source.size)):
            raise page.error(f"a blob descriptor points outside the file of {source.size} bytes")
        blocks = source.read_many(list(zip(starts.tolist(), lengths.tolist())))
        data = np.frombuffer(b"".join(blocks), np.uint8) if blocks else np.zeros(0, np.uint8)
        lens = np.where(null, 0, size).astype(np.int64)
        offsets = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        values = safe_array(pa.large_binary(), len(lens), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        if self.leaf.dtype != pa.large_binary():
            values = values.cast(self.leaf.dtype)
        return PagePart(None, defs, values, sel.count)
