"""Building metric families from rows: NULL-safe, de-duplicated, one family per name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.samples import Sample


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
    return "" if value is None else str(value)


def labels_of(values: Sequence[object]) -> tuple[str, ...]:
    if None in values:
        return tuple(map(label, values))
    return tuple(map(str, values))


class Family:
    def __init__(self, name: str, doc: str, labels: Sequence[str] = (),
                 counter: bool = False) -> None:
        if counter and name.endswith("_total"):
            name = name[: -len("_total")]  # as prometheus_client: the sample adds it back
        self.name, self.doc, self.labels, self.counter = name, doc, list(labels), counter
        # keyed by label values, so a duplicate row cannot produce a duplicate series
        self.values: dict[tuple[str, ...], float] = {}

    def add(self, labelvalues: Sequence[object], value: object, scale: float = 1.0) -> None:
        v = num(value)
        if v is not None:
            self.values[labels_of(labelvalues)] = v * scale

    def add_labelled(self, labelvalues: tuple[str, ...], value: object) -> None:
        """`add` for label values already made by `labels_of` (hot loops reuse them)."""
        v = num(value)
        if v is not None:
            self.values[labelvalues] = v

    @property
    def sample_name(self) -> str:
        return self.name + "_total" if self.counter else self.name

    @property
    def samples(self) -> list[Sample]:
        n = self.sample_name
        return [Sample(n, dict(zip(self.labels, lv, strict=True)), v)
                for lv, v in self.values.items()]

    def encode(self, out: list[str], escaped: dict[str, str]) -> None:
        """Text exposition format 0.0.4, written directly: prometheus_client's generic
        encoder costs more than the SQL itself at 50k series."""
        n = self.sample_name
        doc = self.doc.replace("\\", "\\\\").replace("\n", "\\n")
        out.append(f"# HELP {n} {doc}\n# TYPE {n} {'counter' if self.counter else 'gauge'}\n")
        if not self.labels:
            out.extend(f"{n} {v!r}\n" for v in self.values.values())
            return
        fmt = (n + "{{" + ",".join(f'{k}="{{}}"' for k in self.labels) + "}} {!r}\n").format
        for lv, v in self.values.items():
            try:
                out.append(fmt(*[escaped[s] for s in lv], v))
            except KeyError:
                for s in lv:
                    if s not in escaped:
                        escaped[s] = (s.replace("\\", "\\\\").replace("\n", "\\n")
                                      .replace('"', '\\"')
                                      if any(c in s for c in '\\\n"') else s)
                out.append(fmt(*[escaped[s] for s in lv], v))

    def metric(self) -> Metric:
        cls = CounterMetricFamily if self.counter else GaugeMetricFamily
        m = cls(self.name, self.doc, labels=self.labels)
        for lv, v in self.values.items():
            m.add_metric(list(lv), v)
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
