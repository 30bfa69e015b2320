"""Building metric families from rows: NULL-safe, de-duplicated, one family per name.

Samples are kept as the rendered label body (`node_id="1",thr_no="2"`), so a row's labels
are formatted once and shared by every family fed from that row; at 50k series the generic
prometheus_client path costs more than the SQL itself.

The collectors of the views with many rows (transporters, counters, threads, logs, write
speeds) go further: the SQL node renders a row's integer labels and its values as one text
column (`row_sql`), so the driver decodes one string per row instead of one value per column
and the value goes out as the server wrote it, with no float round trip. At 144 data nodes
the per-column decoding in PyMySQL was most of the scrape (clusterscope bench exporter).
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


def row_sql(labels: Sequence[tuple[str, str]], values: Sequence[str]) -> str:
    """One text column for a row: the rendered label body of integer columns, then each
    value, separated by spaces; NULL becomes the empty string (so its sample is omitted).

    `labels` are (label name, SQL expression of an integer column): integers need no
    escaping and contain no space. CONCAT_WS and IFNULL are the same in MySQL 5.7/8.x and
    MariaDB. Split the result with `split_row`.
    """
    parts = []
    for i, (name, expr) in enumerate(labels):
        parts.append(f"'{',' if i else ''}{name}=\"'")
        parts.append(f"IFNULL({expr}, '')")
        parts.append("'\"'")
    body_sql = f"CONCAT({', '.join(parts)})" if labels else "''"
    if not values:
        return body_sql
    cols = ", ".join(f"IFNULL({v}, '')" for v in values)
    return f"CONCAT_WS(' ', {body_sql}, {cols})"


def split_row(text: str) -> list[str]:
    """`row_sql`'s column: [label body, value text or '' for NULL, ...]."""
    return text.split(" ")


def fill(families: Sequence[Family | None], rows: Sequence[Sequence[str]],
         suffixes: Sequence[str] | None = None) -> None:
    """Family i gets value `row[i + 1]` under the label body `row[0]` (+ `suffixes[i]`) of
    every row whose value is not '' (NULL). Filled a family at a time in one comprehension:
    at 300k samples a call per sample costs more than the SQL (clusterscope bench
    exporter). A None family skips its column."""
    for i, f in enumerate(families, 1):
        if f is None:
            continue
        suffix = suffixes[i - 1] if suffixes else ""
        if suffix:
            f.values.update({r[0] + suffix: r[i] for r in rows if r[i]})
        else:
            f.values.update({r[0]: r[i] for r in rows if r[i]})


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


class Family:
    def __init__(self, name: str, doc: str, labels: Sequence[str] = (),
                 counter: bool = False) -> None:
        if counter and name.endswith("_total"):
            name = name[: -len("_total")]  # as prometheus_client: the sample adds it back
        self.name, self.doc, self.labels, self.counter = name, doc, list(labels), counter
        # keyed by the rendered labels, so a duplicate row cannot make a duplicate series;
        # a value is a float, or the number as the SQL node rendered it (`add_text`)
        self.values: dict[str, float | str] = {}
        self._encoded: bytes | None = None

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

    def add_text(self, rendered: str, text: str) -> None:
        """`add_body` for a number the SQL node rendered as text ('' for NULL: omitted)."""
        if text:
            self.values[rendered] = text

    @property
    def sample_name(self) -> str:
        return self.name + "_total" if self.counter else self.name

    @property
    def samples(self) -> list[Sample]:
        n = self.sample_name
        return [Sample(n, {k: _unescape(v) for k, v in _LABEL_RE.findall(b)}, float(v))
                for b, v in self.values.items()]

    def encode(self) -> bytes:
        """Text exposition format 0.0.4, as one chunk. A family is complete once its
        collector returned (slow collectors' families are served again unchanged), so the
        chunk is kept: a cached family costs its bytes, not a re-rendering, per scrape."""
        if self._encoded is not None:
            return self._encoded
        n = self.sample_name
        doc = self.doc.replace("\\", "\\\\").replace("\n", "\\n")
        head = f"# HELP {n} {doc}\n# TYPE {n} {'counter' if self.counter else 'gauge'}\n"
        if not self.labels:
            lines = [f"{n} {v}\n" for v in self.values.values()]
        else:
            prefix = n + "{"
            # str(float) is repr(float) in Python 3; text values go out as the server wrote
            # them
            lines = [f"{prefix}{b}}} {v}\n" for b, v in self.values.items()]
        self._encoded = (head + "".join(lines)).encode()
        return self._encoded

    def metric(self) -> Metric:
        cls = CounterMetricFamily if self.counter else GaugeMetricFamily
        m = cls(self.name, self.doc, labels=self.labels)
        for s in self.samples:
            m.add_metric([s.labels[k] for k in self.labels], s.value)
        return m


