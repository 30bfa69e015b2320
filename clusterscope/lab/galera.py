"""Lab part `galera`: a real 3-node MariaDB Galera cluster on 127.0.0.1, a
prometheus-mysqld-exporter per node and the recovery tracker.

Bootstrap: a fresh lab starts node1 with a new cluster and lets the others join (SST).
A lab whose nodes are all down restarts from the node marked `safe_to_bootstrap`, or else
from the node with the most advanced recovered position, never from a guess. A node that
crashed recovers its position (`--wsrep-recover`) before it starts, so it rejoins by IST.
"""

from __future__ import annotations

import argparse
import json
import sys

from clusterscope.lab import galera_nodes as gn
from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab, LabError, lab_dir_from_env

NAME = "galera"
HELP = "3-node MariaDB Galera cluster (real), mysqld_exporter per node, recovery tracker"
APP_USER = "clusterscope_app"
APP_GRANTS = ("ALL PRIVILEGES ON `sbtest`.*", "ALL PRIVILEGES ON `cs\\_%`.*")
EXPORTER_USER = "clusterscope_exporter"
# Only what the dashboards and rules read: global_status (all wsrep_* incl. EVS latency,
# mysql_galera_status_info, threads_connected) and global_variables (max_connections,
# wsrep_desync, gcache size), neither of which needs a privilege. The processlist
# collector (on by default in 0.14) reads information_schema.processlist every scrape and
# needs PROCESS; nothing uses its series, so it is off and the account holds no privilege.
EXPORTER_GRANTS: tuple[str, ...] = ()
EXPORTER_FLAGS = ("--collect.global_status", "--collect.global_variables",
                  "--no-collect.info_schema.processlist", "--no-collect.slave_status",
                  "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem",
                  "--no-collect.info_schema.query_response_time")


def add_up_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--galera-sst-method", choices=gn.SST_METHODS,
                   help="SST method of the Galera nodes (default rsync; kept for the lab)")


def sst_method(lab: Lab, args: argparse.Namespace | None = None) -> str:
    chosen = getattr(args, "galera_sst_method", None) if args else None
    return chosen or lab.settings(NAME).get("sst_method") or "rsync"


def up(lab: Lab, args: argparse.Namespace) -> None:
    method = sst_method(lab, args)
    lab.save_settings(NAME, {"sst_method": method})
    for n in gn.NODES:
        gn.write_config(lab, n, method)
    live = [n for n in gn.NODES if gn.running(lab, n)]
    if not live:
        first = _bootstrap(lab)
        live = [first]
    _ensure_accounts(lab, live[0])
    for n in gn.NODES:
        if n not in live:
            start_joiner(lab, n)
    for n in gn.NODES:
        gn.wait_synced(lab, n)
        _start_exporter(lab, n)
    start_tracker(lab)


def _bootstrap(lab: Lab) -> int:
    states = {n: gn.read_grastate(lab, n) for n in gn.NODES}
    if not any(gn.has_data(lab, n) or states[n] for n in gn.NODES):
        print("galera: new cluster, bootstrapping node1", flush=True)
        mariadb.install_db(gn.base(lab, 1) / "data", gn.base(lab, 1) / "my.cnf")
        gn.start(lab, 1, bootstrap=True)
        return 1
    marked = [n for n in gn.NODES if states[n] and states[n].safe_to_bootstrap]
    if marked:
        first = marked[0]
        print(f"galera: restarting the cluster from node{first} (safe_to_bootstrap: 1)",
              flush=True)
    else:
        positions = {n: gn.position(lab, n) for n in gn.NODES}
        first = max(gn.NODES, key=lambda n: (positions[n][1], -n))
        if positions[first][1] < 0:
            raise LabError("no Galera node has a usable position; `clusterscope lab down"
                           " --wipe` and bring the lab up afresh")
        print("galera: no node is safe_to_bootstrap; positions "
              + ", ".join(f"node{n}={positions[n][1]}" for n in gn.NODES)
              + f" -> bootstrapping the most advanced, node{first}", flush=True)
        gn.set_safe_to_bootstrap(lab, first)
    gn.start(lab, first, bootstrap=True)
    return first


