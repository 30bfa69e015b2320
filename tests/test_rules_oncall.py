"""The second on-call review (../shared/reviews/oncall-2.md): one `promtool test rules`
scenario per finding, built as the exporters serve the series. Each of them failed on the
rules before the fix (the finding named in the docstring says how)."""

from __future__ import annotations

import re

import pytest
import yaml
from rules_scenarios import (
    GALERA,
    NDB,
    STEP,
    const,
    firing,
    promtool_test,
    rule,
)

pytestmark = pytest.mark.tools("promtool")

C = {"cluster": "lab-ndb", "simulated": "true"}


def steps(minutes: float) -> int:
    return int(minutes * 60 // STEP)


def node(i: int | str) -> dict:
    return {**NDB, "node_id": str(i)}


def gnode(i: int, cluster: str = "lab-galera") -> dict:
    return {**GALERA, "cluster": cluster, "node": f"node{i}", "instance": f"127.0.0.1:{i}"}


# -- N1: a restarting data node is not down ---------------------------------------------------
def restart_states(minutes: int) -> list[int]:
    """restart_info.node_restart_status_int of node 2 as the master reports it: 2 minutes
    of a completed earlier restart, then a restart of 17.5 minutes (failure handling, 4..17
    with restore, REDO, index build and the LCP wait taking most of it, as the field facts'
    7.5 restart), WAIT_SUMA_HANDOVER, and completed."""
    plan = [(19, 2), (3, 0.5), (4, 0.5), (5, 0.5), (8, 0.5), (10, 0.5), (11, 0.5), (12, 2.5),
            (14, 1), (15, 2), (16, 0.5), (17, 8), (18, 0.5)]
    out: list[int] = []
    for st, mins in plan:
        out += [st] * steps(mins)
    return out + [19] * (steps(minutes) - len(out))


def test_n1_a_restarting_node_without_a_nodes_row_is_not_down(tmp_path) -> None:
    """N1: before start phase 9 a restarting node has no ndbinfo.nodes row, so
    ndb_data_node_running is 0 through restore, REDO, index build, copy and the LCP wait
    (the simulator follows the kernel source on this: clusterscope/ndbsim/model.py
    visible()). Before: NdbDataNodeDown paged critical from minute 2 of every restart.
    Now: node 2 restarts for 18 minutes without any NdbDataNodeDown or node-group page;
    node 3, stopped (restart_info 3, failure handling completed), is down."""
    n = steps(25)
    states = restart_states(25)
    running2 = [1 if st in (18, 19) else 0 for st in states]
    series = [const("ndb_data_node_running", node(2), running2),
              const("ndb_restart_status", node(2), states),
              # node 3 of the other node group is stopped from minute 4 (`3 STOP`)
              const("ndb_data_node_running", node(3), [1] * steps(4) + [0] * (n - steps(4))),
              const("ndb_restart_status", node(3), [19] * steps(4) + [3] * (n - steps(4))),
              const("ndb_data_node_running", node(1), [1] * n),
              const("ndb_data_node_running", node(4), [1] * n)]
    for i, grp in ((1, 0), (2, 0), (3, 1), (4, 1)):
        running = running2 if i == 2 else [1] * n if i in (1, 4) else \
            [1] * steps(4) + [0] * (n - steps(4))
        # membership has a row for a running (visible) node only
        series.append(const("ndb_node_group", node(i), [grp if r else None for r in running]))
    checks = []
    for minute in (3, 7, 9, 14, 18, 24):
        # with its node group (membership, remembered while the node is down)
        checks.append(firing("NdbDataNodeDown", minute * 60,
                             [{**C, "node_id": "3", "node_group": "1"}] if minute > 6 else None))
    # node 3's group has one node left: critical; node 2's restart is no such page
    checks.append(firing("NdbNodeGroupLastReplica", 14 * 60,
                         [{"cluster": "lab-ndb", "node_group": "1"}]))
    promtool_test(tmp_path, series, checks)


def test_n1_n15_a_restart_stuck_in_a_data_phase_or_lcp_wait_is_stuck_not_down(tmp_path) -> None:
    """N1 (NdbDataNodeDown muted NdbRestartStuck; now the stuck node is not down at all) and
    N15 (state 9, WAIT_LCP_TO_COPY_DICT, waits for the running LCP: 2 h like the data
    phases, not 30 minutes). Before: node 2 in state 9 fired NdbRestartStuck at 35 min and
    node 3 (state 14, no nodes row) paged NdbDataNodeDown."""
    n = steps(130)
    series = [const("ndb_restart_status", node(2), [9] * n),
              const("ndb_data_node_running", node(2), [0] * n),
              const("ndb_restart_status", node(3), [14] * n),
              const("ndb_data_node_running", node(3), [0] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbRestartStuck", 35 * 60, None),
        firing("NdbDataNodeDown", 35 * 60, None),
        firing("NdbRestartStuck", (n - 1) * STEP, [{**C, "node_id": "2"}, {**C, "node_id": "3"}]),
        firing("NdbDataNodeDown", (n - 1) * STEP, None),
    ])


# -- N2: a whole NDB cluster down pages -------------------------------------------------------
def test_n2_every_data_node_down_is_one_critical_page(tmp_path) -> None:
    """N2 (review scenario E): every data node down; the SQL nodes answer but read nothing
    (ndb_up 0, every collector skipped). Before: one NdbExporterDown warning. Now:
    NdbClusterUnreachable, critical, after a minute; nothing before."""
    n = steps(10)
    down = steps(2)
    series = [const("up", NDB, [1] * n),
              const("ndb_up", NDB, [1] * down + [0] * (n - down)),
              const("ndb_ndbinfo_offline", NDB, [0] * down + [1] * (n - down)),
              const("ndb_sql_node_up", {**NDB, "sql_node": "sql1"}, [1] * n),
              const("ndb_sql_node_up", {**NDB, "sql_node": "sql2"}, [1] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbClusterUnreachable", 2 * 60 + 30, None),
        firing("NdbClusterUnreachable", 4 * 60, [{"cluster": "lab-ndb"}]),
        firing("NdbExporterDown", 4 * 60, None),
    ])


def test_n2_every_sql_node_down_is_the_same_page_and_a_dead_exporter_is_not(tmp_path) -> None:
    """N2/F17: the only SQL node is down (ndb_up 0, ndb_sql_node_up 0): applications lose
    the cluster too, one critical page. A second cluster's exporter process dies (up 0):
    NdbExporterDown, a warning, and no page."""
    n = steps(8)
    other = {**NDB, "cluster": "other"}
    series = [const("up", NDB, [1] * n),
              const("ndb_up", NDB, [1] * 12 + [0] * (n - 12)),
              const("ndb_sql_node_up", {**NDB, "sql_node": "sql1"}, [1] * 12 + [0] * (n - 12)),
              const("up", other, [1] * 12 + [0] * (n - 12)),
              const("ndb_up", other, [1] * 12 + [None] * (n - 12))]
    promtool_test(tmp_path, series, [
        firing("NdbClusterUnreachable", (n - 1) * STEP, [{"cluster": "lab-ndb"}]),
        firing("NdbExporterDown", (n - 1) * STEP, [{"cluster": "other"}]),
    ])


# -- N3: a whole Galera cluster down pages ----------------------------------------------------
def test_n3_every_galera_node_down_is_critical(tmp_path) -> None:
    """N3 (review scenario B): every mysqld of lab-galera is gone (mysql_up 0, the wsrep
    series vanish). Before: three GaleraNodeNotReady warnings, nothing critical. Now:
    GaleraClusterDown once for the cluster. A second cluster whose nodes answer but none is
    Primary (quorum lost everywhere) is down too."""
    n = steps(6)
    kill = 12
    series = []
    for i in (1, 2, 3):
        series += [const("mysql_up", gnode(i), [1] * kill + [0] * (n - kill)),
                   const("mysql_global_status_wsrep_cluster_status", gnode(i),
                         [1] * kill + [None] * (n - kill)),
                   const("mysql_up", gnode(i, "quorum"), [1] * n),
                   const("mysql_global_status_wsrep_cluster_status", gnode(i, "quorum"),
                         [1] * kill + [0] * (n - kill))]
    promtool_test(tmp_path, series, [
        firing("GaleraClusterDown", (kill + 6) * STEP, None),
        firing("GaleraClusterDown", (n - 1) * STEP,
               [{"cluster": "lab-galera"}, {"cluster": "quorum"}]),
    ])


# -- N4: blind spells -------------------------------------------------------------------------
def test_n4_an_exporter_blind_spell_does_not_resolve_a_down_node(tmp_path) -> None:
    """N4 (review scenario F): data node 3 is down; from minute 5 to 8 the exporter's only
    SQL node restarts, so every per-node series vanishes (the ledger's remain). Before:
    NdbDataNodeDown resolved at 8 min and 9m50s with the node still down, then paged again.
    Now it stays firing; the SQL node's outage itself pages NdbClusterUnreachable. Galera
    node3 is down while its mysqld_exporter restarts for 2 minutes: still not ready."""
    n = steps(12)
    gap = range(steps(5), steps(8))

    def blind(values: list) -> list:
        return [None if k in gap else v for k, v in enumerate(values)]

    series = [const("up", NDB, [1] * n),
              const("ndb_up", NDB, [0 if k in gap else 1 for k in range(n)]),
              const("ndb_data_node_running", node(3), blind([0] * n)),
              const("ndb_restart_status", node(3), blind([3] * n)),
              const("ndb_data_node_running", node(2), blind([1] * n))]
    egap = range(steps(6), steps(8))
    for i in (1, 2, 3):
        series += [const("up", gnode(i), [0 if k in egap else 1 for k in range(n)]),
                   const("mysql_up", gnode(i), [None if k in egap else 0 if i == 3 else 1
                                                for k in range(n)])]
    down3 = [{**C, "node_id": "3"}]
    promtool_test(tmp_path, series, [
        *[firing("NdbDataNodeDown", int(m * 60), down3) for m in (4, 6, 8, 9.85, 11)],
        *[firing("GaleraNodeNotReady", int(m * 60), [gnode(3)]) for m in (5, 7, 9)],
        firing("NdbClusterUnreachable", int(7.5 * 60), [{"cluster": "lab-ndb"}]),
    ])


# -- N5: a failing mysqld_exporter collector --------------------------------------------------
def test_n5_a_failing_mysqld_exporter_collector_is_seen(tmp_path) -> None:
    """N5: mysqld_exporter v0.19.0 has no mysql_exporter_last_scrape_error; a failing
    global_variables collector shows only as mysql_exporter_collector_success 0. Before:
    GaleraExporterDown could not fire on it."""
    n = steps(5)
    lab = gnode(2)
    series = [const("up", lab, [1] * n), const("mysql_up", lab, [1] * n),
              const("mysql_exporter_collector_success",
                    {**lab, "collector": "collect.global_variables"}, [1] * 6 + [0] * (n - 6)),
              const("mysql_exporter_collector_success",
                    {**lab, "collector": "collect.global_status"}, [1] * n)]
    promtool_test(tmp_path, series, [
        firing("GaleraExporterDown", (n - 1) * STEP,
               [{**lab, "collector": "collect.global_variables"}])])


# -- N6: flow control once per cluster, however the sender changes ----------------------------
def test_n6_flow_control_fires_while_the_top_sender_alternates_and_names_it(tmp_path) -> None:
    """N6 (review scenario A): node1 and node3 take turns as the top flow-control sender
    every 2 minutes while the cluster is paused 50 % for 20 minutes. Before: the `node`
    label changed with the sender and restarted `for: 5m`: the alert never fired. Now it
    fires once for the cluster, and its description names the sender of the last 5
    minutes (checked by running the description's own query)."""
    n = steps(20)
    paused = [0.5e9 * STEP * k for k in range(n)]
    sent1, sent3, c1, c3 = [], [], 0, 0
    for k in range(n):
        turn = (k // steps(2)) % 2
        c1 += 2 if turn == 0 else 0
        c3 += 2 if turn == 1 else 0
        sent1.append(c1)
        sent3.append(c3)
    series = [*[const("mysql_global_status_wsrep_flow_control_paused_ns", gnode(i), paused)
                for i in (1, 2, 3)],
              const("mysql_global_status_wsrep_flow_control_sent", gnode(1), sent1),
              const("mysql_global_status_wsrep_flow_control_sent", gnode(2), [0] * n),
              const("mysql_global_status_wsrep_flow_control_sent", gnode(3), sent3)]
    desc = rule("GaleraFlowControlHigh")["annotations"]["description"]
    query = re.search(r"printf `([^`]*)`", desc).group(1).replace("%s", "lab-galera")
    promtool_test(tmp_path, series, [
        firing("GaleraFlowControlHigh", (n - 1) * STEP, [{"cluster": "lab-galera"}]),
        # the last 5 minutes hold 3 minutes of node3's turns and 2 of node1's: node3 is named
        {"expr": f"({query}) * 0 + 1", "eval_time": f"{(n - 1) * STEP}s",
         "exp_samples": [{"labels": '{cluster="lab-galera", node="node3"}', "value": 1}]},
    ])


# -- N7: a long healthy LCP is not a stall ----------------------------------------------------
def test_n7_a_long_healthy_lcp_is_not_stalled_but_a_stuck_one_is(tmp_path) -> None:
    """N7 (review scenario G): an LCP of 40 minutes whose fragment replicas are
    checkpointed every minute while REDO is written. Before: NdbLcpStalled fired at 40
    min (no new LCP id for 30 min). Now: not stalled. A second cluster whose last LCP took
    50 minutes holds one large fragment for 35 minutes: within 3x its usual duration, not
    stalled either; a third one's LCP stops for good: stalled after 30 minutes."""
    n = steps(45)
    big, stuck = {**NDB, "cluster": "big"}, {**NDB, "cluster": "stuck"}
    series = []
    for lab, remaining, last in (
            (NDB, [max(0, 400 - k // steps(1) * 10) for k in range(n)], 600),
            (big, [400 - min(k, steps(5)) // steps(1) * 10 for k in range(n)], 3000),
            (stuck, [400 - min(k, steps(5)) // steps(1) * 10 for k in range(n)], 600)):
        series += [const("ndb_lcp_id", lab, [7] * n),
                   const("ndb_lcp_running", lab, [1] * n),
                   const("ndb_lcp_fragment_replicas_remaining", lab, remaining),
                   const("ndb_lcp_last_duration_seconds", lab, [last] * n),
                   const("ndb_disk_write_speed_bytes_per_second",
                         {**lab, "node_id": "2", "ldm_instance": "0", "kind": "redo",
                          "window": "60s"}, [8e6] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbLcpStalled", 34 * 60, None),
        firing("NdbLcpStalled", (n - 1) * STEP, [{"cluster": "stuck", "simulated": "true"}]),
    ])


# -- N8 (the part that is not logs): TransactionMemory ----------------------------------------
def test_n8_transaction_memory_nearly_exhausted(tmp_path) -> None:
    """N8: ndb_resource_used_pages / max_pages of TRANSACTION_MEMORY was exported but not
    alerted. Node 2 uses 95 % of its pages; node 3 has no limit of its own (max 0)."""
    n = steps(8)
    tm = {"resource_name": "TRANSACTION_MEMORY"}
    series = [const("ndb_resource_used_pages", {**node(2), **tm}, [950] * n),
              const("ndb_resource_max_pages", {**node(2), **tm}, [1000] * n),
              const("ndb_resource_used_pages", {**node(3), **tm}, [950] * n),
              const("ndb_resource_max_pages", {**node(3), **tm}, [0] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbTransactionMemoryHigh", (n - 1) * STEP,
               [{**C, "node_id": "2", "resource_name": "TRANSACTION_MEMORY"}])])


# -- N11: a member lost for good stays an alert -----------------------------------------------
def test_n11_a_member_lost_for_good_does_not_resolve_itself(tmp_path) -> None:
    """N11 (review scenario C): a cluster the description does not list loses a member
    for good at 10 minutes. Before: firing at 30 min, gone at 80 min (history 1 h). Now it
    is still firing at 80 min. A described cluster is compared with its description."""
    n = steps(85)
    lost = steps(10)
    series = []
    for i in (1, 2):
        series.append(const("mysql_global_status_wsrep_cluster_size", gnode(i, "undescribed"),
                            [3] * lost + [2] * (n - lost)))
    promtool_test(tmp_path, series, [
        firing("GaleraClusterSizeReduced", 30 * 60, [{"cluster": "undescribed"}]),
        firing("GaleraClusterSizeReduced", 80 * 60, [{"cluster": "undescribed"}]),
    ])


# -- N12: gauges that dip -----------------------------------------------------------------
def test_n12_a_queue_and_connections_that_dip_every_fourth_sample_still_fire(tmp_path) -> None:
    """N12 (review scenario D): the receive queue sits at 150-400 and one sample in four
    dips to 90; connections at 85-95 % of max_connections dip to 70 % as often. Before:
    neither fired in 12 minutes (one sample below the threshold restarted `for`)."""
    n = steps(12)
    queue = [90 if k % 4 == 3 else 150 + (k * 37) % 250 for k in range(n)]
    conns = [70 if k % 4 == 3 else 85 + k % 10 for k in range(n)]
    lab = gnode(2)
    series = [const("mysql_global_status_wsrep_local_recv_queue", lab, queue),
              const("mysql_global_status_wsrep_local_state", lab, [4] * n),
              const("mysql_global_status_threads_connected", lab, conns),
              const("mysql_global_variables_max_connections", lab, [100] * n)]
    promtool_test(tmp_path, series, [
        firing("GaleraRecvQueueHigh", (n - 1) * STEP, [lab]),
        firing("GaleraConnectionsHigh", (n - 1) * STEP, [{"cluster": "lab-galera",
                                                          "node": "node2"}]),
    ])


# -- N13: an exporter close to its budget -----------------------------------------------------
def test_n13_scrapes_close_to_the_budget_are_slow(tmp_path) -> None:
    """N13: the exporter's budget is 3.5 s and VictoriaMetrics drops a scrape past the 4 s
    timeout, so `scrape_duration > 4` could not be stored. Scrapes of 3.1-3.4 s for 12
    minutes: before, never; now NdbExporterSlow after 10 minutes."""
    n = steps(13)
    series = [const("ndb_exporter_scrape_duration_seconds", NDB,
                    [0.4] * steps(1) + [3.1 + (k % 4) / 10 for k in range(n - steps(1))])]
    promtool_test(tmp_path, series, [
        firing("NdbExporterSlow", 9 * 60, None),
        firing("NdbExporterSlow", (n - 1) * STEP, [NDB])])


# -- N14: the stack watches itself ------------------------------------------------------------
def test_n14_the_stack_components_down_or_failing(tmp_path) -> None:
    """N14: only the Watchdog watched the stack. Now: a vmstorage of the scale-out cluster
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


# -- N17: an NDB SQL node that lost the cluster -----------------------------------------------
def test_n17_an_sql_node_that_sees_no_data_node(tmp_path) -> None:
    """N17: the NDB SQL nodes are probed by mysqld_exporter (job ndb_sql) but nothing
    alerted on them. sql2 runs but is connected to no ready data node
    (Ndb_number_of_ready_data_nodes 0): NdbSqlNodeDisconnected."""
    n = steps(4)
    sql = {"job": "ndb_sql", "cluster": "lab-ndb"}
    series = []
    for name, ready in (("sql1", [2] * n), ("sql2", [2] * 6 + [0] * (n - 6))):
        lab = {**sql, "node": name, "instance": f"{name}:3306"}
        series += [const("mysql_up", lab, [1] * n),
                   const("mysql_global_status_ndb_number_of_data_nodes", lab, [2] * n),
                   const("mysql_global_status_ndb_number_of_ready_data_nodes", lab, ready)]
    promtool_test(tmp_path, series, [
        firing("NdbSqlNodeDisconnected", (n - 1) * STEP, [{"cluster": "lab-ndb",
                                                           "node": "sql2"}])])


# -- host metrics (F16-F18 / N8's disk part) --------------------------------------------------
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
