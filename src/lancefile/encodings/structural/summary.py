"""One-line summaries of 2.1+ page layouts, for ``metadata()`` and ``lancefile inspect``.

Example::

    >>> from lancefile._proto import encodings_v2_1_pb2 as pb
    >>> ce = pb.CompressiveEncoding(inline_bitpacking=pb.InlineBitpacking(uncompressed_bits_per_value=32))
    >>> page = pb.PageLayout(mini_block_layout=pb.MiniBlockLayout(value_compression=ce, layers=[3]))
    >>> describe_page(page)
    'mini-block(values=bitpack(32), layers=[nullable item])'
"""

from __future__ import annotations

from ..compressive.base import describe
from .repdef import Layer

__all__ = ["describe_page"]

_LAYER_NAMES = {
    Layer.ALL_VALID_ITEM: "item", Layer.NULLABLE_ITEM: "nullable item", Layer.ALL_VALID_LIST: "list",
    Layer.NULLABLE_LIST: "nullable list", Layer.EMPTYABLE_LIST: "emptyable list",
    Layer.NULL_AND_EMPTY_LIST: "nullable+emptyable list",
}


def _layers(layers) -> str:
    return "layers=[" + ", ".join(_LAYER_NAMES.get(layer, f"?{layer}") for layer in layers) + "]"


def describe_page(page) -> str:
    """``mini-block(values=bitpack(8), def=rle(16), ...)``-style summary of a ``PageLayout``."""
    kind = page.WhichOneof("layout")
    if kind is None:
        return "<no layout>"
    msg = getattr(page, kind)
    parts = []
    if kind == "mini_block_layout":
        parts.append(f"values={describe(msg.value_compression)}")
        for name, field in (("rep", "rep_compression"), ("def", "def_compression"), ("dict", "dictionary")):
            if msg.HasField(field):
                parts.append(f"{name}={describe(getattr(msg, field))}")
        if msg.HasField("dictionary"):
            parts.append(f"{msg.num_dictionary_items} dictionary items")
        if msg.repetition_index_depth:
            parts.append(f"repetition index depth {msg.repetition_index_depth}")
        parts.append(_layers(msg.layers))
        return f"mini-block({', '.join(parts)})"
    if kind == "full_zip_layout":
        parts.append(f"values={describe(msg.value_compression)}")
        if msg.WhichOneof("details") == "bits_per_value":
            parts.append(f"{msg.bits_per_value} bits a value")
        else:
            parts.append(f"{msg.bits_per_offset}-bit lengths")
        if msg.bits_rep or msg.bits_def:
            parts.append(f"control word rep {msg.bits_rep} + def {msg.bits_def} bits")
        parts.append(_layers(msg.layers))
        return f"full-zip({', '.join(parts)})"
    if kind == "constant_layout":
        if msg.HasField("inline_value"):
            parts.append(f"value inline ({len(msg.inline_value)} bytes)")
        for name, field in (("rep", "rep_compression"), ("def", "def_compression")):
            if msg.HasField(field):
                parts.append(f"{name}={describe(getattr(msg, field))}")
        parts.append(_layers(msg.layers))
        return f"constant({', '.join(parts)})"
    if kind == "blob_layout":
        return f"blob({describe_page(msg.inner_layout)}, {_layers(msg.layers)})"
    return kind
