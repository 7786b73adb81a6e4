"""Per-zone bounds for column statistics: one compiled pass over a column's values.

A *zone* is a run of ``zone_rows`` rows of a column. Two kernels fold a column, chunk by
chunk, into per-zone accumulators:

* :func:`zone_bounds` for numbers (integers, floats, and booleans or temporals viewed as
  integers): smallest and largest value, null count and NaN count of each zone. NaN never
  counts towards the bounds (a NaN fails every ``<`` and ``>``, so it is skipped without a
  test); nulls come from the Arrow validity bitmap, read in place.
* :func:`binary_minmax_rows` for strings and binaries: the row of the smallest and of the
  largest value of each run of rows. Values compare as their bytes, lexicographically (for
  UTF-8 this is code point order, as Arrow orders strings); an 8-byte big-endian prefix
  decides almost every comparison with one integer compare, and values equal in those 8
  bytes compare by length when either is at most 8 bytes long.

Both have a plain-Python twin (``*_py``) that the tests cross-check.

Example::

    >>> import numpy as np
    >>> offsets = np.array([0, 2, 3, 6, 7]); data = np.frombuffer(b"bbaccca", np.uint8)
    >>> binary_minmax_rows(offsets, data, None, np.array([0, 2]), np.array([2, 4]))
    (array([1, 3]), array([0, 2]))
    >>> acc = ZoneAccumulator(np.dtype(np.float64), zone_rows=2)
    >>> acc.add(np.array([3.0, np.nan, -1.0, 5.0, 2.0]))
    >>> lo, hi, nulls, nans, real = acc.zones()
    >>> lo.tolist(), hi.tolist(), nans.tolist()
    ([3.0, -1.0, 2.0], [3.0, 5.0, 2.0], [1, 0, 0])
"""

from __future__ import annotations

import numpy as np

from ._common import _helper, _Kernel, load_u64

__all__ = ["binary_bounds", "binary_minmax_rows", "binary_minmax_rows_py", "zone_bounds", "zone_bounds_py",
           "zone_bounds_rows", "ZoneAccumulator"]

_NO_BITMAP = np.zeros(1, dtype=np.uint8)
# _PREFIX_MASKS[n]: the top n bytes of a 64-bit key (what a value of n < 8 bytes fills)
_PREFIX_MASKS = np.array([(0xFFFFFFFFFFFFFFFF << (8 * (8 - n))) & 0xFFFFFFFFFFFFFFFF for n in range(9)], np.uint64)


# -- numbers ---------------------------------------------------------------------------------

@_Kernel
def zone_bounds(values, bitmap, bit_offset, has_bitmap, first, zone_rows, lo, hi, nulls, nans, real):
    """Fold ``values`` (rows ``first``, ``first + 1``... of a column) into the accumulators of
    their zones (index ``row // zone_rows``): ``lo``/``hi`` hold the bounds so far (start them
    at the type's largest / smallest value), ``nulls``, ``nans`` and ``real`` (values that are
    neither null nor NaN) are counts added to. ``bitmap``: Arrow validity bits, value ``j``
    at bit ``bit_offset + j``, read only when ``has_bitmap``."""
    _fold_zones(values, bitmap, bit_offset, has_bitmap, first, zone_rows, lo, hi, nulls, nans, real)


@_Kernel
def _k_zone_bounds_rows(values, first, zone_rows, lo, hi, nulls, nans, real):
    # zone_bounds of each row of the 2-D values (no bitmap) into that row of the others
    for r in range(values.shape[0]):
        _fold_zones(values[r], _NO_BITMAP, 0, False, first, zone_rows, lo[r], hi[r], nulls[r], nans[r], real[r])


