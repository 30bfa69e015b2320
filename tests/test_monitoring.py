"""The lab's monitoring end to end: VictoriaMetrics scrapes the lab's real exporters, and
alerts travel vmalert -> Alertmanager -> webhook receiver for real lab events."""

from __future__ import annotations

import json
import time

import pytest
from helpers import eventually

from clusterscope.clients.vm import VM
from clusterscope.lab.monitoring_part import LAB_RULE_OVERRIDES
from clusterscope.rules.rules_config import load_config

pytestmark = pytest.mark.lab


def _vm(lab) -> VM:
    return VM(lab.service("victoria-metrics")["extra"]["url"])


def _notifications(lab) -> list[dict]:
    data = json.loads(lab.cli("lab", "monitoring", "alerts", "--json").stdout)
    return data["received"]


def _wait_notification(lab, alertname: str, status: str, since: float, timeout: float,
                       **labels: str) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for r in _notifications(lab):
            if (r["alertname"] == alertname and r["status"] == status
                    and r["received_at"] >= since
                    and all(r["labels"].get(k) == v for k, v in labels.items())):
                return r
        time.sleep(1.0)
    raise AssertionError(f"no {status} {alertname} {labels} at the webhook within {timeout} s;"
                         f" got: {_notifications(lab)[-10:]}")


@pytest.fixture(scope="module")
def mon(galera_lab, monitoring_lab):
    return monitoring_lab


def test_status_says_where_to_query_and_vm_scrapes_the_galera_exporters(mon) -> None:
    vm_svc = mon.service("victoria-metrics")
    assert vm_svc["running"] and vm_svc["host"] == "127.0.0.1"
    assert vm_svc["extra"]["url"].startswith("http://127.0.0.1:")
    vm = _vm(mon)
    # every mysqld_exporter of the lab, with the contract's labels
    ups = vm.wait_for('up{job="galera"} == 1', timeout=60,
                      predicate=lambda r: len(r) == 3)
    assert sorted(r["metric"]["node"] for r in ups) == ["node1", "node2", "node3"]
    assert {r["metric"]["cluster"] for r in ups} == {"lab-galera"}
    # job galera: the NDB simulator's SQL nodes are MariaDBs too (job ndb_sql), whose
    # wsrep status variables read 0 with wsrep off
    sizes = vm.wait_for('mysql_global_status_wsrep_cluster_size{job="galera"}', timeout=30,
                        predicate=lambda r: len(r) == 3)
    assert {float(r["value"][1]) for r in sizes} == {3.0}
    # vmalert's recording rules land in VM
    vm.wait_for("cluster:mysql_global_status_wsrep_cluster_size:max", timeout=30)
    targets = mon.cli("lab", "monitoring", "targets").stdout
    assert "galera" in targets and "127.0.0.1:" in targets


def test_the_lab_runs_the_monitoring_versions_compose_pins(mon) -> None:
    """Lab == deployment: VictoriaMetrics, vmalert, the door (vmauth) and Alertmanager of
    the lab are the releases compose/docker-compose.yml pins (built from their Go modules)."""
    import re
    import urllib.request

    from clusterscope.paths import REPO

    compose = (REPO / "compose" / "docker-compose.yml").read_text()
    # VictoriaMetrics runs from a thin image of the pinned one (its data directory owned by
    # the non-root user): the release is its Dockerfile's FROM
    compose += (REPO / "compose" / "victoria-metrics" / "Dockerfile").read_text().replace(
        "FROM victoriametrics/", "image: victoriametrics/")
    for svc, image, url in (
            ("victoria-metrics", "victoriametrics/victoria-metrics", None),
            ("vmalert", "victoriametrics/vmalert", None),
            # the door: its own metrics on its internal address
            ("door", "victoriametrics/vmauth", mon.service("door")["extra"]["internal"])):
        pinned = re.search(rf"image: {image}:(v[0-9.]+)", compose).group(1)
        with urllib.request.urlopen(f"{url or mon.service(svc)['extra']['url']}/metrics",
                                    timeout=10) as r:
            running = re.search(r'vm_app_version\{[^}]*version="[^"]*?-(v[0-9.]+)',
                                r.read().decode()).group(1)
        assert running == pinned, (svc, running, pinned)
    pinned_am = re.search(r"image: prom/alertmanager:v([0-9.]+)", compose).group(1)
    with urllib.request.urlopen(f"{mon.service('alertmanager')['extra']['url']}/api/v2/status",
                                timeout=10) as r:
        assert json.load(r)["versionInfo"]["version"] == pinned_am


def test_galera_kill_fires_cluster_size_reduced_and_resolves_after_rejoin(mon, artifacts):
    t_kill = time.time()
    mon.cli("lab", "galera", "kill-node", "3")
    fired = _wait_notification(mon, "GaleraClusterSizeReduced", "firing", t_kill, 180,
                               cluster="lab-galera")
    down = _wait_notification(mon, "GaleraNodeNotReady", "firing", t_kill, 180, node="node3")
    latency = fired["received_at"] - t_kill
    assert fired["annotations"]["runbook_url"].endswith("/GaleraClusterSizeReduced.md")
    t_start = time.time()
    mon.cli("lab", "galera", "start-node", "3", timeout=300)
    _wait_notification(mon, "GaleraClusterSizeReduced", "resolved", t_start, 120,
                       cluster="lab-galera")
    (artifacts / "monitoring-alert-latency.json").write_text(json.dumps({
        "GaleraClusterSizeReduced_seconds_from_kill_to_webhook": round(latency, 1),
        "GaleraNodeNotReady_seconds_from_kill_to_webhook":
            round(down["received_at"] - t_kill, 1)}, indent=2))


