"""`clusterscope maintenance start|stop|list`: maintenance windows as Alertmanager silences
(clusterscope/maintenance.py)."""

from __future__ import annotations

import argparse
import os
import sys

from clusterscope import maintenance
from clusterscope.clients import credentials

ENV = "CLUSTERSCOPE_ALERTMANAGER"


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("maintenance", help="maintenance windows: silence a cluster's or a"
                       " node's alerts in Alertmanager while you work on it")
    p.add_argument("--alertmanager", default=os.environ.get("CLUSTERSCOPE_ALERTMANAGER_URL",
                                                            maintenance.DEFAULT_URL),
                   help="Alertmanager's URL (default $CLUSTERSCOPE_ALERTMANAGER_URL or"
                        f" {maintenance.DEFAULT_URL}); through the door:"
                        " https://HOST:8427/alertmanager")
    p.add_argument("--alertmanager-credentials", metavar="FILE",
                   help=f"a file holding USER:PASSWORD of the door's operate role (default"
                        f" ${ENV}_CREDENTIALS, or ${ENV}_USER and ${ENV}_PASSWORD); never on"
                        " the command line")
    p.add_argument("--alertmanager-ca", metavar="FILE",
                   help=f"the CA the door's certificate is checked against (default ${ENV}_CA,"
                        " else the system's)")
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
        access = credentials.access(args.alertmanager_credentials, args.alertmanager_ca, ENV)
    except credentials.CredentialsError as exc:
        print(f"maintenance: {exc}", file=sys.stderr)
        return 1
    try:
        if args.maintenance_cmd == "start":
            if args.node and args.node_id:
                raise maintenance.MaintenanceError("--node or --node-id, not both")
            sid = maintenance.start(am, args.cluster, args.node, args.node_id,
                                    maintenance.parse_duration(args.duration), args.comment,
                                    access)
            scope = (f"node {args.node}" if args.node else f"data node {args.node_id}"
                     if args.node_id else "every alert")
            print(f"maintenance of {args.cluster} ({scope}) for {args.duration}: silence"
                  f" {sid}")
        elif args.maintenance_cmd == "stop":
            ended = maintenance.stop(am, args.cluster, access)
            print(f"ended {len(ended)} maintenance window(s) of {args.cluster}")
        else:
            for s in maintenance.ours(am, args.cluster, access):
                names = " ".join(f"{m['name']}={m['value']}" for m in s["matchers"])
                print(f"{s['id']}  {names}  until {s['endsAt']}  ({s.get('comment', '')})")
    except maintenance.MaintenanceError as exc:
        print(f"maintenance: {exc}", file=sys.stderr)
        return 1
    return 0
