"""Series for `promtool test rules`, built from the field facts rather than typed by hand.

A restart timeline is a list of restarts (phase durations in seconds); the builder turns it
into the ndbinfo_exporter series a scrape every STEP seconds would give, and says at which
times each restart completed so tests can ask "did the alert fire for THIS restart?".
"""

from __future__ import annotations

import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from clusterscope.bench.alarm_replica import scrape
from clusterscope.bench.alarm_vmalert import NAMES
from clusterscope.rules import generate
from clusterscope.rules.rules_config import load_config

STEP = 5  # seconds between samples (the lab's scrape and rule evaluation interval)
NDB = {"job": "ndbinfo", "instance": "127.0.0.1:9723", "cluster": "lab-ndb",
       "simulated": "true"}
GALERA = {"job": "galera", "cluster": "lab-galera"}
TRACKER = {"job": "galera_tracker", "cluster": "lab-galera", "instance": "127.0.0.1:1"}
LOADGEN = {"job": "loadgen", "cluster": "lab-galera", "engine": "galera",
           "target": "127.0.0.1:3306", "instance": "127.0.0.1:2"}
# the rule files under test: the repository's own (tests/ sits next to rules/)
RULE_FILES = sorted((Path(__file__).resolve().parents[1] / "rules").glob("*.yml"))
CONFIG = load_config()


