"""The TCs' transaction records (`cluster_transactions`) and the row locks the LDMs hold or
queue (`cluster_locks`), counted per data node and state: never one series per transaction
id or lock (thousands at load, each gone a millisecond later).

Both views are snapshots of whole record pools: the kernel walks every ApiConnectRecord
(Dbtc::execDBINFO_SCANREQ, TRANSACTIONS) and every ACC operation record, 100 per real-time
break (Dbacc::execDBINFO_SCANREQ, ACC_OPERATIONS, mysql/mysql-server
storage/ndb/src/kernel/blocks/dbacc/DbaccMain.cpp @54feb0c1cfe0), so a scan costs what the
pools are configured for, not what the load uses. Slow collectors: they run every
--scrape.slow-interval, the SQL node aggregates (rows out: data nodes x states), and the
exact lock-wait counters come from `locks_per_fragment` (collectors/fragment_locks.py).
A snapshot still shows what those counters cannot: who holds what right now.

A row of `cluster_transactions` is a TC record, not an open transaction: at commit the TC
moves the transaction to a copy record that runs the complete phase in CS_COMPLETING while
the client's record is free again (Dbtc::execCOMMITTED -> sendApiCommitAndCopy -> copyApi,
storage/ndb/src/kernel/blocks/dbtc/DbtcMain.cpp in AKJUS/mysql-server, a mirror of
mysql-server trunk, @1334cddbebd0), so "Completing" rows are transactions already reported
committed. States without a friendly name in the SQL node's lookup (CS_PREPARE_TO_COMMIT,
CS_START_COMMITTING, CS_REC_COMMITTING, CS_FAIL_PREPARED: storage/ndb/src/kernel/blocks/
dbtc/DbtcStateDesc.cpp) are exported as state="other".

ndbinfo has no transaction start time: `inactive_seconds` is how long the TC has not seen
the record do anything ((ctcTimer - apiTimer) / 100, Dbtc::ndbinfo_write_trans). Row locks
are held by operations (each ACC operation record belongs to one), so a record with no
operations (`count_operations` 0: a connection last used for committed reads, which lock
nothing; the kernel's DUMP 2514 summary counts such records "started with no ops" as
stateless, Dbtc::execDUMP_STATE_ORD, same file) holds no row locks however long it idles:
the longest inactivity is taken over records that hold operations, a client that opened a
transaction, wrote, and went quiet. That is the one a DBA has to find and kill.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, body

# the cluster_locks view's decodes of op_flags (schema.LOCK_*): S/X, H(olding)/W(aiting)
LOCK_MODE = {"S": "shared", "X": "exclusive"}
LOCK_STATE = {"H": "holding", "W": "waiting"}
UNNAMED_STATE = "other"

SQL_CLUSTER_TRANSACTIONS = ("SELECT node_id, state, COUNT(*),"
                            " MAX(IF(count_operations > 0, inactive_seconds, NULL)),"
                            " SUM(count_operations) FROM ndbinfo.cluster_transactions"
                            " GROUP BY node_id, state")
SQL_CLUSTER_LOCKS = ("SELECT node_id, mode, state, COUNT(*), MAX(duration_millis)"
                     " FROM ndbinfo.cluster_locks GROUP BY node_id, mode, state")

TRANSACTIONS = Desc("ndb_transactions", "Transaction records of the node's TCs, per state"
                    " (cluster_transactions.state, the TC's friendly state name; \"other\""
                    " for the commit states without one). Completing = the complete phase of"
                    " transactions already reported committed (a copy record).",
                    ("node_id", "state"))
TRANSACTION_INACTIVE_MAX = Desc("ndb_transaction_inactive_seconds_max", "The longest any TC"
                                " record of the node holding operations (count_operations >"
                                " 0) has been inactive (cluster_transactions.inactive_seconds;"
                                " ndbinfo has no age); 0 when none holds operations.",
                                ("node_id",))
TRANSACTION_OPERATIONS = Desc("ndb_transaction_operations", "Operations of the node's TC"
                              " records (SUM(cluster_transactions.count_operations)).",
                              ("node_id",))
LOCKS = Desc("ndb_locks", "Row locks held or waited for on the node's LDM instances at the"
             " scan (cluster_locks), per mode and state: a sample; ndb_table_lock_* count"
             " every wait.", ("node_id", "mode", "state"))
LOCK_DURATION_MAX = Desc("ndb_lock_duration_seconds_max", "The longest a lock has been held,"
                         " or a request has waited, on the node (cluster_locks"
                         ".duration_millis, reset when a waiter is granted).",
                         ("node_id", "state"))


def collect_transactions(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_CLUSTER_TRANSACTIONS)
    count, inactive = TRANSACTIONS.of(fam), TRANSACTION_INACTIVE_MAX.of(fam)
    ops = TRANSACTION_OPERATIONS.of(fam)
    per_node: dict[str, tuple[float, float]] = {}
    for node_id, state, n, idle, n_ops in rows:
        count.add((node_id, state or UNNAMED_STATE), n)
        idle_max, ops_sum = per_node.get(str(node_id), (0.0, 0.0))
        per_node[str(node_id)] = (max(idle_max, float(idle or 0)), ops_sum + float(n_ops or 0))
    for node_id, (idle_max, ops_sum) in per_node.items():
        inactive.add((node_id,), idle_max)
        ops.add((node_id,), ops_sum)


def collect_locks(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_CLUSTER_LOCKS)
    locks, longest = LOCKS.of(fam), LOCK_DURATION_MAX.of(fam)
    per_state: dict[tuple[str, str], float] = {}
    for node_id, mode, state, n, millis in rows:
        st = LOCK_STATE.get(state, str(state).lower())
        locks.add((node_id, LOCK_MODE.get(mode, str(mode).lower()), st), n)
        key = (str(node_id), st)
        per_state[key] = max(per_state.get(key, 0.0), float(millis or 0) / 1000)
    for (node_id, st), seconds in per_state.items():
        longest.add_body(body(LOCK_DURATION_MAX.labels, (node_id, st)), seconds)


COLLECTORS = [
    Collector("cluster_transactions", "cluster_transactions: TC records per node and state,"
              " the longest inactive one holding operations (slow: every"
              " --scrape.slow-interval)", ("cluster_transactions",), collect_transactions,
              slow=True),
    Collector("cluster_locks", "cluster_locks: row locks per node, mode and state, the"
              " longest wait (slow: every --scrape.slow-interval)", ("cluster_locks",),
              collect_locks, slow=True),
]
