"""Many comparisons in one experiment: one primary, the others adjusted.

An experiment compares several variants with their baselines (fk: 3, batching_pk: 6). With
no effect anywhere, 14 independent 95% intervals exclude 0 somewhere half the time. So
each experiment names one primary comparison (`primary:` in experiments.yaml, else its
first compared variant), shown with its own 95% interval; the others get simultaneous
(Bonferroni) intervals, each at 1 - 0.05 / (m - 1), so all of them hold together with 95%
probability; and every comparison's test of "no change" is Holm-adjusted over all m
(family-wise error 5%, uniformly more powerful than Bonferroni).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FAMILY = 0.05


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (NaN stays NaN and counts in no family)."""
    known = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(known)
    out = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def confidence(is_primary: bool, comparisons: int) -> float:
    """The interval level for a comparison: 95% for the primary, Bonferroni over the
    secondaries for the others."""
    if is_primary or comparisons <= 1:
        return 1.0 - FAMILY
    return 1.0 - FAMILY / (comparisons - 1)


def describe(comparisons: int) -> str:
    """What the summary says about the intervals it shows."""
    if comparisons <= 1:
        return "1 interval shown: the primary comparison, 95%"
    level = confidence(False, comparisons)
    return (f"{comparisons} intervals shown: the primary comparison at 95%, the other"
            f" {comparisons - 1} simultaneous at {level:.2%} each (Bonferroni, 95% together);"
            " 'significant' is Holm-adjusted over all of them (5% family-wise)")
