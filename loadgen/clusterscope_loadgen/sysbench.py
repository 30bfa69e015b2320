"""Running one sysbench 1.0.20 window and reading its output.

The password never reaches argv: sysbench leaves it unset and libmariadb then reads the
MYSQL_PWD environment variable of the sysbench process (and of nothing else we start).

TLS: sysbench 1.0.20 has one TLS option, `--mysql-ssl=on`, and then loads `client-key.pem`,
`client-cert.pem` and `cacert.pem` from its working directory (akopytov/sysbench ebf1c90,
the 1.0.20 release, src/drivers/mysql/drv_mysql.c: `mysql_ssl_set(con, "client-key.pem",
"client-cert.pem", "cacert.pem", NULL, cipher)`, with MYSQL_OPT_SSL_MODE REQUIRED where the
client library has it). So it runs in a directory where those names lead to the option
file's files, and needs all three: Debian 12's libmariadb 3.3 fails the connection when
one is missing ("TLS/SSL error: No such file or directory"), and with the CA given checks
the server's chain (a wrong CA: "self-signed certificate in certificate chain"), not its
name; the loadgen's own connections check the name too (target.py).
"""

from __future__ import annotations

import atexit
import math
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from clusterscope_loadgen.config import LUA_DIR

# the names sysbench 1.0.20 opens in its working directory
TLS_FILES = {"ca": "cacert.pem", "cert": "client-cert.pem", "key": "client-key.pem"}


@dataclass(frozen=True)
class Tls:
    """The option file's TLS, as sysbench can use it."""
    mode: str
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    def problem(self) -> str | None:
        """Why sysbench cannot connect with this TLS, or None."""
        missing = [f"ssl-{k}" for k in TLS_FILES if getattr(self, k) is None]
        if not missing:
            return None
        return (f"sysbench 1.0.20 connects with TLS only with a CA and a client certificate"
                f" (it loads {', '.join(TLS_FILES.values())}), and the option file has no"
                f" {' or '.join(missing)}: give ssl-ca, ssl-cert and ssl-key (a client"
                " certificate your servers' CA signed)")

    def workdir(self) -> Path:
        """A directory (under $TMPDIR) where sysbench's fixed names lead to the files."""
        d = Path(tempfile.mkdtemp(prefix="cs-loadgen-tls-"))
        atexit.register(shutil.rmtree, d, True)
        for attr, name in TLS_FILES.items():
            (d / name).symlink_to(Path(str(getattr(self, attr))).resolve())
        return d


_tls: tuple[Tls, Path] | None = None


def use_tls(tls: Tls | None) -> None:
    """Every sysbench run from now on connects with this TLS (the loadgen's one target
    option file); a ValueError says why sysbench cannot."""
    global _tls
    if tls is None:
        _tls = None
        return
    why = tls.problem()
    if why:
        raise ValueError(why)
    _tls = (tls, tls.workdir())

SYSBENCH = "sysbench"


@dataclass
class VariantRun:
    """One variant's steps in a window, summed over the threads (the CSVAR lines of the Lua
    scripts, cs_common.lua): every step is timed on its own, so variants interleaved in one
    window each get their own latency and throughput."""

    steps: int = 0
    rows: int = 0  # rows confirmed committed
    attempted: int = 0  # rows sent, committed or not (a lost reply may hide a commit)
    stale: int = 0
    queries: int = 0
    seconds: float = 0.0  # wall time inside the steps, summed over the threads
    delay_seconds: float = 0.0  # injected calibration delay (delay_us), as measured
    cpu_seconds: float = 0.0  # the client threads' own CPU inside the steps
    histogram: dict[int, int] = field(default_factory=dict)  # bucket -> steps
    threads: int = 0  # threads that reported this variant

    @property
    def mean_latency(self) -> float:
        return self.seconds / self.steps if self.steps else 0.0

    def rate(self, threads: int) -> float:
        """Steps per second that `threads` closed-loop threads reach at this mean latency
        (Little's law: throughput = concurrency / latency)."""
        return threads * self.steps / self.seconds if self.seconds > 0 else 0.0

    @property
    def latency(self) -> dict[float, float]:
        """Quantiles in seconds (bucket midpoints; buckets are 2.5% wide)."""
        return bucket_percentiles(self.histogram)

    def add(self, other: VariantRun) -> None:
        for name in ("steps", "rows", "attempted", "stale", "queries", "seconds",
                     "delay_seconds", "cpu_seconds", "threads"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for b, c in other.histogram.items():
            self.histogram[b] = self.histogram.get(b, 0) + c


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
    variants: dict[str, VariantRun] = field(default_factory=dict)  # by mix name
    # a time-sliced window's CSSLOT/CSTHREAD lines, for slots.parse (then dropped)
    slot_lines: list[str] = field(default_factory=list)


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
_CSVAR = re.compile(r"^CSVAR tid=(\d+) name=(\S*) steps=(\d+) rows=(\d+) attempted=(\d+)"
                    r" stale=(\d+) queries=(\d+) time=([0-9.]+) delay=([0-9.]+) hist=(\S*)"
                    r"(?: cpu=([0-9.]+))?$")
QUANTILES = (0.5, 0.95, 0.99)
BUCKETS_PER_E = 40  # cs_common.lua: bucket = floor(40 * ln(microseconds))


def bucket_percentiles(histogram: dict[int, int],
                       quantiles: tuple[float, ...] = QUANTILES) -> dict[float, float]:
    """Quantiles (seconds) from the Lua scripts' log buckets, at each bucket's midpoint."""
    total = sum(histogram.values())
    out: dict[float, float] = {}
    if total == 0:
        return out
    ordered = sorted(histogram.items())
    for q in quantiles:
        need, seen = q * total, 0
        for bucket, count in ordered:
            seen += count
            if seen >= need:
                out[q] = math.exp((bucket + 0.5) / BUCKETS_PER_E) / 1e6
                break
    return out


def _variant_run(m: re.Match) -> VariantRun:
    hist: dict[int, int] = {}
    for item in filter(None, m.group(10).split(",")):
        b, _, c = item.partition(":")
        hist[int(b)] = hist.get(int(b), 0) + int(c)
    return VariantRun(steps=int(m.group(3)), rows=int(m.group(4)), attempted=int(m.group(5)),
                      stale=int(m.group(6)), queries=int(m.group(7)),
                      seconds=float(m.group(8)), delay_seconds=float(m.group(9)),
                      histogram=hist, threads=1, cpu_seconds=float(m.group(11) or 0.0))


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
        elif m := _CSVAR.match(line):
            r.variants.setdefault(m.group(2), VariantRun()).add(_variant_run(m))
        elif line.startswith(("CSSLOT ", "CSTHREAD ")):
            r.slot_lines.append(line)
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
    if _tls is not None:
        args.append("--mysql-ssl=on")
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
        # the scripts are given by path and found through LUA_PATH: the working directory
        # is free to hold the TLS files
        cwd = _tls[1] if _tls is not None else LUA_DIR
        proc = subprocess.run(args, env=environment(password), capture_output=True,
                              text=True, timeout=timeout, cwd=str(cwd))
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
