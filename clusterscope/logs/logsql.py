"""The LogQL the dashboards use, and the restart/recovery events as Grafana annotations.

Plain data (strings and dicts) so the dashboards generator, the Compose deployment and the
`clusterscope logs` CLI all use the same queries. Queries carry Grafana variables
(`$cluster`, `$node` as regex matchers, `$__auto` as the range); `render()` fills them for
use outside Grafana. Labels: see clusterscope/logs/formats.py.
"""

from __future__ import annotations

import re

# Event kinds found in the logs: kind -> (component, regex on the line). The regexes are
# RE2/Python compatible; the Galera ones follow the wsrep wording the galera_tracker reads,
# the NDB ones ndb_mgmd's cluster-log wording (the simulator writes the same).
EVENTS: dict[str, tuple[str, str]] = {
    # Galera / mariadbd
    "galera_state_change": ("mariadb", r"Shifting [A-Z/]+ -> [A-Z/]+"),
    "galera_transfer_requested": ("mariadb", r"requested state transfer from"),
    "galera_sst_started": ("mariadb", r"\S+ SST started on (?:joiner|donor)"),
    "galera_transfer_completed": ("mariadb", r"(?:SST|IST) completed on joiner"
                                             r"|State transfer (?:to|from) .* complete"),
    "galera_ist_received": ("mariadb", r"IST received: "),
    "galera_sst_received": ("mariadb", r"SST received: "),
    # NDB (ndb_mgmd cluster log)
    "ndb_start_initiated": ("ndb_mgmd", r"Start initiated \("),
    "ndb_start_phase": ("ndb_mgmd", r"Start phase \d+ completed"),
    # `Started (version 7.6.x)` before 8.0.26, `Started (mysql-8.0.x ndb-8.0.x)` since
    "ndb_started": ("ndb_mgmd", r"Started \((?:version |mysql-)"),
    "ndb_node_restart": ("ndb_mgmd", r"Node restart (?:completed|starting)|Restarting node"),
    "ndb_shutdown": ("ndb_mgmd", r"(?:Forced node shutdown|Node shutdown) (?:initiated|completed)"),
    "ndb_disconnected": ("ndb_mgmd", r"Node \d+ Disconnected"),
}

GALERA_RECOVERY_KINDS = [k for k, (c, _) in EVENTS.items() if c == "mariadb"]
NDB_RESTART_KINDS = [k for k, (c, _) in EVENTS.items() if c == "ndb_mgmd"]


def _alternation(kinds: list[str]) -> str:
    return "|".join(EVENTS[k][1] for k in kinds)


def _q(pattern: str) -> str:
    """A LogQL double-quoted string."""
    return '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'


GALERA_SELECTOR = '{cluster=~"$cluster", component="mariadb", node=~"$node"}'
NDB_SELECTOR = '{cluster=~"$cluster", component="ndb_mgmd"}'

QUERIES: dict[str, str] = {
    # Log panels -------------------------------------------------------------------------
    # A Galera node's recovery as it happened: state shifts, state transfer, IST/SST.
    "galera_recovery_events": (
        f"{GALERA_SELECTOR} |~ {_q(_alternation(GALERA_RECOVERY_KINDS))}"
        ' | regexp "Shifting (?P<from_state>[A-Z/]+) -> (?P<to_state>[A-Z/]+)"'),
    # An NDB node restart phase by phase (start phases, started, shutdown, disconnect).
    "ndb_restart_phases": (
        f"{NDB_SELECTOR} |~ {_q(_alternation(NDB_RESTART_KINDS))}"
        ' | regexp "Start phase (?P<phase>\\\\d+) completed"'),
    # Every error-or-worse line of the lab, newest first in Grafana's logs panel.
    "errors": '{cluster=~"$cluster", level=~"error|critical"}',
    # Metric queries (time series / bars) -------------------------------------------------
    "errors_by_node": ('sum by (cluster, node, component) (count_over_time('
                       '{cluster=~"$cluster", level=~"error|critical"} [$__auto]))'),
    "warnings_by_node": ('sum by (cluster, node, component) (count_over_time('
                         '{cluster=~"$cluster", level="warning"} [$__auto]))'),
    "galera_state_changes_by_node": (
        f'sum by (node, to_state) (count_over_time({GALERA_SELECTOR}'
        f' |~ {_q(EVENTS["galera_state_change"][1])}'
        ' | regexp "Shifting (?P<from_state>[A-Z/]+) -> (?P<to_state>[A-Z/]+)" [$__auto]))'),
    "ndb_start_phases_by_node": (
        f'sum by (node) (count_over_time({NDB_SELECTOR}'
        f' |~ {_q(EVENTS["ndb_start_phase"][1])} [$__auto]))'),
    "log_lines_by_component": ('sum by (cluster, component) (rate('
                               '{cluster=~"$cluster"} [$__auto]))'),
}

# Grafana annotations (dashboard JSON `annotations.list` entries; the datasource uid is
# filled by `annotations()`).
ANNOTATIONS: list[dict] = [
    {"name": "Galera state changes", "iconColor": "orange",
     "expr": (f'{GALERA_SELECTOR} |~ {_q(EVENTS["galera_state_change"][1])}'
              ' | regexp "Shifting (?P<from_state>[A-Z/]+) -> (?P<to_state>[A-Z/]+)"'),
     "titleFormat": "{{node}}: {{from_state}} -> {{to_state}}",
     "tagKeys": "cluster,node,to_state", "textFormat": ""},
    {"name": "Galera state transfers (IST/SST)", "iconColor": "red",
     "expr": (f"{GALERA_SELECTOR} |~ "
              + _q(_alternation(["galera_transfer_requested", "galera_sst_started",
                                 "galera_transfer_completed", "galera_ist_received",
                                 "galera_sst_received"]))),
     "titleFormat": "{{node}} state transfer", "tagKeys": "cluster,node", "textFormat": ""},
    {"name": "NDB restarts (SIMULATED in the lab)", "iconColor": "purple",
     "expr": f"{NDB_SELECTOR} |~ {_q(_alternation(NDB_RESTART_KINDS))}",
     "titleFormat": "NDB node {{node}}", "tagKeys": "cluster,node,simulated", "textFormat": ""},
]


def annotations(datasource_uid: str = "${loki}") -> list[dict]:
    """ANNOTATIONS in Grafana's dashboard JSON shape, for a Loki datasource."""
    out = []
    for a in ANNOTATIONS:
        out.append({
            "name": a["name"], "enable": True, "hide": False, "iconColor": a["iconColor"],
            "datasource": {"type": "loki", "uid": datasource_uid},
            "expr": a["expr"], "target": {"expr": a["expr"], "refId": "Anno"},
            "titleFormat": a["titleFormat"], "tagKeys": a["tagKeys"],
            "textFormat": a["textFormat"], "instant": False,
        })
    return out


def render(expr: str, *, cluster: str = ".+", node: str = ".+", range_: str = "5m") -> str:
    """Fill the Grafana variables to run a query outside Grafana."""
    return (expr.replace("$cluster", cluster).replace("$node", node)
            .replace("$__auto", range_).replace("$__interval", range_))


def classify(line: str, component: str | None = None) -> str | None:
    """The event kind of one log line (None: not an event)."""
    for kind, (comp, pattern) in EVENTS.items():
        if (component is None or comp == component) and re.search(pattern, line):
            return kind
    return None
