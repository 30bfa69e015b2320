"""The NDB restart alerts under `promtool test rules`, on restart timelines built from the
field facts: a regression against the node's own earlier restarts or a pin, a restart stuck
in a phase, and a restarting node that is neither down nor stuck."""

from __future__ import annotations

import random

import pytest
from rules_cases import (
    C,
    node,
    pin,
    steps,
)
from rules_scenarios import (
    NDB,
    PHASES_75,
    PHASES_76,
    STEP,
    const,
    firing,
    metric,
    noisy_75,
    noisy_76,
    promtool_test,
    restart_timeline,
    rolling_timeline,
)

pytestmark = pytest.mark.tools("promtool")


NODE = {"cluster": "lab-ndb", "node_id": "2", "simulated": "true"}

WINDOW = 15  # seconds after a completion at which the verdict is checked (restarts are


def restart_states(minutes: int) -> list[int]:
    """restart_info.node_restart_status_int of node 2 as the master reports it: 2 minutes
    of a completed earlier restart, then a restart of 17.5 minutes (failure handling, 4..17
    with restore, REDO, index build and the LCP wait taking most of it, as the field facts'
    7.5 restart), WAIT_SUMA_HANDOVER, and completed."""
    plan = [(19, 2), (3, 0.5), (4, 0.5), (5, 0.5), (8, 0.5), (10, 0.5), (11, 0.5), (12, 2.5),
            (14, 1), (15, 2), (16, 0.5), (17, 8), (18, 0.5)]
    out: list[int] = []
    for st, mins in plan:
        out += [st] * steps(mins)
    return out + [19] * (steps(minutes) - len(out))


def test_restart_regression_fires_on_75_after_noisy_76_and_names_the_lcp_wait(tmp_path) -> None:
    rng = random.Random(76)
    restarts = [noisy_76(rng) for _ in range(5)] + [dict(PHASES_75)]
    t = restart_timeline(restarts)
    regressed = [{**NODE, "phase": "wait_lcp_for_restart"}]
    checks = [firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions[:-1]]
    checks.append(firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW, regressed))
    # still firing a while later: the verdict is held, not re-judged against itself
    checks.append(firing("NdbRestartTimeRegressed", t.completions[-1] + 70, regressed))
    promtool_test(tmp_path, t.series, checks)


def test_restart_regression_fires_on_6m49s_to_19m11s(tmp_path) -> None:
    t = restart_timeline([dict(PHASES_76)] * 3 + [dict(PHASES_75)])
    assert sum(PHASES_76.values()) == 6 * 60 + 49 and sum(PHASES_75.values()) == 19 * 60 + 11
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", t.completions[-2] + WINDOW, None),
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}]),
        # the ratio the verdict used: the latest against the median of the earlier three
        {"expr": "cluster_node:ndb_restart_total_seconds:ratio_to_baseline",
         "eval_time": f"{t.completions[-1] + WINDOW}s",
         "exp_samples": [{"labels": metric(
             "cluster_node:ndb_restart_total_seconds:ratio_to_baseline", NODE),
             "value": sum(PHASES_75.values()) / sum(PHASES_76.values())}]},
    ])


def test_restart_regression_needs_three_earlier_restarts_not_a_phantom(tmp_path) -> None:
    """The counter appears at 0 when the exporter first sees a restart
    under way. 400 s, 400 s, then 1200 s: only two earlier restarts, no verdict (the old
    rules counted the counter's appearance as a third)."""
    t = restart_timeline([dict(PHASES_76)] * 2 + [dict(PHASES_75)])
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions])


def test_restart_regression_never_rejudges_an_old_restart_after_an_outage(tmp_path) -> None:
    """400 s, 400 s, then 1200 s, the counter appearing at the first
    completion: no verdict at the third (two timed earlier restarts). Then every ndbinfo
    series is gone for 60 s (SQL node or exporter down): when they come back nothing is
    judged again (the old rules took the returning series for a new completion)."""
    restarts = [dict(PHASES_76)] * 2 + [dict(PHASES_75)]
    first = restart_timeline(restarts, first_seen="completed")
    gap_start = first.completions[-1] // STEP + 6
    t = restart_timeline(restarts, first_seen="completed", gap=(gap_start, gap_start + 12))
    back = (gap_start + 13) * STEP
    promtool_test(tmp_path, t.series, [
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW, None),
        firing("NdbRestartTimeRegressed", back + WINDOW, None),
        firing("NdbRestartTimeRegressed", back + 60, None)])


