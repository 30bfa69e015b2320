"""Overheads from paired windows: mean, 95% t interval, smallest detectable change.

A pair is a variant's window and its baseline's window from the same round (same sequence
number), both valid. Per pair the overhead is 1 - variant/baseline throughput; pairing
cancels drift that both windows share, and the t interval is over the per-pair values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean, stdev

from clusterscope.stats import t_quantile


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float
    n: int
    min_detectable: float  # smallest true change this noise detects (95% two-sided, 80% power)


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
class Window:
    """What the statistics need of a window (runner.WindowResult satisfies it)."""

    variant: str
    seq: int
    valid: bool
    throughput: float
    p95: float


def pairs(windows: Iterable[Window], variant: str, baseline: str) -> list[tuple[Window, Window]]:
    """(baseline, variant) windows of the same round, both valid, in round order."""
    windows = list(windows)
    base = {w.seq: w for w in windows if w.variant == baseline and w.valid}
    out = []
    for w in windows:
        if w.variant == variant and w.valid and w.seq in base:
            out.append((base[w.seq], w))
    return sorted(out, key=lambda p: p[1].seq)


def overhead(pair_list: list[tuple[Window, Window]]) -> Estimate:
    """1 - variant/baseline throughput (positive: the variant is slower)."""
    return paired([1.0 - v.throughput / b.throughput for b, v in pair_list if b.throughput > 0])


def latency_ratio(pair_list: list[tuple[Window, Window]]) -> Estimate:
    """variant p95 / baseline p95 (above 1: the variant is slower)."""
    return paired([v.p95 / b.p95 for b, v in pair_list if b.p95 > 0 and v.p95 > 0])
