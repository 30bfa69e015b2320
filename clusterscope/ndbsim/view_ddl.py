"""The NDB simulator's DDL, compiled from the exporter's view catalogue.

`ndbinfo_exporter.schema` describes every view once (columns, types, decodes, versions,
the view's FROM/WHERE/GROUP BY); this module turns that into the hidden `ndb$` tables and
the `CREATE VIEW`s a MariaDB serves, so the simulator and the exporter cannot disagree about
a name or a type. It lives with the simulator: the exporter never creates tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ndbinfo_exporter.schema import (
    LOOKUPS,
    BaseTable,
    Column,
    View,
    at_least,
    view,
    views_for,
)


def column_sql(c: Column) -> str:
    """The SQL a view computes a column with."""
    if c.decode is not None:
        whens = " ".join(f"WHEN {k} THEN '{v}'" for k, v in c.decode)
        if c.decode_else is None:
            return f"CASE {c.source or c.name} {whens} ELSE NULL END"
        # MariaDB marks a CASE over a nullable column nullable even with an ELSE text;
        # the IFNULL makes it NOT NULL as MySQL's DESC shows (same values either way)
        other = f"'{c.decode_else}'"
        return f"IFNULL(CASE {c.source or c.name} {whens} ELSE {other} END, {other})"
    return c.expr or f"`{c.name}`"


def base_table(v: View) -> BaseTable:
    """The hidden `ndb$` table under a view."""
    if v.base_columns:
        cols = v.base_columns
    else:
        cols = tuple((c.name, c.type) for c in v.columns if c.until is None)
        since = tuple((c.name, c.since) for c in v.columns if c.since)
        return BaseTable(v.base, cols, v.since, since)
    return BaseTable(v.base, cols, v.since, v.base_column_since)


def base_columns(view_name: str) -> list[str]:
    """The column names of a view's hidden `ndb$` table, in order."""
    return [n for n, _ in base_table(view(view_name)).columns]


def select_sql(v: View, version: str, database: str = "ndbinfo", where: str = "") -> str:
    cols = ", ".join(f"{column_sql(c)} AS `{c.name}`" for c in v.columns_for(version))
    tail = v.tail or f"FROM `{database}`.`{v.base}`"
    tail = tail.replace("{db}", f"`{database}`")
    version_where = ""
    for since, clause in v.until_where:
        if at_least(version, since):
            version_where = clause
    conds = [c for c in (version_where, where) if c]
    if conds:
        joined = " AND ".join(f"({c})" for c in conds)
        if " GROUP BY " in tail:
            head, rest = tail.split(" GROUP BY ", 1)
            glue = " AND " if " WHERE " in head else " WHERE "
            tail = f"{head}{glue}{joined} GROUP BY {rest}"
        elif " ORDER BY " in tail:
            head, rest = tail.split(" ORDER BY ", 1)
            glue = " AND " if " WHERE " in head else " WHERE "
            tail = f"{head}{glue}{joined} ORDER BY {rest}"
        else:
            glue = " AND " if " WHERE " in tail else " WHERE "
            tail = f"{tail}{glue}{joined}"
    return f"SELECT {'DISTINCT ' if v.distinct else ''}{cols} {tail}"


def expected_columns(version: str) -> dict[str, list[tuple[str, str, bool]]]:
    """view (and base table) -> [(column, SQL type, nullable)] that DESC must show."""
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for v in views_for(version):
        out[v.name] = [(c.name, c.type, c.nullable) for c in v.columns_for(version)]
    for t in base_tables_for(version):
        out[t.name] = [(n, typ, True) for n, typ in t.columns_for(version)]
    return out


def desc_type(sql_type: str) -> str:
    """The type as a 5.7-era / MariaDB DESC prints it: 'INT UNSIGNED' -> 'int(10) unsigned'."""
    t = sql_type.lower()
    return {"int unsigned": "int(10) unsigned", "bigint unsigned": "bigint(20) unsigned"}.get(t, t)


def base_tables_for(version: str) -> list[BaseTable]:
    seen: dict[str, BaseTable] = {}
    for v in views_for(version):
        b = base_table(v)
        for name in (b.name, *v.also_bases):
            seen.setdefault(name, replace(b, name=name))
    for lk in LOOKUPS:
        if at_least(version, lk.since):
            seen.setdefault(lk.name, lk)
    return list(seen.values())


def create_table_sql(table: BaseTable, version: str, database: str = "ndbinfo",
                     engine: str = "MEMORY") -> str:
    cols = ", ".join(f"`{n}` {t} NULL" for n, t in table.columns_for(version))
    return (f"CREATE TABLE `{database}`.`{table.name}` ({cols})"
            f" ENGINE={engine} DEFAULT CHARSET=latin1")


def create_view_sql(v: View, version: str, database: str = "ndbinfo", where: str = "") -> str:
    return (f"CREATE OR REPLACE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW"
            f" `{database}`.`{v.name}` AS {select_sql(v, version, database, where)}")


@dataclass
class DDL:
    tables: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)

    def statements(self) -> list[str]:
        return [*self.tables, *self.views]


def ddl(version: str, database: str = "ndbinfo", engine: str = "MEMORY",
        view_where: str = "") -> DDL:
    """CREATE TABLE for every base/lookup table and CREATE VIEW for every view of a version.

    `view_where` adds a condition to every view (the simulator's "ndbinfo offline" mode).
    Tables are created without IF NOT EXISTS: drop the schema first for a clean profile.
    """
    out = DDL()
    for t in base_tables_for(version):
        out.tables.append(create_table_sql(t, version, database, engine))
    for v in views_for(version):
        out.views.append(create_view_sql(v, version, database, view_where))
    return out
