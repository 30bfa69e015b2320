"""The soak: `clusterscope bench soak --minutes 3` in the shared lab, every fault
of the cycle run once and judged; and the judgements themselves on recorded shapes of
what goes wrong (a counter restored from a state file that also restarts from 0, a lost
scrape, an alert no fault explains, a window that spans a node leaving)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from clusterscope.bench import soak
from clusterscope.bench.soak import expect, judge
from clusterscope.bench.soak.judge import Fault
from clusterscope.bench.soak.record import OURS


# -- the judgements -------------------------------------------------------------------------
def test_a_reset_is_explained_only_by_its_process_restarting() -> None:
    pts = [(0, 5), (5, 6), (10, 1), (15, 2), (20, 0)]
    explained, unexplained = judge.counter_resets(pts, restarts=[8.0], slack=2)
    assert explained == [10] and unexplained == [20]


def test_a_last_digit_lost_to_storage_rounding_is_no_reset() -> None:
    """VictoriaMetrics keeps 12-15 significant digits of a fractional float: a counter of
    squared rates (here 3.2e12) read back 0.001 lower is the same counter; one that fell to
    1 was reset."""
    big = 3_217_654_321_098.765
    pts = [(0, big), (5, big - 0.001), (10, big + 1.5e6), (15, 1.0)]
    assert judge.counter_resets(pts, restarts=[], slack=2) == ([], [15])
    assert judge.increase(pts[:3], since=0, appeared_from_zero=False) == pytest.approx(1.5e6)


def test_a_restored_counter_that_also_restarted_from_zero_counts_twice() -> None:
    """A persisted count (recoveries, NDB restarts) comes back from its state file: no
    reset, increase 1. Had the process started from 0 and re-read its log, the increase
    says 2 against a schedule of 1."""
    restored = [(0, 3), (5, 3), (10, 4), (20, 4)]  # killed at 12, back with its state
    assert judge.increase(restored, since=1, appeared_from_zero=False) == 1
    recounted = [(0, 3), (5, 3), (10, 4), (20, 1), (25, 4)]
    assert judge.increase(recounted, since=1, appeared_from_zero=False) == 5
    # a series that appears within the run was counted from 0
    assert judge.increase([(30, 1), (35, 1)], since=1, appeared_from_zero=True) == 1


def test_lost_samples_outside_fault_windows_and_slowness_apart() -> None:
    up = {("ndbinfo", "a"): {"up": [(0, 1), (5, 1), (15, 1), (20, 0), (25, 1), (30, 1),
                                    (35, 1), (45, 1)],
                             "duration": [(20, 4.0)]},
          ("galera", "b"): {"up": [(0, 1), (5, 1), (10, 1), (15, 1), (20, 1), (25, 1),
                                   (30, 1), (35, 1), (45, 1)]},
          ("loadgen", "c"): {"up": [(t, 1) for t in (0, 5, 10, 15, 20, 25, 30, 35, 45)]}}
    fault = Fault("kill-ndb-exporter", "ndb-exporter", start=8, end=9, jobs=["ndbinfo"])
    out = judge.lost_samples(up, 5, 4, [fault], (0, 45))
    a = out["ndbinfo a"]
    # slot 10: in the fault's window; slot 20: a timed-out scrape; slot 40: every target
    # missed it (the scraper stalled)
    assert (a["in_fault_windows"], a["slowness"], a["lost"]) == (1, 2, 0)
    assert out["galera b"]["slowness"] == 1 and out["galera b"]["lost"] == 0
    up[("galera", "b")]["up"].remove((25, 1))
    assert judge.lost_samples(up, 5, 4, [fault], (0, 45))["galera b"]["lost_at"] == [25]


def test_one_scraper_stall_across_the_targets_offsets_is_slowness() -> None:
    """Targets are scraped at their own offsets: one stall of the scraper leaves gaps that
    round to slot 8 for five targets and to slot 9 for two (43.0, 44.4), fewer than half.
    Seen in a soak with both cores kept busy: the targets on the far side of the rounding
    were called lost."""
    offsets = {"a": 0.2, "b": 0.5, "c": 1.0, "d": 1.5, "e": 2.1, "f": 3.0, "g": 4.4}
    up = {("job", k): {"up": [(o + 5 * i, 1) for i in range(16) if i != 8]}
          for k, o in offsets.items()}
    out = judge.lost_samples(up, 5, 4, [], (0, 80))
    assert all(r["lost"] == 0 and r["slowness"] == 1 for r in out.values()), out
    # a target's own gap two slots away from the stall stays lost
    up[("job", "a")]["up"].remove((60.2, 1))
    assert judge.lost_samples(up, 5, 4, [], (0, 80))["job a"]["lost_at"] == [60.2]


def _fired(name: str, at: float, resolved: float | None = None, **labels: str) -> judge.Fired:
    return judge.Fired(name, labels, at, "", resolved)


def test_alerts_expected_fired_unexpected() -> None:
    f = Fault("kill-ndb-exporter", "ndb-exporter", start=100, end=200, hold=100)
    short = Fault("kill-tracker", "galera-tracker", start=300, end=310, hold=10)
    rule_for = {"NdbExporterDown": 60, "GaleraTrackerDown": 300}
    fired = [_fired("NdbExporterDown", 165, 215, cluster="lab-ndb"),
             _fired("GaleraNodeNotReady", 400, 450, node="node1"),
             _fired("ClusterscopeWatchdog", 50)]
    out = judge.judge_alerts(fired, [f, short], rule_for, 25, (0, 1000), [])
    rows = {r["alert"]: r for r in out["expected"]}
    assert rows["NdbExporterDown"]["required"] and rows["NdbExporterDown"]["ok"]
    assert rows["NdbExporterDown"]["fired_after_s"] == 65
    # held 10 s, its `for:` is 5 m: not required, and not missed
    assert not rows["GaleraTrackerDown"]["required"] and rows["GaleraTrackerDown"]["ok"]
    assert [u["alert"] for u in out["unexpected"]] == ["GaleraNodeNotReady"]
    # a required alert that never fired fails
    out = judge.judge_alerts([], [f], rule_for, 25, (0, 1000), [])
    assert out["expected"][0]["ok"] is False


def test_an_alert_from_before_the_run_that_fires_again_is_carried_over() -> None:
    """A lab brought up a minute ago: GaleraNodeRestarted fires for node1 (uptime < 300 s).
    A killed exporter cuts its series, it resolves and fires again: not the run's doing."""
    f = Fault("kill-mysqld-exporter", "mysqld-exporter", start=50, end=57, hold=6)
    again = _fired("GaleraNodeRestarted", 73, None, node="node1", alertgroup="galera")
    before = [{"alertname": "GaleraNodeRestarted", "state": "firing",
               "labels": {"alertname": "GaleraNodeRestarted", "node": "node1"}}]
    out = judge.judge_alerts([again], [f], {"GaleraExporterDown": 120}, 25, (0, 300), [],
                             before)
    assert out["unexpected"] == [] and out["carried_over"][0]["at"] == 73
    out = judge.judge_alerts([again], [f], {"GaleraExporterDown": 120}, 25, (0, 300), [])
    assert [u["alert"] for u in out["unexpected"]] == ["GaleraNodeRestarted"]


