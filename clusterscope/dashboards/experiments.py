"""Experiments dashboard: the loadgen's paired A/B overheads with their interval, each named
by its estimand (whole_workload: every thread on the variant; mixed_statement: a
statement's relative latency in a load that mixes the variants), what the last hour can
detect, throughput and latency per variant, invalid windows and loadgen saturation."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit
from clusterscope.dashboards.uids import EXPERIMENTS, GALERA, LOGS, NDB_OVERVIEW

C = 'cluster="$cluster"'
E = 'experiment=~"$experiment"'
CE = f"{C}, {E}"


def experiments() -> dash.Dashboard:
    d = kit.dashboard(EXPERIMENTS, "Experiments",
                      "Continuous A/B experiments (FK, Read Backup, partitioning, batching/PK):"
                      " overhead of each variant against its baseline over the last hour of"
                      " paired units, with its interval and estimand: whole_workload (every"
                      " thread on the variant vs on the baseline: time-sliced, the default)"
                      " or mixed_statement (a statement's relative latency in a load mixing"
                      " the variants: the interleaved design).",
                      ["loadgen"],
                      [(GALERA, "Galera"), (NDB_OVERVIEW, "NDB overview"), (LOGS, "Logs")])
    d.with_variable(kit.prom_var("cluster", "cluster", "label_values(loadgen_info, cluster)"))
    d.with_variable(kit.prom_var("experiment", "experiment",
                                 f"label_values(loadgen_info{{{C}}}, experiment)", multi=True))

    d.with_row(dash.Row("Overhead"))
    band = kit.ts(
        "Overhead with its interval", "Paired overhead (1 - variant/baseline throughput;"
        " positive = the variant is slower) over the last loadgen_overhead_window_seconds of"
        " units, and its interval: 95% for each experiment's primary comparison,"
        " simultaneous (Bonferroni) for the others (loadgen_overhead_confidence_ratio). The"
        " legend names the estimand: whole_workload = every thread on the variant vs every"
        " thread on the baseline; mixed_statement = relative per-statement latency in a"
        " load that mixes the variants, which equals the whole-workload effect only for"
        " some costs (docs/loadgen.md). Estimator and design: loadgen_info. Recorded:"
        " experiment_variant:loadgen_overhead_ratio:mean/lower/upper.", "percentunit",
        kit.q(f"experiment_variant:loadgen_overhead_ratio:mean{{{CE}}}",
              "{{experiment}} {{variant}} ({{estimand}})"),
        kit.q(f"experiment_variant:loadgen_overhead_ratio:lower{{{CE}}}",
              "{{experiment}} {{variant}} ({{estimand}}) lower"),
        kit.q(f"experiment_variant:loadgen_overhead_ratio:upper{{{CE}}}",
              "{{experiment}} {{variant}} ({{estimand}}) upper"), w=12, h=9, fill=0)
    # The interval bounds are drawn as a shaded band, not as two more lines.
    band = band.override_by_regexp(".* lower", [
        kit.DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": [4, 4]})])
    band = band.override_by_regexp(".* upper", [
        kit.DynamicConfigValue(id_val="custom.fillBelowTo", value="lower"),
        kit.DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": [4, 4]})])
    d.with_panel(band)
    d.with_panel(kit.ts(
        "Overhead of each round", "Overhead of the last round's valid units, 1 -"
        " sum(variant) / sum(baseline) throughput (time-sliced slot pairs, an interleaved"
        " window, a round or an ABBA block; recorded:"
        " experiment_variant:loadgen_pair_overhead_ratio:last): the points behind the"
        " estimate, with its estimand.",
        "percentunit",
        kit.q(f"experiment_variant:loadgen_pair_overhead_ratio:last{{{CE}}}",
              "{{experiment}} {{variant}} ({{estimand}})"), w=12, h=9))
    d.with_panel(kit.ts(
        "Latency ratio (p95)", "p95 latency variant/baseline, paired (recorded).", "none",
        kit.q(f"experiment_variant:loadgen_latency_ratio:mean{{{CE}}}",
              "{{experiment}} {{variant}}"), w=8))
    d.with_panel(kit.ts(
        "Detectable change over the last hour", "The smallest true overhead the last"
        " loadgen_overhead_window_seconds of units detect at 95% two-sided with 80% power:"
        " against 0 (loadgen_overhead_min_detectable_ratio), and as a before/after change"
        " between two such periods (loadgen_overhead_min_detectable_difference_ratio,"
        " sqrt 2 larger).", "percentunit",
        kit.q(f"loadgen_overhead_min_detectable_ratio{{{CE}}}",
              "{{experiment}} {{variant}} vs 0"),
        kit.q(f"loadgen_overhead_min_detectable_difference_ratio{{{CE}}}",
              "{{experiment}} {{variant}} before/after"), w=8))
    d.with_panel(kit.stat_panel(
        "Units in the estimate", "Valid units (slot pairs, windows, rounds or blocks) of the"
        " last loadgen_overhead_window_seconds behind each estimate.", "short",
        kit.q(f"loadgen_overhead_pairs{{{CE}}}", "{{experiment}} {{variant}}"), w=8, h=8,
        neutral=True))

    d.with_row(dash.Row("Windows"))
    d.with_panel(kit.ts(
        "Throughput per variant", "Transactions per second of each window: time-sliced,"
        " over the variant's own slots (every thread on it); in an interleaved window,"
        " threads / the variant's mean step latency in the mixed load.", "ops",
        kit.q(f"loadgen_window_tps{{{CE}}}", "{{experiment}} {{variant}}"), w=12))
    d.with_panel(kit.ts(
        "Latency p95 / p99 per variant", "Per-event latency quantiles of each window.", "s",
        kit.q(f'loadgen_window_latency_seconds{{{CE}, quantile="0.95"}}',
              "{{experiment}} {{variant}} p95"),
        kit.q(f'loadgen_window_latency_seconds{{{CE}, quantile="0.99"}}',
              "{{experiment}} {{variant}} p99"), w=12))
    d.with_panel(kit.state_panel(
        "Window validity", "Each window's verdict: INVALID windows (a node failed, errors)"
        " are left out of the overheads, never averaged in.",
        kit.q(f"loadgen_window_valid{{{CE}}}", "{{experiment}} {{variant}}"),
        mappings={"1": ("valid", "green"), "0": ("INVALID", "red")}, w=12))
    d.with_panel(kit.ts(
        "Errors and reconnects", "Errors and reconnects in each window.", "short",
        kit.q(f"loadgen_window_errors{{{CE}}}", "{{experiment}} {{variant}} errors"),
        kit.q(f"loadgen_window_reconnects{{{CE}}}", "{{experiment}} {{variant}} reconnects"),
        w=12, bars=True))

    d.with_row(dash.Row("Load generator"))
    d.with_panel(kit.state_panel(
        "Loadgen saturated", "1 when the load generator, not the cluster, is the bottleneck:"
        " overheads measured then are not the cluster's.",
        kit.q(f"max by (experiment) (loadgen_saturated{{{CE}}})", "{{experiment}}"),
        mappings={"0": ("ok", "green"), "1": ("SATURATED", "red")}, w=12))
    d.with_panel(kit.ts(
        "Loadgen CPU", "Cores the loadgen and its sysbench used.", "short",
        kit.q(f"max by (experiment) (loadgen_cpu_cores{{{CE}}})", "{{experiment}}"), w=12))
    return d
