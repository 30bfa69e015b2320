# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB alerts on traffic: LDM thread CPU and the transporters between nodes."""

from __future__ import annotations

from clusterscope.rules.fragments import ldm_cpu_percent
from clusterscope.rules.rule_model import WITHOUT, Alert, Runbook


def running_peer_expr(s: str) -> str:
    """A link to a data node that runs: the peer's own node id as remote_node_id."""
    return (f"label_replace(max {WITHOUT} (ndb_data_node_running{{{s}}}) == 1,"
            f" \"remote_node_id\", \"$1\", \"node_id\", \"(.*)\")")


def _ldm_cpu_saturated(c: dict) -> Alert:
    n = c["ndb"]
    ldm_cpu_avg = ldm_cpu_percent(c["selectors"]["ndb"], modes=c["ndb"]["ldm_cpu_modes"],
                                  avg_over=c["ndb"]["ldm_cpu_avg_over"])
    return Alert(name="NdbLdmCpuSaturated",
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
                                " (`ThreadConfig`/`AutomaticThreadConfig`), or add node groups."))


def _transporter_overloaded(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbTransporterOverloaded",
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
                                " or reduce batch sizes."))


def _transporter_disconnected(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    running_peer = running_peer_expr(c["selectors"]["ndb"])
    return Alert(name="NdbTransporterDisconnected",
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
                                " for good, restart it."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_ldm_cpu_saturated, _transporter_overloaded,
                                 _transporter_disconnected)]
