"""The time-sliced design through the real sysbench 1.0.20 and the loadgen's Lua framework,
without a database: a test script's steps sleep a known time, so what each variant reaches
alone is measured separately (a truth of another kind than the design's own estimate).

Each run lasts seconds; sysbench must be installed (Debian's, as the lab uses)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from clusterscope_loadgen import designs, estimators, slots, sysbench
from clusterscope_loadgen.stats import Window

# starts sysbench: the tools lane (tests/lanes.py once the lanes land)
pytestmark = pytest.mark.tools("sysbench")
SCRIPT = Path(__file__).with_name("test_loadgen_fixtures") / "cs_spin.lua"
THREADS = 2


def _run(options: dict[str, object], seconds: float) -> sysbench.Result:
    args = sysbench.argv(SCRIPT, [sysbench.Endpoint("127.0.0.1", 1)], "none", "none",
                         THREADS, seconds, options)
    res = sysbench.run(args, None, timeout=seconds + 60)
    assert res.exit_code == 0, res.fatal
    return res


def _alone(mix_item: str, seconds: float = 4.0) -> float:
    """Steps per second with every thread on one variant, over the whole run (sysbench's
    total time), a separate measurement from the slots'."""
    res = _run({"mix": mix_item}, seconds)
    assert res.total_time > 0
    return sum(v.steps for v in res.variants.values()) / res.total_time


def _sliced(mix: str, names: list[str], slot: float, washout: float, blocks: int,
            seed: int = 7) -> tuple[list[estimators.Unit], list[slots.Slot], slots.Plan]:
    plan = slots.make_plan(len(names), blocks * 2 * len(names) * slot, slot, washout,
                           random.Random(seed))
    epoch = time.monotonic() + slots.LEAD
    offset = time.time() - time.monotonic()
    res = _run({"mix": mix, **plan.options(epoch, curve_ms=50)},
               slots.LEAD + plan.seconds + 2)
    raw = slots.parse(res.slot_lines, plan, epoch, offset)
    ms = slots.measures(res.slot_lines, plan, epoch, offset, names, [1] * len(names))
    wins = [Window(n, 1, True, 0.0, 0.0, 0.0, tuple(m for m in ms if m.variant == n),
                   len(names)) for n in names]
    return designs.units(wins, names[1], names[0]), raw, plan


def test_every_thread_runs_the_slots_variant_and_units_pair_half_blocks() -> None:
    plan = slots.make_plan(2, 6, 0.5, 0.1, random.Random(3))
    assert len(plan.order) == 12  # three blocks of A B B A / B A A B
    us, raw, plan = _sliced("a;step_us=1000|b;step_us=1250", ["a", "b"], 0.5, 0.1, blocks=3)
    assert all(s.complete for s in raw), [(s.index, s.measured) for s in raw]
    assert len(us) == 6 and sorted(u.part for u in us) == list(range(6))
    # the washout's completions are counted apart: about washout / slot of them (0.2 here;
    # one slot alone can be off on a busy machine, the run's total is not)
    assert all(s.measured > 0 for s in raw)
    share = sum(s.washout for s in raw) / sum(s.washout + s.measured for s in raw)
    assert 0.1 < share < 0.32, [(s.index, s.measured, s.washout) for s in raw]


def test_the_time_sliced_estimate_is_the_whole_workload_effect() -> None:
    """The variant's steps sleep 25% longer: its whole-workload overhead is what two
    separate runs, each with every thread on one variant, measure; the time-sliced
    design's estimate and interval land on it (on a busy machine sleeps overshoot, so the
    truth is measured, not the configured 20%)."""
    truth = 1.0 - _alone("b;step_us=5000") / _alone("a;step_us=4000")
    us, _, _ = _sliced("a;step_us=4000|b;step_us=5000", ["a", "b"], 1.0, 0.2, blocks=4)
    est = estimators.mean_t(us)
    assert est.n == 8
    assert abs(est.mean - truth) < 0.05, (est, truth)
    assert est.low - 0.01 <= truth <= est.high + 0.01, (est, truth)


def _rate(u: slots.Slot, plan: slots.Plan, washed: bool) -> float:
    if washed:
        return u.rate(plan)
    return (u.measured + u.washout) / plan.slot  # counted from the switch


def test_the_washout_leaves_out_what_a_switch_leaves_behind() -> None:
    """For 150 ms after every switch to it, the variant's steps take four times as long
    (work the other variant left behind). Read from the same slots, leaving out a 300 ms
    washout gives the steady-state effect; counting from the switch reads it higher by
    about what the transient costs, and the relaxation curve shows the transient."""
    mix = "a;step_us=4000|b;step_us=5000;after_switch_us=20000;transient_ms=150"
    _, raw, plan = _sliced(mix, ["a", "b"], 1.0, 0.3, blocks=4)
    assert all(s.complete for s in raw)
    est = {}
    for washed in (True, False):
        us = [estimators.Unit(0, _rate(raw[i], plan, washed), _rate(raw[j], plan, washed))
              for h in slots.half_blocks(plan)
              for i, j in [sorted(h, key=lambda s: plan.order[s])]]
        est[washed] = estimators.mean_t(us).mean
    # b loses ~(150/5 - 150/20) of its ~200 steps per thread and slot after a switch, in
    # three of its four slots per two blocks: about 8 points more overhead, unwashed
    assert est[False] - est[True] > 0.04, est
    steady = 1.0 - (5000 / 4000) ** -1
    assert abs(est[True] - steady) < 0.08, est
    bins = slots.curve(raw, plan, 0.05, after=[1])
    assert sum(bins[:2]) / 2 < 0.6 * (sum(bins[-6:]) / 6), bins
