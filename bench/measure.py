"""Timing, byte counting and machine description shared by the benchmark runner."""

from __future__ import annotations

import datetime as _dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

__all__ = ["timed", "median", "rotate", "read_chars", "machine", "run_child", "REPO"]

REPO = Path(__file__).resolve().parent.parent


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call, after a garbage collection so it is not billed to ``fn``."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def rotate(items: Sequence[str], k: int) -> list[str]:
    """Libraries in a different order each repetition, so drifting noise hits all of them."""
    k %= max(1, len(items))
    return list(items[k:]) + list(items[:k])


def read_chars() -> int:
    """Bytes this process has read through read/pread so far (``rchar`` of /proc/self/io)."""
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_total_gib() -> float:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def machine() -> dict:
    from .libs import versions

    v = versions()
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gib": round(_mem_total_gib(), 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyarrow": v["pyarrow"],
        "pylance": v["lance"],
        "numpy": v["numpy"],
        "numba": v["numba"],
        "lancefile": v["lancefile"],
        "loadavg_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def child_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    paths = [str(REPO), str(REPO / "src")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra or {})
    return env


def run_child(args: Sequence[str], env: dict | None = None, timeout: float = 600) -> dict:
    """Run ``python -m bench.child ARGS`` in a fresh interpreter; return its JSON answer."""
    proc = subprocess.run([sys.executable, "-m", "bench.child", *args], cwd=REPO, env=child_env(env),
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"bench.child {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
