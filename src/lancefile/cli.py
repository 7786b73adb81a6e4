"""The ``lancefile`` command line.

``lancefile inspect FILE`` prints a file's version, rows, schema and, per column, its
pages, encodings and sizes; ``lancefile inspect DIR`` on a Lance dataset prints its versions,
fragments, data files, deletions and row counts (``--version N`` for an older version). ``lancefile pipeline`` runs the main job, a Spark pipeline
to Lance files and back (see :mod:`lancefile.spark.job`; needs ``lancefile[spark]``).
``lancefile demo`` runs a small job without Spark (see :mod:`lancefile.demo`).
``lancefile head PATH [-n N] [-c COLS] [-w SQL] [-f table|csv|json]`` prints the first rows of a
file or dataset; ``lancefile convert SRC DST`` copies a table between Parquet, CSV, Arrow IPC
and Lance files or datasets, batch by batch (see :mod:`lancefile.tools`).
``lancefile verify PATH...`` checks files against their checksums and decodes every page
(see :mod:`lancefile.verification`); the exit status is 0 only if every file is intact.

Example::

    $ lancefile inspect data.lance
    $ lancefile inspect --json data.lance
    $ lancefile inspect my_dataset/ --version 3
    $ lancefile head data.lance -n 5 -c id,name -w "id > 100"
    $ lancefile convert events.parquet events.lance
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute below)

from .errors import LanceError
from .textformat import format_size

__all__ = ["main", "inspect_file", "inspect_dataset"]


def inspect_file(path: str) -> dict:
    """A JSON-able description of a Lance file's layout."""
    from .reader import LanceFileReader

    reader = LanceFileReader(path)
    meta = reader.metadata()
    owners = reader.column_owners()
    paths = reader.field_paths()
    columns = []
    for c in meta.columns:
        f = owners.get(c.index)
        columns.append({
            "index": c.index,
            "field": paths[f.id] if f else None,
            "type": str(f.arrow_type) if f else None,
            "pages": [
                {"rows": p.length, "bytes": sum(b.size for b in p.buffers), "buffers": len(p.buffers), "encoding": p.encoding}
                for p in c.pages
            ],
            "bytes": c.num_bytes,
        })
    return {
        "path": path,
        "version": meta.version,
        "footer_version": f"{meta.major_version}.{meta.minor_version}",
        "rows": meta.num_rows,
        "file_bytes": meta.file_size,
        "data_bytes": meta.num_data_bytes,
        "column_metadata_bytes": meta.num_column_metadata_bytes,
        "global_buffers": [{"position": b.position, "size": b.size} for b in meta.global_buffers],
        "schema": schema_json(meta.schema),
        "columns": columns,
        "statistics": _statistics_summary(reader),
    }


def schema_json(schema) -> list[dict]:
    """An Arrow schema as JSON-able fields: name, type, nullability, metadata and nested children.

    Example::

        >>> import pyarrow as pa
        >>> schema_json(pa.schema([pa.field("a", pa.list_(pa.int32()), nullable=False)]))[0]["children"][0]["type"]
        'int32'
    """
    def field(f) -> dict:
        out = {"name": f.name, "type": str(f.type), "nullable": f.nullable}
        if f.metadata:
            out["metadata"] = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in f.metadata.items()}
        t = f.type
        kids = [t.field(i) for i in range(t.num_fields)] if t.num_fields else []
        if kids:
            out["children"] = [field(k) for k in kids]
        return out

    return [field(f) for f in schema]


def _jsonable(v):
    return v if v is None or isinstance(v, (bool, int, float, str)) else str(v)


def _statistics_summary(reader) -> dict:
    """Per column with statistics: zones, nulls, NaNs and the file-wide min and max."""
    out = {}
    for path, t in reader.statistics().items():
        entry = {"zones": t.num_rows, "nulls": int(pa.compute.sum(t.column("null_count")).as_py() or 0)}
        if "nan_count" in t.column_names:
            entry["nans"] = int(pa.compute.sum(t.column("nan_count")).as_py() or 0)
        empty = t.column("null_count")
        if "nan_count" in t.column_names:
            empty = pa.compute.add(empty, t.column("nan_count"))
        live = t.filter(pa.compute.less(empty, t.column("num_rows")))  # zones with a value
        if live.num_rows:
            entry["min"] = _jsonable(pa.compute.min(live.column("min")).as_py())
            entry["max"] = _jsonable(pa.compute.max(live.column("max")).as_py())
        out[path] = entry
    return out


