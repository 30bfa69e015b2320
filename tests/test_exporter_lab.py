"""ndbinfo_exporter in the lab: against the NDB simulator (real MariaDB serving ndbinfo),
scraped while the simulator restarts a data node."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import helpers
import pymysql
import pytest
from helpers import eventually, series, val
from ndbinfo_exporter import schema

from clusterscope.lab import mariadb

pytestmark = pytest.mark.lab

COMPLETED = schema.RESTART_COMPLETED
# the lab's exporter serves every NDB cluster of the lab's description on /probe, as the
# deployment's does
PROBE = "/probe?cluster=lab-ndb"


def scrape(port: int) -> helpers.Samples:
    return helpers.scrape(port, PROBE)


def restart_row(cnf: str, node: int) -> dict:
    conn = mariadb.connect(cnf)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM ndbinfo.restart_info WHERE node_id = %s", (node,))
            row = cur.fetchone()
            cols = [d[0].lower() for d in cur.description]
    finally:
        conn.close()
    return dict(zip(cols, row, strict=True)) if row else {}


def restart_and_watch(lab, port: int, node: int, profile: str, before: float,
                      on_midway=None, timeout: float = 150) -> list[int]:
    """Run a simulated restart, scraping every 0.5 s; returns the statuses seen."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterscope.cli", "lab", "ndb", "restart-node", str(node),
         "--profile", profile, "--time-scale", "120"],
        env=lab.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[int] = []
    deadline = time.monotonic() + timeout
    midway_done = on_midway is None
    try:
        while time.monotonic() < deadline:
            try:
                ss = scrape(port)
            except OSError:
                time.sleep(0.5)  # the exporter is being restarted
                continue
            st = val(ss, "ndb_restart_status", node_id=node)
            if st is not None and (not seen or seen[-1] != int(st)):
                seen.append(int(st))
            if not midway_done and st is not None and int(st) not in COMPLETED:
                on_midway()
                midway_done = True
                continue
            done = val(ss, "ndb_restarts_completed_total", node_id=node) or 0
            if done > before and proc.poll() is not None:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"restart of node {node} not seen completed within"
                                 f" {timeout:.0f} s; statuses seen: {seen}")
    finally:
        if proc.poll() is None:
            proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stdout.read() if proc.stdout else ""
    return seen


def test_exporter_in_the_lab_through_restarts(ndb_lab) -> None:
    svc = ndb_lab.service("ndb-exporter")
    assert svc["running"] and svc["simulated"]
    port = svc["port"]
    cnf = ndb_lab.service("ndb-sql")["client_config"]
    ss = scrape(port)
    assert val(ss, "ndb_up") == 1
    ldm = [lbl for lbl, _ in series(ss, "ndb_thread_cpu_percent")
           if lbl["thread_name"] == "ldm" and lbl["mode"] == "exec"]
    assert ldm, "no LDM CPU series"
    assert [v for _, v in series(ss, "ndb_transporter_sent_bytes_total") if v > 0]
    assert val(ss, "ndb_lcp_progress_ratio") is not None
    node = 2
    before = val(ss, "ndb_restarts_completed_total", node_id=node) or 0

    # a 7.6 restart: its phases appear, and exactly one completed restart is counted
    seen = restart_and_watch(ndb_lab, port, node, "7.6", before)
    print("7.6 restart statuses seen by the exporter:", seen)
    assert len(seen) >= 2 and seen[-1] in COMPLETED, seen
    ss = scrape(port)
    assert val(ss, "ndb_restarts_completed_total", node_id=node) == before + 1
    row = restart_row(cnf, node)
    for col, value in row.items():
        if col.startswith("secs_") and value is not None:
            assert val(ss, "ndb_restart_phase_seconds", node_id=node,
                       phase=col[len("secs_"):]) == value, col
    assert val(ss, "ndb_restart_total_seconds", node_id=node) == row["total_restart_secs"]

    # a 7.5 restart; the exporter is killed and started again half way: counted once
    from clusterscope.lab import ndb_exporter
    from clusterscope.lab.core import Lab

    def kill_and_restart() -> None:
        pid = ndb_lab.service("ndb-exporter")["pid"]
        os.kill(pid, signal.SIGKILL)
        lab = Lab(ndb_lab.root, ndb_lab.port_base)
        deadline = time.monotonic() + 20
        while lab.running("ndb-exporter") and time.monotonic() < deadline:
            time.sleep(0.2)
        ndb_exporter.up(lab)

    restart_and_watch(ndb_lab, port, node, "7.5", before + 1, on_midway=kill_and_restart)
    ss = scrape(port)
    assert val(ss, "ndb_restarts_completed_total", node_id=node) == before + 2
    row = restart_row(cnf, node)
    assert val(ss, "ndb_restart_total_seconds", node_id=node) == row["total_restart_secs"]
    assert val(ss, "ndb_restart_phase_seconds", node_id=node, phase="restore_fragments") == \
        row["secs_restore_fragments"]


