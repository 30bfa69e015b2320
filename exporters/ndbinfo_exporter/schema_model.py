"""The vocabulary the ndbinfo catalogue is written in: the version profiles and their
order, a view column (its type, unit, decode and the versions that have it), a hidden base
table and a view. Pure data types and small pure functions (schema.py uses them to describe
every view)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

I = "INT UNSIGNED"  # noqa: E741 - the reference's own notation (kernel Number)
B = "BIGINT UNSIGNED"  # kernel Number64
S = "VARCHAR(512)"  # kernel String
BIT_OP = "BIGINT(21) UNSIGNED"  # a view column computed with & or >>

# short version profiles the lab and tests use -> the release each one stands for
PROFILES: dict[str, str] = {"7.5": "7.5.10", "7.6": "7.6.6", "8.0": "8.0.40", "8.4": "8.4.3",
                            "9.x": "9.6.0"}
SENDBUFFER_SINCE = "8.0.38"


def version_tuple(version: str) -> tuple[int, ...]:
    """'7.6.6' -> (7, 6, 6); a profile name ('7.6') maps to its release first."""
    v = PROFILES.get(version, version)
    v = v.split("-")[0]
    try:
        return tuple(int(p) for p in v.split("."))
    except ValueError:
        raise ValueError(f"not an NDB version: {version!r} (e.g. 7.6 or 8.0.37)") from None


def at_least(version: str, since: str | None) -> bool:
    return since is None or version_tuple(version) >= version_tuple(since)


def before(version: str, until: str | None) -> bool:
    return until is None or version_tuple(version) < version_tuple(until)


@dataclass(frozen=True)
class Column:
    """A view column. `type` is what DESC / information_schema shows for the view column.

    `expr` is the SQL the view computes it with (default: the base column of the same
    name); `decode` the CASE map of an enum column (value -> text, `decode_else` for the rest,
    None = NULL); `since`/`until` bound the versions that have it (until is exclusive).
    """

    name: str
    type: str
    unit: str | None = None
    expr: str | None = None
    source: str | None = None  # base column a decode reads
    decode: tuple[tuple[int, str], ...] | None = None
    decode_else: str | None = None
    since: str | None = None
    until: str | None = None
    nullable: bool = True
    help: str = ""

    def in_version(self, version: str) -> bool:
        return at_least(version, self.since) and before(version, self.until)

    def decode_map(self) -> dict[int, str]:
        return dict(self.decode or ())


def enum(name: str, source: str, values: Iterable[tuple[int, str]], other: str | None,
         **kw: object) -> Column:
    """A CASE-decoded column: VARCHAR(longest literal), NOT NULL when there is an ELSE text."""
    values = tuple(values)
    longest = max(len(v) for _, v in values)
    if other is not None:
        longest = max(longest, len(other))
    return Column(name, f"VARCHAR({longest})", source=source, decode=values,
                  decode_else=other, nullable=other is None, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class BaseTable:
    name: str  # ndb$...
    columns: tuple[tuple[str, str], ...]  # (name, I|B|S)
    since: str | None = None
    # per-column since-version where it differs from the table's
    column_since: tuple[tuple[str, str], ...] = ()

    def columns_for(self, version: str) -> list[tuple[str, str]]:
        since = dict(self.column_since)
        return [(n, t) for n, t in self.columns if at_least(version, since.get(n))]


@dataclass(frozen=True)
class View:
    name: str
    base: str  # the hidden base table (first in FROM)
    since: str
    columns: tuple[Column, ...]
    base_columns: tuple[tuple[str, str], ...] = ()  # empty: same as the view's (SELECT *)
    base_column_since: tuple[tuple[str, str], ...] = ()
    tail: str = ""  # FROM ... (default: FROM `<base>`), WHERE, GROUP BY, ORDER BY
    distinct: bool = False
    also_bases: tuple[str, ...] = ()  # more base tables with the same columns (`_all`)
    help: str = ""
    until_where: tuple[tuple[str, str], ...] = ()  # (since, WHERE) per version; last wins

    def columns_for(self, version: str) -> list[Column]:
        return [c for c in self.columns if c.in_version(version)]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


def plain(names: str, typ: str, unit: str | None = None) -> list[Column]:
    return [Column(n, typ, unit) for n in names.split()]
