"""ndbinfo_exporter against a real MariaDB holding ndbinfo tables (no simulator needed).

The tables get the column names and types of the real views; where the recorded fixtures
(shared/fixtures/ndbinfo: the MySQL team's recorded results, never copied here) hold
`desc` output or real rows, the tables are created from that output and filled with those
rows. The exporter connects as an account with exactly the README's grant.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import pymysql
import pytest
from helpers import Samples, shared_fixture, val
from lanes import starts
from ndbinfo_exporter import main as exporter_main
from ndbinfo_exporter import mycnf, schema
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.scraper import Scraper
from ndbinfo_exporter.state import ExporterState, RestartLedger
from prometheus_client.parser import text_string_to_metric_families

from clusterscope.bench.synthetic import VIEWS
from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab
from clusterscope.ndbsim import ddl

REPO = Path(__file__).resolve().parents[1]
USER = "ndbinfo_exporter"
GRANTS = ["SELECT ON ndbinfo.*"]  # the README's GRANT statement, exactly

# -- fixtures: real `desc` output and real rows ------------------------------------------
def fixture_desc(file: str, view: str) -> list[tuple[str, str]]:
    """Columns and types from a mysqltest `desc <view>;` block in a fixture file."""
    lines = shared_fixture("ndbinfo", file).read_text().splitlines()
    start = lines.index(f"desc {view};") + 2  # skip the Field/Type header
    cols = []
    for line in lines[start:]:
        parts = line.split("\t")
        if len(parts) < 3 or not parts[0] or " " in parts[0]:
            break
        ctype = re.sub(r"int\(\d+\)", "int", parts[1])
        cols.append((parts[0], ctype))
    return cols


def fixture_box_rows(file: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a mysql client box table (`| a | b |`)."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in shared_fixture("ndbinfo", file).read_text().splitlines()
            if line.startswith("|")]
    return rows[0], rows[1:]


FROM_FIXTURES = {
    "restart_info": ("restart_info.result.txt", "restart_info"),
    "disk_write_speed_aggregate": ("disk_write_speed_aggregate.result.txt",
                                   "disk_write_speed_aggregate"),
    "table_distribution_status": ("table_distribution_status.result.txt",
                                  "table_distribution_status"),
    "table_fragments": ("table_distribution_status.result.txt", "table_fragments"),
    "table_replicas": ("table_distribution_status.result.txt", "table_replicas"),
}


def all_views() -> dict[str, list[tuple[str, str]]]:
    out = dict(VIEWS)
    for view, (file, name) in FROM_FIXTURES.items():
        out[view] = fixture_desc(file, name)
    return out


def test_shared_view_descriptions_match_the_real_desc_output() -> None:
    """The shared descriptions (which the benchmark's tables come from) equal the recorded
    `desc` of the real 7.6-era views, and the 8.0 column names are the same."""
    for view, (file, name) in FROM_FIXTURES.items():
        real = [(c, t.split()[0].lower().replace("int", "int unsigned") if "unsigned" in t
                 else t.lower()) for c, t in fixture_desc(file, name)]
        ours = [(c, t.lower()) for c, t, _ in ddl.expected_columns("7.6")[view]]
        assert ours == real, view
        assert [c for c, _ in VIEWS[view]] == [c for c, _ in real], view


def insert(cur, view: str, rows: list[tuple]) -> None:
    if rows:
        marks = ", ".join(["%s"] * len(rows[0]))
        cur.executemany(f"INSERT INTO ndbinfo.{view} VALUES ({marks})", rows)


THREADS = [(0, "main"), (1, "rep"), (2, "ldm"), (3, "ldm"), (4, "recv"), (5, "tc")]


def baseline(cur) -> None:
    """A small 2-data-node cluster (+ MGM 49, API 51); thr_no order differs per node on
    purpose, so only a join by name finds the LDM threads."""
    views = all_views()
    # the grant is on ndbinfo.* (kept in mysql.db), so it survives re-creating the schema
    cur.execute("DROP DATABASE IF EXISTS ndbinfo")
    cur.execute("CREATE DATABASE ndbinfo")
    for view, cols in views.items():
        cur.execute(f"CREATE TABLE ndbinfo.{view} ("
                    + ", ".join(f"`{c}` {t.replace(' NOT NULL', '')}" for c, t in cols) + ")")
    insert(cur, "nodes", [(1, 3600, "STARTED", 0, 1), (2, 120, "STARTING", 4, 1)])
    insert(cur, "processes", [(1, "NDB", "mysql-8.0.40 ndb-8.0.40-sim", 11, 10, "ndbmtd", ""),
                              (2, "NDB", "mysql-8.0.40 ndb-8.0.40-sim", 21, 20, "ndbmtd", ""),
                              (49, "MGM", "mysql-8.0.40 ndb-8.0.40-sim", 3, None, "ndb_mgmd",
                               ""),
                              (51, "API", "mysql-8.0.40 ndb-8.0.40-sim", 4, None, "mysqld",
                               "mysql://127.0.0.1:3306")])
    insert(cur, "config_nodes", [(1, "NDB", "host-a"), (2, "NDB", "host-b"),
                                 (49, "MGM", "host-m"), (51, "API", "host-s")])
    insert(cur, "membership", [(n, 0, 3 - n, 3 - n, 1, 2, n, n, 49, "1e6200000008",
                                 "ARBIT_RUN", "Yes", "[ 49 ]", "") for n in (1, 2)])
    threads, cpu, tstat = [], [], []
    for node in (1, 2):
        order = THREADS if node == 1 else THREADS[4:] + THREADS[:4]
        for thr_no, (_, name) in enumerate(order):
            threads.append((node, thr_no, name, f"{name} thread"))
            seed = node * 10 + thr_no
            cpu.append((node, thr_no, seed, seed + 1, 90 - seed, seed + 2, 50, seed % 3, 1, 0,
                        1000000))
            tstat.append((node, thr_no, name, 100 + seed, 1000 + seed, 7, 0, 0, 0, 0, 4000 + seed,
                          0, 1_500_000 * seed, 250_000 * seed, 0, 0, 0, 0))
    insert(cur, "threads", threads)
    insert(cur, "cpustat", cpu)
    insert(cur, "threadstat", tstat)
    trp = []
    for node in (1, 2):
        for remote in (1, 2, 49, 51):
            if remote != node:
                st = "CONNECTED" if remote != 51 else "CONNECTING"
                trp.append((node, remote, st, "127.0.0.1", 10**12 + node * 1000 + remote,
                            2 * 10**9 + remote, 3, 0, 1, 0, 2))
    insert(cur, "transporters", trp)
    insert(cur, "memoryusage", [(n, t, u * 32768, u, 4096 * 32768, 4096)
                                for n in (1, 2) for t, u in (("Data memory", 1000 + n),
                                                             ("Long message buffer", 7))])
    insert(cur, "resources", [(n, r, 10, 20 + n, 100, 5) for n in (1, 2)
                              for r in ("DATA_MEMORY", "TRANSACTION_MEMORY")])
    counters = []
    for n in (1, 2):
        for inst in (1, 2, 3):
            counters.append((n, "DBLQH", inst, 10, "OPERATIONS", 1000 * inst + n))
            counters.append((n, "DBTC", inst, 3, "COMMITS", 10 * inst))
    insert(cur, "counters", counters)
    header, rows = fixture_box_rows("logspaces.result.txt")
    assert header == ["node_id", "log_type", "log_id", "log_part", "total", "used"]
    insert(cur, "logspaces", [tuple(r) for r in rows])
    insert(cur, "logbuffers", [(n, "REDO", 0, p, 16777216, 4096 * (p + 1))
                               for n in (1, 2) for p in range(4)])
    dws = views["disk_write_speed_aggregate"]
    insert(cur, "disk_write_speed_aggregate",
           [(n, i, *[n * 1000 + i * 100 + k for k in range(len(dws) - 2)])
            for n in (1, 2) for i in range(4)])
    # an LCP half way: 4 of 8 fragment replicas still to checkpoint
    tf = len(views["table_fragments"])
    insert(cur, "table_fragments",
           [(1, 10, f, f, 0, f % 4, 2, 1, 1, 2, 0, 0, 2, 0, 1 if f < 2 else 0)
            + (0,) * (tf - 15) for f in range(4)]
           + [(1, 11, f, f, 0, f % 4, 2, 1, 1, 2, 0, 0, 2, 0, 1 if f < 2 else 0)
              + (0,) * (tf - 15) for f in range(4)])
    insert(cur, "table_replicas",
           [(1, t, f, 0, r, 1 if f < 2 else 0, 0, 0, 0, 41 if f < 2 else 42, 40, 0, 0, 0, 0, 1)
            for t in (10, 11) for f in range(4) for r in (1, 2)])
    insert(cur, "table_distribution_status",
           [(1, 10, "IDLE", "LOCAL_CHECKPOINT", "wRITING_TO_FILE", "ACTIVE", "NORMAL", 4, 4, 0,
             0, 0),
            (1, 11, "IDLE", "IDLE", "COMPLETED", "ACTIVE", "NORMAL", 4, 4, 0, 0, 0),
            (1, 12, "IDLE", "IDLE", "COMPLETED", "ACTIVE", "NORMAL", 4, 4, 0, 0, 0)])


# -- the scratch server ------------------------------------------------------------------
class Scratch:
    def __init__(self, lab: Lab, base: Path, port: int) -> None:
        self.lab, self.base, self.port = lab, base, port
        self.cnf = mariadb.client_config(lab, USER, USER, port)

    def start(self) -> None:
        mariadb.start_server(self.lab, "exporter-test-sql", "test", "exporter test server",
                             self.base, self.port)

    def stop(self) -> None:
        self.lab.stop("exporter-test-sql")

    def root(self) -> pymysql.connections.Connection:
        return mariadb.socket_connect(self.base / "mysqld.sock")


@pytest.fixture(scope="module")
@starts("mariadb")
def scratch() -> Iterator[Scratch]:
    root = Path(tempfile.mkdtemp(prefix="cs-exporter-"))
    root.chmod(0o755)
    lab = Lab(root, int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")))
    base = lab.path("exporter-test-sql")
    port = lab.port("exporter-test-sql")
    mariadb.prepare_instance(base, port, {"innodb_buffer_pool_size": "16M",
                                          "innodb_log_file_size": "8M"})
    s = Scratch(lab, base, port)
    s.start()
    try:
        mariadb.execute(base / "mysqld.sock", ["CREATE DATABASE IF NOT EXISTS ndbinfo"])
        mariadb.ensure_account(lab, base / "mysqld.sock", USER, GRANTS)
        yield s
    finally:
        s.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def cur(scratch: Scratch) -> Iterator:
    conn = scratch.root()
    c = conn.cursor()
    baseline(c)
    yield c
    conn.close()


def make_scraper(scratch: Scratch, state: Path, query_timeout: float = 2.0,
                 collectors=ALL, budget: float = 10.0, slow_interval: float = 0.0) -> Scraper:
    """A scraper on the scratch server; slow collectors run every scrape unless asked."""
    cfg = mycnf.load(scratch.cnf)
    return Scraper(Database(cfg, query_timeout), collectors,
                   ExporterState(RestartLedger(state)), budget, slow_interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def names(ss: dict, name: str) -> list[dict]:
    return [dict(lbl) for (n, lbl) in ss if n == name]


# -- values equal the rows they come from ----------------------------------------------
def test_every_metric_equals_its_row(scratch: Scratch, cur, tmp_path: Path) -> None:
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_up") == 1 and val(ss, "ndb_ndbinfo_offline") == 0
    for c in ALL:
        if c.name != "transporter_details":
            assert val(ss, "ndb_exporter_collector_success", collector=c.name) == 1, c.name
    cur.execute("SELECT node_id, status, start_phase, uptime FROM ndbinfo.nodes")
    for node, status, phase, uptime in cur.fetchall():
        assert val(ss, "ndb_node_status", node_id=node, status=status) == 1
        assert val(ss, "ndb_node_status", node_id=node, status="STOPPING_1") == 0
        assert val(ss, "ndb_node_start_phase", node_id=node) == phase
        assert val(ss, "ndb_node_uptime_seconds", node_id=node) == uptime
    assert val(ss, "ndb_node_info", node_id=51, type="API", hostname="host-s",
               version="mysql-8.0.40 ndb-8.0.40-sim") == 1
    cur.execute("SELECT c.node_id, c.thr_no, t.thread_name, c.OS_user, c.thread_exec,"
                " c.thread_buffer_full FROM ndbinfo.cpustat c JOIN ndbinfo.threads t"
                " USING (node_id, thr_no)")
    for node, thr, name, os_user, exec_, full in cur.fetchall():
        lbl = {"node_id": node, "thr_no": thr, "thread_name": name}
        assert val(ss, "ndb_thread_cpu_percent", mode="os_user", **lbl) == os_user
        assert val(ss, "ndb_thread_cpu_percent", mode="exec", **lbl) == exec_
        assert val(ss, "ndb_thread_cpu_percent", mode="buffer_full", **lbl) == full
    ldm = {(lbl["node_id"], lbl["thr_no"]) for lbl in names(ss, "ndb_thread_cpu_percent")
           if lbl["thread_name"] == "ldm"}
    assert ldm == {("1", "2"), ("1", "3"), ("2", "4"), ("2", "5")}
    cur.execute("SELECT node_id, thr_no, thr_nm, os_ru_utime, os_ru_stime, c_exec"
                " FROM ndbinfo.threadstat")
    for node, thr, name, ut, st, c_exec in cur.fetchall():
        lbl = {"node_id": node, "thr_no": thr, "thread_name": name}
        assert val(ss, "ndb_thread_cpu_seconds_total", mode="user", **lbl) == pytest.approx(
            ut / 1e6)
        assert val(ss, "ndb_thread_cpu_seconds_total", mode="system", **lbl) == pytest.approx(
            st / 1e6)
        assert val(ss, "ndb_thread_signals_executed_total", **lbl) == c_exec
    cur.execute("SELECT node_id, remote_node_id, status, bytes_sent, bytes_received,"
                " connect_count, overload_count, slowdown_count FROM ndbinfo.transporters")
    for node, remote, st, sent, recv, conn, ovl, slow in cur.fetchall():
        link = {"node_id": node, "remote_node_id": remote}
        assert val(ss, "ndb_transporter_sent_bytes_total", **link) == sent
        assert val(ss, "ndb_transporter_received_bytes_total", **link) == recv
        # one series per link, valued with the kernel's connection_status (the view's decode)
        code = {text: k for k, text in schema.TRANSPORTER_STATUS}[st]
        assert val(ss, "ndb_transporter_status_code", **link) == code
        assert val(ss, "ndb_transporter_connects_total", **link) == conn
        assert val(ss, "ndb_transporter_overloads_total", **link) == ovl
        assert val(ss, "ndb_transporter_slowdowns_total", **link) == slow
    # status is never a label (a reconnect must not churn series), and no state-set of zeros
    assert all("status" not in lbl for lbl in names(ss, "ndb_transporter_sent_bytes_total"))
    assert all("status" not in lbl for lbl in names(ss, "ndb_transporter_status_code"))
    assert len(names(ss, "ndb_transporter_status_code")) == len(
        names(ss, "ndb_transporter_sent_bytes_total"))
    cur.execute("SELECT node_id, memory_type, used, total FROM ndbinfo.memoryusage")
    for node, mtype, used, total in cur.fetchall():
        assert val(ss, "ndb_memory_used_bytes", node_id=node, memory_type=mtype) == used
        assert val(ss, "ndb_memory_total_bytes", node_id=node, memory_type=mtype) == total
    cur.execute("SELECT node_id, resource_name, used, max, spare FROM ndbinfo.resources")
    for node, name, used, mx, spare in cur.fetchall():
        lbl = {"node_id": node, "resource_name": name}
        assert val(ss, "ndb_resource_used_pages", **lbl) == used
        assert val(ss, "ndb_resource_max_pages", **lbl) == mx
        assert val(ss, "ndb_resource_spare_pages", **lbl) == spare
    cur.execute("SELECT node_id, block_name, counter_name, SUM(val) FROM ndbinfo.counters"
                " GROUP BY 1, 2, 3")
    rows = cur.fetchall()
    assert len(names(ss, "ndb_counters_total")) == len(rows) == 4  # instances summed
    for node, block, name, total in rows:
        assert val(ss, "ndb_counters_total", node_id=node, block_name=block,
                   counter_name=name) == total
    cur.execute("SELECT node_id, log_type, log_id, log_part, used, total FROM ndbinfo.logbuffers")
    for node, ltype, lid, part, used, total in cur.fetchall():
        lbl = {"node_id": node, "log_type": ltype, "log_id": lid, "log_part": part}
        assert val(ss, "ndb_log_buffer_used_bytes", **lbl) == used
        assert val(ss, "ndb_log_buffer_total_bytes", **lbl) == total
    cur.execute("SELECT node_id, thr_no, backup_lcp_speed_last_10sec, redo_speed_last_sec,"
                " current_target_disk_write_speed, slowdowns_due_to_high_cpu"
                " FROM ndbinfo.disk_write_speed_aggregate")
    for node, inst, lcp10, redo1, target, cpu in cur.fetchall():
        lbl = {"node_id": node, "ldm_instance": inst}
        assert val(ss, "ndb_disk_write_speed_bytes_per_second", kind="backup_lcp",
                   window="10s", **lbl) == lcp10
        assert val(ss, "ndb_disk_write_speed_bytes_per_second", kind="redo", window="1s",
                   **lbl) == redo1
        assert val(ss, "ndb_disk_write_speed_target_bytes_per_second", **lbl) == target
        assert val(ss, "ndb_disk_write_slowdown_seconds_total", reason="high_cpu",
                   **lbl) == cpu


def workload(cur) -> dict:
    """Transactions, locks, the disk page buffer, latency histograms and memory per fragment
    of the baseline's two data nodes (1, 2) and API node 51, shaped as the views give them:
    several rows per node that must become one series per node (and state, table ...)."""
    insert(cur, "cluster_transactions", [
        (1, 1, 11 << 32, "Started", 2, 0, 0, 51, 32769),
        (1, 2, 12 << 32, "Started", 3, 1, 5, 51, 32770),
        (1, 1, 13 << 32, "Committing", 4, 4, 0, 51, 32769),
        (2, 1, 21 << 32, "Receiving", 1, 1, 42, 51, 32769)])
    insert(cur, "cluster_locks", [
        (1, 1, 10, 0, 7, 11 << 32, "X", "H", "*", "UPDATE", 5, 1, None),
        (1, 2, 10, 1, 8, 12 << 32, "X", "H", "*", "UPDATE", 30000, 2, None),
        (1, 1, 11, 0, 9, 13 << 32, "S", "H", "*", "READ", 3, 3, None),
        (1, 2, 10, 1, 8, 13 << 32, "X", "W", "", "UPDATE", 800, 4, 2)])
    insert(cur, "diskpagebuffer", [(1, 1, 10, 1, 4, 0, 900, 20, 80),
                                   (1, 2, 20, 2, 6, 1, 1900, 30, 70),
                                   (2, 1, 5, 0, 1, 0, 99, 0, 1)])
    # two TC instances of node 1 talking to data nodes 1, 2 and API node 51; 4 of the 32
    # ranges (bounds in microseconds); key operations are counted on both sides
    bounds = [50, 75, 112, 168]
    tc = []
    for inst in (1, 2):
        for comm in (1, 2, 51):
            api = comm == 51
            for i, b in enumerate(bounds):
                tc.append((1, 245, inst, comm, b, i if api else 0, 0, 0 if api else i + 1, 0,
                           (i + 1) * 10 if api else 0, 1 if api and i == 3 else 0,
                           100 + i, 7, 0, 0))
    insert(cur, "tc_time_track_stats", tc)
    insert(cur, "pgman_time_track_stats", [
        (1, 258, inst, b, 10 * inst + i, i, 0, 1) for inst in (1, 2)
        for i, b in enumerate((0, 16, 32, 4294967295))])
    mpf = []
    for node, frags in ((1, (0, 1)), (2, (0,))):
        for f in frags:
            mpf += [("test/def/t1", None, "User table", 10, node, f + 1, f, 1000, 100, 64, 14,
                     1, 500, 50, 5, 300),
                    ("sys/def/10/u$unique", "test/def/t1", "Unique hash index", 12, node,
                     f + 1, f, 200, 0, 16, 12, 0, 0, 0, 0, 100),
                    ("test/def/NDB$BLOB_10_2", "test/def/t1", "User table", 13, node, f + 1,
                     f, 4000, 10, 256, 15, 0, 8000, 70, 9, 50)]
            if node == 1:
                mpf.append(("test/def/t2", None, "User table", 11, node, f + 1, f, 64, 0, 32,
                            2, 0, None, None, None, 20))
    insert(cur, "memory_per_fragment", mpf)
    return {"bounds": bounds, "tc": tc}


def test_workload_views_become_series_per_node_never_per_transaction(
        scratch: Scratch, cur, tmp_path: Path) -> None:
    w = workload(cur)
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    for c in ("cluster_transactions", "cluster_locks", "diskpagebuffer", "tc_time_track_stats",
              "pgman_time_track_stats", "memory_per_fragment"):
        assert val(ss, "ndb_exporter_collector_success", collector=c) == 1, c
    # transactions: counts per node and state, the longest inactive, operations held
    assert val(ss, "ndb_transactions", node_id=1, state="Started") == 2
    assert val(ss, "ndb_transactions", node_id=1, state="Committing") == 1
    assert val(ss, "ndb_transactions", node_id=2, state="Receiving") == 1
    assert val(ss, "ndb_transaction_inactive_seconds_max", node_id=1) == 5
    assert val(ss, "ndb_transaction_inactive_seconds_max", node_id=2) == 42
    assert val(ss, "ndb_transaction_operations", node_id=1) == 9
    # locks: per node, mode and state; the longest hold and wait
    assert val(ss, "ndb_locks", node_id=1, mode="exclusive", state="holding") == 2
    assert val(ss, "ndb_locks", node_id=1, mode="shared", state="holding") == 1
    assert val(ss, "ndb_locks", node_id=1, mode="exclusive", state="waiting") == 1
    assert val(ss, "ndb_lock_duration_seconds_max", node_id=1, state="holding") == 30.0
    assert val(ss, "ndb_lock_duration_seconds_max", node_id=1, state="waiting") == 0.8
    # never a series per transaction, lock or row
    for (_, labels) in ss:
        assert not {"transid", "lock_num", "rowid", "mysql_connection_id"} & dict(labels).keys()
    # the disk page buffer summed over PGMAN instances
    req = {o: val(ss, "ndb_disk_page_buffer_requests_total", node_id=1, outcome=o)
           for o in ("direct_return", "wait_queue", "wait_io")}
    assert req == {"direct_return": 2800, "wait_queue": 50, "wait_io": 150}
    assert val(ss, "ndb_disk_page_buffer_pages_read_total", node_id=1) == 10
    assert val(ss, "ndb_disk_page_buffer_lcp_pages_written_total", node_id=2) == 0
    # TC latency: a Prometheus histogram per node and activity, summed over TC instances,
    # cumulative, the last range +Inf; key operations counted once (the API side)
    h = {"node_id": 1, "activity": "transaction"}
    per_range = [sum(r[9] for r in w["tc"] if r[4] == b) for b in w["bounds"]]
    les = [repr(b / 1e6) for b in w["bounds"][:-1]] + ["+Inf"]
    got = [val(ss, "ndb_tc_latency_seconds_bucket", le=le, **h) for le in les]
    assert got == [sum(per_range[:i + 1]) for i in range(4)] == [20, 60, 120, 200]
    assert val(ss, "ndb_tc_latency_seconds_count", **h) == 200
    reads = {"node_id": 1, "activity": "read_key"}
    assert val(ss, "ndb_tc_latency_seconds_count", **reads) == sum(
        r[11] for r in w["tc"] if r[3] == 51)  # not the data nodes' copies
    assert val(ss, "ndb_tc_latency_seconds_count", node_id=1,
               activity="scan_fragment") == 2 * 2 * 10
    assert val(ss, "ndb_tc_latency_seconds_count", node_id=1, activity="transaction_error") == 2
    # disk data latency, 8.0.19+: the kernel's last bound (~0 in 32 bits) is +Inf
    pg = {"node_id": 1, "operation": "page_read"}
    assert val(ss, "ndb_disk_data_latency_seconds_bucket", le="0.0", **pg) == 30
    assert val(ss, "ndb_disk_data_latency_seconds_bucket", le="+Inf", **pg) == 30 + 32 + 34 + 36
    # memory per table and node: a table's indexes and blob parts count to it
    t1 = {"node_id": 1, "table": "test/def/t1"}
    assert val(ss, "ndb_table_memory_allocated_bytes", kind="fixed", **t1) == 2 * (1000 + 200
                                                                                  + 4000)
    assert val(ss, "ndb_table_memory_allocated_bytes", kind="var", **t1) == 2 * 8500
    assert val(ss, "ndb_table_memory_allocated_bytes", kind="hash_index", **t1) == 2 * 450
    assert val(ss, "ndb_table_memory_free_bytes", **t1) == 2 * (100 + 10 + 50 + 70)
    assert val(ss, "ndb_table_rows", **t1) == 2 * 14  # its own fragments only
    assert val(ss, "ndb_table_rows", node_id=2, table="test/def/t1") == 14
    t2 = {"node_id": 1, "table": "test/def/t2"}
    assert val(ss, "ndb_table_memory_allocated_bytes", kind="var", **t2) is None  # NULL
    assert val(ss, "ndb_table_memory_free_bytes", **t2) == 0
    tables = {dict(lbl)["table"] for (n, lbl) in ss if n == "ndb_table_rows"}
    assert tables == {"test/def/t1", "test/def/t2"}  # no index or blob table of its own


def test_a_node_row_cut_by_group_concat_is_read_row_by_row(scratch: Scratch, cur,
                                                           tmp_path: Path) -> None:
    """The big collectors fetch a node's rows as one string: a server that keeps the default
    group_concat_max_len (MySQL: 1 KiB) cuts it, and the rows are read one by one, none
    lost."""
    scraper = make_scraper(scratch, tmp_path / "s.json")
    whole = Samples.of_families(scraper.scrape())
    names = ("ndb_transporter_sent_bytes_total", "ndb_thread_cpu_percent",
             "ndb_disk_write_speed_bytes_per_second", "ndb_log_space_used_bytes")
    # 100: the first lines fit, the cut falls inside a line; 141: right after a line
    for limit in (100, 141, 4):
        scraper.db.conn.cursor().execute(f"SET SESSION group_concat_max_len = {limit}")
        cut = Samples.of_families(scraper.scrape())
        for name in names:
            before = {(n, lbl): v for (n, lbl), v in whole.items() if n == name}
            assert before and before == {(n, lbl): v for (n, lbl), v in cut.items()
                                         if n == name}, (limit, name)


def test_logspaces_fixture_rows(scratch: Scratch, cur, tmp_path: Path) -> None:
    """The real `select * from logspaces` output, loaded into MariaDB, read back exactly."""
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    _, rows = fixture_box_rows("logspaces.result.txt")
    assert len(names(ss, "ndb_log_space_used_bytes")) == len(rows) == 8
    for node, ltype, lid, part, total, used in rows:
        lbl = {"node_id": node, "log_type": ltype, "log_id": lid, "log_part": part}
        assert val(ss, "ndb_log_space_total_bytes", **lbl) == int(total) == 268435456
        assert val(ss, "ndb_log_space_used_bytes", **lbl) == int(used)


def test_lcp_progress_and_table_states(scratch: Scratch, cur, tmp_path: Path) -> None:
    scraper = make_scraper(scratch, tmp_path / "s.json")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_lcp_id") == 42
    assert val(ss, "ndb_lcp_running") == 1
    assert val(ss, "ndb_lcp_fragment_replicas_remaining") == 4
    assert val(ss, "ndb_lcp_fragment_replicas") == 16
    assert val(ss, "ndb_lcp_progress_ratio") == pytest.approx(0.75)
    # the real view spells `wRITING_TO_FILE`
    assert val(ss, "ndb_lcp_tables", node_id=1, status="WRITING_TO_FILE") == 1
    assert val(ss, "ndb_lcp_tables", node_id=1, status="COMPLETED") == 2
    assert val(ss, "ndb_lcp_tables", node_id=1, status="ACTIVE") == 0
    # started while the exporter watched, then done: a duration appears
    assert val(ss, "ndb_lcp_last_duration_seconds") is None  # began before we looked
    cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = 0")
    cur.execute("UPDATE ndbinfo.table_replicas SET is_lcp_ongoing = 0, last_lcp_id = 42")
    scraper.scrape()
    cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = 2 WHERE fragment_id = 0")
    scraper.scrape()
    time.sleep(0.3)
    cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = 0")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_lcp_running") == 0 and val(ss, "ndb_lcp_progress_ratio") == 1
    assert 0.3 <= val(ss, "ndb_lcp_last_duration_seconds") < 60


# -- restarts --------------------------------------------------------------------------
def restart_row(cur, node: int, status: int, secs: dict[str, int] | None,
                total: int | None = None) -> None:
    cols = [c for c, _ in fixture_desc("restart_info.result.txt", "restart_info")]
    phases = [c for c in cols if c.startswith("secs_")]
    if total is None and secs:
        total = sum(secs.values())
    values = {"node_id": node, "node_restart_status": schema.RESTART_STATUS[status],
              "node_restart_status_int": status,
              **{p: (secs or {}).get(p) for p in phases}, "total_restart_secs": total}
    cur.execute("DELETE FROM ndbinfo.restart_info WHERE node_id = %s", (node,))
    cur.execute(f"INSERT INTO ndbinfo.restart_info ({', '.join(cols)}) VALUES"
                f" ({', '.join(['%s'] * len(cols))})", [values[c] for c in cols])


def test_restart_phases_and_counted_once(scratch: Scratch, cur, tmp_path: Path) -> None:
    """node_restart_status_int is the kernel's enum: 12 is "Restore fragments ongoing" (a
    restart under way), 19 completed on the master, 24 completed as reported after a master
    takeover (Dbdih.hpp NodeRecoveryStatus)."""
    state = tmp_path / "state.json"
    scraper = make_scraper(scratch, state)
    phases = [c for c, _ in fixture_desc("restart_info.result.txt", "restart_info")
              if c.startswith("secs_")]
    first = {p: 1 + k for k, p in enumerate(phases)}
    restart_row(cur, 2, 12, {p: v for p, v in first.items() if p < "secs_s"})  # under way
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_restart_status", node_id=2) == 12
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 0
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) is None
    restart_row(cur, 2, 19, first)
    t_done = time.time()
    for _ in range(2):  # seen twice, counted once
        ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    assert abs(val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2)
               - t_done) < 5
    assert len(names(ss, "ndb_restart_phase_seconds")) == len(phases) == 18
    for p, v in first.items():
        assert val(ss, "ndb_restart_phase_seconds", node_id=2, phase=p[len("secs_"):]) == v
    assert val(ss, "ndb_restart_total_seconds", node_id=2) == sum(first.values())
    # the exporter restarts: the same completed restart is not counted again
    again = make_scraper(scratch, state)
    ss = Samples.of_families(again.scrape())
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    # a master takeover: the new master reports the same restart as 24, with only the
    # phases a non-master times and the same total (Dbdih::handle_before_master)
    before_master = {p: (v if p in ("secs_to_complete_node_failure", "secs_to_include_node")
                         else 0) for p, v in first.items()}
    restart_row(cur, 2, 24, before_master, total=sum(first.values()))
    ss = Samples.of_families(again.scrape())
    assert val(ss, "ndb_restart_status", node_id=2) == 24
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    # a second restart (no timing for the subscription handover) while the exporter is
    # down counts once when it comes back
    second = {p: 2 * v for p, v in first.items() if p != "secs_wait_subscription_handover"}
    restart_row(cur, 2, 19, second)
    third = make_scraper(scratch, state)
    ss = Samples.of_families(third.scrape())
    ss = Samples.of_families(third.scrape())
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 2
    assert val(ss, "ndb_restart_phase_seconds", node_id=2, phase="restore_fragments") == \
        second["secs_restore_fragments"]
    # NULL phase: no sample, never a fake 0
    assert val(ss, "ndb_restart_phase_seconds", node_id=2,
               phase="wait_subscription_handover") is None
    # the SQL node goes away: the persisted count and completion time are still served
    # (no SQL needed), so the series neither vanish nor come back looking like a reset
    done_at = val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2)
    dead = tmp_path / "dead.cnf"
    dead.write_text(re.sub(r"(?m)^port\s*=.*$", f"port = {free_port()}",
                           scratch.cnf.read_text()))
    down = Scraper(Database(mycnf.load(dead), 1.0), ALL,
                   ExporterState(RestartLedger(state)), 10.0, 0.0)
    ss = Samples.of_families(down.scrape())
    assert val(ss, "ndb_up") == 0
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 2
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) == done_at
    assert val(ss, "ndb_restart_status", node_id=2) is None  # restart_info itself: unknown


def test_a_restart_completed_before_the_exporter_looked_is_not_timed(
        scratch: Scratch, cur, tmp_path: Path) -> None:
    """A fresh exporter meeting a completed row counts it once, but gives it no completion
    time: it may be weeks old and must not be judged as a new restart."""
    restart_row(cur, 2, 19, {"secs_restore_fragments": 30, "secs_index_rebuild": 40})
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) is None


# -- faults ------------------------------------------------------------------------------
def test_null_columns_omit_samples(scratch: Scratch, cur, tmp_path: Path) -> None:
    cur.execute("UPDATE ndbinfo.cpustat SET OS_user = NULL WHERE node_id = 1 AND thr_no = 2")
    cur.execute("UPDATE ndbinfo.transporters SET bytes_sent = NULL, status = NULL"
                " WHERE node_id = 2 AND remote_node_id = 1")
    cur.execute("UPDATE ndbinfo.nodes SET uptime = NULL WHERE node_id = 2")
    cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = NULL")
    cur.execute("UPDATE ndbinfo.table_replicas SET is_lcp_ongoing = NULL")
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    for c in ("cpustat", "transporters", "nodes", "lcp"):
        assert val(ss, "ndb_exporter_collector_success", collector=c) == 1, c
    lbl = {"node_id": 1, "thr_no": 2, "thread_name": "ldm"}
    assert val(ss, "ndb_thread_cpu_percent", mode="os_user", **lbl) is None
    assert val(ss, "ndb_thread_cpu_percent", mode="os_system", **lbl) == 13
    assert val(ss, "ndb_transporter_sent_bytes_total", node_id=2, remote_node_id=1) is None
    assert val(ss, "ndb_transporter_received_bytes_total", node_id=2, remote_node_id=1) > 0
    assert val(ss, "ndb_transporter_status_code", node_id=2, remote_node_id=1) is None
    assert val(ss, "ndb_node_uptime_seconds", node_id=2) is None
    assert val(ss, "ndb_node_uptime_seconds", node_id=1) == 3600
    assert val(ss, "ndb_lcp_running") is None and val(ss, "ndb_lcp_progress_ratio") is None


def test_missing_view_is_unsupported_and_others_work(scratch: Scratch, cur,
                                                     tmp_path: Path, caplog) -> None:
    scraper = make_scraper(scratch, tmp_path / "s.json")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_exporter_collector_supported", collector="transporter_details") == 0
    assert val(ss, "ndb_exporter_collector_success", collector="transporter_details") is None
    assert val(ss, "ndb_exporter_collector_supported", collector="counters") == 1
    cur.execute("DROP TABLE ndbinfo.counters")  # an older version without the view
    with caplog.at_level("INFO", logger="ndbinfo_exporter"):
        for _ in range(3):
            ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_up") == 1
    assert val(ss, "ndb_exporter_collector_supported", collector="counters") == 0
    assert val(ss, "ndb_exporter_collector_success", collector="counters") is None
    assert not names(ss, "ndb_counters_total")
    assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
    assert val(ss, "ndb_thread_cpu_percent", node_id=1, thr_no=2, thread_name="ldm",
               mode="exec") == 14
    said = [r.getMessage() for r in caplog.records if "counters" in r.getMessage()]
    assert len(said) == 1 and "unsupported" in said[0]  # once, not per scrape


def test_ndbinfo_offline_is_not_an_empty_cluster(scratch: Scratch, cur, tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ndbinfo_exporter")
    # how an offline ndbinfo answers: no rows, and a warning
    for view in ("nodes", "cpustat"):
        cur.execute(f"RENAME TABLE ndbinfo.{view} TO ndbinfo.{view}_online")
        cur.execute(f"CREATE VIEW ndbinfo.{view} AS SELECT * FROM ndbinfo.{view}_online"
                    " WHERE CAST('offline' AS UNSIGNED) = 1")
    try:
        scraper = make_scraper(scratch, tmp_path / "s.json")
        ss = Samples.of_families(scraper.scrape())
        assert val(ss, "ndb_up") == 0 and val(ss, "ndb_ndbinfo_offline") == 1
        assert not names(ss, "ndb_node_status") and not names(ss, "ndb_thread_cpu_percent")
        assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 0
        # only cpustat answers "offline" while nodes answers: that table alone is not served
        # (an SQL node newer than its data nodes: ha_ndbinfo.cc OFFLINE_UPGRADING); its
        # collector is unsupported for now, everything else works, ndb_up stays 1
        cur.execute("DROP VIEW ndbinfo.nodes")
        cur.execute("RENAME TABLE ndbinfo.nodes_online TO ndbinfo.nodes")
        scraper.retry_unserved = 0.0  # ask the data nodes again at every scrape
        ss = Samples.of_families(scraper.scrape())
        assert val(ss, "ndb_up") == 1 and val(ss, "ndb_ndbinfo_offline") == 0
        assert val(ss, "ndb_exporter_collector_supported", collector="cpustat") in (0, None)
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") is None
        assert not names(ss, "ndb_thread_cpu_percent")
        assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 1
        assert names(ss, "ndb_node_status")
        ss = Samples.of_families(scraper.scrape())
        assert val(ss, "ndb_exporter_collector_supported", collector="cpustat") == 0
        # retried at every scrape here, said once
        said = [r.getMessage() for r in caplog.records if "cpustat" in r.getMessage()]
        assert len(said) == 1 and "unsupported for now" in said[0], said
        # the data nodes serve it again (upgraded): back without a restart of the exporter
        cur.execute("DROP VIEW ndbinfo.cpustat")
        cur.execute("RENAME TABLE ndbinfo.cpustat_online TO ndbinfo.cpustat")
        Samples.of_families(scraper.scrape())
        ss = Samples.of_families(scraper.scrape())
        assert val(ss, "ndb_exporter_collector_supported", collector="cpustat") == 1
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
        assert names(ss, "ndb_thread_cpu_percent")
    finally:
        for view in ("nodes", "cpustat"):
            cur.execute(f"SHOW FULL TABLES FROM ndbinfo LIKE '{view}_online'")
            if cur.fetchall():
                cur.execute(f"DROP VIEW IF EXISTS ndbinfo.{view}")
                cur.execute(f"RENAME TABLE ndbinfo.{view}_online TO ndbinfo.{view}")


def test_slow_view_is_cut_at_the_timeout(scratch: Scratch, cur, tmp_path: Path) -> None:
    cur.execute("RENAME TABLE ndbinfo.memoryusage TO ndbinfo.memoryusage_slow")
    cur.execute("CREATE VIEW ndbinfo.memoryusage AS SELECT * FROM ndbinfo.memoryusage_slow"
                " WHERE SLEEP(1) = 0")
    scraper = make_scraper(scratch, tmp_path / "s.json", query_timeout=0.5)
    t0 = time.monotonic()
    ss = Samples.of_families(scraper.scrape())
    took = time.monotonic() - t0
    assert val(ss, "ndb_exporter_collector_success", collector="memoryusage") == 0
    assert val(ss, "ndb_exporter_collector_timeouts_total", collector="memoryusage") == 1
    assert not names(ss, "ndb_memory_used_bytes")
    assert val(ss, "ndb_exporter_collector_success", collector="counters") == 1
    assert val(ss, "ndb_up") == 1
    assert took < 4  # 4 rows x 1 s sleep would be 4 s uncut (not a speed target: a cut)
    # the scrape budget runs out in the slow view: the collectors after it are cut too,
    # the ones before it delivered, and the scrape still answers
    tight = make_scraper(scratch, tmp_path / "s2.json", query_timeout=5, budget=1.0)
    ss = Samples.of_families(tight.scrape())
    assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 1
    assert val(ss, "ndb_exporter_collector_success", collector="memoryusage") == 0
    assert val(ss, "ndb_exporter_collector_success", collector="counters") == 0
    assert val(ss, "ndb_exporter_collector_timeouts_total", collector="counters") == 1
    assert names(ss, "ndb_node_status")


# -- configuration --------------------------------------------------------------------
@pytest.mark.parametrize("content, problem", [
    ("user=x\n", "not a valid option file"),
    ("[mysqld]\nuser=x\n", "no [client] section"),
    ("[client]\nport=abc\nuser=x\n", "is not a number"),
    ("[client]\npassword=x\n", "has no `user`"),
    ("[client]\nuser=x\nfoo=1\n", "unknown option"),
    ("!include /etc/other.cnf\n[client]\nuser=x\n", "not supported"),
])
def test_malformed_my_cnf_fails_at_start(tmp_path: Path, capsys, content: str,
                                         problem: str) -> None:
    f = tmp_path / "bad.cnf"
    f.write_text(content)
    assert exporter_main.main(["--config.my-cnf", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and problem in err


@pytest.mark.parametrize("content, problem", [
    ("basic_auth_users: [\n", "not valid YAML"),
    ("basic_auth_user:\n  a: b\n", "unknown key"),
    ("basic_auth_users:\n  prom: secret\n", "not a bcrypt hash"),
    ("tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n", "no such file"),
])
def test_malformed_web_config_fails_at_start(tmp_path: Path, capsys, content: str,
                                             problem: str) -> None:
    cnf = tmp_path / "ok.cnf"
    cnf.write_text("[client]\nuser=x\n")
    f = tmp_path / "web.yml"
    f.write_text(content)
    assert exporter_main.main(["--config.my-cnf", str(cnf), "--web.config.file", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and problem in err


# -- the process: HTTP(S), auth, secrets, DB down and back ----------------------------
def make_cert(d: Path) -> tuple[Path, Path]:
    crt, key = d / "server.crt", d / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(crt)], check=True, capture_output=True)
    return crt, key


def fetch(url: str, ctx: ssl.SSLContext | None = None,
          auth: tuple[str, str] | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url)
    if auth:
        req.add_header("Authorization",
                       "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=15, context=ctx) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, "exporter exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError("exporter did not listen")


def parsed(body: str) -> dict[tuple, float]:
    """The served text, read back by prometheus_client's parser (checks the format too)."""
    return Samples.of_families(text_string_to_metric_families(body))


