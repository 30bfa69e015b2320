# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""The product's recording and alerting rules, built from `rules/config.yaml`.

Names follow the monitoring-mixins conventions: recording rules `level:metric:operations`,
alerts CamelCase with a component prefix. `clusterscope.rulegen` writes them to `rules/*.yml`
(Prometheus rule-group format, which vmalert reads unchanged).

Restart regression, the one non-obvious design: a restart becomes a *completion event*
(`...:completion` series) during a short window after `ndb_restarts_completed_total` grew.
The baseline is the median of those event samples from before the window (`offset`), so the
latest restart is judged against earlier ones only. The verdict (ratio and per-phase growth)
is recorded only inside the window and held afterwards with `last_over_time`, so an alert
stays until the next restart gives a new verdict instead of fading once the latest restart
enters its own baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "rules" / "config.yaml"
COMPLETED = "cluster_node:ndb_restart_total_seconds:completed"
WITHOUT = "without (instance, job)"


def load_config(path: Path = CONFIG) -> dict:
    return yaml.safe_load(path.read_text())


@dataclass
class Alert:
    name: str
    expr: str
    severity: str
    summary: str
    description: str
    dashboard: str
    for_: str | None = None
    labels: dict = field(default_factory=dict)
    per_node: bool = True  # its labels name one node (dashboard_url selects it)


@dataclass
class Group:
    name: str
    file: str
    records: list[tuple[str, str]] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)


def _fold(expr: str) -> str:
    return " ".join(expr.split())


