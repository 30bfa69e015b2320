"""`clusterscope lab monitoring alerts|targets` and the monitoring part's `lab up` options."""

from __future__ import annotations

import argparse
import json
import sys
import time

from clusterscope.lab import logs_stack, monitoring_part
from clusterscope.lab.core import Lab, LabError, open_lab


def add_up_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--retention", default="30d",
                   help="monitoring: VictoriaMetrics -retentionPeriod (default 30d)")
    p.add_argument("--logs-retention", default=logs_stack.RETENTION,
                   help="monitoring: VictoriaLogs -retentionPeriod (default"
                        f" {logs_stack.RETENTION})")



def add_commands(lsub: argparse._SubParsersAction) -> None:
    p = lsub.add_parser("monitoring", help="the lab's alerts and scrape targets")
    msub = p.add_subparsers(dest="monitoring_cmd", required=True)
    a = msub.add_parser("alerts", help="what the webhook received and what fires now")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=cmd_alerts)
    t = msub.add_parser("targets", help="VictoriaMetrics' scrape targets and their health")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_targets)


def _open(args: argparse.Namespace) -> Lab:
    lab = open_lab(args)
    if lab.service(monitoring_part.VM) is None:
        raise LabError(f"monitoring is not up in {lab.root}: run `clusterscope lab up"
                       " --monitoring`")
    return lab


def cmd_alerts(args: argparse.Namespace) -> int:
    try:
        lab = _open(args)
        got, now = monitoring_part.received(lab), monitoring_part.firing_now(lab)
    except LabError as exc:
        print(f"lab monitoring alerts: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"received": got, "active": now}, indent=2))
        return 0
    print(f"received by the webhook ({len(got)}):")
    for r in got:
        when = time.strftime("%H:%M:%S", time.localtime(r["received_at"]))
        extra = {k: v for k, v in r["labels"].items() if k not in ("alertname", "severity")}
        print(f"  {when} {r['status']:<8} {r['alertname']} {extra}")
        if r["annotations"].get("summary"):
            print(f"           {r['annotations']['summary']}")
    print(f"active in vmalert now ({len(now)}):")
    for a in now:
        extra = {k: v for k, v in a["labels"].items() if k not in ("alertname", "severity")}
        print(f"  {a['state']:<8} {a['alertname']} {extra} value={a['value']}")
    return 0


def cmd_targets(args: argparse.Namespace) -> int:
    try:
        lab = _open(args)
        vm = monitoring_part.service_url(lab, monitoring_part.VM)
        data = monitoring_part.get_json(f"{vm}/api/v1/targets")
    except LabError as exc:
        print(f"lab monitoring targets: {exc}", file=sys.stderr)
        return 1
    active = data.get("data", {}).get("activeTargets", [])
    if args.json:
        print(json.dumps(active, indent=2))
        return 0
    fmt = "{:<18} {:<28} {:<6} {}"
    print(fmt.format("JOB", "TARGET", "HEALTH", "LAST ERROR"))
    for t in sorted(active, key=lambda t: (t["labels"].get("job", ""), t["scrapeUrl"])):
        print(fmt.format(t["labels"].get("job", ""), t["scrapeUrl"].split("//", 1)[-1],
                         t.get("health", "?"), t.get("lastError") or ""))
    return 0
