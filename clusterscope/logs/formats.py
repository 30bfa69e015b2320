"""The lab's log formats and label rules, as plain data.

Shippers are generated from this: the lab's promtail (clusterscope/lab/logs.py) and the
Compose deployment's Grafana Alloy, which runs the same Promtail-format pipeline
(compose/config/logs.yml, `alloy run --config.format=promtail`). Regexes use the syntax RE2
and Python share (`(?P<name>...)`), so tests check them in Python as well as through promtail.

Every stream carries `cluster`, `node` (where one node wrote it) and `component`; lines
that give a severity also get `level` (info|warning|error|critical|debug). Logs that come
from the NDB simulator also carry `simulated="true"`.
"""

from __future__ import annotations

import re

# Components (the `component` label) -------------------------------------------------------
MARIADB = "mariadb"      # a Galera node's mariadbd error log (MariaDB 10.x, PXC 5.7/8.0)
NDB_MGMD = "ndb_mgmd"    # the NDB cluster log written in ndb_mgmd's format
CLUSTERS = {"galera": "lab-galera", "ndb": "lab-ndb"}  # lab part -> `cluster` label
DEFAULT_CLUSTER = "lab"   # services that belong to no cluster (monitoring, Loki itself)


def component_of(service_name: str) -> str:
    """`mysqld-exporter-node2` -> `mysqld-exporter`; `galera-node1` -> `mariadb`."""
    if re.fullmatch(r"galera-node\d+", service_name):
        return MARIADB
    return re.sub(r"-node\d+$", "", service_name)


# Severity words of each format -> the `level` label.
LEVELS: dict[str, str] = {
    "note": "info", "system": "info", "info": "info", "information": "info",
    "warning": "warning", "warn": "warning",
    "error": "error", "err": "error",
    "critical": "critical", "alert": "critical", "fatal": "critical",
    "debug": "debug",
}

# Line formats: `regex` names its fields and also selects the lines the format applies to
# (so every stage after it finds its fields); the timestamp is `timestamp_source` (built by
# `timestamp_template` from the regex fields when set) parsed with the Go `layout`.
FORMATS: dict[str, dict] = {
    # MariaDB 10.x: `2026-11-22  3:59:35 0 [Note] WSREP: ...` (hour padded with a space,
    # local time)
    "mariadb": {
        "regex": r"^(?P<date>\d{4}-\d{2}-\d{2})\s+(?P<time>\d{1,2}:\d{2}:\d{2})\s+"
                 r"(?P<thread>\d+)\s+\[(?P<severity>[A-Za-z]+)\]\s+(?P<message>.*)",
        "timestamp_template": "ORDERED_SECOND",
        "timestamp_source": "ts_local",
        "layout": "2006-01-02 15:04:05.000000000",
        "local_time": True,
    },
    # PXC 5.7 (`2019-05-15T10:31:20.123456Z 0 [Note] WSREP: ...`) and PXC/MySQL 8.0
    # (`2023-03-12T12:48:43.293802Z 0 [Note] [MY-000000] [Galera] ...`)
    "mysql-iso": {
        "regex": r"^(?P<ts_iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?"
                 r"(?:Z|[+-]\d{2}:\d{2}))\s+(?P<thread>\d+)\s+\[(?P<severity>[A-Za-z]+)\]"
                 r"(?:\s+\[(?P<code>MY-\d+)\]\s+\[(?P<subsystem>[^\]]+)\])?\s+(?P<message>.*)",
        "timestamp_source": "ts_iso",
        "layout": "RFC3339Nano",
    },
    # The SST scripts: `WSREP_SST: [INFO] rsync SST started on joiner (20261122 03:59:37.889)`
    "wsrep-sst": {
        "regex": r"^WSREP_SST: \[(?P<severity>[A-Za-z]+)\]\s+(?P<message>.*?)"
                 r"(?:\s+\((?P<sst_date>\d{8}) (?P<sst_time>\d{2}:\d{2}:\d{2}\.\d{3})\))?\s*$",
        "timestamp_template": "{{ .sst_date }} {{ .sst_time }}",
        "timestamp_source": "ts_sst",
        "layout": "20060102 15:04:05.000",
        "local_time": True,
    },
    # ndb_mgmd's cluster log: `2024-01-01 12:00:00 [MgmtSrvr] INFO     -- Node 2: Start
    # phase 1 completed`; the reporting node becomes the `node` label (its node id).
    "ndb-cluster-log": {
        "regex": r"^(?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{2}:\d{2}:\d{2}) "
                 r"\[(?P<source>[^\]]+)\] (?P<severity>[A-Z]+)\s+-- "
                 r"(?:Node (?P<ndb_node>\d+): )?(?P<message>.*)",
        "timestamp_template": "ORDERED_SECOND",
        "timestamp_source": "ts_local",
        "layout": "2006-01-02 15:04:05.000000000",
        "local_time": True,
        # `Alloc node id 100 succeeded` names no node: label only the lines that do
        "labels": {"node": "ndb_node"},
        "labels_select": r" -- Node \d+: ",
    },
    # The exporters' and monitoring daemons' own logs: Python logging
    # (`2026-11-22 09:00:00,123 WARNING ndbinfo_exporter: ...`), go-kit/slog logfmt
    # (`level=warn`/`level=WARN`), klog-style; only the severity is taken, the time is
    # the time promtail read the line.
    "daemon": {
        "regex": r"(?i)(?:level=|\s)(?P<severity>debug|info|warn|warning|error|fatal|critical)\b",
    },
}

