"""What a Galera error-log line holds: its time, and the patterns of the lines a recovery
is told by. Pure functions and patterns; the state machine is in parser.py.

Reads the error-log formats of MariaDB 10.x (`2026-11-22  3:59:35 0 [Note] WSREP: ...`,
older `190115 11:20:14 [Note] WSREP: ...`), Percona XtraDB Cluster 5.7
(`2019-01-15T11:20:14.575046Z 0 [Note] WSREP: ...`) and PXC / MySQL 8.0 wsrep
(`2023-03-12T12:48:43.82Z 0 [Note] [MY-000000] [Galera] ...`), plus the SST scripts'
`WSREP_SST: [INFO] ... (20261122 03:59:37.889)` lines.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

ZERO_UUID = "00000000-0000-0000-0000-000000000000"

_TS_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:?\d{2})?\s")
_TS_MARIA = re.compile(r"^(\d{4}-\d{2}-\d{2})\s+(\d{1,2}:\d{2}:\d{2})\s")
_TS_OLD = re.compile(r"^(\d{6})\s+(\d{1,2}:\d{2}:\d{2})\s")
_TS_SST = re.compile(r"\((\d{8}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)\)\s*$")

# The states gcs shifts between (codership/galera gcs/src/gcs.cpp, gcs_conn_state_str). Only
# these: a line naming any other is not Galera's, and would make a new label value.
GCS_STATES = ("SYNCED", "JOINED", "DONOR/DESYNCED", "JOINER", "PRIMARY", "OPEN", "CLOSED",
              "DESTROYED", "ERROR")
_STATE = "|".join(re.escape(s) for s in GCS_STATES)
# Hostile lines: every pattern below runs in time linear in the line. A leading `\d+` or
# `\w+` starts only where a run starts ((?<!...)), and a bracketed name is at most NAME
# characters, so a line of digits, of one long word or of "1.1 (" repeated cannot make the
# search quadratic (a 400 KB line took minutes).
NAME = 255
METHOD = 64
_NAME = rf"[^)]{{0,{NAME}}}"
_METHOD = rf"(?<![\w-])(\w[\w-]{{0,{METHOD - 1}}})"
SHIFT = re.compile(rf"Shifting ({_STATE}) -> ({_STATE}) \(TO: -?\d+\)")
SELECTED = re.compile(rf"Member (\d+)\.\d+ \(({_NAME})\) requested state transfer from"
                       rf" '[^']{{0,{NAME}}}'\. Selected (\d+)\.\d+ \(({_NAME})\)")
REQUESTING = re.compile(r"Requesting state transfer: success, donor: (\d+)")
TRANSFER_FROM = re.compile(rf"(?<![\d.])\d+\.\d+ \(({_NAME})\): State transfer from \d+\.\d+"
                            rf" \(({_NAME})\) complete")
IST_UUID = re.compile(r"####### IST uuid:?\s*([0-9a-f-]{36}) f: (-?\d+)")
IST_PREPARED = re.compile(r"Prepared IST receiver for (-?\d+)-(-?\d+)")
SCRIPT_DONE = re.compile(rf"{_METHOD} (SST|IST) completed on joiner")
SCRIPT_STARTED = re.compile(rf"{_METHOD} SST started on joiner")
SST_REQUEST = re.compile(rf"Prepared SST request: (\w[\w-]{{0,{METHOD - 1}}})\|")
RUNNING_JOINER = re.compile(rf"wsrep_sst_(\w[\w-]{{0,{METHOD - 1}}})\s+--role\s+'?joiner")
SST_TO_SST = re.compile(r"(?:Switching to SST|can't be serviced using IST|"
                         r"Failed to prepare for incremental state transfer)")
IST_EVIDENCE = re.compile(r"(?:Running IST|Skipping mysql_upgrade \(ist\)|"
                           r"State gap can be serviced using IST|IST received:)")
OWN_NAME = re.compile(rf"\bServer (\S{{1,{NAME}}}) (?:connected to cluster at position|synced"
                       r" with group)")
# A server starts or stops. The MySQL/PXC/MariaDB server's own lines, not InnoDB's
# "Shutdown completed; log sequence number" (xtrabackup's prepare step logs that one
# inside the joiner's window, the server logs it before its own "Shutdown complete").
SERVER_START = re.compile(r"(?:\] Starting MariaDB |\bstarting as process \d)")
SERVER_STOP = re.compile(r": Shutdown complete\b")
# PXC 8.0's xtrabackup SST, joiner side, after the data arrived: the SST script runs a
# temporary mysqld (no wsrep provider, a socket under /tmp/upgrd.*, port 0) to upgrade the
# received data, then stops it, all inside the JOINER window. Real logs
# (percona/percona-toolkit src/go/pt-galera-log-explainer/tests/logs/operator_split/node2.log,
# PXC 8.0.32 under the Percona Operator), in this order:
#   [WSREP-SST] Running post-processing...........
#   [WSREP-SST] Waiting for server instance to start.....  This may take some time
#   ---- Starting the MySQL server used for post-processing ----
#   [Server] /usr/sbin/mysqld (mysqld 8.0.32-24.2) starting as process 1050
#   [Server] /usr/sbin/mysqld: ready for connections. ... socket: '/tmp/upgrd.RE5x/my.sock'
#   [Server] Received SHUTDOWN from user mysql.pxc.sst.user. Shutting down mysqld ...
#   [WSREP-SST] ...........post-processing done
#   [Server] /usr/sbin/mysqld: Shutdown complete (mysqld 8.0.32-24.2) ...
#   ---- Stopped the MySQL server used for post-processing ----
#   [Server] /usr/sbin/mysqld: ready for connections. ... socket: '/tmp/mysql.sock' port: 3306
#   [WSREP] SST completed ... Shifting JOINER -> JOINED ... Shifting JOINED -> SYNCED
# The temporary server writes to its own file (the collector's JSON names it
# /var/lib/mysql/mysqld.post.processing.log), which is why its lines reach a merged stream
# late and out of order: after "post-processing done", after SYNCED, or minutes later.
# A real restart of the joiner has no announcement: after a crash the next lines are the
# new server's "starting as process" and its "Shifting CLOSED -> OPEN (TO: 0)"; after a
# clean stop, "Shifting ... -> OPEN", "-> CLOSED" and "Shutdown complete" come first
# (operator_concurrent_ssts/node3.log of the same repository: 2023-05-25T04:34:30 to
# 04:35:02, the node stopped by the operator and started again as process 1).
SST_SERVER_ANNOUNCED = re.compile(r"(?:Waiting for server instance to start|"
                                   r"---- Starting the MySQL server used for post-processing)")
SST_SERVER_STOPPED = re.compile(r"---- Stopped the MySQL server used for post-processing")
# Lines worth a regex at all; everything else (most of a busy log) is skipped cheaply.
KEYWORDS = ("WSREP", "Galera", "starting as process", "Starting MariaDB", "Shutdown complete",
             "used for post-processing")
# Past this, a line is matched on its first MAX_LINE characters only: a backstop for the
# patterns above. The longest line in the recorded logs is 8,165 characters (a PXC 8.0
# view under the Percona Operator, ../shared/fixtures/pxc-logs).
MAX_LINE = 1 << 16


def parse_timestamp(line: str) -> float | None:
    """Epoch seconds of a log line, or None for a line without its own (valid) time."""
    try:
        return _timestamp(line)
    except (ValueError, OverflowError):
        return None  # shaped like a time, but not one (month 13, an offset of 99 hours)


def _timestamp(line: str) -> float | None:
    m = _TS_ISO.match(line)
    if m:
        tz = m.group(3)
        stamp = f"{m.group(1)}T{m.group(2)}"
        if tz == "Z":
            return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()
        if tz:
            return datetime.fromisoformat(stamp + tz).timestamp()
        return datetime.fromisoformat(stamp).timestamp()  # local time
    m = _TS_MARIA.match(line)
    if m:
        return _local(f"{m.group(1)} {m.group(2)}", "%Y-%m-%d %H:%M:%S")
    m = _TS_OLD.match(line)
    if m:
        return _local(f"{m.group(1)} {m.group(2)}", "%y%m%d %H:%M:%S")
    m = _TS_SST.search(line)
    if m and "WSREP_SST" in line:
        return _local(f"{m.group(1)} {m.group(2)}", "%Y%m%d %H:%M:%S.%f"
                      if "." in m.group(2) else "%Y%m%d %H:%M:%S")
    return None


def _local(text: str, fmt: str) -> float | None:
    # MariaDB logs local time without a zone; the tracker runs on the node's host.
    try:
        return time.mktime(time.strptime(text.split(".")[0], fmt.split(".")[0])) + (
            float("0." + text.split(".")[1]) if "." in text else 0.0)
    except (ValueError, OverflowError):
        return None
