"""lancefile against a real local S3-compatible server (moto, started once for this module),
with every request the server receives counted: the tests assert how many a read costs.
Failures are real too: the server answers 503 SlowDown on demand (``fail_next``), checks
credentials when moto's authentication is switched on, and "server down" is a port nothing
listens on."""

import socket
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs  # noqa: F401 - pa.fs
import pytest

import lancefile
from lancefile import LanceError, LanceIOError

pytest.importorskip("moto.server")
from tests import s3server  # noqa: E402

BUCKET = "lancefile-test"


s3 = s3server.fixture(BUCKET)


def _table(n=200_000, start=0):
    rng = np.random.default_rng(0)
    return pa.table({"id": pa.array(np.arange(start, start + n)), "x": pa.array(rng.random(n)),
                     "s": pa.array([f"value-{i % 1000}" for i in range(n)])})


def test_round_trip_and_request_counts(s3):
    app, options = s3
    uri = f"s3://{BUCKET}/dir/t.lance"
    table = _table()
    lancefile.write_table(table, uri, storage_options=options)
    app.take()
    reader = lancefile.LanceFileReader(uri, options, ["x"])
    opened = app.take("t.lance")
    # HEAD (size) + one GET of the tail, which holds all the metadata of a small file
    assert [m for m, _, _ in opened] == ["HEAD", "GET"], opened
    got = reader.read_all().to_table()
    assert got.column("x").equals(table.column("x"))
    pages = reader.metadata().columns[1].pages
    reads = app.take("t.lance")
    assert all(m == "GET" and r for m, _, r in reads)
    # the scan fetches each page whole, ahead of decoding (lancefile.prefetch): one GET a page at most
    assert 1 <= len(reads) <= len(pages), (reads, len(pages))
    # what the scan fetched ahead goes with the scan (the reader stays open)
    import gc

    gc.collect()
    assert all(ref() is None for ref in reader._source._prefetched)
    # a take of 3 scattered rows: at most one GET per row
    assert reader.take_rows([5, 100_000, 199_999]).to_table().column("x").to_pylist() == \
        table.column("x").take([5, 100_000, 199_999]).to_pylist()
    assert len(app.take("t.lance")) <= 3


def test_pylance_interop_both_ways(s3):
    lance = pytest.importorskip("lance")
    _, options = s3
    table = _table(1000)
    theirs = f"s3://{BUCKET}/pylance.lance"
    with lance.file.LanceFileWriter(theirs, table.schema, storage_options=options) as w:
        w.write_batch(table)
    assert lancefile.read_table(theirs, storage_options=options).equals(table)
    ours = f"s3://{BUCKET}/ours.lance"
    lancefile.write_table(table, ours, storage_options=options)
    assert lance.file.LanceFileReader(ours, storage_options=options).read_all().to_table().equals(table)


def test_failed_write_leaves_no_object(s3):
    _, options = s3
    uri = f"s3://{BUCKET}/failed/t.lance"
    with pytest.raises(LanceError):
        with lancefile.LanceFileWriter(uri, pa.schema([("a", pa.int64())]), storage_options=options) as w:
            w.write_batch(pa.table({"a": [1, 2]}))
            raise LanceError("stop")
    fs, _ = lancefile.objectstore.resolve_filesystem(uri, options)
    assert fs.get_file_info(f"{BUCKET}/failed/t.lance").type == pa.fs.FileType.NotFound


def test_errors_name_the_uri(s3):
    _, options = s3
    with pytest.raises(LanceIOError, match="s3://lancefile-test/missing.lance"):
        lancefile.read_table(f"s3://{BUCKET}/missing.lance", storage_options=options)
    with pytest.raises(LanceIOError, match="s3://no-such-bucket/x.lance"):
        lancefile.read_table("s3://no-such-bucket/x.lance", storage_options=options)
    with pytest.raises(LanceIOError, match="not supported"):
        lancefile.read_table(f"s3://{BUCKET}/x.lance", storage_options={**options, "bogus": "1"})