def inspect_dataset(path: str, version: int | None = None) -> dict:
    """A JSON-able description of a Lance dataset version: versions, fragments, files, deletions."""
    from .datasets import dataset, storage
    from .datasets.deletion import deletion_file_path

    ds = dataset(path, version=version)
    m = ds._manifest
    fragments = []
    for frag in ds.get_fragments():
        pb = frag.metadata
        deletion = None
        if pb.HasField("deletion_file"):
            d = pb.deletion_file
            deletion = {"path": storage.name(deletion_file_path(ds._root, frag.fragment_id, d)),
                        "kind": "arrow" if d.file_type == d.ARROW_ARRAY else "bitmap", "rows": frag.num_deletions}
        fragments.append({
            "id": frag.fragment_id, "physical_rows": frag.physical_rows, "deleted_rows": frag.num_deletions,
            "live_rows": frag.count_rows(), "deletion_file": deletion,
            "files": [{"path": df.path, "version": f"{df.file_major_version}.{df.file_minor_version}",
                       "bytes": df.file_size_bytes, "fields": list(df.fields), "column_indices": list(df.column_indices)}
                      for df in pb.files],
        })
    return {
        "path": ds.uri, "version": ds.version, "latest_version": ds.latest_version,
        "timestamp": ds.timestamp.isoformat() + "Z", "data_storage_version": ds.data_storage_version,
        "writer": f"{m.writer_version.library} {m.writer_version.version}".strip(),
        "reader_feature_flags": m.reader_feature_flags, "writer_feature_flags": m.writer_feature_flags,
        "rows": ds.count_rows(), "schema": schema_json(ds.schema),
        "versions": [{"version": v["version"], "timestamp": v["timestamp"].isoformat() + "Z"} for v in ds.versions()],
        "fragments": fragments,
    }


def _print_schema(fields: list[dict], out) -> None:
    print("schema:", file=out)
    for f in fields:
        print(f"  {f['name']}: {f['type']}" + ("" if f["nullable"] else " not null"), file=out)


def _print_dataset(info: dict, out) -> None:
    print(f"dataset:   {info['path']}", file=out)
    print(f"version:   {info['version']} of {info['latest_version']} ({info['timestamp']}, written by {info['writer']})",
          file=out)
    print(f"files:     Lance {info['data_storage_version']}", file=out)
    print(f"rows:      {info['rows']} live in {len(info['fragments'])} fragment(s)", file=out)
    _print_schema(info["schema"], out)
    print("versions:", file=out)
    for v in info["versions"]:
        print(f"  {v['version']}: {v['timestamp']}", file=out)
    print("fragments:", file=out)
    for f in info["fragments"]:
        print(f"  fragment {f['id']}: {f['live_rows']} live of {f['physical_rows']} rows", file=out)
        for df in f["files"]:
            print(f"      data/{df['path']}  Lance {df['version']}, {format_size(df['bytes'])}, fields {df['fields']}",
                  file=out)
        if f["deletion_file"]:
            d = f["deletion_file"]
            print(f"      {os.path.relpath(d['path'], info['path'])}  {d['rows']} deleted ({d['kind']})", file=out)


