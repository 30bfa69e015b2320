"""`restart_info`: phases per version, the total, and each completed restart counted once."""

from __future__ import annotations

from fake_context import fake_context, run
from helpers import series, val
from ndbinfo_exporter.state import ExporterState, RestartLedger


def _row(status: int, total: int, **phases: int) -> dict[str, object]:
    return {"node_id": 2, "node_restart_status": "x", "node_restart_status_int": status,
            "total_restart_secs": total, **{f"secs_{k}": v for k, v in phases.items()}}


def test_every_phase_column_of_the_version_is_a_phase_series() -> None:
    ctx = fake_context({"restart_info": [_row(12, 40, for_local_recovery=30,
                                               exec_redo_log=7)]}, version="7.6")
    ss = run("restart_info", ctx)
    phases = {lbl["phase"] for lbl, _ in series(ss, "ndb_restart_phase_seconds")}
    want = {c.removeprefix("secs_") for c in ctx.db.views["restart_info"]
            if c.startswith("secs_")}
    assert phases <= want and {"for_local_recovery", "exec_redo_log"} <= phases
    assert val(ss, "ndb_restart_phase_seconds", node_id=2, phase="exec_redo_log") == 7
    assert val(ss, "ndb_restart_total_seconds", node_id=2) == 40
    assert val(ss, "ndb_restart_status", node_id=2) == 12


def test_a_restart_seen_under_way_is_counted_once_when_it_completes() -> None:
    state = ExporterState(ledger=RestartLedger(None))
    under_way = {"restart_info": [_row(12, 10, for_local_recovery=5)]}
    done = {"restart_info": [_row(19, 60, for_local_recovery=50)]}
    assert val(run("restart_info", fake_context(under_way, state=state, now=100)),
               "ndb_restarts_completed_total", node_id=2) == 0
    ss = run("restart_info", fake_context(done, state=state, now=160))
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) == 160
    # the same completed row scraped again is the same restart
    ss = run("restart_info", fake_context(done, state=state, now=220))
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) == 160


def test_a_restart_completed_before_the_exporter_looked_is_counted_not_timed() -> None:
    ss = run("restart_info", fake_context({"restart_info": [_row(19, 60)]}, now=100))
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
    assert val(ss, "ndb_restart_last_completed_timestamp_seconds", node_id=2) is None


def test_a_master_takeover_rewriting_the_row_is_not_a_new_restart() -> None:
    state = ExporterState(ledger=RestartLedger(None))
    run("restart_info", fake_context({"restart_info": [_row(12, 10)]}, state=state, now=1))
    run("restart_info", fake_context({"restart_info": [_row(19, 60, for_local_recovery=50)]},
                                     state=state, now=2))
    # the new master reports the same restart as NODE_ACTIVE (24) with fewer phases
    ss = run("restart_info", fake_context({"restart_info": [_row(24, 60)]}, state=state,
                                          now=3))
    assert val(ss, "ndb_restarts_completed_total", node_id=2) == 1
