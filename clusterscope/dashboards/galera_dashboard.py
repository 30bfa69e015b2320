"""Galera cluster and node dashboard: mysqld_exporter's wsrep series, the recovery tracker's
metrics and the monitoring rules' recorded series."""

from __future__ import annotations

from galera_tracker.tracker import STATES
from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit
from clusterscope.dashboards.host_dashboard import host_row
from clusterscope.dashboards.logs_dashboard import galera_annotations
from clusterscope.dashboards.uids import EXPERIMENTS, GALERA, LOGS, NDB_OVERVIEW
from clusterscope.rules.rules_config import shared

FC_PAUSED = "cluster_node:mysql_global_status_wsrep_flow_control_paused_ns:ratio_rate1m"
C = 'cluster="$cluster"'
N = 'node=~"$node"'
CN = f"{C}, {N}"
CFG = shared()["galera"]
TRACKER_COLOURS = {"SYNCED": "green", "DONOR/DESYNCED": "orange", "JOINER": "blue",
                   "JOINED": "yellow", "PRIMARY": "purple", "OPEN": "red", "CLOSED": "red"}
WSREP_STATES = {"1": ("Joining", "blue"), "2": ("Donor/Desynced", "orange"),
                "3": ("Joined", "yellow"), "4": ("Synced", "green")}


def galera() -> dash.Dashboard:
    d = kit.dashboard(GALERA, "Galera cluster and nodes",
                      "wsrep state, cluster size, flow control, queues, certification"
                      " failures, replication latency, IST progress, downtime before an SST"
                      " is needed, and every recovery with kind, method, donor and duration.",
                      ["galera"], [(LOGS, "Logs"), (EXPERIMENTS, "Experiments"),
                                   (NDB_OVERVIEW, "NDB overview")])
    # the clusters and nodes of the description (clusterscope.yml, via the inventory): a
    # node that is down or never scraped is still listed
    d.with_variable(kit.prom_var("cluster", "cluster",
                                 'label_values(clusterscope_cluster_info{kind="galera"}, cluster)'))
    d.with_variable(kit.prom_var(
        "node", "node", f'label_values(clusterscope_node_info{{{C},role="galera"}}, node)',
        multi=True))
    for a in galera_annotations():
        d.annotation(a)

    _cluster_row(d)
    _replication_row(d)
    _recovery_row(d)
    host_row(d, CN, "{{node}}")
    return d


def _cluster_row(d: dash.Dashboard) -> None:
    d.with_row(dash.Row("Cluster"))
    d.with_panel(kit.stat_panel(
        "Cluster size", "Largest wsrep_cluster_size any node reports (recorded:"
        " cluster:mysql_global_status_wsrep_cluster_size:max).", "short",
        kit.q(f"cluster:mysql_global_status_wsrep_cluster_size:max{{{C}}}")))
    d.with_panel(kit.stat_panel(
        "Nodes up", "mysql_up per node: a dead node's wsrep series vanish, this does not.",
        "none", kit.q(f"mysql_up{{{CN}}}", "{{node}}"), w=8,
        mappings={"1": ("UP", "green"), "0": ("DOWN", "red")}))
    d.with_panel(kit.stat_panel(
        "Recoveries in progress", "Nodes between PRIMARY -> JOINER and JOINED -> SYNCED.",
        "short", kit.q(f"sum(galera_recovery_in_progress{{{CN}}})")))
    d.with_panel(kit.stat_panel(
        "Ready", "wsrep_ready per node.", "none",
        kit.q(f"mysql_global_status_wsrep_ready{{{CN}}}", "{{node}}"), w=8,
        mappings={"1": ("READY", "green"), "0": ("NOT READY", "red")}))
    d.with_panel(kit.state_panel(
        "wsrep state", "wsrep_local_state per node (4 Synced, 2 Donor/Desynced, 1 Joining,"
        " 3 Joined); a gap means the node was down.",
        kit.q(f"mysql_global_status_wsrep_local_state{{{CN}}}", "{{node}}"),
        mappings=WSREP_STATES, w=12))
    # galera_state is one series per (node, state); one row per node, the state's index
    # mapped back to its name, instead of 7 mostly empty rows per node
    current = " or ".join(
        f'{i} * max by (node) (galera_state{{{CN}, state="{name}"}} == 1)'
        for i, name in enumerate(STATES, start=1))
    d.with_panel(kit.state_panel(
        "Tracker state", "The recovery tracker's view from the error log (galera_state).",
        kit.q(current, "{{node}}"),
        mappings={str(i): (name, TRACKER_COLOURS.get(name, "text"))
                  for i, name in enumerate(STATES, start=1)}, w=12))
    d.with_panel(kit.ts(
        "Cluster size per node", "wsrep_cluster_size as each node sees it.", "short",
        kit.q(f"mysql_global_status_wsrep_cluster_size{{{CN}}}", "{{node}}"), w=12))
    d.with_panel(kit.ts(
        "State transitions", "wsrep state changes per interval, from the error logs.", "short",
        kit.q(f"sum by (node, to) (increase(galera_state_transitions_total{{{CN}}}"
              f"[$__rate_interval]))", "{{node}} -> {{to}}"), w=12, bars=True))


