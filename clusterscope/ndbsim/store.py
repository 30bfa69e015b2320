"""Writes the model's rows into the simulator's MariaDB and keeps its control tables.

Database `ndbinfo`: the `ndb$*` MEMORY tables and the real-named views (DDL from
`ndbinfo_exporter.schema`). Database `ndbsim` (not readable by the exporter's account):
`commands` (what separate CLI calls ask the model to do), `state` (the model's status),
`restarts` and `restart_log` (every restart and every status it passed through).

A table is rewritten only when its rows changed, under `LOCK TABLES ... WRITE`, so a reader
never sees it half-written.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pymysql
from ndbinfo_exporter import schema

from clusterscope.ndbsim import view_ddl

DB = "ndbinfo"
SIM_DB = "ndbsim"
# "ndbinfo offline": MariaDB cannot emit NDB's Note 1 / warning 40001, so offline views
# return 0 rows plus warning 1292 (Truncated incorrect INTEGER value: 'offline')
OFFLINE_WHERE = "CAST('offline' AS UNSIGNED) = 1"
# A table the SQL node knows but its (older) data nodes do not serve:
# - 8.0+ opens it OFFLINE_UPGRADING and answers 0 rows with a Note (mysql/mysql-server
#   storage/ndb/plugin/ha_ndbinfo.cc, rnd_init): the offline answer above, for that view;
# - 7.x fails to open it (sql/ha_ndbinfo.cc, open() -> HA_ERR_NO_SUCH_TABLE: "no such
#   table", which a view reports as error 1356): a function that raises 1146, called by
#   the view. The exporter's account may EXECUTE it (a stand-in NDB does not need).
NOT_SERVED_FUNCTION = "ndb_not_served"
NOT_SERVED_DDL = (
    f"CREATE FUNCTION {DB}.{NOT_SERVED_FUNCTION}() RETURNS INT SQL SECURITY DEFINER BEGIN"
    " SIGNAL SQLSTATE '42S02' SET MYSQL_ERRNO = 1146, MESSAGE_TEXT = 'the data nodes do not"
    " serve this table (simulated version skew)'; RETURN 0; END")

# A scan that fails (the view-error fault): ha_ndbinfo maps NdbInfo::ERR_ClusterFailure to
# HA_ERR_NO_CONNECTION, "Connection to NDB failed", which the server reports as ER_GET_ERRMSG
# 1296 (mysql/mysql-server storage/ndb/plugin/ha_ndbinfo.cc, err2mysql / error_messages)
SCAN_ERROR_FUNCTION = "ndb_scan_error"
SCAN_ERROR_DDL = (
    f"CREATE FUNCTION {DB}.{SCAN_ERROR_FUNCTION}() RETURNS INT SQL SECURITY DEFINER BEGIN"
    " SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1296, MESSAGE_TEXT = 'Got error 157"
    " ''Connection to NDB failed'' from NDBINFO'; RETURN 0; END")

CONTROL_DDL = [
    f"CREATE DATABASE IF NOT EXISTS {SIM_DB}",
    f"CREATE TABLE IF NOT EXISTS {SIM_DB}.commands (id INT AUTO_INCREMENT PRIMARY KEY,"
    " cmd TEXT NOT NULL, created DOUBLE NOT NULL, done DOUBLE NULL, ok TINYINT NULL,"
    " result TEXT NULL) ENGINE=InnoDB",
    f"CREATE TABLE IF NOT EXISTS {SIM_DB}.state (k VARCHAR(64) PRIMARY KEY, v MEDIUMTEXT,"
    " updated DOUBLE) ENGINE=InnoDB",
    f"CREATE TABLE IF NOT EXISTS {SIM_DB}.restarts (restart_id INT PRIMARY KEY,"
    " node_id INT, profile VARCHAR(8), initial TINYINT, time_scale DOUBLE,"
    " started DOUBLE, finished DOUBLE NULL, total_restart_secs INT NULL,"
    " planned_total_secs INT) ENGINE=InnoDB",
    f"CREATE TABLE IF NOT EXISTS {SIM_DB}.restart_log (id INT AUTO_INCREMENT PRIMARY KEY,"
    " restart_id INT, node_id INT, status_int INT, status VARCHAR(80),"
    " cluster_secs DOUBLE, wall DOUBLE) ENGINE=InnoDB",
]


def connect(sock: str | Path) -> pymysql.connections.Connection:
    return pymysql.connect(unix_socket=str(sock), user="root", autocommit=True,
                           connect_timeout=5, read_timeout=30, write_timeout=30)


class Store:
    def __init__(self, sock: str | Path, version: str, data_version: str | None = None
                 ) -> None:
        self.sock = sock
        self.version = version  # the SQL node's: which views and columns it defines
        self.data_version = data_version or version  # the data nodes': what they serve
        self.conn = connect(sock)
        self.last: dict[str, int] = {}
        self.null_columns: dict[str, set[str]] = {}
        self._base_cols: dict[str, list[str]] = {}

    def cur(self) -> pymysql.cursors.Cursor:
        self.conn.ping(reconnect=True)
        return self.conn.cursor()

    # -- schema ------------------------------------------------------------------------
    def ensure_schema(self, offline: bool = False, broken: set[str] | None = None) -> None:
        """(Re)create `ndbinfo` for the version profile; keep `ndbsim`'s history."""
        with self.cur() as cur:
            for stmt in CONTROL_DDL:
                cur.execute(stmt)
            cur.execute(f"DROP DATABASE IF EXISTS {DB}")
            cur.execute(f"CREATE DATABASE {DB} DEFAULT CHARSET latin1")
            for stmt in view_ddl.ddl(self.version, DB).tables:
                cur.execute(stmt)
            cur.execute(NOT_SERVED_DDL)
            cur.execute(SCAN_ERROR_DDL)
            cur.execute("SELECT DISTINCT User, Host FROM mysql.db WHERE Db = %s", (DB,))
            for user, host in cur.fetchall():
                for fn in (NOT_SERVED_FUNCTION, SCAN_ERROR_FUNCTION):
                    cur.execute(f"GRANT EXECUTE ON FUNCTION {DB}.{fn} TO %s@%s",
                                (user, host))
        self._base_cols = {t.name: [n for n, _ in t.columns_for(self.version)]
                           for t in view_ddl.base_tables_for(self.version)}
        self.last.clear()
        self.apply_views(offline, broken or set())

    def not_served(self) -> tuple[set[str], dict[str, list[str]]]:
        """Views, and columns of views, the SQL node defines but its data nodes lack."""
        served = {v.name: v for v in schema.views_for(self.data_version)}
        views, columns = set(), {}
        for v in schema.views_for(self.version):
            if v.name not in served:
                views.add(v.name)
                continue
            theirs = {c.name for c in v.columns_for(self.data_version)}
            missing = [c.name for c in v.columns_for(self.version) if c.name not in theirs]
            if missing:
                columns[v.name] = missing
        return views, columns

    def apply_views(self, offline: bool, broken: set[str]) -> None:
        unserved, _ = self.not_served()
        skew_where = (OFFLINE_WHERE if schema.version_tuple(self.version) >= (8,)
                      else f"{DB}.{NOT_SERVED_FUNCTION}() = 0")
        with self.cur() as cur:
            for v in schema.views_for(self.version):
                if v.name in broken:
                    cur.execute(self._scan_error_view(v))
                    continue
                where = (OFFLINE_WHERE if offline
                         else skew_where if v.name in unserved else "")
                cur.execute(view_ddl.create_view_sql(v, self.version, DB, where))

    def _scan_error_view(self, v: schema.View) -> str:
        """A view whose every scan fails with the scan error, also when its base table is
        empty (a condition on the rows is never evaluated without rows): its rows plus one
        row from DUAL whose condition raises."""
        rows = view_ddl.select_sql(v, self.version, DB, f"{DB}.{SCAN_ERROR_FUNCTION}() = 0")
        nulls = ", ".join(f"NULL AS `{c.name}`" for c in v.columns_for(self.version))
        return (f"CREATE OR REPLACE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW"
                f" `{DB}`.`{v.name}` AS SELECT * FROM ({rows}) AS r UNION ALL SELECT {nulls}"
                f" FROM DUAL WHERE {DB}.{SCAN_ERROR_FUNCTION}() = 0")

    # -- rows --------------------------------------------------------------------------
    def write(self, tables: dict[str, tuple[list[str], list[tuple]]]) -> int:
        written = 0
        with self.cur() as cur:
            for name, (cols, rows) in tables.items():
                target = self._base_cols.get(name)
                if target is None:
                    continue  # this version has no such table
                idx = {c: i for i, c in enumerate(cols)}
                nulls = self.null_columns.get(name, set())
                proj = [(idx.get(c), c in nulls) for c in target]
                data = [tuple(None if (i is None or null) else r[i] for i, null in proj)
                        for r in rows]
                h = hash(tuple(data))
                if self.last.get(name) == h:
                    continue
                cur.execute(f"LOCK TABLES {DB}.`{name}` WRITE")
                try:
                    cur.execute(f"DELETE FROM {DB}.`{name}`")
                    if data:
                        marks = ", ".join(["%s"] * len(target))
                        cur.executemany(f"INSERT INTO {DB}.`{name}` VALUES ({marks})", data)
                finally:
                    cur.execute("UNLOCK TABLES")
                self.last[name] = h
                written += 1
        return written

    def set_null_columns(self, by_view: dict[str, list[str]]) -> None:
        """View columns -> the base columns the model writes NULL into (the null-columns
        fault, and columns the data nodes lack: NULL, as an SQL node newer than its data
        nodes reads them, storage/ndb/plugin/ha_ndbinfo.cc)."""
        out: dict[str, set[str]] = {}
        by_view = dict(by_view)
        for view_name, cols in self.not_served()[1].items():
            by_view[view_name] = sorted({*by_view.get(view_name, []), *cols})
        for view_name, cols in by_view.items():
            v = schema.view(view_name)
            for c in cols:
                col = v.column(c)
                src = col.source or col.expr or c
                if "(" in src:  # an aggregate: the base column has the view column's name
                    src = c
                src = src.split(".")[-1].strip("`")
                out.setdefault(v.base, set()).add(src)
                for extra in v.also_bases:
                    out.setdefault(extra, set()).add(src)
        self.null_columns = out
        self.last.clear()

    # -- control -----------------------------------------------------------------------
    def pending_commands(self) -> list[tuple[int, dict]]:
        with self.cur() as cur:
            cur.execute(f"SELECT id, cmd FROM {SIM_DB}.commands WHERE done IS NULL ORDER BY id")
            return [(i, json.loads(c)) for i, c in cur.fetchall()]

    def finish_command(self, cid: int, ok: bool, result: dict) -> None:
        with self.cur() as cur:
            cur.execute(f"UPDATE {SIM_DB}.commands SET done=%s, ok=%s, result=%s WHERE id=%s",
                        (time.time(), int(ok), json.dumps(result), cid))

    def put_state(self, key: str, value: dict) -> None:
        with self.cur() as cur:
            cur.execute(f"REPLACE INTO {SIM_DB}.state (k, v, updated) VALUES (%s, %s, %s)",
                        (key, json.dumps(value), time.time()))

    def record_restart(self, run_id: int, node: int, profile: str, initial: bool,
                       time_scale: float, planned: int) -> None:
        with self.cur() as cur:
            cur.execute(f"REPLACE INTO {SIM_DB}.restarts (restart_id, node_id, profile, initial,"
                        " time_scale, started, planned_total_secs) VALUES (%s,%s,%s,%s,%s,%s,%s)",
                        (run_id, node, profile, int(initial), time_scale, time.time(), planned))

    def record_status(self, run_id: int, node: int, status: int, ctime: float) -> None:
        with self.cur() as cur:
            cur.execute(f"INSERT INTO {SIM_DB}.restart_log (restart_id, node_id, status_int,"
                        " status, cluster_secs, wall) VALUES (%s,%s,%s,%s,%s,%s)",
                        (run_id, node, status, schema.RESTART_STATUS[status], ctime, time.time()))

    def finish_restart(self, run_id: int, total: int) -> None:
        with self.cur() as cur:
            cur.execute(f"UPDATE {SIM_DB}.restarts SET finished=%s, total_restart_secs=%s"
                        " WHERE restart_id=%s", (time.time(), total, run_id))


