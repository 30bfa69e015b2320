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
from clusterscope.rules.model import Alert, Group

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


def groups(c: dict) -> list[Group]:
    w = c["logs"]["event_window"]
    grp = Group("logs", "vlogs/logs.yml", type="vlogs")
    grp.alerts += [
        Alert("NdbGcpStop",
              f'_time:{w} {{component="ndb_mgmd"}} ~{quote(GCP_STOP)}'
              " | stats by (cluster, node) count() as lines",
              "critical", "A global checkpoint of NDB cluster {{ $labels.cluster }} is stuck",
              "The NDB cluster log of {{ $labels.cluster }} reported a lagging global"
              f" checkpoint (GCP Monitor, node {{{{ $labels.node }}}}) {{{{ $value }}}} time(s) in the last {w}:"
              " commits are not being made durable, and the data nodes holding it back are"
              " killed once the GCP timeout is exceeded.",
              "logs", per_node=False, language="logsql"),
        Alert("GaleraSstFailed",
              f'_time:{w} {{component="mariadb"}} ~{quote(SST_FAILED)}'
              " | stats by (cluster, node) count() as lines",
              "warning", "A state transfer failed or was aborted on {{ $labels.node }}",
              "The error log of {{ $labels.node }} ({{ $labels.cluster }}) has {{ $value }}"
              f" line(s) of a failed or aborted state transfer (SST/IST) in the last {w}: the"
              " joiner did not join and will retry or stay down.",
              "galera", language="logsql"),
        Alert("GaleraDiskFull",
              f'_time:{w} {{component=~"{_components(GALERA_LOGS)}"}} ~{quote(NO_SPACE)}'
              " | stats by (cluster, node, component) count() as lines",
              "critical", "{{ $labels.node }} ran out of disk space",
              "The {{ $labels.component }} log of {{ $labels.node }} ({{ $labels.cluster }})"
              f" reported \"No space left on device\" {{{{ $value }}}} time(s) in the last {w}:"
              " writes on that node fail.",
              "galera", language="logsql"),
        Alert("NdbNodeShutdownForced",
              f'_time:{w} {{component=~"ndb_mgmd|ndbmtd"}} ~{quote(FORCED_SHUTDOWN)}'
              " | stats by (cluster, node) count() as lines",
              "warning", "NDB data node {{ $labels.node }} of {{ $labels.cluster }} was"
              " shut down by an error",
              "The NDB cluster log of {{ $labels.cluster }} reported a forced shutdown of node"
              f" {{{{ $labels.node }}}} {{{{ $value }}}} time(s) in the last {w}: the node stopped on an"
              " error or a signal, not on request (its error code is in the line).",
              "ndb_overview", per_node=False, language="logsql"),
        Alert("NdbArbitrationLost",
              f'_time:{w} {{component=~"ndb_mgmd|ndbmtd"}} ~{quote(ARBITRATION_LOST)}'
              " | stats by (cluster, node) count() as lines",
              "warning", "NDB cluster {{ $labels.cluster }}: data nodes lost arbitration",
              "The NDB cluster log of {{ $labels.cluster }} reported {{ $value }} lost"
              f" arbitration(s) in the last {w} (node {{{{ $labels.node }}}}): after a network"
              " partition or node failures these data nodes could not prove they were the"
              " surviving half and shut down.",
              "ndb_overview", per_node=False, language="logsql"),
        Alert("GaleraServerAborted",
              f'_time:{w} {{component="mariadb"}} ~{quote(ABORTING)}'
              " | stats by (cluster, node) count() as lines",
              "warning", "The database server on {{ $labels.node }} aborted",
              "The error log of {{ $labels.node }} ({{ $labels.cluster }})"
              f" ends a start or a run with `[ERROR] Aborting` {{{{ $value }}}} time(s) in the"
              f" last {w}: the server exited on an error (the lines before it say which).",
              "galera", language="logsql"),
        Alert("NdbDiskFull",
              f'_time:{w} {{component=~"{_components(NDB_LOGS)}"}} ~{quote(NO_SPACE)}'
              " | stats by (cluster, node, component) count() as lines",
              "critical", "An NDB node of {{ $labels.cluster }} ran out of disk space",
              "The {{ $labels.component }} log of node {{ $labels.node }} ({{ $labels.cluster }})"
              f" reported \"No space left on device\" {{{{ $value }}}} time(s) in the last {w}:"
              " a data node that cannot write its REDO log, checkpoints or backups shuts down.",
              "ndb_overview", per_node=False, language="logsql"),
    ]
    return [grp]
