"""The generated rules: promtool accepts them, and each alert fires and stays quiet when it
should (`promtool test rules` with series built from the field facts)."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from rules_scenarios import (
    GALERA,
    LOADGEN,
    NDB,
    PHASES_75,
    PHASES_76,
    RULE_FILES,
    STEP,
    TRACKER,
    const,
    counter,
    firing,
    histogram,
    metric,
    noisy_75,
    noisy_76,
    promtool_test,
    restart_timeline,
    rolling_timeline,
)

from clusterscope import paths
from clusterscope.rules import generate

pytestmark = pytest.mark.tools("promtool")

REPO = Path(__file__).resolve().parents[1]
# the alerts on log lines: LogsQL (tests/test_logs_alerts.py runs them), not for promtool
LOG_RULE_FILES = sorted((REPO / "rules" / "vlogs").glob("*.yml"))


def test_promtool_check_rules_accepts_every_file() -> None:
    assert RULE_FILES, "no rules/*.yml: run clusterscope rules generate"
    proc = subprocess.run(["promtool", "check", "rules", *map(str, RULE_FILES)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.tools("vmalert")
def test_vmalert_accepts_the_rules() -> None:
    proc = subprocess.run(["vmalert", f"-rule={REPO}/rules/*.yml", "-dryRun"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_generated_rules_are_current() -> None:
    assert paths.stale(generate.expected_files(), generate.OWNED) == [], \
        "run clusterscope rules generate"


def test_every_alert_has_labels_annotations_and_a_runbook_page() -> None:
    seen = []
    for f in [*RULE_FILES, *LOG_RULE_FILES]:
        for group in yaml.safe_load(f.read_text())["groups"]:
            for rule in group["rules"]:
                if "record" in rule:
                    assert re.fullmatch(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", rule["record"]), rule
                    continue
                name = rule["alert"]
                seen.append(name)
                assert re.fullmatch(r"(Ndb|Galera|Host|Loadgen|Experiment|Clusterscope)[A-Za-z]+",
                                    name)
                assert rule["labels"]["severity"] in ("critical", "warning", "info")
                ann = rule["annotations"]
                assert {"summary", "description", "runbook_url", "dashboard_url"} <= set(ann)
                assert ann["runbook_url"].endswith(f"/runbooks/{name}.md")
                page = REPO / "runbooks" / f"{name}.md"
                text = page.read_text()
                for section in ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation"):
                    assert section in text, f"{page} lacks {section}"
    pages = {p.stem for p in (REPO / "runbooks").glob("*.md")} - {"README"}
    assert sorted(pages) == sorted(seen), "alerts and runbook pages must be one to one"


def test_a_runbook_starts_with_its_own_components_first_steps() -> None:
    """An on-call reader of a stack alert is told to look at the stack, not the loadgen: each
    component's pages open their Diagnosis with that component's commands."""
    opening = {"Ndb": "ndb_mgm -e show", "Galera": "SHOW GLOBAL STATUS WHERE Variable_name",
               "Host": "df -h; df -i", "Clusterscope": "docker compose ps",
               "Loadgen": "loadgen_(window|pair|overhead)",
               "Experiment": "loadgen_(window|pair|overhead)"}
    for page in (REPO / "runbooks").glob("*.md"):
        if page.stem == "README":
            continue
        prefix = re.match(r"[A-Z][a-z]+", page.stem).group(0)
        diagnosis = page.read_text().split("## Diagnosis", 1)[1].split("## Mitigation")[0]
        assert opening[prefix] in diagnosis, f"{page.name}: not its component's first steps"


# -- restart regression (field facts section 2) ----------------------------------------------
NODE = {"cluster": "lab-ndb", "node_id": "2", "simulated": "true"}
WINDOW = 15  # seconds after a completion at which the verdict is checked (restarts are
# idle_steps apart, more than the rules' 5 minute event window: a real restart takes longer)


def test_restart_regression_fires_on_75_after_noisy_76_and_names_the_lcp_wait(tmp_path) -> None:
    rng = random.Random(76)
    restarts = [noisy_76(rng) for _ in range(5)] + [dict(PHASES_75)]
    t = restart_timeline(restarts)
    regressed = [{**NODE, "phase": "wait_lcp_for_restart"}]
    checks = [firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions[:-1]]
    checks.append(firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW, regressed))
    # still firing a while later: the verdict is held, not re-judged against itself
    checks.append(firing("NdbRestartTimeRegressed", t.completions[-1] + 70, regressed))
    promtool_test(tmp_path, t.series, checks)


def test_restart_regression_fires_on_6m49s_to_19m11s(tmp_path) -> None:
    t = restart_timeline([dict(PHASES_76)] * 3 + [dict(PHASES_75)])
    assert sum(PHASES_76.values()) == 6 * 60 + 49 and sum(PHASES_75.values()) == 19 * 60 + 11
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", t.completions[-2] + WINDOW, None),
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}]),
        # the ratio the verdict used: the latest against the median of the earlier three
        {"expr": "cluster_node:ndb_restart_total_seconds:ratio_to_baseline",
         "eval_time": f"{t.completions[-1] + WINDOW}s",
         "exp_samples": [{"labels": metric(
             "cluster_node:ndb_restart_total_seconds:ratio_to_baseline", NODE),
             "value": sum(PHASES_75.values()) / sum(PHASES_76.values())}]},
    ])


def test_restart_regression_needs_three_earlier_restarts_not_a_phantom(tmp_path) -> None:
    """Review scenario C1: the counter appears at 0 when the exporter first sees a restart
    under way. 400 s, 400 s, then 1200 s: only two earlier restarts, no verdict (the old
    rules counted the counter's appearance as a third)."""
    t = restart_timeline([dict(PHASES_76)] * 2 + [dict(PHASES_75)])
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions])


