"""Per-zone column statistics, written into a Lance file and read back to skip data.

A *zone* is a fixed run of rows (:data:`DEFAULT_ZONE_ROWS`; the last zone may be shorter),
the same for every column and independent of page boundaries. For every column whose type
has an order (integers, floats, decimals, dates, times, timestamps, durations, booleans,
strings and binaries, dictionaries by value, and the leaves of structs) each zone records
``null_count``, ``min_value``, ``max_value`` and, for floats, ``nan_count``, by the format
spec's rules:

* NaN never counts towards min/max; a min of zero is recorded as -0.0, a max of zero as +0.0;
* unknown bounds (a zone with no value) are the type's extremes: the smallest / largest
  integer, -Inf / +Inf for floats, False / True; null for strings, binaries and decimals;
* string and binary bounds are cut to ``max_bound_bytes``: the min to a prefix, the max to a
  prefix whose last character is incremented (null when no such value exists).

The statistics are themselves a small Lance file, one row per field (``field_id``, and
lists of one value per zone: ``null_count``, ``nan_count``, and ``min_<k>``/``max_<k>`` for
the k-th distinct value type; see :meth:`StatisticsCollector.table`), stored in a global
buffer of the data file after the 8-byte tag :data:`STATISTICS_MAGIC`. Its schema metadata
also holds the same statistics for the whole file (one zone: :data:`FILE_SUMMARY_KEY`, an
Arrow IPC stream in base64), which arrive with the small file's footer: a filter that no
row of the file can match is answered from them without reading any zone.
The tag, not the schema, says where they are: the schema stays exactly the user's, and the
reference, which ignores global buffers it does not know, reads the file exactly as without
them. A reader fetches only the statistics columns it needs: :mod:`lancefile.file_statistics`
reads them and plans which zones a filter needs; this module writes them.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.lance")
    >>> lancefile.write_table(pa.table({"x": list(range(10))}), path, statistics_zone_rows=4)
    >>> stats = lancefile.LanceFileReader(path).statistics()["x"]
    >>> stats.column("min").to_pylist(), stats.column("max").to_pylist()
    ([0, 4, 8], [3, 7, 9])
"""

from __future__ import annotations

import base64
import functools
import json
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .encodings.kernels.minmax import ZoneAccumulator, binary_bounds, zone_bounds_rows
from .errors import InvalidInputError
from .threadpools import shared_pool

__all__ = ["STATISTICS_MAGIC", "DEFAULT_ZONE_ROWS", "DEFAULT_MAX_BOUND_BYTES", "StatisticsCollector",
           "StatisticsWarning"]

STATISTICS_MAGIC = b"LFSTATS\x01"  # starts the global buffer that holds a file's statistics
FORMAT_VERSION = "1"
DEFAULT_ZONE_ROWS = 8192
DEFAULT_MAX_BOUND_BYTES = 64
BACKGROUND_ROWS = 1 << 16  # columns of this many rows are folded on a background thread
BACKGROUND_THREADS = max(1, min(4, os.cpu_count() or 1))
FILE_SUMMARY_KEY = "file_statistics"  # the whole file's bounds and counts, in the statistics' metadata


class StatisticsWarning(UserWarning):
    """Statistics that cannot be used (damaged, or describing another file); they are ignored."""


@dataclass
class _Field:
    """A column that gets statistics: its id, dotted path, child-index path and value type."""

    id: int
    path: str
    steps: tuple[int, ...]
    type: pa.DataType   # the type min/max are stored as
    kind: str           # "int", "float", "bool", "other"


@functools.lru_cache(maxsize=256)  # a wide table has many columns of few types
def _kind(t: pa.DataType) -> str | None:
    if pa.types.is_dictionary(t):
        return _kind(t.value_type)
    if pa.types.is_interval(t):  # no order
        return None
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_fixed_size_binary(t) and t.byte_width == 0:  # every value b'': nothing to prune by
        return None
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t)):
        return "other"
    return None


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def statistics_fields(schema: pa.Schema, lance_schema) -> list[_Field]:
    """The columns of ``schema`` that get statistics (with their Lance field ids)."""
    out: list[_Field] = []

    def visit(af: pa.Field, lf, steps: tuple[int, ...], prefix: str) -> None:
        t = af.type
        if isinstance(t, pa.BaseExtensionType):
            return
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                visit(t.field(i), lf.children[i], steps + (i,), prefix + af.name + ".")
            return
        kind = _kind(t)
        if kind is not None and not (lf.metadata.get("lance-encoding:blob") or lf.is_blob):
            out.append(_Field(lf.id, prefix + af.name, steps, _value_type(t), kind))

    for i, (af, lf) in enumerate(zip(schema, lance_schema.fields)):
        visit(af, lf, (i,), "")
    return out


