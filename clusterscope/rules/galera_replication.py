# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""Galera alerts on replication: a donor behind, flow control, the receive queue,
certification failures, connections and the gcache."""

from __future__ import annotations

from clusterscope.rules.galera_membership import ST
from clusterscope.rules.rule_model import WITHOUT, Alert, Runbook, seconds


def _recv_queue(c: dict) -> str:
    g, s = c["galera"], c["selectors"]["galera"]
    return (f"avg_over_time({ST}_wsrep_local_recv_queue{{{s}}}[{g['recv_queue_avg_over']}])"
            f" > {g['recv_queue_max']}")


def _sender(c: dict) -> str:
    """The cluster's flow-control sender, named in the annotation rather than a label: a
    label that changes with the top sender would restart the alert's `for`; no sender with a
    rate (garbd, a node whose exporter is down) says so. A Go template raw string in
    backquotes holds the selector's quotes as they are."""
    s = c["selectors"]["galera"]
    return ("{{ with printf `topk(1, max without (instance, job) (rate("
            f"{ST}_wsrep_flow_control_sent{{{s},cluster=\"%s\"}}[5m])) > 0)` $labels.cluster"
            " | query }}{{ . | first | label \"node\" }}{{ else }}a member that is not"
            " monitored (garbd, or a node whose exporter is down){{ end }}")


