"""Overhead estimators over paired units, each with an interval and a detectable change.

A unit is what a design pairs (designs.py): a variant's throughput and its baseline's from
the same time-sliced half block, interleaved window, round or ABBA block. Every estimator
returns a `stats.Estimate` whose `mean` is its point estimate of the overhead
(1 - variant/baseline), with an interval at the confidence asked for that holds when
consecutive units are correlated (intervals.py):

- `ratio-of-means` (the default): 1 - sum(variant) / sum(baseline) throughput over the
  units, the whole period's throughput ratio, which is what "the same load with the
  feature and without it" means. Its SE is the delta method's: the Newey-West (HAC) SE of
  the linearised residuals (variant - R x baseline) / mean(baseline), its lag chosen from
  the data (Cochran, Sampling Techniques, 3rd ed., 6.4, the ratio estimator's variance).
- `mean-t`: the mean of the per-unit overheads with a Newey-West (HAC) t interval. The mean
  of ratios is not the ratio of means: with noisy units it leans towards the variant
  (E[v/b] > E[v]/E[b], Jensen), by about the baseline's squared coefficient of variation
  less the pair's covariance: -9 points in an A/A of the lab's Galera whose units varied
  by 34 % (docs/loadgen.md).
- `hodges-lehmann`: the median of the Walsh averages of the per-unit overheads, robust to a
  few units hit by a stall; its SE from a moving-block bootstrap.
- `median-ratio`: 1 - median(variant) / median(baseline) throughput; SE from a
  moving-block bootstrap.

Bootstraps use a fixed seed (the same units give the same interval) and blocks of lag + 1
units, the lag `intervals.bandwidth` picks; their SE takes the HAC's critical value. The
detectable change (`min_detectable`) is the smallest true overhead a test against 0 would
detect at 95% two-sided with 80% power, (c_0.975 + t_0.8) x SE, and
`min_detectable_difference` the same for a before/after difference between two periods
like this one (sqrt 2 x larger).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import fmean, median

from clusterscope_loadgen import intervals
from clusterscope_loadgen.stats import Estimate

CONFIDENCE = intervals.CONFIDENCE
MAX_UNITS = 1000  # the bootstraps' cost grows with the units; the newest are kept
HL_UNITS = 300  # Hodges-Lehmann is O(n^2) per resample
RESAMPLES = 1000
HL_RESAMPLES = 200


@dataclass(frozen=True)
class Unit:
    """One paired observation: throughputs (and p95 latencies) of a variant and its
    baseline from the same half block, window, round or block."""

    seq: int
    baseline: float
    variant: float
    baseline_p95: float = 0.0
    variant_p95: float = 0.0
    at: float = 0.0  # wall-clock seconds the unit ended
    part: int = 0  # the half block inside a time-sliced window

    @property
    def overhead(self) -> float:
        return 1.0 - self.variant / self.baseline

    @property
    def key(self) -> tuple[int, int]:
        """Names the unit within its run: a time-sliced round holds several."""
        return self.seq, self.part


def _usable(units: Sequence[Unit]) -> list[Unit]:
    return [u for u in units if u.baseline > 0]


def _none(n: int, mean: float = math.nan, confidence: float = CONFIDENCE) -> Estimate:
    return Estimate(mean, math.nan, math.nan, n, math.nan, confidence=confidence)


def from_spread(s: intervals.Spread, confidence: float = CONFIDENCE) -> Estimate:
    if s.n < 2 or not math.isfinite(s.se):
        return _none(s.n, s.mean, confidence)
    low, high = s.interval(confidence)
    return Estimate(s.mean, low, high, s.n, s.detectable(), s.detectable(difference=True),
                    confidence, s.p_value(), s.lag)


def mean_t(units: Sequence[Unit], confidence: float = CONFIDENCE) -> Estimate:
    return from_spread(intervals.hac_mean([u.overhead for u in _usable(units)]), confidence)


def ratio_spread(units: Sequence[Unit], lag: int | None = None) -> intervals.Spread:
    """The ratio-of-means overhead and its delta-method SE; `lag`: the Newey-West lag,
    chosen from the data unless given (0: the i.i.d. SE, what the change alert's rule
    computes from the unit counters)."""
    us = _usable(units)
    if not us:
        return intervals.Spread(math.nan, math.nan, 0, 0)
    mb = fmean(u.baseline for u in us)
    ratio = sum(u.variant for u in us) / sum(u.baseline for u in us)
    # the residuals sum to 0: their HAC SE is the ratio's (delta method)
    s = intervals.hac_mean([(u.variant - ratio * u.baseline) / mb for u in us], lag)
    return intervals.Spread(1.0 - ratio, s.se, s.n, s.lag, s.inflation)


def ratio_of_means(units: Sequence[Unit], confidence: float = CONFIDENCE,
                   lag: int | None = None) -> Estimate:
    spread = ratio_spread(units, lag)
    if spread.n == 0:
        return _none(0, confidence=confidence)
    return from_spread(spread, confidence)


def hodges_lehmann_point(d: Sequence[float]) -> float:
    n = len(d)
    return median((d[i] + d[j]) / 2.0 for i in range(n) for j in range(i, n))


def hodges_lehmann(units: Sequence[Unit], confidence: float = CONFIDENCE) -> Estimate:
    d = [u.overhead for u in _usable(units)][-HL_UNITS:]
    n = len(d)
    if n == 0:
        return _none(0, confidence=confidence)
    est = hodges_lehmann_point(d)
    if n < 6:  # a bootstrap of a handful of units says nothing
        return _none(n, est, confidence)
    spread = intervals.bootstrap_spread(d, hodges_lehmann_point, est, intervals.bandwidth(d),
                                        HL_RESAMPLES, seed=20240530 + n)
    return from_spread(spread, confidence)


def _median_ratio(sample: Sequence[Unit]) -> float:
    return 1.0 - median(u.variant for u in sample) / median(u.baseline for u in sample)


def median_ratio(units: Sequence[Unit], confidence: float = CONFIDENCE) -> Estimate:
    us = _usable(units)[-MAX_UNITS:]
    n = len(us)
    if n == 0:
        return _none(0, confidence=confidence)
    est = _median_ratio(us)
    if n < 6:
        return _none(n, est, confidence)
    spread = intervals.bootstrap_spread(us, _median_ratio, est,
                                        intervals.bandwidth([u.overhead for u in us]),
                                        RESAMPLES, seed=20240530 + n)
    return from_spread(spread, confidence)


def latency_ratio(units: Sequence[Unit]) -> Estimate:
    """variant p95 / baseline p95 over the units (above 1: the variant is slower)."""
    return from_spread(intervals.hac_mean([u.variant_p95 / u.baseline_p95 for u in units
                                           if u.baseline_p95 > 0 and u.variant_p95 > 0]))


def recent(units: Sequence[Unit], window: float, now: float) -> list[Unit]:
    """The units of the last `window` seconds before `now`: every exported estimate covers
    a sliding window, never the whole run (a week-old unit would damp today's change)."""
    return [u for u in units if u.at > now - window]


# ratio-of-means is the default: it estimates the whole period's throughput ratio without
# the mean of ratios' lean, and like mean-t it has an interval from 2 units (the always-on
# cycle's comparisons start with few); the bootstraps need 6.
DEFAULT = "ratio-of-means"
ESTIMATORS: dict[str, Callable[..., Estimate]] = {
    "ratio-of-means": ratio_of_means,
    "mean-t": mean_t,
    "hodges-lehmann": hodges_lehmann,
    "median-ratio": median_ratio,
}