# -- NDB ------------------------------------------------------------------------------------
def ndb_groups(c: dict) -> list[Group]:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    w = n["restart_completion_window"]
    hist = n["restart_history"]
    done = " or ".join(f"max {WITHOUT} (ndb_restart_status{{{s}}}) == {v}"
                       for v in n["restart_completed_states"])
    # A counter that first appears (exporter's first restart) has no increase to see.
    c = f"ndb_restarts_completed_total{{{s}}}"
    just_done = f"(increase({c}[{w}]) > 0 or ({c} unless {c} offset {w}))"
    total_done = f"max {WITHOUT} (ndb_restart_total_seconds{{{s}}}) and on (cluster, node_id) ({done})"
    phase_done = f"max {WITHOUT} (ndb_restart_phase_seconds{{{s}}}) and on (cluster, node_id) ({done})"
    base_total = ("quantile_over_time(0.5, cluster_node:ndb_restart_total_seconds:completion"
                  f"[{hist}] offset {w})")
    base_phase = ("quantile_over_time(0.5, cluster_node_phase:ndb_restart_phase_seconds:completion"
                  f"[{hist}] offset {w})")
    count_ev = "cluster_node:ndb_restarts_completed:completion"
    earlier = (f"(max_over_time({count_ev}[{hist}] offset {w}) - min_over_time({count_ev}[{hist}]"
               f" offset {w}) + 1 >= {n['restart_min_earlier']})")
    restarts = Group("ndb-restarts", "ndb.yml", records=[
        (COMPLETED, total_done),
        ("cluster_node_phase:ndb_restart_phase_seconds:completed", phase_done),
        ("cluster_node:ndb_restart_total_seconds:completion",
         f"({total_done}) and on (cluster, node_id) {just_done}"),
        ("cluster_node_phase:ndb_restart_phase_seconds:completion",
         f"({phase_done}) and on (cluster, node_id) {just_done}"),
        (count_ev, f"max {WITHOUT} (ndb_restarts_completed_total{{{s}}}) and on (cluster, node_id)"
                   f" {just_done}"),
        ("cluster:ndb_restart_total_seconds:completion",
         f"max without (node_id) (({total_done}) and on (cluster, node_id) {just_done})"),
        ("cluster_node:ndb_restart_total_seconds:baseline_median", base_total),
        ("cluster_node_phase:ndb_restart_phase_seconds:baseline_median", base_phase),
        ("cluster:ndb_restart_total_seconds:baseline_median",
         f"quantile_over_time(0.5, cluster:ndb_restart_total_seconds:completion[{hist}]"
         f" offset {w})"),
        # The verdicts: only inside the completion window, with enough earlier restarts.
        ("cluster_node:ndb_restart_total_seconds:ratio_to_baseline",
         f"({total_done}) / on (cluster, node_id) group_left () ({base_total})"
         f" and on (cluster, node_id) {just_done} and on (cluster, node_id) {earlier}"),
        ("cluster_node:ndb_restart_total_seconds:growth_over_baseline",
         f"({total_done}) - on (cluster, node_id) group_left () ({base_total})"
         f" and on (cluster, node_id) {just_done} and on (cluster, node_id) {earlier}"),
        ("cluster_node_phase:ndb_restart_phase_seconds:growth_over_baseline",
         f"({phase_done}) - on (cluster, node_id, phase) group_left () ({base_phase})"
         f" and on (cluster, node_id) {just_done} and on (cluster, node_id) {earlier}"),
        # Against a baseline pinned with `clusterscope baseline pin` (if one is pinned).
        ("cluster_node:ndb_restart_total_seconds:ratio_to_pinned",
         f"({total_done}) / on (cluster, node_id) group_left () max without (pin) ("
         f"last_over_time(clusterscope_pinned_restart_total_seconds[{n['restart_pinned_lookback']}]))"),
    ])
    hold = n["restart_verdict_hold"]
    excl = n["restart_phase_exclude"]
    grew_most = (f"0 * topk by (cluster, node_id) (1, last_over_time("
                 f"cluster_node_phase:ndb_restart_phase_seconds:growth_over_baseline"
                 f"{{phase!~\"{excl}\"}}[{hold}]))")
    restarts.alerts.append(Alert(
        "NdbRestartTimeRegressed",
        f"(last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_baseline[{hold}])"
        f" > {n['restart_regression_factor']} and on (cluster, node_id)"
        f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_baseline[{hold}])"
        f" > {n['restart_regression_min_growth_seconds']})"
        f" + on (cluster, node_id) group_left (phase) {grew_most}",
        "warning",
        "NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
        " its baseline; phase {{ $labels.phase }} grew most",
        "The latest completed restart of data node {{ $labels.node_id }} in cluster"
        " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the median of its"
        f" earlier restarts (threshold {n['restart_regression_factor']}x and"
        f" +{n['restart_regression_min_growth_seconds']} s). The phase that grew most against"
        " its own median is {{ $labels.phase }}.",
        "ndb_restarts"))
    pinned = (f"max without (pin) (last_over_time(clusterscope_pinned_restart_total_seconds"
              f"[{n['restart_pinned_lookback']}]))")
    restarts.alerts.append(Alert(
        "NdbRestartTimeAbovePinned",
        f"cluster_node:ndb_restart_total_seconds:ratio_to_pinned > {n['restart_regression_factor']}"
        f" and on (cluster, node_id) ({COMPLETED} - on (cluster, node_id) group_left () {pinned}"
        f" > {n['restart_regression_min_growth_seconds']})",
        "warning",
        "NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
        " the pinned baseline",
        "The latest completed restart of data node {{ $labels.node_id }} in cluster"
        " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the restart time"
        " pinned with `clusterscope baseline pin` (threshold"
        f" {n['restart_regression_factor']}x and +{n['restart_regression_min_growth_seconds']} s).",
        "ndb_restarts"))
    restarts.alerts.append(Alert(
        "NdbRestartStuck",
        f"(max {WITHOUT} (ndb_restart_status{{{s}}}) < 12 or (max {WITHOUT}"
        f" (ndb_restart_status{{{s}}}) > 12 and max {WITHOUT} (ndb_restart_status{{{s}}}) < 19))"
        f" and on (cluster, node_id) (max {WITHOUT} (max_over_time(ndb_restart_status{{{s}}}"
        f"[{n['restart_stuck_after']}])) == max {WITHOUT} (min_over_time(ndb_restart_status{{{s}}}"
        f"[{n['restart_stuck_after']}])))",
        "warning",
        "NDB node {{ $labels.node_id }} restart made no progress for"
        f" {n['restart_stuck_after']}",
        "Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} has been in restart"
        " state {{ $value }} (ndbinfo.restart_info.node_restart_status_int) for at least"
        f" {n['restart_stuck_after']}.",
        "ndb_restarts"))

    nodes = Group("ndb-nodes", "ndb.yml", records=[
        ("cluster:ndb_lcp_duration_seconds:last",
         f"max {WITHOUT} (ndb_lcp_last_duration_seconds{{{s}}})"),
        ("cluster:ndb_lcp_id:delta1h", f"max {WITHOUT} (delta(ndb_lcp_id{{{s}}}[1h]))"),
        ("cluster_node:ndb_redo_log_space_used:max_part_ratio",
         f"max without (instance, job, log_id, log_part, log_type) ("
         f"ndb_log_space_used_bytes{{{s},log_type=\"REDO\"}}"
         f" / ndb_log_space_total_bytes{{{s},log_type=\"REDO\"}})"),
        ("cluster_node:ndb_ldm_cpu_percent:mean",
         f"avg without (instance, job, thr_no, thread_name) (sum without (mode) ("
         f"ndb_thread_cpu_percent{{{s},thread_name=\"ldm\",mode=~\"{n['ldm_cpu_modes']}\"}}))"),
        ("cluster_node:ndb_ldm_cpu_percent:max",
         f"max without (instance, job, thr_no, thread_name) (sum without (mode) ("
         f"ndb_thread_cpu_percent{{{s},thread_name=\"ldm\",mode=~\"{n['ldm_cpu_modes']}\"}}))"),
        ("cluster_node:ndb_transporter_sent_bytes:rate1m",
         f"sum without (instance, job, remote_node_id) (rate(ndb_transporter_sent_bytes_total{{{s}}}[1m]))"),
        ("cluster_node:ndb_transporter_received_bytes:rate1m",
         f"sum without (instance, job, remote_node_id) ("
         f"rate(ndb_transporter_received_bytes_total{{{s}}}[1m]))"),
    ])
    nodes.alerts += [
        Alert("NdbDataNodeDown", f"max without (instance, job, status) (ndb_node_status{{{s},status=\"STARTED\"}}) == 0",
              "critical", "NDB data node {{ $labels.node_id }} is not started",
              "Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} has not been in"
              f" status STARTED for {n['data_node_down_for']} (ndbinfo.nodes).",
              "ndb_overview", n["data_node_down_for"]),
        Alert("NdbLcpStalled",
              f"(max {WITHOUT} (max_over_time(ndb_lcp_id{{{s}}}[{n['lcp_stalled_after']}])) =="
              f" max {WITHOUT} (min_over_time(ndb_lcp_id{{{s}}}[{n['lcp_stalled_after']}])))"
              f" and on (cluster) (sum by (cluster) (rate(ndb_counters_total{{{s},"
              f"{n['lcp_write_counter']}}}[5m])) > 0)",
              "warning", "NDB local checkpoints stalled in {{ $labels.cluster }}",
              f"The LCP id has not advanced for {n['lcp_stalled_after']} while the cluster"
              " keeps writing: the REDO log fills and restarts will be slow.", "ndb_overview",
              per_node=False),
        Alert("NdbRedoLogFilling",
              f"max without (instance, job, log_id, log_part, log_type) ("
              f"ndb_log_space_used_bytes{{{s},log_type=\"REDO\"}}"
              f" / ndb_log_space_total_bytes{{{s},log_type=\"REDO\"}}) > {n['redo_used_ratio_max']}",
              "warning", "NDB node {{ $labels.node_id }} REDO log is {{ $value | humanizePercentage }}"
              " full", "The fullest REDO log part of data node {{ $labels.node_id }} is over"
              f" {n['redo_used_ratio_max']:.0%} used; at 100% the node refuses writes"
              " (error 410).", "ndb_overview", "5m"),
        Alert("NdbLdmCpuSaturated",
              f"max without (instance, job, thr_no, thread_name) (sum without (mode) ("
              f"ndb_thread_cpu_percent{{{s},thread_name=\"ldm\",mode=~\"{n['ldm_cpu_modes']}\"}}))"
              f" > {n['ldm_cpu_percent_max']}",
              "warning", "NDB node {{ $labels.node_id }} LDM thread at {{ $value }}% CPU",
              "The busiest LDM thread of data node {{ $labels.node_id }} has been above"
              f" {n['ldm_cpu_percent_max']}% CPU for {n['ldm_cpu_for']}.", "ndb_overview",
              n["ldm_cpu_for"]),
        Alert("NdbTransporterOverloaded",
              f"max {WITHOUT} (ndb_transporter_overloaded{{{s}}}) == 1 or max {WITHOUT}"
              f" (increase(ndb_transporter_overloads_total{{{s}}}[5m])) > 0",
              "warning", "NDB transporter {{ $labels.node_id }} -> {{ $labels.remote_node_id }}"
              " overloaded", "The send buffer from node {{ $labels.node_id }} to node"
              " {{ $labels.remote_node_id }} is overloaded (ndbinfo.transporters).",
              "ndb_overview", n["transporter_overloaded_for"]),
        Alert("NdbExporterDown", f"up{{{s}}} == 0 or ndb_up{{{s}}} == 0",
              "critical", "ndbinfo_exporter {{ $labels.instance }} sees no NDB cluster",
              "Either the exporter does not answer scrapes (up 0) or it cannot read ndbinfo"
              " from its SQL node (ndb_up 0): NDB monitoring is blind.", "ndb_overview",
              n["exporter_down_for"], per_node=False),
        Alert("NdbExporterCollectorFailing",
              f"ndb_exporter_collector_success{{{s}}} == 0 and on (instance, collector)"
              f" ndb_exporter_collector_supported{{{s}}} == 1",
              "warning", "ndbinfo_exporter collector {{ $labels.collector }} failing",
              "Collector {{ $labels.collector }} of {{ $labels.instance }} fails on every"
              " scrape although its view exists: its metrics are missing.", "ndb_overview",
              n["collector_failing_for"], per_node=False),
    ]
    return [restarts, nodes]


