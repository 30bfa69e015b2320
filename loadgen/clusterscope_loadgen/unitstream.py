"""Every completed unit, summed into counters a rule can window: the change alert's input.

Per comparison (variant vs baseline) six counters grow with each new valid unit: the
number of units, the sums of the variant's and the baseline's throughput (rows per
second, as the overheads read it: sysbench events x the variant's rows per event), of
their squares and of their product. Over any period, increase() of the six gives the
period's ratio of means R = sum(variant) / sum(baseline), the overhead 1 - R (what the
loadgen's default estimator reports, `ratio-of-means` in estimators.py) and its
delta-method standard error: exact whatever the scrape interval, across the always-on
cycle's turns and loadgen restarts (a reset is what increase() corrects). Throughputs
are never negative, so no counter ever falls. The per-unit ratio is not summed: the
mean of ratios leans towards the variant when units are noisy (E[v/b] > E[v]/E[b]).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter

from clusterscope_loadgen.estimators import Unit

KEEP = 5000  # units remembered per comparison, to count each once

RATE = "throughput in rows per second (sysbench events x rows per event)"
# counter (without _total) -> its help; what each adds per unit, by UnitStream.publish
SUMS = {
    "loadgen_units": "Completed valid units of the comparison",
    "loadgen_unit_variant_rows_per_second":
        f"Sum over the comparison's valid units of the variant side's {RATE}",
    "loadgen_unit_baseline_rows_per_second":
        f"Sum over the comparison's valid units of the baseline side's {RATE}",
    "loadgen_unit_variant_rows_per_second_squares":
        f"Sum over the comparison's valid units of the square of the variant side's {RATE}",
    "loadgen_unit_baseline_rows_per_second_squares":
        f"Sum over the comparison's valid units of the square of the baseline side's {RATE}",
    "loadgen_unit_rows_per_second_products":
        f"Sum over the comparison's valid units of variant x baseline {RATE}",
}


def unit_terms(u: Unit) -> tuple[float, ...]:
    """What one unit adds to each counter of SUMS, in its order."""
    v, b = u.variant, u.baseline
    return 1.0, v, b, v * v, b * b, v * b


class UnitStream:
    def __init__(self, labels: list[str], registry: CollectorRegistry) -> None:
        self.counters = [Counter(name, doc, labels, registry=registry)
                         for name, doc in SUMS.items()]
        # per run (a cycle starts a new one, its rounds numbered from 1 again) and
        # comparison: the units already counted, by round and part (a time-sliced round
        # holds several units)
        self._seen: weakref.WeakKeyDictionary[object, dict[str, set[tuple[int, int]]]] = (
            weakref.WeakKeyDictionary())

    def publish(self, run: object, variant: str, labels: dict[str, str],
                units: Iterable[Unit]) -> int:
        """Count the units of `run` not counted yet; returns how many were new."""
        seen = self._seen.setdefault(run, {}).setdefault(variant, set())
        children = [c.labels(**labels) for c in self.counters]
        new = 0
        for u in units:
            key = u.key
            if key in seen or u.baseline <= 0 or u.variant < 0:
                continue
            seen.add(key)
            for child, term in zip(children, unit_terms(u), strict=True):
                child.inc(term)
            new += 1
        if len(seen) > KEEP:
            for seq in sorted(seen)[:-KEEP]:
                seen.discard(seq)
        return new