def test_an_alert_that_never_resolves_fails_unless_its_rule_still_holds_it() -> None:
    f = Fault("galera-ist", "node3", start=100, end=150, hold=40)
    rule_for = {"GaleraNodeRestarted": 0, "GaleraNodeNotReady": 60,
                "GaleraClusterSizeReduced": 60}
    late = _fired("GaleraNodeRestarted", 155, None, node="node3")
    out = judge.judge_alerts([late], [f], rule_for, 25, (0, 300), [])
    assert out["explained_but_unresolved"] == []  # uptime < 300 s still holds it at 300
    out = judge.judge_alerts([late], [f], rule_for, 25, (0, 1000), [])
    assert [e["alert"] for e in out["explained_but_unresolved"]] == ["GaleraNodeRestarted"]


def test_windows_spanning_a_cluster_event_must_be_invalid() -> None:
    f = Fault("galera-ist", "node3", start=100, end=200)
    # as the loadgen's nodes saw it: node3 evicted (membership), node3 back (membership)
    events = [(103, 104, "node1 membership 3 -> 4"), (182, 183, "node1 membership 4 -> 5"),
              (194.5, 196.5, "node2 Donor/Desynced")]
    windows = [{"start": 80, "end": 90, "valid": True},
               {"start": 95, "end": 105, "valid": False, "reasons": ["membership"]},
               {"start": 120, "end": 130, "valid": True},  # degraded, steady
               {"start": 175, "end": 185, "valid": True},  # spans the rejoin: wrong
               {"start": 186, "end": 196, "valid": True},  # touches an event: either
               {"start": 300, "end": 310, "valid": False, "reasons": ["?"]}]
    out = judge.judge_windows(windows, [f], events)
    assert out["invalidated_as_expected"] == 1 and out["degraded_either"] == 2
    assert out["valid_as_expected"] == 1
    assert [w["start"] for w in out["valid_but_spanned_an_event"]] == [175]
    assert [w["start"] for w in out["invalid_outside_faults"]] == [300]
    assert out["ok"] is False


