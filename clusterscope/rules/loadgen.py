# ruff: noqa: E501  (PromQL reads better unbroken)
"""Loadgen rules: experiment overheads, their change against a pinned or day-old period of
the same length, saturation."""

from __future__ import annotations

from clusterscope.rules.rule_model import WITHOUT, Alert, Group, Runbook

FIRST_STEPS = """First: `curl -s <loadgen>:<port>/metrics | grep -E '^loadgen_(window|pair|overhead|unit)'`
and the loadgen container's log (one line per window: valid or why not)."""


# the labels that name a comparison (two loadgens, NDB and Galera, run the same
# experiments and variants: match on all)
COMPARISON = "cluster, engine, experiment, variant, baseline"


def period_records(s: str, window: str) -> dict[str, str]:
    """A comparison's units in the last `window`, from the loadgen's unit counters
    (clusterscope_loadgen/unitstream.py): their number n, the overhead 1 - R with R the
    ratio of means sum(variant) / sum(baseline) throughput (the loadgen's default
    estimator, so the alert and the loadgen read one quantity) and R's delta-method
    standard error. With b_bar = Sb / n the residuals v - R b sum to zero, so
    var(R) = sum((v - R b)^2) / ((n - 1) n b_bar^2)
           = (Qvv - 2 R Qvb + R^2 Qbb) n / ((n - 1) Sb^2)
    in the counters' sums (Qvv = sum v^2, Qbb = sum b^2, Qvb = sum v b); clamped at 0
    where increase()'s extrapolation, different per counter near a series' start, would
    take it below.

    The SE treats the period's units as independent: PromQL has no Newey-West (HAC) sum.
    What that costs, on the lab's A/A recordings (docs/loadgen.md): the residuals v - R b
    had a lag-1 autocorrelation of 0.10 over the 200-run recording's 800 units (-0.04 over
    the 50-run one's 200), which makes a period's variance about 1 + 2 x 0.10 = 1.2 times
    the i.i.d. one; replayed by `clusterscope bench ab-alarms` (blocks of consecutive units,
    so the correlation stays), the hourly z against the day before had a mean square of
    1.2 where honest SEs give 1: |z| runs about 10 % large, which the thresholds, set on
    those replays, absorb. Each record is computed from the raw counters, not from
    another record: vmalert writes records back through VictoriaMetrics, so a record read
    in the same evaluation would be a step old."""
    keep = "sum without (instance, job, target)"

    def inc(name: str) -> str:
        return f"{keep} (increase({name}{{{s}}}[{window}]))"

    n, sv, sb = (inc("loadgen_units_total"), inc("loadgen_unit_variant_rows_per_second_total"),
                 inc("loadgen_unit_baseline_rows_per_second_total"))
    qvv, qbb, qvb = (inc("loadgen_unit_variant_rows_per_second_squares_total"),
                     inc("loadgen_unit_baseline_rows_per_second_squares_total"),
                     inc("loadgen_unit_rows_per_second_products_total"))
    r = f"({sv} / {sb})"
    return {
        f"experiment_variant:loadgen_units:increase{window}": n,
        f"experiment_variant:loadgen_overhead_ratio:mean{window}": f"1 - {r}",
        f"experiment_variant:loadgen_overhead_ratio:se{window}":
            f"sqrt(clamp_min({qvv} - 2 * {r} * {qvb} + {r} ^ 2 * {qbb}, 0)"
            f" * {n} / (({n} - 1) * {sb} ^ 2))",
    }


# what the overhead records read, written on every pinned overhead series: a pin taken
# before the records read the ratio of means holds the mean of the units' ratios, another
# quantity (it leans towards the variant on noisy units), and is not compared with
PINNED_ESTIMATOR = "ratio-of-means"


def _newest_pin(series: str, lookback: str) -> str:
    """A pinned overhead series' value from the newest pin, if that pin holds the ratio of
    means (none otherwise: the alert then compares with the day before)."""
    return (f"max without (pin) (last_over_time({series}{{estimator=\"{PINNED_ESTIMATOR}\"}}"
            f"[{lookback}]) and on (pin) topk(1, last_over_time("
            f"clusterscope_pin_created_timestamp_seconds[{lookback}])))")


