"""Run every panel's queries, as Grafana would, against a real VictoriaMetrics and Loki.

Grafana cannot run here, so this is how the dashboards are proven: template variables are
resolved through the same label-values APIs Grafana uses, Grafana's macros get the values
Grafana would give them, and each target (and each annotation query) must return at least
one series in the time range. Single-value variables are tried with each of their values
(a panel passes if one selection shows data, as a user picking that value would see it);
multi-value variables use "All".
"""

from __future__ import annotations

import itertools
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from clusterscope.clients.vm import VM, VMError

LABEL_VALUES = re.compile(r"^label_values\((?:(?P<sel>.*),\s*)?(?P<label>[a-zA-Z_]\w*)\)$")


@dataclass
class Endpoints:
    vm: str
    loki: str | None

    @classmethod
    def from_lab(cls, lab_dir: str | Path | None = None) -> Endpoints:
        from clusterscope.lab import monitoring
        from clusterscope.lab.core import Lab, lab_dir_from_env

        lab = Lab(lab_dir_from_env(lab_dir))
        vm = monitoring.vm_client(lab.root)
        loki = lab.service("loki")
        return cls(vm.url, f"http://{loki.host}:{loki.port}" if loki and loki.port else None)


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
    datasource: str  # "prometheus" | "loki"
    expr: str
    instant: bool


def targets(model: dict) -> Iterator[Target]:
    """Every query of a dashboard: panel targets, then annotation queries."""
    for panel in _panels(model):
        for t in panel.get("targets", []):
            ds = (t.get("datasource") or panel.get("datasource") or {}).get("type", "")
            yield Target(model["uid"], panel.get("title", ""), t.get("refId", ""), ds,
                         t["expr"], bool(t.get("instant")))
    for a in model.get("annotations", {}).get("list", []):
        if a.get("expr"):
            yield Target(model["uid"], f"annotation: {a['name']}", "", a["datasource"]["type"],
                         a["expr"], False)


def _panels(model: dict) -> Iterator[dict]:
    for p in model.get("panels", []):
        yield p
        yield from p.get("panels", [])


class Runner:
    def __init__(self, ep: Endpoints, start: float, end: float, step: float = 15.0) -> None:
        self.vm = VM(ep.vm)
        self.loki = ep.loki
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
        m = LABEL_VALUES.match(self.substitute(var["query"].strip(), values))
        if not m:
            raise ValueError(f"variable {var['name']}: unsupported query {var['query']!r}")
        sel, label = m.group("sel"), m.group("label")
        if var["datasource"]["type"] == "loki":
            params = {"start": _ns(self.start), "end": _ns(self.end)}
            if sel:
                params["query"] = sel
            return sorted(self._loki(f"/loki/api/v1/label/{label}/values", params) or [])
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
        if t.datasource == "loki":
            if not self.loki:
                raise VMError("no Loki in the lab")
            data = self._loki("/loki/api/v1/query_range",
                              {"query": expr, "start": _ns(self.start), "end": _ns(self.end),
                               "step": f"{int(self.step)}s", "limit": "20"})
            return sum(1 for r in data["result"] if r.get("values"))
        raise VMError(f"unknown datasource type {t.datasource!r}")

    def _loki(self, path: str, params: dict) -> dict | list:
        url = f"{self.loki}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise VMError(f"Loki {path} failed ({exc.code}): {exc.read()[:300]!r}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise VMError(f"Loki at {self.loki} unreachable: {exc}") from exc
        return body.get("data", [])


def verify_model(runner: Runner, model: dict) -> list[Result]:
    try:
        selections = list(runner.selections(model))
    except (VMError, ValueError) as exc:
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


def verify_all(ep: Endpoints, start: float, end: float, step: float = 15.0) -> list[Result]:
    from clusterscope.dashboards.explain import Explainer
    from clusterscope.dashboards.generate import build_all

    runner = Runner(ep, start, end, step)
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


def _ns(t: float) -> str:
    return str(int(t * 1e9))
