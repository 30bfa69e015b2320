"""Local checkpoints: progress (`table_fragments`, `table_replicas`), per-table state
(`table_distribution_status`) and write speeds per LDM instance (`disk_write_speed_aggregate`).

ndbinfo has no LCP view; progress is derived: replicas still to checkpoint over all replicas.
"""

from __future__ import annotations

from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, fill, num, row_sql, split_row

LCP_TABLE_STATUSES = tuple(text.upper() for _, text in schema.LCP_STATUS)

SQL_TABLE_FRAGMENTS = ("SELECT COUNT(*) AS n, SUM(num_lcp_replicas) AS remaining,"
                       " SUM(no_of_replicas) AS replicas, SUM(num_alive_replicas) AS alive"
                       " FROM ndbinfo.table_fragments")
SQL_TABLE_REPLICAS = ("SELECT MAX(last_lcp_id) AS lcp_id, SUM(is_lcp_ongoing) AS ongoing"
                      " FROM ndbinfo.table_replicas")
# the views spell one status `wRITING_TO_FILE`: compare case-insensitively
SQL_TABLE_DISTRIBUTION_STATUS = ("SELECT node_id, UPPER(tab_lcp_status), COUNT(*)"
                                 " FROM ndbinfo.table_distribution_status"
                                 " GROUP BY node_id, UPPER(tab_lcp_status)")
# (row expression, FROM) for Context.lines: one text line per LDM instance; the speeds
# (backup_lcp, then redo; each 1s, 10s, 60s), the target, then the slowdown reasons
SQL_DISK_WRITE_SPEED_AGGREGATE = (row_sql(
    [("node_id", "node_id"), ("ldm_instance", "thr_no")],
    ["backup_lcp_speed_last_sec", "backup_lcp_speed_last_10sec",
     "backup_lcp_speed_last_60sec", "redo_speed_last_sec", "redo_speed_last_10sec",
     "redo_speed_last_60sec", "current_target_disk_write_speed", "slowdowns_due_to_io_lag",
     "slowdowns_due_to_high_cpu", "disk_write_speed_set_to_min"]),
    "FROM ndbinfo.disk_write_speed_aggregate")

LCP_ID = Desc("ndb_lcp_id", "Current (or last) local checkpoint id:"
              " MAX(table_replicas.last_lcp_id).")
LCP_REMAINING = Desc("ndb_lcp_fragment_replicas_remaining", "Fragment replicas still to be"
                     " checkpointed in the running LCP: SUM(table_fragments.num_lcp_replicas).")
LCP_REPLICAS = Desc("ndb_lcp_fragment_replicas", "All fragment replicas:"
                    " SUM(table_fragments.no_of_replicas).")
LCP_RUNNING = Desc("ndb_lcp_running", "1 while a local checkpoint is running.")
LCP_PROGRESS = Desc("ndb_lcp_progress_ratio", "Share of the running LCP's work done: fragment"
                    " replicas checkpointed over those it had to checkpoint (live replicas of"
                    " logged tables, plus a restarting node's joining mid-way); never moves"
                    " back within an LCP; 1 when no LCP runs.")
LCP_LAST_DURATION = Desc("ndb_lcp_last_duration_seconds", "Duration of the last completed LCP"
                         " as observed by the exporter (start to end, at the lcp collector's"
                         " resolution).")
LCP_TABLES = Desc("ndb_lcp_tables", "Tables per LCP state (table_distribution_status"
                  ".tab_lcp_status, upper-cased).", ("node_id", "status"))
DISK_WRITE_SPEED = Desc("ndb_disk_write_speed_bytes_per_second", "Disk write speed per LDM"
                        " instance: kind backup_lcp (LCP and backup together) or redo,"
                        " averaged over the window.",
                        ("node_id", "ldm_instance", "kind", "window"))
DISK_WRITE_SPEED_TARGET = Desc("ndb_disk_write_speed_target_bytes_per_second", "Current"
                               " target disk write speed per LDM instance.",
                               ("node_id", "ldm_instance"))
DISK_WRITE_SLOWDOWN = Desc("ndb_disk_write_slowdown_seconds_total", "Seconds the LDM"
                           " instance's disk writes were slowed (io_lag, high_cpu) or set to"
                           " the minimum.", ("node_id", "ldm_instance", "reason"), counter=True)


def collect_lcp(ctx: Context, fam: Families) -> None:
    frag = ctx.rows(SQL_TABLE_FRAGMENTS)[0]
    rep = ctx.rows(SQL_TABLE_REPLICAS)[0]
    LCP_ID.of(fam).add((), rep["lcp_id"])
    if not frag["n"]:
        # Only the DIH master reports these views, and only once it is started: no rows is
        # "unknown" (a master takeover), not "no LCP" (mysql/mysql-server
        # storage/ndb/src/kernel/blocks/dbdih/DbdihMain.cpp, execDBINFO_SCANREQ)
        return
    remaining, ongoing = num(frag["remaining"]), num(rep["ongoing"])
    LCP_REMAINING.of(fam).add((), remaining)
    LCP_REPLICAS.of(fam).add((), frag["replicas"])
    if remaining is None and ongoing is None:
        return  # both signals NULL: do not guess whether an LCP runs
    running = bool(remaining) or bool(ongoing)
    LCP_RUNNING.of(fam).add((), running)
    lcp = ctx.state.lcp
    lcp.observe(running, ctx.now, remaining or 0.0, num(frag["alive"]) or 0.0)
    LCP_PROGRESS.of(fam).add((), lcp.progress)
    LCP_LAST_DURATION.of(fam).add((), lcp.last_duration)


def collect_lcp_tables(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_TABLE_DISTRIBUTION_STATUS)
    f = LCP_TABLES.of(fam)
    nodes = {str(r[0]) for r in rows if r[0] is not None}
    for node_id in nodes:
        for s in LCP_TABLE_STATUSES:
            f.add((node_id, s), 0)
    for node_id, st, n in rows:
        if node_id is not None and st is not None:
            f.add((node_id, st), n)


def collect_disk_write_speed(ctx: Context, fam: Families) -> None:
    lines = ctx.lines(*SQL_DISK_WRITE_SPEED_AGGREGATE)
    speed, target = DISK_WRITE_SPEED.of(fam), DISK_WRITE_SPEED_TARGET.of(fam)
    slow = DISK_WRITE_SLOWDOWN.of(fam)
    speeds = [f',kind="{kind}",window="{window}"'
              for kind in ("backup_lcp", "redo") for window in ("1s", "10s", "60s")]
    reasons = [f',reason="{reason}"' for reason in ("io_lag", "high_cpu", "set_to_min")]
    fill([speed] * 6 + [target] + [slow] * 3, [split_row(text) for text in lines],
         [*speeds, "", *reasons])


COLLECTORS = [
    Collector("lcp", "table_fragments + table_replicas: LCP id, progress, duration",
              ("table_fragments", "table_replicas"), collect_lcp, slow=True),
    Collector("lcp_tables", "table_distribution_status: tables per LCP state",
              ("table_distribution_status",), collect_lcp_tables, slow=True),
    Collector("disk_write_speed", "disk_write_speed_aggregate: LCP/backup and REDO write"
              " speeds per LDM instance", ("disk_write_speed_aggregate",),
              collect_disk_write_speed),
]
