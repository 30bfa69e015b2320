"""Before/after comparison of what the stack measures, with 95% intervals and a verdict.

Each quantity is a gauge set once per event it describes (a loadgen window, an A/B pair, a
completed restart, a recovery). An event is a change of the quantity's event series (the
window's end time, the pair's round number, the restart's completion time, the recovery's
end time); the quantity's value at each event is one sample, so three restarts with the
same total count three times and a phase that took 0 s counts as a 0. The two periods'
samples are compared with Welch's t interval.

Whether a figure is simulated is read from its series, never assumed from what it measures:
a series labelled `simulated="true"` (the lab's NDB simulator sets it on everything it
serves) is its own row, marked SIMULATED; the same quantity from a real cluster is not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from clusterscope.analysis.periods import Period
from clusterscope.clients.vm import VM
from clusterscope.inference import Difference, Summary, welch


@dataclass(frozen=True)
class Quantity:
    key: str            # stable id, used in JSON and pinned baselines
    group: str          # table section
    title: str
    expr: str           # PromQL; `{experiment}` is replaced by an experiment matcher
    unit: str
    better: str         # "higher" or "lower"
    by: tuple[str, ...]  # the labels that name a row
    experiment_filter: bool = False
    # A number: the series is sampled at that step and every point counts (continuous
    # signals like CPU). None: one sample per event (see `event`).
    step: float | None = None
    # PromQL for the series whose change marks an event, matched to the quantity's series
    # on the labels both have. None: the quantity's own distinct values are the events
    # (only right when two events never set the same value).
    event: str | None = None
    aggregate: tuple[str, ...] = ()  # `by` values that sum others (e.g. for_local_recovery)
    # the samples are a series whose neighbours are alike (the loadgen's rounds): their
    # mean's SE allows for it (Newey-West) instead of assuming independent samples
    serial: bool = False


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
    aggregate: bool = False  # sums other rows (an aggregate restart phase)

    @property
    def relative(self) -> float:
        if not self.before.mean or math.isnan(self.before.mean):
            return math.nan
        return self.difference.diff / abs(self.before.mean)


Samples = dict[str, dict[tuple[tuple[str, str], ...], list[float]]]


SIMULATED_LABEL = "simulated"


def series_key(metric: dict[str, str], by: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The labels that name a row; a simulated series (`simulated="true"`) keeps that label
    in its key, so it never shares a row with real data and its row is marked."""
    key = tuple((label, metric.get(label, "")) for label in by)
    if metric.get(SIMULATED_LABEL) == "true" and SIMULATED_LABEL not in by:
        key += ((SIMULATED_LABEL, "true"),)
    return key


def is_simulated(series: dict[str, str]) -> bool:
    return series.get(SIMULATED_LABEL) == "true"


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


def event_times(values: list[tuple[float, str]], since: float, query_start: float,
                step: float, until: float = math.inf,
                stamps: list[tuple[float, str]] | None = None) -> list[float]:
    """The query steps at which an event series changed (or first appeared after the
    query's start), for the events in [since, until). A gap with the same value afterwards
    (an exporter restart) is no event.

    An event belongs to the period in which its sample was taken: with `stamps` (the
    series' `timestamp()` at the same steps) that is the sample's own time, not the step,
    which can lie past the end of a period; so two periods that abut never both count the
    event taken just before their boundary (the demo's before/after comparison)."""
    taken = {float(t): float(v) for t, v in stamps or []}
    out: list[float] = []
    last: str | None = None
    for i, (t, raw) in enumerate(values):
        t = float(t)
        appeared = i == 0 and t > query_start + step
        if (raw != last and last is not None) or appeared:
            if since <= taken.get(t, t) < until:
                out.append(t)
        last = raw
    return out


def _labels(metric: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in metric.items() if k != "__name__"}


def _matches(a: dict[str, str], b: dict[str, str]) -> bool:
    return all(a[k] == b[k] for k in a.keys() & b.keys())


def value_at(values: list[tuple[float, str]], t: float, within: float) -> float | None:
    """The first non-NaN value at or after t, no later than t + within."""
    for ts, raw in values:
        ts = float(ts)
        if t <= ts <= t + within and raw != "NaN":
            return float(raw)
    return None


