"""FSST: the symbol table and decompression (training and compression: :mod:`.fsst_encode`).

Each string is compressed on its own into code bytes: code ``c < 255`` stands for symbol
``c`` (1..8 bytes), ``FSST_ESCAPE`` (255) copies the next byte as a literal.  The symbols
travel in a ``FSST_SYMBOL_TABLE_SIZE`` (2312) byte table: a u64 header, up to 255 u64
symbols, their u8 lengths, zeros after (header bits and a worked example in
:func:`fsst_parse_symbol_table`).  With symbol 0 = ``hello``, 1 = ``" "``, 2 = ``world``,
the codes ``00 01 02 ff 21`` decode to ``hello world!``.
"""

from __future__ import annotations

import struct
import threading

import numpy as np

from ...errors import CorruptFileError, InvalidInputError
from ._common import _byte_view, _Kernel, empty, run_parallel, store_u64

__all__ = [
    "FSST_SYMBOL_TABLE_SIZE",
    "FSST_ESCAPE",
    "FSST_MIN_INPUT_BYTES",
    "fsst_parse_symbol_table",
    "fsst_decompress",
    "fsst_decompress_spans",
    "fsst_decompress_spans_tables",
    "fsst_parse_symbol_tables",
    "fsst_make_symbol_table",
]

FSST_SYMBOL_TABLE_SIZE = 8 + 256 * 8 + 256
FSST_ESCAPE = 255
_FSST_MAGIC = 0x46535354  # "FSST", the high 32 bits of the table header
FSST_MIN_INPUT_BYTES = 32 * 1024  # the reference stores smaller inputs raw (switch off)


def fsst_parse_symbol_table(table) -> tuple[np.ndarray, np.ndarray, bool]:
    """Parse a 2312-byte FSST symbol table into ``(symbols, lengths, compressed)``.

    Layout: u64 header ``"FSST" << 32 | switch << 24 | suffix_lim << 16 | terminator << 8 |
    n_symbols``, then ``n_symbols`` u64 symbols (first byte in the low byte), then
    ``n_symbols`` u8 lengths (1..8), zeros after.  ``compressed`` is the switch bit: when
    it is clear the strings were stored raw.  E.g. a header ``ff 00 48 01 54 53 53 46``
    announces 255 symbols, terminator 0, suffix_lim 72, switch on.
    """
    raw = bytes(_byte_view(table))
    if len(raw) != FSST_SYMBOL_TABLE_SIZE:
        raise CorruptFileError(f"FSST symbol table has {len(raw)} bytes, expected {FSST_SYMBOL_TABLE_SIZE}")
    (header,) = struct.unpack_from("<Q", raw)
    if header >> 32 != _FSST_MAGIC:
        raise CorruptFileError(f"FSST symbol table has a bad magic (header {header:#018x})")
    n = header & 0xFF
    compressed = bool(header >> 24 & 1)
    symbols = np.frombuffer(raw, dtype="<u8", count=n, offset=8).astype(np.uint64)
    lengths = np.frombuffer(raw, dtype=np.uint8, count=n, offset=8 + 8 * n).copy()
    if compressed and n and (lengths.min() < 1 or lengths.max() > 8):
        raise CorruptFileError("FSST symbol table has a symbol length outside 1..8")
    return symbols, lengths, compressed


def _fsst_tables(symbols, lengths):
    symbols = np.asarray(symbols, dtype=np.uint64).reshape(-1)
    lengths = np.asarray(lengths, dtype=np.uint8).reshape(-1)
    n = symbols.size
    if n != lengths.size or n > 255:
        raise InvalidInputError(f"FSST needs matching symbols and lengths (at most 255), got {n} and {lengths.size}")
    if n and lengths.max() > 8:
        raise InvalidInputError("FSST symbol lengths must be at most 8")
    sym_bytes = np.zeros((256, 8), dtype=np.uint8)
    sym_bytes[:n] = symbols.astype("<u8").view(np.uint8).reshape(n, 8)
    lens = np.zeros(256, dtype=np.int64)
    lens[:n] = lengths
    return sym_bytes, lens, n


