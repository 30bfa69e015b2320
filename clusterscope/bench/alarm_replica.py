"""ExperimentOverheadChanged evaluated in Python, as promtool evaluates the generated rule:
a faithful replica, so a week of replayed units can be judged in a second, and checked
against promtool on the same input (tests/test_ab_alarms.py).

The rule (clusterscope/rules/loadgen.py) reads the loadgen's unit counters
(clusterscope_loadgen/unitstream.py: units n, sums of variant and baseline throughput Sv
and Sb, of their squares Qvv and Qbb and of their product Qvb), scraped every `scrape`
seconds. At every evaluation (every `interval` seconds) it takes increase() of each over
the last `window`, and from them the period's units n, overhead 1 - R with R = Sv / Sb
and R's delta-method standard error sqrt((Qvv - 2 R Qvb + R^2 Qbb) n / ((n - 1) Sb^2));
it compares that period with the pin's (overhead, SE, units) or,
without a pin, with the same period `offset` earlier: |z| = |m1 - m0| / sqrt(se1^2 + se0^2)
above `z`, both periods with at least `min_units`, and fires once that has held `hold`
seconds at every evaluation (`for:`).

increase() is Prometheus 2.x's extrapolatedRate (prometheus/prometheus promql/functions.go;
promtool 2.42 here): the samples in [t - window, t], their last minus first value (plus
the value before each counter reset), scaled by the extrapolation to the range's ends: all
the way to an end that lies within 1.1 average sample gaps of the first or last sample,
else half a gap; not below the counter's zero point.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from clusterscope_loadgen.estimators import Unit
from clusterscope_loadgen.unitstream import unit_terms

from clusterscope.rules.rule_model import seconds


@dataclass(frozen=True)
class RuleParams:
    window: float = 3600.0
    z: float = 3.5
    hold: float = 900.0
    min_units: int = 10
    offset: float = 86400.0
    interval: float = 60.0  # evaluation interval
    scrape: float = 15.0

    @classmethod
    def from_config(cls, lc: dict, interval: float = 60.0, scrape: float = 15.0
                    ) -> RuleParams:
        """The committed rule's settings (rules/config.yaml `loadgen`)."""
        return cls(window=seconds(lc["overhead_window"]), z=float(lc["overhead_z"]),
                   hold=seconds(lc["overhead_change_for"]),
                   min_units=int(lc["overhead_min_units"]),
                   offset=seconds(lc["overhead_rolling_offset"]), interval=interval,
                   scrape=scrape)


# the counters' columns, in unitstream.SUMS' order
COLUMNS = ("n", "sv", "sb", "qvv", "qbb", "qvb")


@dataclass
class Counters:
    """The counters' samples at the scrape times (seconds), as columns named by COLUMNS."""

    t: list[float]
    cols: dict[str, list[float]]
    _resets: dict[str, list[float]] = field(default_factory=dict)

    def resets(self, column: str) -> list[float]:
        if column not in self._resets:
            self._resets[column] = _reset_sums(self.cols[column])
        return self._resets[column]


def scrape(units: Sequence[tuple[float, float, float]], end: float, every: float,
           start: float = 0.0) -> Counters:
    """The counters a scrape every `every` seconds from `start` to `end` sees, given the
    units (completion time in seconds, baseline and variant throughput) in time order."""
    out = Counters([], {c: [] for c in COLUMNS})
    acc = [0.0] * len(COLUMNS)
    i, k = 0, 0
    while start + k * every <= end:
        t = start + k * every
        while i < len(units) and units[i][0] <= t:
            _, b, v = units[i]
            for j, term in enumerate(unit_terms(Unit(0, b, v))):
                acc[j] += term
            i += 1
        out.t.append(t)
        for c, value in zip(COLUMNS, acc, strict=True):
            out.cols[c].append(value)
        k += 1
    return out


def _reset_sums(vs: Sequence[float]) -> list[float]:
    """Running sum of the value before each counter reset (a fall), so that a range's reset
    correction is a difference of two entries."""
    out, acc = [0.0], 0.0
    for k in range(1, len(vs)):
        if vs[k] < vs[k - 1]:
            acc += vs[k - 1]
        out.append(acc)
    return out


