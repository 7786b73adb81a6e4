"""General-purpose buffer compression (LZ4 / ZSTD) with Lance's framing.

Used by the 2.0 ``Flat.compression`` (``Compression{scheme: "zstd"|"lz4", level}``) and
the 2.1+ ``General{BufferCompression{scheme: LZ4=1 | ZSTD=2, level}}`` wrapper.

Framing (little-endian):

* **zstd**: ``u64 uncompressed length`` then one zstd frame.  A bare zstd frame is also
  read: a buffer that starts with the magic ``28 b5 2f fd`` whose frame-header reserved
  bit (``0x10`` of byte 4) is clear, or that is shorter than 8 bytes, is taken as a bare
  frame, as the reference does.  ``b"abc"`` at level 3 is
  ``03 00 00 00 00 00 00 00`` + ``28 b5 2f fd 20 03 19 00 00 61 62 63``.
* **lz4**: ``u32 uncompressed length`` then one raw LZ4 *block* (not the frame format);
  ``b"abc"`` is ``03 00 00 00 30 61 62 63``.
* Empty input decompresses to empty output.

Sizes read from the buffer are checked before anything is allocated: against
``max_output_size`` and against the most either codec can expand (255x for an LZ4
block, 32768x for zstd, whose 4-byte RLE block can stand for 128 KiB).

Example::

    >>> from lancefile.encodings.compression import compress_buffer, decompress_buffer
    >>> packed = compress_buffer(b"abc" * 100, "lz4")
    >>> decompress_buffer(packed, "lz4") == b"abc" * 100
    True
"""

from __future__ import annotations

import struct
import threading

import numpy as np

from ..errors import CorruptFileError, InvalidInputError, UnsupportedEncodingError
from ..io import ranges_total

__all__ = [
    "SCHEMES",
    "lz4_frames",
    "SCHEME_BY_PROTO",
    "PROTO_BY_SCHEME",
    "ZSTD_DEFAULT_LEVEL",
    "MAX_DECOMPRESSED_BYTES",
    "compress_buffer",
    "entropy_compress_many",
    "decompress_buffer",
    "decompress_many",
    "normalize_scheme",
]

SCHEMES = ("lz4", "zstd")
# lance.encodings21.CompressionScheme values
SCHEME_BY_PROTO = {1: "lz4", 2: "zstd"}
PROTO_BY_SCHEME = {name: value for value, name in SCHEME_BY_PROTO.items()}
ZSTD_DEFAULT_LEVEL = 3
MAX_DECOMPRESSED_BYTES = 1 << 34  # 16 GiB: no single Lance buffer comes near it

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_FHD_RESERVED = 0x10
_ZSTD_MAX_RATIO = 32768  # a 4-byte RLE block decodes to at most 128 KiB
_ZSTD_SLACK = 1 << 17
# one-call decompression (allocated up front) only up to this ratio and this size
_ZSTD_FAST_RATIO = 64
_ZSTD_FAST_MAX = 16 << 20
_LZ4_MAX_RATIO = 255
_LZ4_SLACK = 64
_READ_STEP = 1 << 24
_FEED_STEP = 1 << 12  # compressed bytes per step for frames of unknown size


def normalize_scheme(scheme) -> str:
    """``"zstd"``/``"lz4"`` from a name (any case) or a ``CompressionScheme`` enum value."""
    if isinstance(scheme, (int, np.integer)) and not isinstance(scheme, bool):
        name = SCHEME_BY_PROTO.get(int(scheme))
    elif isinstance(scheme, str):
        name = scheme.strip().lower()
    else:
        name = None
    if name not in SCHEMES:
        raise UnsupportedEncodingError(f"unsupported buffer compression scheme {scheme!r}; expected one of {SCHEMES}")
    return name


def _as_bytes(data) -> bytes | memoryview:
    if isinstance(data, np.ndarray):
        return memoryview(np.ascontiguousarray(data).reshape(-1).view(np.uint8))
    return memoryview(data).cast("B") if not isinstance(data, bytes) else data


