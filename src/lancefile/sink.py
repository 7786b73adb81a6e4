"""The bytes of a Lance file being written: :class:`FileSink`.

:class:`~lancefile.writer.LanceFileWriter` decides what goes in a file; the sink puts it
there: buffers aligned and padded, small pieces queued and written together with one
``writev`` on a writer thread (while the next pages are encoded), every byte hashed on its
way for the checksums, the pages recorded per column,
and the tail (checksums, schema, column metadata, offset tables, footer) laid out in
memory and written last.

Example::

    >>> import os, tempfile
    >>> sink = FileSink(os.path.join(tempfile.mkdtemp(), "t.lance.tmp"), alignment=64, num_columns=1)
    >>> sink.write_buffer(b"abc"), sink.write_buffer(b"de")
    (BufferRef(position=0, size=3), BufferRef(position=64, size=2))
    >>> sink.file.close()
"""

from __future__ import annotations

import os

import numpy as np

from ._proto import file2_pb2
from .encodings.page import EncodedPage
from .format.checksums import (BLOCK_BYTES, BlockHasher, build_buffer as build_checksum_buffer,
                               buffer_size as checksum_buffer_size, hash_pieces, segment_hashes, segment_spans_many,
                               span_hashes)
from .format.grids import grid_hashes
from .format.container import (ARRAY_ENCODING_URL, BUFFER_PAD_BYTE, BufferRef, Footer, encode_footer,
                               encode_offset_table, pack_any)
from .tempfiles import create_locked
from .threadpools import shared_pool

__all__ = ["FileSink"]

_WRITEV = hasattr(os, "writev")
_IOV_MAX = 1024  # pieces per writev call (the POSIX minimum of IOV_MAX)
_QUEUE_BYTES = 8 << 20  # bytes the sink queues before it writes them out (one writev)
_OUT_OF_LINE_COPY_BYTES = 16 << 20  # out-of-line values up to this are gathered into one buffer first
_SYNC_EVERY_BYTES = 32 << 20  # written bytes between two background flushes to disk (see FileSink.sync)


