"""The monitoring stack's own alerts and the hosts' under `promtool test rules`: the
watchdog, rule errors, a component down or failing, a loadgen down, a disk filling (with an
hour of history, so a fresh VictoriaMetrics under its start's burst is not called full),
memory and CPU, and each host alert's link to its product's node dashboard."""

from __future__ import annotations

import pytest
import yaml
from rules_cases import (
    steps,
)
from rules_scenarios import (
    LOADGEN,
    STEP,
    const,
    firing,
    promtool_test,
    rule,
)

pytestmark = pytest.mark.tools("promtool")


def test_stack_watchdog_rule_errors_and_loadgen_down(tmp_path) -> None:
    """A rule that fails on every evaluation from step 60 (its error counter climbs) fires
    after 5 minutes; one that failed once does not (`for: 5m`, as VictoriaMetrics' own
    alerts-vmalert.yml)."""
    n = 200
    vma = {"job": "vmalert", "instance": "127.0.0.1:3"}
    series = [const("vmalert_alerting_rules_errors_total",
                    {**vma, "alertname": "X", "group": "g", "file": "f", "id": "1"},
                    [0] * 60 + [k + 1 for k in range(n - 60)]),
              const("vmalert_recording_rules_errors_total",
                    {**vma, "recording": "r", "group": "once", "file": "f", "id": "2"},
                    [0] * 20 + [1] * (n - 20)),
              const("up", LOADGEN, [1] * 10 + [0] * (n - 10))]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeWatchdog", STEP, [{}]),
        firing("ClusterscopeRuleErrors", 62 * STEP, None),
        firing("ClusterscopeRuleErrors", (60 + 64) * STEP, [{**vma, "group": "g", "file": "f"}]),
        firing("LoadgenDown", (n - 1) * STEP, [LOADGEN]),
    ])


def test_the_stack_components_down_or_failing(tmp_path) -> None:
    """Only the Watchdog used to watch the stack. Now: a vmstorage of the scale-out cluster
    down and a storage gone read-only (VictoriaMetrics), the log rules' vmalert down and
    rows dropped by remote write (vmalert), a failing Slack integration (Alertmanager),
    the log store down."""
    n = steps(9)
    later = steps(2)
    vm1 = {"job": "victoriametrics", "instance": "vmstorage-1:8482", "component": "vmstorage"}
    vm2 = {"job": "victoriametrics", "instance": "vmstorage-2:8482", "component": "vmstorage"}
    va = {"job": "vmalert", "instance": "vmalert:8880"}
    vl = {"job": "vmalert", "instance": "vmalert-logs:8880"}
    am = {"job": "alertmanager", "instance": "alertmanager:9093"}
    logs = {"job": "victorialogs", "instance": "victoria-logs:9428"}
    bad = [1] * later + [0] * (n - later)
    series = [const("up", vm1, bad), const("up", vm2, [1] * n),
              const("vm_storage_is_read_only", {**vm2, "path": "/storage"},
                    [0] * later + [1] * (n - later)),
              const("vm_free_disk_space_bytes", {**vm2, "path": "/storage"}, [5e9] * n),
              const("up", va, [1] * n), const("up", vl, bad),
              const("vmalert_remotewrite_dropped_rows_total", va,
                    [0] * later + [10 * k for k in range(n - later)]),
              const("vmalert_remotewrite_errors_total", va, [0] * n),
              const("up", am, [1] * n),
              const("alertmanager_notifications_failed_total",
                    {**am, "integration": "slack", "reason": "clientError"},
                    [0] * later + [k for k in range(n - later)]),
              const("alertmanager_notifications_failed_total",
                    {**am, "integration": "webhook", "reason": "other"}, [0] * n),
              const("up", logs, bad)]
    end = (n - 1) * STEP
    promtool_test(tmp_path, series, [
        firing("ClusterscopeVictoriaMetricsFailing", end,
               [{**vm1, "problem": "down"}, {**vm2, "path": "/storage", "problem": "read-only"}]),
        firing("ClusterscopeVmalertFailing", end,
               [{**vl, "problem": "down"}, {**va, "problem": "remote write failing"}]),
        firing("ClusterscopeAlertDeliveryFailing", end,
               [{**am, "integration": "slack", "problem": "notifications failing"}]),
        firing("ClusterscopeLogStoreDown", end, [logs]),
    ])


