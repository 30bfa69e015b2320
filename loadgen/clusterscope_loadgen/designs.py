"""How a run spends its time on the variants, and what it pairs: the A/B designs.

Each design estimates one of two quantities, named everywhere a figure is shown:

- `whole_workload`: 1 - X_variant / X_baseline, each throughput with every thread on that
  variant: what the user asks ("what does turning FKs on cost this workload?").
- `mixed_statement`: the relative per-statement latency of the variant in a load that
  mixes the variants (1 - L_baseline / L_variant, both measured in the mix). It equals the
  whole-workload effect only when a statement's latency is the same in the mix as alone:
  roughly so for an added round trip or CPU shared by time-slicing, not for extra work at a
  shared serial stage (Galera certification and commit order, an applier behind flow
  control: diluted), an extra visit to a busy thread (inflated), or carry-over from one
  statement to the next on a thread (either sign).

The designs:

- `timesliced` (whole_workload, the default): inside one sysbench run every thread
  switches variant together on a shared clock, in slots of randomised, mirrored order
  (slots.py); each slot's washout is left out. A unit is a half block: for two variants an
  adjacent A/B slot pair.
- `interleaved` (mixed_statement): one window runs a baseline and its variants together:
  every sysbench event runs one step of each, in a fresh random order, each step timed on
  its own (lua/cs_common.lua); a variant's throughput is threads / its mean step latency.
  A unit is one window.
- `windows` (whole_workload): one variant per window, rounds in order and reversed (A B,
  B A, ...); the throughput is sysbench's events per second. A unit is one round.
- `abba` (whole_workload): one variant per half-length window in blocks of a random order
  followed by its mirror. A unit is one block.

A design belongs to a group (a baseline and its variants; `design:` on the baseline in
experiments.yaml), so one experiment may run its groups differently. A unit counts only if
every window of the variant and of its baseline in it is valid (and, time-sliced, both
slots complete).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

from clusterscope_loadgen.estimators import Unit
from clusterscope_loadgen.stats import Window
from clusterscope_loadgen.variant import Variant

DESIGNS = ("timesliced", "interleaved", "windows", "abba")
DEFAULT = "timesliced"
WHOLE_WORKLOAD, MIXED_STATEMENT = "whole_workload", "mixed_statement"
ESTIMAND = {"timesliced": WHOLE_WORKLOAD, "interleaved": MIXED_STATEMENT,
            "windows": WHOLE_WORKLOAD, "abba": WHOLE_WORKLOAD}
SHARED = ("timesliced", "interleaved")  # designs whose group shares one sysbench run


def groups(variants: Sequence[Variant]) -> list[list[Variant]]:
    """Each baseline with its variants (config order)."""
    names = {v.name for v in variants}
    out: dict[str, list[Variant]] = {}
    for v in variants:
        head = v.baseline if v.baseline in names else v.name
        out.setdefault(head, []).append(v)
    return [sorted(g, key=lambda v: v.baseline is not None) for g in out.values()]


def not_shareable(group: Sequence[Variant]) -> str | None:
    """Why the group cannot share one sysbench run (None: it can): its variants must run
    with the same thread count and on the same nodes."""
    base = group[0]
    for v in group[1:]:
        if v.threads != base.threads:
            return f"{v.name} and {base.name} run with different thread counts"
        if (v.writers, v.reader) != (base.writers, base.reader):
            return f"{v.name} and {base.name} use different nodes"
    return None


def choose(groups_: Sequence[list[Variant]], asked: str | None, default: str | None,
           out: Callable[[str], None]) -> list[tuple[list[Variant], str]]:
    """Each group's design: `asked` (--design), else the group's (its baseline's
    `design:`), else the experiment's `default`, else DEFAULT. A group whose variants
    cannot share a run falls back to `windows` (said so) unless a shared design was asked
    for by name (ValueError)."""
    plan = []
    for group in groups_:
        d = asked or group[0].design or default or DEFAULT
        if d not in DESIGNS:
            raise ValueError(f"no design {d!r} (known: {', '.join(DESIGNS)})")
        why = not_shareable(group) if d in SHARED else None
        if why and asked:
            raise ValueError(f"design {d} needs a baseline and its variants to share a"
                             f" window, but {why}; use --design windows or abba")
        if why:
            out(f"loadgen: {group[0].name}: {why}, so they cannot share a window: design"
                " windows")
            d = "windows"
        plan.append((group, d))
    return plan


def round_plan(plan: Sequence[tuple[list[Variant], str]], seq: int,
               rng: random.Random) -> list[tuple[list[Variant], str]]:
    """The windows of one round: (the variants that share it, the design), group by group,
    the groups' order reversed every other round."""
    out: list[tuple[list[Variant], str]] = []
    for group, design in (plan if seq % 2 else list(plan)[::-1]):
        if design in SHARED:
            out.append((group, design))
        elif design == "abba":
            order = rng.sample(list(group), len(group))
            out += [([v], design) for v in order + order[::-1]]
        else:
            out += [([v], design) for v in (group if seq % 2 else group[::-1])]
    return out


def window_seconds(design: str, window: float) -> float:
    """abba's windows are half as long: a block of k variants lasts k windows."""
    return max(1.0, window / 2.0) if design == "abba" else window


def units(windows: Iterable[Window], variant: str, baseline: str) -> list[Unit]:
    """The variant's units against its baseline, in time order: per time-sliced half
    block, or per round the mean throughput (and p95) of each side's windows, if all of
    them are valid."""
    by_seq: dict[int, dict[str, list[Window]]] = {}
    for w in windows:
        if w.variant in (variant, baseline):
            by_seq.setdefault(w.seq, {}).setdefault(w.variant, []).append(w)
    out: list[Unit] = []
    for seq in sorted(by_seq):
        sides = by_seq[seq]
        b, v = sides.get(baseline, []), sides.get(variant, [])
        if not b or not v or not all(w.valid for w in b + v):
            continue
        if b[0].slots and v[0].slots:
            out += _slot_units(b[0], v[0], seq)
            continue
        out.append(Unit(seq, _mean(w.throughput for w in b), _mean(w.throughput for w in v),
                        _mean(w.p95 for w in b), _mean(w.p95 for w in v),
                        at=max(w.end for w in b + v)))
    return out


def _slot_units(base: Window, var: Window, seq: int) -> list[Unit]:
    """Each window holds its own variant's slots; a half block (slot index // k) holds
    one of each."""
    k = base.k or 1
    mine = {s.index // k: s for s in var.slots}
    out = []
    for b in base.slots:
        part = b.index // k
        v = mine.get(part)
        if v is None or not (b.complete and v.complete):
            continue
        out.append(Unit(seq, b.throughput, v.throughput, b.p95, v.p95,
                        at=max(b.end, v.end), part=part))
    return out


def _mean(values: Iterable[float]) -> float:
    vs = list(values)
    return sum(vs) / len(vs)