def test_first_completed_row_a_new_exporter_sees_is_no_event(tmp_path) -> None:
    """An exporter that first looks after a restart completed counts it without a time:
    not an event, so three timed 7.6 restarts after it are needed before a verdict."""
    t = restart_timeline([dict(PHASES_75)] + [dict(PHASES_76)] * 3 + [dict(PHASES_75)],
                         first_seen="completed")
    promtool_test(tmp_path, t.series, [
        *[firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions[:-1]],
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}])])


def test_restart_regression_falls_back_to_the_cluster_baseline(tmp_path) -> None:
    """A rolling restart: nodes 3, 4 and 5 restart once each, then node 2 takes
    19 minutes: it has no earlier restart of its own, the cluster's three are the baseline."""
    t = rolling_timeline([("3", dict(PHASES_76)), ("4", dict(PHASES_76)),
                          ("5", dict(PHASES_76)), ("2", dict(PHASES_75))])
    promtool_test(tmp_path, t.series, [
        *[firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions[:-1]],
        firing("NdbRestartTimeRegressed", t.completions[-1] + WINDOW,
               [{**NODE, "phase": "wait_lcp_for_restart"}])])


def test_restart_regression_quiet_on_75_variance_alone(tmp_path) -> None:
    rng = random.Random(75)
    restarts = [noisy_75(rng) for _ in range(10)]
    totals = [sum(r.values()) for r in restarts]
    assert max(totals) / min(totals) > 1.3, "the scenario must carry 7.5-like variance"
    t = restart_timeline(restarts)
    promtool_test(tmp_path, t.series,
                  [firing("NdbRestartTimeRegressed", c + WINDOW, None) for c in t.completions])


@pytest.mark.parametrize("profile,fires", [(PHASES_76, False), (PHASES_75, True)])
def test_restart_time_above_pinned_baseline(tmp_path, profile, fires) -> None:
    t = restart_timeline([dict(profile)])
    promtool_test(tmp_path, [*t.series, *pin("before-upgrade", sum(PHASES_76.values()), 0, 5)], [
        firing("NdbRestartTimeAbovePinned", t.completions[0] + WINDOW, [NODE] if fires else None)])


def test_restart_time_above_pinned_uses_the_newest_pin_and_resolves(tmp_path) -> None:
    """An old slow pin (1500 s) must not hide a regression against the newest
    (409 s); the verdict holds between restarts and resolves at the next good restart."""
    t = restart_timeline([dict(PHASES_75), dict(PHASES_76)])
    steps = len(t.series[0]["values"].split())
    series = [*t.series, *pin("old", 1500, 0, steps), *pin("new", sum(PHASES_76.values()), 2,
                                                          steps)]
    promtool_test(tmp_path, series, [
        firing("NdbRestartTimeAbovePinned", t.completions[0] + WINDOW, [NODE]),
        firing("NdbRestartTimeAbovePinned", t.completions[1] - 2 * STEP, [NODE]),
        firing("NdbRestartTimeAbovePinned", t.completions[1] + WINDOW, None)])


