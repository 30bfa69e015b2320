"""The real 3-node Galera lab: cluster forms, exporters see wsrep, a SIGKILLed node under
write load rejoins by IST, forced SSTs by rsync and mariabackup, whole-cluster restart from
the most advanced node (paging once while every node is down). The tracker's exported
recoveries are checked against the logs.

The tests share one cluster (galera_lab) and run in file order: each leaves 3 Synced nodes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import datetime
from pathlib import Path

import pymysql
import pytest
from helpers import eventually, scrape, val
from test_monitoring import _notifications, _vm, _wait_notification
from test_paging_lab import record_latency

from clusterscope.lab.mariadb import connect

pytestmark = pytest.mark.lab


def probe(lab, n: int):
    """Node n as the lab's mysqld_exporter probes it (multi-target, node2 with its own
    credentials), as VictoriaMetrics scrapes it through the inventory's targets."""
    auth = "client.node2" if n == 2 else "client"
    return scrape(lab.port("mysqld-exporter"), f"/probe?target=127.0.0.1:"
                  f"{lab.port(f'galera-node{n}')}&auth_module={auth}")


def cluster_size(lab, n: int) -> float | None:
    """wsrep_cluster_size as mysqld_exporter reports it for node n."""
    return val(probe(lab, n), "mysql_global_status_wsrep_cluster_size")


def recoveries(lab, node: str, kind: str, method: str) -> float:
    m = scrape(lab.port("galera-tracker"))
    return val(m, "galera_recoveries_total", cluster="lab-galera", node=node, kind=kind,
               method=method) or 0.0


def last_recovery(lab, node: str) -> dict:
    m = scrape(lab.port("galera-tracker"))
    rows = [dict(k[1]) | {"value": v} for k, v in m.items()
            if k[0] == "galera_recovery_last_duration_seconds" and dict(k[1])["node"] == node]
    assert len(rows) == 1, rows
    return rows[0]


def log_recovery_seconds(log: Path) -> float:
    """JOINER -> SYNCED of the last recovery, read straight from the node's error log."""
    stamps = {}
    for line in log.read_text(errors="replace").splitlines():
        for key in ("PRIMARY -> JOINER", "JOINED -> SYNCED"):
            if f"Shifting {key}" in line:
                m = re.match(r"(\d{4}-\d{2}-\d{2})\s+(\d{1,2}:\d{2}:\d{2})", line)
                stamps[key] = datetime.strptime(f"{m[1]} {m[2]}", "%Y-%m-%d %H:%M:%S")
    return (stamps["JOINED -> SYNCED"] - stamps["PRIMARY -> JOINER"]).total_seconds()