@pytest.mark.tools("openssl", "python")
def test_process_tls_auth_secrets_and_db_down(scratch: Scratch, cur, tmp_path: Path) -> None:
    crt, key = make_cert(tmp_path)
    web_pw = "scrape-" + os.urandom(6).hex()
    hashed = bcrypt.hashpw(web_pw.encode(), bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                   f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    # the option file without the password: it comes from the environment
    db_pw = mycnf.load(scratch.cnf).password
    assert db_pw
    cnf = tmp_path / "client.cnf"
    cnf.write_text(f"[client]\nuser={USER}\nhost=127.0.0.1\nport={scratch.port}\n")
    cnf.chmod(0o600)
    port = scratch.lab.port("exporter-test-http")
    log = tmp_path / "exporter.log"
    argv = [sys.executable, "-m", "ndbinfo_exporter", "--config.my-cnf", str(cnf),
            "--web.listen-address", f"127.0.0.1:{port}", "--web.config.file", str(web),
            "--state.file", str(tmp_path / "state.json"), "--log.level", "debug"]
    env = dict(os.environ, NDBINFO_EXPORTER_PASSWORD=db_pw)
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=out, env=env)
    try:
        wait_port(port, proc)
        ctx = ssl.create_default_context(cafile=str(crt))
        url = f"https://127.0.0.1:{port}/metrics"
        assert fetch(url, ctx)[0] == 401
        assert fetch(url, ctx, ("prometheus", "wrong"))[0] == 401
        code, body = fetch(url, ctx, ("prometheus", web_pw))
        ss = parsed(body)
        assert code == 200 and val(ss, "ndb_up") == 1
        assert val(ss, "ndb_thread_cpu_percent", mode="exec", node_id=1, thr_no=2,
                   thread_name="ldm") == 14
        assert val(ss, "ndb_transporter_sent_bytes_total", node_id=1, remote_node_id=2) > 0
        with pytest.raises(OSError):  # plain HTTP is not served
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
        # the database goes away: still serving, ndb_up 0; and back: reconnects
        scratch.stop()
        code, body = fetch(url, ctx, ("prometheus", web_pw))
        ss = parsed(body)
        assert code == 200 and val(ss, "ndb_up") == 0
        assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 0
        scratch.start()
        code, body = fetch(url, ctx, ("prometheus", web_pw))
        assert code == 200 and val(parsed(body), "ndb_up") == 1
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode()
        assert db_pw not in cmdline and web_pw not in cmdline
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if not scratch.lab.running("exporter-test-sql"):
            scratch.start()  # the tests after this one need the server
    text = log.read_text()
    assert "cannot query the SQL node" in text  # the outage was logged ...
    assert db_pw not in text and web_pw not in text  # ... without secrets


