"""Mini-block chunk headers, parsed for every chunk of a read in one compiled pass.

A chunk starts ``u16 num_levels``, ``u16 rep_size`` and ``u16 def_size`` (when the page
has rep / def levels), one size per value buffer (u16 in 2.1, u32 in 2.2), zero padding to
8 bytes; then the rep bytes, the def bytes and the value buffers, each padded to 8. E.g. a
2.2 chunk of three int32 without levels: ``0000 0c000000 fefe | 01000000 02000000 03000000 fefefefe``.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError
from ._common import _byte_view, _helper, _Kernel, empty

__all__ = ["miniblock_headers", "miniblock_chunk_words", "miniblock_chunk_words_many", "miniblock_chunk_rows",
           "miniblock_take_picks", "miniblock_plain_values", "miniblock_plain_take", "miniblock_chunk_layout"]


@_Kernel
def _k_headers(data, base, ends, has_rep, has_def, word, header, num_levels, rep_at, rep_size, def_at, def_size,
               buf_at, buf_size):
    # Returns -1, or the first chunk whose header or buffers run past its end.
    nbuf = buf_at.shape[0]
    for c in range(base.shape[0]):
        p = base[c]
        if p + header > ends[c]:
            return c
        num_levels[c] = np.int64(data[p]) | (np.int64(data[p + 1]) << 8)
        p += 2
        if has_rep:
            rep_size[c] = np.int64(data[p]) | (np.int64(data[p + 1]) << 8)
            p += 2
        if has_def:
            def_size[c] = np.int64(data[p]) | (np.int64(data[p + 1]) << 8)
            p += 2
        for k in range(nbuf):
            v = np.int64(0)
            for b in range(word):
                v |= np.int64(data[p + b]) << (8 * b)
            buf_size[k, c] = v
            p += word
        at = base[c] + header
        rep_at[c] = at
        at += rep_size[c] + (-rep_size[c]) % 8
        def_at[c] = at
        at += def_size[c] + (-def_size[c]) % 8
        for k in range(nbuf):
            buf_at[k, c] = at
            at += buf_size[k, c] + (-buf_size[k, c]) % 8
        if at != ends[c]:  # the buffers fill the chunk exactly
            return c
    return -1


def miniblock_headers(data, base, ends, has_rep: bool, has_def: bool, word: int, num_buffers: int):
    """Parse the headers of chunks starting at ``base`` (ending at ``ends``) in ``data``.

    Returns ``(num_levels, rep_at, rep_size, def_at, def_size, buf_at, buf_size)``, the last
    two shaped ``(num_buffers, chunks)``; sizes of absent levels are 0. A header or buffers
    that do not fill their chunk exactly raise :class:`CorruptFileError`.
    """
    raw = _byte_view(data)
    base = np.ascontiguousarray(base, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    n = len(base)
    header = 2 + 2 * has_rep + 2 * has_def + word * num_buffers
    header += (-header) % 8
    if n and (ends.max() > raw.size or base.min() < 0):
        raise CorruptFileError(f"mini-block chunks lie outside the {raw.size} bytes read")
    out = [np.zeros(n, np.int64) for _ in range(5)]
    buf_at = np.zeros((num_buffers, n), np.int64)
    buf_size = np.zeros((num_buffers, n), np.int64)
    bad = _k_headers(raw, base, ends, has_rep, has_def, word, header, *out, buf_at, buf_size)
    if bad >= 0:
        raise CorruptFileError(f"mini-block chunk {bad} of the read: its header and buffers do not fill it")
    return (*out, buf_at, buf_size)


@_helper
def _chunk_words(words, c, n, num_items, offsets, sizes, counts):
    # Chunks c..c+n-1 of one page: word = ((chunk_bytes / 8 - 1) << 4) | log2(values), offsets
    # from the page's start; the last chunk holds the rest of num_items.
    pos = 0
    before = 0
    for i in range(c, c + n):
        w = np.int64(words[i])
        sizes[i] = ((w >> 4) + 1) * 8
        offsets[i] = pos
        pos += sizes[i]
        counts[i] = np.int64(1) << (w & 0xF)
        if i < c + n - 1:
            before += counts[i]
    if n:
        counts[c + n - 1] = num_items - before


@_Kernel
def _k_chunk_words(words, num_items, offsets, sizes, counts):
    _chunk_words(words, 0, words.shape[0], num_items, offsets, sizes, counts)


def miniblock_chunk_words(raw, word: int, num_items: int):
    """``(offsets, sizes, counts)`` of a page's chunks from its chunk-metadata words (u16 or
    u32). The last chunk's count is what remains of ``num_items`` (negative: corrupt)."""
    words = np.frombuffer(raw, dtype=f"<u{word}") if not isinstance(raw, np.ndarray) else raw.view(f"<u{word}")
    n = len(words)
    offsets, sizes, counts = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    _k_chunk_words(words, num_items, offsets, sizes, counts)
    return offsets, sizes, counts