def increase(ts: Sequence[float], vs: Sequence[float], t0: float, t1: float,
             resets: Sequence[float] | None = None) -> float | None:
    """Prometheus 2.x increase() over the samples in [t0, t1] (None: fewer than two);
    `resets`: _reset_sums(vs), if already computed."""
    i, j = bisect.bisect_left(ts, t0), bisect.bisect_right(ts, t1)
    if j - i < 2:
        return None
    resets = resets if resets is not None else _reset_sums(vs)
    first_t, last_t, first_v = ts[i], ts[j - 1], vs[i]
    result = vs[j - 1] - first_v + resets[j - 1] - resets[i]
    sampled = last_t - first_t
    average = sampled / (j - i - 1)
    to_start, to_end = first_t - t0, t1 - last_t
    if result > 0 and first_v >= 0:
        to_start = min(to_start, sampled * first_v / result)
    threshold = average * 1.1
    span = sampled + (to_start if to_start < threshold else average / 2)
    span += to_end if to_end < threshold else average / 2
    return result * span / sampled


def period(c: Counters, t: float, window: float) -> tuple[float, float, float] | None:
    """(units, overhead, its SE) of the period (t - window, t], as the records compute
    them; None where a record would be absent or not a number."""
    inc = {col: increase(c.t, c.cols[col], t - window, t, c.resets(col)) for col in COLUMNS}
    if any(v is None for v in inc.values()):
        return None
    n, sv, sb, qvv, qbb, qvb = (float(inc[col] or 0.0) for col in COLUMNS)
    if n <= 1 or sb <= 0:
        return None
    r = sv / sb
    se = math.sqrt(max(qvv - 2 * r * qvb + r ** 2 * qbb, 0.0) * n / ((n - 1) * sb ** 2))
    return n, 1.0 - r, se


def z_score(cur: tuple[float, float, float] | None, ref: tuple[float, float, float] | None,
            p: RuleParams) -> float | None:
    """(m1 - m0) / sqrt(se1^2 + se0^2) of two periods, None where the rule has no value
    (a period missing or with fewer than min_units units)."""
    if cur is None or ref is None or cur[0] < p.min_units or ref[0] < p.min_units:
        return None
    spread = math.hypot(cur[2], ref[2])
    diff = cur[1] - ref[1]
    return diff / spread if spread > 0 else math.copysign(math.inf, diff) if diff else 0.0


def condition(cur: tuple[float, float, float] | None, ref: tuple[float, float, float] | None,
              p: RuleParams) -> bool:
    z = z_score(cur, ref, p)
    return z is not None and abs(z) > p.z


def states(c: Counters, p: RuleParams, start: float, end: float,
           pinned: tuple[float, float, float] | None = None) -> dict[int, bool]:
    """Whether the alert fires at each evaluation (multiples of the interval) between start
    and end; `pinned`: (units, mean, SE) of the pin, else the period `offset` earlier."""
    out: dict[int, bool] = {}
    since: float | None = None
    k = math.ceil(start / p.interval)
    while k * p.interval <= end:
        t = k * p.interval
        ref = pinned if pinned is not None else period(c, t - p.offset, p.window)
        if condition(period(c, t, p.window), ref, p):
            since = t if since is None else since
        else:
            since = None
        out[int(t)] = since is not None and t - since >= p.hold
        k += 1
    return out


def firing(c: Counters, p: RuleParams, start: float, end: float,
           pinned: tuple[float, float, float] | None = None) -> list[tuple[float, float]]:
    """The alert's firing episodes: (first, last) evaluation of each run of firing ones."""
    episodes: list[tuple[float, float]] = []
    before = False
    for t, fire in states(c, p, start, end, pinned).items():
        if fire and before:
            episodes[-1] = (episodes[-1][0], t)
        elif fire:
            episodes.append((t, t))
        before = fire
    return episodes
