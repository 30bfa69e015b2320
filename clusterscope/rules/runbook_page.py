# ruff: noqa: E501  (runbook text reads better unbroken)
"""An alert's runbook page (Meaning, Impact, Diagnosis, Mitigation), written by
`clusterscope rules generate` from the Runbook declared beside the alert."""

from __future__ import annotations

from clusterscope.rules.model import Alert, fold


def fires_when(a: Alert) -> str:
    held = (f"for {a.for_} without a break" if a.for_
            else "at one rule evaluation (no `for:`)")
    what = ("this LogsQL query (run by the log rules' vmalert against VictoriaLogs) returns"
            " a row" if a.language == "logsql" else "this expression returns a series")
    return f"Fires when {what} {held}:"


def page(a: Alert, first_steps: str, links: dict, dashboard_uid: str) -> str:
    """The page; `first_steps` are the alert's group's unless its runbook names its own."""
    rb = a.runbook
    benign = f"\n\nKnown benign causes: {rb.benign}" if rb.benign else ""
    if a.severity != "info" and not a.name.startswith("Clusterscope"):
        # planned work: a maintenance window silences the cluster's (or node's) alerts
        benign += ("\n\nPlanned work (a restart, an upgrade, a node stopped on purpose): start a"
                   " maintenance window first, `clusterscope maintenance start --cluster"
                   " <cluster> [--node <node>] --duration 2h` (Alertmanager silences; `stop`"
                   " ends it), so nobody is paged for it.")
    return (f"# {a.name}\n\nSeverity: `{a.severity}`. Generated from"
            " `clusterscope/rules/runbooks/` by `clusterscope rules generate`.\n\n"
            f"## Meaning\n\n{rb.meaning}\n\n{fires_when(a)}\n\n```{a.language}\n{fold(a.expr)}"
            "\n```"
            f"\n\nDashboard: {links['dashboard_base_url']}/{dashboard_uid}{benign}\n\n"
            f"## Impact\n\n{rb.impact}\n\n## Diagnosis\n\n{rb.first_steps or first_steps}\n\n"
            f"{rb.diagnosis}\n\n## Mitigation\n\n{rb.mitigation}\n")
