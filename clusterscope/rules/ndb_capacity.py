# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB alerts on capacity: local checkpoints, REDO and UNDO log space, DataMemory and
TransactionMemory."""

from __future__ import annotations

from clusterscope.rules.ndb_first_steps import LCP_Q
from clusterscope.rules.rule_model import WITHOUT, Alert, Runbook, seconds

LCP_WINDOWS = ("30m", "1h", "2h", "4h")


def log_space_used_ratio(s: str, log_type: str) -> str:
    return (f"max without (instance, job, log_id, log_part, log_type) ("
            f"ndb_log_space_used_bytes{{{s},log_type=\"{log_type}\"}}"
            f" / ndb_log_space_total_bytes{{{s},log_type=\"{log_type}\"}})")


def data_memory_used_ratio(s: str) -> str:
    return (f"max without (instance, job, memory_type) (ndb_memory_used_bytes{{{s},memory_type=\"Data memory\"}}"
            f" / ndb_memory_total_bytes{{{s},memory_type=\"Data memory\"}})")


def transaction_memory_used_ratio(s: str) -> str:
    """TRANSACTION_MEMORY (8.0+); max 0 means no limit of its own: not a ratio."""
    return (f"max {WITHOUT} (ndb_resource_used_pages{{{s},resource_name=\"TRANSACTION_MEMORY\"}}"
            f" / (ndb_resource_max_pages{{{s},resource_name=\"TRANSACTION_MEMORY\"}} > 0))")


def lcp_stalled_expr(c: dict) -> str:
    n, s = c["ndb"], c["selectors"]["ndb"]
    factor = n["lcp_stalled_duration_factor"]

    def lcp_flat(w: str) -> str:
        # no new LCP and no fragment replica checkpointed for the whole window (and the
        # series is older than it); a running LCP moves `remaining` as fragments finish
        return (f"(max {WITHOUT} (changes(ndb_lcp_id{{{s}}}[{w}])) == 0"
                f" and on (cluster) max {WITHOUT} (ndb_lcp_id{{{s}}} offset {w})"
                f" unless on (cluster) max {WITHOUT} (changes(ndb_lcp_fragment_replicas_remaining{{{s}}}[{w}])) > 0"
                # ...while an LCP runs, or REDO was written well past what starts one
                f" and on (cluster) (max {WITHOUT} (ndb_lcp_running{{{s}}}) == 1"
                f" or sum by (cluster) (avg_over_time(ndb_disk_write_speed_bytes_per_second"
                f"{{{s},kind=\"redo\",window=\"60s\"}}[{w}])) * {seconds(w)}"
                f" > {n['lcp_stalled_min_redo_bytes']}))")

    def lcp_window_fits(w: str) -> str:
        # the window is long enough for this cluster's LCPs (or it is the longest)
        if w == LCP_WINDOWS[-1]:
            return ""
        return (f" unless on (cluster) max {WITHOUT} (ndb_lcp_last_duration_seconds{{{s}}})"
                f" * {factor} > {seconds(w)}")

    return " or ".join(f"({lcp_flat(w)}{lcp_window_fits(w)})" for w in LCP_WINDOWS
                       if seconds(w) >= seconds(n["lcp_stalled_after"]))


def _lcp_stalled(c: dict) -> Alert:
    n = c["ndb"]
    lcp_stalled = lcp_stalled_expr(c)
    lcp_after = c["ndb"]["lcp_stalled_after"]
    factor = c["ndb"]["lcp_stalled_duration_factor"]
    return Alert(name="NdbLcpStalled",
                 expr=lcp_stalled,
                 severity="warning",
                 summary="NDB local checkpoints stalled in {{ $labels.cluster }}",
                 description=f"No local checkpoint has completed and no fragment replica was checkpointed for"
                             f" {lcp_after} (longer when the last LCP took long: {factor}x its duration, up"
                             f" to {LCP_WINDOWS[-1]}) while an LCP runs, or while the data nodes wrote more"
                             f" than {n['lcp_stalled_min_redo_bytes'] / 2**20:.0f} MiB of REDO: the REDO log"
                             " fills and restarts get slow.",
                 dashboard="ndb_overview",
                 per_node=False,
                 runbook=Runbook(
                     meaning="No local checkpoint completed and no fragment replica was checkpointed"
                             " (`ndb_lcp_id` and `ndb_lcp_fragment_replicas_remaining` both flat) for 30"
                             " minutes, while an LCP runs or while the data nodes wrote more REDO than"
                             " starts one (64 MiB; the default TimeBetweenLocalCheckpoints starts an LCP"
                             " after 4 MB). When the last LCP took long, the window is 3 times its"
                             " duration (1 h, 2 h, up to 4 h), so a large node's healthy LCP, or one"
                             " large fragment being checkpointed, is not a stall.",
                     impact="The REDO log cannot be trimmed and fills up (then writes fail, error 410);"
                            " node restarts wait for an LCP and get slow.",
                     diagnosis=f"- Tables per LCP state and replicas still to checkpoint: `{LCP_Q}`\n"
                               "- `ndb_mgm -e \"ALL CLUSTERLOG CHECKPOINT=8\"` to log LCP start/complete"
                               " lines in the cluster log.\n"
                               "- `ndbinfo.disk_write_speed_aggregate` (LCP write speed, slowdowns);"
                               " disk latency on the data nodes.",
                     mitigation="Fix disk I/O problems; raise `MinDiskWriteSpeed`/`MaxDiskWriteSpeed`"
                                " if LCPs are throttled; reduce write load until LCPs complete."
                                " `ndb_mgm -e \"ALL DUMP 7099\"` starts an LCP by hand (use with care).",
                     benign="none with real write traffic: an idle cluster does not fire."))


def _redo_log_filling(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbRedoLogFilling",
                 expr=f"{log_space_used_ratio(s, 'REDO')} > {n['redo_used_ratio_max']}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} REDO log is {{ $value | humanizePercentage }}"
                         " full",
                 description="The fullest REDO log part of data node {{ $labels.node_id }} is over"
                             f" {n['redo_used_ratio_max']:.0%} used; at 100% the node refuses writes"
                             " (error 410).",
                 dashboard="ndb_overview",
                 for_=n["log_filling_for"],
                 runbook=Runbook(
                     meaning="The fullest REDO log part of a data node has been more than 80 % used for"
                             " 5 minutes.",
                     impact="At 100% the node rejects writes with temporary error 410 (REDO log files"
                            " overloaded).",
                     diagnosis="- `SELECT * FROM ndbinfo.logspaces WHERE log_type = 'REDO';`\n"
                               "- LCP progress (NdbLcpStalled) and `ndb_lcp_last_duration_seconds`.",
                     mitigation="Let LCPs catch up (disk speed), lower the write rate, or add REDO space"
                                " (`NoOfFragmentLogFiles`, `FragmentLogFileSize`; rolling --initial)."))


def _undo_log_filling(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbUndoLogFilling",
                 expr=f"{log_space_used_ratio(s, 'DD-UNDO')} > {n['undo_used_ratio_max']}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} disk data UNDO log is"
                         " {{ $value | humanizePercentage }} full",
                 description="The disk data UNDO log (logfile group) of data node {{ $labels.node_id }} is over"
                             f" {n['undo_used_ratio_max']:.0%} used; when it is full, transactions on disk"
                             " data tables fail until an LCP frees it.",
                 dashboard="ndb_overview",
                 for_=n["log_filling_for"],
                 runbook=Runbook(
                     meaning="The disk data UNDO log (the logfile group's space, `log_type = 'DD-UNDO'`)"
                             " of a data node has been more than 80 % used for 5 minutes.",
                     impact="When it is full, transactions on disk data tables abort until an LCP frees"
                            " UNDO space.",
                     diagnosis="- `SELECT * FROM ndbinfo.logspaces WHERE log_type = 'DD-UNDO';`\n"
                               "- LCP progress (NdbLcpStalled): UNDO is freed by LCPs.",
                     mitigation="Add an UNDO file (`ALTER LOGFILE GROUP ... ADD UNDOFILE`), let LCPs"
                                " catch up, lower the disk data write rate."))


def _data_memory_high(c: dict) -> Alert:
    n = c["ndb"]
    data_memory = data_memory_used_ratio(c["selectors"]["ndb"])
    return Alert(name="NdbDataMemoryHigh",
                 expr=f"{data_memory} > {n['data_memory_used_ratio_max']}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} DataMemory {{ $value | humanizePercentage }}"
                         " used",
                 description="Data node {{ $labels.node_id }} uses more than"
                             f" {n['data_memory_used_ratio_max']:.0%} of its DataMemory (ndbinfo.memoryusage);"
                             " when it is full, inserts fail with error 827 (table is full).",
                 dashboard="ndb_node",
                 for_=n["memory_for"],
                 runbook=Runbook(
                     meaning="A data node has used more than 90 % of its DataMemory"
                             " (`ndbinfo.memoryusage`, `Data memory`) for 5 minutes.",
                     impact="When DataMemory is full, inserts and updates that need memory fail with"
                            " error 827 (table is full).",
                     diagnosis="- `ndb_mgm -e \"ALL REPORT MEMORY\"`\n"
                               "- `SELECT node_id, memory_type, used, total FROM ndbinfo.memoryusage;`\n"
                               "- The largest tables: `SELECT * FROM ndbinfo.memory_per_fragment ORDER"
                               " BY fixed_elem_alloc_bytes + var_elem_alloc_bytes DESC LIMIT 20;`",
                     mitigation="Delete or archive data, move large columns to disk data, raise"
                                " `DataMemory` (rolling restart) or add node groups."))


def _transaction_memory_high(c: dict) -> Alert:
    n = c["ndb"]
    transaction_memory = transaction_memory_used_ratio(c["selectors"]["ndb"])
    return Alert(name="NdbTransactionMemoryHigh",
                 expr=f"{transaction_memory} > {n['transaction_memory_used_ratio_max']}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} TransactionMemory"
                         " {{ $value | humanizePercentage }} used",
                 description="Data node {{ $labels.node_id }} uses more than"
                             f" {n['transaction_memory_used_ratio_max']:.0%} of the pages its"
                             " TRANSACTION_MEMORY resource may take (ndbinfo.resources, used of max): large"
                             " or many concurrent transactions fail once it is exhausted.",
                 dashboard="ndb_node",
                 for_=n["memory_for"],
                 runbook=Runbook(
                     meaning="A data node has used more than 90 % of the pages its TRANSACTION_MEMORY"
                             " resource may take (`ndbinfo.resources`: used over max; a max of 0 means"
                             " no limit of its own and is left out) for 5 minutes.",
                     impact="Operations and transactions need TransactionMemory; when it is exhausted"
                            " they fail with temporary errors (out of operation records / transaction"
                            " memory) and large transactions abort.",
                     diagnosis="- `SELECT node_id, resource_name, reserved, used, max FROM"
                               " ndbinfo.resources WHERE resource_name = 'TRANSACTION_MEMORY';`\n"
                               "- Large or long transactions: `SELECT * FROM ndbinfo.cluster_transactions"
                               " ORDER BY outstanding_operations DESC LIMIT 20;`",
                     mitigation="Split large transactions (batch deletes and updates), raise"
                                " `TransactionMemory` (rolling restart), or find the client that holds"
                                " transactions open."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_lcp_stalled, _redo_log_filling, _undo_log_filling,
                                 _data_memory_high, _transaction_memory_high)]
