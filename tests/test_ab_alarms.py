"""The change alert's replay: the Python replica of ExperimentOverheadChanged fires exactly
when promtool fires the generated rule on the same counters, and the replay counts false
alarms and detection delays right on series with a known step."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
import yaml
from rules_scenarios import LOADGEN, metric

from clusterscope.bench import ab_alarms
from clusterscope.bench import alarm_replica as replica
from clusterscope.bench.alarm_vmalert import NAMES
from clusterscope.rules.loadgen import change_expr, period_records

COMPARISON = {**LOADGEN, "experiment": "fk", "variant": "fk2", "baseline": "nofk"}
KEY = {k: COMPARISON[k] for k in ("cluster", "engine", "experiment", "variant", "baseline")}


def _units(seed: int, hours: float, sd: float, step_at: float | None = None,
           step: float = 0.0) -> list[tuple[float, float, float]]:
    """Units at irregular times: (second, baseline, variant throughput), the baseline
    around 1000 rows/s varying by 20 %, the variant's overhead 10 % with noise `sd` (a
    ratio), plus `step` from step_at."""
    rng = random.Random(seed)
    out, t = [], 7.0
    while t < hours * 3600:
        b = 1000.0 * max(0.05, rng.gauss(1.0, 0.2))
        x = rng.gauss(0.1, sd) + (step if step_at is not None and t >= step_at else 0.0)
        out.append((t, b, b * (1.0 - x)))
        t += rng.uniform(8, 30)
    return out


def _promtool(tmp_path: Path, lc: dict, counters: replica.Counters, scrape: int,
              interval: int, checks: dict[int, bool], pinned: tuple | None = None) -> None:
    """promtool test rules of the generated records and alert (settings `lc`) on these
    counters: at each time in `checks`, the alert firing (True) or not."""
    w = lc["overhead_window"]
    rules = [{"record": k, "expr": v} for k, v in period_records('job="loadgen"', w).items()]
    rules.append({"alert": "ExperimentOverheadChanged", "expr": change_expr(lc),
                  "for": lc["overhead_change_for"], "labels": {"severity": "info"}})
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(
        {"groups": [{"name": "experiments", "interval": f"{interval}s", "rules": rules}]}))
    series = [{"series": metric(name, COMPARISON),
               "values": " ".join(repr(v) for v in counters.cols[col])} for col, name in NAMES]
    if pinned:
        n, mean, se = pinned
        for name, v in (("clusterscope_pinned_overhead_units", n),
                        ("clusterscope_pinned_overhead_ratio", mean),
                        ("clusterscope_pinned_overhead_se_ratio", se)):
            series.append({"series": metric(name, {**KEY, "pin": "p",
                                                   "estimator": "ratio-of-means"}),
                           "values": repr(v)})
        series.append({"series": metric("clusterscope_pin_created_timestamp_seconds",
                                        {"pin": "p"}), "values": "0"})
    alerts = [{"alertname": "ExperimentOverheadChanged", "eval_time": f"{t}s",
               "exp_alerts": [{"exp_labels": {**KEY, "severity": "info"}}] if fire else []}
              for t, fire in sorted(checks.items())]
    spec = {"rule_files": [str(tmp_path / "rules.yml")], "evaluation_interval": f"{interval}s",
            "tests": [{"interval": f"{scrape}s", "input_series": series,
                       "alert_rule_test": alerts}]}
    (tmp_path / "test.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run(["promtool", "test", "rules", str(tmp_path / "test.yml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


def _around_changes(states: dict[int, bool], every: int) -> dict[int, bool]:
    """Each evaluation next to a change of state, and every `every`-th other one."""
    times = sorted(states)
    keep = {t for i, t in enumerate(times) if i % every == 0}
    for a, b in zip(times, times[1:], strict=False):
        if states[a] != states[b]:
            keep |= {a, b}
    return {t: states[t] for t in sorted(keep)}


@pytest.mark.tools("promtool")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replica_fires_when_promtool_fires_against_the_day_old_period(tmp_path, seed) -> None:
    """Short settings (10 min periods, 1 h offset, for 2 m) so that promtool runs fast: a
    step of 5 points halfway, noise 3 points per unit."""
    lc = {"overhead_window": "10m", "overhead_z": 3.0, "overhead_change_for": "2m",
          "overhead_min_units": 5, "overhead_pinned_lookback": "400d",
          "overhead_rolling_offset": "1h"}
    p = replica.RuleParams(window=600, z=3.0, hold=120, min_units=5, offset=3600,
                           interval=30, scrape=15)
    end = 3 * 3600
    counters = replica.scrape(_units(seed, 3, 0.03, step_at=2 * 3600, step=0.05), end, 15)
    states = replica.states(counters, p, 0, end)
    assert any(states.values()) and not all(states.values())
    _promtool(tmp_path, lc, counters, 15, 30, _around_changes(states, 20))


@pytest.mark.tools("promtool")
def test_replica_fires_when_promtool_fires_against_a_pin(tmp_path) -> None:
    """The committed settings, a pin (mean, SE, units of an hour) and a 5-point step."""
    from clusterscope.rules.rules_config import load_config
    lc = load_config()["loadgen"]
    p = replica.RuleParams.from_config(lc, interval=60, scrape=15)
    end = 4 * 3600
    counters = replica.scrape(_units(7, 4, 0.03, step_at=2 * 3600, step=0.05), end, 15)
    pinned = replica.period(replica.scrape(_units(8, 1, 0.03), 3600, 15), 3600, 3600)
    states = replica.states(counters, p, 0, end, pinned=pinned)
    assert any(states.values())
    _promtool(tmp_path, lc, counters, 15, 60, _around_changes(states, 15), pinned)


def test_false_alarms_and_detection_delay_on_a_known_step() -> None:
    p = replica.RuleParams(window=3600, z=3.5, hold=900, min_units=10, offset=86400,
                           interval=60, scrape=15)
    # alerts count from when the reference period is full: one that began earlier does not
    assert ab_alarms.false_alarms([(10, 20), (100, 200), (300, 300)], start=50) == 2
    quiet = replica.scrape(_units(3, 50, 0.03), 50 * 3600, 15)
    assert ab_alarms.false_alarms(replica.firing(quiet, p, 0, 50 * 3600), start=25 * 3600) == 0
    t0 = 30 * 3600
    stepped = replica.scrape(_units(3, 50, 0.03, step_at=t0, step=0.05), 50 * 3600, 15)
    delay = ab_alarms.detection_delay(replica.firing(stepped, p, 0, 50 * 3600), t0)
    # noise 3 points per unit, ~190 units an hour: the hour after the step holds it fully
    # after 1 h, and |z| crosses 3.5 well before; then it must hold 15 minutes
    assert 900 <= delay <= 3600 + 900
    assert ab_alarms.detection_delay([(t0 - 600, t0 - 60)], t0) is None
    assert ab_alarms.detection_delay([(t0 - 600, t0 + 60), (t0 + 900, t0 + 999)], t0) == 900


@pytest.mark.tools("vmalert", "victoria-metrics")
def test_vmalert_replaying_the_committed_rule_fires_where_the_replica_does() -> None:
    """The deployed evaluator: vmalert (the version compose pins) replays rules/loadgen.yml
    over counters imported into VictoriaMetrics. Its firing evaluations are the replica's,
    a stationary comparison and one with a 5-point step, though VictoriaMetrics' increase()
    does not extrapolate as Prometheus' does."""
    import os

    from clusterscope.bench import alarm_vmalert
    from clusterscope.rules.rules_config import load_config
    p = replica.RuleParams.from_config(load_config()["loadgen"])
    end = 30 * 3600
    series = {"stepped": replica.scrape(_units(5, 30, 0.03, step_at=26 * 3600, step=0.05),
                                        end, 15),
              "flat": replica.scrape(_units(6, 30, 0.03), end, 15)}
    got = alarm_vmalert.replay(series, 86400, end,
                               int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")),
                               # 4 s (twice vmalert's remote-write flush) let the alert
                               # read no records at a load average of 15 on 2 cores
                               rules_delay=8)
    for name, c in series.items():
        mine = [t for t, fire in replica.states(c, p, 86400, end).items() if fire]
        assert got.get(name, []) == mine, name
    assert got["stepped"] and not got.get("flat")