def wait_scrape(port: int, pred, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        ss = scrape(port)
        if pred(ss) or time.monotonic() > deadline:
            return ss
        time.sleep(0.5)


def test_exporter_in_the_lab_under_faults(ndb_lab) -> None:
    port = ndb_lab.service("ndb-exporter")["port"]

    # ndbinfo offline: no data and ndb_up 0, said as such (not an empty cluster)
    ndb_lab.cli("lab", "ndb", "fault", "ndbinfo-offline")
    try:
        ss = wait_scrape(port, lambda s: val(s, "ndb_ndbinfo_offline") == 1)
        assert val(ss, "ndb_ndbinfo_offline") == 1 and val(ss, "ndb_up") == 0
        assert not series(ss, "ndb_node_status") and not series(ss, "ndb_thread_cpu_percent")
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "ndbinfo-offline", "--off")
    ss = wait_scrape(port, lambda s: val(s, "ndb_up") == 1)
    assert val(ss, "ndb_up") == 1 and val(ss, "ndb_ndbinfo_offline") == 0

    # NULL columns (version skew): those samples go, the collector still succeeds
    ndb_lab.cli("lab", "ndb", "fault", "null-columns", "--view", "cpustat",
                "--columns", "OS_user")
    try:
        ss = wait_scrape(port, lambda s: not [1 for lbl, _ in series(s, "ndb_thread_cpu_percent")
                                              if lbl["mode"] == "os_user"])
        modes = {lbl["mode"] for lbl, _ in series(ss, "ndb_thread_cpu_percent")}
        assert "os_user" not in modes and "exec" in modes
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "clear")

    # a view that errors: its collector fails, the others keep working
    ndb_lab.cli("lab", "ndb", "fault", "view-error", "--view", "counters")
    try:
        ss = wait_scrape(port, lambda s: val(s, "ndb_exporter_collector_success",
                                             collector="counters") == 0)
        assert val(ss, "ndb_exporter_collector_success", collector="counters") == 0
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
        assert val(ss, "ndb_up") == 1
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "clear")
    ss = wait_scrape(port, lambda s: val(s, "ndb_exporter_collector_success",
                                         collector="counters") == 1)
    assert series(ss, "ndb_counters_total")


def node_ids(cnf: str, view: str = "nodes") -> set[int]:
    conn = mariadb.connect(cnf)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT DISTINCT node_id FROM ndbinfo.{view}")
            return {int(n) for (n,) in cur.fetchall()}
    finally:
        conn.close()


def test_a_stopped_data_node_is_configured_and_not_running(ndb_lab) -> None:
    port = ndb_lab.service("ndb-exporter")["port"]
    cnf = ndb_lab.service("ndb-sql")["client_config"]
    node = 2
    before = val(scrape(port), "ndb_restarts_completed_total", node_id=node) or 0
    ndb_lab.cli("lab", "ndb", "stop-node", str(node))
    stopped = time.monotonic()
    try:
        # a stopped data node has no row in nodes, processes, cpustat (Ndbinfo scans reach
        # only the data nodes that are up: storage/ndb/src/kernel/vm/DbinfoScan)
        eventually(lambda: node not in node_ids(cnf), 5, f"node {node} gone from nodes")
        gone_after = time.monotonic() - stopped
        print(f"node {node} left ndbinfo.nodes {gone_after:.1f} s after stop-node")
        assert node not in node_ids(cnf, "processes")
        ss = eventually(lambda: (s := scrape(port)) and val(
            s, "ndb_data_node_running", node_id=node) == 0 and s, 15,
            "the exporter shows the stopped node as not running")
        assert val(ss, "ndb_data_node_running", node_id=1) == 1
        assert val(ss, "ndb_up") == 1
        assert not [lbl for lbl, _ in series(ss, "ndb_node_status")
                    if lbl["node_id"] == str(node)]
    finally:
        out = ndb_lab.cli("lab", "ndb", "start-node", str(node), "--time-scale", "120",
                          "--wait", timeout=180)
    assert "completed" in out.stdout
    ss = eventually(lambda: (s := scrape(port)) and val(
        s, "ndb_restarts_completed_total", node_id=node) == before + 1 and s, 15,
        "the stop/start counted as one completed restart")
    assert val(ss, "ndb_data_node_running", node_id=node) == 1
    assert val(ss, "ndb_restart_status", node_id=node) in COMPLETED


