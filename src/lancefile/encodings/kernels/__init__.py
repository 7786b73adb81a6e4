"""Hot loops of the Lance encodings, one module per family.

Everything here is a pure transform, numpy in and numpy (or bytes) out; the encoding
modules put these transforms behind the protobuf messages.  Loops that numpy cannot
express are ``_k_*`` functions compiled with numba on their first call (importing this
package neither imports numba nor compiles anything).  Every public decoder has a small
plain-Python twin with a ``_py`` suffix, written straight from the format description;
the tests use the twins to cross-check the compiled kernels.

Modules (each docstring gives its byte layout; all layouts are little-endian):

* ``fastlanes``: FastLanes pack/unpack and the 2.0 ``BitpackedForNonNeg`` (FastLanes
  at one width).
* ``bitpacking``: InlineBitpacking and OutOfLineBitpacking (2.1+), built on FastLanes.
* ``bitpacked``: the 2.0 ``Bitpacked`` layout, value i at bit i*W, LSB first.
* ``fsst``: FSST symbol tables and decompression; ``fsst_encode``: training and compression.
* ``rle``: runs of at most 255 values, and the 2.2 RLE level frame.
* ``bss``: byte-stream-split.
* ``bitmap``: LSB-first bitmaps.
* ``fullzip``: splitting full-zip pages into control words and values, and zipping them.
* ``gather``: many byte ranges copied into one array, and back out (``scatter``); indices
  into several pages' dictionaries laid end to end (``page_indices``).
* ``minmax``: smallest and largest byte string of runs of rows (column statistics).
* ``distinct``: whether 64-bit words are all different (the write strategy's dictionary test).
* ``miniblock``: mini-block chunk headers.
* ``levels``: repetition/definition levels to list offsets.
* ``offsets``: 2.0 null-adjusted end offsets to Arrow offsets.
* ``_common``: the lazy numba wrapper and the helpers the families share.

Every public name (and every ``_py`` twin) is re-exported here, so
``kernels.fastlanes_pack`` works whichever module holds it.

Example::

    >>> import numpy as np
    >>> from lancefile.encodings import kernels
    >>> v = (np.arange(2048) % 8).astype(np.uint8)
    >>> buf = kernels.inline_bitpacking_encode(v)
    >>> len(buf), buf[0]
    (770, 3)
    >>> bool((kernels.inline_bitpacking_decode(buf, 8, 2048) == v).all())
    True
"""

from __future__ import annotations

from . import (_common, bitmap, bitpacked, bitpacking, bss, distinct, fastlanes, fsst, fsst_encode, fullzip, gather, levels,
               lz4, miniblock, minmax, offsets, rle, zstd)

# The ``_py`` twins are re-exported for the tests but, as before, kept out of ``__all__``.
from ._common import bit_width
from .bitmap import pack_bits_lsb, unpack_bits_lsb, unpack_bits_lsb_py
from .bitpacked import bitpacked_sequential_decode, bitpacked_sequential_decode_py, bitpacked_sequential_encode
from .bitpacking import (
    inline_bitpacking_decode,
    inline_bitpacking_decode_chunks,
    inline_bitpacking_decode_py,
    inline_bitpacking_encode,
    inline_bitpacking_pack,
    inline_bitpacking_take_chunks,
    out_of_line_bitpacking_decode,
    out_of_line_bitpacking_decode_blocks,
    out_of_line_bitpacking_decode_py,
    out_of_line_bitpacking_encode,
    out_of_line_bitpacking_encode_many,
)
from .bss import (byte_stream_split_decode, byte_stream_split_decode_many, byte_stream_split_decode_py,
                  byte_stream_split_encode, byte_stream_split_encode_chunks)
from .fastlanes import (
    FASTLANES_CHUNK,
    FL_ORDER,
    bitpacked_for_non_neg_decode,
    bitpacked_for_non_neg_decode_py,
    bitpacked_for_non_neg_encode,
    chunk_bit_widths_rows,
    fastlanes_pack,
    fastlanes_pack_py,
    fastlanes_unpack,
    fastlanes_unpack_py,
    fastlanes_words_per_chunk,
)
from .fsst_encode import fsst_build_symbol_table, fsst_build_symbol_table_py, fsst_compress
from .fsst import (
    FSST_ESCAPE,
    FSST_MIN_INPUT_BYTES,
    FSST_SYMBOL_TABLE_SIZE,
    fsst_decompress,
    fsst_decompress_spans,
    fsst_decompress_spans_tables,
    fsst_decompress_py,
    fsst_make_symbol_table,
    fsst_parse_symbol_table,
    fsst_parse_symbol_tables,
)
from .distinct import all_distinct, all_distinct_rows
from .fullzip import fullzip_scan, fullzip_scan_py, fullzip_zip
from .gather import gather as gather_bytes
from .gather import page_indices
from .gather import scatter as scatter_bytes
from .gather import take_var
from .lz4 import lz4_bss_decode_many, lz4_compress_runs_many, lz4_decompress_many
from .zstd import zstd_available, zstd_decompress_into, zstd_plan
from .minitake import miniblock_take_flat
from .listtake import miniblock_take_lists
from .dictblocks import dictionary_take
from .minmax import binary_minmax_rows, binary_minmax_rows_py
from .offsets import adjusted_offsets, adjusted_offsets_py, ascii_strings
from .levels import (any_between, expand_list, inner_validity, leaf_levels, list_layer, map_levels, rep_index_chunks,
                     rep_index_chunks_many, row_spans, span_values)
from .miniblock import (miniblock_chunk_rows, miniblock_chunk_words, miniblock_chunk_words_many, miniblock_headers,
                        miniblock_chunk_layout, miniblock_plain_take, miniblock_plain_values, miniblock_take_picks)
from .rle import (
    RLE_MAX_RUN,
    rle_block_decode,
    rle_block_decode_many,
    rle_block_encode,
    rle_block_encode_many,
    rle_encode,
    rle_expand,
    rle_expand_py,
)

# Each module lists its own public names; the package's surface is their union.
__all__: list[str] = []
__all__ += fastlanes.__all__
__all__ += bitpacking.__all__
__all__ += bitpacked.__all__
__all__ += fsst.__all__
__all__ += fsst_encode.__all__
__all__ += rle.__all__
__all__ += fullzip.__all__
__all__ += miniblock.__all__
__all__ += levels.__all__
__all__ += offsets.__all__
__all__ += ["gather_bytes", "scatter_bytes", "page_indices", "take_var", "binary_minmax_rows"]
__all__ += bss.__all__
__all__ += lz4.__all__
__all__ += zstd.__all__
__all__ += distinct.__all__
__all__ += bitmap.__all__
__all__ += _common.__all__
