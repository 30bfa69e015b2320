"""`make bench` entry `changes`: how soon a configuration change is listed, and what the
change detector's polling costs.

A lab of its own (Galera, the NDB simulator, monitoring). Latency: a `SET GLOBAL
max_connections` on Galera node 1, alternately up and down by one, CHANGES times; for each,
the seconds from the statement to the line in VictoriaLogs (the detector's poll, the
collector's read and batch) and to `clusterscope changes` listing it (one more query).
Cost: the detector's own CPU (utime + stime of its process) per poll of every node, over
COST_SECONDS of its normal polling (`clusterscope_changes_polls_total` counts the polls),
and the time one node's reading takes from the detector's side (SHOW GLOBAL VARIABLES on
the connection it keeps), which bounds what the database spends on it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
import urllib.request
from pathlib import Path

from clusterscope.bench.cli_runner import fresh_lab, run_cli

CHANGES = int(os.environ.get("CLUSTERSCOPE_BENCH_CHANGES", "6"))
COST_SECONDS = float(os.environ.get("CLUSTERSCOPE_BENCH_CHANGES_COST_SECONDS", "60"))
READS = 30


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _polls(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("clusterscope_changes_polls_total "):
                return float(line.split()[1])
    raise RuntimeError("the detector serves no clusterscope_changes_polls_total")


def _latencies(lab, env: dict) -> tuple[list[float], list[float]]:
    from clusterscope.analysis import change_verdicts
    from clusterscope.lab.endpoints import lab_metrics, logs_for

    vlogs = logs_for(lab_metrics(lab.root))
    sock = lab.root / "galera" / "node1" / "mysqld.sock"

    def sql(stmt: str) -> str:
        return subprocess.run(["mysql", "-uroot", "-S", str(sock), "-N", "-e", stmt],
                              capture_output=True, text=True, check=True).stdout.strip()

    base = int(sql("SELECT @@GLOBAL.max_connections"))
    store, listed = [], []
    for i in range(CHANGES):
        value = base + (1 if i % 2 == 0 else 0)
        t0 = time.time()
        sql(f"SET GLOBAL max_connections = {value}")
        got_store = got_cli = None
        while time.time() - t0 < 180 and got_cli is None:
            found = [c for c in change_verdicts.read(vlogs, t0 - 1) if c.name == "max_connections"
                     and c.first.fields.get("new") == str(value)]
            if found and got_store is None:
                got_store = time.time() - t0
            if found and str(value) in run_cli(env, "changes", "--since", "5m"):
                got_cli = time.time() - t0
            time.sleep(0.5)
        if got_cli is None:
            raise RuntimeError(f"change {i + 1} was not listed within 180 s")
        store.append(got_store)
        listed.append(got_cli)
        time.sleep(12)  # the next change in another poll
    sql(f"SET GLOBAL max_connections = {base}")
    return store, listed


def _read_cost(lab) -> float:
    """Milliseconds for one reading of Galera node 1 on a kept connection, as the detector
    takes it."""
    from clusterscope_changes import readers
    from ndbinfo_exporter import mycnf
    from ndbinfo_exporter.db import open_connection

    path, sections = mycnf.read_sections(lab.root / "clients" / "exporters.my.cnf")
    cfg = mycnf.from_section(path, sections, "client", dict(os.environ))
    cfg = cfg.at(f"127.0.0.1:{lab.port('galera-node1')}")
    conn = open_connection(cfg, 5.0)
    try:
        t0 = time.perf_counter()
        for _ in range(READS):
            readers.read_variables(conn)
        return (time.perf_counter() - t0) / READS * 1000
    finally:
        conn.close()


def run() -> dict:
    root, env = fresh_lab("cs-bench-changes-")
    try:
        run_cli(env, "lab", "up", "--galera", "--ndb", "--monitoring")
        from clusterscope.lab.core import Lab
        lab = Lab(root)
        det = lab.service("change-detector")
        cpu0, polls0, t0 = _cpu_seconds(det.pid), _polls(det.port), time.time()
        time.sleep(COST_SECONDS)
        cpu1, polls1, t1 = _cpu_seconds(det.pid), _polls(det.port), time.time()
        store, listed = _latencies(lab, env)
        read_ms = _read_cost(lab)
    finally:
        run_cli(env, "lab", "down", timeout=600)
    polls = polls1 - polls0
    return {
        "changes": CHANGES,
        "seconds_to_log_store_median": round(statistics.median(store), 1),
        "seconds_to_log_store_max": round(max(store), 1),
        "seconds_to_clusterscope_changes_median": round(statistics.median(listed), 1),
        "seconds_to_clusterscope_changes_max": round(max(listed), 1),
        "polls": int(polls), "nodes_per_poll": "3 Galera + 2 NDB SQL + NDB data nodes",
        "detector_cpu_ms_per_poll": round((cpu1 - cpu0) / polls * 1000, 1) if polls else None,
        "detector_cpu_share_of_one_core_ratio": round((cpu1 - cpu0) / (t1 - t0), 4),
        "one_node_reading_ms": round(read_ms, 1),
    }
