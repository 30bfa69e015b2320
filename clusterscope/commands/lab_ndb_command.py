"""`clusterscope lab ndb ...` and the NDB part's `lab up` options: the simulated cluster's
restarts, stops, faults and version profile, through the simulator's control socket."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from collections.abc import Callable

from ndbinfo_exporter.schema import version_tuple

from clusterscope.lab import lab_description, ndb_part
from clusterscope.lab.core import LabError, open_lab
from clusterscope.ndbsim import control
from clusterscope.ndbsim.control import ControlError


def add_up_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ndb-scenario", help="NDB simulator scenario: default, large or a YAML"
                   " file (kept for the lab's lifetime)")
    p.add_argument("--ndb-version", help="NDB version profile the simulator serves: 7.5, 7.6,"
                   " 8.0, 8.4 or a release such as 8.0.36 (default: the scenario's)")
    p.add_argument("--ndb-sql-nodes", type=int, choices=range(1, ndb_part.MAX_SQL_NODES + 1),
                   help="how many SQL nodes serve ndbinfo (default"
                        f" {lab_description.DEFAULT_SQL_NODES}; kept for the lab)")




def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(ndb_part.NAME, help="control the simulated NDB cluster (restarts, faults)")
    nsub = p.add_subparsers(dest="ndb_cmd", required=True)
    st = nsub.add_parser("status", help="the model's nodes, LCP, restarts and faults")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)

    r = nsub.add_parser("restart-node", help="restart a data node through every restart phase")
    r.add_argument("node", type=int)
    r.add_argument("--profile", choices=["7.5", "7.6"],
                   help="restart behaviour (default: the version profile's)")
    r.add_argument("--initial", action="store_true", help="initial node restart (no local"
                   " recovery; all data copied from the live node)")
    r.add_argument("--time-scale", type=float, default=1.0,
                   help="play cluster time N times faster than the wall clock during the"
                        " restart (reported seconds stay in cluster time)")
    r.add_argument("--wait", action="store_true", help="return when the restart completed")
    r.add_argument("--timeout", type=float, help="with --wait: give up after this many"
                   " wall seconds (default: 3 x the planned duration + 60)")
    r.set_defaults(func=cmd_restart)

    st_ = nsub.add_parser("stop-node", help="stop a data node (`N STOP`): its rows leave"
                          " ndbinfo until start-node")
    st_.add_argument("node", type=int)
    st_.set_defaults(func=cmd_stop_node)
    sn = nsub.add_parser("start-node", help="start a stopped data node: it restarts through"
                         " every restart phase")
    sn.add_argument("node", type=int)
    sn.add_argument("--time-scale", type=float, default=1.0,
                    help="play cluster time N times faster during the restart")
    sn.add_argument("--wait", action="store_true", help="return when the restart completed")
    sn.set_defaults(func=cmd_start_node)

    for cmd, helptext in (("stop-all", "stop every data node (`ALL STOP`): the SQL nodes stay"
                                        " up but lose the cluster"),
                          ("start-all", "start every data node again (a system restart)")):
        a = nsub.add_parser(cmd, help=helptext)
        a.set_defaults(func=cmd_all, action=cmd)

    for cmd, helptext in (("kill-sql", "SIGKILL an SQL node (the others go on serving"
                                        " ndbinfo)"),
                          ("start-sql", "start an SQL node again")):
        k = nsub.add_parser(cmd, help=helptext)
        k.add_argument("sql_node", type=int, metavar="N", help="1 for ndb-sql, 2 for ndb-sql2...")
        k.set_defaults(func=cmd_sql, action=cmd)

    f = nsub.add_parser("fault", help="inject (or with --off clear) a fault")
    f.add_argument("fault", choices=ndb_part.FAULTS)
    f.add_argument("--off", action="store_true")
    f.add_argument("--node", type=int, help="transporter faults: reporting data node;"
                   " long-transaction: the data node whose TC holds it (default: the first)")
    f.add_argument("--remote", type=int, help="transporter faults: the other end")
    f.add_argument("--status", type=int, help="restart-stuck: node_restart_status_int to"
                   " hold a restart in (e.g. 10)")
    f.add_argument("--view", help="view-error / null-columns: the ndbinfo view")
    f.add_argument("--columns", help="null-columns: comma-separated view columns")
    f.add_argument("--table", type=int, help="lock-contention: the table id with the hot row"
                   " (default: the first user table, 10)")
    f.set_defaults(func=cmd_fault)

    v = nsub.add_parser("set-version", help="serve another version profile (views/columns)")
    v.add_argument("version", help="the SQL node's release: which views and columns exist")
    v.add_argument("--data-nodes", metavar="VERSION",
                   help="the data nodes' release when older (a rolling upgrade): tables"
                   " and columns they lack answer as a real SQL node answers them")
    v.set_defaults(func=cmd_version)

    c = nsub.add_parser("set-config", help="change a data node parameter in the management"
                        " server's configuration (each data node takes it when it restarts)")
    c.add_argument("param", help="e.g. DataMemory, TimeBetweenLocalCheckpoints")
    c.add_argument("value")
    c.add_argument("--now", action="store_true",
                   help="every running data node takes it at once (a rolling restart done)")
    c.set_defaults(func=cmd_config)


def _open(args: argparse.Namespace):
    lab = open_lab(args)
    svc = lab.service(ndb_part.MODEL)
    if svc is None or not lab.running(ndb_part.MODEL) or not lab.running(lab_description.SQL):
        raise LabError("the NDB simulator is not running: `clusterscope lab up --ndb`")
    return lab, svc.extra["socket"]


def _command(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A `lab ndb` command: lab and simulator errors become a message and exit status 1."""
    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (LabError, ControlError) as exc:
            print(f"lab ndb: {exc}", file=sys.stderr)
            return 1
    return run


