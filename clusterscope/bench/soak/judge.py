"""The soak's judgements, as pure functions of what it recorded (`record.py`, `faults.py`).

- `growth`: RSS and open file descriptors per process, first vs last third, as a slope
  per hour (over the process's longest-lived incarnation: a killed process starts afresh);
- `counter_resets` / `increase`: counters that went back without their process restarting,
  and reset-aware increases (a counter restored from a state file that restarts from 0
  anyway is counted again, and shows as a count above the schedule's);
- `lost_samples`: scrape slots with no sample or `up` 0, per target, outside the fault
  windows that touch it; a slot lost while VictoriaMetrics missed most targets at once
  (a stalled scraper) or whose scrape ran into its timeout is put down to slowness, not
  to the target;
- `judge_alerts`: each fault's expected alerts fired (when held past their `for:`) and
  resolved, and no alert fired that no fault explains;
- `judge_windows`: loadgen windows that saw a cluster event invalid, the rest valid.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from clusterscope.bench.soak import expect


@dataclass
class Fault:
    kind: str
    target: str  # the node, SQL node or service the fault hit
    start: float
    end: float = 0.0  # when the fault was over (service back, node Synced)
    hold: float = 0.0  # seconds the fault was held before recovery began
    restarted: list[str] = field(default_factory=list)  # processes killed and started
    jobs: list[str] = field(default_factory=list)  # scrape jobs it may cut ("*": all)
    error: str | None = None


# -- growth -----------------------------------------------------------------------------------
def _third_means(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """(mean of the first third, mean of the last third, hours between their middles)."""
    if len(points) < 6:
        return None
    n = len(points) // 3
    first, last = points[:n], points[-n:]
    span = (statistics.fmean(t for t, _ in last) - statistics.fmean(t for t, _ in first))
    if span <= 0:
        return None
    return (statistics.fmean(v for _, v in first), statistics.fmean(v for _, v in last),
            span / 3600)


def growth(samples: dict[str, list[tuple[float, int, float, float]]]) -> dict[str, dict]:
    """samples: process -> [(t, pid, rss_bytes, open_fds)]. Per process: its longest
    incarnation's RSS (MiB) and fds, first vs last third, and the slope per hour."""
    out: dict[str, dict] = {}
    for name, rows in sorted(samples.items()):
        by_pid: dict[int, list] = {}
        for t, pid, rss, fds in rows:
            by_pid.setdefault(pid, []).append((t, rss, fds))
        if not by_pid:
            continue
        pid, longest = max(by_pid.items(), key=lambda kv: kv[1][-1][0] - kv[1][0][0])
        row: dict = {"incarnations": len(by_pid),
                     "minutes_observed": round((longest[-1][0] - longest[0][0]) / 60, 1)}
        rss = _third_means([(t, r / 2**20) for t, r, _ in longest])
        fds = _third_means([(t, f) for t, _, f in longest])
        if rss:
            row.update(rss_mib_first=round(rss[0], 1), rss_mib_last=round(rss[1], 1),
                       rss_mib_per_hour=round((rss[1] - rss[0]) / rss[2], 2))
        if fds:
            row.update(fds_first=round(fds[0], 1), fds_last=round(fds[1], 1),
                       fds_per_hour=round((fds[1] - fds[0]) / fds[2], 1))
        out[name] = row
    return out


def leaks(rows: dict[str, dict], ours: Iterable[str], rss_ratio: float = 1.25,
          fds_growth: float = 10) -> list[str]:
    """Processes of ours whose last third holds clearly more than the first: RSS up by
    more than `rss_ratio`, or `fds_growth` more open descriptors (judged on a full-length
    run only: minutes of warm-up caches look like growth)."""
    out = []
    for name in ours:
        r = rows.get(name, {})
        if r.get("rss_mib_first") and r["rss_mib_last"] > rss_ratio * r["rss_mib_first"]:
            out.append(f"{name}: RSS {r['rss_mib_first']} -> {r['rss_mib_last']} MiB")
        if "fds_first" in r and r["fds_last"] - r["fds_first"] > fds_growth:
            out.append(f"{name}: open fds {r['fds_first']} -> {r['fds_last']}")
    return out


