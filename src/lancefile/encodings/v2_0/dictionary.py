"""Dictionary: indices into a page-local dictionary (2.0 ``Dictionary``).

Proto: ``lance.encodings.Dictionary { indices, items, num_dictionary_items }``.

Two uses:

* Arrow dictionary arrays: ``indices`` is encoded like a primitive of the key type
  (``Nullable{...Flat{key bits}}``) and ``items`` like the value type; the result is a
  ``DictionaryArray``.
* Automatic dictionary for low-cardinality strings: ``indices`` is ``Flat{8}`` holding
  **1-based** u8 indices with 0 meaning null; the result is a plain string array.
  ``["b", "a", null, "b"]`` with items ``["a", "b"]`` is indices ``02 01 00 02``.

Page buffers: the indices' buffers first, then the items' buffers.

The items are validated in full (UTF-8, offsets) once, when decoded, and the indices are
bounds-checked: the strings gathered from them need no check of their own.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..._proto import encodings_v2_0_pb2 as pb
from ...errors import CorruptFileError
from ...io import read_spans
from .. import kernels
from ..arrowutil import validate_values
from ..registry import decode_array, register_array_decoder
from ..selection import Selection
from .binary import SMALL_BINARY_BYTES, build_binary, decode_small_binary
from .flat import _is_compressed, decode_flat_rows, plain_flat

__all__ = ["decode_dictionary", "encode_dictionary", "leaf_flat_bits", "take_pages"]


def leaf_flat_bits(enc) -> int | None:
    """Bits per value of the Flat at the bottom of Nullable wrappers, or None."""
    while True:
        kind = enc.WhichOneof("array_encoding")
        if kind == "flat":
            return int(enc.flat.bits_per_value)
        if kind != "nullable":
            return None
        inner = enc.nullable
        nk = inner.WhichOneof("nullability")
        if nk == "no_nulls":
            enc = inner.no_nulls.values
        elif nk == "some_nulls":
            enc = inner.some_nulls.values
        else:
            return None


_UINT = {8: pa.uint8(), 16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}


@register_array_decoder("dictionary")
def decode_dictionary(msg, page, dtype: pa.DataType, sel: Selection) -> pa.Array:
    n_items = int(msg.num_dictionary_items)
    value_type = dtype.value_type if pa.types.is_dictionary(dtype) else dtype
    if not pa.types.is_dictionary(dtype):
        fast = _auto_dictionary(msg, page, dtype, sel, n_items)
        if fast is not None:
            return fast
    # the items are validated in full once, here: values gathered from them by bounds-checked
    # indices are valid (the 2.0 leaf reader does not check a dictionary page's values again)
    items = page.cached(
        ("dictionary-items", msg.SerializeToString()),
        lambda: validate_values(decode_array(msg.items, page, value_type, Selection.of_range(0, n_items)),
                                f"{page.where}: dictionary"),
    )
    if pa.types.is_dictionary(dtype):
        indices = decode_array(msg.indices, page, dtype.index_type, sel)
        lo, hi = pa.compute.min_max(indices).values() if len(indices) else (None, None)
        if hi.is_valid and (lo.as_py() < 0 or hi.as_py() >= n_items):
            raise page.error(f"dictionary index out of range [0, {n_items}): {lo.as_py()}..{hi.as_py()}")
        return pa.DictionaryArray.from_arrays(indices, items)
    bits = leaf_flat_bits(msg.indices)
    if bits not in _UINT:
        raise page.error(f"dictionary indices have unsupported width {bits}")
    indices = decode_array(msg.indices, page, _UINT[bits], sel)
    if indices.null_count == 0:
        # 0 is null: take straight from the items behind a null item, no index arithmetic
        raw = indices.to_numpy()
        if len(raw) and int(raw.max()) > n_items:
            raise page.error(f"dictionary index {int(raw.max())} out of range (dictionary has {n_items} items)")
        with_null = page.cached(
            ("dictionary-items-after-null", msg.SerializeToString()),
            lambda: pa.concat_arrays([pa.nulls(1, items.type), items]),
        )
        return with_null.take(indices)
    raw = indices.to_numpy(zero_copy_only=False)
    idx = raw.astype(np.int64)
    if len(idx) and idx.max() > n_items:
        raise page.error(f"dictionary index {int(idx.max())} out of range (dictionary has {n_items} items)")
    null = idx == 0
    take = pa.array(idx - 1, type=pa.int64(), mask=null if null.any() else None)
    return items.take(take)


def _auto_dictionary(msg, page, dtype: pa.DataType, sel: Selection, n_items: int) -> pa.Array | None:
    """The reference's low-cardinality string page (plain u8 indices, small plain Binary items),
    decoded with few steps: the items are read in one request and get a null item in front,
    so the 1-based indices (0 = null) take from them as they are. None for any other layout."""
    flat = plain_flat(msg.indices)
    if flat is None or int(flat.bits_per_value) != 8 or msg.items.WhichOneof("array_encoding") != "binary":
        return None
    binary = msg.items.binary

    def items_after_null():
        got = decode_small_binary(binary, page, n_items)
        if got is None:
            return _NOT_SMALL
        offsets, data, valid = got
        items = build_binary(dtype, np.concatenate([[0], offsets]), data, np.concatenate([[False], valid]))
        return validate_values(items, f"{page.where}: dictionary")

    items = page.cached(("auto-dictionary", msg.SerializeToString()), items_after_null)
    if items is _NOT_SMALL:
        return None
    indices = decode_flat_rows(flat, page, pa.uint8(), sel, 8)
    raw = indices.to_numpy()
    if len(raw) and int(raw.max()) > n_items:
        raise page.error(f"dictionary index {int(raw.max())} out of range (dictionary has {n_items} items)")
    return pc.take(items, indices, boundscheck=False)  # checked just above


_NOT_SMALL = object()
_INT64_MAX = int(np.iinfo(np.int64).max)


def take_pages(column, pieces: list, cache: dict, dtype: pa.DataType) -> dict:
    """``{i: rows of pieces[i]}`` for the low-cardinality string pages of a take (``pieces``:
    (page, page-local sorted indices), as :meth:`ColumnPages.split` gives them): their
    wanted index bytes and the dictionaries not decoded yet come in one batch of requests
    instead of two or three a page (a 100-row take touches 12-20 pages), the dictionaries
    are checked as :func:`_auto_dictionary` checks them and the values gathered with one
    take. Pages of other layouts, or that fail a check, are left out (empty when fewer than
    two pages qualify): the pages' own decoders read them and say what is wrong."""
    if len(pieces) < 2 or pa.types.is_dictionary(dtype):
        return {}
    plans = {}
    for i, (p, local) in enumerate(pieces):
        plan = _plain_dictionary(column.encoding(p), column.page(p, cache), local)
        if plan is not None:
            plans[i] = plan
    if len(plans) < 2:
        return {}
    starts, lengths = [], []
    for i, (page, key, idx_pos, n_items, ends_ref, bytes_ref, _) in plans.items():
        local = pieces[i][1]
        starts.append(idx_pos + local.indices)
        lengths.append(np.ones(local.count, np.int64))
        if page.cached_value(key) is None:
            starts.append(np.array([ends_ref.position, bytes_ref.position], np.int64))
            lengths.append(np.array([8 * n_items, bytes_ref.size], np.int64))
    data, at = read_spans(column.layout.source, np.concatenate(starts), np.concatenate(lengths))
    # the index bytes of each page's rows, and where the new dictionaries' ends and bytes were read
    idx_of, new, k = {}, [], 0
    for i, (page, key, *_rest) in plans.items():
        count = pieces[i][1].count
        idx_of[i] = data[at[k : k + count]]
        k += count
        if page.cached_value(key) is None:
            new.append((i, int(at[k]), int(at[k + 1])))
            k += 2
    if new and not _items_after_null_many(dtype, plans, new, data):
        return {}  # a dictionary fails a check: the pages' decoders say which and why
    parts, indices, done, base = [], [], [], 0
    for i, (page, key, _, n_items, *_rest) in plans.items():
        idx, items = idx_of[i], page.cached_value(key)
        if len(idx) and int(idx.max()) > n_items:
            continue
        indices.append(idx.astype(np.int64) + base)
        base += len(items)
        parts.append(items)
        done.append((i, len(idx)))
    if not done:
        return {}
    # (bounds checked above; the items checked in full)
    values = pc.take(pa.concat_arrays(parts), pa.array(np.concatenate(indices)), boundscheck=False)
    out, at_row = {}, 0
    for i, count in done:
        out[i] = values.slice(at_row, count)
        at_row += count
    return out


