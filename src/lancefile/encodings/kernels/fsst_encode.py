"""FSST training and compression: the writer's side of :mod:`.fsst`.

Our own, simpler take on FSST training: a few rounds over a sample of the input, each round
tokenising the sample greedily with the current table and keeping the 255 candidates (tokens
used, and neighbouring tokens joined up to 8 bytes) that cover the most bytes. Training runs
compiled over at most :data:`FSST_SAMPLE_BYTES` of sample (with a plain-Python twin);
compressing the whole input is a compiled greedy longest match. Only the decoder side is
fixed by the format: any table of 1..8-byte symbols decodes (:mod:`.fsst`).
"""

from __future__ import annotations

import numpy as np

from ...errors import InvalidInputError
from ._common import _byte_view, _helper, _Kernel, _U64_ONES, load_u64, run_parallel
from . import fsst as _fsst
from .fsst import FSST_SAMPLE_BYTES, _fsst_tables, fsst_make_symbol_table

__all__ = ["fsst_build_symbol_table", "fsst_build_symbol_table_py", "fsst_compress"]

_FSST_HASH_MUL = 0x9E3779B97F4A7C15
_FSST_ROUNDS = 5


def _fsst_sample(data: np.ndarray, offsets: np.ndarray) -> list[bytes]:
    n = offsets.size - 1
    if int(offsets[-1] - offsets[0]) <= FSST_SAMPLE_BYTES:
        return [data[offsets[i] : offsets[i + 1]].tobytes() for i in range(n)]
    rng = np.random.default_rng(4637947)
    out, size = [], 0
    for i in rng.permutation(n):
        s = data[offsets[i] : min(offsets[i + 1], offsets[i] + 512)].tobytes()
        out.append(s)
        size += len(s)
        if size >= FSST_SAMPLE_BYTES:
            break
    return out


def _greedy_tokens(s: bytes, table: dict[bytes, int], max_len: int) -> list[bytes]:
    toks, p, n = [], 0, len(s)
    while p < n:
        for k in range(min(max_len, n - p), 0, -1):
            piece = s[p : p + k]
            if k == 1 or piece in table:
                toks.append(piece)
                p += k
                break
    return toks


