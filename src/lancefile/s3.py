"""S3: pylance's ``storage_options`` for it, and the requests ``pyarrow.fs`` cannot send.

:func:`s3_filesystem` builds the ``pyarrow.fs.S3FileSystem`` of pylance-style options (the
endpoint and ``allow_http`` also from the AWS environment variables, as pylance reads them).
Three requests go through boto3 instead (the ``s3`` extra): :func:`put` (with
``If-None-Match: *``: the atomic create-if-absent that commits a dataset version, as pylance
commits on S3), :func:`head` (one request, where ``pyarrow.fs`` also lists) and
:func:`upload_file` (straight to the key: one PutObject, or a multipart upload that is aborted
when a part fails, with no temporary key and no 5 GB CopyObject). Their failures come out as
the ``OSError`` texts :class:`lancefile.objectstore.RetryPolicy` sorts into transient or not.

Example::

    >>> sorted(k for k in STORAGE_OPTION_KEYS if "region" in k)
    ['aws_region', 'region']
    >>> duration("s3://b/k", "timeout", "500ms")
    0.5
"""

from __future__ import annotations

import os
import re
import threading

from .errors import InvalidInputError, LanceIOError

__all__ = ["STORAGE_OPTION_KEYS", "RETRY_KEYS", "duration", "s3_filesystem", "boto3_available", "put", "head",
           "upload_file"]

# pylance's storage_options keys -> pyarrow.fs.S3FileSystem arguments
_S3_KEYS = {"aws_access_key_id": "access_key", "access_key_id": "access_key",
            "aws_secret_access_key": "secret_key", "secret_access_key": "secret_key",
            "aws_session_token": "session_token", "session_token": "session_token",
            "aws_region": "region", "region": "region"}
_ENDPOINT_KEYS = ("aws_endpoint", "endpoint", "endpoint_url", "aws_endpoint_url")
_HTTP_KEYS = ("allow_http", "aws_allow_http")
_VIRTUAL_KEYS = ("aws_virtual_hosted_style_request", "virtual_hosted_style_request")
_TIMEOUT_KEYS = {"connect_timeout": "connect_timeout", "timeout": "request_timeout"}
RETRY_KEYS = ("client_max_retries", "client_retry_timeout")
_ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT")
#: Every storage_options key lancefile knows (lower case).
STORAGE_OPTION_KEYS = frozenset(_S3_KEYS) | frozenset(_ENDPOINT_KEYS + _HTTP_KEYS + _VIRTUAL_KEYS + RETRY_KEYS) \
    | frozenset(_TIMEOUT_KEYS)


