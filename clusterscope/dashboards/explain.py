"""Why a panel's query returned nothing, on whatever VictoriaMetrics or Prometheus it ran.

`dashboards verify` lists every query without data; on a stack that is not the lab (your
own Prometheus, a staging VictoriaMetrics) the question is why. For each empty query the
metrics it reads are looked up over the verified range, and the first missing one is
traced to what produces it: a recording rule of rules/*.yml (not evaluated there, or
evaluated without its inputs), a scrape job of the contract (not scraped, down, or up
without that series), the alerting rules (ALERTS: nothing fired), a pin (`baseline pin`).
When every metric exists, the query's own condition selected nothing in the range.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from clusterscope.clients.vm import VM, VMError

_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
             "unless", "offset", "bool", "inf", "nan", "atan2", "start", "end"}

# metric name prefix -> (scrape job, what produces it); the jobs are the scrape contract's
# (clusterscope/deploy/scrape.py, exporters/clusterscope_inventory/targets.py)
PRODUCERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("ndbinfo_exporter_", ("ndbinfo_exporter",), "ndbinfo_exporter's own /metrics"),
    ("ndb_", ("ndbinfo",), "ndbinfo_exporter probing each NDB cluster"),
    ("mysql_", ("galera", "ndb_sql"), "mysqld_exporter probing each Galera node and SQL node"),
    ("galera_", ("galera_tracker",), "the Galera recovery tracker"),
    ("loadgen_", ("loadgen",), "the loadgen"),
    ("clusterscope_", ("clusterscope_inventory",), "the inventory (the description)"),
    ("node_", ("node",), "node_exporter on each host"),
)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (functions, keywords and label names
    left out)."""
    s = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    s = re.sub(r"\{[^}]*\}", "", s)
    s = re.sub(r"\[[^\]]*\]", "", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][\w:]*)(?!\w)(?!\s*\()", s):
        name = m.group(1)
        if name.lower() not in _KEYWORDS and not re.fullmatch(r"\d.*|e\d+", name):
            names.add(name)
    return names


@dataclass
class Explainer:
    vm: VM
    start: float
    end: float
    # recorded metric -> (rule file, group, expression), from the rules' code
    records: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    _present: dict[str, bool] = field(default_factory=dict)
    _jobs: dict[str, float] | None = None
    _rules: bool | None = None

    @classmethod
    def for_range(cls, vm: VM, start: float, end: float) -> Explainer:
        from clusterscope.rules.generate import all_groups

        records = {r: (g.file, g.name, e) for g in all_groups() for r, e in g.records}
        return cls(vm, start, end, records)

    # -- what the server has -------------------------------------------------------------
    @property
    def span(self) -> str:
        return f"{max(1, int(self.end - self.start))}s"

    def present(self, name: str) -> bool:
        if name not in self._present:
            try:
                rows = self.vm.query(f'count(count_over_time({{__name__="{name}"}}'
                                     f"[{self.span}]))", self.end)
            except VMError:
                rows = []
            self._present[name] = bool(rows)
        return self._present[name]

    def jobs(self) -> dict[str, float]:
        """Each scraped job's best `up` in the range (1: up at least once)."""
        if self._jobs is None:
            try:
                rows = self.vm.query(f"max by (job) (max_over_time(up[{self.span}]))",
                                     self.end)
            except VMError:
                rows = []
            self._jobs = {r["metric"].get("job", ""): float(r["value"][1]) for r in rows}
        return self._jobs

    # -- why -----------------------------------------------------------------------------
    def why(self, expr: str, datasource: str, error: str = "") -> str:
        if datasource != "prometheus":
            return (f"a log panel: {error}" if error else
                    "a log panel: the log store has no matching lines in the range")
        if error:
            return f"the query failed on this server: {error}"
        missing = self.missing(expr)
        if missing is None:
            shown = ", ".join(sorted(metric_names(expr))) or "its series"
            return (f"every metric it reads has series here ({shown}); its condition or"
                    " filter selected none in the range (e.g. no value crossed its"
                    " threshold, or the selected cluster or node has none)")
        return missing

    def missing(self, expr: str) -> str | None:
        """What produces the metrics of `expr` that have no series here; None: all have."""
        absent = [n for n in sorted(metric_names(expr)) if not self.present(n)]
        return "; ".join(self.source_of(n) for n in absent) if absent else None

    def rules_evaluated(self) -> bool:
        """Whether this server evaluates rules/*.yml at all (any recorded series exists)."""
        if self._rules is None:
            names = "|".join(re.escape(r) for r in sorted(self.records))
            try:
                rows = self.vm.query(f'count(count_over_time({{__name__=~"{names}"}}'
                                     f"[{self.span}]))", self.end) if names else []
            except VMError:
                rows = []
            self._rules = bool(rows)
        return self._rules

    def absent_inputs(self, name: str, seen: frozenset[str] = frozenset()) -> list[str]:
        """The scraped (not recorded) metrics behind a recorded one that have no series."""
        out: list[str] = []
        for n in sorted(metric_names(self.records[name][2]) - {name} - seen):
            if self.present(n):
                continue
            out += self.absent_inputs(n, seen | {name}) if n in self.records else [n]
        return list(dict.fromkeys(out))

    def source_of(self, name: str) -> str:
        """Why `name` has no series here: what should have produced it."""
        if name == "ALERTS":
            return ("ALERTS has no series: no alert fired or was pending in the range (the"
                    " alerting rules of rules/*.yml, evaluated by vmalert or Prometheus)")
        if name == "up":
            return "up has no series: nothing is scraped here"
        if name.startswith(("clusterscope_pinned_", "clusterscope_pin_")):
            return (f"{name}: no baseline is pinned (`clusterscope baseline pin NAME`,"
                    " VictoriaMetrics only)")
        if name in self.records:
            file, group, _ = self.records[name]
            where = f"{name} is recorded by rules/{file} (group {group})"
            if not self.rules_evaluated():
                return (where + ", and this server evaluates none of rules/*.yml: load them"
                        " into vmalert or Prometheus (rule_files)")
            inputs = self.absent_inputs(name)
            if inputs:
                return where + " from series that are absent here: " + self.raw(inputs)
            return where + ", evaluated here, but its condition gave no series in the range"
        return self.raw([name])

    def raw(self, names: list[str]) -> str:
        """Scraped metrics without series, by what should export them."""
        by: dict[tuple[tuple[str, ...], str], list[str]] = {}
        unknown = []
        for n in names:
            producer = next(((jobs, what) for prefix, jobs, what in PRODUCERS
                             if n.startswith(prefix)), None)
            if producer is None:
                unknown.append(n)
            else:
                by.setdefault(producer, []).append(n)
        parts = [f"{', '.join(ns)} from {what} ({self._job_state(jobs)})"
                 for (jobs, what), ns in by.items()]
        parts += [f"no series named {n} in the range" for n in unknown]
        return "; ".join(parts)

    def _job_state(self, jobs: Iterable[str]) -> str:
        seen = self.jobs()
        scraped = [j for j in jobs if j in seen]
        names = " or ".join(f"job {j}" for j in jobs)
        if not scraped:
            return f"{names}: not scraped here"
        if not any(seen[j] >= 1 for j in scraped):
            return f"{names}: scraped here but down in the whole range"
        return (f"{names}: up, and exports these only once there is something to report,"
                " e.g. a node restart or a recovery")
