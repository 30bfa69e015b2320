"""Overhead estimators over paired units, each with a 95% interval and a detectable change.

A unit is what a design pairs (designs.py): a variant's throughput and its baseline's from
the same round, block or interleaved window. Every estimator returns a `stats.Estimate`
whose `mean` is the estimator's point estimate of the overhead (1 - variant/baseline):

- `mean-t`: mean of the per-unit overheads with a Student t interval (the loadgen's
  original estimator; `stats.paired`).
- `hodges-lehmann`: the median of the Walsh averages of the per-unit overheads, with the
  exact distribution-free interval from the Wilcoxon signed-rank statistic (normal
  approximation above 100 units). Robust to a few windows hit by a stall.
- `median-ratio`: 1 - median(variant) / median(baseline) throughput, with a paired
  percentile bootstrap interval (1000 resamples of the units, fixed seed: the same units
  give the same interval).

The detectable change is the smallest true overhead the run would detect at 95% two-sided
with 80% power: (t_0.975 + t_0.8) x the standard error. For `mean-t` that is the t formula
itself; for the others the standard error is read off the interval, as its mean half width
over t_0.975 (the width a t interval of that standard error would have).

Above MAX_UNITS units (a `--forever` run) the robust estimators use the newest MAX_UNITS:
their cost grows with n^2 (Walsh averages) and n x resamples (bootstrap).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist, median

from clusterscope_loadgen.stats import Estimate, paired, t_quantile

CONFIDENCE, POWER = 0.95, 0.80
MAX_UNITS = 1000
EXACT_UP_TO = 100
RESAMPLES = 1000


@dataclass(frozen=True)
class Unit:
    """One paired observation: throughputs (and p95 latencies) of a variant and its
    baseline from the same round, block or window."""

    seq: int
    baseline: float
    variant: float
    baseline_p95: float = 0.0
    variant_p95: float = 0.0

    @property
    def overhead(self) -> float:
        return 1.0 - self.variant / self.baseline


def _usable(units: Sequence[Unit]) -> list[Unit]:
    return [u for u in units if u.baseline > 0]


def detectable(low: float, high: float, n: int) -> float:
    """Detectable change from an interval's width (see the module docstring)."""
    if n < 2 or math.isnan(low) or math.isnan(high):
        return math.nan
    t_conf = t_quantile(0.5 + CONFIDENCE / 2.0, n - 1)
    se = (high - low) / 2.0 / t_conf
    return (t_conf + t_quantile(POWER, n - 1)) * se


def mean_t(units: Sequence[Unit]) -> Estimate:
    return paired([u.overhead for u in _usable(units)], CONFIDENCE, POWER)


def signed_rank_counts(n: int) -> list[int]:
    """counts[s] = number of subsets of {1..n} summing to s: the null distribution of the
    Wilcoxon signed-rank statistic T+ times 2^n."""
    counts = [1]
    for k in range(1, n + 1):
        new = counts + [0] * k
        for s, c in enumerate(counts):
            if c:
                new[s + k] += c
        counts = new
    return counts


def signed_rank_critical(n: int, alpha: float = 1.0 - CONFIDENCE) -> int:
    """The largest c with P(T+ <= c) <= alpha/2 (-1: no interval reaches 1 - alpha)."""
    if n > EXACT_UP_TO:
        mu, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        return math.floor(mu - 0.5 + NormalDist().inv_cdf(alpha / 2.0) * sd)
    counts, total, seen, c = signed_rank_counts(n), 2**n, 0, -1
    for s, k in enumerate(counts):
        seen += k
        if seen / total > alpha / 2.0:
            break
        c = s
    return c


def hodges_lehmann(units: Sequence[Unit]) -> Estimate:
    d = [u.overhead for u in _usable(units)][-MAX_UNITS:]
    n = len(d)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, math.nan)
    walsh = sorted((d[i] + d[j]) / 2.0 for i in range(n) for j in range(i, n))
    est = median(walsh)
    c = signed_rank_critical(n)
    if c < 0:  # too few units for a 95% interval
        return Estimate(est, math.nan, math.nan, n, math.nan)
    # {theta: c < #(Walsh > theta) < M - c} = [W_(c+1), W_(M-c)] (1-based).
    low, high = walsh[c], walsh[len(walsh) - c - 1]
    return Estimate(est, low, high, n, detectable(low, high, n))


def median_ratio(units: Sequence[Unit]) -> Estimate:
    us = _usable(units)[-MAX_UNITS:]
    n = len(us)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, math.nan)

    def stat(sample: Sequence[Unit]) -> float:
        return 1.0 - median(u.variant for u in sample) / median(u.baseline for u in sample)

    est = stat(us)
    if n < 5:  # a bootstrap of a handful of units says nothing
        return Estimate(est, math.nan, math.nan, n, math.nan)
    rng = random.Random(20240530 + n)
    boot = sorted(stat(rng.choices(us, k=n)) for _ in range(RESAMPLES))
    tail = (1.0 - CONFIDENCE) / 2.0
    low = boot[int(math.floor(tail * (RESAMPLES - 1)))]
    high = boot[int(math.ceil((1.0 - tail) * (RESAMPLES - 1)))]
    return Estimate(est, low, high, n, detectable(low, high, n))


def latency_ratio(units: Sequence[Unit]) -> Estimate:
    """variant p95 / baseline p95 over the units (above 1: the variant is slower)."""
    return paired([u.variant_p95 / u.baseline_p95 for u in units
                   if u.baseline_p95 > 0 and u.variant_p95 > 0], CONFIDENCE, POWER)


# Chosen by measurement (docs/loadgen.md, "Designs and estimators"): mean-t and hodges-lehmann were
# calibrated alike; hodges-lehmann's interval was as narrow or narrower (up to 30% under
# heavy load) but exists only from 6 units, and the always-on `cycle` (120 s per
# experiment) gives some groups fewer: mean-t has an interval from 2.
DEFAULT = "mean-t"
ESTIMATORS: dict[str, Callable[[Sequence[Unit]], Estimate]] = {
    "mean-t": mean_t,
    "hodges-lehmann": hodges_lehmann,
    "median-ratio": median_ratio,
}
