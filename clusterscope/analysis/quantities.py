"""What `compare` compares by default: the product's own series, one event per sample.

Every row is named by its cluster too (two clusters' windows are never pooled), and a
series' `simulated` label is kept through aggregations so its row can say SIMULATED.
"""

from __future__ import annotations

from clusterscope.analysis.compare import Quantity
from clusterscope.rules.fragments import ldm_cpu_percent, restart_completed
from clusterscope.rules.rules_config import shared

# A restart's figures count once it completed.
COMPLETED_RESTART = f"and on(cluster, node_id) ({restart_completed('ndb_restart_status')})"
# Events: the exporters set each of these once per event, next to the event's figures.
RESTART_DONE = "ndb_restart_last_completed_timestamp_seconds"
WINDOW_DONE = "loadgen_window_end_timestamp_seconds"
PAIR_DONE = "loadgen_pair_seq"
RECOVERY_DONE = "galera_recovery_last_end_timestamp_seconds"


def aggregate_phases() -> tuple[str, ...]:
    """Phases that sum other phases (rules/config.yaml `ndb.restart_phase_exclude`)."""
    return tuple(shared()["ndb"]["restart_phase_exclude"].split("|"))


def default_quantities() -> tuple[Quantity, ...]:
    """What `compare` compares when not told otherwise."""
    return (
        Quantity("loadgen_tps", "experiments", "throughput (per window)",
                 "loadgen_window_tps{{experiment}}", "tps", "higher",
                 ("cluster", "experiment", "variant"), experiment_filter=True, event=WINDOW_DONE),
        Quantity("loadgen_p95", "experiments", "latency p95 (per window)",
                 'loadgen_window_latency_seconds{quantile="0.95",{experiment}}', "s", "lower",
                 ("cluster", "experiment", "variant"), experiment_filter=True,
                 event=WINDOW_DONE),
        Quantity("loadgen_p99", "experiments", "latency p99 (per window)",
                 'loadgen_window_latency_seconds{quantile="0.99",{experiment}}', "s", "lower",
                 ("cluster", "experiment", "variant"), experiment_filter=True,
                 event=WINDOW_DONE),
        # one sample per round (its units' mean); the estimand names what it is: a row of
        # whole_workload and one of mixed_statement are different quantities, never pooled
        Quantity("loadgen_overhead", "experiments", "overhead vs baseline (per round of units)",
                 "loadgen_pair_overhead_ratio{{experiment}}", "ratio", "lower",
                 ("cluster", "experiment", "variant", "baseline", "estimand"),
                 experiment_filter=True, event=PAIR_DONE, serial=True),
        Quantity("ndb_restart_total", "NDB restarts", "restart total",
                 f"ndb_restart_total_seconds {COMPLETED_RESTART}", "s", "lower",
                 ("cluster", "node_id"), event=RESTART_DONE),
        Quantity("ndb_restart_phase", "NDB restarts", "restart phase",
                 f"ndb_restart_phase_seconds {COMPLETED_RESTART}", "s", "lower",
                 ("cluster", "node_id", "phase"), event=RESTART_DONE,
                 aggregate=aggregate_phases()),
        Quantity("ndb_ldm_cpu", "NDB LDM CPU", "LDM thread CPU (1-min means)",
                 f"avg by (cluster, node_id, simulated) ({ldm_cpu_percent(avg_over='1m')})",
                 "%", "lower", ("cluster", "node_id"), step=60.0),
        Quantity("galera_recovery", "Galera recoveries", "recovery duration",
                 "galera_recovery_last_duration_seconds", "s", "lower",
                 ("cluster", "node", "kind"), event=RECOVERY_DONE),
    )
