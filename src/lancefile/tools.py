"""What ``lancefile head`` and ``lancefile convert`` do, callable from Python as well.

* :func:`head` -- the first rows of a Lance file or dataset (some columns, rows matching a
  SQL condition), reading no more than it needs; :func:`print_rows` prints them as an
  aligned text table, CSV or JSON lines.
* :func:`convert` -- stream a table from Parquet, CSV, Arrow IPC/Feather, a Lance file or a
  Lance dataset into a Lance file or dataset (or from Lance out to those formats), batch by
  batch, with memory bounded by the batches and not by the data; a failed conversion leaves
  nothing at the destination.

Example::

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"id": [1, 2, 3], "s": ["a", "b", None]}), os.path.join(d, "t.parquet"))
    >>> convert(os.path.join(d, "t.parquet"), os.path.join(d, "t.lance"))
    3
    >>> head(os.path.join(d, "t.lance"), 2, where="id >= 2").to_pydict()
    {'id': [2, 3], 's': ['b', None]}
"""

from __future__ import annotations

import json
import os
import sys
from typing import Iterator, Sequence

import pyarrow as pa

from .datasets.storage import is_dataset as _is_dataset
from .errors import InvalidInputError, LanceIOError

__all__ = ["head", "print_rows", "convert", "FORMATS"]

# file name endings -> format; "lance" is a Lance file, "lance-dataset" a Lance dataset
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".arrow": "ipc", ".ipc": "ipc",
           ".feather": "ipc", ".lance": "lance"}
_CELL = 40  # characters of one value in the text table


def head(path: str, n: int = 10, *, columns: Sequence[str] | None = None, where=None) -> pa.Table:
    """The first ``n`` rows of a Lance file or dataset (``columns`` only; rows matching
    ``where``, SQL text or an Expression). Reads the pages (fragments) those rows are in."""
    from .datasets import dataset
    from .reader import LanceFileReader

    if n < 0:
        raise InvalidInputError(f"the number of rows is at least 0, not {n}")
    if _is_dataset(path):
        return dataset(path).to_table(columns, filter=where, limit=n)
    reader = LanceFileReader(path, columns=columns)
    if where is None:
        return reader.read_range(0, min(n, reader.num_rows())).to_table()
    out, got = [], 0
    for batch in reader.read_all(filter=where, batch_size=max(1, min(n, 1 << 16))):
        if got >= n:
            break
        out.append(batch.slice(0, n - got))
        got += out[-1].num_rows
    return pa.Table.from_batches(out, schema=reader.schema)


def print_rows(table: pa.Table, fmt: str = "table", out=None) -> None:
    """Print ``table`` as ``"table"`` (aligned columns, long values cut), ``"csv"`` or ``"json"``
    (one object a line)."""
    out = out or sys.stdout
    if fmt == "csv":
        import pyarrow.csv as pcsv

        sink = pa.BufferOutputStream()
        pcsv.write_csv(_csv_safe(table), sink)
        out.write(sink.getvalue().to_pybytes().decode())
    elif fmt == "json":
        for row in table.to_pylist():
            out.write(json.dumps(row, default=_json_value, ensure_ascii=False) + "\n")
    elif fmt == "table":
        names = table.column_names
        cells = [[_cell(v) for v in table.column(i).to_pylist()] for i in range(table.num_columns)]
        widths = [max([len(name)] + [len(c) for c in col]) for name, col in zip(names, cells)]
        out.write("  ".join(name.ljust(w) for name, w in zip(names, widths)).rstrip() + "\n")
        out.write("  ".join("-" * w for w in widths) + "\n")
        for r in range(table.num_rows):
            out.write("  ".join(col[r].ljust(w) for col, w in zip(cells, widths)).rstrip() + "\n")
        out.write(f"({table.num_rows} row{'' if table.num_rows == 1 else 's'})\n")
    else:
        raise InvalidInputError(f"unknown output format {fmt!r} (table, csv or json)")


def _cell(v) -> str:
    if v is None:
        text = "null"
    elif isinstance(v, bytes):
        text = v.hex() if len(v) <= _CELL // 2 else f"<{len(v)} bytes>"
    else:
        text = str(v).replace("\n", "\\n")
    return text if len(text) <= _CELL else text[: _CELL - 3] + "..."


def _json_value(v):
    if isinstance(v, bytes):
        return v.hex()
    return str(v)  # dates, times, decimals


def _csv_safe(table: pa.Table) -> pa.Table:
    """Nested columns as JSON text: CSV has no lists or structs."""
    cols = []
    for col in table.columns:
        t = col.type
        if pa.types.is_nested(t) or pa.types.is_dictionary(t) and pa.types.is_nested(t.value_type):
            col = pa.array([None if v is None else json.dumps(v, default=_json_value) for v in col.to_pylist()],
                           pa.string())
        cols.append(col)
    return pa.table(cols, names=table.column_names)


# -- convert -----------------------------------------------------------------------------------


