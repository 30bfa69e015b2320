"""Every ndbinfo view the product serves or reads, described once as data.

Sources: mysql/mysql-server, the kernel table catalogue (NdbinfoTables.cpp) and the view
definitions (storage/ndb/tools/ndbinfo_sql.cpp for 7.x, storage/ndb/plugin/ha_ndbinfo_sql.cc
for 8.0+); a source is cited next to each fact that is not in both. A view is a hidden base
table `ndb$<x>` (kernel numbers: INT UNSIGNED / BIGINT UNSIGNED / VARCHAR(512)) plus a
user-facing view that may drop columns, decode enums with CASE, join lookup tables or
aggregate. The exporter reads names and decodes from here; the NDB simulator compiles its
DDL from the same data
(`clusterscope.ndbsim.view_ddl`, which is not part of the exporter).

Pure data and small pure functions; nothing here touches a database. The vocabulary the
catalogue is written in is schema_model.py, what the numbers mean is decodes.py.
"""

from __future__ import annotations

from ndbinfo_exporter import decodes

# One namespace for the catalogue's readers (`schema.RESTART_COMPLETED`,
# `schema.version_tuple`, `schema.view(...)`): the decodes and the vocabulary live in rooms
# of their own, and schema serves their names too.
from ndbinfo_exporter.decodes import *  # noqa: F403
from ndbinfo_exporter.schema_model import *  # noqa: F403
from ndbinfo_exporter.schema_model import (
    BIT_OP,
    SENDBUFFER_SINCE,
    B,
    BaseTable,
    Column,
    I,
    S,
    View,
    at_least,
    enum,
    plain,
)
from ndbinfo_exporter.schema_workload import WORKLOAD_VIEWS

_CPU_PCT = "node_id thr_no OS_user OS_system OS_idle thread_exec thread_sleeping" \
    " thread_spinning thread_send thread_buffer_full"
_CPU_TIME = "OS_user_time OS_system_time OS_idle_time exec_time sleep_time spin_time" \
    " send_time buffer_full_time elapsed_time"
_DWS = ("backup_lcp_speed_last_sec", "redo_speed_last_sec", "backup_lcp_speed_last_10sec",
        "redo_speed_last_10sec", "std_dev_backup_lcp_speed_last_10sec",
        "std_dev_redo_speed_last_10sec", "backup_lcp_speed_last_60sec",
        "redo_speed_last_60sec", "std_dev_backup_lcp_speed_last_60sec",
        "std_dev_redo_speed_last_60sec", "slowdowns_due_to_io_lag",
        "slowdowns_due_to_high_cpu", "disk_write_speed_set_to_min",
        "current_target_disk_write_speed")
_DWS_UNIT = {"slowdowns_due_to_io_lag": "seconds", "slowdowns_due_to_high_cpu": "seconds",
             "disk_write_speed_set_to_min": "seconds",
             "current_target_disk_write_speed": "bytes_per_second",
             "backup_lcp_speed_last_sec": "bytes", "redo_speed_last_sec": "bytes"}
_DWS_NODE = ("backup_lcp_speed_last_sec", "redo_speed_last_sec", "backup_lcp_speed_last_10sec",
             "redo_speed_last_10sec", "backup_lcp_speed_last_60sec", "redo_speed_last_60sec")
_TDS_BASE = tuple((n, I) for n in (
    "node_id table_id tab_copy_status tab_update_status tab_lcp_status tab_status tab_storage"
    " tab_type tab_partitions tab_fragments current_scan_count scan_count_wait"
    " is_reorg_ongoing").split())
_TF = ("node_id table_id partition_id fragment_id partition_order log_part_id no_of_replicas"
       " current_primary preferred_primary current_first_backup current_second_backup"
       " current_third_backup num_alive_replicas num_dead_replicas num_lcp_replicas")
_TR = ("node_id table_id fragment_id initial_gci replica_node_id is_lcp_ongoing"
       " num_crashed_replicas last_max_gci_started last_max_gci_completed last_lcp_id"
       " prev_lcp_id prev_max_gci_started prev_max_gci_completed last_create_gci"
       " last_replica_gci is_replica_alive")
_THREADSTAT = ("c_loop c_exec c_wait c_l_sent_prioa c_l_sent_priob c_r_sent_prioa"
               " c_r_sent_priob os_tid os_now os_ru_utime os_ru_stime os_ru_minflt"
               " os_ru_majflt os_ru_nvcsw os_ru_nivcsw")
