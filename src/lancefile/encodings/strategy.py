"""Where 2.1+ writing decides: one :class:`FieldParams` per field, one :class:`Strategy`.

The encoders in :mod:`.structural.encoder` and :mod:`.compressive.encode` only encode;
what a page becomes (structural layout, compressive cascade, chunk sizes) is chosen here,
from the data and the field's ``lance-encoding:*`` metadata, with the reference's
defaults (REFERENCE-NOTES §4.6, §5.13). No environment variable changes what is written.

Keys understood (bad values are refused before anything is written):

==========================================  ============================================
``lance-encoding:compression``              ``none``, ``fsst``, ``lz4``, ``zstd``
``lance-encoding:compression-level``        an integer >= 0
``lance-encoding:structural-encoding``      ``miniblock`` or ``fullzip``
``lance-encoding:rle-threshold``            a number in [0, 1]
``lance-encoding:bss``                      ``off``, ``on``, ``auto``
``lance-encoding:dict-size-ratio``          a number in (0, 1]
``lance-encoding:minichunk-size``           an integer > 0 (bytes of variable values a chunk)
``lance-encoding:dict-values-compression``  ``lz4`` (2.2's default), ``zstd``, ``none``
``lance-encoding:dict-values-compression-level``  an integer >= 0
==========================================  ============================================

Example::

    >>> p = FieldParams.from_metadata({"lance-encoding:compression": b"zstd"}, "x")
    >>> p.compression, p.level
    ('zstd', None)
    >>> FieldParams.from_metadata({"lance-encoding:compression": b"brotli"}, "x")
    Traceback (most recent call last):
    ...
    lancefile.errors.InvalidInputError: field 'x': lance-encoding:compression must be one of fsst, lz4, none, zstd, not 'brotli'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidInputError

__all__ = ["FieldParams", "Strategy", "FULLZIP_MIN_VALUE_BYTES", "MINIBLOCK", "FULLZIP"]

PREFIX = "lance-encoding:"
MINIBLOCK, FULLZIP = "miniblock", "fullzip"
# Values this long (on average) go full-zip (REFERENCE-NOTES §10: 255 B mini-block, 256 B full-zip).
FULLZIP_MIN_VALUE_BYTES = 256
# Mini-block value data aimed at per chunk (the reference's MAX_MINIBLOCK_BYTES is 8186; it doubles
# while twice the bytes stay under it) and the most values a chunk holds.
MINIBLOCK_TARGET_BYTES = 8186
MINIBLOCK_MAX_VALUES = 4096
VARIABLE_CHUNK_BYTES = 4096
FSST_MIN_MAX_LEN = 5
# Dictionary pages (REFERENCE-NOTES §4.6 step 5): pages of at least this many values, at most
# this many distinct ones, whose dictionary plus indices is below dict-size-ratio of the plain size.
DICT_MIN_VALUES = 100
DICT_MAX_CARDINALITY = 100_000
DICT_SAMPLE = 4096
FSST_MIN_BYTES = 32 * 1024
# lancefile's own choice (not the reference's): floats go byte-stream-split under LZ4 when
# that makes the page at most this fraction of what the reference's choice takes
SPLIT_MIN_GAIN = 0.95
# lancefile's own entropy-coded choices, kept when the page comes out at most
# ENTROPY_MIN_GAIN of the reference's (pylance 14.0.2 reads them): dictionary pages of at
# most ENTROPY_MAX_ITEMS items, at least one full chunk long, get their u8 indices and def
# levels under zstd (the reference bit-packs indices and RLE-codes levels); 32/64-bit
# integers go byte-stream-split under zstd (the reference bit-packs or RLE-codes them)
ENTROPY_MAX_ITEMS = 256
ENTROPY_MIN_GAIN = 0.95
# values a chunk of those integers: a take decompresses a whole chunk for each row it wants
# (4,096 int64 are 32 KiB: 100 rows of sequential ids cost ~0.4 ms; 1,024 a chunk ~0.1 ms), but
# a counting low byte takes ~256 bytes a chunk whatever its length, and at 1,024 the bench's
# embeddings file (a 65,000-row id column beside the vectors) was left 500 bytes under
# pylance's, where the size target holds it (0.09 bytes a row at 4,096, 0.31 at 1,024)
ENTROPY_SPLIT_CHUNK_VALUES = 4096
_COMPRESSIONS = ("fsst", "lz4", "none", "zstd")


def _text(md: dict, key: str) -> str | None:
    v = md.get(PREFIX + key)
    if v is None:
        return None
    return (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)).strip()


def _number(md: dict, key: str, name: str, lo: float, hi: float, *, integer: bool = False):
    raw = _text(md, key)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise InvalidInputError(f"field {name!r}: {PREFIX}{key} must be a number, not {raw!r}") from None
    if not lo <= value <= hi:
        raise InvalidInputError(f"field {name!r}: {PREFIX}{key} must be in [{lo}, {hi}], not {raw}")
    return value


@dataclass(frozen=True)
class FieldParams:
    """The ``lance-encoding:*`` options of one field, parsed and checked once."""

    compression: str | None = None  # none / fsst / lz4 / zstd; None = automatic
    level: int | None = None
    structural: str | None = None  # miniblock / fullzip; None = automatic
    rle_threshold: float = 0.5
    bss: str = "auto"
    dict_size_ratio: float = 0.8
    minichunk_bytes: int | None = None
    dict_values_compression: str = "lz4"  # 2.2 only; 2.1 never compresses dictionaries
    dict_values_level: int | None = None

    @classmethod
    def from_metadata(cls, md: dict, name: str) -> "FieldParams":
        comp = _text(md, "compression")
        if comp is not None:
            comp = comp.lower()
            if comp not in _COMPRESSIONS:
                raise InvalidInputError(f"field {name!r}: {PREFIX}compression must be one of "
                                        f"{', '.join(_COMPRESSIONS)}, not {comp!r}")
        level = _number(md, "compression-level", name, 0, 22, integer=True)
        structural = _text(md, "structural-encoding")
        if structural is not None:
            structural = structural.lower()
            if structural not in (MINIBLOCK, FULLZIP):
                raise InvalidInputError(f"field {name!r}: {PREFIX}structural-encoding must be miniblock or "
                                        f"fullzip, not {structural!r}")
        rle = _number(md, "rle-threshold", name, 0.0, 1.0)
        bss = (_text(md, "bss") or "auto").lower()
        if bss not in ("off", "on", "auto"):
            raise InvalidInputError(f"field {name!r}: {PREFIX}bss must be off, on or auto, not {bss!r}")
        ratio = _number(md, "dict-size-ratio", name, 1e-9, 1.0)
        chunk = _number(md, "minichunk-size", name, 1, 1 << 30, integer=True)
        dvc = (_text(md, "dict-values-compression") or "lz4").lower()
        if dvc not in ("lz4", "zstd", "none"):
            raise InvalidInputError(f"field {name!r}: {PREFIX}dict-values-compression must be lz4, zstd or none, "
                                    f"not {dvc!r}")
        dvl = _number(md, "dict-values-compression-level", name, 0, 22, integer=True)
        return cls(comp, level, structural, 0.5 if rle is None else rle, bss,
                   0.8 if ratio is None else ratio, chunk, dvc, dvl)


def _distinct_head(values, k: int) -> bool:
    """Whether the first ``k`` values of a 64-bit array are certainly all different (False
    when unsure). A compiled set of their bits (``kernels.all_distinct``) is several times
    cheaper than hashing the whole sample, and a float column is nearly always all different.
    Distinct bits are distinct values unless they are NaNs or zeros (which hashing may
    merge), or nulls: those say unsure."""
    import numpy as np
    import pyarrow as pa

    t = values.type
    if len(values) < k or values.null_count or pa.types.is_fixed_size_list(t) or pa.types.is_struct(t):
        return False
    try:
        if t.bit_width != 64 or values.buffers()[1] is None:
            return False
    except ValueError:  # not a fixed-width type
        return False
    bits = np.frombuffer(values.buffers()[1], dtype=np.uint64, count=k, offset=values.offset * 8)
    return bool(_distinct_rows(bits.reshape(1, k), pa.types.is_floating(t))[0])


def _distinct_rows(words, floating: bool):
    """Per row of 64-bit ``words``: whether its values are certainly all different (distinct
    bits are distinct values unless they are NaNs or zeros, which hashing may merge)."""
    import numpy as np

    from .kernels import all_distinct_rows

    out = all_distinct_rows(words)
    if floating:
        as_float = words.view(np.float64)
        out &= ~(np.isnan(as_float) | (as_float == 0)).any(axis=1)
    return out


@dataclass(frozen=True)
class Strategy:
    """The choices for one leaf column: which layout, which cascade.

    ``values_bytes`` is the visible values' data size and ``num_values`` their count.
    """

    params: FieldParams
    # False: exactly the reference's choices; True: also lancefile's own where they measurably
    # shrink a page (see :meth:`split_floats`)
    own_choices: bool = True
    # what one page learnt and the next may reuse (an FSST symbol table), per leaf column
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def layout(self, *, fixed_bits: int | None, max_value_bytes: int, values_bytes: int, num_values: int) -> str:
        if self.params.structural is not None:
            return self.params.structural
        if fixed_bits is not None:
            return MINIBLOCK if fixed_bits < FULLZIP_MIN_VALUE_BYTES * 8 else FULLZIP
        avg = values_bytes / num_values if num_values else 0
        return MINIBLOCK if avg < FULLZIP_MIN_VALUE_BYTES else FULLZIP

    def fixed_dictionary(self, values, bits: int, plain_bytes: int, wide_values: bool):
        """A dictionary-encoded copy of fixed-width ``values`` (128-bit values, and with
        ``wide_values`` (2.2) 64-bit ones too, as the reference) when the dictionary plus
        its indices is below dict-size-ratio of ``plain_bytes`` (what the page would take
        bit-packed or flat), else None."""
        import pyarrow.compute as pc

        n = len(values)
        if bits not in ((64, 128) if wide_values else (128,)) or n < DICT_MIN_VALUES or values.null_count == n \
                or self.params.compression == "none":
            return None
        sample = values.slice(0, min(n, DICT_SAMPLE))
        if bits == 64 and _distinct_head(sample, len(sample) // 4 + 1):
            return None  # more than a quarter of the sample is distinct: the test below says no
        seen = len(pc.unique(sample))
        if seen > max(len(sample) // 4, 1):
            return None
        # the sample's distinct values bound the page's from below, and the cost grows with
        # them: when even that bound loses, encoding the whole page cannot win (no hashing)
        if seen * bits / 8 + n * max(int(seen).bit_length(), 1) / 8 >= self.params.dict_size_ratio * plain_bytes:
            return None
        encoded = pc.dictionary_encode(values)
        card = len(encoded.dictionary)
        if card > DICT_MAX_CARDINALITY:
            return None
        index_bytes = n * max(int(card).bit_length(), 1) / 8 + 4 * (n // 1024 + 1)
        if card * bits / 8 + index_bytes >= self.params.dict_size_ratio * plain_bytes:
            return None
        return encoded

    def no_fixed_dictionary_rows(self, words, floating: bool, wide_values: bool):
        """For many no-null pages of 64-bit values at once (the rows of ``words``, uint64):
        True where :meth:`fixed_dictionary` certainly returns None, by its own tests (too few
        values, or the head of the sample all different: :func:`_distinct_head`); False
        where it has to be asked.

        Example::

            >>> import numpy as np
            >>> words = np.stack([np.arange(200, dtype=np.float64) + 1, np.ones(200)]).view(np.uint64)
            >>> Strategy(FieldParams()).no_fixed_dictionary_rows(words, True, True).tolist()
            [True, False]
        """
        import numpy as np

        rows, n = words.shape
        if not wide_values or n < DICT_MIN_VALUES or self.params.compression == "none":
            return np.ones(rows, dtype=bool)
        return _distinct_rows(words[:, : min(n, DICT_SAMPLE) // 4 + 1], floating)

    def dictionary(self, values):
        """A dictionary-encoded copy of string/binary ``values`` when a dictionary page is
        the smaller choice, else None (``compression=none`` never uses one)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = len(values)
        if n < DICT_MIN_VALUES or self.params.compression in ("none", "fsst") or values.null_count == n:
            return None
        sample = values.slice(0, min(n, DICT_SAMPLE))
        if len(pc.unique(sample)) > max(len(sample) // 2, 1):  # clearly high-cardinality: not worth hashing all
            return None
        if values.null_count:  # the reference encodes the bytes under a null too (usually ""): no null item
            values = pa.Array.from_buffers(values.type, n, [None, *values.buffers()[1:]], offset=values.offset)
        encoded = pc.dictionary_encode(values)
        card = len(encoded.dictionary)
        if card > DICT_MAX_CARDINALITY:
            return None
        large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
        off = 8 if large else 4
        validity = values.buffers()[0]
        raw = values.nbytes - (0 if validity is None else validity.size)
        dict_bytes = encoded.dictionary.nbytes + off
        index_bytes = n * max(int(card).bit_length(), 1) / 8
        if dict_bytes + index_bytes >= self.params.dict_size_ratio * raw:
            return None
        return encoded

    def dictionary_compression(self, general_blocks: bool) -> tuple[str, int | None] | None:
        """General compression around a page's dictionary: 2.2 wraps it in LZ4 by default."""
        if not general_blocks or self.params.dict_values_compression == "none":
            return None
        return self.params.dict_values_compression, self.params.dict_values_level

    def use_bss(self, bits: int, floating: bool) -> bool:
        """Byte-stream-split under general compression: 32/64-bit values when the field asks
        for lz4/zstd and ``lance-encoding:bss`` is ``on`` (``auto``: floating point only; the
        reference's auto mode measures byte entropy instead)."""
        if self.params.compression not in ("lz4", "zstd") or bits not in (32, 64) or self.params.bss == "off":
            return False
        return self.params.bss == "on" or floating

    def split_floats(self, bits: int, floating: bool) -> bool:
        """Whether to try lancefile's float encoding: byte-stream-split under LZ4, kept when
        the page shrinks to :data:`SPLIT_MIN_GAIN` of the reference's choice (uniform or
        same-magnitude floats: the exponent byte is nearly constant). Only for 32/64-bit
        floats whose field asks for nothing else."""
        p = self.params
        return (self.own_choices and floating and bits in (32, 64) and p.compression is None and p.bss == "auto"
                and p.structural is None)

    def entropy_dictionary(self, items: int, num_values: int, lists: bool, general_blocks: bool) -> bool:
        """Whether to try entropy-coding a dictionary page's indices and def levels
        (:func:`~lancefile.encodings.compressive.encode_own.entropy_coded_indices`): lancefile's
        own choice, for 2.2 pages (``general_blocks``) without lists of at most
        :data:`ENTROPY_MAX_ITEMS` items and at least one full chunk of values, whose field
        asks for no compression of its own."""
        return (self.own_choices and general_blocks and not lists and 0 < items <= ENTROPY_MAX_ITEMS
                and num_values >= MINIBLOCK_MAX_VALUES and self.params.compression is None)

    def entropy_integers(self, bits: int, floating: bool) -> bool:
        """Whether to try lancefile's integer encoding: byte-stream-split under zstd tuned
        for entropy coding, kept when the page shrinks to :data:`ENTROPY_MIN_GAIN` of the
        reference's choice (steadily growing ids and timestamps). Only for 32/64-bit
        non-float values whose field asks for nothing else."""
        p = self.params
        return (self.own_choices and not floating and bits in (32, 64) and p.compression is None
                and p.bss == "auto" and p.structural is None)

    def keep_entropy_coded(self, coded_bytes: int, reference_bytes: int) -> bool:
        """Keep the entropy-coded page when it is at most :data:`ENTROPY_MIN_GAIN` of the
        reference's (decoding it costs a zstd call a chunk)."""
        return coded_bytes <= ENTROPY_MIN_GAIN * reference_bytes

    def use_rle(self, runs: int, num_values: int) -> bool:
        """Whether runs are few enough to try RLE (the encoder then keeps the smaller of RLE
        and bit packing); ``lance-encoding:rle-threshold`` 0 turns RLE off."""
        return runs < self.params.rle_threshold * num_values

    def use_fsst(self, *, max_len: int, data_bytes: int) -> bool:
        comp = self.params.compression
        if comp == "fsst":
            return True
        if comp is not None:
            return False
        return max_len >= FSST_MIN_MAX_LEN and data_bytes >= FSST_MIN_BYTES

    def general(self) -> tuple[str, int | None] | None:
        """General (LZ4/ZSTD) around mini-block values, when the field asks for it."""
        comp = self.params.compression
        if comp in ("lz4", "zstd"):
            return comp, self.params.level
        return None

    def variable_chunk_bytes(self) -> int:
        return self.params.minichunk_bytes or VARIABLE_CHUNK_BYTES