def test_restart_regression_never_rejudges_an_old_restart_after_an_outage(tmp_path) -> None:
    """Review scenario C2: 400 s, 400 s, then 1200 s, the counter appearing at the first
    completion: no verdict at the third (two timed earlier restarts). Then every ndbinfo
    series is gone for 60 s (SQL node or exporter down): when they come back nothing is
    judged again (the old rules took the returning series for a new completion)."""
    restarts = [dict(PHASES_76)] * 2 + [dict(PHASES_75)]
    first = restart_timeline(restarts, first_seen="completed")
    gap_start = first.completions[-1] // STEP + 6
    t = restart_timeline(restarts, first_seen="completed", gap=(gap_start, gap_start + 12))
    back = (gap_start + 13) * STEP
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW, None),
        firing("NdbRestartTimeRegressed", back + WINDOW, None),
        firing("NdbRestartTimeRegressed", back + 60, None)])


def test_first_completed_row_a_new_exporter_sees_is_no_event(tmp_path) -> None:
    """An exporter that first looks after a restart completed counts it without a time:
    not an event, so three timed 7.6 restarts after it are needed before a verdict."""
    t = restart_timeline([dict(PHASES_75)] + [dict(PHASES_76)] * 3 + [dict(PHASES_75)],
                         first_seen="completed")
    promtool_test(tmp_path, t.series, [
        *[firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions[:-1]],
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}])])


def test_restart_regression_falls_back_to_the_cluster_baseline(tmp_path) -> None:
    """Review #11: a rolling restart: nodes 3, 4 and 5 restart once each, then node 2 takes
    19 minutes: it has no earlier restart of its own, the cluster's three are the baseline."""
    t = rolling_timeline([("3", dict(PHASES_76)), ("4", dict(PHASES_76)),
                          ("5", dict(PHASES_76)), ("2", dict(PHASES_75))])
    promtool_test(tmp_path, t.series, [
        *[firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions[:-1]],
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}])])


def test_restart_regression_quiet_on_75_variance_alone(tmp_path) -> None:
    rng = random.Random(75)
    restarts = [noisy_75(rng) for _ in range(10)]
    totals = [sum(r.values()) for r in restarts]
    assert max(totals) / min(totals) > 1.3, "the scenario must carry 7.5-like variance"
    t = restart_timeline(restarts)
    promtool_test(tmp_path, t.series,
                  [firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions])


def pin(name: str, restart_seconds: float, created: int, steps: int) -> list[dict]:
    """A pin as `clusterscope baseline pin` writes it: one sample of each series."""
    return [const("clusterscope_pinned_restart_total_seconds",
                  {"cluster": "lab-ndb", "node_id": "2", "pin": name},
                  [None] * created + [restart_seconds] + [None] * (steps - created - 1)),
            const("clusterscope_pin_created_timestamp_seconds", {"pin": name},
                  [None] * created + [created * STEP] + [None] * (steps - created - 1))]


@pytest.mark.parametrize("profile,fires", [(PHASES_76, False), (PHASES_75, True)])
def test_restart_time_above_pinned_baseline(tmp_path, profile, fires) -> None:
    t = restart_timeline([dict(profile)])
    promtool_test(tmp_path, [*t.series, *pin("before-upgrade", sum(PHASES_76.values()), 0, 5)], [
        firing("NdbRestartTimeAbovePinned", t.completions[0] + WINDOW, [NODE] if fires else None)])


def test_restart_time_above_pinned_uses_the_newest_pin_and_resolves(tmp_path) -> None:
    """Review #10: an old slow pin (1500 s) must not hide a regression against the newest
    (409 s); the verdict holds between restarts and resolves at the next good restart."""
    t = restart_timeline([dict(PHASES_75), dict(PHASES_76)])
    steps = len(t.series[0]["values"].split())
    series = [*t.series, *pin("old", 1500, 0, steps), *pin("new", sum(PHASES_76.values()), 2,
                                                          steps)]
    promtool_test(tmp_path, series, [
        firing("NdbRestartTimeAbovePinned", t.completions[0] + WINDOW, [NODE]),
        firing("NdbRestartTimeAbovePinned", t.completions[1] - 2 * STEP, [NODE]),
        firing("NdbRestartTimeAbovePinned", t.completions[1] + WINDOW, None)])


