"""The time-sliced design's slots: the plan a window runs, and what each slot measured.

Inside one sysbench run every thread switches variant together on a shared clock
(lua/cs_common.lua): slot s, [epoch + s x slot, epoch + (s + 1) x slot), runs only the
variant the plan gives it, so the whole load is of one variant at a time (the
whole-workload estimand). The plan is made of blocks: a random order of the group's k
variants followed by its mirror (A B B A, B A A B; with three variants e.g. C A B B A C),
so every variant's mean position in a block is the same and a drift linear within the
block cancels, and each variant follows every other one equally often (first-order
carry-over balanced in expectation). Each half block holds every variant once: a unit is a
half block (for two variants: an adjacent A/B slot pair). A slot's first `washout` seconds
are counted apart and left out: what the previous variant left behind (Galera apply
queues, flow control, purge, cache misses on the other table) drains there.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from clusterscope_loadgen.stats import SlotMeasure
from clusterscope_loadgen.sysbench import bucket_percentiles

LEAD = 1.5  # seconds before slot 0: sysbench starts, threads connect and warm up

_SLOT = re.compile(r"^CSSLOT tid=(\d+) slot=(\d+) n=(\d+) wash=(\d+) spill=(\d+)"
                   r" time=([0-9.]+) hist=(\S*) curve=(\S*)$")
_THREAD = re.compile(r"^CSTHREAD tid=(\d+) first=(-?[0-9.]+) last=(-?[0-9.]+) lead=(\d+)$")


@dataclass(frozen=True)
class Plan:
    """A window's slots: `order[s]` is the group index (0-based) slot s runs."""

    order: tuple[int, ...]
    slot: float  # seconds
    washout: float  # seconds
    k: int  # variants in the group

    @property
    def seconds(self) -> float:
        return len(self.order) * self.slot

    def options(self, epoch: float, curve_ms: int = 0) -> dict[str, object]:
        """cs_common.lua's options for this plan; `epoch` in CLOCK_MONOTONIC seconds."""
        return {"slots": "".join(str(i + 1) for i in self.order),
                "slot_ms": round(self.slot * 1000), "washout_ms": round(self.washout * 1000),
                "epoch": f"{epoch:.6f}", "curve_ms": curve_ms}


def make_plan(k: int, seconds: float, slot: float, washout: float,
              rng: random.Random) -> Plan:
    """Whole mirrored blocks lasting about `seconds` (at least one)."""
    if k < 1 or slot <= 0 or not 0 <= washout < slot:
        raise ValueError(f"a time-sliced plan needs variants, slot > 0 and 0 <= washout <"
                         f" slot (k={k}, slot={slot}, washout={washout})")
    if k > 9:
        raise ValueError("a time-sliced group holds at most 9 variants (one digit each)")
    blocks = max(1, round(seconds / (2 * k * slot)))
    order: list[int] = []
    for _ in range(blocks):
        first = rng.sample(range(k), k)
        order += first + first[::-1]
    return Plan(tuple(order), slot, washout, k)


@dataclass
class Slot:
    """What one slot measured, summed over the threads."""

    index: int
    variant: int  # group index
    start: float  # wall-clock seconds
    end: float
    measured: int = 0  # steps completed after the washout, in their own slot
    washout: int = 0  # completions inside the washout: left out
    spill: int = 0  # steps that finished in the next slot: left out
    busy: float = 0.0  # seconds inside the measured steps
    histogram: dict[int, int] = field(default_factory=dict)  # latency bucket -> steps
    curve: dict[int, int] = field(default_factory=dict)  # bin -> completions (any variant)
    complete: bool = True  # every thread was running through the whole slot

    def rate(self, plan: Plan) -> float:
        """Steps per second over the slot's measured part."""
        return self.measured / (plan.slot - plan.washout)


def parse(lines: Sequence[str], plan: Plan, epoch: float, wall_offset: float) -> list[Slot]:
    """The CSSLOT/CSTHREAD lines of a time-sliced window, one Slot per planned slot.

    `epoch` is the monotonic second slot 0 started, `wall_offset` wall minus monotonic
    time. A slot is complete only if every thread that reported had started its first step
    before the slot began and ran its last after the slot ended."""
    slots = [Slot(s, plan.order[s], epoch + wall_offset + s * plan.slot,
                  epoch + wall_offset + (s + 1) * plan.slot) for s in range(len(plan.order))]
    firsts, lasts = [], []
    for line in lines:
        if m := _SLOT.match(line):
            s = int(m.group(2))
            if s >= len(slots):
                continue
            rec = slots[s]
            rec.measured += int(m.group(3))
            rec.washout += int(m.group(4))
            rec.spill += int(m.group(5))
            rec.busy += float(m.group(6))
            _add(rec.histogram, m.group(7))
            _add(rec.curve, m.group(8))
        elif m := _THREAD.match(line):
            firsts.append(float(m.group(2)))
            lasts.append(float(m.group(3)))
    if not firsts:
        for rec in slots:
            rec.complete = False
        return slots
    idle = -1.0 in firsts or -1.0 in lasts  # a thread that never ran a step
    ready, stop = max(firsts), min(lasts)
    for rec in slots:
        begin = epoch + rec.index * plan.slot
        rec.complete = (not idle and ready <= begin and stop >= begin + plan.slot
                        and rec.measured > 0)
    return slots


def _add(into: dict[int, int], text: str) -> None:
    for item in filter(None, text.split(",")):
        b, _, c = item.partition(":")
        into[int(b)] = into.get(int(b), 0) + int(c)


def half_blocks(plan: Plan) -> list[range]:
    """The plan's units: consecutive runs of k slots, each holding every variant once."""
    return [range(i, i + plan.k) for i in range(0, len(plan.order) - plan.k + 1, plan.k)]


def curve(slots: Sequence[Slot], plan: Plan, bin_seconds: float,
          after: Sequence[int] | None = None) -> list[float]:
    """Mean completions per second in each bin after a switch, over the complete slots
    that follow a slot of another variant (and whose variant is in `after`, when given:
    the switch's direction)."""
    bins = max(1, math.floor(plan.slot / bin_seconds + 1e-9))
    sums = [0.0] * bins
    count = 0
    for s in slots:
        if (not s.complete or s.index == 0 or plan.order[s.index - 1] == s.variant
                or (after is not None and s.variant not in after)):
            continue
        count += 1
        for b in range(bins):
            sums[b] += s.curve.get(b, 0) / bin_seconds
    return [x / count for x in sums] if count else []


def measures(lines: Sequence[str], plan: Plan, epoch: float, wall_offset: float,
             names: Sequence[str], rows_per_event: Sequence[int]) -> list[SlotMeasure]:
    """Each slot as the statistics take it: its variant's name, rate (rows per second over
    the measured part), p95 and whether it counts."""
    out = []
    for s in parse(lines, plan, epoch, wall_offset):
        p95 = bucket_percentiles(s.histogram).get(0.95, 0.0)
        out.append(SlotMeasure(s.index, names[s.variant], s.end,
                               s.rate(plan) * rows_per_event[s.variant], p95, s.complete))
    return out
