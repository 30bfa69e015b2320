"""Pinned baselines as series the alert rules read (`clusterscope_pinned_*{pin=NAME}`).

`pin_to_vm(vm, name)` takes what the rules currently consider the baseline - each node's
median completed restart, and each experiment variant's overhead over the last period the
change alert compares (rules/config.yaml `loadgen.overhead_window`): its ratio-of-means
overhead, standard error and number of units, so that a later period is compared with it
interval to interval - and writes one sample of each, labelled `pin=NAME` (the overhead's
also `estimator="ratio-of-means"`: the alert ignores a pin without it, taken when the
records read the mean of the units' ratios), and
`clusterscope_pin_created_timestamp_seconds{pin=NAME}`. The rules read them with
`last_over_time(...[400d])`, so a single sample keeps serving as the baseline after a
configuration change (ExperimentOverheadChanged,
`cluster_node:ndb_restart_total_seconds:ratio_to_pinned`, which takes the newest pin).
Called by `clusterscope baseline pin NAME`.
"""

from __future__ import annotations

import re
import time

from clusterscope.clients.vm import VM
from clusterscope.rules.loadgen import PINNED_ESTIMATOR
from clusterscope.rules.rules_config import shared

COMPARISON = ("cluster", "engine", "experiment", "variant", "baseline")
# labels written on a pinned series besides what it keeps and `pin`
MARKS = {name: {"estimator": PINNED_ESTIMATOR} for name in (
    "clusterscope_pinned_overhead_ratio", "clusterscope_pinned_overhead_se_ratio",
    "clusterscope_pinned_overhead_units")}


def sources(window: str | None = None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Pinned series <- the recorded series that is the baseline now, and the labels it
    keeps; `window`: the change alert's period (default: the committed rules config)."""
    w = window or shared()["loadgen"]["overhead_window"]
    return {
        "clusterscope_pinned_restart_total_seconds":
            ("cluster_node:ndb_restart_total_seconds:baseline_median", ("cluster", "node_id")),
        "clusterscope_pinned_overhead_ratio":
            (f"experiment_variant:loadgen_overhead_ratio:mean{w}", COMPARISON),
        "clusterscope_pinned_overhead_se_ratio":
            (f"experiment_variant:loadgen_overhead_ratio:se{w}", COMPARISON),
        "clusterscope_pinned_overhead_units":
            (f"experiment_variant:loadgen_units:increase{w}", COMPARISON),
    }


def _label_value(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def pin_to_vm(vm: VM, name: str, at: float | None = None) -> dict[str, int]:
    """Write the current baselines as pinned series; returns how many series per metric."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"pin name {name!r}: use letters, digits, '.', '_' or '-'")
    ts_ms = int((at or time.time()) * 1000)
    lines: list[str] = []
    counts: dict[str, int] = {}
    for pinned, (source, keep) in sources().items():
        rows = vm.query(source, at)
        counts[pinned] = len(rows)
        for r in rows:
            labels = {k: r["metric"][k] for k in keep if k in r["metric"]}
            labels.update(MARKS.get(pinned, {}), pin=name)
            inner = ",".join(f'{k}="{_label_value(v)}"' for k, v in sorted(labels.items()))
            lines.append(f"{pinned}{{{inner}}} {r['value'][1]} {ts_ms}")
    if lines:
        # when it was pinned, so the rules compare with the newest pin
        lines.append(f'clusterscope_pin_created_timestamp_seconds{{pin="{_label_value(name)}"}}'
                     f" {ts_ms / 1000} {ts_ms}")
        vm.import_prometheus("\n".join(lines) + "\n")
        vm.flush()
    return counts
