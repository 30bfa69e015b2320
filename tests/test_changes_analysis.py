"""A change read back from its lines: how it is described, which periods it is compared
over, and the effect series `--notify` writes (no store needed: the lab tests read real
ones)."""

from __future__ import annotations

import json

from clusterscope.analysis import change_verdicts
from clusterscope.analysis.change_verdicts import Change, Judgement, Step
from clusterscope.analysis.compare import Row
from clusterscope.analysis.periods import Period
from clusterscope.inference import Summary, welch

T = 1_800_000_000.0


def step(node: str, t: float, n: int, total: int = 3, **more: str) -> Step:
    f = {"cluster": "c", "node": node, "role": "galera", "kind": "variable",
         "name": "general_log_file", "old": "a.log", "new": "b.log", "step": str(n),
         "nodes_total": str(total), "change_id": "c.x",
         "details": json.dumps([["variable", "general_log_file", "a.log", "b.log"]]), **more}
    return Step(t, t - 5, f)


def test_a_rolling_change_a_single_step_and_one_seen_everywhere_at_once():
    rolling = Change("c.x", "c", [step("node1", T, 1), step("node2", T + 40, 2),
                                  step("node3", T + 80, 3)])
    assert rolling.what() == "general_log_file a.log -> b.log"
    assert rolling.where() == "rolling over 3 of 3 nodes: node1 08:00:00, node2 08:00:40," \
                              " node3 08:01:20"
    assert (rolling.start, rolling.end) == (T, T + 80)
    before, after = rolling.periods(settle=120, period=600)
    assert (before.start, before.end) == (T - 600, T)
    assert (after.start, after.end) == (T + 200, T + 800)
    one = Change("c.y", "c", [step("node1", T, 1)])
    assert one.where() == "node1 (1 of 3 nodes)"
    data = Change("d.z", "d", [step("1", T, 1, 2, role="data"), step("2", T, 2, 2, role="data")])
    assert data.where() == "2 of 2 data nodes at once: 1, 2"


def test_a_change_is_pending_until_its_period_after_ends_and_names_overlaps():
    c = Change("c.x", "c", [step("node1", T, 1)])
    other = Change("c.w", "c", [step("node2", T + 300, 1)])
    elsewhere = Change("d.w", "d", [step("node2", T + 300, 1)])
    j = change_verdicts.judge(None, c, [c, other, elsewhere], [], settle=120, period=600,
                      now=T + 700)  # no VictoriaMetrics is asked while pending
    assert j.pending and j.verdict == "pending until 08:12:00Z"
    assert j.overlaps == ["c.w"]


def _row(before: list[float], after: list[float], unit: str = "tps",
         key: str = "loadgen_tps") -> Row:
    sb, sa = Summary.of(before), Summary.of(after)
    d = welch(sb, sa)
    verdict = "worse" if d.significant else "no significant change"
    return Row(key, "experiments", "throughput (per window)",
               {"cluster": "c", "experiment": "fk", "variant": "fk2"}, unit, False, sb, sa,
               d, verdict)


def test_effects_are_ratios_with_their_interval_and_bounded_labels():
    c = Change("c.x", "c", [step("node1", T, 1)])
    tps = _row([1000, 1010, 990, 1005], [500, 520, 480, 510])
    overhead = _row([0.18, 0.2, 0.19], [0.18, 0.21, 0.2], unit="ratio",
                    key="loadgen_overhead")
    j = Judgement(c, Period(T - 600, T), Period(T + 120, T + 720), [tps, overhead], False,
                  [])
    assert j.verdict == "worse"
    value, low, high = change_verdicts.effect(tps)
    assert round(value, 3) == round((502.5 - 1001.25) / 1001.25, 3) and low < value < high
    assert change_verdicts.effect(overhead)[0] == overhead.difference.diff  # percentage points
    lines = change_verdicts.effect_lines(j)
    assert len(lines) == 6 and all(ln.endswith(f" {int((T + 720) * 1000)}") for ln in lines)
    first = lines[0]
    assert first.startswith('clusterscope_change_effect_ratio{change_kind="variable",'
                            'change_name="general_log_file",cluster="c",experiment="fk",'
                            'quantity="loadgen_tps",variant="fk2",verdict="worse"}')
    # never a value or a change id: those are in the log line, not in a label
    assert "b.log" not in first and "c.x" not in first
    pending = Judgement(c, j.before, j.after, [tps], True, [])
    assert change_verdicts.effect_lines(pending) == []
    empty = Judgement(c, j.before, j.after, [_row([], [1.0, 2.0])], False, [])
    assert empty.verdict == "no data in both periods" and change_verdicts.effect_lines(empty) == []
