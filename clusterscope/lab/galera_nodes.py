"""One Galera node of the lab: its config, its saved position, starting and stopping it.

Every node has its own ports (client, gmcast, IST, SST), datadir, socket and error log
under `<lab>/galera/nodeN`, and runs as `mysql` (rsync SST cannot write the datadir when
the server runs as root).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pymysql

from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab, LabError, Service, chown, pid_alive

PART = "galera"
MAX_NODES = 3  # the lab's port table has room for three (clusterscope/lab/ports.py)
CLUSTER = "lab-galera"
PROVIDER = "/usr/lib/galera/libgalera_smm.so"
SST_METHODS = ("rsync", "mariabackup")
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
SYNCED_TIMEOUT = 300.0


def nodes(lab: Lab) -> list[int]:
    """The lab's Galera nodes, 1..N, as its settings say (`lab up --galera-nodes N`)."""
    return list(range(1, int(lab.settings(PART).get("nodes", MAX_NODES)) + 1))


def node_name(n: int) -> str:
    return f"galera-node{n}"


def garbd_log(lab: Lab) -> Path:
    return lab.path("galera", "garbd") / "garbd.log"


def base(lab: Lab, n: int) -> Path:
    return lab.path("galera", f"node{n}")


def error_log(lab: Lab, n: int) -> Path:
    return base(lab, n) / "error.log"


def write_config(lab: Lab, n: int, sst_method: str) -> Path:
    b = base(lab, n)
    gmcast = [lab.port(f"galera-node{i}-gmcast") for i in nodes(lab)]
    provider_opts = ";".join([
        f"gmcast.listen_addr=tcp://127.0.0.1:{lab.port(f'galera-node{n}-gmcast')}",
        f"ist.recv_addr=127.0.0.1:{lab.port(f'galera-node{n}-ist')}",
        "gcache.size=128M",
        # Loopback peers: a dead node is suspected after 3 s instead of 5 s, so a killed
        # node's writes stall for less time. Still above scheduling hiccups on 2 busy cores.
        "evs.suspect_timeout=PT3S", "evs.inactive_timeout=PT8S",
    ])
    wsrep = {
        "wsrep_on": "ON",
        "wsrep_provider": PROVIDER,
        "wsrep_cluster_name": CLUSTER,
        "wsrep_cluster_address": "gcomm://" + ",".join(f"127.0.0.1:{p}" for p in gmcast),
        "wsrep_node_name": f"node{n}",
        "wsrep_node_address": f"127.0.0.1:{lab.port(f'galera-node{n}-gmcast')}",
        "wsrep_provider_options": f'"{provider_opts}"',
        "wsrep_sst_receive_address": f"127.0.0.1:{lab.port(f'galera-node{n}-sst')}",
        "wsrep_sst_method": sst_method,
        "wsrep_slave_threads": 2,
        "binlog_format": "ROW",
        "default_storage_engine": "InnoDB",
        "innodb_autoinc_lock_mode": 2,
        "innodb_flush_log_at_trx_commit": 2,
    }
    b.mkdir(parents=True, exist_ok=True)
    (b / "tmp").mkdir(exist_ok=True)
    (b / "data").mkdir(exist_ok=True)
    cnf = mariadb.write_option_file(
        b / "my.cnf",
        {"mysqld": mariadb.server_options(b, lab.port(node_name(n)), wsrep),
         # mariabackup writes outside the node's directory unless told where.
         "sst": {"sst-log-archive-dir": b / "tmp" / "sst-logs"}})
    chown(b, mariadb.MYSQL_USER, recursive=False)
    for sub in ("tmp", "data"):
        chown(b / sub, mariadb.MYSQL_USER, recursive=False)
    return cnf


@dataclass
class GraState:
    uuid: str | None
    seqno: int
    safe_to_bootstrap: bool


def read_grastate(lab: Lab, n: int) -> GraState | None:
    f = base(lab, n) / "data" / "grastate.dat"
    try:
        text = f.read_text()
    except OSError:
        return None
    vals = dict(re.findall(r"^(\w+):\s*(\S*)", text, re.M))
    return GraState(uuid=vals.get("uuid"), seqno=int(vals.get("seqno", "-1") or -1),
                    safe_to_bootstrap=vals.get("safe_to_bootstrap") == "1")


def set_safe_to_bootstrap(lab: Lab, n: int) -> None:
    f = base(lab, n) / "data" / "grastate.dat"
    f.write_text(re.sub(r"^safe_to_bootstrap:.*$", "safe_to_bootstrap: 1", f.read_text(),
                        flags=re.M))


def has_data(lab: Lab, n: int) -> bool:
    return (base(lab, n) / "data" / "mysql").is_dir()


