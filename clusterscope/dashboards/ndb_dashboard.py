"""NDB dashboards: cluster overview, one data node, and restarts.

Metric names are the ndbinfo_exporter's (docs/exporter.md) and the
monitoring rules' recorded series (rules/ndb.yml). Everything from the lab's simulator
carries `simulated="true"`, which the first row of each dashboard shows.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash
from ndbinfo_exporter.schema import RESTART_COMPLETED, RESTART_FAILURE, RESTART_STATUS

from clusterscope.dashboards import kit, ndb_workload_panels
from clusterscope.dashboards.host_dashboard import host_row
from clusterscope.dashboards.logs_dashboard import ndb_annotations
from clusterscope.dashboards.uids import (
    GALERA,
    LOGS,
    NDB_NODE,
    NDB_OVERVIEW,
    NDB_RESTARTS,
)
from clusterscope.rules.fragments import (
    ldm_cpu_percent,
    restart_in_progress,
    thread_cpu_percent,
)
from clusterscope.rules.rules_config import shared

C = 'cluster="$cluster"'
N = 'node_id=~"$node_id"'   # multi-value node selection (overview, restarts)
N1 = 'node_id="$node_id"'   # one data node (node dashboard)

# restart_info's text per status, coloured by what it means
RESTART_STATUS_MAPPINGS = {
    str(k): (text, "red" if k in RESTART_FAILURE else "green" if k in RESTART_COMPLETED
             else "yellow")
    for k, text in RESTART_STATUS.items()}
CFG = shared()["ndb"]  # the alerts' thresholds, drawn on the panels they watch
LINKS = [(NDB_OVERVIEW, "NDB overview"), (NDB_NODE, "NDB data node"),
         (NDB_RESTARTS, "NDB restarts"), (LOGS, "Logs"), (GALERA, "Galera")]


def _cluster_var() -> dash.QueryVariable:
    # the NDB clusters of the description (clusterscope.yml, via the inventory)
    return kit.prom_var("cluster", "cluster",
                        'label_values(clusterscope_cluster_info{kind="ndb"}, cluster)')


def _node_var(multi: bool) -> dash.QueryVariable:
    return kit.prom_var("node_id", "data node",
                        f"label_values(ndb_node_status{{{C}}}, node_id)", multi=multi)


def simulated_row(d: dash.Dashboard) -> None:
    d.with_panel(kit.note("Real or simulated?", kit.SIMULATED_NOTE, w=12, h=4))
    d.with_panel(kit.stat_panel(
        "Data source", "SIMULATED when the exporter's series carry simulated=\"true\" (the lab's"
        " NDB simulator); REAL when they come from a real cluster.", "none",
        kit.q(f'max(ndb_up{{{C}, simulated="true"}})', "simulated"),
        w=4, mappings={"1": ("SIMULATED", "orange"), "0": ("SIMULATED (down)", "red")},
        no_value="REAL"))
    d.with_panel(kit.table_panel(
        "Versions", "ndb_node_info: every node's type and version; a version ending in -sim"
        " comes from the simulator.", "none",
        kit.table_q(f"ndb_node_info{{{C}}}"), w=8, h=4,
        transformations=[kit.hide_columns("Value", "cluster")]))


def overview() -> dash.Dashboard:
    d = kit.dashboard(NDB_OVERVIEW, "NDB cluster overview",
                      "Node states, restarts in progress, LCP, REDO, memory, operations and"
                      " alerts of one NDB cluster.", ["ndb"], LINKS)
    d.with_variable(_cluster_var()).with_variable(_node_var(multi=True))
    d.with_row(dash.Row("Cluster"))
    simulated_row(d)
    # the scrape's up joins ndb_up, so a dead exporter reads DOWN rather than "No data"
    d.with_panel(kit.stat_panel(
        "Exporter up", "The exporter answers its scrape (up) and the SQL node answered with"
        " ndbinfo online (ndb_up).", "none",
        kit.q(f'min(up{{job="ndbinfo", {C}}}) * min(ndb_up{{{C}}}) or on() vector(0)'),
        mappings={"1": ("UP", "green"), "0": ("DOWN", "red")}))
    # a stopped data node has no ndbinfo.nodes row: its status simply vanishes, so the
    # configured nodes (config_nodes, ndb_data_node_running) give the "of N"
    d.with_panel(kit.stat_panel(
        "Data nodes started / configured", "Data nodes whose status is STARTED, and the data"
        " nodes in the cluster's configuration (ndb_data_node_running, from config_nodes).",
        "short",
        kit.q(f'sum(ndb_node_status{{{C}, status="STARTED"}}) or on() vector(0)', "started"),
        kit.q(f"count(ndb_data_node_running{{{C}}})", "configured"), neutral=True))
    # a node in failure handling (2-3) is down, not restarting: NdbDataNodeDown's, not this
    d.with_panel(kit.stat_panel(
        "Restarts in progress", "Data nodes whose restart_info row is a restart under way"
        " (node_restart_status_int 4-18, 20-23; 2-3 is a node down, 19 and 24 completed).",
        "short",
        kit.q(f"count({restart_in_progress(f'ndb_restart_status{{{C}}}', failure=False)})"
              f" or vector(0) * max(ndb_up{{{C}}})")))
    d.with_panel(kit.stat_panel(
        "Arbitrator", "Whether every data node is connected to its arbitrator"
        " (ndbinfo.membership.arb_connected); without one a network split shuts the cluster"
        " down.", "none",
        kit.q(f"min(ndb_arbitrator_connected{{{C}}})"),
        mappings={"1": ("CONNECTED", "green"), "0": ("LOST", "red")}, w=4))
    d.with_panel(kit.stat_panel(
        "Alerts firing", "NDB alerts firing now (vmalert's ALERTS series).", "short",
        kit.q(f'count(ALERTS{{alertstate="firing", alertname=~"Ndb.*", {C}}})'
              " or on() vector(0)"), w=4))
    states = " + ".join(
        f'{k} * sum by (node_id) (ndb_node_status{{{C}, {N}, status=~"{pattern}"}})'
        for k, pattern in ((1, "STARTED"), (2, "STARTING"), (3, "STOPPING.*|SINGLEUSER"),
                           (4, "NOTHING|CMVMI")))
    # a configured node without a nodes row: STARTING when restart_info shows a restart of
    # it (before start phase 9 a restarting node has no row, like a dead one), else DOWN
    absent = f"sum by (node_id) (ndb_data_node_running{{{C}, {N}}} == 0) * 0"
    restarting = restart_in_progress(f"max by (node_id) (ndb_restart_status{{{C}, {N}}})",
                                     failure=False)
    states = (f"({states}) or on(node_id) ({absent} + 2 and on(node_id) ({restarting}))"
              f" or on(node_id) ({absent} + 4)")
    d.with_panel(kit.state_panel(
        "Node status", "ndb_node_status: the current status of each data node (from"
        " ndbinfo.nodes); STARTING also for a node without a nodes row whose restart"
        " restart_info shows (it has no row before start phase 9); DOWN: configured"
        " (config_nodes), not running, not restarting.",
        kit.q(states, "node {{node_id}}"),
        mappings={"0": ("UNKNOWN", "purple"), "1": ("STARTED", "green"),
                  "2": ("STARTING", "yellow"), "3": ("STOPPING", "orange"),
                  "4": ("DOWN", "red")}, w=12)
        .data_links([kit.data_link("Data node ${__field.labels.node_id}", NDB_NODE,
                                   "var-cluster=$cluster&var-node_id=${__field.labels.node_id}")]))
    # the SQL nodes the exporter can read ndbinfo through (the description's order)
    d.with_panel(kit.state_panel(
        "SQL nodes", "Each SQL node of the description: SERVING when this scrape read"
        " ndbinfo through it, UP when it answers otherwise (a check in the background), DOWN"
        " when it does not (ndb_sql_node_up, ndb_sql_node_serving); the exporter fails over"
        " to the next one that answers.",
        kit.q(f"max by (sql_node) (ndb_sql_node_up{{{C}}})"
              f" + max by (sql_node) (ndb_sql_node_serving{{{C}}})", "{{sql_node}}"),
        mappings={"0": ("DOWN", "red"), "1": ("UP", "green"), "2": ("SERVING", "blue")},
        w=12))
    d.with_panel(kit.ts(
        "Start phase", "ndb_node_start_phase: a restarting node walks through phases 0..101.",
        "short", kit.q(f"ndb_node_start_phase{{{C}, {N}}}", "node {{node_id}}")))
    d.with_panel(kit.ts(
        "Restart status (in progress)", "ndb_restart_status while a restart runs: the data"
        " node kernel's restart state (4-18 the master's view of the phases, 20-23 after a"
        " master takeover; 2-3, failure handling, is a node down).", "short",
        kit.q(restart_in_progress(f"ndb_restart_status{{{C}, {N}}}", failure=False),
              "node {{node_id}}")))

    d.with_row(dash.Row("Local checkpoints"))
    d.with_panel(kit.ts(
        "LCP progress", "Share of fragment replicas the running LCP has written (1 when no"
        " LCP runs).", "percentunit", kit.q(f"ndb_lcp_progress_ratio{{{C}}}", "progress"),
        w=8, minimum=0))
    d.with_panel(kit.ts(
        "LCP id", "ndb_lcp_id: a flat line while writes go on means a stalled LCP.", "none",
        kit.q(f"ndb_lcp_id{{{C}}}", "LCP id"), w=8))
    d.with_panel(kit.ts(
        "LCP duration", "Observed duration of the last completed LCP (recorded: "
        "cluster:ndb_lcp_duration_seconds:last).", "s",
        kit.q(f"ndb_lcp_last_duration_seconds{{{C}}}", "last LCP"), w=8))

    d.with_row(dash.Row("REDO, memory, operations"))
    d.with_panel(kit.share(
        "REDO used (fullest log part)", "Highest used/total ratio over a node's REDO log"
        " parts (recorded: cluster_node:ndb_redo_log_space_used:max_part_ratio); red: the"
        " NdbRedoLogFilling threshold.",
        kit.q(f"cluster_node:ndb_redo_log_space_used:max_part_ratio{{{C}, {N}}}",
              "node {{node_id}}"),
        threshold=CFG["redo_used_ratio_max"], w=8))
    d.with_panel(kit.share(
        "Memory used", "ndb_memory_used_bytes / ndb_memory_total_bytes per node and type;"
        " red: the NdbDataMemoryHigh threshold.",
        kit.q(f"ndb_memory_used_bytes{{{C}, {N}}} / ndb_memory_total_bytes{{{C}, {N}}}",
              "node {{node_id}} {{memory_type}}"),
        threshold=CFG["data_memory_used_ratio_max"], w=8))
    d.with_panel(kit.ts(
        "Operations", "DBTC counters (transactions, reads, writes, ...) per second, summed over"
        " block instances and data nodes.", "ops",
        kit.q(f"sum by (counter_name) (rate(ndb_counters_total{{{C}, {N},"
              f' block_name="DBTC"}}[$__rate_interval]))', "{{counter_name}}"), w=8))

    ndb_workload_panels.overview_rows(d, C, N)
    return d


def data_node() -> dash.Dashboard:
    d = kit.dashboard(NDB_NODE, "NDB data node",
                      "One data node: CPU per thread (LDM highlighted), memory, REDO and"
                      " buffers, LCP and REDO write speeds, transporters.", ["ndb"], LINKS)
    d.with_variable(_cluster_var()).with_variable(_node_var(multi=False))
    d.with_row(dash.Row("Node"))
    simulated_row(d)
    d.with_panel(kit.stat_panel(
        "Uptime", "ndb_node_uptime_seconds.", "s",
        kit.q(f"ndb_node_uptime_seconds{{{C}, {N1}}}"), neutral=True))
    d.with_panel(kit.alert_threshold(kit.stat_panel(
        "LDM CPU mean / max", "Mean and max CPU over the node's LDM threads (recorded:"
        " cluster_node:ndb_ldm_cpu_percent:mean / :max); red: the NdbLdmCpuSaturated"
        " threshold.", "percent",
        kit.q(f"cluster_node:ndb_ldm_cpu_percent:mean{{{C}, {N1}}}", "mean"),
        kit.q(f"cluster_node:ndb_ldm_cpu_percent:max{{{C}, {N1}}}", "max"), w=8),
        CFG["ldm_cpu_percent_max"]))

    d.with_row(dash.Row("CPU per thread"))
    # the quantity NdbLdmCpuSaturated judges (the thread's work, without spinning), so the
    # line drawn is the alert's threshold on its own quantity; the OS view is per thread type
    cpu = (kit.ts(
        "CPU per thread", f"CPU percent of each block thread's work ({CFG['ldm_cpu_modes']}"
        " from cpustat, joined to threads: what NdbLdmCpuSaturated averages for the LDM"
        " threads; spinning left out); LDM threads drawn thick in red.", "percent",
        kit.q(f"sum by (thread_name, thr_no)"
              f" ({thread_cpu_percent(C, N1, modes=CFG['ldm_cpu_modes'])})",
              "{{thread_name}} {{thr_no}}"), w=12, h=9))
    cpu = kit.alert_threshold(cpu.override_by_regexp("ldm .*", kit.highlight("red")),
                              CFG["ldm_cpu_percent_max"])
    d.with_panel(cpu)
    d.with_panel(kit.ts(
        "CPU by thread type", "OS user+system CPU percent (spinning included) summed per"
        " thread type (ldm, tc, recv, send, main, rep, ...).", "percent",
        kit.q(f"sum by (thread_name) ({thread_cpu_percent(C, N1)})", "{{thread_name}}"),
        w=12, h=9, stack=True))
    d.with_panel(kit.heatmap_panel(
        "LDM threads heatmap", "One row per LDM thread (thr_no), colour = CPU percent: an"
        " uneven row means a hot partition.", "percent",
        kit.q(f"sum by (thr_no) ({ldm_cpu_percent(C, N1)})", "{{thr_no}}"), w=12, h=9))
    d.with_panel(kit.ts(
        "CPU seconds per thread type", "rate of ndb_thread_cpu_seconds_total (threadstat).",
        "percentunit",
        kit.q(f"sum by (thread_name) (rate(ndb_thread_cpu_seconds_total{{{C}, {N1}}}"
              f"[$__rate_interval]))", "{{thread_name}}"), w=12, h=9))

    d.with_row(dash.Row("Memory, REDO and buffers"))
    d.with_panel(kit.share(
        "Memory", "Used share of each memory type (ndb_memory_used_bytes /"
        " ndb_memory_total_bytes: Data memory in GB and the long message buffer in MB on one"
        " axis); red: the NdbDataMemoryHigh threshold.",
        kit.q(f"ndb_memory_used_bytes{{{C}, {N1}}} / ndb_memory_total_bytes{{{C}, {N1}}}",
              "{{memory_type}}"),
        threshold=CFG["data_memory_used_ratio_max"], w=8))
    d.with_panel(kit.share(
        "REDO log space", "Used share of each REDO log part (logspaces).",
        kit.q(f'ndb_log_space_used_bytes{{{C}, {N1}, log_type="REDO"}}'
              f' / ndb_log_space_total_bytes{{{C}, {N1}, log_type="REDO"}}',
              "part {{log_part}}"),
        threshold=CFG["redo_used_ratio_max"], w=8))
    d.with_panel(kit.ts(
        "Log buffers", "Used bytes of the REDO and UNDO log buffers (logbuffers).", "bytes",
        kit.q(f"ndb_log_buffer_used_bytes{{{C}, {N1}}}", "{{log_type}} part {{log_part}}"),
        w=8))

    d.with_row(dash.Row("Disk write speed"))
    d.with_panel(kit.ts(
        "LCP and REDO write speed", "disk_write_speed_aggregate, 10 s window, summed over"
        " LDM instances, per kind.", "Bps",
        kit.q(f'sum by (kind) (ndb_disk_write_speed_bytes_per_second{{{C}, {N1},'
              f' window="10s"}})', "{{kind}}"), w=12))
    d.with_panel(kit.ts(
        "Write speed per LDM instance", "LCP/backup write speed per LDM instance (10 s).",
        "Bps",
        kit.q(f'ndb_disk_write_speed_bytes_per_second{{{C}, {N1}, kind="backup_lcp",'
              f' window="10s"}}', "ldm {{ldm_instance}}"), w=12))

    ndb_workload_panels.node_rows(d, C, N1)

    d.with_row(dash.Row("Transporters"))
    d.with_panel(kit.ts(
        "Transporter bytes", "Bytes per second sent (+) and received (-) per remote node.",
        "Bps",
        kit.q(f"rate(ndb_transporter_sent_bytes_total{{{C}, {N1}}}[$__rate_interval])",
              "sent to {{remote_node_id}}"),
        kit.q(f"-rate(ndb_transporter_received_bytes_total{{{C}, {N1}}}[$__rate_interval])",
              "received from {{remote_node_id}}"), w=12))
    d.with_panel(kit.ts(
        "Transporter overload and slowdown", "1 while the send buffer to that node is"
        " overloaded / in slowdown; bars: new overloads and slowdowns.", "short",
        kit.q(f"ndb_transporter_overloaded{{{C}, {N1}}}", "overloaded {{remote_node_id}}"),
        kit.q(f"ndb_transporter_slowdown{{{C}, {N1}}}", "slowdown {{remote_node_id}}"),
        kit.q(f"increase(ndb_transporter_overloads_total{{{C}, {N1}}}[$__rate_interval])",
              "new overloads {{remote_node_id}}"),
        kit.q(f"increase(ndb_transporter_slowdowns_total{{{C}, {N1}}}[$__rate_interval])",
              "new slowdowns {{remote_node_id}}"), w=12))
    # every host of the cluster: a data node id is not a host, the description's nodes are
    host_row(d, C, "{{node}}")
    return d


def restarts() -> dash.Dashboard:
    d = kit.dashboard(NDB_RESTARTS, "NDB restarts",
                      "The last restart of each data node by phase, restart totals against"
                      " their baseline, and the restart in progress.", ["ndb"], LINKS,
                      since="now-30d")  # restarts are days apart
    d.with_variable(_cluster_var()).with_variable(_node_var(multi=True))
    for a in ndb_annotations():
        d.annotation(a)
    d.with_row(dash.Row("Last restart"))
    simulated_row(d)
    d.with_panel(kit.table_panel(
        "Last restart by phase (seconds)", "ndb_restart_phase_seconds of each node's latest"
        " restart, one row per restart_info secs_* phase: the shape of the 7.5 vs 7.6"
        " table in the field facts.", "s",
        kit.table_q(f"ndb_restart_phase_seconds{{{C}, {N}}}"),
        transformations=[kit.matrix("phase", "node_id")], w=12, h=12))
    d.with_panel(kit.bars_panel(
        "Last restart total", "ndb_restart_total_seconds of each node's latest restart.", "s",
        kit.q(f"ndb_restart_total_seconds{{{C}, {N}}}", "node {{node_id}}", instant=True),
        w=6, h=12).color_scheme(kit.FIXED_BLUE).thresholds(kit.NO_THRESHOLDS))
    d.with_panel(kit.stat_panel(
        "Completed restarts", "ndb_restarts_completed_total: restarts counted once each,"
        " also across exporter restarts.", "short",
        kit.q(f"sum by (node_id) (ndb_restarts_completed_total{{{C}, {N}}})",
              "node {{node_id}}"), w=6, h=12, neutral=True))

    d.with_row(dash.Row("Against the baseline"))
    d.with_panel(kit.ts(
        "Restart total vs baseline", "Total of the latest completed restart per node, and the"
        " median of earlier completed restarts (recorded rules).", "s",
        kit.q(f"cluster_node:ndb_restart_total_seconds:completed{{{C}, {N}}}",
              "node {{node_id}} latest"),
        kit.q(f"cluster_node:ndb_restart_total_seconds:baseline_median{{{C}, {N}}}",
              "node {{node_id}} baseline (median)"), w=12))
    # the verdict itself, as the alert judged it: held for restart_verdict_hold after the
    # restart, unlike the baseline above, which already includes the latest restart
    hold = CFG["restart_verdict_hold"]
    d.with_panel(kit.alert_threshold(kit.ts(
        "Verdict: ratio to baseline", "The latest restart's total over the median of the"
        " earlier restarts (cluster_node:ndb_restart_total_seconds:ratio_to_baseline), held"
        f" {hold} as the alert holds it; red: NdbRestartTimeRegressed's factor (it also"
        f" needs {CFG['restart_regression_min_growth_seconds']} s of growth).", "none",
        kit.q(f"last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_baseline"
              f"{{{C}, {N}}}[{hold}])", "node {{node_id}}"), w=12, minimum=0),
        CFG["restart_regression_factor"]))
    d.with_panel(kit.table_panel(
        "Phase vs its median", "Each phase of the latest restart, the median of the earlier"
        " restarts' same phase, and the growth (seconds) the alert names the phase by.", "s",
        kit.table_q(f"cluster_node_phase:ndb_restart_phase_seconds:completed{{{C}, {N}}}"),
        kit.table_q(f"cluster_node_phase:ndb_restart_phase_seconds:baseline_median"
                    f"{{{C}, {N}}}"),
        kit.table_q(f"last_over_time(cluster_node_phase:ndb_restart_phase_seconds:"
                    f"growth_over_baseline{{{C}, {N}}}[{hold}])"),
        transformations=[kit.merge(), kit.hide_columns("cluster", "simulated"),
                         kit.rename({"Value #A": "latest", "Value #B": "median",
                                     "Value #C": "growth"})], w=12))
    d.with_panel(kit.ts(
        "Phases of the latest restart", "cluster_node_phase:ndb_restart_phase_seconds:"
        "completed: per phase, so a grown phase (e.g. the LCP wait) stands out.", "s",
        kit.q(f"cluster_node_phase:ndb_restart_phase_seconds:completed{{{C}, {N}}}",
              "node {{node_id}} {{phase}}"), w=12, stack=False))
    d.with_panel(kit.ts(
        "Restarts completed", "Restarts completed per node in each interval.", "short",
        kit.q(f"sum by (node_id) (increase(ndb_restarts_completed_total{{{C}, {N}}}"
              f"[$__rate_interval]))", "node {{node_id}}"), w=12, bars=True))

    d.with_row(dash.Row("Restart in progress"))
    d.with_panel(kit.state_panel(
        "Restart status", "ndb_restart_status as restart_info's text: failure handling (red),"
        " the phase under way (yellow), completed (green; 24 = reported after a master"
        " takeover).", kit.q(f"ndb_restart_status{{{C}, {N}}}", "node {{node_id}}"),
        mappings=RESTART_STATUS_MAPPINGS, w=12))
    d.with_panel(kit.ts(
        "Start phase", "ndb_node_start_phase of restarting nodes.", "short",
        kit.q(f"ndb_node_start_phase{{{C}, {N}}}", "node {{node_id}}"), w=12))
    return d