def duration(uri: str, key: str, value) -> float:
    """Seconds from a number or a duration string (``"500ms"``, ``"5s"``, ``"2m"``)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|h)?\s*", str(value))
    if m is None:
        raise InvalidInputError(f"{uri}: storage option {key}={value!r} is not a duration (seconds, or '5s', '500ms')")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


def _truthy(value) -> bool:
    return str(value).lower() in ("true", "1", "yes")


def s3_filesystem(uri: str, options: dict):
    import pyarrow.fs as pafs

    # Retries are lancefile's (RetryPolicy, with a budget in time): the SDK tries once.
    kwargs: dict = {"retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=1)}
    endpoint = None
    allow_http = False
    for key, value in options.items():
        k = key.lower()
        if k in _S3_KEYS:
            kwargs[_S3_KEYS[k]] = value
        elif k in _ENDPOINT_KEYS:
            endpoint = str(value)
        elif k in _HTTP_KEYS:
            allow_http = _truthy(value)
        elif k in _VIRTUAL_KEYS:
            kwargs["force_virtual_addressing"] = _truthy(value)
        elif k in _TIMEOUT_KEYS:
            kwargs[_TIMEOUT_KEYS[k]] = duration(uri, key, value)
        elif k not in RETRY_KEYS:
            raise LanceIOError(f"{uri}: storage option {key!r} is not supported for s3:// (known: "
                               f"{', '.join(sorted(STORAGE_OPTION_KEYS))})")
    if endpoint is None:  # as pylance (object_store): the endpoint and allow_http from the environment
        endpoint = _env_endpoint()
        if endpoint is not None and not any(k.lower() in _HTTP_KEYS for k in options):
            allow_http = _truthy(os.environ.get("AWS_ALLOW_HTTP", ""))
    if endpoint is not None:
        scheme, _, rest = endpoint.partition("://")
        if not rest:
            scheme, rest = "https", endpoint
        if scheme == "http" and not allow_http:
            raise LanceIOError(f"{uri}: endpoint {endpoint} is plain http: set storage_options allow_http=true")
        kwargs["endpoint_override"] = rest.rstrip("/")
        kwargs["scheme"] = scheme
    return pafs.S3FileSystem(**kwargs)


_S3_CLIENTS: dict = {}
_S3_CLIENTS_LOCK = threading.Lock()
# pylance's storage_options keys -> boto3 client arguments (the rest as for pyarrow, above)
_BOTO_KEYS = {"access_key": "aws_access_key_id", "secret_key": "aws_secret_access_key",
              "session_token": "aws_session_token", "region": "region_name"}


def _env_endpoint() -> str | None:
    return next((os.environ[v] for v in _ENDPOINT_ENV if os.environ.get(v)), None)


def _s3_client(options: tuple):
    """A boto3 S3 client for pylance-style ``options`` (made once per set of options)."""
    env = _env_endpoint()
    key = (options, env)
    with _S3_CLIENTS_LOCK:
        if key in _S3_CLIENTS:
            return _S3_CLIENTS[key]
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise LanceIOError("committing to s3:// needs boto3 (PutObject with If-None-Match: *, which pyarrow.fs "
                           "cannot send): pip install 'lancefile[s3]'") from None
    kwargs: dict = {}
    endpoint, virtual = None, False
    for k, v in options:
        if k in _S3_KEYS:
            kwargs[_BOTO_KEYS[_S3_KEYS[k]]] = v
        elif k in _ENDPOINT_KEYS:
            endpoint = v if "://" in v else f"https://{v}"
        elif k in _VIRTUAL_KEYS:
            virtual = _truthy(v)
    if endpoint is None and env is not None:
        endpoint = env if "://" in env else f"https://{env}"
    # the addressing pyarrow uses (path style unless asked), and lancefile's retries, not the SDK's
    config = Config(retries={"max_attempts": 1, "mode": "standard"},
                    s3={"addressing_style": "virtual" if virtual else "path"})
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, config=config, **kwargs)
    with _S3_CLIENTS_LOCK:
        return _S3_CLIENTS.setdefault(key, client)


def boto3_available() -> bool:
    try:
        import boto3  # noqa: F401
    except ImportError:
        return False
    return True


def upload_file(path: str, options: tuple, local: str, part_bytes: int, threads: int) -> None:
    """Upload the local file ``local`` to ``path`` (``bucket/key``): one PutObject up to
    ``part_bytes``, else a multipart upload of such parts, ``threads`` at once, aborted
    (nothing left) if any part fails."""
    from boto3.exceptions import S3UploadFailedError
    from boto3.s3.transfer import TransferConfig

    bucket, _, key = path.partition("/")
    config = TransferConfig(multipart_threshold=part_bytes + 1, multipart_chunksize=part_bytes,
                            max_concurrency=threads, use_threads=True)

    def send(client) -> None:
        try:
            client.upload_file(local, bucket, key, Config=config)
        except S3UploadFailedError as exc:  # its message holds the S3 error code and status
            text = str(exc)
            code = next((v for k, v in _BOTO_CODES.items() if k in text), "")
            raise OSError(f"{code} {text}") from exc

    _request(options, send)


def head(path: str, options: tuple) -> bool:
    """Whether ``path`` (``bucket/key``) exists (one HeadObject)."""
    bucket, _, key = path.partition("/")
    return _request(options, lambda client: client.head_object(Bucket=bucket, Key=key), missing=False)


def put(path: str, options: tuple, data: bytes, if_none_match: str | None = None) -> bool:
    """One PutObject of ``data`` at ``path`` (``bucket/key``); with ``if_none_match="*"`` only if
    nothing is there: False when something is."""
    bucket, _, key = path.partition("/")
    extra = {"IfNoneMatch": if_none_match} if if_none_match else {}
    return _request(options, lambda client: client.put_object(Bucket=bucket, Key=key, Body=data, **extra),
                    failed_condition=False)


_BOTO_CODES = {"AccessDenied": "ACCESS_DENIED", "InvalidAccessKeyId": "INVALID_ACCESS_KEY",
               "SignatureDoesNotMatch": "SIGNATURE_DOES_NOT_MATCH", "NoSuchBucket": "NO_SUCH_BUCKET",
               "SlowDown": "SLOW_DOWN"}


def _request(options: tuple, fn, *, failed_condition=None, missing=None) -> bool:
    """``fn(client)`` through boto3: True when it succeeds; ``failed_condition`` for a 412,
    ``missing`` for a 404 (when given); other failures as the OSErrors :class:`RetryPolicy` sorts."""
    from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

    try:
        fn(_s3_client(options))
    except ClientError as exc:
        err = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if failed_condition is not None and (status == 412 or err.get("Code") == "PreconditionFailed"):
            return failed_condition
        if missing is not None and status == 404:
            return missing
        if status == 409:  # ConditionalRequestConflict: a concurrent create of the key is in progress
            raise ConnectionAbortedError(f"connection aborted: concurrent create of the key ({err.get('Code')})")
        code = _BOTO_CODES.get(err.get("Code", ""), err.get("Code", ""))
        raise OSError(f"{code} HTTP status {status}: {err.get('Message', exc)}") from exc
    except EndpointConnectionError as exc:
        raise ConnectionRefusedError(f"connection refused: {exc}") from exc
    except BotoCoreError as exc:
        raise OSError(f"NETWORK_CONNECTION {exc}") from exc
    return True
