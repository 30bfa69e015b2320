"""The loadgen's Prometheus metrics (names and labels: docs/loadgen.md)."""

from __future__ import annotations

import math

from clusterscope_inventory.bounded import BoundedServer, serve_metrics
from prometheus_client import CollectorRegistry, Counter, Gauge

from clusterscope_loadgen import __version__
from clusterscope_loadgen.results import WindowResult
from clusterscope_loadgen.stats import Estimate
from clusterscope_loadgen.unitstream import UnitStream

# label names of the per-window, per-pair (variant vs baseline) and per-experiment series;
# `estimand` (designs.ESTIMAND: whole_workload or mixed_statement) is fixed by the group's
# design, so it never churns while the configuration stands
WINDOW_LABELS = ["experiment", "variant", "cluster", "engine", "target"]
PAIR_LABELS = ["experiment", "variant", "baseline", "cluster", "engine", "target", "estimand"]
EXPERIMENT_LABELS = ["experiment"]


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        r = self.registry = registry or CollectorRegistry()

        def g(name: str, doc: str, labels: list[str]) -> Gauge:
            return Gauge(name, doc, labels, registry=r)

        def win(name: str, doc: str) -> Gauge:
            return g(name, doc, WINDOW_LABELS)

        def pair(name: str, doc: str) -> Gauge:
            return g(name, doc, PAIR_LABELS)

        def per_exp(name: str, doc: str) -> Gauge:
            return g(name, doc, EXPERIMENT_LABELS)

        self.seq = win("loadgen_window_seq", "Round number of the last window (pairs share it)")
        self.valid = win("loadgen_window_valid", "1 if the last window was a clean measurement")
        self.end = win("loadgen_window_end_timestamp_seconds", "End time of the last window")
        self.tps = win("loadgen_window_tps", "Transactions (sysbench events) per second")
        self.qps = win("loadgen_window_qps", "Queries per second in the last window")
        self.rows = win("loadgen_window_rows_per_second",
                        "Throughput in rows (tps x rows per event); overheads use this")
        self.latency = g("loadgen_window_latency_seconds", "Event latency quantile",
                         [*WINDOW_LABELS, "quantile"])
        self.errors = win("loadgen_window_errors", "Errors in the last window")
        self.reconnects = win("loadgen_window_reconnects", "Reconnects in the last window")
        self.stale = win("loadgen_window_stale_reads",
                         "Reads that missed the session's own write (read_backup)")
        self.windows = Counter("loadgen_windows", "Windows run", [*WINDOW_LABELS, "valid"],
                               registry=r)
        self.transactions = Counter("loadgen_transactions", "Transactions run", WINDOW_LABELS,
                                    registry=r)
        self.pair_ratio = pair("loadgen_pair_tps_ratio",
                               "sum(variant)/sum(baseline) throughput over the last round's"
                               " valid units")
        self.pair_overhead = pair("loadgen_pair_overhead_ratio",
                                  "1 - sum(variant)/sum(baseline) throughput over the last"
                                  " round's valid units")
        self.pair_seq = pair("loadgen_pair_seq", "Round number of the last valid units")
        self.overhead = pair("loadgen_overhead_ratio",
                             "Overhead estimate, 1 - variant/baseline throughput, over the"
                             " last loadgen_overhead_window_seconds (estimand: its label;"
                             " estimator: loadgen_info)")
        self.overhead_lo = pair("loadgen_overhead_ratio_lower",
                                "Interval lower bound (level: loadgen_overhead_confidence_ratio)")
        self.overhead_hi = pair("loadgen_overhead_ratio_upper",
                                "Interval upper bound (level: loadgen_overhead_confidence_ratio)")
        self.confidence = pair("loadgen_overhead_confidence_ratio",
                               "Level of the interval: 0.95 for the experiment's primary"
                               " comparison, Bonferroni-simultaneous for the others")
        self.lat = pair("loadgen_latency_ratio", "Mean paired p95 latency ratio")
        self.lat_lo = pair("loadgen_latency_ratio_lower", "95% interval, lower bound")
        self.lat_hi = pair("loadgen_latency_ratio_upper", "95% interval, upper bound")
        self.mde = pair("loadgen_overhead_min_detectable_ratio",
                        "Smallest true overhead (vs 0) the last window_seconds of units"
                        " detect: 95% two-sided, 80% power")
        self.mde_diff = pair("loadgen_overhead_min_detectable_difference_ratio",
                             "Smallest before/after change of the overhead two periods like"
                             " the last window_seconds detect: 95% two-sided, 80% power")
        self.npairs = pair("loadgen_overhead_pairs",
                           "Valid units behind the estimate (its sliding window)")
        self.span = pair("loadgen_overhead_window_seconds",
                         "Length of the sliding window of units every estimate covers")
        self.cpu = Counter("loadgen_cpu_seconds", "CPU used by the loadgen and sysbench",
                           EXPERIMENT_LABELS, registry=r)
        self.cores = per_exp("loadgen_cpu_cores", "Cores used by sysbench in the last window")
        self.saturated = per_exp("loadgen_saturated",
                                 "1 when the load generator, not the cluster, is the bottleneck")
        self.verified = per_exp("loadgen_rows_verified",
                                "1 if the row counts matched after the last check, 0 if not")
        self.info = g("loadgen_info", "The running experiment, its A/B design(s), the"
                      " estimand each design estimates, and the estimator",
                      ["experiment", "cluster", "engine", "target", "version", "design",
                       "estimand", "estimator"])
        self.version = __version__
        self.units = UnitStream(PAIR_LABELS, r)  # the change alert's counters

    def serve(self, port: int, addr: str = "127.0.0.1") -> BoundedServer:
        # read timeouts and a connection limit: a held connection cannot stall the scrapes
        return serve_metrics((addr.strip("[]"), port), self.registry, "clusterscope_loadgen")

    def window(self, labels: dict[str, str], w: WindowResult) -> None:
        self.seq.labels(**labels).set(w.seq)
        self.valid.labels(**labels).set(1 if w.valid else 0)
        self.end.labels(**labels).set(w.end)
        self.tps.labels(**labels).set(w.tps)
        self.qps.labels(**labels).set(w.qps)
        self.rows.labels(**labels).set(w.throughput)
        for q, v in w.latency.items():
            self.latency.labels(**labels, quantile=str(q)).set(v)
        self.errors.labels(**labels).set(w.errors)
        self.reconnects.labels(**labels).set(w.reconnects)
        self.stale.labels(**labels).set(w.stale)
        self.windows.labels(**labels, valid="true" if w.valid else "false").inc()
        self.transactions.labels(**labels).inc(w.transactions)

    def estimate(self, labels: dict[str, str], over: Estimate, lat: Estimate,
                 last_round: dict | None, window: float) -> None:
        def put(gauge: Gauge, value: float) -> None:
            if math.isnan(value):
                # No figure yet: drop the series instead of exporting NaN.
                try:
                    gauge.remove(*[labels[k] for k in PAIR_LABELS])
                except KeyError:
                    pass
            else:
                gauge.labels(**labels).set(value)

        put(self.overhead, over.mean)
        put(self.overhead_lo, over.low)
        put(self.overhead_hi, over.high)
        put(self.mde, over.min_detectable)
        put(self.mde_diff, over.min_detectable_difference)
        put(self.lat, lat.mean)
        put(self.lat_lo, lat.low)
        put(self.lat_hi, lat.high)
        self.confidence.labels(**labels).set(over.confidence)
        self.npairs.labels(**labels).set(over.n)
        self.span.labels(**labels).set(window)
        if last_round:
            self.pair_ratio.labels(**labels).set(1.0 - last_round["overhead"])
            self.pair_overhead.labels(**labels).set(last_round["overhead"])
            self.pair_seq.labels(**labels).set(last_round["seq"])