def _within(fn, seconds: float = 60.0):
    """``fn()``'s result or exception, failing the test if it has not returned in ``seconds`` (a hang)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s: a hang"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture(scope="module")
def written(s3):
    app, options = s3
    uri = f"s3://{BUCKET}/read/t.lance"
    table = _table()
    lancefile.write_table(table, uri, storage_options=options)
    return uri, table


def test_take_requests(s3, written):
    """k scattered rows: the page's small metadata buffer, then one GET a row; near rows share a GET."""
    app, options = s3
    uri, table = written
    reader = lancefile.LanceFileReader(uri, options, ["x"])
    app.take()
    rows = [5, 100_000, 199_999]
    assert reader.take_rows(rows).to_table().column("x").to_pylist() == table.column("x").take(rows).to_pylist()
    pages = {p for p, r in enumerate(reader.metadata().columns[1].pages)}
    gets = app.take("t.lance")
    assert all(m == "GET" for m, _, _ in gets)
    assert len(gets) <= len(rows) + len(pages), gets
    # rows within 64 KiB of each other (float64: 8 bytes a row) come in one request
    near = [10, 20, 30, 40, 500, 1000]
    assert reader.take_rows(near).to_table().column("x").to_pylist() == table.column("x").take(near).to_pylist()
    assert len(app.take("t.lance")) == 1


def test_large_ranges_are_split_and_fetched_in_parallel(s3, written, monkeypatch):
    from lancefile import objectstore

    app, options = s3
    uri, table = written
    monkeypatch.setattr(objectstore, "PART_BYTES", 64 * 1024)
    reader = lancefile.LanceFileReader(uri, options, ["x"], verify_checksums=False)
    app.take()
    assert reader.read_all().to_table().column("x").equals(table.column("x"))
    gets = app.take("t.lance")
    lengths = [int(r.split("-")[1]) - int(r.split("=")[1].split("-")[0]) + 1 for _, _, r in gets]
    # the 1.5 MB value buffer arrives in parts of at most 64 KiB
    stored = reader.metadata().columns[1].num_bytes
    assert max(lengths) <= 64 * 1024 and len(lengths) >= stored // (64 * 1024), lengths


def test_batch_readahead(s3, written):
    app, options = s3
    uri, table = written
    reader = lancefile.LanceFileReader(uri, options, ["id"])
    for ahead in (0, 1, 16):
        batches = list(reader.read_all(batch_size=10_000, batch_readahead=ahead))
        assert pa.Table.from_batches(batches).column("id").equals(table.column("id"))
        assert {b.num_rows for b in batches} == {10_000}
    got = list(lancefile.iter_batches(uri, ["id"], batch_size=50_000, batch_readahead=2, storage_options=options))
    assert sum(b.num_rows for b in got) == table.num_rows
    # a consumer that stops early ends the background reading (no thread left behind)
    it = iter(reader.read_range(0, 100_000, batch_size=1000, batch_readahead=4))
    next(it), next(it)  # the first two batches are made in this thread: short reads start no thread
    assert not any(t.name == "lancefile-readahead" for t in threading.enumerate())
    next(it)
    assert any(t.name == "lancefile-readahead" for t in threading.enumerate())
    it.close()
    assert not any(t.name == "lancefile-readahead" for t in threading.enumerate())
    with pytest.raises(lancefile.InvalidInputError, match="batch_readahead"):
        reader.read_all(batch_readahead=-1)


def test_transient_errors_are_retried(s3, written):
    app, options = s3
    uri, table = written
    app.take()
    app.fail_next(2)  # the HEAD fails twice with 503 SlowDown, the third attempt succeeds
    reader = lancefile.LanceFileReader(uri, options, ["id"])
    assert [m for m, _, _ in app.take("t.lance")] == ["HEAD", "HEAD", "HEAD", "GET"]
    app.fail_next(1)  # a GET of the data fails once
    assert reader.read_all().to_table().column("id").equals(table.column("id"))
    gets = app.take("t.lance")
    assert len(gets) >= 2 and gets[0] == gets[1], gets  # the same range asked for again


def test_retry_budget_is_bounded(s3, written):
    app, options = s3
    uri, _ = written
    app.take()
    app.fail_next(10**6)
    try:
        with pytest.raises(LanceIOError, match=r"s3://lancefile-test/read/t.lance.*3 attempts"):
            _within(lambda: lancefile.read_table(uri, storage_options={**options, "client_max_retries": 2}))
        assert len(app.take("t.lance")) == 3
        with pytest.raises(LanceIOError, match="s3://lancefile-test/read/t.lance"):
            _within(lambda: lancefile.read_table(uri, storage_options={**options, "client_max_retries": "50",
                                                                      "client_retry_timeout": "1s"}))
        assert 2 <= len(app.take("t.lance")) < 50
    finally:
        app.fail_next(0)
    with pytest.raises(lancefile.InvalidInputError, match="client_max_retries"):
        lancefile.read_table(uri, storage_options={**options, "client_max_retries": "many"})


