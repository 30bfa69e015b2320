"""The loadgen's alerts under `promtool test rules`: ExperimentOverheadChanged compares
periods of the loadgen's unit counters (quiet on noise where the old interval-against-a-point
rule cried wolf, firing on a real step), and LoadgenSaturated."""

from __future__ import annotations

import pytest
import yaml
from clusterscope_loadgen.estimators import Unit, ratio_spread
from rules_scenarios import (
    LOADGEN,
    RULE_FILES,
    STEP,
    const,
    cycle_units,
    firing,
    promtool_test,
    unit_counters,
)

# -- experiments ------------------------------------------------------------------------------
# ExperimentOverheadChanged as generated until the change test compared periods: the current
# interval against a point (a pin, or the value a day ago), no `for:`
OLD_OVERHEAD_CHANGED = (
    "((max without (instance, job, target) (loadgen_overhead_ratio_lower{job=\"loadgen\"}) > on"
    " (cluster, engine, experiment, variant, baseline) group_left () (max without (pin)"
    " (last_over_time(clusterscope_pinned_overhead_ratio[400d]) and on (pin) topk(1,"
    " last_over_time(clusterscope_pin_created_timestamp_seconds[400d]))) or max without (pin)"
    " (last_over_time(clusterscope_pinned_overhead_ratio[400d])))) or (max without (instance,"
    " job, target) (loadgen_overhead_ratio_upper{job=\"loadgen\"}) < on (cluster, engine,"
    " experiment, variant, baseline) group_left () (max without (pin)"
    " (last_over_time(clusterscope_pinned_overhead_ratio[400d]) and on (pin) topk(1,"
    " last_over_time(clusterscope_pin_created_timestamp_seconds[400d]))) or max without (pin)"
    " (last_over_time(clusterscope_pinned_overhead_ratio[400d])))) or (max without (instance,"
    " job, target) (loadgen_overhead_ratio_lower{job=\"loadgen\"}) > on (cluster, engine,"
    " experiment, variant, baseline) group_left () max without (instance, job, target)"
    " (loadgen_overhead_ratio{job=\"loadgen\"} offset 1d)) or (max without (instance, job,"
    " target) (loadgen_overhead_ratio_upper{job=\"loadgen\"}) < on (cluster, engine,"
    " experiment, variant, baseline) group_left () max without (instance, job, target)"
    " (loadgen_overhead_ratio{job=\"loadgen\"} offset 1d))) and on (cluster, engine,"
    " experiment, variant, baseline) max without (instance, job, target)"
    " (loadgen_overhead_pairs{job=\"loadgen\"}) >= 5")
LOADGEN_RULES = [f for f in RULE_FILES if f.name == "loadgen.yml"]
MINUTE = 60  # these scenarios span hours: samples and evaluations every minute
FK2 = {**LOADGEN, "experiment": "fk", "variant": "fk2", "baseline": "nofk"}


def _comparison(labels: dict) -> dict:
    return {k: labels[k] for k in ("cluster", "engine", "experiment", "variant", "baseline")}


def _pin(labels: dict, seed: int, steps: int, shift: float = 0.0,
         estimator: str | None = "ratio-of-means") -> list[dict]:
    """A pin of an earlier hour of the same comparison: its ratio-of-means overhead, the
    SE the rule computes (i.i.d.) and units, as `clusterscope baseline pin` writes them;
    `shift` added to the overhead, `estimator` None: a pin from before pins named it."""
    units = [u for turn in cycle_units(seed, 1, 0.03) for u in turn]
    est = ratio_spread([Unit(i, b, v) for i, (_, b, v) in enumerate(units)], lag=0)
    key = {**_comparison(labels), "pin": "before"}
    if estimator:
        key["estimator"] = estimator
    return [const(name, key, [v] + [None] * (steps - 1))
            for name, v in (("clusterscope_pinned_overhead_ratio", est.mean + shift),
                            ("clusterscope_pinned_overhead_se_ratio", est.se),
                            ("clusterscope_pinned_overhead_units", est.n))] + [
        const("clusterscope_pin_created_timestamp_seconds", {"pin": "before"},
              [0] + [None] * (steps - 1))]


def _old_gauges(labels: dict, turns: list[list[tuple[float, float, float]]], steps: int
                ) -> tuple[list[dict], list[tuple[int, float, float, int]]]:
    """What the loadgen exported before: each turn (a fresh run) its mean-t estimate over
    its own units, held until the next turn. Also each step's (step, low, high, n)."""
    from clusterscope_loadgen.stats import paired
    estimates = []
    for turn in turns:
        e = paired([1 - v / b for _, b, v in turn])
        estimates.append((turn[-1][0], e))
    cols: dict[str, list[float | None]] = {k: [] for k in ("", "_lower", "_upper", "pairs")}
    held = []
    for k in range(steps):
        done = [e for t, e in estimates if t <= k * MINUTE]
        e = done[-1] if done else None
        for key, v in (("", e and e.mean), ("_lower", e and e.low), ("_upper", e and e.high),
                       ("pairs", e and e.n)):
            cols[key].append(v)
        held.append((k, e.low, e.high, e.n) if e else (k, 0.0, 0.0, 0))
    series = [const(f"loadgen_overhead_ratio{k}", labels, v) for k, v in cols.items()
              if k != "pairs"]
    series.append(const("loadgen_overhead_pairs", labels, cols["pairs"]))
    return series, held


def _alert(at: int, labels: list[dict] | None) -> dict:
    return firing("ExperimentOverheadChanged", at, labels)


