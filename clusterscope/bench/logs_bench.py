"""`make bench` entry `logs`: what the log store (VictoriaLogs) and the shipper (the
OpenTelemetry Collector) cost at the lab's log rate, and how fast the shipper's parsing runs.

A private VictoriaLogs and collector run under a temporary directory on the scratch ports
(`scratch-vlogs`, `scratch-otelcol*`), configured by the same code as the lab's
(clusterscope_logs.collector.shipper_config), so a running lab is not touched. Lines are the
recorded MariaDB IST log (tests/fixtures/galera, recorded in the lab) with fresh timestamps.

- steady: lines written at the lab's log rate for STEADY_SECONDS; CPU (share of one core,
  from /proc/<pid>/stat utime+stime) and resident memory (VmRSS) of each process, sampled
  every second, reported as the mean CPU and the peak RSS;
- burst: LINES lines written at once, Galera parsing (a Galera node's error log: unwrap,
  multiline, regex, time, level) vs a plain daemon log (severity only): lines/s until
  VictoriaLogs counts them all, and the parsed/plain throughput ratio.

The lab's log rate is the running lab's (its VictoriaLogs' lines of the last 10 minutes)
when one is up, else LAB_LOG_RATE, measured in the lab as below.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

from clusterscope_inventory.description import LogSource
from clusterscope_logs import collector

from clusterscope import gotools
from clusterscope.clients.vlogs import VLogs, VLogsError
from clusterscope.lab import logs_stack
from clusterscope.lab.core import Lab, lab_dir_from_env, wait_http
from clusterscope.logs.vlogs_args import vlogs_args
from clusterscope.paths import REPO

FIXTURE = REPO / "tests" / "fixtures" / "galera" / "restart-node3-ist-recover1-down20.log"
LINES = 40000
STEADY_SECONDS = 60
# Lines per second the lab wrote over 10 minutes with every part up, a Galera node forced
# through SST and restarted and a simulated NDB node restart (what this benchmark printed
# as lab_log_rate_lines_per_second with that lab running: 2.23). Used when no lab is up.
LAB_LOG_RATE = 2.2


def _lines(n: int, tag: str) -> list[str]:
    body = [ln.split(" [", 1)[1] if ln[:4].isdigit() else None
            for ln in FIXTURE.read_text().splitlines() if ln and not ln.startswith("#")]
    body = [b for b in body if b]
    now = datetime.now()
    stamp = f"{now:%Y-%m-%d} {now.hour:2d}:{now:%M:%S} 0"
    return [f"{stamp} [{body[i % len(body)]} {tag}-{i}" for i in range(n)]


def lab_log_rate() -> tuple[float, str]:
    """The running lab's lines per second over the last 10 minutes, else LAB_LOG_RATE."""
    lab = Lab(lab_dir_from_env())
    if lab.running(logs_stack.VLOGS):
        try:
            rows = VLogs(logs_stack.vlogs_url(lab)).stats("_time:10m * | stats count() as lines")
            if rows:
                return float(rows[0]["value"][1]) / 600, f"the lab at {lab.root}"
        except VLogsError:
            pass
    return LAB_LOG_RATE, "LAB_LOG_RATE (no lab running)"


