"""Building metric families from rows: NULL-safe, de-duplicated, one family per name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric


def num(value: object) -> float | None:
    """A column value as a float; None (SQL NULL or not a number) means "omit the sample"."""
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def label(value: object) -> str:
    return "" if value is None else str(value)


class Family:
    def __init__(self, name: str, doc: str, labels: Sequence[str] = (),
                 counter: bool = False) -> None:
        self.name, self.doc, self.labels, self.counter = name, doc, list(labels), counter
        # keyed by label values, so a duplicate row cannot produce a duplicate series
        self.samples: dict[tuple[str, ...], float] = {}

    def add(self, labelvalues: Sequence[object], value: object, scale: float = 1.0) -> None:
        v = num(value)
        if v is not None:
            self.samples[tuple(label(x) for x in labelvalues)] = v * scale

    def metric(self) -> Metric:
        cls = CounterMetricFamily if self.counter else GaugeMetricFamily
        m = cls(self.name, self.doc, labels=self.labels)
        for lv, v in self.samples.items():
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

    def __iter__(self) -> Iterator[Metric]:
        for f in self._by_name.values():
            yield f.metric()