def test_rolling_upgrade_version_skew(ndb_lab) -> None:
    port = ndb_lab.service("ndb-exporter")["port"]
    cnf = ndb_lab.service("ndb-sql")["client_config"]
    version = ndb_lab.service("ndb-model")["extra"]["version"]

    def select(sql: str) -> list[tuple]:
        conn = mariadb.connect(cnf)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall())
        finally:
            conn.close()

    try:
        # 8.0.37: transporter_details without last_recv (9.x) nor sendbuffer_* (8.0.38)
        ndb_lab.cli("lab", "ndb", "set-version", "8.0.37")
        with pytest.raises(pymysql.err.OperationalError) as err:
            select("SELECT last_recv FROM ndbinfo.transporter_details")
        assert err.value.args[0] == 1054  # unknown column
        # within a minute: a collector found unsupported on the version before is retried
        # RETRY_UNSERVED (30 s) later (ndbinfo_exporter/scraper.py), then at the next scrape
        ss = eventually(lambda: (s := scrape(port)) and series(
            s, "ndb_transporter_encrypted") and s, 60, "transporter_details collected")
        assert val(ss, "ndb_exporter_collector_success",
                   collector="transporter_details") == 1

        # an 8.4 SQL node over 8.0.37 data nodes: the columns they lack read NULL, and
        # the collector keeps the rest
        ndb_lab.cli("lab", "ndb", "set-version", "8.4", "--data-nodes", "8.0.37")
        assert select("SELECT DISTINCT sendbuffer_used_bytes FROM"
                      " ndbinfo.transporter_details") in ([(None,)], [])
        ss = eventually(lambda: (s := scrape(port)) and val(
            s, "ndb_exporter_collector_success", collector="transporter_details") == 1
            and s, 60, "transporter_details collected under skew")
        assert val(ss, "ndb_up") == 1

        # an 8.0 SQL node over 7.6 data nodes: the tables they lack answer 0 rows and a
        # Note; only their collectors say so, ndbinfo as a whole stays up
        ndb_lab.cli("lab", "ndb", "set-version", "8.0.38", "--data-nodes", "7.6")
        unserved = {v.name for v in schema.views_for("8.0.38")} - {
            v.name for v in schema.views_for("7.6")}
        ss = eventually(lambda: (s := scrape(port)) and val(
            s, "ndb_exporter_collector_supported", collector="transporter_details") == 0
            and s, 60, "transporter_details unsupported while its table is not served")
        assert "transporter_details" in unserved
        assert val(ss, "ndb_up") == 1 and val(ss, "ndb_ndbinfo_offline") == 0
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
        assert not [1 for lbl, v in series(ss, "ndb_exporter_collector_success")
                    if v == 0], "no collector fails under version skew"

        # 7.6 SQL node over 7.5.3 data nodes: a table they lack is "no such table"
        ndb_lab.cli("lab", "ndb", "set-version", "7.6", "--data-nodes", "7.5.3")
        missing = sorted({v.name for v in schema.views_for("7.6")}
                         - {v.name for v in schema.views_for("7.5.3")})
        assert "table_fragments" in missing
        with pytest.raises(pymysql.err.MySQLError) as err:
            select("SELECT * FROM ndbinfo.table_fragments")
        assert err.value.args[0] in (1146, 1356)
        ss = eventually(lambda: (s := scrape(port)) and val(s, "ndb_up") == 1 and s, 60,
                        "the exporter up over 7.5 data nodes")
        assert not [1 for lbl, v in series(ss, "ndb_exporter_collector_success")
                    if v == 0], "no collector fails under version skew"
    finally:
        ndb_lab.cli("lab", "ndb", "set-version", version)
    # back on one version: every collector this version has runs again, without a restart
    ss = eventually(lambda: (s := scrape(port)) and not [
        1 for _, v in series(s, "ndb_exporter_collector_success") if v == 0] and s, 40,
        "every collector succeeds after the upgrade")
    assert val(ss, "ndb_up") == 1


NEW_COLLECTORS = ("memory_per_fragment", "cluster_transactions", "cluster_locks",
                  "locks_per_fragment", "tc_time_track_stats", "diskpagebuffer",
                  "pgman_time_track_stats")