def compress_buffer(data, scheme, level: int | None = None) -> bytes:
    """Compress ``data`` with Lance's framing (see the module docstring).

    ``level`` applies to zstd (default 3; 0 also means zstd's default).  LZ4 ignores it,
    as the reference does.
    """
    name = normalize_scheme(scheme)
    raw = _as_bytes(data)
    if name == "zstd":
        import zstandard

        lvl = ZSTD_DEFAULT_LEVEL if level is None else int(level)
        frame = zstandard.ZstdCompressor(level=lvl).compress(raw)
        return struct.pack("<Q", len(raw)) + frame
    import lz4.block

    if len(raw) >= 1 << 31:
        raise InvalidInputError(f"LZ4 buffers are limited to 2 GiB, got {len(raw)} bytes")
    return lz4.block.compress(raw, store_size=True)


# zstd settings of :func:`entropy_compress_many`: the fastest level, and no match shorter than
# 7 bytes (zstd's longest minimum): in small symbols of little entropy (dictionary indices,
# def levels) short repeats are chance, and coding them costs more than the symbols' Huffman
# codes. 4,096 indices of 5 values: 3.04 bits each at level 3, 2.54 with these.
ENTROPY_LEVEL = 1
ENTROPY_MIN_MATCH = 7


def entropy_compress_many(data: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lance-framed zstd (``u64 length`` + frame) of each piece of ``data`` (pieces of
    ``sizes`` bytes back to back), tuned for entropy coding (:data:`ENTROPY_MIN_MATCH`):
    ``(the compressed pieces back to back, their sizes)``.

    Example::

        >>> import numpy as np
        >>> raw = np.random.default_rng(0).integers(0, 5, 8192).astype(np.uint8)
        >>> packed, sizes = entropy_compress_many(raw, np.array([4096, 4096]))
        >>> bool(sizes.sum() < 8192 * 3 // 8)  # under 3 bits a value
        True
        >>> decompress_buffer(packed[: sizes[0]], "zstd") == raw[:4096].tobytes()
        True
    """
    import zstandard

    params = zstandard.ZstdCompressionParameters.from_level(ENTROPY_LEVEL, min_match=ENTROPY_MIN_MATCH,
                                                            write_content_size=True)
    cctx = zstandard.ZstdCompressor(compression_params=params)
    raw = memoryview(np.ascontiguousarray(data).reshape(-1).view(np.uint8))
    out, out_sizes, at = [], np.zeros(len(sizes), np.int64), 0
    for i, n in enumerate(np.asarray(sizes, np.int64).tolist()):
        frame = cctx.compress(raw[at : at + n])
        out.append(struct.pack("<Q", n))
        out.append(frame)
        out_sizes[i] = 8 + len(frame)
        at += n
    return np.frombuffer(b"".join(out), np.uint8), out_sizes


def decompress_buffer(data, scheme, *, max_output_size: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress a buffer written with Lance's framing for ``scheme`` (``"zstd"``/``"lz4"``).

    Raises :class:`CorruptFileError` when the bytes do not decode, decode to a size other
    than the one announced, or announce a size beyond ``max_output_size`` or beyond what
    the codec could produce from that many bytes.
    """
    name = normalize_scheme(scheme)
    raw = _as_bytes(data)
    if len(raw) == 0:
        return b""
    if name == "zstd":
        return _zstd_decompress(raw, max_output_size)
    return _lz4_decompress(raw, max_output_size)


def decompress_many(data, starts, sizes, scheme, *, max_output_size: int = MAX_DECOMPRESSED_BYTES,
                    align: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`decompress_buffer` of many buffers ``data[starts[i] : starts[i] + sizes[i]]`` at
    once (a page's mini-block chunks, its full-zip values): returns ``(out, out_starts,
    out_sizes)``, buffer ``i`` decompressed at ``out[out_starts[i]:][:out_sizes[i]]``, each
    output starting at a multiple of ``align``. LZ4 blocks are decoded in one compiled pass
    (:mod:`.kernels.lz4`); zstd frames, when every buffer has the usual form, by one compiled
    loop calling libzstd (:mod:`.kernels.zstd`) or else one call of python-zstandard's C backend
    (and otherwise, or when those fail, one call each). The same checks
    as :func:`decompress_buffer`; the error names the buffer (``buffer i of n``).

    Example::

        >>> import numpy as np
        >>> a, b = compress_buffer(b"abc" * 9, "lz4"), compress_buffer(b"xy", "lz4")
        >>> data = np.frombuffer(a + b, np.uint8)
        >>> out, at, n = decompress_many(data, np.array([0, len(a)]), np.array([len(a), len(b)]), "lz4")
        >>> bytes(out[at[1] : at[1] + n[1]]), at.tolist()
        (b'xy', [0, 32])
    """
    name = normalize_scheme(scheme)
    raw = data if isinstance(data, np.ndarray) else np.frombuffer(data, np.uint8)
    starts = np.asarray(starts, dtype=np.int64).reshape(-1)
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    if len(starts) != len(sizes) or ranges_total(starts, sizes, len(raw)) < 0:
        raise CorruptFileError(f"compressed buffers lie outside the {len(raw)} bytes that hold them")
    if name == "zstd":
        return _zstd_many(raw, starts, sizes, max_output_size, align)
    payload_starts, payload, announced = lz4_frames(raw, starts, sizes, max_output_size)
    out_starts, total = _aligned_starts(announced, align)
    from .kernels._common import empty
    from .kernels.lz4 import lz4_decompress_many

    out = empty(total, np.uint8)
    bad = lz4_decompress_many(raw, payload_starts, payload, out, out_starts, announced)
    if bad >= 0:
        raise CorruptFileError(f"LZ4 buffer {bad} of {len(sizes)} ({int(sizes[bad])} bytes) does not decompress "
                               f"to the {int(announced[bad])} bytes it announces")
    return out, out_starts, announced


def lz4_frames(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, max_output_size: int = MAX_DECOMPRESSED_BYTES
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LZ4 blocks of framed buffers ``raw[starts[i]:][:sizes[i]]`` (which lie in ``raw``):
    ``(block starts, block sizes, announced sizes)``, every announced size checked against
    ``max_output_size`` and the most a block of that size can expand to. An empty buffer is
    an empty block announcing 0."""
    from .kernels.lz4 import lz4_frames_plan

    n = len(starts)
    payload_starts, payload, announced = (np.empty(n, np.int64) for _ in range(3))
    bad = lz4_frames_plan(raw, starts, sizes, max_output_size, _LZ4_MAX_RATIO, _LZ4_SLACK, payload_starts, payload,
                          announced)
    if bad > 0:
        i = bad - 1
        raise CorruptFileError(f"LZ4 buffer {i} of {n}: {int(sizes[i])} bytes is too short for its length prefix")
    if bad < 0:
        i = -bad - 1
        limit = min(max_output_size, _LZ4_MAX_RATIO * int(payload[i]) + _LZ4_SLACK)
        raise CorruptFileError(f"LZ4 buffer {i} of {n}: {int(payload[i])} compressed bytes claim "
                               f"{int(announced[i])} uncompressed bytes (more than the limit of {limit})")
    return payload_starts, payload, announced


def _aligned_starts(out_sizes: np.ndarray, align: int) -> tuple[np.ndarray, int]:
    padded = out_sizes + (-out_sizes) % align
    ends = np.cumsum(padded)
    return ends - padded, int(ends[-1]) if len(ends) else 0


_LOCAL = threading.local()


def _decompressor():
    """This thread's zstd decompressor: a new one costs ~8 us (its context is allocated and
    set up), ten times a 4 KiB chunk's decoding; each call resets it."""
    dctx = getattr(_LOCAL, "zstd", None)
    if dctx is None:
        import zstandard

        dctx = _LOCAL.zstd = zstandard.ZstdDecompressor()
    return dctx


def _zstd_many(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, cap: int, align: int):
    import zstandard

    n = len(starts)
    # the usual buffer (u64 size + one frame of that size, within the fast limits) is checked
    # for all at once and decompressed with one call; anything else takes the careful path
    announced, usual, out_starts, total = _zstd_usual(raw, starts, sizes, cap, align)
    if n and usual.all():
        got = _zstd_compiled(raw, starts, sizes, announced, out_starts, total)
        if got is not None:
            return got
    dctx = _decompressor()
    if n > 1 and usual.all():  # one call for every frame: no Python between them
        pieces = _zstd_batch(dctx, raw, starts, sizes, announced)
        if pieces is not None:
            return _zstd_pieces(pieces, announced, n, align)
    mv = memoryview(raw)
    pieces = []
    for i, (s, z, a, ok) in enumerate(zip(starts.tolist(), sizes.tolist(), announced.tolist(), usual.tolist())):
        out = None
        if ok:
            frame = mv[s + 8 : s + z]
            try:  # the frame's own size (which the decompressor allocates) must be the one announced
                if zstandard.frame_content_size(frame) in (a, -1):
                    out = dctx.decompress(frame, max_output_size=a, allow_extra_data=False)
            except zstandard.ZstdError:
                out = None
            if out is not None and len(out) != a:
                out = None
        if out is None:  # a bare frame, several frames or damage: the careful path says which
            try:
                out = _zstd_decompress(mv[s : s + z], cap) if z else b""
            except CorruptFileError as exc:
                raise CorruptFileError(f"zstd buffer {i} of {n}: {exc}") from None
        pieces.append(out)
    return _zstd_pieces(pieces, np.fromiter((len(p) for p in pieces), dtype=np.int64, count=n), n, align)


def _zstd_compiled(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, announced: np.ndarray,
                   out_starts: np.ndarray, total: int):
    """The usual buffers' frames (:func:`_zstd_usual`) decoded by one compiled loop calling
    libzstd (:mod:`.kernels.zstd`: no GIL held, no Python object a frame), each into exactly
    its announced size at ``out_starts`` in one output of ``total`` bytes, as
    :func:`decompress_many` returns them; None where that loop is missing or a frame fails
    (the next path then says which)."""
    from .kernels import zstd_available, zstd_decompress_into
    from .kernels._common import empty

    if not zstd_available():
        return None
    out = empty(total, np.uint8)
    if zstd_decompress_into(raw, starts + 8, sizes - 8, out, out_starts, announced) >= 0:
        return None
    return out, out_starts, announced


def _zstd_batch(dctx, raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, announced: np.ndarray):
    """The usual buffers' frames decompressed by one call of python-zstandard's C backend, each
    into exactly its announced size (a frame that decodes to any other size is an error there),
    or None where that call is missing or fails: the frame-by-frame path then says which
    buffer is wrong and why."""
    import zstandard

    batch = getattr(dctx, "multi_decompress_to_buffer", None)
    if batch is None:
        return None
    segments = np.empty((len(starts), 2), np.uint64)
    segments[:, 0] = starts + 8
    segments[:, 1] = sizes - 8
    try:
        return batch(zstandard.BufferWithSegments(raw, segments),
                     decompressed_sizes=announced.astype(np.uint64), threads=0)
    except (zstandard.ZstdError, ValueError, TypeError):
        return None


def _zstd_pieces(pieces, out_sizes: np.ndarray, n: int, align: int):
    """``pieces`` (decompressed buffers, ``out_sizes`` long) laid out as :func:`decompress_many`
    returns them."""
    out_starts, total = _aligned_starts(out_sizes, align)
    if n and not np.any(out_sizes[:-1] % align):  # already aligned back to back: one join
        return np.frombuffer(b"".join(pieces), np.uint8), out_starts, out_sizes
    from .kernels._common import empty

    out = empty(total, np.uint8)
    for s, p in zip(out_starts.tolist(), pieces):
        out[s : s + len(p)] = np.frombuffer(p, np.uint8)
    return out, out_starts, out_sizes


def _zstd_usual(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, cap: int, align: int = 8):
    """``(announced, usual, out_starts, total)`` of framed zstd buffers
    ``raw[starts[i]:][:sizes[i]]`` (:func:`~.kernels.zstd.zstd_plan`): the usual form is a u64
    size, not a bare frame, announcing at most :data:`_ZSTD_FAST_RATIO` times the frame plus
    slack (it is allocated up front: a damaged size could inflate it; those go the streaming
    way); the usual buffers' outputs laid out ``align``-ed."""
    from .kernels import zstd_plan

    return zstd_plan(raw, starts, sizes, _ZSTD_MAGIC, _ZSTD_FHD_RESERVED, min(cap, _ZSTD_FAST_MAX), _ZSTD_FAST_RATIO,
                     _ZSTD_SLACK, align)


def _check_size(announced: int, payload: int, ratio: int, slack: int, cap: int, what: str) -> None:
    limit = min(cap, ratio * payload + slack)
    if announced > limit:
        raise CorruptFileError(
            f"{what} buffer of {payload} compressed bytes claims {announced} uncompressed bytes "
            f"(more than the limit of {limit})"
        )


def _is_bare_zstd_frame(raw) -> bool:
    if len(raw) < 8:
        return True  # too short to hold the u64 length prefix
    return bytes(raw[:4]) == _ZSTD_MAGIC and not raw[4] & _ZSTD_FHD_RESERVED


def _read_at_most(reader, n: int) -> bytes:
    parts, total = [], 0
    while total < n:
        piece = reader.read(min(_READ_STEP, n - total))
        if not piece:
            break
        parts.append(piece)
        total += len(piece)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _zstd_bare_frames(dctx, payload, limit: int) -> bytes:
    # Frames of unknown size: feed the input in small steps so that the output can be
    # checked against ``limit`` as it grows, and insist that every frame is complete.
    view = memoryview(payload)
    parts, total, pos = [], 0, 0
    while pos < len(view):
        dobj = dctx.decompressobj()
        while not dobj.eof:
            if pos >= len(view):
                raise CorruptFileError(f"bare zstd frame of {len(view)} bytes is truncated")
            piece = view[pos : pos + _FEED_STEP]
            pos += len(piece)
            out = dobj.decompress(piece)
            total += len(out)
            if total > limit:
                raise CorruptFileError(
                    f"bare zstd frame of {len(view)} bytes decompresses past the limit of {limit} bytes"
                )
            parts.append(out)
        pos -= len(dobj.unused_data)
    return b"".join(parts)


def _zstd_decompress(raw, cap: int) -> bytes:
    import zstandard

    bare = _is_bare_zstd_frame(raw)
    payload = raw if bare else raw[8:]
    limit = min(cap, _ZSTD_MAX_RATIO * len(payload) + _ZSTD_SLACK)
    try:
        if bare:
            return _zstd_bare_frames(zstandard.ZstdDecompressor(), payload, limit)
        (announced,) = struct.unpack_from("<Q", raw)
        _check_size(announced, len(payload), _ZSTD_MAX_RATIO, _ZSTD_SLACK, cap, "zstd")
        with zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=True) as reader:
            out = _read_at_most(reader, announced + 1)  # one byte more to notice overlong data
    except zstandard.ZstdError as exc:
        raise CorruptFileError(f"zstd buffer of {len(raw)} bytes does not decompress: {exc}") from None
    if len(out) != announced:
        raise CorruptFileError(f"zstd buffer announces {announced} bytes but decompresses to {len(out)}")
    return out


def _lz4_decompress(raw, cap: int) -> bytes:
    import lz4.block

    if len(raw) < 4:
        raise CorruptFileError(f"LZ4 buffer of {len(raw)} bytes is too short for its length prefix")
    (announced,) = struct.unpack_from("<I", raw)
    payload = raw[4:]
    _check_size(announced, len(payload), _LZ4_MAX_RATIO, _LZ4_SLACK, cap, "LZ4")
    if announced == 0:
        if bytes(payload) not in (b"", b"\x00"):
            raise CorruptFileError("LZ4 buffer announces 0 bytes but carries data")
        return b""
    try:
        out = lz4.block.decompress(payload, uncompressed_size=announced)
    except lz4.block.LZ4BlockError as exc:
        raise CorruptFileError(f"LZ4 buffer of {len(raw)} bytes does not decompress: {exc}") from None
    if len(out) != announced:
        raise CorruptFileError(f"LZ4 buffer announces {announced} bytes but decompresses to {len(out)}")
    return out
