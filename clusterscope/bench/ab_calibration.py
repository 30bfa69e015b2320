"""`clusterscope bench loadgen-calibration`: a calibration of the loadgen's intervals that
can fail, on the lab's Galera.

- A/A: two different tables of the same DDL (the inject experiment's aa_b and aa_v, so
  whatever tells two tables apart - size, page splits, cache residency - can show), under
  the whole-workload and the mixed-statement design. Each design's units are recorded in
  one long run and cut into non-overlapping calibration runs of `segment` units; each run's
  interval, by the loadgen's default estimator, either excludes 0 (a false positive) or not.
  The rate comes with its exact (Clopper-Pearson) 95 % interval, and var(z) over the runs
  with the band it keeps when the intervals are honest (z through the t distribution's
  probability transform, so that it is N(0, 1) under the null at any run length).
- Coverage of injected server-side costs (sleep, CPU, a hot row, 4 KiB more per row
  image): each design's runs against the truth of long separate runs of the whole workload,
  measured in turns with them.

The recorded units go to CLUSTERSCOPE_BENCH_RECORD (default
~/.cache/clusterscope/bench/ab-units.json): `clusterscope bench ab-alarms` replays them.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist, fmean, stdev

from clusterscope_loadgen import config, designs, estimators
from clusterscope_loadgen.estimators import Unit
from clusterscope_loadgen.runner import Runner
from clusterscope_loadgen.stats import Estimate, Window, paired
from clusterscope_loadgen.target import Target

from clusterscope.bench.ab_validity import MECHANISMS, MECHANISMS_CONFIG, estimand_designs
from clusterscope.bench.loadgen_ab import galera
from clusterscope.inference import clopper_pearson, variance_band

RECORD = Path(os.environ.get("CLUSTERSCOPE_BENCH_RECORD",
                             Path.home() / ".cache" / "clusterscope" / "bench" / "ab-units.json"))


@dataclass(frozen=True)
class CalPlan:
    aa_units: int = 1200  # A/A units per design: 300 runs of `segment` (a calibrated 5 %
    # rate clears a 10 % upper bound with 88 % chance at 300 runs, 70 % at 200)
    segment: int = 4
    long_segment: int = 16  # a second cut, for what autocorrelation does to longer runs
    cover_units: int = 120  # per mechanism and design: 30 runs of `segment`
    window: float = 3.0
    rows: int = 10_000
    threads: int = 4
    truth_window: float = 20.0
    chunk: int = 20  # units per turn of each design (and a truth A B / B A between turns)


QUICK_CAL = CalPlan(aa_units=12, segment=4, long_segment=8, cover_units=4, window=2.0,
                    truth_window=3.0, chunk=4)


def timed_units(runner: Runner, variant: str, baseline: str) -> list[tuple[float, Unit]]:
    """The runner's units of a comparison, each with the end time of its last window."""
    wins = [w for w in runner.windows if not w.warmup]
    ends: dict[int, float] = {}
    for w in wins:
        ends[w.seq] = max(ends.get(w.seq, 0.0), w.end)
    # with the slots: a time-sliced run's units are its half blocks, as the loadgen's own
    units = designs.units([Window(w.variant, w.seq, w.valid, w.throughput, w.p95, w.end,
                                  w.slots, w.k) for w in wins], variant, baseline)
    return [(u.at or ends[u.seq], u) for u in units]


def _z(e: Estimate) -> float:
    """The default estimator's test of "no change" on one run as a standard normal quantile:
    its two-sided p-value, signed by the estimate (N(0, 1) under the null when its intervals
    are honest, at any number of units)."""
    if not 0 < e.p_value <= 1 or math.isnan(e.mean):
        return math.nan
    z = NormalDist().inv_cdf(max(1 - e.p_value / 2, 0.5))
    return math.copysign(z, e.mean)


def segments(units: list[Unit], size: int) -> list[list[Unit]]:
    return [units[i:i + size] for i in range(0, len(units) - size + 1, size)]


def autocorrelation(x: list[float], lags: int = 5) -> list[float]:
    m = fmean(x)
    den = sum((v - m) ** 2 for v in x)
    return [round(sum((x[i] - m) * (x[i + k] - m) for i in range(len(x) - k)) / den, 3)
            if den else math.nan for k in range(1, lags + 1)]


