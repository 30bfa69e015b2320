"""The lab's NDB cluster, SIMULATED: MariaDBs serving `ndbinfo` plus the model driving them.

Services: one MariaDB per SQL node, `ndb-sql` (sql1) and `ndb-sql2`... (database `ndbinfo`,
account `ndbinfo_exporter` with SELECT on ndbinfo.* only; its 0600 client config is the
service's client_config), and `ndb-model` (`python -m clusterscope.ndbsim`, writing the same
rows into every SQL node as a real cluster's SQL nodes all read them from the data nodes;
extra["cluster_log"] = the simulated ndb_mgmd cluster log). Then the lab's mysqld_exporter
and ndbinfo_exporter join (`clusterscope.lab.exporters`, `clusterscope.lab.ndb_exporter`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import signal
import sys
import time

from ndbinfo_exporter.schema import version_tuple

from clusterscope.lab import (
    change_detector,
    exporters,
    lab_description,
    mariadb,
    ndb_exporter,
)
from clusterscope.lab.core import Lab, LabError, pid_alive
from clusterscope.lab.lab_description import DEFAULT_SQL_NODES, SQL, sql_nodes, sql_service
from clusterscope.ndbsim import control
from clusterscope.ndbsim import scenario as scenarios

NAME = "ndb"
HELP = "NDB Cluster SIMULATOR: MariaDB serving ndbinfo views, driven by a cluster model"
MODEL = "ndb-model"
ACCOUNT = exporters.NDB_USER
MAX_SQL_NODES = 3  # the lab's port table has room for three (clusterscope/lab/ports.py)
FAULTS = ("transporter-overload", "transporter-slowdown", "lcp-stall", "arbitrator-lost",
          "restart-stuck", "long-transaction", "lock-contention",
          "view-error", "null-columns", "ndbinfo-offline", "clear")


def _check_traversable(lab: Lab) -> None:
    """The server runs as `mysql`: every directory above its files must let others in."""
    for d in [lab.root, *lab.root.parents]:
        if d.exists() and not d.stat().st_mode & 0o001:
            raise LabError(f"{d} is not traversable by the `mysql` user (mode"
                           f" {d.stat().st_mode & 0o777:o}); `chmod o+x {d}` or use another"
                           " --lab-dir")


def _base(lab: Lab, i: int = 1):
    return lab.path("ndb", "sql" if i == 1 else f"sql{i}")


def _sock(lab: Lab, i: int = 1):
    sock = _base(lab, i) / "mysqld.sock"
    if len(str(sock)) >= 108:
        raise LabError(f"the socket path {sock} is {len(str(sock))} characters; unix sockets"
                       " allow 107: use a shorter --lab-dir")
    return sock


def up(lab: Lab, args: argparse.Namespace | None = None) -> None:
    settings = lab.settings(NAME)
    scen = getattr(args, "ndb_scenario", None) or settings.get("scenario") or "default"
    version = getattr(args, "ndb_version", None) or settings.get("version")
    try:
        path = scenarios.resolve(scen)
        sc = scenarios.load(str(path))
        version = version or sc.version
        version_tuple(version)
    except ValueError as exc:
        raise LabError(str(exc)) from exc
    count = getattr(args, "ndb_sql_nodes", None) or settings.get("sql_nodes") \
        or DEFAULT_SQL_NODES
    running = lab.running(SQL) and lab.running(MODEL)
    if running and (settings.get("scenario_path"), settings.get("version"),
                    settings.get("sql_nodes", count)) != (str(path), version, count):
        print(f"lab: ndb already runs scenario {settings.get('scenario')} version"
              f" {settings.get('version')} with {settings.get('sql_nodes')} SQL nodes;"
              " `lab down` first to change it", file=sys.stderr)
    if not running:
        lab.save_settings(NAME, {"scenario": scen, "scenario_path": str(path),
                                 "version": version, "data_version": None,
                                 "sql_nodes": count})
    _check_traversable(lab)
    lab_description.write(lab)
    for i in sql_nodes(lab):
        start_sql(lab, i)
    if not lab.running(MODEL):
        settings = lab.settings(NAME)
        cluster_log = lab.path("ndb") / "cluster.log"
        argv = [sys.executable, "-m", "clusterscope.ndbsim",
                *[a for i in sql_nodes(lab) for a in ("--socket", str(_sock(lab, i)))],
                "--scenario", settings["scenario_path"], "--version", settings["version"],
                "--cluster-log", str(cluster_log), "--sql-port", str(lab.port(SQL))]
        if settings.get("data_version"):
            argv += ["--data-version", settings["data_version"]]
        started = time.time()
        sock = _sock(lab)

        def ready() -> None:
            _wait_model(lab, sock, started, 60)

        lab.spawn(MODEL, NAME, f"NDB cluster model, scenario {settings['scenario']},"
                  f" version {settings['version']} (updates ndbinfo every second)", argv,
                  port=None, simulated=True, wait_ready=ready,
                  extra={"cluster_log": str(cluster_log), "scenario": settings["scenario"],
                         "version": settings["version"], "socket": str(sock)})
    exporters.ensure_mysqld_exporter(lab)
    ndb_exporter.up(lab)
    change_detector.ensure(lab)


def start_sql(lab: Lab, i: int) -> None:
    """SQL node i: a MariaDB serving the simulated ndbinfo (idempotent)."""
    name = sql_service(i)
    if lab.running(name):
        return
    base, sock, port = _base(lab, i), _sock(lab, i), lab.port(name)
    lab.require_free(port, name)
    mariadb.prepare_instance(base, port, {"innodb_buffer_pool_size": "32M",
                                          "max_heap_table_size": "256M",
                                          "innodb_flush_log_at_trx_commit": 2})
    lab.unregister(name)  # a killed node's record must not block its start
    svc = mariadb.start_server(lab, name, NAME, f"MariaDB serving the simulated ndbinfo"
                               f" schema (NDB SQL node {i} stand-in)", base, port,
                               simulated=True)
    mariadb.ensure_account(lab, sock, ACCOUNT, ["SELECT ON ndbinfo.*"])
    cnf = mariadb.client_config(lab, name, ACCOUNT, port)
    lab.register(dataclasses.replace(svc, client_config=str(cnf),
                                     extra={**svc.extra, "sql_node": f"sql{i}"}))


def kill_sql(lab: Lab, i: int) -> None:
    """SIGKILL SQL node i (a crash): the model goes on writing the others."""
    name = sql_service(i)
    svc = lab.service(name)
    if svc is None or not pid_alive(svc.pid, svc.start_time):
        raise LabError(f"{name} is not running")
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(svc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while pid_alive(svc.pid, svc.start_time):
        if time.monotonic() > deadline:
            raise LabError(f"{name} (pid {svc.pid}) still alive after SIGKILL")
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(svc.pid, os.WNOHANG)
        time.sleep(0.1)


def _wait_model(lab: Lab, sock, started: float, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not lab.running(MODEL):
            raise LabError("the NDB model exited while starting")
        try:
            st = control.state(sock)
            if st.get("wall", 0) >= started:
                return
        except Exception as exc:  # noqa: BLE001 - not there yet
            last = exc
        time.sleep(0.3)
    raise LabError(f"the NDB model did not report within {timeout:.0f} s ({last})")