def test_restart_stuck(tmp_path) -> None:
    node = {**NDB, "node_id": "3"}
    steps = 40 * 60 // STEP
    series = [const("ndb_restart_status", node, [8] * 36 + [10] * (steps - 36)),
              const("ndb_restart_status", {**node, "node_id": "4"},
                    [8] * (steps // 2) + [10] * (steps - steps // 2))]
    promtool_test(tmp_path, series, [
        firing("NdbRestartStuck", 20 * 60, None),
        firing("NdbRestartStuck", 35 * 60, [{"cluster": "lab-ndb", "node_id": "3",
                                             "simulated": "true"}]),
    ])


def test_restart_stuck_needs_a_full_window_and_more_time_for_data_phases(tmp_path) -> None:
    """The exporter starts while a node sits in a state; 2 minutes of
    data are no "no progress for 30m". A state that grows with the data (14, REDO) gets
    2 h; a node in failure handling (3, down) is NdbDataNodeDown's, never this alert's."""
    steps = 150 * 60 // STEP
    n3, n4, n5 = ({**NDB, "node_id": i} for i in ("3", "4", "5"))
    series = [const("ndb_restart_status", n3, [None] * (steps - 24) + [9] * 24),
              const("ndb_restart_status", n4, [14] * steps),
              const("ndb_restart_status", n5, [3] * steps)]
    at = {"cluster": "lab-ndb", "simulated": "true"}
    promtool_test(tmp_path, series, [
        firing("NdbRestartStuck", (steps - 1) * STEP, [{**at, "node_id": "4"}]),
        firing("NdbRestartStuck", 60 * 60, None),
    ])


def test_a_restarting_node_without_a_nodes_row_is_not_down(tmp_path) -> None:
    """Before start phase 9 a restarting node has no ndbinfo.nodes row, so
    ndb_data_node_running is 0 through restore, REDO, index build, copy and the LCP wait
    (the simulator follows the kernel source on this: clusterscope/ndbsim/model.py
    visible()). Before: NdbDataNodeDown paged critical from minute 2 of every restart.
    Now: node 2 restarts for 18 minutes without any NdbDataNodeDown or node-group page;
    node 3, stopped (restart_info 3, failure handling completed), is down."""
    n = steps(25)
    states = restart_states(25)
    running2 = [1 if st in (18, 19) else 0 for st in states]
    series = [const("ndb_data_node_running", node(2), running2),
              const("ndb_restart_status", node(2), states),
              # node 3 of the other node group is stopped from minute 4 (`3 STOP`)
              const("ndb_data_node_running", node(3), [1] * steps(4) + [0] * (n - steps(4))),
              const("ndb_restart_status", node(3), [19] * steps(4) + [3] * (n - steps(4))),
              const("ndb_data_node_running", node(1), [1] * n),
              const("ndb_data_node_running", node(4), [1] * n)]
    for i, grp in ((1, 0), (2, 0), (3, 1), (4, 1)):
        running = running2 if i == 2 else [1] * n if i in (1, 4) else \
            [1] * steps(4) + [0] * (n - steps(4))
        # membership has a row for a running (visible) node only
        series.append(const("ndb_node_group", node(i), [grp if r else None for r in running]))
    checks = []
    for minute in (3, 7, 9, 14, 18, 24):
        # with its node group (membership, remembered while the node is down)
        checks.append(firing("NdbDataNodeDown", minute * 60,
                             [{**C, "node_id": "3", "node_group": "1"}] if minute > 6 else None))
    # node 3's group has one node left: critical; node 2's restart is no such page
    checks.append(firing("NdbNodeGroupLastReplica", 14 * 60,
                         [{"cluster": "lab-ndb", "node_group": "1"}]))
    promtool_test(tmp_path, series, checks)


def test_a_restart_stuck_in_a_data_phase_or_lcp_wait_is_stuck_not_down(tmp_path) -> None:
    """NdbDataNodeDown used to mute NdbRestartStuck (now the stuck node is not down at
    all), and state 9, WAIT_LCP_TO_COPY_DICT, waits for the running LCP: 2 h like the data
    phases, not 30 minutes. Before: node 2 in state 9 fired NdbRestartStuck at 35 min and
    node 3 (state 14, no nodes row) paged NdbDataNodeDown."""
    n = steps(130)
    series = [const("ndb_restart_status", node(2), [9] * n),
              const("ndb_data_node_running", node(2), [0] * n),
              const("ndb_restart_status", node(3), [14] * n),
              const("ndb_data_node_running", node(3), [0] * n)]
    promtool_test(tmp_path, series, [
        firing("NdbRestartStuck", 35 * 60, None),
        firing("NdbDataNodeDown", 35 * 60, None),
        firing("NdbRestartStuck", (n - 1) * STEP, [{**C, "node_id": "2"}, {**C, "node_id": "3"}]),
        firing("NdbDataNodeDown", (n - 1) * STEP, None),
    ])