def _donor_falling_behind(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    recv_queue = _recv_queue(c)
    return Alert(name="GaleraDonorFallingBehind",
                 expr=f"{ST}_wsrep_local_state{{{s}}} == 2 and on (instance) {recv_queue}",
                 severity="warning",
                 summary="Galera donor {{ $labels.node }} falls behind",
                 description="Node {{ $labels.node }} is a donor (state 2) and its receive queue has averaged"
                             f" more than {g['recv_queue_max']} write-sets over {g['recv_queue_avg_over']}, for"
                             f" {g['recv_queue_for']}: it will hold"
                             " the cluster back (flow control) once the transfer ends.",
                 dashboard="galera",
                 for_=g["recv_queue_for"],
                 runbook=Runbook(
                     meaning="A donor (state 2) has held more than 100 write-sets in its receive queue for"
                             " 5 minutes (the mysqld-mixin's MySQLGaleraDonorFallingBehind).",
                     impact="After the transfer it must apply the backlog; meanwhile it may send flow"
                            " control and slow the cluster.",
                     diagnosis="- `wsrep_local_recv_queue`, `wsrep_local_state_comment` on the donor.\n"
                               "- The SST method (rsync blocks the donor; mariabackup does not).",
                     mitigation="Prefer mariabackup SST and a dedicated donor (`wsrep_sst_donor`); avoid"
                                " write peaks during SSTs."))


def _flow_control_high(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    sender = _sender(c)
    return Alert(name="GaleraFlowControlHigh",
                 expr=f"max by (cluster) (rate({ST}_wsrep_flow_control_paused_ns{{{s}}}[5m]) / 1e9)"
                      f" > {g['flow_control_paused_max']}",
                 severity="warning",
                 summary="Galera cluster {{ $labels.cluster }} paused by flow control"
                         " {{ $value | humanizePercentage }} of the time",
                 description="Replication in {{ $labels.cluster }} was paused more than"
                             f" {g['flow_control_paused_max']:.0%} of the time (every node pauses when one"
                             f" sends FC_PAUSE). The node that sent the most pauses lately: {sender}; it"
                             " cannot apply fast enough.",
                 dashboard="galera",
                 for_=g["flow_control_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="Replication in the cluster was paused by flow control more than 10 % of the"
                             " time over 5 minutes (rate of `wsrep_flow_control_paused_ns`; every node"
                             " pauses when any node sends FC_PAUSE), for 5 minutes. One alert per"
                             " cluster; its description names the node that sent the most pauses lately"
                             " (`wsrep_flow_control_sent`), or says it is a member that is not monitored"
                             " (garbd, or a node whose exporter is down) when no monitored node sent any.",
                     impact="The whole cluster writes only as fast as its slowest node applies.",
                     diagnosis="- `wsrep_local_recv_queue`, `wsrep_flow_control_sent` per node: the one"
                               " sending pauses is slow.\n- That node's CPU/disk; `wsrep_slave_threads`.",
                     mitigation="Fix or offload the slow node; raise `wsrep_slave_threads` or"
                                " `gcs.fc_limit`."))


def _recv_queue_high(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    recv_queue = _recv_queue(c)
    # a gauge sampled once per scrape: averaged, so one dip does not restart `for`
    #
    return Alert(name="GaleraRecvQueueHigh",
                 expr=f"{recv_queue} unless on (instance) {ST}_wsrep_local_state{{{s}}} == 2",
                 severity="warning",
                 summary="Galera node {{ $labels.node }} receive queue averages"
                         " {{ $value | printf \"%.0f\" }}",
                 description="Node {{ $labels.node }} has averaged more than"
                             f" {g['recv_queue_max']} write-sets in its receive queue (over"
                             f" {g['recv_queue_avg_over']}) for {g['recv_queue_for']}: it applies slower than"
                             " the cluster writes and will"
                             " send flow control.",
                 dashboard="galera",
                 for_=g["recv_queue_for"],
                 runbook=Runbook(
                     meaning="A node (not a donor) has averaged more than 100 write-sets in its receive"
                             " queue over 5 minutes, for 5 minutes (averaged: the queue is sampled once"
                             " per scrape, so a dip in one sample does not restart the wait).",
                     impact="It applies slower than the cluster writes; flow control will pause everyone.",
                     diagnosis="- `wsrep_local_recv_queue_avg`, `wsrep_flow_control_sent` on the node.\n"
                               "- Its CPU, disk and `wsrep_slave_threads`.",
                     mitigation="Raise `wsrep_slave_threads`, fix the node's I/O, or move load away."))


def _certification_failures(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    return Alert(name="GaleraCertificationFailures",
                 expr=f"max {WITHOUT} (rate({ST}_wsrep_local_cert_failures{{{s}}}[5m])"
                      f" + rate({ST}_wsrep_local_bf_aborts{{{s}}}[5m])) > {g['cert_failures_per_second_max']}",
                 severity="warning",
                 summary="Galera node {{ $labels.node }}: {{ $value | printf \"%.1f\" }}"
                         " certification failures and BF aborts per second",
                 description="Transactions on node {{ $labels.node }} fail certification or are aborted by"
                             f" replicated ones more than {g['cert_failures_per_second_max']} times per"
                             f" second, for {g['cert_failures_for']}: concurrent writes to the same rows on"
                             " several nodes.",
                 dashboard="galera",
                 for_=g["cert_failures_for"],
                 runbook=Runbook(
                     meaning="Certification failures plus brute-force aborts on a node exceed 1 per second"
                             " for 10 minutes.",
                     impact="Clients see deadlock errors (1213) and retry: wasted work and latency.",
                     diagnosis="- `wsrep_local_cert_failures`, `wsrep_local_bf_aborts` per node.\n"
                               "- Which tables: the error log with `wsrep_log_conflicts=ON`.",
                     mitigation="Send writes for the same rows to one node (a single writer or affinity"
                                " per table), smaller transactions."))


def _connections_high(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    return Alert(name="GaleraConnectionsHigh",
                 expr=f"max {WITHOUT} (max_over_time({ST}_threads_connected{{{s}}}[{g['connections_max_over']}])"
                      f" / mysql_global_variables_max_connections{{{s}}}) > {g['connections_used_ratio_max']}",
                 severity="warning",
                 summary="Galera node {{ $labels.node }} uses {{ $value | humanizePercentage }}"
                         " of max_connections",
                 description=f"Node {{{{ $labels.node }}}} has had more than {g['connections_used_ratio_max']:.0%}"
                             f" of max_connections in use for {g['connections_for']}; at 100 % clients get"
                             " error 1040 (too many connections).",
                 dashboard="galera",
                 for_=g["connections_for"],
                 runbook=Runbook(
                     meaning="The peak of `Threads_connected` in each 5-minute window has been above"
                             " 80 % of `max_connections` on a node for 5 minutes (PMM's"
                             " mysql_too_many_connections takes the maximum the same way).",
                     impact="At 100 % new clients get error 1040 (too many connections).",
                     diagnosis="- `SHOW PROCESSLIST;` (who holds them, sleeping connections).\n"
                               "- Connection pool sizes of the applications.",
                     mitigation="Fix leaking pools, lower idle timeouts, or raise `max_connections`."))


def _gcache_too_small(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    return Alert(name="GaleraGcacheTooSmall",
                 expr=f"mysql_galera_gcache_size_bytes{{{s}}} / on (cluster) group_left ()"
                      f" (sum by (cluster) (rate({ST}_wsrep_replicated_bytes{{{s}}}[1h])) > 0)"
                      f" < {seconds(g['ist_downtime_min'])}",
                 severity="info",
                 summary="Galera node {{ $labels.node }} can be down only"
                         " {{ $value | humanizeDuration }} before it needs an SST",
                 description="At the last hour's write rate, the gcache of node {{ $labels.node }} holds"
                             " {{ $value | humanizeDuration }} of write-sets, less than"
                             f" {g['ist_downtime_min']}: a restart that takes longer rejoins by a full SST.",
                 dashboard="galera",
                 for_=g["gcache_for"],
                 runbook=Runbook(
                     meaning="At the last hour's write rate, the node's gcache holds less than 30 minutes"
                             " of write-sets, for an hour.",
                     impact="A node down longer than that cannot rejoin by IST and needs a full SST.",
                     diagnosis="- `mysql_galera_gcache_size_bytes` and the replicated bytes rate; the"
                               " \"Downtime before an SST is needed\" panel.",
                     mitigation="Raise `gcache.size` (wsrep_provider_options; a restart) to cover the"
                                " longest planned downtime."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_donor_falling_behind, _flow_control_high, _recv_queue_high,
                                 _certification_failures, _connections_high, _gcache_too_small)]
