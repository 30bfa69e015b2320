"""The NDB simulator in the lab: a real MariaDB serving ndbinfo, driven by the model."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pymysql
import pytest
from helpers import eventually
from ndbinfo_exporter import schema

from clusterscope.lab import mariadb
from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim import view_ddl

pytestmark = pytest.mark.lab


def q(cnf: str, sql: str, args: tuple = ()) -> list[tuple]:
    conn = mariadb.connect(cnf)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())
    finally:
        conn.close()


def columns(conn, db: str) -> dict[str, list[tuple[str, str, bool]]]:
    with conn.cursor() as cur:
        cur.execute("SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM"
                    " information_schema.COLUMNS WHERE TABLE_SCHEMA=%s"
                    " ORDER BY TABLE_NAME, ORDINAL_POSITION", (db,))
        out: dict[str, list[tuple[str, str, bool]]] = {}
        for t, c, typ, null in cur.fetchall():
            out.setdefault(t, []).append((c, typ.lower(), null == "YES"))
    return out


def expected(version: str) -> dict[str, list[tuple[str, str, bool]]]:
    return {t: [(c, view_ddl.desc_type(ty), n) for c, ty, n in cols]
            for t, cols in view_ddl.expected_columns(version).items()}


@pytest.fixture(scope="module")
def sim(ndb_lab):
    sql = ndb_lab.service("ndb-sql")
    model = ndb_lab.service("ndb-model")
    return {"cnf": sql["client_config"], "sock": model["extra"]["socket"],
            "version": model["extra"]["version"], "lab": ndb_lab, "model": model}


def test_services_are_labelled_simulated(sim) -> None:
    st = sim["lab"].status()
    ndb = [s for s in st["services"] if s["part"] == "ndb"]
    assert {"ndb-sql", "ndb-model"} <= {s["name"] for s in ndb}
    assert all(s["simulated"] for s in ndb)
    versions = q(sim["cnf"], "SELECT DISTINCT node_version FROM ndbinfo.processes")
    assert versions and all(v.endswith("-sim") for (v,) in versions)


def test_served_views_have_the_reference_columns_and_types(sim) -> None:
    conn = mariadb.connect(sim["cnf"])  # the exporter's least-privilege account
    try:
        got = columns(conn, "ndbinfo")
    finally:
        conn.close()
    want = expected(sim["version"])
    assert set(want) == set(got)
    for name, cols in want.items():
        assert got[name] == cols, name


@pytest.mark.parametrize("version", ["7.5", "8.0.36", "8.0.37", "8.4"])
def test_other_version_profiles_create_the_reference_columns(sim, version: str) -> None:
    db = "cs_check_" + version.replace(".", "_")
    conn = mariadb.socket_connect(Path(sim["sock"]))
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
            cur.execute(f"CREATE DATABASE {db}")
            for stmt in view_ddl.ddl(version, db).statements():
                cur.execute(stmt)
        assert columns(conn, db) == expected(version)
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
        conn.close()


def test_the_issue_queries_run_unchanged(sim) -> None:
    conn = mariadb.connect(sim["cnf"])
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM ndbinfo.restart_info")
            assert [d[0] for d in cur.description] == [
                c.name for c in schema.view("restart_info").columns]
            cur.execute("SELECT * FROM ndbinfo.cpustat JOIN ndbinfo.threads"
                        " USING (node_id, thr_no)")
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
            assert names[:3] == ["node_id", "thr_no", "OS_user"] and "thread_name" in names
            ldm = [r for r in rows if r[names.index("thread_name")] == "ldm"]
            assert len(ldm) == 2 * 8  # the default scenario: 2 data nodes x 8 LDM
            cur.execute("SELECT node_id, COUNT(*) FROM ndbinfo.cpustat_1sec GROUP BY node_id")
            per_node = dict(cur.fetchall())
            cur.execute("SELECT COUNT(*) FROM ndbinfo.threads WHERE node_id = 1")
            assert per_node[1] == 20 * cur.fetchone()[0]
    finally:
        conn.close()


def counters(cnf: str) -> dict[tuple, int]:
    return {(n, b, i, c): v for n, b, i, c, v in q(
        cnf, "SELECT node_id, block_name, block_instance, counter_name, val"
        " FROM ndbinfo.counters")}


def sample_during(cnf: str, node: int, stop: threading.Event, out: list) -> None:
    while not stop.is_set():
        try:
            st = q(cnf, "SELECT node_restart_status_int FROM ndbinfo.restart_info"
                   " WHERE node_id=%s", (node,))
            live = {n for (n,) in q(cnf, "SELECT node_id FROM ndbinfo.nodes")}
            out.append((st[0][0] if st else None, live, counters(cnf)))
        except pymysql.MySQLError:
            pass
        time.sleep(0.2)


def _total(cnf: str, node: int) -> float:
    return sum(v for k, v in counters(cnf).items() if k[0] == node)


def _wait_for_history(cnf: str, node: int, seconds: float = 8.0) -> None:
    """Until the node's counters hold `seconds` of its current growth: a reset is then
    seen by a sampler that reads the counters at least once in that many seconds after the
    node is back (a node just restarted by the previous case regrows past its old values
    in the time one slow sample takes)."""
    def grown() -> bool:
        start = _total(cnf, node)
        time.sleep(1.0)  # the growth of one second, measured
        total = _total(cnf, node)
        return total - start > 0 and total >= seconds * (total - start)
    eventually(grown, 60, f"{seconds:.0f} s of counter history on node {node}")


@pytest.mark.parametrize("profile,scale", [("7.6", 120), ("7.5", 240)])
def test_restart_passes_every_status_in_order_and_adds_up(sim, profile: str,
                                                          scale: int) -> None:
    cnf, node = sim["cnf"], 2
    _wait_for_history(cnf, node)
    samples: list = []
    stop = threading.Event()
    before = counters(cnf)
    t = threading.Thread(target=sample_during, args=(cnf, node, stop, samples))
    t.start()
    try:
        out = sim["lab"].cli("lab", "ndb", "restart-node", str(node), "--profile", profile,
                             "--time-scale", str(scale), "--wait", timeout=120)
    finally:
        stop.set()
        t.join()
    after = counters(cnf)
    assert "completed" in out.stdout
    # every documented status, in order, each written to the tables at least once
    rid = int(out.stdout.split()[1])
    conn = mariadb.socket_connect(Path(sim["sock"]))
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT status_int FROM ndbsim.restart_log WHERE restart_id=%s"
                        " ORDER BY id", (rid,))
            logged = [s for (s,) in cur.fetchall()]
    finally:
        conn.close()
    assert logged == list(schema.RESTART_ORDER_MASTER)
    seen = [s for s, _, _ in samples if s is not None]
    seen = [s for i, s in enumerate(seen) if i == 0 or seen[i - 1] != s]
    order = list(schema.RESTART_ORDER_MASTER)
    if seen and seen[0] in schema.RESTART_COMPLETED:
        seen = seen[1:]  # the previous restart's completed row
    assert [order.index(s) for s in seen] == sorted(order.index(s) for s in seen), seen
    # visible while it ran (each status is written at least once, but a sampler on a
    # loaded machine may miss short ones, so only some are required here)
    assert any(s not in schema.RESTART_COMPLETED for s in seen), seen
    assert node in {n for (n,) in q(cnf, "SELECT node_id FROM ndbinfo.nodes")}
    cols = [c.name for c in schema.view("restart_info").columns]
    row = dict(zip(cols, q(cnf, "SELECT * FROM ndbinfo.restart_info WHERE node_id=%s",
                           (node,))[0], strict=True))
    assert row["node_restart_status_int"] in schema.RESTART_COMPLETED
    # each column is its own interval truncated to whole seconds (NodeRecoveryStatus in
    # Qmgr), so the truncated parts fall short of their total by less than 1 s each
    parts = sum(row[f"secs_{p}"] for p in schema.LOCAL_RECOVERY_PARTS)
    assert 0 <= row["secs_for_local_recovery"] - parts < len(schema.LOCAL_RECOVERY_PARTS)
    top = sum(row[f"secs_{p}"] for p in schema.TOP_LEVEL_PHASES)
    assert 0 <= row["total_restart_secs"] - top < len(schema.TOP_LEVEL_PHASES)
    lo, hi = rs.EXPECTED_TOTAL_RANGE[profile]
    assert lo <= row["total_restart_secs"] <= hi
    # counters never decrease, except the restarted node's across its restart
    series = [before, *[c for _, _, c in samples], after]
    for prev, cur in zip(series, series[1:], strict=False):
        for key, v in cur.items():
            if key in prev and key[0] != node:
                assert v >= prev[key], key
    restarted = [c for c in series if any(k[0] == node for k in c)]
    drops = sum(1 for prev, cur in zip(restarted, restarted[1:], strict=False)
                if any(cur.get(k, 0) < v for k, v in prev.items() if k[0] == node))
    assert drops == 1  # exactly one reset: the restart itself


def test_a_stuck_restart_holds_the_node_out_until_released(sim) -> None:
    cnf, node = sim["cnf"], 2
    fault(sim, "restart-stuck", "--status", "14")
    try:
        out = sim["lab"].cli("lab", "ndb", "restart-node", str(node), "--profile", "7.6",
                             "--time-scale", "120")
        rid = int(out.stdout.split()[1])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            st = q(cnf, "SELECT node_restart_status_int FROM ndbinfo.restart_info"
                   " WHERE node_id=%s", (node,))
            if st and st[0][0] == 14:
                break
            time.sleep(0.2)
        time.sleep(1.0)  # stuck for a while (120 cluster seconds per wall second)
        assert q(cnf, "SELECT node_restart_status_int FROM ndbinfo.restart_info"
                 " WHERE node_id=%s", (node,))[0][0] == 14
        # executing the REDO log (start phase 4) the node runs, but the SQL node is not
        # connected to it before start phase 9: no row of its own anywhere in ndbinfo, as
        # for a dead node; only the master's restart_info row shows where it is
        # (mysql/mysql-server QmgrMain.cpp execSTTOR case 9, NdbInfoScanOperation.cpp
        # find_next_node)
        for view in ("nodes", "membership", "threads", "cpustat", "memoryusage",
                     "transporters", "logspaces"):
            assert q(cnf, f"SELECT COUNT(*) FROM ndbinfo.{view} WHERE node_id=%s",
                     (node,)) == [(0,)], view
        assert q(cnf, "SELECT COUNT(*) FROM ndbinfo.config_nodes WHERE node_id=%s",
                 (node,))[0][0] > 0  # still configured
    finally:
        fault(sim, "restart-stuck", "--off")
    from clusterscope.ndbsim import control
    rec = control.wait_restart(sim["sock"], rid, 60)
    assert rec["statuses"] == list(schema.RESTART_ORDER_MASTER)
    row = q(cnf, "SELECT secs_exec_redo_log, total_restart_secs FROM"
            " ndbinfo.restart_info WHERE node_id=%s", (node,))[0]
    assert row[0] >= 60  # the stuck phase reports the time it really took, in cluster secs
    assert node in {n for (n,) in q(cnf, "SELECT node_id FROM ndbinfo.nodes")}


def test_a_restarting_node_appears_once_it_passed_start_phase_9(sim) -> None:
    """State 18 (WAIT_SUMA_HANDOVER) is start phase 101: the node accepts API nodes since
    phase 9, so its own rows are back, STARTING in phase 101, before it is STARTED."""
    cnf, node = sim["cnf"], 2
    fault(sim, "restart-stuck", "--status", "18")
    try:
        out = sim["lab"].cli("lab", "ndb", "restart-node", str(node), "--profile", "7.6",
                             "--time-scale", "120")
        rid = int(out.stdout.split()[1])
        eventually(lambda: q(cnf, "SELECT node_restart_status_int FROM ndbinfo.restart_info"
                                  " WHERE node_id=%s", (node,)) == [(18,)], 60,
                   "restart held at state 18")
        assert eventually(lambda: q(cnf, "SELECT status, start_phase FROM ndbinfo.nodes"
                                         " WHERE node_id=%s", (node,)), 10,
                          "its nodes row") == [("STARTING", 101)]
        assert q(cnf, "SELECT COUNT(*) FROM ndbinfo.threads WHERE node_id=%s",
                 (node,))[0][0] > 0
    finally:
        fault(sim, "restart-stuck", "--off")
    from clusterscope.ndbsim import control
    control.wait_restart(sim["sock"], rid, 60)


def test_stop_all_disconnects_the_sql_nodes_and_start_all_brings_the_cluster_back(
        sim) -> None:
    """`lab ndb stop-all`: every data node down; an SQL node that lost the cluster answers
    every ndbinfo scan with 'Connection to NDB failed' (1296), on every SQL node; control
    commands still work; `start-all` brings the rows back."""
    cnf = sim["cnf"]
    cnf2 = sim["lab"].service("ndb-sql2")["client_config"]
    def scan_error(c: str, view: str) -> int | None:
        try:
            q(c, f"SELECT * FROM ndbinfo.{view}")
        except pymysql.MySQLError as exc:
            return exc.args[0]
        return None

    sim["lab"].cli("lab", "ndb", "stop-all")
    try:
        for c in (cnf, cnf2):  # the second SQL node takes the change at the model's next tick
            for view in ("nodes", "restart_info", "cpustat"):
                assert eventually(lambda c=c, v=view: scan_error(c, v), 10, view) == 1296
        bad = sim["lab"].cli("lab", "ndb", "restart-node", "2", check=False)
        assert bad.returncode == 1 and "start-all" in bad.stderr
    finally:
        sim["lab"].cli("lab", "ndb", "start-all")
    assert eventually(lambda: q(cnf, "SELECT COUNT(*) FROM ndbinfo.nodes")[0][0] == 2
                      and q(cnf2, "SELECT COUNT(*) FROM ndbinfo.nodes")[0][0] == 2, 20,
                      "both SQL nodes see the started nodes")


def fault(sim, *args: str) -> None:
    sim["lab"].cli("lab", "ndb", "fault", *args)


def test_faults_offline_view_error_null_columns(sim) -> None:
    cnf = sim["cnf"]
    try:
        fault(sim, "ndbinfo-offline")
        conn = mariadb.connect(cnf)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT * FROM ndbinfo.nodes")
                assert cur.fetchall() == ()
                cur.execute("SHOW WARNINGS")
                assert cur.fetchall(), "offline ndbinfo must answer 0 rows plus a warning"
        finally:
            conn.close()
        fault(sim, "ndbinfo-offline", "--off")
        assert q(cnf, "SELECT COUNT(*) FROM ndbinfo.nodes")[0][0] == 2

        fault(sim, "view-error", "--view", "cpustat")
        with pytest.raises(pymysql.MySQLError) as err:
            q(cnf, "SELECT * FROM ndbinfo.cpustat")
        assert err.value.args[0] == 1296 and "from NDBINFO" in err.value.args[1]
        assert q(cnf, "SELECT COUNT(*) FROM ndbinfo.threads")[0][0] > 0

        fault(sim, "null-columns", "--view", "transporters", "--columns", "bytes_sent")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            vals = q(cnf, "SELECT bytes_sent, bytes_received FROM ndbinfo.transporters")
            if all(s is None for s, _ in vals):
                break
            time.sleep(0.3)
        assert all(s is None for s, _ in vals) and any(r for _, r in vals)
        bad = sim["lab"].cli("lab", "ndb", "fault", "null-columns", "--view", "nodes",
                             "--columns", "nosuch", check=False)
        assert bad.returncode == 1 and "nosuch" in bad.stderr
    finally:
        fault(sim, "clear")
    assert q(cnf, "SELECT COUNT(*) FROM ndbinfo.cpustat")[0][0] > 0


def test_transporter_overload_sets_the_flag_and_counts_onsets(sim) -> None:
    cnf = sim["cnf"]
    sql = ("SELECT overloaded, overload_count, slowdown, slowdown_count FROM"
           " ndbinfo.transporters WHERE node_id=1 AND remote_node_id=2")

    def wait_for(pred) -> tuple:
        def probe() -> tuple | None:
            row = q(cnf, sql)[0]
            return row if pred(row) else None
        return eventually(probe, 10, "the transporters row")

    base = q(cnf, sql)[0]
    try:
        fault(sim, "transporter-overload", "--node", "1", "--remote", "2")
        fault(sim, "transporter-slowdown", "--node", "1", "--remote", "2")
        on = wait_for(lambda r: r[0] == 1 and r[2] == 1)
        assert on[1] == base[1] + 1 and on[3] == base[3] + 1
        other = q(cnf, "SELECT overloaded FROM ndbinfo.transporters WHERE node_id=2")
        assert all(o == 0 for (o,) in other)
    finally:
        fault(sim, "clear")
    off = wait_for(lambda r: r[0] == 0 and r[2] == 0)
    assert off[1] == base[1] + 1 and off[3] == base[3] + 1  # counts stay until reconnect


def test_lcp_stall_fills_redo_and_holds_lcp_progress(sim) -> None:
    cnf = sim["cnf"]

    def snap() -> tuple:
        lcp = q(cnf, "SELECT SUM(num_lcp_replicas) FROM ndbinfo.table_fragments")[0][0]
        redo = q(cnf, "SELECT SUM(used) FROM ndbinfo.logspaces WHERE node_id=1")[0][0]
        return int(lcp), int(redo)

    def io_lag() -> int:
        return int(q(cnf, "SELECT SUM(slowdowns_due_to_io_lag) FROM"
                     " ndbinfo.disk_write_speed_aggregate")[0][0])

    lag_before = io_lag()
    try:
        fault(sim, "lcp-stall")
        # the stall is in effect once the model counts I/O-lag slowdowns for it
        eventually(lambda: io_lag() > lag_before, 15, "slowdowns due to I/O lag")
        first = snap()
        second = eventually(lambda: (s := snap())[1] > first[1] and s, 15,
                            "REDO use growing during the stall")
        assert second[0] == first[0]  # and the LCP made no progress meanwhile
    finally:
        fault(sim, "clear")


def test_cluster_log_uses_ndb_mgmd_wording(sim) -> None:
    log = Path(sim["model"]["extra"]["cluster_log"])
    text = log.read_text()
    assert "[MgmtSrvr] INFO     -- Node 1: Local checkpoint" in text
    if "Node 2: Node shutdown initiated" in text:  # after the restart tests
        assert "Node 2: Start phase 1 completed (node restart)" in text
        assert "Node 2: Started (version" in text


def test_set_version_changes_the_served_views(sim) -> None:
    cnf, lab = sim["cnf"], sim["lab"]

    def views() -> set[str]:
        return {t for (t,) in q(cnf, "SELECT TABLE_NAME FROM information_schema.VIEWS"
                                " WHERE TABLE_SCHEMA='ndbinfo'")}

    assert "transporter_details" not in views()
    try:
        lab.cli("lab", "ndb", "set-version", "8.4")
        assert views() == {v.name for v in schema.views_for("8.4")}
        deadline = time.monotonic() + 10
        rows: list = []
        while not rows and time.monotonic() < deadline:
            rows = q(cnf, "SELECT status, encrypted FROM ndbinfo.transporter_details")
            time.sleep(0.3)
        assert ("CONNECTED", 0) in rows
        versions = {v for (v,) in q(cnf, "SELECT node_version FROM ndbinfo.processes")}
        assert versions == {"mysql-8.4.3 ndb-8.4.3-sim"}
        bad = lab.cli("lab", "ndb", "set-version", "seven", check=False)
        assert bad.returncode == 1 and "seven" in bad.stderr
    finally:
        lab.cli("lab", "ndb", "set-version", sim["version"])
    assert views() == {v.name for v in schema.views_for(sim["version"])}
