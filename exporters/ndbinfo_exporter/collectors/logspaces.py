"""REDO and UNDO log space (`logspaces`) and log buffers (`logbuffers`), in bytes."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, body, fill, row_sql

LOG_LABELS = ("node_id", "log_type", "log_id", "log_part")

# (row expression, FROM) for Context.lines: one text line per log part, log_type last (text,
# it may hold a space); both views have the same columns
_LOG_ROW = row_sql([("node_id", "node_id")], ["log_id", "log_part", "used", "total", "log_type"])
SQL_LOGSPACES = (_LOG_ROW, "FROM ndbinfo.logspaces")
SQL_LOGBUFFERS = (_LOG_ROW, "FROM ndbinfo.logbuffers")

LOG_SPACE_USED = Desc("ndb_log_space_used_bytes", "Bytes of log space in use (logspaces).",
                      LOG_LABELS)
LOG_SPACE_TOTAL = Desc("ndb_log_space_total_bytes", "Bytes of log space configured"
                       " (logspaces).", LOG_LABELS)
LOG_BUFFER_USED = Desc("ndb_log_buffer_used_bytes", "Bytes of log buffer in use"
                       " (logbuffers).", LOG_LABELS)
LOG_BUFFER_TOTAL = Desc("ndb_log_buffer_total_bytes", "Bytes of log buffer configured"
                        " (logbuffers).", LOG_LABELS)


def _collect(sql: tuple[str, str], used_desc: Desc, total_desc: Desc, ctx: Context,
             fam: Families) -> None:
    lines = ctx.lines(*sql)
    used, total = used_desc.of(fam), total_desc.of(fam)
    rendered: dict[tuple[str, str, str], str] = {}
    rows = []
    for text in lines:
        node, log_id, log_part, u, t, log_type = text.split(" ", 5)  # the type last: text
        key = (log_type, log_id, log_part)
        rest = rendered.get(key)
        if rest is None:
            rest = rendered[key] = body(LOG_LABELS[1:], key)
        rows.append((f"{node},{rest}", u, t))
    fill([used, total], rows)


def collect_logspaces(ctx: Context, fam: Families) -> None:
    _collect(SQL_LOGSPACES, LOG_SPACE_USED, LOG_SPACE_TOTAL, ctx, fam)


def collect_logbuffers(ctx: Context, fam: Families) -> None:
    _collect(SQL_LOGBUFFERS, LOG_BUFFER_USED, LOG_BUFFER_TOTAL, ctx, fam)


COLLECTORS = [
    Collector("logspaces", "logspaces: REDO/DD-UNDO space used and total per log part",
              ("logspaces",), collect_logspaces),
    Collector("logbuffers", "logbuffers: log buffer used and total per log part",
              ("logbuffers",), collect_logbuffers),
]
