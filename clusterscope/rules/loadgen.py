# ruff: noqa: E501  (PromQL reads better unbroken)
"""Loadgen rules: experiment overheads, their change against a pinned or day-old period of
the same length, saturation."""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group

# the labels that name a comparison (two loadgens, NDB and Galera, run the same
# experiments and variants: match on all)
COMPARISON = "cluster, engine, experiment, variant, baseline"


def period_records(s: str, window: str) -> dict[str, str]:
    """A comparison's units in the last `window`, from the loadgen's unit counters
    (clusterscope_loadgen/unitstream.py): their number, the mean overhead (1 - the mean
    variant/baseline throughput ratio) and its standard error, sqrt(var / n). Each is
    computed from the raw counters, not from another record: vmalert writes records back
    through VictoriaMetrics, so a record read in the same evaluation would be a step old."""
    keep = "sum without (instance, job, target)"

    def inc(name: str) -> str:
        return f"{keep} (increase({name}{{{s}}}[{window}]))"

    n, tot, sq = (inc("loadgen_unit_tps_ratio_count"), inc("loadgen_unit_tps_ratio_sum"),
                  inc("loadgen_unit_tps_ratio_squares_total"))
    return {
        f"experiment_variant:loadgen_units:increase{window}": n,
        f"experiment_variant:loadgen_overhead_ratio:mean{window}": f"1 - {tot} / {n}",
        f"experiment_variant:loadgen_overhead_ratio:se{window}":
            f"sqrt(clamp_min({sq} - {tot} ^ 2 / {n}, 0) / (({n} - 1) * {n}))",
    }


def _newest_pin(series: str, lookback: str) -> str:
    """A pinned series' value from the newest pin (pins written before pins carried their
    time: the largest)."""
    return (f"(max without (pin) (last_over_time({series}[{lookback}])"
            f" and on (pin) topk(1, last_over_time(clusterscope_pin_created_timestamp_seconds"
            f"[{lookback}]))) or max without (pin) (last_over_time({series}[{lookback}])))")


def change_expr(lc: dict) -> str:
    """|z| of the last period's mean overhead against a reference period of the same
    length: the newest pin (`clusterscope baseline pin`, which pins mean, SE and units),
    else the same period a day earlier. z = (m1 - m0) / sqrt(se1^2 + se0^2); both periods
    need overhead_min_units units. Pins made before pins carried an SE are not used."""
    w, lb, off = lc["overhead_window"], lc["overhead_pinned_lookback"], lc["overhead_rolling_offset"]
    mean, se, units = (f"experiment_variant:loadgen_overhead_ratio:mean{w}",
                       f"experiment_variant:loadgen_overhead_ratio:se{w}",
                       f"experiment_variant:loadgen_units:increase{w}")
    pmean, pse, punits = (_newest_pin("clusterscope_pinned_overhead_ratio", lb),
                          _newest_pin("clusterscope_pinned_overhead_se_ratio", lb),
                          _newest_pin("clusterscope_pinned_overhead_units", lb))
    on, z, least = f"on ({COMPARISON})", lc["overhead_z"], lc["overhead_min_units"]
    pinned = (f"(abs({mean} - {on} group_left () {pmean})"
              f" / {on} group_left () sqrt({se} ^ 2 + {on} group_left () {pse} ^ 2) > {z}"
              f" and {on} {units} >= {least} and {on} {punits} >= {least})")
    rolling = (f"(abs({mean} - {on} ({mean} offset {off}))"
               f" / sqrt({se} ^ 2 + {on} ({se} offset {off}) ^ 2) > {z}"
               f" and {on} {units} >= {least} and {on} ({units} offset {off}) >= {least}"
               f" unless {on} {pse})")
    return f"{pinned} or {rolling}"


def groups(c: dict) -> list[Group]:
    lc = c["loadgen"]
    s = c["selectors"]["loadgen"]
    keep = "without (instance, job, target)"
    w = lc["overhead_window"]
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
        *period_records(s, w).items(),
    ])
    grp.alerts += [
        Alert("ExperimentOverheadChanged", change_expr(lc),
              "info", "Overhead of {{ $labels.experiment }}/{{ $labels.variant }} changed",
              f"The mean overhead of {{{{ $labels.experiment }}}}/{{{{ $labels.variant }}}}"
              f" against {{{{ $labels.baseline }}}} over the last {w} differs from the same"
              f" period of the newest pinned baseline (`clusterscope baseline pin`), else of"
              f" {lc['overhead_rolling_offset']} ago, by {{{{ $value | printf \"%.1f\" }}}}"
              f" standard errors of the difference (alert above {lc['overhead_z']}, held"
              f" {lc['overhead_change_for']}).",
              "experiments", lc["overhead_change_for"]),
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
