"""Lab part `galera`: a real MariaDB Galera cluster on 127.0.0.1 (3 nodes, or 2 with the
arbitrator garbd), the lab's mysqld_exporter probing each node, and the recovery tracker.

Bootstrap: a fresh lab starts node1 with a new cluster and lets the others join (SST).
A lab whose nodes are all down restarts from the node marked `safe_to_bootstrap`, or else
from the node with the most advanced recovered position, never from a guess. A node that
crashed recovers its position (`--wsrep-recover`) before it starts, so it rejoins by IST.
"""

from __future__ import annotations

import argparse
import sys

from clusterscope.lab import change_detector, exporters, lab_description, mariadb
from clusterscope.lab import galera_nodes as gn
from clusterscope.lab.core import Lab, LabError, wait_for_port

NAME = "galera"
HELP = ("MariaDB Galera cluster (real; 3 nodes, or 2 + garbd), mysqld_exporter, recovery"
        " tracker")
APP_USER = "clusterscope_app"
# the loadgen's schemas only: it refuses an account with more (clusterscope_loadgen/guard.py)
APP_GRANTS = ("ALL PRIVILEGES ON `cs\\_%`.*",)
GARBD = "garbd"


def sst_method(lab: Lab, args: argparse.Namespace | None = None) -> str:
    chosen = getattr(args, "galera_sst_method", None) if args else None
    return chosen or lab.settings(NAME).get("sst_method") or "rsync"


def up(lab: Lab, args: argparse.Namespace) -> None:
    method = sst_method(lab, args)
    saved = lab.settings(NAME)
    nodes = getattr(args, "galera_nodes", None) or saved.get("nodes") or gn.MAX_NODES
    garbd = getattr(args, "galera_garbd", None)
    garbd = bool(saved.get("garbd")) if garbd is None else garbd
    if saved.get("nodes") and (saved["nodes"], bool(saved.get("garbd"))) != (nodes, garbd) \
            and any(gn.has_data(lab, n) for n in range(1, gn.MAX_NODES + 1)):
        raise LabError(f"the lab's Galera cluster has {saved['nodes']} nodes"
                       f"{' and garbd' if saved.get('garbd') else ''}; `clusterscope lab"
                       " down --wipe` first to change its shape")
    lab.save_settings(NAME, {"sst_method": method, "nodes": nodes, "garbd": garbd})
    lab_description.write(lab)
    for n in gn.nodes(lab):
        gn.write_config(lab, n, method)
    live = [n for n in gn.nodes(lab) if gn.running(lab, n)]
    if not live:
        first = _bootstrap(lab)
        live = [first]
    _ensure_accounts(lab, live[0])
    for n in gn.nodes(lab):
        if n not in live:
            start_joiner(lab, n)
    for n in gn.nodes(lab):
        gn.wait_synced(lab, n)
    if garbd:
        start_garbd(lab)
    exporters.ensure_mysqld_exporter(lab)
    start_tracker(lab)
    change_detector.ensure(lab)


def _bootstrap(lab: Lab) -> int:
    states = {n: gn.read_grastate(lab, n) for n in gn.nodes(lab)}
    if not any(gn.has_data(lab, n) or states[n] for n in gn.nodes(lab)):
        print("galera: new cluster, bootstrapping node1", flush=True)
        mariadb.install_db(gn.base(lab, 1) / "data", gn.base(lab, 1) / "my.cnf")
        gn.start(lab, 1, bootstrap=True)
        return 1
    marked = [n for n in gn.nodes(lab) if states[n] and states[n].safe_to_bootstrap]
    if marked:
        first = marked[0]
        print(f"galera: restarting the cluster from node{first} (safe_to_bootstrap: 1)",
              flush=True)
    else:
        positions = {n: gn.position(lab, n) for n in gn.nodes(lab)}
        first = max(gn.nodes(lab), key=lambda n: (positions[n][1], -n))
        if positions[first][1] < 0:
            raise LabError("no Galera node has a usable position; `clusterscope lab down"
                           " --wipe` and bring the lab up afresh")
        print("galera: no node is safe_to_bootstrap; positions "
              + ", ".join(f"node{n}={positions[n][1]}" for n in gn.nodes(lab))
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
    if not any(gn.running(lab, i) for i in gn.nodes(lab) if i != n):
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
    # what mysqld_exporter reads needs no privilege (clusterscope/lab/exporters.py)
    mariadb.ensure_account(lab, sock, exporters.GALERA_USER, ())
    mariadb.ensure_account(lab, sock, exporters.NODE2_USER, ())
    for i in gn.nodes(lab):
        mariadb.client_config(lab, gn.node_name(i), APP_USER, lab.port(gn.node_name(i)))


def start_garbd(lab: Lab) -> None:
    """The arbitrator: a group member without a database (it counts in
    wsrep_cluster_size), on its own gmcast port, logging to its own file."""
    if lab.running(GARBD):
        return
    port = lab.port(GARBD)
    lab.require_free(port, GARBD)
    peers = ",".join(f"127.0.0.1:{lab.port(f'galera-node{n}-gmcast')}" for n in gn.nodes(lab))
    log = gn.garbd_log(lab)
    lab.spawn(GARBD, NAME, "garbd, the Galera arbitrator (a member without a database)",
              ["garbd", "--address", f"gcomm://{peers}", "--group", gn.CLUSTER,
               "--name", "garbd", "--log", str(log),
               "--options", f"gmcast.listen_addr=tcp://127.0.0.1:{port};"
                            "evs.suspect_timeout=PT3S;evs.inactive_timeout=PT8S"],
              port=port, extra={"node": "garbd", "garbd_log": str(log)},
              wait_ready=lambda: wait_for_port(port, 60, alive=lambda: lab.running(GARBD)))


def start_tracker(lab: Lab) -> None:
    port = lab.port("galera-tracker")
    argv = [sys.executable, "-m", "galera_tracker", "--web.listen-address", f"127.0.0.1:{port}",
            "--state.file", str(lab.path("galera") / "tracker-state.json"),
            "--config.clusters", str(lab_description.path(lab))]
    lab.spawn("galera-tracker", NAME, "Galera recovery tracker (SST/IST from the error logs)",
              argv, port=port, extra={"scrape": {"job": "galera_tracker", "path": "/metrics",
                                                 "labels": {}}})


