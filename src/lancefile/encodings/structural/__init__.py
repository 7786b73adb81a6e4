"""The structural layer of Lance 2.1/2.2: page layouts, repetition/definition levels, fields.

Importing this package registers every page layout in
:data:`lancefile.encodings.registry.LAYOUT` (one module each: :mod:`.mini_block`,
:mod:`.full_zip`, :mod:`.constant`, :mod:`.blob`); :mod:`.repdef` turns levels into
offsets and validity, :mod:`.fields` maps fields to leaf columns and builds nested arrays.
"""

from . import blob, constant, full_zip, mini_block  # noqa: F401  (imported for registration)