@_Kernel
def _k_fsst_measure(codes, starts, ends, bounds, lens, n_symbols, out_offsets):
    # Pass 1: output size of every string (string i is codes[starts[i]:ends[i]]), with
    # every check. Strings bounds[t]..bounds[t + 1] use symbol table t (lens[t], n_symbols[t]):
    # the pages of a take, each with its own table, in one call. Returns (status, string):
    # 1 = bad bounds, 2 = escape as the string's last byte, 3 = code without a symbol.
    ncodes = codes.shape[0]
    total = 0
    out_offsets[0] = 0
    for t in range(bounds.shape[0] - 1):
        n_sym = n_symbols[t]
        for i in range(bounds[t], bounds[t + 1]):
            p = starts[i]
            end = ends[i]
            if p < 0 or end < p or end > ncodes:
                return 1, i
            while p < end:
                c = codes[p]
                if c == 255:
                    if p + 1 >= end:
                        return 2, i
                    total += 1
                    p += 2
                elif c < n_sym:
                    total += lens[t, c]
                    p += 1
                else:
                    return 3, i
            out_offsets[i + 1] = total
    return 0, -1


@_Kernel
def _k_fsst_fill(codes, starts, ends, bounds, sym_u64, lens, out):
    # Pass 2: write the strings back to back into all of ``out``; the input was validated by
    # _k_fsst_measure (table t for strings bounds[t]..bounds[t + 1]). A symbol's 8 bytes are
    # stored at once (one unaligned store) in a string whose codes all have 8 bytes of room
    # in ``out`` (checked once a string), else byte by byte, so a half decoded on another
    # thread never writes into its neighbour's bytes.
    # The code position is unsigned: a signed index costs a negative-index fix-up on every
    # load (a quarter of this loop's time).
    pos = 0
    room = out.shape[0]
    one = np.uint64(1)
    for t in range(bounds.shape[0] - 1):
        syms = sym_u64[t]
        ln = lens[t]
        for i in range(bounds[t], bounds[t + 1]):
            p = np.uint64(starts[i])
            end = np.uint64(ends[i])
            wide = pos + 8 * (ends[i] - starts[i]) <= room  # the same for the whole string
            while p < end:
                c = codes[p]
                if c == 255:
                    out[pos] = codes[p + one]
                    pos += 1
                    p += one + one
                    continue
                if wide:
                    store_u64(out, pos, syms[c])
                else:
                    v = syms[c]
                    for k in range(ln[c]):
                        out[pos + k] = (v >> (8 * k)) & 0xFF
                pos += ln[c]
                p += one


@_Kernel
def _k_fsst_decode(codes, starts, ends, bounds, sym_u64, lens, n_symbols, out, out_offsets, i0, pos0):
    # Measuring and filling in one pass (large inputs: the codes are read once, not twice),
    # strings from i0 on, written from out[pos0] on, with _k_fsst_measure's checks. A string
    # starts only when out has 8 bytes of room for each of its codes (the most a code can
    # write); else the pass stops there. Returns (status, string, bytes written up to it):
    # status 0 = done, 4 = out of room at that string, 1..3 as _k_fsst_measure.
    ncodes = codes.shape[0]
    room = out.shape[0]
    pos = pos0
    one = np.uint64(1)
    for t in range(bounds.shape[0] - 1):
        syms = sym_u64[t]
        ln = lens[t]
        n_sym = n_symbols[t]
        for i in range(max(bounds[t], i0), bounds[t + 1]):
            a = starts[i]
            b = ends[i]
            if a < 0 or b < a or b > ncodes:
                return 1, i, pos
            if pos + 8 * (b - a) > room:
                return 4, i, pos
            p = np.uint64(a)
            end = np.uint64(b)
            while p < end:
                c = codes[p]
                if c == 255:
                    if p + one >= end:
                        return 2, i, pos
                    out[pos] = codes[p + one]
                    pos += 1
                    p += one + one
                    continue
                if c >= n_sym:
                    return 3, i, pos
                store_u64(out, pos, syms[c])
                pos += ln[c]
                p += one
            out_offsets[i + 1] = pos
    return 0, -1, pos


