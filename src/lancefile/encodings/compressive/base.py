"""The compressive layer of 2.1+: contexts, the codec interface, dispatch and grammar.

A ``CompressiveEncoding`` is a tree (``General{zstd, Variable{Flat(32)}}``); which
variants may appear depends on where the tree sits (REFERENCE-NOTES §5.1):

================  ==========================================================  ===========
context           where                                                       variants
================  ==========================================================  ===========
MINIBLOCK         mini-block values, chunk by chunk                           flat, inline_bitpacking,
                                                                              variable, fsst, rle,
                                                                              byte_stream_split, general,
                                                                              fixed_size_list, packed_struct
BLOCK             rep/def levels, dictionaries: one whole buffer              flat, inline_bitpacking,
                                                                              out_of_line_bitpacking,
                                                                              constant, variable, rle,
                                                                              general, fixed_size_list
FIXED_VALUE       full-zip fixed-width values, value by value                 flat, fixed_size_list, constant
VARIABLE_VALUE    full-zip variable-width values, value by value              variable, fsst, general,
                                                                              variable_packed_struct
================  ==========================================================  ===========

Each encoding is a :class:`Codec` registered in :data:`~lancefile.encodings.registry.COMPRESSIVE`
under its oneof name; it says which contexts it may appear in, what its nested encodings
are (:meth:`Codec.children`), what its version allows (:meth:`Codec.check`) and how it
decodes in each context. :func:`check_tree` walks a tree once, when a page is first met,
so decoders can trust the shape they get.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ...errors import CorruptFileError
from ...format.version import Grammar
from .. import kernels
from ..registry import COMPRESSIVE
from .values import Values, concat

__all__ = ["Context", "Chunks", "Codec", "register", "check_tree", "decode_miniblock", "decode_block",
           "decode_blocks", "decode_fixed_values", "decode_variable_values", "decode_variable_spans", "miniblock_buffers", "take_miniblock", "describe"]


class Context(enum.Enum):
    MINIBLOCK = "mini-block values"
    BLOCK = "a block buffer (levels or dictionary)"
    FIXED_VALUE = "full-zip fixed-width values"
    VARIABLE_VALUE = "full-zip variable-width values"


@dataclass
class Chunks:
    """The value buffers of a run of mini-block chunks, located in one byte array.

    Buffer ``k`` of chunk ``c`` is ``data[starts[k, c] : starts[k, c] + sizes[k, c]]``;
    chunk ``c`` holds ``counts[c]`` values. Positions were checked against ``data``.
    """

    data: np.ndarray  # uint8
    starts: np.ndarray  # int64, (num_buffers, num_chunks)
    sizes: np.ndarray  # int64, (num_buffers, num_chunks)
    counts: np.ndarray  # int64, (num_chunks,)
    where: str

    def error(self, msg: str) -> CorruptFileError:
        return CorruptFileError(f"{self.where}: {msg}")

    def gather(self, k: int, lengths: np.ndarray) -> np.ndarray:
        """The first ``lengths[c]`` bytes of buffer ``k`` of every chunk, back to back."""
        if np.any(lengths > self.sizes[k]):
            c = int(np.argmax(lengths > self.sizes[k]))
            raise self.error(f"chunk {c} needs {int(lengths[c])} bytes of value buffer {k}, "
                             f"which has {int(self.sizes[k, c])}")
        starts = self.starts[k]
        if len(lengths) == 1 or not np.any(starts[1:] - starts[:-1] - lengths[:-1]):
            s = int(starts[0])  # back to back already (one chunk, decompressed chunks): a view
            return self.data[s : s + int(lengths.sum())]
        return kernels.gather_bytes(self.data, starts, lengths)

    def locate(self, k: int, positions: np.ndarray, width: int):
        """``(chunk, start of buffer k in data, value index within the chunk)`` of each of the
        sorted ``positions`` (values numbered across the chunks), for fixed-width values of
        ``width`` bytes: None when a chunk's buffer is too short for its values or a position
        is outside them (a whole decode then says what is wrong)."""
        counts = self.counts
        if not len(counts) or np.any(counts * width > self.sizes[k]):
            return None
        ends = np.cumsum(counts)
        c = np.searchsorted(ends, positions, side="right")
        if len(positions) and (positions[0] < 0 or c[-1] >= len(counts)):
            return None
        return c, self.starts[k][c], positions - (ends - counts)[c]

    def decompressed(self, k: int, compression) -> "Chunks":
        """These chunks with buffer ``k`` of every chunk decompressed (a ``BufferCompression``),
        all in one pass (:func:`~lancefile.encodings.compression.decompress_many`)."""
        from ._buffers import decompress_spans

        return self.with_buffer(k, *decompress_spans(compression, self.data, self.starts[k], self.sizes[k], self.where))

    def with_buffer(self, k: int, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> "Chunks":
        """These chunks with buffer ``k`` of chunk ``c`` now ``data[starts[c]:][:sizes[c]]``."""
        if self.starts.shape[0] == 1:
            return Chunks(data, starts.reshape(1, -1), sizes.reshape(1, -1), self.counts, self.where)
        # other buffers keep their bytes: append the old data after the new ones
        shift = len(data)
        new_starts = self.starts + shift
        new_sizes = self.sizes.copy()
        new_starts[k], new_sizes[k] = starts, sizes
        return Chunks(np.concatenate([data, self.data]), new_starts, new_sizes, self.counts, self.where)


class Codec:
    """One ``CompressiveEncoding`` variant. Subclasses override what they support."""

    name: str = ""
    contexts: frozenset = frozenset()

    def children(self, msg, ctx: Context) -> list[tuple[object, Context]]:
        """Nested encodings and the context each is decoded in."""
        return []

    def check(self, msg, ctx: Context, grammar: Grammar, where: str) -> None:
        """Refuse what the file's version or this context cannot hold (CorruptFileError)."""

    def num_buffers(self, msg) -> int:
        """Value buffers a mini-block chunk holds for this encoding."""
        return 1

    def miniblock(self, msg, chunks: Chunks, first: int) -> Values:
        raise NotImplementedError

    def miniblock_take(self, msg, chunks: Chunks, first: int, positions: np.ndarray) -> Values | None:
        """Only the values at ``positions`` (sorted indices into what :meth:`miniblock` returns),
        for codecs that can find a value without decoding its whole chunk; None otherwise."""
        return None

    def block(self, msg, data: np.ndarray, num_values: int, where: str) -> Values:
        raise NotImplementedError

    def blocks(self, msg, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, counts: np.ndarray,
               where: str) -> Values:
        """Many block buffers (one per mini-block chunk, e.g. its levels), decoded back to back.

        Codecs override this with one vectorised pass; this default decodes one by one.
        """
        parts = [self.block(msg, data[a : a + n], c, where)
                 for a, n, c in zip(starts.tolist(), sizes.tolist(), counts.tolist())]
        return concat(parts) if parts else self.block(msg, data[:0], 0, where)

    def fixed_values(self, msg, rows: np.ndarray, where: str) -> Values:
        """``rows``: (n, bytes a value) uint8, one row per value."""
        raise NotImplementedError

    def variable_values(self, msg, offsets: np.ndarray, data: np.ndarray, where: str) -> Values:
        raise NotImplementedError

    def variable_spans(self, msg, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, where: str) -> Values:
        """:meth:`variable_values` of values that are not back to back: value ``i`` is
        ``data[starts[i] : starts[i] + sizes[i]]`` (rows of a full-zip page). This default
        gathers them first; codecs that can decode in place override it."""
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return self.variable_values(msg, offsets, kernels.gather_bytes(data, starts, sizes), where)

    def variable_spans_many(self, msgs: list, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
                            counts: np.ndarray, wheres: list[str]) -> Values | None:
        """:meth:`variable_spans` of several pages' values in one call, where the pages'
        messages differ (e.g. each page's FSST symbol table): the first ``counts[0]`` spans
        are ``msgs[0]``'s (``wheres[0]``), the next ``counts[1]`` ``msgs[1]``'s... None when
        the codec has no such path for these messages: the caller then decodes page by page."""
        return None