def test_clear_errors_within_the_budget(s3, written, monkeypatch):
    app, options = s3
    uri, _ = written
    with pytest.raises(LanceIOError, match=r"s3://lancefile-test/read/missing.lance: no such object"):
        _within(lambda: lancefile.read_table(f"s3://{BUCKET}/read/missing.lance", storage_options=options))
    with pytest.raises(LanceIOError, match=r"s3://no-such-bucket/x.lance: bucket 'no-such-bucket' does not exist"):
        _within(lambda: lancefile.read_table("s3://no-such-bucket/x.lance", storage_options=options))
    # server down: a port nothing listens on
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    down = {**options, "aws_endpoint": f"http://127.0.0.1:{dead}", "client_retry_timeout": "2s"}
    with pytest.raises(LanceIOError, match=r"s3://lancefile-test/read/t.lance: the object store cannot be reached"):
        _within(lambda: lancefile.read_table(uri, storage_options=down))
    with pytest.raises(LanceIOError, match=r"cannot write s3://lancefile-test/w.lance"):
        _within(lambda: lancefile.write_table(_table(10), f"s3://{BUCKET}/w.lance", storage_options=down))
    # a server that accepts connections and never answers: the request timeout ends each attempt
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        hung = {**options, "aws_endpoint": f"http://127.0.0.1:{silent.getsockname()[1]}", "timeout": "1s",
                "connect_timeout": "1s", "client_max_retries": 1}
        with pytest.raises(LanceIOError, match=r"s3://lancefile-test/read/t.lance"):
            _within(lambda: lancefile.read_table(uri, storage_options=hung))
    # wrong credentials: moto checks them once its authentication is on; no retry is made
    import moto.settings

    app.take()
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    with pytest.raises(LanceIOError, match=r"s3://lancefile-test/read/t.lance: access denied: check the credentials"):
        _within(lambda: lancefile.read_table(uri, storage_options={**options, "aws_access_key_id": "wrong"}))
    assert len(app.take("t.lance")) == 1


def test_dataset_written_by_pylance(s3):
    """pylance writes a dataset on the server (three versions, deletions); lancefile reads every version."""
    lance = pytest.importorskip("lance")
    app, options = s3
    uri = f"s3://{BUCKET}/datasets/theirs"
    table = _table(3000)
    lance.write_dataset(table, uri, max_rows_per_file=1000, storage_options=options)
    lance.write_dataset(_table(500), uri, mode="append", storage_options=options)
    theirs = lance.dataset(uri, storage_options=options)
    theirs.delete("id % 7 = 0")
    theirs = lance.dataset(uri, storage_options=options)
    app.take()
    ds = lancefile.dataset(uri, storage_options=options)
    # opening: one LIST of _versions/, then the newest manifest (HEAD + GET); no data file yet
    assert [(m, "_versions" in p or p.endswith(BUCKET)) for m, p, _ in app.take()] == [("GET", True), ("HEAD", True),
                                                                                       ("GET", True)]
    assert ds.version == theirs.version == 3
    assert [v["version"] for v in ds.versions()] == [1, 2, 3]
    assert ds.to_table().equals(theirs.to_table())
    assert ds.count_rows() == theirs.count_rows()
    rows = [0, 1234, ds.count_rows() - 1]
    assert ds.take(rows).equals(theirs.take(rows))
    assert lancefile.dataset(uri, version=1, storage_options=options).to_table().equals(table)
    assert ds.to_table(columns=["x"], filter=pa.compute.field("id") < 10).equals(
        theirs.to_table(columns=["x"], filter="id < 10"))
    assert {m for m, _, _ in app.take()} <= {"GET", "HEAD"}  # reading writes nothing


def test_dataset_errors_on_object_storage(s3):
    _, options = s3
    with pytest.raises(LanceIOError, match=r"s3://lancefile-test/datasets/none: no such dataset"):
        _within(lambda: lancefile.dataset(f"s3://{BUCKET}/datasets/none", storage_options=options))
    lancefile.write_table(_table(10), f"s3://{BUCKET}/datasets/plain/a.lance", storage_options=options)
    with pytest.raises(LanceIOError, match=r"s3://lancefile-test/datasets/plain: not a Lance dataset"):
        lancefile.dataset(f"s3://{BUCKET}/datasets/plain", storage_options=options)