def test_restart_stuck(tmp_path) -> None:
    node = {**NDB, "node_id": "3"}
    steps = 40 * 60 // STEP
    series = [const("ndb_restart_status", node, [8] * 36 + [10] * (steps - 36)),
              const("ndb_restart_status", {**node, "node_id": "4"},
                    [8] * (steps // 2) + [10] * (steps - steps // 2))]
    promtool_test(tmp_path, series, [
        firing("NdbRestartStuck", 20 * 60, None),
        firing("NdbRestartStuck", 35 * 60, [{"cluster": "lab-ndb", "node_id": "3",
                                             "simulated": "true"}]),
    ])


def test_restart_stuck_needs_a_full_window_and_more_time_for_data_phases(tmp_path) -> None:
    """Review scenario D: the exporter starts while a node sits in a state; 2 minutes of
    data are no "no progress for 30m". A state that grows with the data (14, REDO) gets
    2 h; a node in failure handling (3, down) is NdbDataNodeDown's, never this alert's."""
    steps = 150 * 60 // STEP
    n3, n4, n5 = ({**NDB, "node_id": i} for i in ("3", "4", "5"))
    series = [const("ndb_restart_status", n3, [None] * (steps - 24) + [9] * 24),
              const("ndb_restart_status", n4, [14] * steps),
              const("ndb_restart_status", n5, [3] * steps)]
    at = {"cluster": "lab-ndb", "simulated": "true"}
    promtool_test(tmp_path, series, [
        firing("NdbRestartStuck", (steps - 1) * STEP, [{**at, "node_id": "4"}]),
        firing("NdbRestartStuck", 60 * 60, None),
    ])


# -- other NDB alerts -------------------------------------------------------------------------
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


def test_data_node_down_is_the_dead_node_not_the_restarting_one(tmp_path) -> None:
    """Review scenario B: node 3's process is dead (its nodes rows are gone), node 4 is in
    a normal restart, copying the dictionary (state 10). Before start phase 9 a restarting
    node has no nodes row either (review oncall-2 N1: the SQL node reads ndbinfo only from
    the data nodes it is connected to, and a starting node lets API nodes connect in phase
    9), so node 4 is "configured, not running" just like node 3: restart_info tells them
    apart. Only node 3 is down."""
    n = 10 * 60 // STEP
    n3, n4 = {**NDB, "node_id": "3"}, {**NDB, "node_id": "4"}
    series = [const("ndb_node_status", {**n3, "status": "STARTED"}, [1] * 12 + [None] * (n - 12)),
              const("ndb_data_node_running", n3, [1] * 12 + [0] * (n - 12)),
              const("ndb_restart_status", n3, [19] * 12 + [3] * (n - 12)),
              const("ndb_node_status", {**n4, "status": "STARTED"}, [1] * 12 + [None] * (n - 12)),
              const("ndb_data_node_running", n4, [1] * 12 + [0] * (n - 12)),
              const("ndb_restart_status", n4, [19] * 12 + [10] * (n - 12))]
    promtool_test(tmp_path, series, [
        firing("NdbDataNodeDown", (n - 1) * STEP, [{"cluster": "lab-ndb", "node_id": "3",
                                                   "simulated": "true"}])])


def test_lcp_stalled_needs_a_full_window_and_real_write_traffic(tmp_path) -> None:
    """Review scenario A (3 minutes of a constant LCP id) and #12 (an idle cluster goes
    more than 30 minutes without an LCP on purpose)."""
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


def test_sql_node_down_is_one_alert_not_one_per_collector(tmp_path) -> None:
    """Review scenario E: ndb_up 0 makes every collector report success 0."""
    n = 12 * 60 // STEP
    collectors = ("nodes", "cpustat", "counters", "memoryusage", "transporters")
    series = [const("up", NDB, [1] * n), const("ndb_up", NDB, [1] * 12 + [0] * (n - 12))]
    for c in collectors:
        series += [const("ndb_exporter_collector_success", {**NDB, "collector": c},
                         [1] * 12 + [0] * (n - 12)),
                   const("ndb_exporter_collector_supported", {**NDB, "collector": c}, [1] * n)]
    # no SQL node reads the cluster while the exporter answers: the outage pages once, as
    # NdbClusterUnreachable (review oncall-2 N2); NdbExporterDown is the exporter itself
    promtool_test(tmp_path, series, [
        firing("NdbExporterCollectorFailing", (n - 1) * STEP, None),
        firing("NdbExporterDown", (n - 1) * STEP, None),
        firing("NdbClusterUnreachable", (n - 1) * STEP, [{"cluster": "lab-ndb"}])])


def test_one_transporter_overload_burst_does_not_alert(tmp_path) -> None:
    """Review #23: one onset kept the old `increase(...[5m]) > 0` true for 5 minutes."""
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


def test_a_lost_arbitrator_alerts_once_per_cluster_but_not_for_a_restarting_node(
        tmp_path) -> None:
    """Review #14: arbitration (membership). Node 3 restarts (not STARTED, no arbitrator
    yet) during the first 10 minutes: no alert. From minute 10 the arbitrator is lost on
    both started nodes for 5 minutes: one alert for the cluster, 2 m later; then back."""
    n = 20 * 60 // STEP
    lost = [1] * (10 * 60 // STEP) + [0] * (5 * 60 // STEP) + [1] * (5 * 60 // STEP)
    series = []
    for i, connected in (("2", lost), ("3", [0] * (10 * 60 // STEP) + lost[10 * 60 // STEP:])):
        node = {**NDB, "node_id": i}
        started = [1] * n if i == "2" else [0] * (10 * 60 // STEP) + [1] * (10 * 60 // STEP)
        series += [const("ndb_arbitrator_connected", node, connected),
                   const("ndb_arbitrator_node_id", node, [49] * n),
                   const("ndb_node_status", {**node, "status": "STARTED"}, started)]
    promtool_test(tmp_path, series, [
        firing("NdbArbitratorLost", 9 * 60, None),
        firing("NdbArbitratorLost", 11 * 60, None),   # for: 2m
        firing("NdbArbitratorLost", 13 * 60, [{"cluster": "lab-ndb"}]),
        firing("NdbArbitratorLost", 17 * 60, None),
    ])


INVENTORY = {"job": "clusterscope_inventory", "instance": "inventory:9110"}


def test_a_described_ndb_cluster_nobody_scrapes(tmp_path) -> None:
    """The description lists NDB clusters x and y; only y is scraped: x alone is absent.
    The old rule (`absent(up{job="ndbinfo"})`) could not name x and stayed quiet while y
    was scraped."""
    series = [const("clusterscope_cluster_info", {**INVENTORY, "cluster": c, "kind": "ndb"},
                    [1] * 30) for c in ("x", "y")]
    series.append(const("up", {"job": "ndbinfo", "cluster": "y", "instance": "y"}, [1] * 30))
    promtool_test(tmp_path, series, [firing("NdbExporterAbsent", 29 * STEP, [{"cluster": "x"}])])


def test_nothing_is_absent_for_a_product_not_deployed(tmp_path) -> None:
    """A Galera-only deployment: no ndbinfo job at all, and no NDB alert (the old rule,
    `absent(up{job="ndbinfo"})`, paged it as NdbExporterAbsent)."""
    series = [const("clusterscope_cluster_info", {**INVENTORY, "cluster": "g", "kind": "galera"},
                    [1] * 40),
              const("clusterscope_node_info", {**INVENTORY, "cluster": "g", "node": "n1",
                                               "role": "galera"}, [1] * 40),
              const("up", {"job": "galera", "cluster": "g", "node": "n1", "instance": "h:1"},
                    [1] * 40),
              const("up", INVENTORY, [1] * 40)]
    promtool_test(tmp_path, series, [
        firing(a, 39 * STEP, None)
        for a in ("NdbExporterAbsent", "NdbExporterDown", "GaleraExporterAbsent",
                  "ClusterscopeInventoryDown", "GaleraTrackerDown", "LoadgenDown")])


def test_a_described_galera_node_nobody_scrapes(tmp_path) -> None:
    series = [const("clusterscope_node_info", {**INVENTORY, "cluster": "g", "node": n,
                                               "role": "galera"}, [1] * 40)
              for n in ("n1", "n2")]
    series.append(const("clusterscope_node_info", {**INVENTORY, "cluster": "g", "node": "arb",
                                                   "role": "garbd"}, [1] * 40))
    series.append(const("up", {"job": "galera", "cluster": "g", "node": "n1",
                               "instance": "h:1"}, [1] * 40))
    # garbd has nothing to scrape: only n2 is missing
    promtool_test(tmp_path, series, [
        firing("GaleraExporterAbsent", 39 * STEP, [{"cluster": "g", "node": "n2"}])])


def test_the_inventory_itself_absent_or_invalid(tmp_path) -> None:
    series = [const("up", {"job": "other", "instance": "x"}, [1] * 40)]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeInventoryDown", 39 * STEP, [{"job": "clusterscope_inventory"}])])
    series = [const("up", INVENTORY, [1] * 40),
              const("clusterscope_inventory_config_last_reload_successful", INVENTORY,
                    [1] * 10 + [0] * 30)]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeInventoryInvalid", 39 * STEP, [INVENTORY])])


def test_a_dead_sql_node_of_several(tmp_path) -> None:
    lab = {"job": "ndbinfo", "cluster": "lab-ndb", "instance": "lab-ndb"}
    series = [const("ndb_sql_node_up", {**lab, "sql_node": "sql1"}, [1] * 5 + [0] * 35),
              const("ndb_sql_node_up", {**lab, "sql_node": "sql2"}, [1] * 40),
              const("ndb_up", lab, [1] * 40), const("up", lab, [1] * 40)]
    promtool_test(tmp_path, series, [
        firing("NdbSqlNodeDown", 39 * STEP, [{"cluster": "lab-ndb", "sql_node": "sql1"}]),
        firing("NdbExporterDown", 39 * STEP, None)])


# -- tables, transactions, locks, the disk page buffer, commit latency (issue 27) -----------
GIB = 2**30
C = {"cluster": "lab-ndb", "simulated": "true"}


def test_a_table_growing_past_its_nodes_free_data_memory(tmp_path) -> None:
    """Table t0 grows 1 GiB an hour on node 2, which has 20 GiB of DataMemory free: a day
    at that pace needs 24 GiB, so it is named after `for`. The same growth on node 3 (50 GiB
    free) and a flat table t1 on node 2 stay quiet."""
    n = 90 * 60 // STEP
    per_step = GIB / 3600 * STEP
    series = []
    for node, free in (("2", 20), ("3", 50)):
        lbl = {**NDB, "node_id": node}
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


def test_lock_waits_that_last_alert_once_a_burst_does_not(tmp_path) -> None:
    """10 minutes of a waiter now and then (and one burst of 40 in a single sample), then 15
    minutes with 8 requests waiting all the time: one alert for the cluster."""
    n = 25 * 60 // STEP
    calm = 10 * 60 // STEP
    waits: list[float | None] = [1 if i % 10 == 0 else None for i in range(calm)]
    waits[60] = 40
    waits += [8] * (n - calm)
    series = [const("ndb_up", NDB, [1] * n),
              const("ndb_locks", {**NDB, "node_id": "2", "mode": "exclusive",
                                  "state": "waiting"}, waits),
              const("ndb_locks", {**NDB, "node_id": "2", "mode": "exclusive",
                                  "state": "holding"}, [12] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbLockWaits", calm * STEP - STEP, None),
        firing("NdbLockWaits", (n - 1) * STEP, [C])])


def test_disk_page_buffer_hit_ratio_falls_with_real_traffic(tmp_path) -> None:
    """Node 2: 95 % of 1000 requests/s hit for 20 minutes, then 80 %; node 3 hits 50 % of 10
    requests/s (too little traffic to matter)."""
    n = 45 * 60 // STEP
    good = 20 * 60 // STEP
    series = []
    for node, phases in (("2", [(good, 950, 50), (n - good, 800, 200)]),
                         ("3", [(n, 5, 5)])):
        hits, misses = [], []
        for steps, h, m in phases:
            hits += [h * STEP] * steps
            misses += [m * STEP] * steps
        lbl = {**NDB, "node_id": node}
        series += [const("ndb_disk_page_buffer_requests_total",
                         {**lbl, "outcome": "direct_return"}, counter(hits)),
                   const("ndb_disk_page_buffer_requests_total",
                         {**lbl, "outcome": "wait_queue"}, counter([0] * n)),
                   const("ndb_disk_page_buffer_requests_total",
                         {**lbl, "outcome": "wait_io"}, counter(misses))]
    promtool_test(tmp_path, series, [
        firing("NdbDiskPageBufferHitRatioLow", good * STEP, None),
        firing("NdbDiskPageBufferHitRatioLow", (good + 10 * 60 // STEP) * STEP, None),
        firing("NdbDiskPageBufferHitRatioLow", (n - 1) * STEP, [{**C, "node_id": "2"}])])


LES = ["0.0005", "0.001", "0.002", "0.005", "0.01", "0.02", "+Inf"]
# completions per second in each range: p95 ~3.9 ms, then ~15 ms
FAST = [10, 50, 30, 8, 2, 0, 0]
SLOW = [0, 5, 15, 30, 40, 10, 0]


def test_commit_latency_against_its_own_baseline(tmp_path) -> None:
    """Two hours at p95 ~3.9 ms, then ~15 ms for 40 minutes at 100 commits/s on node 2:
    fires after `for`; node 3 makes the same jump at 1 commit/s (quiet), node 4 stays fast."""
    base, slow = 120 * 60 // STEP, 40 * 60 // STEP
    series = []
    for node, scale, shift in (("2", 1, True), ("3", 0.01, True), ("4", 1, False)):
        lbl = {**NDB, "node_id": node, "activity": "transaction"}
        after = SLOW if shift else FAST
        series += histogram("ndb_tc_latency_seconds", lbl, LES,
                            [(base, [x * scale for x in FAST]),
                             (slow, [x * scale for x in after])])
    start = base * STEP
    promtool_test(tmp_path, series, [
        firing("NdbCommitLatencyRegressed", start - STEP, None),
        firing("NdbCommitLatencyRegressed", start + 10 * 60, None),  # for: 15m
        firing("NdbCommitLatencyRegressed", start + 25 * 60, [{**C, "node_id": "2"}])])


# -- Galera -----------------------------------------------------------------------------------
def galera_node(i: int) -> dict:
    return {**GALERA, "node": f"node{i}", "instance": f"127.0.0.1:{i}"}


def test_galera_down_node_via_mysql_up_and_cluster_size(tmp_path) -> None:
    """A killed node: its exporter says mysql_up 0 and its wsrep series vanish; the others
    see a cluster of 2. After it rejoins, both alerts resolve."""
    n, kill, back = 80, 10, 50
    series = []
    for i in (1, 2, 3):
        lab = galera_node(i)
        dead = i == 3
        alive = [not (dead and kill <= k < back) for k in range(n)]
        series.append(const("up", lab, [1] * n))
        series.append(const("mysql_up", lab, [1 if a else 0 for a in alive]))
        series.append(const("mysql_global_status_wsrep_ready", lab,
                            [1 if a else None for a in alive]))
        series.append(const("mysql_global_status_wsrep_local_state", lab,
                            [4 if a else None for a in alive]))
        series.append(const("mysql_global_status_wsrep_cluster_size", lab,
                            [None if not a else (2 if kill + 1 <= k < back else 3)
                             for k, a in enumerate(alive)]))
    promtool_test(tmp_path, series, [
        firing("GaleraNodeNotReady", (kill - 1) * STEP, None),
        firing("GaleraNodeNotReady", (kill + 16) * STEP, [galera_node(3)]),
        firing("GaleraClusterSizeReduced", (kill + 5) * STEP, None),  # for: 1m
        firing("GaleraClusterSizeReduced", (kill + 16) * STEP, [{"cluster": "lab-galera"}]),
        firing("GaleraClusterSizeReduced", (back + 5) * STEP, None),
        firing("GaleraNodeNotReady", (back + 5) * STEP, None),
    ])


def test_galera_cluster_size_against_the_description(tmp_path) -> None:
    """Two nodes and garbd described (3 members); the cluster has run with 2 for longer
    than the history window (garbd never came back): only the description knows. The old
    rule needed rules/config.yaml's expected_cluster_size for it."""
    n = 40
    series = [const("clusterscope_cluster_members",
                    {**INVENTORY, "cluster": "staging", "kind": "galera", "role": r}, [c] * n)
              for r, c in (("galera", 2), ("garbd", 1))]
    for i in (1, 2):
        lab = {**galera_node(i), "cluster": "staging"}
        series.append(const("mysql_up", lab, [1] * n))
        series.append(const("mysql_global_status_wsrep_cluster_size", lab, [2] * n))
    promtool_test(tmp_path, series, [
        firing("GaleraClusterSizeReduced", (n - 1) * STEP, [{"cluster": "staging"}])])


def test_galera_cluster_size_counts_garbd(tmp_path) -> None:
    """Review scenario F: two nodes plus garbd (size 3, two monitored); node2 dies: the
    size drops to 2 while 2 nodes are still monitored (the old rule compared with them)."""
    n, kill = 60, 12
    series = []
    for i in (1, 2):
        lab = {**galera_node(i), "cluster": "staging"}
        alive = [i == 1 or k < kill for k in range(n)]
        series.append(const("mysql_up", lab, [1 if a else 0 for a in alive]))
        series.append(const("mysql_global_status_wsrep_cluster_size", lab,
                            [None if not a else (2 if k >= kill else 3)
                             for k, a in enumerate(alive)]))
    promtool_test(tmp_path, series, [
        firing("GaleraClusterSizeReduced", (n - 1) * STEP, [{"cluster": "staging"}])])


def test_a_dead_mysqld_exporter_is_not_three_node_pages(tmp_path) -> None:
    """Review #8: the multi-target mysqld_exporter dies: every target's up is 0 and the
    mysql_* series are gone. One warning per target, no critical node-down page."""
    n = 60
    series = []
    for i in (1, 2, 3):
        lab = galera_node(i)
        series.append(const("up", lab, [1] * 10 + [0] * (n - 10)))
        series.append(const("mysql_up", lab, [1] * 10 + [None] * (n - 10)))
        series.append(const("mysql_global_status_wsrep_ready", lab, [1] * 10 + [None] * (n - 10)))
    promtool_test(tmp_path, series, [
        firing("GaleraNodeNotReady", (n - 1) * STEP, None),
        firing("GaleraExporterDown", (n - 1) * STEP, [galera_node(i) for i in (1, 2, 3)])])


def test_galera_out_of_sync_unless_desynced_on_purpose(tmp_path) -> None:
    """Review #25 (the mixin's rule): a joiner and a donor stuck for 10 minutes fire; a
    node desynced on purpose (wsrep_desync ON) does not; 3 minutes is not yet."""
    n = 150
    donor, joiner, desynced = galera_node(1), galera_node(3), galera_node(2)
    series = [const("mysql_global_status_wsrep_local_state", donor, [4] * 10 + [2] * (n - 10)),
              const("mysql_global_status_wsrep_local_state", joiner, [4] * 10 + [1] * (n - 10)),
              const("mysql_global_status_wsrep_local_state", desynced, [2] * n),
              const("mysql_global_variables_wsrep_desync", desynced, [1] * n),
              const("mysql_global_variables_wsrep_desync", donor, [0] * n)]
    promtool_test(tmp_path, series, [
        firing("GaleraNodeOutOfSync", 3 * 60, None),  # not yet 5 minutes
        firing("GaleraNodeOutOfSync", (n - 1) * STEP, [donor, joiner]),
    ])


def test_galera_flow_control_and_recoveries(tmp_path) -> None:
    n = 12 * 60 // STEP
    # every node is paused 0.5 s per second from minute 2 on; node3 sends the pauses
    paused = [0.0] * 24 + [0.5e9 * STEP * k for k in range(1, n - 24 + 1)]
    sent = [0] * 24 + [k for k in range(1, n - 24 + 1)]
    # node3 rejoined by SST (its second recovery) at t=300s and it took 4000 s; node2's
    # first join by SST (one recovery) is not "an SST where an IST was expected", not even
    # after node2 served as a donor
    series = [
        *[const("mysql_global_status_wsrep_flow_control_paused_ns", galera_node(i), paused)
          for i in (1, 2, 3)],
        const("mysql_global_status_wsrep_flow_control_sent", galera_node(1), [0] * n),
        const("mysql_global_status_wsrep_flow_control_sent", galera_node(3), sent),
        const("galera_recovery_last_end_timestamp_seconds",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync", "donor": "node1"},
              [None] * 60 + [300] * (n - 60)),
        const("galera_recovery_last_duration_seconds",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync", "donor": "node1"},
              [None] * 60 + [4000] * (n - 60)),
        const("galera_recoveries_total",
              {**TRACKER, "node": "node3", "kind": "ist", "method": "ist"}, [1] * n),
        const("galera_recoveries_total",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync"},
              [0] * 60 + [1] * (n - 60)),
        const("galera_recovery_last_end_timestamp_seconds",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync", "donor": "node1"},
              [300] * n),
        const("galera_recovery_last_duration_seconds",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync", "donor": "node1"},
              [20] * n),
        const("galera_recoveries_total",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync"}, [1] * n),
        # node2 then donated a state: a donor returns to SYNCED too (JOINED -> SYNCED
        # twice), which is no second recovery (the soak saw it fire, issue 28)
        const("galera_state_transitions_total",
              {**TRACKER, "node": "node2", "from": "JOINED", "to": "SYNCED"},
              [1] * 60 + [2] * (n - 60)),
    ]
    n3 = {"cluster": "lab-galera", "node": "node3", "kind": "sst"}
    promtool_test(tmp_path, series, [
        firing("GaleraFlowControlHigh", 60, None),
        # one alert for the cluster (review #6); the sender is named in its description
        # (review oncall-2 N6: tests/test_rules_oncall.py)
        firing("GaleraFlowControlHigh", (n - 1) * STEP, [{"cluster": "lab-galera"}]),
        firing("GaleraRecoveryUsedSST", 250, None),
        firing("GaleraRecoveryUsedSST", 400, [n3]),
        firing("GaleraRecoveryUsedSST", 950, None),  # more than 10 minutes after
        firing("GaleraRecoverySlow", 250, None),
        firing("GaleraRecoverySlow", 400, [{**TRACKER, "node": "node3", "kind": "sst",
                                            "method": "rsync", "donor": "node1"}]),
    ])


def test_a_recovery_that_never_ends_alerts_while_it_runs(tmp_path) -> None:
    """oncall-2 N10: node3's SST began at t=0 and never reaches SYNCED; node2 is in a
    recovery begun 10 minutes ago; node1 recovers no more (a started time kept from its last
    recovery, not in progress)."""
    n = 70 * 60 // STEP
    series = [
        const("galera_recovery_in_progress", {**TRACKER, "node": "node3"}, [1] * n),
        const("galera_recovery_started_timestamp_seconds", {**TRACKER, "node": "node3"},
              [0] * n),
        const("galera_recovery_in_progress", {**TRACKER, "node": "node2"}, [1] * n),
        const("galera_recovery_started_timestamp_seconds", {**TRACKER, "node": "node2"},
              [3600] * n),
        const("galera_recovery_in_progress", {**TRACKER, "node": "node1"}, [0] * n),
        const("galera_recovery_started_timestamp_seconds", {**TRACKER, "node": "node1"},
              [0] * n),
    ]
    promtool_test(tmp_path, series, [
        firing("GaleraRecoveryStuck", 3500, None),
        firing("GaleraRecoveryStuck", 3700, [{**TRACKER, "node": "node3"}]),
        firing("GaleraRecoveryStuck", (n - 1) * STEP, [{**TRACKER, "node": "node3"}]),
    ])


def test_galera_quorum_queues_certification_connections_gcache(tmp_path) -> None:
    n = 90 * 60 // STEP
    a, b, c = galera_node(1), galera_node(2), galera_node(3)
    st = "mysql_global_status"
    series = [
        const(f"{st}_wsrep_cluster_status", a, [1] * n),
        const(f"{st}_wsrep_cluster_status", b, [1] * 12 + [0] * (n - 12)),  # non-Primary
        const(f"{st}_wsrep_local_state", a, [2] * n),  # a donor with a backlog
        const(f"{st}_wsrep_local_recv_queue", a, [150] * n),
        const(f"{st}_wsrep_local_state", c, [4] * n),  # a synced node with a backlog
        const(f"{st}_wsrep_local_recv_queue", c, [500] * n),
        const(f"{st}_wsrep_local_cert_failures", c, [3 * STEP * k for k in range(n)]),
        const(f"{st}_wsrep_local_bf_aborts", c, [0] * n),
        const(f"{st}_threads_connected", c, [90] * n),
        const("mysql_global_variables_max_connections", c, [100] * n),
        const(f"{st}_uptime", b, [60 + STEP * k for k in range(n)]),
        const("mysql_galera_gcache_size_bytes", a, [128 * 2**20] * n),
        const(f"{st}_wsrep_replicated_bytes", a, [2**20 * STEP * k for k in range(n)]),
        const("up", {**TRACKER}, [1] * n),
        const("galera_tracker_log_up", {**TRACKER, "node": "node2"}, [1] * 12 + [0] * (n - 12)),
        const("galera_recoveries_aborted_total", {**TRACKER, "node": "node2"},
              [0] * 100 + [1] * (n - 100)),
    ]
    end = (n - 1) * STEP
    tr = {"cluster": "lab-galera", "instance": "127.0.0.1:1", "job": "galera_tracker",
          "node": "node2"}
    promtool_test(tmp_path, series, [
        firing("GaleraNonPrimary", end, [b]),
        firing("GaleraDonorFallingBehind", end, [a]),
        firing("GaleraRecvQueueHigh", end, [c]),
        firing("GaleraCertificationFailures", end, [{"cluster": "lab-galera", "node": "node3"}]),
        firing("GaleraConnectionsHigh", end, [{"cluster": "lab-galera", "node": "node3"}]),
        firing("GaleraNodeRestarted", 60, [b]),
        firing("GaleraNodeRestarted", end, None),
        firing("GaleraGcacheTooSmall", end, [a]),
        firing("GaleraTrackerDown", end, [tr]),
        firing("GaleraRecoveryAborted", 100 * STEP + 30, [tr]),
    ])


def test_stack_watchdog_rule_errors_and_loadgen_down(tmp_path) -> None:
    """A rule that fails on every evaluation from step 60 (its error counter climbs) fires
    after 5 minutes; one that failed once does not (review oncall-2 N14: `for: 5m`, as
    VictoriaMetrics' own alerts-vmalert.yml)."""
    n = 200
    vma = {"job": "vmalert", "instance": "127.0.0.1:3"}
    series = [const("vmalert_alerting_rules_errors_total",
                    {**vma, "alertname": "X", "group": "g", "file": "f", "id": "1"},
                    [0] * 60 + [k + 1 for k in range(n - 60)]),
              const("vmalert_recording_rules_errors_total",
                    {**vma, "recording": "r", "group": "once", "file": "f", "id": "2"},
                    [0] * 20 + [1] * (n - 20)),
              const("up", LOADGEN, [1] * 10 + [0] * (n - 10))]
    promtool_test(tmp_path, series, [
        firing("ClusterscopeWatchdog", STEP, [{}]),
        firing("ClusterscopeRuleErrors", 62 * STEP, None),
        firing("ClusterscopeRuleErrors", (60 + 64) * STEP, [{**vma, "group": "g", "file": "f"}]),
        firing("LoadgenDown", (n - 1) * STEP, [LOADGEN]),
    ])


# -- experiments ------------------------------------------------------------------------------
@pytest.mark.parametrize("pinned,fires", [(0.18, False), (0.05, True)])
def test_experiment_overhead_changed_against_pinned_baseline(tmp_path, pinned, fires) -> None:
    n = 60
    lab = {**LOADGEN, "experiment": "fk", "variant": "fk2", "baseline": "nofk"}
    series = [const("loadgen_overhead_ratio", lab, [0.17] * n),
              const("loadgen_overhead_ratio_lower", lab, [0.15] * n),
              const("loadgen_overhead_ratio_upper", lab, [0.19] * n),
              const("loadgen_overhead_pairs", lab, [8] * n),
              const("clusterscope_pinned_overhead_ratio",
                    {"cluster": "lab-galera", "engine": "galera", "experiment": "fk",
                     "variant": "fk2", "baseline": "nofk", "pin": "before"},
                    [pinned] + [None] * (n - 1))]
    expect = [{"cluster": "lab-galera", "engine": "galera", "experiment": "fk",
               "variant": "fk2", "baseline": "nofk"}] if fires else None
    promtool_test(tmp_path, series, [firing("ExperimentOverheadChanged", (n - 1) * STEP, expect)])


def test_experiment_overhead_with_an_ndb_and_a_galera_loadgen(tmp_path) -> None:
    """Review #17: both engines run `fk`/`fk2`; matching on experiment and variant alone
    gave duplicate series to group_left (the rule errors, the alert goes silent). The
    Galera one moved against its own pin; the NDB one did not."""
    n = 60
    series = []
    for engine, cluster, pinned in (("galera", "lab-galera", 0.05), ("ndb", "lab-ndb", 0.17)):
        lab = {**LOADGEN, "engine": engine, "cluster": cluster, "experiment": "fk",
               "variant": "fk2", "baseline": "nofk", "instance": f"127.0.0.1:{len(engine)}"}
        series += [const("loadgen_overhead_ratio", lab, [0.17] * n),
                   const("loadgen_overhead_ratio_lower", lab, [0.15] * n),
                   const("loadgen_overhead_ratio_upper", lab, [0.19] * n),
                   const("loadgen_overhead_pairs", lab, [8] * n),
                   const("clusterscope_pinned_overhead_ratio",
                         {"cluster": cluster, "engine": engine, "experiment": "fk",
                          "variant": "fk2", "baseline": "nofk", "pin": "before"},
                         [pinned] + [None] * (n - 1))]
    promtool_test(tmp_path, series, [firing("ExperimentOverheadChanged", (n - 1) * STEP, [
        {"cluster": "lab-galera", "engine": "galera", "experiment": "fk", "variant": "fk2",
         "baseline": "nofk"}])])


def test_loadgen_saturated(tmp_path) -> None:
    n = 40
    lab = {**LOADGEN, "experiment": "fk"}
    series = [const("loadgen_saturated", lab, [0] * 10 + [1] * (n - 10))]
    out = {k: v for k, v in lab.items() if k not in ("job", "instance")}
    promtool_test(tmp_path, series, [firing("LoadgenSaturated", 60, None),
                                     firing("LoadgenSaturated", (n - 1) * STEP, [out])])


def test_runbook_links_resolve_where_the_lab_serves_them(tmp_path) -> None:
    """Every alert's runbook_url, with vmalert's external URL in place of
    {{ $externalURL }} (the lab's webhook server, standing in for compose's Grafana), serves
    that alert's page."""
    import threading
    import urllib.request
    from http.server import ThreadingHTTPServer

    from clusterscope.lab.webhook import make_handler

    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(
        tmp_path / "n.jsonl", REPO / "runbooks", "http://127.0.0.1:1"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for f in RULE_FILES:
            for group in yaml.safe_load(f.read_text())["groups"]:
                for rule in group["rules"]:
                    if "alert" not in rule:
                        continue
                    url = rule["annotations"]["runbook_url"].replace("{{ $externalURL }}", base)
                    assert url.startswith(base), url  # no placeholder host left
                    with urllib.request.urlopen(url, timeout=5) as r:
                        assert r.read().decode().startswith(f"# {rule['alert']}\n")
    finally:
        server.shutdown()
