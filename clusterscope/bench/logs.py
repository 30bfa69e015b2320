"""`make bench` entry `logs`: how fast the lab's promtail pipeline ships real log lines to a
real Loki, with the parsing stages vs without them (same run, same machine).

A private Loki and promtail run under a temporary directory on the scratch port offsets
(`bench-loki`, ...), so a running lab is not touched. Lines are the recorded MariaDB IST log
repeated with fresh timestamps; the figure is lines/s from the first write until Loki
returns the last line.
"""

from __future__ import annotations

import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

from clusterscope.clients.loki import Loki
from clusterscope.lab import logs
from clusterscope.lab.core import Lab, Service
from clusterscope.paths import REPO

FIXTURE = REPO / "tests" / "fixtures" / "galera" / \
    "restart-node3-ist-recover1-down20.log"
LINES = 40000


def _lines(n: int, tag: str) -> list[str]:
    body = [ln.split(" [", 1)[1] if ln[:4].isdigit() else None
            for ln in FIXTURE.read_text().splitlines() if ln and not ln.startswith("#")]
    body = [b for b in body if b]
    now = datetime.now()
    stamp = f"{now:%Y-%m-%d} {now.hour:2d}:{now:%M:%S} 0"
    return [f"{stamp} [{body[i % len(body)]} {tag}-{i}" for i in range(n)]


def _ship(lab: Lab, loki: Loki, name: str, component: str, n: int) -> float:
    log = lab.path("logs") / f"{name}.log"
    tag = f"bench-{name}-{time.time_ns()}"
    lines = _lines(n, tag)
    t0 = time.monotonic()
    start = time.time() - 60
    log.write_text("\n".join(lines) + "\n")
    last = f"{tag}-{n - 1}"
    loki.wait_for(f'{{component="{component}"}} |= "{last}"', start, timeout=300,
                  interval=0.2)
    took = time.monotonic() - t0
    counted = loki.instant(f'sum(count_over_time({{component="{component}"}} |= "{tag}-"'
                           ' [10m]))')
    got = int(float(counted[0]["value"][1])) if counted else 0
    if got != n:
        raise RuntimeError(f"{name}: {got} of {n} lines in Loki")
    return took


def run() -> dict:
    base = int(os.environ.get("CLUSTERSCOPE_BENCH_PORT_BASE", "27300"))
    with tempfile.TemporaryDirectory(prefix="cs-bench-logs-") as tmp:
        lab = Lab(Path(tmp), base)
        for name in ("parsed", "plain"):
            # `parsed` is a Galera node's error log (multiline, regex, timestamp, level
            # stages); `plain` a daemon's log (the severity stage only)
            path = lab.path("logs") / f"{name}.log"
            path.touch()
            extra = {"error_log": str(path)} if name == "parsed" else {}
            lab.register(Service(name=f"bench-{name}", part="bench", what="bench input",
                                 host="127.0.0.1", port=None, pid=None, log=str(path),
                                 extra=extra))
        try:
            logs.up(lab)
            loki = Loki(logs.loki_url(lab))
            parsed = _ship(lab, loki, "parsed", "mariadb", LINES)
            plain = _ship(lab, loki, "plain", "bench-plain", LINES)
        finally:
            logs.down(lab)
    return {"lines": LINES, "parsed_lines_per_second": round(LINES / parsed),
            "plain_lines_per_second": round(LINES / plain),
            # parsed/plain throughput: what the Galera parsing stages cost
            "parsed_vs_plain_throughput_ratio": round(plain / parsed, 3)}