def test_cluster_forms_with_exporters_and_app_account(galera_lab) -> None:
    status = {s["name"]: s for s in galera_lab.status()["services"]}
    for n in (1, 2, 3):
        node = status[f"galera-node{n}"]
        assert node["running"] and node["port"] == galera_lab.port(f"galera-node{n}")
        assert Path(node["log"]).exists()
        cnf = Path(node["client_config"])
        assert cnf.stat().st_mode & 0o777 == 0o600
        assert status["mysqld-exporter"]["running"]
        m = probe(galera_lab, n)
        assert val(m, "mysql_up") == 1
        assert val(m, "mysql_global_status_wsrep_cluster_size") == 3
        assert val(m, "mysql_global_status_wsrep_local_state") == 4  # Synced
        assert any(k[0] == "mysql_galera_status_info" for k in m)
        assert val(m, "mysql_galera_evs_repl_latency_avg_seconds") is not None
    assert status["galera-tracker"]["extra"]["scrape"]["job"] == "galera_tracker"
    # The app account may create cs_* databases, and what it writes replicates.
    conn = connect(status["galera-node1"]["client_config"])
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS cs_galera_test")
        cur.execute("CREATE TABLE IF NOT EXISTS cs_galera_test.t"
                    " (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
        cur.execute("INSERT INTO cs_galera_test.t (v) VALUES (1)")
        with pytest.raises(pymysql.err.OperationalError):
            cur.execute("CREATE DATABASE other_db")
    conn.close()
    conn3 = connect(status["galera-node3"]["client_config"])
    with conn3.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM cs_galera_test.t")
        assert cur.fetchone()[0] >= 1
    conn3.close()


class Writer(threading.Thread):
    """Inserts into node1 until stopped; counts commits (a write load during the kill)."""

    def __init__(self, cnf: str) -> None:
        super().__init__(daemon=True)
        self.cnf = cnf
        self.stop = threading.Event()
        self.commits = 0

    def run(self) -> None:
        conn = None
        while not self.stop.is_set():
            try:
                conn = conn or connect(self.cnf, "cs_galera_test")
                with conn.cursor() as cur:
                    cur.execute("INSERT INTO t (v) VALUES (2)")
                self.commits += 1
            except pymysql.MySQLError:
                conn = None
                time.sleep(0.2)


def test_sigkill_under_load_then_rejoin_by_ist(galera_lab) -> None:
    node1 = galera_lab.service("galera-node1")
    before = recoveries(galera_lab, "node3", "ist", "ist")
    writer = Writer(node1["client_config"])
    writer.start()
    try:
        eventually(lambda: writer.commits > 20, 30, "writes")
        galera_lab.cli("lab", "galera", "kill-node", "3")
        node3 = galera_lab.service("galera-node3")
        assert node3["pid"] is None and not node3["running"]
        assert node3["extra"]["state"] == "killed"
        eventually(lambda: cluster_size(galera_lab, 1) == 2, 60,
                   "cluster size 2 on node1's exporter")
        m3 = probe(galera_lab, 3)
        assert val(m3, "mysql_up") == 0
        committed_while_down = writer.commits
        galera_lab.cli("lab", "galera", "start-node", "3")
        eventually(lambda: writer.commits > committed_while_down + 20, 30,
                   "writes after the rejoin")
    finally:
        writer.stop.set()
        writer.join(10)
    assert galera_lab.service("galera-node3")["running"]
    eventually(lambda: recoveries(galera_lab, "node3", "ist", "ist") == before + 1, 30,
               "an IST recovery of node3 in the tracker")
    last = last_recovery(galera_lab, "node3")
    assert last["kind"] == "ist" and last["donor"] in ("node1", "node2")
    log = Path(galera_lab.service("galera-node3")["log"])
    assert abs(last["value"] - log_recovery_seconds(log)) <= 1.0
    eventually(lambda: cluster_size(galera_lab, 1) == 3, 30, "cluster size 3")


@pytest.mark.parametrize("method", ["rsync", "mariabackup"])
def test_forced_sst_is_exported_with_its_method(galera_lab, method: str) -> None:
    before = recoveries(galera_lab, "node3", "sst", method)
    galera_lab.cli("lab", "galera", "stop-node", "3")
    assert galera_lab.service("galera-node3")["extra"]["state"] == "stopped"
    galera_lab.cli("lab", "galera", "start-node", "3", "--force-sst", "--sst-method", method)
    eventually(lambda: recoveries(galera_lab, "node3", "sst", method) == before + 1, 30,
               f"an SST ({method}) recovery of node3")
    last = last_recovery(galera_lab, "node3")
    assert (last["kind"], last["method"]) == ("sst", method)
    log = Path(galera_lab.service("galera-node3")["log"])
    assert abs(last["value"] - log_recovery_seconds(log)) <= 1.0


def count_rows(lab, n: int) -> int:
    conn = connect(lab.service(f"galera-node{n}")["client_config"], "cs_galera_test")
    with conn.cursor() as cur:
        cur.execute("SET SESSION wsrep_sync_wait = 1")  # read after all applied writes
        cur.execute("SELECT COUNT(*) FROM t")
        rows = cur.fetchone()[0]
        cur.execute("SHOW STATUS LIKE 'wsrep_cluster_size'")
        size = int(cur.fetchone()[1])
    conn.close()
    return rows if size == 3 else -size


def insert(lab, n: int) -> None:
    conn = connect(lab.service(f"galera-node{n}")["client_config"], "cs_galera_test")
    with conn.cursor() as cur:
        cur.execute("INSERT INTO t (v) VALUES (3)")
    conn.close()


def test_whole_cluster_restart_from_the_safe_to_bootstrap_node(galera_lab) -> None:
    # node1 and node2 leave cleanly, so node3 (the last one in the primary component) is
    # marked safe_to_bootstrap; it takes writes alone and then crashes.
    galera_lab.cli("lab", "galera", "stop-node", "1")
    galera_lab.cli("lab", "galera", "stop-node", "2")
    insert(galera_lab, 3)
    galera_lab.cli("lab", "galera", "kill-node", "3")
    out = galera_lab.cli("lab", "up", "--galera").stdout
    assert "restarting the cluster from node3 (safe_to_bootstrap: 1)" in out
    counts = {count_rows(galera_lab, n) for n in (1, 2, 3)}
    assert len(counts) == 1 and counts.pop() > 0


def test_crash_of_every_node_bootstraps_the_most_advanced(galera_lab, monitoring_lab,
                                                         artifacts: Path) -> None:
    """node1 crashes first; node2 and node3 take more writes, then both crash. No node is
    safe_to_bootstrap; node1 is behind, node2 and node3 tie (lowest number wins).

    The same outage is the one an on-call engineer must be paged for: while every node is
    down, GaleraClusterDown (critical) reaches the webhook's critical receiver, once for
    the cluster (the nodes' own warnings are inhibited by it), and it resolves once `lab
    up --galera` has the cluster back."""
    vm = _vm(monitoring_lab)
    vm.wait_for('mysql_up{job="galera"} == 1', timeout=60, predicate=lambda r: len(r) == 3)
    galera_lab.cli("lab", "galera", "kill-node", "1")
    eventually(lambda: cluster_size(galera_lab, 2) == 2, 60, "cluster size 2")
    insert(galera_lab, 2)
    count_rows(galera_lab, 3)  # node3 has applied the write before the crash
    galera_lab.cli("lab", "galera", "kill-node", "2")
    galera_lab.cli("lab", "galera", "kill-node", "3")
    t_down = time.time()
    try:
        got = _wait_notification(galera_lab, "GaleraClusterDown", "firing", t_down, 240,
                                 cluster="lab-galera")
        assert got["labels"]["severity"] == "critical" and got["path"] == "/critical"
        pages = [r for r in _notifications(galera_lab) if r["alertname"] == "GaleraClusterDown"
                 and r["status"] == "firing" and r["received_at"] >= t_down]
        assert len({json.dumps(r["labels"], sort_keys=True) for r in pages}) == 1
    finally:
        out = galera_lab.cli("lab", "up", "--galera", timeout=900).stdout
    assert "no node is safe_to_bootstrap" in out
    positions = dict(re.findall(r"(node\d)=(-?\d+)", out))
    assert int(positions["node1"]) < int(positions["node2"]) == int(positions["node3"])
    assert "bootstrapping the most advanced, node2" in out
    counts = {count_rows(galera_lab, n) for n in (1, 2, 3)}
    assert len(counts) == 1 and counts.pop() > 0
    vm.wait_for('mysql_global_status_wsrep_cluster_size{job="galera"} == 3', timeout=300,
                predicate=lambda r: len(r) == 3)
    _wait_notification(galera_lab, "GaleraClusterDown", "resolved", t_down, 180,
                       cluster="lab-galera")
    record_latency(artifacts, GaleraClusterDown_seconds_from_kill_to_webhook=(
        got["received_at"] - t_down))
