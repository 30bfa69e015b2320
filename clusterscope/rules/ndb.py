# ruff: noqa: E501  (PromQL reads better unbroken)
"""NDB rules: restart regression, restarts stuck, data nodes, LCP, REDO/UNDO, memory, CPU,
transporters, versions, exporter health.

Restart regression, the one non-obvious design: a restart becomes a *completion event* while
`time() - ndb_restart_last_completed_timestamp_seconds` is below the event window. The
exporter persists that timestamp with the count, so a gap in the series (SQL node or exporter
down, a collector timing out) never makes an old restart look new, and a counter appearing
at 0 is no event at all. During the event the `...:completion` series carry the restart's
total, phases and count; the baseline is the median of those samples from before the window
(`offset`), so the latest restart is judged against earlier ones only: the node's own when
it has enough earlier restarts, else the cluster's (every node's restarts pooled). The
verdicts are recorded only inside the window and held afterwards with `last_over_time`, so
an alert stays until the next restart gives a new verdict (or the hold ends) instead of
fading once the latest restart enters its own baseline.

The alerts repeat some recorded expressions instead of reading the records: vmalert writes a
group's records back asynchronously, so an alert reading a record of the same evaluation
could see the previous one. Records read with an `offset` or `last_over_time` are safe.
"""

from __future__ import annotations

from clusterscope.rules.fragments import (
    ldm_cpu_percent,
    restart_completed,
    restart_in_progress,
    restart_status_in,
)
from clusterscope.rules.model import WITHOUT, Alert, Group, seconds

COMPLETED = "cluster_node:ndb_restart_total_seconds:completed"
# restart states whose length grows with the data a node holds (wait for the running LCP
# before the dictionary copy, restore fragments, undo, REDO, index build, copy/sync, wait
# for an LCP; 22/23 the same seen by a later master). State 9 (WAIT_LCP_TO_COPY_DICT) waits
# for the LCP under way, which grows with the data (review oncall-2 N15).
DATA_BOUND_STATES = (9, 12, 13, 14, 15, 16, 17, 22, 23)


def groups(c: dict) -> list[Group]:
    return [_restarts(c), _nodes(c), _workload(c)]


def data_node_down(c: dict) -> str:
    """Data nodes that are down: configured but without an ndbinfo.nodes row, and not in a
    restart. A restarting node has no `nodes` row until its start phase 9 either: an ndbinfo
    scan reaches only the data nodes the SQL node is connected to and API_REGCONFed with
    (mysql/mysql-server storage/ndb/src/ndbapi/NdbInfoScanOperation.cpp, find_next_node ->
    SignalSender::find_confirmed_node), each node writes only its own `nodes` row
    (storage/ndb/src/kernel/blocks/cmvmi/Cmvmi.cpp, NODES_TABLEID: getOwnNodeId()), and a
    starting node lets API nodes connect in start phase 9 (storage/ndb/src/kernel/blocks/
    qmgr/QmgrMain.cpp, execSTTOR case 9 "Enable communication to all API nodes"). Through
    restore, REDO, index build, copy and the LCP wait it looks exactly like a dead node, so
    the master's restart_info (states 4-18 and 20-23: a restart under way) tells them apart.
    Both are read over the blind-spell hold, so an exporter or SQL node restart never
    resolves the verdict."""
    s = c["selectors"]["ndb"]
    hold = c["blind_spell_hold"]
    status = f"max {WITHOUT} (last_over_time(ndb_restart_status{{{s}}}[{hold}]))"
    return (f"max {WITHOUT} (last_over_time(ndb_data_node_running{{{s}}}[{hold}])) == 0"
            f" unless on (cluster, node_id) ({restart_in_progress(status, failure=False)})")


