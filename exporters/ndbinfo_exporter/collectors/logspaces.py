"""REDO and UNDO log space (`logspaces`) and log buffers (`logbuffers`), in bytes."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families, body, fill, row_sql

LABELS = ["node_id", "log_type", "log_id", "log_part"]


def _collect(view: str, what: str, ctx: Context, fam: Families) -> None:
    lines = ctx.lines(row_sql([("node_id", "node_id")], ["log_id", "log_part", "used", "total",
                                                         "log_type"]), f"FROM ndbinfo.{view}")
    used = fam.gauge(f"ndb_log_{what}_used_bytes", f"Bytes of log {what} in use ({view}).",
                     LABELS)
    total = fam.gauge(f"ndb_log_{what}_total_bytes", f"Bytes of log {what} configured"
                      f" ({view}).", LABELS)
    rendered: dict[tuple[str, str, str], str] = {}
    rows = []
    for text in lines:
        node, log_id, log_part, u, t, log_type = text.split(" ", 5)  # the type last: text
        key = (log_type, log_id, log_part)
        rest = rendered.get(key)
        if rest is None:
            rest = rendered[key] = body(LABELS[1:], key)
        rows.append((f"{node},{rest}", u, t))
    fill([used, total], rows)


def collect_logspaces(ctx: Context, fam: Families) -> None:
    _collect("logspaces", "space", ctx, fam)


def collect_logbuffers(ctx: Context, fam: Families) -> None:
    _collect("logbuffers", "buffer", ctx, fam)


COLLECTORS = [
    Collector("logspaces", "logspaces: REDO/DD-UNDO space used and total per log part",
              ("logspaces",), collect_logspaces),
    Collector("logbuffers", "logbuffers: log buffer used and total per log part",
              ("logbuffers",), collect_logbuffers),
]
