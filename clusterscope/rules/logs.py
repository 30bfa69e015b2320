# ruff: noqa: E501  (LogsQL reads better unbroken)
"""Alerts on log lines: LogsQL rules that a vmalert of their own evaluates against
VictoriaLogs (`type: vlogs` groups; VictoriaLogs v1.52.1 docs/victorialogs/vmalert.md).

Each rule counts the matching lines of the last `logs.event_window` (its own `_time:`
filter, so vmalert adds no window of its own: VictoriaMetrics v1.151.0
app/vmalert/datasource/client_vlogs.go) per cluster and node: the alert fires at the first
evaluation that sees a line and resolves one window after the last one. No `for:`: one line
is the event. The patterns are RE2 (LogsQL `~"..."`, unanchored) and match the wording the
servers write, as cited below; tests/test_logs_alerts.py feeds recorded lines through the
real collector, VictoriaLogs, vmalert and Alertmanager.
"""

from __future__ import annotations

from clusterscope.logs.logsql import quote
from clusterscope.rules.galera import FIRST_STEPS as GALERA_FIRST_STEPS
from clusterscope.rules.ndb import FIRST_STEPS as NDB_FIRST_STEPS
from clusterscope.rules.rule_model import Alert, Group, Runbook

LOGS_FIRST = """The lines that fired it, in Grafana's Explore (VictoriaLogs datasource) or from the
toolkit, with the alert's query without its `| stats` part, for example:

```sh
clusterscope logs query '_time:30m {{cluster="<cluster>", component="{component}"}} ~"{pattern}"'
```"""


def log_first_steps(component: str, pattern: str, product_first: str) -> str:
    """A log alert's first steps: the lines that fired it, then its product's."""
    logs = LOGS_FIRST.format(component=component, pattern=pattern)
    return f"{logs}\n\n{product_first}"



# An NDB global checkpoint not progressing: the GCP monitor warns in the cluster log when
# a GCP_SAVE takes more than a minute or a GCP_COMMIT more than 10 s, and kills the nodes
# holding it back once TimeBetweenEpochsTimeout / TimeBetweenGlobalCheckpointsTimeout is
# exceeded (MySQL Reference Manual, NDB "TimeBetweenEpochsTimeout"). The warning's wording,
# recorded from a real ndb_mgmd: `[MgmtSrvr] WARNING -- Node 5: GCP Monitor: GCP_SAVE lag
# 60 seconds (no max lag)` (pastebin.com/q9qrj3Tx, 2018); the start-up lines `GCP Monitor:
# Computed max GCP_SAVE lag to N seconds` and `unlimited lags allowed` (mysql-server
# storage/ndb/src/kernel/blocks/dbdih/DbdihMain.cpp, ZNDB_SPH5) do not match.
GCP_STOP = r"GCP Monitor: GCP_(?:SAVE|COMMIT) lag \d+ seconds"

# A state transfer that failed or was aborted, in the wording of the lab's MariaDB 10.11.19
# and Galera 4 26.4.23 (Debian 12 packages; `strings` of mariadbd and libgalera_smm.so) and
# in the lines recorded in the lab (tests/fixtures/galera/sst-failed-*.log):
# - Galera, on every member: `%d.%d (%s): State transfer %s %d.%d (%s) failed: %s`;
# - Galera, on the joiner: `Requesting state transfer failed`, `State transfer request
#   failed unrecoverably`, `Failed to receive state transfer`;
# - Galera, on the joiner: `Application state transfer failed. This is unrecoverable
#   condition, restart required.`;
# - mariadbd: `Process completed with error: wsrep_sst_<method> ...` (the SST script's
#   exit, on joiner and donor), `Failed to prepare for '%s' SST. Unrecoverable.`,
#   `SST preparation failed`, `SST sending failed: <errno>` (the donor);
# - the SST scripts' own errors: `WSREP_SST: [ERROR] ...` (wsrep_sst_common wsrep_log_error).
# PXC 8.0 writes the same Galera and WSREP lines (shared/fixtures/pxc-logs, the Percona
# Toolkit's recorded upgrade and operator logs: `Process completed with error:
# wsrep_sst_xtrabackup-v2 --role 'donor' ...`, `SST sending failed: -22`); none of the
# recorded successful recoveries matches (tests/test_logs_alerts.py).
SST_FAILED = (r"State transfer (?:to|from) .* failed"
              r"|Requesting state transfer failed|State transfer request failed unrecoverably"
              r"|Failed to receive state transfer"
              r"|Process completed with error: wsrep_sst_"
              r"|Failed to prepare for .*SST|SST (?:preparation|sending) failed"
              r"|Application state transfer failed"
              r"|WSREP_SST: \[ERROR\]")