_THREADSTAT_UNIT = {"os_now": "milliseconds", "os_ru_utime": "microseconds",
                    "os_ru_stime": "microseconds"}
_TRP_BASE = (("node_id", I), ("remote_node_id", I), ("connection_status", I),
             ("remote_address", S), ("bytes_sent", B), ("bytes_received", B),
             ("connect_count", I), ("overloaded", I), ("overload_count", I), ("slowdown", I),
             ("slowdown_count", I), ("encrypted", I))
_TRP_COLS = (
    Column("node_id", I), Column("remote_node_id", I),
    enum("status", "connection_status", decodes.TRANSPORTER_STATUS, None),
    Column("remote_address", S), Column("bytes_sent", B, "bytes"),
    Column("bytes_received", B, "bytes"), Column("connect_count", I),
    Column("overloaded", I), Column("overload_count", I), Column("slowdown", I),
    Column("slowdown_count", I))
_RESTART_COLS = (Column("node_id", I), Column("node_restart_status", S),
                 Column("node_restart_status_int", I),
                 *[Column(f"secs_{p}", I, "seconds") for p in decodes.RESTART_PHASES],
                 Column("total_restart_secs", I, "seconds"))

VIEWS: tuple[View, ...] = (
    View("nodes", "ndb$nodes", "7.1.0", (
        Column("node_id", I), Column("uptime", B, "seconds"),
        enum("status", "status", decodes.NODE_STATUS, "<unknown>"),
        Column("start_phase", I), Column("config_generation", I)),
        base_columns=(("node_id", I), ("uptime", B), ("status", I), ("start_phase", I),
                      ("config_generation", I)),
        help="data nodes that are up"),
    View("processes", "ndb$processes", "7.5.7", (
        Column("node_id", I), enum("node_type", "node_type", decodes.NODE_TYPE, None),
        Column("node_version", S),
        Column("process_id", I, expr="NULLIF(process_id, 0)"),
        Column("angel_process_id", I, expr="NULLIF(angel_process_id, 0)"),
        Column("process_name", S), Column("service_URI", S)),
        base_columns=(("reporting_node_id", I), ("node_id", I), ("node_type", I),
                      ("node_version", S), ("process_id", I), ("angel_process_id", I),
                      ("process_name", S), ("service_URI", S)),
        tail="FROM {db}.`ndb$processes` ORDER BY node_id", distinct=True),
    View("config_nodes", "ndb$config_nodes", "7.5.7", (
        Column("node_id", I), enum("node_type", "node_type", decodes.NODE_TYPE, None),
        Column("node_hostname", S)),
        base_columns=(("reporting_node_id", I), ("node_id", I), ("node_type", I),
                      ("node_hostname", S)),
        tail="FROM {db}.`ndb$config_nodes` ORDER BY node_id", distinct=True),
    # mysql-server storage/ndb/tools/ndbinfo_sql.cc, view `membership`: one row per running
    # data node, its view of the heartbeat ring, the president (QMGR) and the arbitrator;
    # "All nodes should show the same arb_ticket values as well as the same arb_state"
    # (manual, ndbinfo membership table)
    View("membership", "ndb$membership", "7.1.0", (
        *plain("node_id group_id left_node right_node president successor", I),
        # a bit operation's result: MariaDB's DESC of the view shows bigint(21) unsigned
        # (measured, tests/test_ndbsim_lab.py); MySQL 5.7's is assumed the same (not
        # checked), 8.0+ prints no display width
        Column("succession_order", BIT_OP, expr="dynamic_id & 0xFFFF"),
        Column("Conf_HB_order", BIT_OP, expr="dynamic_id >> 16"),
        Column("arbitrator", I), Column("arb_ticket", S),
        enum("arb_state", "arb_state", decodes.ARB_STATE, "UNKNOWN"),
        enum("arb_connected", "arb_connected", ((1, "Yes"),), "No"),
        Column("connected_rank1_arbs", S, expr="conn_rank1_arbs"),
        Column("connected_rank2_arbs", S, expr="conn_rank2_arbs")),
        base_columns=(("node_id", I), ("group_id", I), ("left_node", I), ("right_node", I),
                      ("president", I), ("successor", I), ("dynamic_id", I),
                      ("arbitrator", I), ("arb_ticket", S), ("arb_state", I),
                      ("arb_connected", I), ("conn_rank1_arbs", S), ("conn_rank2_arbs", S)),
        help="each running data node's view of the president and the arbitrator"),
    View("threads", "ndb$threads", "7.5.2",
         tuple(plain("node_id thr_no", I) + plain("thread_name thread_description", S))),
    View("threadstat", "ndb$threadstat", "7.1.0", tuple(
        plain("node_id thr_no", I) + [Column("thr_nm", S)]
        + [Column(n, B, _THREADSTAT_UNIT.get(n)) for n in _THREADSTAT.split()]),
        help="one row per block thread except send threads; cumulative since start"),
    View("cpustat", "ndb$cpustat", "7.5.2", tuple(
        plain("node_id thr_no", I) + plain(_CPU_PCT.split(" ", 2)[2], I, "percent")
        + [Column("elapsed_time", I, "microseconds")])),
    View("cpustat_1sec", "ndb$cpustat_1sec", "7.5.2", tuple(
        plain("node_id thr_no", I) + plain(_CPU_TIME, I, "microseconds")),
        help="20 rows per thread, no measurement index"),
    View("transporters", "ndb$transporters", "7.1.0",
         (*_TRP_COLS, Column("encrypted", I, since="8.3.0")),
         base_columns=_TRP_BASE, base_column_since=(("encrypted", "8.3.0"),)),
    # Columns by release (mysql/mysql-server manuals): 8.0.37 added the view with node_id ..
    # encrypted ("The transporter_details table was added in NDB 8.0.37"); the 8.0.38
    # release notes and 8.4.0 add the four sendbuffer_* columns; the 9.5 manual adds `type`;
    # `heartbeat_interval` and `last_recv` are only in trunk's ha_ndbinfo_sql.cc (AKJUS
    # mirror, 2026): their release is not published, assumed 9.6 here.
    View("transporter_details", "ndb$transporter_details", "8.0.37", (
        Column("node_id", I), Column("block_instance", I), Column("trp_id", I),
        Column("remote_node_id", I),
        enum("status", "connection_status", decodes.TRANSPORTER_STATUS, None),
        Column("remote_address", S), Column("bytes_sent", B, "bytes"),
        Column("bytes_received", B, "bytes"), Column("connect_count", I),
        Column("overloaded", I), Column("overload_count", I), Column("slowdown", I),
        Column("slowdown_count", I), Column("encrypted", I),
        Column("sendbuffer_used_bytes", B, "bytes", since=SENDBUFFER_SINCE),
        Column("sendbuffer_max_used_bytes", B, "bytes", since=SENDBUFFER_SINCE),
        Column("sendbuffer_alloc_bytes", B, "bytes", since=SENDBUFFER_SINCE),
        Column("sendbuffer_max_alloc_bytes", B, "bytes", since=SENDBUFFER_SINCE),
        enum("type", "type", decodes.TRANSPORTER_TYPE, None, since="9.5.0"),
        Column("heartbeat_interval", I, "milliseconds", since="9.6.0"),
        Column("last_recv", B, "microseconds", since="9.6.0")),
        base_columns=(("node_id", I), ("block_instance", I), ("trp_id", I),
                      ("remote_node_id", I), ("connection_status", I), ("remote_address", S),
                      ("bytes_sent", B), ("bytes_received", B), ("connect_count", I),
                      ("overloaded", I), ("overload_count", I), ("slowdown", I),
                      ("slowdown_count", I), ("encrypted", I), ("sendbuffer_used_bytes", B),
                      ("sendbuffer_max_used_bytes", B), ("sendbuffer_alloc_bytes", B),
                      ("sendbuffer_max_alloc_bytes", B), ("type", I),
                      ("heartbeat_interval", I), ("last_recv", B)),
        base_column_since=(*((c, SENDBUFFER_SINCE) for c in (
            "sendbuffer_used_bytes", "sendbuffer_max_used_bytes", "sendbuffer_alloc_bytes",
            "sendbuffer_max_alloc_bytes")), ("type", "9.5.0"), ("heartbeat_interval", "9.6.0"),
            ("last_recv", "9.6.0"))),
    View("memoryusage", "ndb$pools", "7.1.0", (
        Column("node_id", I), Column("memory_type", S, expr="pool_name"),
        Column("used", "DECIMAL(42,0)", "bytes",
               expr="CAST(SUM(used * entry_size) AS DECIMAL(42,0))"),
        Column("used_pages", "DECIMAL(42,0)", "pages", expr="SUM(used)"),
        Column("total", "DECIMAL(42,0)", "bytes",
               expr="CAST(SUM(total * entry_size) AS DECIMAL(42,0))"),
        Column("total_pages", "DECIMAL(42,0)", "pages", expr="SUM(total)")),
        base_columns=(("node_id", I), ("block_number", I), ("block_instance", I),
                      ("pool_name", S), ("used", B), ("total", B), ("high", B),
                      ("entry_size", B), ("config_param1", I), ("config_param2", I),
                      ("config_param3", I), ("config_param4", I), ("resource_id", I),
                      ("type_id", I)),
        base_column_since=(("resource_id", "8.0.15"), ("type_id", "8.0.15")),
        tail="FROM {db}.`ndb$pools` GROUP BY node_id, pool_name",
        # 7.x: DBACC's Index memory is listed (a 7.6.9 cluster shows it: Oracle's NDB
        # workshop, wwwted/ndb-cluster-workshop labs/Lab_4_mon.md); 8.0 reads CMVMI only
        # (storage/ndb/plugin/ha_ndbinfo_sql.cc). Which 7.6.x changed it is not published.
        until_where=(("7.1.0", "(block_number IN (248, 254) AND pool_name IN ('Index memory',"
                      " 'Data memory')) OR pool_name = 'Long message buffer'"),
                     ("8.0.0", "block_number = 254"))),
    View("logbuffers", "ndb$logbuffers", "7.1.0", (
        Column("node_id", I),
        enum("log_type", "log_type", decodes.LOG_TYPE_75, "<unknown>", until="7.6.0"),
        enum("log_type", "log_type", decodes.LOG_TYPE, "<unknown>", since="7.6.0"),
        Column("log_id", I), Column("log_part", I), Column("total", B, "bytes"),
        Column("used", B, "bytes")),
        base_columns=(("node_id", I), ("log_type", I), ("log_id", I), ("log_part", I),
                      ("total", B), ("used", B), ("high", B))),
    View("logspaces", "ndb$logspaces", "7.1.0", (
        Column("node_id", I), enum("log_type", "log_type", decodes.LOG_TYPE_75, None),
        Column("log_id", I), Column("log_part", I), Column("total", B, "bytes"),
        Column("used", B, "bytes")),
        base_columns=(("node_id", I), ("log_type", I), ("log_id", I), ("log_part", I),
                      ("total", B), ("used", B), ("high", B))),
    View("counters", "ndb$counters", "7.1.0", (
        Column("node_id", I, expr="c.node_id"), Column("block_name", S, expr="b.block_name"),
        Column("block_instance", I, expr="c.block_instance"),
        Column("counter_id", I, expr="c.counter_id"),
        enum("counter_name", "c.counter_id", decodes.COUNTER_NAME, "<unknown>"),
        Column("val", B, expr="c.val")),
        base_columns=(("node_id", I), ("block_number", I), ("block_instance", I),
                      ("counter_id", I), ("val", B)),
        tail="FROM {db}.`ndb$counters` c LEFT JOIN {db}.`ndb$blocks` b"
             " ON c.block_number = b.block_number",
        help="val is cumulative since the data node process started"),
    View("resources", "ndb$resources", "7.1.0", (
        Column("node_id", I),
        enum("resource_name", "resource_id", decodes.RESOURCE_NAME, "<unknown>"),
        Column("reserved", I, "pages"), Column("used", I, "pages"), Column("max", I, "pages"),
        Column("spare", I, "pages")),
        base_columns=(("node_id", I), ("resource_id", I), ("reserved", I), ("used", I),
                      ("max", I), ("high", I), ("spare", I))),
    View("restart_info", "ndb$restart_info", "7.4.0", _RESTART_COLS),
    # table_distribution_status, table_fragments, table_replicas: "added in NDB 7.5.4"
    # (7.5 manual)
    View("table_distribution_status", "ndb$table_distribution_status", "7.5.4", (
        Column("node_id", I), Column("table_id", I),
        enum("tab_copy_status", "tab_copy_status", decodes.COPY_STATUS_OLD, "Invalid value",
             until="8.0.23"),
        enum("tab_copy_status", "tab_copy_status", decodes.COPY_STATUS, "Invalid value",
             since="8.0.23"),
        enum("tab_update_status", "tab_update_status", decodes.UPDATE_STATUS_OLD, "Invalid value",
             until="8.0.23"),
        enum("tab_update_status", "tab_update_status", decodes.UPDATE_STATUS, "Invalid value",
             since="8.0.23"),
        enum("tab_lcp_status", "tab_lcp_status", decodes.LCP_STATUS, "Invalid value"),
        enum("tab_status", "tab_status", decodes.TAB_STATUS, "Invalid value"),
        enum("tab_storage", "tab_storage", decodes.TAB_STORAGE, "Invalid value"),
        *plain("tab_partitions tab_fragments current_scan_count scan_count_wait"
                " is_reorg_ongoing", I)),
        base_columns=_TDS_BASE, also_bases=("ndb$table_distribution_status_all",)),
    View("table_fragments", "ndb$table_fragments", "7.5.4", tuple(plain(_TF, I)),
         also_bases=("ndb$table_fragments_all",)),
    View("table_replicas", "ndb$table_replicas", "7.5.4", tuple(plain(_TR, I)),
         also_bases=("ndb$table_replicas_all",)),
    View("disk_write_speed_base", "ndb$disk_write_speed_base", "7.4.0", (
        *plain("node_id thr_no", I), Column("millis_ago", B, "milliseconds"),
        Column("millis_passed", B, "milliseconds"),
        Column("backup_lcp_bytes_written", B, "bytes"),
        Column("redo_bytes_written", B, "bytes"),
        Column("target_disk_write_speed", B, "bytes_per_second"))),
    View("disk_write_speed_aggregate", "ndb$disk_write_speed_aggregate", "7.4.0", (
        *plain("node_id thr_no", I),
        *[Column(n, B, _DWS_UNIT.get(n, "bytes_per_second")) for n in _DWS]),
        help="one row per LDM instance (thr_no is the LDM index, not threads.thr_no)"),
    View("disk_write_speed_aggregate_node", "ndb$disk_write_speed_aggregate", "7.4.0", (
        Column("node_id", I),
        *[Column(n, "DECIMAL(42,0)", _DWS_UNIT.get(n, "bytes_per_second"), expr=f"SUM({n})")
          for n in _DWS_NODE]),
        base_columns=(("node_id", I), ("thr_no", I), *[(n, B) for n in _DWS]),
        tail="FROM {db}.`ndb$disk_write_speed_aggregate` GROUP BY node_id"),
    View("config_params", "ndb$config_params", "7.1.0", (
        Column("param_number", I), Column("param_name", S),
        *plain("param_description param_type param_default param_min param_max", S),
        Column("param_mandatory", I), Column("param_status", S))),
    View("config_values", "ndb$config_values", "7.5.0", (
        Column("node_id", I), Column("config_param", I), Column("config_value", S))),
    # Dictionary objects (tables, indexes, blob tables; sys/def/... for internal ones). The
    # kernel table is in the 7.4-era catalogue (table id 16, mysql/mysql-server
    # storage/ndb/src/kernel/vm/NdbinfoTables.cpp of 2015); the view's first release is not
    # confirmed, every profile here has it (7.6 storage/ndb/tools/ndbinfo_sql.cpp @56954e7,
    # 8.0 storage/ndb/plugin/ha_ndbinfo_sql.cc @087b0bb: SELECT *)
    View("dict_obj_info", "ndb$dict_obj_info", "7.5.0", (
        *plain("type id version state parent_obj_type parent_obj_id", I),
        Column("fq_name", S))),
    View("dict_obj_types", "ndb$dict_obj_types", "7.5.0", (
        Column("type_id", I), Column("type_name", S))),
    *WORKLOAD_VIEWS,
)

# lookup tables that only feed views
LOOKUPS: tuple[BaseTable, ...] = (
    BaseTable("ndb$blocks", (("block_number", I), ("block_name", S))),
    # hardcoded in the SQL node (ha_ndbinfo_sql.cc `lookups`, 7.6 ndbinfo_sql.cpp likewise)
    BaseTable("ndb$dbtc_apiconnect_state", (
        ("state_int_value", I), ("state_name", "VARCHAR(256)"),
        ("state_friendly_name", "VARCHAR(256)"), ("state_description", "VARCHAR(256)"))),
    BaseTable("ndb$dict_obj_types", (("type_id", I), ("type_name", S)), since="7.5.0"),
)

VIEW_BY_NAME: dict[str, View] = {v.name: v for v in VIEWS}


def view(name: str) -> View:
    try:
        return VIEW_BY_NAME[name]
    except KeyError:
        raise KeyError(f"no ndbinfo view {name!r} in exporters/ndbinfo_exporter/schema.py"
                       ) from None


def views_for(version: str) -> list[View]:
    """The views a data node of this version serves (profile '7.6' or a release '8.0.37')."""
    return [v for v in VIEWS if at_least(version, v.since)]
