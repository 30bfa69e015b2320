"""`loadgen relaxation`: throughput per bin after a switch of variant, measured.

The time-sliced design leaves out the first `washout` seconds of every slot: what the
previous variant left behind (Galera apply queues, flow control, purge, another table's
pages) drains there. How long that takes is the cluster's business, so it is measured:
the experiment's groups run time-sliced with long slots while cs_common.lua counts the
completions of every bin after each slot's start. Each slot that follows another
variant's is normalised by its own level over its second half, and the normalised curves
are averaged per direction with a 95% interval. The suggested washout is the end of the
last bin, in the slot's first half, whose interval lies wholly below 1 - TOLERANCE (a
deficit the data show), rounded up to `bin`, at least MIN_WASHOUT.
"""

from __future__ import annotations

import math
import time
from statistics import fmean, stdev
from typing import TYPE_CHECKING

from clusterscope_loadgen import designs, slots

if TYPE_CHECKING:
    from clusterscope_loadgen.runner import Runner

SLOT = 4.0  # seconds: long enough to see the level a switch relaxes to
TOLERANCE = 0.02
MIN_WASHOUT = 0.2  # a step of the previous variant may still be running


def normalised(raw: list[slots.Slot], plan: slots.Plan, bin_s: float) -> dict[int, list]:
    """Per variant (group index): each post-switch slot's bins over its own level."""
    bins = max(1, math.floor(plan.slot / bin_s + 1e-9))
    out: dict[int, list[list[float]]] = {}
    for s in raw:
        if not s.complete or s.index == 0 or plan.order[s.index - 1] == s.variant:
            continue
        counts = [s.curve.get(b, 0) for b in range(bins)]
        level = fmean(counts[bins // 2:])
        if level > 0:
            out.setdefault(s.variant, []).append([c / level for c in counts])
    return out


def summarise(curves: list[list[float]], bin_s: float) -> dict:
    n = len(curves)
    bins = len(curves[0]) if curves else 0
    mean = [fmean(c[b] for c in curves) for b in range(bins)]
    half = [1.96 * stdev([c[b] for c in curves]) / math.sqrt(n) if n > 1 else math.nan
            for b in range(bins)]
    washout = 0.0
    for b in range(bins // 2):
        if mean[b] + half[b] < 1.0 - TOLERANCE:
            washout = (b + 1) * bin_s
    return {"switches": n, "bin_seconds": bin_s, "relative": mean, "half_width": half,
            "washout_seconds": max(MIN_WASHOUT, round(washout, 3))}


def measure(runner: Runner, duration: float, bin_ms: int) -> dict:
    """Run every group of the runner time-sliced with SLOT-second slots for `duration`
    seconds in all, collecting each slot's bins."""
    runner.slot_s, runner.washout_s = SLOT, 0.0
    runner.prepare()
    groups = [g for g, _ in runner.plan]
    per = duration / len(groups)
    result: dict = {"experiment": runner.exp.name, "slot_seconds": SLOT, "groups": {}}
    for group in groups:
        curves: dict[int, list[list[float]]] = {}
        spent, seq = 0.0, 0
        while spent < per and not runner.term:
            seq += 1
            t0 = time.monotonic()
            runner.run_group(group, seq, min(60.0, per - spent + SLOT), design="timesliced",
                             curve_ms=bin_ms)
            spent += time.monotonic() - t0
            if runner.last_slots is not None:
                plan, raw = runner.last_slots
                for idx, more in normalised(raw, plan, bin_ms / 1000).items():
                    curves.setdefault(idx, []).extend(more)
        rows = {}
        for idx, mine in sorted(curves.items()):
            after = group[idx].name
            before = [v.name for v in group if v.name != after]
            rows[f"{'/'.join(before)} -> {after}"] = summarise(mine, bin_ms / 1000)
        result["groups"][group[0].name] = rows
    result["estimand"] = designs.WHOLE_WORKLOAD
    return result


def render(result: dict) -> str:
    lines = [f"relaxation after a switch, experiment {result['experiment']}"
             f" ({result['slot_seconds']:g} s slots; throughput per bin over the slot's own"
             " level in its second half, mean and 95% interval)"]
    for head, rows in result["groups"].items():
        for switch, r in rows.items():
            bins = r["relative"][:10]
            cells = " ".join(f"{x:.2f}" for x in bins)
            lines.append(f"  {head}: {switch}, {r['switches']} switches: {cells} ..."
                         f"  (+/-{fmean(r['half_width'][:10]):.2f});"
                         f" suggested washout {r['washout_seconds']:g} s")
    return "\n".join(lines)
