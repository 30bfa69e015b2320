"""Synthetic ndbinfo tables of any cluster shape, for the benchmark and the tests.

Not the lab simulator (that is clusterscope.lab.ndb): plain MariaDB tables named like the
ndbinfo views, with their column names and types, filled with made-up but plausible rows so
the exporter's queries can be measured at the size of a 48-node cluster. Everything here is
simulated.
"""

from __future__ import annotations

from typing import Any

N, B, S = "INT UNSIGNED", "BIGINT UNSIGNED", "VARCHAR(512)"
RESTART_PHASES = ["to_complete_node_failure", "to_allocate_node_id",
                  "to_include_in_heartbeat_protocol", "until_wait_for_ndbcntr_master",
                  "wait_for_ndbcntr_master", "to_get_start_permitted",
                  "to_wait_for_lcp_for_copy_meta_data", "to_copy_meta_data", "to_include_node",
                  "starting_node_to_request_local_recovery", "for_local_recovery",
                  "restore_fragments", "undo_disk_data", "exec_redo_log", "index_rebuild",
                  "to_synchronize_starting_node", "wait_lcp_for_restart",
                  "wait_subscription_handover"]
DWS = ["backup_lcp_speed_last_sec", "redo_speed_last_sec", "backup_lcp_speed_last_10sec",
       "redo_speed_last_10sec", "std_dev_backup_lcp_speed_last_10sec",
       "std_dev_redo_speed_last_10sec", "backup_lcp_speed_last_60sec", "redo_speed_last_60sec",
       "std_dev_backup_lcp_speed_last_60sec", "std_dev_redo_speed_last_60sec",
       "slowdowns_due_to_io_lag", "slowdowns_due_to_high_cpu", "disk_write_speed_set_to_min",
       "current_target_disk_write_speed"]
TF = ["node_id", "table_id", "partition_id", "fragment_id", "partition_order", "log_part_id",
      "no_of_replicas", "current_primary", "preferred_primary", "current_first_backup",
      "current_second_backup", "current_third_backup", "num_alive_replicas",
      "num_dead_replicas", "num_lcp_replicas"]
TR = ["node_id", "table_id", "fragment_id", "initial_gci", "replica_node_id", "is_lcp_ongoing",
      "num_crashed_replicas", "last_max_gci_started", "last_max_gci_completed", "last_lcp_id",
      "prev_lcp_id", "prev_max_gci_started", "prev_max_gci_completed", "last_create_gci",
      "last_replica_gci", "is_replica_alive"]