# ENOSPC as strerror() spells it (glibc: "No space left on device"), which every server
# prints with the failed write: MariaDB/MySQL `(Errcode: 28 "No space left on device")`,
# NDB's file system errors (`OS errno: 28 - No space left on device`).
NO_SPACE = r"(?i)no space left on device"

# A data node stopped by an error or a signal, in the wording of mysql/mysql-server
# storage/ndb/src/common/debugger/EventLogger.cpp (commit f0e24c795fbceb3d7ad060934e1e399ec939a3f8,
# getTextNDBStopForced): `Forced node shutdown completed[, restarting][.][ Occurred during
# startphase N.][ Initiated by signal S.][ Caused by error E: '...'.]`, written by ndb_mgmd
# as `Node N: ...` (older releases spell it "Occured"). A stop the operator asked for is
# `Node shutdown completed` (getTextNDBStopCompleted), which does not match.
FORCED_SHUTDOWN = r"Forced node shutdown completed"

# Arbitration that a set of data nodes lost, so they shut down (EventLogger.cpp, same
# commit, getTextArbitResult): `Arbitration check lost - less than 1/2 nodes left`,
# `Arbitration check lost - missing node group`, `Arbitration lost - negative reply from
# node N`, `Network partitioning - no arbitrator available`, `Network partitioning - no
# arbitrator configured`, `Arbitration failure - <error> [state=N]`. The winning side's
# `Arbitration check won ...`, `Arbitration won ...` and the neutral `Network partitioning -
# arbitration required` do not match.
ARBITRATION_LOST = (r"Arbitration check lost - |Arbitration lost - "
                    r"|Network partitioning - no arbitrator|Arbitration failure - ")

# mariadbd/mysqld giving up: unireg_abort() logs `[ERROR] Aborting` when the server exits
# with an error (MariaDB sql/mysqld.cc); MySQL 8 / PXC 8.0 write it as `[ERROR] [MY-010119]
# [Server] Aborting` (recorded: shared/fixtures/pxc-logs/upgrade_node2.log.gz).
ABORTING = r"\[ERROR\] (?:\[MY-010119\] \[Server\] )?Aborting\s*$"

GALERA_LOGS = ("mariadb", "garbd")
NDB_LOGS = ("ndb_mgmd", "ndbmtd", "mysqld")


def _components(names: tuple[str, ...]) -> str:
    return "|".join(names)


def _ndb_gcp_stop(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="NdbGcpStop",
                 expr=f'_time:{w} {{component="ndb_mgmd"}} ~{quote(GCP_STOP)}'
                      " | stats by (cluster, node) count() as lines",
                 severity="critical",
                 summary="A global checkpoint of NDB cluster {{ $labels.cluster }} is stuck",
                 description="The NDB cluster log of {{ $labels.cluster }} reported a lagging global"
                             f" checkpoint (GCP Monitor, node {{{{ $labels.node }}}}) {{{{ $value }}}} time(s) in the last {w}:"
                             " commits are not being made durable, and the data nodes holding it back are"
                             " killed once the GCP timeout is exceeded.",
                 dashboard="logs",
                 per_node=False,
                 language="logsql",
                 runbook=Runbook(
                     meaning="The NDB cluster log reported a global checkpoint (GCP) that is not"
                             " progressing: the GCP monitor warns when a GCP_SAVE (the REDO log written"
                             " to disk) takes more than a minute or a GCP_COMMIT more than 10 seconds"
                             " (`GCP Monitor: GCP_SAVE lag 60 seconds (no max lag)`). This is the GCP"
                             " stop condition; with TimeBetweenEpochsTimeout /"
                             " TimeBetweenGlobalCheckpointsTimeout set, the data nodes holding it back"
                             " are killed once the lag exceeds them.",
                     impact="Committed transactions are not made durable while the GCP is stuck: a"
                            " cluster crash now loses them. Epochs stall, so NDB replication and event"
                            " subscribers fall behind. If a node is killed, its node group runs on one"
                            " replica.",
                     diagnosis="- The cluster log around the warning: which node reports the lag, and"
                               " whether a node was then killed (`Forced node shutdown`).\n"
                               "- Disk latency on the data nodes' REDO log directories (a slow or"
                               " full disk is the usual cause: GCP_SAVE waits for the REDO fsync);"
                               " `SELECT * FROM ndbinfo.disk_write_speed_aggregate_node;`.\n"
                               "- Overload: the data nodes' CPU (`ndbinfo.cpustat`) and send buffers"
                               " (`ndbinfo.transporters`), a very large transaction in progress.",
                     mitigation="Relieve the disk (move REDO to faster storage, stop competing I/O),"
                                " reduce the write load. A node killed by the GCP stop restarts on its"
                                " own (StopOnError=0) or needs `ndbmtd`; watch NdbRestartStuck.",
                     first_steps=log_first_steps('ndb_mgmd', 'GCP Monitor', NDB_FIRST_STEPS)))


