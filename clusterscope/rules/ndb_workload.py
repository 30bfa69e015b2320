# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB workload: tables against DataMemory, long transactions, lock waits, the disk page
buffer and commit latency (records and alerts of the ndb-workload group)."""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group, Runbook, seconds
from clusterscope.rules.ndb_first_steps import FIRST_STEPS

TABLE_SUM = "cluster_node_table:ndb_table_memory_allocated_bytes:sum"
LOCK_WAITS = "cluster:ndb_lock_waits:count"
COMMIT_LATENCY = "cluster_node:ndb_commit_latency_seconds:quantile_rate5m"
DATA_MEMORY = 'memory_type="Data memory"'
TX = 'activity="transaction"'


def data_memory_free(s: str) -> str:
    return (f"max without (instance, job, memory_type) (ndb_memory_total_bytes{{{s},{DATA_MEMORY}}}"
            f" - ndb_memory_used_bytes{{{s},{DATA_MEMORY}}})")


def disk_page_buffer_rate(s: str) -> str:
    return f"sum without (instance, job, outcome) (rate(ndb_disk_page_buffer_requests_total{{{s}}}[5m]))"


def disk_page_buffer_hit_ratio(s: str) -> str:
    return (f"sum without (instance, job, outcome) (rate(ndb_disk_page_buffer_requests_total"
            f"{{{s},outcome=\"direct_return\"}}[5m])) / {disk_page_buffer_rate(s)}")


def commit_latency_now(c: dict) -> str:
    q, s = c["ndb"]["commit_latency_quantile"], c["selectors"]["ndb"]
    return (f"histogram_quantile({q}, sum without (instance, job, activity)"
            f" (rate(ndb_tc_latency_seconds_bucket{{{s},{TX}}}[5m])))")


def commit_latency_baseline(c: dict) -> str:
    n = c["ndb"]
    return (f"quantile_over_time(0.5, {COMMIT_LATENCY}[{n['commit_latency_baseline']}]"
            f" offset {n['commit_latency_baseline_offset']})")


def commits_rate(s: str) -> str:
    return (f"sum without (instance, job, activity) (rate(ndb_tc_latency_seconds_count"
            f"{{{s},{TX}}}[5m]))")


def workload(c: dict) -> Group:
    """Tables against DataMemory, transactions held open, lock waits, the disk page buffer
    and commit latency."""
    s = c["selectors"]["ndb"]
    g = Group("ndb-workload", "ndb.yml", first_steps=FIRST_STEPS, records=[
        # a table's memory on a node, its kinds (fixed, var, hash index) summed
        (TABLE_SUM, f"sum without (instance, job, kind) (ndb_table_memory_allocated_bytes{{{s}}})"),
        ("cluster_node:ndb_data_memory_free:bytes", data_memory_free(s)),
        # waiting lock requests, 0 when there are none (so an average over time is honest)
        (LOCK_WAITS, f"sum without (instance, job, node_id, mode, state) (ndb_locks{{{s},state=\"waiting\"}})"
                     f" or on (cluster) 0 * max without (instance, job) (ndb_up{{{s}}} == 1)"),
        ("cluster_node:ndb_disk_page_buffer_hit:ratio_rate5m", disk_page_buffer_hit_ratio(s)),
        ("cluster_node:ndb_disk_page_buffer_requests:rate5m", disk_page_buffer_rate(s)),
        (COMMIT_LATENCY, commit_latency_now(c)),
        ("cluster_node:ndb_commit_latency_seconds:baseline_median", commit_latency_baseline(c)),
        ("cluster_node:ndb_commits:rate5m", commits_rate(s)),
    ])
    g.alerts += [rule(c) for rule in (_table_filling_data_memory, _long_transaction, _lock_waits,
                                      _disk_page_buffer_hit_ratio_low, _commit_latency_regressed)]
    return g


def _table_filling_data_memory(c: dict) -> Alert:
    n = c["ndb"]
    table_sum = TABLE_SUM
    free = data_memory_free(c["selectors"]["ndb"])
    trend = c["ndb"]["table_memory_trend"]
    horizon = c["ndb"]["table_memory_horizon"]
    return Alert(name="NdbTableFillingDataMemory",
                 expr=f"(predict_linear({table_sum}[{trend}], {seconds(horizon)}) - {table_sum})"
                      f" > on (cluster, node_id) group_left () ({free})",
                 severity="warning",
                 summary="NDB table {{ $labels.table }} will fill node {{ $labels.node_id }}'s"
                         " DataMemory within " + horizon,
                 description="At its growth over the last " + trend + ", table {{ $labels.table }} (with its"
                             " unique indexes and blob parts, ndbinfo.memory_per_fragment) needs"
                             " {{ $value | humanize1024 }}B more on data node {{ $labels.node_id }} within "
                             + horizon + " than the node has free in DataMemory: inserts into any table"
                             " will then fail with error 827 (table is full).",
                 dashboard="ndb_node",
                 for_=n["table_memory_for"],
                 runbook=Runbook(
                     meaning="A table's memory on a data node (its rows' fixed- and var-size parts and"
                             " hash index, with its unique indexes and blob part tables:"
                             " `ndb_table_memory_allocated_bytes` from ndbinfo.memory_per_fragment)"
                             " grew over the trend window at a pace that, continued over the horizon,"
                             " needs more than the node's free DataMemory. The alert names the table.",
                     impact="When DataMemory is full, inserts into every table of the node group fail"
                            " with error 827 (table is full), not only into this one.",
                     diagnosis="- The biggest tables: `SELECT COALESCE(parent_fq_name, fq_name) AS tbl,"
                               " node_id, SUM(fixed_elem_alloc_bytes + var_elem_alloc_bytes +"
                               " hash_index_alloc_bytes) AS bytes FROM ndbinfo.memory_per_fragment"
                               " GROUP BY tbl, node_id ORDER BY bytes DESC LIMIT 10;` (the NDB data node"
                               " dashboard's \"Memory per table\" shows the same).\n"
                               "- The node's DataMemory: `SELECT node_id, used, total FROM"
                               " ndbinfo.memoryusage WHERE memory_type = 'Data memory';`\n"
                               "- What writes the table (application, replication, a job), and whether"
                               " free space inside its pages (`ndb_table_memory_free_bytes`) is large:"
                               " var-size space freed by deletes is reused by the table only.",
                     mitigation="Delete or archive old rows; move large non-indexed columns to disk data"
                                " (`STORAGE DISK` in a tablespace); `OPTIMIZE TABLE` to give var-size"
                                " free space back; raise `DataMemory` (a rolling restart) or add node"
                                " groups and `ALTER TABLE ... REORGANIZE PARTITION` the table.",
                     benign="a one-off bulk load that has finished (the trend flattens and the alert"
                            " resolves); a table that is purged on a schedule."))


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
                             " {{ $labels.cluster }} has done nothing for {{ $value }} s"
                             " (ndbinfo.cluster_transactions.inactive_seconds) while staying open: its"
                             " client holds its row locks, and every transaction touching those rows waits"
                             " and times out.",
                 dashboard="ndb_overview",
                 for_=n["long_transaction_for"],
                 runbook=Runbook(
                     meaning="An open transaction coordinated by the data node's TC has done nothing"
                             " for longer than the threshold"
                             " (`ndb_transaction_inactive_seconds_max`, from"
                             " ndbinfo.cluster_transactions.inactive_seconds: seconds since the TC last"
                             " saw it active; ndbinfo has no transaction age). Its client opened it and"
                             " went quiet without committing or rolling back.",
                     impact="The transaction keeps its row locks: every other transaction touching"
                            " those rows waits and aborts after TransactionDeadlockDetectionTimeout"
                            " (error 266); NdbLockWaits usually fires too. NDB does not end it by itself"
                            " (TransactionInactiveTimeout is off by default).",
                     diagnosis="- Which one and whose: `SELECT node_id, transid, state, count_operations,"
                               " inactive_seconds, client_node_id FROM ndbinfo.cluster_transactions"
                               " ORDER BY inactive_seconds DESC LIMIT 5;`\n"
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
    waits = LOCK_WAITS
    return Alert(name="NdbLockWaits",
                 expr=f"avg_over_time({waits}[{n['lock_waits_over']}]) > {n['lock_waits_max']}",
                 severity="warning",
                 summary="NDB cluster {{ $labels.cluster }}: {{ $value | printf \"%.1f\" }}"
                         " lock requests waiting on average",
                 description="On average {{ $value | printf \"%.1f\" }} row lock requests of"
                             f" {{{{ $labels.cluster }}}} were waiting for a lock held by another transaction"
                             f" over {n['lock_waits_over']} (ndbinfo.cluster_locks, state W): hot rows or a"
                             " transaction holding locks too long; waits beyond"
                             " TransactionDeadlockDetectionTimeout abort with error 266.",
                 dashboard="ndb_overview",
                 for_=n["lock_waits_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="On average more row lock requests than the threshold were waiting for a"
                             " lock held by another transaction over the window (`ndb_locks` with"
                             " state waiting, from ndbinfo.cluster_locks).",
                     impact="Waiting transactions are slow, and those waiting longer than"
                            " TransactionDeadlockDetectionTimeout (1.2 s by default) abort with error"
                            " 266: the application sees timeouts and retries.",
                     diagnosis="- Who waits for whom: `SELECT w.node_id, w.tableid, w.rowid,"
                               " w.duration_millis AS waited_ms, h.transid AS holder, h.duration_millis"
                               " AS held_ms FROM ndbinfo.cluster_locks w JOIN ndbinfo.cluster_locks h"
                               " ON h.node_id = w.node_id AND h.block_instance = w.block_instance AND"
                               " h.lock_num = w.waiting_for WHERE w.state = 'W';`\n"
                               "- The holder's session: ndbinfo.server_locks / server_transactions on"
                               " each SQL node (mysql_connection_id), then `SHOW PROCESSLIST`.\n"
                               "- Tables with the most waits since the nodes started: `SELECT fq_name,"
                               " SUM(ex_wait_ok + sh_wait_ok + ex_wait_fail + sh_wait_fail) AS waits FROM"
                               " ndbinfo.locks_per_fragment GROUP BY fq_name ORDER BY waits DESC LIMIT"
                               " 5;`\n- NdbLongTransaction: an idle transaction holding rows.",
                     mitigation="Kill a holder that is idle (NdbLongTransaction's runbook); otherwise"
                                " shorten the application's transactions or spread writes away from hot"
                                " rows (counters, queues in one row).",
                     benign="a short burst on a hot row during a batch job."))


def _disk_page_buffer_hit_ratio_low(c: dict) -> Alert:
    n = c["ndb"]
    dpb_rate = disk_page_buffer_rate(c["selectors"]["ndb"])
    hit_ratio = disk_page_buffer_hit_ratio(c["selectors"]["ndb"])
    return Alert(name="NdbDiskPageBufferHitRatioLow",
                 expr=f"({hit_ratio}) < {n['disk_page_buffer_hit_ratio_min']}"
                      f" and on (cluster, node_id) ({dpb_rate})"
                      f" > {n['disk_page_buffer_min_requests_per_second']}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} disk page buffer hit ratio"
                         " {{ $value | humanizePercentage }}",
                 description="Only {{ $value | humanizePercentage }} of the disk data page requests of data"
                             " node {{ $labels.node_id }} found their page in the disk page buffer"
                             " (ndbinfo.diskpagebuffer, over 5 minutes, below"
                             f" {n['disk_page_buffer_hit_ratio_min']:.0%}): the others wait for disk reads,"
                             " and queries on disk data columns slow down.",
                 dashboard="ndb_node",
                 for_=n["disk_page_buffer_for"],
                 runbook=Runbook(
                     meaning="Of the data node's disk data page requests over 5 minutes, fewer than the"
                             " threshold found their page in the disk page buffer (direct returns over"
                             " all requests, ndbinfo.diskpagebuffer), with enough requests to matter.",
                     impact="Requests that miss wait for a disk read: queries on disk data columns get"
                            " slower, and LDM threads wait for I/O.",
                     diagnosis="- Per node: `SELECT node_id, SUM(page_requests_direct_return) AS hits,"
                               " SUM(page_requests_wait_queue) AS queued, SUM(page_requests_wait_io) AS"
                               " misses, SUM(pages_read) FROM ndbinfo.diskpagebuffer GROUP BY node_id;`"
                               " twice, a minute apart.\n"
                               "- The buffer's size: `DiskPageBufferMemory` (ndbinfo.config_values) and"
                               " `SELECT * FROM ndbinfo.resources WHERE resource_name ="
                               " 'DISK_PAGE_BUFFER';`\n"
                               "- Disk read latency (8.0.19+): the \"Disk data latency\" of"
                               " `ndb_disk_data_latency_seconds` (ndbinfo.pgman_time_track_stats).",
                     mitigation="Raise `DiskPageBufferMemory` (a rolling restart); keep hot, frequently"
                                " read columns in memory rather than on disk; avoid full scans of disk"
                                " data tables at peak times.",
                     benign="the first minutes after a node restart (the buffer is cold); a one-off"
                            " scan over a large disk data table."))


def _commit_latency_regressed(c: dict) -> Alert:
    n = c["ndb"]
    q = c["ndb"]["commit_latency_quantile"]
    p_rec = COMMIT_LATENCY
    p_now = commit_latency_now(c)
    base_win = c["ndb"]["commit_latency_baseline"]
    base_off = c["ndb"]["commit_latency_baseline_offset"]
    baseline = commit_latency_baseline(c)
    tps = commits_rate(c["selectors"]["ndb"])
    return Alert(name="NdbCommitLatencyRegressed",
                 expr=f"({p_now}) > {n['commit_latency_factor']} * ({baseline})"
                      f" and on (cluster, node_id) (({p_now}) - ({baseline}))"
                      f" > {n['commit_latency_min_growth_seconds']}"
                      f" and on (cluster, node_id) ({tps}) > {n['commit_latency_min_tps']}"
                      f" and on (cluster, node_id) count_over_time({p_rec}[{base_win}] offset {base_off})"
                      f" > {n['commit_latency_baseline_min_samples']}",
                 severity="warning",
                 summary="NDB commit latency on node {{ $labels.node_id }} is"
                         " {{ $value | humanizeDuration }} (p" + f"{int(q * 100)}" + ")",
                 description=f"The {int(q * 100)}th percentile of transaction latency (begin to commit ACK,"
                             " ndbinfo.tc_time_track_stats) at data node {{ $labels.node_id }}'s TCs is"
                             " {{ $value | humanizeDuration }}, more than"
                             f" {n['commit_latency_factor']} times its own median over the {base_win} before"
                             f" (and {n['commit_latency_min_growth_seconds'] * 1000:g} ms more), at more"
                             f" than {n['commit_latency_min_tps']} commits/s.",
                 dashboard="ndb_overview",
                 for_=n["commit_latency_for"],
                 runbook=Runbook(
                     meaning="A percentile of transaction latency (begin to commit ACK, as the data"
                             " node's TCs measure it: `ndb_tc_latency_seconds{activity=\"transaction\"}`"
                             " from ndbinfo.tc_time_track_stats) is several times its own median over"
                             " the baseline window before, and grew by more than the minimum, with real"
                             " traffic.",
                     impact="Every application transaction through that TC takes longer; client-side"
                            " timeouts and queueing follow.",
                     diagnosis="- Which activity moved: the overview's \"Commit latency\" panel, and"
                               " `ndb_tc_latency_seconds` for read_key, write_key and scan (key"
                               " operations on the data node that executes them).\n"
                               "- Usual causes, each with its own panel or alert: LDM threads saturated"
                               " (NdbLdmCpuSaturated), lock waits (NdbLockWaits), REDO or LCP pressure"
                               " (NdbRedoLogFilling, disk write speed slowdowns), overloaded"
                               " transporters, a node restarting.\n"
                               "- Raw ranges: `SELECT node_id, upper_bound, SUM(transactions) FROM"
                               " ndbinfo.tc_time_track_stats GROUP BY node_id, upper_bound;` twice, a"
                               " minute apart (the counts are cumulative).",
                     mitigation="Address the cause found (CPU, locks, disk, network); if the new latency"
                                " is the new normal, the baseline adapts within its window.",
                     benign="a deliberate change of workload (bigger transactions); a node restart or an"
                            " LCP at the start of a busy period."))
