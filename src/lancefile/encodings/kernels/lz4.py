"""LZ4 *block* decompression of many buffers in one compiled pass.

The 2.1+ ``General{lz4}`` wrapper compresses each mini-block chunk (and each full-zip
value) on its own, so a page holds thousands of small LZ4 blocks. Decoding them one
``lz4.block.decompress`` call at a time costs a Python round trip each; this kernel decodes
all of a page's blocks at once, into one output array, checking every position against the
block it reads and the output slot it writes (a damaged block is reported, never followed).

The block format (lz4's ``lz4_Block_format.md``): a run of *sequences*, each a token byte
(high nibble: literal count, low nibble: match length - 4; 15 means "more bytes follow",
each adding up to 255), the literals, then a 2-byte little-endian match offset (1..65535,
back into the output) and the match's extra length bytes. The last sequence has literals
only and ends the block; its last 5 bytes are always literals. ``lz4.block.compress`` makes
real examples (see the tests and :func:`lz4_decompress_many`).
"""

from __future__ import annotations

import numpy as np

from ._common import PARALLEL_DECODE_BYTES, _helper, _Kernel, in_halves, load_u64, store_u64
from .bss import _bss_chunk

__all__ = ["lz4_decompress_many", "lz4_compress_runs_many", "lz4_bss_decode_many", "lz4_frames_plan"]


@_helper
def _extension(src, ip, iend):
    # A length's extra bytes (each adds its value; one below 255 ends them): (sum, next
    # position), or (-1, ip) when the block ends first.
    total = 0
    while ip < iend:
        b = np.int64(src[ip])
        ip += 1
        total += b
        if b != 255:
            return total, ip
    return -1, ip


@_helper
def _copy_forward(src, s, dst, d, n):
    # dst[d:d+n] = src[s:s+n], 8 bytes at a time, front to back: also right for a copy within
    # one array whose source starts at least 8 bytes before its destination (an LZ77 match)
    k = 0
    while k + 8 <= n:
        store_u64(dst, d + k, load_u64(src, s + k))
        k += 8
    while k < n:
        dst[d + k] = src[s + k]
        k += 1


@_helper
def _lz4_block(src, ip, iend, out, base, oend):
    # One block, src[ip:iend], decoded to exactly out[base:oend]: True, or False when it
    # does not (bad token run, offset before base, literals or match past either end,
    # wrong length).
    op = base
    if ip == iend:
        return op == oend
    while True:
        if ip >= iend:
            return False
        token = np.int64(src[ip])
        ip += 1
        lit = token >> 4
        if lit == 15:
            more, ip = _extension(src, ip, iend)
            if more < 0:
                return False
            lit += more
        if lit > iend - ip or lit > oend - op:
            return False
        if lit <= 16 and ip + 16 <= src.shape[0] and op + 16 <= oend:
            # short literals (most of them): 16 bytes copied in two words, the bytes past
            # ``lit`` written again by the sequences that follow
            store_u64(out, op, load_u64(src, ip))
            store_u64(out, op + 8, load_u64(src, ip + 8))
        else:
            _copy_forward(src, ip, out, op, lit)
        ip += lit
        op += lit
        if ip == iend:
            return op == oend  # the last sequence: literals only
        if iend - ip < 2:
            return False
        offset = np.int64(src[ip]) | (np.int64(src[ip + 1]) << 8)
        ip += 2
        if offset == 0 or offset > op - base:
            return False
        ml = token & 15
        if ml == 15:
            more, ip = _extension(src, ip, iend)
            if more < 0:
                return False
            ml += more
        ml += 4
        if ml > oend - op:
            return False
        m = op - offset
        if offset >= 8 and ml <= 16 and op + 16 <= oend:  # a short match: two words, as above
            store_u64(out, op, load_u64(out, m))
            store_u64(out, op + 8, load_u64(out, m + 8))
        elif offset == 1:  # a run of one byte
            out[op : op + ml] = out[m]
        elif offset >= 8:  # 8 bytes at a time read only bytes already written
            _copy_forward(out, m, out, op, ml)
        else:  # overlapping: the copy repeats the last ``offset`` bytes
            for k in range(ml):
                out[op + k] = out[m + k]
        op += ml