# -- Galera ---------------------------------------------------------------------------------
def galera_groups(c: dict) -> list[Group]:
    g = c["galera"]
    s = c["selectors"]["galera"]
    t = c["selectors"]["galera_tracker"]
    grp = Group("galera", "galera.yml", records=[
        ("cluster_node:galera_flow_control_paused:ratio_rate1m",
         f"max {WITHOUT} (rate(mysql_global_status_wsrep_flow_control_paused_ns{{{s}}}[1m]) / 1e9)"),
        ("cluster_node:mysql_global_status_wsrep_local_recv_queue:max1m",
         f"max {WITHOUT} (max_over_time(mysql_global_status_wsrep_local_recv_queue{{{s}}}[1m]))"),
        ("cluster:mysql_global_status_wsrep_cluster_size:max",
         f"max by (cluster) (mysql_global_status_wsrep_cluster_size{{{s}}})"),
        ("cluster_node_kind:galera_recovery_duration_seconds:last",
         f"max without (instance, job, donor) (galera_recovery_last_duration_seconds{{{t}}})"),
        ("cluster_kind:galera_recovery_duration_seconds:p90_1d",
         f"histogram_quantile(0.9, sum by (cluster, kind, le) ("
         f"increase(galera_recovery_duration_seconds_bucket{{{t}}}[1d])))"),
    ])
    slow = g["recovery_slow_seconds"]
    recent = g["recovery_recent"]
    grp.alerts += [
        Alert("GaleraNodeNotReady",
              f"mysql_up{{{s}}} == 0 or up{{{s}}} == 0 or"
              f" mysql_global_status_wsrep_ready{{{s}}} == 0",
              "critical", "Galera node {{ $labels.node }} is down or not ready",
              "Node {{ $labels.node }} of {{ $labels.cluster }} does not answer (mysql_up 0:"
              " its wsrep series are gone) or refuses queries (wsrep_ready OFF).",
              "galera", g["node_not_ready_for"]),
        Alert("GaleraNodeOutOfSync",
              f"mysql_global_status_wsrep_local_state{{{s}}} != 4"
              f" and mysql_global_status_wsrep_local_state{{{s}}} != 2",
              "warning", "Galera node {{ $labels.node }} not Synced (state {{ $value }})",
              "Node {{ $labels.node }} has been in wsrep_local_state {{ $value }} (1 Joining,"
              f" 3 Joined) for {g['out_of_sync_for']}. A donor (2) is not reported: it is"
              " serving an SST on purpose.", "galera", g["out_of_sync_for"]),
        Alert("GaleraClusterSizeReduced",
              f"max by (cluster) (mysql_global_status_wsrep_cluster_size{{{s}}})"
              f" < count by (cluster) (mysql_up{{{s}}})",
              "warning", "Galera cluster {{ $labels.cluster }} has only {{ $value }} members",
              "The primary component of {{ $labels.cluster }} has {{ $value }} members, fewer"
              " than the nodes monitored: a node has left or is down.", "galera",
              g["cluster_size_reduced_for"], per_node=False),
        Alert("GaleraFlowControlHigh",
              f"max {WITHOUT} (rate(mysql_global_status_wsrep_flow_control_paused_ns{{{s}}}[1m])"
              f" / 1e9) > {g['flow_control_paused_max']}",
              "warning", "Galera node {{ $labels.node }} paused by flow control"
              " {{ $value | humanizePercentage }} of the time",
              "Replication on {{ $labels.cluster }} is paused more than"
              f" {g['flow_control_paused_max']:.0%} of the time because node {{{{ $labels.node }}}}"
              " cannot apply fast enough.", "galera", g["flow_control_for"]),
        Alert("GaleraRecoveryUsedSST",
              f"(time() - max without (instance, job, method, donor)"
              f" (galera_recovery_last_end_timestamp_seconds{{{t},kind=\"sst\"}}) < 600)"
              f" and on (cluster, node) (sum without (instance, job, from, to)"
              f" (galera_state_transitions_total{{{t},to=\"SYNCED\"}}) >= 2)",
              "warning", "Galera node {{ $labels.node }} rejoined by full SST",
              "Node {{ $labels.node }} had been Synced before and rejoined by a full state"
              " transfer where an incremental one (IST from the donor's gcache) was expected.",
              "galera"),
        Alert("GaleraRecoverySlow",
              f"(galera_recovery_last_duration_seconds{{{t},kind=\"ist\"}} > {slow['ist']}"
              f" or galera_recovery_last_duration_seconds{{{t},kind=\"sst\"}} > {slow['sst']})"
              f" and on (cluster, node, kind) (time() -"
              f" galera_recovery_last_end_timestamp_seconds{{{t}}} < {_seconds(recent)})",
              "warning", "Galera node {{ $labels.node }} {{ $labels.kind }} took"
              " {{ $value | humanizeDuration }}",
              "The last {{ $labels.kind }} recovery of node {{ $labels.node }} (donor"
              " {{ $labels.donor }}) took {{ $value | humanizeDuration }}, over the"
              f" threshold (IST {slow['ist']} s, SST {slow['sst']} s).", "galera"),
    ]
    return [grp]