# -- the shared view definitions (what the lab simulator serves), per version profile ---
def base_insert(cur, version: str, table: str, rows: list[dict]) -> None:
    cols = [c for c, _ in next(t for t in ddl.base_tables_for(version)
                               if t.name == table).columns_for(version)]
    for row in rows:
        unknown = set(row) - set(cols)
        assert not unknown, (table, unknown)
        cur.execute(f"INSERT INTO ndbinfo.`{table}` ({', '.join(f'`{c}`' for c in cols)})"
                    f" VALUES ({', '.join(['%s'] * len(cols))})", [row.get(c) for c in cols])


@pytest.mark.parametrize("profile", ["7.5", "8.0", "8.0.37", "8.4", "9.x"])
def test_real_view_definitions_per_version(scratch: Scratch, cur, tmp_path: Path,
                                           profile: str) -> None:
    """ndb$ base tables + the real-named views (SQL SECURITY INVOKER) of a version profile:
    enum decodes and aggregation happen in the views, the exporter reads them unchanged."""
    cur.execute("DROP DATABASE ndbinfo")
    cur.execute("CREATE DATABASE ndbinfo")
    for stmt in ddl.ddl(profile).statements():
        cur.execute(stmt)
    base_insert(cur, profile, "ndb$nodes", [
        {"node_id": 1, "uptime": 100, "status": 3, "start_phase": 0, "config_generation": 1},
        {"node_id": 2, "uptime": 5, "status": 2, "start_phase": 4, "config_generation": 1}])
    base_insert(cur, profile, "ndb$threads", [
        {"node_id": 1, "thr_no": 0, "thread_name": "main", "thread_description": "main"},
        {"node_id": 1, "thr_no": 1, "thread_name": "ldm", "thread_description": "ldm"}])
    base_insert(cur, profile, "ndb$cpustat", [
        {"node_id": 1, "thr_no": 1, "OS_user": 61, "OS_system": 7, "OS_idle": 32,
         "thread_exec": 66, "elapsed_time": 1000000}])
    base_insert(cur, profile, "ndb$transporters", [
        {"node_id": 1, "remote_node_id": 2, "connection_status": 1, "bytes_sent": 4242,
         "bytes_received": 99},
        # 7.x lists the reporting node's own slot: not a link
        {"node_id": 1, "remote_node_id": 1, "connection_status": 2, "remote_address": "-",
         "bytes_sent": 0, "bytes_received": 0}])
    details = [t for t in ddl.base_tables_for(profile) if t.name == "ndb$transporter_details"]
    if details:
        have = {c for c, _ in details[0].columns_for(profile)}
        base_insert(cur, profile, "ndb$transporter_details", [{k: v for k, v in {
            "node_id": 1, "block_instance": 0, "trp_id": 7, "remote_node_id": 2,
            "connection_status": 0, "encrypted": 1, "sendbuffer_used_bytes": 1024,
            "sendbuffer_alloc_bytes": 4096, "last_recv": 2_500_000}.items() if k in have}])
    base_insert(cur, profile, "ndb$pools", [
        {"node_id": 1, "block_number": 254, "block_instance": 0, "pool_name": "Data memory",
         "used": 10, "total": 100, "entry_size": 32768}])
    # the kernel's numbers: a transaction in Dbtc's CS_STARTED (2), its row lock (op_flags:
    # exclusive 0x10 | owner 0x40 | holding 0x80 | UPDATE 1) and a request waiting behind it
    bases = {t.name for t in ddl.base_tables_for(profile)}
    base_insert(cur, profile, "ndb$dbtc_apiconnect_state", [
        dict(zip(("state_int_value", "state_name", "state_friendly_name",
                  "state_description"), row, strict=True))
        for row in schema.DBTC_APICONNECT_STATE])
    base_insert(cur, profile, "ndb$transactions", [
        {"node_id": 1, "block_instance": 1, "apiref": (32769 << 16) | 51, "transid0": 7,
         "transid1": 1, "state": 2, "c_ops": 3, "outstanding": 0, "timer": 9}])
    if "ndb$acc_operations" in bases:
        base_insert(cur, profile, "ndb$acc_operations", [
            {"node_id": 1, "block_instance": 1, "tableid": 10, "transid0": 7, "transid1": 1,
             "acc_op_id": 1, "op_flags": 0xD1, "duration_millis": 1500},
            {"node_id": 1, "block_instance": 1, "tableid": 10, "transid0": 8, "transid1": 1,
             "acc_op_id": 2, "op_flags": 0x11, "prev_serial_op_id": 1, "duration_millis": 250}])
        base_insert(cur, profile, "ndb$dict_obj_types", [
            {"type_id": k, "type_name": v} for k, v in schema.DICT_OBJ_TYPE])
        base_insert(cur, profile, "ndb$dict_obj_info", [
            {"type": 2, "id": 10, "parent_obj_type": 0, "parent_obj_id": 0,
             "fq_name": "test/def/t1"},
            {"type": 3, "id": 11, "parent_obj_type": 2, "parent_obj_id": 10,
             "fq_name": "sys/def/10/u$unique"}])
        base_insert(cur, profile, "ndb$frag_mem_use", [
            {"node_id": 1, "block_instance": 1, "table_id": tid, "fragment_num": 0,
             "fixed_elem_alloc_bytes": n, "fixed_elem_free_bytes": 0, "fixed_elem_count": 4,
             "fixed_elem_size_bytes": 16, "var_elem_alloc_bytes": 0, "var_elem_free_bytes": 0,
             "hash_index_alloc_bytes": 0} for tid, n in ((10, 32768), (11, 8192))])
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_up") == 1
    assert val(ss, "ndb_node_status", node_id=1, status="STARTED") == 1
    assert val(ss, "ndb_node_status", node_id=2, status="STARTING") == 1
    # the views decode the kernel's numbers and join the dictionary as a real SQL node's do
    assert val(ss, "ndb_transactions", node_id=1, state="Started") == 1
    assert val(ss, "ndb_transaction_inactive_seconds_max", node_id=1) == 9
    if "ndb$acc_operations" in bases:
        assert val(ss, "ndb_locks", node_id=1, mode="exclusive", state="holding") == 1
        assert val(ss, "ndb_locks", node_id=1, mode="exclusive", state="waiting") == 1
        assert val(ss, "ndb_lock_duration_seconds_max", node_id=1, state="waiting") == 0.25
        assert val(ss, "ndb_table_memory_allocated_bytes", node_id=1, table="test/def/t1",
                   kind="fixed") == 32768 + 8192
    assert val(ss, "ndb_node_start_phase", node_id=2) == 4
    assert val(ss, "ndb_thread_cpu_percent", node_id=1, thr_no=1, thread_name="ldm",
               mode="os_user") == 61
    assert val(ss, "ndb_transporter_status_code", node_id=1, remote_node_id=2) == 1  # CONNECTING
    assert val(ss, "ndb_transporter_sent_bytes_total", node_id=1, remote_node_id=2) == 4242
    assert val(ss, "ndb_memory_used_bytes", node_id=1, memory_type="Data memory") == 327680
    assert not [x for x in names(ss, "ndb_transporter_status_code")
                if x["node_id"] == x["remote_node_id"]]
    has_details = any(v.name == "transporter_details" for v in schema.views_for(profile))
    assert val(ss, "ndb_exporter_collector_supported",
               collector="transporter_details") == (1 if has_details else 0)
    # per version, the columns it has: 8.0.37 none of the send buffers (it would fail with
    # 1054 if the collector asked), 8.0.38+/8.4 the send buffers, 9.x also last_recv
    trp = {"node_id": 1, "remote_node_id": 2, "trp_id": 7}
    assert val(ss, "ndb_transporter_encrypted", **trp) == (1 if has_details else None)
    sendbuffers = schema.version_tuple(profile) >= (8, 0, 38)
    assert val(ss, "ndb_transporter_send_buffer_used_bytes", **trp) == (
        1024 if sendbuffers else None)
    assert val(ss, "ndb_transporter_last_receive_age_seconds", **trp) == (
        2.5 if profile == "9.x" else None)
    for c in ALL:
        if all(any(v.name == name for v in schema.views_for(profile)) for name in c.views):
            assert val(ss, "ndb_exporter_collector_success", collector=c.name) == 1, c.name