def zone_bounds_rows(values: np.ndarray, first: int, zone_rows: int) -> tuple[np.ndarray, ...]:
    """:func:`zone_bounds` of each row of a 2-D array of numbers without nulls (the next rows
    of as many columns, all from row ``first``), in one compiled call, into fresh zones:
    ``(lo, hi, nulls, nans, real)``, each ``(rows, zones)``, zone 0 being the one holding
    row ``first`` (:meth:`ZoneAccumulator.add_zones` folds a row of them into a column's).

    Example::

        >>> lo, hi, nulls, nans, real = zone_bounds_rows(np.array([[1.0, 4.0, 2.0], [np.nan, 0.5, 3.0]]), 1, 2)
        >>> lo.tolist(), hi.tolist(), real.tolist()  # (a zone without a real value keeps the extremes)
        ([[1.0, 2.0], [inf, 0.5]], [[1.0, 4.0], [-inf, 3.0]], [[1, 2], [0, 2]])
    """
    rows, n = values.shape
    start = first - first % zone_rows
    zones = (first + max(n, 1) - 1) // zone_rows - first // zone_rows + 1
    top, bottom = _extremes(values.dtype)
    lo = np.full((rows, zones), top, values.dtype)
    hi = np.full((rows, zones), bottom, values.dtype)
    counts = np.zeros((3, rows, zones), np.int64)
    if values.size:
        _k_zone_bounds_rows(values, first - start, zone_rows, lo, hi, counts[0], counts[1], counts[2])
    return lo, hi, counts[0], counts[1], counts[2]


@_helper
def _fold_zones(values, bitmap, bit_offset, has_bitmap, first, zone_rows, lo, hi, nulls, nans, real):
    n = values.shape[0]
    i = 0
    while i < n:
        z = (first + i) // zone_rows
        end = min(n, (z + 1) * zone_rows - first)
        seg = values[i:end]  # indices from 0 (not i): numba proves them non-negative and vectorises
        m = seg.shape[0]
        low = lo[z]
        high = hi[z]
        nan = 0
        valid = m
        if has_bitmap:
            valid = 0
            for j in range(m):
                b = bit_offset + i + j
                if (bitmap[b >> 3] >> (b & 7)) & 1:
                    v = seg[j]
                    valid += 1
                    if v != v:
                        nan += 1
                    if v < low:
                        low = v
                    if v > high:
                        high = v
        else:
            for j in range(m):
                v = seg[j]
                nan += v != v
                low = v if v < low else low
                high = v if v > high else high
        lo[z] = low
        hi[z] = high
        nulls[z] += m - valid
        nans[z] += nan
        real[z] += valid - nan
        i = end


def zone_bounds_py(values, bitmap, bit_offset, has_bitmap, first, zone_rows, lo, hi, nulls, nans, real):
    """Plain-Python twin of :func:`zone_bounds`."""
    for j, v in enumerate(values.tolist()):
        z = (first + j) // zone_rows
        b = bit_offset + j
        if has_bitmap and not (int(bitmap[b >> 3]) >> (b & 7)) & 1:
            nulls[z] += 1
        elif v != v:
            nans[z] += 1
        else:
            real[z] += 1
            lo[z] = min(lo[z], v)
            hi[z] = max(hi[z], v)


def _extremes(dtype: np.dtype):
    """(largest, smallest) value of ``dtype``: where a zone's low / high bound starts."""
    if dtype.kind == "f":
        return np.inf, -np.inf
    info = np.iinfo(dtype)
    return info.max, info.min