def _plain_dictionary(enc, page, local: Selection):
    """(page, cache key, position of the indices, items, items' ends and bytes buffers, their
    null adjustment) of a low-cardinality string page whose u8 indices and small items are
    plain buffers and whose rows ``local`` lie in them, else None."""
    if enc.WhichOneof("array_encoding") != "dictionary":
        return None
    msg = enc.dictionary
    flat = plain_flat(msg.indices)
    if flat is None or int(flat.bits_per_value) != 8 or _is_compressed(flat) or \
            msg.items.WhichOneof("array_encoding") != "binary":
        return None
    binary = msg.items.binary
    ends = plain_flat(binary.indices)
    if ends is None or int(ends.bits_per_value) != 64 or _is_compressed(ends) or \
            binary.bytes.WhichOneof("array_encoding") != "flat" or _is_compressed(binary.bytes.flat):
        return None
    n_items = int(msg.num_dictionary_items)
    idx_ref, ends_ref, bytes_ref = page.ref(flat.buffer), page.ref(ends.buffer), page.ref(binary.bytes.flat.buffer)
    if not 0 < n_items <= ends_ref.size // 8 or bytes_ref.size > SMALL_BINARY_BYTES or local.stop > idx_ref.size:
        return None
    return (page, ("auto-dictionary", msg.SerializeToString()), idx_ref.position, n_items, ends_ref, bytes_ref,
            int(binary.null_adjustment))


