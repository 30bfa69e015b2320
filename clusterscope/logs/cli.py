"""`clusterscope logs ...`: search the lab's logs in Loki, list restart/recovery events,
print the dashboards' LogQL and the shipper's pipeline."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime

from clusterscope.clients.loki import Loki, LokiError
from clusterscope.lab.logs import loki_client
from clusterscope.logs import formats as log_formats
from clusterscope.logs import logql
from clusterscope.logs.pipeline import pipeline_stages

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def parse_duration(text: str) -> float:
    m = _DURATION.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r}: want e.g. 30s, 15m, 2h, 1d")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("logs", help="the lab's logs in Loki: search, events, LogQL")
    p.add_argument("--lab-dir", help="lab directory (default ./.lab or $CLUSTERSCOPE_LAB_DIR)")
    p.add_argument("--loki-url", help="a Loki to ask instead of the lab's")
    lsub = p.add_subparsers(dest="logs_cmd", required=True)

    q = lsub.add_parser("query", help="run a LogQL log query (or a named one from logql.py)")
    q.add_argument("expr", help="LogQL, or the name of a query in clusterscope/logs/logql.py")
    q.add_argument("--since", type=parse_duration, default=3600.0, help="default 1h")
    q.add_argument("--limit", type=int, default=200)
    q.add_argument("--cluster", default=".+", help="fills $cluster (regex)")
    q.add_argument("--node", default=".+", help="fills $node (regex)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_query)

    e = lsub.add_parser("events", help="restart and recovery events (the annotations' LogQL)")
    e.add_argument("--since", type=parse_duration, default=3600.0, help="default 1h")
    e.add_argument("--cluster", default=".+")
    e.add_argument("--node", default=".+")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_events)

    lq = lsub.add_parser("logql", help="print the dashboards' LogQL and annotations (JSON)")
    lq.set_defaults(func=cmd_logql)

    pl = lsub.add_parser("pipeline", help="print the log formats, label rules and the"
                                          " promtail pipeline (JSON, for other shippers)")
    pl.set_defaults(func=cmd_pipeline)

    pa = lsub.add_parser("parse", help="parse log lines from stdin with the shipper's regexes")
    pa.add_argument("--component", default=log_formats.MARIADB,
                    choices=sorted(log_formats.COMPONENT_FORMATS))
    pa.set_defaults(func=cmd_parse)


def _loki(args: argparse.Namespace) -> Loki:
    return Loki(args.loki_url) if args.loki_url else loki_client(args.lab_dir)


def _fmt_ts(ts_ns: int) -> str:
    return datetime.fromtimestamp(ts_ns / 1e9).isoformat(sep=" ", timespec="milliseconds")


def cmd_query(args: argparse.Namespace) -> int:
    expr = logql.QUERIES.get(args.expr, args.expr)
    expr = logql.render(expr, cluster=args.cluster, node=args.node)
    try:
        entries = _loki(args).entries(expr, time.time() - args.since, limit=args.limit)
    except LokiError as exc:
        print(f"logs: {exc}", file=sys.stderr)
        return 1
    for e in entries:
        if args.json:
            print(json.dumps({"ts_ns": e.ts_ns, "labels": e.labels, "line": e.line}))
        else:
            where = "/".join(e.labels.get(k, "-") for k in ("cluster", "node", "component"))
            print(f"{_fmt_ts(e.ts_ns)} {where:<40} {e.line}")
    return 0


def events(loki: Loki, since: float, cluster: str = ".+", node: str = ".+") -> list[dict]:
    """Restart/recovery events from the dashboards' LogQL, oldest first."""
    out = []
    for name in ("galera_recovery_events", "ndb_restart_phases"):
        expr = logql.render(logql.QUERIES[name], cluster=cluster, node=node)
        for e in loki.entries(expr, since):
            out.append({"ts_ns": e.ts_ns, "kind": logql.classify(e.line),
                        "cluster": e.labels.get("cluster"), "node": e.labels.get("node"),
                        "simulated": e.labels.get("simulated") == "true", "line": e.line})
    return sorted(out, key=lambda ev: ev["ts_ns"])


def cmd_events(args: argparse.Namespace) -> int:
    try:
        found = events(_loki(args), time.time() - args.since, args.cluster, args.node)
    except LokiError as exc:
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


def cmd_logql(args: argparse.Namespace) -> int:
    print(json.dumps({"queries": logql.QUERIES, "events": logql.EVENTS,
                      "annotations": logql.annotations()}, indent=2))
    return 0


def cmd_pipeline(args: argparse.Namespace) -> int:
    print(json.dumps({"formats": log_formats.FORMATS, "levels": log_formats.LEVELS,
                      "component_formats": log_formats.COMPONENT_FORMATS,
                      "multiline_firstline": log_formats.MULTILINE_FIRSTLINE,
                      "promtail_pipeline_stages": pipeline_stages()}, indent=2))
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    for line in sys.stdin:
        line = line.rstrip("\n")
        fields = None
        for fmt in log_formats.COMPONENT_FORMATS[args.component]:
            fields = log_formats.parse_line(fmt, line)
            if fields is not None:
                fields = {"format": fmt, **fields,
                          "event": logql.classify(line, args.component)}
                break
        print(json.dumps(fields or {"format": None, "line": line}))
    return 0
