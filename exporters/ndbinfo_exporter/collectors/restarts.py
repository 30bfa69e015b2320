"""Node restarts (`restart_info`): status, every phase's seconds, and completed restarts."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, num
from ndbinfo_exporter.state import ExporterState

# {columns}: every secs_* column this version's view has, in its order, then
# total_restart_secs (or NULL where the view lacks it)
SQL_RESTART_INFO = ("SELECT node_id, node_restart_status_int, {columns}"
                    " FROM ndbinfo.restart_info")

RESTART_STATUS = Desc("ndb_restart_status", "restart_info.node_restart_status_int: the data"
                      " node kernel's restart state (2-3 failure handling, 4-18 and 20-23"
                      " under way, 19 and 24 completed).", ("node_id",))
RESTART_PHASE = Desc("ndb_restart_phase_seconds", "Seconds the node's last (or current)"
                     " restart spent in each phase (restart_info secs_* columns).",
                     ("node_id", "phase"))
RESTART_TOTAL = Desc("ndb_restart_total_seconds", "restart_info.total_restart_secs: node"
                     " failure to node started.", ("node_id",))
# from the exporter's restart ledger, no SQL
RESTARTS_COMPLETED = Desc("ndb_restarts_completed_total", "Completed node restarts, each"
                          " counted once (persisted across exporter restarts).", ("node_id",),
                          counter=True)
RESTART_LAST_COMPLETED = Desc("ndb_restart_last_completed_timestamp_seconds", "When the"
                              " exporter saw the node's latest restart complete (absent for"
                              " one that had completed before the exporter first looked).",
                              ("node_id",))


def collect_restart_info(ctx: Context, fam: Families) -> None:
    # every secs_* column this version has, in the view's order (never a fixed list, so a
    # version with more or fewer phases is exported as it is)
    phases = [c for c in ctx.columns("restart_info") if c.startswith("secs_")]
    total = ctx.col("restart_info", "total_restart_secs")
    rows = ctx.query(SQL_RESTART_INFO.format(columns=", ".join([*phases, total])))
    status, phase, total_f = RESTART_STATUS.of(fam), RESTART_PHASE.of(fam), RESTART_TOTAL.of(fam)
    for row in rows:
        node_id, status_int, values = str(row[0]), row[1], row[2:]
        status.add((node_id,), status_int)
        for name, value in zip(phases, values, strict=False):
            phase.add((node_id, name[len("secs_"):]), value)
        total_f.add((node_id,), values[-1])
        st = num(status_int)
        ctx.state.ledger.observe(node_id, None if st is None else int(st),
                                 [None if v is None else int(v) for v in values], ctx.now)
    ledger_families(ctx.state, fam)


def ledger_families(state: ExporterState, fam: Families) -> None:
    """The persisted restart counts and completion times: they need no SQL, so the scrape
    serves them also when the SQL node is down (a counter that vanished and came back
    would look like a reset, and its timestamp would leave the rules' event window)."""
    done = RESTARTS_COMPLETED.of(fam)
    for node_id, count in state.ledger.counts().items():
        done.add((node_id,), count)
    when = RESTART_LAST_COMPLETED.of(fam)
    for node_id, ts in state.ledger.completed_at().items():
        when.add((node_id,), ts)


COLLECTORS = [
    Collector("restart_info", "ndbinfo.restart_info: restart status, phase durations,"
              " completed restarts", ("restart_info",), collect_restart_info),
]
