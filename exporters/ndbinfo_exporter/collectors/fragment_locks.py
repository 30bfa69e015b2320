"""Lock contention per table and data node (`locks_per_fragment`): every row lock request
DBACC granted at once, granted after waiting, or gave up on while waiting, and the time
spent waiting, counted exactly by the kernel (Fragmentrec::m_lockStats, written by
Dbacc::execDBINFO_SCANREQ, mysql/mysql-server storage/ndb/src/kernel/blocks/dbacc/
DbaccMain.cpp @54feb0c1cfe0; columns in storage/ndb/src/common/debugger/NdbinfoTables.cpp
@966fd7f61ed3, FRAG_LOCKS). Unlike a `cluster_locks` snapshot, which sees the few waits
that happen to be under way at the scan, these are cumulative: their rates are the waits
per second, `rate(wait seconds)` the mean number of requests waiting (Little's law), and
the failed waits are the lock-wait timeouts applications see as error 266
(TransactionDeadlockDetectionTimeout) or waits ended by their transaction's abort.

The view has a row per fragment replica and LDM instance; the SQL node sums them per
table (a unique index's locks count to its table, like memory_per_fragment) and node.
Counters restart when a data node restarts ("since the most recent restart", manual,
ndbinfo locks_per_fragment), so they stay per node: a sum over nodes would turn one
node's restart into a drop that rate() reads as everybody's reset. Slow collector: the
view joins the dictionary and has data nodes x LDM x tables rows (NdbinfoTables.cpp's
estimate), so it runs every --scrape.slow-interval.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, body

OWNER = "COALESCE(parent_fq_name, fq_name)"
MODES = (("exclusive", "ex"), ("shared", "sh"))
MILLISECONDS = 1000.0

# per table and node: for each mode its requests, waits granted, waits failed; then the
# wait time granted and failed
SQL_LOCKS_PER_FRAGMENT = (
    f"SELECT node_id, {OWNER}, "
    + ", ".join(f"SUM({p}_{c})" for _, p in MODES for c in ("req", "wait_ok", "wait_fail"))
    + ", SUM(wait_ok_millis), SUM(wait_fail_millis) FROM ndbinfo.locks_per_fragment"
    f" GROUP BY node_id, {OWNER}")

TABLE_LABELS = ("node_id", "table")
LOCK_REQUESTS = Desc("ndb_table_lock_requests_total", "Row lock requests on the table (with"
                     " its unique indexes) at the node's LDM instances, by mode"
                     " (locks_per_fragment ex_req, sh_req; since the node started).",
                     (*TABLE_LABELS, "mode"), counter=True)
LOCK_WAITS = Desc("ndb_table_lock_waits_total", "Row lock requests that had to wait for"
                  " another transaction's lock, by mode and outcome: granted after the wait,"
                  " or failed (aborted while waiting: a lock-wait timeout, error 266, or the"
                  " transaction's abort) (locks_per_fragment *_wait_ok, *_wait_fail).",
                  (*TABLE_LABELS, "mode", "outcome"), counter=True)
LOCK_WAIT_SECONDS = Desc("ndb_table_lock_wait_seconds_total", "Time the table's lock"
                         " requests spent waiting, by outcome (locks_per_fragment"
                         " wait_ok_millis, wait_fail_millis / 1000): its rate is the mean"
                         " number of requests waiting.", (*TABLE_LABELS, "outcome"),
                         counter=True)


def collect_locks_per_fragment(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_LOCKS_PER_FRAGMENT)
    requests, waits = LOCK_REQUESTS.of(fam), LOCK_WAITS.of(fam)
    seconds = LOCK_WAIT_SECONDS.of(fam)
    for node_id, table, *v in rows:
        b = body(TABLE_LABELS, (node_id, table))
        for i, (mode, _) in enumerate(MODES):
            req, ok, fail = v[3 * i:3 * i + 3]
            requests.add_body(f'{b},mode="{mode}"', req)
            waits.add_body(f'{b},mode="{mode}",outcome="granted"', ok)
            waits.add_body(f'{b},mode="{mode}",outcome="failed"', fail)
        for outcome, millis in (("granted", v[6]), ("failed", v[7])):
            if millis is not None:
                seconds.add_body(f'{b},outcome="{outcome}"', float(millis) / MILLISECONDS)


COLLECTORS = [
    Collector("locks_per_fragment", "locks_per_fragment: lock requests, waits (granted or"
              " failed) and wait time per table and data node (slow: every"
              " --scrape.slow-interval)", ("locks_per_fragment",),
              collect_locks_per_fragment, slow=True),
]
