"""The t distribution, the paired mean with its 95% t interval and smallest detectable
change, and what the statistics need of a window.

The t quantile comes from the regularised incomplete beta function (Numerical Recipes'
continued fraction) inverted by bisection: exact enough for 95% intervals, no scipy. The
toolkit's comparisons (`clusterscope.inference`) use the same function. What is paired with
what is the design's business (designs.py); the estimators are in estimators.py.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The t value with cdf(t) = p (0 < p < 1); remembered (a bisection of 200 steps)."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Estimate:
    mean: float  # the point estimate: the mean for `paired`, an estimator's own otherwise
    low: float
    high: float
    n: int
    min_detectable: float  # smallest true change this noise detects (95% two-sided, 80% power)
    # The same for a before/after difference between two periods of this length and noise.
    min_detectable_difference: float = math.nan
    confidence: float = 0.95  # of [low, high]
    p_value: float = math.nan  # two-sided, of "no change"
    lag: int = 0  # the autocorrelation lag the interval allows for


def paired(values: list[float], confidence: float = 0.95, power: float = 0.80) -> Estimate:
    n = len(values)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, math.nan)
    mean = fmean(values)
    if n < 2:
        return Estimate(mean, math.nan, math.nan, n, math.nan)
    se = stdev(values) / math.sqrt(n)
    t_conf = t_quantile(0.5 + confidence / 2.0, n - 1)
    half = t_conf * se
    mde = (t_conf + t_quantile(power, n - 1)) * se
    return Estimate(mean, mean - half, mean + half, n, mde)


@dataclass(frozen=True)
class SlotMeasure:
    """One time slice of a time-sliced window: a variant alone on every thread."""

    index: int
    variant: str
    end: float  # wall-clock seconds
    throughput: float  # rows (or events) per second over the slot's measured part
    p95: float
    complete: bool  # every thread ran through it and it measured something


@dataclass(frozen=True)
class Window:
    """What the statistics need of a window (results.WindowResult satisfies it)."""

    variant: str
    seq: int
    valid: bool
    throughput: float
    p95: float
    end: float = 0.0  # wall-clock seconds
    slots: tuple[SlotMeasure, ...] = ()  # time-sliced windows only
    k: int = 0  # variants in the time-sliced group (slots per unit)
