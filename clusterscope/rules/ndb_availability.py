# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB alerts on availability: data nodes down, a node group's last replica, the cluster
unreachable, arbitration, versions, SQL nodes down or cut off from the data nodes."""

from __future__ import annotations

from clusterscope.rules.fragments import restart_in_progress
from clusterscope.rules.rule_model import WITHOUT, Alert, Runbook

GROUP_REC = "cluster_node:ndb_node_group:info"


def data_node_down(c: dict) -> str:
    """Data nodes that are down: configured but without an ndbinfo.nodes row, and not in a
    restart. A restarting node has no `nodes` row until its start phase 9 either: an ndbinfo
    scan reaches only the data nodes the SQL node is connected to and API_REGCONFed with
    (mysql/mysql-server storage/ndb/src/ndbapi/NdbInfoScanOperation.cpp, find_next_node ->
    SignalSender::find_confirmed_node), each node writes only its own `nodes` row
    (storage/ndb/src/kernel/blocks/cmvmi/Cmvmi.cpp, NODES_TABLEID: getOwnNodeId()), and a
    starting node lets API nodes connect in start phase 9 (storage/ndb/src/kernel/blocks/
    qmgr/QmgrMain.cpp, execSTTOR case 9 "Enable communication to all API nodes"). Through
    restore, REDO, index build, copy and the LCP wait it looks exactly like a dead node, so
    the master's restart_info (states 4-18 and 20-23: a restart under way) tells them apart.
    Both are read over the blind-spell hold, so an exporter or SQL node restart never
    resolves the verdict."""
    s = c["selectors"]["ndb"]
    hold = c["blind_spell_hold"]
    status = f"max {WITHOUT} (last_over_time(ndb_restart_status{{{s}}}[{hold}]))"
    return (f"max {WITHOUT} (last_over_time(ndb_data_node_running{{{s}}}[{hold}])) == 0"
            f" unless on (cluster, node_id) ({restart_in_progress(status, failure=False)})")


def node_group_record(c: dict) -> tuple[str, str]:
    """The node group as a label (ndbinfo.membership has a row per running node only): kept
    while the node is down by this record itself."""
    s = c["selectors"]["ndb"]
    return (GROUP_REC,
            f"count_values without (instance, job) (\"node_group\", max {WITHOUT} (ndb_node_group{{{s}}}))"
            f" or on (cluster, node_id) last_over_time({GROUP_REC}[{c['ndb']['node_group_memory']}])")


def _data_node_down(c: dict) -> Alert:
    n = c["ndb"]
    down = data_node_down(c)
    # with its node group when known (inhibited by that group's last-replica page)
    return Alert(name="NdbDataNodeDown",
                 expr=f"({down}) * on (cluster, node_id) group_left (node_group) {GROUP_REC}"
                      f" or on (cluster, node_id) ({down})",
                 severity="warning",
                 summary="NDB data node {{ $labels.node_id }} is down",
                 description="Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} is configured"
                             " (ndbinfo.config_nodes) but has not been running (no row in ndbinfo.nodes) for"
                             f" {n['data_node_down_for']}, and restart_info shows no restart of it under way"
                             " (a restarting node has no nodes row before start phase 9 either). Its node"
                             " group runs on fewer replicas: NdbNodeGroupLastReplica pages when one is left.",
                 dashboard="ndb_overview",
                 for_=n["data_node_down_for"],
                 runbook=Runbook(
                     meaning="A configured data node (ndbinfo.config_nodes) has no row in ndbinfo.nodes,"
                             " and the master's restart_info shows no restart of it under way: it is"
                             " stopped or crashed, or it is waiting at node failure handling (states 2-3)."
                             " A restarting node has no `nodes` row either until its start phase 9 (the"
                             " SQL node reads ndbinfo only from data nodes it is connected to, and a"
                             " starting node accepts API connections in phase 9), so restart_info states"
                             " 4-18 and 20-23 mean \"restarting\", not down. A verdict survives a blind"
                             " spell of up to 10 minutes (the exporter or its SQL node restarting).",
                     impact="One replica of its node group is gone; with two replicas per group the"
                            " group has a single node left, which NdbNodeGroupLastReplica pages.",
                     diagnosis="- `ndb_mgm -e show`: `not connected` (down) or `starting` (a restart"
                               " restart_info does not show, e.g. a version without restart_info).\n"
                               "- On its host: is `ndbmtd` running, its `ndb_<id>_error.log` (the"
                               " error that stopped it) and the trace file it names.\n"
                               "- `SELECT * FROM ndbinfo.restart_info WHERE node_id = N;` on a live SQL"
                               " node (state 3: failure handling completed, waiting for the node).",
                     mitigation="Start the node (`ndbmtd`), or fix what stops it (disk, memory, config"
                                " mismatch). Watch NdbRestartStuck / NdbRestartTimeRegressed while it"
                                " restarts.",
                     benign="a planned `N STOP` (start a maintenance window: `clusterscope maintenance"
                            " start --cluster C --node N`)."))


def _node_group_last_replica(c: dict) -> Alert:
    n = c["ndb"]
    down = data_node_down(c)
    return Alert(name="NdbNodeGroupLastReplica",
                 expr=f"count by (cluster, node_group) ({GROUP_REC} unless on (cluster, node_id) ({down}))"
                      f" == 1 and on (cluster, node_group) count by (cluster, node_group) ({GROUP_REC}) > 1",
                 severity="critical",
                 summary="NDB node group {{ $labels.node_group }} of {{ $labels.cluster }} has"
                         " one live data node left",
                 description="Every other data node of node group {{ $labels.node_group }} in"
                             " {{ $labels.cluster }} is down (not running and not restarting): its data lives"
                             " on one node now, and when that node fails the whole cluster shuts down. A node"
                             " in a planned restart does not count as down.",
                 dashboard="ndb_overview",
                 for_=n["node_group_last_replica_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="Every data node of a node group but one is down (not running, and not in"
                             " a restart per restart_info). The node groups come from"
                             " `ndbinfo.membership.group_id` (remembered while a node is down by the"
                             " record `cluster_node:ndb_node_group:info`). A node in a planned restart"
                             " counts as live: a rolling restart does not page.",
                     impact="The group's data lives on one node. When it fails, NDB shuts the whole"
                            " cluster down (a node group without a live node makes the data"
                            " incomplete), and a system restart follows.",
                     diagnosis="- `ndb_mgm -e show`: which nodes of the group are `not connected`.\n"
                               "- `SELECT node_id, group_id FROM ndbinfo.membership;` (the live members).\n"
                               "- The down node's `ndb_<id>_error.log` and the cluster log.",
                     mitigation="Start the down node(s) now. Until the group has two live nodes again,"
                                " postpone anything risky on the survivor (restarts, upgrades, heavy"
                                " DDL).",
                     benign="none: a planned stop of one node of a two-replica group fires it; start a"
                            " maintenance window first (`clusterscope maintenance start`)."))


def _cluster_unreachable(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    hold = c["blind_spell_hold"]
    return Alert(name="NdbClusterUnreachable",
                 expr=f"max by (cluster) (last_over_time(ndb_up{{{s}}}[{hold}])) == 0",
                 severity="critical",
                 summary="NDB cluster {{ $labels.cluster }} cannot be read through any SQL node",
                 description="No SQL node of {{ $labels.cluster }} answers with the cluster's data: every SQL"
                             " node is down (ndb_sql_node_up 0), or they answer but reach no data node"
                             " (ndbinfo offline or 'Connection to NDB failed': every data node is down, or the"
                             " SQL nodes lost them). Applications cannot use the cluster either.",
                 dashboard="ndb_overview",
                 for_=n["cluster_unreachable_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="The exporter answers but reads nothing of the cluster through any of its"
                             " SQL nodes (`ndb_up` 0 on every exporter, held through blind spells of up"
                             " to 10 minutes): every SQL node is down (`ndb_sql_node_up` 0), or the"
                             " SQL nodes answer but reach no data node (ndbinfo offline, or `Connection"
                             " to NDB failed` when the SQL node lost the cluster).",
                     impact="An outage: applications going through these SQL nodes cannot use the"
                            " cluster; every other NDB alert is blind.",
                     diagnosis="- `ndb_mgm -e show` on a management node: are the data nodes `not"
                               " connected` (the cluster is down) or the SQL nodes (API) not"
                               " connected?\n"
                               "- `ndb_sql_node_up` per SQL node; `mysql -h <sql node> -e"
                               " 'SELECT * FROM ndbinfo.nodes'` as the exporter's account.\n"
                               "- The cluster log for `Node N: Forced node shutdown` / `Arbitration`"
                               " lines, and each data node's error log.\n"
                               "- If the cluster and SQL nodes are fine: the exporter's login (`GRANT"
                               " SELECT ON ndbinfo.*`, its password in `secrets/exporters.my.cnf`).",
                     mitigation="Data nodes down: start them (`ndbmtd` on each host; after a full"
                                " shutdown, all of them, for a system restart). SQL nodes down: start"
                                " mysqld. SQL nodes disconnected: check the network to the data nodes"
                                " and `ndb-connectstring`."))


def _arbitrator_lost(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    # only STARTED nodes vote: a node in a restart has not joined arbitration yet
    return Alert(name="NdbArbitratorLost",
                 expr=f"count by (cluster) ((max {WITHOUT} (ndb_arbitrator_connected{{{s}}}) == 0"
                      f" or max {WITHOUT} (ndb_arbitrator_node_id{{{s}}}) == 0)"
                      f" and on (cluster, node_id) max without (instance, job, status)"
                      f" (ndb_node_status{{{s},status=\"STARTED\"}}) == 1) > 0",
                 severity="warning",
                 summary="NDB cluster {{ $labels.cluster }} has no arbitrator",
                 description="{{ $value }} started data node(s) of {{ $labels.cluster }} have no connected"
                             " arbitrator (ndbinfo.membership): a network split now shuts the cluster down"
                             " instead of arbitrating.",
                 dashboard="ndb_overview",
                 for_=n["arbitrator_lost_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="A started data node has had no connected arbitrator for 2 minutes"
                             " (`ndbinfo.membership`: `arb_connected` No, or no arbitrator at all).",
                     impact="A node failure that needs arbitration shuts the survivors down too. With"
                            " one node group (two data nodes) that is every single node failure: the"
                            " survivor holds half the nodes and cannot win arbitration alone, so it"
                            " shuts down and the cluster is gone. With more node groups, a network"
                            " split that an arbitrator would have settled takes the whole cluster down.",
                     diagnosis="- `SELECT node_id, president, arbitrator, arb_state, arb_connected,"
                               " connected_rank1_arbs, connected_rank2_arbs FROM ndbinfo.membership;`\n"
                               "- `ndb_mgm -e show`: are the management nodes (ArbitrationRank 1)"
                               " connected?\n"
                               "- The cluster log (`ndb_<mgm id>_cluster.log`): `Arbitration` lines say"
                               " which arbitrator was lost and whether a new one was chosen.",
                     mitigation="Start or reconnect the management node (or an API node with"
                                " ArbitrationRank > 0) now, before a data node fails; check the network"
                                " between it and the data nodes. The alert resolves once every started"
                                " node reports a connected arbitrator.",
                     benign="a cluster configured with `Arbitration=Disabled` or `WaitExternal` never has"
                            " one: silence the alert for that cluster (`amtool silence add"
                            " alertname=NdbArbitratorLost cluster=<name>`). The arbitration mode is in"
                            " `ndbinfo.config_values`, which no collector reads yet."))


def _version_mismatch(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbVersionMismatch",
                 expr=f"count by (cluster) (count by (cluster, version) (ndb_node_info{{{s},type=\"NDB\"}})) > 1"
                      f" or count by (cluster) (count_values by (cluster) (\"generation\","
                      f" max {WITHOUT} (ndb_node_config_generation{{{s}}}))) > 1",
                 severity="info",
                 summary="NDB cluster {{ $labels.cluster }} runs mixed versions or configurations",
                 description="The data nodes of {{ $labels.cluster }} have run more than one software version or"
                             f" configuration generation for {n['version_mismatch_for']}: a rolling upgrade or"
                             " configuration change is half done.",
                 dashboard="ndb_overview",
                 for_=n["version_mismatch_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="The data nodes have run more than one software version, or more than one"
                             " configuration generation, for 2 hours.",
                     impact="Usually a rolling upgrade or configuration change left half done: restart"
                            " behaviour and features differ by node, and the next change starts from"
                            " an unclear state.",
                     diagnosis="- `SELECT node_id, node_type, node_version FROM ndbinfo.processes;`\n"
                               "- `SELECT node_id, config_generation FROM ndbinfo.nodes;`\n"
                               "- `ndb_mgm -e show` (versions per node).",
                     mitigation="Finish the rolling restart (the nodes still on the old version or"
                                " configuration), or roll back.",
                     benign="a rolling upgrade that takes longer than 2 hours."))


def _sql_node_down(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbSqlNodeDown",
                 expr=f"max {WITHOUT} (ndb_sql_node_up{{{s}}}) == 0",
                 severity="warning",
                 summary="NDB SQL node {{ $labels.sql_node }} of {{ $labels.cluster }} does"
                         " not answer",
                 description="SQL node {{ $labels.sql_node }} of {{ $labels.cluster }} has not answered the"
                             f" exporter for {n['sql_node_down_for']}. The exporter reads ndbinfo through"
                             " another SQL node if one answers (ndb_sql_node_serving); applications that"
                             " connect to this one fail.",
                 dashboard="ndb_overview",
                 for_=n["sql_node_down_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="An SQL node of the cluster has not answered the exporter (connection"
                             " refused, login failed, or lost) for 2 minutes (`ndb_sql_node_up` 0).",
                     impact="Monitoring goes on through another SQL node when one answers"
                            " (`ndb_sql_node_serving`); applications that connect to this SQL node fail,"
                            " and with it down the cluster has one API node less.",
                     diagnosis="- `mysqladmin -h <sql node> ping`; its error log.\n"
                               "- `ndb_mgm -e show`: is the SQL node (an API node id) connected?\n"
                               "- `mysql_up{job=\"ndb_sql\"}` and `mysql_global_status_ndb_api_*` of that"
                               " node (mysqld_exporter probes it too).",
                     mitigation="Restart mysqld on that host; check the exporter account's password"
                                " there (each SQL node has its own user table)."))


def _sql_node_disconnected(c: dict) -> Alert:
    n = c["ndb"]
    sql = c["selectors"]["ndb_sql"]
    # an SQL node that runs but sees no data node: applications connected to it fail
    # (status variables Ndb_number_of_ready_data_nodes / Ndb_number_of_data_nodes,
    # mysql/mysql-server storage/ndb/plugin/ha_ndbcluster.cc ndb_status_vars, through
    # mysqld_exporter's global_status collector, lower-cased)
    return Alert(name="NdbSqlNodeDisconnected",
                 expr=f"max {WITHOUT} (mysql_global_status_ndb_number_of_ready_data_nodes{{{sql}}}) == 0"
                      f" and on (cluster, node) max {WITHOUT} (mysql_up{{{sql}}}) == 1",
                 severity="warning",
                 summary="NDB SQL node {{ $labels.node }} of {{ $labels.cluster }} sees"
                         " no data node",
                 description="SQL node {{ $labels.node }} of {{ $labels.cluster }} answers but is connected"
                             " to no ready data node (Ndb_number_of_ready_data_nodes 0) for"
                             f" {n['sql_node_disconnected_for']}: every NDB table query through it fails.",
                 dashboard="ndb_overview",
                 for_=n["sql_node_disconnected_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="An NDB SQL node answers (mysqld_exporter's `mysql_up` 1, job `ndb_sql`) but"
                             " is connected to no ready data node (`Ndb_number_of_ready_data_nodes` 0)"
                             " for a minute.",
                     impact="Every query on NDB tables through this SQL node fails; applications"
                            " connected to it see errors while the other SQL nodes may work.",
                     diagnosis="- `SHOW GLOBAL STATUS LIKE 'Ndb_%';` on it (`Ndb_cluster_node_id`,"
                               " `Ndb_config_from_host`).\n"
                               "- `ndb_mgm -e show`: is its API node id connected?\n"
                               "- Its error log: `NDB: ... connection` lines; the network to the data"
                               " nodes and to the management node.",
                     mitigation="Fix the network or the `ndb-connectstring`; a free API slot in the"
                                " cluster configuration; restart the mysqld if it does not reconnect."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_data_node_down, _node_group_last_replica, _cluster_unreachable,
                                 _arbitrator_lost, _version_mismatch, _sql_node_down,
                                 _sql_node_disconnected)]
