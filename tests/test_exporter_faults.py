"""ndbinfo_exporter when the cluster or the SQL node misbehaves, against the real MariaDB of
tests/ndbinfo_scratch.py: NULLs, a view missing, ndbinfo offline, a slow view, data nodes
down, an LCP with a node down, slow collectors, views the data nodes do not serve, and a
dead SQL node among several."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from helpers import Samples, val
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.scraper import Scraper
from ndbinfo_exporter.state import ExporterState, RestartLedger
from ndbinfo_scratch import (
    USER,
    Scratch,
    all_views,
    free_port,
    insert,
    make_scraper,
    names,
)


# -- faults ------------------------------------------------------------------------------
def test_null_columns_omit_samples(scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    sql_cur.execute("UPDATE ndbinfo.cpustat SET OS_user = NULL WHERE node_id = 1 AND thr_no = 2")
    sql_cur.execute("UPDATE ndbinfo.transporters SET bytes_sent = NULL, status = NULL"
                " WHERE node_id = 2 AND remote_node_id = 1")
    sql_cur.execute("UPDATE ndbinfo.nodes SET uptime = NULL WHERE node_id = 2")
    sql_cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = NULL")
    sql_cur.execute("UPDATE ndbinfo.table_replicas SET is_lcp_ongoing = NULL")
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
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


def test_missing_view_is_unsupported_and_others_work(scratch_sql: Scratch, sql_cur,
                                                     tmp_path: Path, caplog) -> None:
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_exporter_collector_supported", collector="transporter_details") == 0
    assert val(ss, "ndb_exporter_collector_success", collector="transporter_details") is None
    assert val(ss, "ndb_exporter_collector_supported", collector="counters") == 1
    sql_cur.execute("DROP TABLE ndbinfo.counters")  # an older version without the view
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


def test_ndbinfo_offline_is_not_an_empty_cluster(scratch_sql: Scratch, sql_cur, tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ndbinfo_exporter")
    # how an offline ndbinfo answers: no rows, and a warning
    for view in ("nodes", "cpustat"):
        sql_cur.execute(f"RENAME TABLE ndbinfo.{view} TO ndbinfo.{view}_online")
        sql_cur.execute(f"CREATE VIEW ndbinfo.{view} AS SELECT * FROM ndbinfo.{view}_online"
                    " WHERE CAST('offline' AS UNSIGNED) = 1")
    try:
        scraper = make_scraper(scratch_sql, tmp_path / "s.json")
        ss = Samples.of_families(scraper.scrape())
        assert val(ss, "ndb_up") == 0 and val(ss, "ndb_ndbinfo_offline") == 1
        assert not names(ss, "ndb_node_status") and not names(ss, "ndb_thread_cpu_percent")
        assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 0
        # only cpustat answers "offline" while nodes answers: that table alone is not served
        # (an SQL node newer than its data nodes: ha_ndbinfo.cc OFFLINE_UPGRADING); its
        # collector is unsupported for now, everything else works, ndb_up stays 1
        sql_cur.execute("DROP VIEW ndbinfo.nodes")
        sql_cur.execute("RENAME TABLE ndbinfo.nodes_online TO ndbinfo.nodes")
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
        sql_cur.execute("DROP VIEW ndbinfo.cpustat")
        sql_cur.execute("RENAME TABLE ndbinfo.cpustat_online TO ndbinfo.cpustat")
        Samples.of_families(scraper.scrape())
        ss = Samples.of_families(scraper.scrape())
        assert val(ss, "ndb_exporter_collector_supported", collector="cpustat") == 1
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
        assert names(ss, "ndb_thread_cpu_percent")
    finally:
        for view in ("nodes", "cpustat"):
            sql_cur.execute(f"SHOW FULL TABLES FROM ndbinfo LIKE '{view}_online'")
            if sql_cur.fetchall():
                sql_cur.execute(f"DROP VIEW IF EXISTS ndbinfo.{view}")
                sql_cur.execute(f"RENAME TABLE ndbinfo.{view}_online TO ndbinfo.{view}")


def test_slow_view_is_cut_at_the_timeout(scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    sql_cur.execute("RENAME TABLE ndbinfo.memoryusage TO ndbinfo.memoryusage_slow")
    sql_cur.execute("CREATE VIEW ndbinfo.memoryusage AS SELECT * FROM ndbinfo.memoryusage_slow"
                " WHERE SLEEP(1) = 0")
    scraper = make_scraper(scratch_sql, tmp_path / "s.json", query_timeout=0.5)
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
    tight = make_scraper(scratch_sql, tmp_path / "s2.json", query_timeout=5, budget=1.0)
    ss = Samples.of_families(tight.scrape())
    assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 1
    assert val(ss, "ndb_exporter_collector_success", collector="memoryusage") == 0
    assert val(ss, "ndb_exporter_collector_success", collector="counters") == 0
    assert val(ss, "ndb_exporter_collector_timeouts_total", collector="counters") == 1
    assert names(ss, "ndb_node_status")




# -- data nodes that are down, LCP progress, slow collectors, views not served ----------
def test_a_configured_data_node_that_is_down_is_visible(scratch_sql: Scratch, sql_cur,
                                                        tmp_path: Path) -> None:
    """A stopped data node has no `nodes` row; config_nodes still lists it."""
    sql_cur.execute("INSERT INTO ndbinfo.config_nodes VALUES (3, 'NDB', 'host-c')")
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_data_node_running", node_id=1) == 1
    assert val(ss, "ndb_data_node_running", node_id=3) == 0
    assert not [x for x in names(ss, "ndb_node_status") if x["node_id"] == "3"]
    assert val(ss, "ndb_data_node_running", node_id=49) is None  # MGM: not a data node


def test_arbitration_is_exported_per_data_node(scratch_sql: Scratch, sql_cur,
                                               tmp_path: Path) -> None:
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_arbitrator_node_id", node_id=1) == 49
    assert val(ss, "ndb_arbitrator_connected", node_id=2) == 1
    assert val(ss, "ndb_president_node_id", node_id=2) == 1
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_RUN") == 1
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_FIND") == 0
    # the arbitrator lost: the state moves between series that already exist
    sql_cur.execute("UPDATE ndbinfo.membership SET arb_connected = 'No', arb_state = 'ARBIT_FIND'"
                " WHERE node_id = 2")
    sql_cur.execute("UPDATE ndbinfo.membership SET arb_state = NULL WHERE node_id = 1")
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_arbitrator_connected", node_id=2) == 0
    assert val(ss, "ndb_arbitration_state", node_id=2, state="ARBIT_FIND") == 1
    assert val(ss, "ndb_arbitration_state", node_id=2, state="ARBIT_RUN") == 0
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_RUN") == 0  # NULL state
    assert val(ss, "ndb_exporter_collector_success", collector="membership") == 1


def lcp_state(sql_cur, remaining: list[int], alive: int = 2, replicas: int = 2) -> None:
    """table_fragments with one row per fragment: num_lcp_replicas as given."""
    sql_cur.execute("DELETE FROM ndbinfo.table_fragments")
    tf = len(all_views()["table_fragments"])
    insert(sql_cur, "table_fragments",
           [(1, 10, f, f, 0, f % 4, replicas, 1, 1, 2, 0, 0, alive, replicas - alive, r)
            + (0,) * (tf - 15) for f, r in enumerate(remaining)])
    sql_cur.execute("UPDATE ndbinfo.table_replicas SET is_lcp_ongoing = %s",
                (1 if any(remaining) else 0,))


def test_lcp_progress_starts_at_zero_with_a_node_down_and_never_goes_back(
        scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    """With one replica of each fragment dead, an LCP starts with half the configured
    replicas to do: progress starts at 0, not at 50 %; a restarting node joining the LCP
    adds work without moving the ratio back (Dbdih::updateLcpInfo, noLcpReplicas++)."""
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")

    def progress() -> float | None:
        return val(Samples.of_families(scraper.scrape()), "ndb_lcp_progress_ratio")

    lcp_state(sql_cur, [0] * 8, alive=1)
    assert progress() == 1.0  # no LCP running
    lcp_state(sql_cur, [1] * 8, alive=1)  # the LCP starts: 8 live replicas to do, of 16
    assert progress() == 0.0
    lcp_state(sql_cur, [0] * 4 + [1] * 4, alive=1)
    assert progress() == pytest.approx(0.5)
    lcp_state(sql_cur, [0] * 4 + [2] * 4, alive=1)  # the restarting node joins: +4 replicas
    assert progress() == pytest.approx(0.5)  # held, not lowered to 4/12
    lcp_state(sql_cur, [0] * 6 + [2] * 2, alive=1)
    assert progress() == pytest.approx(1 - 4 / 12)
    lcp_state(sql_cur, [0] * 8, alive=1)
    assert progress() == 1.0


def test_no_table_fragments_rows_is_unknown_not_idle(scratch_sql: Scratch, sql_cur,
                                                     tmp_path: Path) -> None:
    """Only a started DIH master reports table_fragments (DbdihMain.cpp
    execDBINFO_SCANREQ): no rows during a takeover is "unknown", not "no LCP"."""
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")
    lcp_state(sql_cur, [1] * 8)
    assert val(Samples.of_families(scraper.scrape()), "ndb_lcp_running") == 1
    sql_cur.execute("DELETE FROM ndbinfo.table_fragments")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_exporter_collector_success", collector="lcp") == 1
    assert val(ss, "ndb_lcp_running") is None and val(ss, "ndb_lcp_progress_ratio") is None
    assert scraper.state.lcp.started_at is not None  # the LCP in flight is not ended


def test_per_fragment_collectors_run_at_the_slow_interval(scratch_sql: Scratch, sql_cur,
                                                          tmp_path: Path) -> None:
    scraper = make_scraper(scratch_sql, tmp_path / "s.json", slow_interval=60)
    lcp_state(sql_cur, [1] * 8)
    first = Samples.of_families(scraper.scrape())
    assert val(first, "ndb_lcp_fragment_replicas_remaining") == 8
    assert val(first, "ndb_exporter_collector_data_age_seconds", collector="lcp") == 0
    lcp_state(sql_cur, [0] * 8)  # the next scrape does not read the views again
    second = Samples.of_families(scraper.scrape())
    assert val(second, "ndb_lcp_fragment_replicas_remaining") == 8
    assert val(second, "ndb_exporter_collector_success", collector="lcp") == 1
    assert val(second, "ndb_exporter_collector_data_age_seconds", collector="lcp") > 0
    assert val(second, "ndb_exporter_collector_data_age_seconds", collector="nodes") is None
    scraper.slow_interval = 0  # due again
    third = Samples.of_families(scraper.scrape())
    assert val(third, "ndb_lcp_fragment_replicas_remaining") == 0


def test_a_listed_view_its_data_nodes_do_not_serve_is_unsupported_once(
        scratch_sql: Scratch, sql_cur, tmp_path: Path, monkeypatch) -> None:
    """7.x, SQL node newer than its data nodes: the view is listed but its base table is not
    served (ha_ndbinfo.cc open() -> HA_ERR_NO_SUCH_TABLE; through a view: "references
    invalid table(s)"). Unsupported for now, not a failure, and no schema re-read per
    scrape."""
    # the view stays valid (information_schema lists it) and fails when read, with the
    # error a 7.x SQL node gives for a table its data nodes lack
    sql_cur.execute("RENAME TABLE ndbinfo.counters TO ndbinfo.counters_kept")
    sql_cur.execute("CREATE FUNCTION ndbinfo.not_served() RETURNS INT BEGIN SIGNAL SQLSTATE"
                " '42S02' SET MYSQL_ERRNO = 1146, MESSAGE_TEXT = 'Table"
                " ''ndbinfo.ndb$counters'' doesn''t exist'; RETURN 0; END")
    sql_cur.execute("CREATE VIEW ndbinfo.counters AS SELECT * FROM ndbinfo.counters_kept"
                " WHERE ndbinfo.not_served() = 0")
    # the stand-in function needs EXECUTE to keep the view visible (no such grant on NDB)
    sql_cur.execute(f"GRANT EXECUTE ON FUNCTION ndbinfo.not_served TO '{USER}'@'127.0.0.1'")
    reads = []
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")
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
        sql_cur.execute("DROP VIEW ndbinfo.counters")
        sql_cur.execute("DROP FUNCTION ndbinfo.not_served")
        sql_cur.execute("RENAME TABLE ndbinfo.counters_kept TO ndbinfo.counters")


def test_the_session_asks_for_the_largest_ndbinfo_batch(scratch_sql: Scratch, sql_cur,
                                                        tmp_path: Path) -> None:
    """`SET SESSION ndbinfo_max_rows = 256` is sent on every connect (10 rows per round
    trip is the default); MariaDB, the simulator's server, rejects the variable (1193),
    which must not stop the exporter. (`sql_cur` puts the baseline views in place: alone,
    the scratch server holds none.)"""
    root = scratch_sql.root()
    try:
        with root.cursor() as c:
            c.execute("TRUNCATE TABLE mysql.general_log")
            c.execute("SET GLOBAL log_output = 'TABLE', general_log = 1")
        ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
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
def test_a_dead_sql_node_is_passed_over_within_the_scrape(scratch_sql: Scratch, sql_cur,
                                                          tmp_path: Path) -> None:
    """The first SQL node listed refuses connections: the same scrape reads through the
    second (a real MariaDB), names the dead one, and the exporter keeps reading through the
    one that answered."""
    from ndbinfo_exporter.scraper import SqlNode

    cfg = mycnf.load(scratch_sql.cnf)
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