def test_a_disk_filling_needs_an_hour_of_history(tmp_path) -> None:
    """A VictoriaMetrics whose free disk falls fast in its first 10 minutes (a fresh lab under
    a burst of writes: the soak's start) is not called full at that trend; one whose free
    disk falls as fast after an hour of history is."""
    n = 120 * 60 // STEP
    fresh = {"job": "victoriametrics", "instance": "vm-fresh:8428", "path": "/storage"}
    old = {"job": "victoriametrics", "instance": "vm-old:8428", "path": "/storage"}
    fall = [5e9 - 0.5e6 * STEP * k for k in range(n)]  # 0.5 MB/s: full within 4 hours
    series = [const("up", {k: v for k, v in fresh.items() if k != "path"}, [1] * n),
              const("up", {k: v for k, v in old.items() if k != "path"}, [1] * n),
              const("vm_free_disk_space_bytes", fresh, [None] * (n - 120) + fall[:120]),
              const("vm_free_disk_space_bytes", old, fall)]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeVictoriaMetricsFailing", (n - 1) * STEP,
               [{**old, "problem": "disk filling"}]),
    ])


def test_host_disk_filling_almost_full_memory_and_cpu(tmp_path) -> None:
    """node_exporter on the hosts of a data node and a Galera node: the data node's
    DataDir loses 1 % of its space a minute and runs out within 4 hours; the Galera host's
    datadir is at 3 % free; its memory is 5 % available; its CPUs are 97 % busy. A
    read-only filesystem and a steady half-full one do not fire."""
    n = steps(50)
    ndb_host = {"job": "node", "instance": "10.0.0.5:9100", "cluster": "lab-ndb",
                "node": "data2", "role": "data"}
    gal_host = {"job": "node", "instance": "10.0.0.11:9100", "cluster": "lab-galera",
                "node": "node1", "role": "galera"}
    fs = {"device": "/dev/sdb1", "fstype": "ext4", "mountpoint": "/var/lib/mysql-cluster"}
    gfs = {"device": "/dev/sdc1", "fstype": "xfs", "mountpoint": "/var/lib/mysql"}
    ro = {"device": "/dev/sr0", "fstype": "ext4", "mountpoint": "/mnt/ro"}
    size = 100e9
    series = [
        const("node_filesystem_size_bytes", {**ndb_host, **fs}, [size] * n),
        const("node_filesystem_avail_bytes", {**ndb_host, **fs},
              [0.38 * size - 0.005 * size * k / steps(1) for k in range(n)]),
        const("node_filesystem_readonly", {**ndb_host, **fs}, [0] * n),
        const("node_filesystem_size_bytes", {**gal_host, **gfs}, [size] * n),
        const("node_filesystem_avail_bytes", {**gal_host, **gfs}, [0.03 * size] * n),
        const("node_filesystem_readonly", {**gal_host, **gfs}, [0] * n),
        const("node_filesystem_size_bytes", {**gal_host, **ro}, [size] * n),
        const("node_filesystem_avail_bytes", {**gal_host, **ro}, [0.0] * n),
        const("node_filesystem_readonly", {**gal_host, **ro}, [1] * n),
        const("node_filesystem_size_bytes", {**ndb_host, **gfs}, [size] * n),
        const("node_filesystem_avail_bytes", {**ndb_host, **gfs}, [0.5 * size] * n),
        const("node_filesystem_readonly", {**ndb_host, **gfs}, [0] * n),
        const("node_memory_MemAvailable_bytes", gal_host, [0.05 * 64e9] * n),
        const("node_memory_MemTotal_bytes", gal_host, [64e9] * n),
        const("node_memory_MemAvailable_bytes", ndb_host, [0.5 * 64e9] * n),
        const("node_memory_MemTotal_bytes", ndb_host, [64e9] * n),
    ]
    for cpu in ("0", "1"):
        series.append(const("node_cpu_seconds_total", {**gal_host, "cpu": cpu, "mode": "idle"},
                            [0.03 * STEP * k for k in range(n)]))
        series.append(const("node_cpu_seconds_total", {**ndb_host, "cpu": cpu, "mode": "idle"},
                            [0.6 * STEP * k for k in range(n)]))
    end = (n - 1) * STEP
    promtool_test(tmp_path, series, [
        firing("HostFilesystemFillingUp", end, [{**ndb_host, **fs}]),
        firing("HostFilesystemAlmostFull", end, [{**gal_host, **gfs}]),
        firing("HostMemoryLow", end, [gal_host]),
        firing("HostCpuBusy", end, [{"cluster": "lab-galera", "node": "node1",
                                     "role": "galera", "instance": "10.0.0.11:9100",
                                     "job": "node"}]),
    ])


def test_host_alerts_link_the_node_dashboard_of_their_product() -> None:
    """A host alert names a node of either product: its dashboard link is the Galera
    node's or the NDB cluster's node dashboard, chosen by the `role` label."""
    url = rule("HostFilesystemFillingUp")["annotations"]["dashboard_url"]
    assert url.startswith('{{ if eq $labels.role "galera" "garbd" }}'), url
    assert "var-node={{ $labels.node }}" in url and "clusterscope-ndb-node" in url
    yaml.safe_dump(url)  # a plain string
