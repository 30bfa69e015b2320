"""`clusterscope lab galera ...` and the Galera part's `lab up` options: kill, stop and start
the lab's real Galera nodes, and their status."""

from __future__ import annotations

import argparse
import json
import sys

from clusterscope.lab import galera_nodes as gn
from clusterscope.lab import galera_part
from clusterscope.lab.core import Lab, LabError, lab_dir_from_env


def add_up_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--galera-sst-method", choices=gn.SST_METHODS,
                   help="SST method of the Galera nodes (default rsync; kept for the lab)")
    p.add_argument("--galera-nodes", type=int, choices=range(2, gn.MAX_NODES + 1),
                   help=f"how many Galera nodes (default {gn.MAX_NODES}; kept for the lab)")
    p.add_argument("--galera-garbd", action="store_true", default=None,
                   help="add the arbitrator garbd as a member (kept for the lab)")




def add_commands(lsub: argparse._SubParsersAction) -> None:
    p = lsub.add_parser("galera", help="control the lab's Galera nodes")
    gsub = p.add_subparsers(dest="galera_cmd", required=True)
    st = gsub.add_parser("status", help="each node: running, wsrep state, cluster size")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)
    for cmd, helptext in (("kill-node", "SIGKILL a node (a crash)"),
                          ("stop-node", "shut a node down cleanly")):
        c = gsub.add_parser(cmd, help=helptext)
        c.add_argument("node", type=int, choices=range(1, gn.MAX_NODES + 1))
        c.set_defaults(func=cmd_node, action=cmd)
    s = gsub.add_parser("start-node", help="start a node into the cluster (IST when it can)")
    s.add_argument("node", type=int, choices=range(1, gn.MAX_NODES + 1))
    s.add_argument("--force-sst", action="store_true", help="drop its state: full SST")
    s.add_argument("--sst-method", choices=gn.SST_METHODS,
                   help="SST method for this start (default: the lab's)")
    s.set_defaults(func=cmd_node, action="start-node")


def _open(args: argparse.Namespace) -> Lab:
    return Lab(lab_dir_from_env(getattr(args, "lab_dir", None)), getattr(args, "port_base", None))


def cmd_node(args: argparse.Namespace) -> int:
    lab = _open(args)
    n = args.node
    if lab.service(gn.node_name(n)) is None:
        print(f"galera: {gn.node_name(n)} is not part of this lab; `clusterscope lab up"
              " --galera` first", file=sys.stderr)
        return 1
    try:
        if args.action == "kill-node":
            gn.kill(lab, n)
            print(f"galera: node{n} killed (SIGKILL)")
        elif args.action == "stop-node":
            gn.stop(lab, n)
            print(f"galera: node{n} stopped")
        else:
            gn.write_config(lab, n, galera_part.sst_method(lab))
            galera_part.start_joiner(lab, n, force_sst=args.force_sst, method=args.sst_method)
            print(f"galera: node{n} Synced")
    except LabError as exc:
        print(f"galera {args.action} {n}: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    lab = _open(args)
    rows = []
    for n in gn.nodes(lab):
        svc = lab.service(gn.node_name(n))
        row: dict = {"node": f"node{n}", "running": gn.running(lab, n),
                     "pid": svc.pid if svc else None,
                     "state": (svc.extra.get("state") if svc else "absent")}
        if row["running"]:
            try:
                v = gn.status_vars(lab, n)
                row.update(wsrep_state=v.get("wsrep_local_state_comment"),
                           cluster_size=int(v.get("wsrep_cluster_size", 0)),
                           last_committed=int(v.get("wsrep_last_committed", -1)))
            except Exception as exc:  # noqa: BLE001 - a node mid-start still gets a row
                row["error"] = str(exc)
        else:
            g = gn.read_grastate(lab, n)
            row["grastate"] = vars(g) if g else None
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(f"node{r['node'][-1]}: {'running' if r['running'] else r['state']:<8}"
              f" pid={r['pid'] or '-'} wsrep={r.get('wsrep_state', '-')}"
              f" cluster_size={r.get('cluster_size', '-')}")
    return 0
