"""The change detector when things go wrong: a node down, a view this version lacks,
NULL columns, a failing view, a broken edit of the description. Each gets a clear
message and a metric, invents no change, and loses none: what changed meanwhile is found
once it can be read again. Against the lab's real MariaDB nodes and NDB simulator."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import eventually, scrape, val
from test_changes_lab import lcp_interval, listed, root_sql, wait_listed

pytestmark = pytest.mark.lab


def _params(lab, since: float, name: str) -> list[dict]:
    return [c for c in listed(lab) if c["name"] == name and c["start"] >= since]


def test_ndb_faults_invent_nothing_and_lose_nothing(lab) -> None:
    lab.ensure("ndb", "monitoring")
    port = lab.port("change-detector")
    # three values in 1..31 (its range), each different from the one before
    v1 = lcp_interval(lab) % 30 + 1
    v2, v3 = v1 % 30 + 1, (v1 + 1) % 30 + 1
    t0 = time.time()
    # NULL values (a column the data nodes lack) are unknown, not a change to NULL
    lab.cli("lab", "ndb", "fault", "null-columns", "--view", "config_values",
            "--columns", "config_value")
    try:
        lab.cli("lab", "ndb", "set-config", "TimeBetweenLocalCheckpoints", str(v1), "--now")
        time.sleep(12)
        assert _params(lab, t0, "TimeBetweenLocalCheckpoints") == []
    finally:
        lab.cli("lab", "ndb", "fault", "clear")
    # ...and once the values read again, the change is there
    found, _ = wait_listed(lab, lambda c: c["name"] == "TimeBetweenLocalCheckpoints"
                           and c["start"] >= t0 and len(c["nodes"]) == 2, "the change", t0)
    assert found["steps"][0]["items"][0][3] == str(v1)

    # a view that fails: the data nodes are not read (node_up 0), nothing is invented
    # (within 60 s: a poll reads every node in turn, each up to its 5 s query timeout, and
    # with a second lab on the machine one round took longer than 30 s)
    lab.cli("lab", "ndb", "fault", "view-error", "--view", "config_values")
    try:
        eventually(lambda: val(scrape(port), "clusterscope_changes_node_up",
                               cluster="lab-ndb", node="data", simulated="true") == 0, 60,
                   "data not read")
    finally:
        lab.cli("lab", "ndb", "fault", "clear")
    eventually(lambda: val(scrape(port), "clusterscope_changes_node_up", cluster="lab-ndb",
                           node="data", simulated="true") == 1, 30, "data read again")

    # a data node stopped while its configuration changes: found when it is back, as a
    # step of the same change as the node that took it while it was down
    t1 = time.time()
    lab.cli("lab", "ndb", "stop-node", "2", timeout=120)
    try:
        lab.cli("lab", "ndb", "set-config", "TimeBetweenLocalCheckpoints", str(v2), "--now")
        wait_listed(lab, lambda c: c["name"] == "TimeBetweenLocalCheckpoints"
                    and c["start"] >= t1 and c["nodes"] == ["1"], "node 1's step", t1)
    finally:
        lab.cli("lab", "ndb", "start-node", "2", "--time-scale", "120", "--wait",
                timeout=300)
    both, _ = wait_listed(lab, lambda c: c["name"] == "TimeBetweenLocalCheckpoints"
                          and c["start"] >= t1 and c["nodes"] == ["1", "2"],
                          "node 2's step after its restart", t1)
    node2 = both["steps"][1]
    assert node2["since"] < both["start"]  # its last reading was before it stopped

    # a version without ndbinfo.processes (7.5.7+): no version is read, none is invented,
    # and parameters are still followed
    model = lab.service("ndb-model")["extra"]
    t2 = time.time()
    lab.cli("lab", "ndb", "set-version", "7.5.4")
    try:
        lab.cli("lab", "ndb", "set-config", "TimeBetweenLocalCheckpoints", str(v3), "--now")
        wait_listed(lab, lambda c: c["name"] == "TimeBetweenLocalCheckpoints"
                    and c["start"] >= t2 and len(c["nodes"]) == 2, "a change on 7.5.4", t2)
        assert [c for c in listed(lab) if c["kind"] == "ndb_version" and c["start"] >= t2] == []
    finally:
        lab.cli("lab", "ndb", "set-version", model["version"])


def test_a_node_down_and_a_broken_description(lab, tmp_path: Path) -> None:
    """The product's own Detector on the lab's real Galera node 1 and on a node that does
    not answer, with the exporters' option file."""
    from clusterscope_changes.detector_state import State
    from clusterscope_changes.events import ChangesFile
    from clusterscope_changes.grouping import Grouper
    from clusterscope_changes.poller import Detector, Options

    lab.ensure("galera")
    desc = tmp_path / "clusterscope.yml"
    node1 = f"127.0.0.1:{lab.port('galera-node1')}"
    good = ("clusters:\n  - name: t\n    kind: galera\n    nodes:\n"
            f"      - {{name: node1, address: '{node1}'}}\n"
            "      - {name: gone, address: '127.0.0.1:1'}\n")
    desc.write_text(good)
    cnf = str(Path(lab.root) / "clients" / "exporters.my.cnf")
    d = Detector(Options(str(desc), cnf), State(tmp_path / "state.json"),
                 ChangesFile(tmp_path / "changes.jsonl"), Grouper(1800))
    assert d.poll() == []  # the first reading is what later ones are compared with
    gone = d.state.nodes["t/gone"]
    assert not gone.up and "cannot connect" in gone.error
    assert d.state.nodes["t/node1"].up
    before = root_sql(lab, 1, "SELECT @@GLOBAL.max_connections")
    root_sql(lab, 1, f"SET GLOBAL max_connections = {int(before) + 2}")
    try:
        lines = d.poll()
        desc.write_text("clusters: [ {name: t, kind: galera, nodes: [")  # a broken edit
        again = d.poll()
    finally:
        root_sql(lab, 1, f"SET GLOBAL max_connections = {before}")
    assert [(ln["node"], ln["name"], ln["new"], ln["nodes_total"]) for ln in lines] == [
        ("node1", "max_connections", str(int(before) + 2), "2")]
    assert json.loads((tmp_path / "changes.jsonl").read_text())["change_id"] == \
        lines[0]["change_id"]
    assert again == [] and "t/node1" in d.state.nodes and d.desc_error
    assert d.state.nodes["t/node1"].up  # the last good description is still watched


def test_a_galera_node_killed_and_restarted_is_no_change(lab) -> None:
    """SIGKILL, then the lab's start-node (recovered position, IST): the node is marked
    unread meanwhile, read again on a new connection, and nothing it recovers with (its
    start position, Galera's auto-increment settings) is reported as a change."""
    lab.ensure("galera", "monitoring")
    port = lab.port("change-detector")
    t0 = time.time()
    lab.cli("lab", "galera", "kill-node", "3")
    try:
        eventually(lambda: val(scrape(port), "clusterscope_changes_node_up",
                               cluster="lab-galera", node="node3", simulated="") == 0, 30,
                   "node3 unread")
    finally:
        lab.cli("lab", "galera", "start-node", "3", timeout=300)
    eventually(lambda: val(scrape(port), "clusterscope_changes_node_up", cluster="lab-galera",
                           node="node3", simulated="") == 1, 60, "node3 read again")
    time.sleep(12)  # two more polls: whatever the restart changed would be seen by now
    assert [c for c in listed(lab) if c["start"] >= t0 and c["cluster"] == "lab-galera"] == []
