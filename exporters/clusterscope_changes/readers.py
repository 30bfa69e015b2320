"""Reading what can change, with the exporters' own logins and no new privilege.

A mysqld (Galera node, NDB SQL node): `SHOW GLOBAL VARIABLES`, the statement
mysqld_exporter's global_variables collector runs with the same account
(prometheus/mysqld_exporter collector/global_variables.go @007e9b6e1684). It needs no
privilege: MariaDB answers it from information_schema.GLOBAL_VARIABLES (MariaDB KB,
"Information Schema GLOBAL_VARIABLES and SESSION_VARIABLES Tables"), MySQL 5.7+ from
performance_schema.global_variables, whose table share is world-readable
(mysql/mysql-server storage/perfschema/table_global_variables.cc @e9a11a9c6f8d:
`&pfs_readonly_world_acl`). MySQL's VARIABLE_VALUE is varchar(1024) (same file), so a value
that long may be cut: it is read again whole with `SELECT @@GLOBAL.name` (no privilege
either).

An NDB cluster, through the first of its SQL nodes that answers, with the ndbinfo
exporter's `SELECT ON ndbinfo.*`: the data nodes' versions from `ndbinfo.processes`
(`node_type` 'NDB', `node_version`; 7.5.7+) and their configuration from
`ndbinfo.config_values` joined to `config_params` (`SELECT node_id, config_param,
config_value FROM ndb$config_values` and `param_number, param_name, ...` in every view
definition that has them: mysql/mysql-server storage/ndb/tools/ndbinfo_sql.cpp
@01c56955477c for 7.5/7.6, storage/ndb/plugin/ha_ndbinfo_sql.cc @087b0bbd728a for 8.0, the
same in 8.4; config_values is new in 7.5.0). A view this version lacks is left out of the
reading (never read as "every parameter removed"); a data node that is down has no rows
(ndbinfo reaches only connected data nodes) and keeps its last reading.
"""

from __future__ import annotations

import re

import pymysql

SHOW_VARIABLES = "SHOW GLOBAL VARIABLES"
# the longest value performance_schema.global_variables holds (MySQL); MariaDB's is longer
CUT_AT = 1024
_IDENT = re.compile(r"^[a-z0-9_]+$")
NDB_VIEWS = ("processes", "config_values", "config_params")
ER_NO_SUCH_TABLE, ER_VIEW_INVALID = 1146, 1356


class ReadError(RuntimeError):
    """The node answered, but not with something usable (the message says what)."""


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def read_variables(conn: pymysql.connections.Connection) -> dict[str, str | None]:
    """name (lower case) -> value (None for NULL) of every global variable."""
    with conn.cursor() as cur:
        cur.execute(SHOW_VARIABLES)
        rows = cur.fetchall()
    out: dict[str, str | None] = {}
    for row in rows:
        if len(row) < 2 or row[0] is None:
            raise ReadError(f"{SHOW_VARIABLES} returned a malformed row: {row!r:.120}")
        out[str(_text(row[0])).lower()] = _text(row[1])
    if "version" not in out:
        raise ReadError(f"{SHOW_VARIABLES} returned {len(out)} rows and no `version`")
    for name, value in list(out.items()):
        if value is not None and len(value) >= CUT_AT and _IDENT.match(name):
            with conn.cursor() as cur:
                try:
                    cur.execute(f"SELECT @@GLOBAL.`{name}`")
                    whole = cur.fetchone()
                except pymysql.MySQLError:
                    continue  # keep what SHOW returned
            if whole and whole[0] is not None:
                out[name] = _text(whole[0])
    return out


def ndb_views(conn: pymysql.connections.Connection) -> set[str]:
    """Which of the views the reading needs this SQL node serves (information_schema lists
    only objects the account may read, and it may read ndbinfo.*)."""
    with conn.cursor() as cur:
        cur.execute("SELECT LOWER(table_name) FROM information_schema.tables WHERE"
                    " table_schema = 'ndbinfo' AND LOWER(table_name) IN (%s, %s, %s)",
                    NDB_VIEWS)
        return {str(_text(r[0])) for r in cur.fetchall()}


def _rows(conn: pymysql.connections.Connection, sql: str) -> list[tuple] | None:
    """A view's rows; None when the data nodes do not serve it (7.x: no such table, 8.0+:
    0 rows and a warning: offline or not served) so the reading leaves it out."""
    with conn.cursor() as cur:
        try:
            cur.execute(sql)
        except pymysql.MySQLError as exc:
            code = exc.args[0] if exc.args else 0
            if code in (ER_NO_SUCH_TABLE, ER_VIEW_INVALID):
                return None
            raise
        rows = list(cur.fetchall())
        if not rows and cur.connection.show_warnings():
            return None
    return rows


def read_ndb(conn: pymysql.connections.Connection) -> tuple[dict[str, dict], list[str]]:
    """node id -> {"version": str, "config": {param: value}} of every data node ndbinfo
    shows, and what could not be read (for the log and the metrics)."""
    views = ndb_views(conn)
    nodes: dict[str, dict] = {}
    missing = [v for v in NDB_VIEWS if v not in views]
    if "processes" in views:
        rows = _rows(conn, "SELECT node_id, node_version FROM ndbinfo.processes"
                           " WHERE node_type = 'NDB'")
        if rows is None:
            missing.append("processes (not served)")
        for node_id, version in rows or []:
            if node_id is not None and version is not None:
                nodes.setdefault(str(node_id), {})["version"] = _text(version)
    if "config_values" in views:
        name = ("COALESCE(p.param_name, CONCAT('param ', v.config_param))"
                if "config_params" in views else "CONCAT('param ', v.config_param)")
        join = (" LEFT JOIN ndbinfo.config_params p ON p.param_number = v.config_param"
                if "config_params" in views else "")
        rows = _rows(conn, f"SELECT v.node_id, {name}, v.config_value"
                           f" FROM ndbinfo.config_values v{join}")
        if rows is None:
            missing.append("config_values (not served)")
        for node_id, param, value in rows or []:
            # a NULL (a column the data nodes lack) is unknown, never a change to NULL
            if node_id is not None and param is not None and value is not None:
                nodes.setdefault(str(node_id), {}).setdefault("config", {})[
                    str(_text(param))] = _text(value)
    return nodes, missing