@pytest.mark.parametrize(("rho", "low", "high"), [(0.0, 0.8, 1.25), (0.6, 2.0, 8.0)])
def test_the_hourly_z_shows_what_the_iid_standard_error_misses(rho, low, high) -> None:
    """The rule's SE takes a period's units as independent. On replayed units that are,
    the hourly z against the day before has a mean square near 1; on units whose overheads
    follow each other (AR(1), rho 0.6: a mean's variance (1 + rho) / (1 - rho) = 4 times
    the i.i.d. one) it is several times 1, the shortfall the bench reports."""
    rng = random.Random(int(rho * 10) + 1)
    pairs, x = [], 0.0
    for _ in range(4000):
        x = rho * x + rng.gauss(0.0, 0.05)
        b = 1000.0 * max(0.1, rng.gauss(1.0, 0.2))
        pairs.append((b, b * (0.9 - x)))
    p = replica.RuleParams()
    alone = ab_alarms.Schedule(turn=3600, busy=3600, per_turn=200)
    plan = ab_alarms.AlarmPlan(weeks=1, block=40)
    _, _, zs = ab_alarms._false_alarms(pairs, alone, p, plan, False, random.Random(5))
    assert len(zs) == 7 * 24
    mean_square = sum(z * z for z in zs) / len(zs)
    assert low <= mean_square <= high, mean_square
