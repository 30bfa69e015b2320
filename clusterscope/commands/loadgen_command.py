"""`clusterscope loadgen ...`: the loadgen product's commands plus the lab's own.

The product (`clusterscope_loadgen`) knows nothing of the lab. Here its parser is embedded,
`start`/`stop` run it as a lab service that monitoring scrapes, and `run`/`cycle` on a lab
client config get the lab's second Galera node as a second `--target` (the lab's nodes
report `wsrep_incoming_addresses` as AUTO, so the product cannot discover it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from clusterscope_loadgen import commandline as product
from clusterscope_loadgen import config, designs, estimators

from clusterscope.lab import lab_description
from clusterscope.lab.core import Lab, LabError, lab_dir_from_env, pid_alive
from clusterscope.lab.parts import lab_changed

LAB_CLUSTER = lab_description.GALERA_CLUSTER
NDB_CLUSTER = lab_description.NDB_CLUSTER


def description_of(cnf: Path) -> Path | None:
    """The description of the lab a client config belongs to (`<lab>/clients/X.cnf`)."""
    root = cnf.resolve().parent.parent
    found = lab_description.path(Lab(root))
    return found if (root / "state.json").is_file() and found.is_file() else None


def add_arguments(sub: argparse._SubParsersAction) -> None:
    lsub = product.add_arguments(sub)
    for name in ("run", "cycle"):
        parser = lsub.choices[name]
        parser.set_defaults(func=_with_lab_peer(parser.get_default("func")))
    add_commands(lsub)


def _with_lab_peer(func: Callable[[argparse.Namespace], int]) -> Callable:
    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        described = description_of(Path(args.target[0]))
        if args.description is None and described is not None:
            # a lab's own client config: the lab's description allows its clusters
            args.description = str(described)
            args.cluster = args.cluster or (LAB_CLUSTER if args.engine == "galera"
                                            else NDB_CLUSTER)
        if len(args.target) == 1:
            peers = lab_peer_configs(Path(args.target[0]))[:1]
            if peers:
                print(f"loadgen: second node from the lab the target belongs to: {peers[0]}",
                      flush=True)
                args.target = [*args.target, str(peers[0])]
        return func(args)
    return run


def add_commands(lsub: argparse._SubParsersAction) -> None:
    s = lsub.add_parser("start", help="run an experiment as lab service loadgen-<experiment>")
    s.add_argument("--experiment", required=True)
    s.add_argument("--node", default="galera-node1", help="lab service to load")
    s.add_argument("--window", type=float)
    s.add_argument("--duration", type=float, help="seconds (default: until stopped)")
    s.add_argument("--threads", type=int)
    s.add_argument("--warmup", type=float, help="seconds before the first window")
    s.add_argument("--variants", help="only these variants, comma-separated (with baselines)")
    s.add_argument("--design", choices=designs.DESIGNS, help="A/B design by name")
    s.add_argument("--estimator", choices=list(estimators.ESTIMATORS),
                   help="overhead estimator by name")
    s.add_argument("--config")
    s.add_argument("--json-out", help="when it stops: its windows, estimates and row checks"
                   " as JSON (what `loadgen run --json-out` writes)")
    s.set_defaults(func=cmd_start)
    t = lsub.add_parser("stop", help="stop lab loadgen services")
    t.add_argument("--experiment", help="only this one (default: all)")
    t.set_defaults(func=cmd_stop)


def cmd_start(args: argparse.Namespace) -> int:
    lab = Lab(lab_dir_from_env())
    name = f"loadgen-{args.experiment}"
    node = lab.service(args.node)
    if node is None or not node.client_config:
        print(f"loadgen: no lab service {args.node} with a client config (is the lab up?"
              " `clusterscope lab up --galera`)", file=sys.stderr)
        return 2
    try:
        config.experiment(args.experiment, args.config)
    except config.ConfigError as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    existing = lab.service(name)
    if existing and pid_alive(existing.pid, existing.start_time):
        print(f"loadgen: {name} already runs (pid {existing.pid}, port {existing.port})")
        return 0
    used = {s.port for s in lab.services() if s.part == "loadgen"}
    port = next((lab.port(f"loadgen{i}") for i in range(10)
                 if lab.port(f"loadgen{i}") not in used), None)
    if port is None:
        print("loadgen: all 10 loadgen ports are taken; stop one first", file=sys.stderr)
        return 2
    engine = "galera" if node.part == "galera" else "innodb"
    argv = [sys.executable, "-m", "clusterscope_loadgen", "run",
            "--experiment", args.experiment, "--target", node.client_config,
            "--engine", engine, "--metrics-port", str(port),
            "--cluster", LAB_CLUSTER if engine == "galera" else NDB_CLUSTER,
            "--description", str(lab_description.path(lab))]
    # The second node for two-writer and other-node-reader variants (the lab's Galera nodes
    # report wsrep_incoming_addresses as AUTO, so it cannot be discovered).
    peer = next((s for s in lab.services(node.part) if s.name != node.name and s.client_config
                 and s.name.startswith("galera-node") and pid_alive(s.pid, s.start_time)), None)
    if peer is not None:
        argv += ["--target", peer.client_config]
    for opt in ("window", "threads", "warmup", "variants", "config", "design", "estimator",
                "json_out"):
        if getattr(args, opt) is not None:
            argv += [f"--{opt.replace('_', '-')}", str(getattr(args, opt))]
    # After a timed run, serve the final values for two scrape intervals, then exit (the
    # demo waits for the service to end).
    argv += (["--duration", str(args.duration), "--linger", "10"] if args.duration
             else ["--forever"])
    try:
        svc = lab.spawn(name, "loadgen", f"loadgen {args.experiment} -> {args.node}", argv,
                        port=port, client_config=node.client_config, ready_timeout=120,
                        extra={"scrape": {"job": "loadgen", "path": "/metrics",
                                          "labels": {"cluster": LAB_CLUSTER}},
                               "experiment": args.experiment, "node": args.node})
    except LabError as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 1
    _lab_changed(lab)
    print(f"loadgen: {name} runs (pid {svc.pid}), metrics http://127.0.0.1:{port}/metrics,"
          f" log {svc.log}")
    return 0


def _lab_changed(lab: Lab) -> None:
    """Let up parts (monitoring) refresh what they scrape; the loadgen runs either way."""
    for problem in lab_changed(lab):
        print(f"loadgen: {problem}", file=sys.stderr)


# Longest a stopping loadgen may take to finish its window (the longest window an
# experiment config sets is 120 s) and book its rows.
STOP_TIMEOUT = 180.0


def _term_alone(lab: Lab, name: str) -> None:
    """SIGTERM to the loadgen process alone, and wait: it lets the running sysbench finish
    its window and books its rows (clusterscope_loadgen/runner.py). `lab.stop` signals the
    whole process group, sysbench too, which cut the last window short (sysbench exited
    -15: an invalid window, and a written experiment's rows of it unbooked)."""
    svc = lab.service(name)
    if svc is None or not pid_alive(svc.pid, svc.start_time):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(svc.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while pid_alive(svc.pid, svc.start_time) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(svc.pid, os.WNOHANG)
        time.sleep(0.2)


def lab_peer_configs(cnf: Path) -> list[Path]:
    """Client configs of the other running Galera nodes of the lab a target config belongs
    to (`<lab>/clients/galera-nodeN.cnf`), for when wsrep_incoming_addresses says AUTO."""
    root = cnf.resolve().parent.parent
    if not (root / "state.json").is_file():
        return []
    me = str(cnf.resolve())
    return [Path(s.client_config) for s in Lab(root).services("galera")
            if s.name.startswith("galera-node") and s.client_config
            and str(Path(s.client_config).resolve()) != me and pid_alive(s.pid, s.start_time)]


def cmd_stop(args: argparse.Namespace) -> int:
    lab = Lab(lab_dir_from_env())
    names = [s.name for s in lab.services("loadgen")
             if not args.experiment or s.name == f"loadgen-{args.experiment}"]
    if not names:
        print("loadgen: no loadgen service runs")
        return 0
    for n in names:
        try:
            _term_alone(lab, n)
            lab.stop(n)
        except LabError as exc:
            print(f"loadgen: {n}: {exc}", file=sys.stderr)
            return 1
        print(f"loadgen: stopped {n}")
    _lab_changed(lab)
    return 0
