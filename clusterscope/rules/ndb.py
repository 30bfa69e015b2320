# ruff: noqa: E501  (PromQL reads better unbroken)
"""The NDB rule groups: which alerts and records land in which group of rules/ndb.yml.

The rooms: ndb_restarts (restart events, baselines, regressions), ndb_availability,
ndb_capacity, ndb_traffic, ndb_exporter_health (the ndb-nodes group), ndb_workload (tables
and the disk page buffer) with ndb_locks and ndb_latency (the ndb-workload group).
"""

from __future__ import annotations

from clusterscope.rules import (
    ndb_availability,
    ndb_capacity,
    ndb_exporter_health,
    ndb_restarts,
    ndb_traffic,
    ndb_workload,
)
from clusterscope.rules.fragments import ldm_cpu_percent
from clusterscope.rules.ndb_first_steps import FIRST_STEPS
from clusterscope.rules.rule_model import WITHOUT, Group


def groups(c: dict) -> list[Group]:
    return [ndb_restarts.restarts(c), nodes(c), ndb_workload.workload(c)]


def nodes(c: dict) -> Group:
    """The ndb-nodes group: availability, capacity, traffic and the exporter's health."""
    n, s = c["ndb"], c["selectors"]["ndb"]
    ldm_cpu = ldm_cpu_percent(s, modes=n["ldm_cpu_modes"])
    g = Group("ndb-nodes", "ndb.yml", first_steps=FIRST_STEPS, records=[
        ("cluster:ndb_lcp_duration_seconds:last",
         f"max {WITHOUT} (ndb_lcp_last_duration_seconds{{{s}}})"),
        ("cluster_node:ndb_redo_log_space_used:max_part_ratio",
         ndb_capacity.log_space_used_ratio(s, "REDO")),
        ("cluster_node:ndb_undo_log_space_used:max_ratio",
         ndb_capacity.log_space_used_ratio(s, "DD-UNDO")),
        ("cluster_node:ndb_data_memory_used:ratio", ndb_capacity.data_memory_used_ratio(s)),
        ("cluster_node:ndb_ldm_cpu_percent:mean",
         f"avg without (instance, job, thr_no, thread_name) ({ldm_cpu})"),
        ("cluster_node:ndb_ldm_cpu_percent:max",
         f"max without (instance, job, thr_no, thread_name) ({ldm_cpu})"),
        ("cluster_node:ndb_transporter_sent_bytes:rate1m",
         f"sum without (instance, job, remote_node_id) (rate(ndb_transporter_sent_bytes_total{{{s}}}[1m]))"),
        ("cluster_node:ndb_transporter_received_bytes:rate1m",
         f"sum without (instance, job, remote_node_id) ("
         f"rate(ndb_transporter_received_bytes_total{{{s}}}[1m]))"),
        ndb_availability.node_group_record(c),
    ])
    g.alerts += [*ndb_availability.alerts(c), *ndb_capacity.alerts(c), *ndb_traffic.alerts(c),
                 *ndb_exporter_health.alerts(c)]
    return g
