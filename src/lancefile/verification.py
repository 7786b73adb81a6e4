"""Checking a whole Lance file: :func:`verify` (``lancefile.verify``, and ``lancefile verify PATH...``).

A file lancefile wrote carries checksums of all its bytes (:mod:`lancefile.format.checksums`):
every block is read and compared, then the file is checked the way every file is: every
column's metadata parsed (each size and offset against the file), every page's encoding tree
unpacked, and every row of every column decoded and validated. The first damage found raises
:class:`~lancefile.ChecksumError` (a :class:`~lancefile.CorruptFileError`) or another
:class:`~lancefile.LanceError` naming the column, page and buffer; files without checksums
(the reference's) are checked the same way and the report says that none were present.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "v.lance")
    >>> lancefile.write_table(pa.table({"x": list(range(1000))}), path)
    >>> report = lancefile.verify(path)
    >>> report.checksums_present, report.rows, report.bytes_checked == os.path.getsize(path)
    (True, 1000, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ChecksumError
from .format.container import unpack_any
from .reader import LanceFileReader

__all__ = ["verify", "VerifyReport"]

# Checksummed bytes are read this much at a time.
READ_BYTES = 8 << 20
# Rows are decoded this many at a time.
DECODE_ROWS = 64 * 1024


@dataclass(frozen=True)
class VerifyReport:
    """What :func:`verify` checked in a file that is intact.

    Example::

        >>> import pyarrow as pa, lancefile, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "v.lance")
        >>> lancefile.write_table(pa.table({"a": [1, 2, 3]}), path)
        >>> report = lancefile.verify(path)
        >>> report.rows, report.checksums_present, report.decoded
        (3, True, True)
    """

    path: str
    version: str
    rows: int
    columns: int
    pages: int
    file_size: int
    checksums_present: bool
    bytes_checked: int  # bytes compared with a checksum (the whole file when checksums are present)
    decoded: bool  # every row of every column was decoded and validated

    def __str__(self) -> str:
        how = (f"checksums of all {self.bytes_checked:,} bytes match" if self.checksums_present
               else "no checksums present (structure checked only)")
        decoded = ", every page decoded" if self.decoded else ""
        return (f"{self.path}: OK (Lance {self.version}, {self.rows:,} rows, {self.columns} columns, "
                f"{self.pages} pages; {how}{decoded})")


def verify(source, *, decode: bool = True, progress=None) -> VerifyReport:
    """Check a whole Lance file; raise a :class:`~lancefile.LanceError` at the first damage found.

    ``decode=False`` skips decoding the rows (checksums, metadata and encodings only).
    ``progress(stage, done, total)`` is called as the work advances: stage ``"checksums"``
    counts bytes, ``"decoding"`` rows.

    Example::

        >>> import pyarrow as pa, lancefile, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "ok.lance")
        >>> lancefile.write_table(pa.table({"s": ["x", None]}), path)
        >>> str(lancefile.verify(path, decode=False)).endswith("match)")
        True
    """
    with LanceFileReader(source) as reader:
        layout = reader._layout
        ck = layout.checksums
        size = layout.file_size
        checked = 0
        if ck is not None:
            _check_blocks(layout, ck, progress)
            ck.check_all_segments(layout.raw_source, layout.describe_range)  # every segment's and grid piece's own hash
            # the bytes after the blocks: the checksum buffer (checked against itself when the
            # file was opened), the schema, the column metadata and the tail, each with its hash
            checked = size
        layout.prefetch_columns(range(layout.num_columns))
        url, message = reader._codec.page_encoding_url, reader._codec.page_encoding_message
        pages = 0
        for c in range(layout.num_columns):
            info = layout.column(c)  # checks its hash, sizes and offsets
            for p, page in enumerate(info.pages):
                unpack_any(page.encoding, url, message, where=f"{reader.path}: column {c} page {p}")
                pages += 1
        rows = reader.num_rows()
        if decode:
            done = 0
            for batch in reader.read_all(batch_size=DECODE_ROWS):  # validated as it is decoded
                done += batch.num_rows
                if progress is not None:
                    progress("decoding", done, rows)
        return VerifyReport(reader.path, reader.version, rows, layout.num_columns, pages, size, ck is not None,
                            checked, decode)


def _check_blocks(layout, ck, progress) -> None:
    """Compare every block, all of them: the error lists every damaged one (up to a few)."""
    source, B = layout.raw_source, ck.block_size
    bad: list[int] = []
    step = max(B, READ_BYTES // B * B)
    for start in range(0, ck.covered, step):
        n = min(step, ck.covered - start)
        try:
            ck.check_blocks(start // B, source.read(start, n))
        except ChecksumError:
            got = [int(h) for h in _hashes(source.read(start, n), B)]
            want = ck._blocks[start // B : start // B + len(got)]
            bad += (start // B + np.flatnonzero(np.array(got, dtype=np.uint64) != want)).tolist()
        if progress is not None:
            progress("checksums", start + n, ck.covered)
    if bad:
        ck._fail(np.array(bad), layout.describe_range)


def _hashes(view, B: int):
    from .format.checksums import block_hashes

    return block_hashes(view, B)


# Files at least this large get a progress bar on a terminal.
PROGRESS_BYTES = 16 << 20


def verify_paths(paths, *, decode: bool = True, out=None, err=None, progress: bool | None = None) -> int:
    """``lancefile verify PATH...``: check each file, print one line each; 0 only if all are intact.

    A progress bar goes to ``err`` for files of :data:`PROGRESS_BYTES` and more when it is a
    terminal (``progress=True`` always, ``False`` never).
    """
    import os
    import sys

    from .errors import LanceError
    from .textformat import ProgressBar

    out = out or sys.stdout
    err = err or sys.stderr
    failed = 0
    for path in paths:
        show = progress if progress is not None else (err.isatty() and _size(path) >= PROGRESS_BYTES)
        bar = ProgressBar(err, os.path.basename(path)) if show else None
        try:
            report = verify(path, decode=decode, progress=bar)
        except (LanceError, OSError) as exc:
            failed += 1
            if bar is not None:
                bar.clear()
            print(f"{path}: FAILED: {type(exc).__name__}: {exc}", file=out)
            continue
        if bar is not None:
            bar.clear()
        print(str(report), file=out)
    return 1 if failed else 0


def _size(path) -> int:
    import os

    try:
        return os.path.getsize(path)
    except OSError:
        return 0
