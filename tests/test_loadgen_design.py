"""The loadgen's designs without a server: the time-sliced slot plan, what a unit pairs,
the experiments' tables, and the estimand on every output (summary, JSON, /metrics).
Pure Python."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import pytest
from clusterscope_loadgen import config, designs, estimators, slots
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.results import WindowResult
from clusterscope_loadgen.runner import Runner
from clusterscope_loadgen.stats import SlotMeasure
from clusterscope_loadgen.summary import summary
from clusterscope_loadgen.sysbench import Result
from clusterscope_loadgen.target import Target


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_slot_plan_is_mirrored_randomised_and_balanced(k: int) -> None:
    """Blocks of a random order and its mirror: each half block holds every variant once
    (a unit), each variant's mean position in a block is the same (a linear drift cancels)
    and, over many blocks, each variant follows every other one equally often (carry-over
    balanced)."""
    rng = random.Random(k)
    orders = set()
    follows: Counter = Counter()
    for _ in range(400):
        plan = slots.make_plan(k, 2 * k * 2.0 * 3, 2.0, 0.5, rng)
        assert len(plan.order) == 2 * k * 3
        for start in range(0, len(plan.order), 2 * k):
            block = plan.order[start:start + 2 * k]
            assert block[:k] == block[k:][::-1]
            assert sorted(block[:k]) == list(range(k))
            positions = [sum(i for i, v in enumerate(block) if v == x) for x in range(k)]
            assert len(set(positions)) == 1
            orders.add(tuple(block[:k]))
        follows.update(zip(plan.order, plan.order[1:], strict=False))
        assert [list(plan.order[h.start:h.stop]) for h in slots.half_blocks(plan)] == [
            list(plan.order[i:i + k]) for i in range(0, len(plan.order), k)]
    assert len(orders) == len(list(itertools.permutations(range(k))))
    switches = {p: c for p, c in follows.items() if p[0] != p[1]}
    assert max(switches.values()) / min(switches.values()) < 1.25, switches


def test_a_bad_plan_is_refused() -> None:
    for k, slot, washout in ((0, 2.0, 0.5), (2, 2.0, 2.0), (2, 0.0, 0.0), (10, 2.0, 0.5)):
        with pytest.raises(ValueError):
            slots.make_plan(k, 10.0, slot, washout, random.Random(1))


def _slot_lines(rates: dict[int, tuple[int, int]], threads: int = 2) -> list[str]:
    """CSSLOT/CSTHREAD lines as cs_common.lua prints them: per slot (measured, washout)
    completions split over the threads."""
    lines = [f"CSTHREAD tid={t} first=0.5 last=100.0 lead=10" for t in range(threads)]
    for s, (n, wash) in rates.items():
        for t in range(threads):
            lines.append(f"CSSLOT tid={t} slot={s} n={n // threads} wash={wash // threads}"
                         f" spill=1 time=0.5 hist=280:{n // threads} curve=")
    return lines


def test_a_slot_counts_only_its_measured_part_and_only_while_every_thread_ran() -> None:
    plan = slots.Plan((0, 1, 1, 0), 2.0, 0.5, 2)
    raw = slots.parse(_slot_lines({0: (300, 100), 1: (240, 80), 2: (240, 80), 3: (300, 100)}),
                      plan, epoch=1.0, wall_offset=1000.0)
    assert [s.measured for s in raw] == [300, 240, 240, 300]
    assert raw[0].rate(plan) == 200.0  # 300 completions over the 1.5 s after the washout
    assert all(s.complete for s in raw)
    assert raw[1].start == 1003.0 and raw[1].end == 1005.0
    # a thread that started late: the slots before it was running do not count
    late = [line.replace("first=0.5", "first=3.5") if "tid=1" in line else line
            for line in _slot_lines({s: (300, 100) for s in range(4)})]
    assert [s.complete for s in slots.parse(late, plan, 1.0, 0.0)] == [False, False, True,
                                                                        True]


def test_a_time_sliced_unit_pairs_a_half_blocks_slots() -> None:
    """Each window holds its own variant's slots; a unit pairs them by half block, and an
    incomplete slot voids its unit only."""
    def m(i: int, v: str, tput: float, ok: bool = True) -> SlotMeasure:
        return SlotMeasure(i, v, 10.0 * i, tput, 0.002, ok)

    from clusterscope_loadgen.stats import Window
    base = Window("a", 1, True, 0, 0, 0, (m(0, "a", 100), m(3, "a", 110), m(5, "a", 90),
                                          m(6, "a", 100, ok=False)), 2)
    var = Window("b", 1, True, 0, 0, 0, (m(1, "b", 80), m(2, "b", 99), m(4, "b", 72),
                                         m(7, "b", 90)), 2)
    us = designs.units([base, var], "b", "a")
    assert [(u.part, u.baseline, u.variant) for u in us] == [(0, 100, 80), (1, 110, 99),
                                                            (2, 90, 72)]
    assert [u.at for u in us] == [10.0, 30.0, 50.0]
    invalid = Window("b", 1, False, 0, 0, 0, var.slots, 2)
    assert designs.units([base, invalid], "b", "a") == []


def test_a_comparisons_two_tables_are_written_alike() -> None:
    """A table written by more groups than its comparison's other table grows faster (the
    one-writer and two-writer FK groups once both wrote users_posts, fk1_2w's baseline
    table, while only fk1_2w wrote users_posts_fk1): each comparison's two tables are
    written by the same groups, and start from the same pre-fill."""
    for exp in config.load().values():
        if exp.kind not in ("fk", "batching_pk"):
            continue
        writers: dict[str, set[str]] = {}
        for group in designs.groups(list(exp.variants)):
            for v in group:
                writers.setdefault(v.table, set()).add(group[0].name)
        tables = {v.name: v.table for v in exp.variants}
        for v in exp.variants:
            if v.baseline:
                assert writers[v.table] == writers[tables[v.baseline]], (exp.name, v.name)
        assert exp.table_rows > 0 and exp.max_rows > exp.table_rows, exp.name


def test_the_seed_profile_is_the_field_facts_run() -> None:
    seed = config.experiment("fk_seed")
    assert (seed.threads, seed.table_rows, seed.kind) == (8, 1_000_000, "fk")
    assert {v.name: v.table for v in seed.variants} == {
        "nofk": "users_posts", "fk2": "users_posts_fk", "fk1": "users_posts_fk1"}
    assert seed.primary == "fk2" and not seed.cycle and seed.design is None
    assert 16 + int(seed.options["message_len"]) == 166  # ~168-byte records
    from clusterscope_loadgen.commandline import cycle_names
    assert "fk_seed" not in cycle_names(config.load(), "galera", None)
    assert "fk_seed" in cycle_names(config.load(), "galera", "fk_seed")


def _runner(tmp: Path, metrics: Metrics, design: str | None = None) -> Runner:
    target = Target(path=tmp / "none.cnf", user="app", password=None, host="127.0.0.1",
                    port=9)
    return Runner(config.experiment("fk"), "innodb", [target, target], only=["fk2"],
                  metrics=metrics, design=design, out=lambda s: None)


def _windows(r: Runner, now: float, design: str, first: int = 1) -> list[WindowResult]:
    out = []
    for seq in range(first, first + 5):
        for name, tput in (("nofk", 1000.0), ("fk2", 900.0 + seq)):
            ms = tuple(SlotMeasure(i, name, now - 100 + seq * 10 + i, tput, 0.002, True)
                       for i in range(4) if (i in (0, 3)) == (name == "nofk"))
            out.append(WindowResult("fk", name, seq, now - 100, now - 90 + seq, 4,
                                    run=Result(tps=tput), throughput=tput, design=design,
                                    estimand=designs.ESTIMAND[design],
                                    slots=ms if design == "timesliced" else (), k=2))
    return out


@pytest.mark.parametrize("design", ["timesliced", "interleaved"])
def test_every_output_names_the_estimand(tmp_path: Path, design: str) -> None:
    import time
    m = Metrics()
    r = _runner(tmp_path, m, design)
    r.windows = _windows(r, time.time(), design)
    r.estimates.info()
    est = r.update_estimates(every_estimator=True)["fk2"]
    want = designs.ESTIMAND[design]
    assert est["estimand"] == want and est["design"] == design and est["primary"]
    assert est["window_seconds"] == 3600 and len(est["autocorrelation"]) == 10
    assert est["units"] == (10 if design == "timesliced" else 5)
    labels = {**r.labels("fk2"), "baseline": "nofk", "estimand": want}
    assert m.registry.get_sample_value("loadgen_overhead_ratio", labels) == pytest.approx(
        est["overhead"]["mean"])
    assert m.registry.get_sample_value("loadgen_overhead_window_seconds", labels) == 3600
    assert m.registry.get_sample_value("loadgen_overhead_confidence_ratio", labels) == 0.95
    assert m.registry.get_sample_value(
        "loadgen_overhead_min_detectable_difference_ratio", labels) > m.registry.get_sample_value(
        "loadgen_overhead_min_detectable_ratio", labels)
    info = {**r.label_base, "version": m.version, "design": design, "estimand": want,
            "estimator": estimators.DEFAULT}
    assert m.registry.get_sample_value("loadgen_info", info) == 1
    result = {"experiment": "fk", "engine": "innodb", "target": "x", "design": r.design,
              "estimator": estimators.DEFAULT, "estimands": [want],
              "intervals": r.estimates.describe(),
              "windows": [w.as_dict() for w in r.windows], "estimates": {"fk2": est},
              "verification": []}
    text = summary(result)
    assert f"estimand {want}:" in text and f"[{want}]" in text
    assert "1 interval shown" in text
    assert "before/after" in text


def test_old_units_leave_the_estimate(tmp_path: Path) -> None:
    """Units older than the sliding window leave the estimate: a week of units never damps
    the last hour's."""
    import time
    r = _runner(tmp_path, Metrics())
    now = time.time()
    r.windows = _windows(r, now - 7200, "timesliced") + _windows(r, now, "timesliced", 6)
    est = r.update_estimates()["fk2"]
    assert est["units"] == 10
