"""Small statistics for comparisons: Welch's t interval without scipy.

The t distribution and the one-sample (paired) interval are the loadgen's
(`clusterscope_loadgen.stats`), so both products compute an interval the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean, stdev

from clusterscope_loadgen.stats import paired, t_quantile


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


__all__ = ["Difference", "Summary", "paired", "t_quantile", "welch"]
