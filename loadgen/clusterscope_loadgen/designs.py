"""How a run spends its time on the variants, and what it pairs: the A/B designs.

- `interleaved`: one window runs a baseline and its variants together: every sysbench
  event runs one step of each, in a fresh random order, and times each step on its own
  (lua/cs_common.lua). A variant's throughput in the window is threads / its mean step
  latency (Little's law for closed-loop threads); whatever the machine does during the
  window hits every variant alike. A unit is one window.
- `windows`: one variant per window, rounds in order and reversed (A B, B A, ...); the
  throughput is sysbench's events per second. A unit is one round.
- `abba`: one variant per window, half-length windows in blocks of a random order followed
  by its mirror (A B B A or B A A B; with more variants P + reversed(P)). Every variant's
  mean position in a block is the same, so a drift linear within the block cancels from
  the block's means exactly as a fitted per-block drift term would. A unit is one block.

A unit counts only if every window of the variant and of its baseline in it is valid.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from clusterscope_loadgen.estimators import Unit
from clusterscope_loadgen.stats import Window
from clusterscope_loadgen.variant import Variant

DESIGNS = ("interleaved", "windows", "abba")
DEFAULT = "interleaved"


def groups(variants: Sequence[Variant]) -> list[list[Variant]]:
    """Each baseline with its variants (config order); the interleaved design's windows."""
    names = {v.name for v in variants}
    out: dict[str, list[Variant]] = {}
    for v in variants:
        head = v.baseline if v.baseline in names else v.name
        out.setdefault(head, []).append(v)
    return [sorted(g, key=lambda v: v.baseline is not None) for g in out.values()]


def not_interleavable(group: Sequence[Variant]) -> str | None:
    """Why the group cannot share a window (None: it can): its variants must run with the
    same thread count and on the same nodes."""
    base = group[0]
    for v in group[1:]:
        if v.threads != base.threads:
            return f"{v.name} and {base.name} run with different thread counts"
        if (v.writers, v.reader) != (base.writers, base.reader):
            return f"{v.name} and {base.name} use different nodes"
    return None


def round_plan(design: str, variants: Sequence[Variant], seq: int,
               rng: random.Random) -> list[list[Variant]]:
    """The windows of one round (unit) of a design: each a list of variants that share it."""
    if design == "interleaved":
        gs = groups(variants)
        return gs if seq % 2 else gs[::-1]
    if design == "abba":
        order = rng.sample(list(variants), len(variants))
        return [[v] for v in order + order[::-1]]
    order = list(variants) if seq % 2 else list(reversed(variants))
    return [[v] for v in order]


def window_seconds(design: str, window: float) -> float:
    """abba's windows are half as long: a block of k variants lasts k windows."""
    return max(1.0, window / 2.0) if design == "abba" else window


def units(windows: Iterable[Window], variant: str, baseline: str) -> list[Unit]:
    """The variant's units against its baseline, in round order: per round, the mean
    throughput (and p95) of each side's windows, if all of them are valid."""
    by_seq: dict[int, dict[str, list[Window]]] = {}
    for w in windows:
        if w.variant in (variant, baseline):
            by_seq.setdefault(w.seq, {}).setdefault(w.variant, []).append(w)
    out = []
    for seq in sorted(by_seq):
        sides = by_seq[seq]
        b, v = sides.get(baseline, []), sides.get(variant, [])
        if not b or not v or not all(w.valid for w in b + v):
            continue
        out.append(Unit(seq, _mean(w.throughput for w in b), _mean(w.throughput for w in v),
                        _mean(w.p95 for w in b), _mean(w.p95 for w in v)))
    return out


def _mean(values: Iterable[float]) -> float:
    vs = list(values)
    return sum(vs) / len(vs)
