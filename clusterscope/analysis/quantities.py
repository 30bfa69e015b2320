"""What `compare` compares by default: the product's own series, one event per sample."""

from __future__ import annotations

from clusterscope.analysis.compare import Quantity

# A restart's figures count once it completed (status 12 on the master, 19 elsewhere).
COMPLETED_RESTART = ("and on(cluster, node_id) ((ndb_restart_status == 12)"
              " or (ndb_restart_status == 19))")

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
             'avg by (cluster, node_id) (sum without (mode) (avg_over_time('
             'ndb_thread_cpu_percent{thread_name="ldm",mode=~"os_user|os_system"}[1m])))',
             "%", "lower", ("cluster", "node_id"), simulated=True, step=60.0),
    Quantity("galera_recovery", "Galera recoveries", "recovery duration",
             "galera_recovery_last_duration_seconds", "s", "lower",
             ("cluster", "node", "kind")),
)
