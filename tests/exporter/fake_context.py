"""A fake collector context: rows in, samples out, in milliseconds, with no SQL node.

It is a fake, named as one: the rows live in an in-memory SQLite database instead of an
SQL node, and each collector's own SQL runs against them. Every view is created with the
columns the exporter's catalogue (`ndbinfo_exporter.schema`) gives it in the chosen version,
so a collector that reads a column or a view the version lacks fails here as it would on a
server (a missing view is `ViewUnavailable`, a missing column `SchemaChanged`). What SQLite
lacks of MySQL's dialect (CONCAT, CONCAT_WS, IF, FIELD, and GROUP_CONCAT's SEPARATOR
keyword) is supplied here. The real dialect, types and grant are proven against MariaDB by
tests/test_exporter.py (tools lane); this is the cheap layer under it.

    ss = collect("memoryusage", {"memoryusage": [{"node_id": 1, "memory_type": "Data memory",
                                                 "used": 10, "total": 20}]})
    assert val(ss, "ndb_memory_used_bytes", node_id=1, memory_type="Data memory") == 10
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence

from helpers import Samples
from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors import BY_NAME, Context
from ndbinfo_exporter.db import SchemaChanged, ViewUnavailable
from ndbinfo_exporter.families import Families
from ndbinfo_exporter.state import ExporterState, RestartLedger

Rows = Mapping[str, Iterable[Mapping[str, object]]]
_SEPARATOR = re.compile(r"\s+SEPARATOR\s+('[^']*')", re.IGNORECASE)


def _text(value: object) -> str:
    # MySQL's CONCAT renders integers without a fraction and reals as the shortest decimal
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _concat(*args: object) -> str | None:
    return None if any(a is None for a in args) else "".join(_text(a) for a in args)


def _concat_ws(sep: str, *args: object) -> str:
    return sep.join(_text(a) for a in args if a is not None)


def _if(cond: object, yes: object, no: object) -> object:
    return yes if cond else no


def _field(value: object, *names: object) -> int:
    return next((i for i, n in enumerate(names, 1) if n == value), 0)


class FakeDatabase:
    """What `Context` asks of `ndbinfo_exporter.db.Database`, answered from SQLite."""

    def __init__(self, rows: Rows, version: str = "8.0", absent: Sequence[str] = ()) -> None:
        self.version = schema.PROFILES.get(version, version)
        self.query_timeout = 10.0
        self.mariadb = True
        self.queries: list[str] = []  # every statement a collector ran, for tests to read
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("ATTACH DATABASE ':memory:' AS ndbinfo")
        for name, n, fn in (("CONCAT", -1, _concat), ("CONCAT_WS", -1, _concat_ws),
                            ("IF", 3, _if), ("FIELD", -1, _field)):
            self.conn.create_function(name, n, fn, deterministic=True)
        self.views: dict[str, list[str]] = {
            v.name: [c.name.lower() for c in v.columns_for(self.version)]
            for v in schema.views_for(self.version) if v.name not in absent}
        for view, cols in self.views.items():
            self.conn.execute(f"CREATE TABLE ndbinfo.{view} ({', '.join(cols)})")
        for view, view_rows in rows.items():
            if view not in self.views:
                raise KeyError(f"{view}: no such view in NDB {self.version}")
            for row in view_rows:
                row = {k.lower(): v for k, v in row.items()}
                unknown = set(row) - set(self.views[view])
                if unknown:
                    raise KeyError(f"{view} has no column {sorted(unknown)} in NDB"
                                   f" {self.version}")
                self.conn.execute(f"INSERT INTO ndbinfo.{view} ({', '.join(row)}) VALUES"
                                  f" ({', '.join('?' * len(row))})", tuple(row.values()))

    def has(self, view: str, column: str | None = None) -> bool:
        cols = self.views.get(view)
        return cols is not None and (column is None or column.lower() in cols)

    def _run(self, sql: str) -> tuple[list[str], list[tuple]]:
        self.queries.append(sql)
        try:
            cur = self.conn.execute(_SEPARATOR.sub(r", \1", sql))
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                raise ViewUnavailable(str(exc)) from exc
            if "no such column" in str(exc):
                raise SchemaChanged(str(exc)) from exc
            raise
        return [d[0].lower() for d in cur.description or ()], cur.fetchall()

    def query(self, sql: str, timeout: float, aggregate: bool = False) -> list[tuple]:
        return self._run(sql)[1]

    def query_named(self, sql: str, timeout: float) -> list[dict[str, object]]:
        names, rows = self._run(sql)
        return [dict(zip(names, r, strict=True)) for r in rows]


def fake_context(rows: Rows, version: str = "8.0", state: ExporterState | None = None,
                 now: float = 1_000_000.0, absent: Sequence[str] = ()) -> Context:
    """A `Context` over these view rows ({view: [{column: value}]}); views not named are
    present and empty, those in `absent` do not exist."""
    return Context(db=FakeDatabase(rows, version, absent),  # type: ignore[arg-type]
                   deadline=time.monotonic() + 60,
                   state=state or ExporterState(ledger=RestartLedger(None)), now=now)


def run(name: str, ctx: Context) -> Samples:
    """Collector `name` over `ctx`, as the samples it produced."""
    fam = Families()
    BY_NAME[name].collect(ctx, fam)
    return Samples.of_families(fam)


def collect(name: str, rows: Rows, version: str = "8.0", **kw: object) -> Samples:
    return run(name, fake_context(rows, version, **kw))  # type: ignore[arg-type]
