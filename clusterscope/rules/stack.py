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

from clusterscope.rules.rule_model import Alert, Group, Runbook, seconds

FIRST_STEPS = """First, the stack's own state: `docker compose ps` (which services run and how often
they restarted) and the failing service's log (`docker compose logs --tail 200 <service>`).
The stack scrapes itself, so what still runs says what does not:

```promql
up{job=~"victoriametrics|vmalert|alertmanager|victorialogs|clusterscope_inventory|otelcol"}
```"""


def _problem(expr: str, problem: str) -> str:
    """`expr` with a `problem` label saying which check fired (one alert, several causes)."""
    return f'label_replace({expr}, "problem", "{problem}", "", "")'


def _watchdog(c: dict) -> Alert:
    return Alert(name="ClusterscopeWatchdog",
                 expr="vector(1)",
                 severity="info",
                 summary="The alerting pipeline works (always firing)",
                 description="This alert always fires. Alertmanager routes it to the heartbeat receiver;"
                             " when the heartbeat stops, vmalert, VictoriaMetrics or Alertmanager is down.",
                 dashboard="ndb_overview",
                 per_node=False,
                 runbook=Runbook(
                     meaning="Always firing, on purpose: a dead man's switch for the alerting path.",
                     impact="None while it arrives. When the heartbeat receiver stops getting it,"
                            " vmalert, VictoriaMetrics or Alertmanager is down and no alert can reach"
                            " anyone.",
                     diagnosis="- If the heartbeat stopped: vmalert's and Alertmanager's health pages and"
                               " logs.",
                     mitigation="Never silence it; route it to a heartbeat service that pages when it"
                                " stops."))


def _rule_errors(c: dict) -> Alert:
    v = c["selectors"]["vmalert"]
    st = c["stack"]
    # counters per rule since v1.96.0 (app/vmalert/rule/{alerting,recording}.go; CHANGELOG
    # v1.96.0); older vmalerts (Debian's 1.79) export 0/1 gauges named *_error
    return Alert(name="ClusterscopeRuleErrors",
                 expr=f"sum by (instance, job, group, file) ("
                      f"increase(vmalert_alerting_rules_errors_total{{{v}}}[5m])"
                      f" or increase(vmalert_recording_rules_errors_total{{{v}}}[5m])"
                      f" or vmalert_alerting_rules_error{{{v}}} or vmalert_recording_rules_error{{{v}}}) > 0",
                 severity="warning",
                 summary="vmalert rules of group {{ $labels.group }} fail",
                 description="vmalert failed to evaluate a rule of group {{ $labels.group }} in the last 5"
                             " minutes: the alert (or the recording it feeds) is silently missing.",
                 dashboard="ndb_overview",
                 for_=st["failing_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="vmalert failed to evaluate a rule of the group in every 5-minute window for"
                             " 5 minutes (`vmalert_*_rules_errors_total`).",
                     impact="That alert or recording is missing, silently, until fixed.",
                     diagnosis="- vmalert's log and its UI (`/vmalert/groups`): the rule's last error"
                               " (query timeout, many-to-many matching).",
                     mitigation="Fix the rule or the series it matches (duplicate label sets), or raise"
                                " the datasource timeout."))