@_Kernel
def _k_chunk_words_many(words, page_words, num_items, offsets, sizes, counts):
    # _chunk_words for pages back to back: page k has page_words[k] words (chunks)
    c = 0
    for k in range(page_words.shape[0]):
        _chunk_words(words, c, page_words[k], num_items[k], offsets, sizes, counts)
        c += page_words[k]


def miniblock_chunk_words_many(words: np.ndarray, page_words, num_items):
    """:func:`miniblock_chunk_words` of many pages in one pass: ``words`` holds their
    chunk-metadata words back to back, ``page_words[k]`` of them page k's. Returns flat
    ``(offsets, sizes, counts)`` (offsets from each page's own start)."""
    page_words = np.ascontiguousarray(page_words, dtype=np.int64)
    num_items = np.ascontiguousarray(num_items, dtype=np.int64)
    n = int(page_words.sum())
    if n != len(words) or page_words.shape != num_items.shape:
        raise ValueError("page_words must add up to the words, one per page with num_items")
    offsets, sizes, counts = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    _k_chunk_words_many(words, page_words, num_items, offsets, sizes, counts)
    return offsets, sizes, counts


@_Kernel
def _k_chunk_rows(ended, page_chunks, page_rows, item_of, first, key):
    base = 0
    c = 0
    for k in range(page_chunks.shape[0]):
        before = 0
        for _ in range(page_chunks[k]):
            item_of[c] = k
            first[c] = before
            key[c] = base + before
            before += ended[c]
            c += 1
        base += page_rows[k] + 1


def miniblock_chunk_rows(ended, page_chunks, page_rows):
    """Where the chunks of pages laid back to back start, in rows: ``(item_of, first, key)``
    per chunk, its page, the rows of its page ended before it (``ended``: rows each chunk
    ends) and ``first`` plus ``base`` of its page, where page k's rows map to ``[base[k],
    base[k] + page_rows[k]]`` (one sorted key finds any page's rows with one search).

    Example::

        >>> item, first, key = miniblock_chunk_rows([2, 2, 1, 3], [2, 2], [4, 4])
        >>> item.tolist(), first.tolist(), key.tolist()
        ([0, 0, 1, 1], [0, 2, 0, 1], [0, 2, 5, 6])
    """
    ended = np.ascontiguousarray(ended, dtype=np.int64)
    page_chunks = np.ascontiguousarray(page_chunks, dtype=np.int64)
    page_rows = np.ascontiguousarray(page_rows, dtype=np.int64)
    n = len(ended)
    if int(page_chunks.sum()) != n or page_chunks.shape != page_rows.shape or (n and int(page_chunks.min()) < 0):
        raise ValueError("page_chunks must add up to the chunks, one per page with page_rows")
    item_of, first, key = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    _k_chunk_rows(ended, page_chunks, page_rows, item_of, first, key)
    return item_of, first, key


@_Kernel
def _k_take_picks(key, item_of, counts, base, idx, lens, shared, ids, picks):
    # Row idx[j] of item k is base[k] + idx[j] among the keys: walked in one merge, as the rows
    # ascend item after item. Returns (0, chunks used), (1, the first row outside its item's
    # chunks) or (2, 0) when the rows do not ascend.
    nk = key.shape[0]
    c = 0
    nids = 0
    start = 0  # the current chunk's first value among the decoded ones
    total = 0
    pos = 0
    at = 0
    last = -1
    for k in range(lens.shape[0]):
        if shared:
            at = 0
        for _ in range(lens[k]):
            t = base[k] + idx[at]
            at += 1
            if t <= last:
                return 2, 0
            last = t
            while c + 1 < nk and key[c + 1] <= t:
                c += 1
            if nk == 0 or key[c] > t or item_of[c] != k or t - key[c] >= counts[c]:
                return 1, pos
            if nids == 0 or ids[nids - 1] != c:
                ids[nids] = c
                start = total
                total += counts[c]
                nids += 1
            picks[pos] = start + t - key[c]
            pos += 1
    return 0, nids


