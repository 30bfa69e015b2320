"""The report's page per change: what moved where and when, step by step, its own
before/after comparison (analysis/change_verdicts.py) and, for an NDB upgrade, the restarts of the
two versions side by side (analysis/restart_versions.py). The index lists the changes
with their verdicts and links to the pages."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

from clusterscope.analysis import svg
from clusterscope.analysis.change_verdicts import Judgement
from clusterscope.analysis.periods import Period
from clusterscope.analysis.restart_versions import by_version, completed_restarts, side_by_side_html
from clusterscope.clients.vm import VM

DIR = "changes"
SIM = ('<span class="simulated">SIMULATED (NDB simulator, not a measurement)</span>')


def _esc(s: object) -> str:
    return html.escape(str(s))


def _ts(t: float | None) -> str:
    return "-" if not t else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def file_name(change_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", change_id) + ".html"


def section(judged: list[Judgement]) -> str:
    """The index's list of changes, each linking its page."""
    if not judged:
        return "<h2>Changes</h2><p class='empty'>no configuration or version change found</p>"
    rows = []
    for j in judged:
        c = j.change
        link = f'<a href="{DIR}/{file_name(c.change_id)}">{_esc(c.what())}</a>'
        rows.append(f"<tr><td>{_esc(_ts(c.start))}</td><td>{_esc(c.cluster)}</td>"
                    f"<td>{_esc(c.kind)}</td><td>{link}{' ' + SIM if c.simulated else ''}</td>"
                    f"<td>{_esc(c.where())}</td><td>{_esc(j.verdict)}</td></tr>")
    return ("<h2>Changes</h2><p>Configuration and version changes the detector found, each"
            " compared on its own (its page has the table).</p><table><tr><th>first step</th>"
            "<th>cluster</th><th>kind</th><th>what</th><th>where</th><th>verdict</th></tr>"
            + "".join(rows) + "</table>")


def _steps(j: Judgement) -> str:
    rows = []
    for s in j.change.steps:
        items = "; ".join(f"{k} {n}: {o} -> {v}" for k, n, o, v in s.items())
        rows.append(f"<tr><td>{_esc(s.fields.get('step', '?'))}</td><td>{_esc(s.node)}</td>"
                    f"<td>{_esc(_ts(s.since))}</td><td>{_esc(_ts(s.time))}</td>"
                    f"<td>{_esc(items)}</td></tr>")
    return ("<table><tr><th>step</th><th>node</th><th>last seen before</th><th>seen</th>"
            "<th>what moved</th></tr>" + "".join(rows) + "</table>")


def page(vm: VM, j: Judgement, comparison_html: str, source: str) -> str:
    c = j.change
    parts = [f"<h1>{_esc(c.cluster)}: {_esc(c.what())}</h1>",
             f"<p class='note'>change {_esc(c.change_id)}, kind {_esc(c.kind)}; {_esc(c.where())};"
             f" read from {_esc(source)}.{' ' + SIM if c.simulated else ''}</p>",
             "<h2>Steps</h2>", _steps(j), "<h2>Before / after</h2>"]
    if j.pending:
        parts.append(f"<p class='empty'>{_esc(j.verdict)}: the period after ({j.after}) has"
                     " not ended.</p>")
    else:
        parts.append(f"<p>Verdict: <b>{_esc(j.verdict)}</b>. The periods leave out the change"
                     " itself and the settle window after its last step.</p>")
        if j.overlaps:
            parts.append("<p class='note'>The periods also hold change(s) "
                         f"{_esc(', '.join(j.overlaps))}: the comparison sees them too.</p>")
        parts.append(comparison_html)
    if c.kind == "ndb_version":
        old, new = (c.first.fields.get("old", ""), c.first.fields.get("new", ""))
        restarts = completed_restarts(vm, Period(j.before.start, j.after.end))
        versions = by_version(restarts)
        parts.append("<h2>Restarts on the version before and after</h2>")
        parts.append(side_by_side_html(restarts, old, new, c.simulated) if old in versions
                     or new in versions else
                     "<p class='empty'>no completed restart in the compared span</p>")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>change"
            f" {_esc(c.change_id)}</title><style>{svg.CSS}</style></head><body>"
            f"<p><a href='../index.html'>report</a></p>{''.join(parts)}</body></html>")


def write(vm: VM, out: Path, judged: list[Judgement], comparisons: list[str],
          source: str) -> list[Path]:
    """One page per change under out/changes/."""
    d = out / DIR
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for j, comparison_html in zip(judged, comparisons, strict=True):
        p = d / file_name(j.change.change_id)
        p.write_text(page(vm, j, comparison_html, source))
        paths.append(p)
    return paths
