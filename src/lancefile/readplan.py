"""How a reader cuts its reads into chunks: :class:`ReadPlan`.

Rows are decoded a chunk at a time and then cut into batches, so the batch size does not
multiply the per-page work and a scan holds about one chunk whatever the file's size. A
chunk's rows come from an estimate of the Arrow bytes a row (the projected columns' stored
bytes, never less than what their types need), replaced by the measured size after each
chunk.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "plan.lance")
    >>> lancefile.write_table(pa.table({"a": list(range(1000)), "b": [1.5] * 1000}), path)
    >>> plan = lancefile.LanceFileReader(path)._plan
    >>> plan.columns(), plan.type_facts()
    ([0, 1], (16.0, True))
    >>> plan.chunk_rows(1024, 16.0, READ_CHUNK_BYTES)  # 16 MiB of 16-byte rows, whole batches
    1048576
"""

from __future__ import annotations

import pyarrow as pa

from .encodings.arrowutil import is_fixed_width, min_row_bytes
from .format.container import FileLayout
from .projection import kept

__all__ = ["ReadPlan", "chunk_end", "READ_CHUNK_BYTES", "MIN_COLUMN_CHUNK_BYTES", "MAX_READ_CHUNK_BYTES"]

# Rows are decoded in chunks of about this many bytes (of Arrow data) and then cut into
# batches, so a small batch size does not multiply the per-page work. A scan holds about
# one chunk at a time, whatever the file's size.
READ_CHUNK_BYTES = 16 * 1024 * 1024
# Projections of several columns get bigger chunks, so each column is read in pieces of at
# least this size, up to MAX_READ_CHUNK_BYTES in all: every chunk costs each column a pass
# of Python and a task on the read pool, and the fewer the chunks the less the two decoding
# threads wait for each other's Python. Measured on the nested bench table (4 columns: 24
# MiB chunks), alternating with pylance (9 runs each): batch size 65,536 1.02 -> 0.70x
# pylance's time, 1,024 0.77 -> 0.64x (16 MiB chunks -> 24); a scan then holds ~50 MB more.
MIN_COLUMN_CHUNK_BYTES = 6 * 1024 * 1024
MAX_READ_CHUNK_BYTES = 64 * 1024 * 1024

_TYPE_FACTS: dict = {}  # logical type of a field without children -> (min_row_bytes, is_fixed_width)


def chunk_end(pos: int, stop: int, rows: int) -> int:
    """Where a scan's chunk of ``rows`` rows from ``pos`` ends: a remainder of less than half a
    chunk joins it (every chunk costs each column a pass: 25,000 rows of a 1,000-column file
    read as 8,192 x 3 + 424 paid a fourth pass for 424 rows)."""
    end = min(stop, pos + rows)
    return stop if stop - end < rows // 2 else end


class ReadPlan:
    """The chunk sizes of one reader's reads (its projection fixed), worked out once.

    ``projection``: ``[(top-level field, keep-tree or None)]``; ``field_columns``: field id
    -> column index; ``storage_schema``: the Arrow types the projection decodes to.
    """

    def __init__(self, layout: FileLayout, projection: list, field_columns: dict, storage_schema: pa.Schema,
                 num_rows: int) -> None:
        self._layout = layout
        self._projection = projection
        self._field_columns = field_columns
        self._storage_schema = storage_schema
        self._num_rows = num_rows
        self._columns: list[int] | None = None
        self._scan: tuple[float, float, int] | None = None
        self._facts: tuple[float, bool] | None = None

    def columns(self) -> list[int]:
        """The column indices the projection reads (made once; not to be changed)."""
        if self._columns is None:
            wanted, owners = [], self._field_columns
            for f, keep in self._projection:
                for g in f.walk():
                    if g.id in owners and (keep is None or g is f or kept(keep, g)):
                        wanted.append(owners[g.id])
            self._columns = wanted
        return self._columns

    @staticmethod
    def chunk_rows(batch_size: int, row_bytes: float, target: int) -> int:
        """Rows decoded at once: about ``target`` bytes at ``row_bytes`` a row, whole batches."""
        chunk = max(batch_size, int(target // max(row_bytes, 1.0)))
        return max(batch_size, (chunk // batch_size) * batch_size)

    def scan(self) -> tuple[float, float, int]:
        """(first estimate of Arrow bytes a row, lower bound of it, chunk target in bytes).

        The estimate is the projected columns' stored bytes a row, but never less than what
        the Arrow types need (dictionary-encoded strings store a byte a row and decode to
        many); after each chunk the reader switches to the measured size.
        """
        if self._scan is None:  # a few microseconds a column; every column: the file's data bytes
            cols, layout = self.columns(), self._layout
            self._scan = self._of(layout.footer.column_meta_start if len(cols) == layout.num_columns
                                  else sum(layout.column(c).data_bytes_estimate() for c in cols))
        return self._scan

    def take(self) -> tuple[float, float, int]:
        """:meth:`scan` for grouping a take's rows, without looking at every projected column's
        pages (0.1 s of a 10,000-row take of 1,000 columns): the file's data bytes a row, the
        projected columns' share of them (the scan's plan once there is one)."""
        if self._scan is not None:
            return self._scan
        share = len(self.columns()) / max(self._layout.num_columns, 1)
        return self._of(self._layout.footer.column_meta_start * share)

    def _of(self, data: float) -> tuple[float, float, int]:
        floor = self.type_facts()[0]
        target = min(MAX_READ_CHUNK_BYTES, max(READ_CHUNK_BYTES, len(self.columns()) * MIN_COLUMN_CHUNK_BYTES))
        return max(floor, data / max(self._num_rows, 1)), floor, target

    def type_facts(self) -> tuple[float, bool]:
        """(Arrow bytes a row takes at least, whether every projected type is fixed-width),
        each field without children looked up by its logical type (a wide table's thousand
        columns share a few; asking Arrow about each type cost 2 ms)."""
        if self._facts is None:
            floor, fixed = 0.0, True
            for i, (f, keep) in enumerate(self._projection):
                key = f.logical_type if keep is None and not f.children else None  # it names the Arrow type
                facts = _TYPE_FACTS.get(key)
                if facts is None:
                    t = self._storage_schema.field(i).type
                    facts = (min_row_bytes(t), is_fixed_width(t))
                    if key is not None and len(_TYPE_FACTS) < 4096:
                        _TYPE_FACTS[key] = facts
                floor += facts[0]
                fixed = fixed and facts[1]
            self._facts = (floor, fixed)
        return self._facts