def miniblock_take_picks(key, item_of, counts, base, idx, lens, shared: bool):
    """The chunks a take of several pages needs and where its rows land in their decode, in
    one pass: pages laid out as :func:`miniblock_chunk_rows` says (``key``, ``item_of`` per
    chunk, ``counts`` values a chunk, one a row; ``base`` per page), page k's rows being the
    next ``lens[k]`` of ``idx`` (or, ``shared``, the first ``lens[k]`` of ``idx`` for every
    page: columns paged alike). Returns ``(chunk ids, picks)``, the chunks ascending and
    ``picks[j]`` the j-th row's value among theirs decoded back to back; None when the rows
    do not ascend. Raises ``ValueError(j)`` when row j lies outside its page's chunks.

    Example::

        >>> item, first, key = miniblock_chunk_rows([2, 2, 2, 2], [2, 2], [4, 4])
        >>> ids, picks = miniblock_take_picks(key, item, np.full(4, 2), np.array([0, 5]), np.array([1, 3]),
        ...                                   np.array([2, 2]), True)
        >>> ids.tolist(), picks.tolist()
        ([0, 1, 2, 3], [1, 3, 5, 7])
    """
    key, item_of, counts, base, idx, lens = (np.ascontiguousarray(x, dtype=np.int64)
                                             for x in (key, item_of, counts, base, idx, lens))
    n = int(lens.sum())
    if (lens < 0).any() or (int(lens.max(initial=0)) > len(idx) if shared else n != len(idx)):
        raise ValueError("lens must count the rows of idx")
    ids, picks = np.empty(min(n, len(key)), np.int64), np.empty(n, np.int64)
    status, got = _k_take_picks(key, item_of, counts, base, idx, lens, shared, ids, picks)
    if status == 2:
        return None
    if status == 1:
        raise ValueError(int(got))
    return ids[:got], picks


@_helper
def _plain_header_ok(data, b, n, header, word, width):
    # A plain chunk at b holding n values: [u16 0 levels][size word = n*width][pad][values].
    if b + header + n * width > data.shape[0] or data[b] != 0 or data[b + 1] != 0:
        return False
    size = np.int64(0)
    for k in range(word):
        size |= np.int64(data[b + 2 + k]) << (8 * k)
    return size == n * width


@_Kernel
def _k_plain_values(data, base, counts, header, word, width, skip, total, out):
    # Plain chunks: [u16 0][size word = count*width][pad][values]. Copies values from
    # chunk 0 (skipping ``skip``) on until ``total`` values; returns -1, or the bad chunk.
    pos = 0
    for c in range(base.shape[0]):
        b = base[c]
        n = counts[c]
        if not _plain_header_ok(data, b, n, header, word, width):
            return c
        first = skip if c == 0 else 0
        m = min(n - first, total - pos)
        src = b + header + first * width
        out[pos * width : (pos + m) * width] = data[src : src + m * width]
        pos += m
    return -1


def miniblock_plain_values(data, base, counts, header: int, word: int, width: int, skip: int, total: int):
    """Values of plain mini-block chunks (no levels, one flat buffer of ``width``-byte values):
    ``total`` values starting ``skip`` values into the first chunk, headers checked."""
    raw = _byte_view(data)
    if total * width > raw.size:  # the values come out of these bytes: never allocate more
        raise CorruptFileError(f"{total} values of {width} bytes cannot come from {raw.size} bytes of chunks")
    out = empty(total * width, np.uint8)
    bad = _k_plain_values(raw, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(counts, np.int64),
                          header, word, width, skip, total, out)
    if bad >= 0:
        raise CorruptFileError(f"chunk {bad} of the read does not hold its values where its header says")
    return out


@_Kernel
def _k_plain_take(data, base, counts, header, word, width, row_chunk, row_pos, out):
    # Check every chunk's plain header, then copy value row_pos[i] of chunk row_chunk[i] for
    # each i. Returns -1, or the bad chunk.
    for c in range(base.shape[0]):
        if not _plain_header_ok(data, base[c], counts[c], header, word, width):
            return c
    for i in range(row_chunk.shape[0]):
        src = base[row_chunk[i]] + header + row_pos[i] * width
        out[i * width : (i + 1) * width] = data[src : src + width]
    return -1