def _print_inspect(info: dict, out) -> None:
    print(f"file:      {info['path']}", file=out)
    print(f"version:   {info['version']} (footer {info['footer_version']})", file=out)
    print(f"rows:      {info['rows']}", file=out)
    print(f"size:      {format_size(info['file_bytes'])} ({format_size(info['data_bytes'])} data, "
          f"{format_size(info['column_metadata_bytes'])} column metadata, {len(info['global_buffers'])} global buffers)", file=out)
    _print_schema(info["schema"], out)
    print("columns:", file=out)
    for c in info["columns"]:
        print(f"  [{c['index']}] {c['field']}: {c['type']}  {len(c['pages'])} page(s), {format_size(c['bytes'])}", file=out)
        for i, p in enumerate(c["pages"]):
            print(f"      page {i}: {p['rows']} rows, {format_size(p['bytes'])} in {p['buffers']} buffer(s)  {p['encoding']}", file=out)
    stats = info.get("statistics") or {}
    print(f"statistics: {'none (not written by lancefile, or turned off)' if not stats else ''}".rstrip(), file=out)
    for path, e in stats.items():
        extra = f", {e['nans']} NaN" if "nans" in e else ""
        bounds = f"min {e['min']!r}, max {e['max']!r}" if "min" in e else "no values"
        print(f"  {path}: {e['zones']} zone(s), {e['nulls']} null{extra}; {bounds}", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lancefile", description="Lance v2 file tools")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"lancefile {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_inspect = sub.add_parser("inspect", help="show a file's version, schema, pages and encodings, "
                                               "or a dataset's versions, fragments and files")
    p_inspect.add_argument("file", help="a Lance file, or a Lance dataset directory")
    p_inspect.add_argument("--version", type=int, default=None, help="dataset version to show (default: latest)")
    p_inspect.add_argument("--json", action="store_true", help="print JSON instead of text")
    p_verify = sub.add_parser("verify", help="check files against their checksums and decode every page; "
                                             "exit status 0 only if all are intact")
    p_verify.add_argument("paths", nargs="+", metavar="PATH", help="Lance files")
    p_verify.add_argument("--no-decode", action="store_true", help="check checksums and metadata only")
    p_verify.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                          help="show a progress bar (default: on a terminal, for files of 16 MiB and more)")
    p_head = sub.add_parser("head", help="print the first rows of a Lance file or dataset")
    p_head.add_argument("path", help="a Lance file, or a Lance dataset directory")
    p_head.add_argument("-n", "--rows", type=_count, default=10, help="rows to print (default 10)")
    p_head.add_argument("-c", "--columns", default=None, help="comma-separated columns (default: all)")
    p_head.add_argument("-w", "--where", default=None, help="SQL condition, e.g. \"id > 5 AND s LIKE 'a%%'\"")
    p_head.add_argument("-f", "--format", choices=["table", "csv", "json"], default="table",
                        help="aligned table (default), CSV, or JSON lines")
    p_conv = sub.add_parser("convert", help="copy a table between Parquet, CSV, Arrow IPC and Lance files "
                                            "or datasets, batch by batch")
    p_conv.add_argument("src", help="source: .parquet, .csv, .arrow/.feather, .lance, a directory of them, "
                                    "or a Lance dataset")
    p_conv.add_argument("dst", help="destination: .lance (a Lance file; also any name without a known ending), "
                                    ".parquet, .csv, .arrow/.feather, or a Lance dataset with --dataset")
    p_conv.add_argument("--from", dest="src_format", default=None,
                        choices=["parquet", "csv", "ipc", "lance", "lance-dataset"], help="source format")
    p_conv.add_argument("--to", dest="dst_format", default=None,
                        choices=["parquet", "csv", "ipc", "lance", "lance-dataset"], help="destination format")
    p_conv.add_argument("--dataset", action="store_true", help="write a Lance dataset (same as --to lance-dataset)")
    p_conv.add_argument("--mode", choices=["create", "append", "overwrite"], default="create",
                        help="for a dataset destination (default create)")
    p_conv.add_argument("--lance-version", default=None, help="Lance file version written (2.0, 2.1, 2.2; default 2.2)")
    p_conv.add_argument("--force", action="store_true", help="replace an existing destination file")
    p_conv.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show the rows copied (default: on a terminal)")
    p_demo = sub.add_parser("demo", help="write a sample table, read it back, and report")
    p_demo.add_argument("--out", default=None, help="directory for the sample file (default: a temp dir)")
    p_demo.add_argument("--rows", type=_positive_int, default=100_000)
    p_pipe = sub.add_parser("pipeline", help="the main job: source -> Lance files with Spark -> filtered read-back")
    from .spark.job import add_arguments

    add_arguments(p_pipe)
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:  # `lancefile inspect x | head`: the reader left, end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more rows, not {n}")
    return n


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of rows, not {n}")
    return n


def _run(args) -> int:
    if args.command == "pipeline":
        from .spark.job import run_from_args

        return run_from_args(args)
    if args.command == "verify":
        from .verification import verify_paths

        return verify_paths(args.paths, decode=not args.no_decode, progress=args.progress)
    try:
        if args.command == "inspect":
            from .datasets.storage import is_dataset as _is_dataset

            is_dataset = _is_dataset(args.file)
            info = inspect_dataset(args.file, args.version) if is_dataset else inspect_file(args.file)
            if args.json:
                json.dump(info, sys.stdout, indent=2)
                print()
            else:
                (_print_dataset if is_dataset else _print_inspect)(info, sys.stdout)
        elif args.command == "head":
            from .tools import head, print_rows

            columns = None if args.columns is None else [c.strip() for c in args.columns.split(",") if c.strip()]
            print_rows(head(args.path, args.rows, columns=columns, where=args.where), args.format, sys.stdout)
        elif args.command == "convert":
            _convert(args)
        elif args.command == "demo":
            from .demo import run_demo

            run_demo(out_dir=args.out, rows=args.rows)
    except LanceError as exc:
        print(f"lancefile: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise
    except OSError as exc:
        print(f"lancefile: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _convert(args) -> None:
    from .textformat import ProgressBar
    from .tools import convert

    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(sys.stderr, os.path.basename(args.src.rstrip("/"))) if show else None
    try:
        rows = convert(args.src, args.dst, src_format=args.src_format,
                       dst_format="lance-dataset" if args.dataset else args.dst_format,
                       version=args.lance_version, mode=args.mode, overwrite=args.force, progress=bar)
    finally:
        if bar is not None:
            bar.clear()
    print(f"{args.dst}: {rows:,} rows from {args.src}")


if __name__ == "__main__":
    sys.exit(main())
