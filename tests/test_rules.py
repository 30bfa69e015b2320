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
    NDB,
    PHASES_75,
    PHASES_76,
    STEP,
    const,
    metric,
    noisy_75,
    noisy_76,
    restart_timeline,
)

from clusterscope import paths
from clusterscope.rules import generate
from clusterscope.rules.config import load_config

REPO = Path(__file__).resolve().parents[1]
RULE_FILES = sorted((REPO / "rules").glob("*.yml"))
CONFIG = load_config()
GALERA = {"job": "galera", "cluster": "lab-galera"}
TRACKER = {"job": "galera_tracker", "cluster": "lab-galera", "instance": "127.0.0.1:1"}
LOADGEN = {"job": "loadgen", "cluster": "lab-galera", "engine": "galera",
           "target": "127.0.0.1:3306", "instance": "127.0.0.1:2"}


def promtool_test(tmp_path: Path, input_series: list[dict], expr_tests: list[dict],
                  alert_tests: list[dict] | None = None) -> None:
    spec = {"rule_files": [str(f) for f in RULE_FILES], "evaluation_interval": f"{STEP}s",
            "tests": [{"interval": f"{STEP}s", "input_series": input_series,
                       "promql_expr_test": expr_tests, "alert_rule_test": alert_tests or []}]}
    f = tmp_path / "test.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


def firing(alert: str, at: int, labels: list[dict] | None) -> dict:
    """An expectation on ALERTS at `at` seconds: these firing label sets, or none."""
    samples = []
    for lab in labels or []:
        full = {"alertname": alert, "alertstate": "firing",
                "severity": _severity(alert), **lab}
        samples.append({"labels": metric("ALERTS", full), "value": 1})
    return {"expr": f'ALERTS{{alertname="{alert}",alertstate="firing"}}', "eval_time": f"{at}s",
            "exp_samples": samples}


def _severity(alert: str) -> str:
    for g in generate.all_groups(CONFIG):
        for a in g.alerts:
            if a.name == alert:
                return a.severity
    raise KeyError(alert)