# -- counters ---------------------------------------------------------------------------------
# VictoriaMetrics stores a float that is not a whole number as a decimal of 12 significant
# digits (15 above 1e6), scaled to one exponent per block (VictoriaMetrics/VictoriaMetrics
# lib/decimal/decimal.go@0ed29110, positiveFloatToDecimalSlow, AppendFloatToDecimal): a
# counter of sums (the loadgen's squares of rows per second) can read back a last digit
# lower than it read before. Such a drop is storage rounding, not a reset (VictoriaMetrics'
# own increase() takes a drop under 1/8 of the value as none: removeCounterResets in
# app/vmselect/promql/rollup.go@108260d6).
ROUNDING = 1e-11


def went_back(v0: float, v1: float) -> bool:
    """The counter fell by more than VictoriaMetrics' rounding of its value."""
    return v0 - v1 > ROUNDING * abs(v0)


def counter_resets(points: list[tuple[float, float]], restarts: Iterable[float],
                   slack: float) -> tuple[list[float], list[float]]:
    """(explained, unexplained) times a counter went back: explained when its process was
    restarted since the sample before (within `slack`)."""
    restarts = sorted(restarts)
    explained, unexplained = [], []
    for (t0, v0), (t1, v1) in zip(points, points[1:], strict=False):
        if went_back(v0, v1):
            hit = any(t0 - slack <= r <= t1 + slack for r in restarts)
            (explained if hit else unexplained).append(t1)
    return explained, unexplained


def increase(points: list[tuple[float, float]], since: float, appeared_from_zero: bool
             ) -> float:
    """Reset-aware increase of a counter over the samples at or after `since` (a reset
    adds the new value, as Prometheus' increase() does). `appeared_from_zero`: the series
    began within the run, so its first value was counted from 0."""
    pts = [(t, v) for t, v in points if t >= since]
    if not pts:
        return 0.0
    before = [v for t, v in points if t < since]
    prev = before[-1] if before else (0.0 if appeared_from_zero else pts[0][1])
    total = 0.0
    for _, v in pts:
        total += v if went_back(prev, v) else max(0.0, v - prev)
        prev = v
    return total


# -- sample loss ------------------------------------------------------------------------------
def lost_samples(targets: dict[tuple[str, str], dict], interval: float, timeout: float,
                 faults: list[Fault], span: tuple[float, float]) -> dict[str, dict]:
    """targets: (job, instance) -> {"up": [(t, v)], "duration": [(t, v)]}. Per target:
    slots lost in fault windows, to slowness (a scraper stall or a timed-out scrape), and
    otherwise (`lost`, the goal is 0)."""
    start, end = span
    missing: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for key, series in targets.items():
        pts = sorted((t, v) for t, v in series["up"] if start <= t <= end)
        durations = dict(series.get("duration", []))
        slots: list[tuple[float, str]] = []
        for (t0, _), (t1, _) in zip(pts, pts[1:], strict=False):
            gap = round((t1 - t0) / interval)
            slots += [(t0 + k * interval, "gap") for k in range(1, gap)]
        for t, v in pts:
            if v == 0:
                slow = durations.get(t, 0.0) >= 0.9 * timeout
                slots.append((t, "timeout" if slow else "down"))
        missing[key] = slots
    # a slot most targets lost at once: the scraper (VictoriaMetrics) did not run
    stalled = _stalled(missing, interval, len(targets))
    out: dict[str, dict] = {}
    for (job, inst), slots in sorted(missing.items()):
        row = {"job": job, "in_fault_windows": 0, "slowness": 0, "lost": 0, "lost_at": []}
        for t, how in slots:
            if _in_fault(job, t, faults, interval):
                row["in_fault_windows"] += 1
            elif how == "timeout" or (how == "gap" and _near(t, interval, stalled)):
                row["slowness"] += 1
            else:
                row["lost"] += 1
                row["lost_at"].append(round(t, 1))
        out[f"{job} {inst}"] = row
    return out


def _near(t: float, interval: float, stalled: set[int]) -> bool:
    """A gap in or next to a stalled slot: targets are scraped at their own offsets within
    the interval, so one stall of the scraper rounds to two neighbouring slots."""
    slot = round(t / interval)
    return bool({slot - 1, slot, slot + 1} & stalled)


