# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB key operation latency against its own baseline, and the transaction duration beside
it (records and an alert of the ndb-workload group).

The TC times a key operation from sending it to the LDM to its confirmation, one operation
each, with no client time in it; a transaction from its first operation to the commit
confirmation, the client's think time between its statements included
(Dbtc::time_track_complete_key_operation / time_track_complete_transaction,
mysql/mysql-server storage/ndb/src/kernel/blocks/dbtc/DbtcMain.cpp, as mirrored in
AKJUS/mysql-server @1334cddbebd0). So only the first can regress without the application
changing how it batches; the duration is recorded for the dashboards only. Both are
recorded only with traffic: a quantile of no completions is NaN, which a
quantile_over_time baseline keeps (an idle night would pull the median, or make it NaN)."""

from __future__ import annotations

from clusterscope.rules.rule_model import Alert, Runbook

KEY_OPS = 'activity=~"read_key|write_key|index_key"'
TX = 'activity="transaction"'
KEY_LATENCY = "cluster_node:ndb_key_operation_latency_seconds:quantile_rate5m"


def completions_rate(s: str, sel: str) -> str:
    return (f"sum without (instance, job, activity) (rate(ndb_tc_latency_seconds_count"
            f"{{{s},{sel}}}[5m]))")


def quantile(c: dict, sel: str) -> str:
    q, s = c["ndb"]["key_operation_latency_quantile"], c["selectors"]["ndb"]
    return (f"histogram_quantile({q}, sum without (instance, job, activity)"
            f" (rate(ndb_tc_latency_seconds_bucket{{{s},{sel}}}[5m])))"
            f" and on (cluster, node_id) {completions_rate(s, sel)} > 0")


def baseline(c: dict) -> str:
    n = c["ndb"]
    return (f"quantile_over_time(0.5, {KEY_LATENCY}[{n['key_operation_latency_baseline']}]"
            f" offset {n['key_operation_latency_baseline_offset']})")


def records(c: dict) -> list[tuple[str, str]]:
    s = c["selectors"]["ndb"]
    return [
        (KEY_LATENCY, quantile(c, KEY_OPS)),
        ("cluster_node:ndb_key_operation_latency_seconds:baseline_median", baseline(c)),
        ("cluster_node:ndb_key_operations:rate5m", completions_rate(s, KEY_OPS)),
        ("cluster_node:ndb_transaction_duration_seconds:quantile_rate5m", quantile(c, TX)),
        ("cluster_node:ndb_commits:rate5m", completions_rate(s, TX)),
    ]


def key_operation_latency_regressed(c: dict) -> Alert:
    n = c["ndb"]
    q = n["key_operation_latency_quantile"]
    p_now, base = quantile(c, KEY_OPS), baseline(c)
    base_win = n["key_operation_latency_baseline"]
    base_off = n["key_operation_latency_baseline_offset"]
    ops = completions_rate(c["selectors"]["ndb"], KEY_OPS)
    return Alert(name="NdbKeyOperationLatencyRegressed",
                 expr=f"({p_now}) > {n['key_operation_latency_factor']} * ({base})"
                      f" and on (cluster, node_id) (({p_now}) - ({base}))"
                      f" > {n['key_operation_latency_min_growth_seconds']}"
                      f" and on (cluster, node_id) ({ops}) > {n['key_operation_latency_min_ops']}"
                      f" and on (cluster, node_id) count_over_time({KEY_LATENCY}[{base_win}] offset {base_off})"
                      f" > {n['key_operation_latency_baseline_min_samples']}",
                 severity="warning",
                 summary="NDB key operation latency on node {{ $labels.node_id }} is"
                         " {{ $value | humanizeDuration }} (p" + f"{int(q * 100)}" + ")",
                 description=f"The {int(q * 100)}th percentile of key operation latency (primary key reads with"
                             " locks, writes and unique index operations, each from the TC to the LDM and back;"
                             " ndbinfo.tc_time_track_stats) at data node {{ $labels.node_id }}'s TCs is"
                             " {{ $value | humanizeDuration }}, more than"
                             f" {n['key_operation_latency_factor']} times its own median over the {base_win}"
                             f" before (and {n['key_operation_latency_min_growth_seconds'] * 1000:g} ms more), at"
                             f" more than {n['key_operation_latency_min_ops']} operations/s. No client time is in"
                             " it: the cluster executes operations slower.",
                 dashboard="ndb_overview",
                 for_=n["key_operation_latency_for"],
                 runbook=Runbook(
                     meaning="A percentile of key operation latency (primary key reads with locks,"
                             " writes and unique index operations, each timed by the data node's TC"
                             " from sending it to the LDM to its confirmation:"
                             " `ndb_tc_latency_seconds{activity=~\"read_key|write_key|index_key\"}`"
                             " from ndbinfo.tc_time_track_stats) is several times its own median over"
                             " the baseline window before, and grew by more than the minimum, with"
                             " real traffic. No client time is in it: an application that batches"
                             " differently or holds transactions open longer does not move it (the"
                             " transaction duration, which holds the client's think time, is on the"
                             " dashboards only).",
                     impact="Every statement through that TC takes longer; client-side timeouts and"
                            " queueing follow.",
                     diagnosis="- Which operation moved: the overview's \"Key operation latency\" panel,"
                               " and `ndb_tc_latency_seconds` for read_key, write_key and index_key.\n"
                               "- Usual causes, each with its own panel or alert: LDM threads saturated"
                               " (NdbLdmCpuSaturated), lock waits (NdbLockWaits, NdbLockWaitTimeouts),"
                               " REDO or LCP pressure (NdbRedoLogFilling, disk write speed slowdowns),"
                               " overloaded transporters, a node restarting.\n"
                               "- Raw ranges: `SELECT node_id, upper_bound, SUM(read_key_ops),"
                               " SUM(write_key_ops) FROM ndbinfo.tc_time_track_stats GROUP BY node_id,"
                               " upper_bound;` twice, a minute apart (the counts are cumulative).",
                     mitigation="Address the cause found (CPU, locks, disk, network); if the new latency"
                                " is the new normal, the baseline adapts within its window.",
                     benign="a node restart or an LCP at the start of a busy period; much larger rows"
                            " written than before."))
