"""Exact bytes: for each 2.0 encoding, lancefile's pages equal the reference's, byte for byte.

Both writers get the same Arrow data; every column's pages must carry the same encoding
message and the same buffer contents (positions and padding may differ).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile._proto import encodings_v2_0_pb2 as pb
from lancefile._proto import file_pb2
from lancefile.format.container import ARRAY_ENCODING_URL, read_layout, unpack_any
from lancefile.io import LocalFileSource

lance_file = pytest.importorskip("lance.file")

N = 300
rng = np.random.default_rng(3)
_valid = rng.random(N) > 0.2

CASES = {
    "int32": pa.array(rng.integers(-1000, 1000, N, dtype=np.int32)),
    "int64-nulls": pa.array(rng.integers(0, 10**12, N), mask=~_valid),
    "uint8": pa.array(rng.integers(0, 255, N, dtype=np.uint8)),
    "float16": pa.array(rng.random(N).astype(np.float16)),
    "float64-nulls": pa.array(rng.random(N), mask=~_valid),
    "bool": pa.array(rng.random(N) > 0.5),
    "bool-nulls": pa.array(rng.random(N) > 0.5, mask=~_valid),
    "all-null-int": pa.nulls(N, pa.int32()),
    "null-type": pa.nulls(N),
    "all-null-string": pa.nulls(N, pa.string()),
    "date32": pa.array(rng.integers(0, 20000, N, dtype=np.int32), pa.date32()),
    "timestamp-tz": pa.array(rng.integers(0, 10**15, N), pa.timestamp("us", tz="UTC")),
    "decimal128": pa.array([None if i % 7 == 0 else i * 10 for i in range(N)], pa.decimal128(10, 2)),
    "fsb": pa.array([bytes([i % 256]) * 4 for i in range(N)], pa.binary(4)),
    "string-high-card": pa.array([None if i % 5 == 0 else f"s{i}" * (i % 4) for i in range(N)]),
    "string-low-card": pa.array([None if i % 9 == 0 else ["x", "yy", "zzz"][i % 3] for i in range(N)]),
    "large-string": pa.array([f"value-{i}" for i in range(N)], pa.large_string()),
    "binary": pa.array([bytes(range(i % 10)) for i in range(N)], pa.binary()),
    "fsl-f32": pa.FixedSizeListArray.from_arrays(pa.array(rng.random(N * 4, dtype=np.float32)), 4),
    "fsl-nulls": pa.FixedSizeListArray.from_arrays(
        pa.array(rng.random(N * 2, dtype=np.float32), mask=rng.random(N * 2) < 0.1), 2, mask=pa.array(~_valid)),
    "list-int": pa.array([None if i % 11 == 0 else list(range(i % 4)) for i in range(N)], pa.list_(pa.int64())),
    "large-list": pa.array([[i, None] for i in range(N)], pa.large_list(pa.int32())),
    "struct": pa.StructArray.from_arrays([pa.array(np.arange(N)), pa.array([f"n{i}" for i in range(N)])], ["a", "b"]),
    "list-struct": pa.array([[{"x": i, "y": 1.5}] * (i % 3) for i in range(N)]),
    "dict-int32-string": pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 3, N, dtype=np.int32)),
                                                        pa.array(["red", "green", "blue"])),
    "dict-null-keys": pa.DictionaryArray.from_arrays(
        pa.array([None if i % 4 == 0 else i % 3 for i in range(N)], pa.int8()), pa.array(["x", "yy", "zzz"])),
    "fsl-of-null": pa.FixedSizeListArray.from_arrays(pa.nulls(N * 3), 3),
    "fsl-of-fsl": pa.FixedSizeListArray.from_arrays(
        pa.FixedSizeListArray.from_arrays(pa.array(np.arange(N * 4, dtype=np.int8)), 2), 2),
    "packed-struct": pa.StructArray.from_arrays([pa.array(np.arange(N, dtype=np.int32)), pa.array(rng.random(N))],
                                                ["a", "b"]),
    "zstd-string": pa.array([f"compressible value {i % 50}" for i in range(N)], pa.large_string()),
}

FIELD_METADATA = {"packed-struct": {"packed": "true"}, "zstd-string": {"lance-encoding:compression": "zstd"}}


def _pages(path):
    layout = read_layout(LocalFileSource(path))
    out = []
    for c in range(layout.num_columns):
        col = layout.column(c)
        pages = []
        for i, p in enumerate(col.pages):
            enc = unpack_any(p.encoding, ARRAY_ENCODING_URL, pb.ArrayEncoding, where=f"col {c} page {i}")
            pages.append((enc, [bytes(layout.read_buffer(b)) for b in p.buffers], p.length))
        out.append((col.encoding, pages))
    return layout, out


@pytest.mark.parametrize("name", sorted(CASES))
def test_pages_equal_reference(tmp_path, name):
    arr = CASES[name]
    table = pa.table({"c": arr})
    if name in FIELD_METADATA:
        table = table.cast(pa.schema([pa.field("c", arr.type, metadata=FIELD_METADATA[name])]))
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    lancefile.write_table(table, ours, version="2.0", statistics=False, checksums=False)
    with lance_file.LanceFileWriter(str(theirs), table.schema, version="2.0") as w:
        w.write_batch(table)
    lo, ours_pages = _pages(ours)
    lt, their_pages = _pages(theirs)
    assert lo.footer.major == lt.footer.major == 0 and lo.footer.minor == lt.footer.minor == 3
    assert len(ours_pages) == len(their_pages)
    for c, ((oe, op), (te, tp)) in enumerate(zip(ours_pages, their_pages)):
        assert oe == te, f"column {c} encoding differs"
        assert len(op) == len(tp), f"column {c}: {len(op)} pages vs reference {len(tp)}"
        for i, ((enc_o, bufs_o, len_o), (enc_t, bufs_t, len_t)) in enumerate(zip(op, tp)):
            assert enc_o == enc_t, f"column {c} page {i}:\nours {enc_o}\nref  {enc_t}"
            assert len_o == len_t
            assert [len(b) for b in bufs_o] == [len(b) for b in bufs_t], f"column {c} page {i} buffer sizes"
            for k, (bo, bt) in enumerate(zip(bufs_o, bufs_t)):
                assert bo == bt, f"column {c} page {i} buffer {k} differs"
    # the schema descriptor (global buffer 0) is the same message
    so = file_pb2.FileDescriptor.FromString(bytes(lo.read_buffer(lo.global_buffers[0])))
    st = file_pb2.FileDescriptor.FromString(bytes(lt.read_buffer(lt.global_buffers[0])))
    assert so == st
