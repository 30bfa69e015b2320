"""`clusterscope bench ab-alarms`: how often ExperimentOverheadChanged cries wolf, and how
fast it sees a real change, on weeks of replayed A/A units.

The units are the lab's: the A/A recording of `clusterscope bench loadgen-calibration`
(two tables of identical DDL, under the whole-workload and the mixed-statement design),
block-resampled (blocks of consecutive units, so their autocorrelation stays), laid out as
the always-on cycle hands them to one comparison (a burst every turn of the cycle), summed
into the loadgen's unit counters as a scrape every 15 s sees them, and judged by the rule's
replica (alarm_replica.py, checked against promtool) with the committed settings
(rules/config.yaml). Per design and reference (the day before; a pin of an hour):

- false alarms per week per comparison over `weeks` replayed weeks, with its exact
  Poisson interval;
- the delay to detect a step of 2 and of 5 points added at a random time: median,
  quartiles and the share detected within 2 hours.

Both at the cycle's rate of units for the comparison (its share of the cycle's time, from
experiments.yaml) and for a comparison run alone (the whole time). The replica is checked
once more against the deployed evaluator: vmalert replaying the committed rule file over
the same counters in a VictoriaMetrics (alarm_vmalert.py), evaluation by evaluation.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import dataclass, replace
from statistics import fmean, median

from clusterscope_loadgen import config, designs

from clusterscope.bench import alarm_replica as replica
from clusterscope.bench.ab_calibration import RECORD, CalPlan, record
from clusterscope.bench.ab_validity import MECHANISMS_CONFIG, estimand_designs
from clusterscope.bench.loadgen_ab import galera
from clusterscope.inference import poisson_interval
from clusterscope.rules.rules_config import load_config

DAY, HOUR = 86400.0, 3600.0


@dataclass(frozen=True)
class AlarmPlan:
    weeks: int = 12  # replayed weeks per setting (each after a day that only serves as the
    steps: int = 40  # reference); replays per step size
    block: int = 8  # units per bootstrap block
    seed: int = 20240601
    record_units: int = 400  # A/A units to record when no recording exists


QUICK_ALARMS = AlarmPlan(weeks=1, steps=3, record_units=12)


def false_alarms(episodes: list[tuple[float, float]], start: float = 0.0) -> int:
    """Alerts that began at or after `start` (before it the reference period is not full)."""
    return sum(1 for first, _ in episodes if first >= start)


def detection_delay(episodes: list[tuple[float, float]], step_at: float) -> float | None:
    """Seconds from a step to the first alert that began at or after it (None: never; an
    alert already firing at the step is not its detection)."""
    after = [first for first, _ in episodes if first >= step_at]
    return after[0] - step_at if after else None


@dataclass(frozen=True)
class Schedule:
    """How one comparison gets units: `per_turn` of them in the first `busy` seconds of
    every `turn` seconds."""

    turn: float
    busy: float
    per_turn: float

    @property
    def per_hour(self) -> float:
        return self.per_turn * HOUR / self.turn

    def times(self, hours: float, rng: random.Random) -> list[float]:
        out, start = [], rng.uniform(0, self.turn)
        carry = 0.0
        while start < hours * HOUR:
            carry += self.per_turn
            k = int(carry)
            carry -= k
            out += [start + self.busy * (i + 1) / max(k, 1) for i in range(k)]
            start += self.turn
        return out


def unit_seconds(rows: list) -> float:
    """Wall seconds per unit while the design runs: the median gap between consecutive
    times, per unit at the later time (units stamped with their round's end share one
    time: a time-sliced round holds several), turns of other designs between them left
    out."""
    times = sorted({r[0] for r in rows})
    count = {t: sum(1 for r in rows if r[0] == t) for t in times}
    per = [(b - a) / count[b] for a, b in zip(times, times[1:], strict=False)]
    mid = median(per)
    return median([g for g in per if g < 3 * mid])


def cycle_schedule(design: str, seconds_per_unit: float, recorded_windows: int = 2
                   ) -> Schedule:
    """What the always-on cycle on Galera gives fk2 against nofk: every experiment the cycle
    runs in turn for its duration (loadgen cycle), fk's share of it, and within fk the
    comparison's share of a round (all fk variants' windows in a whole-workload round, its
    group's window in an interleaved one; the recording ran 2 variants)."""
    exps = config.load()
    names = [n for n, e in exps.items() if any(v.runs_on("galera") for v in e.variants)]
    turn = sum(exps[n].duration for n in names)
    fk = exps["fk"]
    busy = fk.duration - fk.warmup
    if design == "interleaved":
        within = recorded_windows / 2 / len(designs.groups(list(fk.variants)))
    else:
        within = recorded_windows / len(fk.variants)
    return Schedule(turn, busy, busy / seconds_per_unit * within)