def judge(units: list[Unit], size: int, truth: float) -> dict:
    """The runs cut from `units`: how many intervals (the default estimator's) miss the
    truth, with the exact interval of that rate, and var(z) against its band."""
    runs = segments(units, size)
    est = estimators.ESTIMATORS[estimators.DEFAULT]
    missed = usable = 0
    zs = []
    for run in runs:
        e = est(run)
        if math.isnan(e.low):
            continue
        usable += 1
        missed += not e.low <= truth <= e.high
        if truth == 0.0:
            zs.append(_z(e))
    out: dict = {"runs": usable, "units_per_run": size, "missed": missed}
    if usable:
        lo, hi = clopper_pearson(missed, usable)
        out |= {"miss_ratio": round(missed / usable, 4), "miss_ci": [round(lo, 4), round(hi, 4)]}
    zs = [z for z in zs if not math.isnan(z)]
    if len(zs) > 2:
        band = variance_band(len(zs))
        out |= {"var_z": round(stdev(zs) ** 2, 3), "var_z_band": [round(b, 2) for b in band]}
    return out


def _runner(exp: config.Experiment, targets: list[Target], variant: str, design: str,
            window: float, plan: CalPlan) -> Runner:
    return Runner(exp, "galera", targets, only=[variant], threads=plan.threads, window=window,
                  warmup=window, design=design, database=f"cs_bench_inject_{plan.rows}",
                  out=lambda s: None)


def _grow(runner: Runner, variant: str, baseline: str, more: int) -> None:
    """Run rounds until the runner holds `more` valid units more than now (or gives up
    after 3x the rounds that should take: a cluster that keeps invalidating windows)."""
    want = len(timed_units(runner, variant, baseline)) + more
    for _ in range(3):
        have = len(timed_units(runner, variant, baseline))
        if have >= want:
            return
        runner.run(rounds=want - have)


def chosen(estimand: str | None) -> dict[str, str]:
    """The estimands to calibrate and the design reading each: all, or only `estimand`."""
    which = estimand_designs()
    if estimand is None:
        return which
    if estimand not in which:
        raise ValueError(f"no design reads the estimand {estimand!r}; known: {', '.join(which)}")
    return {estimand: which[estimand]}


def record(targets: list[Target], exp: config.Experiment, variant: str, plan: CalPlan,
           total: int, truth: bool, which: dict[str, str]) -> dict:
    """The units of one comparison under each design of `which`, `total` each, in turns of
    `plan.chunk` units (and, with `truth`, one A B or B A of long separate runs between
    turns)."""
    baseline = next(v.baseline for v in exp.variants if v.name == variant)
    runners = {k: _runner(exp, targets, variant, d, plan.window, plan) for k, d in which.items()}
    long = _runner(exp, targets, variant, "windows", plan.truth_window, plan) if truth else None
    loads = []
    while min(len(timed_units(r, variant, baseline)) for r in runners.values()) < total:
        loads.append(os.getloadavg()[0])
        if long:
            long.run(rounds=1)
        for r in runners.values():
            _grow(r, variant, baseline, plan.chunk)
    out: dict = {"designs": which, "baseline": baseline, "variant": variant,
                 "load1": [round(min(loads), 1), round(max(loads), 1)]}
    for k, r in runners.items():
        tu = timed_units(r, variant, baseline)[:total]
        out[k] = [(t, u.baseline, u.variant) for t, u in tu]
        out[f"{k}_invalid_windows"] = sum(1 for w in r.windows if not w.valid)
    if long:
        # the truth is the long runs' throughput ratio (the default estimator's reading of
        # them), not the mean of their per-run ratios, which leans as noisy units do
        tl = timed_units(long, variant, baseline)
        e = estimators.ESTIMATORS[estimators.DEFAULT]([u for _, u in tl])
        out["truth"] = {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n,
                        "estimator": estimators.DEFAULT}
        out["truth_units"] = [(t, u.baseline, u.variant) for t, u in tl]
    return out


def _units(rows: list) -> list[Unit]:
    return [Unit(i, b, v) for i, (_, b, v) in enumerate(rows, 1)]


def _aa_report(rec: dict, plan: CalPlan) -> dict:
    out = {}
    for k in rec["designs"]:
        us = _units(rec[k])
        x = [u.overhead for u in us]
        whole = estimators.ESTIMATORS[estimators.DEFAULT](us)
        ratios = paired(x)  # what the mean of per-unit ratios reads from the same units
        out[k] = {"units": len(us), "mean_pct": round(100 * whole.mean, 2),
                  "mean_ci_pct": [round(100 * whole.low, 2), round(100 * whole.high, 2)],
                  "mean_of_unit_ratios_pct": round(100 * ratios.mean, 2),
                  "autocorrelation_lag1_5": autocorrelation(x),
                  "short_runs": judge(us, plan.segment, 0.0),
                  "long_runs": judge(us, plan.long_segment, 0.0),
                  "invalid_windows": rec[f"{k}_invalid_windows"]}
    return out