def _seconds(d: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(d[:-1]) * units[d[-1]]


# -- Loadgen / experiments -------------------------------------------------------------------
def loadgen_groups(c: dict) -> list[Group]:
    lc = c["loadgen"]
    s = c["selectors"]["loadgen"]
    keep = "without (instance, job, target)"
    pinned = (f"max without (pin) (last_over_time(clusterscope_pinned_overhead_ratio"
              f"[{lc['overhead_pinned_lookback']}]))")
    rolling = f"loadgen_overhead_ratio{{{s}}} offset {lc['overhead_rolling_offset']}"
    grp = Group("experiments", "loadgen.yml", records=[
        ("experiment_variant:loadgen_pair_overhead_ratio:last",
         f"max {keep} (loadgen_pair_overhead_ratio{{{s}}})"),
        ("experiment_variant:loadgen_overhead_ratio:mean", f"max {keep} (loadgen_overhead_ratio{{{s}}})"),
        ("experiment_variant:loadgen_overhead_ratio:lower",
         f"max {keep} (loadgen_overhead_ratio_lower{{{s}}})"),
        ("experiment_variant:loadgen_overhead_ratio:upper",
         f"max {keep} (loadgen_overhead_ratio_upper{{{s}}})"),
        ("experiment_variant:loadgen_latency_ratio:mean", f"max {keep} (loadgen_latency_ratio{{{s}}})"),
        ("experiment_variant:loadgen_window_tps:avg10m",
         f"max {keep} (avg_over_time(loadgen_window_tps{{{s}}}[10m]))"),
    ])
    grp.alerts += [
        Alert("ExperimentOverheadChanged",
              f"((max {keep} (loadgen_overhead_ratio_lower{{{s}}}) > on (experiment, variant)"
              f" group_left () ({pinned}))"
              f" or (max {keep} (loadgen_overhead_ratio_upper{{{s}}}) < on (experiment, variant)"
              f" group_left () ({pinned}))"
              f" or (max {keep} (loadgen_overhead_ratio_lower{{{s}}}) > on (experiment, variant)"
              f" group_left () max {keep} ({rolling}))"
              f" or (max {keep} (loadgen_overhead_ratio_upper{{{s}}}) < on (experiment, variant)"
              f" group_left () max {keep} ({rolling})))"
              f" and on (experiment, variant) max {keep} (loadgen_overhead_pairs{{{s}}})"
              f" >= {lc['overhead_min_pairs']}",
              "info", "Overhead of {{ $labels.experiment }}/{{ $labels.variant }} changed",
              "The baseline overhead (pinned with `clusterscope baseline pin`, else the value"
              f" {lc['overhead_rolling_offset']} ago) lies outside the current 95% interval of"
              " {{ $labels.experiment }}/{{ $labels.variant }} against {{ $labels.baseline }}.",
              "experiments"),
        Alert("LoadgenSaturated", f"max {WITHOUT} (loadgen_saturated{{{s}}}) == 1",
              "warning", "Load generator {{ $labels.experiment }} is the bottleneck",
              "The loadgen's sysbench uses >= 90% of the CPU it may use: its figures measure"
              " the load generator, not the cluster.", "experiments", lc["saturated_for"]),
    ]
    return [grp]


def all_groups(c: dict | None = None) -> list[Group]:
    c = c or load_config()
    return [*ndb_groups(c), *galera_groups(c), *loadgen_groups(c)]


def alert_names(c: dict | None = None) -> list[str]:
    return [a.name for g in all_groups(c) for a in g.alerts]


DASHBOARD_NODE_VAR = {"ndb_restarts": "node_id", "ndb_overview": "node_id", "galera": "node",
                      "experiments": "experiment"}


def _dashboard_vars(a: Alert) -> str:
    """The dashboards' variables (cluster, node_id/node/experiment) from the alert's labels."""
    q = "?var-cluster={{ $labels.cluster }}"
    var = DASHBOARD_NODE_VAR[a.dashboard]
    if a.per_node:
        q += f"&var-{var}={{{{ $labels.{var} }}}}"
    return q


def render_files(c: dict | None = None) -> dict[str, str]:
    """File name under rules/ -> its YAML text."""
    c = c or load_config()
    links = c["links"]
    files: dict[str, list[dict[str, Any]]] = {}
    for g in all_groups(c):
        rules: list[dict[str, Any]] = [{"record": r, "expr": _fold(e)} for r, e in g.records]
        for a in g.alerts:
            rule: dict[str, Any] = {"alert": a.name, "expr": _fold(a.expr)}
            if a.for_:
                rule["for"] = a.for_
            rule["labels"] = {"severity": a.severity, **a.labels}
            rule["annotations"] = {
                "summary": a.summary, "description": a.description,
                "runbook_url": f"{links['runbook_base_url']}/{a.name}.md",
                "dashboard_url": f"{links['dashboard_base_url']}/{c['dashboards'][a.dashboard]}"
                                 + _dashboard_vars(a)}
            rules.append(rule)
        files.setdefault(g.file, []).append({"name": g.name, "rules": rules})
    header = "# Generated by `python -m clusterscope.rulegen` from rules/config.yaml; do not edit.\n"
    return {f: header + yaml.safe_dump({"groups": groups}, sort_keys=False, width=100)
            for f, groups in files.items()}
