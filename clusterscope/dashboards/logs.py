"""Logs dashboard: the cluster's logs from Loki, with restart and recovery events."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit, logql
from clusterscope.dashboards.galera import recovery_annotation
from clusterscope.dashboards.ndb import restart_annotation
from clusterscope.dashboards.uids import GALERA, LOGS, NDB_OVERVIEW, NDB_RESTARTS


def logs() -> dash.Dashboard:
    d = kit.dashboard(LOGS, "Logs", "Galera error logs, the NDB cluster log and the exporters'"
                      " logs from Loki, with restart and recovery events as annotations.",
                      ["logs"], [(NDB_RESTARTS, "NDB restarts"), (GALERA, "Galera"),
                                 (NDB_OVERVIEW, "NDB overview")])
    d.with_variable(kit.loki_var("cluster", "cluster", "label_values(cluster)"))
    d.with_variable(kit.loki_var("node", "node", 'label_values({cluster="$cluster"}, node)',
                                 multi=True))
    d.annotation(restart_annotation()).annotation(recovery_annotation())
    d.with_panel(kit.note("Simulated?", kit.SIMULATED_NOTE, w=24, h=2))
    d.with_panel(kit.loki_ts("Errors and warnings by node", "Lines marked [ERROR]/[Warning]"
                             " (MariaDB) or ALERT/WARNING/ERROR (ndb_mgmd) per node.", "short",
                             kit.lq(logql.ERRORS_BY_NODE, "{{node}}")))
    d.with_panel(kit.loki_ts("Lines by component", "Log lines per component.", "short",
                             kit.lq(logql.LINES_BY_COMPONENT, "{{component}}")))
    d.with_panel(kit.logs_panel("Restart and recovery events", "NDB restart phases"
                                " (ndb_mgmd wording) and Galera state transfers.",
                                kit.lq(logql.NDB_RESTART_PHASES), kit.lq(logql.RECOVERY_LINES),
                                h=10))
    d.with_panel(kit.logs_panel("All lines", "Every line of the selected cluster and nodes.",
                                kit.lq(logql.ALL_LINES), h=14))
    return d
