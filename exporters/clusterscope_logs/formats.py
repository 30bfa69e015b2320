"""The database log formats and label rules, as plain data.

The shipper's parsing (clusterscope_logs.collector: OpenTelemetry Collector stanza
operators) is generated from this. Regexes use the syntax RE2 and Python share
(`(?P<name>...)`), so tests check them in Python as well as through the real collector.

Every stream carries `cluster`, `node` (where one node wrote it) and `component`; lines
that give a severity also get `level` (info|warning|error|critical|debug). Logs of the
lab's NDB simulator also carry `simulated="true"`.
"""

from __future__ import annotations

import re

# Components (the `component` field), one per kind of log the description names
# (clusterscope_inventory.description.LOG_COMPONENTS uses the same words) -----------------
MARIADB = "mariadb"      # a Galera node's error log (MariaDB 10.x, PXC 5.7/8.0)
NDB_MGMD = "ndb_mgmd"    # the NDB cluster log written in ndb_mgmd's format
MYSQLD = "mysqld"        # an NDB SQL node's error log (MySQL 8.x)
NDBMTD = "ndbmtd"        # an NDB data node's out log
GARBD = "garbd"          # the Galera arbitrator's log

# Severity words of each format -> the `level` field.
LEVELS: dict[str, str] = {
    "note": "info", "system": "info", "info": "info", "information": "info",
    "warning": "warning", "warn": "warning",
    "error": "error", "err": "error",
    "critical": "critical", "alert": "critical", "fatal": "critical",
    "debug": "debug",
}

# Line formats: `regex` names its fields and also selects the lines the format applies to.
# `time` says where the entry's time comes from:
#   ordered_second: `date` + `time` in the source's time zone, whole seconds (see below);
#   iso: `ts_iso`, an RFC 3339 time with its own offset (`layout`, Go syntax);
#   sst: `sst_date` + `sst_time` in the source's time zone (`layout`), when present;
#   None: the time the shipper read the line.
FORMATS: dict[str, dict] = {
    # MariaDB 10.x: `2026-11-22  3:59:35 0 [Note] WSREP: ...` (hour padded with a space,
    # local time)
    "mariadb": {
        "regex": r"^(?P<date>\d{4}-\d{2}-\d{2})\s+(?P<time>\d{1,2}:\d{2}:\d{2})\s+"
                 r"(?P<thread>\d+)\s+\[(?P<severity>[A-Za-z]+)\]\s+(?P<message>.*)",
        "time": "ordered_second",
    },
    # PXC 5.7 (`2019-05-15T10:31:20.123456Z 0 [Note] WSREP: ...`) and PXC/MySQL 8.x
    # (`2023-03-12T12:48:43.293802Z 0 [Note] [MY-000000] [Galera] ...`)
    "mysql-iso": {
        "regex": r"^(?P<ts_iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?"
                 r"(?:Z|[+-]\d{2}:\d{2}))\s+(?P<thread>\d+)\s+\[(?P<severity>[A-Za-z]+)\]"
                 r"(?:\s+\[(?P<code>MY-\d+)\]\s+\[(?P<subsystem>[^\]]+)\])?\s+(?P<message>.*)",
        "time": "iso",
        "layout": "2006-01-02T15:04:05.999999999Z07:00",
    },
    # The SST scripts: `WSREP_SST: [INFO] rsync SST started on joiner (20261122 03:59:37.889)`
    "wsrep-sst": {
        "regex": r"^WSREP_SST: \[(?P<severity>[A-Za-z]+)\]\s+(?P<message>.*?)"
                 r"(?:\s+\((?P<sst_date>\d{8}) (?P<sst_time>\d{2}:\d{2}:\d{2}\.\d{3})\))?\s*$",
        "time": "sst",
        "layout": "20060102 15:04:05.000",
    },
    # ndb_mgmd's cluster log: `2024-01-01 12:00:00 [MgmtSrvr] INFO     -- Node 2: Start
    # phase 1 completed`; the reporting node becomes the `node` field (its node id), only on
    # the lines that name one (`Alloc node id 100 succeeded` does not).
    "ndb-cluster-log": {
        "regex": r"^(?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{2}:\d{2}:\d{2}) "
                 r"\[(?P<source>[^\]]+)\] (?P<severity>[A-Z]+)\s+-- "
                 r"(?:Node (?P<ndb_node>\d+): )?(?P<message>.*)",
        "time": "ordered_second",
        "node_from": "ndb_node",
    },
    # The MySQL driver inside Go exporters (mysqld_exporter v0.19.0 uses go-sql-driver/mysql
    # v1.9.3): its logger writes only critical errors (errors.go: "Logger is used to log
    # critical error messages"), to stderr with the prefix "[mysql] " and log.Ldate|
    # log.Ltime, each message led by the file:line that logged it (connection.go mc.log):
    # `[mysql] 2026/11/26 11:34:41 packets.go:58 read tcp ...: connection reset by peer`,
    # as the lab's mysqld_exporter wrote it when a node was killed. No severity word, so the
    # format gives one (`severity`), to the lines that have its field `driver_time`.
    "go-mysql-driver": {
        "regex": r"^\[mysql\] (?P<driver_time>\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}) "
                 r"(?P<message>.*)",
        "time": None,
        "severity": "error",
        "severity_when": "driver_time",
    },
    # The exporters' and monitoring daemons' own logs: Python logging
    # (`2026-11-22 09:00:00,123 WARNING ndbinfo_exporter: ...`), go-kit/slog logfmt
    # (`level=warn`/`level=WARN`), klog-style; only the severity is taken, the time is
    # the time the shipper read the line.
    "daemon": {
        "regex": r"(?i)(?:level=|\s)(?P<severity>debug|info|warn|warning|error|fatal|critical)\b",
        "time": None,
    },
}