@_command
def cmd_status(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    st = control.state(sock)
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    print(f"SIMULATED NDB cluster: scenario {st['scenario']}, version {st['version']},"
          f" cluster time {st['cluster_secs']} s (x{st['time_scale']})")
    for nid, n in st["nodes"].items():
        rs = "" if n["restart_status"] is None else f", restart status {n['restart_status']}"
        print(f"  node {nid}: {n['state']} (group {n['group']}, uptime {n['uptime']} s,"
              f" REDO {n['redo_used_ratio']:.1%}{rs})")
    lcp = st["lcp"]
    print(f"  LCP {lcp['id']}: {'running' if lcp['running'] else 'idle'},"
          f" {lcp['progress']:.1%} (an LCP takes {lcp['full_lcp_secs']} s)")
    for r in st["restarts"]:
        print(f"  restart {r['id']}: node {r['node']} profile {r['profile']} status"
              f" {r['status']} (planned {r['planned_total_secs']} s, x{r['time_scale']})")
    active = {k: v for k, v in st["faults"].items() if v}
    print(f"  faults: {active or 'none'}")
    return 0


@_command
def cmd_restart(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    res = control.send(sock, {"cmd": "restart", "node": args.node, "profile": args.profile,
                              "initial": args.initial, "time_scale": args.time_scale})
    print(f"restart {res['restart_id']} of node {res['node']} (profile {res['profile']}):"
          f" planned {res['planned_total_secs']} cluster s, ~{res['planned_wall_secs']}"
          " wall s", flush=True)
    if args.wait:
        timeout = args.timeout or res["planned_wall_secs"] * 3 + 60
        rec = control.wait_restart(sock, res["restart_id"], timeout)
        print(f"restart {res['restart_id']} completed: total_restart_secs"
              f" {rec['total_restart_secs']}; statuses {rec['statuses']}")
    return 0


@_command
def cmd_stop_node(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    res = control.send(sock, {"cmd": "stop-node", "node": args.node})
    print(f"node {res['node']} stopped (restart {res['restart_id']} waits for"
          f" `clusterscope lab ndb start-node {res['node']}`)")
    return 0


@_command
def cmd_start_node(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    res = control.send(sock, {"cmd": "start-node", "node": args.node,
                              "time_scale": args.time_scale})
    print(f"node {res['node']} starting (restart {res['restart_id']},"
          f" ~{res['planned_wall_secs']} wall s)", flush=True)
    if args.wait:
        rec = control.wait_restart(sock, res["restart_id"],
                                   res["planned_wall_secs"] * 3 + 60)
        print(f"restart {res['restart_id']} completed: total_restart_secs"
              f" {rec['total_restart_secs']}")
    return 0


@_command
def cmd_all(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    res = control.send(sock, {"cmd": args.action})
    print("every data node stopped: the SQL nodes answer without the cluster"
          if res["cluster_down"] else "every data node started")
    return 0


@_command
def cmd_sql(args: argparse.Namespace) -> int:
    lab = open_lab(args)
    if args.sql_node not in lab_description.sql_nodes(lab):
        raise LabError(f"the lab's NDB cluster has SQL nodes {lab_description.sql_nodes(lab)}")
    if args.action == "kill-sql":
        ndb_part.kill_sql(lab, args.sql_node)
        print(f"{lab_description.sql_service(args.sql_node)} killed (SIGKILL)")
    else:
        ndb_part.start_sql(lab, args.sql_node)
        print(f"{lab_description.sql_service(args.sql_node)} running")
    return 0


@_command
def cmd_fault(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    if args.fault == "restart-stuck" and args.status is None and not args.off:
        raise LabError("restart-stuck needs --status N (a node_restart_status_int)")
    if args.fault in ("view-error", "null-columns") and not args.view:
        raise LabError(f"{args.fault} needs --view NAME")
    cmd = {"cmd": "fault", "fault": args.fault, "on": not args.off, "node": args.node,
           "remote": args.remote, "status": args.status, "view": args.view,
           "table": args.table,
           "columns": [c.strip() for c in (args.columns or "").split(",") if c.strip()]}
    res = control.send(sock, cmd)
    active = {k: v for k, v in res["faults"].items() if v}
    print(f"faults now: {active or 'none'}")
    return 0


@_command
def cmd_version(args: argparse.Namespace) -> int:
    lab, sock = _open(args)
    try:
        version_tuple(args.version)
        if args.data_nodes:
            if version_tuple(args.data_nodes) > version_tuple(args.version):
                raise ValueError(f"data nodes {args.data_nodes} newer than the SQL node"
                                 f" {args.version}: the simulator plays only the other skew")
    except ValueError as exc:
        raise LabError(str(exc)) from exc
    res = control.send(sock, {"cmd": "version", "version": args.version,
                              "data_version": args.data_nodes})
    lab.save_settings(ndb_part.NAME, {"version": res["version"],
                             "data_version": res["data_version"]})
    svc = lab.service(ndb_part.MODEL)
    if svc is not None:
        lab.register(dataclasses.replace(svc, extra={**svc.extra, "version": res["version"],
                                                     "data_version": res["data_version"]}))
    print(f"ndbinfo now serves version profile {res['version']} (data nodes"
          f" {res['data_version']})")
    for view in res["not_served"]:
        print(f"  {view}: not served by the data nodes")
    for view, cols in res["columns_not_served"].items():
        print(f"  {view}: {', '.join(cols)} NULL (not served by the data nodes)")
    return 0


@_command
def cmd_config(args: argparse.Namespace) -> int:
    _, sock = _open(args)
    res = control.send(sock, {"cmd": "config", "param": args.param, "value": args.value,
                              "now": args.now})
    taken = (f"data nodes {', '.join(map(str, res['applied_to']))} run it now"
             if res["applied_to"] else "each data node takes it at its next restart")
    print(f"{res['param']} = {res['value']} (config generation {res['generation']}; {taken})"
          " SIMULATED")
    return 0