def _items_after_null_many(dtype, plans: dict, new: list, data: np.ndarray) -> bool:
    """Build, check and cache (each in its page) the dictionaries ``new`` ((plan key, where
    its ends and its bytes lie in ``data``)), each with a null item first, as one Arrow array
    checked in full once: the checks of :func:`.binary.decode_small_binary` and
    :func:`_auto_dictionary`, without a numpy step a page. False when one fails a check."""
    n = np.array([plans[i][3] for i, _, _ in new], np.int64)
    room = np.array([plans[i][5].size for i, _, _ in new], np.int64)
    adj = np.array([plans[i][6] for i, _, _ in new], np.uint64)
    ends_at = np.array([e for _, e, _ in new], np.int64)
    raw = kernels.gather_bytes(data, ends_at, 8 * n).view("<u8")
    page = np.repeat(np.arange(len(new)), n)
    a = adj[page]
    null = (a > 0) & (a <= np.uint64(_INT64_MAX)) & (raw >= a)
    ends = np.where(null, raw - a, raw)
    if np.any(ends > np.uint64(_INT64_MAX)):
        return False
    ends = ends.astype(np.int64)
    first = np.cumsum(n) - n  # each page's first item among ends
    prev = np.zeros(len(ends), np.int64)
    prev[1:] = ends[:-1]
    prev[first] = 0
    last = ends[first + n - 1]
    if np.any(ends < prev) or np.any(last > room):
        return False
    used = last  # bytes of each page's items
    byte_base = np.cumsum(used) - used
    body = kernels.gather_bytes(data, np.array([b for _, _, b in new], np.int64), used)
    # items laid out page after page, each page's null item (no bytes) first: page p's items
    # are entries slots[p] .. slots[p] + n[p], its bytes start at byte_base[p]
    slots = np.cumsum(n + 1) - (n + 1)
    offsets = np.empty(int((n + 1).sum()) + 1, np.int64)
    offsets[slots] = byte_base
    offsets[slots + 1] = byte_base
    entry = np.repeat(slots + 1, n) + np.arange(len(ends)) - np.repeat(first, n)  # each real item's entry
    offsets[entry + 1] = ends + np.repeat(byte_base, n)
    valid = np.zeros(len(offsets) - 1, bool)
    valid[entry] = ~null
    items = build_binary(dtype, offsets, body, valid)
    try:
        validate_values(items, f"{plans[new[0][0]][0].where}: dictionary")
    except CorruptFileError:
        return False
    for (i, _, _), s0, k in zip(new, slots.tolist(), (n + 1).tolist()):
        page, key = plans[i][0], plans[i][1]
        page.cached(key, lambda s0=s0, k=k: items.slice(s0, k))
    return True


def encode_dictionary(indices: pb.ArrayEncoding, items: pb.ArrayEncoding, num_items: int) -> pb.ArrayEncoding:
    return pb.ArrayEncoding(dictionary=pb.Dictionary(indices=indices, items=items, num_dictionary_items=num_items))
