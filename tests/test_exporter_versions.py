"""The ndbinfo views as each NDB version defines them (the catalogue the simulator serves),
read by the exporter from a real MariaDB: every version profile's definitions, and what a
version lacks is unsupported and said once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from helpers import Samples, val
from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors import ALL
from ndbinfo_scratch import (
    FROM_FIXTURES,
    Scratch,
    base_dictionary,
    base_insert,
    fixture_desc,
    make_scraper,
    names,
)

from clusterscope.bench.synthetic import VIEWS
from clusterscope.ndbsim import view_ddl


def test_shared_view_descriptions_match_the_real_desc_output() -> None:
    """The shared descriptions (which the benchmark's tables come from) equal the recorded
    `desc` of the real 7.6-era views, and the 8.0 column names are the same."""
    for view, (file, name) in FROM_FIXTURES.items():
        real = [(c, t.split()[0].lower().replace("int", "int unsigned") if "unsigned" in t
                 else t.lower()) for c, t in fixture_desc(file, name)]
        ours = [(c, t.lower()) for c, t, _ in view_ddl.expected_columns("7.6")[view]]
        assert ours == real, view
        assert [c for c, _ in VIEWS[view]] == [c for c, _ in real], view



# -- the shared view definitions (what the lab simulator serves), per version profile ---
@pytest.mark.parametrize("profile", ["7.5", "8.0", "8.0.37", "8.4", "9.x"])
def test_real_view_definitions_per_version(scratch_sql: Scratch, sql_cur, tmp_path: Path,
                                           profile: str) -> None:
    """ndb$ base tables + the real-named views (SQL SECURITY INVOKER) of a version profile:
    enum decodes and aggregation happen in the views, the exporter reads them unchanged."""
    sql_cur.execute("DROP DATABASE ndbinfo")
    sql_cur.execute("CREATE DATABASE ndbinfo")
    for stmt in view_ddl.ddl(profile).statements():
        sql_cur.execute(stmt)
    base_insert(sql_cur, profile, "ndb$nodes", [
        {"node_id": 1, "uptime": 100, "status": 3, "start_phase": 0, "config_generation": 1},
        {"node_id": 2, "uptime": 5, "status": 2, "start_phase": 4, "config_generation": 1}])
    base_insert(sql_cur, profile, "ndb$threads", [
        {"node_id": 1, "thr_no": 0, "thread_name": "main", "thread_description": "main"},
        {"node_id": 1, "thr_no": 1, "thread_name": "ldm", "thread_description": "ldm"}])
    base_insert(sql_cur, profile, "ndb$cpustat", [
        {"node_id": 1, "thr_no": 1, "OS_user": 61, "OS_system": 7, "OS_idle": 32,
         "thread_exec": 66, "elapsed_time": 1000000}])
    base_insert(sql_cur, profile, "ndb$transporters", [
        {"node_id": 1, "remote_node_id": 2, "connection_status": 1, "bytes_sent": 4242,
         "bytes_received": 99},
        # 7.x lists the reporting node's own slot: not a link
        {"node_id": 1, "remote_node_id": 1, "connection_status": 2, "remote_address": "-",
         "bytes_sent": 0, "bytes_received": 0}])
    details = [t for t in view_ddl.base_tables_for(profile) if t.name == "ndb$transporter_details"]
    if details:
        have = {c for c, _ in details[0].columns_for(profile)}
        base_insert(sql_cur, profile, "ndb$transporter_details", [{k: v for k, v in {
            "node_id": 1, "block_instance": 0, "trp_id": 7, "remote_node_id": 2,
            "connection_status": 0, "encrypted": 1, "sendbuffer_used_bytes": 1024,
            "sendbuffer_alloc_bytes": 4096, "last_recv": 2_500_000}.items() if k in have}])
    base_insert(sql_cur, profile, "ndb$pools", [
        {"node_id": 1, "block_number": 254, "block_instance": 0, "pool_name": "Data memory",
         "used": 10, "total": 100, "entry_size": 32768}])
    # the kernel's numbers: a transaction in Dbtc's CS_STARTED (2), its row lock (op_flags:
    # exclusive 0x10 | owner 0x40 | holding 0x80 | UPDATE 1) and a request waiting behind it
    bases = {t.name for t in view_ddl.base_tables_for(profile)}
    base_insert(sql_cur, profile, "ndb$dbtc_apiconnect_state", [
        dict(zip(("state_int_value", "state_name", "state_friendly_name",
                  "state_description"), row, strict=True))
        for row in schema.DBTC_APICONNECT_STATE])
    base_insert(sql_cur, profile, "ndb$transactions", [
        {"node_id": 1, "block_instance": 1, "apiref": (32769 << 16) | 51, "transid0": 7,
         "transid1": 1, "state": 2, "c_ops": 3, "outstanding": 0, "timer": 9}])
    if "ndb$acc_operations" in bases:
        base_insert(sql_cur, profile, "ndb$acc_operations", [
            {"node_id": 1, "block_instance": 1, "tableid": 10, "transid0": 7, "transid1": 1,
             "acc_op_id": 1, "op_flags": 0xD1, "duration_millis": 1500},
            {"node_id": 1, "block_instance": 1, "tableid": 10, "transid0": 8, "transid1": 1,
             "acc_op_id": 2, "op_flags": 0x11, "prev_serial_op_id": 1, "duration_millis": 250}])
        base_dictionary(sql_cur, profile)
        base_insert(sql_cur, profile, "ndb$frag_mem_use", [
            {"node_id": 1, "block_instance": 1, "table_id": tid, "fragment_num": 0,
             "fixed_elem_alloc_bytes": n, "fixed_elem_free_bytes": 0, "fixed_elem_count": 4,
             "fixed_elem_size_bytes": 16, "var_elem_alloc_bytes": 0, "var_elem_free_bytes": 0,
             "hash_index_alloc_bytes": 0} for tid, n in ((10, 32768), (11, 8192))])
    ss = Samples.of_families(make_scraper(scratch_sql, tmp_path / "s.json").scrape())
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


def test_views_a_version_lacks_are_unsupported_and_said_once(scratch_sql: Scratch, sql_cur,
                                                              tmp_path: Path, caplog) -> None:
    """7.6's SQL node defines no pgman_time_track_stats (added in NDB 8.0.19): its collector
    is `supported 0` on every scrape and logged once; the issue's other views are there."""
    sql_cur.execute("DROP DATABASE ndbinfo")
    sql_cur.execute("CREATE DATABASE ndbinfo")
    for stmt in view_ddl.ddl("7.6").statements():
        sql_cur.execute(stmt)
    scraper = make_scraper(scratch_sql, tmp_path / "s.json")
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
