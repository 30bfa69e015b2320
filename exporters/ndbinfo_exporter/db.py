"""One connection to an SQL node, the ndbinfo schema it serves, and bounded queries.

Every query carries a server-side time limit (MariaDB `max_statement_time`, MySQL
`MAX_EXECUTION_TIME`) plus a socket read timeout as a backstop, so a slow view is cut and
reported instead of stalling the scrape.
"""

from __future__ import annotations

import logging
import time

import pymysql

from ndbinfo_exporter.mycnf import ClientConfig

log = logging.getLogger("ndbinfo_exporter.db")

SCHEMA = "ndbinfo"
# error codes (server and client)
ER_NO_SUCH_TABLE = 1146
ER_BAD_FIELD = 1054
ER_TIMEOUT_MARIADB = 1969
ER_TIMEOUT_MYSQL = 3024
ER_QUERY_INTERRUPTED = 1317
CONNECTION_ERRORS = {2002, 2003, 2006, 2013, 2055, 1040, 1045, 1129, 1130}
SCHEMA_REFRESH_SECONDS = 30.0


class QueryTimeout(Exception):
    """The query ran into its time limit (per query, or what was left of the scrape budget)."""


class NdbinfoOffline(Exception):
    """ndbinfo answered with no rows and a warning: ndbinfo is offline, not an empty cluster."""


class SchemaChanged(Exception):
    """A view or column disappeared; the schema has been re-read."""


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

    # -- connection --------------------------------------------------------------------
    def ensure(self) -> None:
        if self.conn is not None and self.conn.open:
            if time.monotonic() - self._schema_read_at > SCHEMA_REFRESH_SECONDS:
                self.read_schema()
            return
        self.close()
        try:
            self.conn = pymysql.connect(
                **self.cfg.connect_kwargs(), autocommit=True, connect_timeout=5,
                read_timeout=max(1.0, self.query_timeout + 2.0),
                write_timeout=max(1.0, self.query_timeout + 2.0), charset="utf8mb4")
        except pymysql.MySQLError as exc:
            self.conn = None
            raise Unavailable(_describe(exc)) from exc
        self.server_version = self.conn.get_server_info() or ""
        self.mariadb = "mariadb" in self.server_version.lower()
        self.read_schema()

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

    def has(self, view: str, column: str | None = None) -> bool:
        cols = self.views.get(view)
        return cols is not None and (column is None or column.lower() in cols)

    # -- queries -----------------------------------------------------------------------
    def _raw(self, sql: str, args: tuple | None = None) -> list[tuple]:
        assert self.conn is not None
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql, args)
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
        if code in (ER_NO_SUCH_TABLE, ER_BAD_FIELD):
            self._schema_read_at = 0.0  # re-read on the next scrape
            raise SchemaChanged(_describe(exc)) from exc

    def query(self, sql: str, timeout: float, aggregate: bool = False) -> list[tuple]:
        """Run one SELECT with a time limit; detect ndbinfo offline.

        `aggregate`: the first column is a COUNT(*) (one row always comes back), so
        "empty" means that count is 0.
        """
        if timeout <= 0:
            raise QueryTimeout("no time left in the scrape budget")
        if self.mariadb:
            bounded = f"SET STATEMENT max_statement_time={timeout:.3f} FOR {sql}"
        else:
            assert sql.lstrip().upper().startswith("SELECT")
            bounded = sql.replace("SELECT", f"SELECT /*+ MAX_EXECUTION_TIME({int(timeout * 1000)})"
                                  " */", 1)
        rows = self._raw(bounded)
        empty = not rows or (aggregate and not rows[0][0])
        if empty and self._raw("SHOW WARNINGS"):
            raise NdbinfoOffline("ndbinfo returned no rows with a warning (ndbinfo offline?)")
        return rows


def _describe(exc: BaseException) -> str:
    """An error text for logs: the driver's message, never connection parameters."""
    if isinstance(exc, pymysql.MySQLError) and len(exc.args) >= 2:
        return f"({exc.args[0]}) {exc.args[1]}"
    return f"{type(exc).__name__}: {exc}"
