"""The alerts on log lines (rules/vlogs/, LogsQL): vmalert accepts them; their patterns match
the recorded failures and none of the recorded successful recoveries; and in the lab a
recorded line written to a log reaches the webhook as its alert, through the real collector,
VictoriaLogs, vmalert and Alertmanager. promtool cannot run LogsQL: this is their test.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest
from helpers import REPO, eventually, shared_fixture
from logship import lines_of

from clusterscope import gotools
from clusterscope.lab import logs_stack
from clusterscope.lab.core import Lab, Service
from clusterscope.rules.logs import (
    ABORTING,
    ARBITRATION_LOST,
    FORCED_SHUTDOWN,
    GCP_STOP,
    NO_SPACE,
    SST_FAILED,
)

FIX = Path(__file__).parent / "fixtures" / "galera"
# a failed SST recorded in this project's lab (the joiner's SST script killed mid-transfer)
SST_FAILED_JOINER = FIX / "sst-failed-joiner-killed-node3.log"
SST_FAILED_DONOR = FIX / "sst-failed-joiner-killed-node1-donor.log"
SUCCESSFUL = ["restart-node3-ist-recover1-down20.log", "restart-node3-kill9-no-recover-fullSST.log",
              "restart-node3-sst-grastate-recover0.log", "restart-node3-sst-wipe-recover0.log"]

# The GCP monitor's warning as a real ndb_mgmd wrote it (pastebin.com/q9qrj3Tx: `[MgmtSrvr]
# WARNING -- Node 5: GCP Monitor: GCP_SAVE lag 60 seconds (no max lag)`), with the column
# padding of ndb_mgmd's cluster log; the node id and the time are the test's.
GCP_WARNING = "{stamp} [MgmtSrvr] WARNING  -- Node {node}: GCP Monitor: GCP_SAVE lag 60 seconds" \
    " (no max lag)"
# MariaDB's message when a write finds the disk full (the lab's mariadbd 10.11.19 format
# string `Disk is full writing '%s' (Errcode: %M). Waiting for someone to free space...`,
# %M = errno and glibc's strerror)
DISK_FULL = "{stamp} 0 [Warning] mariadbd: Disk is full writing './binlog.000001' (Errcode:" \
    ' 28 "No space left on device"). Waiting for someone to free space... (Expect up to 60' \
    " secs delay for server to continue after freeing disk space)"


@pytest.mark.tools("vmalert")
def test_log_rules_pass_vmalert_dry_run(tmp_path) -> None:
    vmalert = str(gotools.build(gotools.TOOLS["vmalert"]))  # the release compose pins
    files = sorted((REPO / "rules" / "vlogs").glob("*.yml"))
    assert files
    ok = subprocess.run([vmalert, f"-rule={REPO}/rules/vlogs/*.yml", "-dryRun"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr[-2000:]
    # vmalert parses the LogsQL: a broken query fails the check
    bad = tmp_path / "bad.yml"
    bad.write_text(files[0].read_text().replace('~"GCP Monitor', '~"(GCP Monitor', 1))
    no = subprocess.run([vmalert, f"-rule={bad}", "-dryRun"], capture_output=True, text=True,
                        timeout=60)
    assert no.returncode != 0 and "bad LogsQL expr" in no.stderr


def _pxc_lines() -> dict[str, list[str]]:
    out = {}
    for f in sorted(shared_fixture("pxc-logs").glob("*.log.gz")):
        lines = []
        for raw in gzip.open(f, "rt"):
            lines.append(json.loads(raw).get("log", "") if raw.startswith("{") else raw)
        out[f.name] = lines
    return out


def test_failed_sst_pattern_matches_recorded_failures_only() -> None:
    joiner = [ln for ln in lines_of(SST_FAILED_JOINER) if re.search(SST_FAILED, ln)]
    donor = [ln for ln in lines_of(SST_FAILED_DONOR) if re.search(SST_FAILED, ln)]
    assert any("Process completed with error: wsrep_sst_mariabackup --role 'joiner'" in ln
               for ln in joiner)
    assert any("Application state transfer failed" in ln for ln in joiner)
    assert any("SST sending failed" in ln for ln in donor)
    assert any("State transfer to -1.-1 (left the group) failed" in ln for ln in donor)
    for name in SUCCESSFUL:  # recorded in the lab: IST and SST recoveries that succeeded
        assert not [ln for ln in lines_of(FIX / name) if re.search(SST_FAILED, ln)], name
    for name in ("pxc80-node3-ist.log", "pxc80-operator-node3-sst42min-ist-ist.json.log",
                 "pxc80-operator-split-node2-sst.json.log"):
        assert not [ln for ln in lines_of(shared_fixture("galera", name))
                    if re.search(SST_FAILED, ln)], name
    # PXC 8.0 (the Percona Toolkit's recorded logs): its failed SSTs, in its own wording
    pxc = _pxc_lines()
    failed = [ln for ln in pxc["upgrade_node2.log.gz"] if re.search(SST_FAILED, ln)]
    assert any("Process completed with error: wsrep_sst_xtrabackup-v2" in ln for ln in failed)
    assert not [ln for ln in pxc["operator_split_node1.log.gz"] if re.search(SST_FAILED, ln)]


def test_gcp_and_disk_patterns() -> None:
    stamp = "2026-11-26 10:00:00"
    assert re.search(GCP_STOP, GCP_WARNING.format(stamp=stamp, node=5))
    assert re.search(GCP_STOP, "Node 2: GCP Monitor: GCP_COMMIT lag 12 seconds (max lag: 20s)")
    # the start-up lines of the same monitor are no GCP stop
    for line in ("Node 2: GCP Monitor: Computed max GCP_SAVE lag to 120 seconds",
                 "Node 2: GCP Monitor: unlimited lags allowed"):
        assert not re.search(GCP_STOP, line)
    assert re.search(NO_SPACE, DISK_FULL.format(stamp=stamp))
    assert re.search(NO_SPACE, "OS errno: 28 - No space left on device")
    for lines in _pxc_lines().values():  # weeks of PXC logs: no disk ran full
        assert not [ln for ln in lines if re.search(NO_SPACE, ln)]


def test_forced_shutdown_arbitration_and_abort_patterns() -> None:
    """Lines built from mysql-server's format strings (EventLogger.cpp, cited in
    clusterscope/rules/logs.py) with ndb_mgmd's prefix; the abort line as PXC 8.0 wrote it
    (the Percona Toolkit's recorded upgrade log) and as MariaDB's unireg_abort() writes it."""
    mgm = "2026-11-26 10:00:00 [MgmtSrvr] ALERT    -- Node 2: "
    forced = [mgm + "Forced node shutdown completed. Occurred during startphase 4. Caused by"
              " error 2303: 'System error, node killed during node restart by other node"
              "(Internal error, programming error or missing error message, please report a"
              " bug). Temporary error, restart node'.",
              mgm + "Forced node shutdown completed, restarting. Initiated by signal 9.",
              mgm + "Forced node shutdown completed. Occured during startphase 0."]
    assert all(re.search(FORCED_SHUTDOWN, ln) for ln in forced)
    assert not re.search(FORCED_SHUTDOWN, mgm.replace("ALERT   ", "INFO    ")
                         + "Node shutdown completed. Initiated by signal 15.")
    lost = ["Arbitration check lost - less than 1/2 nodes left",
            "Arbitration check lost - missing node group",
            "Arbitration lost - negative reply from node 50",
            "Network partitioning - no arbitrator available",
            "Network partitioning - no arbitrator configured",
            "Arbitration failure - arbitrator timeout [state=6]"]
    assert all(re.search(ARBITRATION_LOST, mgm + ln) for ln in lost)
    for ln in ("Arbitration check won - node group majority",
               "Arbitration check won - all node groups and more than 1/2 nodes left",
               "Arbitration won - positive reply from node 50",
               "Network partitioning - arbitration required",
               "Lost arbitrator node 50 - process failure [state=6]"):
        assert not re.search(ARBITRATION_LOST, mgm + ln), ln
    pxc = _pxc_lines()
    aborted = [ln for ln in pxc["upgrade_node2.log.gz"] if re.search(ABORTING, ln)]
    assert len(aborted) == 1 and "[MY-010119] [Server] Aborting" in aborted[0]
    assert re.search(ABORTING, "2026-11-26 10:00:00 0 [ERROR] Aborting")
    # recoveries that succeeded, and every other PXC log: no abort, no NDB event
    for name in SUCCESSFUL:
        assert not [ln for ln in lines_of(FIX / name) if re.search(ABORTING, ln)], name
    for name, lines in pxc.items():
        if name != "upgrade_node2.log.gz":
            assert not [ln for ln in lines if re.search(ABORTING, ln)], name
    manual = lines_of(Path(__file__).parent / "fixtures" / "logs" / "ndb-cluster-log-manual.log")
    assert not [ln for ln in manual if re.search(f"{FORCED_SHUTDOWN}|{ARBITRATION_LOST}", ln)]


# -- in the lab: a line in a log reaches the webhook ----------------------------------------


def _notifications(lab_root: Path) -> list[dict]:
    path = lab_root / "monitoring" / "notifications.jsonl"
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def _received(lab_root: Path, alertname: str, since: float, **labels: str) -> dict | None:
    for n in _notifications(lab_root):
        if n["received_at"] < since:
            continue
        for a in n.get("alerts", []):
            lb = a["labels"]
            if (lb.get("alertname") == alertname and a["status"] == "firing"
                    and all(lb.get(k) == v for k, v in labels.items())):
                return {**a, "received_at": n["received_at"], "receiver": n.get("receiver")}
    return None


def _record_latency(artifacts: Path, name: str, seconds: float) -> None:
    path = artifacts / "log-alert-latency.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = round(seconds, 2)
    path.write_text(json.dumps(data, indent=2))


@pytest.fixture(scope="module")
def alert_lab(lab):
    lab.ensure("ndb", "galera", "monitoring")
    return Lab(lab.root, lab.port_base)


@pytest.mark.lab
def test_gcp_stop_in_the_ndb_cluster_log_reaches_the_webhook(alert_lab, artifacts) -> None:
    cluster_log = next(s.extra["cluster_log"] for s in alert_lab.services()
                       if s.extra.get("cluster_log"))
    node = str(100 + uuid.uuid4().int % 150)  # an alert of its own, whatever ran before
    now = datetime.now()
    line = GCP_WARNING.format(stamp=f"{now:%Y-%m-%d %H:%M:%S}", node=node)
    t0 = time.time()
    with open(cluster_log, "a") as f:
        f.write(line + "\n")
    got = eventually(lambda: _received(alert_lab.root, "NdbGcpStop", t0, node=node), 90,
                     f"NdbGcpStop for node {node} at the webhook")
    assert got["labels"]["cluster"] == "lab-ndb" and got["labels"]["severity"] == "critical"
    assert got["receiver"] == "critical"  # critical alerts have their own path
    assert got["annotations"]["runbook_url"].endswith("/NdbGcpStop.md")
    _record_latency(artifacts, "NdbGcpStop", got["received_at"] - t0)


def _stand_in_node(lab: Lab, name: str) -> Path:
    """A Galera node's error log the lab ships (a stand-in service registered like a node
    and picked up by the collector's reload), so the alert's node is this test's alone."""
    log = lab.log_path(name)
    log.touch()
    lab.register(Service(name=name, part="galera", what="a test's stand-in Galera node",
                         host="127.0.0.1", port=None, pid=None, log=str(log),
                         extra={"error_log": str(log), "node": name}))
    logs_stack.refresh(lab)
    return log


def _restamped(lines: list[str]) -> list[str]:
    """Recorded lines with this minute's time in place of theirs (the alert looks at the
    last 10 minutes), in MariaDB's format (local time, hour padded with a space)."""
    now = datetime.now()
    stamp = f"{now:%Y-%m-%d} {now.hour:2d}:{now:%M:%S}"
    return [re.sub(r"^\d{4}-\d{2}-\d{2}\s+\d{1,2}:\d{2}:\d{2}", stamp, ln) for ln in lines]


@pytest.mark.lab
def test_a_failed_sst_reaches_the_webhook(alert_lab, artifacts) -> None:
    name = f"logs-test-{uuid.uuid4().hex[:8]}"
    log = _stand_in_node(alert_lab, name)
    try:
        # the joiner's recorded lines from the failure on (its SST script exiting)
        lines = lines_of(SST_FAILED_JOINER)
        start = next(i for i, ln in enumerate(lines) if "Failed to read uuid:seqno" in ln)
        time.sleep(2)  # the reloaded collector watches the new file
        t0 = time.time()
        with open(log, "a") as f:
            f.write("\n".join(_restamped(lines[start:start + 12])) + "\n")
        got = eventually(lambda: _received(alert_lab.root, "GaleraSstFailed", t0, node=name),
                         90, f"GaleraSstFailed for {name} at the webhook")
        assert got["labels"]["cluster"] == "lab-galera"
        assert got["labels"]["severity"] == "warning"
        assert float(got["annotations"]["description"].split(" has ")[1].split()[0]) >= 2
        _record_latency(artifacts, "GaleraSstFailed", got["received_at"] - t0)
    finally:
        alert_lab.unregister(name)
        logs_stack.refresh(alert_lab)


@pytest.mark.lab
def test_no_space_left_reaches_the_webhook(alert_lab, artifacts) -> None:
    name = f"logs-test-{uuid.uuid4().hex[:8]}"
    log = _stand_in_node(alert_lab, name)
    try:
        time.sleep(2)
        now = datetime.now()
        t0 = time.time()
        with open(log, "a") as f:
            f.write(DISK_FULL.format(stamp=f"{now:%Y-%m-%d} {now.hour:2d}:{now:%M:%S}") + "\n")
        got = eventually(lambda: _received(alert_lab.root, "GaleraDiskFull", t0, node=name),
                         90, f"GaleraDiskFull for {name} at the webhook")
        assert got["labels"]["component"] == "mariadb"
        _record_latency(artifacts, "GaleraDiskFull", got["received_at"] - t0)
    finally:
        alert_lab.unregister(name)
        logs_stack.refresh(alert_lab)