def start_joiner(lab: Lab, n: int, force_sst: bool = False,
                 method: str | None = None) -> None:
    """Start node n into the running cluster: by IST from its recovered position, or by
    SST when forced (its grastate.dat is removed, as when its state is lost)."""
    if gn.running(lab, n):
        raise LabError(f"{gn.node_name(n)} is already running; stop-node {n} first")
    if not any(gn.running(lab, i) for i in gn.NODES if i != n):
        raise LabError(f"no other Galera node is running for node{n} to join; run"
                       " `clusterscope lab up --galera` to restart the whole cluster")
    start_position = None
    if force_sst:
        (gn.base(lab, n) / "data" / "grastate.dat").unlink(missing_ok=True)
        print(f"galera: node{n} will join by SST ({method or sst_method(lab)})", flush=True)
    else:
        g = gn.read_grastate(lab, n)
        if gn.has_data(lab, n) and (g is None or g.seqno < 0):
            start_position = gn.wsrep_recover(lab, n)
            print(f"galera: node{n} recovered position {start_position or 'none (SST)'}",
                  flush=True)
    gn.start(lab, n, start_position=start_position, sst_method=method)
    gn.wait_synced(lab, n)


def _ensure_accounts(lab: Lab, n: int) -> None:
    # Account changes replicate through Galera, so one node is enough.
    sock = gn.base(lab, n) / "mysqld.sock"
    mariadb.execute(sock, ["CREATE DATABASE IF NOT EXISTS sbtest"])
    mariadb.ensure_account(lab, sock, APP_USER, APP_GRANTS)
    mariadb.ensure_account(lab, sock, EXPORTER_USER, EXPORTER_GRANTS)
    for i in gn.NODES:
        mariadb.client_config(lab, gn.node_name(i), APP_USER, lab.port(gn.node_name(i)))


def _start_exporter(lab: Lab, n: int) -> None:
    name = f"mysqld-exporter-node{n}"
    port = lab.port(name)
    cnf = mariadb.client_config(lab, name, EXPORTER_USER, lab.port(gn.node_name(n)))
    lab.spawn(name, NAME, f"prometheus-mysqld-exporter for node{n}",
              ["prometheus-mysqld-exporter", f"--config.my-cnf={cnf}",
               f"--web.listen-address=127.0.0.1:{port}", *EXPORTER_FLAGS],
              port=port, extra={"my_cnf": str(cnf), "node": f"node{n}", "scrape": {
                  "job": "galera", "path": "/metrics",
                  "labels": {"cluster": gn.CLUSTER, "node": f"node{n}"}}})


def start_tracker(lab: Lab) -> None:
    port = lab.port("galera-tracker")
    argv = [sys.executable, "-m", "galera_tracker", "--web.listen-address", f"127.0.0.1:{port}",
            "--state.file", str(lab.path("galera") / "tracker-state.json")]
    for n in gn.NODES:
        argv += ["--log", f"node{n}={gn.error_log(lab, n)}"]
    lab.spawn("galera-tracker", NAME, "Galera recovery tracker (SST/IST from the error logs)",
              argv, port=port, extra={"scrape": {"job": "galera_tracker", "path": "/metrics",
                                                 "labels": {"cluster": gn.CLUSTER}}})


# -- `clusterscope lab galera ...` -------------------------------------------------------
def add_commands(lsub: argparse._SubParsersAction) -> None:
    p = lsub.add_parser("galera", help="control the lab's Galera nodes")
    gsub = p.add_subparsers(dest="galera_cmd", required=True)
    st = gsub.add_parser("status", help="each node: running, wsrep state, cluster size")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)
    for cmd, helptext in (("kill-node", "SIGKILL a node (a crash)"),
                          ("stop-node", "shut a node down cleanly")):
        c = gsub.add_parser(cmd, help=helptext)
        c.add_argument("node", type=int, choices=gn.NODES)
        c.set_defaults(func=cmd_node, action=cmd)
    s = gsub.add_parser("start-node", help="start a node into the cluster (IST when it can)")
    s.add_argument("node", type=int, choices=gn.NODES)
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
            gn.write_config(lab, n, sst_method(lab))
            start_joiner(lab, n, force_sst=args.force_sst, method=args.sst_method)
            print(f"galera: node{n} Synced")
    except LabError as exc:
        print(f"galera {args.action} {n}: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    lab = _open(args)
    rows = []
    for n in gn.NODES:
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
