# ruff: noqa: E501  (PromQL reads better unbroken)
"""The monitoring stack's own health: a Watchdog that always fires (a dead man's switch:
its absence at the receiver means the alerting path is broken), vmalert's rule errors, and
each of VictoriaMetrics, vmalert, Alertmanager and the log store down or failing.

What a rule can see of the stack is bounded by the stack: the rules run in vmalert on
VictoriaMetrics' data, so a single VictoriaMetrics or the only vmalert being down stops
every rule, this file's included. Those two failures are the Watchdog's: the dead man's
switch (the heartbeat receiver) notices the heartbeat stop. Everything else (a component
of the scale-out cluster down, the second vmalert of the log rules, a storage gone
read-only or filling, rules missing their evaluations, recorded rows dropped, alerts not
reaching Alertmanager, notifications failing) is alerted here. The failure modes and their
metrics follow VictoriaMetrics' own deployment/docker/rules/alerts-vmalert.yml and
alerts-health.yml (v1.151.0) and PMM's victoriametrics_down template.
"""

from __future__ import annotations

from clusterscope.rules.model import Alert, Group, seconds


def _problem(expr: str, problem: str) -> str:
    """`expr` with a `problem` label saying which check fired (one alert, several causes)."""
    return f'label_replace({expr}, "problem", "{problem}", "", "")'


def groups(c: dict) -> list[Group]:
    v = c["selectors"]["vmalert"]
    inv = c["selectors"]["inventory"]
    vm = c["selectors"]["victoriametrics"]
    am = c["selectors"]["alertmanager"]
    logs = c["selectors"]["log_store"]
    st = c["stack"]
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
              "ndb_overview", st["failing_for"], per_node=False),
        # VictoriaMetrics: a component that does not answer its scrape (the scale-out
        # cluster's vmstorage, vminsert, vmselect, vmagent; a single node that answers
        # queries but not /metrics), storage gone read-only (free disk below
        # -storage.minFreeDiskSpaceBytes: app/vmstorage/main.go vm_storage_is_read_only), or
        # its free disk running out at the trend of the last day
        Alert("ClusterscopeVictoriaMetricsFailing",
              " or ".join([
                  _problem(f"up{{{vm}}} == 0", "down"),
                  _problem(f"max_over_time(vm_storage_is_read_only{{{vm}}}[5m]) == 1", "read-only"),
                  # only with an hour of history: a fresh VictoriaMetrics under a burst of
                  # writes (the 31-minute soak's start) extrapolated minutes to a full disk
                  _problem(f"predict_linear(vm_free_disk_space_bytes{{{vm}}}[1d],"
                           f" {seconds(st['storage_predict_ahead'])}) < 0"
                           f" and vm_free_disk_space_bytes{{{vm}}} offset 1h",
                           "disk filling")]),
              "critical", "VictoriaMetrics {{ $labels.instance }}: {{ $labels.problem }}",
              "VictoriaMetrics at {{ $labels.instance }} ({{ $labels.component }}) is"
              " {{ $labels.problem }}: samples are lost or will be (down: not scraped;"
              " read-only: free disk below its limit, nothing is written; disk filling: at the"
              f" last day's trend the disk is full within {st['storage_predict_ahead']}).",
              "ndb_overview", st["down_for"], per_node=False),
        # vmalert: the second vmalert (log rules) down, evaluations missed (a group slower
        # than its interval), recorded samples and alert state not written back (the
        # restart baselines thin out silently), a rule file that no longer loads
        Alert("ClusterscopeVmalertFailing",
              " or ".join([
                  _problem(f"up{{{v}}} == 0", "down"),
                  _problem(f"sum without (group, file) (increase(vmalert_iteration_missed_total{{{v}}}[5m])) > 0",
                           "missed evaluations"),
                  _problem(f"increase(vmalert_remotewrite_errors_total{{{v}}}[5m]) > 0"
                           f" or increase(vmalert_remotewrite_dropped_rows_total{{{v}}}[5m]) > 0",
                           "remote write failing"),
                  _problem(f"vmalert_config_last_reload_successful{{{v}}} == 0", "rules not reloaded")]),
              "warning", "vmalert {{ $labels.instance }}: {{ $labels.problem }}",
              "vmalert at {{ $labels.instance }} is {{ $labels.problem }} (down: not scraped;"
              " missed evaluations: a rule group took longer than its interval; remote write"
              " failing: recorded series and alert state are not stored; rules not reloaded: a"
              " changed rule file does not parse and the old rules run).",
              "ndb_overview", st["failing_for"], per_node=False),
        # the way to a person: vmalert cannot hand alerts to Alertmanager, Alertmanager's
        # notifications fail (a Slack or PagerDuty integration rejecting its payload or
        # key), its configuration does not reload, or an Alertmanager is not scraped (with
        # one Alertmanager this reaches nobody: the heartbeat stops too)
        Alert("ClusterscopeAlertDeliveryFailing",
              " or ".join([
                  _problem(f"increase(vmalert_alerts_send_errors_total{{{v}}}[5m]) > 0",
                           "vmalert cannot reach Alertmanager"),
                  _problem(f"sum without (reason) (increase(alertmanager_notifications_failed_total{{{am}}}[5m])) > 0",
                           "notifications failing"),
                  _problem(f"alertmanager_config_last_reload_successful{{{am}}} == 0",
                           "configuration not reloaded"),
                  _problem(f"up{{{am}}} == 0", "Alertmanager down")]),
              "critical", "Alerts do not reach people: {{ $labels.problem }}",
              "{{ $labels.problem }} ({{ $labels.instance }}{{ with $labels.integration }},"
              " integration {{ . }}{{ end }}): alerts fired by the rules may reach nobody."
              " Notifications that fail are retried, then dropped.",
              "ndb_overview", st["failing_for"], per_node=False),
        # the log store (its log rules and the log dashboards depend on it)
        Alert("ClusterscopeLogStoreDown",
              f"up{{{logs}}} == 0",
              "warning", "The log store {{ $labels.instance }} does not answer",
              "The log store at {{ $labels.instance }} ({{ $labels.component }}) has not"
              f" answered its scrape for {st['down_for']}: log lines are not stored, the"
              " alerts on log lines and the log panels are blind.",
              "logs", st["down_for"], per_node=False),
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
