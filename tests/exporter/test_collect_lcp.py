"""Local checkpoints: progress from table_fragments, states, write speeds."""

from __future__ import annotations

from fake_context import collect, fake_context, run
from helpers import series, val
from ndbinfo_exporter.collectors.lcp import LCP_TABLE_STATUSES
from ndbinfo_exporter.state import ExporterState, RestartLedger


def _frags(remaining: int, replicas: int = 2, n: int = 4, alive: int = 2) -> list[dict]:
    # `remaining` replicas still to checkpoint, spread over the first fragments
    return [{"node_id": 1, "table_id": 10, "fragment_id": i, "no_of_replicas": replicas,
             "num_alive_replicas": alive, "num_lcp_replicas": min(replicas,
                                                                  max(0, remaining - 2 * i))}
            for i in range(n)]


def _lcp(remaining: int, ongoing: int, lcp_id: int = 7) -> dict[str, list[dict]]:
    return {"table_fragments": _frags(remaining),
            "table_replicas": [{"node_id": 1, "table_id": 10, "fragment_id": 0,
                                "is_lcp_ongoing": ongoing, "last_lcp_id": lcp_id}]}


def test_no_fragment_rows_is_unknown_not_an_idle_checkpoint() -> None:
    ss = collect("lcp", {"table_replicas": [{"node_id": 1, "last_lcp_id": 7}]})
    assert val(ss, "ndb_lcp_id") == 7
    assert val(ss, "ndb_lcp_running") is None and val(ss, "ndb_lcp_progress_ratio") is None


def test_progress_moves_forward_and_a_finished_lcp_has_a_duration() -> None:
    state = ExporterState(ledger=RestartLedger(None))
    scrape = lambda rows, now: run("lcp", fake_context(rows, state=state, now=now))  # noqa: E731
    assert val(scrape(_lcp(0, 0), 0), "ndb_lcp_running") == 0  # idle when first seen
    ss = scrape(_lcp(8, 1), 10)  # starts: 8 replicas to checkpoint
    assert val(ss, "ndb_lcp_running") == 1 and val(ss, "ndb_lcp_progress_ratio") == 0
    assert val(ss, "ndb_lcp_fragment_replicas_remaining") == 8
    assert val(ss, "ndb_lcp_fragment_replicas") == 8
    assert val(scrape(_lcp(2, 1), 20), "ndb_lcp_progress_ratio") == 0.75
    ss = scrape(_lcp(0, 0, lcp_id=8), 40)
    assert val(ss, "ndb_lcp_running") == 0 and val(ss, "ndb_lcp_progress_ratio") == 1
    assert val(ss, "ndb_lcp_last_duration_seconds") == 30
    assert val(ss, "ndb_lcp_id") == 8


def test_both_signals_null_is_no_guess() -> None:
    rows = {"table_fragments": [{"node_id": 1, "no_of_replicas": 2}],
            "table_replicas": [{"node_id": 1, "last_lcp_id": 3}]}
    ss = collect("lcp", rows)
    assert val(ss, "ndb_lcp_fragment_replicas") == 2
    assert val(ss, "ndb_lcp_running") is None


def test_table_states_are_zero_filled_and_compared_upper_case() -> None:
    rows = [{"node_id": 1, "table_id": t, "tab_lcp_status": s}
            for t, s in ((1, "ACTIVE"), (2, "wRITING_TO_FILE"), (3, "WRITING_TO_FILE"))]
    ss = collect("lcp_tables", {"table_distribution_status": rows})
    got = {lbl["status"]: v for lbl, v in series(ss, "ndb_lcp_tables")}
    assert set(got) == set(LCP_TABLE_STATUSES)
    assert got == {"ACTIVE": 1, "WRITING_TO_FILE": 2, "COMPLETED": 0}


def test_write_speeds_per_kind_and_window_and_slowdowns_per_reason() -> None:
    row = {"node_id": 1, "thr_no": 3, "backup_lcp_speed_last_sec": 100,
           "backup_lcp_speed_last_10sec": 110, "backup_lcp_speed_last_60sec": 120,
           "redo_speed_last_sec": 200, "redo_speed_last_10sec": 210,
           "redo_speed_last_60sec": 220, "current_target_disk_write_speed": 5000,
           "slowdowns_due_to_io_lag": 4, "slowdowns_due_to_high_cpu": 0,
           "disk_write_speed_set_to_min": None}
    ss = collect("disk_write_speed", {"disk_write_speed_aggregate": [row]})
    at = {"node_id": 1, "ldm_instance": 3}
    assert val(ss, "ndb_disk_write_speed_bytes_per_second", kind="redo", window="10s",
               **at) == 210
    assert val(ss, "ndb_disk_write_speed_bytes_per_second", kind="backup_lcp", window="60s",
               **at) == 120
    assert val(ss, "ndb_disk_write_speed_target_bytes_per_second", **at) == 5000
    assert val(ss, "ndb_disk_write_slowdown_seconds_total", reason="io_lag", **at) == 4
    assert val(ss, "ndb_disk_write_slowdown_seconds_total", reason="high_cpu", **at) == 0
    assert val(ss, "ndb_disk_write_slowdown_seconds_total", reason="set_to_min", **at) is None
