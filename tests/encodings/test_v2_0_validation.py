"""2.0 reads validate a top-level leaf's values page by page as they are decoded, and a
low-cardinality string page's values once, as its dictionary: the file reader then makes
only Arrow's layout check. Damage is still refused wherever it sits."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import lancefile
from lancefile import reader as reader_module
from lancefile.encodings.v2_0 import dictionary as dictionary_module
from lancefile.encodings.v2_0 import fields as fields_module

N = 30_000
COLORS = ("red", "green", "blue")


def _table(n: int = N) -> pa.Table:
    i = np.arange(n)
    return pa.table({
        "color": pa.array(np.array([*COLORS, None], dtype=object)[i % 4]),  # a dictionary page
        "k": pa.array(i, pa.int64()),
        "name": pa.array([f"name-{j:06d}" for j in range(n)]),  # distinct: plain binary pages
        "st": pa.array([{"x": f"x{j % 7}", "y": j} for j in range(n)]),  # a struct's leaves
        "ls": pa.array([[{"t": f"t{j:06d}"}] * (j % 3) for j in range(n)]),  # a list's: plain strings
    }).append_column(pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"}),  # checked whole
                     pa.array([b"b%d" % j for j in range(n)], pa.large_binary()))


def _write(path, table: pa.Table, writer: str) -> None:
    if writer == "lancefile":
        lancefile.write_table(table, path, version="2.0", checksums=False)
    else:
        import lance.file

        with lance.file.LanceFileWriter(str(path), table.schema, version="2.0") as w:
            w.write_batch(table)


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
def test_a_dictionary_pages_strings_are_checked_once_as_the_dictionary(tmp_path, monkeypatch, writer):
    path = tmp_path / "f.lance"
    t = _table()
    _write(path, t, writer)
    leaf_checks, item_checks, reader_checks = [], [], []
    leaf_validate, item_validate, check = (fields_module.validate_values, dictionary_module.validate_values,
                                           reader_module.check_decoded)

    def on_leaf(arr, where):
        leaf_checks.append((where, len(arr)))
        return leaf_validate(arr, where)

    def on_items(arr, where):
        item_checks.append((where, len(arr)))
        return item_validate(arr, where)

    def on_reader(arr, field, where, full=True):
        reader_checks.append((field.name, len(arr), full))
        return check(arr, field, where, full)

    monkeypatch.setattr(fields_module, "validate_values", on_leaf)
    monkeypatch.setattr(dictionary_module, "validate_values", on_items)
    monkeypatch.setattr(reader_module, "check_decoded", on_reader)
    reader = lancefile.LanceFileReader(path)
    assert all(str(p.encoding).startswith("dictionary(") for p in reader.metadata().columns[0].pages)
    assert reader.read_all(batch_size=4096).to_table().equals(t)
    # the dictionary column's rows were validated by no one: its items were, a page's few at a time
    assert not [w for w, _ in leaf_checks if ": column 0 " in w], leaf_checks
    assert item_checks and all(n <= 8 for _, n in item_checks)  # (a null item first), item_checks
    # the plain string column's pages were, each row once, by its own reader
    assert sum(n for w, n in leaf_checks if ": column 2 " in w) == N
    # and the list's leaf (column 8: after ls's offsets and its item struct), each item once
    assert sum(n for w, n in leaf_checks if ": column 8 " in w) == sum(j % 3 for j in range(N))
    # the file reader made only Arrow's layout check of the fields of leaves, structs and lists
    assert {(name, full) for name, _, full in reader_checks} == {(f, f == "blob") for f in t.column_names}
    rows = np.array([0, 1, 2, 3, 17, N - 1])
    assert reader.take_rows(rows).to_table().equals(t.take(pa.array(rows)))


def _damaged(tmp_path, writer: str, needle: bytes) -> str:
    path = tmp_path / "damaged.lance"
    _write(path, _table(2_000), writer)
    data = bytearray(path.read_bytes())
    at = data.find(needle)
    assert at > 0, needle
    data[at + 1] = 0xFF
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
@pytest.mark.parametrize("needle, what", [(b"redgreenblue", "dictionary"), (b"name-000000", "column 2 page 0"),
                                          (b"x0x1x2", "not valid Arrow data"), (b"t000001", "column 8 page 0")])
def test_bad_utf8_is_refused_in_a_dictionary_a_plain_page_and_nested_leaves(tmp_path, writer, needle, what):
    path = _damaged(tmp_path, writer, needle)
    reads = {
        "scan": lambda r: r.read_all().to_table(),
        "small batches": lambda r: r.read_all(batch_size=256).to_table(),
        "take": lambda r: r.take_rows([0, 1, 2, 5]).to_table(),
    }
    for name, read in reads.items():
        with pytest.raises(lancefile.CorruptFileError, match="UTF8|UTF-8") as info:
            read(lancefile.LanceFileReader(path))
        assert path in str(info.value) and what in str(info.value), (name, str(info.value))


@pytest.mark.parametrize("writer", ["lancefile", "pylance"])
@pytest.mark.parametrize("kind", ["decimal", "time", "date64"])
def test_plain_values_arrow_checks_are_checked_in_every_read(tmp_path, writer, kind):
    """Fixed-width types whose values Arrow's full check looks at (a decimal's precision, a
    time of day, a date64's whole days) are checked on every path that reads plain pages:
    a page, a range over pages, columns read together, a take (found by the fuzzer)."""
    import decimal

    n = 6000
    good, bad, dtype = {
        "decimal": (123, 10**30, pa.decimal128(12, 2)),
        "time": (4321, 90_000, pa.time32("s")),
        "date64": (86_400_000 * 3, 86_400_000 * 3 + 5, pa.date64()),
    }[kind]
    width = dtype.bit_width // 8
    values = {"decimal": lambda: [decimal.Decimal(good) / 100] * n, "time": lambda: pa.array([good] * n, pa.int32()),
              "date64": lambda: pa.array([good] * n, pa.int64())}[kind]()
    col = pa.array(values, dtype) if kind == "decimal" else values.cast(dtype)
    t = pa.table({"a": np.arange(n, dtype=np.float64), "v": col, "b": np.arange(n, dtype=np.int32)})
    p = tmp_path / "v.lance"
    if writer == "lancefile":
        lancefile.write_table(t, p, version="2.0", checksums=False, max_page_bytes=16 * 1024)
    else:
        _write(p, t, writer)
    data = bytearray(p.read_bytes())
    row = 4000  # a row in the column's page (pylance: one page; lancefile: its third or later)
    reader = lancefile.LanceFileReader(p)
    page_of = reader._field_readers[1].column
    p_i = int(np.searchsorted(page_of.starts, row, side="right") - 1)
    ref = page_of.info.pages[p_i].buffers[0]
    at = ref.position + (row - int(page_of.starts[p_i])) * width
    assert int.from_bytes(data[at : at + width], "little", signed=True) == good
    data[at : at + width] = bad.to_bytes(width, "little", signed=True)
    p.write_bytes(bytes(data))
    for read in (lambda r: r.read_all(), lambda r: r.read_range(row - 5, 10), lambda r: r.read_range(10, n - 20),
                 lambda r: r.take_rows([3, row, n - 1]), lambda r: r.read_all(batch_size=100)):
        with pytest.raises(lancefile.CorruptFileError, match="not valid Arrow data"):
            read(lancefile.LanceFileReader(p)).to_table()
    assert lancefile.LanceFileReader(p).take_rows([3, n - 1]).to_table().equals(t.take([3, n - 1]))
