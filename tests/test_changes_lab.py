"""Changes in the lab, end to end: a `SET GLOBAL` on a real Galera node, a string variable
set node by node, the NDB simulator's version and configuration changes, each read by the
real detector with the exporters' logins, shipped by the real collector into the real
VictoriaLogs and listed by `clusterscope changes` (the NDB ones SIMULATED)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from helpers import eventually, scrape, series

pytestmark = pytest.mark.lab

DETECTION_LIMIT = 120.0  # the "within two minutes"


def root_sql(lab, node: int, stmt: str) -> str:
    """As the lab's root over node N's socket: the DBA's own session, not the detector's."""
    sock = Path(lab.root) / "galera" / f"node{node}" / "mysqld.sock"
    out = subprocess.run(["mysql", "-uroot", "-S", str(sock), "-N", "-B", "-e", stmt],
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def lcp_interval(lab) -> int:
    """TimeBetweenLocalCheckpoints (parameter 120) as data node 1 reports it."""
    cnf = Path(lab.root) / "clients" / "ndb-sql.cnf"
    out = subprocess.run(["mysql", f"--defaults-file={cnf}", "-N", "-e",
                          "SELECT config_value FROM ndbinfo.config_values WHERE node_id = 1"
                          " AND config_param = 120"], capture_output=True, text=True,
                         check=True, timeout=60)
    return int(out.stdout.strip())


def listed(lab, *extra: str) -> list[dict]:
    out = lab.cli("changes", "--since", "30m", "--json", *extra, timeout=300)
    return json.loads(out.stdout)["changes"]


def wait_listed(lab, match, what: str, since: float, timeout: float = DETECTION_LIMIT
                ) -> tuple[dict, float]:
    """The change `match` picks, and how long after `since` `clusterscope changes` first
    listed it."""
    found = eventually(lambda: next((c for c in listed(lab) if match(c)), None), timeout,
                       f"`clusterscope changes` listing {what}")
    return found, time.time() - since


def read_once(lab, cluster: str) -> None:
    """Until the detector has read every node of `cluster` (`clusterscope_changes_node_up`
    1): a value set before its first reading is where it starts, not a change. A lab part
    brought up just now is not read yet."""
    port = lab.port("change-detector")

    def read() -> bool:
        ups = [v for lbl, v in series(scrape(port), "clusterscope_changes_node_up")
               if lbl.get("cluster") == cluster]
        return bool(ups) and all(v == 1 for v in ups)
    eventually(read, 60, f"the change detector reading every node of {cluster}")


def test_set_global_on_one_node_and_a_string_variable_node_by_node(lab) -> None:
    lab.ensure("galera", "monitoring")
    read_once(lab, "lab-galera")
    before = root_sql(lab, 1, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
    target = "1" if before != "1" else "2"
    t0 = time.time()
    root_sql(lab, 1, f"SET GLOBAL innodb_flush_log_at_trx_commit = {target}")
    one, latency = wait_listed(
        lab, lambda c: c["name"] == "innodb_flush_log_at_trx_commit" and c["start"] >= t0 - 1
        and c["steps"][0]["items"][0][3] == target, "the SET GLOBAL", t0)
    assert latency < DETECTION_LIMIT
    assert one["cluster"] == "lab-galera" and one["nodes"] == ["node1"]
    assert one["kind"] == "variable" and one["nodes_total"] == 3
    assert one["steps"][0]["items"] == [["variable", "innodb_flush_log_at_trx_commit", before,
                                         target]]
    assert not one["simulated"]

    # a string variable, typed on each node in turn: one rolling change of three steps
    old = [root_sql(lab, n, "SELECT @@GLOBAL.general_log_file") for n in (1, 2, 3)]
    # the same value on every node (the server must be able to create it: /tmp)
    path = f"/tmp/cs-changes-test-{lab.port_base}.log"
    t1 = time.time()
    try:
        last = t1
        for n in (1, 2, 3):
            last = time.time()
            root_sql(lab, n, f"SET GLOBAL general_log_file = '{path}'")
            if n < 3:
                time.sleep(12)  # more than two polls apart: three separate readings
        # listed whole within two minutes of its last step
        rolling, latency = wait_listed(
            lab, lambda c: c["name"] == "general_log_file" and c["start"] >= t1 - 1
            and len(c["nodes"]) == 3, "the rolling change on three nodes", last)
        assert latency < DETECTION_LIMIT
        assert rolling["nodes"] == ["node1", "node2", "node3"]
        assert [s["items"] for s in rolling["steps"]] == [
            [["variable", "general_log_file", old[i], path]] for i in range(3)]
        assert rolling["end"] - rolling["start"] >= 20  # the steps keep their own times
        assert len({c["change_id"] for c in listed(lab) if c["name"] == "general_log_file"
                    and c["start"] >= t1 - 1}) == 1
    finally:
        for n in (1, 2, 3):
            root_sql(lab, n, f"SET GLOBAL general_log_file = '{old[n - 1]}'")
        root_sql(lab, 1, f"SET GLOBAL innodb_flush_log_at_trx_commit = {before}")
    text = lab.cli("changes", "--since", "30m").stdout
    assert "general_log_file" in text and "rolling over 3 of 3 nodes" in text


@pytest.mark.parametrize("profile", ["8.0", "8.4"])
def test_ndb_version_and_parameter_changes(lab, profile: str) -> None:
    lab.ensure("ndb", "monitoring")
    read_once(lab, "lab-ndb")
    model = lab.service("ndb-model")["extra"]
    was = [model["version"], *(["--data-nodes", model["data_version"]]
                               if model.get("data_version") not in (None, model["version"])
                               else [])]
    t0 = time.time()
    lab.cli("lab", "ndb", "set-version", profile)
    try:
        upgrade, latency = wait_listed(
            lab, lambda c: c["kind"] == "ndb_version" and c["start"] >= t0 - 1
            and f"ndb-{profile}" in c["steps"][0]["items"][0][3] and len(c["nodes"]) == 2,
            f"the version change to {profile} on both data nodes", t0)
        assert latency < DETECTION_LIMIT and upgrade["simulated"]
        assert upgrade["nodes"] == ["1", "2"]  # both data nodes, one change
        # a parameter: the management server's configuration, then a rolling restart
        value = str(lcp_interval(lab) % 30 + 1)  # another value in its range 1..31
        t1 = time.time()
        lab.cli("lab", "ndb", "set-config", "TimeBetweenLocalCheckpoints", value)
        for node in ("1", "2"):
            lab.cli("lab", "ndb", "restart-node", node, "--time-scale", "120", "--wait",
                    timeout=300)
            time.sleep(8)
        config, latency = wait_listed(
            lab, lambda c: c["name"] == "TimeBetweenLocalCheckpoints" and c["start"] >= t1
            and len(c["nodes"]) == 2, "the rolling parameter change", t1,
            timeout=DETECTION_LIMIT + 60)
        assert config["kind"] == "ndb_config" and config["nodes"] == ["1", "2"]
        assert config["steps"][0]["items"][0][3] == value
    finally:
        lab.cli("lab", "ndb", "set-version", *was)
