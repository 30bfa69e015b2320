"""The OpenTelemetry Collector's configuration for shipping the monitored clusters' logs.

`shipper_config(sources, ...)` is the one place the shipper is configured: the lab calls it
with its own description's log sources plus its services' logs; in compose the inventory
service renders it from clusterscope.yml (GET /config/otelcol.yaml) and the collector
reads it with its `http` config provider. Every path comes from the description.

One `file_log` receiver per log file (the filelog receiver of collector-contrib v0.165.1,
receiver/filelogreceiver/README.md): its `resource` carries the file's fixed fields
(cluster, node, component, service, simulated) and its stanza operators
(pkg/stanza/docs/operators/*.md at v0.165.1) do what the promtail pipeline did:

1. unwrap container-log lines: CRI (`<time> stdout|stderr F|P <line>`, the `container`
   parser joins the P pieces) and JSON with the line in `log` (the Percona Operator's log
   collector, docker's json-file driver; its value keeps a newline the formats must not see);
2. join a mysqld entry's continuation lines (`recombine`);
3. parse the component's formats (clusterscope_logs.formats) with `regex_parser`, take the
   entry's time from the line (`time_parser`, in the source's time zone) and its `level`
   from the severity word, and for the NDB cluster log the reporting node as `node`.

VictoriaLogs makes an OTLP record's resource attributes its stream fields
(VictoriaMetrics/VictoriaLogs v1.52.1 app/vlinsert/opentelemetry/pb.go: the resource's
fields are pushed as the first `streamFieldsLen` fields) and the body its `_msg`; so
`level` and the NDB `node` are written to the resource too, and LogsQL selects on
`{cluster=..., node=..., component=..., level=...}` as LogQL did on Loki's labels.
"""

from __future__ import annotations

import hashlib
import re
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass, field

import yaml
from clusterscope_inventory.description import LogSource

from clusterscope_logs import change_lines
from clusterscope_logs import formats as lf

# The field the regex parsers fill and the later operators read; removed at the end.
PARSED = "attributes.parsed"
# Where VictoriaLogs takes OTLP logs (VictoriaLogs v1.52.1 app/vlinsert/opentelemetry/
# opentelemetry.go: "/insert/opentelemetry/v1/logs", protobuf only, which otlp_http sends)
VLOGS_OTLP_PATH = "/insert/opentelemetry/v1/logs"
# formats.LEVELS as stanza severity aliases (pkg/stanza/docs/types/severity.md)
_ALIAS = {"info": "info", "warning": "warn", "error": "error", "critical": "fatal",
          "debug": "debug"}
SEVERITY_MAPPING = {_ALIAS[level]: [w for w, lv in lf.LEVELS.items() if lv == level]
                    for level in dict.fromkeys(lf.LEVELS.values())}
# A CRI line (kubernetes design proposal node/kubelet-cri-logging.md) and a JSON-wrapped one
CRI_LINE = r"^\d{4}-\d{2}-\d{2}T\S+ (stdout|stderr) [FP] "
JSON_LINE = r'^\{.*"log":'
# How long the exporter keeps retrying a batch while the store is down (promtail kept ~10 min;
# the queue is on disk, so a restart of the shipper does not drop it either)
RETRY_FOR = "30m"


@dataclass(frozen=True)
class Stream:
    """One file the shipper tails and the fields every entry of it carries."""
    path: str
    component: str
    labels: dict[str, str] = field(hash=False)   # cluster, node, service, simulated
    timezone: str = "UTC"
    daemon: bool = False   # a monitoring service's own log: the `daemon` format

    @property
    def receiver_id(self) -> str:
        """Stable across reloads (the read offsets are stored under it): from the fields
        that name the file, plus a digest of its path so two files never share one."""
        words = [self.labels.get("cluster", ""), self.labels.get("node", ""),
                 self.labels.get("service", ""), self.component]
        name = ".".join(re.sub(r"[^A-Za-z0-9_.-]", "_", w) for w in words if w)
        digest = hashlib.sha1(self.path.encode()).hexdigest()[:8]
        return f"file_log/{name}.{digest}"


def check_timezone(zone: str, where: str) -> str:
    """A zone the collector can load (Go's time.LoadLocation reads the same IANA database
    as Python's zoneinfo); "Local" is the collector's own zone. A bad name would stop the
    collector at start with Go's error, so it is refused here, naming the source."""
    if zone != "Local":
        try:
            zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{where}: log_timezone {zone!r} is not a time zone name (such"
                             " as UTC or Europe/Berlin)") from exc
    return zone


