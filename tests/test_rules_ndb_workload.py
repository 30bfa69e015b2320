"""The NDB workload rules mean what the kernel counts (`promtool test rules` with series a
scrape every STEP seconds would give): the manual's disk page buffer hit ratio, key
operation latency rather than transaction duration, lock contention from DBACC's exact
counters, DataMemory filling across tables and the 7.5 IndexMemory pool, and baselines that
keep only samples with traffic."""

from __future__ import annotations

import subprocess

import pytest
import yaml
from rules_scenarios import (
    NDB,
    RULE_FILES,
    STEP,
    const,
    counter,
    firing,
    histogram,
    metric,
    promtool_test,
)

pytestmark = pytest.mark.tools("promtool")

GIB = 2**30
C = {"cluster": "lab-ndb", "simulated": "true"}


def _dpb(node: str, n: int, direct: float, queue: float, io: float) -> list[dict]:
    lbl = {**NDB, "node_id": node}
    return [const("ndb_disk_page_buffer_requests_total", {**lbl, "outcome": o},
                  counter([per_s * STEP] * n))
            for o, per_s in (("direct_return", direct), ("wait_queue", queue),
                             ("wait_io", io))]


def test_hit_ratio_is_the_manuals_a_hot_page_queue_is_no_miss(tmp_path) -> None:
    """Node 2: hot pages, 14 % of 1000 requests/s queue behind others for a page in the
    buffer and 1 % wait for I/O: the manual's ratio is 98.8 %, no alert (direct returns over
    all requests, 85 %, paged). Node 3: 10 % wait for I/O, 90 %: below the manual's 95 %, it
    fires. Node 4: 10 requests/s, too few to matter."""
    n = 30 * 60 // STEP
    series = [*_dpb("2", n, 850, 140, 10), *_dpb("3", n, 900, 0, 100), *_dpb("4", n, 5, 0, 5)]
    promtool_test(tmp_path, series, [
        firing("NdbDiskPageBufferHitRatioLow", 10 * 60, None),  # for: 15m
        firing("NdbDiskPageBufferHitRatioLow", (n - 1) * STEP, [{**C, "node_id": "3"}]),
        {"expr": 'cluster_node:ndb_disk_page_buffer_hit:ratio_rate5m{node_id="2"}',
         "eval_time": f"{(n - 1) * STEP}s",
         "exp_samples": [{"labels": metric("cluster_node:ndb_disk_page_buffer_hit:"
                                           "ratio_rate5m", {**C, "node_id": "2"}),
                          "value": 850 / 860}]}])


def _lock_series(node: str, table: str, n: int, wait_s: list[float], failed: list[float],
                 start: float = 0.0) -> list[dict]:
    lbl = {**NDB, "node_id": node, "table": table}
    return [const("ndb_table_lock_wait_seconds_total", {**lbl, "outcome": "granted"},
                  counter([w * STEP for w in wait_s], start)),
            const("ndb_table_lock_waits_total",
                  {**lbl, "mode": "exclusive", "outcome": "failed"},
                  counter([f * STEP for f in failed], start))]


def test_lock_waits_from_the_exact_counters_alert_once_a_burst_does_not(tmp_path) -> None:
    """NdbLockWaits reads the wait time DBACC counts (its rate: the mean number waiting):
    10 minutes of 0.2 requests waiting and one minute at 40, then 15 minutes at 8 over two
    nodes and tables: one alert for the cluster after its `for`."""
    n = 25 * 60 // STEP
    calm = 10 * 60 // STEP
    waiting = [0.2] * calm
    waiting[60:72] = [40] * 12
    waiting += [4] * (n - calm)
    series = [*_lock_series("2", "sim/def/t0", n, waiting, [0] * n),
              *_lock_series("3", "sim/def/t1", n, waiting, [0] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbLockWaits", calm * STEP - STEP, None),
        firing("NdbLockWaits", (n - 1) * STEP, [C]),
        {"expr": "cluster:ndb_lock_waiters:mean_rate5m", "eval_time": f"{(n - 1) * STEP}s",
         "exp_samples": [{"labels": metric("cluster:ndb_lock_waiters:mean_rate5m", C),
                          "value": 8}]}])


