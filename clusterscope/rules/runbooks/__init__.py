# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook pages, one per alert (Meaning, Impact, Diagnosis, Mitigation), written by
`clusterscope rules generate`; the text lives per component next to this module.

An alert without a page fails `clusterscope rules check` and the tests.
"""

from __future__ import annotations

from clusterscope.rules.model import Alert, fold
from clusterscope.rules.runbooks import galera, host, loadgen, logs, ndb

RUNBOOKS: dict[str, dict[str, str]] = {**ndb.RUNBOOKS, **galera.RUNBOOKS, **host.RUNBOOKS,
                                       **loadgen.RUNBOOKS, **logs.RUNBOOKS}


def first_steps(name: str) -> str:
    """The commands to run first and where the logs are, per component."""
    if name in logs.RUNBOOKS:
        return logs.first_steps(name)
    for prefix, mod in (("Ndb", ndb), ("Galera", galera), ("Host", host)):
        if name.startswith(prefix):
            return mod.FIRST_STEPS
    return loadgen.FIRST_STEPS


def fires_when(a: Alert) -> str:
    held = (f"for {a.for_} without a break" if a.for_
            else "at one rule evaluation (no `for:`)")
    what = ("this LogsQL query (run by the log rules' vmalert against VictoriaLogs) returns"
            " a row" if a.language == "logsql" else "this expression returns a series")
    return f"Fires when {what} {held}:"


def page(a: Alert, links: dict, dashboard_uid: str) -> str:
    rb = RUNBOOKS[a.name]
    benign = f"\n\nKnown benign causes: {rb['benign']}" if rb.get("benign") else ""
    if a.severity != "info" and not a.name.startswith("Clusterscope"):
        # planned work: a maintenance window silences the cluster's (or node's) alerts
        benign += ("\n\nPlanned work (a restart, an upgrade, a node stopped on purpose): start a"
                   " maintenance window first, `clusterscope maintenance start --cluster"
                   " <cluster> [--node <node>] --duration 2h` (Alertmanager silences; `stop`"
                   " ends it), so nobody is paged for it.")
    return (f"# {a.name}\n\nSeverity: `{a.severity}`. Generated from"
            " `clusterscope/rules/runbooks/` by `clusterscope rules generate`.\n\n"
            f"## Meaning\n\n{rb['meaning']}\n\n{fires_when(a)}\n\n```{a.language}\n{fold(a.expr)}"
            "\n```"
            f"\n\nDashboard: {links['dashboard_base_url']}/{dashboard_uid}{benign}\n\n"
            f"## Impact\n\n{rb['impact']}\n\n## Diagnosis\n\n{first_steps(a.name)}\n\n"
            f"{rb['diagnosis']}\n\n## Mitigation\n\n{rb['mitigation']}\n")
