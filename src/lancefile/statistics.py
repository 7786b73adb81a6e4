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
buffer of the data file after the 8-byte tag :data:`STATISTICS_MAGIC`.
The tag, not the schema, says where they are: the schema stays exactly the user's, and the
reference, which ignores global buffers it does not know, reads the file exactly as without
them. A reader fetches only the statistics columns it needs.

Example::

    >>> import pyarrow as pa, lancefile, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.lance")
    >>> lancefile.write_table(pa.table({"x": list(range(10))}), path, statistics_zone_rows=4)
    >>> stats = lancefile.LanceFileReader(path).statistics()["x"]
    >>> stats.column("min").to_pylist(), stats.column("max").to_pylist()
    ([0, 4, 8], [3, 7, 9])
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import ColumnNotFoundError, InvalidInputError, LanceError

__all__ = ["STATISTICS_MAGIC", "DEFAULT_ZONE_ROWS", "DEFAULT_MAX_BOUND_BYTES", "StatisticsCollector",
           "FileStatistics", "StatisticsWarning"]

STATISTICS_MAGIC = b"LFSTATS\x01"  # starts the global buffer that holds a file's statistics
FORMAT_VERSION = "1"
DEFAULT_ZONE_ROWS = 8192
DEFAULT_MAX_BOUND_BYTES = 64


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


def _kind(t: pa.DataType) -> str | None:
    if pa.types.is_dictionary(t):
        return _kind(t.value_type)
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_boolean(t):
        return "bool"
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


class _Zone:
    """Running statistics of the zone being filled."""

    __slots__ = ("lo", "hi", "nulls", "nans", "real")

    def __init__(self) -> None:
        self.lo = self.hi = None
        self.nulls = self.nans = self.real = 0

    def add(self, lo, hi, nulls: int, nans: int, real: int) -> None:
        if real:
            self.lo = lo if self.real == 0 or lo < self.lo else self.lo
            self.hi = hi if self.real == 0 or hi > self.hi else self.hi
        self.nulls += nulls
        self.nans += nans
        self.real += real


