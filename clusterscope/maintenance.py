"""`clusterscope maintenance start|stop|list`: a maintenance window as Alertmanager silences.

A planned restart, upgrade or `N STOP` should page nobody: `start` silences a cluster's
alerts (or one node's) for a while, `stop` ends the window early, `list` shows what is
silenced. The silences are Alertmanager's own (API v2 `POST /api/v2/silences`, what
`amtool silence add` sends: prometheus/alertmanager api/v2/openapi.yaml v0.28.1), marked
with `createdBy: clusterscope maintenance` so `stop` ends only these. The Watchdog is never
silenced: its matchers name a cluster, which the Watchdog has not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

CREATED_BY = "clusterscope maintenance"
DEFAULT_URL = "http://127.0.0.1:9093"
_DURATION = re.compile(r"^(\d+)([mhd])$")


class MaintenanceError(Exception):
    pass


def parse_duration(text: str) -> timedelta:
    m = _DURATION.match(text)
    if not m or int(m.group(1)) == 0:
        raise MaintenanceError(f"--duration {text!r}: expected minutes, hours or days such as"
                               " 90m, 2h or 1d")
    n, unit = int(m.group(1)), m.group(2)
    return timedelta(minutes=n) if unit == "m" else timedelta(hours=n) if unit == "h" \
        else timedelta(days=n)


def _call(url: str, method: str = "GET", body: dict | None = None) -> object:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            text = resp.read()
    except urllib.error.HTTPError as exc:
        raise MaintenanceError(f"{method} {url}: {exc.code}"
                               f" {exc.read().decode(errors='replace').strip()[:300]}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise MaintenanceError(f"Alertmanager at {url.split('/api/')[0]} does not answer"
                               f" ({getattr(exc, 'reason', exc)}); --alertmanager URL or"
                               " CLUSTERSCOPE_ALERTMANAGER_URL") from exc
    return json.loads(text) if text else None


def matchers(cluster: str, node: str | None, node_id: str | None) -> list[dict]:
    out = [{"name": "cluster", "value": cluster, "isRegex": False, "isEqual": True}]
    if node:
        out.append({"name": "node", "value": node, "isRegex": False, "isEqual": True})
    if node_id:
        out.append({"name": "node_id", "value": node_id, "isRegex": False, "isEqual": True})
    return out


def start(am: str, cluster: str, node: str | None, node_id: str | None,
          duration: timedelta, comment: str) -> str:
    now = datetime.now(UTC)
    body = {"matchers": matchers(cluster, node, node_id),
            "startsAt": now.isoformat(), "endsAt": (now + duration).isoformat(),
            "createdBy": CREATED_BY, "comment": comment}
    res = _call(f"{am}/api/v2/silences", "POST", body)
    return str(res["silenceID"])  # type: ignore[index]


def ours(am: str, cluster: str | None = None) -> list[dict]:
    """Active silences made by this command (of one cluster)."""
    out = []
    for s in _call(f"{am}/api/v2/silences"):  # type: ignore[union-attr]
        if s.get("createdBy") != CREATED_BY or s["status"]["state"] == "expired":
            continue
        names = {m["name"]: m["value"] for m in s["matchers"]}
        if cluster is None or names.get("cluster") == cluster:
            out.append(s)
    return out


def stop(am: str, cluster: str) -> list[str]:
    ended = []
    for s in ours(am, cluster):
        _call(f"{am}/api/v2/silence/{s['id']}", "DELETE")
        ended.append(s["id"])
    return ended


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("maintenance", help="maintenance windows: silence a cluster's or a"
                       " node's alerts in Alertmanager while you work on it")
    p.add_argument("--alertmanager", default=os.environ.get("CLUSTERSCOPE_ALERTMANAGER_URL",
                                                            DEFAULT_URL),
                   help="Alertmanager's URL (default $CLUSTERSCOPE_ALERTMANAGER_URL or"
                        f" {DEFAULT_URL})")
    msub = p.add_subparsers(dest="maintenance_cmd", required=True)
    s = msub.add_parser("start", help="silence the cluster's (or a node's) alerts")
    s.add_argument("--cluster", required=True, help="the cluster's name (label `cluster`)")
    s.add_argument("--node", help="only this node (label `node`: a Galera node, an SQL node,"
                   " a host)")
    s.add_argument("--node-id", help="only this NDB data node (label `node_id`); its node"
                   " group's NdbNodeGroupLastReplica is cluster-wide: silence the cluster for"
                   " a planned stop in a two-replica group")
    s.add_argument("--duration", default="2h", help="how long (default 2h): 90m, 2h, 1d")
    s.add_argument("--comment", default="planned maintenance", help="why (shown in"
                   " Alertmanager)")
    s.set_defaults(func=cmd)
    t = msub.add_parser("stop", help="end the cluster's maintenance windows now")
    t.add_argument("--cluster", required=True)
    t.set_defaults(func=cmd)
    ls = msub.add_parser("list", help="the maintenance windows in effect")
    ls.add_argument("--cluster")
    ls.set_defaults(func=cmd)


def cmd(args: argparse.Namespace) -> int:
    am = args.alertmanager.rstrip("/")
    try:
        if args.maintenance_cmd == "start":
            if args.node and args.node_id:
                raise MaintenanceError("--node or --node-id, not both")
            sid = start(am, args.cluster, args.node, args.node_id,
                        parse_duration(args.duration), args.comment)
            scope = (f"node {args.node}" if args.node else f"data node {args.node_id}"
                     if args.node_id else "every alert")
            print(f"maintenance of {args.cluster} ({scope}) for {args.duration}: silence"
                  f" {sid}")
        elif args.maintenance_cmd == "stop":
            ended = stop(am, args.cluster)
            print(f"ended {len(ended)} maintenance window(s) of {args.cluster}")
        else:
            for s in ours(am, args.cluster):
                names = " ".join(f"{m['name']}={m['value']}" for m in s["matchers"])
                print(f"{s['id']}  {names}  until {s['endsAt']}  ({s.get('comment', '')})")
    except MaintenanceError as exc:
        print(f"maintenance: {exc}", file=sys.stderr)
        return 1
    return 0