Pair = tuple[float, float]  # a recorded unit: (baseline, variant) throughput


def bootstrap(pairs: list[Pair], count: int, block: int, rng: random.Random) -> list[Pair]:
    """`count` units of blocks of `block` consecutive recorded ones, blocks drawn at random
    (circularly): the recording's autocorrelation up to `block` lags stays."""
    out: list[Pair] = []
    while len(out) < count:
        i = rng.randrange(len(pairs))
        out += [pairs[(i + k) % len(pairs)] for k in range(block)]
    return out[:count]


def _series(pairs: list[Pair], sched: Schedule, days: float, block: int,
            rng: random.Random, step_at: float | None = None, step: float = 0.0
            ) -> replica.Counters:
    """`days` of replayed units on the schedule, as the scrape sees their counters; from
    `step_at` each unit's variant throughput less `step` x its baseline's, which raises
    the ratio-of-means overhead by exactly `step` (a ratio)."""
    times = sched.times(days * 24, rng)
    values = bootstrap(pairs, len(times), block, rng)
    units = [(t, b, v - (step * b if step_at is not None and t >= step_at else 0.0))
             for t, (b, v) in zip(times, values, strict=True)]
    return replica.scrape(units, days * DAY, 15.0)


def _pin(c: replica.Counters, p: replica.RuleParams) -> tuple[float, float, float] | None:
    """A pin taken at the end of the first day: that hour's units, mean and SE."""
    return replica.period(c, DAY, p.window)


def _false_alarms(pairs: list[Pair], sched: Schedule, p: replica.RuleParams,
                  plan: AlarmPlan, pinned: bool, rng: random.Random
                  ) -> tuple[int, int, list[float]]:
    """False alarms over the replayed weeks, and the rule's z of every whole hour's period
    against its reference (non-overlapping periods; honest SEs give them variance 1)."""
    alarms, zs = 0, []
    for _ in range(plan.weeks):
        c = _series(pairs, sched, 8, plan.block, rng)
        pin = _pin(c, p) if pinned else None
        alarms += false_alarms(replica.firing(c, p, DAY, 8 * DAY, pin), DAY)
        for k in range(1, 7 * 24 + 1):
            t = DAY + k * HOUR
            ref = pin if pinned else replica.period(c, t - p.offset, p.window)
            z = replica.z_score(replica.period(c, t, p.window), ref, p)
            if z is not None and math.isfinite(z):
                zs.append(z)
    return alarms, plan.weeks, zs


def _delays(pairs: list[Pair], sched: Schedule, p: replica.RuleParams, plan: AlarmPlan,
            pinned: bool, step: float, rng: random.Random) -> list[float]:
    out = []
    for _ in range(plan.steps):
        t0 = DAY + HOUR + rng.uniform(0, 20 * HOUR)
        c = _series(pairs, sched, 3, plan.block, rng, step_at=t0, step=step)
        d = detection_delay(replica.firing(c, p, DAY, 3 * DAY, _pin(c, p) if pinned else None),
                            t0)
        out.append(math.inf if d is None else d)
    return out