# Which formats each component's log may contain (tried in this order). A component not
# listed here is shipped with its labels only (no recorded sample of its format to test a
# parser on: garbd, the data nodes' out logs); `daemon` is for the lab's own services.
COMPONENT_FORMATS: dict[str, list[str]] = {
    MARIADB: ["mariadb", "mysql-iso", "wsrep-sst"],
    # MySQL 8.x writes the error-log format PXC 8.0 does (the mysql-iso samples)
    MYSQLD: ["mysql-iso"],
    NDB_MGMD: ["ndb-cluster-log"],
}
DAEMON_FORMATS = ["go-mysql-driver", "daemon"]
UNPARSED = (GARBD, NDBMTD)

# A mysqld entry may span lines (PXC's "State transfer required:" block, stack traces):
# a new entry starts with a timestamp or an SST script's prefix.
FIRSTLINE = r"^(?:\d{4}-\d{2}-\d{2}[ T]|WSREP_SST: )"
MULTILINE_FIRSTLINE: dict[str, str] = {MARIADB: FIRSTLINE, MYSQLD: FIRSTLINE}
MULTILINE_MAX_WAIT = "1s"

# Whole-second logs (MariaDB, ndb_mgmd) write several lines per second, and a log store
# does not keep the write order of entries with one timestamp (VictoriaLogs returns equal
# `_time` values in no particular order). So the entry's time is the line's second plus the
# time it was read after that second, capped below 1 s: non-decreasing in read order, so a
# tailed log keeps its order, and the second is always the line's.
ORDERED_SECOND_MAX_LAG_NS = 999_999_999


def formats_of(component: str, daemon: bool = False) -> list[str]:
    """The formats a component's log is parsed with (empty: shipped unparsed)."""
    if component in COMPONENT_FORMATS:
        return COMPONENT_FORMATS[component]
    if component in UNPARSED or not daemon:
        return []
    return DAEMON_FORMATS


def level_of(severity: str) -> str:
    return LEVELS.get(severity.lower(), severity.lower())


def parse_line(fmt: str, line: str) -> dict[str, str] | None:
    """The fields a format's regex extracts from one line (None: not this format).

    The same regex the shipper runs; used by tests and `clusterscope logs parse`.
    """
    m = re.search(FORMATS[fmt]["regex"], line)
    if not m:
        return None
    fields = {k: v for k, v in m.groupdict().items() if v is not None}
    if "severity" in FORMATS[fmt]:
        fields["severity"] = FORMATS[fmt]["severity"]
    if "severity" in fields:
        fields["level"] = level_of(fields["severity"])
    return fields
