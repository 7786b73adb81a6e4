"""The options of the ``lance`` Spark data source, parsed once and checked.

Spark passes options as strings in a case-insensitive map (keys arrive lower-cased), so
column names are given in option *values*, never in keys.

Read options
    ``path`` (a Lance dataset directory, a Lance file, a directory of Lance files searched
    recursively, or a glob; or an ``s3://`` (``s3a://``), ``gs://``, ``az://`` URI of a
    dataset, file or prefix of files), ``version`` (of a dataset: read that version instead of the
    latest), ``columns`` (comma separated; dotted names reach into structs),
    ``batchSize`` (rows per Arrow batch, default 8192), ``splitRows`` (target rows per
    input partition; by default a split holds about ``splitBytes``, 128 MiB, of the file
    or fragment), ``pushFilters`` (``true`` lets the source apply Spark's filters itself;
    see :mod:`lancefile.spark`).

Write options
    ``format`` (``dataset``: commit one version of a Lance dataset per job, the default
    unless the path is an existing directory of plain Lance files; ``files``: one
    ``part-*.lance`` file per task or more, the layout of lancefile before datasets),
    ``version`` (Lance file format version of the data files: ``2.2`` by default; an
    append to a dataset uses the dataset's unless this says otherwise),
    ``maxRowsPerFile``, ``maxBytesPerFile`` (of Arrow data; a task rolls over to a new
    file when one is reached), ``maxPageBytes`` (``format=files`` only),
    ``vectorColumns`` (``emb=768,img=512``: store these ``array<float>`` columns as
    ``fixed_size_list``), and any ``lance-encoding:<key>`` with value
    ``column=setting,...`` (e.g. ``lance-encoding:compression`` = ``text=zstd``), which
    becomes that column's field metadata. An append to a dataset keeps the dataset's
    schema: its vectors and field metadata.

Storage options (reads and writes)
    pylance's ``storage_options`` keys (``aws_endpoint``, ``aws_access_key_id``,
    ``allow_http``...) and Hadoop's ``fs.s3a.*`` settings, also taken from the session's
    ``spark.hadoop.fs.s3a.*``: see :mod:`lancefile.spark.remote`.

Example::

    >>> ReadOptions.parse({"path": "/data", "columns": "id, emb", "splitrows": "1000"}).columns
    ('id', 'emb')
    >>> WriteOptions.parse({"path": "/out", "vectorcolumns": "emb=4"}).vector_columns
    {'emb': 4}
    >>> ReadOptions.parse({"path": "/data/ds", "version": "3"}).version
    3
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..errors import InvalidInputError
from ..format.version import DEFAULT_VERSION
from .remote import is_storage_key, normalize_path, storage_options

__all__ = ["ReadOptions", "WriteOptions", "DEFAULT_BATCH_SIZE", "DEFAULT_SPLIT_BYTES"]

DEFAULT_BATCH_SIZE = 8192
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
ENCODING_PREFIX = "lance-encoding:"

_READ_KEYS = {"path", "paths", "version", "columns", "batchsize", "splitrows", "splitbytes", "pushfilters"}
_WRITE_KEYS = {"path", "format", "version", "maxpagebytes", "maxrowsperfile", "maxbytesperfile", "vectorcolumns"}
#: Values of the ``format`` write option.
FORMATS = ("dataset", "files")


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): v for k, v in options.items()}


def _path(opts: dict[str, str]) -> str:
    path = opts.get("path")
    if not path and opts.get("paths"):  # .load([p1, p2]): Spark passes the list as JSON
        import json

        try:
            paths = json.loads(opts["paths"])
        except ValueError:
            paths = [opts["paths"]]
        paths = paths if isinstance(paths, list) else [paths]
        if len(paths) > 1:
            raise InvalidInputError(f"the lance data source reads one path (a Lance file, a directory of them or a "
                                    f"dataset), not {len(paths)}: {', '.join(map(str, paths))}; load each and "
                                    f"union them")
        path = paths[0] if paths else None
    if not path:
        raise InvalidInputError("the lance data source needs a path: .load(path) / .save(path) or option('path', ...)")
    return normalize_path(str(path))


def _positive(opts: dict[str, str], key: str, default: int | None) -> int | None:
    raw = opts.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(str(raw).replace("_", ""))
    except ValueError:
        raise InvalidInputError(f"option {key!r} must be a positive integer, not {raw!r}") from None
    if value <= 0:
        raise InvalidInputError(f"option {key!r} must be a positive integer, not {raw!r}")
    return value


def _flag(opts: dict[str, str], key: str) -> bool:
    raw = str(opts.get(key, "false")).strip().lower()
    if raw not in ("true", "false"):
        raise InvalidInputError(f"option {key!r} must be 'true' or 'false', not {opts[key]!r}")
    return raw == "true"


def _pairs(raw: str, key: str) -> dict[str, str]:
    """``'a=1, b=2'`` → ``{'a': '1', 'b': '2'}``."""
    out: dict[str, str] = {}
    for item in str(raw).split(","):
        if not item.strip():
            continue
        name, sep, value = item.rpartition("=")
        if not sep or not name.strip() or not value.strip():
            raise InvalidInputError(f"option {key!r}: expected 'column=value' items, not {item.strip()!r}")
        out[name.strip()] = value.strip()
    return out


def _unknown(opts: dict[str, str], known: set[str], what: str) -> None:
    for k in opts:
        if k not in known and not k.startswith(ENCODING_PREFIX) and not is_storage_key(k):
            raise InvalidInputError(f"unknown {what} option {k!r}; known: {', '.join(sorted(known))}, {ENCODING_PREFIX}*")


@dataclass(frozen=True)
class ReadOptions:
    """Checked read options (see the module docstring)."""

    path: str
    version: int | None = None
    columns: tuple[str, ...] | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    split_rows: int | None = None
    split_bytes: int = DEFAULT_SPLIT_BYTES
    push_filters: bool = False
    storage_options: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, options: Mapping[str, str], hadoop: Mapping[str, str] | None = None) -> "ReadOptions":
        """``hadoop``: the session's ``fs.s3a.*`` settings (see :mod:`lancefile.spark.remote`)."""
        opts = _lower(options)
        _unknown(opts, _READ_KEYS, "read")
        columns = None
        if opts.get("columns"):
            columns = tuple(c.strip() for c in str(opts["columns"]).split(",") if c.strip())
            if not columns:
                raise InvalidInputError("option 'columns' names no column")
        version = opts.get("version")
        if version is not None and str(version).strip() != "":
            try:
                version = int(str(version).strip())
            except ValueError:
                raise InvalidInputError(f"option 'version' (a dataset version to read) must be a number, "
                                        f"not {opts['version']!r}") from None
        else:
            version = None
        return cls(
            path=_path(opts),
            version=version,
            columns=columns,
            batch_size=_positive(opts, "batchsize", DEFAULT_BATCH_SIZE),
            split_rows=_positive(opts, "splitrows", None),
            split_bytes=_positive(opts, "splitbytes", DEFAULT_SPLIT_BYTES),
            push_filters=_flag(opts, "pushfilters"),
            storage_options=storage_options(opts, hadoop or {}),
        )


