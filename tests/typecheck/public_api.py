"""Code a user writes against lancefile's public API, type-checked by ``tests/test_typecheck.py``
(``mypy --strict``; the package ships ``py.typed``). Nothing here runs: it is checked only."""

from __future__ import annotations

import pyarrow as pa

import lancefile
from lancefile import FileMetadata, LanceDataset, LanceFileReader, LanceFileWriter, ReaderResults


def files(path: str, table: pa.Table) -> int:
    lancefile.write_table(table, path, version="2.2")
    with LanceFileWriter(path, table.schema, version="2.1", storage_options=None) as writer:
        writer.write_batch(table)
    back: pa.Table = lancefile.read_table(path, ["a", "b"], batch_size=1024)
    schema: pa.Schema = lancefile.read_schema(path)
    meta: FileMetadata = lancefile.read_metadata(path)
    for batch in lancefile.iter_batches(path, columns=["a"], batch_size=4096):
        batch.num_rows
    reader = LanceFileReader(path, None, ["a"])
    results: ReaderResults = reader.read_all(batch_size=1024, batch_readahead=4)
    part: pa.Table = reader.read_range(0, 10).to_table()
    rows: pa.Table = reader.take_rows([0, 5]).to_table()
    stats: dict[str, pa.Table] = reader.statistics()
    size: int = reader.size_bytes()
    n: int = reader.num_rows()
    reader.close()
    total: int = back.num_rows + len(schema) + len(meta.columns) + results.to_table().num_rows + part.num_rows + \
        rows.num_rows + len(stats) + size + n
    return total


def datasets(uri: str, table: pa.Table) -> int:
    ds: LanceDataset = lancefile.write_dataset(table, uri, mode="create", max_rows_per_file=1000)
    ds = lancefile.dataset(uri, version=1, storage_options=None)
    versions: list[dict[str, object]] = ds.versions()
    live: int = ds.count_rows()
    whole: pa.Table = ds.to_table(columns=["a"])
    taken: pa.Table = ds.take([0, 1])
    return len(versions) + live + int(whole.num_rows) + int(taken.num_rows) + len(ds.get_fragments())


def errors(path: str) -> str:
    try:
        lancefile.read_table(path)
    except lancefile.CorruptFileError as exc:
        return str(exc)
    except lancefile.LanceError as exc:
        return repr(exc)
    return ""