class StatisticsCollector:
    """Gathers per-zone statistics of the batches a writer receives, vectorised per batch."""

    def __init__(self, schema: pa.Schema, lance_schema, zone_rows: int = DEFAULT_ZONE_ROWS,
                 max_bound_bytes: int = DEFAULT_MAX_BOUND_BYTES) -> None:
        if isinstance(zone_rows, bool) or not isinstance(zone_rows, int) or zone_rows <= 0:
            raise InvalidInputError(f"statistics_zone_rows must be a positive integer, not {zone_rows!r}")
        if isinstance(max_bound_bytes, bool) or not isinstance(max_bound_bytes, int) or max_bound_bytes <= 0:
            raise InvalidInputError(f"statistics_max_bound_bytes must be a positive integer, not {max_bound_bytes!r}")
        self.fields = statistics_fields(schema, lance_schema)
        self.zone_rows = zone_rows
        self.max_bound_bytes = max_bound_bytes
        self.closed: list[list[tuple]] = [[] for _ in self.fields]  # per field: (lo, hi, nulls, nans, real)
        self.open = [_Zone() for _ in self.fields]
        self.by_column: dict[int, list[int]] = {}
        for k, f in enumerate(self.fields):
            self.by_column.setdefault(f.steps[0], []).append(k)
        self.pos = {i: 0 for i in self.by_column}  # rows seen, per top-level column

    def add_column(self, index: int, values) -> None:
        """The next rows of top-level column ``index`` (an Array or ChunkedArray).

        Columns arrive separately (a writer flushes each when its buffer fills), so each
        keeps its own position; work is vectorised over whatever arrives at once.
        """
        ks = self.by_column.get(index)
        if not ks:
            return
        for chunk in (values.chunks if isinstance(values, pa.ChunkedArray) else [values]):
            n = len(chunk)
            if n == 0:
                continue
            pos = self.pos[index]
            first = (-pos) % self.zone_rows
            starts = np.unique(np.concatenate([[0], np.arange(first, n, self.zone_rows)])).astype(np.int64)
            starts = starts[starts < n]
            ends = np.append(starts[1:], n)
            closes = (pos + ends) % self.zone_rows == 0  # which segments end a zone
            for k in ks:
                f = self.fields[k]
                arr = _leaf(chunk, f.steps[1:])
                for seg, close in zip(_segments(arr, f, starts, ends), closes):
                    self.open[k].add(*seg)
                    if close:
                        self._close(k)
            self.pos[index] = pos + n

    def _close(self, k: int) -> None:
        z = self.open[k]
        self.closed[k].append((z.lo, z.hi, z.nulls, z.nans, z.real))
        self.open[k] = _Zone()

    def table(self, rows: int) -> pa.Table:
        """The statistics of a file of ``rows`` rows as a table: one row per field.

        Columns: ``field_id``, ``null_count`` and ``nan_count`` (lists, one value per zone),
        and per distinct value type ``T`` a pair ``min_<k>``/``max_<k>`` of ``list<T>``
        (null for the fields of other types). The metadata maps each field id to its row and
        type slot, so a reader takes one row of four columns for one field, however wide
        the file; the zones are regular (``zone_rows`` each, the last one shorter).
        """
        if any(p != rows for p in self.pos.values()):
            raise RuntimeError(f"statistics saw {self.pos} rows per column, not {rows}")
        self.rows = rows
        if rows % self.zone_rows:
            for k in range(len(self.fields)):
                self._close(k)
        zones = -(-rows // self.zone_rows)
        # one group per value type (a slot); every per-zone computation is elementwise, so a
        # group's fields are done in one go on their zones laid end to end
        groups: dict[pa.DataType, list[int]] = {}
        for k, f in enumerate(self.fields):
            if len(self.closed[k]) != zones:
                raise RuntimeError(f"statistics of {f.path!r} cover {len(self.closed[k])} zones, not {zones}")
            groups.setdefault(f.type, []).append(k)
        order = [k for ks in groups.values() for k in ks]  # rows: the groups one after another
        slot_of = {k: slot for slot, ks in enumerate(groups.values()) for k in ks}
        n = len(order)
        offsets = pa.array(np.arange(n + 1, dtype=np.int32) * zones)
        null_parts, nan_parts, bounds = [], [], []
        for ks in groups.values():
            f = self.fields[ks[0]]
            st = _stats_array(f, [z for k in ks for z in self.closed[k]], self.max_bound_bytes)
            null_parts.append(st["null_count"])
            nan_parts.append(st.get("nan_count", pa.array(np.zeros(len(ks) * zones, np.uint64))))
            bounds.append((ks, st["min_value"], st["max_value"]))
        columns = {"field_id": pa.array([self.fields[k].id for k in order], pa.int32())}
        empty = pa.array([], pa.uint64())
        columns["null_count"] = pa.ListArray.from_arrays(offsets, pa.concat_arrays(null_parts) if n else empty)
        columns["nan_count"] = pa.ListArray.from_arrays(offsets, pa.concat_arrays(nan_parts) if n else empty)
        for slot, (ks, lo, hi) in enumerate(bounds):
            present = np.array([slot_of[k] == slot for k in order])
            lengths = np.where(present, zones, 0).astype(np.int32)
            slot_offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
            mask = pa.array(~present)
            columns[f"min_{slot}"] = pa.ListArray.from_arrays(slot_offsets, lo, mask=mask)
            columns[f"max_{slot}"] = pa.ListArray.from_arrays(slot_offsets, hi, mask=mask)
        per_field = [(self.fields[k], None, slot_of[k]) for k in order]
        meta = {"lancefile:statistics:version": FORMAT_VERSION, "zone_rows": str(self.zone_rows),
                "num_rows": str(rows), "max_bound_bytes": str(self.max_bound_bytes),
                "fields": json.dumps({str(f.id): [f.path, i, slot, f.kind == "float"]
                                      for i, (f, _, slot) in enumerate(per_field)})}
        return pa.table(columns).replace_schema_metadata(meta)

    def to_bytes(self, rows: int) -> bytes:
        """The global buffer: :data:`STATISTICS_MAGIC`, then the statistics as a small Lance 2.0 file.

        The small file is made in a private temporary directory (removed at once), never
        beside the user's file, so nothing of it can be left there.
        """
        import tempfile

        from .writer import LanceFileWriter

        table = self.table(rows)
        with tempfile.TemporaryDirectory(prefix="lancefile-statistics-") as directory:
            path = os.path.join(directory, "statistics.lance")
            with LanceFileWriter(path, table.schema, version="2.0", statistics=False) as w:
                w.write_batch(table)
            with open(path, "rb") as fh:
                return STATISTICS_MAGIC + fh.read()


def _leaf(arr: pa.Array, steps: tuple[int, ...]) -> pa.Array:
    for i in steps:
        arr = arr.flatten()[i]  # struct validity applied to the child
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


_INT_VIEW = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _numpy_values(arr: pa.Array, f: _Field) -> np.ndarray:
    t = arr.type
    if f.kind == "bool":
        return np.asarray(arr.cast(pa.uint8()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.uint8)
    if pa.types.is_temporal(t):
        arr = arr.view(pa.int64() if t.bit_width == 64 else pa.int32())
    if arr.null_count:
        arr = arr.fill_null(0)
    return arr.to_numpy(zero_copy_only=False)


def _segments(arr: pa.Array, f: _Field, starts: np.ndarray, ends: np.ndarray):
    """(lo, hi, nulls, nans, real) of each segment [starts[i], ends[i]) of ``arr``."""
    n = len(arr)
    valid = None if arr.null_count == 0 else np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    nulls = np.zeros(len(starts), np.int64) if valid is None else (ends - starts) - np.add.reduceat(valid, starts)
    if f.kind in ("int", "float", "bool"):
        v = _numpy_values(arr, f)
        ok = np.ones(n, dtype=bool) if valid is None else valid
        nans = np.zeros(len(starts), np.int64)
        if f.kind == "float":
            isnan = np.isnan(v) & ok
            nans = np.add.reduceat(isnan, starts) if len(v) else nans
            ok = ok & ~isnan
            big, small = np.array(np.inf, v.dtype), np.array(-np.inf, v.dtype)
        elif f.kind == "bool":
            big, small = np.uint8(1), np.uint8(0)
        else:
            info = np.iinfo(v.dtype)
            big, small = v.dtype.type(info.max), v.dtype.type(info.min)
        real = np.add.reduceat(ok, starts)
        if ok.all():
            lo, hi = np.minimum.reduceat(v, starts), np.maximum.reduceat(v, starts)
        else:
            lo = np.minimum.reduceat(np.where(ok, v, big), starts)
            hi = np.maximum.reduceat(np.where(ok, v, small), starts)
        return zip(lo.tolist(), hi.tolist(), nulls.tolist(), nans.tolist(), real.tolist())
    real = (ends - starts) - nulls
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        from .encodings.kernels import binary_minmax_rows

        width = np.int64 if (pa.types.is_large_string(t) or pa.types.is_large_binary(t)) else np.int32
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], dtype=width)[arr.offset: arr.offset + n + 1]
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        lo_i, hi_i = binary_minmax_rows(offsets, data, valid, starts, ends)
        has = lo_i >= 0
        lo_v = arr.take(pa.array(lo_i[has])).to_pylist()
        hi_v = arr.take(pa.array(hi_i[has])).to_pylist()
        return _zip_segments(lo_v, hi_v, nulls, real, has)
    try:
        # rank the distinct values once, then take min/max ranks per segment (vectorised)
        enc = pc.dictionary_encode(arr)
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
        real = (e - s) - nn
        if real:
            mm = pc.min_max(piece)
            out.append((mm["min"].as_py(), mm["max"].as_py(), nn, 0, real))
        else:
            out.append((None, None, nn, 0, 0))
    return out