# Below this many code bytes, one thread decodes (a thread costs more than it saves).
PARALLEL_FSST_BYTES = 4 << 20
# From this many code bytes on, strings are decoded in one pass (see _decode_once).
ONE_PASS_FSST_BYTES = 1 << 20
# The output of a one-pass decode is first sized from the strings holding this many code bytes,
# with this much more than they expand to (then grown where the rest expands more).
_SAMPLE_CODE_BYTES = 64 * 1024
_ROOM = 1.2
# From this many code bytes on, a one-pass decode runs in two halves on two threads, unless
# another one-pass decode is running (a scan's next chunk: the two then have a core each, and
# the halves' joining copy would be extra work).
HALVES_FSST_BYTES = 4 << 20
_RUNNING = [0]  # one-pass decodes under way
_RUNNING_LOCK = threading.Lock()
# Training samples at most this many bytes of the input (see :mod:`.fsst_encode`).
FSST_SAMPLE_BYTES = 1 << 14


_FSST_ERRORS = {
    1: "has offsets that are decreasing or outside the {n}-byte code buffer",
    2: "ends with an escape byte (truncated escape)",
    3: "uses a code with no symbol in the table",
}


def fsst_decompress(codes, offsets, symbols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Decompress FSST strings; string i is ``codes[offsets[i]:offsets[i+1]]``.

    Code ``c < 255`` expands to ``symbols[c]`` (its low ``lengths[c]`` bytes); 255 escapes
    the next byte, which is copied as is.  Returns ``(data uint8, offsets int64)`` with
    ``offsets[0] == 0``.  Bad offsets, truncated escapes and codes beyond the table raise
    :class:`CorruptFileError`.  The output size is measured first (one validating pass), so
    nothing is over-allocated.
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
    if offsets.size == 0:
        return np.empty(0, np.uint8), np.zeros(1, np.int64)
    return _decompress(_byte_view(codes), offsets[:-1], offsets[1:], symbols, lengths)


def fsst_decompress_spans(data, starts, sizes, symbols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fsst_decompress` of strings that are not back to back: string i is
    ``data[starts[i] : starts[i] + sizes[i]]`` (e.g. the rows of a full-zip page, between
    their length words), read in place rather than gathered first.

    Example::

        >>> syms, lens = [int.from_bytes(b"hello", "little"), ord(" ")], [5, 1]
        >>> data, offs = fsst_decompress_spans(bytes([0, 46, 46, 1, 0]), [0, 3, 4], [1, 1, 1], syms, lens)
        >>> bytes(data), offs.tolist()
        (b'hello hello', [0, 5, 6, 11])
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64).reshape(-1)
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    if starts.shape != sizes.shape:
        raise InvalidInputError("starts and sizes must be equally long")
    return _decompress(_byte_view(data), starts, starts + sizes, symbols, lengths)


def _decompress(codes, starts, ends, symbols, lengths) -> tuple[np.ndarray, np.ndarray]:
    sym_bytes, lens, n = _fsst_tables(symbols, lengths)
    bounds = np.array([0, starts.size], np.int64)
    return _decompress_tables(codes, starts, ends, bounds, sym_bytes.view("<u8").reshape(1, 256),
                              lens.reshape(1, 256), np.array([n], np.int64))


def _raise_at(status: int, where: int, bounds: np.ndarray, ncodes: int) -> None:
    table = int(np.searchsorted(bounds, where, side="right")) - 1
    which = f" of symbol table {table}" if len(bounds) > 2 else ""  # numbered from the table's first
    err = CorruptFileError(f"FSST string {where - int(bounds[table])}{which} " + _FSST_ERRORS[status].format(n=ncodes))
    err.table = table  # which table's strings: a caller names its page
    raise err


def _decompress_tables(codes, starts, ends, bounds, sym_u64, lens, n_symbols) -> tuple[np.ndarray, np.ndarray]:
    """Strings ``bounds[t]..bounds[t + 1]`` decoded with table ``t`` (``sym_u64[t]``,
    ``lens[t]``, ``n_symbols[t]``): a measuring and a filling pass, or for large inputs
    one pass (:func:`_decode_once`)."""
    count = starts.size
    if count == 0:
        return np.empty(0, np.uint8), np.zeros(1, np.int64)
    spans = ends - starts
    if count > 1 and int(spans.sum()) >= ONE_PASS_FSST_BYTES and int(spans.min()) >= 0:
        return _decode_once(codes, starts, ends, spans, bounds, sym_u64, lens, n_symbols)
    # Large inputs are decoded in two halves on two threads (the kernels release the GIL):
    # counted in code bytes, not in the distance they span (a take's few strings scattered
    # over a page paid a thread hand-off each)
    halves = 2 if count > 1 and int((ends - starts).sum()) >= PARALLEL_FSST_BYTES else 1
    cuts = [count * k // halves for k in range(halves + 1)]
    parts = [(starts[a:b], ends[a:b], np.empty(b - a + 1, dtype=np.int64), np.clip(bounds, a, b) - a)
             for a, b in zip(cuts[:-1], cuts[1:])]

    def measure(part):
        return _k_fsst_measure(codes, part[0], part[1], part[3], lens, n_symbols, part[2])

    for k, (status, where) in enumerate(run_parallel(measure, parts) if halves > 1 else [measure(parts[0])]):
        if status:
            _raise_at(status, where + cuts[k], bounds, codes.size)
    sizes = [int(p[2][-1]) for p in parts]
    data = empty(sum(sizes), np.uint8)
    out_at = np.cumsum([0] + sizes)

    def fill(k):
        s, e, _, bnd = parts[k]
        _k_fsst_fill(codes, s, e, bnd, sym_u64, lens, data[out_at[k] : out_at[k + 1]])

    if halves > 1:
        run_parallel(fill, range(len(parts)))
        return data, np.concatenate([parts[0][2]] + [p[2][1:] + out_at[k] for k, p in enumerate(parts) if k])
    fill(0)
    return data, parts[0][2]


def _decode_once(codes, starts, ends, spans, bounds, sym_u64, lens, n_symbols) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_decompress_tables` in one pass over the codes (a scan's strings: a measuring
    and a filling pass would read twice the codes' size from memory).

    The output is sized from the strings of the first :data:`_SAMPLE_CODE_BYTES` code bytes
    (measured first), with a fifth more and room for the longest string; should the rest
    expand more, the pass stops, the output grows and the pass goes on where it stopped. At
    :data:`HALVES_FSST_BYTES` and more, the strings' two halves are decoded on two threads,
    the second half's bytes then copied after the first's. The output is cut to its size
    (Arrow's allocator shrinks it in place)."""
    import pyarrow as pa

    count = starts.size
    total = int(spans.sum())
    longest = 8 * int(spans.max()) + 64
    done_at = np.cumsum(spans)  # code bytes up to and including each string
    sample = min(int(np.searchsorted(done_at, _SAMPLE_CODE_BYTES)) + 1, count)
    sizes = np.empty(sample + 1, np.int64)
    status, where = _k_fsst_measure(codes, starts[:sample], ends[:sample], np.clip(bounds, 0, sample), lens,
                                    n_symbols, sizes)
    if status:
        _raise_at(status, where, bounds, codes.size)
    ratio = int(sizes[-1]) / max(int(done_at[sample - 1]), 1)
    offsets = np.empty(count + 1, np.int64)
    offsets[0] = 0

    def run(a: int, b: int, room: int):
        """Strings [a, b) into a buffer of their own (``room`` bytes to start with): (buffer,
        bytes written). ``offsets[a + 1 : b + 1]`` get their ends, counted from the buffer's start."""
        buf = pa.allocate_buffer(room, resizable=True)
        part = (codes, starts[a:b], ends[a:b], np.clip(bounds, a, b) - a, sym_u64, lens, n_symbols)
        before = int(done_at[a - 1]) if a else 0
        i, pos = 0, 0
        while True:
            status, where, pos = _k_fsst_decode(*part, np.frombuffer(buf, np.uint8), offsets[a : b + 1], i, pos)
            if status == 0:
                return buf, pos
            if status != 4:
                _raise_at(status, a + where, bounds, codes.size)
            # out of room at string a + where: grow by what the rest needs at the rate seen so far
            done = int(done_at[a + where - 1]) - before if where else 0
            rate = max(pos / max(done, 1), ratio)
            buf, i = _grown(buf, pos, pos + int((int(done_at[b - 1]) - before - done) * rate * _ROOM) + longest), where

    room = int(total * ratio * _ROOM) + longest
    with _RUNNING_LOCK:
        alone = _RUNNING[0] == 0
        _RUNNING[0] += 1
    try:
        buf, pos = _run_halves(run, offsets, done_at, total, ratio, longest, room) if alone and \
            total >= HALVES_FSST_BYTES else run(0, count, room)
    finally:
        with _RUNNING_LOCK:
            _RUNNING[0] -= 1
    buf.resize(pos, shrink_to_fit=True)
    return np.frombuffer(buf, np.uint8), offsets


def _run_halves(run, offsets, done_at, total: int, ratio: float, longest: int, room: int):
    """:func:`_decode_once`'s ``run`` of the strings' two halves (by code bytes) on two
    threads, the first half's buffer (``room`` bytes) then holding both: (buffer, bytes)."""
    count = len(done_at)
    half = min(max(int(np.searchsorted(done_at, total // 2)), 1), count - 1)
    second = int(done_at[-1] - done_at[half - 1])
    (buf, pos), (buf2, pos2) = run_parallel(lambda ab: run(*ab), [(0, half, room),
                                                                     (half, count, int(second * ratio * _ROOM) + longest)])
    if pos + pos2 > buf.size:
        buf = _grown(buf, pos, pos + pos2)
    np.frombuffer(buf, np.uint8)[pos : pos + pos2] = np.frombuffer(buf2, np.uint8)[:pos2]
    offsets[half + 1 :] += pos
    return buf, pos + pos2


def _grown(buf, used: int, size: int):
    """A resizable Arrow buffer of ``size`` bytes holding the first ``used`` bytes of ``buf``."""
    import pyarrow as pa

    grown = pa.allocate_buffer(size, resizable=True)
    np.frombuffer(grown, np.uint8)[:used] = np.frombuffer(buf, np.uint8)[:used]
    return grown


@_Kernel
def _k_parse_tables(raw, magic, symbols, lengths, n, compressed):
    # Table t (raw[t]): header u64 (magic in its high 32 bits, the symbol count in its low
    # byte, the switch bit at 24), n symbols of 8 bytes, then their lengths, a byte each.
    # Returns (0, -1); (1, the first table with a bad magic); or (2, the first compressing
    # table with a symbol length outside 1..8).
    k = raw.shape[0]
    for t in range(k):
        header = np.uint64(0)
        for b in range(8):
            header |= np.uint64(raw[t, b]) << np.uint64(8 * b)
        if (header >> np.uint64(32)) != np.uint64(magic):
            return 1, t
        n[t] = np.int64(header & np.uint64(0xFF))
        compressed[t] = (header >> np.uint64(24)) & np.uint64(1) == np.uint64(1)
    for t in range(k):
        m = n[t]
        for j in range(m):
            v = np.uint64(0)
            for b in range(8):
                v |= np.uint64(raw[t, 8 + 8 * j + b]) << np.uint64(8 * b)
            symbols[t, j] = v
            lengths[t, j] = raw[t, 8 + 8 * m + j]
            if compressed[t] and (lengths[t, j] < 1 or lengths[t, j] > 8):
                return 2, t
    return 0, -1


def fsst_parse_symbol_tables(tables) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Parse many symbol tables at once (e.g. every page's of a take): ``(symbols (k, 256)
    u64, lengths (k, 256) int64, symbol counts (k,), compressed (k,) bool)``, unused slots
    zero. :func:`fsst_parse_symbol_table` of each, in one compiled pass over all of them.

    Example::

        >>> t = fsst_make_symbol_table([int.from_bytes(b"ab", "little")], [2])
        >>> syms, lens, n, on = fsst_parse_symbol_tables([t, t])
        >>> n.tolist(), lens[:, :2].tolist(), on.tolist()
        ([1, 1], [[2, 0], [2, 0]], [True, True])
    """
    raws = [_byte_view(t) for t in tables]
    bad = [k for k, r in enumerate(raws) if r.size != FSST_SYMBOL_TABLE_SIZE]
    if bad:
        raise CorruptFileError(f"FSST symbol table {bad[0]} has {raws[bad[0]].size} bytes, "
                               f"expected {FSST_SYMBOL_TABLE_SIZE}")
    raw = np.stack(raws) if raws else np.zeros((0, FSST_SYMBOL_TABLE_SIZE), np.uint8)
    k = len(raws)
    symbols, lengths = np.zeros((k, 256), np.uint64), np.zeros((k, 256), np.int64)
    n, compressed = np.zeros(k, np.int64), np.zeros(k, bool)
    code, bad = _k_parse_tables(raw, _FSST_MAGIC, symbols, lengths, n, compressed)
    if code == 1:
        header = int(raw[bad, :8].view("<u8")[0])
        raise CorruptFileError(f"FSST symbol table {bad} has a bad magic (header {header:#018x})")
    if code == 2:
        raise CorruptFileError(f"FSST symbol table {bad} has a symbol length outside 1..8")
    return symbols, lengths, n, compressed


def fsst_decompress_spans_tables(data, starts, sizes, tables, counts, parsed=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fsst_decompress_spans` of strings under several symbol tables: the first
    ``counts[0]`` strings use ``tables[0]`` (raw 2,312-byte tables), the next ``counts[1]``
    ``tables[1]``, and so on, in one pass (a take's rows on 15 pages, each page with its
    table, pay one call, not 15). Every table must have its switch bit on (compressed).
    ``parsed``: what :func:`fsst_parse_symbol_tables` gave for ``tables``, if the caller
    parsed them already (they are not parsed again).

    Example::

        >>> t1 = fsst_make_symbol_table([int.from_bytes(b"ab", "little")], [2])
        >>> t2 = fsst_make_symbol_table([int.from_bytes(b"xyz", "little")], [3])
        >>> data, offs = fsst_decompress_spans_tables(bytes([0, 0, 0]), [0, 1, 2], [1, 1, 1], [t1, t2], [2, 1])
        >>> bytes(data), offs.tolist()
        (b'ababxyz', [0, 2, 4, 7])
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64).reshape(-1)
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if starts.shape != sizes.shape or len(counts) != len(tables) or int(counts.sum()) != starts.size or (
            len(counts) and int(counts.min()) < 0):
        raise InvalidInputError("starts and sizes must be equally long, and counts (one per table) sum to them")
    symbols, lengths, n, compressed = parsed if parsed is not None else fsst_parse_symbol_tables(tables)
    if not compressed.all():
        raise InvalidInputError(f"FSST symbol table {int(np.flatnonzero(~compressed)[0])} stores its strings raw")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    return _decompress_tables(_byte_view(data), starts, starts + sizes, bounds, symbols, lengths, n)


def fsst_decompress_py(codes, offsets, symbols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python :func:`fsst_decompress` (reference for the tests)."""
    codes = bytes(_byte_view(codes))
    table = [int(s).to_bytes(8, "little")[: int(n)] for s, n in zip(symbols, lengths)]
    out, out_offsets = bytearray(), [0]
    for i in range(len(offsets) - 1):
        a, b = int(offsets[i]), int(offsets[i + 1])
        if a < 0 or b < a or b > len(codes):
            raise CorruptFileError(f"FSST string {i} has bad offsets")
        p = a
        while p < b:
            c = codes[p]
            if c == FSST_ESCAPE:
                if p + 1 >= b:
                    raise CorruptFileError(f"FSST string {i} ends with an escape byte")
                out.append(codes[p + 1])
                p += 2
            elif c < len(table):
                out += table[c]
                p += 1
            else:
                raise CorruptFileError(f"FSST string {i} uses a code with no symbol")
        out_offsets.append(len(out))
    return np.frombuffer(bytes(out), dtype=np.uint8), np.array(out_offsets, dtype=np.int64)


def fsst_make_symbol_table(symbols, lengths, compressed: bool = True) -> bytes:
    """Serialise a symbol table in the 2312-byte layout of :func:`fsst_parse_symbol_table`.

    The terminator and suffix_lim bytes only steer the reference's own compressor and are
    written as 0.
    """
    symbols = np.asarray(symbols, dtype=np.uint64)
    lengths = np.asarray(lengths, dtype=np.uint8)
    n = symbols.size
    header = _FSST_MAGIC << 32 | int(compressed) << 24 | n
    buf = bytearray(FSST_SYMBOL_TABLE_SIZE)
    struct.pack_into("<Q", buf, 0, header)
    buf[8 : 8 + 8 * n] = symbols.astype("<u8").tobytes()
    buf[8 + 8 * n : 8 + 9 * n] = lengths.tobytes()
    return bytes(buf)
