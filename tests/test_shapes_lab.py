"""The lab in other shapes than the shared test bed: a Galera-only lab of two nodes and garbd,
and an NDB-only lab (simulator) with two SQL nodes, each with the real monitoring over it.
For two and a half minutes neither raises a `*Down` or `*Absent` alert, nor holds one pending
for more than a minute and a half: nothing is expected of a product that is not deployed, and
garbd counts as the member it is. (A condition pending that long on a steady lab is one that
holds, and would fire at its `for:`, up to 5m; waiting those 5 minutes out showed nothing
more and cost the suite 2.5 minutes.)

Both labs run at once (their own directories and port ranges), before the shared lab comes
up (conftest orders this module first). The NDB-only one then serves the lab CLI's own
test: `up` again, `status`, and a `down` that leaves nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO
from helpers import epoch

from clusterscope.clients.vm import VM
from clusterscope.lab.core import pid_alive, port_in_use
from clusterscope.lab.ports import port as lab_port

pytestmark = [pytest.mark.lab, pytest.mark.shapes]
WATCH_SECONDS = 150
PENDING_LIMIT = 90  # seconds an alert may stay pending: a hiccup, not a state
# what `lab status --json` says of every service
KEYS = {"name", "part", "what", "host", "port", "pid", "log", "client_config", "simulated",
        "running", "extra"}


class ShapeLab:
    def __init__(self, root: Path, port_base: int) -> None:
        self.root, self.port_base = root, port_base
        self.env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root),
                        CLUSTERSCOPE_PORT_BASE=str(port_base))

    def cli(self, *args: str, timeout: float = 1800) -> str:
        proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=self.env,
                              cwd=REPO, text=True, capture_output=True, timeout=timeout)
        assert proc.returncode == 0, f"{args}: {proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        return proc.stdout

    def url(self, name: str) -> str:
        from clusterscope.lab.ports import port
        return f"http://127.0.0.1:{port(self.port_base, name)}"

    def vm(self) -> VM:
        return VM(self.url("victoria-metrics"))

    def down_or_absent(self) -> list[str]:
        """`*Down`/`*Absent` alerts firing in vmalert now, pending for longer than
        PENDING_LIMIT, or that ever reached the webhook (a moment's pending has not fired:
        its `for:` is what keeps a hiccup of a loaded machine from paging)."""
        with urllib.request.urlopen(f"{self.url('vmalert')}/api/v1/alerts", timeout=10) as r:
            active = json.loads(r.read())["data"]["alerts"] or []
        now = time.time()
        names = [f"{a['name']} ({a['state']}) {a.get('labels')}" for a in active
                 if a["state"] == "firing"
                 or now - epoch(a.get("activeAt")) > PENDING_LIMIT]
        notes = self.root / "monitoring" / "notifications.jsonl"
        if notes.exists():
            for line in notes.read_text().splitlines():
                for a in json.loads(line).get("alerts", []):
                    names.append(f"{a['labels']['alertname']} (notified) {a['labels']}")
        return [n for n in names if n.split(" ", 1)[0].endswith(("Down", "Absent"))]


@pytest.fixture(scope="module")
def shapes() -> dict[str, ShapeLab]:
    base = int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300"))
    labs = {}
    for offset, name in ((100, "galera"), (200, "ndb")):
        root = Path(tempfile.mkdtemp(prefix=f"cs-shape-{name}-"))
        root.chmod(0o755)  # the servers run as `mysql`
        labs[name] = ShapeLab(root, base + offset)
    try:
        labs["galera"].cli("lab", "up", "--galera", "--galera-nodes", "2", "--galera-garbd",
                           "--monitoring")
        labs["ndb"].cli("lab", "up", "--ndb", "--ndb-sql-nodes", "2", "--monitoring")
        yield labs
    finally:
        for lab in labs.values():
            subprocess.run([sys.executable, "-m", "clusterscope.cli", "lab", "down", "--wipe"],
                           env=lab.env, cwd=REPO, capture_output=True, timeout=600)


def test_shapes_run_without_a_down_or_absent_alert(shapes) -> None:
    g, n = shapes["galera"], shapes["ndb"]
    # each lab watches what its description lists, and only that
    g.vm().wait_for('mysql_global_status_wsrep_cluster_size{cluster="lab-galera"} == 3',
                    timeout=120, predicate=lambda r: len(r) == 2)  # two nodes, garbd counted
    members = g.vm().wait_for('clusterscope_cluster_members{cluster="lab-galera"}', 60,
                              predicate=lambda r: len(r) == 2)
    assert {m["metric"]["role"]: float(m["value"][1]) for m in members} \
        == {"galera": 2.0, "garbd": 1.0}
    n.vm().wait_for('ndb_up{cluster="lab-ndb",simulated="true"} == 1', timeout=120)
    n.vm().wait_for('ndb_sql_node_up{cluster="lab-ndb"} == 1', timeout=60,
                    predicate=lambda r: {x["metric"]["sql_node"] for x in r} == {"sql1", "sql2"})
    n.vm().wait_for('mysql_up{job="ndb_sql",cluster="lab-ndb"} == 1', timeout=60,
                    predicate=lambda r: len(r) == 2)
    assert not g.vm().query('up{job=~"ndbinfo.*|ndb_sql"}')
    assert not n.vm().query('up{job=~"galera.*"}')
    deadline = time.monotonic() + WATCH_SECONDS
    seen: set[str] = set()
    while time.monotonic() < deadline:
        for lab in (g, n):
            seen.update(lab.down_or_absent())
        time.sleep(15)
    for lab in (g, n):
        seen.update(lab.down_or_absent())
    assert not seen, sorted(seen)


def test_up_again_is_a_no_op_status_describes_each_service_and_down_leaves_nothing(
        shapes) -> None:
    """The lab CLI end to end, on the NDB-only shape (after its watch, as the last use of
    it): `up` with the same parts again changes no process, `status --json` describes every
    service (the NDB part simulated, its client configs private), and `down` leaves no
    process and no port behind."""
    n = shapes["ndb"]
    first = json.loads(n.cli("lab", "status", "--json"))
    n.cli("lab", "up", "--ndb", "--ndb-sql-nodes", "2", "--monitoring")
    again = json.loads(n.cli("lab", "status", "--json"))
    pids = {s["name"]: s["pid"] for s in first["services"]}
    assert {s["name"]: s["pid"] for s in again["services"]} == pids, "up again must be a no-op"
    services = {s["name"]: s for s in first["services"]}
    assert {"ndb-sql", "ndb-sql2", "ndb-model"} <= set(services)
    for s in services.values():
        assert KEYS <= set(s), s["name"]
        assert s["running"] and s["host"] == "127.0.0.1" and Path(s["log"]).exists()
        if s["part"] in ("ndb", "exporters"):
            # everything of the ndb part is simulated; the mysqld_exporter that probes its
            # SQL nodes is the real one (a part of its own, shared with Galera)
            assert s["simulated"] or s["part"] == "exporters", s["name"]
    sql = services["ndb-sql"]
    assert sql["port"] == lab_port(n.port_base, "ndb-sql")
    cnf = Path(sql["client_config"])
    assert stat.S_IMODE(cnf.stat().st_mode) == 0o600
    assert "user=ndbinfo_exporter" in cnf.read_text()
    assert Path(services["ndb-model"]["extra"]["cluster_log"]).is_relative_to(n.root)
    human = n.cli("lab", "status")
    assert "[SIMULATED]" in human and str(cnf) in human

    ports = [s["port"] for s in services.values() if s["port"]]
    n.cli("lab", "down")
    for s in services.values():
        assert not pid_alive(s["pid"]), f"{s['name']} (pid {s['pid']}) still runs"
    for p in ports:
        assert not port_in_use(p), f"port {p} still bound"
    assert json.loads(n.cli("lab", "status", "--json"))["services"] == []
