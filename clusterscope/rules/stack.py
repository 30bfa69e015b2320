# ruff: noqa: E501  (PromQL reads better unbroken)
"""The monitoring stack's own health: a Watchdog that always fires (a dead man's switch:
its absence at the receiver means the alerting path is broken) and vmalert's rule errors."""

from __future__ import annotations

from clusterscope.rules.model import Alert, Group


def groups(c: dict) -> list[Group]:
    v = c["selectors"]["vmalert"]
    grp = Group("stack", "stack.yml")
    grp.alerts += [
        Alert("ClusterscopeWatchdog", "vector(1)", "info",
              "The alerting pipeline works (always firing)",
              "This alert always fires. Alertmanager routes it to the heartbeat receiver;"
              " when the heartbeat stops, vmalert, VictoriaMetrics or Alertmanager is down.",
              "ndb_overview", per_node=False),
        # counters per rule since v1.96.0 (app/vmalert/rule/{alerting,recording}.go; CHANGELOG
        # v1.96.0); older vmalerts (Debian's 1.79) export 0/1 gauges named *_error
        Alert("ClusterscopeRuleErrors",
              # per group and file: the rule metrics' own `alertname` label would clash
              f"sum by (instance, job, group, file) ("
              f"increase(vmalert_alerting_rules_errors_total{{{v}}}[5m])"
              f" or increase(vmalert_recording_rules_errors_total{{{v}}}[5m])"
              f" or vmalert_alerting_rules_error{{{v}}} or vmalert_recording_rules_error{{{v}}}) > 0",
              "warning", "vmalert rules of group {{ $labels.group }} fail",
              "vmalert failed to evaluate a rule of group {{ $labels.group }} in the last 5"
              " minutes: the alert (or the recording it feeds) is silently missing.",
              "ndb_overview", per_node=False),
    ]
    return [grp]