def change_expr(lc: dict) -> str:
    """|z| of the last period's mean overhead against a reference period of the same
    length: the newest pin (`clusterscope baseline pin`, which pins mean, SE and units),
    else the same period a day earlier. z = (m1 - m0) / sqrt(se1^2 + se0^2); both periods
    need overhead_min_units units. A newest pin that is not of the ratio of means (taken
    before the records read it, or before pins carried an SE) is not used."""
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


def change_alert(lc: dict) -> Alert:
    w = lc["overhead_window"]
    return Alert(
        name="ExperimentOverheadChanged", expr=change_expr(lc), severity="info",
        summary="Overhead of {{ $labels.experiment }}/{{ $labels.variant }} changed",
        description=f"The overhead (1 - sum(variant)/sum(baseline) throughput) of"
                    f" {{{{ $labels.experiment }}}}/{{{{ $labels.variant }}}}"
                    f" against {{{{ $labels.baseline }}}} over the last {w} differs from the same"
                    f" period of the newest pinned baseline (`clusterscope baseline pin`), else of"
                    f" {lc['overhead_rolling_offset']} ago, by {{{{ $value | printf \"%.1f\" }}}}"
                    f" standard errors of the difference (alert above {lc['overhead_z']}, held"
                    f" {lc['overhead_change_for']}).",
        dashboard="experiments", for_=lc["overhead_change_for"],
        runbook=Runbook(
            meaning="An experiment's overhead, 1 - sum(variant) / sum(baseline) throughput"
                    " over the units of the last period (the ratio of means the loadgen"
                    " reports by default; rules/config.yaml `loadgen.overhead_window`, an"
                    " hour as shipped), differs from a period of the same length - the newest pinned"
                    " baseline (`clusterscope baseline pin`, which pins the period's overhead,"
                    " standard error and units) or, without a pin, the same period a day"
                    " earlier - by more than `overhead_z` standard errors of the difference,"
                    " sqrt(se1^2 + se0^2), at every evaluation for `overhead_change_for`."
                    " Both periods come from the loadgen's completed units (the sums in"
                    " `loadgen_units_total` and `loadgen_unit_*rows_per_second*_total`), so"
                    " the noise of both sides counts; the standard errors take a period's"
                    " units as independent (no HAC in PromQL). The"
                    " thresholds are set so that a stationary overhead raises at most one such"
                    " alert a week per comparison on replayed lab units (`clusterscope bench"
                    " ab-alarms`, docs/loadgen.md).",
            impact="A configuration, version or data change altered what the feature costs,"
                   " for the estimand the comparison measures (label `estimand`: the whole"
                   " workload, or one statement in a mixed load).",
            diagnosis="- `experiment_variant:loadgen_overhead_ratio:mean1h` and `:se1h` now and"
                      " a day ago (or the pin's `clusterscope_pinned_overhead_*`): the size"
                      " of the move against its noise.\n- `experiment_variant:loadgen_units:"
                      "increase1h`: how many units each period holds (a period with few units"
                      " is noisy).\n- `clusterscope compare --before-baseline NAME` for the"
                      " figures and intervals; deploys and config changes between the periods.",
            mitigation="Find the change (deploys, config, data growth) between the reference and"
                       " now; pin a new baseline (`clusterscope baseline pin NAME`) if the change"
                       " is intended (a pin taken before the alert read the ratio of means is"
                       " ignored: pin again). Without a pin an alert resolves on its own a day"
                       " after a change, once the day-old period holds the new level."))


def groups(c: dict) -> list[Group]:
    lc = c["loadgen"]
    s = c["selectors"]["loadgen"]
    keep = "without (instance, job, target)"
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
        *period_records(s, lc["overhead_window"]).items(),
    ])
    grp.alerts += [
        change_alert(lc),
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