class Histogram(Family):
    """A Prometheus histogram from a view's per-range counts: cumulative `_bucket`s by
    upper bound, the last range as `+Inf` (the kernel counts everything above the last
    bound in it), and `_count`. No `_sum`: the views give counts per range only."""

    def __init__(self, name: str, doc: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, doc, labels)
        # rendered labels -> [(le text, cumulative count)], the last le "+Inf"
        self.buckets: dict[str, list[tuple[str, float]]] = {}

    def add_ranges(self, rendered: str, ranges: Sequence[tuple[float, object]],
                   per_unit: float = 1.0) -> None:
        """`ranges`: (upper bound, count in that range); NULL counts read as 0, a set with
        no count at all is omitted. Bounds are divided by `per_unit` (1e6: microseconds to
        seconds; a division, so 50 gives le="5e-05", not 4.9999999999999996e-05)."""
        ranges = sorted(ranges, key=lambda r: r[0])
        if not ranges or all(num(c) is None for _, c in ranges):
            return
        total, out = 0.0, []
        for i, (bound, count) in enumerate(ranges):
            total += num(count) or 0.0
            le = "+Inf" if i == len(ranges) - 1 else repr(bound / per_unit)
            out.append((le, total))
        self.buckets[rendered] = out

    @property
    def samples(self) -> list[Sample]:
        out = []
        for b, buckets in self.buckets.items():
            labels = {k: _unescape(v) for k, v in _LABEL_RE.findall(b)}
            out += [Sample(self.name + "_bucket", {**labels, "le": le}, v)
                    for le, v in buckets]
            out.append(Sample(self.name + "_count", labels, buckets[-1][1]))
        return out

    def encode(self) -> bytes:
        if self._encoded is not None:
            return self._encoded
        n = self.name
        doc = self.doc.replace("\\", "\\\\").replace("\n", "\\n")
        lines = [f"# HELP {n} {doc}\n# TYPE {n} histogram\n"]
        for b, buckets in self.buckets.items():
            sep = "," if b else ""
            lines += [f'{n}_bucket{{{b}{sep}le="{le}"}} {v}\n' for le, v in buckets]
            lines.append(f"{n}_count{{{b}}} {buckets[-1][1]}\n")
        self._encoded = "".join(lines).encode()
        return self._encoded


class Families:
    """The families one collector fills during a scrape."""

    def __init__(self) -> None:
        self._by_name: dict[str, Family] = {}

    def gauge(self, name: str, doc: str, labels: Sequence[str] = ()) -> Family:
        return self._get(name, doc, labels, False)

    def counter(self, name: str, doc: str, labels: Sequence[str] = ()) -> Family:
        return self._get(name, doc, labels, True)

    def histogram(self, name: str, doc: str, labels: Sequence[str] = ()) -> Histogram:
        f = self._by_name.get(name)
        if f is None:
            f = self._by_name[name] = Histogram(name, doc, labels)
        assert isinstance(f, Histogram)
        return f

    def _get(self, name: str, doc: str, labels: Sequence[str], counter: bool) -> Family:
        f = self._by_name.get(name)
        if f is None:
            f = self._by_name[name] = Family(name, doc, labels, counter)
        return f

    def __iter__(self) -> Iterator[Family]:
        return iter(self._by_name.values())
