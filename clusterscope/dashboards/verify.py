"""Run every panel's queries, as Grafana would, against a real VictoriaMetrics and
VictoriaLogs.

Grafana cannot run here, so this is how the dashboards are proven: template variables are
resolved through the same label-values APIs Grafana uses, Grafana's macros get the values
Grafana would give them, and each target (and each annotation query) must return at least
one series in the time range. Single-value variables are tried with each of their values
(a panel passes if one selection shows data, as a user picking that value would see it);
multi-value variables use "All".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from clusterscope.clients.vlogs import VLogs, VLogsError
from clusterscope.clients.vm import VMError
from clusterscope.lab.endpoints import Source
from clusterscope.logs.logsql import DATASOURCE_TYPE as LOGS_TYPE

LABEL_VALUES = re.compile(r"^label_values\((?:(?P<sel>.*),\s*)?(?P<label>[a-zA-Z_]\w*)\)$")


@dataclass
class Result:
    dashboard: str
    panel: str
    ref: str
    datasource: str
    expr: str
    series: int = 0
    error: str = ""
    reason: str = ""  # why it is empty (explain.py), filled by verify_all

    @property
    def ok(self) -> bool:
        return self.series > 0 and not self.error


@dataclass
class Target:
    dashboard: str
    panel: str
    ref: str
    datasource: str  # "prometheus" | the VictoriaLogs plugin's type
    expr: str
    instant: bool  # prometheus: an instant query; VictoriaLogs: log lines (not stats)


def targets(model: dict) -> Iterator[Target]:
    """Every query of a dashboard: panel targets, then annotation queries."""
    for panel in _panels(model):
        for t in panel.get("targets", []):
            ds = (t.get("datasource") or panel.get("datasource") or {}).get("type", "")
            instant = (t.get("queryType") == "instant" if ds == LOGS_TYPE
                       else bool(t.get("instant")))
            yield Target(model["uid"], panel.get("title", ""), t.get("refId", ""), ds,
                         t["expr"], instant)
    for a in model.get("annotations", {}).get("list", []):
        expr = a.get("expr") or (a.get("target") or {}).get("expr")
        if expr:
            yield Target(model["uid"], f"annotation: {a['name']}", "", a["datasource"]["type"],
                         expr, (a.get("target") or {}).get("queryType") == "instant")


def _panels(model: dict) -> Iterator[dict]:
    for p in model.get("panels", []):
        yield p
        yield from p.get("panels", [])


class Runner:
    def __init__(self, src: Source, start: float, end: float, step: float = 15.0) -> None:
        self.vm = src.vm
        self.vlogs = src.logs(timeout=30)
        self.start, self.end, self.step = start, end, step

    # -- macros and variables ----------------------------------------------------------
    def substitute(self, expr: str, values: dict[str, str]) -> str:
        macros = {"__rate_interval": f"{max(4 * 5, int(self.step) + 5)}s",
                  "__interval": f"{int(self.step)}s", "__auto": f"{int(self.step)}s",
                  "__range": f"{int(self.end - self.start)}s"}
        for name in sorted({**macros, **values}, key=len, reverse=True):
            value = macros.get(name, values.get(name, ""))
            expr = expr.replace(f"${{{name}}}", value).replace(f"${name}", value)
        return expr

    def variable_values(self, var: dict, values: dict[str, str]) -> list[str]:
        if var["datasource"]["type"] == LOGS_TYPE:
            # the plugin's field-values variable (kit.logs_var): what Grafana's option list
            # shows, blank values aside
            q = var["query"]
            return [v for v in self._logs().field_values(
                q["field"], self.substitute(q.get("query") or "*", values), self.start,
                self.end) if v]
        m = LABEL_VALUES.match(self.substitute(var["query"].strip(), values))
        if not m:
            raise ValueError(f"variable {var['name']}: unsupported query {var['query']!r}")
        sel, label = m.group("sel"), m.group("label")
        return sorted(self.vm.label_values(label, sel, self.start, self.end))

    def selections(self, model: dict) -> Iterator[dict[str, str]]:
        """Every combination of single-value variables (multi-value ones: All)."""
        variables = model.get("templating", {}).get("list", [])

        def expand(i: int, chosen: dict[str, str]) -> Iterator[dict[str, str]]:
            if i == len(variables):
                yield dict(chosen)
                return
            var = variables[i]
            if var.get("type") == "datasource":  # picks the datasource, not a series
                options = [var["current"]["value"]]
            elif var.get("multi") and var.get("includeAll"):
                options = [var.get("allValue") or ".*"]
            else:
                options = self.variable_values(var, chosen)
            for value in options:
                yield from expand(i + 1, {**chosen, var["name"]: value})

        yield from expand(0, {})

    # -- queries -----------------------------------------------------------------------
    def count(self, t: Target, expr: str) -> int:
        if t.datasource == "prometheus":
            if t.instant:
                return len(self.vm.query(expr, self.end))
            n = len(self.vm.query_range(expr, self.start, self.end, self.step))
            # the range's last step may fall before a series that began in the final
            # seconds; Grafana's next refresh would show it, so look at `end` itself too
            return n or len(self.vm.query(expr, self.end))
        if t.datasource == LOGS_TYPE:
            # as the plugin runs them (victorialogs-datasource v0.30.1 pkg/plugin/query.go):
            # log lines from /select/logsql/query, stats per step from stats_query_range
            try:
                if t.instant:
                    return len(self._logs().query(expr, self.start, self.end, limit=20))
                return sum(1 for r in self._logs().stats_range(
                    expr, self.start, self.end, f"{int(self.step)}s") if r.get("values"))
            except VLogsError as exc:
                raise VMError(str(exc)) from exc
        raise VMError(f"unknown datasource type {t.datasource!r}")

    def _logs(self) -> VLogs:
        if self.vlogs is None:
            raise VMError("no VictoriaLogs in the lab")
        return self.vlogs


def verify_model(runner: Runner, model: dict) -> list[Result]:
    try:
        selections = list(runner.selections(model))
    except (VMError, VLogsError, ValueError) as exc:
        return [Result(model["uid"], "(variables)", "", "", "", 0, str(exc))]
    if not selections:
        return [Result(model["uid"], "(variables)", "", "", "", 0,
                       "a template variable has no values")]
    results = []
    for t in targets(model):
        best = Result(t.dashboard, t.panel, t.ref, t.datasource,
                      runner.substitute(t.expr, selections[0]))
        for values in selections:
            expr = runner.substitute(t.expr, values)
            try:
                n = runner.count(t, expr)
            except VMError as exc:
                best = Result(t.dashboard, t.panel, t.ref, t.datasource, expr, 0, str(exc))
                break
            if n:
                best = Result(t.dashboard, t.panel, t.ref, t.datasource, expr, n)
                break
        results.append(best)
    return results


def verify_all(src: Source, start: float, end: float, step: float = 15.0) -> list[Result]:
    from clusterscope.dashboards.explain import Explainer
    from clusterscope.dashboards.render import build_all

    runner = Runner(src, start, end, step)
    models = build_all()
    results = list(itertools.chain.from_iterable(verify_model(runner, m)
                                                 for m in models.values()))
    explainer = Explainer.for_range(runner.vm, start, end)
    for r in results:
        if r.ok:
            continue
        if r.panel == "(variables)":
            # the dashboard's panels were not run: say which variable's source is missing
            model = next(m for m in models.values() if m["uid"] == r.dashboard)
            sources = [explainer.missing(m.group("sel"))
                       for var in model.get("templating", {}).get("list", [])
                       if var.get("datasource", {}).get("type") == "prometheus"
                       and isinstance(var.get("query"), str)
                       and (m := LABEL_VALUES.match(var["query"].strip())) and m.group("sel")]
            logs = any(v.get("datasource", {}).get("type") not in (None, "prometheus")
                       for v in model.get("templating", {}).get("list", [])
                       if v.get("type") != "datasource")
            found = "; ".join(dict.fromkeys(s for s in sources if s))
            r.reason = ("its template variables have no values here, so no panel was run: "
                        + (found or (f"they come from the log store ({r.error})" if logs else
                                     "their series exist but give no value in the range")))
        else:
            r.reason = explainer.why(r.expr, r.datasource, r.error)
    return results