def _replication_row(d: dash.Dashboard) -> None:
    d.with_row(dash.Row("Replication"))
    d.with_panel(kit.share(
        "Flow control paused", "Share of time replication was paused by flow control"
        f" (recorded: {FC_PAUSED}); the pause is cluster-wide, the node sending FC_PAUSE is"
        " the slow one (next panel); red: GaleraFlowControlHigh's threshold.",
        kit.q(f"{FC_PAUSED}{{{CN}}}", "{{node}}"), threshold=CFG["flow_control_paused_max"]))
    d.with_panel(kit.ts(
        "Flow control messages", "FC_PAUSE messages sent (this node asked the cluster to"
        " wait: its receive queue hit the limit) and received.", "short",
        kit.q(f"increase(mysql_global_status_wsrep_flow_control_sent{{{CN}}}"
              f"[$__rate_interval])", "{{node}} sent"),
        kit.q(f"increase(mysql_global_status_wsrep_flow_control_recv{{{CN}}}"
              f"[$__rate_interval])", "{{node}} received"), w=8))
    d.with_panel(kit.ts(
        "Queues", "Receive queue (max over 1 m, recorded) and send queue per node; the"
        " receive queue near gcs.fc_limit triggers flow control.", "short",
        kit.q(f"cluster_node:mysql_global_status_wsrep_local_recv_queue:max1m{{{CN}}}",
              "{{node}} recv"),
        kit.q(f"mysql_global_status_wsrep_local_send_queue{{{CN}}}", "{{node}} send"), w=8))
    d.with_panel(kit.ts(
        "Certification failures and BF aborts", "Write-set conflicts per second.", "ops",
        kit.q(f"rate(mysql_global_status_wsrep_local_cert_failures{{{CN}}}"
              f"[$__rate_interval])", "{{node}} cert failures"),
        kit.q(f"rate(mysql_global_status_wsrep_local_bf_aborts{{{CN}}}[$__rate_interval])",
              "{{node}} BF aborts"), w=8))
    d.with_panel(kit.ts(
        "Replication latency", "EVS replication latency (wsrep_evs_repl_latency avg/max).",
        "s",
        kit.q(f"mysql_galera_evs_repl_latency_avg_seconds{{{CN}}}", "{{node}} avg"),
        kit.q(f"mysql_galera_evs_repl_latency_max_seconds{{{CN}}}", "{{node}} max"), w=8))
    d.with_panel(kit.ts(
        "Parallelism efficiency", "wsrep_cert_deps_distance (how many write-sets could apply"
        " in parallel) against the applier threads.", "short",
        kit.q(f"mysql_global_status_wsrep_cert_deps_distance{{{CN}}}", "{{node}} deps distance"),
        kit.q(f"mysql_global_status_wsrep_applier_thread_count{{{CN}}}", "{{node}} appliers"),
        w=8))
    d.with_panel(kit.ts(
        "Replicated bytes", "Write-sets replicated (sent) and received per second.", "Bps",
        kit.q(f"rate(mysql_global_status_wsrep_replicated_bytes{{{CN}}}[$__rate_interval])",
              "{{node}} replicated"),
        kit.q(f"rate(mysql_global_status_wsrep_received_bytes{{{CN}}}[$__rate_interval])",
              "{{node}} received"), w=12))


def _recovery_row(d: dash.Dashboard) -> None:
    d.with_row(dash.Row("Recovery"))
    d.with_panel(kit.ts(
        "IST progress (seqno lag)", "How many write-sets a node is behind the most advanced"
        " one (wsrep_last_committed): a joiner's IST drains this to 0.", "short",
        kit.q(f"max(mysql_global_status_wsrep_last_committed{{{C}}}) - on () group_right ()"
              f" mysql_global_status_wsrep_last_committed{{{CN}}}", "{{node}}"), w=12))
    d.with_panel(kit.ts(
        "Downtime before an SST is needed", "gcache size divided by the write-set rate: a"
        " node down longer than this cannot rejoin by IST (estimate, 5 m rate).", "s",
        kit.q(f"mysql_galera_gcache_size_bytes{{{CN}}} / on (cluster) group_left ()"
              f" (sum by (cluster) (rate(mysql_global_status_wsrep_replicated_bytes{{{C}}}[5m]))"
              f" > 0)", "{{node}}"), w=12))
    d.with_panel(kit.table_panel(
        "Last recovery per node", "galera_recovery_last_duration_seconds: kind (ist/sst),"
        " method and donor of each node's latest recovery, measured from its error log.", "s",
        kit.table_q(f"galera_recovery_last_duration_seconds{{{CN}}}"),
        transformations=[kit.hide_columns()], w=12))
    d.with_panel(kit.ts(
        "Recovery durations", "Latest recovery per node and kind (recorded), and the 90th"
        " percentile over a day per kind.", "s",
        kit.q(f"cluster_node_kind_method:galera_recovery_duration_seconds:last{{{CN}}}",
              "{{node}} {{kind}} {{method}}"),
        kit.q(f"cluster_kind:galera_recovery_duration_seconds:p90_1d{{{C}}}", "p90 {{kind}}"),
        w=12))
    d.with_panel(kit.ts(
        "Recoveries completed", "Completed recoveries per interval by kind and method.",
        "short",
        kit.q(f"sum by (node, kind, method) (increase(galera_recoveries_total{{{CN}}}"
              f"[$__rate_interval]))", "{{node}} {{kind}} {{method}}"), w=12, bars=True))
    d.with_panel(kit.state_panel(
        "Recovery in progress", "galera_recovery_in_progress: from PRIMARY -> JOINER to"
        " JOINED -> SYNCED in the node's error log.",
        kit.q(f"galera_recovery_in_progress{{{CN}}}", "{{node}}"),
        mappings={"0": ("no", "green"), "1": ("RECOVERING", "orange")}, w=12))
    d.with_panel(kit.ts(
        "Time in the current state", "Seconds since the node's last wsrep state change (a"
        " running recovery shows how long it has taken so far).", "s",
        kit.q(f"time() - galera_state_last_change_timestamp_seconds{{{CN}}}", "{{node}}"),
        w=12))