class FileSink:
    """The temporary file being written, plus the pages recorded per column."""

    def __init__(self, path: str, alignment: int, num_columns: int, page_url: str = ARRAY_ENCODING_URL,
                 checksums: bool = True) -> None:
        self.path = path
        self.page_url = page_url
        self.alignment = alignment
        # every byte written is hashed as it goes by, while it is still in the CPU's caches
        self.hasher = BlockHasher() if checksums else None
        # segments hashed on their own (page buffers of at most a block, runs of chunks):
        # (positions, sizes, hashes) a page buffer, lists or arrays, in the order written
        self.small: list[tuple] = []
        self.num_small = 0
        # page buffers hashed in pieces (grids): (position, size, step, hashes), in file order
        self.grids: list[tuple] = []
        # Unbuffered: page buffers are large, and a BufferedWriter copy costs ~10x the write.
        # Locked while open, so a sweep by another writer knows it is alive (lancefile.tempfiles).
        self.file = create_locked(path)
        self.pos = 0
        self.pages: list[list[file2_pb2.ColumnMetadata.Page]] = [[] for _ in range(num_columns)]
        # small writes (a wide table's pages, padding) wait here and go out in one writev
        self._queue: list[memoryview] = []
        self._queued = 0
        self._unsynced = 0  # bytes written since the last background flush began
        self._syncing = None  # that flush (a future), while it runs
        self._writing = None  # the queue being written on the writer thread (a future), while it runs

    def write(self, data) -> int:
        """Write bytes-like ``data`` (or a list of pieces, back to back); return where it starts.

        Pieces are queued (not copied: the caller must not change them) and written together,
        with one ``writev``, once ``_QUEUE_BYTES`` wait or by :meth:`flush`: a wide table's
        thousands of small pages and paddings cost a few system calls, not one each."""
        start = self.pos
        pieces = data if isinstance(data, list) else [data]
        views = [memoryview(np.ascontiguousarray(p) if isinstance(p, np.ndarray) else p).cast("B") for p in pieces]
        views = [v for v in views if len(v)]
        if self.hasher is not None:
            for v in views:
                self.hasher.update(v)
        self.pos += sum(len(v) for v in views)
        self._queue.extend(views)
        self._queued += sum(len(v) for v in views)
        if self._queued >= _QUEUE_BYTES or len(self._queue) >= _IOV_MAX:
            self.flush_queue()
        return start

    def flush_queue(self) -> None:
        """Start writing the queued pieces, on the writer thread, while encoding goes on.

        One queue at a time is in flight (at most ``_QUEUE_BYTES`` held beyond the queue): the
        previous one is awaited first, and its error (disk full...) surfaces here."""
        if self._queue:
            views, self._queue, self._queued = self._queue, [], 0
            self._await_write()
            # (two threads: two sinks writing at once do not wait for each other's writes)
            self._writing = shared_pool("writev", 2).submit(self._write_views, views)

    def _await_write(self) -> None:
        if self._writing is not None:
            writing, self._writing = self._writing, None
            writing.result()

    def flush(self) -> None:
        """Everything written so far is in the file (not yet synced)."""
        self.flush_queue()
        self._await_write()
        self.file.flush()

    def _write_views(self, views: list) -> None:
        """Write views back to back with as few system calls as possible (writev)."""
        fd, i = self.file.fileno(), 0
        self._unsynced += sum(len(v) for v in views)  # (before the loop trims views written in part)
        while i < len(views):
            n = os.writev(fd, views[i : i + _IOV_MAX]) if _WRITEV else self.file.write(views[i])
            if not n:
                raise OSError(f"cannot write to {self.path}: no progress")
            while i < len(views) and n >= len(views[i]):  # a write may be short: resume mid-piece
                n -= len(views[i])
                i += 1
            if n:
                views[i] = views[i][n:]
        if self._unsynced >= _SYNC_EVERY_BYTES and (self._syncing is None or self._syncing.done()):
            self._background_sync()

    def _background_sync(self) -> None:
        """Start flushing what is written so far to disk, on another thread, while encoding
        goes on: the fsync that ends the file then has only the tail left to wait for."""
        if self._syncing is not None:
            self._syncing.result()  # an error of the previous one (disk full...) surfaces here
        self._unsynced = 0
        self._syncing = shared_pool("sync", 1).submit(os.fdatasync if hasattr(os, "fdatasync") else os.fsync,
                                                      self.file.fileno())

    def sync(self) -> None:
        """Everything written is on disk (the background flush awaited, then fsync)."""
        self.flush()
        if self._syncing is not None:
            self._syncing.result()
            self._syncing = None
        os.fsync(self.file.fileno())

    def discard(self) -> None:
        """Close the file without finishing it (its background write and flush awaited, errors
        ignored: the file is about to be removed)."""
        writing, self._writing = self._writing, None
        _settle(writing)
        syncing, self._syncing = self._syncing, None  # read after the write: it may have started one
        _settle(syncing)
        self.file.close()

    def align(self) -> None:
        pad = (-self.pos) % self.alignment
        if pad:
            self.write(bytes([BUFFER_PAD_BYTE]) * pad)

    def write_buffer(self, data) -> BufferRef:
        self.align()
        start = self.write(data)
        return BufferRef(start, self.pos - start)

    def add_page(self, column: int, page: EncodedPage) -> None:
        refs = [self.write_buffer(b) for b in page.buffers]
        if self.hasher is not None:  # a reader checks a whole small buffer, or a run of chunks, by its own hash
            for k, (r, b) in enumerate(zip(refs, page.buffers)):
                if 0 < r.size <= BLOCK_BYTES:
                    self.small.append(([r.position], [r.size], [hash_pieces(b)]))
                    self.num_small += 1
                elif k in page.grids and not isinstance(b, list):
                    self.grids.append((r.position, r.size, page.grids[k], grid_hashes(b, page.grids[k])))
                elif k in page.cuts and not isinstance(b, list):
                    got = segment_hashes(r.position, b, page.cuts[k])
                    self.small.append(got)
                    self.num_small += len(got[0])
        self._record(column, page, [r.position for r in refs], [r.size for r in refs])

    def add_laid_out(self, data: np.ndarray, pages: list[tuple[int, EncodedPage, list[int], list[int]]]) -> None:
        """Pages whose buffers lie in ``data`` as :meth:`add_page` would write them one after
        the other (``(column, page, starts, sizes)``: where each buffer lies; the first at a
        multiple of the alignment, each next one at the next multiple after the one before,
        :data:`~lancefile.format.container.BUFFER_PAD_BYTE` between them): the bytes from the first buffer to the end of the
        last are written and hashed as one, and the pages recorded."""
        if not pages:
            return
        lo = pages[0][2][0]
        hi = pages[-1][2][-1] + pages[-1][3][-1]
        self.align()
        base = self.write(data[lo:hi]) - lo
        if self.hasher is not None:
            small_at, small_size = [], []  # buffers of at most a block, hashed whole
            cuts, counts, lengths, bases = [], [], [], []  # buffers hashed in segments
            for _col, page, starts, sizes in pages:
                for k, (start, size) in enumerate(zip(starts, sizes)):
                    if 0 < size <= BLOCK_BYTES:
                        small_at.append(start)
                        small_size.append(size)
                    elif k in page.cuts and not isinstance(page.buffers[k], list):
                        cuts.append(page.cuts[k])
                        counts.append(len(page.cuts[k]))
                        lengths.append(size)
                        bases.append(start)
            seg_at, seg_size = segment_spans_many(np.concatenate(cuts) if cuts else np.zeros(0, np.int64), counts,
                                                  lengths, bases)
            starts = np.concatenate([np.array(small_at, np.int64), seg_at])
            order = np.argsort(starts, kind="stable")  # (the checksum buffer lists them in file order)
            starts = starts[order]
            sizes = np.concatenate([np.array(small_size, np.int64), seg_size])[order]
            if len(starts):
                self.small.append((starts + base, sizes, span_hashes(memoryview(data), starts, sizes)))
                self.num_small += len(starts)
        for col, page, starts, sizes in pages:
            self._record(col, page, [base + s for s in starts], sizes)

    def _record(self, column: int, page: EncodedPage, positions: list[int], sizes: list[int]) -> None:
        self.pages[column].append(file2_pb2.ColumnMetadata.Page(
            buffer_offsets=positions,
            buffer_sizes=sizes,
            length=page.length,
            encoding=file2_pb2.Encoding(direct=file2_pb2.DirectEncoding(
                encoding=pack_any(self.page_url, page.encoding))),
            priority=0,
        ))

    def write_tail(self, descriptor: bytes, extra_globals: list[BufferRef],
                   column_encodings: list[file2_pb2.Encoding], footer_version: tuple[int, int]) -> None:
        """[checksums,] schema (global buffer 0), column metadata, offset tables and footer.

        Everything after the pages is laid out in memory first: the checksum buffer (the last
        global buffer, written first) holds the hashes of the schema, the column metadata and
        the tables that follow it (:mod:`lancefile.format.checksums`).
        """
        columns = [file2_pb2.ColumnMetadata(encoding=encoding, pages=pages).SerializeToString()
                   for encoding, pages in zip(column_encodings, self.pages)]
        checksum_ref = None
        self.align()
        if self.hasher is not None:
            covered = self.pos
            checksum_ref = BufferRef(covered, checksum_buffer_size(len(columns), covered, num_small=self.num_small,
                                                                   grids=self.grids))
        schema_at = self.pos if checksum_ref is None else _aligned(checksum_ref.position + checksum_ref.size,
                                                                    self.alignment)
        global_refs = [BufferRef(schema_at, len(descriptor))] + list(extra_globals)
        if checksum_ref is not None:
            global_refs.append(checksum_ref)
        col_refs, at = [], schema_at + len(descriptor)
        for raw in columns:
            col_refs.append(BufferRef(at, len(raw)))
            at += len(raw)
        cmo = encode_offset_table(col_refs)
        gbo = encode_offset_table(global_refs)
        major, minor = footer_version
        footer = encode_footer(Footer(schema_at + len(descriptor), at, at + len(cmo), len(global_refs), len(col_refs),
                                      major, minor))
        if checksum_ref is not None:
            hashes = self.hasher.finish()
            self.hasher = None  # the rest is covered by its own hashes
            # written in order: positions ascend
            small = tuple(np.concatenate([np.asarray(part[j], dt) for part in self.small]) if self.small
                          else np.zeros(0, dt) for j, dt in enumerate((np.int64, np.int64, np.uint64)))
            self.write(build_checksum_buffer(hashes, covered=checksum_ref.position, schema=descriptor, columns=columns,
                                             tail=footer + cmo + gbo[:-16], num_global_buffers=len(global_refs),
                                             small=small, grids=self.grids))
            self.align()
        assert self.pos == schema_at  # the plan above and the writes agree
        self.write([descriptor, *columns, cmo, gbo, footer])
        self.flush()  # the file is complete on disk

    def write_out_of_line(self, data: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Write values back to back, each starting aligned; return their positions."""
        a = self.alignment
        padded = (sizes + a - 1) // a * a
        self.align()
        base = self.pos
        starts = np.concatenate([[0], np.cumsum(padded)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)
        total = int(padded.sum())
        if total > _OUT_OF_LINE_COPY_BYTES:
            # large values (blobs): written in place, no copy and no index arrays
            data = np.ascontiguousarray(data).reshape(-1)
            src = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            pad = bytes([BUFFER_PAD_BYTE]) * a
            pieces = []
            for s0, s1, p in zip(src[:-1].tolist(), src[1:].tolist(), padded.tolist()):
                pieces.append(data[s0:s1])
                if p > s1 - s0:
                    pieces.append(pad[: p - (s1 - s0)])
            self.write(pieces)
        elif total:
            out = np.full(total, BUFFER_PAD_BYTE, dtype=np.uint8)
            src_starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            idx = np.arange(int(sizes.sum()), dtype=np.int64)
            dest = idx + np.repeat(starts - src_starts, sizes)
            out[dest] = data
            self.write(out)
        return base + starts


def _settle(running) -> None:
    """Wait for a background write or flush being abandoned, ignoring its error (the one
    being handled is the caller's)."""
    if running is not None:
        try:
            running.result()
        except Exception:
            pass


def _aligned(pos: int, alignment: int) -> int:
    return pos + (-pos) % alignment
