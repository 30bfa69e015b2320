"""Alertmanager's routing for the rules' alerts: the lab's and the Compose deployment's."""

from __future__ import annotations


def route_to(webhook: dict, group_wait: str, group_interval: str) -> dict:
    """Every alert to one webhook, grouped per alert and node."""
    return {
        "route": {"receiver": "webhook",
                  "group_by": ["alertname", "cluster", "node", "node_id"],
                  "group_wait": group_wait, "group_interval": group_interval,
                  "repeat_interval": "4h"},
        "receivers": [{"name": "webhook", "webhook_configs": [webhook]}],
    }