def stream_of(source: LogSource) -> Stream:
    check_timezone(source.timezone, f"cluster {source.cluster}")
    labels = {"cluster": source.cluster, "component": source.component}
    # the NDB cluster log is the whole cluster's: each line names its reporting node
    if source.component != lf.NDB_MGMD:
        labels["node"] = source.node
    if source.simulated:
        labels["simulated"] = "true"
    return Stream(source.path, source.component, labels, source.timezone)


# -- expressions (expr-lang, as stanza compiles them: pkg/stanza/operator/helper/expr.go) --
def _s(text: str) -> str:
    """An expr-lang double-quoted string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _field(name: str) -> str:
    return f"{PARSED}.{name}"


def _has(name: str) -> str:
    """The parsed field exists and is not empty (an optional group that did not take part
    reads as "": pkg/stanza/operator/helper/regexp.go MatchValues)."""
    return f'{PARSED}?.{name} != nil and {PARSED}.{name} != ""'


def _level_expr() -> str:
    s = f"lower({_field('severity')})"
    out = s
    for level in reversed(list(dict.fromkeys(lf.LEVELS.values()))):
        words = ", ".join(_s(w) for w, lv in lf.LEVELS.items() if lv == level)
        out = f"{s} in [{words}] ? {_s(level)} : ({out})"
    return out


def _ordered_second_expr(zone: str) -> str:
    """formats.ORDERED_SECOND: the line's second in its zone, plus the read lag capped
    below one second, as Unix nanoseconds. expr-lang v1.17.8 builtins: date(str, layout,
    tz) loads the zone with time.LoadLocation, now(), min/max; time minus time is a
    time.Duration whose methods expr calls (expr-lang/expr docs/language-definition.md)."""
    return (f"let s = date({_field('date')} + \" \" + {_field('time')},"
            f" \"2006-01-02 15:04:05\", {_s(zone)}); s.UnixNano() +"
            f" min(max((now() - s).Nanoseconds(), 0), {lf.ORDERED_SECOND_MAX_LAG_NS})")


# -- operators ----------------------------------------------------------------------------
def unwrap_operators() -> list[dict]:
    """CRI and JSON-wrapped lines become the error-log line itself (the galera tracker
    reads the same wrappings: exporters/galera_tracker/wrapped.py)."""
    return [
        # the CRI format's `containerd` flavour (RFC 3339 time ending in Z) or `crio`;
        # P pieces are recombined by the parser itself (pkg/stanza/operator/parser/
        # container/parser.go). No k8s metadata: the file path is the description's.
        {"type": "container", "id": "unwrap_cri", "if": f"body matches {_s(CRI_LINE)}",
         "add_metadata_from_filepath": False, "on_error": "send_quiet"},
        {"type": "remove", "id": "unwrap_cri_tag", "field": 'attributes["logtag"]',
         "if": 'attributes["logtag"] != nil'},
        {"type": "json_parser", "id": "unwrap_json", "if": f"body matches {_s(JSON_LINE)}",
         "parse_to": "attributes.wrapped", "on_error": "send_quiet"},
        {"type": "move", "id": "unwrap_json_log", "from": "attributes.wrapped.log",
         "to": "body", "if": "attributes.wrapped?.log != nil"},
        {"type": "remove", "id": "unwrap_json_rest", "field": "attributes.wrapped",
         "if": "attributes.wrapped != nil"},
        # the `log` value ends with the newline the container wrote
        {"type": "regex_replace", "id": "unwrap_newline", "field": "body", "regex": r"\n+$",
         "replace_with": "", "if": 'type(body) == "string" and body endsWith "\\n"'},
    ]


def multiline_operators(component: str) -> list[dict]:
    first = lf.MULTILINE_FIRSTLINE.get(component)
    if not first:
        return []
    return [{"type": "recombine", "id": "multiline", "combine_field": "body",
             "combine_with": "\n", "is_first_entry": f"body matches {_s(first)}",
             "source_identifier": 'attributes["log.file.path"]',
             "force_flush_period": lf.MULTILINE_MAX_WAIT}]


def format_operators(fmt: str, zone: str, first: bool) -> list[dict]:
    spec = lf.FORMATS[fmt]
    # a later format only parses what no earlier one did; each format's fields are its
    # own (date/time, ts_iso, sst_date), so the time operators below act on its lines only
    cond = f"body matches {_s(spec['regex'])}" + ("" if first else f" and {PARSED} == nil")
    ops: list[dict] = [{"type": "regex_parser", "id": f"parse_{fmt}", "if": cond,
                        "regex": spec["regex"], "parse_to": PARSED, "on_error": "send_quiet"}]
    if "severity" in spec:  # a format whose lines all have one severity
        ops.append({"type": "add", "id": f"severity_{fmt}", "field": _field("severity"),
                    "value": spec["severity"], "if": _has(spec["severity_when"])})
    kind = spec.get("time")
    if kind == "ordered_second":
        ops += [{"type": "add", "id": f"time_{fmt}_ns", "field": _field("ts_ns"),
                 "value": f"EXPR({_ordered_second_expr(zone)})",
                 "if": f"{_has('date')}"},
                {"type": "time_parser", "id": f"time_{fmt}", "parse_from": _field("ts_ns"),
                 "layout_type": "epoch", "layout": "ns", "on_error": "send_quiet",
                 "if": f"{PARSED}?.ts_ns != nil"}]
    elif kind == "iso":
        ops.append({"type": "time_parser", "id": f"time_{fmt}", "parse_from": _field("ts_iso"),
                    "layout_type": "gotime", "layout": spec["layout"],
                    "on_error": "send_quiet", "if": f"{_has('ts_iso')}"})
    elif kind == "sst":
        ops += [{"type": "add", "id": f"time_{fmt}_text", "field": _field("ts_sst"),
                 "value": f"EXPR({_field('sst_date')} + \" \" + {_field('sst_time')})",
                 "if": f"{_has('sst_date')}"},
                {"type": "time_parser", "id": f"time_{fmt}", "parse_from": _field("ts_sst"),
                 "layout_type": "gotime", "layout": spec["layout"], "location": zone,
                 "on_error": "send_quiet", "if": f"{PARSED}?.ts_sst != nil"}]
    if spec.get("node_from"):
        ops.append({"type": "copy", "id": f"node_{fmt}", "from": _field(spec["node_from"]),
                    "to": 'resource["node"]', "if": f"{_has(spec['node_from'])}"})
    return ops


def parse_operators(stream: Stream) -> list[dict]:
    fmts = lf.formats_of(stream.component, stream.daemon)
    ops: list[dict] = []
    for i, fmt in enumerate(fmts):
        ops += format_operators(fmt, stream.timezone, first=i == 0)
    if fmts:
        ops += [
            {"type": "add", "id": "level", "field": 'resource["level"]',
             "value": f"EXPR({_level_expr()})", "if": f"{_has('severity')}"},
            # the OTLP record's own severity too (VictoriaLogs keeps it as severity_text/
            # severity_number): the same words, case-insensitive (operator/helper/severity.go)
            {"type": "severity_parser", "id": "severity", "parse_from": _field("severity"),
             "mapping": SEVERITY_MAPPING, "on_error": "send_quiet", "if": _has("severity")},
            {"type": "remove", "id": "parsed_done", "field": PARSED,
             "if": f"{PARSED} != nil"},
        ]
    return ops


def changes_stream(path: str) -> Stream:
    """The change detector's file (clusterscope_changes): every line names its cluster and
    node itself (clusterscope_logs.change_lines)."""
    return Stream(path, change_lines.COMPONENT,
                  {"component": change_lines.COMPONENT, "level": "info"})


def operators(stream: Stream) -> list[dict]:
    if stream.component == change_lines.COMPONENT:
        return change_lines.operators()
    if stream.daemon:
        return parse_operators(stream)
    return [*unwrap_operators(), *multiline_operators(stream.component),
            *parse_operators(stream)]


def receiver(stream: Stream, storage: str | None) -> dict:
    cfg: dict = {
        "include": [stream.path],
        # a file found later (a node's first log) is read from its first line; the
        # positions in file_storage make a restart continue where it stopped
        "start_at": "beginning",
        "include_file_path": True,
        "include_file_name": False,
        # the line as written: a mysqld entry's continuation lines start with a tab, some
        # lines end with a space (`State transfer required: `)
        "preserve_leading_whitespaces": True,
        "preserve_trailing_whitespaces": True,
        # copytruncate rotation: the file's new content is read from its start
        "on_truncate": "read_whole_file",
        "resource": dict(sorted(stream.labels.items())),
        "operators": operators(stream),
    }
    if storage:
        cfg["storage"] = storage
        # a batch the queue refused is read again, not dropped
        cfg["retry_on_failure"] = {"enabled": True, "max_elapsed_time": "0s"}
    return cfg


def shipper_config(sources: Iterable[LogSource], *, endpoint: str,
                   storage_dir: str | None, health_endpoint: str, metrics_host: str,
                   metrics_port: int | str, extra: Iterable[Stream] = (),
                   stream_fields: Iterable[str] | None = None) -> dict:
    """The collector's whole configuration.

    sources: the description's log sources; extra: more files (the lab's own services);
    endpoint: where logs go, an OTLP/HTTP logs URL (VictoriaLogs:
    http://host:9428/insert/opentelemetry/v1/logs; Loki 3: http://host:3100/otlp/v1/logs);
    storage_dir: read offsets and the export queue (None: kept in memory, for a dry run);
    health_endpoint: host:port of the health_check extension; metrics_*: the collector's
    own Prometheus metrics (scraped as job `otelcol`).
    """
    streams = [stream_of(s) for s in sources] + list(extra)
    seen: set[str] = set()
    unique = []
    for s in streams:
        if s.path not in seen:  # one file is read once
            seen.add(s.path)
            unique.append(s)
    storage = "file_storage" if storage_dir else None
    receivers = {s.receiver_id: receiver(s, storage) for s in unique}
    exporter: dict = {
        "logs_endpoint": endpoint,
        "compression": "gzip",
        "retry_on_failure": {"enabled": True, "initial_interval": "500ms",
                             "max_interval": "10s", "max_elapsed_time": RETRY_FOR},
        "sending_queue": {"enabled": True, **({"storage": storage} if storage else {})},
    }
    # VictoriaLogs request headers (docs/victorialogs/data-ingestion/README.md "HTTP
    # headers"); other OTLP receivers ignore them. The instrumentation scope is the same on
    # every line (the filelog receiver's name and version): not worth storing.
    headers = {"VL-Ignore-Fields": "scope.name,scope.version"}
    if stream_fields is not None:
        headers["VL-Stream-Fields"] = ",".join(stream_fields)
    exporter["headers"] = headers
    extensions: dict = {"health_check": {"endpoint": health_endpoint}}
    if storage_dir:
        extensions["file_storage"] = {"directory": storage_dir, "create_directory": True}
    return {
        "extensions": extensions,
        "receivers": receivers or {},
        "processors": {"batch": {"timeout": "200ms", "send_batch_size": 2048}},
        "exporters": {"otlp_http/logs": exporter},
        "service": {
            "extensions": list(extensions),
            "telemetry": {
                "logs": {"level": "warn"},
                "metrics": {"level": "normal", "readers": [{"pull": {"exporter": {
                    "prometheus": {"host": metrics_host, "port": metrics_port,
                                   "without_scope_info": True}}}}]},
            },
            "pipelines": {"logs": {"receivers": list(receivers),
                                   "processors": ["batch"],
                                   "exporters": ["otlp_http/logs"]}} if receivers else {},
        },
    }


HEADER = ("# The OpenTelemetry Collector's configuration, generated by clusterscope_logs.collector"
          " from the\n# description's log sources; do not edit.\n")


def render(cfg: dict) -> str:
    """The configuration as the collector reads it (YAML). The collector expands `${...}`
    in every value (go.opentelemetry.io/collector/confmap v1.71.0: environment references,
    and the `file` and `http` providers, innermost first: `${env:X${file:/f}}` reads /f);
    only our own `${env:NAME...}` placeholders may be there, and none holds another `$`,
    which this checks (the description refuses `$` in a log path)."""
    text = yaml.safe_dump(cfg, sort_keys=False, width=1000)
    for m in re.finditer(r"\$\{", text):
        ref = text[m.start():text.find("}", m.start()) + 1]
        if not ref.startswith("${env:") or "$" in ref[2:] or not ref.endswith("}"):
            raise ValueError(f"the collector would expand {ref!r}")
    return HEADER + text


# Inside compose's otelcol container (compose/otelcol/Dockerfile): where the image keeps its state,
# where the health check (the image's HEALTHCHECK) and the metrics (scraped as job
# `otelcol`) listen, each overridable from the collector's environment (`${env:NAME:-default}`,
# go.opentelemetry.io/collector/confmap v1.71.0 env provider). The store's address comes
# from the environment: single-node VictoriaLogs or the scale-out override's vlinsert.
CONTAINER = {"storage_dir": "${env:OTELCOL_STORAGE_DIR:-/var/lib/otelcol}",
             "health_endpoint": "${env:OTELCOL_HEALTH_ENDPOINT:-127.0.0.1:13133}",
             "metrics_host": "${env:OTELCOL_METRICS_HOST:-0.0.0.0}",
             "metrics_port": "${env:OTELCOL_METRICS_PORT:-8888}"}
ENDPOINT_ENV = "${env:CLUSTERSCOPE_LOGS_ENDPOINT}"


def container_config(sources: Iterable[LogSource], changes_file: str | None = None) -> str:
    """What the inventory serves at /config/otelcol.yaml for compose's collector; with the
    change detector's file when it has one."""
    extra = [changes_stream(changes_file)] if changes_file else []
    return render(shipper_config(sources, endpoint=ENDPOINT_ENV, extra=extra, **CONTAINER))
