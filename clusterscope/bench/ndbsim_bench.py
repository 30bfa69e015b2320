"""`make bench ndbsim`: what one model tick costs (CPU), default vs large scenario.

One "second" of the model = tick + the rows of every table (what the model process does
each second before writing). Measured in this process, both scenarios alternately, so the
ratio is comparable within the run. SIMULATED cluster; no database involved.
"""

from __future__ import annotations

import time

from clusterscope.ndbsim import rows, scenario
from clusterscope.ndbsim.model import Model


def _per_tick(model: Model, ticks: int) -> float:
    start = time.process_time()
    for _ in range(ticks):
        model.tick(1.0)
        rows.tables(model, full=True)
    return (time.process_time() - start) / ticks


def run() -> dict:
    small = Model(scenario.load("default"), "7.6", seed=1)
    large = Model(scenario.load("large"), "8.0", seed=1)
    small_t, large_t = [], []
    for _ in range(3):  # alternate so machine noise hits both alike
        small_t.append(_per_tick(small, 5))
        large_t.append(_per_tick(large, 2))
    s, lg = min(small_t), min(large_t)
    counts = {name: sum(len(r) for _, r in rows.tables(m, full=True).values())
            for name, m in (("default", small), ("large", large))}
    return {"default_tick_cpu_seconds": round(s, 4), "large_tick_cpu_seconds": round(lg, 4),
            "default_rows": counts["default"], "large_rows": counts["large"],
            "large_vs_default_tick_cost_ratio": round(lg / s, 2),
            "default_tick_share_of_one_core_ratio": round(s / 1.0, 4)}
