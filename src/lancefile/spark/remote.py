"""The Spark source on object stores: storage options from Spark options and Hadoop's ``fs.s3a.*``.

Storage options are given as Spark options with pylance's keys
(``.option("aws_endpoint", "http://...")``, ``aws_access_key_id``, ``aws_secret_access_key``,
``aws_region``, ``allow_http``, ``client_max_retries``...; see :mod:`lancefile.objectstore`).
Hadoop's S3A settings map where they mean the same, from the session's
``spark.hadoop.fs.s3a.*`` settings as they are when the source is registered
(:func:`lancefile.spark.register` / :func:`lancefile.spark.session`: Spark runs a Python
source's planning in a worker, where the session cannot be asked) or as options without the
``spark.hadoop.`` prefix; an explicit storage option wins:

===================================== ========================================
``fs.s3a.access.key``                 ``aws_access_key_id``
``fs.s3a.secret.key``                 ``aws_secret_access_key``
``fs.s3a.session.token``              ``aws_session_token``
``fs.s3a.endpoint``                   ``aws_endpoint`` (``http://`` if SSL is off)
``fs.s3a.endpoint.region``            ``aws_region``
``fs.s3a.path.style.access``          ``aws_virtual_hosted_style_request`` (negated)
``fs.s3a.connection.ssl.enabled``     ``allow_http`` (negated)
``fs.s3a.attempts.maximum``           ``client_max_retries``
===================================== ========================================

``s3a://`` and ``s3n://`` paths are read as ``s3://``. The options are resolved on the driver
and travel to the tasks inside the pickled reader or writer.

Example::

    >>> storage_options({"fs.s3a.endpoint": "localhost:9000", "fs.s3a.connection.ssl.enabled": "false",
    ...                  "fs.s3a.path.style.access": "true", "aws_region": "eu-west-1"}, {})
    {'aws_region': 'eu-west-1', 'aws_endpoint': 'http://localhost:9000', 'allow_http': 'true', 'aws_virtual_hosted_style_request': 'false'}
    >>> normalize_path("s3a://bucket/data")
    's3://bucket/data'
"""

from __future__ import annotations

from typing import Mapping

from ..objectstore import STORAGE_OPTION_KEYS, is_uri

__all__ = ["storage_options", "hadoop_settings", "normalize_path", "is_storage_key", "is_remote_path"]

HADOOP_PREFIX = "spark.hadoop."
_S3A_DIRECT = {"fs.s3a.access.key": "aws_access_key_id", "fs.s3a.secret.key": "aws_secret_access_key",
               "fs.s3a.session.token": "aws_session_token", "fs.s3a.endpoint.region": "aws_region",
               "fs.s3a.attempts.maximum": "client_max_retries"}
_S3A_KEYS = set(_S3A_DIRECT) | {"fs.s3a.endpoint", "fs.s3a.path.style.access", "fs.s3a.connection.ssl.enabled"}


def is_storage_key(key: str) -> bool:
    """Whether a (lower-cased) Spark option is a storage option or a Hadoop S3A setting."""
    return key in STORAGE_OPTION_KEYS or key in _S3A_KEYS


def normalize_path(path: str) -> str:
    """``s3a://`` / ``s3n://`` (Hadoop's names) as ``s3://``; other paths unchanged."""
    for scheme in ("s3a://", "s3n://"):
        if path.lower().startswith(scheme):
            return "s3://" + path[len(scheme):]
    return path


def is_remote_path(path: str) -> bool:
    """Whether ``path`` is read through an object store (not a local or ``file://`` path)."""
    return is_uri(path) and not path.lower().startswith("file://")


def hadoop_settings(session) -> dict[str, str]:
    """The ``spark.hadoop.fs.s3a.*`` settings of ``session`` (a SparkSession on the driver), unprefixed."""
    try:
        out = {}
        for key in _S3A_KEYS:
            value = session.conf.get(HADOOP_PREFIX + key, None)
            if value is not None:
                out[key] = value
        return out
    except Exception:  # noqa: BLE001 - no session, or a session that cannot answer: no settings
        return {}


