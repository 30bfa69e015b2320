"""Logs dashboard: the cluster's logs from Loki, with restart and recovery events.

The LogQL itself is the logs part's (clusterscope/logql.py), so the dashboards, the Compose
deployment and `clusterscope logs` run the same queries; after changing it, run
`clusterscope dashboards generate`.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit
from clusterscope.dashboards.uids import GALERA, LOGS, NDB_OVERVIEW, NDB_RESTARTS
from clusterscope.logs import logql

Q = logql.QUERIES


def annotation(name: str) -> dash.AnnotationQuery:
    a = next(a for a in logql.ANNOTATIONS if a["name"] == name)
    return (dash.AnnotationQuery().name(a["name"]).datasource(kit.LOKI).enable(True)
            .icon_color(a["iconColor"]).expr(a["expr"]))


def galera_annotations() -> list[dash.AnnotationQuery]:
    return [annotation(a["name"]) for a in logql.ANNOTATIONS if a["name"].startswith("Galera")]


def ndb_annotations() -> list[dash.AnnotationQuery]:
    return [annotation(a["name"]) for a in logql.ANNOTATIONS if a["name"].startswith("NDB")]


def logs() -> dash.Dashboard:
    d = kit.dashboard(LOGS, "Logs", "Galera error logs, the NDB cluster log and the exporters'"
                      " logs from Loki, with restart and recovery events as annotations.",
                      ["logs"], [(NDB_RESTARTS, "NDB restarts"), (GALERA, "Galera"),
                                 (NDB_OVERVIEW, "NDB overview")])
    d.with_variable(kit.loki_var("cluster", "cluster", "label_values(cluster)"))
    d.with_variable(kit.loki_var("node", "node", 'label_values({cluster="$cluster"}, node)',
                                 multi=True))
    for a in logql.ANNOTATIONS:
        d.annotation(annotation(a["name"]))
    d.with_panel(kit.note("Real or simulated?", kit.SIMULATED_NOTE + " Simulated log lines"
                          " carry the label `simulated=\"true\"`.", w=24, h=2))
    d.with_panel(kit.loki_ts("Errors by node", "Lines of level error or critical.", "short",
                             kit.lq(Q["errors_by_node"], "{{node}} {{component}}"), w=8))
    d.with_panel(kit.loki_ts("Warnings by node", "Lines of level warning.", "short",
                             kit.lq(Q["warnings_by_node"], "{{node}} {{component}}"), w=8))
    d.with_panel(kit.loki_ts("Lines by component", "Log lines per second per component.",
                             "short", kit.lq(Q["log_lines_by_component"], "{{component}}"),
                             w=8))
    d.with_panel(kit.loki_ts("Galera state changes", "wsrep state shifts per node.", "short",
                             kit.lq(Q["galera_state_changes_by_node"],
                                    "{{node}} -> {{to_state}}")))
    d.with_panel(kit.loki_ts("NDB start phases", "Start phases completed per node (cluster"
                             " log).", "short",
                             kit.lq(Q["ndb_start_phases_by_node"], "node {{node}}")))
    d.with_panel(kit.logs_panel("Galera recovery events", "State shifts, state transfer"
                                " requests, IST/SST lines.",
                                kit.lq(Q["galera_recovery_events"]), w=12, h=10))
    d.with_panel(kit.logs_panel("NDB restart phases", "The cluster log of node restarts,"
                                " phase by phase.", kit.lq(Q["ndb_restart_phases"]),
                                w=12, h=10))
    d.with_panel(kit.logs_panel("Errors", "Every error-or-worse line.", kit.lq(Q["errors"]),
                                h=8))
    d.with_panel(kit.logs_panel("All lines", "Every line of the selected cluster and nodes.",
                                kit.lq('{cluster=~"$cluster", node=~"$node"}'), h=14))
    return d
