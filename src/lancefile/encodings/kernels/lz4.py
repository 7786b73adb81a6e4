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
only and ends the block. ``b"abcabcabc"`` is ``31 61 62 63 03 00 00`` ... plus a last
literal sequence; ``lz4.block.compress`` makes real examples (see the tests).
"""

from __future__ import annotations

import numpy as np

from ._common import _helper, _Kernel

__all__ = ["lz4_decompress_many"]


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


@_Kernel
def _k_lz4_many(src, starts, sizes, out, out_starts, out_sizes):
    # Block c: src[starts[c] : +sizes[c]] decodes to exactly out_sizes[c] bytes at
    # out[out_starts[c]:]. Returns -1, or the first block that does not (bad token run,
    # offset before its output's start, literals or match past either end, wrong length).
    for c in range(starts.shape[0]):
        ip = starts[c]
        iend = ip + sizes[c]
        base = out_starts[c]
        op = base
        oend = base + out_sizes[c]
        if ip == iend:
            if op != oend:
                return c
            continue
        while True:
            if ip >= iend:
                return c
            token = np.int64(src[ip])
            ip += 1
            lit = token >> 4
            if lit == 15:
                more, ip = _extension(src, ip, iend)
                if more < 0:
                    return c
                lit += more
            if lit > iend - ip or lit > oend - op:
                return c
            if lit <= 16:
                for k in range(lit):
                    out[op + k] = src[ip + k]
            else:
                out[op : op + lit] = src[ip : ip + lit]
            ip += lit
            op += lit
            if ip == iend:
                break  # the last sequence: literals only
            if iend - ip < 2:
                return c
            offset = np.int64(src[ip]) | (np.int64(src[ip + 1]) << 8)
            ip += 2
            if offset == 0 or offset > op - base:
                return c
            ml = token & 15
            if ml == 15:
                more, ip = _extension(src, ip, iend)
                if more < 0:
                    return c
                ml += more
            ml += 4
            if ml > oend - op:
                return c
            m = op - offset
            if offset >= ml:
                out[op : op + ml] = out[m : m + ml]
            else:  # overlapping: the copy repeats the last ``offset`` bytes
                for k in range(ml):
                    out[op + k] = out[m + k]
            op += ml
        if op != oend:
            return c
    return -1


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
