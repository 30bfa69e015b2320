"""One connection to an SQL node, the ndbinfo schema it serves, and bounded queries.

Every query carries a server-side time limit (MariaDB `max_statement_time`, MySQL
`MAX_EXECUTION_TIME`) plus a socket read timeout as a backstop, so a slow view is cut and
reported instead of stalling the scrape.
"""

from __future__ import annotations

import logging
import ssl
import time

import pymysql

from ndbinfo_exporter.mycnf import ClientConfig

log = logging.getLogger("ndbinfo_exporter.db")

SCHEMA = "ndbinfo"
# error codes (server and client)
ER_NO_SUCH_TABLE = 1146
ER_VIEW_INVALID = 1356
ER_BAD_FIELD = 1054
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_TIMEOUT_MARIADB = 1969
ER_TIMEOUT_MYSQL = 3024
ER_QUERY_INTERRUPTED = 1317
ER_ACCESS_DENIED = 1045
CONNECTION_ERRORS = {2002, 2003, 2006, 2013, 2055, 1040, 1045, 1129, 1130, 1251}
SCHEMA_REFRESH_SECONDS = 30.0
# ndbinfo fetches `ndbinfo_max_rows` rows per round trip to the data nodes, default 10, at
# most 256, settable per session without a privilege (mysql/mysql-server
# storage/ndb/plugin/ha_ndbinfo.cc, sysvar ndbinfo_max_rows): the largest batch cuts the
# round trips of a scrape 25-fold.
NDBINFO_MAX_ROWS = 256
GROUP_CONCAT_MAX_LEN = 16 * 1024 * 1024


class QueryTimeout(Exception):
    """The query ran into its time limit (per query, or what was left of the scrape budget)."""


class NdbinfoOffline(Exception):
    """A view answered no rows and a warning: offline (ndbinfo_offline, or this table not
    served by the data nodes yet), not an empty cluster."""


class SchemaChanged(Exception):
    """A column the query names is gone; the schema will be re-read."""


class ViewUnavailable(Exception):
    """The SQL node lists the view but cannot serve it: 7.x answers a view whose base table
    the (older) data nodes lack with "no such table" (mysql/mysql-server sql/ha_ndbinfo.cc,
    open() -> HA_ERR_NO_SUCH_TABLE), which a view reports as "references invalid table(s)"."""


class Unavailable(Exception):
    """The SQL node cannot be reached (connection refused, lost, or login failed)."""