def test_a_slow_look_places_a_change_before_its_answer_not_its_question() -> None:
    """On a busy machine a look is answered seconds after it was asked. The membership it
    reads may have changed after the question (after the loadgen's window ended): the
    event lies between the previous look's question and this look's answer, never before
    the answer came."""
    changed = []

    def read(n: int) -> dict[str, str]:
        if not changed:
            changed.append(None)
            return {"wsrep_cluster_conf_id": "5", "wsrep_local_state_comment": "Synced"}
        time.sleep(0.3)
        changed[0] = time.time()  # the membership changes while the look waits
        time.sleep(0.3)
        return {"wsrep_cluster_conf_id": "6", "wsrep_local_state_comment": "Synced"}

    watch = soak.GaleraWatch(None, nodes=(1,), read=read)  # type: ignore[arg-type]
    last: dict = {}
    watch.look(1, last)
    watch.look(1, last)
    [(start, end, what)] = watch.events
    assert what == "node1 membership 5 -> 6"
    assert start <= changed[0] <= end


def test_a_look_without_an_answer_is_no_membership_change() -> None:
    """A look that times out on a loaded machine says nothing about the cluster: it is kept
    apart, and the membership is compared across it."""
    answers = iter([{"wsrep_cluster_conf_id": "5", "wsrep_local_state_comment": "Synced"},
                    OSError("timed out"),
                    {"wsrep_cluster_conf_id": "5", "wsrep_local_state_comment": "Synced"},
                    OSError("timed out"),
                    {"wsrep_cluster_conf_id": "7", "wsrep_local_state_comment": "Joined"}])

    def read(n: int) -> dict[str, str]:
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a

    watch = soak.GaleraWatch(None, nodes=(2,), read=read)  # type: ignore[arg-type]
    last: dict = {}
    for _ in range(3):
        watch.look(2, last)
    assert watch.events == [] and len(watch.unanswered) == 1
    watch.look(2, last)
    watch.look(2, last)
    assert [e[2] for e in watch.events] == ["node2 membership 5 -> 7", "node2 Joined"]
    # a window over the unanswered look alone, invalid because the loadgen's own snapshot
    # got no answer either, is not held against it
    a, b, _ = watch.unanswered[0]
    window = {"start": a - 3, "end": b + 3, "valid": False, "reasons": ["unreachable"]}
    out = judge.judge_windows([window], [], [], unanswered=watch.unanswered)
    assert out["ok"] and out["degraded_either"] == 1


def test_growth_uses_the_longest_incarnation() -> None:
    mib = 2**20
    rows = [(t * 60.0, 1, (100 + t) * mib, 10) for t in range(30)]  # 1 MiB a minute
    rows += [(1800 + t * 60.0, 2, 50 * mib, 10) for t in range(6)]  # restarted
    g = judge.growth({"ndb-exporter": rows})["ndb-exporter"]
    assert g["incarnations"] == 2
    assert g["rss_mib_per_hour"] == pytest.approx(60, rel=0.01)
    assert g["fds_per_hour"] == 0


def test_the_table_names_only_alerts_the_rules_define() -> None:
    import yaml

    from clusterscope.rules import generate
    from clusterscope.rules.rules_config import load_config
    known = set()
    for text in generate.render_files(load_config()).values():
        for g in yaml.safe_load(text).get("groups", []):
            known |= {r["alert"] for r in g["rules"] if "alert" in r}
    assert expect.check_names(known) == []
    assert set(soak.CYCLE) == set(expect.KINDS)