def _galera_sst_failed(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="GaleraSstFailed",
                 expr=f'_time:{w} {{component="mariadb"}} ~{quote(SST_FAILED)}'
                      " | stats by (cluster, node) count() as lines",
                 severity="warning",
                 summary="A state transfer failed or was aborted on {{ $labels.node }}",
                 description="The error log of {{ $labels.node }} ({{ $labels.cluster }}) has {{ $value }}"
                             f" line(s) of a failed or aborted state transfer (SST/IST) in the last {w}: the"
                             " joiner did not join and will retry or stay down.",
                 dashboard="galera",
                 language="logsql",
                 runbook=Runbook(
                     meaning="A Galera node's error log has lines of a state transfer that failed or"
                             " was aborted: `State transfer to <joiner> failed` (logged by every"
                             " member), the SST script exiting with an error (`Process completed with"
                             " error: wsrep_sst_...`, `WSREP_SST: [ERROR] ...`) or the joiner giving up"
                             " (`Requesting state transfer failed`, `Failed to receive state"
                             " transfer`).",
                     impact="The joiner is not in the cluster: one node fewer (GaleraClusterSizeReduced"
                            " follows). A donor that ran out of time or space may also have been"
                            " desynced for the whole attempt. mariadbd aborts after a failed SST and a"
                            " supervisor restarts it into another full SST, so this repeats until the"
                            " cause is fixed.",
                     diagnosis="- The joiner's and the donor's error logs around the failure: the SST"
                               " method (`wsrep_sst_method`), the donor named, the script's own"
                               " `WSREP_SST: [ERROR]` lines.\n"
                               "- On the joiner: free space in the datadir (an SST needs the whole"
                               " dataset), the SST port (4444) reachable from the donor, the"
                               " `wsrep_sst_auth` / mariabackup account on the donor.\n"
                               "- GaleraRecoveryAborted from the recovery tracker names the same"
                               " attempt.",
                     mitigation="Fix the cause (space, port, credentials, a donor that is itself"
                                " overloaded: pick another with `wsrep_sst_donor`), then start the"
                                " node again; make sure only one SST runs at a time.",
                     benign="a node stopped on purpose while it was receiving an SST.",
                     first_steps=log_first_steps('mariadb', 'State transfer .* failed|WSREP_SST: \\\\[ERROR\\\\]', GALERA_FIRST_STEPS)))


def _galera_disk_full(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="GaleraDiskFull",
                 expr=f'_time:{w} {{component=~"{_components(GALERA_LOGS)}"}} ~{quote(NO_SPACE)}'
                      " | stats by (cluster, node, component) count() as lines",
                 severity="critical",
                 summary="{{ $labels.node }} ran out of disk space",
                 description="The {{ $labels.component }} log of {{ $labels.node }} ({{ $labels.cluster }})"
                             f" reported \"No space left on device\" {{{{ $value }}}} time(s) in the last {w}:"
                             " writes on that node fail.",
                 dashboard="galera",
                 language="logsql",
                 runbook=Runbook(
                     meaning="A Galera node's log reported `No space left on device` (ENOSPC, errno"
                             " 28): a write of the datadir, binary log, gcache or temporary directory"
                             " failed.",
                     impact="Transactions that need the disk fail or wait (MariaDB waits for space on a"
                            " full disk and keeps retrying); a node that cannot write its gcache or"
                            " InnoDB files leaves the cluster, and an SST to it fails.",
                     diagnosis="- `df -h` of the node's datadir, `tmpdir`, binary-log and gcache"
                               " directories; the log line names the file.\n"
                               "- What grew: binary logs (`SHOW BINARY LOGS`; `expire_logs_days`),"
                               " gcache pages (`gcache.keep_pages_size`), temporary tables, an SST's"
                               " leftovers.",
                     mitigation="Free space (purge binary logs with `PURGE BINARY LOGS`, remove stale"
                                " SST/backup directories) or grow the volume; then check the node is"
                                " `Synced` again.",
                     first_steps=log_first_steps('mariadb', '(?i)no space left on device', GALERA_FIRST_STEPS)))


