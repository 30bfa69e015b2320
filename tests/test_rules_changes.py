"""promtool scenarios of the rules that follow changes: a restart slower after an upgrade
names the upgrade, and its first restarts are judged against the version before until the
new version has restarts of its own (rules/ndb_restart_versions.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from rules_scenarios import (
    NDB,
    PHASES_75,
    PHASES_76,
    RULE_FILES,
    STEP,
    const,
    firing,
    metric,
    promtool_test,
    restart_timeline,
    rule,
    total,
)

NODE = {"cluster": "lab-ndb", "node_id": "2", "simulated": "true"}
OLD, NEW = "mysql-8.0.40 ndb-8.0.40", "mysql-8.4.3 ndb-8.4.3"
WINDOW = 15  # seconds after a completion at which a verdict is read
INFO = "cluster_node:ndb_restart_baseline_version:info"

pytestmark = pytest.mark.tools("promtool")


def upgrade_timeline() -> tuple[list[dict], list[int], int]:
    """Three 7.6-shaped restarts on OLD, then the node restarts onto NEW with the 7.5
    shape four times (the simulator's profiles: field facts 6m49s and 19m11s). The
    exporter's ndb_node_info names the version the node runs (none while it restarts, as
    before start phase 9 it has no processes row); the change detector's series say when
    the version changed. Returns the series, the completion times and the upgrade's time."""
    restarts = [dict(PHASES_76)] * 3 + [dict(PHASES_75)] * 4
    t = restart_timeline(restarts)
    slot = 4 + 72  # running + idle steps of restart_timeline
    steps = len(t.series[0]["values"].split())
    upgrade_step = 3 * slot  # the fourth restart begins: the node comes back on NEW
    running = {i * slot + k for i in range(len(restarts)) for k in range(4)}
    info = {**NDB, "node_id": "2", "type": "NDB", "hostname": "127.0.0.1"}
    series = list(t.series)
    for version, steps_on in ((OLD, range(0, upgrade_step)), (NEW, range(upgrade_step, steps))):
        on = set(steps_on) - running
        series.append(const("ndb_node_info", {**info, "version": version},
                            [1.0 if i in on else None for i in range(steps)]))
    up_at = t.completions[3]  # the detector sees the new version once the node is back
    change = {"job": "clusterscope_changes", "cluster": "lab-ndb", "node": "2",
              "kind": "ndb_version", "name": "version", "simulated": "true"}
    series.append(const("clusterscope_change_last_timestamp_seconds", change,
                        [float(up_at) if i * STEP >= up_at else None for i in range(steps)]))
    return series, t.completions, up_at


def _info(at: int, baseline: str, value: int) -> dict:
    labels = {**NODE, "version": NEW, "baseline_version": baseline}
    return {"expr": INFO, "eval_time": f"{at}s",
            "exp_samples": [{"labels": metric(INFO, labels), "value": value}]}


def test_an_upgrades_first_restarts_are_judged_against_the_version_before(tmp_path) -> None:
    series, done, _ = upgrade_timeline()
    slower = [{**NODE, "phase": "wait_lcp_for_restart"}]
    promtool_test(tmp_path, series, [
        firing("NdbRestartTimeRegressed", done[2] + WINDOW, None),
        # the first three restarts on NEW: slower than OLD's, and OLD is their baseline
        *[firing("NdbRestartTimeRegressed", done[k] + WINDOW, slower) for k in (3, 4, 5)],
        *[_info(done[k] + WINDOW, OLD, done[k]) for k in (3, 4, 5)],
        # the fourth has three earlier restarts on NEW: the baseline re-anchors to them
        _info(done[6] + WINDOW, NEW, done[6]),
        firing("NdbRestartTimeRegressed", done[6] + WINDOW, None),
    ])