@dataclass(frozen=True)
class WriteOptions:
    """Checked write options (see the module docstring)."""

    path: str
    format: str | None = None        # "dataset" / "files"; None: decided by what the path holds
    version: str | None = None       # None: 2.2, or an existing dataset's version
    max_page_bytes: int | None = None
    max_rows_per_file: int | None = None
    max_bytes_per_file: int | None = None
    vector_columns: dict[str, int] = field(default_factory=dict)
    field_metadata: dict[str, dict[str, str]] = field(default_factory=dict)
    storage_options: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, options: Mapping[str, str], hadoop: Mapping[str, str] | None = None) -> "WriteOptions":
        """``hadoop``: the session's ``fs.s3a.*`` settings (see :mod:`lancefile.spark.remote`)."""
        from ..format.version import resolve_version

        opts = _lower(options)
        _unknown(opts, _WRITE_KEYS, "write")
        version = resolve_version(opts["version"], for_write=True).name if opts.get("version") else None
        fmt = str(opts.get("format") or "").strip().lower() or None
        if fmt is not None and fmt not in FORMATS:
            raise InvalidInputError(f"option 'format' must be one of {', '.join(FORMATS)}, not {opts['format']!r}")
        vectors = {}
        for name, dim in _pairs(opts.get("vectorcolumns", ""), "vectorColumns").items():
            try:
                vectors[name] = int(dim)
            except ValueError:
                raise InvalidInputError(f"option 'vectorColumns': dimension of {name!r} must be an integer, not {dim!r}") from None
            if vectors[name] <= 0:
                raise InvalidInputError(f"option 'vectorColumns': dimension of {name!r} must be positive, not {dim}")
        metadata: dict[str, dict[str, str]] = {}
        for key, raw in opts.items():
            if key.startswith(ENCODING_PREFIX):
                for column, value in _pairs(raw, key).items():
                    metadata.setdefault(column, {})[key] = value
        return cls(
            path=_path(opts),
            format=fmt,
            version=version,
            max_page_bytes=_positive(opts, "maxpagebytes", None),
            max_rows_per_file=_positive(opts, "maxrowsperfile", None),
            max_bytes_per_file=_positive(opts, "maxbytesperfile", None),
            vector_columns=vectors,
            field_metadata=metadata,
            storage_options=storage_options(opts, hadoop or {}),
        )

    @property
    def file_version(self) -> str:
        """The Lance file version new files get when no dataset decides it."""
        return self.version or DEFAULT_VERSION.value
