"""The NDB availability alerts under `promtool test rules`: a data node or SQL node down
(one page, not one per collector), the whole cluster down, an arbitrator lost, a cluster
the description lists that nobody scrapes, and an exporter's blind spell that must not
resolve a real page."""

from __future__ import annotations

import pytest
from rules_cases import (
    INVENTORY,
    C,
    gnode,
    node,
    steps,
)
from rules_scenarios import (
    NDB,
    STEP,
    const,
    firing,
    promtool_test,
)

pytestmark = pytest.mark.tools("promtool")


def test_data_node_down_is_the_dead_node_not_the_restarting_one(tmp_path) -> None:
    """Node 3's process is dead (its nodes rows are gone), node 4 is in a normal restart,
    copying the dictionary (state 10). Before start phase 9 a restarting node has no nodes
    row either (the SQL node reads ndbinfo only from the data nodes it is connected to, and
    a starting node lets API nodes connect in phase 9), so node 4 is "configured, not
    running" just like node 3: restart_info tells them apart. Only node 3 is down."""
    n = 10 * 60 // STEP
    n3, n4 = {**NDB, "node_id": "3"}, {**NDB, "node_id": "4"}
    series = [const("ndb_node_status", {**n3, "status": "STARTED"}, [1] * 12 + [None] * (n - 12)),
              const("ndb_data_node_running", n3, [1] * 12 + [0] * (n - 12)),
              const("ndb_restart_status", n3, [19] * 12 + [3] * (n - 12)),
              const("ndb_node_status", {**n4, "status": "STARTED"}, [1] * 12 + [None] * (n - 12)),
              const("ndb_data_node_running", n4, [1] * 12 + [0] * (n - 12)),
              const("ndb_restart_status", n4, [19] * 12 + [10] * (n - 12))]
    promtool_test(tmp_path, series, [
        firing("NdbDataNodeDown", (n - 1) * STEP, [{"cluster": "lab-ndb", "node_id": "3",
                                                   "simulated": "true"}])])


def test_sql_node_down_is_one_alert_not_one_per_collector(tmp_path) -> None:
    """ndb_up 0 makes every collector report success 0."""
    n = 12 * 60 // STEP
    collectors = ("nodes", "cpustat", "counters", "memoryusage", "transporters")
    series = [const("up", NDB, [1] * n), const("ndb_up", NDB, [1] * 12 + [0] * (n - 12))]
    for c in collectors:
        series += [const("ndb_exporter_collector_success", {**NDB, "collector": c},
                         [1] * 12 + [0] * (n - 12)),
                   const("ndb_exporter_collector_supported", {**NDB, "collector": c}, [1] * n)]
    # no SQL node reads the cluster while the exporter answers: the outage pages once, as
    # NdbClusterUnreachable; NdbExporterDown is the exporter itself
    promtool_test(tmp_path, series, [
        firing("NdbExporterCollectorFailing", (n - 1) * STEP, None),
        firing("NdbExporterDown", (n - 1) * STEP, None),
        firing("NdbClusterUnreachable", (n - 1) * STEP, [{"cluster": "lab-ndb"}])])