def test_the_regression_alert_names_the_upgrade_and_the_version_before(tmp_path) -> None:
    """The alert's description, expanded by promtool from the rule file's own template
    (the same text vmalert expands), at the first restart on the new version."""
    series, done, up_at = upgrade_timeline()
    alert = rule("NdbRestartTimeRegressed")
    extra = tmp_path / "described.yml"
    extra.write_text(yaml.safe_dump({"groups": [{"name": "described", "rules": [{
        "alert": "Described", "expr": alert["expr"],
        "annotations": {"description": alert["annotations"]["description"]}}]}]}))
    at = done[3] + WINDOW
    ratio = total(PHASES_75) / total(PHASES_76)
    when = "1970-01-01 00:{:02d}:{:02d} +0000 UTC".format(*divmod(up_at, 60))
    want = (f"The latest completed restart of data node 2 in cluster lab-ndb took {ratio:.2f}"
            f" times the median of the earlier restarts on the same version (the node's own"
            f" when it has 3, else the cluster's; while the new version has fewer: the restarts"
            f" on the version before; more than 1.75x and more than 120 s longer). The phase"
            f" that grew most against its own median is wait_lcp_for_restart. It ran {NEW} and"
            f" is judged against the restarts on {OLD}, the version before (too few restarts"
            f" on the new one yet). NDB changes before it (the last 1d): version (ndb_version)"
            f" at {when}; `clusterscope changes` shows from what to what.")
    spec = {"rule_files": [str(f) for f in [*RULE_FILES, extra]],
            "evaluation_interval": f"{STEP}s",
            "tests": [{"interval": f"{STEP}s", "input_series": series,
                       "alert_rule_test": [{"eval_time": f"{at}s", "alertname": "Described",
                                            "exp_alerts": [{"exp_labels": {
                                                **NODE, "phase": "wait_lcp_for_restart"},
                                                "exp_annotations": {"description": want}}]}]}]}
    f = tmp_path / "test.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


def test_without_versions_the_baseline_is_version_blind(tmp_path: Path) -> None:
    """An exporter that serves no ndb_node_info (no ndbinfo.processes before 7.5.7): the
    verdict is the one it always was, and no version is claimed."""
    t = restart_timeline([dict(PHASES_76)] * 3 + [dict(PHASES_75)])
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}]),
        {"expr": INFO, "eval_time": f"{t.completions[-1] + WINDOW}s", "exp_samples": []}])


EFFECT = {"cluster": "lab-galera", "quantity": "loadgen_tps", "change_kind": "variable",
          "change_name": "innodb_flush_log_at_trx_commit", "experiment": "fk",
          "variant": "fk2"}


def test_a_changes_significant_effect_is_notified_with_its_interval(tmp_path) -> None:
    """`clusterscope changes --notify` writes one sample per row at the end of the period
    after; a row whose interval excludes zero fires the info alert (held an hour), one
    without a significant change does not."""
    def one(name: str, labels: dict, value: float) -> dict:
        return const(name, labels, [None] * 4 + [value] + [None] * 10)

    worse = {**EFFECT, "verdict": "worse"}
    same = {**EFFECT, "variant": "nofk", "verdict": "no significant change"}
    series = [one("clusterscope_change_effect_ratio", worse, -0.54),
              one("clusterscope_change_effect_lower_ratio", worse, -0.68),
              one("clusterscope_change_effect_upper_ratio", worse, -0.4),
              one("clusterscope_change_effect_ratio", same, -0.01)]
    promtool_test(tmp_path, series, [firing("ChangeEffectSignificant", 40, [worse])])
    alert = rule("ChangeEffectSignificant")
    extra = tmp_path / "described.yml"
    extra.write_text(yaml.safe_dump({"groups": [{"name": "described", "rules": [{
        "alert": "Described", "expr": alert["expr"],
        "annotations": {k: alert["annotations"][k] for k in ("summary", "description")}}]}]}))
    want = ("The variable change of innodb_flush_log_at_trx_commit on lab-galera, compared on"
            " its own (the period before its first step against the period after its last"
            " step and a settle window), moved loadgen_tps fk fk2 by -54% (after - before,"
            " relative to before; percentage points for an overhead), 95% interval -68% to"
            " -40%: worse. `clusterscope changes --cluster lab-galera` has the change (from"
            " what to what, where, when) and its whole comparison.")
    spec = {"rule_files": [str(f) for f in [*RULE_FILES, extra]],
            "evaluation_interval": f"{STEP}s",
            "tests": [{"interval": f"{STEP}s", "input_series": series,
                       "alert_rule_test": [{"eval_time": "40s", "alertname": "Described",
                                            "exp_alerts": [{"exp_labels": worse,
                                                            "exp_annotations": {
                "summary": "innodb_flush_log_at_trx_commit (variable) on lab-galera:"
                           " loadgen_tps worse by -54%", "description": want}}]}]}]}
    f = tmp_path / "test.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
