"""Shared helpers and the ``oracle_dir`` fixture of the kernels tests.

Three tiers: exact bytes for small hand-made cases, hypothesis properties (round trips,
compiled kernels against their ``_py`` twins), and pages written by pylance 14.0.2 (the
oracle, used only here) decoded with our kernels and re-encoded byte for byte.  Test
modules import the helpers with ``from tests.encodings.kernels.conftest import ...``.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

UINTS = [np.uint8, np.uint16, np.uint32, np.uint64]
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random_uints(seed: int, n: int, dtype, width: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64, endpoint=True)
    if width < 64:
        raw &= np.uint64((1 << width) - 1)
    return raw.astype(dtype)


@st.composite
def dtype_width(draw):
    dtype = draw(st.sampled_from(UINTS))
    bits = np.dtype(dtype).itemsize * 8
    return dtype, draw(st.integers(0, bits))


# --------------------------------------------------------------------------------------
# Pages written by pylance 14.0.2
# --------------------------------------------------------------------------------------


def _read_pages(path) -> list[list[tuple[int, object, list[bytes]]]]:
    """(length, PageLayout, buffers) for every page of every column, read from the tail."""
    from google.protobuf import any_pb2

    from lancefile._proto import encodings_v2_1_pb2, file2_pb2

    with open(path, "rb") as f:
        data = f.read()
    _cm, _cmo, gbo_start, _ngb, ncols, _maj, _min = struct.unpack_from("<QQQIIHH", data, len(data) - 40)
    cmo = np.frombuffer(data, "<u8", 2 * ncols, gbo_start - 16 * ncols).reshape(ncols, 2)
    columns = []
    for pos, size in cmo:
        meta = file2_pb2.ColumnMetadata.FromString(data[pos : pos + size])
        pages = []
        for page in meta.pages:
            any_msg = any_pb2.Any.FromString(page.encoding.direct.encoding)
            layout = encodings_v2_1_pb2.PageLayout.FromString(any_msg.value)
            bufs = [data[o : o + s] for o, s in zip(page.buffer_offsets, page.buffer_sizes)]
            pages.append((page.length, layout, bufs))
        columns.append(pages)
    return columns


def _miniblock_chunks(layout, bufs):
    """Yield ``(num_values, num_levels, rep, def, [value buffers])`` per mini-block chunk."""
    large = layout.has_large_chunk
    words = np.frombuffer(bufs[0], "<u4" if large else "<u2")
    data = bufs[1]
    size_fmt = "<I" if large else "<H"
    remaining = layout.num_items
    pos = 0
    for i, word in enumerate(words.tolist()):
        nbytes = ((word >> 4) + 1) * 8
        nvals = 1 << (word & 15) if i < len(words) - 1 else remaining
        remaining -= nvals
        chunk = data[pos : pos + nbytes]
        pos += nbytes
        fields = ["<H"] + ["<H"] * layout.HasField("rep_compression") + ["<H"] * layout.HasField("def_compression")
        fields += [size_fmt] * layout.num_buffers
        values, h = [], 0
        for f in fields:
            values.append(struct.unpack_from(f, chunk, h)[0])
            h += struct.calcsize(f)
        nlev = values[0]
        rep_size = values[1] if layout.HasField("rep_compression") else 0
        def_size = values[1 + layout.HasField("rep_compression")] if layout.HasField("def_compression") else 0
        sizes = values[len(fields) - layout.num_buffers :]
        p = -(-h // 8) * 8
        parts = []
        for s in [rep_size, def_size, *sizes]:
            parts.append(chunk[p : p + s])
            p += -(-s // 8) * 8
        yield nvals, nlev, parts[0], parts[1], parts[2:]


def _write(path, table, version="2.1"):
    import lance.file

    with lance.file.LanceFileWriter(str(path), table.schema, version=version) as w:
        w.write_batch(table)
    return path


@pytest.fixture(scope="module")
def oracle_dir(tmp_path_factory):
    pytest.importorskip("lance")
    return tmp_path_factory.mktemp("oracle")


def _single_page(path):
    (pages,) = _read_pages(path)
    assert len(pages) == 1
    _length, layout, bufs = pages[0]
    assert layout.WhichOneof("layout") == "mini_block_layout"
    return layout.mini_block_layout, list(_miniblock_chunks(layout.mini_block_layout, bufs))