def test_views_a_version_lacks_are_unsupported_and_said_once(scratch: Scratch, cur,
                                                              tmp_path: Path, caplog) -> None:
    """7.6's SQL node defines no pgman_time_track_stats (added in NDB 8.0.19): its collector
    is `supported 0` on every scrape and logged once; the issue's other views are there."""
    cur.execute("DROP DATABASE ndbinfo")
    cur.execute("CREATE DATABASE ndbinfo")
    for stmt in ddl.ddl("7.6").statements():
        cur.execute(stmt)
    scraper = make_scraper(scratch, tmp_path / "s.json")
    with caplog.at_level(logging.INFO, logger="ndbinfo_exporter.scrape"):
        for _ in range(3):
            ss = Samples.of_families(scraper.scrape())
            assert val(ss, "ndb_exporter_collector_supported",
                       collector="pgman_time_track_stats") == 0
            assert val(ss, "ndb_exporter_collector_success",
                       collector="pgman_time_track_stats") is None
            for c in ("memory_per_fragment", "cluster_transactions", "cluster_locks",
                      "tc_time_track_stats", "diskpagebuffer"):
                assert val(ss, "ndb_exporter_collector_success", collector=c) == 1, c
    said = [r for r in caplog.records if "pgman_time_track_stats" in r.getMessage()]
    assert len(said) == 1 and "unsupported" in said[0].getMessage()


