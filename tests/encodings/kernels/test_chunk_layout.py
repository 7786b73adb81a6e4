"""The writer's mini-block chunk layout kernel against a plain-Python layout, and the
reader's header parse of what it lays out."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lancefile.encodings.kernels import miniblock_chunk_layout, miniblock_headers


def _plain(fields, n16, large, counts):
    heads, sizes, words = [], [], []
    for c in range(len(counts)):
        col = [int(f[c]) for f in fields]
        head = b"".join(struct.pack("<H", v) for v in col[:n16]) + b"".join(
            struct.pack("<I" if large else "<H", v) for v in col[n16:])
        pad = -len(head) % 8
        size = len(head) + pad + sum((v + 7) // 8 * 8 for v in col[1:])
        log2 = int(counts[c]).bit_length() - 1 if c < len(counts) - 1 else 0
        heads.append(head)
        sizes.append(size)
        words.append(((size // 8 - 1) << 4) | log2)
    return b"".join(heads), sizes, words


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 20), st.integers(0, 2), st.integers(1, 3), st.booleans(), st.data())
def test_layout_matches_plain_python_and_parses_back(nchunks, nlevels, nvalues, large, data):
    n16 = 1 + nlevels
    counts = [1 << data.draw(st.integers(0, 12)) for _ in range(nchunks - 1)] + [data.draw(st.integers(1, 4096))]
    fields = [data.draw(st.lists(st.integers(0, 3000), min_size=nchunks, max_size=nchunks))
              for _ in range(n16 + nvalues)]
    got = miniblock_chunk_layout(np.array(fields, np.int64), n16, large, np.array(counts))
    head, head_len, size, at, words = got
    want_head, want_sizes, want_words = _plain(fields, n16, large, counts)
    assert bytes(head) == want_head and head_len * nchunks == len(want_head)
    assert size.tolist() == want_sizes and words.tolist() == want_words
    assert at.tolist() == np.concatenate([[0], np.cumsum(want_sizes)[:-1]]).tolist()
    # laid out with zeroed buffers, the reader's header parse finds the same sizes
    page = np.zeros(int(size.sum()), np.uint8)
    for c in range(nchunks):
        page[at[c] : at[c] + head_len] = head[c * head_len : (c + 1) * head_len]
    if nlevels <= 2:
        has_rep, has_def = nlevels == 2, nlevels >= 1
        num_levels, rep_at, rep_size, def_at, def_size, buf_at, buf_size = miniblock_headers(
            page, at, at + size, has_rep, has_def, 4 if large else 2, nvalues)
        assert num_levels.tolist() == fields[0]
        assert buf_size.tolist() == fields[n16:]


@pytest.mark.parametrize("large, field, value", [(False, 0, 0x10000), (False, 2, 0x10000), (True, 0, 0x10000),
                                                 (True, 2, 1 << 32), (False, 1, -1)])
def test_a_field_too_wide_is_refused(large, field, value):
    fields = np.array([[4, 4], [8, 8], [16, 16]], np.int64)
    fields[field, 1] = value
    assert miniblock_chunk_layout(fields, 2, large, np.array([4, 4])) is None


def test_a_chunk_too_large_for_its_word_is_refused():
    # 2.1: a u16 word holds chunk bytes / 8 - 1 in 12 bits (32 KiB); 2.2 a u32 word
    fields = np.array([[0], [40_000]], np.int64)
    assert miniblock_chunk_layout(fields, 1, False, np.array([1])) is None
    assert miniblock_chunk_layout(fields, 1, True, np.array([1])) is not None
