"""Latency histograms the data nodes keep: the TCs' (`tc_time_track_stats`: transactions,
key operations, scans, per TC instance and communicating node) and the disk data page
manager's (`pgman_time_track_stats`, 8.0.19+), as Prometheus histograms per data node.

Both views count completions per latency range (not cumulatively), upper bound in
microseconds; the last range also holds everything above its bound (DbtcMain.cpp
time_track_calculate_histogram_position; Pgman sets the last bound to ~0), so it is the
`+Inf` bucket. The bounds come from the view, never from here.

What each activity times (MySQL manual, "The ndbinfo tc_time_track_stats Table"):
transaction is a successful transaction from its beginning at the TC until the TC sends the
commit confirmation, so it holds every client round trip and the application's time
between the statements of a multi-statement transaction: it grows when the application
batches differently, with no change in the cluster; stateless transactions (committed reads
only) are not timed. read_key (primary key reads with locks), write_key, index_key are one
operation each, TC to LDM and back, without client time: the cluster's own latency.
scan_fragment is one batch of a fragment scan: its start tick is set when the TC asks for
a batch (SCAN_FRAGREQ, SCAN_NEXTREQ) and invalidated when the batch's SCAN_FRAGCONF is timed
(Dbtc::time_track_complete_scan_frag, DbtcMain.cpp in AKJUS/mysql-server, a mirror of
mysql-server trunk, @1334cddbebd0), not the fragment scan from opening to closing.
pgman_time_track_stats: page_read, page_write and log_wait time the disk operations;
get_page times only the requests that had to wait ("Number of waits for get_page",
NdbinfoTables.cpp @966fd7f61ed3: a request's start time is taken when get_page queues it,
Pgman::get_page_no_lirs), never the ones served at once.

Who records what (Dbtc::time_track_complete_*): transactions and scans against the API node
that asked, fragment scans against the data node that ran them, key operations against both
the API node and the data node that executed them. Summing over communicating nodes would
count every key operation twice, so key operations are summed over the API side only
(communicating nodes that are not data nodes of config_nodes, or of nodes before 7.5.7).
Slow collector: tc_time_track_stats has data nodes x TC instances x communicating nodes x 32
rows (data nodes squared x TC instances x 32 in NdbinfoTables.cpp's estimate: 1.3M rows at
144 data nodes), pgman_time_track_stats data nodes x PGMAN instances x 20: both are read
every --scrape.slow-interval.
"""

from __future__ import annotations

from collections.abc import Sequence

from ndbinfo_exporter.collectors.base import Collector, Context, HistogramDesc
from ndbinfo_exporter.collectors.nodes import SQL_CONFIG_NODES
from ndbinfo_exporter.families import Families, Histogram, body

# (activity label, column, counted on the API side only)
TC_ACTIVITIES = (("transaction", "transactions", False),
                 ("transaction_error", "transaction_errors", False),
                 ("read_key", "read_key_ops", True), ("write_key", "write_key_ops", True),
                 ("index_key", "index_key_ops", True), ("key_error", "key_op_errors", True),
                 ("scan", "scans", False), ("scan_error", "scan_errors", False),
                 ("scan_fragment", "scan_fragments", False),
                 ("scan_fragment_error", "scan_fragment_errors", False))
PGMAN_OPERATIONS = (("page_read", "page_reads"), ("page_write", "page_writes"),
                    ("log_wait", "log_waits"), ("get_page", "get_page"))
MICROSECONDS_PER_SECOND = 1e6

# the data nodes where config_nodes is missing (before 7.5.7): the running ones
SQL_NODES_IDS = "SELECT node_id FROM ndbinfo.nodes"
SQL_PGMAN_TIME_TRACK_STATS = (
    "SELECT node_id, upper_bound, " + ", ".join(f"SUM({col})" for _, col in PGMAN_OPERATIONS)
    + " FROM ndbinfo.pgman_time_track_stats GROUP BY node_id, upper_bound")


def sql_tc_time_track_stats(data_nodes: Sequence[int]) -> str:
    """Each activity summed per node and range; key operations only where the communicating
    node is not one of `data_nodes` (the API side)."""
    api = f"comm_node_id NOT IN ({', '.join(str(n) for n in data_nodes) or '0'})"
    sums = ", ".join(f"SUM(IF({api}, {col}, 0))" if api_only else f"SUM({col})"
                     for _, col, api_only in TC_ACTIVITIES)
    return (f"SELECT node_id, upper_bound, {sums} FROM ndbinfo.tc_time_track_stats"
            " GROUP BY node_id, upper_bound")


TC_LATENCY = HistogramDesc("ndb_tc_latency_seconds", "Latency of what the data node's TCs"
                           " coordinated, by activity (tc_time_track_stats summed over TC"
                           " instances; key operations on the API side): transaction is its"
                           " duration, first operation to commit confirmation (client think"
                           " time included); read_key, write_key, index_key one operation"
                           " each; scan_fragment one batch; *_error the failed ones.",
                           ("node_id", "activity"))
DISK_DATA_LATENCY = HistogramDesc("ndb_disk_data_latency_seconds", "Latency of disk data page"
                                  " reads and writes, UNDO log waits, and get_page requests"
                                  " that had to wait (queued or for disk: queue to callback;"
                                  " requests served at once are not counted)"
                                  " (pgman_time_track_stats summed over PGMAN instances).",
                                  ("node_id", "operation"))


def _data_nodes(ctx: Context) -> list[int]:
    rows = ctx.query(SQL_CONFIG_NODES if ctx.db.has("config_nodes") else SQL_NODES_IDS)
    return sorted(int(r[0]) for r in rows if r[0] is not None)


def _fill(rows: list[tuple], names: list[str], f: Histogram, label: str) -> None:
    """rows: (node_id, upper bound, count per name ...) -> one histogram per node and name."""
    ranges: dict[tuple[str, int], list[tuple[float, object]]] = {}
    for node_id, bound, *counts in rows:
        if node_id is None or bound is None:
            continue
        for i, c in enumerate(counts):
            ranges.setdefault((str(node_id), i), []).append((float(bound), c))
    for (node_id, i), r in sorted(ranges.items()):
        f.add_ranges(body(("node_id", label), (node_id, names[i])), r, MICROSECONDS_PER_SECOND)


def collect_tc_time_track_stats(ctx: Context, fam: Families) -> None:
    rows = ctx.query(sql_tc_time_track_stats(_data_nodes(ctx)))
    _fill(rows, [a for a, _, _ in TC_ACTIVITIES], TC_LATENCY.of(fam), "activity")


def collect_pgman_time_track_stats(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_PGMAN_TIME_TRACK_STATS)
    _fill(rows, [o for o, _ in PGMAN_OPERATIONS], DISK_DATA_LATENCY.of(fam), "operation")


COLLECTORS = [
    Collector("tc_time_track_stats", "tc_time_track_stats: transaction, key operation and"
              " scan latency histograms per data node (slow: every --scrape.slow-interval)",
              ("tc_time_track_stats",), collect_tc_time_track_stats, slow=True),
    Collector("pgman_time_track_stats", "pgman_time_track_stats (8.0.19+): disk data page"
              " latency histograms per data node (slow: every --scrape.slow-interval)",
              ("pgman_time_track_stats",), collect_pgman_time_track_stats, slow=True),
]
