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

from ndbinfo_exporter.schema import RESTART_STATUS

from clusterscope.rules.fragments import (
    ldm_cpu_percent,
    restart_completed,
    restart_in_progress,
    restart_status_in,
)
from clusterscope.rules.model import WITHOUT, Alert, Group, Runbook, seconds

RESTART_Q = ("SELECT node_id, node_restart_status, total_restart_secs, secs_restore_fragments,"
             " secs_exec_redo_log, secs_index_rebuild, secs_wait_lcp_for_restart"
             " FROM ndbinfo.restart_info;")
FIRST_STEPS = """First, on a management node:

```sh
ndb_mgm -e show               # which data nodes are connected, started, or "not connected"
ndb_mgm -e "ALL STATUS"       # start phase of each data node
ndb_mgm -e "ALL REPORT MEMORY"  # DataMemory / IndexMemory use per data node
```

Logs: the cluster log `ndb_<mgm node id>_cluster.log` in the management node's DataDir; on a
data node's host, in its DataDir, `ndb_<node id>_out.log`, `ndb_<node id>_error.log` and the
trace files `ndb_<node id>_trace.log.<n>` it names (`ndb_error_reporter` collects them all)."""
STATUS_TABLE = "\n".join(
    ["| state | restart_info.node_restart_status |", "|---|---|"]
    + [f"| {k} | {RESTART_STATUS[k]} |" for k in sorted(RESTART_STATUS)])