def test_promtool_check_rules_accepts_every_file() -> None:
    assert RULE_FILES, "no rules/*.yml: run clusterscope rules generate"
    proc = subprocess.run(["promtool", "check", "rules", *map(str, RULE_FILES)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_vmalert_accepts_the_rules() -> None:
    proc = subprocess.run(["vmalert", f"-rule={REPO}/rules/*.yml", "-dryRun"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_generated_rules_are_current() -> None:
    assert paths.stale(generate.expected_files(), generate.OWNED) == [], \
        "run clusterscope rules generate"


def test_every_alert_has_labels_annotations_and_a_runbook_page() -> None:
    seen = []
    for f in RULE_FILES:
        for group in yaml.safe_load(f.read_text())["groups"]:
            for rule in group["rules"]:
                if "record" in rule:
                    assert re.fullmatch(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", rule["record"]), rule
                    continue
                name = rule["alert"]
                seen.append(name)
                assert re.fullmatch(r"(Ndb|Galera|Loadgen|Experiment)[A-Za-z]+", name)
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


# -- restart regression (field facts section 2) ----------------------------------------------
NODE = {"cluster": "lab-ndb", "node_id": "2", "simulated": "true"}
WINDOW = 15  # seconds after a completion at which the verdict is checked


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


def test_restart_regression_counts_the_restart_that_creates_the_series(tmp_path) -> None:
    """A fresh exporter has no restart series until its first restart completes; that first
    restart still counts as one of the three earlier restarts."""
    t = restart_timeline([dict(PHASES_76)] * 3 + [dict(PHASES_75)], fresh_exporter=True)
    promtool_test(tmp_path, t.series, [
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


def test_restart_regression_needs_earlier_restarts(tmp_path) -> None:
    t = restart_timeline([dict(PHASES_76), dict(PHASES_75)])
    promtool_test(tmp_path, t.series,
                  [firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions])


@pytest.mark.parametrize("profile,fires", [(PHASES_76, False), (PHASES_75, True)])
def test_restart_time_above_pinned_baseline(tmp_path, profile, fires) -> None:
    t = restart_timeline([dict(profile)])
    pinned = const("clusterscope_pinned_restart_total_seconds",
                   {"cluster": "lab-ndb", "node_id": "2", "pin": "before-upgrade"},
                   [sum(PHASES_76.values())])
    promtool_test(tmp_path, [*t.series, pinned], [
        firing("NdbRestartTimeAbovePinned", t.completions[0] + WINDOW, [NODE] if fires else None)])


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


# -- other NDB alerts -------------------------------------------------------------------------
def test_ndb_node_lcp_redo_cpu_transporter_exporter_alerts(tmp_path) -> None:
    n = 60 * 60 // STEP  # one hour of samples
    half = n // 2
    node2, node3 = {**NDB, "node_id": "2"}, {**NDB, "node_id": "3"}
    redo = {"log_type": "REDO", "log_id": "0"}
    ldm = {"thread_name": "ldm"}
    series = [
        # node 3 stops at half time
        const("ndb_node_status", {**node2, "status": "STARTED"}, [1] * n),
        const("ndb_node_status", {**node3, "status": "STARTED"}, [1] * half + [0] * (n - half)),
        # LCP id advances for the first half, then stays while writes go on
        const("ndb_lcp_id", NDB, [min(i, half - 24) // 60 for i in range(n)]),
        const("ndb_counters_total", {**node2, "block_name": "DBTC", "counter_name": "WRITES"},
              [i * 100 for i in range(n)]),
        # REDO part 1 of node 2 fills from 50% to 95%
        const("ndb_log_space_used_bytes", {**node2, **redo, "log_part": "1"},
              [50 + 45 * i // n for i in range(n)]),
        const("ndb_log_space_total_bytes", {**node2, **redo, "log_part": "1"}, [100] * n),
        const("ndb_log_space_used_bytes", {**node2, **redo, "log_part": "0"}, [10] * n),
        const("ndb_log_space_total_bytes", {**node2, **redo, "log_part": "0"}, [100] * n),
        # one LDM thread of node 2 saturates in the second half; node 3's stays at 50%
        const("ndb_thread_cpu_percent", {**node2, **ldm, "thr_no": "1", "mode": "os_user"},
              [40] * half + [85] * (n - half)),
        const("ndb_thread_cpu_percent", {**node2, **ldm, "thr_no": "1", "mode": "os_system"},
              [5] * half + [10] * (n - half)),
        const("ndb_thread_cpu_percent", {**node3, **ldm, "thr_no": "1", "mode": "os_user"},
              [50] * n),
        const("ndb_transporter_overloaded", {**node2, "remote_node_id": "3"},
              [0] * half + [1] * (n - half)),
        const("ndb_transporter_overloads_total", {**node2, "remote_node_id": "3"}, [0] * n),
        const("up", NDB, [1] * n),
        const("ndb_up", NDB, [1] * (n - 60) + [0] * 60),
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
        ("NdbExporterDown", [NDB]),
        ("NdbExporterCollectorFailing", [{**NDB, "collector": "cpustat"}]),
    ]:
        checks.append(firing(alert, early, None))
        checks.append(firing(alert, late, labels))
    promtool_test(tmp_path, series, checks)


# -- Galera -----------------------------------------------------------------------------------
def test_galera_down_node_via_mysql_up_and_cluster_size(tmp_path) -> None:
    """A killed node: its exporter says mysql_up 0 and its wsrep series vanish; the others
    see a cluster of 2. After it rejoins, both alerts resolve."""
    n, kill, back = 60, 10, 40
    series = []
    for i in (1, 2, 3):
        lab = {**GALERA, "node": f"node{i}", "instance": f"127.0.0.1:{i}"}
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
    node3 = {**GALERA, "node": "node3", "instance": "127.0.0.1:3"}
    promtool_test(tmp_path, series, [
        firing("GaleraNodeNotReady", (kill - 1) * STEP, None),
        firing("GaleraNodeNotReady", (kill + 8) * STEP, [node3]),
        firing("GaleraClusterSizeReduced", (kill + 5) * STEP, [{"cluster": "lab-galera"}]),
        firing("GaleraClusterSizeReduced", (back + 5) * STEP, None),
        firing("GaleraNodeNotReady", (back + 5) * STEP, None),
    ])


def test_galera_donor_is_not_out_of_sync_but_a_joiner_is(tmp_path) -> None:
    n = 120
    donor = {**GALERA, "node": "node1", "instance": "127.0.0.1:1"}
    joiner = {**GALERA, "node": "node3", "instance": "127.0.0.1:3"}
    series = [const("mysql_global_status_wsrep_local_state", donor, [4] * 10 + [2] * (n - 10)),
              const("mysql_global_status_wsrep_local_state", joiner, [4] * 10 + [1] * (n - 10))]
    promtool_test(tmp_path, series, [
        firing("GaleraNodeOutOfSync", 3 * 60, None),  # not yet 5 minutes
        firing("GaleraNodeOutOfSync", (n - 1) * STEP, [{**joiner}]),
    ])


def test_galera_flow_control_and_recoveries(tmp_path) -> None:
    n = 12 * 60 // STEP
    a = {**GALERA, "node": "node2", "instance": "127.0.0.1:2"}
    # paused 0.5 s per second from minute 2 on
    paused = [0.0] * 24 + [0.5e9 * STEP * k for k in range(1, n - 24 + 1)]
    # node3 rejoined by SST (its second SYNCED) at t=300s and it took 4000 s; node2's first
    # join by SST (one SYNCED only) is not "an SST where an IST was expected"
    series = [
        const("mysql_global_status_wsrep_flow_control_paused_ns", a, paused),
        const("galera_recovery_last_end_timestamp_seconds",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync", "donor": "node1"},
              [None] * 60 + [300] * (n - 60)),
        const("galera_recovery_last_duration_seconds",
              {**TRACKER, "node": "node3", "kind": "sst", "method": "rsync", "donor": "node1"},
              [None] * 60 + [4000] * (n - 60)),
        const("galera_state_transitions_total",
              {**TRACKER, "node": "node3", "from": "JOINED", "to": "SYNCED"},
              [1] * 60 + [2] * (n - 60)),
        const("galera_recovery_last_end_timestamp_seconds",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync", "donor": "node1"},
              [300] * n),
        const("galera_recovery_last_duration_seconds",
              {**TRACKER, "node": "node2", "kind": "sst", "method": "rsync", "donor": "node1"},
              [20] * n),
        const("galera_state_transitions_total",
              {**TRACKER, "node": "node2", "from": "JOINED", "to": "SYNCED"}, [1] * n),
    ]
    n3 = {"cluster": "lab-galera", "node": "node3", "kind": "sst"}
    promtool_test(tmp_path, series, [
        firing("GaleraFlowControlHigh", 60, None),
        firing("GaleraFlowControlHigh", (n - 1) * STEP, [{"cluster": "lab-galera",
                                                          "node": "node2"}]),
        firing("GaleraRecoveryUsedSST", 250, None),
        firing("GaleraRecoveryUsedSST", 400, [n3]),
        firing("GaleraRecoveryUsedSST", 950, None),  # more than 10 minutes after
        firing("GaleraRecoverySlow", 250, None),
        firing("GaleraRecoverySlow", 400, [{**TRACKER, "node": "node3", "kind": "sst",
                                            "method": "rsync", "donor": "node1"}]),
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
                    {"experiment": "fk", "variant": "fk2", "baseline": "nofk", "pin": "before"},
                    [pinned] + [None] * (n - 1))]
    expect = [{"cluster": "lab-galera", "engine": "galera", "experiment": "fk",
               "variant": "fk2", "baseline": "nofk"}] if fires else None
    promtool_test(tmp_path, series, [firing("ExperimentOverheadChanged", (n - 1) * STEP, expect)])


def test_loadgen_saturated(tmp_path) -> None:
    n = 40
    lab = {**LOADGEN, "experiment": "fk"}
    series = [const("loadgen_saturated", lab, [0] * 10 + [1] * (n - 10))]
    out = {k: v for k, v in lab.items() if k not in ("job", "instance")}
    promtool_test(tmp_path, series, [firing("LoadgenSaturated", 60, None),
                                     firing("LoadgenSaturated", (n - 1) * STEP, [out])])