def register(name: str):
    """Class decorator: register one instance of a :class:`Codec` under its oneof name."""

    def wrap(cls):
        COMPRESSIVE.register(name)(cls())
        return cls

    return wrap


def _codec(enc, where: str) -> tuple[object, Codec]:
    name, sub, codec = COMPRESSIVE.lookup(enc, where=where)
    return sub, codec


def check_tree(enc, ctx: Context, grammar: Grammar, where: str) -> None:
    """Check a whole encoding tree against its context and the file's grammar."""
    name, sub, codec = COMPRESSIVE.lookup(enc, where=where)
    if ctx not in codec.contexts:
        raise CorruptFileError(f"{where}: compressive encoding {name!r} cannot appear in {ctx.value}")
    codec.check(sub, ctx, grammar, where)
    for child, child_ctx in codec.children(sub, ctx):
        if child is None:
            raise CorruptFileError(f"{where}: compressive encoding {name!r} is missing its nested encoding")
        check_tree(child, child_ctx, grammar, where)


def miniblock_buffers(enc, where: str) -> int:
    sub, codec = _codec(enc, where)
    return codec.num_buffers(sub)


def decode_miniblock(enc, chunks: Chunks, first: int = 0) -> Values:
    sub, codec = _codec(enc, chunks.where)
    return codec.miniblock(sub, chunks, first)