def wsrep_recover(lab: Lab, n: int) -> str | None:
    """The last committed `uuid:seqno` of a stopped node, read from InnoDB."""
    b = base(lab, n)
    log = b / "wsrep-recover.log"
    log.unlink(missing_ok=True)
    proc = subprocess.run(
        ["mariadbd", f"--defaults-file={b / 'my.cnf'}", f"--user={mariadb.MYSQL_USER}",
         "--wsrep-recover", f"--log-error={log}"],
        capture_output=True, text=True, timeout=180, env=_server_env(b))
    text = log.read_text(errors="replace") if log.exists() else proc.stderr
    m = re.findall(r"Recovered position:\s*([0-9a-f-]{36}):(-?\d+)", text)
    if not m:
        return None
    uuid, seqno = m[-1]
    if uuid == ZERO_UUID or int(seqno) < 0:
        return None
    return f"{uuid}:{seqno}"


def position(lab: Lab, n: int) -> tuple[str | None, int]:
    """(uuid, seqno) of a stopped node: grastate.dat if it was shut down cleanly, else
    recovered from the storage engine."""
    g = read_grastate(lab, n)
    if g and g.seqno >= 0 and g.uuid and g.uuid != ZERO_UUID:
        return g.uuid, g.seqno
    if not has_data(lab, n):
        return None, -1
    pos = wsrep_recover(lab, n)
    if pos is None:
        return None, -1
    uuid, seqno = pos.rsplit(":", 1)
    return uuid, int(seqno)


def _server_env(b: Path) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(b / "tmp"))


def start(lab: Lab, n: int, *, bootstrap: bool = False, start_position: str | None = None,
          sst_method: str | None = None) -> Service:
    b = base(lab, n)
    args: list[str] = []
    if bootstrap:
        args.append("--wsrep-new-cluster")
    if start_position:
        args.append(f"--wsrep-start-position={start_position}")
    if sst_method:
        args.append(f"--wsrep-sst-method={sst_method}")
    what = f"MariaDB Galera node{n}" + (" (bootstrapped the cluster)" if bootstrap else "")
    lab.unregister(node_name(n))  # a killed/stopped record must not block the start
    svc = mariadb.start_server(lab, node_name(n), PART, what, b, lab.port(node_name(n)),
                               args=args, timeout=SYNCED_TIMEOUT, env=_server_env(b))
    return describe(lab, n, svc)


def describe(lab: Lab, n: int, svc: Service, state: str = "running") -> Service:
    svc.client_config = str(lab.path("clients") / f"{node_name(n)}.cnf")
    svc.extra.update({
        "socket": str(base(lab, n) / "mysqld.sock"), "base": str(base(lab, n)),
        "error_log": str(error_log(lab, n)), "node": f"node{n}", "state": state,
        "gmcast_port": lab.port(f"galera-node{n}-gmcast"),
        "ist_port": lab.port(f"galera-node{n}-ist"),
        "sst_port": lab.port(f"galera-node{n}-sst"),
    })
    return lab.register(svc)


def running(lab: Lab, n: int) -> bool:
    return lab.running(node_name(n))


def status_vars(lab: Lab, n: int) -> dict[str, str]:
    conn = mariadb.socket_connect(base(lab, n) / "mysqld.sock")
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep%'")
            return {k: v for k, v in cur.fetchall()}
    finally:
        conn.close()


def wait_synced(lab: Lab, n: int, timeout: float = SYNCED_TIMEOUT) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    last: dict[str, str] | str = {}
    while time.monotonic() < deadline:
        if not running(lab, n):
            raise LabError(f"{node_name(n)} exited; see {error_log(lab, n)}")
        try:
            last = status_vars(lab, n)
            if last.get("wsrep_local_state_comment") == "Synced":
                return last
        except pymysql.MySQLError as exc:
            last = str(exc)
        time.sleep(0.5)
    raise LabError(f"{node_name(n)} not Synced after {timeout:.0f} s (last: {last});"
                   f" see {error_log(lab, n)}")


def kill(lab: Lab, n: int) -> None:
    """SIGKILL the node (and its SST helpers), keeping it listed as killed."""
    svc = lab.service(node_name(n))
    if svc is None or not pid_alive(svc.pid, svc.start_time):
        raise LabError(f"{node_name(n)} is not running")
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(svc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(svc.pid, signal.SIGKILL)
    _wait_dead(svc)
    _mark_down(lab, n, svc, "killed")


def stop(lab: Lab, n: int) -> None:
    """Clean shutdown (SIGTERM; the node leaves the group and saves its position)."""
    svc = lab.service(node_name(n))
    if svc is None or not pid_alive(svc.pid, svc.start_time):
        raise LabError(f"{node_name(n)} is not running")
    lab.stop(node_name(n), timeout=120)
    _mark_down(lab, n, svc, "stopped")


def _wait_dead(svc: Service, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while pid_alive(svc.pid, svc.start_time):
        if time.monotonic() > deadline:
            raise LabError(f"{svc.name} (pid {svc.pid}) still alive after SIGKILL")
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(svc.pid, os.WNOHANG)
        time.sleep(0.2)


def _mark_down(lab: Lab, n: int, svc: Service, state: str) -> None:
    svc.pid = None
    svc.start_time = None
    describe(lab, n, svc, state=state)
