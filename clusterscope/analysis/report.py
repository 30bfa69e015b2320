"""The self-contained HTML report: plots and tables from VictoriaMetrics, no network needed.

The report says where its figures come from: the VictoriaMetrics it read and, per section,
the clusters behind the section's series. A section whose series carry `simulated="true"`
(the lab's NDB simulator labels everything it serves so) is marked SIMULATED in its heading
and plots; a section of real series names the cluster it was measured on instead. Nothing
is marked from what a section is about: a real NDB cluster's restarts are measurements.
"""

from __future__ import annotations

import html
import math
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from clusterscope.analysis import change_pages, svg
from clusterscope.analysis.change_verdicts import Judgement
from clusterscope.analysis.compare import Row, render_table
from clusterscope.analysis.periods import Period
from clusterscope.analysis.quantities import COMPLETED_RESTART, aggregate_phases
from clusterscope.analysis.restart_versions import completed_restarts
from clusterscope.clients.vm import VM
from clusterscope.rules.fragments import ldm_cpu_percent
from clusterscope.rules.rules_config import shared

SIM = '<span class="simulated">SIMULATED (NDB simulator, not a measurement)</span>'
# mysqld_exporter probes NDB SQL nodes too (job ndb_sql), and a MariaDB without Galera still
# reports wsrep_cluster_size: Galera's figures are the galera job's (rules/config.yaml)


def galera_selector() -> str:
    """rules/config.yaml `selectors.galera`."""
    return shared()["selectors"]["galera"]


def _esc(s: object) -> str:
    return html.escape(str(s))


@dataclass(frozen=True)
class Provenance:
    """The clusters behind a section's series, and which of them are simulated."""

    real: tuple[str, ...]
    simulated: tuple[str, ...]

    @property
    def all_simulated(self) -> bool:
        return bool(self.simulated) and not self.real

    def mark(self) -> str:
        """The heading's mark: SIMULATED, or the clusters it was measured on, or both."""
        out = []
        if self.real:
            out.append('<span class="measured">measured on '
                       + _esc(", ".join(self.real)) + "</span>")
        if self.simulated:
            out.append(SIM if not self.real else
                       f'<span class="simulated">SIMULATED on {_esc(", ".join(self.simulated))}'
                       " (NDB simulator, not a measurement)</span>")
        return " ".join(out)

    def tag(self) -> str:
        """A plot title's suffix."""
        return " (SIMULATED)" if self.all_simulated else (
            " (partly SIMULATED)" if self.simulated else "")


def provenance(vm: VM, selector: str, period: Period) -> Provenance:
    """Whose series `selector` returns in the period: their `cluster` labels, split by the
    series' own `simulated="true"` label."""
    real, sim = set(), set()
    # an instant query over the period, not /api/v1/series: VictoriaMetrics answers that
    # from its per-day index, with every series of the day
    span = int(period.end - period.start + 300)
    rows = vm.query(f"count by (cluster, simulated) (count_over_time(({selector})[{span}s]))",
                    period.end)
    for r in rows:
        labels = r["metric"]
        name = labels.get("cluster") or "(no cluster label)"
        (sim if labels.get("simulated") == "true" else real).add(name)
    return Provenance(tuple(sorted(real)), tuple(sorted(sim)))


