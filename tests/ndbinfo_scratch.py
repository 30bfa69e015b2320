"""The exporter tests' scratch server: a real MariaDB holding ndbinfo tables with the
column names and types of the real views (conftest's `scratch_sql`, one per session), the
baseline rows each test starts from, and the helpers the exporter tests share.

Where the recorded fixtures (shared/fixtures/ndbinfo: the MySQL team's recorded results,
never copied here) hold `desc` output or real rows, the tables are created from that
output and filled with those rows.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pymysql
from helpers import shared_fixture
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.scraper import Scraper
from ndbinfo_exporter.state import ExporterState, RestartLedger

from clusterscope.bench.synthetic import VIEWS
from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab
from clusterscope.ndbsim import view_ddl

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


@contextlib.contextmanager
def serve() -> Iterator[Scratch]:
    """The scratch server, its ndbinfo database and the exporter's account with exactly the
    README's grant; stopped and removed at the end."""
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


def base_insert(sql_cur, version: str, table: str, rows: list[dict]) -> None:
    cols = [c for c, _ in next(t for t in view_ddl.base_tables_for(version)
                               if t.name == table).columns_for(version)]
    for row in rows:
        unknown = set(row) - set(cols)
        assert not unknown, (table, unknown)
        sql_cur.execute(f"INSERT INTO ndbinfo.`{table}` ({', '.join(f'`{c}`' for c in cols)})"
                    f" VALUES ({', '.join(['%s'] * len(cols))})", [row.get(c) for c in cols])


def base_dictionary(sql_cur, version: str) -> None:
    """The dictionary's object types and one table (id 10, test/def/t1) with its unique
    index (id 11): what the per-fragment views join for names."""
    from ndbinfo_exporter import schema
    base_insert(sql_cur, version, "ndb$dict_obj_types", [
        {"type_id": k, "type_name": v} for k, v in schema.DICT_OBJ_TYPE])
    base_insert(sql_cur, version, "ndb$dict_obj_info", [
        {"type": 2, "id": 10, "parent_obj_type": 0, "parent_obj_id": 0,
         "fq_name": "test/def/t1"},
        {"type": 3, "id": 11, "parent_obj_type": 2, "parent_obj_id": 10,
         "fq_name": "sys/def/10/u$unique"}])