def _settle_on(monkeypatch, polls: list[list[tuple[str, str, str]]]) -> list[int]:
    """vmalert's answers, one list of (alert, state, node) per poll; the last one repeats.
    Returns the count of polls made so far (one element)."""
    from clusterscope.lab import monitoring_part
    made = [0]

    def firing_now(lab: object) -> list[dict]:
        made[0] += 1
        rows = polls[min(made[0], len(polls)) - 1]
        return [{"alertname": a, "state": st, "labels": {"alertname": a, "node": n}}
                for a, st, n in [("ClusterscopeWatchdog", "firing", ""), *rows]]

    monkeypatch.setattr(monitoring_part, "firing_now", firing_now)
    return made


def test_a_short_soak_settles_once_nothing_is_pending_and_the_firing_hold_still(
        monkeypatch) -> None:
    """A lab up a minute: GaleraNodeRestarted fires for its nodes until their uptime passes
    300 s. A short run does not wait for that; it waits while anything is pending (about to
    fire) or what fires changes, then takes what fires into its snapshot."""
    from clusterscope.bench.soak.settle import settle
    restarted = [("GaleraNodeRestarted", "firing", "node1"),
                 ("GaleraNodeRestarted", "firing", "node3")]
    polls = [restarted + [("GaleraClusterSizeReduced", "pending", "")]] * 4 + [
        restarted[:1]] * 3 + [restarted]
    made = _settle_on(monkeypatch, polls)
    out = settle(None, timeout=10, steady=True, quiet=0.2, poll=0.05)  # type: ignore[arg-type]
    assert out["settled"] and out["still_active"] == ["GaleraNodeRestarted firing"]
    # neither while the pending one was there nor over the change of what fired
    assert made[0] >= 8 + 4
    # a full-length run waits until nothing but the Watchdog is active
    _settle_on(monkeypatch, [restarted])
    out = settle(None, timeout=0.5, quiet=0.2, poll=0.05)  # type: ignore[arg-type]
    assert not out["settled"] and out["still_active"] == ["GaleraNodeRestarted firing"]
    _settle_on(monkeypatch, [restarted, []])
    assert settle(None, timeout=10, quiet=0.2, poll=0.05)["settled"]  # type: ignore[arg-type]


# -- the soak in the shared lab ---------------------------------------------------------------
@pytest.mark.lab
def test_soak_three_minutes_in_the_shared_lab(lab, tmp_path) -> None:
    """`clusterscope bench soak --minutes 3` exits 0: every fault of the cycle ran, no
    counter reset without its process restarting, every recovery, restart and failover
    counted once, no sample lost outside the fault windows, no alert fired that no fault
    explains, and the loadgen's windows invalid exactly where the cluster changed."""
    lab.ensure("ndb", "galera", "monitoring")
    lab.cli("lab", "ndb", "fault", "clear")  # whatever an earlier test left behind
    # a loadgen an earlier test started (or left dead) is a scrape target the soak did not
    # start: LoadgenDown held the settle for 6 minutes, and its samples counted as lost
    lab.cli("loadgen", "stop", check=False)
    env = dict(lab.env, CLUSTERSCOPE_SOAK_LAB_DIR=str(lab.root),
               CLUSTERSCOPE_SOAK_OUT=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", "bench", "soak",
                           "--minutes", "3", "--json"], env=env, text=True,
                          capture_output=True, timeout=1500)
    print(proc.stderr[-3000:])
    start = proc.stdout.find("{")
    assert start >= 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    figures = json.loads(proc.stdout[start:])["soak"]
    print(json.dumps({k: figures.get(k) for k in ("failures", "load_average", "counters",
                                                   "alerts_unexpected", "windows")},
                     indent=1, default=str))
    assert proc.returncode == 0, figures.get("failures") or figures.get("error")
    assert figures["ok"] is True
    assert figures["through_the_door"] is True  # read as a user's toolkit reads compose's
    kinds = {k.split(" ", 1)[1] for k in figures["faults"]}
    assert kinds == set(soak.CYCLE)
    assert set(OURS) <= set(figures["processes"])
    assert all(c["ok"] for c in figures["counters"]["counts_vs_schedule"].values())
    assert figures["windows"]["windows"] > 0
    assert (tmp_path / "soak.json").is_file()
    assert os.path.samefile(figures["json_file"], tmp_path / "soak.json")
