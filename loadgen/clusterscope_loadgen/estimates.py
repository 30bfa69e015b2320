"""A run's estimates: every comparison's overhead over the sliding window, adjusted for
the experiment's many comparisons, with its estimand, and exported.

Each estimate covers the units of the last `window` seconds (estimators.recent): never the
whole run, so an always-on run's figure moves with the cluster and its interval does not
shrink forever around an old mean. Units of earlier calls of the same runner count (the
always-on cycle runs each experiment for a while, then the others, then it again).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Protocol

from clusterscope_loadgen import designs, estimators, intervals, multiplicity, stats
from clusterscope_loadgen.config import Experiment
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.results import WindowResult
from clusterscope_loadgen.variant import Variant


class Run(Protocol):
    """What the estimates read of a running experiment (the runner is one)."""

    exp: Experiment
    variants: list[Variant]
    windows: list[WindowResult]
    plan: Sequence[tuple[Sequence[Variant], str]]
    estimator: str
    label_base: dict[str, str]
    metrics: Metrics | None

    def design_of(self, variant: str) -> str: ...

    def labels(self, variant: str) -> dict[str, str]: ...


class Estimates:
    def __init__(self, runner: Run, window: float) -> None:
        self.runner = runner
        self.window = window

    def _stat_windows(self) -> list[stats.Window]:
        return [stats.Window(w.variant, w.seq, w.valid, w.throughput, w.p95, w.end, w.slots,
                             w.k) for w in self.runner.windows if not w.warmup]

    def comparisons(self) -> list[str]:
        """The run's compared variants, the experiment's primary first."""
        present = {v.name for v in self.runner.variants if v.baseline}
        ordered = [n for n in self.runner.exp.compared if n in present]
        return ordered + sorted(present - set(ordered))

    def describe(self) -> str:
        return multiplicity.describe(len(self.comparisons()))

    def info(self) -> None:
        """loadgen_info: one series per design the run's groups use (its estimand with it)."""
        r = self.runner
        if not r.metrics:
            return
        for design in dict.fromkeys(d for _, d in r.plan):
            r.metrics.info.labels(**r.label_base, version=r.metrics.version, design=design,
                                  estimand=designs.ESTIMAND[design],
                                  estimator=r.estimator).set(1)

    def update(self, every_estimator: bool = False, now: float | None = None
               ) -> dict[str, dict]:
        """Each compared variant against its baseline by the run's estimator (and, with
        `every_estimator`, by all of them, for the JSON and the summary)."""
        r = self.runner
        now = time.time() if now is None else now
        wins = self._stat_windows()
        names = self.comparisons()
        by_name = {v.name: v for v in r.variants}
        out: dict[str, dict] = {}
        units: dict[str, list[estimators.Unit]] = {}
        for name in names:
            v = by_name[name]
            design = r.design_of(name)
            level = multiplicity.confidence(name == names[0], len(names))
            every = designs.units(wins, name, v.baseline)
            units[name] = every
            us = estimators.recent(every, self.window, now)
            over = estimators.ESTIMATORS[r.estimator](us, confidence=level)
            overheads = [u.overhead for u in us if u.baseline > 0]
            out[name] = {
                "baseline": v.baseline, "primary": name == names[0], "design": design,
                "estimand": designs.ESTIMAND[design], "estimator": r.estimator,
                "confidence": level, "units": len(us),
                "window_seconds": self.window,
                "span_seconds": (us[-1].at - us[0].at) if len(us) > 1 else 0.0,
                "overhead": asdict(over),
                "latency_ratio": asdict(estimators.latency_ratio(us)),
                "autocorrelation": intervals.autocorrelations(overheads),
                "last_round": _last_round(us)}
            if every_estimator:
                out[name]["estimators"] = {
                    key: (asdict(over) if key == r.estimator else asdict(fn(us, confidence=level)))
                    for key, fn in estimators.ESTIMATORS.items()}
        adjusted = multiplicity.holm([out[n]["overhead"]["p_value"] for n in names])
        for name, p in zip(names, adjusted, strict=True):
            out[name]["holm_p_value"] = p
            out[name]["significant"] = (not math.isnan(p)) and p < multiplicity.FAMILY
        if r.metrics:
            for name, est in out.items():
                labels = {**r.labels(name), "baseline": est["baseline"],
                          "estimand": est["estimand"]}
                r.metrics.estimate(labels, stats.Estimate(**est["overhead"]),
                                   stats.Estimate(**est["latency_ratio"]), est["last_round"],
                                   self.window)
                # every unit once, into the counters the change alert windows
                r.metrics.units.publish(r, name, labels, units[name])
        return out


def _last_round(us: list[estimators.Unit]) -> dict | None:
    """The newest round's units and their overhead, 1 - sum(variant) / sum(baseline) (the
    default estimator's reading; a mean of the units' ratios would lean as they are noisy):
    the points behind the estimate, one per round (what `clusterscope compare` samples)."""
    usable = [u for u in us if u.baseline > 0]
    if not usable:
        return None
    seq = usable[-1].seq
    mine = [u for u in usable if u.seq == seq]
    overhead = 1.0 - sum(u.variant for u in mine) / sum(u.baseline for u in mine)
    return {"seq": seq, "units": len(mine), "overhead": overhead}
