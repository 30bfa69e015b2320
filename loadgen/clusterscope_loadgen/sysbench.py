"""Running one sysbench 1.0.20 window and reading its output.

The password never reaches argv: sysbench leaves it unset and libmariadb then reads the
MYSQL_PWD environment variable of the sysbench process (and of nothing else we start).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from clusterscope_loadgen.config import LUA_DIR

SYSBENCH = "sysbench"


@dataclass
class Result:
    transactions: int = 0
    tps: float = 0.0
    queries: int = 0
    qps: float = 0.0
    writes: int = 0
    errors: int = 0
    reconnects: int = 0
    total_time: float = 0.0
    latency: dict[float, float] = field(default_factory=dict)  # quantile -> seconds
    committed: int = 0  # rows confirmed committed by the Lua scripts
    stale: int = 0
    threads_reported: int = 0
    fatal: list[str] = field(default_factory=list)
    exit_code: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0


_NUM = r"([0-9]+(?:\.[0-9]+)?)"
_PATTERNS = {
    "transactions": re.compile(rf"^\s*transactions:\s+(\d+)\s+\({_NUM} per sec\.\)", re.M),
    "queries": re.compile(rf"^\s*queries:\s+(\d+)\s+\({_NUM} per sec\.\)", re.M),
    "errors": re.compile(r"^\s*ignored errors:\s+(\d+)", re.M),
    "reconnects": re.compile(r"^\s*reconnects:\s+(\d+)", re.M),
    "writes": re.compile(r"^\s*write:\s+(\d+)", re.M),
    "total_time": re.compile(rf"^\s*total time:\s+{_NUM}s", re.M),
}
_HIST = re.compile(r"^\s*([0-9.]+) \|\**\s+(\d+)\s*$")
_CSSTAT = re.compile(r"^CSSTAT tid=(\d+) committed=(\d+) stale=(\d+)")
QUANTILES = (0.5, 0.95, 0.99)


def percentiles(histogram: list[tuple[float, int]],
                quantiles: tuple[float, ...] = QUANTILES) -> dict[float, float]:
    """Quantiles (in seconds) from sysbench's latency histogram (ms buckets, ascending)."""
    total = sum(c for _, c in histogram)
    out: dict[float, float] = {}
    if total == 0:
        return out
    for q in quantiles:
        need, seen = q * total, 0
        for value_ms, count in histogram:
            seen += count
            if seen >= need:
                out[q] = value_ms / 1000.0
                break
    return out


def parse(text: str) -> Result:
    r = Result()
    if m := _PATTERNS["transactions"].search(text):
        r.transactions, r.tps = int(m.group(1)), float(m.group(2))
    if m := _PATTERNS["queries"].search(text):
        r.queries, r.qps = int(m.group(1)), float(m.group(2))
    for key in ("errors", "reconnects", "writes"):
        if m := _PATTERNS[key].search(text):
            setattr(r, key, int(m.group(1)))
    if m := _PATTERNS["total_time"].search(text):
        r.total_time = float(m.group(1))
    hist: list[tuple[float, int]] = []
    for line in text.splitlines():
        if m := _HIST.match(line):
            hist.append((float(m.group(1)), int(m.group(2))))
        elif m := _CSSTAT.match(line):
            r.threads_reported += 1
            r.committed += int(m.group(2))
            r.stale += int(m.group(3))
        elif line.startswith("FATAL"):
            r.fatal.append(line.strip())
    r.latency = percentiles(hist)
    return r


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


def argv(script: Path, endpoints: list[Endpoint], user: str, database: str, threads: int,
         seconds: float, options: dict[str, object] | None = None,
         socket: str | None = None) -> list[str]:
    args = [SYSBENCH, str(script),
            f"--mysql-host={','.join(e.host for e in endpoints)}",
            f"--mysql-port={','.join(str(e.port) for e in endpoints)}",
            f"--mysql-user={user}", f"--mysql-db={database}",
            f"--threads={threads}", f"--time={max(1, round(seconds))}", "--events=0",
            "--histogram=on", "--percentile=95",
            # Errors are counted (and invalidate the window) instead of ending the run;
            # lost connections are re-opened by sysbench and counted as reconnects.
            "--mysql-ignore-errors=all", "--db-ps-mode=disable"]
    if socket:
        args.append(f"--mysql-socket={socket}")
    for key, value in (options or {}).items():
        args.append(f"--{key}={value}")
    args.append("run")
    return args


def environment(password: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MYSQL_PWD"}
    if password is not None:
        env["MYSQL_PWD"] = password
    env["LUA_PATH"] = f"{LUA_DIR}/?.lua;;"
    return env


def run(args: list[str], password: str | None, timeout: float) -> Result:
    """Run sysbench to completion; its CPU time comes from the children's rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(args, env=environment(password), capture_output=True,
                              text=True, timeout=timeout, cwd=str(LUA_DIR))
        text, code = proc.stdout + "\n" + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        text, code = out + "\nFATAL: sysbench did not finish in time (killed)", -9
    except FileNotFoundError as exc:
        raise RuntimeError("sysbench is not installed (Debian: apt-get install sysbench)"
                           ) from exc
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = parse(text)
    result.exit_code = code
    result.wall_seconds = wall
    result.cpu_seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code != 0 and not result.fatal:
        result.fatal.append(f"sysbench exited {code}: {text.strip().splitlines()[-1:]}")
    return result
