"""The calibration's judgement of intervals, on units of known law: it passes honest
intervals, and it fails them when the units are autocorrelated or the truth is off, so a
bad interval cannot pass it."""

from __future__ import annotations

import json
import random

import pytest
from clusterscope_loadgen.estimators import Unit

from clusterscope.bench import ab_calibration
from clusterscope.bench.ab_calibration import autocorrelation, judge, segments


def _units(n: int, seed: int, rho: float = 0.0, level: float = 0.0) -> list[Unit]:
    """Units whose overhead is `level` plus AR(1) noise of 3 points (lag-1 `rho`)."""
    rng = random.Random(seed)
    e, out = 0.0, []
    for i in range(n):
        e = rho * e + (1 - rho * rho) ** 0.5 * rng.gauss(0, 0.03)
        out.append(Unit(i + 1, 1000.0, 1000.0 * (1 - level - e)))
    return out


def test_honest_intervals_pass() -> None:
    """Independent normal units: the 95 % intervals' miss rate is consistent with 5 % and
    var(z) within its band. (Whether the upper bound also clears 10 % is chance: 12 misses
    in 200 do not, which a calibrated interval gives 30 % of the time; 300 runs: 12 %.)"""
    j = judge(_units(800, 1), 4, 0.0)
    assert j["runs"] == 200 and j["miss_ci"][0] <= 0.05 <= j["miss_ci"][1], j
    lo, hi = j["var_z_band"]
    assert lo <= j["var_z"] <= hi, j


def test_autocorrelated_units_fail_the_calibration() -> None:
    """Runs of 16 units that drift together: the interval assumes independent units, so
    it excludes 0 too often and var(z) leaves its band."""
    units = _units(3200, 2, rho=0.7)
    assert autocorrelation([u.overhead for u in units], 1)[0] > 0.6
    j = judge(units, 16, 0.0)
    assert j["miss_ci"][0] > 0.10 and j["var_z"] > j["var_z_band"][1], j


def test_a_truth_the_units_do_not_estimate_is_not_covered() -> None:
    """An estimate biased by 3 points (what a design that measures another quantity
    gives): its intervals cover the true 10 % far less than 90 % of the time."""
    j = judge(_units(400, 3, level=0.13), 4, 0.10)
    assert 1 - j["miss_ci"][1] < 0.9 or j["miss"] / j["runs"] > 0.5, j


def test_segments_do_not_overlap_and_drop_a_short_tail() -> None:
    units = _units(10, 4)
    cut = segments(units, 4)
    assert [[u.seq for u in s] for s in cut] == [[1, 2, 3, 4], [5, 6, 7, 8]]


def test_one_estimand_calibrates_only_the_design_that_reads_it() -> None:
    # the A/A of the default design alone: half the machine time for its 200 runs
    assert ab_calibration.chosen("whole_workload") == {"whole_workload": "timesliced"}
    assert set(ab_calibration.chosen(None)) == {"whole_workload", "mixed_statement"}
    with pytest.raises(ValueError, match="known: whole_workload, mixed_statement"):
        ab_calibration.chosen("whole")
    with pytest.raises(ValueError, match="give one of them"):  # before any lab starts
        ab_calibration.run(aa_runs=10, coverage_only=True)


def test_a_recording_is_judged_again_without_a_lab(tmp_path) -> None:
    """`--replay FILE`: the recorded A/A units judged by today's default estimator; a file
    that is not a recording is named, not a traceback."""
    rng = random.Random(3)
    rows = [(float(i), 1000.0 * (1 + rng.gauss(0, 0.1)), 1000.0 * (1 + rng.gauss(0, 0.1)))
            for i in range(400)]
    plan = ab_calibration.CalPlan(aa_units=400)
    rec = tmp_path / "units.json"
    rec.write_text(json.dumps({"plan": plan.__dict__, "costs": {}, "aa": {
        "designs": {"whole_workload": "timesliced"}, "whole_workload": rows,
        "whole_workload_invalid_windows": 0}}))
    out = ab_calibration.run(replay_file=str(rec))
    assert out["replayed"] and out["aa_runs"] == 100 and out["estimator"] == "ratio-of-means"
    assert out["aa_false_positive_ratio"] <= 0.12  # honest intervals on independent units
    for bad in ("{}", json.dumps({"plan": plan.__dict__, "aa": {}, "costs": {}}), "[1"):
        rec.write_text(bad)
        with pytest.raises(ValueError, match="units.json: not a calibration recording"):
            ab_calibration.run(replay_file=str(rec))
