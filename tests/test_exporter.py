"""ndbinfo_exporter against a real MariaDB holding ndbinfo tables (no simulator needed):
every metric equals the row it comes from, the workload views become bounded series, and
restarts are timed and counted once.

The tables get the column names and types of the real views; where the recorded fixtures
(shared/fixtures/ndbinfo: the MySQL team's recorded results, never copied here) hold
`desc` output or real rows, the tables are created from that output and filled with those
rows (tests/ndbinfo_scratch.py). The exporter connects as an account with exactly the
README's grant.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from helpers import Samples, val
from ndbinfo_exporter import mycnf, schema
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.scraper import Scraper
from ndbinfo_exporter.state import ExporterState, RestartLedger
from ndbinfo_scratch import (
    Scratch,
    fixture_box_rows,
    fixture_desc,
    free_port,
    insert,
    make_scraper,
    names,
)


# -- values equal the rows they come from ----------------------------------------------
def test_every_metric_equals_its_row(scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_up") == 1 and val(ss, "ndb_ndbinfo_offline") == 0
    for c in ALL:
        if c.name != "transporter_details":
            assert val(ss, "ndb_exporter_collector_success", collector=c.name) == 1, c.name
    sql_cur.execute("SELECT node_id, status, start_phase, uptime FROM ndbinfo.nodes")
    for node, status, phase, uptime in sql_cur.fetchall():
        assert val(ss, "ndb_node_status", node_id=node, status=status) == 1
        assert val(ss, "ndb_node_status", node_id=node, status="STOPPING_1") == 0
        assert val(ss, "ndb_node_start_phase", node_id=node) == phase
        assert val(ss, "ndb_node_uptime_seconds", node_id=node) == uptime
    assert val(ss, "ndb_node_info", node_id=51, type="API", hostname="host-s",
               version="mysql-8.0.40 ndb-8.0.40-sim") == 1
    sql_cur.execute("SELECT c.node_id, c.thr_no, t.thread_name, c.OS_user, c.thread_exec,"
                " c.thread_buffer_full FROM ndbinfo.cpustat c JOIN ndbinfo.threads t"
                " USING (node_id, thr_no)")
    for node, thr, name, os_user, exec_, full in sql_cur.fetchall():
        lbl = {"node_id": node, "thr_no": thr, "thread_name": name}
        assert val(ss, "ndb_thread_cpu_percent", mode="os_user", **lbl) == os_user
        assert val(ss, "ndb_thread_cpu_percent", mode="exec", **lbl) == exec_
        assert val(ss, "ndb_thread_cpu_percent", mode="buffer_full", **lbl) == full
    ldm = {(lbl["node_id"], lbl["thr_no"]) for lbl in names(ss, "ndb_thread_cpu_percent")
           if lbl["thread_name"] == "ldm"}
    assert ldm == {("1", "2"), ("1", "3"), ("2", "4"), ("2", "5")}
    sql_cur.execute("SELECT node_id, thr_no, thr_nm, os_ru_utime, os_ru_stime, c_exec"
                " FROM ndbinfo.threadstat")
    for node, thr, name, ut, st, c_exec in sql_cur.fetchall():
        lbl = {"node_id": node, "thr_no": thr, "thread_name": name}
        assert val(ss, "ndb_thread_cpu_seconds_total", mode="user", **lbl) == pytest.approx(
            ut / 1e6)
        assert val(ss, "ndb_thread_cpu_seconds_total", mode="system", **lbl) == pytest.approx(
            st / 1e6)
        assert val(ss, "ndb_thread_signals_executed_total", **lbl) == c_exec
    sql_cur.execute("SELECT node_id, remote_node_id, status, bytes_sent, bytes_received,"
                " connect_count, overload_count, slowdown_count FROM ndbinfo.transporters")
    for node, remote, st, sent, recv, conn, ovl, slow in sql_cur.fetchall():
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
    sql_cur.execute("SELECT node_id, memory_type, used, total FROM ndbinfo.memoryusage")
    for node, mtype, used, total in sql_cur.fetchall():
        assert val(ss, "ndb_memory_used_bytes", node_id=node, memory_type=mtype) == used
        assert val(ss, "ndb_memory_total_bytes", node_id=node, memory_type=mtype) == total
    sql_cur.execute("SELECT node_id, resource_name, used, max, spare FROM ndbinfo.resources")
    for node, name, used, mx, spare in sql_cur.fetchall():
        lbl = {"node_id": node, "resource_name": name}
        assert val(ss, "ndb_resource_used_pages", **lbl) == used
        assert val(ss, "ndb_resource_max_pages", **lbl) == mx
        assert val(ss, "ndb_resource_spare_pages", **lbl) == spare
    sql_cur.execute("SELECT node_id, block_name, counter_name, SUM(val) FROM ndbinfo.counters"
                " GROUP BY 1, 2, 3")
    rows = sql_cur.fetchall()
    assert len(names(ss, "ndb_counters_total")) == len(rows) == 4  # instances summed
    for node, block, name, total in rows:
        assert val(ss, "ndb_counters_total", node_id=node, block_name=block,
                   counter_name=name) == total
    sql_cur.execute("SELECT node_id, log_type, log_id, log_part, used, total"
                    " FROM ndbinfo.logbuffers")
    for node, ltype, lid, part, used, total in sql_cur.fetchall():
        lbl = {"node_id": node, "log_type": ltype, "log_id": lid, "log_part": part}
        assert val(ss, "ndb_log_buffer_used_bytes", **lbl) == used
        assert val(ss, "ndb_log_buffer_total_bytes", **lbl) == total
    sql_cur.execute("SELECT node_id, thr_no, backup_lcp_speed_last_10sec, redo_speed_last_sec,"
                " current_target_disk_write_speed, slowdowns_due_to_high_cpu"
                " FROM ndbinfo.disk_write_speed_aggregate")
    for node, inst, lcp10, redo1, target, cpu in sql_cur.fetchall():
        lbl = {"node_id": node, "ldm_instance": inst}
        assert val(ss, "ndb_disk_write_speed_bytes_per_second", kind="backup_lcp",
                   window="10s", **lbl) == lcp10
        assert val(ss, "ndb_disk_write_speed_bytes_per_second", kind="redo", window="1s",
                   **lbl) == redo1
        assert val(ss, "ndb_disk_write_speed_target_bytes_per_second", **lbl) == target
        assert val(ss, "ndb_disk_write_slowdown_seconds_total", reason="high_cpu",
                   **lbl) == cpu


def workload(sql_cur) -> dict:
    """Transactions, locks, the disk page buffer, latency histograms and memory per fragment
    of the baseline's two data nodes (1, 2) and API node 51, shaped as the views give them:
    several rows per node that must become one series per node (and state, table ...)."""
    insert(sql_cur, "cluster_transactions", [
        (1, 1, 11 << 32, "Started", 2, 0, 0, 51, 32769),
        (1, 2, 12 << 32, "Started", 3, 1, 5, 51, 32770),
        (1, 1, 13 << 32, "Committing", 4, 4, 0, 51, 32769),
        (2, 1, 21 << 32, "Receiving", 1, 1, 42, 51, 32769)])
    insert(sql_cur, "cluster_locks", [
        (1, 1, 10, 0, 7, 11 << 32, "X", "H", "*", "UPDATE", 5, 1, None),
        (1, 2, 10, 1, 8, 12 << 32, "X", "H", "*", "UPDATE", 30000, 2, None),
        (1, 1, 11, 0, 9, 13 << 32, "S", "H", "*", "READ", 3, 3, None),
        (1, 2, 10, 1, 8, 13 << 32, "X", "W", "", "UPDATE", 800, 4, 2)])
    insert(sql_cur, "diskpagebuffer", [(1, 1, 10, 1, 4, 0, 900, 20, 80),
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
    insert(sql_cur, "tc_time_track_stats", tc)
    insert(sql_cur, "pgman_time_track_stats", [
        (1, schema.BLOCK_NUMBER["NDBFS"], inst, b, 10 * inst + i, i, 0, 1) for inst in (1, 2)
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
    insert(sql_cur, "memory_per_fragment", mpf)
    return {"bounds": bounds, "tc": tc}


def test_workload_views_become_series_per_node_never_per_transaction(
        scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    w = workload(sql_cur)
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
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


def test_a_node_row_cut_by_group_concat_is_read_row_by_row(scratch_sql: Scratch, sql_cur,
                                                           tmp_path: Path) -> None:
    """The big collectors fetch a node's rows as one string: a server that keeps the default
    group_concat_max_len (MySQL: 1 KiB) cuts it, and the rows are read one by one, none
    lost."""
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")
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


def test_logspaces_fixture_rows(scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    """The real `select * from logspaces` output, loaded into MariaDB, read back exactly."""
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
    _, rows = fixture_box_rows("logspaces.result.txt")
    assert len(names(ss, "ndb_log_space_used_bytes")) == len(rows) == 8
    for node, ltype, lid, part, total, used in rows:
        lbl = {"node_id": node, "log_type": ltype, "log_id": lid, "log_part": part}
        assert val(ss, "ndb_log_space_total_bytes", **lbl) == int(total) == 268435456
        assert val(ss, "ndb_log_space_used_bytes", **lbl) == int(used)


def test_lcp_progress_and_table_states(scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")
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
    sql_cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = 0")
    sql_cur.execute("UPDATE ndbinfo.table_replicas SET is_lcp_ongoing = 0, last_lcp_id = 42")
    scraper.scrape()
    sql_cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = 2 WHERE fragment_id = 0")
    scraper.scrape()
    time.sleep(0.3)
    sql_cur.execute("UPDATE ndbinfo.table_fragments SET num_lcp_replicas = 0")
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_lcp_running") == 0 and val(ss, "ndb_lcp_progress_ratio") == 1
    assert 0.3 <= val(ss, "ndb_lcp_last_duration_seconds") < 60


# -- restarts --------------------------------------------------------------------------
def restart_row(sql_cur, node: int, status: int, secs: dict[str, int] | None,
                total: int | None = None) -> None:
    cols = [c for c, _ in fixture_desc("restart_info.result.txt", "restart_info")]
    phases = [c for c in cols if c.startswith("secs_")]
    if total is None and secs:
        total = sum(secs.values())
    values = {"node_id": node, "node_restart_status": schema.RESTART_STATUS[status],
              "node_restart_status_int": status,
              **{p: (secs or {}).get(p) for p in phases}, "total_restart_secs": total}
    sql_cur.execute("DELETE FROM ndbinfo.restart_info WHERE node_id = %s", (node,))
    sql_cur.execute(f"INSERT INTO ndbinfo.restart_info ({', '.join(cols)}) VALUES"
                f" ({', '.join(['%s'] * len(cols))})", [values[c] for c in cols])


def test_restart_phases_and_counted_once(scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    """node_restart_status_int is the kernel's enum: 12 is "Restore fragments ongoing" (a
    restart under way), 19 completed on the master, 24 completed as reported after a master
    takeover (Dbdih.hpp NodeRecoveryStatus)."""
    state = tmp_path / "state.json"
    scraper = make_scraper(scratch_sql, state)
    phases = [c for c, _ in fixture_desc("restart_info.result.txt", "restart_info")
              if c.startswith("secs_")]
    first = {p: 1 + k for k, p in enumerate(phases)}
    restart_row(sql_cur, 2, 12, {p: v for p, v in first.items() if p < "secs_s"})  # under way
    ss = Samples.of_families(scraper.scrape())
    assert val(ss, "ndb_restart_status", node_id=2) == 12
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 0
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) is None
    restart_row(sql_cur, 2, 19, first)
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
    again = make_scraper(scratch_sql, state)
    ss = Samples.of_families(again.scrape())
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    # a master takeover: the new master reports the same restart as 24, with only the
    # phases a non-master times and the same total (Dbdih::handle_before_master)
    before_master = {p: (v if p in ("secs_to_complete_node_failure", "secs_to_include_node")
                         else 0) for p, v in first.items()}
    restart_row(sql_cur, 2, 24, before_master, total=sum(first.values()))
    ss = Samples.of_families(again.scrape())
    assert val(ss, "ndb_restart_status", node_id=2) == 24
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    # a second restart (no timing for the subscription handover) while the exporter is
    # down counts once when it comes back
    second = {p: 2 * v for p, v in first.items() if p != "secs_wait_subscription_handover"}
    restart_row(sql_cur, 2, 19, second)
    third = make_scraper(scratch_sql, state)
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
                           scratch_sql.cnf.read_text()))
    down = Scraper(Database(mycnf.load(dead), 1.0), ALL,
                   ExporterState(RestartLedger(state)), 10.0, 0.0)
    ss = Samples.of_families(down.scrape())
    assert val(ss, "ndb_up") == 0
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 2
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) == done_at
    assert val(ss, "ndb_restart_status", node_id=2) is None  # restart_info itself: unknown


def test_a_restart_completed_before_the_exporter_looked_is_not_timed(
        scratch_sql: Scratch, sql_cur, tmp_path: Path) -> None:
    """A fresh exporter meeting a completed row counts it once, but gives it no completion
    time: it may be weeks old and must not be judged as a new restart."""
    restart_row(sql_cur, 2, 19, {"secs_restore_fragments": 30, "secs_index_rebuild": 40})
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) is None