def _stalled(missing: dict, interval: float, n_targets: int) -> set[int]:
    counts: dict[int, int] = {}
    for slots in missing.values():
        for slot in {round(t / interval) for t, how in slots if how == "gap"}:
            counts[slot] = counts.get(slot, 0) + 1
    return {s for s, c in counts.items() if c >= max(2, n_targets // 2)}


def _in_fault(job: str, t: float, faults: list[Fault], interval: float) -> bool:
    # a target is back once it answers one scrape after its process is: one interval
    # before and two after the fault's window
    return any((job in f.jobs or "*" in f.jobs)
               and f.start - interval <= t <= (f.end or f.start) + 2 * interval
               for f in faults)


# -- alerts -----------------------------------------------------------------------------------
@dataclass
class Fired:
    """One alert instance: an alert name and label set from its first firing
    notification to its resolution."""
    name: str
    labels: dict[str, str]
    fired: float  # when the webhook got it firing (wall clock)
    starts_at: str
    resolved: float | None = None


def alert_instances(rows: list[dict]) -> list[Fired]:
    """Webhook rows (clusterscope.lab.monitoring_part.received) -> alert instances."""
    by_key: dict[tuple, Fired] = {}
    for r in sorted(rows, key=lambda r: r["received_at"]):
        labels = {k: v for k, v in r["labels"].items() if k != "alertname"}
        key = (r["alertname"], tuple(sorted(labels.items())), r.get("startsAt"))
        inst = by_key.get(key)
        if r["status"] == "firing" and inst is None:
            by_key[key] = Fired(r["alertname"], labels, r["received_at"], r.get("startsAt"))
        elif r["status"] == "resolved":
            if inst is None:  # firing sent before the run began
                inst = by_key[key] = Fired(r["alertname"], labels, float("-inf"),
                                           r.get("startsAt"))
            if inst.resolved is None:
                inst.resolved = r["received_at"]
    return list(by_key.values())


def _matches(inst_labels: dict[str, str], want: dict[str, str]) -> bool:
    return all(inst_labels.get(k) == v for k, v in want.items())


def judge_alerts(instances: list[Fired], faults: list[Fault], rule_for: dict[str, float],
                 grace: float, span: tuple[float, float], active_at_end: list[dict],
                 active_before: list[dict] | None = None) -> dict:
    """Expected vs fired. `rule_for`: alert name -> its `for:` seconds (from vmalert);
    `grace`: detection slack (a scrape, two evaluations and the webhook's path);
    `active_before`: vmalert's alerts when the run began (one that fires again after a
    fault cut its series is carried over, not caused by the run)."""
    before = [(a.get("alertname"), {k: v for k, v in (a.get("labels") or {}).items()
                                    if k != "alertname"}) for a in active_before or []]
    start, end = span
    kinds = expect.KINDS
    ran = [f for f in faults if f.error is None]

    def window(f: Fault, a: expect.Alert) -> tuple[float, float]:
        return f.start, (f.end or f.start) + rule_for.get(a.name, 0.0) + grace + a.lasts

    expected_rows, explained = [], set()
    for f in ran:
        kind = kinds[f.kind]
        for a in kind.expect:
            want = expect.resolve(a, f.target)
            lo, hi = window(f, a)
            hits = [i for i in instances if i.name == a.name and _matches(i.labels, want)
                    and lo <= i.fired <= hi]
            # held past its `for:` (an alert whose rule looks back after the fault, such as
            # uptime < 300 s, holds its condition `lasts` longer)
            need = f.hold + a.lasts >= rule_for.get(a.name, 0.0) + grace
            row = {"fault": f"{f.kind} {f.target}", "at": round(f.start - start),
                   "alert": a.name, "labels": want, "for_s": rule_for.get(a.name, 0.0),
                   "held_s": round(f.hold), "required": need, "fired": bool(hits)}
            if a.lasts:
                # an alert of what follows the fault (a restart's uptime): the instance that
                # fired after the fault ended, not one its series' gap made fire again
                hits.sort(key=lambda i: (i.fired < (f.end or f.start) - grace, i.fired))
            if hits:
                row["fired_after_s"] = round(hits[0].fired - f.start, 1)
                row["resolved"] = all(i.resolved is not None for i in hits)
                row["ok"] = row["resolved"] or _may_still_fire(hits, f, a, rule_for, grace,
                                                              end)
            else:
                row["ok"] = not need
            expected_rows.append(row)
    unexpected, judged, ambient, carried = [], [], [], []
    for i in instances:
        if i.name in expect.ALWAYS or not (start <= i.fired <= end + grace):
            continue
        if i.name in expect.AMBIENT and _matches(i.labels, expect.AMBIENT[i.name][0]):
            ambient.append({"alert": i.name, "labels": i.labels, "at": round(i.fired - start),
                            "resolved": i.resolved is not None,
                            "why": expect.AMBIENT[i.name][1]})
            continue
        why = None
        for f in ran:
            kind = kinds[f.kind]
            for a in (*kind.expect, *kind.allow):
                lo, hi = window(f, a)
                if a.name == i.name and _matches(i.labels, expect.resolve(a, f.target)) \
                        and lo <= i.fired <= hi:
                    why = f"{f.kind} {f.target}"
                    break
            if why:
                break
        entry = {"alert": i.name, "labels": i.labels, "at": round(i.fired - start),
                 "resolved": i.resolved is not None, "explained_by": why}
        if why is None and any(name == i.name and _matches(i.labels, labels)
                               for name, labels in before):
            carried.append({k: v for k, v in entry.items() if k != "explained_by"})
            continue
        judged.append(entry)
        if why is None:
            unexpected.append(entry)
        else:
            explained.add(id(i))
    never_resolved = [e for e in judged if e["explained_by"] and not e["resolved"]
                      and not _still_expected(e, faults, rule_for, grace, end)]
    return {"expected": expected_rows, "fired": judged, "unexpected": unexpected,
            "ambient": ambient, "carried_over": carried,
            "explained_but_unresolved": never_resolved,
            "active_at_end": [a for a in active_at_end
                              if a.get("alertname") not in expect.ALWAYS]}


def _may_still_fire(hits: list[Fired], f: Fault, a: expect.Alert,
                    rule_for: dict[str, float], grace: float, end: float) -> bool:
    """Unresolved at the run's end only because its rule still holds it (`lasts`)."""
    return (f.end or f.start) + rule_for.get(a.name, 0.0) + grace + a.lasts >= end


def _still_expected(entry: dict, faults: list[Fault], rule_for: dict[str, float],
                    grace: float, end: float) -> bool:
    for f in faults:
        if entry["explained_by"] != f"{f.kind} {f.target}":
            continue
        kind = expect.KINDS[f.kind]
        for a in (*kind.expect, *kind.allow):
            if a.name == entry["alert"] and _may_still_fire([], f, a, rule_for, grace, end):
                return True
    return False


# -- loadgen windows --------------------------------------------------------------------------
def judge_windows(windows: list[dict], faults: list[Fault], events: list[tuple],
                  edge: float = 1.0, unanswered: list[tuple] | tuple = ()) -> dict:
    """A window that holds a cluster event seen on the loadgen's nodes (`events`: (from,
    to, what), the interval the event surely lies in: a membership change between two
    looks, a look that read a node not Synced) wholly inside it, `edge` seconds clear of
    its ends, must be invalid. One that only touches an event (which side of the window's
    ends it fell is not known), lies within a Galera fault (a steady, smaller cluster) or
    overlaps a look the nodes did not answer (`unanswered`: the watcher knows nothing
    then, and a machine too busy to answer it may fail the loadgen's snapshots too) may be
    either; every other window must be valid."""
    out = {"windows": 0, "invalidated_as_expected": 0, "degraded_either": 0,
           "valid_as_expected": 0, "valid_but_spanned_an_event": [],
           "invalid_outside_faults": []}
    spans = [(f.start, f.end or f.start) for f in faults
             if expect.KINDS[f.kind].cluster_event]
    for w in windows:
        if w.get("warmup"):
            continue
        out["windows"] += 1
        a, b = w["start"], w["end"]
        hit_event = any(a + edge <= e[0] and e[1] <= b - edge for e in events)
        in_fault = (any(a <= s1 and b >= s0 for s0, s1 in spans)
                    or any(a <= e[1] and b >= e[0] for e in (*events, *unanswered)))
        if hit_event:
            if w["valid"]:
                out["valid_but_spanned_an_event"].append(_brief(w))
            else:
                out["invalidated_as_expected"] += 1
        elif in_fault:
            out["degraded_either"] += 1
        elif w["valid"]:
            out["valid_as_expected"] += 1
        else:
            out["invalid_outside_faults"].append(_brief(w))
    out["ok"] = not out["valid_but_spanned_an_event"] and not out["invalid_outside_faults"]
    return out


def _brief(w: dict) -> dict:
    return {"variant": w.get("variant"), "seq": w.get("seq"), "start": round(w["start"], 1),
            "end": round(w["end"], 1), "reasons": w.get("reasons", [])}
