# ruff: noqa: E501  (PromQL reads better unbroken)
"""The monitoring stack's own health: a Watchdog that always fires (a dead man's switch:
its absence at the receiver means the alerting path is broken) and vmalert's rule errors."""

from __future__ import annotations

from clusterscope.rules.model import Alert, Group


def groups(c: dict) -> list[Group]:
    v = c["selectors"]["vmalert"]
    inv = c["selectors"]["inventory"]
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
        # The absence alerts follow the description; without the inventory they would all
        # go quiet, so its own absence is an alert of the stack (always deployed).
        Alert("ClusterscopeInventoryDown",
              # absent over a minute, not at one instant: a scrape late on a loaded host
              # leaves a gap shorter than that
              f"up{{{inv}}} == 0 or absent_over_time(up{{{inv}}}[1m])",
              "warning", "The clusterscope inventory is not scraped",
              "The inventory (the description of what is monitored, clusterscope.yml, served"
              " as service discovery and metrics) does not answer or is not scraped: no new"
              " target is discovered, and the alerts that compare a cluster with its"
              " description (sizes, absent exporters) are blind.", "ndb_overview", "2m",
              per_node=False),
        Alert("ClusterscopeInventoryInvalid",
              f"clusterscope_inventory_config_last_reload_successful{{{inv}}} == 0",
              "warning", "The description of what is monitored does not parse",
              "clusterscope.yml changed and no longer parses; the inventory still serves the"
              " last good description. Its log line names the place and the problem.",
              "ndb_overview", "1m", per_node=False),
    ]
    return [grp]
