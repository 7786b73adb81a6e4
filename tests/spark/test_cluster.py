"""The ``lance`` source on a real standalone Spark cluster (a Master and a Worker on 127.0.0.1).

What this adds over the local-mode tests: the reader and writer are pickled to another JVM's
Python workers (an executor launched by the Worker), tasks write their files there, and the
driver commits them. The job runs in a subprocess, because a PySpark driver JVM is one per
process and other tests may keep a local-mode session open in this one.

Everything started here (Master, Worker, the job's driver; the Worker's executor and the
Python workers descend from them) runs with its working directory under ``tmp_path``; it is
stopped by process id in ``finally``, and the test fails if any such process is left over.

Needs ``java`` on PATH (Spark 4 wants Java 17+); skipped without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import lancefile

pytestmark = [pytest.mark.slow, pytest.mark.spark]

HOST = "127.0.0.1"
MASTER_TIMEOUT = 45.0  # s: a JVM daemon takes 3-10 s to start on a busy 2-core machine
WORKER_TIMEOUT = 45.0
JOB_TIMEOUT = 150.0
ROWS = 5000
# Short-lived JVMs: the client compiler only and a serial GC start faster and use fewer
# threads on a small, busy machine; nothing here runs long enough to need C2.
JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# The job, run as `python job.py MASTER_URL DATA_DIR RESULT_JSON ROWS LOCAL_DIR JVM_OPTS` with this
# interpreter; it writes what it saw to RESULT_JSON, which the test checks.
JOB = r'''
import json, os, sys, time
os.environ["TZ"] = "UTC"
time.tzset()
os.environ["PYSPARK_PYTHON"] = sys.executable          # executors' Python workers import lancefile
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable

import pyarrow as pa
import lancefile
import lancefile.spark
from pyspark.sql import functions as F

master, data_dir, result_path, rows, local_dir, jvm_opts = sys.argv[1:7]
rows = int(rows)
CATS = ["red", "green", "blue"]

T0 = time.monotonic()
timings = {}
def mark(name):
    timings[name] = round(time.monotonic() - T0, 2)

spark = lancefile.spark.session(master, "lancefile-cluster-test", **{
    "spark.ui.enabled": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.cores.max": "1",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.local.dir": local_dir,
    "spark.driver.extraJavaOptions": jvm_opts,
    "spark.executor.extraJavaOptions": jvm_opts,
})
sc = spark.sparkContext
mark("session")
out = {"master": sc.master, "app_id": sc.applicationId, "timings": timings}
try:
    df = spark.range(0, rows, numPartitions=3).select(
        F.col("id"),
        F.concat(F.lit("text-"), F.col("id").cast("string")).alias("text"),
        F.element_at(F.array(*[F.lit(c) for c in CATS]), (F.col("id") % 3 + 1).cast("int")).alias("cat"),
        F.timestamp_seconds(F.lit(1_700_000_000) + F.col("id")).alias("ts"),
        (F.col("id") * 0.5).alias("x"),
        F.when(F.col("id") % 7 == 0, F.lit(None)).otherwise(F.col("id") * 2).alias("maybe"),
        F.array(*[(F.col("id") + i).cast("float") for i in range(4)]).alias("emb"),
    )
    df.write.format("lance").mode("overwrite").option("vectorColumns", "emb=4").save(data_dir)
    mark("write")

    def expected(i):
        return {"id": i, "text": f"text-{i}", "cat": CATS[i % 3], "ts": 1_700_000_000 + i, "x": i * 0.5,
                "maybe": None if i % 7 == 0 else i * 2, "emb": [float(i + k) for k in range(4)]}

    def norm(row):
        row = dict(row)
        row["ts"] = int(row["ts"].timestamp())
        row["emb"] = [float(v) for v in row["emb"]]
        return row

    want = [expected(i) for i in range(rows)]

    back = spark.read.format("lance").load(data_dir)
    out["schema"] = back.schema.simpleString()
    out["num_partitions"] = back.rdd.getNumPartitions()
    got = sorted((norm(r.asDict()) for r in back.collect()), key=lambda r: r["id"])
    out["spark_rows_equal"] = got == want
    out["spark_first_bad"] = next((repr((g, w)) for g, w in zip(got, want) if g != w), None)
    mark("collect")
    agg = back.agg(F.count("*"), F.sum("x"), F.count_if(F.expr("cat = 'red' AND maybe IS NULL"))).first()
    out["count"], out["sum_x"], out["filtered"] = agg[0], agg[1], agg[2]
    proj = spark.read.format("lance").option("columns", "id, emb").load(data_dir)
    out["projected_columns"] = proj.columns
    out["projected_emb_sum"] = proj.agg(F.sum(F.element_at("emb", 4))).first()[0]
    mark("queries")

    out["entries"] = sorted(os.listdir(data_dir))
    out["files"] = sorted(os.listdir(os.path.join(data_dir, "data")))
    ds = lancefile.dataset(data_dir)
    out["referenced"] = sorted(os.path.basename(p) for f in ds.get_fragments() for p in f.data_files())
    table = ds.to_table()
    out["file_schema"] = str(table.schema)
    out["file_emb_type"] = str(table.schema.field("emb").type)
    file_rows = sorted((norm(r) for r in table.to_pylist()), key=lambda r: r["id"])
    out["file_rows_equal"] = file_rows == want
    out["file_first_bad"] = next((repr((g, w)) for g, w in zip(file_rows, want) if g != w), None)

    # Executors of this application, as the driver's block manager sees them (the driver is one).
    out["block_managers"] = sc._jsc.sc().getExecutorMemoryStatus().size()
    out["executor_infos"] = len(sc._jsc.sc().statusTracker().getExecutorInfos())
    out["ok"] = True
finally:
    mark("end")
    with open(result_path, "w") as f:
        json.dump(out, f)
    spark.stop()
'''


# -- processes ---------------------------------------------------------------------------

def _free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 right now (held open together so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class _Proc:
    """A process started in a session of its own, output to a log file, stopped by its pid."""

    def __init__(self, name: str, cmd: list[str], env: dict, cwd: Path, log: Path) -> None:
        self.name, self.log = name, log
        self._out = open(log, "wb")  # noqa: SIM115 - open while the process runs, closed in stop()
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _exited(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the leader to exit, *without reaping it*, so that its pid
        (= the process group id) cannot be reused while we still signal the group."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.returncode is not None:
                return True
            try:
                if os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def _signal_group(self, sig: int) -> None:
        if self.proc.returncode is not None:  # reaped: the group id is no longer ours to signal
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace`` s, then reap the leader."""
        if not self._exited(0):
            self._signal_group(signal.SIGTERM)
            if not self._exited(grace):
                self._signal_group(signal.SIGKILL)
                self._exited(10.0)
        self._signal_group(signal.SIGKILL)  # whatever is left in its group (e.g. an executor JVM)
        try:
            self.proc.wait(timeout=10)
        finally:
            self._out.close()


