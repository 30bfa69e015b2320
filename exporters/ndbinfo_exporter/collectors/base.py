"""What a collector is, what it gets to work with during one scrape, and how it declares
the metric families it fills."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ndbinfo_exporter.db import Database
from ndbinfo_exporter.families import Families, Family, Histogram
from ndbinfo_exporter.state import ExporterState

# between and after the lines of `Context.lines`: row_sql's text holds digits, labels of
# integer columns, spaces and (last) a kernel name column (thread names, log types), never
# these
LINE_SEP, LINE_END = ";", "|"


@dataclass
class Context:
    """Per-scrape access to the database, bounded by the per-query timeout and the budget."""

    db: Database
    deadline: float  # time.monotonic() by which the whole scrape must be done
    state: ExporterState
    now: float  # wall-clock time of the scrape
    timeouts: int = 0

    def query(self, sql: str, aggregate: bool = False) -> list[tuple]:
        return self.db.query(sql, self._timeout(), aggregate=aggregate)

    def lines(self, expr: str, tail: str, per: str = "node_id") -> list[str]:
        """The text of `SELECT <expr> <tail>` row by row (`families.row_sql` builds `expr`),
        fetched as one string per `per` value (GROUP_CONCAT): the driver then decodes a few
        hundred rows instead of one per link or thread (21k transporters rows at 144 data
        nodes). `tail` is FROM [WHERE]. Each line ends with LINE_END, so a group cut short
        at group_concat_max_len (the session asks for 16 MiB; a server that refused keeps
        MySQL's 1 KiB) shows as a last line without it or fewer lines than its COUNT(*):
        then the rows are read one by one instead, nothing is lost."""
        rows = self.query(f"SELECT COUNT(*), GROUP_CONCAT(CONCAT({expr}, '{LINE_END}')"
                          f" SEPARATOR '{LINE_SEP}') {tail} GROUP BY {per}")
        out: list[str] = []
        for n, text in rows:
            parts = text.split(LINE_SEP) if text else []
            if len(parts) != n or any(p[-1:] != LINE_END for p in parts):
                return [r[0] for r in self.query(f"SELECT {expr} {tail}")]
            out.extend(p[:-1] for p in parts)
        return out

    def rows(self, sql: str) -> list[dict[str, object]]:
        """Rows by (lower-case) column name."""
        return self.db.query_named(sql, self._timeout())

    def _timeout(self) -> float:
        return min(self.db.query_timeout, self.deadline - time.monotonic())

    def col(self, view: str, column: str) -> str:
        """The column if this version's view has it, else NULL (so its samples are omitted)."""
        return column if self.db.has(view, column) else "NULL"

    def columns(self, view: str) -> list[str]:
        return list(self.db.views.get(view, []))


@dataclass(frozen=True)
class Collector:
    name: str
    help: str
    views: tuple[str, ...]  # all must exist, else the collector is unsupported
    collect: Callable[[Context, Families], None]
    default: bool = True
    # scans per-fragment views (rows grow with tables x fragments x replicas): run every
    # --scrape.slow-interval, not every scrape
    slow: bool = False


# Each collector module declares its queries (`SQL_<VIEW>`) and its families' descriptors at
# the top, as prometheus/mysqld_exporter's collectors declare their query constant and
# prometheus.NewDesc values (collector/global_status.go): what a collector reads and serves
# is found without reading its function.


@dataclass(frozen=True)
class Desc:
    """A gauge or counter family: name, help and label names. `of` is this scrape's family
    (created on first use, as `Families.gauge`/`counter`)."""

    name: str
    help: str
    labels: tuple[str, ...] = ()
    counter: bool = False

    def of(self, fam: Families) -> Family:
        make = fam.counter if self.counter else fam.gauge
        return make(self.name, self.help, self.labels)


@dataclass(frozen=True)
class HistogramDesc:
    """A histogram family (`Families.histogram`): name, help and label names (`le` aside)."""

    name: str
    help: str
    labels: tuple[str, ...] = ()

    def of(self, fam: Families) -> Histogram:
        return fam.histogram(self.name, self.help, self.labels)