# view -> [(column, SQL type)], names and types as ../shared/reference/ndbinfo.md gives them
VIEWS: dict[str, list[tuple[str, str]]] = {
    "nodes": [("node_id", N), ("uptime", B), ("status", "VARCHAR(11)"), ("start_phase", N),
              ("config_generation", N)],
    "processes": [("node_id", N), ("node_type", "VARCHAR(3)"), ("node_version", S),
                  ("process_id", N), ("angel_process_id", N), ("process_name", S),
                  ("service_URI", S)],
    "config_nodes": [("node_id", N), ("node_type", "VARCHAR(3)"), ("node_hostname", S)],
    "threads": [("node_id", N), ("thr_no", N), ("thread_name", S), ("thread_description", S)],
    "cpustat": [("node_id", N), ("thr_no", N), ("OS_user", N), ("OS_system", N),
                ("OS_idle", N), ("thread_exec", N), ("thread_sleeping", N),
                ("thread_spinning", N), ("thread_send", N), ("thread_buffer_full", N),
                ("elapsed_time", N)],
    "threadstat": [("node_id", N), ("thr_no", N), ("thr_nm", S),
                   *[(c, B) for c in ("c_loop", "c_exec", "c_wait", "c_l_sent_prioa",
                                      "c_l_sent_priob", "c_r_sent_prioa", "c_r_sent_priob",
                                      "os_tid", "os_now", "os_ru_utime", "os_ru_stime",
                                      "os_ru_minflt", "os_ru_majflt", "os_ru_nvcsw",
                                      "os_ru_nivcsw")]],
    "transporters": [("node_id", N), ("remote_node_id", N), ("status", "VARCHAR(13)"),
                     ("remote_address", S), ("bytes_sent", B), ("bytes_received", B),
                     ("connect_count", N), ("overloaded", N), ("overload_count", N),
                     ("slowdown", N), ("slowdown_count", N)],
    "memoryusage": [("node_id", N), ("memory_type", S), ("used", "DECIMAL(42,0)"),
                    ("used_pages", "DECIMAL(42,0)"), ("total", "DECIMAL(42,0)"),
                    ("total_pages", "DECIMAL(42,0)")],
    "resources": [("node_id", N), ("resource_name", "VARCHAR(19)"), ("reserved", N),
                  ("used", N), ("max", N), ("spare", N)],
    "counters": [("node_id", N), ("block_name", S), ("block_instance", N), ("counter_id", N),
                 ("counter_name", "VARCHAR(33)"), ("val", B)],
    "logbuffers": [("node_id", N), ("log_type", "VARCHAR(11)"), ("log_id", N),
                   ("log_part", N), ("total", B), ("used", B)],
    "logspaces": [("node_id", N), ("log_type", "VARCHAR(7)"), ("log_id", N), ("log_part", N),
                  ("total", B), ("used", B)],
    "restart_info": [("node_id", N), ("node_restart_status", S),
                     ("node_restart_status_int", N),
                     *[(f"secs_{p}", N) for p in RESTART_PHASES], ("total_restart_secs", N)],
    "disk_write_speed_aggregate": [("node_id", N), ("thr_no", N), *[(c, B) for c in DWS]],
    "table_distribution_status": [("node_id", N), ("table_id", N),
                                  ("tab_copy_status", "VARCHAR(20)"),
                                  ("tab_update_status", "VARCHAR(23)"),
                                  ("tab_lcp_status", "VARCHAR(15)"),
                                  ("tab_status", "VARCHAR(13)"),
                                  ("tab_storage", "VARCHAR(13)"), ("tab_partitions", N),
                                  ("tab_fragments", N), ("current_scan_count", N),
                                  ("scan_count_wait", N), ("is_reorg_ongoing", N)],
    "table_fragments": [(c, N) for c in TF],
    "table_replicas": [(c, N) for c in TR],
}

OTHER_THREADS = ["main", "rep", "recv", "tc", "tc", "send"]  # 6 non-LDM block threads
COUNTERS = {"DBTC": [(1, "ATTRINFO"), (2, "TRANSACTIONS"), (3, "COMMITS"), (4, "READS"),
                     (5, "SIMPLE_READS"), (6, "WRITES"), (7, "ABORTS"), (8, "TABLE_SCANS"),
                     (9, "RANGE_SCANS"), (24, "LOCAL_READS"), (25, "LOCAL_WRITES")],
            "DBLQH": [(10, "OPERATIONS"), *[(i, f"LQHKEY_OVERLOAD_{i}") for i in range(26, 31)],
                      (31, "LQHSCAN_SLOWDOWNS")],
            "DBSPJ": [(i, f"SPJ_{i}") for i in range(11, 24)]}


def create(cur: Any, database: str = "ndbinfo") -> None:
    cur.execute(f"DROP DATABASE IF EXISTS {database}")
    cur.execute(f"CREATE DATABASE {database}")
    for view, cols in VIEWS.items():
        cur.execute(f"CREATE TABLE {database}.{view} ("
                    + ", ".join(f"`{c}` {t}" for c, t in cols) + ")")


def _insert(cur: Any, view: str, rows: list[tuple], database: str) -> None:
    if not rows:
        return
    marks = ", ".join(["%s"] * len(rows[0]))
    for i in range(0, len(rows), 5000):
        cur.executemany(f"INSERT INTO {database}.{view} VALUES ({marks})", rows[i:i + 5000])


