"""Building metric families from rows: NULL-safe, de-duplicated, one family per name.

Samples are kept as the rendered label body (`node_id="1",thr_no="2"`), so a row's labels
are formatted once and shared by every family fed from that row; at 50k series the generic
prometheus_client path costs more than the SQL itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import Decimal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.samples import Sample

_LABEL_RE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def num(value: object) -> float | None:
    """A column value as a float; None (SQL NULL or not a number) means "omit the sample"."""
    if value is None:
        return None
    cls = type(value)
    if cls is int or cls is float or cls is Decimal or cls is bool:
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def label(value: object) -> str:
    """A label value, escaped for the text format (NULL becomes the empty string)."""
    if value is None:
        return ""
    if type(value) is int:
        return str(value)
    s = str(value)
    if "\\" in s or '"' in s or "\n" in s:
        s = s.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return s


def state_set(known: Sequence[str], current: str) -> Iterator[tuple[str, int]]:
    """A state as a set of 0/1 series: every known state (so a change flips values instead
    of creating and dropping series), plus the current one if the view reports a new one."""
    for s in (*known, *((current,) if current and current not in known else ())):
        yield s, 1 if s == current else 0


def body(names: Sequence[str], values: Sequence[object]) -> str:
    """The rendered label set for these names and (raw) values."""
    return ",".join(f'{n}="{label(v)}"' for n, v in zip(names, values, strict=True))


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


class Family:
    def __init__(self, name: str, doc: str, labels: Sequence[str] = (),
                 counter: bool = False) -> None:
        if counter and name.endswith("_total"):
            name = name[: -len("_total")]  # as prometheus_client: the sample adds it back
        self.name, self.doc, self.labels, self.counter = name, doc, list(labels), counter
        # keyed by the rendered labels, so a duplicate row cannot make a duplicate series
        self.values: dict[str, float] = {}

    def add(self, labelvalues: Sequence[object], value: object, scale: float = 1.0) -> None:
        v = num(value)
        if v is not None:
            self.values[body(self.labels, labelvalues)] = v * scale

    def add_body(self, rendered: str, value: object) -> None:
        """`add` for a label set already rendered with `body` (in this family's order)."""
        if value is not None:
            v = num(value)
            if v is not None:
                self.values[rendered] = v

    @property
    def sample_name(self) -> str:
        return self.name + "_total" if self.counter else self.name

    @property
    def samples(self) -> list[Sample]:
        n = self.sample_name
        return [Sample(n, {k: _unescape(v) for k, v in _LABEL_RE.findall(b)}, v)
                for b, v in self.values.items()]

    def encode(self, out: list[str]) -> None:
        """Text exposition format 0.0.4."""
        n = self.sample_name
        doc = self.doc.replace("\\", "\\\\").replace("\n", "\\n")
        out.append(f"# HELP {n} {doc}\n# TYPE {n} {'counter' if self.counter else 'gauge'}\n")
        if not self.labels:
            out.extend(f"{n} {v!r}\n" for v in self.values.values())
            return
        prefix = n + "{"
        out.extend(f"{prefix}{b}}} {v!r}\n" for b, v in self.values.items())

    def metric(self) -> Metric:
        cls = CounterMetricFamily if self.counter else GaugeMetricFamily
        m = cls(self.name, self.doc, labels=self.labels)
        for s in self.samples:
            m.add_metric([s.labels[k] for k in self.labels], s.value)
        return m


class Families:
    """The families one collector fills during a scrape."""

    def __init__(self) -> None:
        self._by_name: dict[str, Family] = {}

    def gauge(self, name: str, doc: str, labels: Sequence[str] = ()) -> Family:
        return self._get(name, doc, labels, False)

    def counter(self, name: str, doc: str, labels: Sequence[str] = ()) -> Family:
        return self._get(name, doc, labels, True)

    def _get(self, name: str, doc: str, labels: Sequence[str], counter: bool) -> Family:
        f = self._by_name.get(name)
        if f is None:
            f = self._by_name[name] = Family(name, doc, labels, counter)
        return f

    def __iter__(self) -> Iterator[Family]:
        return iter(self._by_name.values())
