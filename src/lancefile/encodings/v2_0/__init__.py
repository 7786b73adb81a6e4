"""Lance 2.0 array encodings: one module per encoding, decoder and encoder together.

Importing this package registers every 2.0 decoder in
:data:`lancefile.encodings.registry.ARRAY_DECODERS`.
"""

from . import (  # noqa: F401  (imported for registration)
    binary,
    bitpacked,
    dictionary,
    fixed_size_binary,
    fixed_size_list,
    flat,
    fsst,
    nullable,
    packed_struct,
)