def _restarts(c: dict) -> Group:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    w = n["restart_event_window"]
    hist = n["restart_history"]
    hold = n["restart_verdict_hold"]
    need = n["restart_min_earlier"]
    factor, grow = n["restart_regression_factor"], n["restart_regression_min_growth_seconds"]
    done = restart_completed(f"max {WITHOUT} (ndb_restart_status{{{s}}})")
    recent = (f"(time() - max {WITHOUT} (ndb_restart_last_completed_timestamp_seconds{{{s}}})"
              f" < {seconds(w)})")
    total_done = f"max {WITHOUT} (ndb_restart_total_seconds{{{s}}}) and on (cluster, node_id) ({done})"
    phase_done = f"max {WITHOUT} (ndb_restart_phase_seconds{{{s}}}) and on (cluster, node_id) ({done})"
    ev_total = "cluster_node:ndb_restart_total_seconds:completion"
    ev_phase = "cluster_node_phase:ndb_restart_phase_seconds:completion"
    ev_count = "cluster_node:ndb_restarts_completed:completion"
    cl_total = "cluster:ndb_restart_total_seconds:completion"
    cl_phase = "cluster_phase:ndb_restart_phase_seconds:completion"
    cl_count = "cluster:ndb_restarts_completed:completion"

    def earlier(series: str) -> str:
        # completion events before this one: the count moved by one per event
        return (f"(max_over_time({series}[{hist}] offset {w}) - min_over_time({series}[{hist}]"
                f" offset {w}) + 1 >= {need})")

    def median(series: str) -> str:
        return f"quantile_over_time(0.5, {series}[{hist}] offset {w})"

    # the node's own median when it has enough earlier restarts, else the cluster's
    base_total = (f"({median(ev_total)} and on (cluster, node_id) {earlier(ev_count)})"
                  f" or on (cluster, node_id) (0 * ({total_done}) + on (cluster) group_left ()"
                  f" ({median(cl_total)} and on (cluster) {earlier(cl_count)}))")
    base_phase = (f"({median(ev_phase)} and on (cluster, node_id) {earlier(ev_count)})"
                  f" or on (cluster, node_id, phase) (0 * ({phase_done}) + on (cluster, phase)"
                  f" group_left () ({median(cl_phase)} and on (cluster) {earlier(cl_count)}))")
    # the newest pin (`clusterscope baseline pin`), kept alive by this record itself once
    # the pinned sample has aged out of VictoriaMetrics' retention
    lb = n["restart_pinned_lookback"]
    pinned_rec = "cluster_node:ndb_restart_total_seconds:pinned"
    pinned = (f"max without (pin) (last_over_time(clusterscope_pinned_restart_total_seconds[{lb}])"
              f" and on (pin) topk(1, last_over_time(clusterscope_pin_created_timestamp_seconds[{lb}])))"
              f" or max without (pin) (last_over_time(clusterscope_pinned_restart_total_seconds[{lb}]))"
              f" or last_over_time({pinned_rec}[{lb}])")
    g = Group("ndb-restarts", "ndb.yml", records=[
        (COMPLETED, total_done),
        ("cluster_node_phase:ndb_restart_phase_seconds:completed", phase_done),
        (ev_total, f"({total_done}) and on (cluster, node_id) {recent}"),
        (ev_phase, f"({phase_done}) and on (cluster, node_id) {recent}"),
        (ev_count, f"max {WITHOUT} (ndb_restarts_completed_total{{{s}}}) and on (cluster, node_id) {recent}"),
        # every node's events pooled (a rolling restart completes one node at a time)
        (cl_total, f"max without (node_id) (({total_done}) and on (cluster, node_id) {recent})"),
        (cl_phase, f"max without (node_id) (({phase_done}) and on (cluster, node_id) {recent})"),
        (cl_count, f"sum by (cluster) (max {WITHOUT} (ndb_restarts_completed_total{{{s}}}))"
                   f" and on (cluster) count by (cluster) ({recent})"),
        ("cluster_node:ndb_restart_total_seconds:baseline_median", median(ev_total)),
        ("cluster_node_phase:ndb_restart_phase_seconds:baseline_median", median(ev_phase)),
        ("cluster:ndb_restart_total_seconds:baseline_median", median(cl_total)),
        # the verdicts: only inside the event window, with enough earlier restarts
        ("cluster_node:ndb_restart_total_seconds:ratio_to_baseline",
         f"({total_done}) / on (cluster, node_id) group_left () ({base_total})"
         f" and on (cluster, node_id) {recent}"),
        ("cluster_node:ndb_restart_total_seconds:growth_over_baseline",
         f"({total_done}) - on (cluster, node_id) group_left () ({base_total})"
         f" and on (cluster, node_id) {recent}"),
        ("cluster_node_phase:ndb_restart_phase_seconds:growth_over_baseline",
         f"({phase_done}) - on (cluster, node_id, phase) group_left () ({base_phase})"
         f" and on (cluster, node_id) {recent}"),
        (pinned_rec, pinned),
        ("cluster_node:ndb_restart_total_seconds:ratio_to_pinned",
         f"({total_done}) / on (cluster, node_id) group_left () max without (pin) ({pinned})"
         f" and on (cluster, node_id) {recent}"),
        ("cluster_node:ndb_restart_total_seconds:growth_over_pinned",
         f"({total_done}) - on (cluster, node_id) group_left () max without (pin) ({pinned})"
         f" and on (cluster, node_id) {recent}"),
    ])
    excl = n["restart_phase_exclude"]
    grew_most = (f"0 * topk by (cluster, node_id) (1, last_over_time("
                 f"cluster_node_phase:ndb_restart_phase_seconds:growth_over_baseline"
                 f"{{phase!~\"{excl}\"}}[{hold}]))")
    g.alerts.append(Alert(
        "NdbRestartTimeRegressed",
        f"(last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_baseline[{hold}])"
        f" > {factor} and on (cluster, node_id)"
        f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_baseline[{hold}])"
        f" > {grow})"
        f" + on (cluster, node_id) group_left (phase) {grew_most}",
        "warning",
        "NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
        " its baseline; phase {{ $labels.phase }} grew most",
        "The latest completed restart of data node {{ $labels.node_id }} in cluster"
        " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the median of the"
        f" earlier restarts (the node's own when it has {need}, else the cluster's; more than"
        f" {factor}x and more than {grow} s longer). The phase that grew most against its own"
        " median is {{ $labels.phase }}.",
        "ndb_restarts"))
    g.alerts.append(Alert(
        "NdbRestartTimeAbovePinned",
        f"last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_pinned[{hold}]) > {factor}"
        f" and on (cluster, node_id)"
        f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_pinned[{hold}]) > {grow}",
        "warning",
        "NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
        " the pinned baseline",
        "The latest completed restart of data node {{ $labels.node_id }} in cluster"
        " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the restart time"
        " of the newest baseline pinned with `clusterscope baseline pin` (more than"
        f" {factor}x and more than {grow} s longer). Held until the next restart or {hold}.",
        "ndb_restarts"))
    stuck, stuck_data = n["restart_stuck_after"], n["restart_stuck_after_data_phases"]
    status = f"max {WITHOUT} (ndb_restart_status{{{s}}})"

    def unchanged_for(window: str) -> str:
        # the same state for the whole window, and the series already existed at its start
        # (a fresh exporter or a restart that just began has no full window)
        return (f"max {WITHOUT} (changes(ndb_restart_status{{{s}}}[{window}])) == 0"
                f" and on (cluster, node_id) max {WITHOUT} (ndb_restart_status{{{s}}} offset {window})")

    g.alerts.append(Alert(
        "NdbRestartStuck",
        f"(({restart_in_progress(status, failure=False)})"
        f" unless on (cluster, node_id) ({restart_status_in(status, DATA_BOUND_STATES)})"
        f" and on (cluster, node_id) ({unchanged_for(stuck)}))"
        f" or (({restart_status_in(status, DATA_BOUND_STATES)})"
        f" and on (cluster, node_id) ({unchanged_for(stuck_data)}))",
        "warning",
        "NDB node {{ $labels.node_id }} restart made no progress (state {{ $value }})",
        "Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} has been in restart"
        " state {{ $value }} (ndbinfo.restart_info.node_restart_status_int; the runbook names"
        f" each state) for at least {stuck}, or {stuck_data} in a state that grows with the"
        " data (restore, undo, REDO, index build, copy, wait for an LCP).",
        "ndb_restarts"))
    return g