def _summary(delays: list[float]) -> dict:
    q = sorted(delays)
    n = len(q)
    hours = [None if math.isinf(x) else round(x / HOUR, 2) for x in
             (q[n // 4], q[n // 2], q[(3 * n) // 4])]
    return {"median_h": hours[1], "quartiles_h": [hours[0], hours[2]],
            "within_2h_ratio": round(sum(1 for x in q if x <= 2 * HOUR) / n, 3)}


def judge(pairs: list[Pair], sched: Schedule, p: replica.RuleParams, plan: AlarmPlan,
          pinned: bool) -> dict:
    rng = random.Random(plan.seed)
    alarms, weeks, zs = _false_alarms(pairs, sched, p, plan, pinned, rng)
    lo, hi = poisson_interval(alarms)
    row = {"units_per_hour": round(sched.per_hour, 1),
           "false_alarms": alarms, "weeks": weeks,
           "false_alarms_per_week": round(alarms / weeks, 3),
           "false_alarms_per_week_ci": [round(lo / weeks, 3), round(hi / weeks, 3)],
           # against a pin every hour shares the pin's error: their z are not independent
           "hourly_z_mean_square": round(fmean(z * z for z in zs), 3) if zs else None,
           "hourly_z_beyond_threshold_ratio":
               round(sum(1 for z in zs if abs(z) > p.z) / len(zs), 5) if zs else None}
    for step in (0.02, 0.05):
        row[f"step_{round(step * 100)}pt"] = _summary(
            _delays(pairs, sched, p, plan, pinned, step, rng))
    return row


def deployed_check(pairs: list[Pair], sched: Schedule, p: replica.RuleParams,
                   plan: AlarmPlan, days: float = 4.0) -> dict:
    """The replica against vmalert replaying the committed rule file over the same counters
    (alarm_vmalert.py): three comparisons of `days`, two with a 5-point step 1.5 days
    before the end (day 3 of 4), on
    a schedule where such a step fires (where nothing fires the two agree on silence, a
    check that cannot fail)."""
    from clusterscope.bench import alarm_vmalert
    rng = random.Random(plan.seed + 1)
    series = {f"cmp{i}": _series(pairs, sched, days, plan.block, rng,
                                 step_at=(days - 1.5) * DAY if i else None, step=0.05)
              for i in range(3)}
    port_base = int(os.environ.get("CLUSTERSCOPE_BENCH_PORT_BASE", "26300"))
    got = alarm_vmalert.replay(series, DAY, days * DAY, port_base, p.interval)
    mine = {k: {int(t) for t, f in replica.states(c, p, DAY, days * DAY).items() if f}
            for k, c in series.items()}
    theirs = {k: {int(t) for t in got.get(k, [])} for k in series}
    both = sum(len(mine[k] & theirs[k]) for k in series)
    either = sum(len(mine[k] | theirs[k]) for k in series)
    return {"comparisons": len(series), "days": days,
            "firing_evaluations_replica": sum(map(len, mine.values())),
            "firing_evaluations_vmalert": sum(map(len, theirs.values())),
            "agreement_ratio": round(both / either, 4) if either else 1.0}


def load_recording(plan: AlarmPlan) -> dict:
    """The calibration's A/A recording, or a new one on a lab Galera if there is none."""
    if RECORD.exists():
        return json.loads(RECORD.read_text())["aa"]
    exp = config.experiment("inject", MECHANISMS_CONFIG)
    cal = CalPlan() if plan.record_units >= 100 else replace(CalPlan(), window=2.0, chunk=4)
    exp = replace(exp, options={**exp.options, "table_rows": cal.rows})
    with galera() as targets:
        return record(targets, exp, "aa_v", cal, plan.record_units, truth=False,
                      which=estimand_designs())


def run(quick: bool = False) -> dict:
    plan = QUICK_ALARMS if quick else AlarmPlan()
    t0 = time.monotonic()
    rec = load_recording(plan)
    p = replica.RuleParams.from_config(load_config()["loadgen"])
    rows: dict[str, dict] = {}
    # a recording of one design alone (`--estimand`) is replayed for that design only
    for reading, design in rec.get("designs", estimand_designs()).items():
        units = rec[reading]
        pairs = [(b, v) for _, b, v in units if b > 0]
        spu = unit_seconds(units)
        cycle = cycle_schedule(design, spu)
        alone = Schedule(turn=HOUR, busy=HOUR, per_turn=HOUR / spu)
        for rate, sched in (("cycle", cycle), ("alone", alone)):
            for ref in ("day_before", "pinned"):
                rows[f"{reading}/{rate}/{ref}"] = judge(pairs, sched, p, plan,
                                                        ref == "pinned")
    head = rows.get("whole_workload/cycle/day_before", {})
    whole = rec["whole_workload"]
    # the comparison run alone: a 5-point step fires there (at the cycle's pace it mostly
    # does not within the replay)
    check = deployed_check([(b, v) for _, b, v in whole if b > 0],
                           Schedule(turn=HOUR, busy=HOUR, per_turn=HOUR / unit_seconds(whole)),
                           p, plan, days=2.0 if quick else 4.0)
    return {"rule": p.__dict__, "recording": str(RECORD), "settings": rows,
            "vmalert_check": check,
            "false_alarms_per_week": head.get("false_alarms_per_week"),
            "detected_5pt_within_2h_ratio": head.get("step_5pt", {}).get("within_2h_ratio"),
            "minutes": round((time.monotonic() - t0) / 60, 1)}
