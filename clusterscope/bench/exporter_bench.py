"""`make bench` entry `exporter`: scrape time, CPU and peak memory of the exporter process
for synthetic (simulated) clusters of 2x4, 8x8, 48x16 and NDB's largest shape, 144 data
nodes x 32 LDM threads (+6 other threads each), and the ratio of the exporter's scrape time
to the bare SQL time of the same queries run back to back by one client in the same run.

The largest shape is also run with ndbinfo's round trips emulated: a pause of one assumed
data node round trip (ROUND_TRIP_SECONDS) per ndbinfo_max_rows rows, so the per-row cost of
real ndbinfo scans is in both the scrape and the bare SQL. Reported, never asserted.
Goals: 144x32 under 1 s per scrape (median) and under 150 MB RSS, 48x16 no slower than
0.37 s. Every collector runs, the slow ones (per-fragment views, record pools, histograms,
memory per table) on the first scrape, which `slow_collectors_seconds` reports: the cost
paid once per --scrape.slow-interval; `pool_scans_seconds` is the transaction and lock
pool scans' share of it (OPEN_PER_TC records in use per TC instance, a heavy load),
`lock_counters_seconds` the per-fragment lock counters'.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from ndbinfo_exporter import mycnf
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.scraper import Scraper
from ndbinfo_exporter.state import ExporterState, RestartLedger

from clusterscope.bench import synthetic
from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab, wait_for_port

SHAPES = [(2, 4), (8, 8), (48, 16), (144, 32)]
# (data nodes, LDM threads) run again with round trips emulated; the exporter sets
# ndbinfo_max_rows=256 for its session (MariaDB ignores it: the views batch instead)
EMULATED = (144, 32)
MAX_ROWS = 256
ROUND_TRIP_SECONDS = 0.0002  # assumed LAN round trip SQL node <-> data node per batch
SCRAPES = 7


class _Recording(Database):
    """Records the SQL of one scrape so the same statements can be timed bare."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.sql: list[str] = []

    def query(self, sql: str, timeout: float, aggregate: bool = False) -> list[tuple]:
        self.sql.append(sql)
        return super().query(sql, timeout, aggregate)


SLOW = {c.name for c in ALL if c.slow}
# the scans of whole record pools (every TC record, every ACC operation record), and the
# per-fragment lock counters that replace sampling them for lock waits
POOL_SCANS = {"cluster_transactions", "cluster_locks"}
LOCK_COUNTERS = {"locks_per_fragment"}
# TC records in use per TC instance in the synthetic tables, each with 3 row locks on 2
# replicas: a heavily loaded cluster (assumed, not measured), so the pool scans return
# 2 x 250 records and 3,000 locks per data node (72k and 432k rows at 144 data nodes)
OPEN_PER_TC = 250


