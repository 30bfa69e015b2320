"""`clusterscope bench ab-validity`: what each A/B design measures, checked by mechanism.

Known costs are injected on the server (the loadgen's `inject` experiment,
loadgen/clusterscope_loadgen/mechanisms.yaml): a server sleep per statement, server CPU
per statement, a hot row locked until COMMIT, 4 KiB more per row image. Each mechanism
variant has a twin running the same statements without it, on its own table of the same
DDL and size. For every mechanism, table size and thread count it measures:

- the truth: the whole-workload effect, 1 - X_v / X_b, from long separate runs (each
  variant alone on all threads for `truth_window` seconds, in A B / B A order);
- the mixed-load statement reading (the interleaved design) and the whole-workload reading
  (the design the product uses for it), each as the runner reports it, with its interval;
- their ratios with Fieller intervals: mixed / whole-workload reading, and each / truth.

The three are run in turns, chunk by chunk, so that they meet the same background load.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from clusterscope_loadgen import config, designs
from clusterscope_loadgen.runner import Runner
from clusterscope_loadgen.stats import paired
from clusterscope_loadgen.target import Target

from clusterscope.bench.loadgen_ab import galera
from clusterscope.inference import fieller

MECHANISMS_CONFIG = Path(config.__file__).with_name("mechanisms.yaml")
# kind -> (the variant carrying the cost, where the cost occurs in a real cluster)
MECHANISMS = {
    "sleep": ("sleep_v", "a wait that uses no shared resource: a round trip to another node"
                         " (an NDB parent-row read at low load), a sync wait"),
    "cpu": ("cpu_v", "more CPU per statement on the SQL node (FK checks, triggers, parsing),"
                     " shared by time-slicing"),
    "hot": ("hot_v", "a row every thread updates, locked until COMMIT (counters, a hot parent"
                     " row, NDB's hidden key)"),
    "pad": ("pad_v", "larger row images: Galera write-sets through replication, gcache and"
                     " the appliers; redo"),
}


def estimand_designs() -> dict[str, str]:
    """The design that reads each estimand: the whole workload one variant at a time (the
    time-sliced design where the loadgen has it), the mixed-load statement interleaved."""
    whole = "timesliced" if "timesliced" in designs.DESIGNS else "windows"
    return {"whole_workload": whole, "mixed_statement": "interleaved"}


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (10_000, 100_000)
    threads: tuple[int, ...] = (4, 16)
    truth_window: float = 30.0  # seconds of one variant alone, per truth run
    chunks: int = 3  # turns of truth (one A B or B A), mixed, whole per condition
    design_chunk: float = 40.0  # seconds of each design per turn
    window: float = 5.0  # the designs' window
    warmup: float = 5.0


QUICK = Plan(sizes=(2000,), threads=(4,), truth_window=3.0, chunks=2, design_chunk=4.0,
             window=2.0, warmup=1.0)


def _pct(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(100 * x, 2)


def _truth(runner: Runner, variant: str, baseline: str) -> dict:
    """1 - X_v / X_b per A B (or B A) turn of long separate runs, both windows valid."""
    by: dict[int, dict[str, float]] = {}
    for w in runner.windows:
        if not w.warmup and w.valid and w.variant in (variant, baseline):
            by.setdefault(w.seq, {})[w.variant] = w.throughput
    effects = [1.0 - s[variant] / s[baseline] for s in by.values()
               if len(s) == 2 and s[baseline] > 0]
    e = paired(effects)
    return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def _reading(runner: Runner, variant: str) -> dict:
    est = runner.update_estimates()[variant]["overhead"]
    return {k: est[k] for k in ("mean", "low", "high", "n")}


def _ratio(a: dict, b: dict) -> dict:
    r = fieller(a["mean"], a["low"], a["high"], b["mean"], b["low"], b["high"])
    return {"ratio": r.ratio, "low": r.low, "high": r.high}


def measure(targets: list[Target], kind: str, rows: int, threads: int, plan: Plan) -> dict:
    """Truth and both readings of one mechanism at one table size and thread count."""
    variant, _ = MECHANISMS[kind]
    base = config.experiment("inject", MECHANISMS_CONFIG)
    exp = replace(base, options={**base.options, "table_rows": rows})
    baseline = next(v.baseline for v in exp.variants if v.name == variant)

    def runner(design: str, window: float) -> Runner:
        return Runner(exp, "galera", targets, only=[variant], threads=threads, window=window,
                      warmup=plan.warmup, design=design, database=f"cs_bench_inject_{rows}",
                      out=lambda s: None)

    which = estimand_designs()
    truth = runner("windows", plan.truth_window)
    mixed = runner(which["mixed_statement"], plan.window)
    whole = runner(which["whole_workload"], plan.window)
    loads = []
    for _ in range(plan.chunks):
        loads.append(os.getloadavg()[0])
        truth.run(rounds=1)
        mixed.run(duration=plan.design_chunk)
        whole.run(duration=plan.design_chunk)
    t = _truth(truth, variant, baseline)
    m, w = _reading(mixed, variant), _reading(whole, variant)
    invalid = sum(1 for r in (truth, mixed, whole) for x in r.windows if not x.valid)
    row = {"truth": t, "mixed_statement": m, "whole_workload": w,
           "ratio_mixed_to_whole": _ratio(m, w), "ratio_mixed_to_truth": _ratio(m, t),
           "ratio_whole_to_truth": _ratio(w, t),
           "whole_covers_truth": bool(w["low"] <= t["mean"] <= w["high"])
           if not math.isnan(w["low"]) else None,
           "invalid_windows": invalid, "load1": [round(min(loads), 1), round(max(loads), 1)]}
    return row


def _flat(key: str, row: dict) -> dict:
    """One condition as a printable row (percent points; ratios as numbers)."""
    out: dict = {}
    for name in ("truth", "mixed_statement", "whole_workload"):
        e = row[name]
        out[f"{name}_pct"] = _pct(e["mean"])
        out[f"{name}_ci_pct"] = [_pct(e["low"]), _pct(e["high"])]
        out[f"{name}_n"] = e["n"]
    for name in ("ratio_mixed_to_whole", "ratio_mixed_to_truth", "ratio_whole_to_truth"):
        r = row[name]
        out[name] = None if math.isnan(r["ratio"]) else round(r["ratio"], 2)
        out[f"{name}_ci"] = [None if math.isinf(x) or math.isnan(x) else round(x, 2)
                             for x in (r["low"], r["high"])]
    out["whole_covers_truth"] = row["whole_covers_truth"]
    out["invalid_windows"] = row["invalid_windows"]
    out["load1"] = row["load1"]
    return out


def run(quick: bool = False) -> dict:
    """Every mechanism at every size and thread count of the plan (QUICK: one of each)."""
    plan = QUICK if quick else Plan()
    t0 = time.monotonic()
    conditions: dict[str, dict] = {}
    with galera() as targets:
        for rows in plan.sizes:
            for threads in plan.threads:
                for kind in MECHANISMS:
                    key = f"{kind}/rows={rows}/threads={threads}"
                    conditions[key] = _flat(key, measure(targets, kind, rows, threads, plan))
    covered = [r["whole_covers_truth"] for r in conditions.values()
               if r["whole_covers_truth"] is not None]
    return {"estimand_designs": estimand_designs(), "plan": plan.__dict__,
            "where": {k: w for k, (_, w) in MECHANISMS.items()},
            "conditions": conditions,
            "mechanisms_measured": len({k.split("/")[0] for k in conditions}),
            "whole_covers_truth_ratio": round(sum(covered) / len(covered), 3)
            if covered else None,
            "minutes": round((time.monotonic() - t0) / 60, 1)}
