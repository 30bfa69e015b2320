"""Logs dashboard: the clusters' logs from VictoriaLogs, with restart and recovery events.

The LogsQL itself is the logs part's (clusterscope/logs/logsql.py), so the dashboards,
`clusterscope logs` and the tests run the same queries; after changing it, run
`clusterscope dashboards generate`.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit
from clusterscope.dashboards.uids import GALERA, LOGS, NDB_OVERVIEW, NDB_RESTARTS
from clusterscope.logs import logsql

Q = logsql.QUERIES


def annotation(name: str) -> dash.AnnotationQuery:
    a = next(a for a in logsql.ANNOTATIONS if a["name"] == name)
    return kit.logs_annotation(a["name"], a["iconColor"], a["expr"])


def galera_annotations() -> list[dash.AnnotationQuery]:
    return [annotation(a["name"]) for a in logsql.ANNOTATIONS if a["name"].startswith("Galera")]


def ndb_annotations() -> list[dash.AnnotationQuery]:
    return [annotation(a["name"]) for a in logsql.ANNOTATIONS if a["name"].startswith("NDB")]


def logs() -> dash.Dashboard:
    d = kit.dashboard(LOGS, "Logs", "Galera error logs, the NDB cluster log and the exporters'"
                      " logs from VictoriaLogs, with restart and recovery events as"
                      " annotations.",
                      ["logs"], [(NDB_RESTARTS, "NDB restarts"), (GALERA, "Galera"),
                                 (NDB_OVERVIEW, "NDB overview")])
    d.with_variable(kit.logs_var("cluster", "cluster", "cluster"))
    d.with_variable(kit.logs_var("node", "node", "node", '{cluster="$cluster"}', multi=True))
    for a in logsql.ANNOTATIONS:
        d.annotation(annotation(a["name"]))
    d.with_panel(kit.note("Real or simulated?", kit.SIMULATED_NOTE + " Simulated log lines"
                          " carry the field `simulated=\"true\"`.", w=24, h=2))
    d.with_panel(kit.logs_ts("Errors by node", "Lines of level error or critical.", "short",
                             kit.lq_stats(Q["errors_by_node"], "{{node}} {{component}}"), w=8))
    d.with_panel(kit.logs_ts("Warnings by node", "Lines of level warning.", "short",
                             kit.lq_stats(Q["warnings_by_node"], "{{node}} {{component}}"),
                             w=8))
    d.with_panel(kit.logs_ts("Lines by component", "Log lines per second per component.",
                             "short", kit.lq_stats(Q["log_lines_by_component"],
                                                   "{{component}}"), w=8))
    d.with_panel(kit.logs_ts("Galera state changes", "wsrep state shifts per node.", "short",
                             kit.lq_stats(Q["galera_state_changes_by_node"],
                                          "{{node}} -> {{to_state}}")))
    d.with_panel(kit.logs_ts("NDB start phases", "Start phases completed per node (cluster"
                             " log).", "short",
                             kit.lq_stats(Q["ndb_start_phases_by_node"], "node {{node}}")))
    d.with_panel(kit.logs_panel("Galera recovery events", "State shifts, state transfer"
                                " requests, IST/SST lines.",
                                kit.lq(Q["galera_recovery_events"]), w=12, h=10))
    d.with_panel(kit.logs_panel("NDB restart phases", "The cluster log of node restarts,"
                                " phase by phase.", kit.lq(Q["ndb_restart_phases"]),
                                w=12, h=10))
    d.with_panel(kit.logs_panel("Errors", "Every error-or-worse line.", kit.lq(Q["errors"]),
                                h=8))
    d.with_panel(kit.logs_panel("All lines", "Every line of the selected cluster and nodes.",
                                kit.lq(Q["all_lines"]), h=14))
    return d
