# ruff: noqa: E501  (PromQL reads better unbroken)
"""Galera rules: node down / not ready, Primary component, sync, cluster size, flow control,
queues, certification, connections, recoveries, the recovery tracker.

mysqld_exporter turns `wsrep_cluster_status` Primary into 1 and non-Primary/Disconnected
into 0, and ON/OFF variables (`wsrep_desync`) into 1/0 (prometheus/mysqld_exporter
collector/global_status.go, parseStatus). Its `up` is the exporter's own scrape: a dead
mysqld_exporter is GaleraExporterDown, not a node down (`mysql_up` is the node).
"""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group, seconds


def groups(c: dict) -> list[Group]:
    g = c["galera"]
    s = c["selectors"]["galera"]
    t = c["selectors"]["galera_tracker"]
    st = "mysql_global_status"
    grp = Group("galera", "galera.yml", records=[
        # the metric keeps its name (mixin convention): only the level and the operation
        ("cluster_node:mysql_global_status_wsrep_flow_control_paused_ns:ratio_rate1m",
         f"max {WITHOUT} (rate({st}_wsrep_flow_control_paused_ns{{{s}}}[1m]) / 1e9)"),
        ("cluster_node:mysql_global_status_wsrep_local_recv_queue:max1m",
         f"max {WITHOUT} (max_over_time({st}_wsrep_local_recv_queue{{{s}}}[1m]))"),
        ("cluster:mysql_global_status_wsrep_cluster_size:max",
         f"max by (cluster) ({st}_wsrep_cluster_size{{{s}}})"),
        ("cluster_node_kind_method:galera_recovery_duration_seconds:last",
         f"max without (instance, job, donor) (galera_recovery_last_duration_seconds{{{t}}})"),
        ("cluster_kind:galera_recovery_duration_seconds:p90_1d",
         f"histogram_quantile(0.9, sum by (cluster, kind, le) ("
         f"increase(galera_recovery_duration_seconds_bucket{{{t}}}[1d])))"),
    ])
    slow = g["recovery_slow_seconds"]
    recent = g["recovery_recent"]
    inv = c["selectors"]["inventory"]
    size = f"max by (cluster) ({st}_wsrep_cluster_size{{{s}}})"
    hold = c["blind_spell_hold"]
    # fewer members than the description lists (nodes and garbd: both count in
    # wsrep_cluster_size); a cluster the description does not list is compared with the
    # largest size it had lately (Netdata's check), a day by default, since a shorter
    # history forgets a member lost for good (review oncall-2 N11)
    smaller = [f"({size} < on (cluster) sum by (cluster) (clusterscope_cluster_members"
               f"{{{inv},kind=\"galera\"}}))",
               f"({size} < on (cluster) max_over_time(cluster:{st}_wsrep_cluster_size:max"
               f"[{g['cluster_size_history']}])"
               f" unless on (cluster) clusterscope_cluster_info{{{inv},kind=\"galera\"}})"]
    recv_queue = (f"avg_over_time({st}_wsrep_local_recv_queue{{{s}}}[{g['recv_queue_avg_over']}])"
                  f" > {g['recv_queue_max']}")
    # the cluster's flow-control sender, named in the annotation rather than a label: a
    # label that changes with the top sender would restart the alert's `for` (review
    # oncall-2 N6); no sender with a rate (garbd, a node whose exporter is down) says so
    # (a Go template raw string in backquotes holds the selector's quotes as they are)
    sender = ("{{ with printf `topk(1, max without (instance, job) (rate("
              f"{st}_wsrep_flow_control_sent{{{s},cluster=\"%s\"}}[5m])) > 0)` $labels.cluster"
              " | query }}{{ . | first | label \"node\" }}{{ else }}a member that is not"
              " monitored (garbd, or a node whose exporter is down){{ end }}")
    grp.alerts += [
        # mysql_up held over the blind-spell hold: the exporter restarting must not resolve
        # a node that is down (review oncall-2 N4)
        Alert("GaleraNodeNotReady",
              f"last_over_time(mysql_up{{{s}}}[{hold}]) == 0 or {st}_wsrep_ready{{{s}}} == 0",
              "warning", "Galera node {{ $labels.node }} is down or not ready",
              "mysqld_exporter cannot query node {{ $labels.node }} of {{ $labels.cluster }}"
              " (mysql_up 0: the node is down) or the node refuses queries (wsrep_ready OFF),"
              f" for {g['node_not_ready_for']}.", "galera", g["node_not_ready_for"]),
        # mysqld_exporter has no last_scrape_error since v0.15.0 (prometheus/mysqld_exporter
        # commit 6ad9f25); v0.19.0 reports each collector as mysql_exporter_collector_success
        # {collector="collect.global_status"} (collector/exporter.go). A failing
        # global_variables silences desync, connection and gcache checks (review oncall-2 N5)
        Alert("GaleraExporterDown",
              f"up{{{s}}} == 0 or mysql_exporter_collector_success{{{s}}} == 0",
              "warning", "mysqld_exporter for {{ $labels.node }} is down or failing",
              "The mysqld_exporter scraped for node {{ $labels.node }} ({{ $labels.instance }})"
              " does not answer, or its collector {{ $labels.collector }} fails, for"
              f" {g['exporter_down_for']}: that node's Galera alerts are blind. Not a node"
              " failure by itself.", "galera", g["exporter_down_for"]),
        Alert("GaleraExporterAbsent",
              f"max by (cluster, node) (clusterscope_node_info{{{inv},role=\"galera\"}})"
              f" unless on (cluster, node) up{{{s}}}",
              "warning", "Galera node {{ $labels.node }} is described but not scraped",
              "Node {{ $labels.node }} of {{ $labels.cluster }} is in the description"
              " (clusterscope.yml) but no scrape of the galera job covers it, for"
              f" {g['exporter_down_for']}: the scrape configuration does not take the"
              " inventory's targets, so the node's alerts are blind.", "galera",
              g["exporter_down_for"]),
        # the whole cluster: no node answers, or none of those that answer is in a Primary
        # component (mysqld-mixin alerts/general.yaml MySQLDown and PMM mysql_down.yml are
        # critical; review oncall-2 N3)
        Alert("GaleraClusterDown",
              f"max by (cluster) (last_over_time(mysql_up{{{s}}}[{hold}])) == 0"
              f" or (max by (cluster) ({st}_wsrep_cluster_status{{{s}}}) == 0"
              f" and on (cluster) max by (cluster) (mysql_up{{{s}}}) == 1)",
              "critical", "Galera cluster {{ $labels.cluster }} is down",
              "No node of {{ $labels.cluster }} answers (mysql_up 0 on every node), or none of"
              " those that answer is in a Primary component, for"
              f" {g['cluster_down_for']}: the cluster takes no reads or writes.",
              "galera", g["cluster_down_for"], per_node=False),
        Alert("GaleraNonPrimary",
              f"{st}_wsrep_cluster_status{{{s}}} == 0",
              "critical", "Galera node {{ $labels.node }} is not in the Primary component",
              "Node {{ $labels.node }} of {{ $labels.cluster }} is in a non-Primary component"
              " (wsrep_cluster_status): it refuses writes and reads; the cluster lost quorum"
              " or the node is partitioned off.", "galera", g["non_primary_for"]),
        Alert("GaleraNodeOutOfSync",
              f"{st}_wsrep_local_state{{{s}}} != 4 unless on (instance)"
              f" mysql_global_variables_wsrep_desync{{{s}}} == 1",
              "warning", "Galera node {{ $labels.node }} not Synced (state {{ $value }})",
              "Node {{ $labels.node }} has been in wsrep_local_state {{ $value }} (1 Joining,"
              f" 2 Donor/Desynced, 3 Joined) for {g['out_of_sync_for']} without being desynced"
              " on purpose (wsrep_desync OFF).", "galera", g["out_of_sync_for"]),
        Alert("GaleraDonorFallingBehind",
              f"{st}_wsrep_local_state{{{s}}} == 2 and on (instance) {recv_queue}",
              "warning", "Galera donor {{ $labels.node }} falls behind",
              "Node {{ $labels.node }} is a donor (state 2) and its receive queue has averaged"
              f" more than {g['recv_queue_max']} write-sets over {g['recv_queue_avg_over']}, for"
              f" {g['recv_queue_for']}: it will hold"
              " the cluster back (flow control) once the transfer ends.", "galera",
              g["recv_queue_for"]),
        Alert("GaleraClusterSizeReduced", " or ".join(smaller),
              "warning", "Galera cluster {{ $labels.cluster }} has only {{ $value }} members",
              "The Primary component of {{ $labels.cluster }} has {{ $value }} members, fewer"
              " than the description lists (nodes and garbd) or than it had in the last"
              f" {g['cluster_size_history']}, for"
              f" {g['cluster_size_reduced_for']}: a member (node or garbd) left.", "galera",
              g["cluster_size_reduced_for"], per_node=False),
        Alert("GaleraFlowControlHigh",
              f"max by (cluster) (rate({st}_wsrep_flow_control_paused_ns{{{s}}}[5m]) / 1e9)"
              f" > {g['flow_control_paused_max']}",
              "warning", "Galera cluster {{ $labels.cluster }} paused by flow control"
              " {{ $value | humanizePercentage }} of the time",
              "Replication in {{ $labels.cluster }} was paused more than"
              f" {g['flow_control_paused_max']:.0%} of the time (every node pauses when one"
              f" sends FC_PAUSE). The node that sent the most pauses lately: {sender}; it"
              " cannot apply fast enough.", "galera",
              g["flow_control_for"], per_node=False),
        # a gauge sampled once per scrape: averaged, so one dip does not restart `for`
        # (review oncall-2 N12)
        Alert("GaleraRecvQueueHigh",
              f"{recv_queue} unless on (instance) {st}_wsrep_local_state{{{s}}} == 2",
              "warning", "Galera node {{ $labels.node }} receive queue averages"
              " {{ $value | printf \"%.0f\" }}",
              "Node {{ $labels.node }} has averaged more than"
              f" {g['recv_queue_max']} write-sets in its receive queue (over"
              f" {g['recv_queue_avg_over']}) for {g['recv_queue_for']}: it applies slower than"
              " the cluster writes and will"
              " send flow control.", "galera", g["recv_queue_for"]),
        Alert("GaleraCertificationFailures",
              f"max {WITHOUT} (rate({st}_wsrep_local_cert_failures{{{s}}}[5m])"
              f" + rate({st}_wsrep_local_bf_aborts{{{s}}}[5m])) > {g['cert_failures_per_second_max']}",
              "warning", "Galera node {{ $labels.node }}: {{ $value | printf \"%.1f\" }}"
              " certification failures and BF aborts per second",
              "Transactions on node {{ $labels.node }} fail certification or are aborted by"
              f" replicated ones more than {g['cert_failures_per_second_max']} times per"
              f" second, for {g['cert_failures_for']}: concurrent writes to the same rows on"
              " several nodes.", "galera", g["cert_failures_for"]),
        Alert("GaleraConnectionsHigh",
              # the peak of the window (PMM mysql_too_many_connections.yml: max_over_time)
              f"max {WITHOUT} (max_over_time({st}_threads_connected{{{s}}}[{g['connections_max_over']}])"
              f" / mysql_global_variables_max_connections{{{s}}}) > {g['connections_used_ratio_max']}",
              "warning", "Galera node {{ $labels.node }} uses {{ $value | humanizePercentage }}"
              " of max_connections",
              f"Node {{{{ $labels.node }}}} has had more than {g['connections_used_ratio_max']:.0%}"
              f" of max_connections in use for {g['connections_for']}; at 100 % clients get"
              " error 1040 (too many connections).", "galera", g["connections_for"]),
        Alert("GaleraNodeRestarted",
              f"{st}_uptime{{{s}}} < {seconds(g['restarted_within'])}",
              "info", "Galera node {{ $labels.node }} restarted",
              "mysqld on node {{ $labels.node }} has been up for less than"
              f" {g['restarted_within']}.", "galera"),
        Alert("GaleraGcacheTooSmall",
              f"mysql_galera_gcache_size_bytes{{{s}}} / on (cluster) group_left ()"
              f" (sum by (cluster) (rate({st}_wsrep_replicated_bytes{{{s}}}[1h])) > 0)"
              f" < {seconds(g['ist_downtime_min'])}",
              "info", "Galera node {{ $labels.node }} can be down only"
              " {{ $value | humanizeDuration }} before it needs an SST",
              "At the last hour's write rate, the gcache of node {{ $labels.node }} holds"
              " {{ $value | humanizeDuration }} of write-sets, less than"
              f" {g['ist_downtime_min']}: a restart that takes longer rejoins by a full SST.",
              "galera", g["gcache_for"]),
        Alert("GaleraRecoveryUsedSST",
              f"(time() - max without (instance, job, method, donor)"
              f" (galera_recovery_last_end_timestamp_seconds{{{t},kind=\"sst\"}}) < {seconds(g['sst_recent'])})"
              # a node whose second recovery this is: a donor also returns to SYNCED,
              # so its state transitions would count a donation as an earlier join
              f" and on (cluster, node) (sum without (instance, job, kind, method)"
              f" (galera_recoveries_total{{{t}}}) >= 2)",
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
        # A recovery that never ends (a hung donor, a transfer stalled on the network) is
        # judged while it runs: GaleraRecoverySlow only sees finished ones (oncall-2 N10).
        # The in-progress series has no kind (IST or SST is known at its end), so the
        # slowest allowed recovery, an SST's, is the bound.
        Alert("GaleraRecoveryStuck",
              f"time() - galera_recovery_started_timestamp_seconds{{{t}}} > {slow['sst']}"
              f" and on (cluster, node) galera_recovery_in_progress{{{t}}} == 1",
              "warning", "Galera node {{ $labels.node }} has been recovering for"
              " {{ $value | humanizeDuration }}",
              "Node {{ $labels.node }} has been between JOINER and SYNCED for"
              " {{ $value | humanizeDuration }}, longer than an SST may take"
              f" ({slow['sst']} s): the state transfer is stalled or far slower than"
              " planned.", "galera"),
        Alert("GaleraTrackerDown",
              f"up{{{t}}} == 0 or galera_tracker_log_up{{{t}}} == 0",
              "warning", "Galera recovery tracker {{ $labels.instance }} is blind",
              "The recovery tracker does not answer scrapes (up 0) or cannot read a node's"
              f" error log (galera_tracker_log_up 0) for {g['tracker_down_for']}: SST/IST"
              " durations are not measured.", "galera", g["tracker_down_for"], per_node=False),
        Alert("GaleraRecoveryAborted",
              f"increase(galera_recoveries_aborted_total{{{t}}}[1h]) > 0",
              "info", "Galera node {{ $labels.node }} had a recovery cut short",
              "A recovery of node {{ $labels.node }} ended without reaching SYNCED in the last"
              " hour (a restart during the transfer, or a fall back to CLOSED/OPEN).",
              "galera"),
    ]
    return [grp]
