"""Series for `promtool test rules`, built from the field facts rather than typed by hand.

A restart timeline is a list of restarts (phase durations in seconds); the builder turns it
into the ndbinfo_exporter series a scrape every STEP seconds would give, and says at which
times each restart completed so tests can ask "did the alert fire for THIS restart?".
"""

from __future__ import annotations

import random
from dataclasses import dataclass

STEP = 5  # seconds between samples (the lab's scrape and rule evaluation interval)
NDB = {"job": "ndbinfo", "instance": "127.0.0.1:9723", "cluster": "lab-ndb",
       "simulated": "true"}

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


def restart_timeline(restarts: list[dict[str, float]], node_id: str = "2",
                     running_steps: int = 4, idle_steps: int = 16,
                     fresh_exporter: bool = False) -> Timeline:
    """Each restart: `running_steps` samples in progress (status 8), then `idle_steps`
    samples showing the completed row (status 12 on the master) until the next one.
    `fresh_exporter`: like the real one, no restart series at all before the first restart
    completed (restart_info is empty, the counter does not exist yet)."""
    status: list[float | None] = []
    totals: list[float | None] = []
    count: list[float | None] = []
    phases: dict[str, list[float | None]] = {}
    done = 0
    completions = []
    names = list(with_local_recovery(restarts[0]))
    for i, r in enumerate(restarts):
        full = with_local_recovery(r)
        prev = with_local_recovery(restarts[i - 1]) if i else None
        for k in range(running_steps):
            status.append(8)
            totals.append(round(total(r) * (k + 1) / (running_steps + 1)))
            count.append(done)
            for name in names:
                phases.setdefault(name, []).append(prev[name] if prev else None)
        done += 1
        completions.append(len(status) * STEP)
        for _ in range(idle_steps):
            status.append(12)
            totals.append(total(r))
            count.append(done)
            for name in names:
                phases.setdefault(name, []).append(full[name])
    if fresh_exporter:
        for k in range(running_steps):
            status[k] = totals[k] = count[k] = None  # type: ignore[call-overload]
    node = {**NDB, "node_id": node_id}
    series = [_series("ndb_restart_status", node, status),
              _series("ndb_restart_total_seconds", node, totals),
              _series("ndb_restarts_completed_total", node, count)]
    series += [_series("ndb_restart_phase_seconds", {**node, "phase": name}, vals)
               for name, vals in phases.items()]
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
