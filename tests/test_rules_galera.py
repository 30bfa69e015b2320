"""The Galera alerts under `promtool test rules`: a node down or out of sync, the cluster
size against the description (garbd counted), flow control however its sender changes,
recoveries that never end, a member lost for good, queues, certification, connections and
the gcache, and a mysqld_exporter whose failure is not three node pages."""

from __future__ import annotations

import re

import pytest
from rules_cases import (
    INVENTORY,
    gnode,
    steps,
)
from rules_scenarios import (
    GALERA,
    STEP,
    TRACKER,
    const,
    firing,
    promtool_test,
    rule,
)

pytestmark = pytest.mark.tools("promtool")


def galera_node(i: int) -> dict:
    return {**GALERA, "node": f"node{i}", "instance": f"127.0.0.1:{i}"}


def test_a_described_galera_node_nobody_scrapes(tmp_path) -> None:
    series = [const("clusterscope_node_info", {**INVENTORY, "cluster": "g", "node": n,
                                               "role": "galera"}, [1] * 40)
              for n in ("n1", "n2")]
    series.append(const("clusterscope_node_info", {**INVENTORY, "cluster": "g", "node": "arb",
                                                   "role": "garbd"}, [1] * 40))
    series.append(const("up", {"job": "galera", "cluster": "g", "node": "n1",
                               "instance": "h:1"}, [1] * 40))
    # garbd has nothing to scrape: only n2 is missing
    promtool_test(tmp_path, series, [
        firing("GaleraExporterAbsent", 39 * STEP, [{"cluster": "g", "node": "n2"}])])


def test_galera_down_node_via_mysql_up_and_cluster_size(tmp_path) -> None:
    """A killed node: its exporter says mysql_up 0 and its wsrep series vanish; the others
    see a cluster of 2. After it rejoins, both alerts resolve."""
    n, kill, back = 80, 10, 50
    series = []
    for i in (1, 2, 3):
        lab = galera_node(i)
        dead = i == 3
        alive = [not (dead and kill <= k < back) for k in range(n)]
        series.append(const("up", lab, [1] * n))
        series.append(const("mysql_up", lab, [1 if a else 0 for a in alive]))
        series.append(const("mysql_global_status_wsrep_ready", lab,
                            [1 if a else None for a in alive]))
        series.append(const("mysql_global_status_wsrep_local_state", lab,
                            [4 if a else None for a in alive]))
        series.append(const("mysql_global_status_wsrep_cluster_size", lab,
                            [None if not a else (2 if kill + 1 <= k < back else 3)
                             for k, a in enumerate(alive)]))
    promtool_test(tmp_path, series, [
        firing("GaleraNodeNotReady", (kill - 1) * STEP, None),
        firing("GaleraNodeNotReady", (kill + 16) * STEP, [galera_node(3)]),
        firing("GaleraClusterSizeReduced", (kill + 5) * STEP, None),  # for: 1m
        firing("GaleraClusterSizeReduced", (kill + 16) * STEP, [{"cluster": "lab-galera"}]),
        firing("GaleraClusterSizeReduced", (back + 5) * STEP, None),
        firing("GaleraNodeNotReady", (back + 5) * STEP, None),
    ])


def test_galera_cluster_size_against_the_description(tmp_path) -> None:
    """Two nodes and garbd described (3 members); the cluster has run with 2 for longer
    than the history window (garbd never came back): only the description knows. The old
    rule needed rules/config.yaml's expected_cluster_size for it."""
    n = 40
    series = [const("clusterscope_cluster_members",
                    {**INVENTORY, "cluster": "staging", "kind": "galera", "role": r}, [c] * n)
              for r, c in (("galera", 2), ("garbd", 1))]
    for i in (1, 2):
        lab = {**galera_node(i), "cluster": "staging"}
        series.append(const("mysql_up", lab, [1] * n))
        series.append(const("mysql_global_status_wsrep_cluster_size", lab, [2] * n))
    promtool_test(tmp_path, series, [
        firing("GaleraClusterSizeReduced", (n - 1) * STEP, [{"cluster": "staging"}])])


def test_galera_cluster_size_counts_garbd(tmp_path) -> None:
    """Two nodes plus garbd (size 3, two monitored); node2 dies: the
    size drops to 2 while 2 nodes are still monitored (the old rule compared with them)."""
    n, kill = 60, 12
    series = []
    for i in (1, 2):
        lab = {**galera_node(i), "cluster": "staging"}
        alive = [i == 1 or k < kill for k in range(n)]
        series.append(const("mysql_up", lab, [1 if a else 0 for a in alive]))
        series.append(const("mysql_global_status_wsrep_cluster_size", lab,
                            [None if not a else (2 if k >= kill else 3)
                             for k, a in enumerate(alive)]))
    promtool_test(tmp_path, series, [
        firing("GaleraClusterSizeReduced", (n - 1) * STEP, [{"cluster": "staging"}])])


