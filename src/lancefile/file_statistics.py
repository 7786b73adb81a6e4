"""Reading a Lance file's zone statistics (written by :mod:`lancefile.statistics`) and
planning which rows a filter needs from them.

:class:`FileStatistics` finds the statistics buffer of a file (the global buffer tagged
:data:`~lancefile.statistics.STATISTICS_MAGIC`), opens it as the small Lance file it is,
and reads one field's zones when a filter or a caller first asks for them; the whole-file
summary answers filters no row can match without reading any zone. Damaged or foreign
statistics are ignored with a :class:`~lancefile.statistics.StatisticsWarning`, never
trusted. :meth:`FileStatistics.filter_plan` turns a filter into row ranges, each marked
when every row of it matches; :func:`contiguous_runs` and :func:`plan_pieces` cut such a
plan for reading.

Example::

    >>> import pyarrow as pa, pyarrow.compute as pc, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.lance")
    >>> lancefile.write_table(pa.table({"x": list(range(10))}), path, statistics_zone_rows=4)
    >>> lancefile.LanceFileReader(path).matching_ranges(pc.field("x") >= 5)  # zones 1 and 2 of 3
    [(4, 10)]
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pyarrow as pa

from .errors import ColumnNotFoundError, LanceError
from .statistics import FILE_SUMMARY_KEY, FORMAT_VERSION, STATISTICS_MAGIC, StatisticsWarning, _decode_summary

__all__ = ["FileStatistics", "contiguous_runs", "plan_pieces"]


class FileStatistics:
    """The statistics of one Lance file, read column by column on demand (see the module doc)."""

    def __init__(self, reader) -> None:
        self._outer = reader
        self._reader = None
        self._cache: dict = {}  # field id -> its zones' struct array; ("zones"/"file", path) -> ZoneStats
        self.available = False
        try:
            index = self._find()
            if index is None:
                return
            self._open(index)
            self.available = True
        except (LanceError, ValueError, KeyError, pa.ArrowException) as exc:
            warnings.warn(f"{reader.path}: ignoring unusable statistics: {exc}", StatisticsWarning, stacklevel=3)

    def _find(self) -> int | None:
        """The global buffer that starts with :data:`STATISTICS_MAGIC` (the last one if several)."""
        refs = self._outer._layout.global_buffers
        candidates = [i for i in range(1, len(refs)) if refs[i].size > len(STATISTICS_MAGIC)]
        heads = self._outer._source.read_many([(refs[i].position, len(STATISTICS_MAGIC)) for i in candidates])
        found = [i for i, head in zip(candidates, heads) if bytes(head) == STATISTICS_MAGIC]
        return found[-1] if found else None

    def _open(self, index: int) -> None:
        from .io import SliceSource
        from .reader import LanceFileReader

        layout = self._outer._layout
        ref = layout.global_buffers[index]
        skip = len(STATISTICS_MAGIC)
        self._reader = LanceFileReader(SliceSource(self._outer._source, ref.position + skip, ref.size - skip,
                                                   f"{self._outer.path} (statistics)"))
        meta = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                for k, v in (self._reader.schema.metadata or {}).items()}
        if meta.get("lancefile:statistics:version") != FORMAT_VERSION:
            raise ValueError(f"unknown statistics version {meta.get('lancefile:statistics:version')!r}")
        if int(meta["num_rows"]) != self._outer.num_rows():
            raise ValueError(f"they describe {meta['num_rows']} rows, not the file's {self._outer.num_rows()}")
        self.zone_rows = int(meta["zone_rows"])
        if self.zone_rows <= 0:
            raise ValueError(f"zone_rows {self.zone_rows}")
        rows = self._outer.num_rows()
        self.row_offset = np.arange(0, rows, self.zone_rows, dtype=np.int64)
        self.num_rows = np.minimum(self.zone_rows, rows - self.row_offset)
        layout = json.loads(meta["fields"])
        self._where = {int(k): (int(v[1]), int(v[2]), bool(v[3])) for k, v in layout.items()}
        self.fields = {int(k): str(v[0]) for k, v in layout.items()}
        if self._reader.num_rows() != len(self._where):
            raise ValueError(f"{self._reader.num_rows()} rows of statistics for {len(self._where)} fields")
        self._summary_text = meta.get(FILE_SUMMARY_KEY)  # absent in files of earlier lancefile versions

    def _file_summary(self) -> pa.Table | None:
        """The whole file's statistics (one row per field, rows as in the zone table), or None."""
        if self._summary_text is not None:
            text, self._summary_text = self._summary_text, None
            try:
                summary = _decode_summary(text)
                ids = np.asarray(summary.column("field_id").to_numpy(zero_copy_only=False), dtype=np.int64)
                rows = {row: fid for fid, (row, _, _) in self._where.items()}
                if len(ids) != len(rows) or any(ids[row] != fid for row, fid in rows.items()):
                    raise ValueError("its rows do not match the statistics' fields")
                self._summary = summary
            except (ValueError, KeyError, IndexError, pa.ArrowException) as exc:
                warnings.warn(f"{self._outer.path}: ignoring the unusable file-level statistics: {exc}",
                              StatisticsWarning, stacklevel=4)
        return getattr(self, "_summary", None)

    def _cached(self, key: tuple, make):
        """``make(path)`` for ``key = (kind, path)``, computed once."""
        if key not in self._cache:
            self._cache[key] = make(key[1])
        return self._cache[key]

    def file_stats(self, path: tuple[str, ...]):
        """The whole file as one zone: a :class:`~lancefile.predicate.ZoneStats` for the field at ``path``, or None."""
        return self._cached(("file", path), self._file_stats)

    def _file_stats(self, path: tuple[str, ...]):
        from .predicate import ZoneStats

        summary = self._file_summary()
        fid = self._field_id(path)
        if summary is None or fid is None or fid not in self._where:
            return None
        row, slot, _ = self._where[fid]
        one = summary.slice(row, 1)
        counts = [np.asarray(one.column(name).to_numpy(zero_copy_only=False), dtype=np.int64)
                  for name in ("null_count", "nan_count")]
        return ZoneStats(np.array([self._outer.num_rows()], np.int64), counts[0], counts[1],
                         one.column(f"min_{slot}").chunk(0), one.column(f"max_{slot}").chunk(0))

    def _field_id(self, path: tuple[str, ...]) -> int | None:
        from .projection import field_path

        try:
            return field_path(self._outer._lance_schema, ".".join(path))[-1].id
        except LanceError:
            return None

    def column(self, field_id: int):
        """Field ``field_id``'s statistics as a struct array (one value per zone), or None."""
        if not self.available or field_id not in self.fields:
            return None
        if field_id not in self._cache:
            row, slot, has_nan = self._where[field_id]
            try:
                names = ["field_id", "null_count"] + (["nan_count"] if has_nan else []) + [f"min_{slot}", f"max_{slot}"]
                sub = _projected(self._reader, names)
                got = sub.read_range(row, 1, batch_readahead=0).to_table()
                if got.column("field_id")[0].as_py() != field_id:
                    raise ValueError(f"row {row} holds field {got.column('field_id')[0]}, not {field_id}")
                parts = [got.column(name)[0].values for name in names[1:]]
                if any(len(p) != len(self.num_rows) for p in parts):
                    raise ValueError("wrong number of zones")
                labels = ["null_count"] + (["nan_count"] if has_nan else []) + ["min_value", "max_value"]
                self._cache[field_id] = pa.StructArray.from_arrays(parts, names=labels)
            except (LanceError, ValueError, IndexError, KeyError, pa.ArrowException) as exc:
                warnings.warn(f"{self._outer.path}: ignoring unusable statistics of field {field_id}: {exc}",
                              StatisticsWarning, stacklevel=3)
                self._cache[field_id] = None
        return self._cache[field_id]


    def tables(self, columns=None) -> dict[str, pa.Table]:
        """``{dotted path: table}``: one row per zone (see :meth:`LanceFileReader.statistics`)."""
        if not self.available:
            return {}
        wanted = None if columns is None else {columns} if isinstance(columns, str) else set(columns)
        out = {}
        for fid, path in self.fields.items():
            if wanted is not None and path not in wanted:
                continue
            col = self.column(fid)
            if col is None:
                continue
            parts = {"row_offset": pa.array(self.row_offset.astype(np.uint64)),
                     "num_rows": pa.array(self.num_rows.astype(np.uint64))}
            for name in ("null_count", "nan_count", "min_value", "max_value"):
                if col.type.get_field_index(name) >= 0:
                    parts[name.replace("_value", "")] = col.field(name)
            out[path] = pa.table(parts)
        if wanted is not None and wanted - set(out):
            raise ColumnNotFoundError(f"{self._outer.path}: no statistics for column(s) {sorted(wanted - set(out))} "
                                      f"(columns with statistics: {sorted(self.fields.values())})")
        return out

    def zone_stats(self, path: tuple[str, ...]):
        """The :class:`~lancefile.predicate.ZoneStats` of the field at ``path``, or None."""
        return self._cached(("zones", path), self._zone_stats)

    def _zone_stats(self, path: tuple[str, ...]):
        from .predicate import ZoneStats

        fid = self._field_id(path)
        col = None if fid is None else self.column(fid)
        if col is None:
            return None
        counts = {name: col.field(name).to_numpy(zero_copy_only=False).astype(np.int64)
                  for name in ("null_count", "nan_count") if col.type.get_field_index(name) >= 0}
        return ZoneStats(self.num_rows, counts["null_count"], counts.get("nan_count", np.zeros(len(col), np.int64)),
                         col.field("min_value"), col.field("max_value"))

    def matching_ranges(self, expr, start: int, stop: int) -> list[tuple[int, int]]:
        """Merged row ranges within [start, stop) of the zones that may match ``expr`` (all of it if unknown)."""
        ranges: list[tuple[int, int]] = []
        for a, b, _ in self.filter_plan(expr, start, stop):
            if ranges and ranges[-1][1] == a:
                ranges[-1] = (ranges[-1][0], b)
            else:
                ranges.append((a, b))
        return ranges

    def filter_plan(self, expr, start: int, stop: int) -> list[tuple[int, int, bool]]:
        """``(first row, end row, every row matches)`` of the zones within [start, stop) that may
        match ``expr``, neighbours with the same flag merged: where every row certainly
        matches, the filter need not be evaluated (nor its columns read)."""
        from .predicate import zone_outcomes, zones_may_match

        if start >= stop:
            return []
        if expr is None or not self.available:
            return [(start, stop, expr is None)]
        if not zones_may_match(expr, 1, self.file_stats)[0]:  # the whole file's bounds rule it out
            return []
        may, every = zone_outcomes(expr, len(self.num_rows), self.zone_stats)
        lo = np.maximum(self.row_offset, start)
        hi = np.minimum(self.row_offset + self.num_rows, stop)
        keep = may & (hi > lo)
        plan: list[tuple[int, int, bool]] = []
        for a, b, all_rows in zip(lo[keep].tolist(), hi[keep].tolist(), every[keep].tolist()):
            if plan and plan[-1][1] == a and plan[-1][2] == all_rows:
                plan[-1] = (plan[-1][0], b, all_rows)
            else:
                plan.append((a, b, all_rows))
        return plan


def contiguous_runs(plan: list[tuple[int, int, bool]]) -> list[list[tuple[int, int, bool]]]:
    """A :meth:`FileStatistics.filter_plan` cut where rows are skipped: runs of adjacent ranges."""
    runs: list[list[tuple[int, int, bool]]] = []
    for step in plan:
        if runs and runs[-1][-1][1] == step[0]:
            runs[-1].append(step)
        else:
            runs.append([step])
    return runs


def plan_pieces(run: list[tuple[int, int, bool]], start: int, stop: int) -> list[tuple[int, int, bool]]:
    """The parts of rows [start, stop) in each range of ``run``, with its flag."""
    return [(max(a, start), min(b, stop), every) for a, b, every in run if a < stop and b > start]


def _projected(reader, names: list[str]):
    from .reader import LanceFileReader

    return LanceFileReader(reader._source, columns=names)