def miniblock_plain_take(data, base, counts, header: int, word: int, width: int, row_chunk, row_pos):
    """Values ``row_pos[i]`` of chunk ``row_chunk[i]`` of plain mini-block chunks starting at
    ``base`` in ``data`` (every chunk's header checked)."""
    raw = _byte_view(data)
    if len(row_chunk) * width > raw.size:
        raise CorruptFileError(f"{len(row_chunk)} values of {width} bytes cannot come from {raw.size} bytes of chunks")
    out = empty(len(row_chunk) * width, np.uint8)
    bad = _k_plain_take(raw, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(counts, np.int64), header,
                        word, width, np.ascontiguousarray(row_chunk, np.int64), np.ascontiguousarray(row_pos, np.int64),
                        out)
    if bad >= 0:
        raise CorruptFileError(f"chunk {bad} of the read does not hold its values where its header says")
    return out


# -- the writer's side ---------------------------------------------------------------------


@_Kernel
def _k_chunk_layout(fields, n16, large, counts, head, chunk_bytes, chunk_starts, words):
    # Chunk c's header: fields[0..n16)[c] as u16 (its level count, its level buffers' sizes),
    # then fields[n16..)[c] as u32 (large) or u16 (its value buffers' sizes); fields[1..) are
    # the sizes of the buffers that follow it, each padded to 8. Writes the headers, each
    # chunk's bytes, start and metadata word ((bytes / 8 - 1) << 4 | log2 of its values, 0 for
    # the last); returns 1 when a field or word does not fit its width, else 0.
    k = fields.shape[0]
    nchunks = counts.shape[0]
    head_len = 2 * n16 + (4 if large else 2) * (k - n16)
    head_pad = head_len + (-head_len) % 8
    value_limit = np.int64(0xFFFFFFFF) if large else np.int64(0xFFFF)
    word_limit = np.int64(1) << (32 if large else 16)
    at = np.int64(0)
    for c in range(nchunks):
        o = c * head_len
        total = np.int64(head_pad)
        for j in range(k):
            v = fields[j, c]
            if v < 0:
                return 1
            if j < n16:
                if v > 0xFFFF:
                    return 1
                head[o] = v & 0xFF
                head[o + 1] = (v >> 8) & 0xFF
                o += 2
            else:
                if v > value_limit:
                    return 1
                head[o] = v & 0xFF
                head[o + 1] = (v >> 8) & 0xFF
                if large:
                    head[o + 2] = (v >> 16) & 0xFF
                    head[o + 3] = (v >> 24) & 0xFF
                    o += 4
                else:
                    o += 2
            if j >= 1:
                total += (v + 7) // 8 * 8
        chunk_bytes[c] = total
        chunk_starts[c] = at
        at += total
        lg = 0
        if c < nchunks - 1:
            x = counts[c]
            while x > 1:
                x >>= 1
                lg += 1
        w = ((total // 8 - 1) << 4) | lg
        if w >= word_limit:
            return 1
        words[c] = w
    return 0


def miniblock_chunk_layout(fields: np.ndarray, n16: int, large: bool, counts: np.ndarray):
    """A mini-block page's chunk headers and layout, in one compiled pass (the writer's side
    of :func:`miniblock_headers`): ``fields`` (int64, ``(k, chunks)``) holds per chunk its
    level count, then the sizes of its ``n16 - 1`` level buffers (u16 each) and of its value
    buffers (u32 when ``large``, else u16). Returns ``(headers, header bytes, chunk bytes,
    chunk starts, metadata words)``, or None when a size or a chunk does not fit its width.

    Example::

        >>> import numpy as np
        >>> heads, n, size, at, words = miniblock_chunk_layout(np.array([[0, 0], [12, 4]]), 1, True,
        ...                                                     np.array([4, 1]))
        >>> bytes(heads[:n]).hex(), size.tolist(), at.tolist(), words.tolist()
        ('00000c000000', [24, 16], [0, 24], [34, 16])
    """
    fields = np.ascontiguousarray(fields, np.int64)
    k, nchunks = fields.shape
    head_len = 2 * n16 + (4 if large else 2) * (k - n16)
    head = np.empty(nchunks * head_len, np.uint8)
    chunk_bytes, chunk_starts, words = (np.empty(nchunks, np.int64) for _ in range(3))
    if _k_chunk_layout(fields, n16, bool(large), np.ascontiguousarray(counts, np.int64), head, chunk_bytes,
                       chunk_starts, words):
        return None
    return head, head_len, chunk_bytes, chunk_starts, words