def test_a_dead_mysqld_exporter_is_not_three_node_pages(tmp_path) -> None:
    """The multi-target mysqld_exporter dies: every target's up is 0 and the
    mysql_* series are gone. One warning per target, no critical node-down page."""
    n = 60
    series = []
    for i in (1, 2, 3):
        lab = galera_node(i)
        series.append(const("up", lab, [1] * 10 + [0] * (n - 10)))
        series.append(const("mysql_up", lab, [1] * 10 + [None] * (n - 10)))
        series.append(const("mysql_global_status_wsrep_ready", lab, [1] * 10 + [None] * (n - 10)))
    promtool_test(tmp_path, series, [
        firing("GaleraNodeNotReady", (n - 1) * STEP, None),
        firing("GaleraExporterDown", (n - 1) * STEP, [galera_node(i) for i in (1, 2, 3)])])


def test_galera_out_of_sync_unless_desynced_on_purpose(tmp_path) -> None:
    """As the mixin's rule: a joiner and a donor stuck for 10 minutes fire; a
    node desynced on purpose (wsrep_desync ON) does not; 3 minutes is not yet."""
    n = 150
    donor, joiner, desynced = galera_node(1), galera_node(3), galera_node(2)
    series = [const("mysql_global_status_wsrep_local_state", donor, [4] * 10 + [2] * (n - 10)),
              const("mysql_global_status_wsrep_local_state", joiner, [4] * 10 + [1] * (n - 10)),
              const("mysql_global_status_wsrep_local_state", desynced, [2] * n),
              const("mysql_global_variables_wsrep_desync", desynced, [1] * n),
              const("mysql_global_variables_wsrep_desync", donor, [0] * n)]
    promtool_test(tmp_path, series, [
        firing("GaleraNodeOutOfSync", 3 * 60, None),  # not yet 5 minutes
        firing("GaleraNodeOutOfSync", (n - 1) * STEP, [donor, joiner]),
    ])


