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
        "meaning": "vmalert failed to evaluate a rule in the last 5 minutes"
                   " (`vmalert_*_rules_errors_total`).",
        "impact": "That alert or recording is missing, silently, until fixed.",
        "diagnosis": "- vmalert's log and its UI (`/vmalert/groups`): the rule's last error"
                     " (query timeout, many-to-many matching).",
        "mitigation": "Fix the rule or the series it matches (duplicate label sets), or raise"
                      " the datasource timeout.",
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
        "meaning": "An experiment's overhead (1 - variant/baseline throughput) moved: the"
                   " pinned baseline's value (or the value a day ago) lies outside the current"
                   " 95% interval.",
        "impact": "A configuration, version or data change altered what the feature costs.",
        "diagnosis": "- `clusterscope compare --before-baseline NAME` for the figures and"
                     " intervals.\n- `loadgen_overhead_min_detectable_ratio`: is the noise"
                     " small enough to trust it?",
        "mitigation": "Find the change (deploys, config) between the baseline and now; pin a new"
                      " baseline if the change is intended.",
    },
    "LoadgenSaturated": {
        "meaning": "The load generator uses (almost) all CPU it may use.",
        "impact": "Its throughput figures measure the load generator, not the cluster.",
        "diagnosis": "- `loadgen_cpu_cores` versus threads and host cores.",
        "mitigation": "Fewer threads per loadgen, more loadgen hosts, or a bigger machine.",
    },
}
