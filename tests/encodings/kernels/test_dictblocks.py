"""Lookups in several pages' string dictionaries in one compiled pass
(:mod:`lancefile.encodings.kernels.dictblocks`): the items against the blocks' own, every
block or index out of the usual form declined (the general path then names it), and takes
of lancefile's dictionary pages going through it."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lancefile
from lancefile.encodings import kernels
from lancefile.encodings.kernels.dictblocks import dictionary_take
from lancefile.encodings.structural import mini_block_fast
from tests.encodings.kernels.conftest import PROPS


def _block(items: list[bytes]) -> bytes:
    offs = np.cumsum([0] + [len(i) for i in items])
    raw = struct.pack("<II", 32, 8 + 4 * (len(items) + 1)) + struct.pack(f"<{len(items) + 1}I", *offs) + b"".join(items)
    return raw + bytes(-len(raw) % 4)


def _laid(dicts):
    blocks = [_block(d) for d in dicts]
    starts = np.cumsum([0] + [len(b) for b in blocks])[:-1]
    sizes = np.array([len(b) for b in blocks])
    return np.frombuffer(b"".join(blocks), np.uint8), starts, sizes


@PROPS
@given(st.lists(st.lists(st.binary(max_size=12), min_size=1, max_size=8), min_size=1, max_size=5), st.data())
def test_items_are_the_blocks_own(dicts, data):
    raw, starts, sizes = _laid(dicts)
    idx, want, cuts = [], [], [0]
    for d in dicts:
        picks = data.draw(st.lists(st.integers(0, len(d) - 1), max_size=6))
        idx += picks
        want += [d[i] for i in picks]
        cuts.append(len(idx))
    offsets, src = dictionary_take(raw, starts, sizes, np.array([len(d) for d in dicts]), np.array(idx, np.int64),
                                   np.array(cuts))
    got = [bytes(raw[s : s + n]) for s, n in zip(src.tolist(), np.diff(offsets).tolist())]
    assert got == want


@pytest.mark.parametrize("damage", ["bits", "bytes start", "last offset past the bytes", "item past the bytes",
                                    "offsets decrease", "index past the items", "negative index", "cuts short",
                                    "cuts past the indices", "cuts decrease", "block past the bytes",
                                    "unaligned block"])
def test_out_of_the_usual_form_is_declined(damage):
    # page 0: ["ab", "c"]; page 1: ["xyz", "", "q"]; then 4 spare bytes
    raw, starts, sizes = _laid([[b"ab", b"c"], [b"xyz", b"", b"q"]])
    raw = np.concatenate([raw, np.zeros(4, np.uint8)])
    counts, idx, cuts = np.array([2, 3]), np.array([1, 0, 1, 0]), np.array([0, 2, 4])
    words = raw.view("<u4")
    b = starts[1] // 4  # the second block's first word
    if damage == "bits":
        words[b] = 64
    elif damage == "bytes start":  # inside the offsets: they would be read as the items' bytes
        words[b + 1] -= 4
    elif damage == "last offset past the bytes":  # of an item not taken
        words[b + 2 + 3] = 99
    elif damage == "item past the bytes":  # item 0 ends past them, the block's last offset is fine
        words[b + 2 + 1] = 99
        idx, cuts = np.array([1, 0, 0]), np.array([0, 2, 3])
    elif damage == "offsets decrease":  # item 0 of the second page ends before it starts
        words[b + 2 + 1] = 0
        words[b + 2] = 2
    elif damage == "index past the items":  # page 0 has 2 items; its bytes "abc" then read as offsets
        raw, starts, sizes = _laid([[b"\x04\x00\x00\x00"], [b"xyz", b"", b"q"]])  # item "1" would be [4, 4)
        counts, idx = np.array([1, 3]), np.array([1, 0, 1, 0])
    elif damage == "negative index":
        idx = np.array([1, -1, 1, 0])
    elif damage == "cuts short":
        cuts = np.array([0, 2, 3])
    elif damage == "cuts past the indices":
        cuts = np.array([0, 2, 5])
    elif damage == "cuts decrease":
        cuts = np.array([0, -1, 4])
    elif damage == "block past the bytes":
        sizes = sizes + np.array([0, 8])
    elif damage == "unaligned block":  # one byte on: its word (rounded down) would still be the block's
        starts = starts + np.array([0, 1])
    assert dictionary_take(raw, starts, sizes, counts, idx, cuts) is None


def test_a_count_past_int64_is_declined():
    """A page's item count is a uint64 in the file: one past int64 is declined, not an OverflowError."""
    raw, starts, sizes = _laid([[b"ab", b"c"], [b"xyz", b"", b"q"]])
    for counts in ([2, 2**64 - 1], np.array([2, 2**64 - 1], np.uint64), [2, 2**63]):
        assert dictionary_take(raw, starts, sizes, counts, np.array([1, 0, 1, 0]), np.array([0, 2, 4])) is None


def test_the_usual_blocks_are_looked_up():
    """The undamaged form of the cases above: the kernel answers (so each None above is the damage)."""
    raw, starts, sizes = _laid([[b"ab", b"c"], [b"xyz", b"", b"q"]])
    offsets, src = dictionary_take(raw, starts, sizes, np.array([2, 3]), np.array([1, 0, 2, 0]), np.array([0, 2, 4]))
    assert [bytes(raw[s : s + n]) for s, n in zip(src.tolist(), np.diff(offsets).tolist())] == [b"c", b"ab", b"q",
                                                                                                 b"xyz"]


def test_lancefile_dictionary_pages_take_through_it(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    n = 300_000  # several pages, each with its own dictionary
    words = np.array([f"word-{i:03d}" for i in range(40)])[rng.integers(0, 40, n)]
    t = pa.table({"s": pa.array(words, mask=rng.random(n) < 0.01)})
    path = tmp_path / "d.lance"
    lancefile.write_table(t, path, max_page_bytes=64 * 1024)
    assert len(lancefile.LanceFileReader(path).metadata().columns[0].pages) > 2
    answered = []
    real = kernels.dictionary_take
    monkeypatch.setattr(kernels, "dictionary_take", lambda *a: answered.append(real(*a)) or answered[-1])
    monkeypatch.setattr(mini_block_fast, "look_up", lambda *a: pytest.fail("the lookup went the general way"))
    idx = np.sort(rng.choice(n, 200, replace=False))
    assert lancefile.LanceFileReader(path).take_rows(idx).to_table().equals(t.take(idx))
    assert answered and all(a is not None for a in answered)
