# ruff: noqa: E501  (PromQL reads better unbroken)
"""Galera rules: node readiness and sync, cluster size, flow control, recoveries."""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group, seconds


def groups(c: dict) -> list[Group]:
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
              f" galera_recovery_last_end_timestamp_seconds{{{t}}} < {seconds(recent)})",
              "warning", "Galera node {{ $labels.node }} {{ $labels.kind }} took"
              " {{ $value | humanizeDuration }}",
              "The last {{ $labels.kind }} recovery of node {{ $labels.node }} (donor"
              " {{ $labels.donor }}) took {{ $value | humanizeDuration }}, over the"
              f" threshold (IST {slow['ist']} s, SST {slow['sst']} s).", "galera"),
    ]
    return [grp]