def _zip_segments(lo_v: list, hi_v: list, nulls: np.ndarray, real: np.ndarray, has: np.ndarray) -> list[tuple]:
    """Per-segment tuples from the bounds of the segments that have values (``has``)."""
    out, j = [], 0
    for nn, rr, h in zip(nulls.tolist(), real.tolist(), has.tolist()):
        if h:
            out.append((lo_v[j], hi_v[j], nn, 0, rr))
            j += 1
        else:
            out.append((None, None, nn, 0, 0))
    return out


def _stats_array(f: _Field, zones: list[tuple], max_bound: int) -> dict[str, pa.Array]:
    lo = [z[0] for z in zones]
    hi = [z[1] for z in zones]
    real = np.array([z[4] for z in zones], dtype=np.int64)
    t = f.type
    if f.kind in ("int", "float", "bool"):
        phys = (np.float64 if f.kind == "float" else np.uint8 if f.kind == "bool" else
                np.uint64 if pa.types.is_unsigned_integer(t) else np.int64)
        lo_a = np.array([x if x is not None else 0 for x in lo], dtype=phys)
        hi_a = np.array([x if x is not None else 0 for x in hi], dtype=phys)
        if f.kind == "float":
            lo_a = np.where(real > 0, lo_a, -np.inf)
            hi_a = np.where(real > 0, hi_a, np.inf)
            lo_a = np.where(lo_a == 0, -0.0, lo_a)
            hi_a = np.where(hi_a == 0, 0.0, hi_a)
            lo_arr, hi_arr = pa.array(lo_a).cast(t, safe=False), pa.array(hi_a).cast(t, safe=False)
        elif f.kind == "bool":
            lo_arr = pa.array(np.where(real > 0, lo_a, 0).astype(bool))
            hi_arr = pa.array(np.where(real > 0, hi_a, 1).astype(bool))
        else:
            storage = pa.int64() if not pa.types.is_temporal(t) else (pa.int64() if t.bit_width == 64 else pa.int32())
            if pa.types.is_integer(t):
                storage = t
                info = np.iinfo(t.to_pandas_dtype())
            else:
                info = np.iinfo(np.int64 if t.bit_width == 64 else np.int32)
            lo_a = np.where(real > 0, lo_a, info.min).astype(storage.to_pandas_dtype())
            hi_a = np.where(real > 0, hi_a, info.max).astype(storage.to_pandas_dtype())
            lo_arr = pa.array(lo_a, storage).view(t) if storage != t else pa.array(lo_a, t)
            hi_arr = pa.array(hi_a, storage).view(t) if storage != t else pa.array(hi_a, t)
    else:
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
            lo = [None if x is None else _truncate_min(x, max_bound) for x in lo]
            hi = [None if x is None else _truncate_max(x, max_bound) for x in hi]
        lo_arr, hi_arr = pa.array(lo, t), pa.array(hi, t)
    out = {"null_count": pa.array(np.array([z[2] for z in zones], dtype=np.uint64))}
    if f.kind == "float":
        out["nan_count"] = pa.array(np.array([z[3] for z in zones], dtype=np.uint64))
    out["min_value"], out["max_value"] = lo_arr, hi_arr
    return out


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


