"""The changes the detector found (exporters/clusterscope_changes), read back from the log
store, and each one compared on its own.

The detector writes one line per node and change (component `changes`; fields in
clusterscope_changes/events.py); the lines of one change share its `change_id`, one step
per node it reached. A change's comparison is the before/after comparison `compare`
makes (compare.collect / compare_samples: per quantity and series, Welch's 95% interval on
the difference and a verdict), over a period before its first step and the same period
after its last step plus a settle window, so the change itself and the cluster settling
after it are in neither period. A change is `pending` until that period has ended.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

from clusterscope.analysis import compare
from clusterscope.analysis.compare import Quantity, Row
from clusterscope.analysis.periods import Period
from clusterscope.clients.vlogs import VLogs
from clusterscope.clients.vm import VM
from clusterscope.logs.logsql import quote
from clusterscope.rules.rule_model import seconds
from clusterscope.rules.rules_config import shared

QUERY = '{component="changes"}'
FIELDS = ("cluster", "node", "node_id", "role", "kind", "name", "old", "new", "items",
          "details", "change_id", "step", "nodes_total", "since", "simulated")


def default_settle() -> float:
    """rules/config.yaml `changes.settle` (the lab's change-judge and the CLI's default)."""
    return float(seconds(shared()["changes"]["settle"]))


def default_period() -> float:
    """rules/config.yaml `changes.period`."""
    return float(seconds(shared()["changes"]["period"]))


@dataclass(frozen=True)
class Step:
    time: float
    since: float | None
    fields: dict[str, str]

    @property
    def node(self) -> str:
        return self.fields.get("node", "?")

    def items(self) -> list[list[str]]:
        """[kind, name, old, new] of everything that moved on this node."""
        try:
            out = json.loads(self.fields.get("details") or "[]")
            return [list(map(str, i)) for i in out if isinstance(i, list) and len(i) == 4]
        except ValueError:
            return [[self.fields.get(k, "") for k in ("kind", "name", "old", "new")]]


@dataclass
class Change:
    change_id: str
    cluster: str
    steps: list[Step] = field(default_factory=list)

    @property
    def first(self) -> Step:
        return self.steps[0]

    @property
    def start(self) -> float:
        return self.steps[0].time

    @property
    def end(self) -> float:
        return self.steps[-1].time

    @property
    def nodes(self) -> list[str]:
        return [s.node for s in self.steps]

    @property
    def nodes_total(self) -> int:
        return max(_int(s.fields.get("nodes_total")) for s in self.steps)

    @property
    def simulated(self) -> bool:
        return any(s.fields.get("simulated") == "true" for s in self.steps)

    @property
    def kind(self) -> str:
        return self.first.fields.get("kind", "?")

    @property
    def name(self) -> str:
        return self.first.fields.get("name", "?")

    def what(self) -> str:
        """`innodb_flush_log_at_trx_commit 2 -> 1` (+ how many other things moved)."""
        f = self.first.fields
        others = {(i[0], i[1]) for s in self.steps for i in s.items()} - {(self.kind,
                                                                           self.name)}
        more = f" (+{len(others)} more)" if others else ""
        return f"{f.get('name', '?')} {f.get('old', '?')} -> {f.get('new', '?')}{more}"

    def where(self) -> str:
        """`node1 (1 of 3 nodes)`, or each step of a rolling change with its time."""
        data = self.first.fields.get("role") == "data"  # NDB data nodes, by node id
        total = f"{self.nodes_total} {'data ' if data else ''}nodes"
        if len(self.steps) == 1:
            node = f"data node {self.first.node}" if data else self.first.node
            return node + (f" (1 of {total})" if self.nodes_total > 1 else "")
        if self.end - self.start < 1.0:  # seen on every node in the same poll
            return (f"{len(self.steps)} of {total} at once: "
                    + ", ".join(s.node for s in self.steps))
        return (f"rolling over {len(self.steps)} of {total}: "
                + ", ".join(f"{s.node} {_hms(s.time)}" for s in self.steps))

    def periods(self, settle: float, period: float) -> tuple[Period, Period]:
        return (Period(self.start - period, self.start),
                Period(self.end + settle, self.end + settle + period))


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def _hms(t: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(t))


def read(vlogs: VLogs, start: float, end: float | None = None,
         cluster: str | None = None) -> list[Change]:
    """The changes with a step in [start, end], oldest first; a line written twice (the
    detector crashed between writing and saving) counts once."""
    where = QUERY if not cluster else f'{{component="changes", cluster={quote(cluster)}}}'
    entries = vlogs.entries(f"{where} | fields _time, _msg, {', '.join(FIELDS)}", start, end,
                            limit=20000)
    changes: dict[str, Change] = {}
    seen: set[tuple[str, str, str]] = set()
    for e in entries:
        f = {k: str(v) for k, v in e.labels.items()}
        cid = f.get("change_id")
        if not cid or (cid, f.get("node", ""), f.get("step", "")) in seen:
            continue
        seen.add((cid, f.get("node", ""), f.get("step", "")))
        since = f.get("since")
        step = Step(e.ts_ns / 1e9, float(since) if since else None, f)
        changes.setdefault(cid, Change(cid, f.get("cluster", "?"))).steps.append(step)
    for c in changes.values():
        c.steps.sort(key=lambda s: (_int(s.fields.get("step")), s.time))
    return sorted(changes.values(), key=lambda c: c.start)


@dataclass
class Judgement:
    change: Change
    before: Period
    after: Period
    rows: list[Row]
    pending: bool
    overlaps: list[str]  # other changes of the cluster inside the compared span

    @property
    def verdict(self) -> str:
        if self.pending:
            return f"pending until {time.strftime('%H:%M:%S', time.gmtime(self.after.end))}Z"
        if not any(r.before.n and r.after.n for r in self.rows):
            return "no data in both periods"
        changed = [r for r in self.rows if r.verdict in ("better", "worse")]
        if not changed:
            return "no significant change"
        return ", ".join(sorted({r.verdict for r in changed}))


def judge(vm: VM, change: Change, others: list[Change], quantities: list[Quantity], *,
          settle: float | None = None, period: float | None = None,
          experiment: str | None = None, now: float | None = None) -> Judgement:
    settle = default_settle() if settle is None else settle
    period = default_period() if period is None else period
    before, after = change.periods(settle, period)
    now = time.time() if now is None else now
    overlaps = [o.change_id for o in others if o.change_id != change.change_id
                and o.cluster == change.cluster
                and o.start <= after.end and o.end >= before.start]
    if after.end > now:
        return Judgement(change, before, after, [], True, overlaps)
    rows = compare.compare_samples(quantities,
                                   compare.collect(vm, quantities, before, experiment),
                                   compare.collect(vm, quantities, after, experiment))
    # the cluster's own figures: a Galera change says nothing about another cluster
    rows = [r for r in rows if r.series.get("cluster") in (None, "", change.cluster)]
    return Judgement(change, before, after, rows, False, overlaps)


def effect(row: Row) -> tuple[float, float, float]:
    """The effect and its interval as a ratio: percentage points for a ratio quantity (an
    overhead), else relative to the mean before."""
    d = row.difference
    if row.unit == "ratio":
        return d.diff, d.low, d.high
    base = abs(row.before.mean) if row.before.n and row.before.mean else math.nan
    return d.diff / base, d.low / base, d.high / base


def judgement_json(j: Judgement) -> dict:
    c = j.change
    return {"change_id": c.change_id, "cluster": c.cluster, "kind": c.kind, "name": c.name,
            "what": c.what(), "start": c.start, "end": c.end, "nodes": c.nodes,
            "nodes_total": c.nodes_total, "simulated": c.simulated,
            "steps": [{"node": s.node, "time": s.time, "since": s.since, "items": s.items()}
                      for s in c.steps],
            "before": str(j.before), "after": str(j.after), "pending": j.pending,
            "verdict": j.verdict, "overlaps": j.overlaps, "rows": compare.rows_json(j.rows)}


# -- notification: the verdicts as series the alert rules read -----------------------------
EFFECT = "clusterscope_change_effect_ratio"
BOUNDS = {"lower": "clusterscope_change_effect_lower_ratio",
          "upper": "clusterscope_change_effect_upper_ratio"}


def _label(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def effect_lines(j: Judgement) -> list[str]:
    """A judged change's rows as samples at the end of its period after, labelled by what
    changed (kind and name: bounded by the names a server has, never by values or change
    ids) and by the row's own series; the value is the effect as a ratio (`effect`)."""
    if j.pending:
        return []
    c = j.change
    ts_ms = int(j.after.end * 1000)
    out = []
    for r in j.rows:
        if r.before.n == 0 or r.after.n == 0:
            continue
        labels = {**{k: v for k, v in r.series.items() if v}, "cluster": c.cluster,
                  "quantity": r.key, "change_kind": c.kind, "change_name": c.name,
                  "verdict": r.verdict}
        inner = ",".join(f'{k}="{_label(v)}"' for k, v in sorted(labels.items()))
        value, low, high = effect(r)
        for name, v in ((EFFECT, value), (BOUNDS["lower"], low), (BOUNDS["upper"], high)):
            if math.isfinite(v):
                out.append(f"{name}{{{inner}}} {v} {ts_ms}")
    return out


def notify(vm: VM, judgements: list[Judgement]) -> int:
    """Write the judged changes' effects (idempotent: the same samples at the same times);
    the rules' info alert notifies the significant ones. Returns the samples written."""
    lines = [line for j in judgements for line in effect_lines(j)]
    if lines:
        vm.import_prometheus("\n".join(lines) + "\n")
        vm.flush()
    return len(lines)