def test_dataset_copied_to_the_server_reads_in_pylance(s3, tmp_path):
    """A dataset lancefile wrote (locally, then copied up) is read by pylance and lancefile from the server."""
    lance = pytest.importorskip("lance")
    _, options = s3
    table = _table(2000)
    local = tmp_path / "ours"
    lancefile.write_dataset(table, local, max_rows_per_file=700)
    lancefile.write_dataset(_table(10), local, mode="append")
    fs, _ = lancefile.objectstore.resolve_filesystem(f"s3://{BUCKET}", options)
    pa.fs.copy_files(str(local), f"{BUCKET}/datasets/ours", source_filesystem=pa.fs.LocalFileSystem(),
                     destination_filesystem=fs)
    uri = f"s3://{BUCKET}/datasets/ours"
    expected = lancefile.dataset(local).to_table()
    assert lance.dataset(uri, storage_options=options).to_table().equals(expected)
    assert lancefile.dataset(uri, storage_options=options).to_table().equals(expected)


def test_prefetched_ranges_are_shared_joined_and_released(monkeypatch):
    """lancefile.prefetch's store side: bytes fetched once, reads across two prefetches joined,
    nothing kept once the caller lets go (a pyarrow in-memory filesystem; no server needed)."""
    import gc

    from lancefile import objectstore

    monkeypatch.setattr(objectstore, "PART_BYTES", 7)  # many parts per prefetch
    fs = pa.fs._MockFileSystem()
    data = bytes(range(256)) * 4
    with fs.open_output_stream("x") as f:
        f.write(data)
    src = objectstore.ArrowFsSource(fs, "x")
    first = src.prefetch([(0, 100)])
    second = src.prefetch([(50, 100), (300, 10)])  # [50, 100) is held already: only [100, 310) is fetched
    assert [(e.start, e.stop) for e in first] == [(0, 100)]
    assert [(e.start, e.stop) for e in second] == [(0, 100), (100, 310)]
    assert bytes(src.read(90, 30)) == data[90:120]  # across the two
    out = bytearray(30)
    src.read_into(95, memoryview(out))
    assert bytes(out) == data[95:125]
    assert src._cached(400, 20) is None
    del first, second
    gc.collect()
    assert src._cached(0, 10) is None


def test_dataset_written_by_lancefile_on_the_server(s3):
    """lancefile creates, appends, deletes and overwrites a dataset on the server; pylance reads every
    version as lancefile does, appends and deletes on top, and lancefile reads that. A commit is one
    PUT per data file, one for the transaction and one conditional PUT (If-None-Match: *) of the manifest:
    7 requests in all for an append, where pylance makes 9."""
    lance = pytest.importorskip("lance")
    app, options = s3
    uri = f"s3://{BUCKET}/datasets/ours-direct"
    first, more = _table(2500), _table(700)
    lancefile.write_dataset(first, uri, max_rows_per_file=1000, storage_options=options)
    app.take()
    app.conditional.clear()
    ds = lancefile.write_dataset(more, uri, mode="append", storage_options=options)
    sent = app.take()
    # list _versions/ + HEAD + GET of the latest manifest, 3 PUTs, one HEAD for a V1-named rival (pylance: 9)
    assert len(sent) == 7, sent
    puts = [p for m, p, _ in sent if m in ("PUT", "POST", "DELETE")]
    assert len(puts) == 3 and "/data/" in puts[0] and "/_transactions/" in puts[1] and "/_versions/" in puts[2], puts
    assert app.conditional == [puts[2]]  # the manifest, created only if absent, as pylance does
    ds = ds.delete(pc.field("id") < 500)
    assert ds.version == 3 and ds.count_rows() == 3200 - 500 - 500
    for v in (1, 2, 3):
        theirs = lance.dataset(uri, version=v, storage_options=options)
        ours = lancefile.dataset(uri, version=v, storage_options=options)
        assert theirs.count_rows() == ours.count_rows()
        assert theirs.to_table().sort_by("id").equals(ours.to_table().sort_by("id"))
    lance.write_dataset(_table(10, 5000), uri, mode="append", storage_options=options)
    lance.dataset(uri, storage_options=options).delete("id = 5001")
    ds = lancefile.dataset(uri, storage_options=options)
    assert ds.version == 5 and ds.count_rows() == 2200 + 9
    ds = lancefile.write_dataset(_table(3), uri, mode="overwrite", storage_options=options)
    assert lance.dataset(uri, storage_options=options).to_table().equals(_table(3))
    assert lancefile.dataset(uri, version=5, storage_options=options).count_rows() == 2209
    assert ds.cleanup_orphans(older_than_seconds=0) == []  # nothing left behind by the writes
    with pytest.raises(lancefile.InvalidInputError, match="already exists"):
        lancefile.write_dataset(first, uri, storage_options=options)