def test_ndb_restart_regression_reaches_the_webhook(lab, monitoring_lab, artifacts) -> None:
    lab.ensure("ndb", "monitoring")
    vm = _vm(lab)
    vm.wait_for('ndb_up{job="ndbinfo"} == 1', timeout=60)
    done = 'ndb_restarts_completed_total{job="ndbinfo", node_id="2"}'
    if not vm.query(done):
        # a fresh exporter's first sight of a node's restart row is counted without a time
        # (it may be an old restart): when a x120 restart falls between two scrapes, that
        # first one is no event. Warm up with one so every counted restart below is timed.
        lab.cli("lab", "ndb", "restart-node", "2", "--profile", "7.6", "--time-scale", "120",
                "--wait", timeout=300)
        vm.wait_for(done, timeout=60)
    before = int(float(vm.query(done)[0]["value"][1]))
    event = 'cluster_node:ndb_restarts_completed:completion{node_id="2"}'
    for i in range(1, 5):
        lab.cli("lab", "ndb", "restart-node", "2", "--profile", "7.6", "--time-scale", "120",
                "--wait", timeout=300)
        # the rules recorded this completion as an event, like restarts minutes apart
        vm.wait_for(f"max_over_time({event}[10m]) >= {before + i}", timeout=60)
    # the baseline leaves out the last event window: let the 7.6 runs age into it
    window = LAB_RULE_OVERRIDES["ndb"]["restart_event_window"]
    vm.wait_for(f"max_over_time({event}[30d] offset {window}) >= {before + 4}", timeout=90)
    lab.cli("lab", "ndb", "restart-node", "2", "--profile", "7.5", "--time-scale", "120",
            "--wait", timeout=300)
    t_done = time.time()
    got = _wait_notification(lab, "NdbRestartTimeRegressed", "firing", t_done - 60, 90,
                             node_id="2")
    assert got["labels"]["phase"] == "wait_lcp_for_restart"
    assert got["labels"].get("simulated") == "true"
    (artifacts / "monitoring-restart-alert-latency.json").write_text(json.dumps({
        "NdbRestartTimeRegressed_seconds_from_restart_done_to_webhook":
            round(got["received_at"] - t_done, 1)}, indent=2))


def test_ndb_stop_node_pages_the_node_groups_last_replica(lab, monitoring_lab,
                                                          artifacts) -> None:
    """`2 STOP` in the lab's one node group of two replicas: node 2 is down (a warning,
    NdbDataNodeDown, firing in vmalert) and its group is on its last replica, which pages
    (critical, at the webhook's critical path); the warning is inhibited by that page."""
    lab.ensure("ndb", "monitoring")
    vm = _vm(lab)
    vm.wait_for('ndb_data_node_running{job="ndbinfo", node_id="2"} == 1', timeout=60)
    vm.wait_for('cluster_node:ndb_node_group:info{node_id="2"}', timeout=60)
    t_stop = time.time()
    lab.cli("lab", "ndb", "stop-node", "2")
    try:
        got = _wait_notification(lab, "NdbNodeGroupLastReplica", "firing", t_stop, 180,
                                 node_group="0")
        assert got["labels"]["severity"] == "critical" and got["path"] == "/critical"
        assert got["annotations"]["runbook_url"].endswith("/runbooks/NdbNodeGroupLastReplica.md")
        # the node's own warning fires a minute later (its longer `for:`), inhibited by the
        # page that explains it
        def node_down_firing() -> bool:
            data = json.loads(lab.cli("lab", "monitoring", "alerts", "--json").stdout)
            return any(a["alertname"] == "NdbDataNodeDown" and a["state"] == "firing"
                       and a["labels"].get("node_id") == "2" for a in data["active"])
        eventually(node_down_firing, 120, "NdbDataNodeDown firing in vmalert")
        time.sleep(5)  # Alertmanager's group_wait in the lab is 1 s
        assert not any(r["alertname"] == "NdbDataNodeDown" and r["received_at"] >= t_stop
                       for r in _notifications(lab))
    finally:
        lab.cli("lab", "ndb", "start-node", "2", "--time-scale", "120", "--wait", timeout=300)
    (artifacts / "monitoring-node-down-latency.json").write_text(json.dumps({
        "NdbNodeGroupLastReplica_seconds_from_stop_to_webhook":
            round(got["received_at"] - t_stop, 1),
        "for": load_config()["ndb"]["node_group_last_replica_for"]}, indent=2))
    _wait_notification(lab, "NdbNodeGroupLastReplica", "resolved", t_stop, 120,
                       node_group="0")