def _ndb_node_shutdown_forced(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="NdbNodeShutdownForced",
                 expr=f'_time:{w} {{component=~"ndb_mgmd|ndbmtd"}} ~{quote(FORCED_SHUTDOWN)}'
                      " | stats by (cluster, node) count() as lines",
                 severity="warning",
                 summary="NDB data node {{ $labels.node }} of {{ $labels.cluster }} was"
                         " shut down by an error",
                 description="The NDB cluster log of {{ $labels.cluster }} reported a forced shutdown of node"
                             f" {{{{ $labels.node }}}} {{{{ $value }}}} time(s) in the last {w}: the node stopped on an"
                             " error or a signal, not on request (its error code is in the line).",
                 dashboard="ndb_overview",
                 per_node=False,
                 language="logsql",
                 runbook=Runbook(
                     meaning="The NDB cluster log reported `Node N: Forced node shutdown completed`:"
                             " data node N stopped on an error (`Caused by error E: '...'`) or a signal"
                             " (`Initiated by signal S`), not because someone asked it to stop (that"
                             " is `Node shutdown completed`).",
                     impact="The node's node group runs on fewer replicas until it restarts"
                            " (NdbNodeGroupLastReplica pages when one is left). With StopOnError=1"
                            " (the default) the node stays down until started again.",
                     diagnosis="- The line's error code and text: `ndb_perror E` explains it; 2303/2315"
                               " (killed by other nodes, declared dead) point at heartbeats and the"
                               " network, 2341/2355 at memory, 2806/2807/2808 at the file system.\n"
                               "- The node's own `ndb_N_out.log` and `ndb_N_error.log`, and its trace"
                               " files.\n- The cluster log before it: missed heartbeats, GCP Monitor"
                               " warnings, `Arbitration` lines.",
                     mitigation="Fix the cause the error names (disk, memory, network), then start the"
                                " node (`ndbmtd`, or `N START` if it runs with `-n`); it restarts"
                                " through its phases (NdbRestartStuck watches them).",
                     benign="a `kill -9` of a data node on purpose (`Initiated by signal 9`).",
                     first_steps=log_first_steps('ndb_mgmd', 'Forced node shutdown completed', NDB_FIRST_STEPS)))


def _ndb_arbitration_lost(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="NdbArbitrationLost",
                 expr=f'_time:{w} {{component=~"ndb_mgmd|ndbmtd"}} ~{quote(ARBITRATION_LOST)}'
                      " | stats by (cluster, node) count() as lines",
                 severity="warning",
                 summary="NDB cluster {{ $labels.cluster }}: data nodes lost arbitration",
                 description="The NDB cluster log of {{ $labels.cluster }} reported {{ $value }} lost"
                             f" arbitration(s) in the last {w} (node {{{{ $labels.node }}}}): after a network"
                             " partition or node failures these data nodes could not prove they were the"
                             " surviving half and shut down.",
                 dashboard="ndb_overview",
                 per_node=False,
                 language="logsql",
                 runbook=Runbook(
                     meaning="The NDB cluster log reported lost arbitration: after node failures or a"
                             " network partition, a set of data nodes could not show that it was the"
                             " surviving part (`Arbitration check lost - less than 1/2 nodes left`,"
                             " `... missing node group`, `Arbitration lost - negative reply from node"
                             " N`, `Network partitioning - no arbitrator available/configured`) and"
                             " shut itself down to avoid a split brain.",
                     impact="Those data nodes are down. If no part won, the whole cluster is down"
                            " (NdbClusterUnreachable pages); if one won, it runs with fewer replicas.",
                     diagnosis="- The cluster log around it: which nodes missed heartbeats, which node"
                               " was arbitrator (`Started arbitrator node`, `Lost arbitrator node`).\n"
                               "- The network between the data nodes and to the arbitrator (the"
                               " management node or an SQL node with ArbitrationRank > 0).\n"
                               "- `SELECT * FROM ndbinfo.membership` on a surviving SQL node: the"
                               " president and the arbitrator now.",
                     mitigation="Restore the network, then start the stopped data nodes. Make sure an"
                                " arbitrator runs on a host apart from the data nodes, so one host's"
                                " loss cannot take both halves' chances away.",
                     first_steps=log_first_steps('ndb_mgmd', 'Arbitration check lost|Arbitration lost|Network partitioning - no arbitrator', NDB_FIRST_STEPS)))