# -- data nodes that are down, LCP progress, slow collectors, views not served ----------
def test_a_configured_data_node_that_is_down_is_visible(scratch: Scratch, cur,
                                                        tmp_path: Path) -> None:
    """A stopped data node has no `nodes` row; config_nodes still lists it."""
    cur.execute("INSERT INTO ndbinfo.config_nodes VALUES (3, 'NDB', 'host-c')")
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_data_node_running", node_id=1) == 1
    assert val(ss, "ndb_data_node_running", node_id=3) == 0
    assert not [x for x in names(ss, "ndb_node_status") if x["node_id"] == "3"]
    assert val(ss, "ndb_data_node_running", node_id=49) is None  # MGM: not a data node


def test_arbitration_is_exported_per_data_node(scratch: Scratch, cur, tmp_path: Path) -> None:
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_arbitrator_node_id", node_id=1) == 49
    assert val(ss, "ndb_arbitrator_connected", node_id=2) == 1
    assert val(ss, "ndb_president_node_id", node_id=2) == 1
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_RUN") == 1
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_FIND") == 0
    # the arbitrator lost: the state moves between series that already exist
    cur.execute("UPDATE ndbinfo.membership SET arb_connected = 'No', arb_state = 'ARBIT_FIND'"
                " WHERE node_id = 2")
    cur.execute("UPDATE ndbinfo.membership SET arb_state = NULL WHERE node_id = 1")
    ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_arbitrator_connected", node_id=2) == 0
    assert val(ss, "ndb_arbitration_state", node_id=2, state="ARBIT_FIND") == 1
    assert val(ss, "ndb_arbitration_state", node_id=2, state="ARBIT_RUN") == 0
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_RUN") == 0  # NULL state
    assert val(ss, "ndb_exporter_collector_success", collector="membership") == 1


