"""`rules/config.yaml`: every threshold, window, selector, link and dashboard uid.

The monitoring-mixin pattern: one configuration read by the rules, the runbooks and the
dashboards, so a selector or a uid is written once. `load_config` checks every value against
SCHEMA before anything is generated from it, so a typo or a wrong unit is one clear error
naming the file and the key (RulesConfigError), never a KeyError deep in a generator or a
rule file vmalert refuses later.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import yaml

from clusterscope.paths import REPO

# The checkout's file; an installed toolkit (`pip install .`, no checkout) reads the copy
# the wheel carries: clusterscope/rules/config.yaml is a symlink to it, which the build
# copies as package data.
CONFIG = REPO / "rules" / "config.yaml"
if not CONFIG.is_file():
    CONFIG = Path(__file__).with_name("config.yaml")


class RulesConfigError(ValueError):
    """rules/config.yaml cannot be used; the message names the file, the key and why."""


Check = Callable[[object], str | None]  # a value -> what is wrong with it, or None

# Prometheus' duration syntax (prometheus/common model/time.go, durationRE): what `for:`
# and a PromQL range or offset accept, units in this order, each at most once.
_DURATION = re.compile(r"(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?")
_MATCHER = r'[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=~|!~|!=|=)\s*"(?:[^"\\\n]|\\.)*"'
_SELECTOR = re.compile(rf"{_MATCHER}(?:\s*,\s*{_MATCHER})*")
_UID = re.compile(r"[A-Za-z0-9_-]{1,40}")  # Grafana: at most 40 characters (HTTP API docs)


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def duration(v: object) -> str | None:
    if not isinstance(v, str) or not v or not _DURATION.fullmatch(v):
        return f"{v!r} is not a Prometheus duration (e.g. 30s, 5m, 1h30m, 7d)"
    return None


def count(v: object) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        return f"{v!r} is not a whole number >= 0"
    return None


def positive_count(v: object) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        return f"{v!r} is not a whole number >= 1"
    return None


def number(v: object) -> str | None:
    if not _number(v) or v < 0:  # type: ignore[operator]
        return f"{v!r} is not a number >= 0"
    return None


def ratio(v: object) -> str | None:
    if not _number(v) or not 0 < v <= 1:  # type: ignore[operator]
        return f"{v!r} is not a ratio in (0, 1]"
    return None


def factor(v: object) -> str | None:
    if not _number(v) or v <= 1:  # type: ignore[operator]
        return f"{v!r} is not a factor above 1"
    return None


def selector(v: object) -> str | None:
    if not isinstance(v, str) or not _SELECTOR.fullmatch(v.strip()):
        return f"{v!r} is not a label selector (e.g. job=\"ndbinfo\", cluster=~\"prod.*\")"
    return None


def alternation(v: object) -> str | None:
    """Values joined by |, used in a PromQL regex matcher and split by code."""
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*", v):
        return f"{v!r} is not a list of names joined by | (e.g. exec|send)"
    return None


def uid(v: object) -> str | None:
    if not isinstance(v, str) or not _UID.fullmatch(v):
        return f"{v!r} is not a Grafana uid (letters, digits, - and _, at most 40)"
    return None


def url(v: object) -> str | None:
    if not isinstance(v, str) or not v.strip() or any(c in v for c in "\n\r\"'"):
        return f"{v!r} is not a one-line URL prefix"
    return None


D, C, C1, N, R = duration, count, positive_count, number, ratio
SCHEMA: dict[str, dict[str, Check | dict[str, Check]]] = {
    "links": {"runbook_base_url": url, "dashboard_base_url": url},
    "dashboards": dict.fromkeys(("ndb_overview", "ndb_node", "ndb_restarts", "galera",
                                 "experiments", "logs"), uid),
    "selectors": dict.fromkeys(("ndb", "galera", "ndb_sql", "galera_tracker", "loadgen",
                                "vmalert", "inventory", "victoriametrics", "alertmanager",
                                "log_store", "host", "host_filesystems"), selector),
    "blind_spell_hold": duration,
    "ndb": {
        "restart_event_window": D, "restart_history": D, "restart_min_earlier": C,
        "restart_regression_factor": factor, "restart_regression_min_growth_seconds": N,
        "restart_verdict_hold": D, "restart_cause_window": D,
        "restart_phase_exclude": alternation,
        "restart_pinned_lookback": D, "restart_stuck_after": D,
        "restart_stuck_after_data_phases": D, "data_node_down_for": D,
        "node_group_last_replica_for": D, "node_group_memory": D,
        "cluster_unreachable_for": D, "lcp_stalled_after": D,
        "lcp_stalled_duration_factor": factor, "lcp_stalled_min_redo_bytes": C,
        "redo_used_ratio_max": R, "undo_used_ratio_max": R, "log_filling_for": D,
        "data_memory_used_ratio_max": R, "transaction_memory_used_ratio_max": R,
        "memory_for": D, "ldm_cpu_modes": alternation, "ldm_cpu_percent_max": N,
        "ldm_cpu_avg_over": D, "ldm_cpu_for": D, "transporter_overloaded_for": D,
        "transporter_overloads_max": C, "transporter_disconnected_for": D,
        "arbitrator_lost_for": D, "version_mismatch_for": D, "exporter_down_for": D,
        "sql_node_down_for": D, "exporter_scrape_seconds_max": N, "exporter_slow_for": D,
        "sql_node_disconnected_for": D, "collector_failing_for": D,
        "table_memory_trend": D, "table_memory_horizon": D, "table_memory_for": D,
        "data_memory_trend": D, "data_memory_horizon": D, "data_memory_filling_for": D,
        "transaction_inactive_seconds_max": N, "long_transaction_for": D,
        "lock_waits_over": D, "lock_waits_max": N, "lock_waits_for": D,
        "lock_wait_timeouts_per_minute_max": N, "lock_wait_timeouts_for": D,
        "disk_page_buffer_hit_ratio_min": R, "disk_page_buffer_min_requests_per_second": N,
        "disk_page_buffer_for": D, "key_operation_latency_quantile": R,
        "key_operation_latency_baseline": D, "key_operation_latency_baseline_offset": D,
        "key_operation_latency_baseline_min_samples": C,
        "key_operation_latency_factor": factor,
        "key_operation_latency_min_growth_seconds": N, "key_operation_latency_min_ops": N,
        "key_operation_latency_for": D,
    },
    "galera": {
        "node_not_ready_for": D, "exporter_down_for": D, "cluster_down_for": D,
        "non_primary_for": D,
        "out_of_sync_for": D, "cluster_size_history": D, "cluster_size_reduced_for": D,
        "flow_control_paused_max": R, "flow_control_for": D, "recv_queue_max": N,
        "recv_queue_avg_over": D, "recv_queue_for": D, "cert_failures_per_second_max": N,
        "cert_failures_for": D, "connections_used_ratio_max": R, "connections_max_over": D,
        "connections_for": D, "restarted_within": D,
        "ist_downtime_min": D, "gcache_for": D, "sst_recent": D, "recovery_recent": D,
        "recovery_slow_seconds": {"ist": N, "sst": N}, "tracker_down_for": D,
    },
    "host": {
        "filesystem_free_ratio_max_filling": R, "filesystem_predict_window": D,
        "filesystem_predict_ahead": D, "filesystem_filling_for": D,
        "filesystem_free_ratio_min": R, "filesystem_full_for": D,
        "memory_available_ratio_min": R, "memory_for": D, "cpu_busy_ratio_max": R,
        "cpu_avg_over": D, "cpu_for": D,
    },
    "stack": {"down_for": D, "failing_for": D, "storage_predict_ahead": D},
    "loadgen": {
        "overhead_window": D, "overhead_z": N, "overhead_change_for": D,
        "overhead_min_units": C1, "overhead_pinned_lookback": D, "overhead_rolling_offset": D,
        "saturated_for": D, "down_for": D,
    },
    "logs": {"event_window": D},
    "changes": {"settle": D, "period": D, "effect_hold": D},
}


def check(data: object, where: str = "rules/config.yaml") -> dict:
    """`data` if it follows SCHEMA; RulesConfigError naming the first wrong key otherwise."""
    def fail(key: str, problem: str) -> RulesConfigError:
        return RulesConfigError(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")

    def mapping(v: object, key: str, schema: dict) -> None:
        if not isinstance(v, dict):
            raise fail(key, f"must be a mapping of {', '.join(schema)}, not {v!r:.60}")
        prefix = f"{key}." if key else ""
        unknown = [str(k) for k in v if k not in schema]
        if unknown:
            raise fail(key, f"unknown key(s) {', '.join(unknown)} (known: {', '.join(schema)})")
        for name, sub in schema.items():
            here = prefix + name
            if name not in v:
                raise fail(here, "missing")
            value = v[name]
            if isinstance(sub, dict):
                mapping(value, here, sub)
            else:
                problem = sub(value)
                if problem:
                    raise fail(here, problem)

    mapping(data, "", SCHEMA)
    return data  # type: ignore[return-value]


def load_config(path: Path = CONFIG) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise RulesConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RulesConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}"
                               ) from None
    except RecursionError:
        raise RulesConfigError(f"{path}: not valid YAML: nested too deeply") from None
    return check(data, str(path))


@cache
def shared() -> dict:
    """The committed configuration, read once per process (dashboards, uids)."""
    return load_config()