def _our_leftovers(root: Path) -> list[tuple[int, str]]:
    """Processes (pid, command line) whose working directory is under ``root``: everything we
    started runs there, and so do their descendants (executor JVMs, Python daemons/workers)."""
    found = []
    me = os.getpid()
    root = Path(os.path.realpath(root))
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd == str(root) or cwd.startswith(str(root) + os.sep)):
            found.append((int(entry), cmd[:200]))
    return found


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"<{e}>"
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _started_port(log: Path, service: str) -> int | None:
    """The port Spark says ``service`` bound (it moves on to the next one if ours was taken)."""
    try:
        m = re.search(rf"Successfully started service '{service}' on port (\d+)", log.read_text(errors="replace"))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def _master_state(ui_port: int | None) -> dict | None:
    if ui_port is None:
        return None
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via an http proxy
    try:
        with opener.open(f"http://{HOST}:{ui_port}/json/", timeout=3) as resp:
            return json.loads(resp.read().decode())
    except (OSError, ValueError):
        return None


# -- the test ----------------------------------------------------------------------------

def test_write_and_read_on_a_standalone_cluster(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.skip("java is not on PATH: a standalone Spark cluster needs a JVM (Java 17+)")
    import pyspark

    t0 = time.monotonic()
    spark_home = Path(pyspark.__file__).resolve().parent
    spark_class = spark_home / "bin" / "spark-class"
    dirs = {name: tmp_path / name for name in ("conf", "logs", "work", "local", "run", "data")}
    for d in dirs.values():
        d.mkdir()
    data_dir = dirs["data"] / "table"
    result_path = tmp_path / "result.json"
    (tmp_path / "job.py").write_text(JOB)

    master_port, master_ui = _free_ports(2)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update({
        "SPARK_HOME": str(spark_home),
        "SPARK_CONF_DIR": str(dirs["conf"]),      # empty: Spark's defaults, not a user's conf
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_DIRS": str(dirs["local"]),
        "SPARK_LOG_DIR": str(dirs["logs"]),
        "SPARK_PID_DIR": str(dirs["run"]),
        "SPARK_WORKER_DIR": str(dirs["work"]),
        "SPARK_DAEMON_MEMORY": "384m",
        "SPARK_DAEMON_JAVA_OPTS": JVM_OPTS,
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_NO_DAEMONIZE": "1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    })

    procs: list[_Proc] = []
    logs = dirs["logs"]

    def diagnostics() -> str:
        parts = [f"--- {p.name} (pid {p.proc.pid}, exit {p.proc.poll()}) {p.log}:\n{_tail(p.log)}" for p in procs]
        for f in sorted(dirs["work"].glob("app-*/*/std*")):
            parts.append(f"--- executor {f.relative_to(dirs['work'])}:\n{_tail(f)}")
        return "\n".join(parts)

    def wait_for(what: str, ready, timeout: float):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = ready()
            if value:
                return value
            dead = [p.name for p in procs if not p.alive()]
            if dead:
                pytest.fail(f"{', '.join(dead)} exited while waiting for {what}\n{diagnostics()}")
            time.sleep(0.5)
        pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{diagnostics()}")

    failed = True
    try:
        procs.append(_Proc("master", [str(spark_class), "org.apache.spark.deploy.master.Master",
                                      "--host", HOST, "--port", str(master_port), "--webui-port", str(master_ui)],
                           env, tmp_path, logs / "master.log"))
        # Spark takes the next port if another process grabbed ours meanwhile: ask its log.
        state = wait_for("the master's web UI",
                         lambda: _master_state(_started_port(logs / "master.log", "MasterUI")), MASTER_TIMEOUT)
        master_ui = _started_port(logs / "master.log", "MasterUI")
        master_url = state["url"]
        assert master_url.startswith(f"spark://{HOST}:"), state
        t_master = time.monotonic()

        procs.append(_Proc("worker", [str(spark_class), "org.apache.spark.deploy.worker.Worker",
                                      "--host", HOST, "--webui-port", "0", "--cores", "1",
                                      "--memory", "1g", "--work-dir", str(dirs["work"]), master_url],
                           env, tmp_path, logs / "worker.log"))

        def worker_alive():
            state = _master_state(master_ui)
            return state if state and any(w.get("state") == "ALIVE" for w in state.get("workers", [])) else None

        # The driver's JVM takes longer to start than the worker needs to register: start it
        # now; its tasks wait for the executor that the master gives it once the worker is up.
        # A relative path: the driver resolves it in its working directory (tmp_path), and the
        # executor, whose working directory is the worker's app directory, must write there too.
        job = _Proc("driver", [sys.executable, str(tmp_path / "job.py"), master_url, str(data_dir.relative_to(tmp_path)),
                               str(result_path), str(ROWS), str(dirs["local"]), JVM_OPTS],
                    env, tmp_path, logs / "driver.log")
        procs.append(job)
        t_driver = time.monotonic()
        wait_for("a worker to register as ALIVE", worker_alive, WORKER_TIMEOUT)
        t_worker = time.monotonic()

        try:
            job.proc.wait(timeout=JOB_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the job did not finish in {JOB_TIMEOUT:.0f} s\n{diagnostics()}")
        t_job = time.monotonic()
        if job.proc.returncode != 0 or not result_path.exists():
            pytest.fail(f"the job failed (exit {job.proc.returncode})\n{diagnostics()}")
        out = json.loads(result_path.read_text())
        if not out.get("ok"):
            pytest.fail(f"the job did not finish its checks: {out}\n{diagnostics()}")

        # It ran on the cluster: our master, an executor besides the driver, launched by our worker.
        assert out["master"] == master_url
        assert out["block_managers"] > 1, out
        assert out["executor_infos"] > 1, out
        app_dirs = list((dirs["work"] / out["app_id"]).glob("*/stderr"))
        assert app_dirs, f"the worker launched no executor for {out['app_id']}\n{diagnostics()}"
        finished = sum(p.read_text(errors="replace").count("Finished task") for p in app_dirs)
        assert finished > 0, f"no task finished on the executor\n{diagnostics()}"
        apps = [a for a in (_master_state(master_ui) or {}).get("completedapps", []) if a.get("id") == out["app_id"]]
        assert apps and apps[0]["name"] == "lancefile-cluster-test", apps

        # What was written and read back.
        assert out["spark_rows_equal"], out["spark_first_bad"]
        assert out["file_rows_equal"], out["file_first_bad"]
        assert out["count"] == ROWS
        assert out["sum_x"] == sum(i * 0.5 for i in range(ROWS))
        assert out["filtered"] == sum(1 for i in range(ROWS) if i % 3 == 0 and i % 7 == 0)
        assert out["projected_columns"] == ["id", "emb"]
        assert out["projected_emb_sum"] == float(sum(i + 3 for i in range(ROWS)))
        assert out["file_emb_type"].startswith("fixed_size_list<"), out["file_schema"]
        # a Lance dataset: one data file per task, all referenced by its one version, nothing else left
        assert out["entries"] == ["_transactions", "_versions", "data"], out["entries"]
        assert len(out["files"]) == 3 and out["files"] == out["referenced"], out
        assert sorted(p.name for p in (data_dir / "data").iterdir()) == out["files"]
        strays = [str(p) for p in dirs["work"].rglob("*") if p.name in ("table", "_temporary") or p.suffix == ".lance"]
        assert not strays, f"files written relative to the executor's directory: {strays}"

        # The main job runs unchanged on the cluster: only --master differs from local mode.
        pipe_out = tmp_path / "pipeline-out"
        pipeline = subprocess.run(
            [sys.executable, "-m", "lancefile", "pipeline", "--master", master_url, "--rows", "3000", "--dim", "4",
             "--out", str(pipe_out), "--conf", "spark.ui.enabled=false"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=JOB_TIMEOUT,
        )
        assert pipeline.returncode == 0, f"{pipeline.stdout[-2000:]}\n{pipeline.stderr[-3000:]}\n{diagnostics()}"
        assert "3,000 written and read back" in pipeline.stdout, pipeline.stdout
        assert lancefile.dataset(str(pipe_out)).count_rows() == 3000
        failed = False
        print(f"\ncluster test: master up {t_master - t0:.1f} s, worker alive {t_worker - t_master:.1f} s later, "
              f"driver done {t_job - t_driver:.1f} s after its start (its own clock: {out['timings']})")
    finally:
        for p in reversed(procs):  # driver, worker (takes its executors along), master
            p.stop()
        leftovers = _our_leftovers(tmp_path)
        deadline = time.monotonic() + 10
        while leftovers and time.monotonic() < deadline:  # Python daemons exit ~1 s after their JVM
            time.sleep(0.5)
            leftovers = _our_leftovers(tmp_path)
        for pid, _cmd in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if leftovers and not failed:
            pytest.fail(f"processes left behind (now killed): {leftovers}")