def _galera_server_aborted(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="GaleraServerAborted",
                 expr=f'_time:{w} {{component="mariadb"}} ~{quote(ABORTING)}'
                      " | stats by (cluster, node) count() as lines",
                 severity="warning",
                 summary="The database server on {{ $labels.node }} aborted",
                 description="The error log of {{ $labels.node }} ({{ $labels.cluster }})"
                             f" ends a start or a run with `[ERROR] Aborting` {{{{ $value }}}} time(s) in the"
                             f" last {w}: the server exited on an error (the lines before it say which).",
                 dashboard="galera",
                 language="logsql",
                 runbook=Runbook(
                     meaning="A node's error log has `[ERROR] Aborting` (MySQL 8 / PXC: `[ERROR]"
                             " [MY-010119] [Server] Aborting`): the server gave up a start or a run on"
                             " an error; the lines just before it name the error.",
                     impact="The node is down: one member fewer in its Galera cluster. A supervisor that restarts it may loop into the same"
                            " failure, each time with a state transfer.",
                     diagnosis="- The error log's lines before `Aborting`: a failed SST, a wrong option"
                               " after an upgrade (`unknown variable`), a port in use, InnoDB refusing"
                               " to start, a full disk.\n- `systemctl status` / the container's restart"
                               " count: is it looping?",
                     mitigation="Fix the error the log names and start the node again; if it fails on"
                                " a state transfer, see GaleraSstFailed.",
                     first_steps=log_first_steps('mariadb', 'Aborting', GALERA_FIRST_STEPS)))


def _ndb_disk_full(c: dict) -> Alert:
    w = c["logs"]["event_window"]
    return Alert(name="NdbDiskFull",
                 expr=f'_time:{w} {{component=~"{_components(NDB_LOGS)}"}} ~{quote(NO_SPACE)}'
                      " | stats by (cluster, node, component) count() as lines",
                 severity="critical",
                 summary="An NDB node of {{ $labels.cluster }} ran out of disk space",
                 description="The {{ $labels.component }} log of node {{ $labels.node }} ({{ $labels.cluster }})"
                             f" reported \"No space left on device\" {{{{ $value }}}} time(s) in the last {w}:"
                             " a data node that cannot write its REDO log, checkpoints or backups shuts down.",
                 dashboard="ndb_overview",
                 per_node=False,
                 language="logsql",
                 runbook=Runbook(
                     meaning="An NDB node's log (the cluster log, a data node's out log or an SQL"
                             " node's error log) reported `No space left on device` (ENOSPC, errno 28):"
                             " a write of the REDO log, an LCP, a backup or the SQL node's files failed.",
                     impact="A data node that cannot write its file system shuts down (`The file system"
                            " is full`); LCPs and backups stop; an SQL node cannot write its binary log.",
                     diagnosis="- `df -h` of the data nodes' DataDir, FileSystemPath, BackupDataDir and"
                               " the SQL nodes' datadir; the line names the file.\n"
                               "- `SELECT * FROM ndbinfo.logspaces;` (REDO) and old backups under"
                               " BackupDataDir.",
                     mitigation="Free space (old backups, core and trace files) or grow the volume;"
                                " restart a data node that shut down (`ndbmtd`) and watch"
                                " NdbRestartStuck.",
                     first_steps=log_first_steps('ndb_mgmd', '(?i)no space left on device', NDB_FIRST_STEPS)))


def groups(c: dict) -> list[Group]:
    grp = Group("logs", "vlogs/logs.yml", type="vlogs")
    grp.alerts += [rule(c) for rule in (_ndb_gcp_stop, _galera_sst_failed, _galera_disk_full,
                                        _ndb_node_shutdown_forced, _ndb_arbitration_lost,
                                        _galera_server_aborted, _ndb_disk_full)]
    return [grp]