@_Kernel
def _k_lz4_many(src, starts, sizes, out, out_starts, out_sizes):
    # Block c: src[starts[c]:][:sizes[c]] decodes to exactly out_sizes[c] bytes at
    # out[out_starts[c]:]. Returns -1, or the first block that does not.
    for c in range(starts.shape[0]):
        if not _lz4_block(src, starts[c], starts[c] + sizes[c], out, out_starts[c], out_starts[c] + out_sizes[c]):
            return c
    return -1


@_Kernel
def _k_lz4_bss_many(src, starts, sizes, announced, counts, w, scratch, out):
    # Block c decodes (to its announced[c] bytes) into ``scratch``, whose first counts[c]*w
    # bytes are a byte-stream-split chunk, transposed into out after the chunks before it:
    # the decompressed bytes never leave the cache. Returns -1 or the first bad block.
    pos = 0
    for c in range(starts.shape[0]):
        if not _lz4_block(src, starts[c], starts[c] + sizes[c], scratch, 0, announced[c]):
            return c
        _bss_chunk(scratch, 0, counts[c], w, out, pos * w)
        pos += counts[c]
    return -1


def lz4_bss_decode_many(src: np.ndarray, starts: np.ndarray, sizes: np.ndarray, announced: np.ndarray,
                        counts: np.ndarray, bits: int) -> np.ndarray:
    """``General{lz4, ByteStreamSplit{Flat(bits)}}`` chunks in one pass: LZ4 block ``c``
    (``src[starts[c]:][:sizes[c]]``, ``announced[c]`` bytes decompressed, at least
    ``counts[c] * bits/8``) holds a chunk of ``counts[c]`` split values; returns their bytes,
    value after value. Raises CorruptFileError naming a block that does not decode. The caller
    checks that every block lies in ``src``."""
    from ...errors import CorruptFileError
    from ._common import empty

    w = bits // 8
    counts = np.ascontiguousarray(counts, np.int64)
    announced = np.ascontiguousarray(announced, np.int64)
    short = np.flatnonzero(announced < counts * w)
    if len(short):
        c = int(short[0])
        raise CorruptFileError(f"byte-stream-split chunk {c} has {int(announced[c])} bytes; "
                               f"{int(counts[c])} values need {int(counts[c]) * w}")
    starts, sizes = np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(sizes, np.int64)
    out = empty(int(counts.sum()) * w, np.uint8)
    room = int(announced.max()) if len(announced) else 0

    def run(a: int, b: int) -> int:  # blocks [a, b), into out after the values of the blocks before a
        at = int(counts[:a].sum()) * w
        bad = _k_lz4_bss_many(src, starts[a:b], sizes[a:b], announced[a:b], counts[a:b], w, np.empty(room, np.uint8),
                              out[at:])
        return bad + a if bad >= 0 else -1

    bad = min((x for x in in_halves(run, counts, len(out) // w, PARALLEL_DECODE_BYTES // max(w, 1)) if x >= 0),
              default=-1)
    if bad >= 0:
        raise CorruptFileError(f"LZ4 buffer {bad} of {len(counts)} ({int(sizes[bad])} bytes) does not decompress "
                               f"to the {int(announced[bad])} bytes it announces")
    return out


def lz4_decompress_many(src: np.ndarray, starts: np.ndarray, sizes: np.ndarray, out: np.ndarray,
                        out_starts: np.ndarray, out_sizes: np.ndarray) -> int:
    """Decode LZ4 block ``c`` (``src[starts[c]:starts[c]+sizes[c]]``) into exactly
    ``out_sizes[c]`` bytes at ``out[out_starts[c]:]``, for every ``c``; returns -1, or the
    first block that is malformed or does not decode to its size. The caller makes sure
    every block lies in ``src`` and every output slot in ``out`` (they may not overlap).

    Example::

        >>> import lz4.block, numpy as np
        >>> blk = np.frombuffer(lz4.block.compress(b"abc" * 20, store_size=False), np.uint8)
        >>> out = np.zeros(60, np.uint8)
        >>> lz4_decompress_many(blk, np.array([0]), np.array([len(blk)]), out, np.array([0]), np.array([60]))
        -1
        >>> bytes(out[:6])
        b'abcabc'
    """
    return int(_k_lz4_many(src, np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(sizes, np.int64),
                           out, np.ascontiguousarray(out_starts, np.int64), np.ascontiguousarray(out_sizes, np.int64)))


# A run shorter than this stays literal: a match costs a token, two offset bytes and a
# literal, and the LZ4 format rules below need room around it.
RUN_MIN = 16
_LAST_LITERALS = 5  # the block's last 5 bytes are always literals (the format's rule)
_MATCH_LIMIT = 12  # and no match starts in its last 12


@_helper
def _put_length(out, op, n):
    # a length's extra bytes: 255, 255, ..., rest (n >= 0 is what is left over 15)
    while n >= 255:
        out[op] = 255
        op += 1
        n -= 255
    out[op] = n
    return op + 1


@_helper
def _put_sequence(src, lit_start, lit, out, op, match):
    # token, literal count, literals, then (match > 0) offset 1 and the match length
    token = (min(lit, 15) << 4) | (min(match - 4, 15) if match > 0 else 0)
    out[op] = token
    op += 1
    if lit >= 15:
        op = _put_length(out, op, lit - 15)
    _copy_forward(src, lit_start, out, op, lit)
    op += lit
    if match > 0:
        out[op] = 1
        out[op + 1] = 0
        op += 2
        if match - 4 >= 15:
            op = _put_length(out, op, match - 19)
    return op


@_Kernel
def _k_lz4_runs_many(src, starts, sizes, out, out_sizes, run_min, gap, align, fill, row_blocks, row_gap,
                     row_align, row_fill):
    # Block c: [u32 size][LZ4 block] of src[starts[c]:][:sizes[c]], after block c-1 in out,
    # whose matches are runs of one byte (offset 1). Runs of run_min or more bytes are found
    # 8 bytes at a time: such a run fills at least one aligned 8-byte word. Each block is
    # preceded by ``gap`` bytes and followed by padding to a multiple of ``align`` (both
    # ``fill``; the block's own size padded). Every ``row_blocks`` blocks, a row starts: out
    # is padded to a multiple of ``row_align``, then ``row_gap`` bytes left (both
    # ``row_fill``). Returns the bytes written.
    op = 0
    for c in range(starts.shape[0]):
        if c % row_blocks == 0:
            while op % row_align:
                out[op] = row_fill
                op += 1
            for k in range(row_gap):
                out[op + k] = row_fill
            op += row_gap
        s = starts[c]
        n = sizes[c]
        for k in range(gap):
            out[op + k] = fill
        o = op + gap
        for k in range(4):
            out[o + k] = (n >> (8 * k)) & 0xFF
        op = o + 4
        anchor = 0
        i = 0
        while i + 8 <= n - _LAST_LITERALS:
            word = load_u64(src, s + i)
            if word != (word & np.uint64(0xFF)) * np.uint64(0x0101010101010101):
                i += 8
                continue
            b = src[s + i]
            a = i
            while a > anchor and src[s + a - 1] == b:
                a -= 1
            e = i + 8
            while e < n and src[s + e] == b:
                e += 1
            # the run a..e: its first byte is a literal, the rest one match of offset 1
            m0 = a + 1
            m1 = min(e, n - _LAST_LITERALS)
            if e - a >= run_min and m0 <= n - _MATCH_LIMIT and m1 - m0 >= 4:
                op = _put_sequence(src, s + anchor, m0 - anchor, out, op, m1 - m0)
                anchor = m1
            i = max(e, i + 8)
        op = _put_sequence(src, s + anchor, n - anchor, out, op, 0)
        out_sizes[c] = op - o
        while (op - o) % align:
            out[op] = fill
            op += 1
    return op


def lz4_bound(n: int) -> int:
    """Most bytes :func:`lz4_compress_runs_many` writes for ``n`` input bytes (prefix included)."""
    return 4 + n + n // 255 + 16


def lz4_compress_runs_many(src: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
                           run_min: int = RUN_MIN, *, gap: int = 0, align: int = 1,
                           fill: int = 0, rows: tuple[int, int, int, int] | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Each ``src[starts[c]:][:sizes[c]]`` as Lance's LZ4 framing (``u32`` size, then one LZ4
    block) whose only matches are runs of one repeated byte: what compresses the constant
    streams of byte-stream-split floats, at a small part of a full LZ4 compressor's cost.
    Any LZ4 decoder reads the blocks. Returns ``(bytes back to back, bytes per block)``.

    With ``gap``/``align``, each block is preceded by ``gap`` bytes and padded to a multiple
    of ``align`` (``fill`` bytes): block c then starts ``gap`` bytes after the padded end of
    block c-1, which is how a mini-block page lays out a chunk's header and its one buffer.
    With ``rows = (blocks, gap, align, fill)``, the blocks are rows of ``blocks`` (pages),
    each starting at a multiple of ``align`` after ``gap`` more bytes (room for the page's
    metadata buffer), padding and gap filled with ``fill``.

    Example::

        >>> import lz4.block, numpy as np
        >>> data = np.frombuffer(b"ab" + b"z" * 40 + b"cdefgh", np.uint8)
        >>> out, sizes = lz4_compress_runs_many(data, np.array([0]), np.array([len(data)]))
        >>> int(sizes[0]) < len(data), lz4.block.decompress(bytes(out[4:]), uncompressed_size=48) == data.tobytes()
        (True, True)
    """
    from ._common import empty

    starts = np.ascontiguousarray(starts, np.int64)
    sizes = np.ascontiguousarray(sizes, np.int64)
    row_blocks, row_gap, row_align, row_fill = rows or (max(len(sizes), 1), 0, 1, 0)
    nrows = -(-len(sizes) // row_blocks)
    out = empty(int((gap + 4 + sizes + sizes // 255 + 16 + align).sum()) + nrows * (row_gap + row_align), np.uint8)
    out_sizes = np.zeros(len(sizes), np.int64)
    total = _k_lz4_runs_many(src, starts, sizes, out, out_sizes, int(run_min), int(gap), int(align), int(fill),
                             int(row_blocks), int(row_gap), int(row_align), int(row_fill))
    return out[:total], out_sizes


@_Kernel
def _k_lz4_frames(raw, starts, sizes, max_out, ratio, slack, payload_starts, payload, announced):
    # Framed buffer i: raw[starts[i]:][:sizes[i]] = u32 size + one LZ4 block (empty: an empty
    # block announcing 0). Returns 0, 1 + the first buffer too short for its prefix, or
    # -1 - the first whose announced size passes min(max_out, ratio * block + slack).
    n = starts.shape[0]
    for i in range(n):
        if 0 < sizes[i] < 4:
            return 1 + i
    for i in range(n):
        z = sizes[i]
        if z == 0:
            payload_starts[i] = starts[i]
            payload[i] = 0
            announced[i] = 0
            continue
        s = starts[i]
        a = np.int64(raw[s]) | (np.int64(raw[s + 1]) << 8) | (np.int64(raw[s + 2]) << 16) | (np.int64(raw[s + 3]) << 24)
        payload_starts[i] = s + 4
        payload[i] = z - 4
        announced[i] = a
        if a > min(max_out, ratio * (z - 4) + slack):
            return -1 - i
    return 0


def lz4_frames_plan(raw, starts, sizes, max_out: int, ratio: int, slack: int, payload_starts, payload,
                    announced) -> int:
    """Split framed LZ4 buffers into their blocks and announced sizes (int64 outputs, filled
    in place), checking each in one compiled pass: 0, ``1 + i`` when buffer ``i`` is too
    short for its length prefix (the first such), or ``-1 - i`` when it announces more than
    the limit (the first such, once none is too short). The caller keeps every buffer in ``raw``."""
    return int(_k_lz4_frames(raw, np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(sizes, np.int64),
                             max_out, ratio, slack, payload_starts, payload, announced))