def fsst_build_symbol_table_py(data, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python :func:`fsst_build_symbol_table` (the reference for the tests)."""
    raw = _byte_view(data)
    offsets = np.asarray(offsets, dtype=np.int64)
    sample = _fsst_sample(raw, offsets)
    table: dict[bytes, int] = {}
    for _ in range(_FSST_ROUNDS):
        max_len = max((len(t) for t in table), default=1)
        gains: dict[bytes, int] = {}
        for s in sample:
            prev = b""
            for tok in _greedy_tokens(s, table, max_len):
                gains[tok] = gains.get(tok, 0) + len(tok)
                if prev:
                    joined = (prev + tok)[:8]
                    gains[joined] = gains.get(joined, 0) + len(joined)
                prev = tok
        best = sorted(gains.items(), key=lambda kv: (-kv[1], kv[0]))[:255]
        table = {tok: i for i, (tok, _gain) in enumerate(best)}
    symbols = sorted(table, key=lambda t: (-len(t), t))
    lengths = np.array([len(t) for t in symbols], dtype=np.uint8)
    vals = np.array([int.from_bytes(t.ljust(8, b"\0"), "little") for t in symbols], dtype=np.uint64)
    return vals, lengths


@_helper
def _tok_slot(val, n, keys, lens, mask):
    # The slot of token (val, n) in an open-addressing table (lens 0: empty): its own, or
    # the empty one where it would go.
    h = (val ^ (np.uint64(n) << np.uint64(59))) * np.uint64(_FSST_HASH_MUL)
    slot = np.int64(h >> np.uint64(40)) & mask
    while lens[slot] != 0 and (lens[slot] != n or keys[slot] != val):
        slot = (slot + 1) & mask
    return slot


@_helper
def _add_gain(val, n, g_keys, g_lens, g_gain, g_mask, order, count):
    slot = _tok_slot(val, n, g_keys, g_lens, g_mask)
    if g_lens[slot] == 0:
        g_keys[slot] = val
        g_lens[slot] = n
        order[count] = slot
        count += 1
    g_gain[slot] += n
    return count


@_Kernel
def _k_fsst_gains(sample, s_off, t_keys, t_lens, t_mask, max_len, g_keys, g_lens, g_gain, g_mask, order):
    # One training round: tokenise each sample string greedily (longest token of the table
    # at each position, else one byte) and add to every token used, and to every join of two
    # neighbouring tokens cut to 8 bytes, its length. Returns the distinct tokens scored
    # (their slots in ``order``).
    count = 0
    for i in range(s_off.shape[0] - 1):
        p = s_off[i]
        end = s_off[i + 1]
        pv = np.uint64(0)
        pl = 0
        while p < end:
            word = np.uint64(0)
            top = min(8, end - p)
            for j in range(top):
                word |= np.uint64(sample[p + j]) << np.uint64(8 * j)
            k = min(max_len, end - p)
            tv = np.uint64(0)
            while k >= 1:
                tv = word if k == 8 else word & ((np.uint64(1) << np.uint64(8 * k)) - np.uint64(1))
                if k == 1 or t_lens[_tok_slot(tv, k, t_keys, t_lens, t_mask)] != 0:
                    break
                k -= 1
            count = _add_gain(tv, k, g_keys, g_lens, g_gain, g_mask, order, count)
            if pl:
                jl = min(pl + k, 8)
                jv = pv if pl == 8 else pv | (tv << np.uint64(8 * pl))
                if jl < 8:
                    jv &= (np.uint64(1) << np.uint64(8 * jl)) - np.uint64(1)
                count = _add_gain(jv, jl, g_keys, g_lens, g_gain, g_mask, order, count)
            pv = tv
            pl = k
            p += k
    return count


def _lexicographic(vals: np.ndarray) -> np.ndarray:
    """Keys that order tokens (little-endian packed, zero-padded) as their bytes compare
    (a tie is broken by the length: a token before its own extensions)."""
    return vals.byteswap()


def fsst_build_symbol_table(data, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Train an FSST table (at most 255 symbols of 1..8 bytes) on a sample of the strings.

    Each round tokenises the sample greedily with the current table, then scores every
    token used and every concatenation of two neighbouring tokens (cut to 8 bytes) by
    ``uses * length`` and keeps the best 255 (ties: the smaller token bytes first).
    Returns ``(symbols uint64, lengths uint8)``, longest first. The rounds run compiled
    (:func:`fsst_build_symbol_table_py` is the same training in plain Python).
    """
    raw = _byte_view(data)
    offsets = np.asarray(offsets, dtype=np.int64)
    pieces = _fsst_sample(raw, offsets)
    sample = np.frombuffer(b"".join(pieces), np.uint8)
    s_off = np.zeros(len(pieces) + 1, np.int64)
    np.cumsum([len(x) for x in pieces], out=s_off[1:])
    t_size = 1024  # the table: at most 255 tokens
    t_keys, t_lens = np.zeros(t_size, np.uint64), np.zeros(t_size, np.int64)
    g_size = 64
    while g_size < 2 * (2 * len(sample) + 1):  # at most two scored tokens a sample byte; half full at most
        g_size *= 2
    vals = lens = np.zeros(0, np.uint64)
    for _ in range(_FSST_ROUNDS):
        max_len = int(lens.max()) if len(lens) else 1
        g_keys, g_lens, g_gain = np.zeros(g_size, np.uint64), np.zeros(g_size, np.int64), np.zeros(g_size, np.int64)
        order = np.empty(g_size, np.int64)
        n = _k_fsst_gains(sample, s_off, t_keys, t_lens, t_size - 1, max_len, g_keys, g_lens, g_gain, g_size - 1,
                          order)
        slots = order[:n]
        vals, lens, gain = g_keys[slots], g_lens[slots], g_gain[slots]
        best = np.lexsort((lens, _lexicographic(vals), -gain))[:255]
        vals, lens = vals[best], lens[best]
        t_keys[:], t_lens[:] = 0, 0
        _k_fsst_fill_table(vals, lens, t_keys, t_lens, t_size - 1)
    final = np.lexsort((_lexicographic(vals), -lens.astype(np.int64)))
    return vals[final].astype(np.uint64), lens[final].astype(np.uint8)


@_Kernel
def _k_fsst_fill_table(vals, lens, keys, key_lens, mask):
    for i in range(vals.shape[0]):
        slot = _tok_slot(vals[i], lens[i], keys, key_lens, mask)
        keys[slot] = vals[i]
        key_lens[slot] = lens[i]


# Streams of strings one thread compresses side by side (see _k_fsst_compress).
_FSST_STREAMS = 2
# _fsst_encoder_tables' entries: code | length << 8, and this bit where a symbol of 3+ bytes
# may start with those two bytes
_FSST_LONG = 0x1000


@_Kernel
def _k_fsst_compress(data, offsets, first, hkeys, hstart, hmask, cand_val, cand_len, cand_code, two, one,
                     out, out_offsets):
    # Greedy longest match, in _FSST_STREAMS streams of whole strings (stream s: strings
    # first[s]..first[s+1]) that take one step each in turn: each step waits on its table
    # lookup, and the other stream's step fills that wait. Stream s writes its codes from
    # twice its first byte's place in the input (room for all escapes), moved down at the end.
    # A step: the best code of 1-2 bytes (or the escape) in one lookup of the next two bytes;
    # symbols of 3+ bytes, where one may start there, through a hash of the first three
    # (candidates longest first). The escape writes 255 and the byte; any other code writes
    # the byte too, and the next code overwrites it.
    size = data.shape[0]
    out_offsets[0] = 0
    cur = np.empty(_FSST_STREAMS, np.int64)  # the string each stream is in (first - 1: none yet)
    pos = np.zeros(_FSST_STREAMS, np.int64)
    end = np.zeros(_FSST_STREAMS, np.int64)
    q = np.empty(_FSST_STREAMS, np.int64)
    for s in range(_FSST_STREAMS):
        cur[s] = first[s] - 1
        q[s] = 2 * (offsets[first[s]] - offsets[0])
    live = _FSST_STREAMS
    while live > 0:
        for s in range(_FSST_STREAMS):
            p = pos[s]
            left = end[s] - p
            if left > 0:
                if p + 8 <= size:
                    word = load_u64(data, p)
                else:
                    word = np.uint64(0)
                    for j in range(size - p):
                        word |= np.uint64(data[p + j]) << np.uint64(8 * j)
                if left >= 2:
                    t = np.int64(two[np.int64(word & np.uint64(0xFFFF))])
                else:
                    t = np.int64(one[np.int64(word & np.uint64(0xFF))])
                if t & _FSST_LONG and left >= 3:
                    prefix = word & np.uint64(0xFFFFFF)
                    slot = np.int64((prefix * np.uint64(_FSST_HASH_MUL)) >> np.uint64(40)) & hmask
                    while hstart[slot] >= 0:
                        if hkeys[slot] == prefix:
                            c = hstart[slot]
                            while cand_len[c] > 0:  # candidates end with a 0 length
                                n = cand_len[c]
                                if n <= left:
                                    m = _U64_ONES if n == 8 else (np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)
                                    if word & m == cand_val[c]:
                                        t = np.int64(cand_code[c]) | (np.int64(n) << 8)
                                        break
                                c += 1
                            break
                        slot = (slot + 1) & hmask
                at = q[s]
                code = t & 0xFF
                out[at] = code
                out[at + 1] = np.uint8(word & np.uint64(0xFF))
                q[s] = at + 1 + (code == 255)
                pos[s] = p + ((t >> 8) & 0xF)
            elif cur[s] < first[s + 1]:  # the string is done: its end, and the next string
                i = cur[s]
                if i >= first[s]:
                    out_offsets[i + 1] = q[s]
                i += 1
                cur[s] = i
                if i < first[s + 1]:
                    pos[s] = offsets[i]
                    end[s] = offsets[i + 1]
                else:
                    live -= 1
    used = q[0]
    for s in range(1, _FSST_STREAMS):
        base = 2 * (offsets[first[s]] - offsets[0])
        out[used : used + q[s] - base] = out[base : q[s]]
        for i in range(first[s] + 1, first[s + 1] + 1):
            out_offsets[i] += used - base
        used += q[s] - base
    return used


def _fsst_streams(offsets: np.ndarray) -> np.ndarray:
    """Where _k_fsst_compress's streams start: string indices cutting the bytes evenly."""
    n = offsets.size - 1
    goals = offsets[0] + (offsets[-1] - offsets[0]) * np.arange(_FSST_STREAMS + 1) // _FSST_STREAMS
    first = np.searchsorted(offsets[:-1], goals).astype(np.int64)  # non-decreasing, in [0, n]
    first[-1] = n  # (empty strings at the end: they belong to the last stream)
    return first


def _fsst_encoder_tables(toks: list[bytes]):
    """Lookup tables for _k_fsst_compress from the symbols (code = position in toks)."""
    # narrow types: the 65,536-entry table is 128 KB as int16 (512 KB as int64 missed the caches)
    one = np.full(256, 255 | 1 << 8, dtype=np.int16)  # the escape, one byte on
    two = np.full(1 << 16, -1, dtype=np.int16)
    groups: dict[int, list[tuple[int, int]]] = {}
    for code, tok in enumerate(toks):
        if len(tok) == 1:
            if one[tok[0]] == 255 | 1 << 8:
                one[tok[0]] = code | 1 << 8
        elif len(tok) == 2:
            key = tok[0] | tok[1] << 8
            if two[key] < 0:
                two[key] = code | 2 << 8
        else:
            groups.setdefault(int.from_bytes(tok[:3], "little"), []).append((len(tok), code))
    # no 2-byte symbol: the first byte's (or its escape)
    two = np.where(two >= 0, two, one[np.arange(1 << 16) & 0xFF]).astype(np.int16)
    hsize = 64
    while hsize < 2 * max(len(groups), 1):
        hsize *= 2
    hkeys = np.zeros(hsize, dtype=np.uint64)
    hstart = np.full(hsize, -1, dtype=np.int32)
    cand_val, cand_len, cand_code = [], [], []
    for prefix, cands in groups.items():
        two[prefix & 0xFFFF] |= _FSST_LONG
        slot = (prefix * _FSST_HASH_MUL & 0xFFFF_FFFF_FFFF_FFFF) >> 40 & (hsize - 1)
        while hstart[slot] >= 0:
            slot = (slot + 1) & (hsize - 1)
        hkeys[slot] = prefix
        hstart[slot] = len(cand_len)
        for n, code in sorted(cands, reverse=True):
            cand_val.append(int.from_bytes(toks[code], "little"))
            cand_len.append(n)
            cand_code.append(code)
        cand_val.append(0)
        cand_len.append(0)
        cand_code.append(-1)
    return (hkeys, hstart, hsize - 1, np.array(cand_val, dtype=np.uint64), np.array(cand_len, dtype=np.int8),
            np.array(cand_code, dtype=np.int16), two, one)


def fsst_compress(data, offsets, symbols=None, lengths=None) -> tuple[bytes, np.ndarray, np.ndarray]:
    """FSST-compress strings ``data[offsets[i]:offsets[i+1]]`` each on its own.

    Trains a table (:func:`fsst_build_symbol_table`) unless one is given.  Returns
    ``(symbol_table 2312 bytes, codes uint8, code_offsets int64)`` with the table's switch
    bit set; readable by :func:`fsst_decompress` and by the reference decoder.
    """
    raw = _byte_view(data)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
    if offsets.size and (offsets[0] < 0 or offsets[-1] > raw.size or np.any(np.diff(offsets) < 0)):
        raise InvalidInputError("FSST offsets must be non-decreasing and inside the data")
    if symbols is None:
        symbols, lengths = fsst_build_symbol_table(raw, offsets)
    symbols = np.asarray(symbols, dtype=np.uint64)
    lengths = np.asarray(lengths, dtype=np.uint8)
    _fsst_tables(symbols, lengths)  # validates
    toks = [int(s).to_bytes(8, "little")[: int(n)] for s, n in zip(symbols, lengths)]
    tables = _fsst_encoder_tables(toks)
    n = offsets.size - 1
    # large inputs are compressed in two halves on two threads, as decompression is
    parts = 2 if n > 1 and int(offsets[-1] - offsets[0]) >= _fsst.PARALLEL_FSST_BYTES else 1
    cuts = [n * k // parts for k in range(parts + 1)]

    def run(k):
        offs = offsets[cuts[k] : cuts[k + 1] + 1]
        out = np.empty(2 * int(offs[-1] - offs[0]) if offs.size else 0, dtype=np.uint8)
        out_offsets = np.zeros(max(offs.size, 1), dtype=np.int64)
        used = _k_fsst_compress(raw, offs, _fsst_streams(offs), *tables, out, out_offsets) if offs.size > 1 else 0
        return out[:used], out_offsets

    results = run_parallel(run, range(parts))
    if parts == 1:
        codes, out_offsets = results[0]
        return fsst_make_symbol_table(symbols, lengths), codes.copy(), out_offsets
    codes = np.concatenate([c for c, _ in results])
    shift = np.cumsum([0] + [len(c) for c, _ in results[:-1]])
    out_offsets = np.concatenate([results[0][1]] + [o[1:] + sh for (_, o), sh in zip(results[1:], shift[1:])])
    return fsst_make_symbol_table(symbols, lengths), codes, out_offsets
