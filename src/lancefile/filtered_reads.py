"""Filtered reads of one file: the zones its statistics may match, read and filtered.

:meth:`LanceFileReader.read_all` with ``filter=`` reads through :func:`filtered_batches`:
the file's statistics (:mod:`lancefile.file_statistics`) plan which zones may hold matching
rows, runs of adjacent zones are read at once, zones the statistics prove all match pass as
they are and the others are filtered. A filter on columns outside the projection reads them
with a second reader of the same file (a probe) and takes the matching rows' positions.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .encodings.arrowutil import unslice
from .file_statistics import contiguous_runs, plan_pieces
from .predicate import check_filter, filter_rows, to_expression

__all__ = ["filtered_batches"]

# a filtered read decodes and filters this many rows at a time (then hands out batch_size rows)
FILTER_BATCH_ROWS = 64 * 1024
_ROW_COLUMN = "__lancefile_row"


def filtered_batches(reader, expr, start: int, stop: int, batch_size: int):
    """The rows of ``reader``'s rows ``[start, stop)`` that match ``expr``, in batches of at
    most ``batch_size`` rows."""
    fields = check_filter(expr, reader._full_schema, reader.path)
    needed = [f.name for f in reader._lance_schema.fields] if fields is None else sorted({p[0] for p in fields})
    whole = {f.name for f, keep in reader._projection if keep is None}
    local = all(n in whole for n in needed)
    probe = None
    plan = reader._file_statistics().filter_plan(to_expression(expr, reader._full_schema), start, stop)
    # rows are read and filtered in large batches (a filter call costs the same for 1,000
    # rows as for 50,000), then handed out in batches of at most ``batch_size``
    inner = max(batch_size, FILTER_BATCH_ROWS)
    for run in contiguous_runs(plan):  # one read a run of adjacent zones: each read has a set-up cost
        a, b = run[0][0], run[-1][1]
        probes = None
        if not local and not all(every for _, _, every in run):
            if probe is None:
                probe = type(reader)(reader._source, columns=needed, verify_checksums=reader._verify_checksums)
            probes = probe._range_batches(a, b, inner)
        pos = a
        for batch in reader._range_batches(a, b, inner):
            fb = next(probes) if probes is not None else None
            # zones the statistics prove all match pass as they are; the others are filtered
            for x, y, every in plan_pieces(run, pos, pos + batch.num_rows):
                piece = batch.slice(x - pos, y - x)
                if not every and local:
                    piece = filter_rows(piece, expr)
                elif not every:
                    rows = fb.slice(x - pos, y - x)
                    rows = rows.append_column(_ROW_COLUMN, pa.array(np.arange(rows.num_rows, dtype=np.int64)))
                    piece = unslice(piece).take(filter_rows(rows, expr).column(_ROW_COLUMN))
                for k in range(0, piece.num_rows, batch_size):
                    yield piece.slice(k, batch_size)
            pos += batch.num_rows
