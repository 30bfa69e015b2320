"""Small statistics for comparisons: Welch's t interval without scipy.

The t distribution and the one-sample (paired) interval are the loadgen's
(`clusterscope_loadgen.stats`), so both products compute an interval the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean, stdev

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


__all__ = ["Difference", "Summary", "paired", "t_quantile", "welch"]