def take_miniblock(enc, chunks: Chunks, positions: np.ndarray, first: int = 0) -> Values | None:
    """The values at ``positions`` of the chunks (value buffers from ``first`` on), or None
    when the encoding can only decode whole chunks (then decode them with
    :func:`decode_miniblock` and pick)."""
    sub, codec = _codec(enc, chunks.where)
    return codec.miniblock_take(sub, chunks, first, positions)


def decode_block(enc, data, num_values: int, where: str) -> Values:
    sub, codec = _codec(enc, where)
    return codec.block(sub, np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data,
                       int(num_values), where)


def decode_blocks(enc, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, counts: np.ndarray,
                  where: str) -> Values:
    """Block buffers ``data[starts[i] : starts[i] + sizes[i]]`` of ``counts[i]`` values each."""
    if np.any(starts < 0) or np.any(sizes < 0) or np.any(starts + sizes > len(data)):
        raise CorruptFileError(f"{where}: a chunk's level buffer lies outside its chunk")
    sub, codec = _codec(enc, where)
    if len(starts) == 1:  # one chunk (a take, a small page): the plain block decoder is cheaper
        a = int(starts[0])
        return codec.block(sub, data[a : a + int(sizes[0])], int(counts[0]), where)
    return codec.blocks(sub, data, starts, sizes, counts, where)


def decode_fixed_values(enc, rows: np.ndarray, where: str) -> Values:
    sub, codec = _codec(enc, where)
    return codec.fixed_values(sub, rows, where)


def decode_variable_values(enc, offsets: np.ndarray, data: np.ndarray, where: str) -> Values:
    sub, codec = _codec(enc, where)
    return codec.variable_values(sub, offsets, data, where)


def decode_variable_spans(enc, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, where: str) -> Values:
    """Variable-width values at ``data[starts[i] : starts[i] + sizes[i]]`` (checked in bounds)."""
    if len(starts) and (int(starts.min()) < 0 or int(sizes.min()) < 0 or int((starts + sizes).max()) > len(data)):
        raise CorruptFileError(f"{where}: a value lies outside its page ({len(data)} bytes)")
    sub, codec = _codec(enc, where)
    return codec.variable_spans(sub, data, starts, sizes, where)


def decode_variable_spans_many(encs: list, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
                               counts, wheres: list[str]) -> list[Values]:
    """:func:`decode_variable_spans` of several pages' values: spans ``counts[0]`` first
    under ``encs[0]`` (page ``wheres[0]``), and so on. Returns the values of runs of pages,
    in order, decoded with as few calls as the encodings allow: a run of pages with equal
    encodings in one call, a run whose encodings differ only where the codec can decode
    them together (FSST: a symbol table a page, :meth:`Codec.variable_spans_many`) in one
    call, any other page on its own. Pages with no spans are skipped."""
    if len(starts) and (int(starts.min()) < 0 or int(sizes.min()) < 0 or int((starts + sizes).max()) > len(data)):
        raise CorruptFileError(f"{wheres[0]}: a value lies outside its page ({len(data)} bytes)")
    counts = [int(c) for c in counts]
    keep = [k for k, c in enumerate(counts) if c]
    at = np.concatenate([[0], np.cumsum(counts)]).tolist()
    parts: list = []
    i = 0
    while i < len(keep):  # a run: pages of one codec (their oneof name)
        name = encs[keep[i]].WhichOneof("compression")
        j = i + 1
        while j < len(keep) and encs[keep[j]].WhichOneof("compression") == name:
            j += 1
        run = keep[i:j]
        a, b = at[run[0]], at[run[-1] + 1]
        first = encs[run[0]]
        if all(encs[k] == first for k in run[1:]):
            got = decode_variable_spans(first, data, starts[a:b], sizes[a:b], wheres[run[0]])
        else:
            sub, codec = _codec(first, wheres[run[0]])
            subs = [sub] + [_codec(encs[k], wheres[k])[0] for k in run[1:]]
            got = codec.variable_spans_many(subs, data, starts[a:b], sizes[a:b], [counts[k] for k in run],
                                            [wheres[k] for k in run])
        if got is not None:
            parts.append(got)
        else:  # page by page
            parts.extend(decode_variable_spans(encs[k], data, starts[at[k]:at[k + 1]], sizes[at[k]:at[k + 1]],
                                               wheres[k]) for k in run)
        i = j
    return parts


def describe(enc) -> str:
    """A short summary of an encoding tree, e.g. ``general(lz4, variable(flat(32)))``."""
    name = enc.WhichOneof("compression")
    if name is None:
        return "?"
    sub = getattr(enc, name)
    codec = COMPRESSIVE._handlers.get(name)
    label = getattr(codec, "label", None)
    head = label(sub) if label else name
    kids = [describe(c) for c, _ in (codec.children(sub, Context.BLOCK) if codec else []) if c is not None]
    return f"{head}({', '.join(kids)})" if kids else head