def _victoria_metrics_failing(c: dict) -> Alert:
    vm = c["selectors"]["victoriametrics"]
    st = c["stack"]
    # VictoriaMetrics: a component that does not answer its scrape (the scale-out
    # cluster's vmstorage, vminsert, vmselect, vmagent; a single node that answers
    # queries but not /metrics), storage gone read-only (free disk below
    # -storage.minFreeDiskSpaceBytes: app/vmstorage/main.go vm_storage_is_read_only), or
    # its free disk running out at the trend of the last day
    return Alert(name="ClusterscopeVictoriaMetricsFailing",
                 expr=" or ".join([
                          _problem(f"up{{{vm}}} == 0", "down"),
                          _problem(f"max_over_time(vm_storage_is_read_only{{{vm}}}[5m]) == 1", "read-only"),
                          # only with an hour of history: a fresh VictoriaMetrics under a burst of
                          # writes (the 31-minute soak's start) extrapolated minutes to a full disk
                          _problem(f"predict_linear(vm_free_disk_space_bytes{{{vm}}}[1d],"
                                   f" {seconds(st['storage_predict_ahead'])}) < 0"
                                   f" and vm_free_disk_space_bytes{{{vm}}} offset 1h",
                                   "disk filling")]),
                 severity="critical",
                 summary="VictoriaMetrics {{ $labels.instance }}: {{ $labels.problem }}",
                 description="VictoriaMetrics at {{ $labels.instance }} ({{ $labels.component }}) is"
                             " {{ $labels.problem }}: samples are lost or will be (down: not scraped;"
                             " read-only: free disk below its limit, nothing is written; disk filling: at the"
                             f" last day's trend the disk is full within {st['storage_predict_ahead']}).",
                 dashboard="ndb_overview",
                 for_=st["down_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="A VictoriaMetrics process has a problem (label `problem`): *down* (its `up` is 0: a"
                             " component of the scale-out cluster, or a single node that answers queries"
                             " but not its own scrape), *read-only* (free disk below"
                             " `-storage.minFreeDiskSpaceBytes`, `vm_storage_is_read_only`), or *disk"
                             " filling* (`vm_free_disk_space_bytes` predicted to reach 0 within 3 days"
                             " at the last day's trend). A single VictoriaMetrics that is down stops"
                             " every rule, this one included: that failure is the Watchdog's (the"
                             " heartbeat stops).",
                     impact="Samples are not stored (down, read-only) or will not be (disk filling);"
                            " alerts and dashboards go blind, restart baselines get holes.",
                     diagnosis="- `docker compose ps victoria-metrics` (or the scale-out components) and"
                               " its log.\n- `curl :8428/metrics | grep -E"
                               " 'vm_free_disk_space|vm_storage_is_read_only|vm_data_size_bytes'`;"
                               " `df -h` of the data volume.",
                     mitigation="Restart the component; free or grow its disk, or shorten"
                                " `VM_RETENTION` (it must still cover `restart_history`, 30 days)."))


def _vmalert_failing(c: dict) -> Alert:
    v = c["selectors"]["vmalert"]
    st = c["stack"]
    # vmalert: the second vmalert (log rules) down, evaluations missed (a group slower
    # than its interval), recorded samples and alert state not written back (the
    # restart baselines thin out silently), a rule file that no longer loads
    return Alert(name="ClusterscopeVmalertFailing",
                 expr=" or ".join([
                          _problem(f"up{{{v}}} == 0", "down"),
                          _problem(f"sum without (group, file) (increase(vmalert_iteration_missed_total{{{v}}}[5m])) > 0",
                                   "missed evaluations"),
                          _problem(f"increase(vmalert_remotewrite_errors_total{{{v}}}[5m]) > 0"
                                   f" or increase(vmalert_remotewrite_dropped_rows_total{{{v}}}[5m]) > 0",
                                   "remote write failing"),
                          _problem(f"vmalert_config_last_reload_successful{{{v}}} == 0", "rules not reloaded")]),
                 severity="warning",
                 summary="vmalert {{ $labels.instance }}: {{ $labels.problem }}",
                 description="vmalert at {{ $labels.instance }} is {{ $labels.problem }} (down: not scraped;"
                             " missed evaluations: a rule group took longer than its interval; remote write"
                             " failing: recorded series and alert state are not stored; rules not reloaded: a"
                             " changed rule file does not parse and the old rules run).",
                 dashboard="ndb_overview",
                 for_=st["failing_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="A vmalert has a problem (label `problem`): *down* (not scraped: the log rules' vmalert,"
                             " or a second one), *missed evaluations* (a rule group took longer than its"
                             " interval: `vmalert_iteration_missed_total`), *remote write failing*"
                             " (recorded series and alert state not written back:"
                             " `vmalert_remotewrite_errors_total`, `..._dropped_rows_total`), or *rules"
                             " not reloaded* (a changed rule file does not parse). The vmalert that runs"
                             " this rule being down is the Watchdog's: the heartbeat stops.",
                     impact="Missed evaluations delay or skip alerts; dropped rows thin the recorded"
                            " restart and overhead baselines silently; an unloaded rule change is not in"
                            " effect.",
                     diagnosis="- vmalert's UI (`:8880/vmalert/groups`: last evaluation, duration,"
                               " errors) and its log.\n- VictoriaMetrics' health (remote write goes"
                               " there).",
                     mitigation="Restart vmalert; fix the rule file (`vmalert -rule=... -dryRun`); for"
                                " missed evaluations find the slow group (its duration) and the slow"
                                " queries in it."))


def _alert_delivery_failing(c: dict) -> Alert:
    v = c["selectors"]["vmalert"]
    am = c["selectors"]["alertmanager"]
    st = c["stack"]
    # the way to a person: vmalert cannot hand alerts to Alertmanager, Alertmanager's
    # notifications fail (a Slack or PagerDuty integration rejecting its payload or
    # key), its configuration does not reload, or an Alertmanager is not scraped (with
    # one Alertmanager this reaches nobody: the heartbeat stops too)
    return Alert(name="ClusterscopeAlertDeliveryFailing",
                 expr=" or ".join([
                          _problem(f"increase(vmalert_alerts_send_errors_total{{{v}}}[5m]) > 0",
                                   "vmalert cannot reach Alertmanager"),
                          _problem(f"sum without (reason) (increase(alertmanager_notifications_failed_total{{{am}}}[5m])) > 0",
                                   "notifications failing"),
                          _problem(f"alertmanager_config_last_reload_successful{{{am}}} == 0",
                                   "configuration not reloaded"),
                          _problem(f"up{{{am}}} == 0", "Alertmanager down")]),
                 severity="critical",
                 summary="Alerts do not reach people: {{ $labels.problem }}",
                 description="{{ $labels.problem }} ({{ $labels.instance }}{{ with $labels.integration }},"
                             " integration {{ . }}{{ end }}): alerts fired by the rules may reach nobody."
                             " Notifications that fail are retried, then dropped.",
                 dashboard="ndb_overview",
                 for_=st["failing_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="Alerts may not reach a person (label `problem`): *vmalert cannot reach"
                             " Alertmanager* (`vmalert_alerts_send_errors_total`), *notifications"
                             " failing* (`alertmanager_notifications_failed_total`, label `integration`:"
                             " slack, pagerduty, email, webhook: a wrong URL or key, an SMTP refusal), or"
                             " *configuration not reloaded* (the generated alertmanager.yml was"
                             " rejected: the old receivers still serve), or *Alertmanager down*.",
                     impact="Pages are lost. With one Alertmanager this alert itself goes out only"
                            " through the integrations that still work; the heartbeat to the dead"
                            " man's switch stops when Alertmanager is down.",
                     diagnosis="- Alertmanager's log: `Notify for alerts failed` names the integration"
                               " and the error.\n- `amtool check-config <alertmanager.yml>`; the"
                               " inventory's log for the receivers it wrote (`alerting:` in"
                               " clusterscope.yml).\n- The secret files the receivers read"
                               " (`secrets/alerting/`).",
                     mitigation="Fix the receiver in clusterscope.yml (`alerting:`) or its secret file;"
                                " the inventory rewrites alertmanager.yml and reloads Alertmanager."))


def _log_store_down(c: dict) -> Alert:
    logs = c["selectors"]["log_store"]
    st = c["stack"]
    # the log store (its log rules and the log dashboards depend on it)
    return Alert(name="ClusterscopeLogStoreDown",
                 expr=f"up{{{logs}}} == 0",
                 severity="warning",
                 summary="The log store {{ $labels.instance }} does not answer",
                 description="The log store at {{ $labels.instance }} ({{ $labels.component }}) has not"
                             f" answered its scrape for {st['down_for']}: log lines are not stored, the"
                             " alerts on log lines and the log panels are blind.",
                 dashboard="logs",
                 for_=st["down_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="The log store (VictoriaLogs, job `victorialogs`) has not answered its"
                             " scrape for 2 minutes.",
                     impact="Log lines are not stored; the alerts on log lines and the log panels are"
                            " blind until it is back (the shipper retries for a while, then drops).",
                     diagnosis="- `docker compose ps victoria-logs` and its log; its disk.",
                     mitigation="Restart it; free or grow its disk."))


def _inventory_down(c: dict) -> Alert:
    inv = c["selectors"]["inventory"]
    # The absence alerts follow the description; without the inventory they would all
    # go quiet, so its own absence is an alert of the stack (always deployed).
    return Alert(name="ClusterscopeInventoryDown",
                 expr=f"up{{{inv}}} == 0 or absent_over_time(up{{{inv}}}[1m])",
                 severity="warning",
                 summary="The clusterscope inventory is not scraped",
                 description="The inventory (the description of what is monitored, clusterscope.yml, served"
                             " as service discovery and metrics) does not answer or is not scraped: no new"
                             " target is discovered, and the alerts that compare a cluster with its"
                             " description (sizes, absent exporters) are blind.",
                 dashboard="ndb_overview",
                 for_="2m",
                 per_node=False,
                 runbook=Runbook(
                     meaning="The inventory (`clusterscope_inventory`: the description of what is"
                             " monitored, served as HTTP service discovery and metrics) is down or not"
                             " scraped, for 2 minutes.",
                     impact="Targets keep being scraped as last discovered, but changes to"
                            " clusterscope.yml are not picked up, and the alerts that compare clusters"
                            " with their description (GaleraClusterSizeReduced against the listed"
                            " members, NdbExporterAbsent, GaleraExporterAbsent) are blind.",
                     diagnosis="- `docker compose ps inventory`; its log (a description that never"
                               " parsed stops it at start-up with the reason).\n"
                               "- `curl <inventory>/-/healthy`; the collector's targets page.",
                     mitigation="Fix clusterscope.yml (`python -m clusterscope_inventory --config.file"
                                " clusterscope.yml --check`) and restart the service."))


def _inventory_invalid(c: dict) -> Alert:
    inv = c["selectors"]["inventory"]
    return Alert(name="ClusterscopeInventoryInvalid",
                 expr=f"clusterscope_inventory_config_last_reload_successful{{{inv}}} == 0",
                 severity="warning",
                 summary="The description of what is monitored does not parse",
                 description="clusterscope.yml changed and no longer parses; the inventory still serves the"
                             " last good description. Its log line names the place and the problem.",
                 dashboard="ndb_overview",
                 for_="1m",
                 per_node=False,
                 runbook=Runbook(
                     meaning="clusterscope.yml changed and does not parse any more"
                             " (`clusterscope_inventory_config_last_reload_successful` 0).",
                     impact="The inventory keeps serving the last good description: the change is not"
                            " in effect.",
                     diagnosis="- The inventory's log names the file, the place (e.g."
                               " `clusters[1] (staging-ndb).nodes[0]`) and the problem.\n"
                               "- `python -m clusterscope_inventory --config.file clusterscope.yml"
                               " --check`.",
                     mitigation="Correct the file; the inventory re-reads it by itself."))


def groups(c: dict) -> list[Group]:
    grp = Group("stack", "stack.yml", first_steps=FIRST_STEPS)
    grp.alerts += [rule(c) for rule in (_watchdog, _rule_errors, _victoria_metrics_failing,
                                        _vmalert_failing, _alert_delivery_failing, _log_store_down,
                                        _inventory_down, _inventory_invalid)]
    return [grp]