class _ValueZones:
    """Per-zone statistics of a column whose bounds are Python values (strings, binaries, decimals)."""

    def __init__(self) -> None:
        self.lo: list = []
        self.hi: list = []
        self.nulls: list[int] = []
        self.real: list[int] = []
        self.open = False  # whether the last zone is still being filled

    def add(self, segments, closes) -> None:
        """Fold each segment's (lo, hi, nulls, real) into the open zone, closing zones as told."""
        for (lo, hi, nulls, real), close in zip(segments, closes):
            if not self.open:
                self.lo.append(lo)
                self.hi.append(hi)
                self.nulls.append(nulls)
                self.real.append(real)
                self.open = True
            else:
                if real:
                    had = self.real[-1] > 0
                    self.lo[-1] = lo if not had or lo < self.lo[-1] else self.lo[-1]
                    self.hi[-1] = hi if not had or hi > self.hi[-1] else self.hi[-1]
                self.nulls[-1] += nulls
                self.real[-1] += real
            if close:
                self.open = False

    def zones(self) -> tuple:
        return self.lo, self.hi, np.array(self.nulls, np.int64), np.zeros(len(self.lo), np.int64), \
            np.array(self.real, np.int64)


class StatisticsCollector:
    """Gathers per-zone statistics of the columns a writer flushes, in one compiled pass per column."""

    def __init__(self, schema: pa.Schema, lance_schema, zone_rows: int = DEFAULT_ZONE_ROWS,
                 max_bound_bytes: int = DEFAULT_MAX_BOUND_BYTES) -> None:
        if isinstance(zone_rows, bool) or not isinstance(zone_rows, int) or zone_rows <= 0:
            raise InvalidInputError(f"statistics_zone_rows must be a positive integer, not {zone_rows!r}")
        if isinstance(max_bound_bytes, bool) or not isinstance(max_bound_bytes, int) or max_bound_bytes <= 0:
            raise InvalidInputError(f"statistics_max_bound_bytes must be a positive integer, not {max_bound_bytes!r}")
        self.fields = statistics_fields(schema, lance_schema)
        self.zone_rows = zone_rows
        self.max_bound_bytes = max_bound_bytes
        self.acc = [ZoneAccumulator(_numeric_dtype(f.type), zone_rows) if f.kind != "other" else _ValueZones()
                    for f in self.fields]
        self.by_column: dict[int, list[int]] = {}
        for k, f in enumerate(self.fields):
            self.by_column.setdefault(f.steps[0], []).append(k)
        self.pos = {i: 0 for i in self.by_column}  # rows seen, per top-level column
        self._pending = None  # the column being folded on the background pool

    def add_column(self, index: int, values) -> None:
        """The next rows of top-level column ``index`` (an Array or ChunkedArray).

        Columns arrive separately (a writer flushes each when its buffer fills), so each
        keeps its own position. Large columns are folded on a background thread (the kernels
        release the GIL) while the writer encodes them; a writer's columns are folded one at a
        time, in arrival order (the next waits for the one before), so memory stays bounded.
        """
        if index not in self.by_column:
            return
        if self._pending is not None and self._pending.done():
            self._wait()
        if self._pending is not None or len(values) >= BACKGROUND_ROWS:
            self._wait()  # one at a time: in order, on a pool several writers share
            self._pending = shared_pool("statistics", BACKGROUND_THREADS).submit(self._add, index, values)
        else:  # small, and nothing before it still running: here, without a thread hop
            self._add(index, values)

    def add_columns(self, indices: list[int], values: pa.Array, rows: int) -> None:
        """:meth:`add_column` of each of ``indices``, whose next ``rows`` values lie back to
        back in ``values`` (one number type, no nulls): their zones made in one compiled
        call when the columns are plain numbers at one position (a wide table's floats),
        else one column at a time."""
        ks = [self.by_column.get(i) for i in indices]
        accs = [self.acc[k[0]] if k and len(k) == 1 and len(self.fields[k[0]].steps) == 1 else None for k in ks]
        positions = {self.pos.get(i) for i in indices}
        dtype = np.dtype(values.type.to_pandas_dtype()) if pa.types.is_floating(values.type) else None
        if values.null_count or len(positions) != 1 or any(not isinstance(a, ZoneAccumulator) or a.dtype != dtype
                                                           for a in accs):
            for r, i in enumerate(indices):
                self.add_column(i, values.slice(r * rows, rows))
            return
        self._wait()  # (columns are folded in arrival order)
        (pos,) = positions
        matrix = np.frombuffer(values.buffers()[1], dtype, count=len(values),
                               offset=values.offset * dtype.itemsize).reshape(len(indices), rows)
        zones = zone_bounds_rows(matrix, pos, self.zone_rows)
        for r, (i, acc) in enumerate(zip(indices, accs)):
            acc.add_zones(rows, *(z[r] for z in zones))
            self.pos[i] = pos + rows

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _add(self, index: int, values) -> None:
        ks = self.by_column[index]
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        if len(chunks) > 1 and len(values) < len(chunks) * self.zone_rows:
            chunks = [pa.concat_arrays(chunks)]  # many small chunks: one pass over a copy costs less
        for chunk in chunks:
            n = len(chunk)
            if n == 0:
                continue
            pos = self.pos[index]
            for k in ks:
                f = self.fields[k]
                arr = _leaf(chunk, f.steps[1:], f.kind)
                acc = self.acc[k]
                if isinstance(acc, ZoneAccumulator):
                    _add_numbers(acc, arr, f)
                else:
                    first = (-pos) % self.zone_rows
                    starts = np.arange(first, n, self.zone_rows, dtype=np.int64)
                    if first:
                        starts = np.concatenate([np.zeros(1, np.int64), starts])
                    ends = np.append(starts[1:], n)
                    acc.add(_segments(arr, starts, ends), ((pos + ends) % self.zone_rows == 0).tolist())
            self.pos[index] = pos + n

    def table(self, rows: int) -> pa.Table:
        """The statistics of a file of ``rows`` rows as a table: one row per field.

        Columns: ``field_id``, ``null_count`` and ``nan_count`` (lists, one value per zone),
        and per distinct value type ``T`` a pair ``min_<k>``/``max_<k>`` of ``list<T>``
        (null for the fields of other types). The metadata maps each field id to its row and
        type slot, so a reader takes one row of four columns for one field, however wide
        the file; the zones are regular (``zone_rows`` each, the last one shorter).
        """
        self._wait()
        if any(p != rows for p in self.pos.values()):
            raise RuntimeError(f"statistics saw {self.pos} rows per column, not {rows}")
        self.rows = rows
        zones = -(-rows // self.zone_rows)
        # one group per value type (a slot); every per-zone computation is elementwise, so a
        # group's fields are done in one go on their zones laid end to end
        groups: dict[pa.DataType, list[int]] = {}
        per_field = []
        for k, f in enumerate(self.fields):
            got = self.acc[k].zones()
            if len(got[2]) != zones:
                raise RuntimeError(f"statistics of {f.path!r} cover {len(got[2])} zones, not {zones}")
            per_field.append(got)
            groups.setdefault(f.type, []).append(k)
        order = [k for ks in groups.values() for k in ks]  # rows: the groups one after another
        slot_of = {k: slot for slot, ks in enumerate(groups.values()) for k in ks}
        n = len(order)
        offsets = pa.array(np.arange(n + 1, dtype=np.int32) * zones)
        parts = []
        for ks in groups.values():
            joined = [_join([per_field[k][j] for k in ks]) for j in range(5)]
            parts.append(_stats_array(self.fields[ks[0]], *joined, len(ks), zones, self.max_bound_bytes))

        def joined(name: str) -> pa.Array:
            return pa.concat_arrays([p[name] for p in parts]) if n else pa.array([], pa.uint64())

        columns = {"field_id": pa.array([self.fields[k].id for k in order], pa.int32()),
                   "null_count": pa.ListArray.from_arrays(offsets, joined("null_count")),
                   "nan_count": pa.ListArray.from_arrays(offsets, joined("nan_count"))}
        # the whole file's statistics, one row per field in the same order (one value each)
        whole = {"field_id": columns["field_id"], "null_count": joined("file_null_count"),
                 "nan_count": joined("file_nan_count")}
        for slot, st in enumerate(parts):
            present = np.array([slot_of[k] == slot for k in order])
            lengths = np.where(present, zones, 0).astype(np.int32)
            slot_offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
            mask = pa.array(~present)
            columns[f"min_{slot}"] = pa.ListArray.from_arrays(slot_offsets, st["min_value"], mask=mask)
            columns[f"max_{slot}"] = pa.ListArray.from_arrays(slot_offsets, st["max_value"], mask=mask)
            pick = pa.array(np.cumsum(present) - 1, mask=~present)
            whole[f"min_{slot}"] = st["file_min"].take(pick)
            whole[f"max_{slot}"] = st["file_max"].take(pick)
        meta = {"lancefile:statistics:version": FORMAT_VERSION, "zone_rows": str(self.zone_rows),
                "num_rows": str(rows), "max_bound_bytes": str(self.max_bound_bytes),
                "fields": json.dumps({str(self.fields[k].id): [self.fields[k].path, i, slot_of[k],
                                                               self.fields[k].kind == "float"]
                                      for i, k in enumerate(order)}),
                FILE_SUMMARY_KEY: _encode_summary(pa.table(whole))}
        return pa.table(columns).replace_schema_metadata(meta)

    def to_bytes(self, rows: int, version: str = "2.0") -> bytes:
        """The global buffer: :data:`STATISTICS_MAGIC`, then the statistics as a small Lance file
        (made in a private temporary directory, never beside the user's file).

        ``version`` is the outer file's: a 2.0 file's statistics are a 2.0 file (read without
        the 2.1+ decoders), a 2.1+ file's are a 2.1 file, whose bit-packing makes them 30-40% of
        the 2.0 size (measured at the bench's scale 1: numeric 102 -> 32 KB, 1,000 float
        columns 247 -> 150 KB; 2.2's choices come out larger than 2.1's on these tables).
        """
        inner = "2.0" if version == "2.0" else "2.1"
        return STATISTICS_MAGIC + embedded_file_bytes(self.table(rows), version=inner)


def _leaf(arr: pa.Array, steps: tuple[int, ...], kind: str) -> pa.Array:
    for i in steps:
        arr = arr.flatten()[i]  # struct validity applied to the child
    if pa.types.is_dictionary(arr.type) and (kind != "other" or arr.dictionary.null_count):
        arr = arr.dictionary_decode()  # numbers: their own kernel; strings: ranked by _segments
    return arr


def _numeric_dtype(t: pa.DataType) -> np.dtype:
    """The numpy type the zones of a number column are folded in (and bounds kept as)."""
    if pa.types.is_boolean(t):
        return np.dtype(np.uint8)
    if pa.types.is_floating(t):
        return np.dtype(np.float64 if t.bit_width == 64 else np.float32)  # numba has no float16
    if pa.types.is_integer(t):
        return np.dtype(t.to_pandas_dtype())
    return np.dtype(np.int64 if t.bit_width == 64 else np.int32)  # temporal: its storage


def _add_numbers(acc: ZoneAccumulator, arr: pa.Array, f: _Field) -> None:
    """Fold a number column's next values into its zones, reading its Arrow buffers in place."""
    t = arr.type
    if pa.types.is_boolean(t) or pa.types.is_float16(t):
        arr = arr.cast(pa.uint8() if pa.types.is_boolean(t) else pa.float32())
    elif pa.types.is_temporal(t):
        arr = arr.view(pa.from_numpy_dtype(acc.dtype))
    bufs = arr.buffers()
    n = len(arr)
    if bufs[1] is None:
        values = np.zeros(n, acc.dtype)
    else:
        values = np.frombuffer(bufs[1], acc.dtype, count=n, offset=arr.offset * acc.dtype.itemsize)
    if arr.null_count:
        acc.add(values, np.frombuffer(bufs[0], np.uint8), arr.offset)
    else:
        acc.add(values)


_BINARY = (pa.types.is_string, pa.types.is_binary, pa.types.is_large_string, pa.types.is_large_binary)


def _segments(arr: pa.Array, starts: np.ndarray, ends: np.ndarray) -> list[tuple]:
    """(lo, hi, nulls, real) of each segment [starts[i], ends[i]) of a string, binary,
    decimal or fixed-size binary column (or a dictionary of those)."""
    n = len(arr)
    t = arr.type
    if any(is_type(t) for is_type in _BINARY):
        width = np.int64 if (pa.types.is_large_string(t) or pa.types.is_large_binary(t)) else np.int32
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], dtype=width, count=n + 1, offset=arr.offset * np.dtype(width).itemsize)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        bitmap = np.frombuffer(bufs[0], np.uint8) if arr.null_count else None
        lo_i, hi_i, real = binary_bounds(offsets, data, bitmap, arr.offset, starts, ends)
        has = real > 0
        lo_v = arr.take(pa.array(lo_i[has])).to_pylist()
        hi_v = arr.take(pa.array(hi_i[has])).to_pylist()
        return _zip_segments(lo_v, hi_v, (ends - starts) - real, real, has)
    valid = None if arr.null_count == 0 else np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    nulls = np.zeros(len(starts), np.int64) if valid is None else (ends - starts) - np.add.reduceat(valid, starts)
    real = (ends - starts) - nulls
    try:
        # rank the distinct values once, then take min/max ranks per segment (vectorised)
        enc = arr if pa.types.is_dictionary(t) else pc.dictionary_encode(arr)
        dictionary, idx = enc.dictionary, enc.indices
        order = np.asarray(pc.sort_indices(dictionary).to_numpy(zero_copy_only=False), dtype=np.int64)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        r = rank[np.asarray(idx.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)] if len(order) \
            else np.zeros(n, np.int64)
        if valid is not None:
            lo_r = np.minimum.reduceat(np.where(valid, r, len(order)), starts)
            hi_r = np.maximum.reduceat(np.where(valid, r, -1), starts)
        else:
            lo_r, hi_r = np.minimum.reduceat(r, starts), np.maximum.reduceat(r, starts)
        has = real > 0
        lo_v = dictionary.take(pa.array(order[lo_r[has]])).to_pylist()
        hi_v = dictionary.take(pa.array(order[hi_r[has]])).to_pylist()
        return _zip_segments(lo_v, hi_v, nulls, real, has)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        pass
    out = []
    for s, e, nn in zip(starts.tolist(), ends.tolist(), nulls.tolist()):
        piece = arr.slice(s, e - s)
        if (e - s) - nn:
            mm = pc.min_max(piece)
            out.append((mm["min"].as_py(), mm["max"].as_py(), nn, (e - s) - nn))
        else:
            out.append((None, None, nn, 0))
    return out


