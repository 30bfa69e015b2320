"""The workload collectors mean what the kernel counts: lock contention from the exact
per-fragment counters, TC records read as the TC keeps them, and help texts that say what
each series measures (mysql-server's kernel blocks and the manual, cited in the collectors).

Fed rows in a real MariaDB (the scratch server of tests/ndbinfo_scratch.py), read by
the exporter's collectors through the views' real names and column types.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import Samples, series, val
from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors import BY_NAME
from ndbinfo_scratch import Scratch, base_dictionary, base_insert, insert, make_scraper

from clusterscope.ndbsim import view_ddl


def scrape(scratch: Scratch, tmp_path: Path, slow_interval: float = 0.0) -> Samples:
    return Samples.of_families(make_scraper(scratch, tmp_path / "s.json",
                                            slow_interval=slow_interval).scrape())


def helps(scratch: Scratch, tmp_path: Path) -> dict[str, str]:
    """HELP text per family of one scrape."""
    return {f.name: getattr(f, "doc", None) or f.documentation
            for f in make_scraper(scratch, tmp_path / "s.json").scrape()}


LOCK_ROWS = [
    # fq_name, parent, type, table_id, node, ldm, fragment, ex_req, ex_imm_ok, ex_wait_ok,
    # ex_wait_fail, sh_req, sh_imm_ok, sh_wait_ok, sh_wait_fail, wait_ok_millis,
    # wait_fail_millis: two fragments of t1 on node 1 and its unique index, one on node 2
    ("test/def/t1", None, "User table", 10, 1, 1, 0, 1000, 900, 90, 10, 500, 480, 20, 0,
     4000, 12000),
    ("test/def/t1", None, "User table", 10, 1, 2, 1, 2000, 1990, 8, 2, 100, 100, 0, 0,
     300, 2400),
    ("sys/def/10/u$unique", "test/def/t1", "Unique hash index", 12, 1, 1, 0, 50, 45, 5, 0,
     0, 0, 0, 0, 60, 0),
    ("test/def/t1", None, "User table", 10, 2, 1, 0, 700, 700, 0, 0, 10, 10, 0, 0, 0, 0),
    ("test/def/t2", None, "User table", 11, 1, 1, 0, 30, 30, 0, 0, 0, 0, 0, 0, 0, 0)]


def test_lock_contention_per_table_from_the_cumulative_counters(scratch_sql: Scratch, sql_cur,
                                                                tmp_path: Path) -> None:
    """locks_per_fragment's exact counters become waits, timeouts and wait time per table
    (its unique index's locks count to it) and node: every wait, not the few a cluster_locks
    snapshot happens to see."""
    insert(sql_cur, "locks_per_fragment", LOCK_ROWS)
    ss = scrape(scratch_sql, tmp_path)
    assert val(ss, "ndb_exporter_collector_success", collector="locks_per_fragment") == 1
    t1 = {"node_id": 1, "table": "test/def/t1"}
    assert val(ss, "ndb_table_lock_requests_total", mode="exclusive", **t1) == 3050
    assert val(ss, "ndb_table_lock_requests_total", mode="shared", **t1) == 600
    assert val(ss, "ndb_table_lock_waits_total", mode="exclusive", outcome="granted",
               **t1) == 90 + 8 + 5
    assert val(ss, "ndb_table_lock_waits_total", mode="exclusive", outcome="failed",
               **t1) == 12
    assert val(ss, "ndb_table_lock_waits_total", mode="shared", outcome="granted", **t1) == 20
    assert val(ss, "ndb_table_lock_wait_seconds_total", outcome="granted", **t1) == 4.36
    assert val(ss, "ndb_table_lock_wait_seconds_total", outcome="failed", **t1) == 14.4
    # per node: a node's counters restart with it, so they are never summed over nodes here
    assert val(ss, "ndb_table_lock_requests_total", node_id=2, table="test/def/t1",
               mode="exclusive") == 700
    tables = {lbl["table"] for lbl, _ in series(ss, "ndb_table_lock_requests_total")}
    assert tables == {"test/def/t1", "test/def/t2"}  # bounded by tables, no index label
    for lbl, _ in series(ss, "ndb_table_lock_waits_total"):
        assert set(lbl) == {"node_id", "table", "mode", "outcome"}


def test_pool_scans_and_lock_counters_run_at_the_slow_interval(scratch_sql: Scratch, sql_cur,
                                                                tmp_path: Path) -> None:
    """The transaction and lock views scan whole record pools in the kernel: off the fast
    scrape, served from the last slow run in between (with its age), like the
    per-fragment views."""
    for name in ("cluster_transactions", "cluster_locks", "locks_per_fragment"):
        assert BY_NAME[name].slow, name
    insert(sql_cur, "cluster_transactions", [(1, 1, 11 << 32, "Started", 2, 0, 3, 51, 32769)])
    insert(sql_cur, "locks_per_fragment", LOCK_ROWS[:1])
    scraper = make_scraper(scratch_sql, tmp_path / "s.json", slow_interval=60)
    first = Samples.of_families(scraper.scrape())
    assert val(first, "ndb_transactions", node_id=1, state="Started") == 1
    sql_cur.execute("DELETE FROM ndbinfo.cluster_transactions")
    second = Samples.of_families(scraper.scrape())
    assert val(second, "ndb_transactions", node_id=1, state="Started") == 1  # not re-read
    for name in ("cluster_transactions", "cluster_locks", "locks_per_fragment"):
        assert val(second, "ndb_exporter_collector_data_age_seconds", collector=name) > 0


def test_tc_records_without_a_friendly_name_are_state_other(scratch_sql: Scratch, sql_cur,
                                                            tmp_path: Path) -> None:
    """CS_START_COMMITTING and three more TC states have no friendly name in the SQL node's
    lookup: their records count as state="other", never as an empty label value."""
    insert(sql_cur, "cluster_transactions", [(1, 1, 11 << 32, "", 2, 0, 0, 51, 32769),
                                         (1, 2, 12 << 32, "", 3, 3, 0, 51, 32770),
                                         (1, 1, 13 << 32, "Completing", 0, 2, 0, 51, 32769)])
    ss = scrape(scratch_sql, tmp_path)
    assert val(ss, "ndb_transactions", node_id=1, state="other") == 2
    assert val(ss, "ndb_transactions", node_id=1, state="") is None
    assert val(ss, "ndb_transactions", node_id=1, state="Completing") == 1


def test_the_longest_inactive_transaction_is_one_holding_operations(scratch_sql: Scratch, sql_cur,
                                                                    tmp_path: Path) -> None:
    """A TC record with no operations (a connection last used for committed reads) holds no
    locks however long it idles; the longest inactivity is that of a record that holds
    operations."""
    insert(sql_cur, "cluster_transactions", [
        (1, 1, 11 << 32, "Started", 0, 0, 900, 51, 32769),   # stateless, idle 15 minutes
        (1, 2, 12 << 32, "Started", 3, 0, 7, 51, 32770),     # wrote, quiet for 7 s
        (2, 1, 21 << 32, "Started", 0, 0, 400, 51, 32769)])  # only stateless ones
    ss = scrape(scratch_sql, tmp_path)
    assert val(ss, "ndb_transaction_inactive_seconds_max", node_id=1) == 7
    assert val(ss, "ndb_transaction_inactive_seconds_max", node_id=2) == 0
    assert val(ss, "ndb_transactions", node_id=1, state="Started") == 2  # still counted


def _under_way(help_text: str) -> set[int]:
    """The restart states a help text calls under way ("4-18 and 20-23 under way")."""
    part = help_text.split("failure handling,", 1)[1].split("under way", 1)[0]
    out: set[int] = set()
    for a, b in re.findall(r"(\d+)-(\d+)", part):
        out |= set(range(int(a), int(b) + 1))
    return out


def test_restart_status_help_names_every_state_under_way(scratch_sql: Scratch, sql_cur,
                                                         tmp_path: Path) -> None:
    """The states the help calls under way are the kernel's restart states that are neither
    failure handling, completed nor "no information" (20-23: a restart seen by a node that
    was not master)."""
    text = helps(scratch_sql, tmp_path)["ndb_restart_status"]
    expected = (set(schema.RESTART_STATUS_NAME) - schema.RESTART_COMPLETED
                - schema.RESTART_FAILURE - schema.RESTART_NO_INFO)
    assert _under_way(text) == expected == set(range(4, 19)) | set(range(20, 24))


def test_help_says_scan_fragment_is_one_batch(scratch_sql: Scratch, sql_cur,
                                              tmp_path: Path) -> None:
    """The TC times a fragment scan batch by batch (start tick per SCAN_NEXTREQ), and a
    transaction from its first operation to the commit confirmation, client time included."""
    text = helps(scratch_sql, tmp_path)["ndb_tc_latency_seconds"]
    assert "scan_fragment one batch" in text
    assert "first operation to commit confirmation" in text and "think time" in text


def test_lock_counters_through_the_real_view_definitions(scratch_sql: Scratch, sql_cur,
                                                         tmp_path: Path) -> None:
    """ndb$frag_locks joined to the dictionary as the SQL node's locks_per_fragment view
    does (7.6 and 8.0 definitions): a unique index's counters count to its table."""
    for profile in ("7.6", "8.4"):
        sql_cur.execute("DROP DATABASE ndbinfo")
        sql_cur.execute("CREATE DATABASE ndbinfo")
        for stmt in view_ddl.ddl(profile).statements():
            sql_cur.execute(stmt)
        base_insert(sql_cur, profile, "ndb$nodes", [
            {"node_id": 1, "uptime": 100, "status": 3, "start_phase": 0,
             "config_generation": 1}])
        base_dictionary(sql_cur, profile)
        base_insert(sql_cur, profile, "ndb$frag_locks", [
            {"node_id": 1, "block_instance": 1, "table_id": tid, "fragment_num": 0,
             "ex_req": 100, "ex_imm_ok": 90, "ex_wait_ok": 7, "ex_wait_fail": 3,
             "sh_req": 0, "sh_imm_ok": 0, "sh_wait_ok": 0, "sh_wait_fail": 0,
             "wait_ok_millis": 70, "wait_fail_millis": 3600} for tid in (10, 11)])
        ss = scrape(scratch_sql, tmp_path)
        t1 = {"node_id": 1, "table": "test/def/t1"}
        assert val(ss, "ndb_table_lock_waits_total", mode="exclusive", outcome="failed",
                   **t1) == 6, profile
        assert val(ss, "ndb_table_lock_wait_seconds_total", outcome="failed", **t1) == 7.2
