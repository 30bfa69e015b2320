"""The NDB capacity and traffic alerts under `promtool test rules`: LCP stalls (not a long
healthy LCP), REDO, memory, a table filling DataMemory, transactions left open,
transporters, and an exporter whose scrapes come close to their budget (lock contention, TC
latency and the disk page buffer: tests/test_rules_ndb_workload.py)."""

from __future__ import annotations

import pytest
from rules_cases import (
    C,
    node,
    steps,
)
from rules_scenarios import (
    NDB,
    STEP,
    const,
    counter,
    firing,
    promtool_test,
)

pytestmark = pytest.mark.tools("promtool")


GIB = 2**30

def test_ndb_node_lcp_redo_cpu_transporter_exporter_alerts(tmp_path) -> None:
    n = 60 * 60 // STEP  # one hour of samples
    half = n // 2
    node2, node3 = {**NDB, "node_id": "2"}, {**NDB, "node_id": "3"}
    redo = {"log_type": "REDO", "log_id": "0"}
    ldm = {"thread_name": "ldm"}
    series = [
        # node 3 stops at half time: no nodes row, configured but not running
        const("ndb_data_node_running", node2, [1] * n),
        const("ndb_data_node_running", node3, [1] * half + [0] * (n - half)),
        # LCP id advances for the first half, then stays while REDO is written (8 MB/s)
        const("ndb_lcp_id", NDB, [min(i, half - 24) // 60 for i in range(n)]),
        const("ndb_disk_write_speed_bytes_per_second",
              {**node2, "ldm_instance": "0", "kind": "redo", "window": "60s"}, [8e6] * n),
        # REDO part 1 of node 2 fills from 50% to 95%
        const("ndb_log_space_used_bytes", {**node2, **redo, "log_part": "1"},
              [50 + 45 * i // n for i in range(n)]),
        const("ndb_log_space_total_bytes", {**node2, **redo, "log_part": "1"}, [100] * n),
        const("ndb_log_space_used_bytes", {**node2, **redo, "log_part": "0"}, [10] * n),
        const("ndb_log_space_total_bytes", {**node2, **redo, "log_part": "0"}, [100] * n),
        # one LDM thread of node 2 saturates in the second half, dipping below 90 at every
        # other 1 s sample (the old instant rule never fired); node 3's stays at 50%
        const("ndb_thread_cpu_percent", {**node2, **ldm, "thr_no": "1", "mode": "exec"},
              [40] * half + [97 if i % 2 else 86 for i in range(n - half)]),
        const("ndb_thread_cpu_percent", {**node2, **ldm, "thr_no": "1", "mode": "os_user"},
              [100] * n),  # spinning counts in OS_user, not in the thread's work
        const("ndb_thread_cpu_percent", {**node3, **ldm, "thr_no": "1", "mode": "exec"},
              [50] * n),
        const("ndb_transporter_overloaded", {**node2, "remote_node_id": "3"},
              [0] * half + [1] * (n - half)),
        const("ndb_transporter_overloads_total", {**node2, "remote_node_id": "3"}, [0] * n),
        const("up", NDB, [1] * n),
        const("ndb_up", NDB, [1] * n),
        const("ndb_exporter_collector_success", {**NDB, "collector": "cpustat"},
              [1] * half + [0] * (n - half)),
        const("ndb_exporter_collector_supported", {**NDB, "collector": "cpustat"}, [1] * n),
        const("ndb_exporter_collector_success", {**NDB, "collector": "transporter_details"},
              [0] * n),
        const("ndb_exporter_collector_supported", {**NDB, "collector": "transporter_details"},
              [0] * n),
    ]
    early, late = (half - 12) * STEP, (n - 2) * STEP
    c2 = {"cluster": "lab-ndb", "node_id": "2", "simulated": "true"}
    c3 = {"cluster": "lab-ndb", "node_id": "3", "simulated": "true"}
    checks = []
    for alert, labels in [
        ("NdbDataNodeDown", [c3]),
        ("NdbLcpStalled", [{"cluster": "lab-ndb", "simulated": "true"}]),
        ("NdbRedoLogFilling", [c2]),
        ("NdbLdmCpuSaturated", [c2]),
        ("NdbTransporterOverloaded", [{**c2, "remote_node_id": "3"}]),
        ("NdbExporterCollectorFailing", [{**NDB, "collector": "cpustat"}]),
    ]:
        checks.append(firing(alert, early, None))
        checks.append(firing(alert, late, labels))
    promtool_test(tmp_path, series, checks)


def test_lcp_stalled_needs_a_full_window_and_real_write_traffic(tmp_path) -> None:
    """3 minutes of a constant LCP id are no stall (the window is 30 minutes), and an idle
    cluster goes more than 30 minutes without an LCP on purpose."""
    n = 45 * 60 // STEP
    idle = {**NDB, "cluster": "idle"}
    writes = [i * 100 for i in range(n)]  # the old rule's "the cluster writes"
    series = [const("ndb_counters_total", {**NDB, "node_id": "2", "block_name": "DBTC",
                                           "counter_name": "WRITES"}, writes),
              const("ndb_counters_total", {**idle, "node_id": "2", "block_name": "DBTC",
                                           "counter_name": "WRITES"}, writes),
              const("ndb_lcp_id", NDB, [None] * (n - 36) + [7] * 36),
              const("ndb_disk_write_speed_bytes_per_second",
                    {**NDB, "node_id": "2", "ldm_instance": "0", "kind": "redo",
                     "window": "60s"}, [8e6] * n),
              const("ndb_lcp_id", idle, [7] * n),
              const("ndb_disk_write_speed_bytes_per_second",
                    {**idle, "node_id": "2", "ldm_instance": "0", "kind": "redo",
                     "window": "60s"}, [1e3] * n)]
    promtool_test(tmp_path, series, [firing("NdbLcpStalled", (n - 1) * STEP, None)])


def test_lcp_running_without_progress_is_stalled(tmp_path) -> None:
    n = 40 * 60 // STEP
    series = [const("ndb_lcp_id", NDB, [7] * n),
              const("ndb_lcp_running", NDB, [1] * n),
              const("ndb_lcp_progress_ratio", NDB, [i / 50 for i in range(50)]
                    + [0.98] * (n - 50))]
    promtool_test(tmp_path, series, [
        firing("NdbLcpStalled", 20 * 60, None),
        firing("NdbLcpStalled", (n - 1) * STEP, [{"cluster": "lab-ndb", "simulated": "true"}])])


def test_one_transporter_overload_burst_does_not_alert(tmp_path) -> None:
    """One onset kept the old `increase(...[5m]) > 0` true for 5 minutes."""
    n = 10 * 60 // STEP
    link = {**NDB, "node_id": "2", "remote_node_id": "3"}
    series = [const("ndb_transporter_overloaded", link, [0] * 12 + [1] * 4 + [0] * (n - 16)),
              const("ndb_transporter_overloads_total", link, [0] * 12 + [1] * (n - 12))]
    promtool_test(tmp_path, series, [firing("NdbTransporterOverloaded", 5 * 60, None)])


def test_memory_undo_links_versions_and_a_slow_exporter(tmp_path) -> None:
    n = 150 * 60 // STEP
    n2, n3, n4 = ({**NDB, "node_id": i} for i in ("2", "3", "4"))
    undo = {"log_type": "DD-UNDO", "log_id": "1", "log_part": "0"}
    dm = {"memory_type": "Data memory"}
    series = [
        const("ndb_memory_used_bytes", {**n2, **dm}, [95] * n),
        const("ndb_memory_total_bytes", {**n2, **dm}, [100] * n),
        const("ndb_memory_used_bytes", {**n3, **dm}, [50] * n),
        const("ndb_memory_total_bytes", {**n3, **dm}, [100] * n),
        const("ndb_log_space_used_bytes", {**n3, **undo}, [90] * n),
        const("ndb_log_space_total_bytes", {**n3, **undo}, [100] * n),
        # 2 -> 3 down although both run; 2 -> 4 down because 4 is down (NdbDataNodeDown's)
        # one series per link: the connection_status code (1 CONNECTING, 2 DISCONNECTED)
        const("ndb_transporter_status_code", {**n2, "remote_node_id": "3"}, [2] * n),
        const("ndb_transporter_status_code", {**n2, "remote_node_id": "4"}, [1] * n),
        const("ndb_data_node_running", n2, [1] * n),
        const("ndb_data_node_running", n3, [1] * n),
        const("ndb_data_node_running", n4, [0] * n),
        # node 3 upgraded, node 2 not yet, for 2.5 h
        const("ndb_node_info", {**n2, "type": "NDB", "version": "8.4.3", "hostname": "a"}, [1] * n),
        const("ndb_node_info", {**n3, "type": "NDB", "version": "8.4.4", "hostname": "b"}, [1] * n),
        # one scrape near the budget early on; from 14 minutes before the end every scrape
        # takes 3.2-3.4 s (the budget is 3.5 s: longer ones are cut and never stored)
        const("ndb_exporter_scrape_duration_seconds", NDB,
              [0.5] * (n - 400) + [3.4] + [0.5] * 231 + [3.2 + (i % 3) / 10 for i in range(168)]),
    ]
    c = {"cluster": "lab-ndb", "simulated": "true"}
    promtool_test(tmp_path, series, [
        firing("NdbDataMemoryHigh", (n - 1) * STEP, [{**c, "node_id": "2"}]),
        firing("NdbUndoLogFilling", (n - 1) * STEP, [{**c, "node_id": "3"}]),
        firing("NdbTransporterDisconnected", (n - 1) * STEP,
               [{**c, "node_id": "2", "remote_node_id": "3"}]),
        firing("NdbVersionMismatch", 60 * 60, None),
        firing("NdbVersionMismatch", (n - 1) * STEP, [{"cluster": "lab-ndb"}]),
        firing("NdbExporterSlow", (n - 1) * STEP, [NDB]),
        firing("NdbExporterSlow", (n - 380) * STEP, None),
        firing("NdbExporterSlow", (n - 100) * STEP, None),
    ])


def test_a_table_growing_past_its_nodes_free_data_memory(tmp_path) -> None:
    """Table t0 grows 1 GiB an hour on node 2, which has 20 GiB of DataMemory free: a day
    at that pace needs 24 GiB, so it is named after `for`. The same growth on node 3 (50 GiB
    free) and a flat table t1 on node 2 stay quiet."""
    n = 90 * 60 // STEP
    per_step = GIB / 3600 * STEP
    series = []
    for node_id, free in (("2", 20), ("3", 50)):
        lbl = {**NDB, "node_id": node_id}
        dm = {**lbl, "memory_type": "Data memory"}
        series += [const("ndb_memory_total_bytes", dm, [100 * GIB] * n),
                   const("ndb_memory_used_bytes", dm, [(100 - free) * GIB] * n),
                   const("ndb_table_memory_allocated_bytes",
                         {**lbl, "table": "sim/def/t0", "kind": "fixed"},
                         counter([per_step] * n, 10 * GIB)),
                   const("ndb_table_memory_allocated_bytes",
                         {**lbl, "table": "sim/def/t0", "kind": "var"}, [2 * GIB] * n)]
    series.append(const("ndb_table_memory_allocated_bytes",
                        {**NDB, "node_id": "2", "table": "sim/def/t1", "kind": "fixed"},
                        [5 * GIB] * n))
    promtool_test(tmp_path, series, [
        firing("NdbTableFillingDataMemory", 20 * 60, None),  # for: 30m
        firing("NdbTableFillingDataMemory", (n - 1) * STEP,
               [{**C, "node_id": "2", "table": "sim/def/t0"}])])


def test_a_transaction_left_open_but_not_a_busy_node(tmp_path) -> None:
    """Node 2's TC has a transaction that stops doing anything at minute 10 (its inactivity
    grows by the second); node 3's transactions are all active (0-3 s)."""
    n = 20 * 60 // STEP
    start = 10 * 60 // STEP
    idle = [i % 4 for i in range(start)] + [(i + 1) * STEP for i in range(n - start)]
    series = [const("ndb_transaction_inactive_seconds_max", {**NDB, "node_id": "2"}, idle),
              const("ndb_transaction_inactive_seconds_max", {**NDB, "node_id": "3"},
                    [i % 4 for i in range(n)])]
    promtool_test(tmp_path, series, [
        firing("NdbLongTransaction", 11 * 60, None),  # 60 s inactive, then for: 2m
        firing("NdbLongTransaction", (n - 1) * STEP, [{**C, "node_id": "2"}])])


def test_a_long_healthy_lcp_is_not_stalled_but_a_stuck_one_is(tmp_path) -> None:
    """An LCP of 40 minutes whose fragment replicas are
    checkpointed every minute while REDO is written. Before: NdbLcpStalled fired at 40
    min (no new LCP id for 30 min). Now: not stalled. A second cluster whose last LCP took
    50 minutes holds one large fragment for 35 minutes: within 3x its usual duration, not
    stalled either; a third one's LCP stops for good: stalled after 30 minutes."""
    n = steps(45)
    big, stuck = {**NDB, "cluster": "big"}, {**NDB, "cluster": "stuck"}
    series = []
    for lab, remaining, last in (
            (NDB, [max(0, 400 - k // steps(1) * 10) for k in range(n)], 600),
            (big, [400 - min(k, steps(5)) // steps(1) * 10 for k in range(n)], 3000),
            (stuck, [400 - min(k, steps(5)) // steps(1) * 10 for k in range(n)], 600)):
        series += [const("ndb_lcp_id", lab, [7] * n),
                   const("ndb_lcp_running", lab, [1] * n),
                   const("ndb_lcp_fragment_replicas_remaining", lab, remaining),
                   const("ndb_lcp_last_duration_seconds", lab, [last] * n),
                   const("ndb_disk_write_speed_bytes_per_second",
                         {**lab, "node_id": "2", "ldm_instance": "0", "kind": "redo",
                          "window": "60s"}, [8e6] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbLcpStalled", 34 * 60, None),
        firing("NdbLcpStalled", (n - 1) * STEP, [{"cluster": "stuck", "simulated": "true"}]),
    ])


def test_transaction_memory_nearly_exhausted(tmp_path) -> None:
    """ndb_resource_used_pages / max_pages of TRANSACTION_MEMORY was exported but not
    alerted. Node 2 uses 95 % of its pages; node 3 has no limit of its own (max 0)."""
    n = steps(8)
    tm = {"resource_name": "TRANSACTION_MEMORY"}
    series = [const("ndb_resource_used_pages", {**node(2), **tm}, [950] * n),
              const("ndb_resource_max_pages", {**node(2), **tm}, [1000] * n),
              const("ndb_resource_used_pages", {**node(3), **tm}, [950] * n),
              const("ndb_resource_max_pages", {**node(3), **tm}, [0] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbTransactionMemoryHigh", (n - 1) * STEP,
               [{**C, "node_id": "2", "resource_name": "TRANSACTION_MEMORY"}])])


def test_scrapes_close_to_the_budget_are_slow(tmp_path) -> None:
    """The exporter's budget is 3.5 s and VictoriaMetrics drops a scrape past the 4 s
    timeout, so `scrape_duration > 4` could not be stored. Scrapes of 3.1-3.4 s for 12
    minutes: before, never; now NdbExporterSlow after 10 minutes."""
    n = steps(13)
    series = [const("ndb_exporter_scrape_duration_seconds", NDB,
                    [0.4] * steps(1) + [3.1 + (k % 4) / 10 for k in range(n - steps(1))])]
    promtool_test(tmp_path, series, [
        firing("NdbExporterSlow", 9 * 60, None),
        firing("NdbExporterSlow", (n - 1) * STEP, [NDB])])
