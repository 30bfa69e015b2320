"""The lab CLI end to end on a lab of its own (NDB part only): `up` twice is a no-op,
`status --json` describes every service, a taken port is a clear error naming it, and
`down` leaves no process and no port behind."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clusterscope.lab.core import pid_alive, port_in_use
from clusterscope.lab.ports import port as lab_port

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.lab
# a range of its own, next to the session lab's (each lab uses base .. base+99)
BASE = int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")) + 100
KEYS = {"name", "part", "what", "host", "port", "pid", "log", "client_config", "simulated",
        "running", "extra"}


def cli(root: Path, base: int, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root), CLUSTERSCOPE_PORT_BASE=str(base))
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=env,
                          cwd=REPO, text=True, capture_output=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture()
def lab_root():
    root = Path(tempfile.mkdtemp(prefix="cs-cli-"))
    root.chmod(0o755)  # the MariaDB server runs as `mysql`
    yield root
    cli(root, BASE, "lab", "down", "--wipe", check=False)


def test_up_twice_status_and_down_leaves_nothing(lab_root: Path) -> None:
    cli(lab_root, BASE, "lab", "up", "--ndb")
    first = json.loads(cli(lab_root, BASE, "lab", "status", "--json").stdout)
    cli(lab_root, BASE, "lab", "up", "--ndb")
    again = json.loads(cli(lab_root, BASE, "lab", "status", "--json").stdout)
    pids = {s["name"]: s["pid"] for s in first["services"]}
    assert {s["name"]: s["pid"] for s in again["services"]} == pids, "up twice must be a no-op"

    services = {s["name"]: s for s in first["services"]}
    assert {"ndb-sql", "ndb-model"} <= set(services)
    for s in services.values():
        assert KEYS <= set(s), s["name"]
        assert s["running"] and s["host"] == "127.0.0.1" and Path(s["log"]).exists()
        # everything of the ndb part is simulated; the mysqld_exporter that probes its SQL
        # nodes is the real one (a part of its own, shared with Galera)
        assert s["simulated"] or s["part"] == "exporters", s["name"]
    sql = services["ndb-sql"]
    assert sql["port"] == lab_port(BASE, "ndb-sql")
    cnf = Path(sql["client_config"])
    assert stat.S_IMODE(cnf.stat().st_mode) == 0o600
    assert "user=ndbinfo_exporter" in cnf.read_text()
    assert Path(services["ndb-model"]["extra"]["cluster_log"]).is_relative_to(lab_root)
    human = cli(lab_root, BASE, "lab", "status").stdout
    assert "[SIMULATED]" in human and str(cnf) in human

    ports = [s["port"] for s in services.values() if s["port"]]
    cli(lab_root, BASE, "lab", "down")
    for s in services.values():
        assert not pid_alive(s["pid"]), f"{s['name']} (pid {s['pid']}) still runs"
    for p in ports:
        assert not port_in_use(p), f"port {p} still bound"
    after = json.loads(cli(lab_root, BASE, "lab", "status", "--json").stdout)
    assert after["services"] == []


def test_a_taken_port_is_a_clear_error_naming_it(lab_root: Path) -> None:
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken = lab_port(BASE, "ndb-sql")
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        proc = cli(lab_root, BASE, "lab", "up", "--ndb", check=False)
    assert proc.returncode != 0
    assert str(taken) in proc.stderr and "ndb-sql" in proc.stderr
    assert json.loads(cli(lab_root, BASE, "lab", "status", "--json").stdout)["services"] == []