def test_galera_flow_control_and_recoveries(tmp_path) -> None:
    n = 12 * 60 // STEP
    # every node is paused 0.5 s per second from minute 2 on; node3 sends the pauses
    paused = [0.0] * 24 + [0.5e9 * STEP * k for k in range(1, n - 24 + 1)]
    sent = [0] * 24 + [k for k in range(1, n - 24 + 1)]
    # node3 rejoined by SST (its second recovery) at t=300s and it took 4000 s; node2's
    # first join by SST (one recovery) is not "an SST where an IST was expected", not even
    # after node2 served as a donor
    series = [
        *[const("mysql_global_status_wsrep_flow_control_paused_ns", galera_node(i), paused)
          for i in (1, 2, 3)],
        const("mysql_global_status_wsrep_flow_control_sent", galera_node(1), [0] * n),
        const("mysql_global_status_wsrep_flow_control_sent", galera_node(3), sent),
        const("galera_recovery_last_end_timestamp_seconds",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync", "donor": "node1"},
              [None] * 60 + [300] * (n - 60)),
        const("galera_recovery_last_duration_seconds",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync", "donor": "node1"},
              [None] * 60 + [4000] * (n - 60)),
        const("galera_recoveries_total",
              {**TRACKER, "node": "node3", "kind": "ist", "method": "ist"}, [1] * n),
        const("galera_recoveries_total",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync"},
              [0] * 60 + [1] * (n - 60)),
        const("galera_recovery_last_end_timestamp_seconds",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync", "donor": "node1"},
              [300] * n),
        const("galera_recovery_last_duration_seconds",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync", "donor": "node1"},
              [20] * n),
        const("galera_recoveries_total",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync"}, [1] * n),
        # node2 then donated a state: a donor returns to SYNCED too (JOINED -> SYNCED
        # twice), which is no second recovery (an always-on soak saw it fire as one)
        const("galera_state_transitions_total",
              {**TRACKER, "node": "node2", "from": "JOINED", "to": "SYNCED"},
              [1] * 60 + [2] * (n - 60)),
    ]
    n3 = {"cluster": "lab-galera", "node": "node3", "kind": "sst"}
    promtool_test(tmp_path, series, [
        firing("GaleraFlowControlHigh", 60, None),
        # one alert for the cluster, not one per sender; the sender is named in its
        # description (test_flow_control_fires_while_the_top_sender_alternates_and_names_it)
        firing("GaleraFlowControlHigh", (n - 1) * STEP, [{"cluster": "lab-galera"}]),
        firing("GaleraRecoveryUsedSST", 250, None),
        firing("GaleraRecoveryUsedSST", 400, [n3]),
        firing("GaleraRecoveryUsedSST", 950, None),  # more than 10 minutes after
        firing("GaleraRecoverySlow", 250, None),
        firing("GaleraRecoverySlow", 400, [{**TRACKER, "node": "node3", "kind": "sst",
                                            "method": "rsync", "donor": "node1"}]),
    ])


def test_a_recovery_that_never_ends_alerts_while_it_runs(tmp_path) -> None:
    """node3's SST began at t=0 and never reaches SYNCED; node2 is in a
    recovery begun 10 minutes ago; node1 recovers no more (a started time kept from its last
    recovery, not in progress)."""
    n = 70 * 60 // STEP
    series = [
        const("galera_recovery_in_progress", {**TRACKER, "node": "node3"}, [1] * n),
        const("galera_recovery_started_timestamp_seconds", {**TRACKER, "node": "node3"},
              [0] * n),
        const("galera_recovery_in_progress", {**TRACKER, "node": "node2"}, [1] * n),
        const("galera_recovery_started_timestamp_seconds", {**TRACKER, "node": "node2"},
              [3600] * n),
        const("galera_recovery_in_progress", {**TRACKER, "node": "node1"}, [0] * n),
        const("galera_recovery_started_timestamp_seconds", {**TRACKER, "node": "node1"},
              [0] * n),
    ]
    promtool_test(tmp_path, series, [
        firing("GaleraRecoveryStuck", 3500, None),
        firing("GaleraRecoveryStuck", 3700, [{**TRACKER, "node": "node3"}]),
        firing("GaleraRecoveryStuck", (n - 1) * STEP, [{**TRACKER, "node": "node3"}]),
    ])


def test_galera_quorum_queues_certification_connections_gcache(tmp_path) -> None:
    n = 90 * 60 // STEP
    a, b, c = galera_node(1), galera_node(2), galera_node(3)
    st = "mysql_global_status"
    series = [
        const(f"{st}_wsrep_cluster_status", a, [1] * n),
        const(f"{st}_wsrep_cluster_status", b, [1] * 12 + [0] * (n - 12)),  # non-Primary
        const(f"{st}_wsrep_local_state", a, [2] * n),  # a donor with a backlog
        const(f"{st}_wsrep_local_recv_queue", a, [150] * n),
        const(f"{st}_wsrep_local_state", c, [4] * n),  # a synced node with a backlog
        const(f"{st}_wsrep_local_recv_queue", c, [500] * n),
        const(f"{st}_wsrep_local_cert_failures", c, [3 * STEP * k for k in range(n)]),
        const(f"{st}_wsrep_local_bf_aborts", c, [0] * n),
        const(f"{st}_threads_connected", c, [90] * n),
        const("mysql_global_variables_max_connections", c, [100] * n),
        const(f"{st}_uptime", b, [60 + STEP * k for k in range(n)]),
        const("mysql_galera_gcache_size_bytes", a, [128 * 2**20] * n),
        const(f"{st}_wsrep_replicated_bytes", a, [2**20 * STEP * k for k in range(n)]),
        const("up", {**TRACKER}, [1] * n),
        const("galera_tracker_log_up", {**TRACKER, "node": "node2"}, [1] * 12 + [0] * (n - 12)),
        const("galera_recoveries_aborted_total", {**TRACKER, "node": "node2"},
              [0] * 100 + [1] * (n - 100)),
    ]
    end = (n - 1) * STEP
    tr = {"cluster": "lab-galera", "instance": "127.0.0.1:1", "job": "galera_tracker",
          "node": "node2"}
    promtool_test(tmp_path, series, [
        firing("GaleraNonPrimary", end, [b]),
        firing("GaleraDonorFallingBehind", end, [a]),
        firing("GaleraRecvQueueHigh", end, [c]),
        firing("GaleraCertificationFailures", end, [{"cluster": "lab-galera", "node": "node3"}]),
        firing("GaleraConnectionsHigh", end, [{"cluster": "lab-galera", "node": "node3"}]),
        firing("GaleraNodeRestarted", 60, [b]),
        firing("GaleraNodeRestarted", end, None),
        firing("GaleraGcacheTooSmall", end, [a]),
        firing("GaleraTrackerDown", end, [tr]),
        firing("GaleraRecoveryAborted", 100 * STEP + 30, [tr]),
    ])


def test_every_galera_node_down_is_critical(tmp_path) -> None:
    """Every mysqld of lab-galera is gone (mysql_up 0, the wsrep
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


def test_a_failing_mysqld_exporter_collector_is_seen(tmp_path) -> None:
    """mysqld_exporter v0.19.0 has no mysql_exporter_last_scrape_error; a failing
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


def test_flow_control_fires_while_the_top_sender_alternates_and_names_it(tmp_path) -> None:
    """node1 and node3 take turns as the top flow-control sender
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


def test_a_member_lost_for_good_does_not_resolve_itself(tmp_path) -> None:
    """A cluster the description does not list loses a member
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


def test_a_queue_and_connections_that_dip_every_fourth_sample_still_fire(tmp_path) -> None:
    """The receive queue sits at 150-400 and one sample in four
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
