"""Completed NDB restarts with the version each node ran, and two versions side by side.

A restart is an event: the exporter's completion time
(`ndb_restart_last_completed_timestamp_seconds`) changed; its figures are the total and
phases at that moment, and its version the data node's `ndb_node_info{version}`
(ndbinfo.processes.node_version) then. Grouped by version, the restarts before and after an
upgrade compare as the field facts' 7.5.10 vs 7.6.6 table does: per phase, each version's
mean ± sd (n) and the difference with its 95% Welch interval.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from clusterscope.analysis.compare import event_times
from clusterscope.analysis.periods import Period
from clusterscope.analysis.quantities import COMPLETED_RESTART, RESTART_DONE, aggregate_phases
from clusterscope.clients.vm import VM
from clusterscope.inference import Summary, welch

TOTAL = "total"


@dataclass(frozen=True)
class Restart:
    time: float
    cluster: str
    node_id: str
    total: float
    phases: dict[str, float]
    version: str  # "" when the exporter did not see the node's version then


def _step(period: Period) -> float:
    return max(2.0, (period.end - period.start) / 600)


def completed_restarts(vm: VM, period: Period) -> list[Restart]:
    """Every restart completed in the period, oldest first (two with the same total are
    two restarts: each is a change of its completion time)."""
    step = _step(period)
    start = period.start - 300
    key = ("cluster", "node_id")
    totals = {tuple(r["metric"].get(k, "") for k in key): r["values"] for r in vm.query_range(
        f"ndb_restart_total_seconds {COMPLETED_RESTART}", start, period.end, step)}
    out = []
    for ev in vm.query_range(RESTART_DONE, start, period.end, step):
        cluster, node = (ev["metric"].get(k, "") for k in key)
        for t in event_times(ev["values"], period.start, start, step):
            total = next((float(v) for ts, v in totals.get((cluster, node), [])
                          if float(ts) >= t and v != "NaN"), None)
            if total is None:
                continue
            where = f'node_id="{node}"' + (f',cluster="{cluster}"' if cluster else "")
            phases = {p["metric"].get("phase", "?"): float(p["value"][1])
                      for p in vm.query(f"ndb_restart_phase_seconds{{{where}}}", t)}
            info = vm.query(f'max by (version) (ndb_node_info{{{where},type="NDB"}})', t)
            version = info[0]["metric"].get("version", "") if len(info) == 1 else ""
            out.append(Restart(t, cluster, node, total, phases, version))
    return sorted(out, key=lambda r: r.time)


def by_version(restarts: list[Restart]) -> dict[str, list[Restart]]:
    """version -> its restarts, versions in the order they first restarted."""
    out: dict[str, list[Restart]] = {}
    for r in restarts:
        out.setdefault(r.version or "(version not seen)", []).append(r)
    return out


def _values(restarts: list[Restart], phase: str) -> list[float]:
    return [r.total if phase == TOTAL else r.phases.get(phase, 0.0) for r in restarts]


def side_by_side(restarts: list[Restart], old: str, new: str) -> list[dict]:
    """Per phase (the total first): both versions' summaries and new - old with its 95%
    Welch interval. Aggregate phases (sums of others) are left out."""
    groups = by_version(restarts)
    a, b = groups.get(old, []), groups.get(new, [])
    phases = sorted({p for r in a + b for p in r.phases if p not in aggregate_phases()})
    rows = []
    for phase in [TOTAL, *phases]:
        sa, sb = Summary.of(_values(a, phase)), Summary.of(_values(b, phase))
        rows.append({"phase": phase, "old": sa, "new": sb, "difference": welch(sa, sb)})
    return rows


def _cell(s: Summary) -> str:
    if not s.n:
        return "-"
    sd = "" if math.isnan(s.sd) else f" ± {s.sd:.0f}"
    return f"{s.mean:.0f}{sd} s (n={s.n})"


def side_by_side_html(restarts: list[Restart], old: str, new: str, simulated: bool) -> str:
    rows = side_by_side(restarts, old, new)
    mark = " SIMULATED (NDB simulator, not a measurement)" if simulated else ""
    head = (f"<table><tr><th>phase (seconds)</th><th>{html.escape(old)}</th>"
            f"<th>{html.escape(new)}</th><th>{html.escape(new)} - {html.escape(old)}"
            " [95% CI]</th></tr>")
    body = []
    for r in rows:
        d = r["difference"]
        diff = "-" if math.isnan(d.diff) else f"{d.diff:+.0f}" + (
            "" if math.isnan(d.low) else f" [{d.low:+.0f}, {d.high:+.0f}]")
        body.append(f"<tr><td>{html.escape(r['phase'])}</td><td>{_cell(r['old'])}</td>"
                    f"<td>{_cell(r['new'])}</td><td>{diff}</td></tr>")
    return (f"<p>Completed restarts by the version each data node ran{mark}: mean ± sd"
            " per phase (ndbinfo.restart_info), the difference with its 95% Welch"
            " interval.</p>" + head + "".join(body) + "</table>")