def populate(cur: Any, data_nodes: int, ldm: int, tables: int = 20,
             database: str = "ndbinfo") -> dict[str, int]:
    """Fill the tables for `data_nodes` x (`ldm` LDM + 6 other) threads; returns row counts."""
    nodes = list(range(1, data_nodes + 1))
    others = [(200 + k, t) for k, t in enumerate(("MGM", "MGM", "API", "API", "API", "API"))]
    rows: dict[str, list[tuple]] = {v: [] for v in VIEWS}
    ver = "mysql-8.0.40 ndb-8.0.40-sim"
    for n in nodes:
        rows["nodes"].append((n, 86400 + n, "STARTED", 0, 1))
        rows["processes"].append((n, "NDB", ver, 1000 + n, 900 + n, "ndbmtd", f"ndb://h{n}"))
        rows["config_nodes"].append((n, "NDB", f"ndb-host-{n}"))
        names = ["ldm"] * ldm + OTHER_THREADS
        for thr, name in enumerate(names):
            rows["threads"].append((n, thr, name, f"{name} thread"))
            rows["cpustat"].append((n, thr, 30, 5, 65, 35, 60, 3, 2, 0, 1000000))
            if name != "send":  # threadstat has no send threads
                rows["threadstat"].append((n, thr, name, 10**9, 10**10, 10**8, 0, 0, 0, 0,
                                           4000 + thr, 1, 3 * 10**12, 10**12, 0, 0, 0, 0))
        for r in [*nodes, *(o for o, _ in others)]:
            if r != n:
                rows["transporters"].append((n, r, "CONNECTED", f"10.0.0.{r % 250}",
                                             10**12 + r, 10**12 + n, 1, 0, 0, 0, 0))
        for t, pages in (("Data memory", 2_000_000), ("Long message buffer", 16384)):
            rows["memoryusage"].append((n, t, pages * 16384, pages // 2, pages * 32768, pages))
        for k, r in enumerate(("RESERVED", "TRANSACTION_MEMORY", "DISK_RECORDS", "DATA_MEMORY",
                               "JOBBUFFER", "FILE_BUFFERS", "TRANSPORTER_BUFFERS",
                               "DISK_PAGE_BUFFER", "QUERY_MEMORY", "SCHEMA_TRANS_MEMORY")):
            rows["resources"].append((n, r, 100 * k, 50 * k, 1000 * k, 10))
        for block, counters in COUNTERS.items():
            for inst in range(1, ldm + 1):
                for cid, cname in counters:
                    rows["counters"].append((n, block, inst, cid, cname, 10**6 * inst + cid))
        for part in range(ldm):
            rows["logspaces"].append((n, "REDO", 0, part, 256 * 2**20, 2**20 * part))
            rows["logbuffers"].append((n, "REDO", 0, part, 32 * 2**20, 2**16 * part))
            rows["disk_write_speed_aggregate"].append((n, part, *range(10**6, 10**6 + 14)))
        rows["restart_info"].append((n, "Restart completed", 19, *range(1, 19), 171))
    # fragments: one partition per LDM per node group, 2 replicas, an LCP a third done
    groups = max(1, data_nodes // 2)
    frags = groups * ldm
    for t in range(tables):
        for f in range(frags):
            a, b = 1 + 2 * (f % groups), min(data_nodes, 2 + 2 * (f % groups))
            rows["table_fragments"].append((1, t, f, f, 0, f % ldm, 2, a, a, b, 0, 0, 2, 0,
                                            2 if f % 3 else 0))
            for r in (a, b):
                rows["table_replicas"].append((1, t, f, 0, r, 1 if f % 3 else 0, 0, 0, 0,
                                               41 if f % 3 else 42, 40, 0, 0, 0, 0, 1))
        for n in nodes:
            rows["table_distribution_status"].append(
                (n, t, "IDLE", "IDLE", "wRITING_TO_FILE" if t % 2 else "COMPLETED", "ACTIVE",
                 "NORMAL", frags, frags, 0, 0, 0))
    for view, rs in rows.items():
        _insert(cur, view, rs, database)
    return {v: len(rs) for v, rs in rows.items()}
