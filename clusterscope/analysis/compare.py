"""Before/after comparison of what the stack measures, with 95% intervals and a verdict.

Each quantity is a gauge that changes once per event it describes (a loadgen window, an
A/B pair, a completed restart, a recovery). Its distinct values inside a period are the
samples; the two periods' samples are compared with Welch's t interval.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from clusterscope.analysis.periods import Period
from clusterscope.clients.vm import VM
from clusterscope.stats import Difference, Summary, welch


@dataclass(frozen=True)
class Quantity:
    key: str            # stable id, used in JSON and pinned baselines
    group: str          # table section
    title: str
    expr: str           # PromQL; `{experiment}` is replaced by an experiment matcher
    unit: str
    better: str         # "higher" or "lower"
    by: tuple[str, ...]  # the labels that name a row
    simulated: bool = False
    experiment_filter: bool = False
    # None: samples are the gauge's distinct values (one per event). A number: the series
    # is sampled at that step and every point counts (for continuous signals like CPU).
    step: float | None = None


@dataclass
class Row:
    key: str
    group: str
    title: str
    series: dict[str, str]
    unit: str
    simulated: bool
    before: Summary
    after: Summary
    difference: Difference
    verdict: str

    @property
    def relative(self) -> float:
        if not self.before.mean or math.isnan(self.before.mean):
            return math.nan
        return self.difference.diff / abs(self.before.mean)


Samples = dict[str, dict[tuple[tuple[str, str], ...], list[float]]]


def series_key(metric: dict[str, str], by: Iterable[str]) -> tuple[tuple[str, str], ...]:
    return tuple((label, metric.get(label, "")) for label in by)


def distinct_values(values: list[tuple[float, str]], since: float = -math.inf) -> list[float]:
    """A gauge's successive distinct values: one per event that set it.

    A value counts in the period where it first appeared, so a value set before `since`
    and still visible through the query's look-back is not counted again.
    """
    out: list[float] = []
    last: float | None = None
    for t, raw in values:
        v = float(raw)
        if math.isnan(v):
            continue
        if (last is None or v != last) and float(t) >= since:
            out.append(v)
        last = v
    return out


# How far before a period the query starts, to see which values were already set.
LOOKBEHIND = 300.0


def collect(vm: VM, quantities: Iterable[Quantity], period: Period,
            experiment: str | None = None) -> Samples:
    fine = max(1.0, (period.end - period.start) / 10000)
    samples: Samples = {}
    for q in quantities:
        matcher = f'experiment="{experiment}"' if experiment and q.experiment_filter else ""
        expr = q.expr.replace("{experiment}", matcher).replace(",}", "}").replace("{,", "{")
        per_series: dict[tuple[tuple[str, str], ...], list[float]] = {}
        start = period.start - (0.0 if q.step else LOOKBEHIND)
        for r in vm.query_range(expr, start, period.end, q.step or fine):
            key = series_key(r["metric"], q.by)
            values = ([float(v) for _, v in r["values"] if v != "NaN"] if q.step
                      else distinct_values(r["values"], since=period.start))
            per_series.setdefault(key, []).extend(values)
        samples[q.key] = per_series
    return samples


def verdict(q: Quantity, before: Summary, after: Summary, d: Difference) -> str:
    if before.n == 0 or after.n == 0:
        return "no data" if before.n == after.n == 0 else "only one period has data"
    if math.isnan(d.low):
        return "too few samples for an interval"
    if not d.significant:
        return "no significant change"
    up_is_good = q.better == "higher"
    return "better" if (d.diff > 0) == up_is_good else "worse"


def compare_samples(quantities: Iterable[Quantity], before: Samples, after: Samples,
                    confidence: float = 0.95) -> list[Row]:
    rows: list[Row] = []
    for q in quantities:
        b, a = before.get(q.key, {}), after.get(q.key, {})
        for key in sorted(set(b) | set(a)):
            sb, sa = Summary.of(b.get(key, [])), Summary.of(a.get(key, []))
            if sb.n == 0 and sa.n == 0:
                continue  # seen only outside both periods' events: nothing to say
            d = welch(sb, sa, confidence)
            rows.append(Row(q.key, q.group, q.title, dict(key), q.unit, q.simulated, sb, sa, d,
                            verdict(q, sb, sa, d)))
    return rows


# -- output ---------------------------------------------------------------------------------
def _num(v: float, unit: str) -> str:
    if math.isnan(v):
        return "-"
    if unit == "ratio":
        return f"{v * 100:+.1f}%"
    if abs(v) >= 100:
        return f"{v:,.0f}{'' if unit in ('', 'tps') else ' ' + unit}"
    return f"{v:.3g}{'' if unit in ('', 'tps') else ' ' + unit}"


def _diff(row: Row) -> str:
    d = row.difference
    if row.unit == "ratio":  # differences of ratios are percentage points
        base = f"{d.diff * 100:+.1f} pp"
        ci = "" if math.isnan(d.low) else f" [{d.low * 100:+.1f}, {d.high * 100:+.1f}]"
        return base + ci
    rel = row.relative
    base = f"{d.diff:+.3g}" + ("" if math.isnan(rel) else f" ({rel * 100:+.1f}%)")
    ci = "" if math.isnan(d.low) else f" [{d.low:+.3g}, {d.high:+.3g}]"
    return base + ci


def _cell(s: Summary, unit: str) -> str:
    if s.n == 0:
        return "-"
    sd = "" if math.isnan(s.sd) else f" ±{_num(s.sd, unit).lstrip('+')}"
    return f"{_num(s.mean, unit)}{sd} (n={s.n})"


def render_table(rows: list[Row], before_label: str, after_label: str) -> str:
    header = ("quantity", "series", f"before {before_label}", f"after {after_label}",
              "after-before [95% CI]", "verdict")
    table: list[tuple[str, ...]] = []
    group = None
    lines: list[str] = []
    for r in rows:
        if r.group != group:
            group = r.group
            table.append((f"== {group}" + (" (SIMULATED NDB)" if r.simulated else ""),
                          "", "", "", "", ""))
        series = ",".join(f"{k}={v}" for k, v in r.series.items() if v)
        table.append((r.title, series, _cell(r.before, r.unit), _cell(r.after, r.unit),
                      _diff(r), r.verdict))
    widths = [max(len(str(row[i])) for row in [header, *table]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines.append(fmt.format(*header))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(fmt.format(*row) for row in table)
    return "\n".join(lines)


def rows_json(rows: list[Row]) -> list[dict]:
    out = []
    for r in rows:
        d = asdict(r)
        d["relative"] = r.relative
        out.append(json.loads(json.dumps(d, default=str).replace("NaN", "null")))
    return out


def save_samples(path: Path, samples: Samples, period: Period, meta: dict) -> None:
    data = {"period": {"start": period.start, "end": period.end}, "meta": meta,
            "samples": {q: [{"series": dict(k), "values": v} for k, v in per.items()]
                        for q, per in samples.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def load_samples(path: Path) -> tuple[Samples, Period]:
    data = json.loads(path.read_text())
    samples: Samples = {q: {tuple(item["series"].items()): item["values"] for item in per}
                        for q, per in data["samples"].items()}
    return samples, Period(data["period"]["start"], data["period"]["end"])