def event_samples(series: list[dict], events: list[dict], period: Period, query_start: float,
                  step: float, stamps: list[dict] | None = None
                  ) -> list[tuple[dict, list[float]]]:
    """For each event series' change, the value of every matching quantity series then:
    (the quantity series' labels, its samples). `stamps`: timestamp() of the event series."""
    out = [(r["metric"], _labels(r["metric"]), r["values"], []) for r in series]
    taken = {frozenset(_labels(r["metric"]).items()): r["values"] for r in stamps or []}
    for ev in events:
        ev_labels = _labels(ev["metric"])
        for t in event_times(ev["values"], period.start, query_start, step, period.end,
                             taken.get(frozenset(ev_labels.items()))):
            for _, labels, values, samples in out:
                if _matches(ev_labels, labels):
                    v = value_at(values, t, within=max(30.0, 6 * step))
                    if v is not None:
                        samples.append(v)
    return [(metric, samples) for metric, _, _, samples in out if samples]


def collect(vm: VM, quantities: Iterable[Quantity], period: Period,
            experiment: str | None = None) -> Samples:
    fine = max(1.0, (period.end - period.start) / 10000)
    samples: Samples = {}
    for q in quantities:
        matcher = f'experiment="{experiment}"' if experiment and q.experiment_filter else ""
        expr = q.expr.replace("{experiment}", matcher).replace(",}", "}").replace("{,", "{")
        per_series: dict[tuple[tuple[str, str], ...], list[float]] = {}
        start = period.start - (0.0 if q.step else LOOKBEHIND)
        result = vm.query_range(expr, start, period.end, q.step or fine)
        if q.event and not q.step:
            events = vm.query_range(q.event, start, period.end, fine)
            stamps = vm.query_range(f"timestamp({q.event})", start, period.end, fine)
            for metric, values in event_samples(result, events, period, start, fine, stamps):
                per_series.setdefault(series_key(metric, q.by), []).extend(values)
            for r in result:  # a series without events in the period still names its row
                per_series.setdefault(series_key(r["metric"], q.by), [])
        else:
            for r in result:
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
        return "too few samples"
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
            sb = Summary.of(b.get(key, []), q.serial)
            sa = Summary.of(a.get(key, []), q.serial)
            if sb.n == 0 and sa.n == 0:
                continue  # seen only outside both periods' events: nothing to say
            d = welch(sb, sa, confidence)
            aggregate = any(v in q.aggregate for _, v in key)
            rows.append(Row(q.key, q.group, q.title, dict(key), q.unit, is_simulated(dict(key)),
                            sb, sa, d, verdict(q, sb, sa, d), aggregate))
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
    if row.before.n == 0 or row.after.n == 0 or math.isnan(d.diff):
        return "-"
    if row.unit == "ratio":  # differences of ratios are percentage points
        base = f"{d.diff * 100:+.1f} pp"
        ci = "" if math.isnan(d.low) else f" [{d.low * 100:+.1f}, {d.high * 100:+.1f}]"
        return base + ci
    rel = row.relative
    pct = "" if math.isnan(rel) else (f" ({rel * 100:+.0f}%)" if abs(rel) >= 0.1
                                      else f" ({rel * 100:+.1f}%)")
    ci = "" if math.isnan(d.low) else f" [{_signed(d.low)}, {_signed(d.high)}]"
    return _signed(d.diff) + pct + ci


def _signed(v: float) -> str:
    """+1,060 rather than +1.06e+03: three significant digits, never an exponent."""
    return f"{v:+,.0f}" if abs(v) >= 1000 else f"{v:+.3g}"


def _cell(s: Summary, unit: str) -> str:
    if s.n == 0:
        return "-"
    sd = "" if math.isnan(s.sd) else f" ±{_num(s.sd, '').lstrip('+')}"
    if unit == "ratio" and sd:
        sd = f" ±{s.sd * 100:.1f}"
    return f"{_num(s.mean, unit)}{sd} (n={s.n})"


# the cells of the table, for other listings of rows (clusterscope changes)
cell = _cell
difference_text = _diff

VERDICT_ORDER = {"worse": 0, "better": 1, "no significant change": 2, "too few samples": 3,
                 "only one period has data": 4, "no data": 5}
SHORT_VERDICT = {"no significant change": "no sig. change",
                 "only one period has data": "one period only"}
TABLE_WIDTH = 120