def _format_of(path: str, given: str | None, role: str) -> str:
    if given:
        if given not in set(FORMATS.values()) | {"lance-dataset"}:
            raise InvalidInputError(f"unknown {role} format {given!r} (parquet, csv, ipc, lance or lance-dataset)")
        return given
    if _is_dataset(path):
        return "lance-dataset"
    ext = os.path.splitext(path.rstrip("/"))[1].lower()
    if ext in FORMATS:
        return FORMATS[ext]
    if role == "source" and os.path.isdir(path):
        exts = {os.path.splitext(f)[1].lower() for f in os.listdir(path)} & set(FORMATS)
        if len({FORMATS[e] for e in exts}) == 1:
            return FORMATS[exts.pop()]
    raise InvalidInputError(f"cannot tell the {role} format of {path!r} from its name: give it "
                            f"(parquet, csv, ipc, lance or lance-dataset)")


def _source(path: str, fmt: str, batch_size: int) -> tuple[pa.Schema, Iterator[pa.RecordBatch], int | None]:
    """(schema, batches, rows or None when unknown without reading everything)."""
    from .datasets import dataset
    from .reader import LanceFileReader

    if not os.path.exists(path):
        raise LanceIOError(f"cannot read {path}: no such file or directory")
    if fmt == "lance-dataset":
        ds = dataset(path)
        return ds.schema, ds.to_batches(batch_size=batch_size), ds.count_rows()
    if fmt == "lance":
        r = LanceFileReader(path)
        return r.schema, iter(r.read_all(batch_size=batch_size)), r.num_rows()
    import pyarrow.dataset as pds

    try:
        src = pds.dataset(path, format={"ipc": "ipc"}.get(fmt, fmt))
        rows = src.count_rows() if fmt != "csv" else None  # CSV: only a full read counts
        return src.schema, src.to_batches(batch_size=batch_size), rows
    except (pa.ArrowException, OSError) as exc:
        raise LanceIOError(f"cannot read {path} as {fmt}: {exc}") from None


def convert(src: str, dst: str, *, src_format: str | None = None, dst_format: str | None = None,
            version: str | None = None, mode: str = "create", overwrite: bool = False,
            batch_size: int = 64 * 1024, progress=None) -> int:
    """Copy the table at ``src`` to ``dst``, batch by batch; returns the number of rows.

    Formats come from the names (``.parquet``, ``.csv``, ``.arrow``/``.feather``, ``.lance``; a
    directory holding ``_versions`` is a Lance dataset) or from ``src_format``/``dst_format``
    (``"parquet"``, ``"csv"``, ``"ipc"``, ``"lance"``, ``"lance-dataset"``). ``version``: the
    Lance file version written (2.2 by default). A Lance dataset destination is written with
    ``mode`` (``"create"``, ``"append"``, ``"overwrite"``); any other existing destination is
    refused unless ``overwrite``. ``progress(stage, rows_done, rows_total_or_None)`` is called
    after each batch. Nothing is left at ``dst`` if the conversion fails.
    """
    from .datasets import write_dataset
    from .writer import LanceFileWriter

    s_fmt = _format_of(src, src_format, "source")
    d_fmt = _format_of(dst, dst_format, "destination") if (dst_format or os.path.splitext(dst)[1]) else "lance"
    if os.path.abspath(src) == os.path.abspath(dst):
        raise InvalidInputError(f"the source and the destination are the same: {src}")
    if d_fmt == "lance-dataset":
        if mode not in ("create", "append", "overwrite"):
            raise InvalidInputError(f"mode is create, append or overwrite, not {mode!r}")
    elif os.path.exists(dst) and not overwrite:
        raise LanceIOError(f"{dst} exists: overwrite=True (on the command line, --force) replaces it")
    schema, batches, total = _source(src, s_fmt, batch_size)
    done = [0]

    def counted() -> Iterator[pa.RecordBatch]:
        for b in batches:
            yield b
            done[0] += b.num_rows
            if progress is not None:
                progress("rows", done[0], total)

    if d_fmt == "lance-dataset":
        write_dataset(pa.RecordBatchReader.from_batches(schema, counted()), dst, mode=mode,
                      data_storage_version=version)
        return done[0]
    if d_fmt == "lance":
        with LanceFileWriter(dst, schema, version=version) as w:
            for b in counted():
                w.write_batch(b)
        return done[0]
    _write_other(dst, d_fmt, schema, counted())
    return done[0]


def _write_other(dst: str, fmt: str, schema: pa.Schema, batches) -> None:
    """Parquet, CSV or IPC at ``dst``, through a temporary name renamed into place at the end."""
    import pyarrow.csv as pcsv
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    tmp = f"{dst}.lancefile-tmp-{os.getpid()}"
    try:
        try:
            if fmt == "parquet":
                writer = pq.ParquetWriter(tmp, schema)
            elif fmt == "csv":
                writer = pcsv.CSVWriter(tmp, schema)
            else:
                writer = ipc.new_file(tmp, schema)
        except (pa.ArrowException, OSError) as exc:
            raise LanceIOError(f"cannot write {dst} as {fmt}: {exc}") from None
        with writer:
            for b in batches:
                writer.write_batch(b)
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