class Usage:
    """CPU seconds and resident memory of some processes, sampled once a second."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.rss: dict[str, list[int]] = {n: [] for n in pids}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def cpu_seconds(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def rss_bytes(pid: int) -> int:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def _run(self) -> None:
        while not self.stop.wait(1.0):
            for name, pid in self.pids.items():
                self.rss[name].append(self.rss_bytes(pid))

    def __enter__(self) -> Usage:
        self.t0 = time.monotonic()
        self.cpu0 = {n: self.cpu_seconds(p) for n, p in self.pids.items()}
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.elapsed = time.monotonic() - self.t0
        self.cpu = {n: self.cpu_seconds(p) - self.cpu0[n] for n, p in self.pids.items()}

    def figures(self, name: str) -> dict:
        return {"cpu_percent_of_one_core": round(100 * self.cpu[name] / self.elapsed, 2),
                "rss_mib_peak": round(max(self.rss[name] or [0]) / 2**20, 1)}


def _count(vlogs: VLogs, component: str, tag: str) -> int:
    rows = vlogs.stats(f'_time:1h {{component="{component}"}} ~"{tag}-" | stats count() as n')
    return int(float(rows[0]["value"][1])) if rows else 0


def _burst(vlogs: VLogs, path: Path, component: str, n: int) -> float:
    tag = f"bench-{component}-{time.time_ns()}"
    t0 = time.monotonic()
    with open(path, "a") as f:
        f.write("\n".join(_lines(n, tag)) + "\n")
    deadline = t0 + 300
    while _count(vlogs, component, tag) < n:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{component}: {_count(vlogs, component, tag)} of {n} lines"
                               " in VictoriaLogs after 300 s")
        time.sleep(0.2)
    return time.monotonic() - t0


def _steady(path: Path, rate: float, seconds: int) -> int:
    """Append lines at `rate` per second for `seconds`; how many were written."""
    tag = f"bench-steady-{time.time_ns()}"
    lines = _lines(int(rate * seconds) + 1, tag)
    written, t0 = 0, time.monotonic()
    with open(path, "a") as f:
        while (elapsed := time.monotonic() - t0) < seconds:
            due = min(len(lines), int(elapsed * rate) + 1)
            if due > written:
                f.write("\n".join(lines[written:due]) + "\n")
                f.flush()
                written = due
            time.sleep(0.05)
    return written


def run() -> dict:
    base = int(os.environ.get("CLUSTERSCOPE_BENCH_PORT_BASE",
                              os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "27300")))
    rate, rate_from = lab_log_rate()
    with tempfile.TemporaryDirectory(prefix="cs-bench-logs-") as tmp:
        lab = Lab(Path(tmp), base)
        parsed, plain = lab.path("logs") / "parsed.log", lab.path("logs") / "plain.log"
        parsed.touch()
        plain.touch()
        vl_port, health = lab.port("scratch-vlogs"), lab.port("scratch-otelcol-health")
        cfg = collector.shipper_config(
            [LogSource("bench", "node3", "mariadb", str(parsed), "Local", False)],
            endpoint=f"http://127.0.0.1:{vl_port}{collector.VLOGS_OTLP_PATH}",
            storage_dir=str(lab.path("otelcol", "storage")),
            health_endpoint=f"127.0.0.1:{health}", metrics_host="127.0.0.1",
            metrics_port=lab.port("scratch-otelcol"),
            extra=[collector.Stream(str(plain), "bench-plain",
                                    {"cluster": "bench", "component": "bench-plain"},
                                    "Local", daemon=True)])
        config = lab.path("otelcol") / "otelcol.yaml"
        config.write_text(collector.render(cfg))
        try:
            vl = lab.spawn("scratch-vlogs", "bench", "VictoriaLogs for the bench",
                           [str(gotools.build(gotools.TOOLS["victoria-logs"])),
                            *vlogs_args(lab.path("vlogs"), f"127.0.0.1:{vl_port}", "1d")],
                           port=vl_port, wait_ready=lambda: wait_http(
                               f"http://127.0.0.1:{vl_port}/health", 60))
            oc = lab.spawn("scratch-otelcol", "bench", "the collector for the bench",
                           [str(gotools.build(gotools.TOOLS["otelcol"])), f"--config={config}"],
                           port=lab.port("scratch-otelcol"), wait_ready=lambda: wait_http(
                               f"http://127.0.0.1:{health}/", 60))
            vlogs = VLogs(f"http://127.0.0.1:{vl_port}")
            pids = {"victoria-logs": vl.pid, "otelcol": oc.pid}
            with Usage(pids) as idle:
                time.sleep(10)
            with Usage(pids) as steady:
                written = _steady(parsed, rate, STEADY_SECONDS)
            with Usage(pids) as burst:
                parsed_s = _burst(vlogs, parsed, "mariadb", LINES)
                plain_s = _burst(vlogs, plain, "bench-plain", LINES)
        finally:
            lab.stop("scratch-otelcol")
            lab.stop("scratch-vlogs")
    out: dict = {"lab_log_rate_lines_per_second": round(rate, 2), "lab_log_rate_from": rate_from,
                 "steady_seconds": STEADY_SECONDS, "steady_lines": written}
    for name in pids:
        for phase, usage in (("idle", idle), ("steady", steady), ("burst", burst)):
            for k, v in usage.figures(name).items():
                out[f"{name}_{phase}_{k}"] = v
    out.update({"burst_lines": LINES, "parsed_lines_per_second": round(LINES / parsed_s),
                "plain_lines_per_second": round(LINES / plain_s),
                # parsed/plain throughput: what the Galera parsing costs
                "parsed_vs_plain_throughput_ratio": round(plain_s / parsed_s, 3),
                # the collector's CPU at the lab's rate, relative to idle (its polling)
                "otelcol_steady_vs_idle_cpu_ratio": round(
                    steady.cpu["otelcol"] / steady.elapsed
                    / max(idle.cpu["otelcol"] / idle.elapsed, 1e-6), 2)})
    return out