def _rank(r: Row) -> tuple:
    change = r.difference.diff if r.unit == "ratio" else r.relative
    return (VERDICT_ORDER.get(r.verdict, 9), -abs(change) if math.isfinite(change) else 0.0)


def ranked(rows: list[Row]) -> list[list[Row]]:
    """Rows grouped by quantity, each group changed rows first (verdict, then size of the
    change), the groups in the order of their most telling row."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in sorted(rows, key=_rank):
        groups.setdefault((r.group, r.title), []).append(r)
    return list(groups.values())


def _series(labels: dict[str, str], cluster: bool = False) -> str:
    """A row's labels, short; the cluster only where rows of several clusters are shown
    (the header names a single one). The simulated label is the block's or row's mark."""
    short = {"node_id": "node {}", "node": "node {}", "phase": "{}", "baseline": "vs {}",
             "cluster": "{}", "experiment": "{}", "variant": "{}", "estimand": "[{}]"}
    return " ".join(short.get(k, f"{k}={{}}").format(v) for k, v in labels.items()
                    if v and k != SIMULATED_LABEL and (cluster or k != "cluster"))


def clusters(rows: list[Row]) -> list[str]:
    return sorted({r.series["cluster"] for r in rows if r.series.get("cluster")})


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "~"


def _widths(rows: list[tuple[str, ...]], width: int) -> list[int]:
    """Each column as wide as its widest cell; the series names give way first."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    room = width - sum(widths[1:]) - 2 * (len(widths) - 1)
    widths[0] = max(12, min(widths[0], room))
    return widths


def render_table(rows: list[Row], before_label: str, after_label: str, *,
                 show_all: bool = False, width: int = TABLE_WIDTH,
                 source: str | None = None) -> str:
    """The comparison as text, no wider than `width` columns: one block per quantity, the
    rows that changed first. Aggregate rows (a phase summing others) only with show_all.
    A block of simulated series says SIMULATED in its title (a row, where a block mixes
    them); `source` (the VictoriaMetrics read) and the clusters head the table."""
    header = ("series", "before", "after", "after-before [95% CI]", "verdict")
    blocks: list[tuple[str, list[tuple[str, ...]]]] = []
    hidden = 0
    names = clusters(rows)
    for group in ranked(rows):
        shown = [r for r in group if show_all or not r.aggregate]
        hidden += len(group) - len(shown)
        if not shown:
            continue
        r0 = shown[0]
        every_sim = all(r.simulated for r in shown)
        # the cluster goes into the title when the block has one, into each row otherwise
        mine = clusters(shown)
        title = (f"== {r0.group}: {r0.title}"
                 + (f" on {mine[0]}" if len(names) > 1 and len(mine) == 1 else "")
                 + (" (SIMULATED)" if every_sim else ""))
        cells = [(("(sum) " if r.aggregate else "")
                  + ("SIMULATED " if r.simulated and not every_sim else "")
                  + _series(r.series, cluster=len(mine) > 1),
                  _cell(r.before, r.unit), _cell(r.after, r.unit), _diff(r),
                  SHORT_VERDICT.get(r.verdict, r.verdict)) for r in shown]
        blocks.append((title, cells))
    widths = _widths([header, *(c for _, cells in blocks for c in cells)], width)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [f"before {before_label}", f"after  {after_label}"]
    if source:
        lines.append(f"read   {source}")
    if names:
        lines.append(("cluster " if len(names) == 1 else "clusters ") + ", ".join(names))
    lines += ["", fmt.format(*header).rstrip(), "  ".join("-" * w for w in widths)]
    for title, cells in blocks:
        lines.append(title)
        # columns aligned across blocks while they fit; else a block gets its own widths,
        # so that no row loses the end of its verdict to the width (latency cells are
        # twice as wide as throughput's)
        own = widths if sum(widths) + 2 * (len(widths) - 1) <= width else _widths(
            [header, *cells], width)
        lines.extend("  ".join(f"{_fit(c, w):<{w}}" for c, w in zip(row, own, strict=True))
                     .rstrip() for row in cells)
    if hidden:
        lines.append(f"({hidden} aggregate rows left out; --all shows them)")
    elif any(r.aggregate for r in rows):
        lines.append("(sum): an aggregate of other rows (e.g. for_local_recovery)")
    return "\n".join(_fit(line, width) for line in lines)


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
