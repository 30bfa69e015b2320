"""Small statistics for comparisons: Welch's t interval without scipy.

The t quantile comes from the regularised incomplete beta function (Numerical Recipes'
continued fraction) inverted by bisection: exact enough for 95% intervals, no dependency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean, stdev


def _betacf(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(c) > 1e-300 else 1e300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(c) > 1e-300 else 1e300
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betai(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t value with cdf(t) = p (0 < p < 1)."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    sd: float

    @classmethod
    def of(cls, values: list[float]) -> Summary:
        if not values:
            return cls(0, math.nan, math.nan)
        return cls(len(values), fmean(values), stdev(values) if len(values) > 1 else math.nan)


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
    vb, va = before.sd**2 / before.n, after.sd**2 / after.n
    se2 = vb + va
    if se2 == 0.0:
        return Difference(diff, diff, diff, math.inf)
    df = se2**2 / ((vb**2 / (before.n - 1) if vb else 0.0) + (va**2 / (after.n - 1) if va else 0.0))
    half = t_quantile(0.5 + confidence / 2.0, df) * math.sqrt(se2)
    return Difference(diff, diff - half, diff + half, df)


def mean_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and its t interval (for paired differences or ratios)."""
    s = Summary.of(values)
    if s.n < 2:
        return s.mean, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, s.n - 1) * s.sd / math.sqrt(s.n)
    return s.mean, s.mean - half, s.mean + half
