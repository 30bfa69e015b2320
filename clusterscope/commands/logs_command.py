"""`clusterscope logs ...`: search the lab's logs in VictoriaLogs, list restart/recovery
events, print the dashboards' LogsQL and the shipper's configuration."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime

from clusterscope_inventory.description import DescriptionError, load
from clusterscope_logs import collector
from clusterscope_logs import formats as log_formats

from clusterscope.clients.vlogs import VLogs, VLogsError
from clusterscope.commands import vm_options
from clusterscope.lab import endpoints
from clusterscope.logs import logsql

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def parse_duration(text: str) -> float:
    m = _DURATION.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r}: want e.g. 30s, 15m, 2h, 1d")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("logs", help="the lab's logs in VictoriaLogs: search, events, LogsQL")
    p.add_argument("--lab-dir", help="lab directory (default ./.lab or $CLUSTERSCOPE_LAB_DIR)")
    p.add_argument("--logs-url", help="a VictoriaLogs to ask instead of the lab's: the"
                   " deployment's door (https://HOST:8427), or http://HOST:9428")
    vm_options.add_access_arguments(p)
    lsub = p.add_subparsers(dest="logs_cmd", required=True)

    q = lsub.add_parser("query", help="run a LogsQL query (or a named one from logsql.py)")
    q.add_argument("expr", help="LogsQL, or the name of a query in clusterscope/logs/logsql.py")
    q.add_argument("--since", type=parse_duration, default=3600.0, help="default 1h")
    q.add_argument("--limit", type=int, default=200, help="the newest N lines (default 200)")
    q.add_argument("--cluster", default=".+", help="fills $cluster (regex)")
    q.add_argument("--node", default=".*", help="fills $node (regex)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_query)

    e = lsub.add_parser("events", help="restart and recovery events (the annotations' LogsQL)")
    e.add_argument("--since", type=parse_duration, default=3600.0, help="default 1h")
    e.add_argument("--cluster", default=".+")
    e.add_argument("--node", default=".*")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_events)

    lq = lsub.add_parser("logsql", help="print the dashboards' LogsQL and annotations (JSON)")
    lq.set_defaults(func=cmd_logsql)

    pl = lsub.add_parser("pipeline", help="print the log formats and the collector's"
                                          " configuration for a description's log sources")
    pl.add_argument("--description", help="clusterscope.yml whose log sources to ship"
                    " (default: none, only the formats)")
    pl.add_argument("--endpoint", default="http://127.0.0.1:9428" + collector.VLOGS_OTLP_PATH,
                    help="OTLP/HTTP logs URL to ship to (VictoriaLogs or Loki 3's /otlp)")
    pl.set_defaults(func=cmd_pipeline)

    pa = lsub.add_parser("parse", help="parse log lines from stdin with the shipper's regexes")
    pa.add_argument("--component", default=log_formats.MARIADB,
                    choices=sorted(log_formats.COMPONENT_FORMATS))
    pa.set_defaults(func=cmd_parse)


def _vlogs(args: argparse.Namespace) -> VLogs:
    return endpoints.logs(args.logs_url, args.lab_dir, args.vm_credentials, args.vm_ca)


def _fmt_ts(ts_ns: int) -> str:
    return datetime.fromtimestamp(ts_ns / 1e9).isoformat(sep=" ", timespec="milliseconds")


def cmd_query(args: argparse.Namespace) -> int:
    expr = logsql.QUERIES.get(args.expr, args.expr)
    expr = logsql.render(expr, cluster=args.cluster, node=args.node)
    try:
        if re.search(r"\|\s*stats\b", expr):  # counts over the window, not lines
            rows = _vlogs(args).stats(logsql.within(expr, f"{int(args.since)}s"))
            for r in rows:
                print(json.dumps(r) if args.json else f"{r['metric']} {r['value'][1]}")
            return 0
        entries = _vlogs(args).entries(expr, time.time() - args.since, limit=args.limit)
    except VLogsError as exc:
        print(f"logs: {exc}", file=sys.stderr)
        return 1
    for e in entries:
        if args.json:
            print(json.dumps({"ts_ns": e.ts_ns, "labels": e.labels, "line": e.line}))
        else:
            where = "/".join(e.labels.get(k) or "-" for k in ("cluster", "node", "component"))
            print(f"{_fmt_ts(e.ts_ns)} {where:<40} {e.line}")
    return 0


def events(vlogs: VLogs, since: float, cluster: str = ".+", node: str = ".*") -> list[dict]:
    """Restart/recovery events from the dashboards' LogsQL, oldest first."""
    out = []
    for name in ("galera_recovery_events", "ndb_restart_phases"):
        expr = logsql.render(logsql.QUERIES[name], cluster=cluster, node=node)
        for e in vlogs.entries(expr, since):
            out.append({"ts_ns": e.ts_ns, "kind": logsql.classify(e.line),
                        "cluster": e.labels.get("cluster"), "node": e.labels.get("node"),
                        "simulated": e.labels.get("simulated") == "true", "line": e.line})
    return sorted(out, key=lambda ev: ev["ts_ns"])


def cmd_events(args: argparse.Namespace) -> int:
    try:
        found = events(_vlogs(args), time.time() - args.since, args.cluster, args.node)
    except VLogsError as exc:
        print(f"logs: {exc}", file=sys.stderr)
        return 1
    for ev in found:
        if args.json:
            print(json.dumps(ev))
        else:
            sim = " [SIMULATED]" if ev["simulated"] else ""
            print(f"{_fmt_ts(ev['ts_ns'])} {ev['cluster']}/{ev['node']}{sim}"
                  f" {ev['kind']}: {ev['line']}")
    if not found and not args.json:
        print("no restart or recovery events in the window", file=sys.stderr)
    return 0


def cmd_logsql(args: argparse.Namespace) -> int:
    print(json.dumps({"log_queries": logsql.LOG_QUERIES, "stats_queries": logsql.STATS_QUERIES,
                      "events": logsql.EVENTS, "annotations": logsql.annotations()}, indent=2))
    return 0


def cmd_pipeline(args: argparse.Namespace) -> int:
    sources = []
    if args.description:
        try:
            sources = load(args.description).log_sources()
        except DescriptionError as exc:
            print(f"logs pipeline: {exc}", file=sys.stderr)
            return 2
    cfg = collector.shipper_config(sources, endpoint=args.endpoint, storage_dir=None,
                                   health_endpoint="127.0.0.1:13133",
                                   metrics_host="127.0.0.1", metrics_port=8888)
    print(json.dumps({"formats": log_formats.FORMATS, "levels": log_formats.LEVELS,
                      "component_formats": log_formats.COMPONENT_FORMATS,
                      "multiline_firstline": log_formats.MULTILINE_FIRSTLINE,
                      "otelcol": cfg}, indent=2))
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    for line in sys.stdin:
        line = line.rstrip("\n")
        fields = None
        for fmt in log_formats.COMPONENT_FORMATS[args.component]:
            fields = log_formats.parse_line(fmt, line)
            if fields is not None:
                fields = {"format": fmt, **fields,
                          "event": logsql.classify(line, args.component)}
                break
        print(json.dumps(fields or {"format": None, "line": line}))
    return 0