def test_lock_wait_timeouts_name_the_table_and_survive_a_node_restart(tmp_path) -> None:
    """Table t0 times out 0.5 lock waits a second on each of two nodes (60 a minute): the
    alert names the table after its `for`; node 3 restarts half way and its counters start
    again from 0 (no spike: counters stay per node). Table t1, 3 a minute, stays quiet."""
    n = 15 * 60 // STEP
    half = n // 2
    series = [*_lock_series("2", "sim/def/t0", n, [0.5] * n, [0.5] * n, 5000),
              *_lock_series("2", "sim/def/t1", n, [0.1] * n, [0.05] * n)]
    restarted = _lock_series("3", "sim/def/t0", n, [0.5] * n, [0.5] * n, 7000)
    for s in restarted:
        vals = s["values"].split()
        s["values"] = " ".join(vals[:half] + [f"{float(v) - float(vals[half - 1]):g}"
                                              for v in vals[half:]])
    series += restarted
    promtool_test(tmp_path, series, [
        firing("NdbLockWaitTimeouts", 60, None),  # for: 2m
        firing("NdbLockWaitTimeouts", (n - 1) * STEP, [{**C, "table": "sim/def/t0"}]),
        {"expr": 'cluster_table:ndb_lock_wait_timeouts:rate5m{table="sim/def/t0"}',
         "eval_time": f"{(half + 12) * STEP}s",
         "exp_samples": [{"labels": metric("cluster_table:ndb_lock_wait_timeouts:rate5m",
                                           {**C, "table": "sim/def/t0"}), "value": 1.0}]}])


LES = ["0.0001", "0.0002", "0.0005", "0.001", "0.002", "0.005", "0.01", "0.02", "+Inf"]
# completions per second in each range: key operations p95 ~0.5 ms, then ~4.4 ms;
# transactions ~3.9 ms, then 20 ms (the application holds them open longer)
KEY_FAST = [40, 300, 140, 20, 0, 0, 0, 0, 0]
KEY_SLOW = [0, 20, 60, 100, 200, 120, 0, 0, 0]
TX_FAST = [0, 0, 10, 50, 30, 8, 2, 0, 0]
TX_SLOW = [0, 0, 0, 5, 15, 30, 30, 15, 5]


def _latency(node: str, key: list[tuple[int, list[float]]],
             tx: list[tuple[int, list[float]]]) -> list[dict]:
    out = []
    for activity in ("read_key", "write_key"):
        out += histogram("ndb_tc_latency_seconds", {**NDB, "node_id": node,
                                                    "activity": activity}, LES, key)
    return out + histogram("ndb_tc_latency_seconds", {**NDB, "node_id": node,
                                                      "activity": "transaction"}, LES, tx)


def test_key_operation_latency_regresses_not_the_applications_batching(tmp_path) -> None:
    """Node 2's application holds its transactions open longer (transaction duration p95 x4,
    key operations unchanged): no latency alert. Node 3's key operations take 8x longer:
    NdbKeyOperationLatencyRegressed after `for`. Node 4 does the same at 2 operations/s:
    quiet."""
    base, after = 60 * 60 // STEP, 30 * 60 // STEP
    series = [*_latency("2", [(base + after, KEY_FAST)], [(base, TX_FAST), (after, TX_SLOW)]),
              *_latency("3", [(base, KEY_FAST), (after, KEY_SLOW)],
                        [(base, TX_FAST), (after, TX_SLOW)]),
              *_latency("4", [(base, [x / 250 for x in KEY_FAST]),
                              (after, [x / 250 for x in KEY_SLOW])], [(base + after, TX_FAST)])]
    end = (base + after - 1) * STEP
    latency_alerts = 'ALERTS{alertname=~"Ndb.*Latency.*", alertstate="firing"'
    promtool_test(tmp_path, series, [
        {"expr": latency_alerts + "}", "eval_time": f"{base * STEP + 10 * 60}s",
         "exp_samples": []},  # for: 15m
        # no NDB latency alert of any name for the application's change, one for the cluster's
        {"expr": latency_alerts + ', node_id!="3"}', "eval_time": f"{end}s",
         "exp_samples": []},
        {"expr": latency_alerts + ', node_id="3"}', "eval_time": f"{end}s",
         "exp_samples": [{"labels": metric("ALERTS", {
             **C, "alertname": "NdbKeyOperationLatencyRegressed", "alertstate": "firing",
             "node_id": "3", "severity": "warning"}), "value": 1}]}])