class FileStatistics:
    """The statistics of one Lance file, read column by column on demand (see the module doc)."""

    def __init__(self, reader) -> None:
        self._outer = reader
        self._reader = None
        self._cache: dict[int, object] = {}
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

    def column(self, field_id: int):
        """Field ``field_id``'s statistics as a struct array (one value per zone), or None."""
        if not self.available or field_id not in self.fields:
            return None
        if field_id not in self._cache:
            row, slot, has_nan = self._where[field_id]
            try:
                names = ["field_id", "null_count"] + (["nan_count"] if has_nan else []) + [f"min_{slot}", f"max_{slot}"]
                sub = _projected(self._reader, names)
                got = sub.take_rows([row]).to_table()
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
        from .predicate import ZoneStats
        from .projection import field_path

        try:
            fid = field_path(self._outer._lance_schema, ".".join(path))[-1].id
        except LanceError:
            return None
        col = self.column(fid)
        if col is None:
            return None
        counts = {name: col.field(name).to_numpy(zero_copy_only=False).astype(np.int64)
                  for name in ("null_count", "nan_count") if col.type.get_field_index(name) >= 0}
        return ZoneStats(self.num_rows, counts["null_count"], counts.get("nan_count", np.zeros(len(col), np.int64)),
                         col.field("min_value"), col.field("max_value"))

    def matching_ranges(self, expr, start: int, stop: int) -> list[tuple[int, int]]:
        """Merged row ranges within [start, stop) of the zones that may match ``expr`` (all of it if unknown)."""
        from .predicate import zones_may_match

        if start >= stop:
            return []
        if expr is None or not self.available:
            return [(start, stop)]
        may = zones_may_match(expr, len(self.num_rows), self.zone_stats)
        lo = np.maximum(self.row_offset, start)
        hi = np.minimum(self.row_offset + self.num_rows, stop)
        keep = may & (hi > lo)
        ranges: list[tuple[int, int]] = []
        for a, b in zip(lo[keep].tolist(), hi[keep].tolist()):
            if ranges and ranges[-1][1] == a:
                ranges[-1] = (ranges[-1][0], b)
            else:
                ranges.append((a, b))
        return ranges


def _projected(reader, names: list[str]):
    from .reader import LanceFileReader

    return LanceFileReader(reader._source, columns=names)
