"""The lab CLI on a lab directory of its own: a taken port is a clear error naming it, and
nothing is left running. (`up` again, `status --json` and `down` run on the NDB-only shape
lab: test_shapes_lab.py.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clusterscope.lab.ports import port as lab_port

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.lab
# a range of its own, next to the session lab's (each lab uses base .. base+99)
BASE = int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")) + 100


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