def _zip_segments(lo_v: list, hi_v: list, nulls: np.ndarray, real: np.ndarray, has: np.ndarray) -> list[tuple]:
    """Per-segment tuples from the bounds of the segments that have values (``has``)."""
    out, j = [], 0
    for nn, rr, h in zip(nulls.tolist(), real.tolist(), has.tolist()):
        if h:
            out.append((lo_v[j], hi_v[j], nn, rr))
            j += 1
        else:
            out.append((None, None, nn, 0))
    return out


def _join(parts: list):
    """Per-zone values of several fields, end to end (numpy arrays or lists)."""
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)
    return [x for p in parts for x in p]


def _stats_array(f: _Field, lo, hi, nulls: np.ndarray, nans: np.ndarray, real: np.ndarray, fields: int,
                 zones: int, max_bound: int) -> dict[str, pa.Array]:
    """Arrays of the zones of ``fields`` fields of one type laid end to end (``zones`` each),
    by the spec's rules, and the same for each whole field (``file_*``: one value a field)."""
    t = f.type
    has = (real > 0).reshape(fields, zones)
    if f.kind != "other":
        lo, hi = np.asarray(lo), np.asarray(hi)
        if f.kind == "float":
            lo = np.where(real > 0, lo, -np.inf)
            hi = np.where(real > 0, hi, np.inf)
            lo = np.where(lo == 0, -0.0, lo)  # a min of zero is -0.0, a max of zero +0.0
            hi = np.where(hi == 0, 0.0, hi)
            unknown_lo, unknown_hi = -np.inf, np.inf
        else:
            info = np.iinfo(lo.dtype)
            unknown_lo, unknown_hi = (0, 1) if f.kind == "bool" else (info.min, info.max)
            lo = np.where(real > 0, lo, unknown_lo).astype(lo.dtype)
            hi = np.where(real > 0, hi, unknown_hi).astype(hi.dtype)
        # the whole field: the bounds of its zones that have values
        file_lo = np.where(has, lo.reshape(fields, zones), unknown_hi).min(axis=1) if zones else lo[:0]
        file_lo = np.where(has.any(axis=1), file_lo, unknown_lo).astype(lo.dtype)
        file_hi = np.where(has, hi.reshape(fields, zones), unknown_lo).max(axis=1) if zones else hi[:0]
        file_hi = np.where(has.any(axis=1), file_hi, unknown_hi).astype(hi.dtype)
        if f.kind == "float":
            file_lo = np.where(file_lo == 0, -0.0, file_lo)
            file_hi = np.where(file_hi == 0, 0.0, file_hi)
        arrays = [_to_arrow(x, t, f.kind) for x in (lo, hi, file_lo, file_hi)]
    else:
        if any(is_type(t) for is_type in _BINARY):
            lo = [None if x is None else _truncate_min(x, max_bound) for x in lo]
            hi = [None if x is None else _truncate_max(x, max_bound) for x in hi]
        file_lo, file_hi = [], []
        for i in range(fields):
            ok = has[i].tolist()
            mins = [x for x, keep in zip(lo[i * zones:(i + 1) * zones], ok) if keep]
            maxs = [x for x, keep in zip(hi[i * zones:(i + 1) * zones], ok) if keep]
            file_lo.append(min(mins) if mins and None not in mins else None)  # None: unknown
            file_hi.append(max(maxs) if maxs and None not in maxs else None)
        arrays = [pa.array(x, t) for x in (lo, hi, file_lo, file_hi)]
    counts = [np.asarray(c, np.int64) for c in (nulls, nans)]
    return {"null_count": pa.array(counts[0].astype(np.uint64)), "nan_count": pa.array(counts[1].astype(np.uint64)),
            "min_value": arrays[0], "max_value": arrays[1],
            "file_null_count": pa.array(counts[0].reshape(fields, zones).sum(axis=1).astype(np.uint64)),
            "file_nan_count": pa.array(counts[1].reshape(fields, zones).sum(axis=1).astype(np.uint64)),
            "file_min": arrays[2], "file_max": arrays[3]}


