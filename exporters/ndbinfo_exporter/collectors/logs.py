"""REDO and UNDO log space (`logspaces`) and log buffers (`logbuffers`), in bytes."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families, body

LABELS = ["node_id", "log_type", "log_id", "log_part"]


def _collect(view: str, what: str, ctx: Context, fam: Families) -> None:
    rows = ctx.query(f"SELECT node_id, log_type, log_id, log_part, used, total"
                     f" FROM ndbinfo.{view}")
    used = fam.gauge(f"ndb_log_{what}_used_bytes", f"Bytes of log {what} in use ({view}).",
                     LABELS)
    total = fam.gauge(f"ndb_log_{what}_total_bytes", f"Bytes of log {what} configured"
                      f" ({view}).", LABELS)
    for r in rows:
        lv = body(LABELS, r[:4])
        used.add_body(lv, r[4])
        total.add_body(lv, r[5])


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
