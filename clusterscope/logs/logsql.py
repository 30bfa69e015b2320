"""The LogsQL the dashboards use, and the restart/recovery events as Grafana annotations.

Plain data (strings and dicts) so the dashboards generator, `clusterscope logs` and the
tests all run the same queries. Queries carry Grafana variables (`$cluster`, `$node` as
regex matchers; the VictoriaLogs datasource plugin turns a multi-value selection into
`(a|b)` and All into `.*`); `render()` fills them for use outside Grafana. Fields: see
exporters/clusterscope_logs/formats.py (cluster, node, component, level are stream fields).

LogsQL (VictoriaMetrics/VictoriaLogs v1.52.1 docs/victorialogs/logsql.md): `{...}` is a
stream filter with Prometheus matcher semantics; `~"re"` an RE2 regexp on the message
(unanchored, like LogQL's `|~`); `| extract_regexp "(?P<name>...)"` adds named groups as
fields (LogQL's `| regexp`); `| stats by (...) count()` counts, per step when the query is
run as a range (`/select/logsql/stats_query_range`: the plugin's `statsRange` query type),
which replaces LogQL's `sum by (...) (count_over_time(... [$__auto]))`. String literals
escape as LogQL's did (docs/victorialogs/logsql.md "String literals").
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


def quote(pattern: str) -> str:
    """A LogsQL double-quoted string."""
    return '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'


GALERA_SELECTOR = '{cluster=~"$cluster", component="mariadb", node=~"$node"}'
NDB_SELECTOR = '{cluster=~"$cluster", component="ndb_mgmd"}'
SHIFT = quote("Shifting (?P<from_state>[A-Z/]+) -> (?P<to_state>[A-Z/]+)")
PHASE = quote(r"Start phase (?P<phase>\d+) completed")
TRANSFER_KINDS = ["galera_transfer_requested", "galera_sst_started", "galera_transfer_completed",
                  "galera_ist_received", "galera_sst_received"]

# Log queries: the plugin's `instant` query type (/select/logsql/query, newest lines).
LOG_QUERIES: dict[str, str] = {
    # A Galera node's recovery as it happened: state shifts, state transfer, IST/SST.
    "galera_recovery_events": (
        f"{GALERA_SELECTOR} ~{quote(_alternation(GALERA_RECOVERY_KINDS))}"
        f" | extract_regexp {SHIFT}"),
    # An NDB node restart phase by phase (start phases, started, shutdown, disconnect).
    "ndb_restart_phases": (
        f"{NDB_SELECTOR} ~{quote(_alternation(NDB_RESTART_KINDS))}"
        f" | extract_regexp {PHASE}"),
    # Every error-or-worse line of the selected clusters.
    "errors": '{cluster=~"$cluster", level=~"error|critical"}',
    # Every line of the selected clusters and nodes (the NDB cluster log's lines without a
    # node match too: a missing stream field reads as "", which `.*` matches).
    "all_lines": '{cluster=~"$cluster", node=~"$node"}',
}
# Stats queries: the plugin's `statsRange` query type (/select/logsql/stats_query_range,
# one point per step Grafana picks).
STATS_QUERIES: dict[str, str] = {
    "errors_by_node": ('{cluster=~"$cluster", level=~"error|critical"}'
                       " | stats by (cluster, node, component) count() as lines"),
    "warnings_by_node": ('{cluster=~"$cluster", level="warning"}'
                         " | stats by (cluster, node, component) count() as lines"),
    "galera_state_changes_by_node": (
        f"{GALERA_SELECTOR} ~{quote(EVENTS['galera_state_change'][1])}"
        f" | extract_regexp {SHIFT} | stats by (node, to_state) count() as shifts"),
    "ndb_start_phases_by_node": (
        f"{NDB_SELECTOR} ~{quote(EVENTS['ndb_start_phase'][1])}"
        " | stats by (node) count() as phases"),
    # per second in each step (rate() divides by the step: lib/logstorage/pipe_stats.go)
    "log_lines_by_component": ('{cluster=~"$cluster"}'
                               " | stats by (cluster, component) rate() as lines_per_s"),
}
QUERIES: dict[str, str] = {**LOG_QUERIES, **STATS_QUERIES}

# Grafana annotations. The plugin has no title or tag templates (LogQL's titleFormat and
# tagKeys): a query whose refId is "Anno" becomes annotations whose text is the line and
# whose tags are the remaining fields (victorialogs-datasource v0.30.1
# src/transformers/frameProcessors/streamFrameProcessor.ts), so the title is written into
# the message with `format` and the tags are chosen with `fields`.
ANNOTATIONS: list[dict] = [
    {"name": "Galera state changes", "iconColor": "orange",
     "expr": (f"{GALERA_SELECTOR} ~{quote(EVENTS['galera_state_change'][1])}"
              f" | extract_regexp {SHIFT}"
              ' | format "<node>: <from_state> -> <to_state>  <_msg>" as _msg'
              " | fields _time, _msg, cluster, node, to_state")},
    {"name": "Galera state transfers (IST/SST)", "iconColor": "red",
     "expr": (f"{GALERA_SELECTOR} ~{quote(_alternation(TRANSFER_KINDS))}"
              ' | format "<node> state transfer: <_msg>" as _msg'
              " | fields _time, _msg, cluster, node")},
    {"name": "NDB restarts (SIMULATED in the lab)", "iconColor": "purple",
     "expr": (f"{NDB_SELECTOR} ~{quote(_alternation(NDB_RESTART_KINDS))}"
              ' | format "NDB node <node>: <_msg>" as _msg'
              " | fields _time, _msg, cluster, node, simulated")},
]

# Configuration and version changes (the change detector's lines, component `changes`:
# exporters/clusterscope_changes/events.py), drawn on every dashboard: one mark per node
# step, its text the detector's line (what moved from what to what, the step and the
# change id), tagged with the cluster, node, kind and name.
CHANGES_ANNOTATION: dict = {
    "name": "Configuration and version changes", "iconColor": "yellow",
    "expr": ('{component="changes", cluster=~"$cluster"}'
             " | fields _time, _msg, cluster, node, kind, name, simulated")}

DATASOURCE_TYPE = "victoriametrics-logs-datasource"


def annotations(datasource_uid: str = "${logs_ds}") -> list[dict]:
    """ANNOTATIONS in Grafana's dashboard JSON shape, for the VictoriaLogs datasource."""
    return [{"name": a["name"], "enable": True, "hide": False, "iconColor": a["iconColor"],
             "datasource": {"type": DATASOURCE_TYPE, "uid": datasource_uid},
             "target": {"expr": a["expr"], "refId": "Anno", "queryType": "instant"}}
            for a in ANNOTATIONS]


def render(expr: str, *, cluster: str = ".+", node: str = ".*") -> str:
    """Fill the Grafana variables to run a query outside Grafana."""
    return expr.replace("$cluster", cluster).replace("$node", node)


def within(expr: str, range_: str) -> str:
    """The query restricted to the last `range_` (a LogsQL `_time:` filter), for an instant
    stats query (/select/logsql/stats_query counts over the whole time the filter names)."""
    return f"_time:{range_} {expr}"


def classify(line: str, component: str | None = None) -> str | None:
    """The event kind of one log line (None: not an event)."""
    for kind, (comp, pattern) in EVENTS.items():
        if (component is None or comp == component) and re.search(pattern, line):
            return kind
    return None