def _nodes(c: dict) -> Group:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    inv = c["selectors"]["inventory"]
    sql = c["selectors"]["ndb_sql"]
    ldm_cpu = ldm_cpu_percent(s, modes=n["ldm_cpu_modes"])
    ldm_cpu_avg = ldm_cpu_percent(s, modes=n["ldm_cpu_modes"], avg_over=n["ldm_cpu_avg_over"])
    lcp_after = n["lcp_stalled_after"]

    def used_ratio(log_type: str) -> str:
        return (f"max without (instance, job, log_id, log_part, log_type) ("
                f"ndb_log_space_used_bytes{{{s},log_type=\"{log_type}\"}}"
                f" / ndb_log_space_total_bytes{{{s},log_type=\"{log_type}\"}})")

    data_memory = (f"max without (instance, job, memory_type) (ndb_memory_used_bytes{{{s},memory_type=\"Data memory\"}}"
                   f" / ndb_memory_total_bytes{{{s},memory_type=\"Data memory\"}})")
    # TRANSACTION_MEMORY (8.0+); max 0 means no limit of its own: not a ratio
    transaction_memory = (
        f"max {WITHOUT} (ndb_resource_used_pages{{{s},resource_name=\"TRANSACTION_MEMORY\"}}"
        f" / (ndb_resource_max_pages{{{s},resource_name=\"TRANSACTION_MEMORY\"}} > 0))")
    # a link to a data node that runs: the peer's own node id as remote_node_id
    running_peer = (f"label_replace(max {WITHOUT} (ndb_data_node_running{{{s}}}) == 1,"
                    f" \"remote_node_id\", \"$1\", \"node_id\", \"(.*)\")")
    g = Group("ndb-nodes", "ndb.yml", records=[
        ("cluster:ndb_lcp_duration_seconds:last",
         f"max {WITHOUT} (ndb_lcp_last_duration_seconds{{{s}}})"),
        ("cluster_node:ndb_redo_log_space_used:max_part_ratio", used_ratio("REDO")),
        ("cluster_node:ndb_undo_log_space_used:max_ratio", used_ratio("DD-UNDO")),
        ("cluster_node:ndb_data_memory_used:ratio", data_memory),
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
    hold = c["blind_spell_hold"]
    group_rec = "cluster_node:ndb_node_group:info"
    g.records.append((
        group_rec,
        # the node group as a label (ndbinfo.membership has a row per running node only):
        # kept while the node is down by this record itself
        f"count_values without (instance, job) (\"node_group\", max {WITHOUT} (ndb_node_group{{{s}}}))"
        f" or on (cluster, node_id) last_over_time({group_rec}[{n['node_group_memory']}])"))
    down = data_node_down(c)
    lcp_windows = ("30m", "1h", "2h", "4h")
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
        if w == lcp_windows[-1]:
            return ""
        return (f" unless on (cluster) max {WITHOUT} (ndb_lcp_last_duration_seconds{{{s}}})"
                f" * {factor} > {seconds(w)}")

    lcp_stalled = " or ".join(f"({lcp_flat(w)}{lcp_window_fits(w)})" for w in lcp_windows
                              if seconds(w) >= seconds(lcp_after))
    g.alerts += [
        # with its node group when known (inhibited by that group's last-replica page)
        Alert("NdbDataNodeDown",
              f"({down}) * on (cluster, node_id) group_left (node_group) {group_rec}"
              f" or on (cluster, node_id) ({down})",
              "warning", "NDB data node {{ $labels.node_id }} is down",
              "Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} is configured"
              " (ndbinfo.config_nodes) but has not been running (no row in ndbinfo.nodes) for"
              f" {n['data_node_down_for']}, and restart_info shows no restart of it under way"
              " (a restarting node has no nodes row before start phase 9 either). Its node"
              " group runs on fewer replicas: NdbNodeGroupLastReplica pages when one is left.",
              "ndb_overview", n["data_node_down_for"]),
        Alert("NdbNodeGroupLastReplica",
              f"count by (cluster, node_group) ({group_rec} unless on (cluster, node_id) ({down}))"
              f" == 1 and on (cluster, node_group) count by (cluster, node_group) ({group_rec}) > 1",
              "critical", "NDB node group {{ $labels.node_group }} of {{ $labels.cluster }} has"
              " one live data node left",
              "Every other data node of node group {{ $labels.node_group }} in"
              " {{ $labels.cluster }} is down (not running and not restarting): its data lives"
              " on one node now, and when that node fails the whole cluster shuts down. A node"
              " in a planned restart does not count as down.",
              "ndb_overview", n["node_group_last_replica_for"], per_node=False),
        Alert("NdbClusterUnreachable",
              f"max by (cluster) (last_over_time(ndb_up{{{s}}}[{hold}])) == 0",
              "critical", "NDB cluster {{ $labels.cluster }} cannot be read through any SQL node",
              "No SQL node of {{ $labels.cluster }} answers with the cluster's data: every SQL"
              " node is down (ndb_sql_node_up 0), or they answer but reach no data node"
              " (ndbinfo offline or 'Connection to NDB failed': every data node is down, or the"
              " SQL nodes lost them). Applications cannot use the cluster either.",
              "ndb_overview", n["cluster_unreachable_for"], per_node=False),
        Alert("NdbLcpStalled", lcp_stalled,
              "warning", "NDB local checkpoints stalled in {{ $labels.cluster }}",
              f"No local checkpoint has completed and no fragment replica was checkpointed for"
              f" {lcp_after} (longer when the last LCP took long: {factor}x its duration, up"
              f" to {lcp_windows[-1]}) while an LCP runs, or while the data nodes wrote more"
              f" than {n['lcp_stalled_min_redo_bytes'] / 2**20:.0f} MiB of REDO: the REDO log"
              " fills and restarts get slow.", "ndb_overview", per_node=False),
        Alert("NdbRedoLogFilling", f"{used_ratio('REDO')} > {n['redo_used_ratio_max']}",
              "warning", "NDB node {{ $labels.node_id }} REDO log is {{ $value | humanizePercentage }}"
              " full", "The fullest REDO log part of data node {{ $labels.node_id }} is over"
              f" {n['redo_used_ratio_max']:.0%} used; at 100% the node refuses writes"
              " (error 410).", "ndb_overview", n["log_filling_for"]),
        Alert("NdbUndoLogFilling", f"{used_ratio('DD-UNDO')} > {n['undo_used_ratio_max']}",
              "warning", "NDB node {{ $labels.node_id }} disk data UNDO log is"
              " {{ $value | humanizePercentage }} full",
              "The disk data UNDO log (logfile group) of data node {{ $labels.node_id }} is over"
              f" {n['undo_used_ratio_max']:.0%} used; when it is full, transactions on disk"
              " data tables fail until an LCP frees it.", "ndb_overview", n["log_filling_for"]),
        Alert("NdbDataMemoryHigh", f"{data_memory} > {n['data_memory_used_ratio_max']}",
              "warning", "NDB node {{ $labels.node_id }} DataMemory {{ $value | humanizePercentage }}"
              " used", "Data node {{ $labels.node_id }} uses more than"
              f" {n['data_memory_used_ratio_max']:.0%} of its DataMemory (ndbinfo.memoryusage);"
              " when it is full, inserts fail with error 827 (table is full).", "ndb_node",
              n["memory_for"]),
        Alert("NdbTransactionMemoryHigh",
              f"{transaction_memory} > {n['transaction_memory_used_ratio_max']}",
              "warning", "NDB node {{ $labels.node_id }} TransactionMemory"
              " {{ $value | humanizePercentage }} used",
              "Data node {{ $labels.node_id }} uses more than"
              f" {n['transaction_memory_used_ratio_max']:.0%} of the pages its"
              " TRANSACTION_MEMORY resource may take (ndbinfo.resources, used of max): large"
              " or many concurrent transactions fail once it is exhausted.", "ndb_node",
              n["memory_for"]),
        Alert("NdbLdmCpuSaturated",
              f"max without (instance, job, thr_no, thread_name) ({ldm_cpu_avg})"
              f" > {n['ldm_cpu_percent_max']}",
              "warning", "NDB node {{ $labels.node_id }} LDM thread at"
              " {{ $value | printf \"%.0f\" }}% CPU",
              f"The busiest LDM thread of data node {{{{ $labels.node_id }}}} averaged more than"
              f" {n['ldm_cpu_percent_max']}% CPU ({n['ldm_cpu_modes']}, over"
              f" {n['ldm_cpu_avg_over']}) for {n['ldm_cpu_for']}.", "ndb_node",
              n["ldm_cpu_for"]),
        Alert("NdbTransporterOverloaded",
              f"max {WITHOUT} (ndb_transporter_overloaded{{{s}}}) == 1 or max {WITHOUT}"
              f" (increase(ndb_transporter_overloads_total{{{s}}}[10m]))"
              f" > {n['transporter_overloads_max']}",
              "warning", "NDB transporter {{ $labels.node_id }} -> {{ $labels.remote_node_id }}"
              " overloaded", "The send buffer from node {{ $labels.node_id }} to node"
              " {{ $labels.remote_node_id }} is overloaded (ndbinfo.transporters), or it was"
              f" overloaded more than {n['transporter_overloads_max']} times in 10 minutes.",
              "ndb_overview", n["transporter_overloaded_for"]),
        Alert("NdbTransporterDisconnected",
              # ndb_transporter_status_code: 0 CONNECTED (transporters' connection_status)
              f"max {WITHOUT} (ndb_transporter_status_code{{{s}}}) != 0"
              f" and on (cluster, remote_node_id) {running_peer}",
              "warning", "NDB link {{ $labels.node_id }} -> {{ $labels.remote_node_id }} not"
              " connected", "Data node {{ $labels.node_id }} has no connection to data node"
              " {{ $labels.remote_node_id }} although both run (ndbinfo.transporters): a"
              " network or TLS problem between them.", "ndb_overview",
              n["transporter_disconnected_for"]),
        # only STARTED nodes vote: a node in a restart has not joined arbitration yet
        Alert("NdbArbitratorLost",
              f"count by (cluster) ((max {WITHOUT} (ndb_arbitrator_connected{{{s}}}) == 0"
              f" or max {WITHOUT} (ndb_arbitrator_node_id{{{s}}}) == 0)"
              f" and on (cluster, node_id) max without (instance, job, status)"
              f" (ndb_node_status{{{s},status=\"STARTED\"}}) == 1) > 0",
              "warning", "NDB cluster {{ $labels.cluster }} has no arbitrator",
              "{{ $value }} started data node(s) of {{ $labels.cluster }} have no connected"
              " arbitrator (ndbinfo.membership): a network split now shuts the cluster down"
              " instead of arbitrating.", "ndb_overview", n["arbitrator_lost_for"],
              per_node=False),
        Alert("NdbVersionMismatch",
              f"count by (cluster) (count by (cluster, version) (ndb_node_info{{{s},type=\"NDB\"}})) > 1"
              f" or count by (cluster) (count_values by (cluster) (\"generation\","
              f" max {WITHOUT} (ndb_node_config_generation{{{s}}}))) > 1",
              "info", "NDB cluster {{ $labels.cluster }} runs mixed versions or configurations",
              "The data nodes of {{ $labels.cluster }} have run more than one software version or"
              f" configuration generation for {n['version_mismatch_for']}: a rolling upgrade or"
              " configuration change is half done.", "ndb_overview", n["version_mismatch_for"],
              per_node=False),
        # the exporter process itself: the cluster's other NDB warnings are noise then (an
        # inhibition, alertmanager.py); a cluster it cannot read is NdbClusterUnreachable
        Alert("NdbExporterDown",
              f"max by (cluster) (up{{{s}}}) == 0",
              "warning", "ndbinfo_exporter does not answer for NDB cluster {{ $labels.cluster }}",
              "No ndbinfo_exporter scrape of {{ $labels.cluster }} succeeds (up 0 on every"
              " exporter of it): NDB monitoring of the cluster is blind, its other NDB"
              " warnings are held back. Not a statement about the cluster itself.",
              "ndb_overview", n["exporter_down_for"], per_node=False),
        Alert("NdbExporterAbsent",
              f"max by (cluster) (clusterscope_cluster_info{{{inv},kind=\"ndb\"}})"
              f" unless on (cluster) up{{{s}}}",
              "warning", "NDB cluster {{ $labels.cluster }} is described but not scraped",
              "{{ $labels.cluster }} is an NDB cluster of the description (clusterscope.yml),"
              f" but no target of the scrape job selected by {s} covers it: the scrape"
              " configuration does not take the inventory's targets.",
              "ndb_overview", n["exporter_down_for"], per_node=False),
        Alert("NdbSqlNodeDown",
              f"max {WITHOUT} (ndb_sql_node_up{{{s}}}) == 0",
              "warning", "NDB SQL node {{ $labels.sql_node }} of {{ $labels.cluster }} does"
              " not answer",
              "SQL node {{ $labels.sql_node }} of {{ $labels.cluster }} has not answered the"
              f" exporter for {n['sql_node_down_for']}. The exporter reads ndbinfo through"
              " another SQL node if one answers (ndb_sql_node_serving); applications that"
              " connect to this one fail.", "ndb_overview", n["sql_node_down_for"],
              per_node=False),
        Alert("NdbExporterCollectorFailing",
              f"ndb_exporter_collector_success{{{s}}} == 0 and on (instance, collector)"
              f" ndb_exporter_collector_supported{{{s}}} == 1"
              f" unless on (instance) ndb_up{{{s}}} == 0",
              "warning", "ndbinfo_exporter collector {{ $labels.collector }} failing",
              "Collector {{ $labels.collector }} of {{ $labels.instance }} fails on every"
              " scrape although the SQL node answers and its view exists: its metrics are"
              " missing.", "ndb_overview", n["collector_failing_for"], per_node=False),
        # the exporter's budget is the scrape timeout minus 0.5 s and VictoriaMetrics drops a
        # scrape past its timeout, so a duration above the timeout is never stored: "slow"
        # is close to the budget, for a while (review oncall-2 N13)
        Alert("NdbExporterSlow",
              f"max_over_time(ndb_exporter_scrape_duration_seconds{{{s}}}[1m])"
              f" > {n['exporter_scrape_seconds_max']}"
              f" or increase(ndb_exporter_collector_timeouts_total{{{s}}}[5m]) > 0",
              "warning", "ndbinfo_exporter {{ $labels.instance }} scrapes are slow or cut",
              "Scrapes of {{ $labels.instance }} took more than"
              f" {n['exporter_scrape_seconds_max']} s (the budget is the scrape timeout minus"
              " 0.5 s), or collectors hit their query timeout, for"
              f" {n['exporter_slow_for']}: metrics go missing when a scrape is cut.",
              "ndb_overview", n["exporter_slow_for"], per_node=False),
        # an SQL node that runs but sees no data node: applications connected to it fail
        # (status variables Ndb_number_of_ready_data_nodes / Ndb_number_of_data_nodes,
        # mysql/mysql-server storage/ndb/plugin/ha_ndbcluster.cc ndb_status_vars, through
        # mysqld_exporter's global_status collector, lower-cased)
        Alert("NdbSqlNodeDisconnected",
              f"max {WITHOUT} (mysql_global_status_ndb_number_of_ready_data_nodes{{{sql}}}) == 0"
              f" and on (cluster, node) max {WITHOUT} (mysql_up{{{sql}}}) == 1",
              "warning", "NDB SQL node {{ $labels.node }} of {{ $labels.cluster }} sees"
              " no data node",
              "SQL node {{ $labels.node }} of {{ $labels.cluster }} answers but is connected"
              " to no ready data node (Ndb_number_of_ready_data_nodes 0) for"
              f" {n['sql_node_disconnected_for']}: every NDB table query through it fails.",
              "ndb_overview", n["sql_node_disconnected_for"], per_node=False),
    ]
    return g




def _workload(c: dict) -> Group:
    """Tables against DataMemory, transactions held open, lock waits, the disk page buffer
    and commit latency (issue 27's collectors)."""
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    table_sum = "cluster_node_table:ndb_table_memory_allocated_bytes:sum"
    dm = 'memory_type="Data memory"'
    free = (f"max without (instance, job, memory_type) (ndb_memory_total_bytes{{{s},{dm}}}"
            f" - ndb_memory_used_bytes{{{s},{dm}}})")
    waits = "cluster:ndb_lock_waits:count"
    dpb = f"ndb_disk_page_buffer_requests_total{{{s}}}"
    dpb_rate = f"sum without (instance, job, outcome) (rate({dpb}[5m]))"
    hit_ratio = (f"sum without (instance, job, outcome) (rate(ndb_disk_page_buffer_requests_total"
                 f"{{{s},outcome=\"direct_return\"}}[5m])) / {dpb_rate}")
    q = n["commit_latency_quantile"]
    tx = 'activity="transaction"'
    p_now = (f"histogram_quantile({q}, sum without (instance, job, activity)"
             f" (rate(ndb_tc_latency_seconds_bucket{{{s},{tx}}}[5m])))")
    p_rec = "cluster_node:ndb_commit_latency_seconds:quantile_rate5m"
    base_win, base_off = n["commit_latency_baseline"], n["commit_latency_baseline_offset"]
    baseline = f"quantile_over_time(0.5, {p_rec}[{base_win}] offset {base_off})"
    tps = (f"sum without (instance, job, activity) (rate(ndb_tc_latency_seconds_count"
           f"{{{s},{tx}}}[5m]))")
    g = Group("ndb-workload", "ndb.yml", records=[
        # a table's memory on a node, its kinds (fixed, var, hash index) summed
        (table_sum, f"sum without (instance, job, kind) (ndb_table_memory_allocated_bytes{{{s}}})"),
        ("cluster_node:ndb_data_memory_free:bytes", free),
        # waiting lock requests, 0 when there are none (so an average over time is honest)
        (waits, f"sum without (instance, job, node_id, mode, state) (ndb_locks{{{s},state=\"waiting\"}})"
                f" or on (cluster) 0 * max without (instance, job) (ndb_up{{{s}}} == 1)"),
        ("cluster_node:ndb_disk_page_buffer_hit:ratio_rate5m", hit_ratio),
        ("cluster_node:ndb_disk_page_buffer_requests:rate5m", dpb_rate),
        (p_rec, p_now),
        ("cluster_node:ndb_commit_latency_seconds:baseline_median", baseline),
        ("cluster_node:ndb_commits:rate5m", tps),
    ])
    trend, horizon = n["table_memory_trend"], n["table_memory_horizon"]
    g.alerts += [
        Alert("NdbTableFillingDataMemory",
              f"(predict_linear({table_sum}[{trend}], {seconds(horizon)}) - {table_sum})"
              f" > on (cluster, node_id) group_left () ({free})",
              "warning", "NDB table {{ $labels.table }} will fill node {{ $labels.node_id }}'s"
              " DataMemory within " + horizon,
              "At its growth over the last " + trend + ", table {{ $labels.table }} (with its"
              " unique indexes and blob parts, ndbinfo.memory_per_fragment) needs"
              " {{ $value | humanize1024 }}B more on data node {{ $labels.node_id }} within "
              + horizon + " than the node has free in DataMemory: inserts into any table"
              " will then fail with error 827 (table is full).", "ndb_node",
              n["table_memory_for"]),
        Alert("NdbLongTransaction",
              f"max {WITHOUT} (ndb_transaction_inactive_seconds_max{{{s}}})"
              f" > {n['transaction_inactive_seconds_max']}",
              "warning", "An NDB transaction on node {{ $labels.node_id }}'s TC has been"
              " inactive for {{ $value }} s",
              "A transaction coordinated by data node {{ $labels.node_id }} in cluster"
              " {{ $labels.cluster }} has done nothing for {{ $value }} s"
              " (ndbinfo.cluster_transactions.inactive_seconds) while staying open: its"
              " client holds its row locks, and every transaction touching those rows waits"
              " and times out.", "ndb_overview", n["long_transaction_for"]),
        Alert("NdbLockWaits",
              f"avg_over_time({waits}[{n['lock_waits_over']}]) > {n['lock_waits_max']}",
              "warning", "NDB cluster {{ $labels.cluster }}: {{ $value | printf \"%.1f\" }}"
              " lock requests waiting on average",
              "On average {{ $value | printf \"%.1f\" }} row lock requests of"
              f" {{{{ $labels.cluster }}}} were waiting for a lock held by another transaction"
              f" over {n['lock_waits_over']} (ndbinfo.cluster_locks, state W): hot rows or a"
              " transaction holding locks too long; waits beyond"
              " TransactionDeadlockDetectionTimeout abort with error 266.", "ndb_overview",
              n["lock_waits_for"], per_node=False),
        Alert("NdbDiskPageBufferHitRatioLow",
              f"({hit_ratio}) < {n['disk_page_buffer_hit_ratio_min']}"
              f" and on (cluster, node_id) ({dpb_rate})"
              f" > {n['disk_page_buffer_min_requests_per_second']}",
              "warning", "NDB node {{ $labels.node_id }} disk page buffer hit ratio"
              " {{ $value | humanizePercentage }}",
              "Only {{ $value | humanizePercentage }} of the disk data page requests of data"
              " node {{ $labels.node_id }} found their page in the disk page buffer"
              " (ndbinfo.diskpagebuffer, over 5 minutes, below"
              f" {n['disk_page_buffer_hit_ratio_min']:.0%}): the others wait for disk reads,"
              " and queries on disk data columns slow down.", "ndb_node",
              n["disk_page_buffer_for"]),
        Alert("NdbCommitLatencyRegressed",
              f"({p_now}) > {n['commit_latency_factor']} * ({baseline})"
              f" and on (cluster, node_id) (({p_now}) - ({baseline}))"
              f" > {n['commit_latency_min_growth_seconds']}"
              f" and on (cluster, node_id) ({tps}) > {n['commit_latency_min_tps']}"
              f" and on (cluster, node_id) count_over_time({p_rec}[{base_win}] offset {base_off})"
              f" > {n['commit_latency_baseline_min_samples']}",
              "warning", "NDB commit latency on node {{ $labels.node_id }} is"
              " {{ $value | humanizeDuration }} (p" + f"{int(q * 100)}" + ")",
              f"The {int(q * 100)}th percentile of transaction latency (begin to commit ACK,"
              " ndbinfo.tc_time_track_stats) at data node {{ $labels.node_id }}'s TCs is"
              " {{ $value | humanizeDuration }}, more than"
              f" {n['commit_latency_factor']} times its own median over the {base_win} before"
              f" (and {n['commit_latency_min_growth_seconds'] * 1000:g} ms more), at more"
              f" than {n['commit_latency_min_tps']} commits/s.", "ndb_overview",
              n["commit_latency_for"]),
    ]
    return g
