"""The compressive encodings of Lance 2.1/2.2, one module per ``CompressiveEncoding`` variant.

Importing this package registers every codec in
:data:`lancefile.encodings.registry.COMPRESSIVE`; :mod:`.base` has the contexts, the codec
interface and the dispatch functions, :mod:`.values` what codecs produce.
"""

from . import (  # noqa: F401  (imported for registration)
    bitpacking,
    byte_stream_split,
    constant,
    dictionary,
    fixed_size_list,
    flat,
    fsst,
    general,
    packed_struct,
    rle,
    variable,
    variable_packed_struct,
)
from .base import (  # noqa: F401
    Chunks, Context, check_tree, decode_block, decode_blocks, decode_fixed_values, decode_miniblock,
    decode_variable_spans, decode_variable_spans_many, decode_variable_values, describe, miniblock_buffers,
    take_miniblock,
)