LCP_Q = ("SELECT node_id, tab_lcp_status, COUNT(*) FROM ndbinfo.table_distribution_status"
         " GROUP BY 1, 2; SELECT SUM(num_lcp_replicas), SUM(no_of_replicas) FROM"
         " ndbinfo.table_fragments;")


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
    g = Group("ndb-restarts", "ndb.yml", first_steps=FIRST_STEPS, records=[
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
    g.alerts.append(Alert(name="NdbRestartTimeRegressed",
                          expr=f"(last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_baseline[{hold}])"
                               f" > {factor} and on (cluster, node_id)"
                               f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_baseline[{hold}])"
                               f" > {grow})"
                               f" + on (cluster, node_id) group_left (phase) {grew_most}",
                          severity="warning",
                          summary="NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
                                  " its baseline; phase {{ $labels.phase }} grew most",
                          description="The latest completed restart of data node {{ $labels.node_id }} in cluster"
                                      " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the median of the"
                                      f" earlier restarts (the node's own when it has {need}, else the cluster's; more than"
                                      f" {factor}x and more than {grow} s longer). The phase that grew most against its own"
                                      " median is {{ $labels.phase }}.",
                          dashboard="ndb_restarts",
                          runbook=Runbook(
                              meaning="The latest completed restart of a data node took longer than its baseline"
                                      " (the median of the node's earlier completed restarts, or of the whole"
                                      " cluster's when the node has too few) by more than the factor and the"
                                      " seconds in the description. The `phase` label names the restart_info"
                                      " phase that grew most against its own median.",
                              impact="While a data node restarts the cluster runs with reduced redundancy; a"
                                     " slower restart widens that window (field facts: 6m49s on 7.6 vs 19m11s on"
                                     " 7.5 for the same data, mostly the wait for a local checkpoint).",
                              diagnosis=f"- Phase durations of the last restart: `{RESTART_Q}`\n"
                                        "- The phases against their medians: \"Phase vs its median\" on the NDB"
                                        " restarts dashboard (`cluster_node_phase:ndb_restart_phase_seconds:baseline_median`).\n"
                                        "- `wait_lcp_for_restart` grew: check LCP speed (`ndbinfo.disk_write_speed_aggregate`,"
                                        " `ndb_lcp_last_duration_seconds`), data size, `MaxDiskWriteSpeed*` settings,"
                                        " and whether partial LCP (7.6 `EnablePartialLcp`) is on.\n"
                                        "- `index_rebuild` grew: `BuildIndexThreads`, LDM count.\n"
                                        "- Cluster log: `Node N: Start phase ...` and `LCP ... completed` lines.",
                              mitigation="If a configuration or version change came before it, compare against the"
                                         " baseline pinned before the change (`clusterscope baseline pin`) and roll"
                                         " back or tune (disk write speed for LCPs, partial LCP, index build"
                                         " threads). Plan further rolling restarts with the longer window in mind.",
                              benign="an `--initial` restart (a full copy: `to_synchronize_starting_node` grew),"
                                     " the first restart after a bulk data load.")))
    g.alerts.append(Alert(name="NdbRestartTimeAbovePinned",
                          expr=f"last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_pinned[{hold}]) > {factor}"
                               f" and on (cluster, node_id)"
                               f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_pinned[{hold}]) > {grow}",
                          severity="warning",
                          summary="NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
                                  " the pinned baseline",
                          description="The latest completed restart of data node {{ $labels.node_id }} in cluster"
                                      " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the restart time"
                                      " of the newest baseline pinned with `clusterscope baseline pin` (more than"
                                      f" {factor}x and more than {grow} s longer). Held until the next restart or {hold}.",
                          dashboard="ndb_restarts",
                          runbook=Runbook(
                              meaning="The latest completed restart of a data node took longer than the restart"
                                      " time pinned before a change (`clusterscope baseline pin --name NAME`,"
                                      " series `clusterscope_pinned_restart_total_seconds`) by the configured"
                                      " factor and seconds. Unlike NdbRestartTimeRegressed it keeps comparing with"
                                      " the state before the change, also after the rolling median has adapted.",
                              impact="As NdbRestartTimeRegressed: a longer window with reduced redundancy on every"
                                     " restart since the change.",
                              diagnosis=f"- `{RESTART_Q}`\n- Compare with the pinned period: `clusterscope compare"
                                        " --before-baseline NAME`.\n- What changed since the pin (version, data"
                                        " size, `MaxDiskWriteSpeed*`, partial LCP).",
                              mitigation="Revert or tune the change; if the new restart time is accepted, pin a new"
                                         " baseline.")))
    stuck, stuck_data = n["restart_stuck_after"], n["restart_stuck_after_data_phases"]
    status = f"max {WITHOUT} (ndb_restart_status{{{s}}})"

    def unchanged_for(window: str) -> str:
        # the same state for the whole window, and the series already existed at its start
        # (a fresh exporter or a restart that just began has no full window)
        return (f"max {WITHOUT} (changes(ndb_restart_status{{{s}}}[{window}])) == 0"
                f" and on (cluster, node_id) max {WITHOUT} (ndb_restart_status{{{s}}} offset {window})")

    g.alerts.append(Alert(name="NdbRestartStuck",
                          expr=f"(({restart_in_progress(status, failure=False)})"
                               f" unless on (cluster, node_id) ({restart_status_in(status, DATA_BOUND_STATES)})"
                               f" and on (cluster, node_id) ({unchanged_for(stuck)}))"
                               f" or (({restart_status_in(status, DATA_BOUND_STATES)})"
                               f" and on (cluster, node_id) ({unchanged_for(stuck_data)}))",
                          severity="warning",
                          summary="NDB node {{ $labels.node_id }} restart made no progress (state {{ $value }})",
                          description="Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} has been in restart"
                                      " state {{ $value }} (ndbinfo.restart_info.node_restart_status_int; the runbook names"
                                      f" each state) for at least {stuck}, or {stuck_data} in a state that grows with the"
                                      " data (restore, undo, REDO, index build, copy, wait for an LCP).",
                          dashboard="ndb_restarts",
                          runbook=Runbook(
                              meaning="A data node's restart state (`node_restart_status_int`, the data node"
                                      " kernel's NodeRecoveryStatus) has not changed for 30 minutes, or for 2 hours"
                                      " in a state whose length grows with the data (9, the wait for the running"
                                      " LCP before the dictionary copy, and 12-17). A node in failure handling"
                                      " (2-3) is down, not restarting: that is NdbDataNodeDown.\n\n"
                                      + STATUS_TABLE,
                              impact="The node is not serving and redundancy stays reduced until it finishes.",
                              diagnosis=f"- `{RESTART_Q}`\n- `ndb_mgm -e \"N STATUS\"` (start phase)\n"
                                        "- The data node's out/error log and the cluster log for the last"
                                        " `Start phase` line; states 9 and 17 wait for an LCP:"
                                        f" `{LCP_Q}`",
                              mitigation="If an LCP is progressing, wait. If the node waits for the master or for"
                                         " metadata copy, check the other nodes' health and the network. As a last"
                                         " resort stop the node and start it with `--initial`, and only if every"
                                         " other node of its node group is STARTED (`ndb_mgm -e show`): `--initial`"
                                         " discards the node's local data, which is then copied from its partner.",
                              benign="a very large node restoring or rebuilding indexes for longer than 2 hours;"
                                     " an `--initial` restart copying all data (state 16).")))
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
    g = Group("ndb-nodes", "ndb.yml", first_steps=FIRST_STEPS, records=[
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
        Alert(name="NdbDataNodeDown",
              expr=f"({down}) * on (cluster, node_id) group_left (node_group) {group_rec}"
                   f" or on (cluster, node_id) ({down})",
              severity="warning",
              summary="NDB data node {{ $labels.node_id }} is down",
              description="Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} is configured"
                          " (ndbinfo.config_nodes) but has not been running (no row in ndbinfo.nodes) for"
                          f" {n['data_node_down_for']}, and restart_info shows no restart of it under way"
                          " (a restarting node has no nodes row before start phase 9 either). Its node"
                          " group runs on fewer replicas: NdbNodeGroupLastReplica pages when one is left.",
              dashboard="ndb_overview",
              for_=n["data_node_down_for"],
              runbook=Runbook(
                  meaning="A configured data node (ndbinfo.config_nodes) has no row in ndbinfo.nodes,"
                          " and the master's restart_info shows no restart of it under way: it is"
                          " stopped or crashed, or it is waiting at node failure handling (states 2-3)."
                          " A restarting node has no `nodes` row either until its start phase 9 (the"
                          " SQL node reads ndbinfo only from data nodes it is connected to, and a"
                          " starting node accepts API connections in phase 9), so restart_info states"
                          " 4-18 and 20-23 mean \"restarting\", not down. A verdict survives a blind"
                          " spell of up to 10 minutes (the exporter or its SQL node restarting).",
                  impact="One replica of its node group is gone; with two replicas per group the"
                         " group has a single node left, which NdbNodeGroupLastReplica pages.",
                  diagnosis="- `ndb_mgm -e show`: `not connected` (down) or `starting` (a restart"
                            " restart_info does not show, e.g. a version without restart_info).\n"
                            "- On its host: is `ndbmtd` running, its `ndb_<id>_error.log` (the"
                            " error that stopped it) and the trace file it names.\n"
                            "- `SELECT * FROM ndbinfo.restart_info WHERE node_id = N;` on a live SQL"
                            " node (state 3: failure handling completed, waiting for the node).",
                  mitigation="Start the node (`ndbmtd`), or fix what stops it (disk, memory, config"
                             " mismatch). Watch NdbRestartStuck / NdbRestartTimeRegressed while it"
                             " restarts.",
                  benign="a planned `N STOP` (start a maintenance window: `clusterscope maintenance"
                         " start --cluster C --node N`).")),
        Alert(name="NdbNodeGroupLastReplica",
              expr=f"count by (cluster, node_group) ({group_rec} unless on (cluster, node_id) ({down}))"
                   f" == 1 and on (cluster, node_group) count by (cluster, node_group) ({group_rec}) > 1",
              severity="critical",
              summary="NDB node group {{ $labels.node_group }} of {{ $labels.cluster }} has"
          " one live data node left",
              description="Every other data node of node group {{ $labels.node_group }} in"
                          " {{ $labels.cluster }} is down (not running and not restarting): its data lives"
                          " on one node now, and when that node fails the whole cluster shuts down. A node"
                          " in a planned restart does not count as down.",
              dashboard="ndb_overview",
              for_=n["node_group_last_replica_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="Every data node of a node group but one is down (not running, and not in"
                          " a restart per restart_info). The node groups come from"
                          " `ndbinfo.membership.group_id` (remembered while a node is down by the"
                          " record `cluster_node:ndb_node_group:info`). A node in a planned restart"
                          " counts as live: a rolling restart does not page.",
                  impact="The group's data lives on one node. When it fails, NDB shuts the whole"
                         " cluster down (a node group without a live node makes the data"
                         " incomplete), and a system restart follows.",
                  diagnosis="- `ndb_mgm -e show`: which nodes of the group are `not connected`.\n"
                            "- `SELECT node_id, group_id FROM ndbinfo.membership;` (the live members).\n"
                            "- The down node's `ndb_<id>_error.log` and the cluster log.",
                  mitigation="Start the down node(s) now. Until the group has two live nodes again,"
                             " postpone anything risky on the survivor (restarts, upgrades, heavy"
                             " DDL).",
                  benign="none: a planned stop of one node of a two-replica group fires it; start a"
                         " maintenance window first (`clusterscope maintenance start`).")),
        Alert(name="NdbClusterUnreachable",
              expr=f"max by (cluster) (last_over_time(ndb_up{{{s}}}[{hold}])) == 0",
              severity="critical",
              summary="NDB cluster {{ $labels.cluster }} cannot be read through any SQL node",
              description="No SQL node of {{ $labels.cluster }} answers with the cluster's data: every SQL"
                          " node is down (ndb_sql_node_up 0), or they answer but reach no data node"
                          " (ndbinfo offline or 'Connection to NDB failed': every data node is down, or the"
                          " SQL nodes lost them). Applications cannot use the cluster either.",
              dashboard="ndb_overview",
              for_=n["cluster_unreachable_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="The exporter answers but reads nothing of the cluster through any of its"
                          " SQL nodes (`ndb_up` 0 on every exporter, held through blind spells of up"
                          " to 10 minutes): every SQL node is down (`ndb_sql_node_up` 0), or the"
                          " SQL nodes answer but reach no data node (ndbinfo offline, or `Connection"
                          " to NDB failed` when the SQL node lost the cluster).",
                  impact="An outage: applications going through these SQL nodes cannot use the"
                         " cluster; every other NDB alert is blind.",
                  diagnosis="- `ndb_mgm -e show` on a management node: are the data nodes `not"
                            " connected` (the cluster is down) or the SQL nodes (API) not"
                            " connected?\n"
                            "- `ndb_sql_node_up` per SQL node; `mysql -h <sql node> -e"
                            " 'SELECT * FROM ndbinfo.nodes'` as the exporter's account.\n"
                            "- The cluster log for `Node N: Forced node shutdown` / `Arbitration`"
                            " lines, and each data node's error log.\n"
                            "- If the cluster and SQL nodes are fine: the exporter's login (`GRANT"
                            " SELECT ON ndbinfo.*`, its password in `secrets/exporters.my.cnf`).",
                  mitigation="Data nodes down: start them (`ndbmtd` on each host; after a full"
                             " shutdown, all of them, for a system restart). SQL nodes down: start"
                             " mysqld. SQL nodes disconnected: check the network to the data nodes"
                             " and `ndb-connectstring`.")),
        Alert(name="NdbLcpStalled",
              expr=lcp_stalled,
              severity="warning",
              summary="NDB local checkpoints stalled in {{ $labels.cluster }}",
              description=f"No local checkpoint has completed and no fragment replica was checkpointed for"
                          f" {lcp_after} (longer when the last LCP took long: {factor}x its duration, up"
                          f" to {lcp_windows[-1]}) while an LCP runs, or while the data nodes wrote more"
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
                  benign="none with real write traffic: an idle cluster does not fire.")),
        Alert(name="NdbRedoLogFilling",
              expr=f"{used_ratio('REDO')} > {n['redo_used_ratio_max']}",
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
                             " (`NoOfFragmentLogFiles`, `FragmentLogFileSize`; rolling --initial).")),
        Alert(name="NdbUndoLogFilling",
              expr=f"{used_ratio('DD-UNDO')} > {n['undo_used_ratio_max']}",
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
                             " catch up, lower the disk data write rate.")),
        Alert(name="NdbDataMemoryHigh",
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
                             " `DataMemory` (rolling restart) or add node groups.")),
        Alert(name="NdbTransactionMemoryHigh",
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
                             " transactions open.")),
        Alert(name="NdbLdmCpuSaturated",
              expr=f"max without (instance, job, thr_no, thread_name) ({ldm_cpu_avg})"
                   f" > {n['ldm_cpu_percent_max']}",
              severity="warning",
              summary="NDB node {{ $labels.node_id }} LDM thread at"
           " {{ $value | printf \"%.0f\" }}% CPU",
              description=f"The busiest LDM thread of data node {{{{ $labels.node_id }}}} averaged more than"
                          f" {n['ldm_cpu_percent_max']}% CPU ({n['ldm_cpu_modes']}, over"
                          f" {n['ldm_cpu_avg_over']}) for {n['ldm_cpu_for']}.",
              dashboard="ndb_node",
              for_=n["ldm_cpu_for"],
              runbook=Runbook(
                  meaning="The busiest LDM thread of a data node averaged more than 90 % CPU over 5"
                          " minutes, for 10 minutes (exec + send + buffer_full: its work, without"
                          " spinning).",
                  impact="LDM threads execute the data operations; a saturated one caps throughput"
                         " and raises latency for its partitions.",
                  diagnosis="- `SELECT * FROM ndbinfo.cpustat c JOIN ndbinfo.threads t USING"
                            " (node_id, thr_no) WHERE t.thread_name = 'ldm';`\n"
                            "- Uneven load across LDM threads points at hot partitions.",
                  mitigation="Spread load (more partitions, `PARTITION_BALANCE`), add LDM threads"
                             " (`ThreadConfig`/`AutomaticThreadConfig`), or add node groups.")),
        Alert(name="NdbTransporterOverloaded",
              expr=f"max {WITHOUT} (ndb_transporter_overloaded{{{s}}}) == 1 or max {WITHOUT}"
                   f" (increase(ndb_transporter_overloads_total{{{s}}}[10m]))"
                   f" > {n['transporter_overloads_max']}",
              severity="warning",
              summary="NDB transporter {{ $labels.node_id }} -> {{ $labels.remote_node_id }}"
           " overloaded",
              description="The send buffer from node {{ $labels.node_id }} to node"
           " {{ $labels.remote_node_id }} is overloaded (ndbinfo.transporters), or it was"
           f" overloaded more than {n['transporter_overloads_max']} times in 10 minutes.",
              dashboard="ndb_overview",
              for_=n["transporter_overloaded_for"],
              runbook=Runbook(
                  meaning="A transporter between two nodes reports overload (send buffer full) for 2"
                          " minutes, or went into overload more than 3 times in 10 minutes.",
                  impact="Operations to that node are delayed or fail with temporary errors.",
                  diagnosis="- `SELECT * FROM ndbinfo.transporters;` (overloaded, slowdown columns)\n"
                            "- `ndbinfo.transporter_details` send buffer use (8.0.37+); network"
                            " throughput and errors between the hosts.",
                  mitigation="Raise `SendBufferMemory`/`TotalSendBufferMemory`, fix the network,"
                             " or reduce batch sizes.")),
        Alert(name="NdbTransporterDisconnected",
              expr=f"max {WITHOUT} (ndb_transporter_status_code{{{s}}}) != 0"
                   f" and on (cluster, remote_node_id) {running_peer}",
              severity="warning",
              summary="NDB link {{ $labels.node_id }} -> {{ $labels.remote_node_id }} not"
           " connected",
              description="Data node {{ $labels.node_id }} has no connection to data node"
            " {{ $labels.remote_node_id }} although both run (ndbinfo.transporters): a"
            " network or TLS problem between them.",
              dashboard="ndb_overview",
              for_=n["transporter_disconnected_for"],
              runbook=Runbook(
                  meaning="A data node has had no connection to another data node that runs, for 2"
                          " minutes (`ndbinfo.transporters` status not CONNECTED).",
                  impact="The two nodes cannot exchange signals: transactions between them fail,"
                         " and the cluster may soon shut one of them out (heartbeat failure).",
                  diagnosis="- `SELECT node_id, remote_node_id, status, remote_address FROM"
                            " ndbinfo.transporters WHERE status != 'CONNECTED';`\n"
                            "- Network between the hosts (firewall, MTU, TLS certificates when"
                            " `encrypted`); both nodes' out logs.",
                  mitigation="Fix the network path or the TLS configuration; if one node is cut off"
                             " for good, restart it.")),
        # only STARTED nodes vote: a node in a restart has not joined arbitration yet
        Alert(name="NdbArbitratorLost",
              expr=f"count by (cluster) ((max {WITHOUT} (ndb_arbitrator_connected{{{s}}}) == 0"
                   f" or max {WITHOUT} (ndb_arbitrator_node_id{{{s}}}) == 0)"
                   f" and on (cluster, node_id) max without (instance, job, status)"
                   f" (ndb_node_status{{{s},status=\"STARTED\"}}) == 1) > 0",
              severity="warning",
              summary="NDB cluster {{ $labels.cluster }} has no arbitrator",
              description="{{ $value }} started data node(s) of {{ $labels.cluster }} have no connected"
                          " arbitrator (ndbinfo.membership): a network split now shuts the cluster down"
                          " instead of arbitrating.",
              dashboard="ndb_overview",
              for_=n["arbitrator_lost_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="A started data node has had no connected arbitrator for 2 minutes"
                          " (`ndbinfo.membership`: `arb_connected` No, or no arbitrator at all).",
                  impact="A node failure that needs arbitration shuts the survivors down too. With"
                         " one node group (two data nodes) that is every single node failure: the"
                         " survivor holds half the nodes and cannot win arbitration alone, so it"
                         " shuts down and the cluster is gone. With more node groups, a network"
                         " split that an arbitrator would have settled takes the whole cluster down.",
                  diagnosis="- `SELECT node_id, president, arbitrator, arb_state, arb_connected,"
                            " connected_rank1_arbs, connected_rank2_arbs FROM ndbinfo.membership;`\n"
                            "- `ndb_mgm -e show`: are the management nodes (ArbitrationRank 1)"
                            " connected?\n"
                            "- The cluster log (`ndb_<mgm id>_cluster.log`): `Arbitration` lines say"
                            " which arbitrator was lost and whether a new one was chosen.",
                  mitigation="Start or reconnect the management node (or an API node with"
                             " ArbitrationRank > 0) now, before a data node fails; check the network"
                             " between it and the data nodes. The alert resolves once every started"
                             " node reports a connected arbitrator.",
                  benign="a cluster configured with `Arbitration=Disabled` or `WaitExternal` never has"
                         " one: silence the alert for that cluster (`amtool silence add"
                         " alertname=NdbArbitratorLost cluster=<name>`). The arbitration mode is in"
                         " `ndbinfo.config_values`, which no collector reads yet.")),
        Alert(name="NdbVersionMismatch",
              expr=f"count by (cluster) (count by (cluster, version) (ndb_node_info{{{s},type=\"NDB\"}})) > 1"
                   f" or count by (cluster) (count_values by (cluster) (\"generation\","
                   f" max {WITHOUT} (ndb_node_config_generation{{{s}}}))) > 1",
              severity="info",
              summary="NDB cluster {{ $labels.cluster }} runs mixed versions or configurations",
              description="The data nodes of {{ $labels.cluster }} have run more than one software version or"
                          f" configuration generation for {n['version_mismatch_for']}: a rolling upgrade or"
                          " configuration change is half done.",
              dashboard="ndb_overview",
              for_=n["version_mismatch_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="The data nodes have run more than one software version, or more than one"
                          " configuration generation, for 2 hours.",
                  impact="Usually a rolling upgrade or configuration change left half done: restart"
                         " behaviour and features differ by node, and the next change starts from"
                         " an unclear state.",
                  diagnosis="- `SELECT node_id, node_type, node_version FROM ndbinfo.processes;`\n"
                            "- `SELECT node_id, config_generation FROM ndbinfo.nodes;`\n"
                            "- `ndb_mgm -e show` (versions per node).",
                  mitigation="Finish the rolling restart (the nodes still on the old version or"
                             " configuration), or roll back.",
                  benign="a rolling upgrade that takes longer than 2 hours.")),
        # the exporter process itself: the cluster's other NDB warnings are noise then (an
        # inhibition, alertmanager.py); a cluster it cannot read is NdbClusterUnreachable
        Alert(name="NdbExporterDown",
              expr=f"max by (cluster) (up{{{s}}}) == 0",
              severity="warning",
              summary="ndbinfo_exporter does not answer for NDB cluster {{ $labels.cluster }}",
              description="No ndbinfo_exporter scrape of {{ $labels.cluster }} succeeds (up 0 on every"
                          " exporter of it): NDB monitoring of the cluster is blind, its other NDB"
                          " warnings are held back. Not a statement about the cluster itself.",
              dashboard="ndb_overview",
              for_=n["exporter_down_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="No scrape of ndbinfo_exporter for this cluster succeeds (`up` 0 on every"
                          " exporter that probes it). A cluster the exporter answers for but cannot"
                          " read is NdbClusterUnreachable, not this.",
                  impact="NDB monitoring of the cluster is blind; its other NDB warnings are held"
                         " back (an inhibition), critical alerts never are.",
                  diagnosis="- `curl http://<exporter>/metrics`; the exporter's log (`docker compose"
                            " logs ndbinfo-exporter`).\n"
                            "- VictoriaMetrics' `/targets`: the `ndbinfo` job's last error.",
                  mitigation="Restart the exporter; fix what stops it (its option file, the"
                             " description it reads, memory).")),
        Alert(name="NdbExporterAbsent",
              expr=f"max by (cluster) (clusterscope_cluster_info{{{inv},kind=\"ndb\"}})"
                   f" unless on (cluster) up{{{s}}}",
              severity="warning",
              summary="NDB cluster {{ $labels.cluster }} is described but not scraped",
              description="{{ $labels.cluster }} is an NDB cluster of the description (clusterscope.yml),"
                          f" but no target of the scrape job selected by {s} covers it: the scrape"
                          " configuration does not take the inventory's targets.",
              dashboard="ndb_overview",
              for_=n["exporter_down_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="An NDB cluster of the description (clusterscope.yml) has no `up` series in"
                          " the ndbinfo job: no scrape of `/probe?cluster=<name>` covers it.",
                  impact="That cluster's NDB monitoring is blind, and NdbExporterDown cannot fire (no"
                         " `up` series).",
                  diagnosis="- The inventory's targets: `curl <inventory>/sd/ndbinfo` lists the"
                            " cluster?\n- The scrape configuration (`compose/config/scrape.yml` or"
                            " your vmagent/Prometheus config) and the collector's targets page.",
                  mitigation="Restore the scrape job (http_sd from the inventory, with the"
                             " multi-target relabelling), or remove the cluster from clusterscope.yml.")),
        Alert(name="NdbSqlNodeDown",
              expr=f"max {WITHOUT} (ndb_sql_node_up{{{s}}}) == 0",
              severity="warning",
              summary="NDB SQL node {{ $labels.sql_node }} of {{ $labels.cluster }} does"
           " not answer",
              description="SQL node {{ $labels.sql_node }} of {{ $labels.cluster }} has not answered the"
                          f" exporter for {n['sql_node_down_for']}. The exporter reads ndbinfo through"
                          " another SQL node if one answers (ndb_sql_node_serving); applications that"
                          " connect to this one fail.",
              dashboard="ndb_overview",
              for_=n["sql_node_down_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="An SQL node of the cluster has not answered the exporter (connection"
                          " refused, login failed, or lost) for 2 minutes (`ndb_sql_node_up` 0).",
                  impact="Monitoring goes on through another SQL node when one answers"
                         " (`ndb_sql_node_serving`); applications that connect to this SQL node fail,"
                         " and with it down the cluster has one API node less.",
                  diagnosis="- `mysqladmin -h <sql node> ping`; its error log.\n"
                            "- `ndb_mgm -e show`: is the SQL node (an API node id) connected?\n"
                            "- `mysql_up{job=\"ndb_sql\"}` and `mysql_global_status_ndb_api_*` of that"
                            " node (mysqld_exporter probes it too).",
                  mitigation="Restart mysqld on that host; check the exporter account's password"
                             " there (each SQL node has its own user table).")),
        Alert(name="NdbExporterCollectorFailing",
              expr=f"ndb_exporter_collector_success{{{s}}} == 0 and on (instance, collector)"
                   f" ndb_exporter_collector_supported{{{s}}} == 1"
                   f" unless on (instance) ndb_up{{{s}}} == 0",
              severity="warning",
              summary="ndbinfo_exporter collector {{ $labels.collector }} failing",
              description="Collector {{ $labels.collector }} of {{ $labels.instance }} fails on every"
                          " scrape although the SQL node answers and its view exists: its metrics are"
                          " missing.",
              dashboard="ndb_overview",
              for_=n["collector_failing_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="One collector of ndbinfo_exporter has failed on every scrape for 5 minutes"
                          " although the SQL node answers (`ndb_up` 1) and its view exists in this NDB"
                          " version.",
                  impact="That collector's metrics (and the alerts built on them) are missing.",
                  diagnosis="- The exporter log for the collector's error (timeout, privilege).\n"
                            "- `ndb_exporter_collector_timeouts_total`, `ndb_exporter_collector_duration_seconds`.",
                  mitigation="Grant SELECT on the view, raise `--query.timeout`, or disable the"
                             " collector (`--no-collect.X`).")),
        # the exporter's budget is the scrape timeout minus 0.5 s and VictoriaMetrics drops a
        # scrape past its timeout, so a duration above the timeout is never stored: "slow"
        # is close to the budget, for a while (review oncall-2 N13)
        Alert(name="NdbExporterSlow",
              expr=f"max_over_time(ndb_exporter_scrape_duration_seconds{{{s}}}[1m])"
                   f" > {n['exporter_scrape_seconds_max']}"
                   f" or increase(ndb_exporter_collector_timeouts_total{{{s}}}[5m]) > 0",
              severity="warning",
              summary="ndbinfo_exporter {{ $labels.instance }} scrapes are slow or cut",
              description="Scrapes of {{ $labels.instance }} took more than"
                          f" {n['exporter_scrape_seconds_max']} s (the budget is the scrape timeout minus"
                          " 0.5 s), or collectors hit their query timeout, for"
                          f" {n['exporter_slow_for']}: metrics go missing when a scrape is cut.",
              dashboard="ndb_overview",
              for_=n["exporter_slow_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="Scrapes of ndbinfo_exporter took more than 3 s (its budget is the scrape"
                          " timeout, 4 s, minus 0.5 s; VictoriaMetrics drops a scrape past its timeout,"
                          " so a longer one is never stored), or its queries hit `--query.timeout`,"
                          " for 10 minutes.",
                  impact="Near the scrape timeout whole scrapes are lost; a collector cut at its"
                         " timeout drops its metrics (LCP progress, CPU, ...).",
                  diagnosis="- `ndb_exporter_collector_duration_seconds` per collector;"
                            " `ndb_exporter_collector_timeouts_total`.\n"
                            "- Schema size (per-fragment views grow with tables x fragments); SQL"
                            " node load.",
                  mitigation="Raise `--scrape.slow-interval` for the per-fragment collectors, raise"
                             " `--query.timeout`, or disable a collector (`--no-collect.X`).")),
        # an SQL node that runs but sees no data node: applications connected to it fail
        # (status variables Ndb_number_of_ready_data_nodes / Ndb_number_of_data_nodes,
        # mysql/mysql-server storage/ndb/plugin/ha_ndbcluster.cc ndb_status_vars, through
        # mysqld_exporter's global_status collector, lower-cased)
        Alert(name="NdbSqlNodeDisconnected",
              expr=f"max {WITHOUT} (mysql_global_status_ndb_number_of_ready_data_nodes{{{sql}}}) == 0"
                   f" and on (cluster, node) max {WITHOUT} (mysql_up{{{sql}}}) == 1",
              severity="warning",
              summary="NDB SQL node {{ $labels.node }} of {{ $labels.cluster }} sees"
           " no data node",
              description="SQL node {{ $labels.node }} of {{ $labels.cluster }} answers but is connected"
                          " to no ready data node (Ndb_number_of_ready_data_nodes 0) for"
                          f" {n['sql_node_disconnected_for']}: every NDB table query through it fails.",
              dashboard="ndb_overview",
              for_=n["sql_node_disconnected_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="An NDB SQL node answers (mysqld_exporter's `mysql_up` 1, job `ndb_sql`) but"
                          " is connected to no ready data node (`Ndb_number_of_ready_data_nodes` 0)"
                          " for a minute.",
                  impact="Every query on NDB tables through this SQL node fails; applications"
                         " connected to it see errors while the other SQL nodes may work.",
                  diagnosis="- `SHOW GLOBAL STATUS LIKE 'Ndb_%';` on it (`Ndb_cluster_node_id`,"
                            " `Ndb_config_from_host`).\n"
                            "- `ndb_mgm -e show`: is its API node id connected?\n"
                            "- Its error log: `NDB: ... connection` lines; the network to the data"
                            " nodes and to the management node.",
                  mitigation="Fix the network or the `ndb-connectstring`; a free API slot in the"
                             " cluster configuration; restart the mysqld if it does not reconnect.")),
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
    g = Group("ndb-workload", "ndb.yml", first_steps=FIRST_STEPS, records=[
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
        Alert(name="NdbTableFillingDataMemory",
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
                         " resolves); a table that is purged on a schedule.")),
        Alert(name="NdbLongTransaction",
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
                         " (still holding locks: it is not harmless).")),
        Alert(name="NdbLockWaits",
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
                  benign="a short burst on a hot row during a batch job.")),
        Alert(name="NdbDiskPageBufferHitRatioLow",
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
                         " scan over a large disk data table.")),
        Alert(name="NdbCommitLatencyRegressed",
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
                         " LCP at the start of a busy period.")),
    ]
    return g
