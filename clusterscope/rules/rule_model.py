"""What a rule file is made of: recording rules and alerts, grouped per component."""

from __future__ import annotations

from dataclasses import dataclass, field

# Aggregations drop the scrape's own labels, so an HA pair of exporters or a relabelled
# job still gives one series per cluster and node.
WITHOUT = "without (instance, job)"


@dataclass(frozen=True, kw_only=True)
class Runbook:
    """An alert's runbook page: what it means, what it costs, how to look, what to do."""

    meaning: str
    impact: str
    diagnosis: str
    mitigation: str
    benign: str = ""  # known benign causes, when there are any
    # the commands to run first; empty: its group's (Group.first_steps)
    first_steps: str = ""


@dataclass(kw_only=True)
class Alert:
    name: str
    expr: str
    severity: str
    summary: str
    description: str
    dashboard: str
    runbook: Runbook
    for_: str | None = None
    labels: dict = field(default_factory=dict)
    per_node: bool = True  # its labels name one node (dashboard_url selects it)
    language: str = "promql"  # the expression's query language: promql | logsql


@dataclass
class Group:
    name: str
    file: str
    records: list[tuple[str, str]] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    # vmalert's group `type`: None (prometheus: MetricsQL against VictoriaMetrics) or
    # "vlogs" (LogsQL against VictoriaLogs, evaluated by its own vmalert)
    type: str | None = None
    # the runbooks' first commands for its alerts (an alert's Runbook.first_steps wins)
    first_steps: str = ""


def fold(expr: str) -> str:
    """One line of PromQL, as the rule files and runbooks show it."""
    return " ".join(expr.split())


def seconds(duration: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(duration[:-1]) * units[duration[-1]]
