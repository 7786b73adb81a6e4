"""A real local S3-compatible server (moto) for the tests, counting every request it receives.

:func:`start` runs moto's server in a thread of this process, behind :class:`CountingApp`,
creates ``bucket`` and returns the app, pylance-style ``storage_options`` for it and a
function that stops it. The Spark tests' Python workers reach it over the network like any
client. ``python -m tests.s3server BUCKET`` runs one in a process of its own (the benchmark
does, so the server does not share the client's interpreter): it prints its port, and
``GET /__requests`` answers the requests counted since the last such call, as JSON.
"""

from __future__ import annotations

import json
import sys
import threading

import pyarrow as pa
import pyarrow.fs  # noqa: F401 - pa.fs


COUNTS_PATH = "/__requests"


class CountingApp:
    """WSGI middleware: records (method, path, Range) of each request that reaches the server,
    and answers the next ``fail_next(n)`` requests with S3's 503 SlowDown."""

    def __init__(self, app):
        self.app = app
        self.requests: list[tuple[str, str, str | None]] = []
        self.conditional: list[str] = []  # paths of the PUTs sent with If-None-Match: * (atomic creates)
        self._lock = threading.Lock()
        self._fail = 0

    def fail_next(self, n: int) -> None:
        with self._lock:
            self._fail = n

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == COUNTS_PATH:
            body = json.dumps(self.take()).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        with self._lock:
            self.requests.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), environ.get("HTTP_RANGE")))
            if environ.get("HTTP_IF_NONE_MATCH") == "*":
                self.conditional.append(environ.get("PATH_INFO", ""))
            fail = self._fail > 0
            self._fail -= fail
        if fail:
            start_response("503 Slow Down", [("Content-Type", "application/xml")])
            return [b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                    b'<Message>Please reduce your request rate.</Message></Error>']
        return self.app(environ, start_response)

    def take(self, key: str | None = None) -> list[tuple[str, str, str | None]]:
        with self._lock:
            got, self.requests = self.requests, []
        return [r for r in got if key is None or r[1].endswith(key)]


def fixture(bucket: str):
    """A module-scoped pytest fixture giving ``(app, storage_options)`` of a server holding ``bucket``."""
    import pytest

    @pytest.fixture(scope="module")
    def s3():
        app, options, stop = start(bucket)
        yield app, options
        stop()

    return s3


def start(bucket: str, port: int = 0):
    """``(app, storage_options, stop)`` of a new server holding an empty ``bucket``."""
    from moto import server as moto_server
    from werkzeug import serving

    app = CountingApp(moto_server.DomainDispatcherApplication(moto_server.create_backend_app))
    server = serving.make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    options = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "aws_region": "us-east-1",
               "aws_endpoint": f"http://127.0.0.1:{port}", "allow_http": "true"}
    pa.fs.S3FileSystem(access_key="test", secret_key="test", region="us-east-1", scheme="http",
                       endpoint_override=f"127.0.0.1:{port}", allow_bucket_creation=True).create_dir(bucket)

    def stop() -> None:
        server.shutdown()
        thread.join()

    return app, options, stop


if __name__ == "__main__":
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    _, opts, _ = start(sys.argv[1])
    print(opts["aws_endpoint"].rsplit(":", 1)[1], flush=True)
    threading.Event().wait()