def _to_arrow(values: np.ndarray, t: pa.DataType, kind: str) -> pa.Array:
    if kind == "bool":
        return pa.array(values.astype(bool))
    if kind == "float":
        return pa.array(values).cast(t, safe=False)  # float16 bounds were folded as float32: exact
    if pa.types.is_integer(t):
        return pa.array(values, t)
    return pa.array(values).view(t)  # temporal: from its storage integers


def _encode_summary(table: pa.Table) -> str:
    """The file-level statistics as text for the statistics file's schema metadata (Arrow IPC, base64)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")


def _decode_summary(text: str) -> pa.Table:
    return pa.ipc.open_stream(base64.b64decode(text, validate=True)).read_all()


def _truncate_min(x, limit: int):
    if isinstance(x, str):
        b = x.encode()
        if len(b) <= limit:
            return x
        return b[:limit].decode("utf-8", "ignore")
    return x[:limit]


def _truncate_max(x, limit: int):
    """The smallest value of at most ``limit`` bytes that is >= every value with prefix ``x[:limit]``."""
    if isinstance(x, str):
        if len(x.encode()) <= limit:
            return x
        chars = list(x.encode()[:limit].decode("utf-8", "ignore"))
        while chars:
            c = ord(chars.pop()) + 1
            if 0xD800 <= c <= 0xDFFF:
                c = 0xE000
            if c <= 0x10FFFF:
                out = "".join(chars) + chr(c)
                if len(out.encode()) <= limit:
                    return out
        return None
    if len(x) <= limit:
        return x
    b = bytearray(x[:limit])
    while b:
        if b[-1] < 0xFF:
            b[-1] += 1
            return bytes(b)
        b.pop()
    return None


def embedded_file_bytes(table: pa.Table, version: str) -> bytes:
    """``table`` as the bytes of a small Lance file to embed in another file (statistics).

    Made in a private temporary directory (never beside the user's file), removed with the
    file before returning, and never synced to disk: the file it goes into is. A directory
    kept for the process's life would be left in the temporary folder by every process that
    ends without running its exit handlers (Spark's Python workers, forked pool workers); a
    directory a call costs ~0.2 ms, next to ~1 ms to write the embedded file.
    """
    import tempfile

    from .tempfiles import EMBEDDED_PREFIX, sweep_staging
    from .writer import LanceFileWriter

    sweep_staging()  # what writers killed in here left (at most once a minute)
    with tempfile.TemporaryDirectory(prefix=EMBEDDED_PREFIX) as directory:
        w = LanceFileWriter(os.path.join(directory, "embedded.lance"), table.schema, version=version,
                            statistics=False)
        try:
            w.write_batch(table)
            w._finish()
            w._sink.flush()
            with open(w._tmp, "rb") as fh:
                return fh.read()
        finally:
            w.abort()