# Which formats each component's log may contain (tried in this order).
COMPONENT_FORMATS: dict[str, list[str]] = {
    MARIADB: ["mariadb", "mysql-iso", "wsrep-sst"],
    NDB_MGMD: ["ndb-cluster-log"],
}
DEFAULT_FORMATS = ["daemon"]

# A mariadbd entry may span lines (PXC's "State transfer required:" block, stack traces):
# a new entry starts with a timestamp or an SST script's prefix.
MULTILINE_FIRSTLINE: dict[str, str] = {
    MARIADB: r"^(?:\d{4}-\d{2}-\d{2}[ T]|WSREP_SST: )",
}
MULTILINE_MAX_WAIT = "1s"


# Whole-second logs (MariaDB, ndb_mgmd) write several lines per second, and Loki does not
# keep the write order of entries with one timestamp. So the entry's time is the line's
# second plus the time it was read after that second (capped below 1 s): non-decreasing
# in read order, so a tailed log keeps its order, and the second is always the line's.
ORDERED_SECOND = (
    '{{ $s := toDate "2006-01-02 15:04:05" (printf "%s %s" .date .time) }}'
    "{{ $lag := ((now).Sub $s).Nanoseconds }}"
    "{{ if lt $lag 0 }}{{ $lag = 0 }}{{ end }}"
    "{{ if gt $lag 999999999 }}{{ $lag = 999999999 }}{{ end }}"
    '{{ .date }} {{ .time }}.{{ printf "%09d" $lag }}')


def timestamp_template(fmt: str) -> str | None:
    t = FORMATS[fmt].get("timestamp_template")
    return ORDERED_SECOND if t == "ORDERED_SECOND" else t


def level_template(field: str = "severity") -> str:
    """A Go template (promtail/Alloy `template` stage) mapping the severity to `level`."""
    branches = []
    for level in dict.fromkeys(LEVELS.values()):
        words = [w for w, lv in LEVELS.items() if lv == level]
        cond = " ".join(f'(eq $s "{w}")' for w in words)
        branches.append((f"or {cond}" if len(words) > 1 else cond.strip("()"), level))
    body = "".join(f"{'{{ if ' if i == 0 else '{{ else if '}{c} }}}}{lv}"
                   for i, (c, lv) in enumerate(branches)) + "{{ else }}{{ $s }}"
    return f"{{{{ with .{field} }}}}{{{{ $s := ToLower . }}}}{body}{{{{ end }}}}{{{{ end }}}}"


def parse_line(fmt: str, line: str) -> dict[str, str] | None:
    """The fields a format's regex extracts from one line (None: not this format).

    The same regex the shipper runs; used by tests and `clusterscope logs parse`.
    """
    m = re.search(FORMATS[fmt]["regex"], line)
    if not m:
        return None
    fields = {k: v for k, v in m.groupdict().items() if v is not None}
    if "severity" in fields:
        fields["level"] = LEVELS.get(fields["severity"].lower(), fields["severity"].lower())
    return fields