class Mirror:
    """Another SQL node of the simulated cluster: every SQL node of a real cluster serves
    the same ndbinfo rows (they come from the data nodes), so each mirror gets the schema,
    the views and the rows the primary gets, but not the control tables. A mirror that
    goes away (stopped, restarted) never stops the model or the other SQL nodes; when it
    answers again it is resynced whole (schema, views, NULL columns, every table)."""

    def __init__(self, sock: str | Path) -> None:
        self.sock = sock
        self.store: Store | None = None
        self.dirty = True
        self.down_since: float | None = None

    def resync(self) -> None:
        self.dirty = True

    def write(self, primary: Store, tables: dict[str, tuple[list[str], list[tuple]]],
              offline: bool, broken: set[str], null_columns: dict[str, list[str]]) -> None:
        try:
            if self.store is None:
                self.store = Store(self.sock, primary.version, primary.data_version)
                self.dirty = True
            if self.dirty:
                self.store.version, self.store.data_version = (primary.version,
                                                               primary.data_version)
                self.store.ensure_schema(offline, broken)
                self.store.set_null_columns(null_columns)
                self.dirty = False
            self.store.write(tables)
            if self.down_since is not None:
                print(f"ndbsim: SQL node at {self.sock} is back; resynced", flush=True)
                self.down_since = None
        except pymysql.MySQLError as exc:
            if self.down_since is None:
                self.down_since = time.time()
                print(f"ndbsim: SQL node at {self.sock} unavailable ({exc}); the others go"
                      " on", flush=True)
            if self.store is not None:
                with contextlib.suppress(Exception):
                    self.store.conn.close()
            self.store = None
