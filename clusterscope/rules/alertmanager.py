"""Alertmanager's routing, inhibition and receivers for the rules' alerts.

They are built by the product (clusterscope_inventory.alerting) from the `alerting:`
section of the deployment's description: the inventory renders alertmanager.yml at run
time, in compose as in the lab, so a user's receivers never pass through a committed file.
This module is the toolkit's handle on it (tests, checks).

Routing: the Watchdog to the heartbeat receiver (repeated every minute: its absence is the
signal); critical alerts to the critical receiver, info alerts to the info one (or nobody),
the rest to the warning receiver; one notification per alert and cluster.

Inhibition: a cause silences the symptoms it explains (kubernetes-mixin practice), never a
symptom more severe than itself.
"""

from __future__ import annotations

from clusterscope_inventory.alerting import INHIBIT, config, inhibit_rules, render

__all__ = ["INHIBIT", "config", "inhibit_rules", "render"]