def _ts(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


MIN_BAND_PAIRS = 5


def _step(period: Period) -> float:
    return max(2.0, (period.end - period.start) / 600)


def _lines(vm: VM, expr: str, period: Period, label: str, scale: float = 1.0,
           band: tuple[str, str] | None = None) -> list[svg.Line]:
    step = _step(period)
    out: dict[str, svg.Line] = {}
    for r in vm.query_range(expr, period.start, period.end, step):
        name = label.format_map(defaultdict(str, r["metric"]))
        out[name] = svg.Line(name, [(float(t), float(v) * scale) for t, v in r["values"]
                                    if v != "NaN"])
    if band:
        lows = {label.format_map(defaultdict(str, r["metric"])): r["values"]
                for r in vm.query_range(band[0], period.start, period.end, step)}
        highs = {label.format_map(defaultdict(str, r["metric"])): r["values"]
                 for r in vm.query_range(band[1], period.start, period.end, step)}
        for name, ln in out.items():
            hi = {float(t): float(v) for t, v in highs.get(name, [])}
            ln.band = [(float(t), float(v) * scale, hi[float(t)] * scale)
                       for t, v in lows.get(name, []) if float(t) in hi]
    return sorted(out.values(), key=lambda ln: ln.label)


def _by(result: list[dict], label: str) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in result:
        groups[r["metric"].get(label, "")].append(r)
    return dict(sorted(groups.items()))


def _node(metric: dict[str, str]) -> tuple[str, str]:
    return metric.get("cluster", ""), metric.get("node_id", "?")


def restart_breakdown(vm: VM, period: Period) -> list[tuple[str, list[tuple[str, float]]]]:
    """The phases of every completed restart in the period, oldest first."""
    restarts = completed_restarts(vm, period)
    clusters = {r.cluster for r in restarts}
    rows = []
    for r in restarts:
        # an aggregate phase (for_local_recovery) sums others: drawn, it would double
        # the bar (417 s restarts drawn as 663 s)
        segs = sorted(((p, v) for p, v in r.phases.items()
                       if v > 0 and p not in aggregate_phases()), key=lambda s: s[0])
        rest = r.total - sum(x for _, x in segs)
        if rest > 0.5:  # phases the view does not break out; the bar ends at the total
            segs.append(("other phases", rest))
        label = (f"{r.cluster} " if len(clusters) > 1 else "") + \
            f"node {r.node_id} @ {datetime.fromtimestamp(r.time, UTC):%H:%M:%S}"
        rows.append((label, segs))
    return rows


def recoveries(vm: VM, period: Period) -> list[dict]:
    out = []
    res = vm.query_range("galera_recovery_last_duration_seconds", period.start - 300,
                         period.end, _step(period))
    ends = {tuple(sorted(r["metric"].items())): r for r in
            vm.query("galera_recovery_last_end_timestamp_seconds", period.end)}
    for r in res:
        m = r["metric"]
        key = tuple(sorted({**m, "__name__": "galera_recovery_last_end_timestamp_seconds"}
                           .items()))
        end = float(ends[key]["value"][1]) if key in ends else float(r["values"][-1][0])
        if end < period.start:
            continue
        out.append({"cluster": m.get("cluster", ""), "node": m.get("node", "?"),
                    "kind": m.get("kind", "?"),
                    "method": m.get("method", "?"), "donor": m.get("donor", "?"),
                    "seconds": float(r["values"][-1][1]), "end": end})
    return sorted(out, key=lambda d: d["end"])


def _table(header: list[str], rows: list[list[object]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _comparison_html(comparison: tuple[Period, Period, list[Row]]) -> str:
    pb, pa, rows = comparison
    if not rows:
        return '<p class="empty">no data in either period</p>'
    trs = []
    for r in rows:
        cls = {"better": "better", "worse": "worse"}.get(r.verdict, "same")
        series = ", ".join(f"{k}={v}" for k, v in r.series.items() if v and k != "simulated")
        d = r.difference
        ci = "-" if math.isnan(d.low) else f"[{d.low:+.4g}, {d.high:+.4g}]"
        mark = " (SIMULATED)" if r.simulated else ""
        trs.append(f"<tr><td>{_esc(r.group + ': ' + r.title + mark)}</td><td>{_esc(series)}"
                   f"</td><td>{r.before.mean:.4g} (n={r.before.n})</td><td>{r.after.mean:.4g}"
                   f" (n={r.after.n})</td><td>{d.diff:+.4g}</td><td>{ci}</td>"
                   f'<td class="{cls}">{_esc(r.verdict)}</td></tr>')
    return (f"<p>before {pb} vs after {pa}; 95% Welch intervals on the difference.</p>"
            "<table><tr><th>quantity</th><th>series</th><th>before</th><th>after</th>"
            "<th>after-before</th><th>95% CI</th><th>verdict</th></tr>" + "".join(trs)
            + "</table><details><summary>as text</summary><pre>"
            + _esc(render_table(rows, str(pb), str(pa))) + "</pre></details>")


def build(vm: VM, period: Period, comparison: tuple[Period, Period, list[Row]] | None = None,
          alerts: list[dict] | None = None, notes: list[str] | None = None,
          source: str | None = None, changes: list[Judgement] | None = None) -> str:
    parts: list[str] = []
    add = parts.append
    sections = {
        "experiments": provenance(vm, "loadgen_window_tps", period),
        "restarts": provenance(vm, "ndb_restart_total_seconds", period),
        "cpu": provenance(vm, 'ndb_thread_cpu_percent{thread_name="ldm"}', period),
        "galera": provenance(vm, f'{{__name__=~"galera_recovery_last_duration_seconds'
                                 f'|mysql_global_status_wsrep_cluster_size",{galera_selector()}}}',
                             period),
    }
    real = sorted({c for p in sections.values() for c in p.real})
    sim = sorted({c for p in sections.values() for c in p.simulated})
    add(f"<h1>clusterscope report</h1><p class='note'>period {_ts(period.start)} to "
        f"{_ts(period.end)}; generated {_ts(time.time())}; read from VictoriaMetrics at "
        f"{_esc(source or vm.url)}.</p>")
    if real:
        add(f"<p class='note'>Measured on {_esc(', '.join(real))}.</p>")
    if sim:
        add(f"<p class='note'>{SIM} marks every figure whose series carry"
            f" <code>simulated=\"true\"</code> ({_esc(', '.join(sim))}).</p>")
    for n in notes or []:
        add(f"<p class='note'>{_esc(n)}</p>")
    if alerts is not None:
        add("<h2>Alerts</h2>")
        add(_table(["alert", "status", "severity", "summary", "starts at"],
                   [[a.get("labels", {}).get("alertname", "?"), a.get("status", "?"),
                     a.get("labels", {}).get("severity", ""),
                     a.get("annotations", {}).get("summary", ""), a.get("startsAt", "")]
                    for a in alerts]) if alerts else "<p class='empty'>no alert fired</p>")
    if comparison:
        add("<h2>Before / after</h2>" + _comparison_html(comparison))
    if changes is not None:
        add(change_pages.section(changes))

    exp = sections["experiments"]
    add(f"<h2>Experiments {exp.mark()}</h2>")
    # the interval from the first two or three pairs spans -300 %..+200 % and hides the
    # estimate: the band starts once MIN_BAND_PAIRS pairs stand behind it
    enough = ("and on(experiment, variant, baseline, estimand) loadgen_overhead_pairs >="
              f" {MIN_BAND_PAIRS}")
    # each line names its estimand: whole_workload (every thread on the variant) or
    # mixed_statement (a statement's relative latency in a load mixing the variants)
    add(svg.line_chart(_lines(vm, "loadgen_overhead_ratio", period,
                              "{experiment}/{variant} ({estimand})", 100.0,
                              (f"loadgen_overhead_ratio_lower {enough}",
                               f"loadgen_overhead_ratio_upper {enough}")),
                       f"overhead vs baseline over the last hour of units, by estimand;"
                       f" interval band (95% for the primary comparison, simultaneous for"
                       f" the others) from {MIN_BAND_PAIRS} units{exp.tag()}",
                       "%", reference=0.0, nonneg=False))
    add(svg.line_chart(_lines(vm, "loadgen_window_tps", period, "{experiment}/{variant}"),
                       f"throughput per variant (per window){exp.tag()}", " tps"))
    add(svg.line_chart(_lines(vm, 'loadgen_window_latency_seconds{quantile="0.95"}', period,
                              "{experiment}/{variant}", 1000.0),
                       f"latency p95 per variant (per window){exp.tag()}", " ms"))

    rs = sections["restarts"]
    node = "{cluster} node {node_id}" if len(rs.real + rs.simulated) > 1 else "node {node_id}"
    add(f"<h2>NDB restarts {rs.mark()}</h2>")
    add(svg.stacked_bars(restart_breakdown(vm, period),
                         f"phase breakdown of each completed restart{rs.tag()}"))
    # only completed restarts: a restart in progress has no total yet (gaps, not zeros)
    add(svg.line_chart(_lines(vm, f"ndb_restart_total_seconds {COMPLETED_RESTART}", period,
                              node),
                       f"restart total seconds (latest completed restart per node{rs.tag()})",
                       " s"))
    cpu = sections["cpu"]
    node = "{cluster} node {node_id}" if len(cpu.real + cpu.simulated) > 1 else "node {node_id}"
    add(f"<h2>NDB LDM CPU {cpu.mark()}</h2>")
    add(svg.line_chart(_lines(vm, f"avg by (cluster, node_id) ({ldm_cpu_percent()})", period,
                              node),
                       f"mean LDM thread CPU per data node{cpu.tag()}", "%"))

    ga = sections["galera"]
    add(f"<h2>Galera recoveries {ga.mark()}</h2>")
    recs = recoveries(vm, period)
    add(_table(["cluster", "node", "kind", "method", "donor", "duration", "ended"],
               [[r["cluster"], r["node"], r["kind"], r["method"], r["donor"],
                 f"{r['seconds']:.1f} s", _ts(r["end"])] for r in recs]) if recs else
        "<p class='empty'>no recovery in this period</p>")
    node = "{cluster} {node}" if len(ga.real + ga.simulated) > 1 else "{node}"
    add(svg.line_chart(_lines(vm, f"mysql_global_status_wsrep_cluster_size{{{galera_selector()}}}",
                              period, node),
                       f"wsrep cluster size per node{ga.tag()}", ""))

    # The test reads this line from Chromium's console to know the page rendered.
    script = ("<script>console.log('clusterscope-report-rendered svg=' + "
              "document.querySelectorAll('svg').length);</script>")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>clusterscope "
            f"report</title><style>{svg.CSS}</style></head><body>{''.join(parts)}{script}"
            "</body></html>")


def write(vm: VM, period: Period, out: Path,
          comparison: tuple[Period, Period, list[Row]] | None = None,
          alerts: list[dict] | None = None, notes: list[str] | None = None,
          source: str | None = None, changes: list[Judgement] | None = None) -> Path:
    """index.html, and a page per change (changes/<id>.html) when `changes` is given."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(build(vm, period, comparison, alerts, notes, source, changes))
    if changes:
        change_pages.write(vm, out, changes,
                           [_comparison_html((j.before, j.after, j.rows)) if j.rows else
                            '<p class="empty">no data in either period</p>' for j in changes],
                           source or vm.url)
    return path