def lcp_state(cur, remaining: list[int], alive: int = 2, replicas: int = 2) -> None:
    """table_fragments with one row per fragment: num_lcp_replicas as given."""
    cur.execute("DELETE FROM ndbinfo.table_fragments")
    tf = len(all_views()["table_fragments"])
    insert(cur, "table_fragments",
           [(1, 10, f, f, 0, f % 4, replicas, 1, 1, 2, 0, 0, alive, replicas - alive, r)
            + (0,) * (tf - 15) for f, r in enumerate(remaining)])
    cur.execute("UPDATE ndbinfo.table_replicas SET is_lcp_ongoing = %s",
                (1 if any(remaining) else 0,))


def test_lcp_progress_starts_at_zero_with_a_node_down_and_never_goes_back(
        scratch: Scratch, cur, tmp_path: Path) -> None:
    """With one replica of each fragment dead, an LCP starts with half the configured
    replicas to do: progress starts at 0, not at 50 %; a restarting node joining the LCP
    adds work without moving the ratio back (Dbdih::updateLcpInfo, noLcpReplicas++)."""
    scraper = make_scraper(scratch, tmp_path / "s.json")

    def progress() -> float | None:
        return val(Samples.of_families(scraper.scrape()), "ndb_lcp_progress_ratio")

    lcp_state(cur, [0] * 8, alive=1)
    assert progress() == 1.0  # no LCP running
    lcp_state(cur, [1] * 8, alive=1)  # the LCP starts: 8 live replicas to do, of 16
    assert progress() == 0.0
    lcp_state(cur, [0] * 4 + [1] * 4, alive=1)
    assert progress() == pytest.approx(0.5)
    lcp_state(cur, [0] * 4 + [2] * 4, alive=1)  # the restarting node joins: +4 replicas
    assert progress() == pytest.approx(0.5)  # held, not lowered to 4/12
    lcp_state(cur, [0] * 6 + [2] * 2, alive=1)
    assert progress() == pytest.approx(1 - 4 / 12)
    lcp_state(cur, [0] * 8, alive=1)
    assert progress() == 1.0


