"""An experiment's tables: create, fill, hold at a fixed size, and check their row counts.

Every variant of a comparison must see the same table size and the same truncation
schedule, or the comparison mixes table size into the overhead (page splits, B-tree depth,
cache residency). So the written tables are pre-filled to `table_rows` identical rows and
kept between `table_rows` and `max_rows`: when any of them reaches `max_rows`, all of them
are trimmed back together, deleting the rows written since the pre-fill (with
`table_rows: 0` the trim is a TRUNCATE, and the tables run a sawtooth from 0 together).
Each window records the row counts it started from.

Row books: the Lua scripts count each row as sent before its statement goes out and as
committed once it returned; a table must hold between the two ([low, high]). A window whose
sysbench died is re-read from the table once the dead client's statements have left the
server, never guessed.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator

import pymysql

from clusterscope_loadgen import inject
from clusterscope_loadgen.config import Experiment
from clusterscope_loadgen.results import RowBook
from clusterscope_loadgen.sysbench import Endpoint, Result
from clusterscope_loadgen.target import Target, connect, connection
from clusterscope_loadgen.variant import Variant

# Tables the Lua scripts write (the others are read or updated in place), and the column
# that orders their rows by insertion: the pre-fill's rows are those at or below a mark.
WRITTEN = {"fk": "pid", "batching_pk": "id"}
QUIESCE_SECONDS = 30.0  # longest wait for a dead sysbench's statements before a re-read
SETTLE_SECONDS = 120.0  # longest wait for the cluster to apply a trim's deletes
FILL_CHUNK = 2000
TRIM_CHUNK = 5000
FILL_SEED = 20240611  # every table gets the same pre-fill rows


class TableError(RuntimeError):
    """A table cannot be created, filled or counted; the message names the experiment."""


class Tables:
    def __init__(self, exp: Experiment, engine: str, primary: Target, database: str,
                 variants: list[Variant], nodes: list[Endpoint],
                 out: Callable[[str], None] = print) -> None:
        self.exp, self.engine, self.primary, self.database = exp, engine, primary, database
        self.variants, self.nodes, self.out = variants, nodes, out
        self.galera = engine == "galera"
        self.ddl = exp.tables(engine)
        self.books: dict[str, RowBook] = {}
        self.marks: dict[str, int] = {}  # table -> the highest pre-filled key
        self.rebased: dict[str, list[str]] = {}
        self.verifications: list[dict] = []
        self.trims = 0
        self.bulk = 0  # rows deleted or pre-filled since the cluster last settled

    @property
    def written(self) -> list[str]:
        if self.exp.kind not in WRITTEN:
            return []
        return sorted({v.table for v in self.variants})

    @contextlib.contextmanager
    def _connection(self, node: Endpoint | None = None, database: str | None = None
                    ) -> Iterator[pymysql.connections.Connection]:
        try:
            conn = connect(self.primary, node, database)
        except pymysql.MySQLError as exc:
            where = node or self.primary.endpoint
            raise TableError(f"experiment {self.exp.name}: cannot connect to "
                             f"{where.host}:{where.port}: {exc}") from exc
        try:
            yield conn
        finally:
            conn.close()

    # -- prepare ----------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the database and tables (idempotent), fill the read-only data and bring
        every written table to exactly `table_rows` rows (the first time)."""
        needed = {v.table for v in self.variants}
        if self.exp.kind == "fk":
            needed |= {"users", "forum"}
        with self._connection() as conn, conn.cursor() as cur:
            self._ddl(cur, f"CREATE DATABASE IF NOT EXISTS `{self.database}`", "database")
            cur.execute(f"USE `{self.database}`")
            for name, stmt in self.ddl.items():  # dict order: parents first
                if name in needed:
                    self._ddl(cur, stmt, name)
            self._fill_read_only(cur)
            for table in self.written:
                if table not in self.marks:
                    # the first time only: a runner called again (the always-on cycle's
                    # next pass) finds its tables where it left them, still alike
                    self._hold(cur, table)
                n = self.count(cur, table)
                self.books[table] = RowBook(n, n)
        self.settle()

    def _ddl(self, cur: pymysql.cursors.Cursor, stmt: str, what: str) -> None:
        try:
            cur.execute(stmt)
        except pymysql.MySQLError as exc:
            raise TableError(f"experiment {self.exp.name}: target {self.primary.label} refused"
                             f" the DDL for {what}: {exc}") from exc

    def count(self, cur: pymysql.cursors.Cursor, table: str) -> int:
        if self.galera:  # see every commit certified anywhere in the cluster
            cur.execute("SET SESSION wsrep_sync_wait = 1")
        cur.execute(f"SELECT COUNT(*) FROM `{self.database}`.`{table}`")
        return int(cur.fetchone()[0])

    def _fill_read_only(self, cur: pymysql.cursors.Cursor) -> None:
        o = self.exp.options
        tables = sorted({v.table for v in self.variants})
        Rows = Callable[[int], tuple]
        if self.exp.kind == "fk":
            spec: dict[str, tuple[int, str, Rows]] = {
                "users": (int(o.get("users", 1000)), "uid, name, email",
                          lambda i: (i, f"user{i}", f"user{i}@example.com")),
                "forum": (int(o.get("forums", 100)), "fid, name", lambda i: (i, f"forum{i}"))}
        elif self.exp.kind == "read_backup":
            spec = {t: (int(o.get("rows", 1000)), "id", lambda i: (i,)) for t in tables}
        elif self.exp.kind == "partitioning":
            spec = {t: (int(o.get("rows", 20000)), "id, k, c, pad",
                        lambda i: (i, i * 7 % 10007, str(i).rjust(120, "c"), "p" * 60))
                    for t in tables}
        elif self.exp.kind == "inject":
            try:
                inject.fill(cur, self.variants, self.exp.options)
            except ValueError as exc:
                raise TableError(f"experiment {self.exp.name}: {exc}") from exc
            return
        else:
            return
        for table, (n, cols, row) in spec.items():
            if self.count(cur, table) >= n:
                continue
            self._insert(cur, f"INSERT IGNORE INTO {table} ({cols})", len(cols.split(",")),
                         (row(i) for i in range(1, n + 1)))

    @staticmethod
    def _insert(cur: pymysql.cursors.Cursor, head: str, width: int, rows: Iterator[tuple]
                ) -> None:
        # pymysql turns this executemany into multi-row INSERTs.
        stmt = f"{head} VALUES ({', '.join(['%s'] * width)})"
        chunk: list[tuple] = []
        for r in rows:
            chunk.append(r)
            if len(chunk) == FILL_CHUNK:
                cur.executemany(stmt, chunk)
                chunk = []
        if chunk:
            cur.executemany(stmt, chunk)

    def _prefill_rows(self, n: int) -> Iterator[tuple]:
        """The same `n` rows for every table of the experiment (a fixed seed)."""
        rng = random.Random(FILL_SEED)
        o = self.exp.options
        if self.exp.kind == "fk":
            users, forums = int(o.get("users", 1000)), int(o.get("forums", 100))
            letters = "abcdefghijklmnopqrstuvwxyz0123456789"
            size = int(o.get("message_len", 100))
            # a pool of messages: random text per row would cost more than the inserts
            pool = ["".join(rng.choice(letters) for _ in range(size)) for _ in range(997)]
            for i in range(n):
                yield (rng.randint(1, users), rng.randint(1, forums), pool[i % len(pool)])
        else:
            for i in range(1, n + 1):
                yield (i,)

    def _hold(self, cur: pymysql.cursors.Cursor, table: str) -> None:
        """Bring a written table to exactly `table_rows` rows: fill what is missing, delete
        what a run left above the pre-fill; remember the pre-fill's highest key."""
        want, key = self.exp.table_rows, WRITTEN[self.exp.kind]
        have = self.count(cur, table)
        if want == 0:
            if have:
                cur.execute(f"TRUNCATE TABLE `{table}`")
                self.bulk += have
            self.marks[table] = 0
            return
        if have > want:
            cur.execute(f"SELECT `{key}` FROM `{table}` ORDER BY `{key}` LIMIT 1 OFFSET %s",
                        (want - 1,))
            self._delete_above(cur, table, int(cur.fetchone()[0]))
            have = self.count(cur, table)
        if have < want:
            started = time.monotonic()
            if self.exp.kind == "fk":
                rows = self._prefill_rows(want)
                for _ in range(have):
                    next(rows)
                self._insert(cur, f"INSERT INTO {table} (uid, fid, message)", 3, rows)
            else:
                self._insert(cur, f"INSERT IGNORE INTO {table} (id)", 1,
                             self._prefill_rows(want))
            self.bulk += want - have
            self.out(f"loadgen: {self.exp.name}: pre-filled {table} to {want} rows in"
                     f" {time.monotonic() - started:.0f} s")
        cur.execute(f"SELECT MAX(`{key}`) FROM `{table}`")
        self.marks[table] = int(cur.fetchone()[0] or 0)

    def _delete_above(self, cur: pymysql.cursors.Cursor, table: str, mark: int) -> None:
        key = WRITTEN[self.exp.kind]
        while True:  # in chunks: one huge write-set would stall Galera's certification
            cur.execute(f"DELETE FROM `{table}` WHERE `{key}` > %s LIMIT {TRIM_CHUNK}", (mark,))
            self.bulk += cur.rowcount
            if cur.rowcount < TRIM_CHUNK:
                return

    def settle(self) -> None:
        """After bulk writes (a pre-fill, a trim's deletes), wait until the nodes have applied
        them: the other nodes apply the big write-sets late and pause everyone's commits by
        flow control meanwhile, which the next window would measure. Settled: on every node
        used, twice in a row, flow control inactive and nothing queued to send or apply
        (wsrep_flow_control_active, wsrep_local_send_queue, wsrep_local_recv_queue:
        codership/galera galera/src/replicator_smm_stats.cpp, release_26.4.18 0bc393fb)."""
        if not self.galera or not self.bulk:
            return
        self.bulk = 0
        deadline, calm = time.monotonic() + SETTLE_SECONDS, 0
        while calm < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            calm = calm + 1 if all(map(self._calm, self.nodes)) else 0

    def _calm(self, node: Endpoint) -> bool:
        try:
            with connection(self.primary, node, None, timeout=3.0) as conn, \
                    conn.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN"
                            " ('wsrep_flow_control_active', 'wsrep_local_send_queue',"
                            " 'wsrep_local_recv_queue')")
                st = {str(k).lower(): str(v) for k, v in cur.fetchall()}
        except pymysql.MySQLError:
            return False
        return (st.get("wsrep_flow_control_active", "false") == "false"
                and st.get("wsrep_local_send_queue", "0") == "0"
                and st.get("wsrep_local_recv_queue", "0") == "0")

    # -- row books ----------------------------------------------------------------------------
    def book(self, v: Variant, res: Result, threads: int) -> None:
        book = self.books.get(v.table)
        if book is None:
            return
        vr = res.variants.get(v.name)
        if res.threads_reported == threads and vr is not None and vr.threads == threads:
            # [rows confirmed committed, rows sent]: a row whose reply was lost may have
            # landed (cs_common.lua counts a row as sent before the statement goes out).
            book.low += vr.rows
            book.high += vr.attempted
        elif res.exit_code != -1 or res.transactions:
            book.rebase = (f"a {v.name} window ended without its threads' commit counts"
                           f" ({res.fatal[0] if res.fatal else 'sysbench aborted'})")

    def interrupted(self, group: list[Variant]) -> None:
        for v in group:
            if v.table in self.books:
                self.books[v.table].rebase = f"a {v.name} window was interrupted"

    def row_counts(self) -> dict[str, int]:
        """Each written table's rows at this moment (committed ones; the book's low end)."""
        return {t: b.low for t, b in self.books.items()}

    def _in_flight(self) -> int:
        """Statements still running in the run's database on its nodes, other than ours.

        A sysbench that died mid-window (crashed, killed) leaves its last statements running
        in the server, which commits them once the cluster lets it (a killed Galera node
        stalls commits for seconds): a row count read before then misses them. The account
        sees its own threads without the PROCESS privilege, and information_schema.PROCESSLIST
        has the DB and COMMAND columns (https://mariadb.com/kb/en/show-processlist).
        """
        busy = 0
        for node in self.nodes:
            try:
                with connection(self.primary, node, None, timeout=3.0) as conn, \
                        conn.cursor() as cur:
                    cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE"
                                " DB = %s AND COMMAND = 'Query' AND ID <> CONNECTION_ID()",
                                (self.database,))
                    busy += int(cur.fetchone()[0])
            except pymysql.MySQLError:
                continue  # a node that is down commits nothing more
        return busy

    def rebase(self) -> None:
        """Re-read the count of a table whose book broke, so later windows stay verifiable."""
        pending = [t for t, b in self.books.items() if b.rebase]
        if not pending:
            return
        deadline = time.monotonic() + QUIESCE_SECONDS
        while self._in_flight() and time.monotonic() < deadline:
            time.sleep(0.2)
        if self._in_flight():
            return  # still running: re-read before a later window
        try:
            with connection(self.primary, None, self.database) as conn, conn.cursor() as cur:
                for table in pending:
                    n = self.count(cur, table)
                    self.rebased.setdefault(table, []).append(self.books[table].rebase)
                    self.books[table] = RowBook(n, n)
        except pymysql.MySQLError:
            pass  # the target is down: try again before the next window

    def verify(self, before_trim: bool = False) -> list[dict]:
        """Compare every written table's row count with the book; re-read broken books."""
        if not self.books:
            return []
        out = []
        with self._connection(database=self.database) as conn, conn.cursor() as cur:
            for table, book in self.books.items():
                found = self.count(cur, table)
                if book.rebase:
                    rec = {"table": table, "ok": None, "found": found,
                           "note": "not verifiable, re-read: " + book.rebase}
                    self.books[table] = RowBook(found, found)
                else:
                    rec = {"table": table, "ok": book.low <= found <= book.high,
                           "found": found, "expected_low": book.low,
                           "expected_high": book.high}
                    if table in self.rebased:
                        rec["note"] = ("counted since the last re-read; re-read after: "
                                       + "; ".join(self.rebased[table]))
                if before_trim:
                    rec["before_truncate"] = True
                out.append(rec)
        self.verifications.extend(out)
        return out

    def maybe_trim(self) -> bool:
        """All written tables back to the pre-fill once any reached `max_rows` (checked
        first, so nothing written goes unverified). A cluster that refuses it (a node down,
        no primary component) puts it off to the next window; if it refused half-way, the
        books are re-read from the tables before then (a delete may or may not have
        landed), and the trim is tried again (the delete is idempotent)."""
        if not self.books or max(b.high for b in self.books.values()) < self.exp.max_rows:
            return False
        try:
            self.verify(before_trim=True)
        except (pymysql.MySQLError, TableError) as exc:
            self.out(f"loadgen: {self.exp.name}: trim put off to the next window, the cluster"
                     f" refused the row check: {exc}")
            return False
        try:
            return self._trim()
        except (pymysql.MySQLError, TableError) as exc:
            for book in self.books.values():
                book.rebase = book.rebase or f"a trim was interrupted ({exc})"
            self.out(f"loadgen: {self.exp.name}: trim put off to the next window, the cluster"
                     f" refused it: {exc}")
            return False

    def _trim(self) -> bool:
        started = time.monotonic()
        with self._connection(database=self.database) as conn, conn.cursor() as cur:
            for table in self.books:
                if self.exp.table_rows == 0:
                    cur.execute(f"TRUNCATE TABLE `{table}`")
                    self.bulk += 1
                else:
                    self._delete_above(cur, table, self.marks[table])
                n = self.count(cur, table)
                self.books[table] = RowBook(n, n)
        self.settle()
        self.trims += 1
        self.out(f"loadgen: {self.exp.name}: tables back to {self.exp.table_rows} rows"
                 f" ({time.monotonic() - started:.1f} s)")
        return True
