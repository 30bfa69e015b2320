"""Open transactions (`cluster_transactions`) and row locks (`cluster_locks`), counted per
data node and state: never one series per transaction id or lock (thousands at load, each
gone a millisecond later).

ndbinfo has no transaction start time: `inactive_seconds` is how long the TC has not seen
the transaction do anything ((ctcTimer - apiTimer) / 100, Dbtc::ndbinfo_write_trans,
mysql/mysql-server storage/ndb/src/kernel/blocks/dbtc/DbtcMain.cpp). A client that opened a
transaction and went quiet (it still holds its row locks) shows as a growing maximum; a
transaction busy for a long time does not. That is the one a DBA has to find and kill.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families, body

# the cluster_locks view's decodes of op_flags (schema.LOCK_*): S/X, H(olding)/W(aiting)
LOCK_MODE = {"S": "shared", "X": "exclusive"}
LOCK_STATE = {"H": "holding", "W": "waiting"}


def collect_transactions(ctx: Context, fam: Families) -> None:
    rows = ctx.query("SELECT node_id, state, COUNT(*), MAX(inactive_seconds),"
                     " SUM(count_operations) FROM ndbinfo.cluster_transactions"
                     " GROUP BY node_id, state")
    count = fam.gauge("ndb_transactions", "Transactions open at the node's TCs, per state"
                      " (cluster_transactions.state, the TC's friendly state name).",
                      ["node_id", "state"])
    inactive = fam.gauge("ndb_transaction_inactive_seconds_max", "The longest any open"
                         " transaction of the node's TCs has been inactive"
                         " (cluster_transactions.inactive_seconds; ndbinfo has no age).",
                         ["node_id"])
    ops = fam.gauge("ndb_transaction_operations", "Operations of the node's open"
                    " transactions (SUM(cluster_transactions.count_operations)).",
                    ["node_id"])
    per_node: dict[str, tuple[float, float]] = {}
    for node_id, state, n, idle, n_ops in rows:
        count.add((node_id, state), n)
        idle_max, ops_sum = per_node.get(str(node_id), (0.0, 0.0))
        per_node[str(node_id)] = (max(idle_max, float(idle or 0)), ops_sum + float(n_ops or 0))
    for node_id, (idle_max, ops_sum) in per_node.items():
        inactive.add((node_id,), idle_max)
        ops.add((node_id,), ops_sum)


def collect_locks(ctx: Context, fam: Families) -> None:
    rows = ctx.query("SELECT node_id, mode, state, COUNT(*), MAX(duration_millis)"
                     " FROM ndbinfo.cluster_locks GROUP BY node_id, mode, state")
    locks = fam.gauge("ndb_locks", "Row locks held or waited for on the node's LDM"
                      " instances (cluster_locks), per mode and state.",
                      ["node_id", "mode", "state"])
    longest = fam.gauge("ndb_lock_duration_seconds_max", "The longest a lock has been held,"
                        " or a request has waited, on the node (cluster_locks"
                        ".duration_millis, reset when a waiter is granted).",
                        ["node_id", "state"])
    per_state: dict[tuple[str, str], float] = {}
    for node_id, mode, state, n, millis in rows:
        st = LOCK_STATE.get(state, str(state).lower())
        locks.add((node_id, LOCK_MODE.get(mode, str(mode).lower()), st), n)
        key = (str(node_id), st)
        per_state[key] = max(per_state.get(key, 0.0), float(millis or 0) / 1000)
    for (node_id, st), seconds in per_state.items():
        longest.add_body(body(("node_id", "state"), (node_id, st)), seconds)


COLLECTORS = [
    Collector("cluster_transactions", "cluster_transactions: open transactions per node and"
              " state, the longest inactive one", ("cluster_transactions",),
              collect_transactions),
    Collector("cluster_locks", "cluster_locks: row locks per node, mode and state, the"
              " longest wait", ("cluster_locks",), collect_locks),
]
