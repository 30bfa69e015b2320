"""The soak's verdict: reads what a run left in VictoriaMetrics, the webhook and the
loadgen's windows, and applies the pure judgements of `judge.py` to it.
"""

from __future__ import annotations

import json
from pathlib import Path

from clusterscope.bench.soak import judge
from clusterscope.bench.soak.faults import GALERA_NODE, NDB_NODE, RECOPY_NODE, ROTATE_NODE
from clusterscope.bench.soak.judge import Fault
from clusterscope.bench.soak.record import OURS, points, use_door, vm_export
from clusterscope.lab.core import Lab

COUNTER_MATCH = ('{__name__=~"(galera_|ndb_exporter_|ndb_restarts_completed|loadgen_|'
                 'clusterscope_|process_cpu_seconds).*_total"}')


def rejudge(recording: Path) -> dict:
    """The judgement of a soak from its recording (and the lab's VictoriaMetrics and
    webhook, which must still hold the run)."""
    r = json.loads(recording.read_text())
    if r.get("door"):
        from clusterscope.lab import door_service
        use_door(door_service.access(Lab(Path(r["lab"])), "read"))
    served = {(job, inst): name for job, inst, name in r["served"]}
    faults = [Fault(**f) for f in r["faults"]]
    samples = {k: [tuple(x) for x in v] for k, v in r["samples"].items()}
    events = [tuple(e) for e in r["events"]]
    unanswered = [tuple(e) for e in r.get("unanswered", [])]
    return _judge(Lab(Path(r["lab"])), r["vm_url"], served, r["restarts"], faults, samples,
                  r["load"], (events, unanswered), Path(r["windows_file"]), tuple(r["span"]),
                  r["rule_for"], r["grace"], r["interval"], r["timeout"],
                  r.get("active_before", []))


def _judge(lab: Lab, vm_url: str, served: dict, restarts: dict[str, list[float]],
           done: list[Fault], samples: dict, load: list,
           seen: tuple[list, list],
           windows_file: Path,
           span: tuple[float, float], rule_for: dict[str, float], grace: float,
           interval: float, timeout: float, active_before: list[dict]) -> dict:
    from clusterscope.lab import monitoring_part
    t0, t1 = span
    failures: list[str] = []
    # processes
    growth = judge.growth(samples)
    full_length = max((r.get("minutes_observed", 0) for r in growth.values()), default=0) >= 30
    leaking = judge.leaks(growth, OURS) if full_length else []
    failures += [f"leak? {x}" for x in leaking]
    # counters
    counters, resets_bad = {}, []
    rows = vm_export(vm_url, COUNTER_MATCH, t0 - 120, t1)
    for row in rows:
        m = row["metric"]
        key = (m.get("job", ""), m.get("instance", ""))
        proc = served.get(key)
        if proc is None:
            continue
        pts = points(row)
        _, bad = judge.counter_resets(pts, restarts.get(proc, []), 2 * interval)
        bad = [t for t in bad if t >= t0]  # what happened before the run is not its business
        if bad:
            resets_bad.append({"series": series_text(m), "process": proc,
                               "at": [round(t - t0) for t in bad]})
    counters["series_checked"] = len(rows)
    counters["resets_without_restart"] = resets_bad
    if resets_bad:
        failures.append(f"{len(resets_bad)} counter(s) reset without their process restarting")
    counts = _counts(rows, done, t0)
    counters["counts_vs_schedule"] = counts
    for name, c in counts.items():
        if not c["ok"]:
            failures.append(f"{name}: counted {c['counted']}, scheduled {c['scheduled']}")
    # samples
    ups: dict[tuple[str, str], dict] = {}
    for metric, field_ in (("up", "up"), ("scrape_duration_seconds", "duration")):
        for row in vm_export(vm_url, metric, t0, t1):
            key = (row["metric"].get("job", ""), row["metric"].get("instance", ""))
            ups.setdefault(key, {})[field_] = points(row)
    ups = {k: v for k, v in ups.items() if "up" in v}
    lost = judge.lost_samples(ups, interval, timeout, done, (t0 + interval, t1 - interval))
    lost_total = sum(r["lost"] for r in lost.values())
    if lost_total:
        failures.append(f"{lost_total} sample(s) lost outside the fault windows")
    # alerts
    instances = judge.alert_instances(monitoring_part.received(lab))
    alerts = judge.judge_alerts(instances, done, rule_for, grace, (t0, t1),
                                monitoring_part.firing_now(lab), active_before)
    missed = [r for r in alerts["expected"] if not r["ok"]]
    if missed:
        failures.append(f"{len(missed)} expected alert(s) missed or never resolved")
    if alerts["unexpected"]:
        failures.append(f"{len(alerts['unexpected'])} alert(s) fired that no fault explains")
    if alerts["explained_but_unresolved"]:
        failures.append(f"{len(alerts['explained_but_unresolved'])} alert(s) never resolved")
    # loadgen windows
    try:
        result = json.loads(windows_file.read_text())
        windows = result.get("windows", [])
    except (OSError, json.JSONDecodeError) as exc:
        windows = []
        failures.append(f"the loadgen wrote no windows ({exc})")
    events, unanswered = seen
    win = judge.judge_windows(windows, done, events, unanswered=unanswered)
    if not win["ok"]:
        failures.append("loadgen windows judged wrong (see windows)")
    errors = [f"{f.kind}: {f.error}" for f in done if f.error]
    failures += errors
    loads = [v for _, v in load]
    return {
        "ok": not failures, "failures": failures,
        "load_average": {"min": min(loads, default=0), "max": max(loads, default=0),
                         "mean": round(sum(loads) / max(len(loads), 1), 2)},
        "faults": {f"{i + 1:02d} {f.kind}": {"target": f.target, "at_s": round(f.start - t0),
                                             "held_s": round(f.hold, 1),
                                             "took_s": round(f.end - f.start, 1),
                                             "error": f.error or ""}
                   for i, f in enumerate(done)},
        "processes": growth,
        "counters": counters,
        "samples": {k: {kk: vv for kk, vv in v.items() if kk != "lost_at" or vv}
                    for k, v in lost.items()},
        "alerts_expected": {f"{r['fault']} @{r['at']}s {r['alert']}": {
            k: v for k, v in r.items() if k not in ("fault", "alert", "at")}
            for r in alerts["expected"]},
        "alerts_fired": len(alerts["fired"]),
        "alerts_unexpected": alerts["unexpected"],
        "alerts_ambient": alerts["ambient"],
        "alerts_carried_over": alerts["carried_over"],
        "galera_events": [[round(a - t0, 1), round(b - t0, 1), why] for a, b, why in events],
        "galera_unanswered": [[round(a - t0, 1), round(b - t0, 1), why]
                              for a, b, why in unanswered],
        "alerts_unresolved": alerts["explained_but_unresolved"],
        "alerts_active_at_end": [f"{a['alertname']} {a['state']}"
                                 for a in alerts["active_at_end"]],
        "windows": win,
    }


