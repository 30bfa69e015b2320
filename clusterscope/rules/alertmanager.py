"""Alertmanager's routing and inhibition for the rules' alerts: the lab's and the Compose
deployment's configuration are both built here.

Routing: the Watchdog to the heartbeat receiver (repeated every minute: its absence is the
signal); restart alerts grouped per cluster (a regression after an upgrade reaches every node
of the rolling restart: one notification, not one per node); critical alerts to their own
receiver; the rest grouped per alert and node.

Inhibition: a cause silences the symptoms it explains (kubernetes-mixin practice).
"""

from __future__ import annotations

# (source alert, target alertname regex, labels both must share)
INHIBIT = [
    # the exporter or its SQL node is down: every other NDB alert of that cluster is noise
    ("NdbExporterDown", "Ndb.+", ["cluster"]),
    # a dead data node: its own derived alerts (restart, links, CPU, memory, logs)
    ("NdbDataNodeDown", "Ndb.+", ["cluster", "node_id"]),
    # a node that is down explains its own state. Not the smaller cluster: that is the
    # cluster-level signal (redundancy lost), also for garbd and unmonitored members, and
    # it goes to a different group (per cluster) than the node's page
    ("GaleraNodeNotReady", "GaleraNodeOutOfSync|GaleraRecvQueueHigh|GaleraConnectionsHigh",
     ["cluster", "node"]),
    # lost quorum explains the rest of that cluster's Galera alerts
    ("GaleraNonPrimary", "GaleraClusterSizeReduced|GaleraNodeOutOfSync|GaleraFlowControlHigh",
     ["cluster"]),
]


def inhibit_rules() -> list[dict]:
    return [{"source_matchers": [f'alertname="{src}"'],
             "target_matchers": [f'alertname=~"{target}"', f'alertname!="{src}"'],
             "equal": equal} for src, target, equal in INHIBIT]


def route_to(webhook: dict, group_wait: str, group_interval: str,
             critical: dict | None = None, heartbeat: dict | None = None) -> dict:
    """Every alert to `webhook`; critical ones to `critical` (default: the same endpoint);
    the Watchdog to `heartbeat` (none: a receiver without endpoints, shown in
    Alertmanager's UI until one is configured)."""
    group = {"group_wait": group_wait, "group_interval": group_interval}
    return {
        "route": {"receiver": "default",
                  "group_by": ["alertname", "cluster", "node", "node_id"],
                  **group, "repeat_interval": "4h",
                  "routes": [
                      {"receiver": "heartbeat", "matchers": ['alertname="ClusterscopeWatchdog"'],
                       "group_wait": "0s", "group_interval": "1m", "repeat_interval": "1m"},
                      {"receiver": "default", "matchers": ['alertname=~"NdbRestart.+"'],
                       "group_by": ["alertname", "cluster"], "continue": False},
                      {"receiver": "critical", "matchers": ['severity="critical"']},
                  ]},
        "inhibit_rules": inhibit_rules(),
        "receivers": [{"name": "default", "webhook_configs": [webhook]},
                      {"name": "critical", "webhook_configs": [critical or webhook]},
                      {"name": "heartbeat", **({"webhook_configs": [heartbeat]}
                                               if heartbeat else {})}],
    }