def test_no_table_fragments_rows_is_unknown_not_idle(scratch: Scratch, cur,
                                                     tmp_path: Path) -> None:
    """Only a started DIH master reports table_fragments (DbdihMain.cpp
    execDBINFO_SCANREQ): no rows during a takeover is "unknown", not "no LCP"."""
    scraper = make_scraper(scratch, tmp_path / "s.json")
    lcp_state(cur, [1] * 8)
    assert val(Samples.of_families(scraper.scrape()), "ndb_lcp_running") == 1
    cur.execute("DELETE FROM ndbinfo.table_fragments")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_exporter_collector_success", collector="lcp") == 1
    assert val(ss, "ndb_lcp_running") is None and val(ss, "ndb_lcp_progress_ratio") is None
    assert scraper.state.lcp.started_at is not None  # the LCP in flight is not ended


def test_per_fragment_collectors_run_at_the_slow_interval(scratch: Scratch, cur,
                                                          tmp_path: Path) -> None:
    scraper = make_scraper(scratch, tmp_path / "s.json", slow_interval=60)
    lcp_state(cur, [1] * 8)
    first = Samples.of_families(scraper.scrape())
    assert val(first, "ndb_lcp_fragment_replicas_remaining") == 8
    assert val(first, "ndb_exporter_collector_data_age_seconds", collector="lcp") == 0
    lcp_state(cur, [0] * 8)  # the next scrape does not read the views again
    second = Samples.of_families(scraper.scrape())
    assert val(second, "ndb_lcp_fragment_replicas_remaining") == 8
    assert val(second, "ndb_exporter_collector_success", collector="lcp") == 1
    assert val(second, "ndb_exporter_collector_data_age_seconds", collector="lcp") > 0
    assert val(second, "ndb_exporter_collector_data_age_seconds", collector="nodes") is None
    scraper.slow_interval = 0  # due again
    third = Samples.of_families(scraper.scrape())
    assert val(third, "ndb_lcp_fragment_replicas_remaining") == 0