def _collector_seconds(body: str, names: set[str]) -> float:
    """What the named collectors took in a scrape that ran them (their own duration
    metrics); for the slow ones, the cost paid once per --scrape.slow-interval."""
    total = 0.0
    for line in body.splitlines():
        if line.startswith("ndb_exporter_collector_duration_seconds{"):
            name = line.split('collector="', 1)[1].split('"', 1)[0]
            if name in names:
                total += float(line.rsplit(" ", 1)[1])
    return total


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run() -> dict:

    root = Path(tempfile.mkdtemp(prefix="cs-exporter-bench-"))
    root.chmod(0o755)
    lab = Lab(root, int(os.environ.get("CLUSTERSCOPE_PORT_BASE", "13300")))
    base, port = lab.path("exporter-test-sql"), lab.port("exporter-test-sql")
    http = lab.port("exporter-test-http")
    figures: dict[str, object] = {"simulated": True}
    mariadb.prepare_instance(base, port, {"innodb_buffer_pool_size": "64M"})
    mariadb.start_server(lab, "exporter-test-sql", "bench", "exporter bench server", base, port)
    try:
        sock = base / "mysqld.sock"
        mariadb.execute(sock, ["CREATE DATABASE IF NOT EXISTS ndbinfo"])
        mariadb.ensure_account(lab, sock, "ndbinfo_exporter", ["SELECT ON ndbinfo.*"])
        cnf = mariadb.client_config(lab, "ndbinfo_exporter", "ndbinfo_exporter", port)
        for nodes, ldm, emulate in [*((n, m, False) for n, m in SHAPES), (*EMULATED, True)]:
            key = f"{nodes}x{ldm}" + ("_round_trips" if emulate else "")
            conn = mariadb.socket_connect(sock)
            with conn.cursor() as cur:
                synthetic.create(cur)
                synthetic.populate(cur, nodes, ldm, open_per_tc=OPEN_PER_TC)
                if emulate:
                    synthetic.emulate_round_trips(cur, MAX_ROWS, ROUND_TRIP_SECONDS)
            conn.close()
            # the bare SQL: the exact statements of a regular scrape (the first one also runs
            # the slow collectors, which then serve their cached result for a minute),
            # back to back, one client
            rec = _Recording(mycnf.load(cnf), 10.0)
            recorder = Scraper(rec, ALL, ExporterState(RestartLedger(None)), 30.0)
            recorder.scrape()
            rec.sql.clear()
            recorder.scrape()
            rec.close()
            client = mariadb.connect(cnf)
            proc = subprocess.Popen(
                [sys.executable, "-m", "ndbinfo_exporter", "--config.my-cnf", str(cnf),
                 "--web.listen-address", f"127.0.0.1:{http}", "--query.timeout", "10s",
                 "--scrape.timeout", "30s", "--state.file",
                 str(root / "exporter-restarts.json")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_for_port(http, 20, alive=lambda p=proc: p.poll() is None)
                bare, walls, cpus, size, slow, pools, locks = [], [], [], 0, 0.0, 0.0, 0.0
                # alternate bare SQL and scrapes so the shared machine's load hits both alike
                for _ in range(SCRAPES):
                    t0 = time.perf_counter()
                    with client.cursor() as cur:
                        for sql in rec.sql:
                            cur.execute(sql)
                            cur.fetchall()
                    bare.append(time.perf_counter() - t0)
                    c0, t0 = _cpu_seconds(proc.pid), time.perf_counter()
                    with urllib.request.urlopen(f"http://127.0.0.1:{http}/metrics",
                                                timeout=60) as r:
                        body = r.read().decode()
                    walls.append(time.perf_counter() - t0)
                    cpus.append(_cpu_seconds(proc.pid) - c0)
                    if len(walls) == 1:  # the first scrape ran the slow collectors
                        slow = _collector_seconds(body, SLOW)
                        pools = _collector_seconds(body, POOL_SCANS)
                        locks = _collector_seconds(body, LOCK_COUNTERS)
                    size = sum(1 for line in body.splitlines()
                               if line.startswith("ndb_") and "ndb_exporter" not in line)
                rss = _peak_rss_mb(proc.pid)
            finally:
                proc.terminate()
                proc.wait(timeout=20)
                client.close()
            scrape, sql_t = statistics.median(walls), statistics.median(bare)
            figures[f"{key}_scrape_seconds"] = round(scrape, 4)
            figures[f"{key}_bare_sql_seconds"] = round(sql_t, 4)
            figures[f"{key}_exporter_to_sql_ratio"] = round(scrape / sql_t, 2)
            figures[f"{key}_exporter_cpu_seconds_per_scrape"] = round(statistics.median(cpus), 4)
            figures[f"{key}_peak_rss_mb"] = round(rss, 1)
            figures[f"{key}_series_per_data_node"] = round(size / nodes, 1)
            figures[f"{key}_slow_collectors_seconds"] = round(slow, 3)
            figures[f"{key}_pool_scans_seconds"] = round(pools, 3)
            figures[f"{key}_lock_counters_seconds"] = round(locks, 3)
        emulated = f"{EMULATED[0]}x{EMULATED[1]}_round_trips"
        figures[f"{emulated}_assumed"] = (f"{ROUND_TRIP_SECONDS * 1e3:g} ms per"
                                          f" {MAX_ROWS} rows")
        big, small = f"{SHAPES[-1][0]}x{SHAPES[-1][1]}", f"{SHAPES[0][0]}x{SHAPES[0][1]}"
        figures["large_vs_default_scrape_ratio"] = round(
            figures[f"{big}_scrape_seconds"] / figures[f"{small}_scrape_seconds"], 1)
        figures["large_vs_default_rss_ratio"] = round(
            figures[f"{big}_peak_rss_mb"] / figures[f"{small}_peak_rss_mb"], 2)
    finally:
        lab.stop("exporter-test-sql")
        shutil.rmtree(root, ignore_errors=True)
    return figures


if __name__ == "__main__":
    for k, v in run().items():
        print(f"{k} = {v}")
