"""Shipping the change detector's lines (clusterscope_changes.events) to the log store.

Each line is a JSON object naming its own cluster and node, so the stream's fixed fields
are only `component="changes"` (and `level="info"`); stanza's `json_parser` puts the
object into attributes (pkg/stanza/docs/operators/json_parser.md at collector-contrib
v0.165.1), `cluster`, `node` and `simulated` move to the resource (VictoriaLogs' stream
fields, as every other stream has them), the entry's time is `ts` (Unix seconds with
microseconds: `time_parser` layout_type epoch, layout `s.us`) and the body is `msg`, the
line a person reads. The other attributes (kind, name, old, new, change_id, step, ...)
become the entry's fields in VictoriaLogs (VictoriaMetrics/VictoriaLogs v1.52.1
app/vlinsert/opentelemetry/pb.go: log record attributes are fields), where
`clusterscope changes` and the dashboards' annotation read them.
"""

from __future__ import annotations

COMPONENT = "changes"
PARSED = "attributes"
RESOURCE_FIELDS = ("cluster", "node", "simulated")


def operators() -> list[dict]:
    ops: list[dict] = [
        {"type": "json_parser", "id": "changes_json", "parse_from": "body",
         "parse_to": PARSED, "on_error": "send", "if": 'body matches "^\\\\{"'},
        {"type": "time_parser", "id": "changes_time", "parse_from": "attributes.ts",
         "layout_type": "epoch", "layout": "s.us", "on_error": "send_quiet",
         "if": "attributes.ts != nil"},
        {"type": "remove", "id": "changes_ts", "field": "attributes.ts",
         "if": "attributes.ts != nil"},
        {"type": "move", "id": "changes_msg", "from": "attributes.msg", "to": "body",
         "if": "attributes.msg != nil"},
    ]
    for name in RESOURCE_FIELDS:
        ops.append({"type": "move", "id": f"changes_{name}", "from": f"attributes.{name}",
                    "to": f'resource["{name}"]', "if": f"attributes.{name} != nil"})
    return ops
