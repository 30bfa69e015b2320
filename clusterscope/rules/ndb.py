# ruff: noqa: E501  (PromQL reads better unbroken)
"""NDB rules: restart regression, restarts stuck, node, LCP, REDO, CPU, exporter health.

Restart regression, the one non-obvious design: a restart becomes a *completion event*
(`...:completion` series) during a short window after `ndb_restarts_completed_total` grew.
The baseline is the median of those event samples from before the window (`offset`), so the
latest restart is judged against earlier ones only. The verdict (ratio and per-phase growth)
is recorded only inside the window and held afterwards with `last_over_time`, so an alert
stays until the next restart gives a new verdict instead of fading once the latest restart
enters its own baseline.
"""

from __future__ import annotations

from clusterscope.rules.fragments import ldm_cpu_percent, restart_completed, restart_in_progress
from clusterscope.rules.model import WITHOUT, Alert, Group

COMPLETED = "cluster_node:ndb_restart_total_seconds:completed"


def groups(c: dict) -> list[Group]:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    w = n["restart_completion_window"]
    hist = n["restart_history"]
    done = restart_completed(f"max {WITHOUT} (ndb_restart_status{{{s}}})")
    ldm_cpu = ldm_cpu_percent(s, modes=n["ldm_cpu_modes"])
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
        f"({restart_in_progress(f'max {WITHOUT} (ndb_restart_status{{{s}}})')})"
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
         f"avg without (instance, job, thr_no, thread_name) ({ldm_cpu})"),
        ("cluster_node:ndb_ldm_cpu_percent:max",
         f"max without (instance, job, thr_no, thread_name) ({ldm_cpu})"),
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
              f"max without (instance, job, thr_no, thread_name) ({ldm_cpu})"
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
