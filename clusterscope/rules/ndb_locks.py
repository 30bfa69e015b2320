# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB transactions left open and lock contention, from DBACC's exact per-fragment lock
counters (ndbinfo.locks_per_fragment): waits per second, the mean number of requests
waiting (the wait time's rate, Little's law) and the waits that failed (lock-wait
timeouts, error 266). Records and alerts of the ndb-workload group."""

from __future__ import annotations

from clusterscope.rules.rule_model import WITHOUT, Alert, Runbook

PER_TABLE = "without (instance, job, node_id, mode, outcome)"
PER_CLUSTER = "without (instance, job, node_id, table, outcome)"
WAITERS = "cluster:ndb_lock_waiters:mean_rate5m"
TIMEOUTS = "cluster_table:ndb_lock_wait_timeouts:rate5m"


def wait_time_rate(c: dict) -> str:
    """Seconds waited per second: the mean number of lock requests waiting."""
    s, w = c["selectors"]["ndb"], c["ndb"]["lock_waits_over"]
    return f"rate(ndb_table_lock_wait_seconds_total{{{s}}}[{w}])"


def failed_rate(c: dict) -> str:
    """Lock waits that failed per second (ex_wait_fail + sh_wait_fail)."""
    s, w = c["selectors"]["ndb"], c["ndb"]["lock_waits_over"]
    return f"rate(ndb_table_lock_waits_total{{{s},outcome=\"failed\"}}[{w}])"


def records(c: dict) -> list[tuple[str, str]]:
    s, w = c["selectors"]["ndb"], c["ndb"]["lock_waits_over"]
    return [
        ("cluster_table:ndb_lock_waits:rate5m",
         f"sum {PER_TABLE} (rate(ndb_table_lock_waits_total{{{s}}}[{w}]))"),
        (TIMEOUTS, f"sum {PER_TABLE} ({failed_rate(c)})"),
        ("cluster_table:ndb_lock_waiters:mean_rate5m", f"sum {PER_TABLE} ({wait_time_rate(c)})"),
        (WAITERS, f"sum {PER_CLUSTER} ({wait_time_rate(c)})"),
    ]


def alerts(c: dict) -> list[Alert]:
    return [_long_transaction(c), _lock_waits(c), _lock_wait_timeouts(c)]


def _long_transaction(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbLongTransaction",
                 expr=f"max {WITHOUT} (ndb_transaction_inactive_seconds_max{{{s}}})"
                      f" > {n['transaction_inactive_seconds_max']}",
                 severity="warning",
                 summary="An NDB transaction on node {{ $labels.node_id }}'s TC has been"
                         " inactive for {{ $value }} s",
                 description="A transaction coordinated by data node {{ $labels.node_id }} in cluster"
                             " {{ $labels.cluster }} holds operations and has done nothing for"
                             " {{ $value }} s (ndbinfo.cluster_transactions.inactive_seconds of records"
                             " with count_operations > 0) while staying open: its client holds what those"
                             " operations locked, and every transaction touching those rows waits and"
                             " times out.",
                 dashboard="ndb_overview",
                 for_=n["long_transaction_for"],
                 runbook=Runbook(
                     meaning="A transaction record of the data node's TC that holds operations has"
                             " done nothing for longer than the threshold"
                             " (`ndb_transaction_inactive_seconds_max`, from"
                             " ndbinfo.cluster_transactions.inactive_seconds of records with"
                             " count_operations > 0: seconds since the TC last saw it active; ndbinfo"
                             " has no transaction age). Its client opened it, did something, and went"
                             " quiet without committing or rolling back. A connection idle after"
                             " committed reads holds no operations and does not count.",
                     impact="The transaction keeps its row locks: every other transaction touching"
                            " those rows waits and aborts after TransactionDeadlockDetectionTimeout"
                            " (error 266); NdbLockWaitTimeouts usually fires too. NDB does not end it by"
                            " itself (TransactionInactiveTimeout is off by default).",
                     diagnosis="- Which one and whose: `SELECT node_id, transid, state, count_operations,"
                               " inactive_seconds, client_node_id FROM ndbinfo.cluster_transactions"
                               " WHERE count_operations > 0 ORDER BY inactive_seconds DESC LIMIT 5;`\n"
                               "- On each SQL node (client_node_id is its node id): `SELECT"
                               " mysql_connection_id, inactive_seconds FROM ndbinfo.server_transactions"
                               " ORDER BY inactive_seconds DESC;` then `SHOW PROCESSLIST` for that"
                               " connection's user, host and last statement.\n"
                               "- The rows it holds: `SELECT * FROM ndbinfo.cluster_locks WHERE transid ="
                               " <transid>;`",
                     mitigation="`KILL <mysql_connection_id>` on that SQL node (the transaction rolls"
                                " back and its locks go); fix the application's transaction handling;"
                                " consider `TransactionInactiveTimeout` so NDB aborts idle transactions.",
                     benign="an interactive session left in the middle of a transaction on purpose"
                            " (still holding locks: it is not harmless)."))


def _lock_waits(c: dict) -> Alert:
    n = c["ndb"]
    w = n["lock_waits_over"]
    return Alert(name="NdbLockWaits",
                 expr=f"sum {PER_CLUSTER} ({wait_time_rate(c)}) > {n['lock_waits_max']}",
                 severity="warning",
                 summary="NDB cluster {{ $labels.cluster }}: {{ $value | printf \"%.1f\" }}"
                         " lock requests waiting on average",
                 description="On average {{ $value | printf \"%.1f\" }} row lock requests of"
                             f" {{{{ $labels.cluster }}}} were waiting for a lock held by another transaction"
                             f" over {w} (ndbinfo.locks_per_fragment: wait time per second, every wait"
                             " counted): hot rows or a transaction holding locks too long; waits beyond"
                             " TransactionDeadlockDetectionTimeout abort with error 266.",
                 dashboard="ndb_overview",
                 for_=n["lock_waits_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="On average more row lock requests than the threshold were waiting for a"
                             " lock held by another transaction over the window: the rate of the lock"
                             " wait time DBACC counts per fragment (`ndb_table_lock_wait_seconds_total`"
                             " from ndbinfo.locks_per_fragment, every wait counted, granted or failed),"
                             " which is the mean number of requests waiting.",
                     impact="Waiting transactions are slow, and those waiting longer than"
                            " TransactionDeadlockDetectionTimeout (1.2 s by default) abort with error"
                            " 266: the application sees timeouts and retries (NdbLockWaitTimeouts).",
                     diagnosis="- Which tables wait: `cluster_table:ndb_lock_waiters:mean_rate5m`, or"
                               " `SELECT fq_name, SUM(ex_wait_ok + sh_wait_ok + ex_wait_fail +"
                               " sh_wait_fail) AS waits, SUM(wait_ok_millis + wait_fail_millis) AS"
                               " waited_ms FROM ndbinfo.locks_per_fragment GROUP BY fq_name ORDER BY"
                               " waited_ms DESC LIMIT 5;` twice, a minute apart (the counters grow"
                               " since the node started).\n"
                               "- Who waits for whom now: `SELECT w.node_id, w.tableid, w.rowid,"
                               " w.duration_millis AS waited_ms, h.transid AS holder, h.duration_millis"
                               " AS held_ms FROM ndbinfo.cluster_locks w JOIN ndbinfo.cluster_locks h"
                               " ON h.node_id = w.node_id AND h.block_instance = w.block_instance AND"
                               " h.lock_num = w.waiting_for WHERE w.state = 'W';`\n"
                               "- The holder's session: ndbinfo.server_locks / server_transactions on"
                               " each SQL node (mysql_connection_id), then `SHOW PROCESSLIST`.\n"
                               "- NdbLongTransaction: an idle transaction holding rows.",
                     mitigation="Kill a holder that is idle (NdbLongTransaction's runbook); otherwise"
                                " shorten the application's transactions or spread writes away from hot"
                                " rows (counters, queues in one row).",
                     benign="a short burst on a hot row during a batch job."))


def _lock_wait_timeouts(c: dict) -> Alert:
    n = c["ndb"]
    w = n["lock_waits_over"]
    return Alert(name="NdbLockWaitTimeouts",
                 expr=f"sum {PER_TABLE} ({failed_rate(c)}) * 60"
                      f" > {n['lock_wait_timeouts_per_minute_max']}",
                 severity="warning",
                 summary="NDB table {{ $labels.table }}: {{ $value | printf \"%.0f\" }} lock"
                         " waits a minute time out",
                 description="Lock requests on table {{ $labels.table }} (with its unique indexes) in"
                             " {{ $labels.cluster }} gave up waiting {{ $value | printf \"%.0f\" }} times a"
                             f" minute over {w} (ndbinfo.locks_per_fragment ex_wait_fail + sh_wait_fail):"
                             " their transactions were aborted with error 266 (Time-out in NDB, probably"
                             " caused by deadlock) after TransactionDeadlockDetectionTimeout, and the"
                             " application sees the errors and retries.",
                 dashboard="ndb_overview",
                 for_=n["lock_wait_timeouts_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="Row lock requests on one table gave up waiting more often than the"
                             " threshold per minute (`ndb_table_lock_waits_total{outcome=\"failed\"}`,"
                             " ex_wait_fail + sh_wait_fail of ndbinfo.locks_per_fragment, the table"
                             " with its unique indexes, all data nodes): each is a transaction the TC"
                             " aborted after TransactionDeadlockDetectionTimeout (error 266, \"Time-out"
                             " in NDB, probably caused by deadlock\"), or one aborted for another"
                             " reason while it waited.",
                     impact="Every timeout is a failed statement the application sees; transactions"
                            " that retry add load to the same hot rows. Writes to the table's hot rows"
                            " are effectively serialised behind the slowest holder.",
                     diagnosis="- The table's waits and timeouts per node and fragment: `SELECT node_id,"
                               " fq_name, fragment_num, ex_wait_ok, ex_wait_fail, sh_wait_ok,"
                               " sh_wait_fail, wait_fail_millis FROM ndbinfo.locks_per_fragment WHERE"
                               " fq_name = '<table>' OR parent_fq_name = '<table>';` twice, a minute"
                               " apart: the fragments whose counts grow hold the hot rows.\n"
                               "- The rows waited for now: `SELECT rowid, COUNT(*) FROM"
                               " ndbinfo.cluster_locks WHERE state = 'W' GROUP BY rowid ORDER BY 2"
                               " DESC;`, and the holder of each (NdbLockWaits' runbook).\n"
                               "- An idle holder: NdbLongTransaction.\n"
                               "- TransactionDeadlockDetectionTimeout: `SELECT config_value FROM"
                               " ndbinfo.config_values JOIN ndbinfo.config_params ON config_param ="
                               " param_number WHERE param_name = 'TransactionDeadlockDetectionTimeout';`",
                     mitigation="Find the hot rows and what holds them: kill an idle holder; shorten"
                                " the transactions that write them (commit sooner, fewer statements"
                                " between the first write and the commit); spread a counter or queue"
                                " kept in one row over several; order writes to the same rows the same"
                                " way everywhere (deadlocks). Raising TransactionDeadlockDetectionTimeout"
                                " only makes the waits longer.",
                     benign="a batch job run at a quiet hour whose retries succeed; a deliberate test"
                            " of the application's retry logic."))