def promtool_test(tmp_path: Path, input_series: list[dict], expr_tests: list[dict],
                  alert_tests: list[dict] | None = None, files: list[Path] | None = None,
                  step: int = STEP) -> None:
    """`promtool test rules` against these series and expectations, samples and evaluations
    every `step` seconds: of `files`, or of the repository's rules the expectations name and
    every rule those read, transitively (`needed_rules`), in their own groups and order."""
    if files is None:
        needed = needed_rules([t["expr"] for t in expr_tests],
                              [t["alertname"] for t in alert_tests or []])
        rules = tmp_path / "rules.yml"
        rules.write_text(yaml.safe_dump({"groups": needed}, sort_keys=False))
        files = [rules]
    spec = {"rule_files": [str(f) for f in files], "evaluation_interval": f"{step}s",
            "tests": [{"interval": f"{step}s", "input_series": input_series,
                       "promql_expr_test": expr_tests, "alert_rule_test": alert_tests or []}]}
    f = tmp_path / "test.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_ALERTNAME = re.compile(r'alertname\s*=\s*"([^"]+)"')


def needed_rules(exprs: list[str], alerts: list[str]) -> list[dict]:
    """The groups of the rule files cut down to what these expressions and alerts depend
    on. promtool evaluates every rule it loads at every step, and a rule nothing reads
    cannot change one that is read; loading only these makes a scenario of hours several
    times faster. A read of ALERTS that does not name its alerts keeps every alert."""
    groups = [g for f in RULE_FILES for g in yaml.safe_load(f.read_text())["groups"]]
    by_name: dict[str, list[dict]] = {}
    for g in groups:
        for r in g["rules"]:
            by_name.setdefault(r.get("record") or r["alert"], []).append(r)
    keep: set[int] = set()
    todo = [*exprs, *(f'ALERTS{{alertname="{a}"}}' for a in alerts)]
    while todo:
        expr = todo.pop()
        names = set(_NAME.findall(expr))
        wanted = names & by_name.keys()
        if "ALERTS" in names or "ALERTS_FOR_STATE" in names:
            named = set(_ALERTNAME.findall(expr))
            every = [n for n, rs in by_name.items() if any("alert" in r for r in rs)]
            wanted |= named if named and "=~" not in expr else set(every)
        for n in wanted:
            for r in by_name[n]:
                if id(r) not in keep:
                    keep.add(id(r))
                    todo.append(r["expr"])
    out = []
    for g in groups:
        rules = [r for r in g["rules"] if id(r) in keep]
        if rules:
            out.append({**g, "rules": rules})
    return out


def firing(alert: str, at: int, labels: list[dict] | None) -> dict:
    """An expectation on ALERTS at `at` seconds: these firing label sets, or none."""
    samples = []
    for lab in labels or []:
        full = {"alertname": alert, "alertstate": "firing",
                "severity": severity(alert), **lab}
        samples.append({"labels": metric("ALERTS", full), "value": 1})
    return {"expr": f'ALERTS{{alertname="{alert}",alertstate="firing"}}', "eval_time": f"{at}s",
            "exp_samples": samples}


def severity(alert: str) -> str:
    for g in generate.all_groups(CONFIG):
        for a in g.alerts:
            if a.name == alert:
                return a.severity
    raise KeyError(alert)


def rule(name: str) -> dict:
    """An alerting rule as the rule files hold it (expr, labels, annotations)."""
    for f in RULE_FILES:
        for group in yaml.safe_load(f.read_text())["groups"]:
            for r in group["rules"]:
                if r.get("alert") == name:
                    return r
    raise KeyError(name)

# field-facts section 2 (DBT2, 60 GB per data node), as restart_info phase columns
PHASES_76 = {"to_include_in_heartbeat_protocol": 26, "to_copy_meta_data": 2,
             "restore_fragments": 135, "undo_disk_data": 0, "exec_redo_log": 35,
             "index_rebuild": 77, "to_synchronize_starting_node": 0,
             "wait_lcp_for_restart": 128, "wait_subscription_handover": 6}
# copy fragment "~0": 3 s, so the phases add up to the published 19m11s total
PHASES_75 = {"to_include_in_heartbeat_protocol": 26, "to_copy_meta_data": 2,
             "restore_fragments": 111, "undo_disk_data": 0, "exec_redo_log": 51,
             "index_rebuild": 124, "to_synchronize_starting_node": 3,
             "wait_lcp_for_restart": 828, "wait_subscription_handover": 6}
LCP_75_SECONDS = 660  # one full 7.5 LCP (~11 min); the LCP wait spans 1-2 of them


def total(phases: dict[str, float]) -> float:
    return sum(phases.values())


def with_local_recovery(phases: dict[str, float]) -> dict[str, float]:
    out = dict(phases)
    out["for_local_recovery"] = (phases["restore_fragments"] + phases["undo_disk_data"]
                                 + phases["exec_redo_log"] + phases["index_rebuild"])
    return out


def noisy_76(rng: random.Random) -> dict[str, float]:
    """7.6: roughly constant restart time (a few percent of noise per phase)."""
    return {k: round(v * rng.uniform(0.93, 1.07)) for k, v in PHASES_76.items()}


def noisy_75(rng: random.Random) -> dict[str, float]:
    """7.5: the LCP wait is 1 to 2 full LCPs depending on where the running one is."""
    p = {k: round(v * rng.uniform(0.93, 1.07)) for k, v in PHASES_75.items()}
    p["wait_lcp_for_restart"] = round(LCP_75_SECONDS * rng.uniform(1.0, 2.0))
    return p


@dataclass
class Timeline:
    series: list[dict]       # promtool input_series
    completions: list[int]   # seconds (from 0) at which each restart's row shows "completed"


# restart_info.node_restart_status_int (the kernel's NodeRecoveryStatus): a restart under
# way executing its REDO log, and the completed row on the master
RUNNING, COMPLETED = 14, 19


def restart_timeline(restarts: list[dict[str, float]], node_id: str = "2",
                     running_steps: int = 4, idle_steps: int = 72,
                     first_seen: str = "running", gap: tuple[int, int] | None = None,
                     start: int = 0) -> Timeline:
    """Each restart: `running_steps` samples in progress, then `idle_steps` samples showing
    the completed row until the next one, as the exporter serves them:
    `ndb_restarts_completed_total` appears at 0 when the exporter first sees a restart under
    way (first_seen="running", the ledger's behaviour) and grows at each completion, which
    also sets `ndb_restart_last_completed_timestamp_seconds` to that time.
    first_seen="completed": the exporter first looked after the first restart had completed:
    counted (1) without a timestamp. `gap` (first, last step): every series absent (exporter
    or SQL node down). `start`: steps of no data before the first restart (other nodes'
    restarts in a rolling sequence)."""
    status: list[float | None] = [None] * start
    totals: list[float | None] = [None] * start
    count: list[float | None] = [None] * start
    stamp: list[float | None] = [None] * start
    phases: dict[str, list[float | None]] = {}
    names = list(with_local_recovery(restarts[0]))
    for name in names:
        phases[name] = [None] * start
    done = 0
    completions = []
    for i, r in enumerate(restarts):
        full = with_local_recovery(r)
        prev = with_local_recovery(restarts[i - 1]) if i else None
        for k in range(running_steps):
            status.append(RUNNING)
            totals.append(round(total(r) * (k + 1) / (running_steps + 1)))
            count.append(done)
            stamp.append(stamp[-1] if stamp else None)
            for name in names:
                phases[name].append(prev[name] if prev else None)
        done += 1
        at = len(status) * STEP
        completions.append(at)
        for _ in range(idle_steps):
            status.append(COMPLETED)
            totals.append(total(r))
            count.append(done)
            stamp.append(None if (i == 0 and first_seen == "completed") else at)
            for name in names:
                phases[name].append(full[name])
    if first_seen == "completed":
        for k in range(start, start + running_steps):
            status[k] = totals[k] = count[k] = None
            for name in names:
                phases[name][k] = None
    rows = [status, totals, count, stamp, *phases.values()]
    if gap:
        for vals in rows:
            for k in range(gap[0], min(gap[1] + 1, len(vals))):
                vals[k] = None
    node = {**NDB, "node_id": node_id}
    series = [_series("ndb_restart_status", node, status),
              _series("ndb_restart_total_seconds", node, totals),
              _series("ndb_restarts_completed_total", node, count),
              _series("ndb_restart_last_completed_timestamp_seconds", node, stamp)]
    series += [_series("ndb_restart_phase_seconds", {**node, "phase": name}, vals)
               for name, vals in phases.items()]
    return Timeline(series, completions)


def rolling_timeline(restarts: list[tuple[str, dict[str, float]]],
                     running_steps: int = 4, idle_steps: int = 72) -> Timeline:
    """Restarts of several nodes one after the other (a rolling restart): each node's
    series start at its first restart; `completions` in the order given."""
    slot = running_steps + idle_steps
    by_node: dict[str, list[int]] = {}
    for i, (node, _) in enumerate(restarts):
        by_node.setdefault(node, []).append(i)
    series, completions = [], [0] * len(restarts)
    total_steps = slot * len(restarts)
    for node, idx in by_node.items():
        assert idx == list(range(idx[0], idx[0] + len(idx))), "a node's restarts in a row"
        t = restart_timeline([restarts[i][1] for i in idx], node_id=node,
                             running_steps=running_steps, idle_steps=idle_steps,
                             start=idx[0] * slot)
        for k, i in enumerate(idx):
            completions[i] = t.completions[k]
        # after its last restart the node keeps showing its completed row
        for ser in t.series:
            vals = ser["values"].split()
            ser["values"] = " ".join(vals + [vals[-1]] * (total_steps - len(vals)))
        series += t.series
    return Timeline(series, completions)


def _series(name: str, labels: dict[str, str], values: list[float | None]) -> dict:
    """None: no sample; a series that vanishes from a scrape gets a staleness marker first
    (what VictoriaMetrics' scraper writes), so it is gone at once, not after 5 minutes."""
    out = []
    for i, v in enumerate(values):
        if v is None:
            out.append("stale" if i and values[i - 1] is not None else "_")
        else:
            out.append(f"{v:g}")
    return {"series": metric(name, labels), "values": " ".join(out)}


def metric(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def const(name: str, labels: dict[str, str], values: list[float | None]) -> dict:
    return _series(name, labels, values)


def counter(per_step: list[float], start: float = 0.0) -> list[float]:
    """A counter's samples from what it gains at each step."""
    out, total = [], start
    for x in per_step:
        total += x
        out.append(total)
    return out


def histogram(name: str, labels: dict[str, str], les: list[str],
              phases: list[tuple[int, list[float]]]) -> list[dict]:
    """A Prometheus histogram as the exporter serves it (cumulative `_bucket`s, `_count`):
    `phases` are (steps, completions per second in each range, the last range +Inf's)."""
    assert les[-1] == "+Inf"
    per_range: list[list[float]] = [[] for _ in les]
    for steps, rates in phases:
        assert len(rates) == len(les)
        for _ in range(steps):
            for i, r in enumerate(rates):
                per_range[i].append(r * STEP)
    out = []
    running = [0.0] * len(les)
    bucket_values: list[list[float]] = [[] for _ in les]
    for step in range(len(per_range[0])):
        acc = 0.0
        for i in range(len(les)):
            running[i] += per_range[i][step]
            acc += running[i]
            bucket_values[i].append(acc)
    for i, le in enumerate(les):
        out.append(_series(f"{name}_bucket", {**labels, "le": le}, bucket_values[i]))
    out.append(_series(f"{name}_count", labels, bucket_values[-1]))
    return out


def unit_counters(labels: dict[str, str], units: list[tuple[float, float, float]], steps: int,
                  step: int = STEP) -> list[dict]:
    """The loadgen's unit counters (clusterscope_loadgen/unitstream.py) as a scrape every
    `step` seconds sees them: `units` are (completion second, baseline and variant
    throughput)."""
    c = scrape(units, (steps - 1) * step, step)
    return [{"series": metric(name, labels), "values": " ".join(repr(v) for v in c.cols[col])}
            for col, name in NAMES]


def cycle_units(seed: int, hours: float, sd: float, level: float = 0.10,
                step_at: float | None = None, step: float = 0.0, per_turn: int = 6,
                turn: float = 480.0, cv: float = 0.2) -> list[list[tuple[float, float, float]]]:
    """What the always-on cycle gives one comparison: every `turn` seconds a run of
    `per_turn` units 20 s apart (a fresh run each turn), the baseline's throughput around
    1000 rows/s varying by `cv`, the variant's lower by an overhead `level` with noise
    `sd`, plus `step` from `step_at` (so the ratio of means' overhead is `level`, then
    `level` + `step`). Each turn's units, as (second, baseline, variant throughput)."""
    rng = random.Random(seed)
    turns, t0 = [], 0.0
    while t0 < hours * 3600:
        units = []
        for k in range(per_turn):
            t = t0 + 20 * (k + 1)
            b = 1000.0 * max(0.05, rng.gauss(1.0, cv))
            x = rng.gauss(level, sd) + (step if step_at is not None and t >= step_at else 0.0)
            units.append((t, b, b * (1.0 - x)))
        turns.append(units)
        t0 += turn
    return turns
