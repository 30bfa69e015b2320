# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook text for the load generator and experiment alerts: Meaning, Impact, Diagnosis, Mitigation."""

from __future__ import annotations

FIRST_STEPS = """First: `curl -s <loadgen>:<port>/metrics | grep -E '^loadgen_(window|pair|overhead)'`
and the loadgen container's log (one line per window: valid or why not)."""

RUNBOOKS: dict[str, dict[str, str]] = {
    "LoadgenDown": {
        "meaning": "The load generator's metrics endpoint has not answered for 5 minutes.",
        "impact": "No experiment is measured; the overhead figures go stale.",
        "diagnosis": "- The loadgen container's state and log (sysbench errors, credentials).",
        "mitigation": "Restart the loadgen; fix its database account or target.",
    },
    "ClusterscopeWatchdog": {
        "meaning": "Always firing, on purpose: a dead man's switch for the alerting path.",
        "impact": "None while it arrives. When the heartbeat receiver stops getting it,"
                  " vmalert, VictoriaMetrics or Alertmanager is down and no alert can reach"
                  " anyone.",
        "diagnosis": "- If the heartbeat stopped: vmalert's and Alertmanager's health pages and"
                     " logs.",
        "mitigation": "Never silence it; route it to a heartbeat service that pages when it"
                      " stops.",
    },
    "ClusterscopeRuleErrors": {
        "meaning": "vmalert failed to evaluate a rule of the group in every 5-minute window for"
                   " 5 minutes (`vmalert_*_rules_errors_total`).",
        "impact": "That alert or recording is missing, silently, until fixed.",
        "diagnosis": "- vmalert's log and its UI (`/vmalert/groups`): the rule's last error"
                     " (query timeout, many-to-many matching).",
        "mitigation": "Fix the rule or the series it matches (duplicate label sets), or raise"
                      " the datasource timeout.",
    },
    "ClusterscopeVictoriaMetricsFailing": {
        "meaning": "A VictoriaMetrics process has a problem (label `problem`): *down* (its `up` is 0: a"
                   " component of the scale-out cluster, or a single node that answers queries"
                   " but not its own scrape), *read-only* (free disk below"
                   " `-storage.minFreeDiskSpaceBytes`, `vm_storage_is_read_only`), or *disk"
                   " filling* (`vm_free_disk_space_bytes` predicted to reach 0 within 3 days"
                   " at the last day's trend). A single VictoriaMetrics that is down stops"
                   " every rule, this one included: that failure is the Watchdog's (the"
                   " heartbeat stops).",
        "impact": "Samples are not stored (down, read-only) or will not be (disk filling);"
                  " alerts and dashboards go blind, restart baselines get holes.",
        "diagnosis": "- `docker compose ps victoria-metrics` (or the scale-out components) and"
                     " its log.\n- `curl :8428/metrics | grep -E"
                     " 'vm_free_disk_space|vm_storage_is_read_only|vm_data_size_bytes'`;"
                     " `df -h` of the data volume.",
        "mitigation": "Restart the component; free or grow its disk, or shorten"
                      " `VM_RETENTION` (it must still cover `restart_history`, 30 days).",
    },
    "ClusterscopeVmalertFailing": {
        "meaning": "A vmalert has a problem (label `problem`): *down* (not scraped: the log rules' vmalert,"
                   " or a second one), *missed evaluations* (a rule group took longer than its"
                   " interval: `vmalert_iteration_missed_total`), *remote write failing*"
                   " (recorded series and alert state not written back:"
                   " `vmalert_remotewrite_errors_total`, `..._dropped_rows_total`), or *rules"
                   " not reloaded* (a changed rule file does not parse). The vmalert that runs"
                   " this rule being down is the Watchdog's: the heartbeat stops.",
        "impact": "Missed evaluations delay or skip alerts; dropped rows thin the recorded"
                  " restart and overhead baselines silently; an unloaded rule change is not in"
                  " effect.",
        "diagnosis": "- vmalert's UI (`:8880/vmalert/groups`: last evaluation, duration,"
                     " errors) and its log.\n- VictoriaMetrics' health (remote write goes"
                     " there).",
        "mitigation": "Restart vmalert; fix the rule file (`vmalert -rule=... -dryRun`); for"
                      " missed evaluations find the slow group (its duration) and the slow"
                      " queries in it.",
    },
    "ClusterscopeAlertDeliveryFailing": {
        "meaning": "Alerts may not reach a person (label `problem`): *vmalert cannot reach"
                   " Alertmanager* (`vmalert_alerts_send_errors_total`), *notifications"
                   " failing* (`alertmanager_notifications_failed_total`, label `integration`:"
                   " slack, pagerduty, email, webhook: a wrong URL or key, an SMTP refusal), or"
                   " *configuration not reloaded* (the generated alertmanager.yml was"
                   " rejected: the old receivers still serve), or *Alertmanager down*.",
        "impact": "Pages are lost. With one Alertmanager this alert itself goes out only"
                  " through the integrations that still work; the heartbeat to the dead"
                  " man's switch stops when Alertmanager is down.",
        "diagnosis": "- Alertmanager's log: `Notify for alerts failed` names the integration"
                     " and the error.\n- `amtool check-config <alertmanager.yml>`; the"
                     " inventory's log for the receivers it wrote (`alerting:` in"
                     " clusterscope.yml).\n- The secret files the receivers read"
                     " (`secrets/alerting/`).",
        "mitigation": "Fix the receiver in clusterscope.yml (`alerting:`) or its secret file;"
                      " the inventory rewrites alertmanager.yml and reloads Alertmanager.",
    },
    "ClusterscopeLogStoreDown": {
        "meaning": "The log store (VictoriaLogs, job `victorialogs`) has not answered its"
                   " scrape for 2 minutes.",
        "impact": "Log lines are not stored; the alerts on log lines and the log panels are"
                  " blind until it is back (the shipper retries for a while, then drops).",
        "diagnosis": "- `docker compose ps victoria-logs` and its log; its disk.",
        "mitigation": "Restart it; free or grow its disk.",
    },
    "ClusterscopeInventoryDown": {
        "meaning": "The inventory (`clusterscope_inventory`: the description of what is"
                   " monitored, served as HTTP service discovery and metrics) is down or not"
                   " scraped, for 2 minutes.",
        "impact": "Targets keep being scraped as last discovered, but changes to"
                  " clusterscope.yml are not picked up, and the alerts that compare clusters"
                  " with their description (GaleraClusterSizeReduced against the listed"
                  " members, NdbExporterAbsent, GaleraExporterAbsent) are blind.",
        "diagnosis": "- `docker compose ps inventory`; its log (a description that never"
                     " parsed stops it at start-up with the reason).\n"
                     "- `curl <inventory>/-/healthy`; the collector's targets page.",
        "mitigation": "Fix clusterscope.yml (`python -m clusterscope_inventory --config.file"
                      " clusterscope.yml --check`) and restart the service.",
    },
    "ClusterscopeInventoryInvalid": {
        "meaning": "clusterscope.yml changed and does not parse any more"
                   " (`clusterscope_inventory_config_last_reload_successful` 0).",
        "impact": "The inventory keeps serving the last good description: the change is not"
                  " in effect.",
        "diagnosis": "- The inventory's log names the file, the place (e.g."
                     " `clusters[1] (staging-ndb).nodes[0]`) and the problem.\n"
                     "- `python -m clusterscope_inventory --config.file clusterscope.yml"
                     " --check`.",
        "mitigation": "Correct the file; the inventory re-reads it by itself.",
    },
    "ExperimentOverheadChanged": {
        "meaning": "An experiment's mean overhead (1 - variant/baseline throughput) over the"
                   " last period (rules/config.yaml `loadgen.overhead_window`, an hour as"
                   " shipped) differs from a period of the same length - the newest pinned"
                   " baseline (`clusterscope baseline pin`, which pins the period's mean,"
                   " standard error and units) or, without a pin, the same period a day"
                   " earlier - by more than `overhead_z` standard errors of the difference,"
                   " sqrt(se1^2 + se0^2), at every evaluation for `overhead_change_for`."
                   " Both periods come from the loadgen's completed units"
                   " (`loadgen_unit_tps_ratio_*`), so the noise of both sides counts. The"
                   " thresholds are set so that a stationary overhead raises at most one such"
                   " alert a week per comparison on replayed lab units (`clusterscope bench"
                   " ab-alarms`, docs/loadgen.md).",
        "impact": "A configuration, version or data change altered what the feature costs,"
                  " for the estimand the comparison measures (label `estimand`: the whole"
                  " workload, or one statement in a mixed load).",
        "diagnosis": "- `experiment_variant:loadgen_overhead_ratio:mean1h` and `:se1h` now and"
                     " a day ago (or the pin's `clusterscope_pinned_overhead_*`): the size"
                     " of the move against its noise.\n- `experiment_variant:loadgen_units:"
                     "increase1h`: how many units each period holds (a period with few units"
                     " is noisy).\n- `clusterscope compare --before-baseline NAME` for the"
                     " figures and intervals; deploys and config changes between the periods.",
        "mitigation": "Find the change (deploys, config, data growth) between the reference and"
                      " now; pin a new baseline (`clusterscope baseline pin NAME`) if the change"
                      " is intended. An alert resolves on its own a day after a change when no"
                      " pin is set, since the day-old period then holds the new level.",
    },
    "LoadgenSaturated": {
        "meaning": "The load generator uses (almost) all CPU it may use.",
        "impact": "Its throughput figures measure the load generator, not the cluster.",
        "diagnosis": "- `loadgen_cpu_cores` versus threads and host cores.",
        "mitigation": "Fewer threads per loadgen, more loadgen hosts, or a bigger machine.",
    },
}
