"""The soak's faults as actions on the lab: each kind injected, held and recovered,
in-process through the lab's own modules, and recorded in a `Fault`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable

from clusterscope.bench.soak.judge import Fault
from clusterscope.bench.soak.record import vm_query
from clusterscope.lab.core import Lab, LabError, pid_alive

GALERA_NODE = 3  # the loadgen uses node1 and node2; node3 is the one that fails
NDB_NODE = 2
ROTATE_NODE, RECOPY_NODE = 2, 1
NDB_TIME_SCALE = 30.0  # a 7.6 restart in ~15 wall seconds


# -- faults ---------------------------------------------------------------------------------
class Faults:
    """Each fault kind: inject, hold, recover; records what it did in a Fault."""

    def __init__(self, lab: Lab, vm_url: str, jobs_of: dict[str, list[str]]) -> None:
        self.lab, self.vm_url, self.jobs_of = lab, vm_url, jobs_of
        self.restarts: dict[str, list[float]] = {}

    def run(self, kind: str, hold: float) -> Fault:
        f = Fault(kind, "", time.time(), hold=hold)
        try:
            getattr(self, kind.replace("-", "_"))(f, hold)
        except Exception as exc:  # noqa: BLE001 - one fault's failure is a finding, not the end
            f.error = f"{type(exc).__name__}: {exc}"
        f.end = time.time()
        return f

    # Galera ------------------------------------------------------------------------------
    def galera_ist(self, f: Fault, hold: float, sst: bool = False) -> None:
        from clusterscope.lab import galera_nodes as gn
        from clusterscope.lab import galera_part
        n = GALERA_NODE
        f.target = f"node{n}"
        gn.kill(self.lab, n)
        time.sleep(hold)
        f.hold = time.time() - f.start
        gn.write_config(self.lab, n, galera_part.sst_method(self.lab))
        galera_part.start_joiner(self.lab, n, force_sst=sst)

    def galera_sst(self, f: Fault, hold: float) -> None:
        self.galera_ist(f, hold, sst=True)

    def _rotate(self, f: Fault, n: int, copy: bool, hold: float) -> None:
        from clusterscope.lab import galera_nodes as gn
        from clusterscope.lab import mariadb
        f.target = f"node{n}"
        log = gn.error_log(self.lab, n)
        if copy:
            # as users copy logs to the monitoring host: a new file renamed over the old
            # one (rsync's default), its lines all read before
            tmp = log.with_name(f".{log.name}.copy")
            shutil.copy2(log, tmp)
            shutil.chown(tmp, mariadb.MYSQL_USER, mariadb.MYSQL_USER)
            tmp.replace(log)
        else:
            log.replace(log.with_name(f"{log.name}.{int(time.time())}"))
        # the server reopens its error log by name (MariaDB FLUSH ERROR LOGS)
        mariadb.execute(gn.base(self.lab, n) / "mysqld.sock", ["FLUSH ERROR LOGS"])
        time.sleep(hold)

    def log_rotate(self, f: Fault, hold: float) -> None:
        self._rotate(f, ROTATE_NODE, copy=False, hold=hold)

    def log_recopy(self, f: Fault, hold: float) -> None:
        self._rotate(f, RECOPY_NODE, copy=True, hold=hold)

    # NDB ----------------------------------------------------------------------------------
    def _ndb_sock(self) -> str:
        from clusterscope.lab import ndb_part
        svc = self.lab.service(ndb_part.MODEL)
        if svc is None:
            raise LabError("the NDB simulator is not up")
        return svc.extra["socket"]

    def ndb_restart(self, f: Fault, hold: float) -> None:
        from clusterscope.ndbsim import control
        f.target = str(NDB_NODE)
        sock = self._ndb_sock()
        res = control.send(sock, {"cmd": "restart", "node": NDB_NODE, "profile": None,
                                  "initial": False, "time_scale": NDB_TIME_SCALE})
        control.wait_restart(sock, res["restart_id"], res["planned_wall_secs"] * 3 + 60)
        f.hold = time.time() - f.start

    def ndb_stop(self, f: Fault, hold: float) -> None:
        from clusterscope.ndbsim import control
        f.target = str(NDB_NODE)
        sock = self._ndb_sock()
        control.send(sock, {"cmd": "stop-node", "node": NDB_NODE})
        time.sleep(hold)
        f.hold = time.time() - f.start
        res = control.send(sock, {"cmd": "start-node", "node": NDB_NODE,
                                  "time_scale": NDB_TIME_SCALE})
        control.wait_restart(sock, res["restart_id"], res["planned_wall_secs"] * 3 + 60)

    def ndb_sql_kill(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import ndb_part
        serving = vm_query(self.vm_url, 'ndb_sql_node_serving{cluster="lab-ndb"} == 1')
        name = serving[0]["metric"]["sql_node"] if serving else "sql1"
        i = int(name.removeprefix("sql"))
        f.target = name
        ndb_part.kill_sql(self.lab, i)
        time.sleep(hold)
        f.hold = time.time() - f.start
        ndb_part.start_sql(self.lab, i)

    # our processes ------------------------------------------------------------------------
    def _kill_and_start(self, f: Fault, service: str, start: Callable[[], object],
                        hold: float) -> None:
        svc = self.lab.service(service)
        if svc is None or not pid_alive(svc.pid, svc.start_time):
            raise LabError(f"{service} is not running")
        f.target = service
        f.jobs = self.jobs_of.get(service, [])
        f.restarted.append(service)
        self.restarts.setdefault(service, []).append(time.time())
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(svc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while pid_alive(svc.pid, svc.start_time) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(svc.pid, os.WNOHANG)
            time.sleep(0.1)
        time.sleep(hold)
        f.hold = time.time() - f.start
        start()
        self.restarts[service].append(time.time())

    def kill_mysqld_exporter(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import exporters
        self._kill_and_start(f, exporters.MYSQLD_EXPORTER,
                             lambda: exporters.ensure_mysqld_exporter(self.lab), hold)

    def kill_ndb_exporter(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import ndb_exporter
        self._kill_and_start(f, ndb_exporter.NAME, lambda: ndb_exporter.up(self.lab), hold)

    def kill_tracker(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import galera_part
        self._kill_and_start(f, "galera-tracker", lambda: galera_part.start_tracker(self.lab), hold)

    def kill_inventory(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import monitoring_part
        self._kill_and_start(f, monitoring_part.INVENTORY,
                             lambda: monitoring_part.start_inventory(self.lab), hold)

    def restart_vm(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import monitoring_part
        f.target = monitoring_part.VM
        f.jobs = ["*"]
        self.restarts.setdefault(monitoring_part.VM, []).append(time.time())
        self.lab.stop(monitoring_part.VM)
        f.hold = time.time() - f.start
        monitoring_part.up(self.lab, argparse.Namespace(retention=None, logs_retention=None))
        self.restarts[monitoring_part.VM].append(time.time())
        time.sleep(min(hold, 5))

    def hang_ndb_exporter(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import ndb_exporter
        svc = self.lab.service(ndb_exporter.NAME)
        if svc is None or not pid_alive(svc.pid, svc.start_time):
            raise LabError("ndb-exporter is not running")
        f.target = ndb_exporter.NAME
        f.jobs = self.jobs_of.get(ndb_exporter.NAME, [])
        os.kill(svc.pid, signal.SIGSTOP)
        try:
            time.sleep(hold)
        finally:
            f.hold = time.time() - f.start
            os.kill(svc.pid, signal.SIGCONT)


