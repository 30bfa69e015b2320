"""Every completed unit, summed into counters a rule can window: the change alert's input.

Per comparison (variant vs baseline) three series grow with each new valid unit:
`loadgen_unit_tps_ratio_count` and `_sum` (a Summary of the unit's variant/baseline
throughput) and `loadgen_unit_tps_ratio_squares_total` (the sum of its squares). Over any
period, increase() of the three gives the number of units in it, their mean and variance:
exact whatever the scrape interval, across the always-on cycle's turns and loadgen
restarts (a reset is what increase() corrects). The overhead is 1 - ratio, so its mean is
1 - the mean ratio and its variance the ratio's; the ratio is what is summed because it
is never negative, and a counter must never fall.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Summary

from clusterscope_loadgen.estimators import Unit

KEEP = 5000  # units remembered per comparison, to count each once


class UnitStream:
    def __init__(self, labels: list[str], registry: CollectorRegistry) -> None:
        self.ratio = Summary("loadgen_unit_tps_ratio", "Variant/baseline throughput of each"
                             " completed valid unit: _count units, _sum their ratios",
                             labels, registry=registry)
        self.squares = Counter("loadgen_unit_tps_ratio_squares", "Sum of the squares of the"
                               " units' variant/baseline throughput ratios", labels,
                               registry=registry)
        # per run (a cycle starts a new one, its rounds numbered from 1 again) and
        # comparison: the units already counted, by round and part (a time-sliced round
        # holds several units)
        self._seen: weakref.WeakKeyDictionary[object, dict[str, set[tuple[int, int]]]] = (
            weakref.WeakKeyDictionary())

    def publish(self, run: object, variant: str, labels: dict[str, str],
                units: Iterable[Unit]) -> int:
        """Count the units of `run` not counted yet; returns how many were new."""
        seen = self._seen.setdefault(run, {}).setdefault(variant, set())
        new = 0
        for u in units:
            key = u.key
            if key in seen or u.baseline <= 0:
                continue
            seen.add(key)
            r = u.variant / u.baseline
            self.ratio.labels(**labels).observe(r)
            self.squares.labels(**labels).inc(r * r)
            new += 1
        if len(seen) > KEEP:
            for seq in sorted(seen)[:-KEEP]:
                seen.discard(seq)
        return new
