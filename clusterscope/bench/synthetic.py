"""Synthetic ndbinfo tables of any cluster shape, for the benchmark and the tests.

Not the lab simulator (that is clusterscope.ndbsim): plain MariaDB tables named like the
ndbinfo views, with their column names and types, filled with made-up but plausible rows so
the exporter's queries can be measured at the size of a 48-node cluster. Everything here is
simulated.
"""

from __future__ import annotations

from typing import Any

from ndbinfo_exporter import schema

from clusterscope.ndbsim import view_ddl

PROFILE = "8.0"
READ = ("nodes", "membership", "processes", "config_nodes", "threads", "cpustat", "threadstat",
        "transporters", "memoryusage", "resources", "counters", "logbuffers", "logspaces",
        "restart_info", "disk_write_speed_aggregate", "table_distribution_status",
        "table_fragments", "table_replicas", "cluster_transactions", "cluster_locks",
        "diskpagebuffer", "tc_time_track_stats", "pgman_time_track_stats",
        "memory_per_fragment", "locks_per_fragment")
# view -> [(column, SQL type)] as the view shows them, from the shared descriptions
VIEWS: dict[str, list[tuple[str, str]]] = {
    v: [(c, t) for c, t, _ in view_ddl.expected_columns(PROFILE)[v]] for v in READ}

OTHER_THREADS = ["main", "rep", "recv", "tc", "tc", "send"]  # 6 non-LDM block threads
NDBFS = schema.BLOCK_NUMBER["NDBFS"]  # pgman_time_track_stats' block_number (schema.py)
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
             database: str = "ndbinfo", open_per_tc: int = 5) -> dict[str, int]:
    """Fill the tables for `data_nodes` x (`ldm` LDM + 6 other) threads, with `open_per_tc`
    transaction records in use per TC instance (each holding 3 row locks on 2 replicas);
    returns row counts."""
    nodes = list(range(1, data_nodes + 1))
    others = [(200 + k, t) for k, t in enumerate(("MGM", "MGM", "API", "API", "API", "API"))]
    rows: dict[str, list[tuple]] = {v: [] for v in VIEWS}
    ver = "mysql-8.0.40 ndb-8.0.40-sim"
    for n in nodes:
        rows["nodes"].append((n, 86400 + n, "STARTED", 0, 1))
        rows["processes"].append((n, "NDB", ver, 1000 + n, 900 + n, "ndbmtd", f"ndb://h{n}"))
        rows["config_nodes"].append((n, "NDB", f"ndb-host-{n}"))
        rows["membership"].append((n, (n - 1) // 2, nodes[n - 2], nodes[n % len(nodes)], 1, 2,
                                   n, n, 200, "1e6200000008", "ARBIT_RUN", "Yes", "[ 200 ]",
                                   ""))
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
    _workload(rows, nodes, ldm, tables, [o for o, t in others if t == "API"], open_per_tc)
    for view, rs in rows.items():
        _insert(cur, view, rs, database)
    return {v: len(rs) for v, rs in rows.items()}


def _workload(rows: dict[str, list[tuple]], nodes: list[int], ldm: int, tables: int,
              apis: list[int], open_per_tc: int) -> None:
    """Transactions, locks, the disk page buffer, latency histograms and memory per table at
    the size the kernel's row estimates give (NdbinfoTables.cpp): tc_time_track_stats has
    data nodes x TC instances x (data + API nodes) x 32 rows, 1.4M at 144 data nodes."""
    tcs = OTHER_THREADS.count("tc")
    tc_bounds, pg_bounds = schema.tc_time_track_bounds(), schema.pgman_time_track_bounds()
    tc_counts = [tuple(max(0, 900 - 30 * i) * (k + 1) for k in range(10))
                 for i in range(len(tc_bounds))]
    pg_counts = [tuple(max(0, 500 - 25 * i) * (k + 1) for k in range(4))
                 for i in range(len(pg_bounds))]
    for n in nodes:
        for tc in range(1, tcs + 1):
            for k in range(open_per_tc):  # each with 3 row locks on 2 replicas
                transid = (n << 40) + (tc << 20) + k
                rows["cluster_transactions"].append(
                    (n, tc, transid, "Started" if k % 2 else "Committing", 3, 0, k // 4,
                     apis[k % len(apis)], 32768 + tc))
                for r in range(3):
                    for replica in (n, nodes[n % len(nodes)]):
                        rows["cluster_locks"].append(
                            (replica, 1 + r % ldm, 10 + r, r, 1000 * k + r, transid, "X", "H",
                             "*", "UPDATE", 2, 10 * k + r, None))
            for comm in [*nodes, *apis]:
                for bound, counts in zip(tc_bounds, tc_counts, strict=True):
                    rows["tc_time_track_stats"].append((n, 245, tc, comm, bound, *counts))
        for inst in range(1, ldm + 2):
            rows["diskpagebuffer"].append((n, inst, 10**5, 10**4, 5 * 10**4, 10**3, 10**7,
                                           10**3, 5 * 10**4))
            for bound, counts in zip(pg_bounds, pg_counts, strict=True):
                rows["pgman_time_track_stats"].append((n, NDBFS, inst, bound, *counts))
        for t in range(tables):
            # the table, its PRIMARY ordered index (T-tree pages, fixed size only) and every
            # third one's unique index; ordered indexes have no ACC fragment, so no locks
            objects = [(f"sim/def/t{t}", None, "User table", 10 + t, True),
                       (f"sys/def/{10 + t}/PRIMARY", f"sim/def/t{t}", "Ordered index",
                        200 + t, False)]
            if t % 3 == 0:
                objects.append((f"sys/def/{10 + t}/u$unique", f"sim/def/t{t}",
                                "Unique hash index", 100 + t, True))
            for name, parent, typ, tid, acc in objects:
                for f in range(ldm):
                    rows["memory_per_fragment"].append(
                        (name, parent, typ, tid, n, 1 + f % ldm, f, 2**24, 2**18, 96,
                         170000, 2730, *((2**22, 2**16, 60000, 2**20) if acc else (0,) * 4)))
                    if acc:
                        rows["locks_per_fragment"].append(
                            (name, parent, typ, tid, n, 1 + f % ldm, f, 10**7, 10**7 - 900,
                             880, 20, 4 * 10**7, 4 * 10**7 - 300, 295, 5, 61000, 24000))

def emulate_round_trips(cur: Any, max_rows: int, rtt_seconds: float,
                        database: str = "ndbinfo") -> None:
    """Make each table answer like ndbinfo: a pause of one data node round trip for every
    `max_rows` rows (ndbinfo fetches a scan's rows in batches of ndbinfo_max_rows; the
    exporter asks for 256 per session). The tables move to `<database>_base` and the
    view-named relations become views that SLEEP at every batch boundary. The round trip
    time is an assumption (a LAN), not a measurement of NDB."""
    base = f"{database}_base"
    cur.execute(f"DROP DATABASE IF EXISTS {base}")
    cur.execute(f"CREATE DATABASE {base}")
    for view, cols in VIEWS.items():
        cur.execute(f"RENAME TABLE {database}.{view} TO {base}.{view}")
        cur.execute(f"ALTER TABLE {base}.{view} ADD COLUMN _seq INT UNSIGNED NOT NULL"
                    " AUTO_INCREMENT PRIMARY KEY")
        names = ", ".join(f"`{c}`" for c, _ in cols)
        cur.execute(f"CREATE SQL SECURITY DEFINER VIEW {database}.{view} AS SELECT {names}"
                    f" FROM {base}.{view} WHERE _seq % {max_rows} <> 0"
                    f" OR SLEEP({rtt_seconds}) = 0")

