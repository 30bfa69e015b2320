# ruff: noqa: E501  (PromQL reads better unbroken)
"""Loadgen rules: experiment overheads against pinned and rolling baselines, saturation."""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group, Runbook

FIRST_STEPS = """First: `curl -s <loadgen>:<port>/metrics | grep -E '^loadgen_(window|pair|overhead)'`
and the loadgen container's log (one line per window: valid or why not)."""



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
    grp = Group("experiments", "loadgen.yml", first_steps=FIRST_STEPS, records=[
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
        Alert(name="ExperimentOverheadChanged",
              expr=f"((max {keep} (loadgen_overhead_ratio_lower{{{s}}}) > {on}"
                   f" group_left () ({pinned}))"
                   f" or (max {keep} (loadgen_overhead_ratio_upper{{{s}}}) < {on}"
                   f" group_left () ({pinned}))"
                   f" or (max {keep} (loadgen_overhead_ratio_lower{{{s}}}) > {on}"
                   f" group_left () max {keep} ({rolling}))"
                   f" or (max {keep} (loadgen_overhead_ratio_upper{{{s}}}) < {on}"
                   f" group_left () max {keep} ({rolling})))"
                   f" and {on} max {keep} (loadgen_overhead_pairs{{{s}}})"
                   f" >= {lc['overhead_min_pairs']}",
              severity="info",
              summary="Overhead of {{ $labels.experiment }}/{{ $labels.variant }} changed",
              description="The baseline overhead (pinned with `clusterscope baseline pin`, else the value"
                          f" {lc['overhead_rolling_offset']} ago) lies outside the current 95% interval of"
                          " {{ $labels.experiment }}/{{ $labels.variant }} against {{ $labels.baseline }}.",
              dashboard="experiments",
              runbook=Runbook(
                  meaning="An experiment's overhead (1 - variant/baseline throughput) moved: the"
                          " pinned baseline's value (or the value a day ago) lies outside the current"
                          " 95% interval.",
                  impact="A configuration, version or data change altered what the feature costs.",
                  diagnosis="- `clusterscope compare --before-baseline NAME` for the figures and"
                            " intervals.\n- `loadgen_overhead_min_detectable_ratio`: is the noise"
                            " small enough to trust it?",
                  mitigation="Find the change (deploys, config) between the baseline and now; pin a new"
                             " baseline if the change is intended.")),
        Alert(name="LoadgenDown",
              expr=f"up{{{s}}} == 0",
              severity="warning",
              summary="Load generator {{ $labels.instance }} does not answer",
              description="The loadgen's metrics endpoint has not answered for"
                          f" {lc['down_for']}: no experiment is measured.",
              dashboard="experiments",
              for_=lc["down_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="The load generator's metrics endpoint has not answered for 5 minutes.",
                  impact="No experiment is measured; the overhead figures go stale.",
                  diagnosis="- The loadgen container's state and log (sysbench errors, credentials).",
                  mitigation="Restart the loadgen; fix its database account or target.")),
        Alert(name="LoadgenSaturated",
              expr=f"max {WITHOUT} (loadgen_saturated{{{s}}}) == 1",
              severity="warning",
              summary="Load generator {{ $labels.experiment }} is the bottleneck",
              description="The loadgen's sysbench uses >= 90% of the CPU it may use: its figures measure"
                          " the load generator, not the cluster.",
              dashboard="experiments",
              for_=lc["saturated_for"],
              runbook=Runbook(
                  meaning="The load generator uses (almost) all CPU it may use.",
                  impact="Its throughput figures measure the load generator, not the cluster.",
                  diagnosis="- `loadgen_cpu_cores` versus threads and host cores.",
                  mitigation="Fewer threads per loadgen, more loadgen hosts, or a bigger machine.")),
    ]
    return [grp]
