"""CPU per block thread: cpustat joined to threads by name; threadstat in seconds."""

from __future__ import annotations

import pytest
from fake_context import collect
from helpers import series, val


def test_cpu_percent_per_mode_labelled_by_thread_name() -> None:
    rows = {"threads": [{"node_id": 1, "thr_no": 0, "thread_name": "main"},
                        {"node_id": 1, "thr_no": 2, "thread_name": "ldm"}],
            "cpustat": [{"node_id": 1, "thr_no": 2, "OS_user": 40, "OS_system": 5,
                         "OS_idle": 55, "thread_exec": 30, "thread_sleeping": 60,
                         "thread_spinning": 1, "thread_send": 2, "thread_buffer_full": 0},
                        # a thread `threads` does not list (yet) is dropped, as a join would
                        {"node_id": 1, "thr_no": 9, "OS_user": 1}]}
    ss = collect("cpustat", rows)
    ldm = {"node_id": 1, "thr_no": 2, "thread_name": "ldm"}
    assert val(ss, "ndb_thread_cpu_percent", mode="os_user", **ldm) == 40
    assert val(ss, "ndb_thread_cpu_percent", mode="exec", **ldm) == 30
    assert val(ss, "ndb_thread_cpu_percent", mode="buffer_full", **ldm) == 0
    assert {lbl["thr_no"] for lbl, _ in series(ss, "ndb_thread_cpu_percent")} == {"2"}


def test_threadstat_microseconds_become_seconds_and_names_may_hold_spaces() -> None:
    rows = {"threadstat": [{"node_id": 2, "thr_no": 1, "thr_nm": "send thread",
                            "os_ru_utime": 2_500_000, "os_ru_stime": 500_000,
                            "c_exec": 77}]}
    ss = collect("threadstat", rows)
    at = {"node_id": 2, "thr_no": 1, "thread_name": "send thread"}
    assert val(ss, "ndb_thread_cpu_seconds_total", mode="user", **at) == pytest.approx(2.5)
    assert val(ss, "ndb_thread_cpu_seconds_total", mode="system", **at) == pytest.approx(0.5)
    assert val(ss, "ndb_thread_signals_executed_total", **at) == 77
