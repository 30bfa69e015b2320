# ruff: noqa: E501  (PromQL reads better unbroken)
"""Loadgen rules: experiment overheads against pinned and rolling baselines, saturation."""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group


def groups(c: dict) -> list[Group]:
    lc = c["loadgen"]
    s = c["selectors"]["loadgen"]
    keep = "without (instance, job, target)"
    # two loadgens (NDB and Galera) run the same experiments and variants: match on all
    on = "on (cluster, engine, experiment, variant, baseline)"
    lb = lc["overhead_pinned_lookback"]
    # the newest pin (pins written before pins carried their time: the largest)
    pinned = (f"max without (pin) (last_over_time(clusterscope_pinned_overhead_ratio[{lb}])"
              f" and on (pin) topk(1, last_over_time(clusterscope_pin_created_timestamp_seconds[{lb}])))"
              f" or max without (pin) (last_over_time(clusterscope_pinned_overhead_ratio[{lb}]))")
    rolling = f"loadgen_overhead_ratio{{{s}}} offset {lc['overhead_rolling_offset']}"
    grp = Group("experiments", "loadgen.yml", records=[
        ("experiment_variant:loadgen_pair_overhead_ratio:last",
         f"max {keep} (loadgen_pair_overhead_ratio{{{s}}})"),
        ("experiment_variant:loadgen_overhead_ratio:mean", f"max {keep} (loadgen_overhead_ratio{{{s}}})"),
        ("experiment_variant:loadgen_overhead_ratio:lower",
         f"max {keep} (loadgen_overhead_ratio_lower{{{s}}})"),
        ("experiment_variant:loadgen_overhead_ratio:upper",
         f"max {keep} (loadgen_overhead_ratio_upper{{{s}}})"),
        ("experiment_variant:loadgen_latency_ratio:mean", f"max {keep} (loadgen_latency_ratio{{{s}}})"),
        ("experiment_variant:loadgen_window_tps:avg10m",
         f"max {keep} (avg_over_time(loadgen_window_tps{{{s}}}[10m]))"),
    ])
    grp.alerts += [
        Alert("ExperimentOverheadChanged",
              f"((max {keep} (loadgen_overhead_ratio_lower{{{s}}}) > {on}"
              f" group_left () ({pinned}))"
              f" or (max {keep} (loadgen_overhead_ratio_upper{{{s}}}) < {on}"
              f" group_left () ({pinned}))"
              f" or (max {keep} (loadgen_overhead_ratio_lower{{{s}}}) > {on}"
              f" group_left () max {keep} ({rolling}))"
              f" or (max {keep} (loadgen_overhead_ratio_upper{{{s}}}) < {on}"
              f" group_left () max {keep} ({rolling})))"
              f" and {on} max {keep} (loadgen_overhead_pairs{{{s}}})"
              f" >= {lc['overhead_min_pairs']}",
              "info", "Overhead of {{ $labels.experiment }}/{{ $labels.variant }} changed",
              "The baseline overhead (pinned with `clusterscope baseline pin`, else the value"
              f" {lc['overhead_rolling_offset']} ago) lies outside the current 95% interval of"
              " {{ $labels.experiment }}/{{ $labels.variant }} against {{ $labels.baseline }}.",
              "experiments"),
        Alert("LoadgenDown", f"up{{{s}}} == 0",
              "warning", "Load generator {{ $labels.instance }} does not answer",
              "The loadgen's metrics endpoint has not answered for"
              f" {lc['down_for']}: no experiment is measured.", "experiments", lc["down_for"],
              per_node=False),
        Alert("LoadgenSaturated", f"max {WITHOUT} (loadgen_saturated{{{s}}}) == 1",
              "warning", "Load generator {{ $labels.experiment }} is the bottleneck",
              "The loadgen's sysbench uses >= 90% of the CPU it may use: its figures measure"
              " the load generator, not the cluster.", "experiments", lc["saturated_for"]),
    ]
    return [grp]