class Database:
    def __init__(self, cfg: ClientConfig, query_timeout: float) -> None:
        self.cfg = cfg
        self.query_timeout = query_timeout
        self.conn: pymysql.connections.Connection | None = None
        self.mariadb = False
        self.server_version = ""
        # view name -> column names (lower case) in ordinal order
        self.views: dict[str, list[str]] = {}
        self._schema_read_at = 0.0
        self._last_description: tuple = ()

    # -- connection --------------------------------------------------------------------
    def ensure(self) -> None:
        if self.conn is not None and self.conn.open:
            if time.monotonic() - self._schema_read_at > SCHEMA_REFRESH_SECONDS:
                self.read_schema()
            return
        self.close()
        self.conn = open_connection(self.cfg, self.query_timeout)
        self.server_version = self.conn.get_server_info() or ""
        self.mariadb = "mariadb" in self.server_version.lower()
        self._session_settings()
        self.read_schema()

    def ping(self, timeout: float) -> str | None:
        """Whether the SQL node answers a trivial query within `timeout`: None, or why not.
        For a node that is not serving: no schema read, no session settings."""
        try:
            if self.conn is None or not self.conn.open:
                self.close()
                self.conn = open_connection(self.cfg, timeout, connect_timeout=timeout)
            self._raw("SELECT 1")
            return None
        except (Unavailable, QueryTimeout, pymysql.MySQLError, OSError) as exc:
            self.close()
            return str(exc)

    def _session_settings(self) -> None:
        # collectors fetch a node's rows as one string (Context.lines): allow 16 MiB (MySQL's
        # default is 1 KiB); no privilege needed for the session
        self._raw(f"SET SESSION group_concat_max_len = {GROUP_CONCAT_MAX_LEN}")
        try:
            self._raw(f"SET SESSION ndbinfo_max_rows = {NDBINFO_MAX_ROWS}")
        except pymysql.MySQLError as exc:
            if not exc.args or exc.args[0] != ER_UNKNOWN_SYSTEM_VARIABLE:
                raise
            # not an NDB SQL node (e.g. the lab's simulator): nothing to batch
            log.debug("no ndbinfo_max_rows on %s", self.cfg.target())

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - closing a broken connection may fail
                pass
        self.conn = None

    def read_schema(self) -> None:
        rows = self._raw("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS"
                         " WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, ORDINAL_POSITION",
                         (SCHEMA,))
        views: dict[str, list[str]] = {}
        for table, column in rows:
            views.setdefault(str(table).lower(), []).append(str(column).lower())
        self.views = views
        self._schema_read_at = time.monotonic()

    def schema_stale(self) -> bool:
        return time.monotonic() - self._schema_read_at > SCHEMA_REFRESH_SECONDS

    def has(self, view: str, column: str | None = None) -> bool:
        cols = self.views.get(view)
        return cols is not None and (column is None or column.lower() in cols)

    # -- queries -----------------------------------------------------------------------
    def _raw(self, sql: str, args: tuple | None = None) -> list[tuple]:
        assert self.conn is not None
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql, args)
                self._last_description = cur.description or ()
                return list(cur.fetchall())
        except pymysql.MySQLError as exc:
            self._classify(exc)
            raise

    def _classify(self, exc: pymysql.MySQLError) -> None:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        if code in (ER_TIMEOUT_MARIADB, ER_TIMEOUT_MYSQL, ER_QUERY_INTERRUPTED):
            raise QueryTimeout(_describe(exc)) from exc
        if code in CONNECTION_ERRORS or isinstance(exc, pymysql.err.InterfaceError):
            self.close()
            # a socket read timeout shows as "lost connection" (2013): the backstop fired
            raise Unavailable(_describe(exc)) from exc
        if code in (ER_NO_SUCH_TABLE, ER_VIEW_INVALID):
            raise ViewUnavailable(_describe(exc)) from exc
        if code == ER_BAD_FIELD:
            raise SchemaChanged(_describe(exc)) from exc

    def query(self, sql: str, timeout: float, aggregate: bool = False) -> list[tuple]:
        return self._query(sql, timeout, aggregate)[1]

    def _query(self, sql: str, timeout: float, aggregate: bool = False
               ) -> tuple[list[str], list[tuple]]:
        """Run one SELECT with a time limit; detect ndbinfo offline. (column names, rows)

        `aggregate`: the first column is a COUNT(*) (one row always comes back), so
        "empty" means that count is 0.
        """
        if timeout <= 0:
            raise QueryTimeout("no time left in the scrape budget")
        if self.mariadb:
            bounded = f"SET STATEMENT max_statement_time={timeout:.3f} FOR {sql}"
        else:
            assert sql.lstrip().upper().startswith("SELECT")
            # 0 would mean "no limit" to MySQL: never less than 1 ms
            ms = max(1, int(timeout * 1000))
            bounded = sql.replace("SELECT", f"SELECT /*+ MAX_EXECUTION_TIME({ms}) */", 1)
        rows = self._raw(bounded)
        names = [d[0].lower() for d in self._last_description]
        empty = not rows or (aggregate and not rows[0][0])
        if empty:
            warnings = self._raw("SHOW WARNINGS")
            if warnings:
                # ndbinfo offline (the whole server) and a table the data nodes do not
                # serve yet (SQL node newer than the data nodes) both answer 0 rows and a
                # Note (mysql/mysql-server storage/ndb/plugin/ha_ndbinfo.cc, rnd_init); the
                # caller tells them apart by which table it asked
                raise NdbinfoOffline(f"no rows, with {_warning(warnings[0])}")
        return names, rows

    def query_named(self, sql: str, timeout: float) -> list[dict[str, object]]:
        """Rows as {lower-case column name: value}, so a column a version lacks is absent
        instead of shifting its neighbours."""
        names, rows = self._query(sql, timeout)
        return [dict(zip(names, r, strict=True)) for r in rows]


def open_connection(cfg: ClientConfig, query_timeout: float,
                    connect_timeout: float = 5.0) -> pymysql.connections.Connection:
    """Log in as the option file says; any failure is Unavailable with a reason that names
    what went wrong (login, TLS, network), never the password."""
    try:
        return pymysql.connect(
            **cfg.connect_kwargs(), autocommit=True,
            connect_timeout=max(0.5, min(5.0, connect_timeout)),
            read_timeout=max(1.0, query_timeout + 2.0),
            write_timeout=max(1.0, query_timeout + 2.0), charset="utf8mb4")
    except pymysql.MySQLError as exc:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        # PyMySQL reports a failed TLS handshake as "can't connect" with the SSL reason
        if "[SSL" in str(exc):
            what = f"TLS handshake failed (ssl-mode {cfg.ssl_mode})"
        else:
            what = "login failed" if code == ER_ACCESS_DENIED else "cannot connect"
        raise Unavailable(f"{what}: {_describe(exc)}") from exc
    except ssl.SSLError as exc:
        raise Unavailable(f"TLS handshake failed (ssl-mode {cfg.ssl_mode}):"
                          f" {_describe(exc)}") from exc
    except (RuntimeError, OSError) as exc:
        # e.g. PyMySQL's "'cryptography' package is required for ...caching_sha2_password"
        raise Unavailable(f"login failed: {_describe(exc)}") from exc


def _warning(row: tuple) -> str:
    """`SHOW WARNINGS` row (Level, Code, Message) as text."""
    return f"{row[0]} {row[1]}: {row[2]}" if len(row) >= 3 else str(row)


def _describe(exc: BaseException) -> str:
    """An error text for logs: the driver's message, never connection parameters."""
    if isinstance(exc, pymysql.MySQLError) and len(exc.args) >= 2:
        return f"({exc.args[0]}) {exc.args[1]}"
    return f"{type(exc).__name__}: {exc}"