class ZoneAccumulator:
    """Per-zone bounds and counts of one numeric column, grown as its rows arrive.

    ``add`` takes the next values (a numpy array; with an Arrow validity bitmap when some
    are null). ``bounds`` (rows lo, hi; of the values' dtype) and ``counts`` (rows nulls,
    nans, real; int64) hold one column per zone, for the zones seen so far and a few beyond.
    """

    def __init__(self, dtype: np.dtype, zone_rows: int) -> None:
        self.dtype = np.dtype(dtype)
        self.zone_rows = zone_rows
        self.rows = 0
        self._start = np.array(_extremes(self.dtype), self.dtype).reshape(2, 1)  # where lo / hi begin
        self.bounds = np.zeros((2, 0), self.dtype)
        self.counts = np.zeros((3, 0), np.int64)

    def _grow(self, zones: int) -> None:
        have = self.bounds.shape[1]
        if zones <= have:
            return
        size = max(zones, 2 * have)
        bounds = np.empty((2, size), self.dtype)
        bounds[:, :have] = self.bounds
        bounds[:, have:] = self._start
        counts = np.zeros((3, size), np.int64)
        counts[:, :have] = self.counts
        self.bounds, self.counts = bounds, counts

    def add(self, values: np.ndarray, bitmap: np.ndarray | None = None, bit_offset: int = 0) -> None:
        n = len(values)
        if n == 0:
            return
        if bitmap is not None and (bit_offset < 0 or len(bitmap) * 8 < bit_offset + n):
            raise ValueError(f"{n} values need {n} validity bits from bit {bit_offset}")
        self._grow((self.rows + n - 1) // self.zone_rows + 1)
        has = bitmap is not None
        b, c = self.bounds, self.counts
        zone_bounds(values, bitmap if has else _NO_BITMAP, bit_offset, has, self.rows, self.zone_rows,
                    b[0], b[1], c[0], c[1], c[2])
        self.rows += n

    def add_zones(self, n: int, lo: np.ndarray, hi: np.ndarray, nulls: np.ndarray, nans: np.ndarray,
                  real: np.ndarray) -> None:
        """Fold in the zones of its next ``n`` rows, made apart (a row of :func:`zone_bounds_rows`
        from this column's position): what :meth:`add` of those rows does."""
        if n == 0:
            return
        z0 = self.rows // self.zone_rows
        z1 = (self.rows + n - 1) // self.zone_rows + 1
        if len(lo) != z1 - z0:
            raise ValueError(f"{len(lo)} zones for rows {self.rows}..{self.rows + n}, which span {z1 - z0}")
        self._grow(z1)
        b, c = self.bounds, self.counts
        np.minimum(b[0, z0:z1], lo, out=b[0, z0:z1])
        np.maximum(b[1, z0:z1], hi, out=b[1, z0:z1])
        c[0, z0:z1] += nulls
        c[1, z0:z1] += nans
        c[2, z0:z1] += real
        self.rows += n

    def zones(self) -> tuple[np.ndarray, ...]:
        """(lo, hi, nulls, nans, real), one entry per zone of the rows added so far."""
        z = -(-self.rows // self.zone_rows)
        return self.bounds[0, :z], self.bounds[1, :z], self.counts[0, :z], self.counts[1, :z], self.counts[2, :z]


# -- strings and binaries ----------------------------------------------------------------------


def _tail_order(data, offsets, i, j):
    """-1, 0 or 1 as value i is less than, equal to or greater than value j, given that their
    8-byte prefix keys are equal (so their first min(8, length) bytes agree)."""
    a0 = offsets[i]
    an = offsets[i + 1] - a0
    b0 = offsets[j]
    bn = offsets[j + 1] - b0
    if an > 8 and bn > 8:
        m = an if an < bn else bn
        for k in range(8, m):
            x = data[a0 + k]
            y = data[b0 + k]
            if x != y:
                return -1 if x < y else 1
    if an == bn:
        return 0
    return -1 if an < bn else 1


_tail_order._lancefile_helper = True


def _prefix_key(data, offsets, i):
    """The first 8 bytes of value i as a big-endian integer (zero-padded): keys order like prefixes."""
    a0 = offsets[i]
    n = offsets[i + 1] - a0
    if a0 + 8 <= data.shape[0]:  # one load, bytes swapped into big-endian order, the tail cleared
        x = load_u64(data, a0)
        x = ((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8)) | ((x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF))
        x = ((x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16)) | ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF))
        x = (x << np.uint64(32)) | (x >> np.uint64(32))
        return x & _PREFIX_MASKS[min(n, 8)]
    if n > 8:
        n = 8
    key = np.uint64(0)
    for k in range(8):
        key = key << np.uint64(8)
        if k < n:
            key = key | np.uint64(data[a0 + k])
    return key


_prefix_key._lancefile_helper = True