def _coverage_report(recs: dict[str, dict], plan: CalPlan) -> dict:
    out: dict = {}
    for k in next(iter(recs.values()))["designs"] if recs else ():
        missed = runs = 0
        for kind, rec in recs.items():
            j = judge(_units(rec[k]), plan.segment, rec["truth"]["mean"])
            missed, runs = missed + j["missed"], runs + j["runs"]
            out[f"{k}/{kind}"] = {"truth_pct": round(100 * rec["truth"]["mean"], 2),
                                  "runs": j["runs"], "covered": j["runs"] - j["missed"]}
        if runs:
            lo, hi = clopper_pearson(runs - missed, runs)
            out[f"{k}/all"] = {"runs": runs, "covered": runs - missed,
                               "coverage_ratio": round(1 - missed / runs, 4),
                               "coverage_ci": [round(lo, 4), round(hi, 4)]}
    return out


def replay(path: Path) -> dict:
    """The judgement of a recording (this bench's own, CLUSTERSCOPE_BENCH_RECORD) by today's
    default estimator, without a lab: the same units, judged again."""
    try:
        rec = json.loads(path.read_text())
        plan = CalPlan(**rec["plan"])
        aa, costs = rec["aa"], rec["costs"]
        first = next(iter((aa or next(iter(costs.values())))["designs"]))
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as exc:
        raise ValueError(f"{path}: not a calibration recording ({exc!r})") from None
    return report(aa, costs, plan, first, path, 0.0) | {"replayed": True}


def report(aa: dict, costs: dict, plan: CalPlan, first: str, path: Path,
           minutes: float) -> dict:
    aa_rep = _aa_report(aa, plan) if aa else {}
    cov = _coverage_report(costs, plan)
    whole = aa_rep[first]["short_runs"] if aa_rep else {}
    return {"estimator": estimators.DEFAULT, "plan": plan.__dict__,
            "aa": aa_rep, "coverage": cov,
            "aa_false_positive_estimand": first,
            "aa_false_positive_ratio": whole.get("miss_ratio"),
            "aa_false_positive_ci": whole.get("miss_ci"), "aa_runs": whole.get("runs"),
            "injected_cost_coverage_ratio": cov.get("whole_workload/all", {}).get(
                "coverage_ratio"),
            "coverage_measured": bool(costs), "aa_measured": bool(aa),
            "recorded": str(path), "minutes": minutes}


def run(quick: bool = False, aa_runs: int | None = None, estimand: str | None = None,
        coverage_only: bool = False, replay_file: str | None = None) -> dict:
    """`aa_runs`: only the A/A part, with this many runs per design (the injected costs'
    coverage is not measured then, and the output says so); `coverage_only`: only the
    injected costs' coverage. `estimand`: only the design that reads it (the A/A of the
    default design alone takes half the time)."""
    if replay_file:
        return replay(Path(replay_file))
    if aa_runs and coverage_only:
        raise ValueError("--aa-runs measures the A/A part alone, --coverage-only the rest:"
                         " give one of them")
    which = chosen(estimand)
    plan = QUICK_CAL if quick else CalPlan()
    if aa_runs:
        plan = replace(plan, aa_units=aa_runs * plan.segment)
    t0 = time.monotonic()
    base = config.experiment("inject", MECHANISMS_CONFIG)
    exp = replace(base, options={**base.options, "table_rows": plan.rows})
    with galera() as targets:
        aa = {} if coverage_only else record(targets, exp, "aa_v", plan, plan.aa_units,
                                             truth=False, which=which)
        costs = {} if aa_runs else {
            kind: record(targets, exp, variant, plan, plan.cover_units, truth=True, which=which)
            for kind, (variant, _) in MECHANISMS.items()}
    # a coverage-only run keeps the A/A recording that ab-alarms replays
    record_path = RECORD.with_suffix(".coverage.json") if coverage_only else RECORD
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_text(json.dumps({"plan": plan.__dict__, "aa": aa, "costs": costs}))
    return {"estimand_designs": which} | report(aa, costs, plan, next(iter(which)),
                                                record_path,
                                                round((time.monotonic() - t0) / 60, 1))
