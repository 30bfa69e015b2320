"""Small statistics for comparisons without scipy: Welch's t interval, and what the A/B
calibration benches report: exact binomial (Clopper-Pearson) intervals for rates over runs,
the band var(z) keeps when intervals are honest, and Fieller's interval for a ratio.

The t distribution and the one-sample (paired) interval are the loadgen's
(`clusterscope_loadgen.stats`), so both products compute an interval the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist, fmean, stdev

from clusterscope_loadgen.intervals import hac_mean
from clusterscope_loadgen.stats import paired, t_quantile


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    sd: float
    # the mean's standard error when the values are a series whose neighbours are alike
    # (the loadgen's rounds): Newey-West with the fixed-b inflation folded in
    se: float = math.nan

    @classmethod
    def of(cls, values: list[float], serial: bool = False) -> Summary:
        if not values:
            return cls(0, math.nan, math.nan)
        sd = stdev(values) if len(values) > 1 else math.nan
        se = math.nan
        if serial and len(values) > 2:
            s = hac_mean(values)
            se = s.se * s.inflation
        return cls(len(values), fmean(values), sd, se)

    @property
    def variance_of_mean(self) -> float:
        return self.se**2 if not math.isnan(self.se) else self.sd**2 / self.n


@dataclass(frozen=True)
class Difference:
    """after - before, with a two-sided confidence interval (Welch)."""

    diff: float
    low: float
    high: float
    df: float

    @property
    def significant(self) -> bool:
        return not math.isnan(self.low) and (self.low > 0 or self.high < 0)


def welch(before: Summary, after: Summary, confidence: float = 0.95) -> Difference:
    diff = after.mean - before.mean
    if before.n < 2 or after.n < 2:
        return Difference(diff, math.nan, math.nan, math.nan)
    vb, va = before.variance_of_mean, after.variance_of_mean
    se2 = vb + va
    if se2 == 0.0:
        return Difference(diff, diff, diff, math.inf)
    df = se2**2 / ((vb**2 / (before.n - 1) if vb else 0.0) + (va**2 / (after.n - 1) if va else 0.0))
    half = t_quantile(0.5 + confidence / 2.0, df) * math.sqrt(se2)
    return Difference(diff, diff - half, diff + half, df)


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in logs (exact for the n of a bench)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(0, min(k, n) + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                          + i * lp + (n - i) * lq)
    return min(1.0, total)


def _solve(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a decreasing f on [lo, hi], by bisection."""
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a rate seen k times in n independent runs:
    the p whose tail probabilities of k are (1 - confidence) / 2 each."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, not k={k}, n={n}")
    tail = (1.0 - confidence) / 2.0
    # P(X >= k | p) grows with p: the lower bound is where it reaches `tail`
    low = 0.0 if k == 0 else _solve(lambda p: tail - (1.0 - _binom_cdf(k - 1, n, p)),
                                    0.0, 1.0)
    # P(X <= k | p) falls with p: the upper bound is where it falls to `tail`
    high = 1.0 if k == n else _solve(lambda p: _binom_cdf(k, n, p) - tail, 0.0, 1.0)
    return low, high


def _poisson_cdf(k: int, mu: float) -> float:
    """P(X <= k) for X ~ Poisson(mu), summed in logs."""
    if mu <= 0.0:
        return 1.0
    return min(1.0, sum(math.exp(i * math.log(mu) - mu - math.lgamma(i + 1))
                        for i in range(k + 1)))


def poisson_interval(k: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Garwood) interval for the mean of a Poisson count seen as k: e.g. false
    alarms over replayed weeks, divided by the weeks afterwards."""
    if k < 0:
        raise ValueError(f"a count is not negative: {k}")
    tail = (1.0 - confidence) / 2.0
    top = 10.0 * (k + 10)
    low = 0.0 if k == 0 else _solve(lambda mu: tail - (1.0 - _poisson_cdf(k - 1, mu)), 0.0,
                                    top)
    return low, _solve(lambda mu: _poisson_cdf(k, mu) - tail, 0.0, top)


def chi2_quantile(p: float, df: float) -> float:
    """Wilson-Hilferty's approximation of the chi-square quantile (good to ~1% from 10 df)."""
    z = NormalDist().inv_cdf(p)
    return df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3


def variance_band(n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Where the sample variance of n standard normal values falls with this confidence:
    var(z) over n runs, z = estimate / SE, stays in it when the SEs are honest."""
    if n < 2:
        return math.nan, math.nan
    tail = (1.0 - confidence) / 2.0
    return (chi2_quantile(tail, n - 1) / (n - 1), chi2_quantile(1.0 - tail, n - 1) / (n - 1))


@dataclass(frozen=True)
class Ratio:
    ratio: float
    low: float  # -inf / inf: the data do not bound the ratio (the denominator may be 0)
    high: float


def fieller(a: float, a_low: float, a_high: float, b: float, b_low: float, b_high: float,
            confidence: float = 0.95) -> Ratio:
    """a / b with Fieller's interval, for two independent estimates given with their
    intervals at `confidence` (each standard error read off as half width / z)."""
    ratio = a / b if b else math.nan
    if any(math.isnan(x) for x in (a_low, a_high, b_low, b_high)):
        return Ratio(ratio, math.nan, math.nan)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    sa, sb = (a_high - a_low) / (2 * z), (b_high - b_low) / (2 * z)
    qa, qb, qc = b * b - z * z * sb * sb, -2.0 * a * b, a * a - z * z * sa * sa
    if qa <= 0.0:
        return Ratio(ratio, -math.inf, math.inf)
    root = math.sqrt(max(0.0, qb * qb - 4.0 * qa * qc))
    return Ratio(ratio, (-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa))


__all__ = ["Difference", "Ratio", "Summary", "chi2_quantile", "clopper_pearson", "fieller",
           "paired", "poisson_interval", "t_quantile", "variance_band", "welch"]