@_Kernel
def _k_minmax(offsets, data, bitmap, bit_offset, has_bitmap, starts, ends, lo, hi, count):
    # Low-cardinality columns tie with the current bounds often, at random: the order of
    # two values with equal keys is a comparison of lengths (no branch) unless both are
    # longer than 8 bytes, which needs their tails (a branch rarely taken).
    size = data.shape[0]
    for z in range(starts.shape[0]):
        best_lo = -1
        best_hi = -1
        key_lo = np.uint64(0)
        key_hi = np.uint64(0)
        len_lo = 0
        len_hi = 0
        valid = 0
        first = starts[z]
        off = offsets[first:ends[z] + 1]  # indices from 0: no negative-index checks in the loop
        for j in range(off.shape[0] - 1):
            i = first + j
            if has_bitmap:
                b = bit_offset + i
                if not (bitmap[b >> 3] >> (b & 7)) & 1:
                    continue
            valid += 1
            a0 = off[j]
            n = off[j + 1] - a0
            if a0 + 8 <= size:  # inline (a call here costs more than the rest of the loop)
                x = load_u64(data, a0)  # bytes swapped into big-endian order, the tail cleared
                x = (((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8))
                     | ((x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)))
                x = (((x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16))
                     | ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)))
                key = ((x << np.uint64(32)) | (x >> np.uint64(32))) & _PREFIX_MASKS[min(n, 8)]
            else:
                key = _prefix_key(data, offsets, i)
            if best_lo < 0:
                best_lo = i
                best_hi = i
                key_lo = key
                key_hi = key
                len_lo = n
                len_hi = n
                continue
            long = n > 8
            tie_lo = key == key_lo
            if tie_lo & long & (len_lo > 8):
                less = _tail_order(data, offsets, i, best_lo) < 0
            else:
                less = (key < key_lo) | (tie_lo & (n < len_lo))
            tie_hi = key == key_hi
            if tie_hi & long & (len_hi > 8):
                more = _tail_order(data, offsets, i, best_hi) > 0
            else:
                more = (key > key_hi) | (tie_hi & (n > len_hi))
            if less:  # rarely taken once a zone's first values are seen
                best_lo = i
                key_lo = key
                len_lo = n
            if more:
                best_hi = i
                key_hi = key
                len_hi = n
        lo[z] = best_lo
        hi[z] = best_hi
        count[z] = valid


def binary_bounds(offsets, data, bitmap, bit_offset, starts, ends) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each run [starts[z], ends[z]) of a string/binary column: the rows of its smallest and
    largest value (-1 where all null) and its number of non-null values. ``bitmap``: None (no
    nulls) or the Arrow validity bitmap (``uint8``; row ``i`` at bit ``bit_offset + i``)."""
    lo = np.empty(len(starts), dtype=np.int64)
    hi = np.empty(len(starts), dtype=np.int64)
    count = np.empty(len(starts), dtype=np.int64)
    has = bitmap is not None
    offsets = np.asarray(offsets)
    if offsets.dtype not in (np.int32, np.int64):
        offsets = offsets.astype(np.int64)
    rows = int(np.max(ends, initial=0))  # the kernel reads unchecked: check its bounds here
    if len(starts) and (np.min(starts) < 0 or np.any(np.asarray(starts) > np.asarray(ends))):
        raise ValueError("runs must satisfy 0 <= start <= end")
    if rows >= len(offsets) or (rows and (offsets[0] < 0 or offsets[rows] > len(data))) or \
            (has and (bit_offset < 0 or len(bitmap) * 8 < bit_offset + rows)):
        raise ValueError(f"{rows} rows need {rows + 1} offsets within the data and {rows} validity bits")
    _k_minmax(offsets, np.asarray(data, dtype=np.uint8), bitmap if has else _NO_BITMAP, bit_offset, has,
              np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64), lo, hi, count)
    return lo, hi, count


def binary_minmax_rows(offsets, data, valid, starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the smallest and largest value in each [starts[z], ends[z]); -1 where all null.

    ``valid``: None (no nulls) or a boolean array, one per row.
    """
    bitmap = None if valid is None else np.packbits(np.asarray(valid, dtype=bool), bitorder="little")
    lo, hi, _ = binary_bounds(offsets, data, bitmap, 0, starts, ends)
    return lo, hi


def binary_minmax_rows_py(offsets, data, valid, starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python twin of :func:`binary_minmax_rows` (``valid``: None or one boolean per row)."""
    raw = bytes(np.asarray(data, dtype=np.uint8))
    lo, hi = [], []
    for s, e in zip(starts, ends):
        rows = [i for i in range(s, e) if valid is None or valid[i]]
        vals = [raw[offsets[i]:offsets[i + 1]] for i in rows]
        lo.append(rows[vals.index(min(vals))] if rows else -1)
        hi.append(rows[vals.index(max(vals))] if rows else -1)
    return np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)
