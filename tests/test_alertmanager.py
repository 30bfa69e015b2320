"""Alertmanager's routing and inhibition as generated for the lab and compose, run by the
real Alertmanager and amtool (the version compose pins, built from its Go module)."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml
from helpers import eventually

from clusterscope import gotools
from clusterscope.rules import alertmanager


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def am(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("am")
    hook = {"url": "http://127.0.0.1:9/alerts", "send_resolved": True}
    cfg = alertmanager.route_to(hook, "1s", "5s",
                                critical={"url": "http://127.0.0.1:9/critical"},
                                heartbeat={"url": "http://127.0.0.1:9/heartbeat"})
    path = tmp / "alertmanager.yml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    port = _free_port()
    proc = subprocess.Popen(
        [str(gotools.build(gotools.TOOLS["alertmanager"])), f"--config.file={path}",
         f"--storage.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
         "--cluster.listen-address="], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        eventually(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200,
                   30, "Alertmanager ready")
        yield url, path
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _post(url: str, alerts: list[dict]) -> None:
    body = json.dumps([{"labels": a, "annotations": {}} for a in alerts]).encode()
    req = urllib.request.Request(f"{url}/api/v2/alerts", body,
                                 {"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=5).read()


def test_a_cause_silences_the_symptoms_it_explains(am) -> None:
    url, _ = am
    w = {"severity": "warning"}
    alerts = {
        # the exporter is down: the cluster's other NDB alerts are noise
        "src1": {"alertname": "NdbExporterDown", "cluster": "c1", **w},
        "lcp": {"alertname": "NdbLcpStalled", "cluster": "c1", **w},
        "stuck": {"alertname": "NdbRestartStuck", "cluster": "c1", "node_id": "2", **w},
        # a dead data node silences its own alerts, not another node's
        "src2": {"alertname": "NdbDataNodeDown", "cluster": "c2", "node_id": "3",
                 "severity": "critical"},
        "same": {"alertname": "NdbTransporterOverloaded", "cluster": "c2", "node_id": "3",
                 "remote_node_id": "4", **w},
        "other": {"alertname": "NdbRestartStuck", "cluster": "c2", "node_id": "4", **w},
        # a Galera node down explains its own state, not another node's, and not the
        # cluster-level "redundancy lost"
        "src3": {"alertname": "GaleraNodeNotReady", "cluster": "g", "node": "node3", **w},
        "own": {"alertname": "GaleraNodeOutOfSync", "cluster": "g", "node": "node3", **w},
        "size": {"alertname": "GaleraClusterSizeReduced", "cluster": "g", **w},
        "sync": {"alertname": "GaleraNodeOutOfSync", "cluster": "g", "node": "node1", **w},
    }
    _post(url, list(alerts.values()))

    def state() -> dict[str, bool]:
        with urllib.request.urlopen(f"{url}/api/v2/alerts", timeout=5) as r:
            got = json.load(r)
        out = {}
        for key, labels in alerts.items():
            match = [a for a in got if all(a["labels"].get(k) == v for k, v in labels.items())
                     and len(a["labels"]) == len(labels)]
            if match:
                out[key] = bool(match[0]["status"]["inhibitedBy"])
        return out if len(out) == len(alerts) else {}

    inhibited = eventually(lambda: (s := state()) and s["lcp"] and s["own"] and s, 30,
                           "inhibition applied")
    assert {k for k, v in inhibited.items() if v} == {"lcp", "stuck", "same", "own"}


@pytest.mark.parametrize("labels,receiver", [
    ("alertname=ClusterscopeWatchdog severity=info", "heartbeat"),
    ("alertname=NdbDataNodeDown severity=critical cluster=c node_id=2", "critical"),
    ("alertname=NdbRestartTimeRegressed severity=warning cluster=c node_id=2", "default"),
    ("alertname=GaleraNonPrimary severity=critical cluster=g node=node1", "critical"),
    ("alertname=GaleraRecvQueueHigh severity=warning cluster=g node=node1", "default"),
])
def test_routes(am, labels: str, receiver: str) -> None:
    _, path = am
    amtool = gotools.build(gotools.TOOLS["amtool"])
    proc = subprocess.run([str(amtool), "config", "routes", "test", f"--config.file={path}",
                           *labels.split()], capture_output=True, text=True)
    assert proc.stdout.strip() == receiver, proc.stdout + proc.stderr


def test_restart_alerts_group_per_cluster_not_per_node(am) -> None:
    """Review #36: a regression after an upgrade reaches every node of the rolling restart:
    one group per cluster."""
    _, path = am
    route = yaml.safe_load(Path(path).read_text())["route"]
    restart = next(r for r in route["routes"] if 'alertname=~"NdbRestart.+"' in r["matchers"])
    assert restart["group_by"] == ["alertname", "cluster"]