def storage_options(options: Mapping[str, str], hadoop: Mapping[str, str]) -> dict[str, str]:
    """pylance-style storage options from lower-cased Spark ``options`` and Hadoop S3A settings."""
    s3a = {**{k: v for k, v in hadoop.items() if k in _S3A_KEYS}, **{k: v for k, v in options.items() if k in _S3A_KEYS}}
    out = {k: str(v) for k, v in options.items() if k in STORAGE_OPTION_KEYS}
    mapped: dict[str, str] = {}
    for key, target in _S3A_DIRECT.items():
        if key in s3a:
            mapped[target] = str(s3a[key])
    ssl = str(s3a.get("fs.s3a.connection.ssl.enabled", "true")).strip().lower() != "false"
    if "fs.s3a.endpoint" in s3a:
        endpoint = str(s3a["fs.s3a.endpoint"]).strip()
        if "://" not in endpoint:
            endpoint = ("https://" if ssl else "http://") + endpoint
        mapped["aws_endpoint"] = endpoint
    if not ssl:
        mapped["allow_http"] = "true"
    if "fs.s3a.path.style.access" in s3a:
        path_style = str(s3a["fs.s3a.path.style.access"]).strip().lower() == "true"
        mapped["aws_virtual_hosted_style_request"] = "false" if path_style else "true"
    for key, value in mapped.items():
        out.setdefault(key, value)
    return out


def _store(uri: str, options: Mapping[str, str]):
    from ..objectstore import resolve_store

    return resolve_store(uri.rstrip("/"), dict(options))


def is_remote_dataset(uri: str, options: Mapping[str, str]) -> bool:
    """Whether the object-store ``uri`` is a Lance dataset (has objects under ``_versions/``)."""
    from ..datasets.storage import list_names

    return list_names(_store(uri, options).child("_versions")) is not None


def list_remote_files(uri: str, options: Mapping[str, str], *, must_exist: bool = True) -> list[tuple[str, int]]:
    """``(uri, size)`` of the Lance files a read of ``uri`` covers: the object itself, or the
    ``.lance`` objects below the prefix (names starting with ``.`` or ``_`` skipped), sorted.

    A dataset met below the prefix is refused, as for local directories; globs are not
    expanded on object stores.
    """
    import pyarrow.fs as pafs

    from ..errors import InvalidInputError, LanceIOError

    if any(c in uri for c in "*?["):
        raise InvalidInputError(f"{uri}: globs are not expanded on object stores; name a file or a prefix")
    store = _store(uri, options)
    info = store.info()
    if info.type == pafs.FileType.File:
        return [(store.uri, int(info.size or 0))]
    if info.type == pafs.FileType.NotFound:
        if not must_exist:
            return []
        raise LanceIOError(f"path does not exist: {uri}")
    selector = pafs.FileSelector(store.path, recursive=True)
    infos = store.call("list", lambda: store.fs.get_file_info(selector))
    found = []
    base = store.path.rstrip("/") + "/"
    for i in infos:
        rel = i.path[len(base):] if i.path.startswith(base) else i.path
        parts = rel.split("/")
        if "_versions" in parts[:-1]:
            where = f"{store.uri}/{'/'.join(parts[:parts.index('_versions')])}".rstrip("/")
            raise LanceIOError(f"{where} is a Lance dataset, met while listing the Lance files of {uri}: read it by "
                               f"its own path (its files also hold deleted rows and older versions)")
        if i.type == pafs.FileType.File and rel.endswith(".lance") and not any(p.startswith((".", "_")) for p in parts):
            found.append((f"{store.uri}/{rel}", int(i.size or 0)))
    if not found and must_exist:
        raise LanceIOError(f"{uri} is neither a Lance dataset (it has no _versions/) nor a prefix of Lance files "
                           f"(no .lance objects under it)")
    return sorted(found)
