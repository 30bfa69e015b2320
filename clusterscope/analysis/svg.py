"""Inline SVG charts for the self-contained report (no JavaScript, no network)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

# 20 distinct colours (matplotlib's tab20: each tab10 hue and its light tint), enough for
# every restart_info phase without two phases sharing one; order: the strong hues first
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
           "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]


@dataclass
class Line:
    label: str
    points: list[tuple[float, float]]  # (unix time, value)
    band: list[tuple[float, float, float]] = field(default_factory=list)  # (t, low, high)


def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=raw)
    start = math.floor(lo / step) * step
    ticks, v = [], start
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _fmt(v: float) -> str:
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.0f}"
    return f"{v:.2f}".rstrip("0").rstrip(".") if v else "0"


def y_range(values: Sequence[float], nonneg: bool) -> list[float]:
    """The ticks of a value axis: padded around the data, never below 0 for a quantity
    that cannot be negative (seconds, CPU, latency, throughput)."""
    v0, v1 = min(values), max(values)
    pad = (v1 - v0) * 0.08 or abs(v1) * 0.1 or 1.0
    lo = v0 - pad
    if nonneg and v0 >= 0:
        lo = max(0.0, lo)
    return _nice_ticks(lo, v1 + pad)


def _segments(points: list[tuple[float, float]], gap: float) -> list[list[tuple[float, float]]]:
    """Split a line where samples are missing for longer than `gap`: no data is drawn as a
    gap, not as a straight line across it."""
    out: list[list[tuple[float, float]]] = []
    for p in points:
        if not out or p[0] - out[-1][-1][0] > gap:
            out.append([])
        out[-1].append(p)
    return out


def line_chart(lines: Sequence[Line], title: str, unit: str = "", width: int = 720,
               height: int = 260, reference: float | None = None, nonneg: bool = True,
               gap: float | None = None) -> str:
    pts = [p for ln in lines for p in ln.points] + [(t, v) for ln in lines
                                                     for t, lo, hi in ln.band for v in (lo, hi)]
    if not pts:
        return f'<p class="empty">{_esc(title)}: no data in this period</p>'
    t0, t1 = min(p[0] for p in pts), max(p[0] for p in pts)
    vals = [p[1] for p in pts if math.isfinite(p[1])] + ([reference] if reference is not None
                                                          else [])
    ticks = y_range(vals, nonneg)
    v0, v1 = ticks[0], ticks[-1]
    # room for the longest tick label (e.g. "10,000 tps"), so none is cut at the edge
    left = 14 + 7 * max(len(f"{_fmt(tv)}{unit}") for tv in ticks)
    right, top, bottom = 150, 28, 30
    t1 = t1 if t1 > t0 else t0 + 1
    pw, ph = width - left - right, height - top - bottom

    def x(t: float) -> float:
        return left + (t - t0) / (t1 - t0) * pw

    def y(v: float) -> float:
        return top + (1 - (v - v0) / (v1 - v0)) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'role="img" aria-label="{_esc(title)}">',
           f'<text x="{left}" y="16" class="title">{_esc(title)}</text>']
    for tv in ticks:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(tv):.1f}" y2="{y(tv):.1f}" '
                   'class="grid"/>')
        out.append(f'<text x="{left - 6}" y="{y(tv) + 4:.1f}" class="tick" text-anchor="end">'
                   f'{_fmt(tv)}{_esc(unit)}</text>')
    for frac in (0.0, 0.5, 1.0):
        t = t0 + frac * (t1 - t0)
        label = datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")
        out.append(f'<text x="{x(t):.1f}" y="{height - 10}" class="tick" '
                   f'text-anchor="middle">{label}</text>')
    if reference is not None:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(reference):.1f}" '
                   f'y2="{y(reference):.1f}" class="ref"/>')
    for i, ln in enumerate(lines):
        color = PALETTE[i % len(PALETTE)]
        if ln.band:
            upper = " ".join(f"{x(t):.1f},{y(hi):.1f}" for t, _, hi in ln.band)
            lower = " ".join(f"{x(t):.1f},{y(lo):.1f}" for t, lo, _ in reversed(ln.band))
            out.append(f'<polygon points="{upper} {lower}" fill="{color}" opacity="0.18"/>')
        step = gap or _typical_step(ln.points)
        for seg in _segments(ln.points, 3 * step) if step else [ln.points]:
            if len(seg) > 1:
                path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in seg)
                out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                           'stroke-width="1.8"/>')
        for t, v in ln.points if len(ln.points) <= 40 else ():
            out.append(f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.5" fill="{color}"/>')
        ly = top + 14 * i + 8
        out.append(f'<rect x="{left + pw + 10}" y="{ly - 8}" width="10" height="10" '
                   f'fill="{color}"/><text x="{left + pw + 24}" y="{ly + 1}" class="legend">'
                   f'{_esc(ln.label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _typical_step(points: list[tuple[float, float]]) -> float:
    steps = sorted(b[0] - a[0] for a, b in zip(points, points[1:], strict=False))
    return steps[len(steps) // 2] if steps else 0.0


def stacked_bars(rows: Sequence[tuple[str, Sequence[tuple[str, float]]]], title: str,
                 unit: str = "s", width: int = 760) -> str:
    """One horizontal bar per row, split into named segments (e.g. restart phases)."""
    if not rows:
        return f'<p class="empty">{_esc(title)}: no data in this period</p>'
    names = list(dict.fromkeys(n for _, segs in rows for n, _ in segs))
    if len(names) > len(PALETTE):
        raise ValueError(f"{title}: {len(names)} segments, {len(PALETTE)} distinct colours")
    colors = {n: PALETTE[i] for i, n in enumerate(names)}
    left, top, bar_h, gap = 170, 28, 22, 10
    legend_h = 16 * math.ceil(len(names) / 3)
    height = top + len(rows) * (bar_h + gap) + legend_h + 20
    pw = width - left - 90
    vmax = max(sum(v for _, v in segs) for _, segs in rows) or 1.0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'role="img" aria-label="{_esc(title)}">',
           f'<text x="10" y="16" class="title">{_esc(title)}</text>']
    for i, (label, segs) in enumerate(rows):
        yy = top + i * (bar_h + gap)
        out.append(f'<text x="{left - 8}" y="{yy + bar_h * 0.7:.1f}" class="tick" '
                   f'text-anchor="end">{_esc(label)}</text>')
        xx = float(left)
        for name, v in segs:
            w = v / vmax * pw
            if w > 0:
                out.append(f'<rect x="{xx:.1f}" y="{yy}" width="{w:.1f}" height="{bar_h}" '
                           f'fill="{colors[name]}"><title>{_esc(name)}: {_fmt(v)} {unit}'
                           '</title></rect>')
            xx += w
        total = sum(v for _, v in segs)
        out.append(f'<text x="{xx + 6:.1f}" y="{yy + bar_h * 0.7:.1f}" class="tick">'
                   f'{_fmt(total)} {unit}</text>')
    ly = top + len(rows) * (bar_h + gap) + 6
    for j, name in enumerate(names):
        lx, lyy = 10 + (j % 3) * 250, ly + 16 * (j // 3)
        out.append(f'<rect x="{lx}" y="{lyy}" width="10" height="10" fill="{colors[name]}"/>'
                   f'<text x="{lx + 14}" y="{lyy + 9}" class="legend">{_esc(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;
max-width:1100px}
h1{margin-bottom:4px} h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:8px 0 16px}
td,th{border:1px solid #ddd;padding:4px 8px;font-size:13px;text-align:right}
th{background:#f4f4f4} td:first-child,th:first-child{text-align:left}
.simulated{display:inline-block;background:#fff3cd;border:1px solid #e0b000;color:#7a5b00;
padding:1px 8px;border-radius:3px;font-weight:600;font-size:12px;margin-left:8px}
.measured{display:inline-block;background:#e3f5e6;border:1px solid #3c9a4c;color:#1d5e28;
padding:1px 8px;border-radius:3px;font-weight:600;font-size:12px;margin-left:8px}
.worse{color:#b00020;font-weight:600} .better{color:#1b7a2e;font-weight:600} .same{color:#666}
.empty{color:#888;font-style:italic} .note{color:#555;font-size:13px}
svg .title{font-size:13px;font-weight:600} svg .tick{font-size:11px;fill:#555}
svg .legend{font-size:11px} svg .grid{stroke:#eee} svg .ref{stroke:#999;stroke-dasharray:4 3}
"""