def _idle_night_series(minutes: list[tuple[int, list[float]]]) -> list[dict]:
    """Histograms sampled every minute: (minutes, completions per second per range)."""
    out = []
    for activity, scale in (("read_key", 1), ("write_key", 1), ("transaction", 0.3)):
        running = [0.0] * len(LES)
        buckets: list[list[float]] = [[] for _ in LES]
        for mins, rates in minutes:
            for _ in range(mins):
                for i, r in enumerate(rates):
                    running[i] += r * scale * 60
                acc = 0.0
                for i in range(len(LES)):
                    acc += running[i]
                    buckets[i].append(acc)
        lbl = {**NDB, "node_id": "2", "activity": activity}
        for i, le in enumerate(LES):
            out.append({"series": metric("ndb_tc_latency_seconds_bucket", {**lbl, "le": le}),
                        "values": " ".join(f"{v:g}" for v in buckets[i])})
        out.append({"series": metric("ndb_tc_latency_seconds_count", lbl),
                    "values": " ".join(f"{v:g}" for v in buckets[-1])})
    return out


def test_the_latency_baseline_keeps_only_samples_with_traffic(tmp_path) -> None:
    """Two hours of traffic, 15 idle hours (no completion at all), an hour of traffic, then
    key operations and transactions 8x slower: the alert fires. A quantile of no
    completions is NaN, and a day's median over 15 hours of NaN samples is NaN: recorded
    without the traffic gate, the baseline could never fire again after an idle night."""
    zero = [0.0] * len(LES)
    plan = [(120, KEY_FAST), (15 * 60, zero), (60, KEY_FAST), (40, KEY_SLOW)]
    series = _idle_night_series(plan)
    end = sum(m for m, _ in plan) - 1
    spec = {"rule_files": [str(f) for f in RULE_FILES], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": [],
                       "promql_expr_test": [{
                           "expr": 'count(ALERTS{alertname=~"Ndb.*LatencyRegressed",'
                                   ' alertstate="firing", node_id="2"})',
                           "eval_time": f"{end}m",
                           "exp_samples": [{"labels": "{}", "value": 1}]}]}]}
    f = tmp_path / "idle.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_data_memory_filling_from_growth_spread_over_many_tables(tmp_path) -> None:
    """Node 2's twenty tables grow 50 MiB an hour each (1 GiB an hour together) with 20 GiB
    of DataMemory free: no table alone reaches it within a day, the node does
    (NdbDataMemoryFilling); node 3, with 50 GiB free, stays quiet."""
    n = 45 * 60 // STEP
    series = []
    for node, free in (("2", 20), ("3", 50)):
        lbl = {**NDB, "node_id": node}
        dm = {**lbl, "memory_type": "Data memory"}
        series += [const("ndb_memory_total_bytes", dm, [100 * GIB] * n),
                   const("ndb_memory_used_bytes", dm,
                         counter([GIB / 3600 * STEP] * n, (100 - free) * GIB))]
        series += [const("ndb_table_memory_allocated_bytes",
                         {**lbl, "table": f"sim/def/t{k}", "kind": "fixed"},
                         counter([GIB / 20 / 3600 * STEP] * n, GIB)) for k in range(20)]
    promtool_test(tmp_path, series, [
        firing("NdbDataMemoryFilling", 20 * 60, None),  # for: 30m
        firing("NdbDataMemoryFilling", (n - 1) * STEP, [{**C, "node_id": "2"}]),
        firing("NdbTableFillingDataMemory", (n - 1) * STEP, None)])


def test_a_75_tables_hash_index_is_index_memory_not_data_memory(tmp_path) -> None:
    """Before NDB 7.6 the hash index pages are IndexMemory: on node 2 (7.5.10) a table whose
    hash index grows 1 GiB an hour does not fill DataMemory; on node 3 (7.6.6) the same
    growth, DataMemory since 7.6, is named after `for`."""
    n = 45 * 60 // STEP
    series = []
    for node, version in (("2", "mysql-5.7.22 ndb-7.5.10-sim"),
                          ("3", "mysql-5.7.22 ndb-7.6.6-sim")):
        lbl = {**NDB, "node_id": node}
        dm = {**lbl, "memory_type": "Data memory"}
        series += [const("ndb_node_info", {**lbl, "type": "NDB", "version": version,
                                           "hostname": "127.0.0.1"}, [1] * n),
                   const("ndb_memory_total_bytes", dm, [100 * GIB] * n),
                   const("ndb_memory_used_bytes", dm, [80 * GIB] * n),
                   const("ndb_table_memory_allocated_bytes",
                         {**lbl, "table": "sim/def/t0", "kind": "hash_index"},
                         counter([GIB / 3600 * STEP] * n, 2 * GIB)),
                   const("ndb_table_memory_allocated_bytes",
                         {**lbl, "table": "sim/def/t0", "kind": "fixed"}, [10 * GIB] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbTableFillingDataMemory", (n - 1) * STEP,
               [{**C, "node_id": "3", "table": "sim/def/t0"}])])