def test_a_listed_view_its_data_nodes_do_not_serve_is_unsupported_once(
        scratch: Scratch, cur, tmp_path: Path, monkeypatch) -> None:
    """7.x, SQL node newer than its data nodes: the view is listed but its base table is not
    served (ha_ndbinfo.cc open() -> HA_ERR_NO_SUCH_TABLE; through a view: "references
    invalid table(s)"). Unsupported for now, not a failure, and no schema re-read per
    scrape."""
    # the view stays valid (information_schema lists it) and fails when read, with the
    # error a 7.x SQL node gives for a table its data nodes lack
    cur.execute("RENAME TABLE ndbinfo.counters TO ndbinfo.counters_kept")
    cur.execute("CREATE FUNCTION ndbinfo.not_served() RETURNS INT BEGIN SIGNAL SQLSTATE"
                " '42S02' SET MYSQL_ERRNO = 1146, MESSAGE_TEXT = 'Table"
                " ''ndbinfo.ndb$counters'' doesn''t exist'; RETURN 0; END")
    cur.execute("CREATE VIEW ndbinfo.counters AS SELECT * FROM ndbinfo.counters_kept"
                " WHERE ndbinfo.not_served() = 0")
    # the stand-in function needs EXECUTE to keep the view visible (no such grant on NDB)
    cur.execute(f"GRANT EXECUTE ON FUNCTION ndbinfo.not_served TO '{USER}'@'127.0.0.1'")
    reads = []
    scraper = make_scraper(scratch, tmp_path / "s.json")
    original = scraper.db.read_schema
    monkeypatch.setattr(scraper.db, "read_schema", lambda: (reads.append(1), original())[1])
    try:
        for _ in range(4):
            ss = Samples.of_families(scraper.scrape())
            assert val(ss, "ndb_exporter_collector_supported", collector="counters") == 0
            assert val(ss, "ndb_exporter_collector_success", collector="counters") is None
            assert val(ss, "ndb_up") == 1
        assert len(reads) <= 1  # the connect's read; a stale one at most once
    finally:
        cur.execute("DROP VIEW ndbinfo.counters")
        cur.execute("DROP FUNCTION ndbinfo.not_served")
        cur.execute("RENAME TABLE ndbinfo.counters_kept TO ndbinfo.counters")


def test_the_session_asks_for_the_largest_ndbinfo_batch(scratch: Scratch, tmp_path: Path
                                                        ) -> None:
    """`SET SESSION ndbinfo_max_rows = 256` is sent on every connect (10 rows per round
    trip is the default); MariaDB, the simulator's server, rejects the variable (1193),
    which must not stop the exporter."""
    root = scratch.root()
    try:
        with root.cursor() as c:
            c.execute("TRUNCATE TABLE mysql.general_log")
            c.execute("SET GLOBAL log_output = 'TABLE', general_log = 1")
        ss = Samples.of_families(make_scraper(scratch, tmp_path / "s.json").scrape())
        assert val(ss, "ndb_up") == 1
        with root.cursor() as c:
            c.execute("SET GLOBAL general_log = 0")
            c.execute("SELECT COUNT(*) FROM mysql.general_log WHERE argument ="
                      " 'SET SESSION ndbinfo_max_rows = 256'")
            assert c.fetchone()[0] == 1
    finally:
        with root.cursor() as c:
            c.execute("SET GLOBAL general_log = 0")
        root.close()


def test_the_mysql_time_limit_is_never_zero() -> None:
    """MAX_EXECUTION_TIME(0) means "no limit" to MySQL: a budget under 1 ms asks for 1."""
    db = Database(mycnf.ClientConfig(path="-", user="u"), 2.0)
    sent: list[str] = []
    db._raw = lambda sql, args=None: sent.append(sql) or [(1,)]  # type: ignore[method-assign]
    db.query("SELECT 1 FROM ndbinfo.nodes", 0.0004)
    assert sent == ["SELECT /*+ MAX_EXECUTION_TIME(1) */ 1 FROM ndbinfo.nodes"]







# -- several SQL nodes ---------------------------------------------------------------------
def test_a_dead_sql_node_is_passed_over_within_the_scrape(scratch: Scratch, cur,
                                                          tmp_path: Path) -> None:
    """The first SQL node listed refuses connections: the same scrape reads through the
    second (a real MariaDB), names the dead one, and the exporter keeps reading through the
    one that answered."""
    from ndbinfo_exporter.scraper import SqlNode

    cfg = mycnf.load(scratch.cnf)
    dead = cfg.at(f"127.0.0.1:{free_port()}")
    nodes = [SqlNode("sql1", Database(dead, 1.0), Database(dead, 1.0)),
             SqlNode("sql2", Database(cfg, 2.0), Database(cfg, 2.0))]
    scraper = Scraper(nodes, ALL, ExporterState(RestartLedger(tmp_path / "s.json")), 10.0, 0.0)
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_up") == 1
    assert val(ss, "ndb_sql_node_up", sql_node="sql1") == 0
    assert val(ss, "ndb_sql_node_up", sql_node="sql2") == 1
    assert val(ss, "ndb_sql_node_serving", sql_node="sql2") == 1
    assert val(ss, "ndb_sql_node_serving", sql_node="sql1") == 0
    assert val(ss, "ndb_exporter_sql_node_failovers_total") == 1
    ss = Samples.of_families(scraper.scrape())  # the next scrape starts with sql2
    assert val(ss, "ndb_exporter_sql_node_failovers_total") == 1
    assert val(ss, "ndb_sql_node_serving", sql_node="sql2") == 1
    # every SQL node down: ndb_up 0, each named, nothing served
    gone = [SqlNode(n.name, Database(dead, 1.0), Database(dead, 1.0)) for n in nodes]
    ss = Samples.of_families(Scraper(gone, ALL, ExporterState(RestartLedger(None)), 5.0,
                                     0.0).scrape())
    assert val(ss, "ndb_up") == 0
    assert val(ss, "ndb_sql_node_serving", sql_node="sql1") == 0
    assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 0


def test_option_file_sections_read_as_mysqld_exporter_reads_them(tmp_path: Path) -> None:
    """[client.x] takes what it lacks from [client] (go-ini's child sections, which
    mysqld_exporter's auth_module relies on), and values go through Go's os.ExpandEnv."""
    f = tmp_path / "exporters.my.cnf"
    f.write_text("[client]\nuser = exp\npassword = a$$b\n[client.node2]\n"
                 "password = \"${PW}!\"\n[client.ndb]\nuser = ndbinfo_exporter\n")
    env = {"PW": "s3cret"}
    assert mycnf.load(f, env).password == "ab"                  # `$$`: a special name, empty
    node2 = mycnf.load(f, env, section="client.node2")
    assert (node2.user, node2.password) == ("exp", "s3cret!")  # user from [client]
    ndb = mycnf.load(f, env, section="client.ndb")
    assert (ndb.user, ndb.password) == ("ndbinfo_exporter", "ab")
    assert mycnf.load(f, env, section="client.ndb").at("10.0.0.5:3307").target() \
        == "10.0.0.5:3307"
    with pytest.raises(mycnf.ConfigError, match=r"no \[client\.x\] section"):
        mycnf.load(f, env, section="client.x")
    for text, out in (("$", "$"), ("a$%b", "a$%b"), ("${}x", "x"), ("${x", "x"),
                      ("$1a", "a"), ("${A}${B}", "12")):
        assert mycnf.expand_env(text, {"A": "1", "B": "2"}) == out, text