@pytest.mark.tools("promtool")
def test_overhead_change_quiet_on_noise_where_the_old_rule_cried_wolf(tmp_path) -> None:
    """Six hours of a stationary overhead (3 points of noise per unit, the cycle's turns)
    against a pin of an earlier hour: the period test never fires; the old rule, interval
    against point without `for:`, fires on it."""
    steps = 6 * 60
    turns = cycle_units(11, 6, 0.03)
    units = [u for turn in turns for u in turn]
    pin = _pin(FK2, 12, steps)
    series = unit_counters(FK2, units, steps, MINUTE) + pin
    quiet = [_alert(k * MINUTE, None) for k in range(0, steps, 10)]
    promtool_test(tmp_path, series, quiet, files=LOADGEN_RULES, step=MINUTE)
    # the same units through the old rule: it fires at the first look whose interval
    # excludes the pinned mean
    old_series, held = _old_gauges(FK2, turns, steps)
    pinned = float(pin[0]["values"].split()[0])
    first = next(k for k, lo, hi, n in held if n >= 5 and (lo > pinned or hi < pinned))
    old = tmp_path / "old.yml"
    old.write_text(yaml.safe_dump({"groups": [{"name": "old", "rules": [
        {"alert": "ExperimentOverheadChanged", "expr": OLD_OVERHEAD_CHANGED,
         "labels": {"severity": "info"}}]}]}))
    promtool_test(tmp_path, old_series + pin, [_alert(first * MINUTE, [_comparison(FK2)])],
                  files=[old], step=MINUTE)


@pytest.mark.tools("promtool")
def test_overhead_change_fires_on_a_step_against_its_own_pin(tmp_path) -> None:
    """A 5-point step after three hours on the Galera loadgen fires within two hours; the
    NDB loadgen runs the same experiment and variant, stationary against its own pin, and
    stays quiet (matching on every comparison label: no many-to-many error)."""
    steps = 6 * 60
    ndb = {**FK2, "engine": "ndb", "cluster": "lab-ndb", "instance": "127.0.0.1:9"}
    stepped = [u for turn in cycle_units(21, 6, 0.03, step_at=3 * 3600, step=0.05)
               for u in turn]
    flat = [u for turn in cycle_units(22, 6, 0.03) for u in turn]
    series = (unit_counters(FK2, stepped, steps, MINUTE) + _pin(FK2, 23, steps)
              + unit_counters(ndb, flat, steps, MINUTE))
    ndb_pin = _pin(ndb, 24, steps)
    series += [s for s in ndb_pin if "pin_created" not in s["series"]]
    promtool_test(tmp_path, series, [
        _alert(3 * 3600 - MINUTE, None), _alert(5 * 3600, [_comparison(FK2)])],
        files=LOADGEN_RULES, step=MINUTE)


@pytest.mark.tools("promtool")
@pytest.mark.parametrize("estimator", [None, "ratio-of-means"])
def test_a_pin_of_the_mean_of_ratios_is_not_compared_with(tmp_path, estimator) -> None:
    """A pin taken when the records read the mean of the units' ratios has no `estimator`
    label; its overhead leant towards the variant (9 points on the lab's noisy units), so
    a stationary comparison would page against it. Without the label the alert ignores it
    (and, with no day-old period yet, stays quiet); the same pin labelled is compared
    with and fires."""
    steps = 3 * 60
    units = [u for turn in cycle_units(41, 3, 0.03) for u in turn]
    series = unit_counters(FK2, units, steps, MINUTE) + _pin(FK2, 42, steps, shift=-0.09,
                                                              estimator=estimator)
    if estimator:
        checks = [_alert(2 * 3600, [_comparison(FK2)])]
    else:
        checks = [_alert(k * MINUTE, None) for k in range(0, steps, 10)]
    promtool_test(tmp_path, series, checks, files=LOADGEN_RULES, step=MINUTE)


@pytest.mark.tools("promtool")
def test_overhead_change_against_the_day_before_without_a_pin(tmp_path) -> None:
    """No pin: each hour is compared with the same hour a day earlier. A stationary
    comparison stays quiet through the second day; one that steps 5 points at 25 h fires
    by 27 h."""
    steps = 28 * 60
    flat = {**FK2, "variant": "fk1_2w", "baseline": "nofk_2w"}
    stepped = [u for turn in cycle_units(31, 28, 0.03, step_at=25 * 3600, step=0.05)
               for u in turn]
    quiet = [u for turn in cycle_units(32, 28, 0.03) for u in turn]
    series = unit_counters(FK2, stepped, steps, MINUTE) + unit_counters(flat, quiet, steps,
                                                                        MINUTE)
    checks = [_alert(t, None) for t in range(24 * 3600 + 1800, 25 * 3600, 600)]
    checks.append(_alert(27 * 3600, [_comparison(FK2)]))
    promtool_test(tmp_path, series, checks, files=LOADGEN_RULES, step=MINUTE)


@pytest.mark.tools("promtool")
def test_loadgen_saturated(tmp_path) -> None:
    n = 40
    lab = {**LOADGEN, "experiment": "fk"}
    series = [const("loadgen_saturated", lab, [0] * 10 + [1] * (n - 10))]
    out = {k: v for k, v in lab.items() if k not in ("job", "instance")}
    promtool_test(tmp_path, series, [firing("LoadgenSaturated", 60, None),
                                     firing("LoadgenSaturated", (n - 1) * STEP, [out])])
