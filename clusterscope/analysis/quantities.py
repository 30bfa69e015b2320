"""What `compare` compares by default: the product's own series, one event per sample."""

from __future__ import annotations

from clusterscope.analysis.compare import Quantity
from clusterscope.rules.fragments import ldm_cpu_percent, restart_completed

# A restart's figures count once it completed.
COMPLETED_RESTART = f"and on(cluster, node_id) ({restart_completed('ndb_restart_status')})"

DEFAULT_QUANTITIES: tuple[Quantity, ...] = (
    Quantity("loadgen_tps", "experiments", "throughput (per window)",
             "loadgen_window_tps{{experiment}}", "tps", "higher", ("experiment", "variant"),
             experiment_filter=True),
    Quantity("loadgen_p95", "experiments", "latency p95 (per window)",
             'loadgen_window_latency_seconds{quantile="0.95",{experiment}}', "s", "lower",
             ("experiment", "variant"), experiment_filter=True),
    Quantity("loadgen_p99", "experiments", "latency p99 (per window)",
             'loadgen_window_latency_seconds{quantile="0.99",{experiment}}', "s", "lower",
             ("experiment", "variant"), experiment_filter=True),
    Quantity("loadgen_overhead", "experiments", "overhead vs baseline (per A/B pair)",
             "loadgen_pair_overhead_ratio{{experiment}}", "ratio", "lower",
             ("experiment", "variant", "baseline"), experiment_filter=True),
    Quantity("ndb_restart_total", "NDB restarts", "restart total",
             f"ndb_restart_total_seconds {COMPLETED_RESTART}", "s", "lower", ("cluster", "node_id"),
             simulated=True),
    Quantity("ndb_restart_phase", "NDB restarts", "restart phase",
             f"ndb_restart_phase_seconds {COMPLETED_RESTART}", "s", "lower",
             ("cluster", "node_id", "phase"), simulated=True),
    Quantity("ndb_ldm_cpu", "NDB LDM CPU", "LDM thread CPU (1-min means)",
             f"avg by (cluster, node_id) ({ldm_cpu_percent(avg_over='1m')})",
             "%", "lower", ("cluster", "node_id"), simulated=True, step=60.0),
    Quantity("galera_recovery", "Galera recoveries", "recovery duration",
             "galera_recovery_last_duration_seconds", "s", "lower",
             ("cluster", "node", "kind")),
)