def series_text(m: dict) -> str:
    labels = ",".join(f'{k}="{v}"' for k, v in sorted(m.items()) if k != "__name__")
    return f"{m.get('__name__')}{{{labels}}}"


def _counts(rows: list[dict], done: list[Fault], t0: float) -> dict[str, dict]:
    """Completed recoveries, restarts and failovers counted vs the schedule's."""
    ran = [f for f in done if f.error is None]

    def counted(name: str, **want: str) -> float:
        total = 0.0
        for row in rows:
            m = row["metric"]
            if m.get("__name__") == name and all(m.get(k) == v for k, v in want.items()):
                pts = points(row)
                total += judge.increase(pts, t0, appeared_from_zero=pts[0][0] >= t0)
        return total

    out = {}

    def check(label: str, got: float, want: int) -> None:
        out[label] = {"counted": round(got), "scheduled": want, "ok": round(got) == want}

    node = f"node{GALERA_NODE}"
    check(f"galera_recoveries_total{{node={node},kind=ist}}",
          counted("galera_recoveries_total", node=node, kind="ist"),
          sum(f.kind == "galera-ist" for f in ran))
    check(f"galera_recoveries_total{{node={node},kind=sst}}",
          counted("galera_recoveries_total", node=node, kind="sst"),
          sum(f.kind == "galera-sst" for f in ran))
    check("galera_recoveries_aborted_total", counted("galera_recoveries_aborted_total"), 0)
    for n in (ROTATE_NODE, RECOPY_NODE):
        check(f"galera_tracker_log_reopens_total{{node=node{n}}}",
              counted("galera_tracker_log_reopens_total", node=f"node{n}"),
              sum(f.kind in ("log-rotate", "log-recopy") and f.target == f"node{n}"
                  for f in ran))
    check(f"ndb_restarts_completed_total{{node_id={NDB_NODE}}}",
          counted("ndb_restarts_completed_total", node_id=str(NDB_NODE), job="ndbinfo"),
          sum(f.kind in ("ndb-restart", "ndb-stop") for f in ran))
    check("ndb_exporter_sql_node_failovers_total",
          counted("ndb_exporter_sql_node_failovers_total", job="ndbinfo"),
          sum(f.kind == "ndb-sql-kill" for f in ran))
    return out