def test_a_lost_arbitrator_alerts_once_per_cluster_but_not_for_a_restarting_node(
        tmp_path) -> None:
    """Arbitration (membership). Node 3 restarts (not STARTED, no arbitrator
    yet) during the first 10 minutes: no alert. From minute 10 the arbitrator is lost on
    both started nodes for 5 minutes: one alert for the cluster, 2 m later; then back."""
    n = 20 * 60 // STEP
    lost = [1] * (10 * 60 // STEP) + [0] * (5 * 60 // STEP) + [1] * (5 * 60 // STEP)
    series = []
    for i, connected in (("2", lost), ("3", [0] * (10 * 60 // STEP) + lost[10 * 60 // STEP:])):
        node = {**NDB, "node_id": i}
        started = [1] * n if i == "2" else [0] * (10 * 60 // STEP) + [1] * (10 * 60 // STEP)
        series += [const("ndb_arbitrator_connected", node, connected),
                   const("ndb_arbitrator_node_id", node, [49] * n),
                   const("ndb_node_status", {**node, "status": "STARTED"}, started)]
    promtool_test(tmp_path, series, [
        firing("NdbArbitratorLost", 9 * 60, None),
        firing("NdbArbitratorLost", 11 * 60, None),   # for: 2m
        firing("NdbArbitratorLost", 13 * 60, [{"cluster": "lab-ndb"}]),
        firing("NdbArbitratorLost", 17 * 60, None),
    ])


def test_a_described_ndb_cluster_nobody_scrapes(tmp_path) -> None:
    """The description lists NDB clusters x and y; only y is scraped: x alone is absent.
    The old rule (`absent(up{job="ndbinfo"})`) could not name x and stayed quiet while y
    was scraped."""
    series = [const("clusterscope_cluster_info", {**INVENTORY, "cluster": c, "kind": "ndb"},
                    [1] * 30) for c in ("x", "y")]
    series.append(const("up", {"job": "ndbinfo", "cluster": "y", "instance": "y"}, [1] * 30))
    promtool_test(tmp_path, series, [firing("NdbExporterAbsent", 29 * STEP, [{"cluster": "x"}])])


def test_nothing_is_absent_for_a_product_not_deployed(tmp_path) -> None:
    """A Galera-only deployment: no ndbinfo job at all, and no NDB alert (the old rule,
    `absent(up{job="ndbinfo"})`, paged it as NdbExporterAbsent)."""
    series = [const("clusterscope_cluster_info", {**INVENTORY, "cluster": "g", "kind": "galera"},
                    [1] * 40),
              const("clusterscope_node_info", {**INVENTORY, "cluster": "g", "node": "n1",
                                               "role": "galera"}, [1] * 40),
              const("up", {"job": "galera", "cluster": "g", "node": "n1", "instance": "h:1"},
                    [1] * 40),
              const("up", INVENTORY, [1] * 40)]
    promtool_test(tmp_path, series, [
        firing(a, 39 * STEP, None)
        for a in ("NdbExporterAbsent", "NdbExporterDown", "GaleraExporterAbsent",
                  "ClusterscopeInventoryDown", "GaleraTrackerDown", "LoadgenDown")])


def test_the_inventory_itself_absent_or_invalid(tmp_path) -> None:
    series = [const("up", {"job": "other", "instance": "x"}, [1] * 40)]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeInventoryDown", 39 * STEP, [{"job": "clusterscope_inventory"}])])
    series = [const("up", INVENTORY, [1] * 40),
              const("clusterscope_inventory_config_last_reload_successful", INVENTORY,
                    [1] * 10 + [0] * 30)]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeInventoryInvalid", 39 * STEP, [INVENTORY])])


def test_a_dead_sql_node_of_several(tmp_path) -> None:
    lab = {"job": "ndbinfo", "cluster": "lab-ndb", "instance": "lab-ndb"}
    series = [const("ndb_sql_node_up", {**lab, "sql_node": "sql1"}, [1] * 5 + [0] * 35),
              const("ndb_sql_node_up", {**lab, "sql_node": "sql2"}, [1] * 40),
              const("ndb_up", lab, [1] * 40), const("up", lab, [1] * 40)]
    promtool_test(tmp_path, series, [
        firing("NdbSqlNodeDown", 39 * STEP, [{"cluster": "lab-ndb", "sql_node": "sql1"}]),
        firing("NdbExporterDown", 39 * STEP, None)])


def test_every_data_node_down_is_one_critical_page(tmp_path) -> None:
    """Every data node down; the SQL nodes answer but read nothing
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


def test_every_sql_node_down_is_the_same_page_and_a_dead_exporter_is_not(tmp_path) -> None:
    """The only SQL node is down (ndb_up 0, ndb_sql_node_up 0): applications lose
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


def test_an_exporter_blind_spell_does_not_resolve_a_down_node(tmp_path) -> None:
    """Data node 3 is down; from minute 5 to 8 the exporter's only
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


def test_an_sql_node_that_sees_no_data_node(tmp_path) -> None:
    """The NDB SQL nodes are probed by mysqld_exporter (job ndb_sql) but nothing
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