def test_concurrent_appends_on_the_server(s3):
    """Appenders racing on one dataset: every append that reports success is in the final version,
    none is lost (the manifest's conditional create makes the loser rebase)."""
    from concurrent.futures import ThreadPoolExecutor

    _, options = s3
    uri = f"s3://{BUCKET}/datasets/racing"
    lancefile.write_dataset(_table(1), uri, storage_options=options)

    def appends(worker: int) -> int:
        done = 0
        for i in range(4):
            lancefile.write_dataset(_table(worker + 1, 1000 * worker + 10 * i), uri, mode="append",
                                    storage_options=options)
            done += worker + 1
        return done

    with ThreadPoolExecutor(3) as pool:
        total = sum(pool.map(appends, range(3)))
    ds = lancefile.dataset(uri, storage_options=options)
    assert ds.version == 1 + 12 and ds.count_rows() == 1 + total
    assert len({f.fragment_id for f in ds.get_fragments()}) == 13


def test_dataset_writes_where_no_atomic_create_exists(s3, tmp_path):
    """A store lancefile cannot create a manifest on atomically is refused before any byte is written."""
    _, options = s3
    fs, _ = lancefile.objectstore.resolve_filesystem(f"s3://{BUCKET}", options)
    store = lancefile.objectstore.resolve_store(f"s3://{BUCKET}/datasets/theirs-fs", filesystem=fs)
    with pytest.raises(LanceIOError, match="atomic"):
        store.put_if_absent(b"x")
    from lancefile.datasets.storage import refuse_remote_write

    with pytest.raises(LanceIOError, match=r"cannot write a dataset at s3://.*gs://, az://"):
        refuse_remote_write(store)
    assert store.info().type == pa.fs.FileType.NotFound


def test_cli_inspects_a_dataset_on_the_server(s3, monkeypatch, capsys):
    """``lancefile inspect s3://...`` on a dataset shows its versions and fragments (credentials and
    endpoint from the AWS environment variables, as for pylance)."""
    from lancefile import cli

    _, options = s3
    uri = f"s3://{BUCKET}/datasets/for-cli"
    lancefile.write_dataset(_table(30), uri, max_rows_per_file=20, storage_options=options)
    lancefile.dataset(uri, storage_options=options).delete(pc.field("id") == 3)
    for var, key in (("AWS_ACCESS_KEY_ID", "aws_access_key_id"), ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
                     ("AWS_DEFAULT_REGION", "aws_region"), ("AWS_ENDPOINT", "aws_endpoint"),
                     ("AWS_ALLOW_HTTP", "allow_http")):
        monkeypatch.setenv(var, options[key])
    assert cli.main(["inspect", uri]) == 0
    out = capsys.readouterr().out
    assert "version:   2 of 2" in out and "29 live in 2 fragment(s)" in out and "_deletions/0-1-" in out, out


def test_large_file_upload_goes_straight_to_its_key(s3):
    """A file over one part is a multipart upload to its own key (no temporary key, no copy: S3's
    CopyObject stops at 5 GB); a small one is a single PUT."""
    app, options = s3
    table = _table(1_500_000)  # ~ 30 MB
    app.take()
    lancefile.write_table(table, f"s3://{BUCKET}/straight/big.lance", storage_options=options)
    sent = [(m, p) for m, p, _ in app.take() if m not in ("GET", "HEAD")]
    assert sent and all(p.endswith("/straight/big.lance") for _, p in sent), sent
    assert [m for m, _ in sent].count("POST") == 2 and "DELETE" not in [m for m, _ in sent]  # create + complete
    lancefile.write_table(_table(10), f"s3://{BUCKET}/straight/small.lance", storage_options=options)
    assert [(m, p.rsplit("/", 1)[1]) for m, p, _ in app.take() if m not in ("GET", "HEAD")] == [("PUT", "small.lance")]
    assert lancefile.read_table(f"s3://{BUCKET}/straight/big.lance", storage_options=options).equals(table)


def test_dataset_writes_without_boto3_are_refused_before_writing(s3, monkeypatch):
    """Without boto3 no conditional create can be sent: the write is refused up front, naming the extra."""
    from lancefile import s3 as s3mod

    _, options = s3
    monkeypatch.setattr(s3mod, "boto3_available", lambda: False)
    uri = f"s3://{BUCKET}/datasets/no-boto3"
    with pytest.raises(LanceIOError, match=r"needs boto3.*lancefile\[s3\]"):
        lancefile.write_dataset(_table(10), uri, storage_options=options)
    store = lancefile.objectstore.resolve_store(uri, options)
    assert store.list() == [] and store.info().type == pa.fs.FileType.NotFound