def test_workload_collectors_on_each_version_profile(ndb_lab) -> None:
    """On the 8.0 and 8.4 profiles every new collector succeeds on the simulator's
    rows; on 7.6 the view that version lacks (pgman_time_track_stats, NDB 8.0.19+) is
    unsupported and the others succeed."""
    port = ndb_lab.service("ndb-exporter")["port"]
    version = ndb_lab.service("ndb-model")["extra"]["version"]
    try:
        for profile in ("8.0", "8.4"):
            ndb_lab.cli("lab", "ndb", "set-version", profile)
            # the slow collectors re-serve their last rows for --scrape.slow-interval (10 s
            # in the lab): the first scrape after the switch may hold the transactions of
            # the moment the simulator re-created its tables (none); wait for a fresh
            # reading. A collector the version before lacked is retried RETRY_UNSERVED
            # (30 s) later, so a fresh reading of it may take 40 s and more: 90 s.
            ss = eventually(lambda: (s := scrape(port)) and all(
                val(s, "ndb_exporter_collector_success", collector=c) == 1
                for c in NEW_COLLECTORS) and sum(v for _, v in series(s, "ndb_transactions"))
                and "sim/def/t0" in {lbl["table"] for lbl, _ in series(s, "ndb_table_rows")}
                and series(s, "ndb_table_lock_requests_total")
                and val(s, "ndb_disk_page_buffer_requests_total", node_id=1,
                        outcome="direct_return")
                and val(s, "ndb_tc_latency_seconds_count", node_id=1, activity="transaction")
                and s, 90, f"every new collector on {profile}, with open transactions,"
                " the tables' memory, the page buffer's hits and the TC's latencies")
            assert val(ss, "ndb_up") == 1
            # the simulator's load: open transactions, per-table memory, latency histograms
            assert sum(v for _, v in series(ss, "ndb_transactions")) > 0
            tables = {lbl["table"] for lbl, _ in series(ss, "ndb_table_rows")}
            assert "sim/def/t0" in tables and not [t for t in tables if "$unique" in t]
            assert not [t for t in tables if t.endswith("/PRIMARY")]  # counted to the table
            locked = {lbl["table"] for lbl, _ in series(ss, "ndb_table_lock_requests_total")}
            assert "sim/def/t0" in locked and locked <= tables
            assert val(ss, "ndb_tc_latency_seconds_count", node_id=1,
                       activity="transaction") > 0
            hits = val(ss, "ndb_disk_page_buffer_requests_total", node_id=1,
                       outcome="direct_return")
            assert hits and hits > 0
        ndb_lab.cli("lab", "ndb", "set-version", "7.6")
        # the first scrapes after the switch may meet the simulator re-creating its tables
        ss = eventually(lambda: (s := scrape(port)) and val(
            s, "ndb_exporter_collector_supported", collector="pgman_time_track_stats") == 0
            and all(val(s, "ndb_exporter_collector_success", collector=c) == 1
                    for c in NEW_COLLECTORS[:-1])
            and s, 90, "pgman_time_track_stats unsupported on 7.6, the others succeeding")
        for c in NEW_COLLECTORS[:-1]:
            assert val(ss, "ndb_exporter_collector_success", collector=c) == 1, c
        assert val(ss, "ndb_exporter_collector_success",
                   collector="pgman_time_track_stats") is None
    finally:
        ndb_lab.cli("lab", "ndb", "set-version", version)


def test_a_long_transaction_and_the_locks_waiting_for_it(ndb_lab) -> None:
    """The simulator's long-transaction fault: a client keeps a transaction open on data
    node 2's TC; its inactivity grows and requests queue behind its row locks, which live
    on the data nodes holding the rows."""
    port = ndb_lab.service("ndb-exporter")["port"]
    ndb_lab.cli("lab", "ndb", "fault", "long-transaction", "--node", "2")
    try:
        first = eventually(lambda: (s := scrape(port)) and (val(
            s, "ndb_transaction_inactive_seconds_max", node_id=2) or 0) >= 2 and s, 30,
            "an inactive transaction on node 2")
        later = eventually(lambda: (s := scrape(port)) and val(
            s, "ndb_transaction_inactive_seconds_max", node_id=2) > val(
            first, "ndb_transaction_inactive_seconds_max", node_id=2) and s, 30,
            "its inactivity grows")
        # its locks are on the replicas of the rows (LDM nodes), not only on its TC's node
        waiting = sum(v for lbl, v in series(later, "ndb_locks") if lbl["state"] == "waiting")
        assert waiting >= 2
        assert max(v for lbl, v in series(later, "ndb_lock_duration_seconds_max")
                   if lbl["state"] == "holding") >= 2
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "long-transaction", "--off")
    eventually(lambda: (s := scrape(port)) and (val(
        s, "ndb_transaction_inactive_seconds_max", node_id=2) or 0) < 2 and s, 30,
        "the transaction ended")
