"""One experiment run: prepare the tables, warm up, interleave windows, pair, verify.

Rounds run every variant once, in the configured order on odd rounds and reversed on even
ones (A B, B A, ...), so drift shared by a variant and its baseline cancels in the pair.
A window is valid only if sysbench finished cleanly and the health snapshots before and
after it show no cluster event (window.judge); invalid windows are exported and listed but
never enter a throughput figure or a pair.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import resource
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict

import pymysql

from clusterscope_loadgen import ddl, stats, sysbench, window
from clusterscope_loadgen.config import Experiment, Variant
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.results import RowBook, WindowResult
from clusterscope_loadgen.sysbench import Endpoint
from clusterscope_loadgen.target import (
    Target,
    TargetError,
    check_ndb,
    connect,
    connection,
    galera_peers,
)
from clusterscope_loadgen.target import health as node_health
from clusterscope_loadgen.target import identity as node_identity

WRITTEN = {"fk": ("users_posts", "users_posts_fk1", "users_posts_fk"),
           "batching_pk": ("bp_pk", "bp_nopk")}
SATURATION = 0.9  # share of min(threads, cores) sysbench may burn before it is the bottleneck


class RunError(RuntimeError):
    """The run cannot go on; the message names the experiment."""


class Stop(Exception):  # noqa: N818 - a control-flow signal, not an error
    """SIGTERM/SIGINT: finish up (summary, verification) and exit."""


class Runner:
    def __init__(self, exp: Experiment, engine: str, targets: list[Target], *,
                 threads: int | None = None, window: float | None = None,
                 warmup: float | None = None, only: list[str] | None = None,
                 metrics: Metrics | None = None, cluster: str | None = None,
                 database: str | None = None, out: Callable[[str], None] = print) -> None:
        if not targets:
            raise RunError(f"experiment {exp.name}: no --target given")
        self.exp, self.engine, self.targets = exp, engine, targets
        self.primary = targets[0]
        self.threads = threads or exp.threads
        self.window_s = window or exp.window
        self.warmup_s = exp.warmup if warmup is None else warmup
        self.metrics, self.out = metrics, out
        self.database = database or "cs_" + re.sub(r"[^a-z0-9_]", "_", exp.name.lower())
        self.windows: list[WindowResult] = []
        self.books: dict[str, RowBook] = {}
        self.verifications: list[dict] = []
        self.rebased: dict[str, list[str]] = {}
        self.stopped = False
        self.galera = engine == "galera"
        try:
            self.tables = exp.tables(engine)
        except ddl.DDLError as exc:
            raise RunError(f"experiment {exp.name}: {exc}") from exc
        if engine == "ndb":
            for t in targets:  # every SQL node written to must have the NDB engine
                try:
                    check_ndb(t)
                except TargetError as exc:
                    raise RunError(f"experiment {exp.name}: {exc}") from exc
        variants = exp.variants_for(engine, only)
        self.peers = [t.endpoint for t in targets[1:]]
        if any(v.needs_peer for v in variants) and not self.peers and self.galera:
            self.peers = galera_peers(self.primary)
        dropped = [v.name for v in variants if v.needs_peer and not self.peers]
        if dropped:
            if self.galera:
                raise RunError(f"experiment {exp.name}: variant(s) {', '.join(dropped)} need a"
                               " second Galera node; pass it with a second --target"
                               " (wsrep_incoming_addresses lists none: set"
                               " wsrep_node_incoming_address on the nodes)")
            out(f"loadgen: {exp.name}: skipping {', '.join(dropped)} (needs a second node)")
            variants = [v for v in variants if v.name not in dropped
                        and v.baseline not in dropped]
        missing = {v.table for v in variants} - set(self.tables)
        if missing:
            raise RunError(f"experiment {exp.name}: variant table(s) {', '.join(missing)} have"
                           f" no DDL for engine {engine} (known: {', '.join(self.tables)})")
        if not variants:
            raise RunError(f"experiment {exp.name}: nothing left to run on {engine}")
        self.variants = variants
        self.nodes = [self.primary.endpoint] + (self.peers[:1] if any(
            v.needs_peer for v in variants) else [])
        self.cluster = cluster or self._cluster_name()
        self.label_base = {"experiment": exp.name, "cluster": self.cluster, "engine": engine,
                           "target": self.primary.label}
        self.ids: dict[Endpoint, str] = {}

    # -- setup -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connection(self, node: Endpoint | None = None, database: str | None = None
                    ) -> Iterator[pymysql.connections.Connection]:
        try:
            conn = connect(self.primary, node, database)
        except pymysql.MySQLError as exc:
            where = node or self.primary.endpoint
            raise RunError(f"experiment {self.exp.name}: cannot connect to "
                           f"{where.host}:{where.port}: {exc}") from exc
        try:
            yield conn
        finally:
            conn.close()

    def _cluster_name(self) -> str:
        if not self.galera:
            return "none"
        with self._connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT @@wsrep_cluster_name")
            return str(cur.fetchone()[0])

    def labels(self, variant: str) -> dict[str, str]:
        return {**self.label_base, "variant": variant}

    def prepare(self) -> None:
        """Create the database and tables (idempotent) and fill the read-only data."""
        needed = {v.table for v in self.variants}
        if self.exp.kind == "fk":
            needed |= {"users", "forum"}
        with self._connection() as conn, conn.cursor() as cur:
            self._ddl(cur, f"CREATE DATABASE IF NOT EXISTS `{self.database}`", "database")
            cur.execute(f"USE `{self.database}`")
            for name, stmt in self.tables.items():  # dict order: parents first
                if name in needed:
                    self._ddl(cur, stmt, name)
            self._fill(cur)
            for t in WRITTEN.get(self.exp.kind, ()):
                if t in needed:
                    n = self._count(cur, t)
                    self.books[t] = RowBook(n, n)
        for node in self.nodes:
            try:
                self.ids[node] = node_identity(self.primary, node)
            except pymysql.MySQLError as exc:
                raise RunError(f"experiment {self.exp.name}: cannot reach node "
                               f"{node.host}:{node.port}: {exc}") from exc

    def _ddl(self, cur: pymysql.cursors.Cursor, stmt: str, what: str) -> None:
        try:
            cur.execute(stmt)
        except pymysql.MySQLError as exc:
            raise RunError(f"experiment {self.exp.name}: target {self.primary.label} refused the"
                           f" DDL for {what}: {exc}") from exc

    def _count(self, cur: pymysql.cursors.Cursor, table: str) -> int:
        if self.galera:  # see every commit certified anywhere in the cluster
            cur.execute("SET SESSION wsrep_sync_wait = 1")
        cur.execute(f"SELECT COUNT(*) FROM `{self.database}`.`{table}`")
        return int(cur.fetchone()[0])

    def _fill(self, cur: pymysql.cursors.Cursor) -> None:
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
        else:
            return
        for table, (n, cols, row) in spec.items():
            if self._count(cur, table) >= n:
                continue
            marks = ", ".join(["%s"] * len(cols.split(",")))
            # pymysql turns this executemany into multi-row INSERTs.
            stmt = f"INSERT IGNORE INTO {table} ({cols}) VALUES ({marks})"
            for lo in range(1, n + 1, 2000):
                cur.executemany(stmt, [row(i) for i in range(lo, min(n, lo + 1999) + 1)])

    # -- windows -----------------------------------------------------------------------
    def _endpoints(self, v: Variant) -> list[Endpoint]:
        return [self.primary.endpoint] + (self.peers[:1] if v.needs_peer else [])

    def _options(self, v: Variant, threads: int) -> dict[str, object]:
        opts: dict[str, object] = {**self.exp.options, **v.options, "table": v.table}
        if self.exp.kind == "read_backup":
            opts["writer"] = self.ids.get(self.primary.endpoint, "")
            opts["reader"] = self.ids.get(self.peers[0], "") if v.reader == "peer" else ""
        if self.exp.kind == "batching_pk":
            # Unique per window (windows start >= 1 s apart) and below 2^53, where Lua
            # numbers stop being exact: 1e7 ids per second since 2024.
            opts["start_id"] = str(int(time.time() - 1_704_067_200) * 10_000_000)
        return opts

    def _health(self) -> list:
        return [node_health(self.primary, n, self.galera) for n in self.nodes]

    def run_window(self, v: Variant, seq: int, seconds: float, warmup: bool = False
                   ) -> WindowResult:
        threads = v.threads or self.threads
        w = WindowResult(self.exp.name, v.name, seq, time.time(), 0.0, threads, warmup=warmup)
        self._rebase()
        before = self._health()
        down = [h for h in before if not h.reachable and h.node in self._endpoints(v)]
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        if down:
            # Nothing to measure; keep the rhythm short and let the next window try again.
            time.sleep(min(seconds, 2.0))
            res = sysbench.Result(exit_code=-1, fatal=[f"node {down[0].node.host}:"
                                                       f"{down[0].node.port} is down"])
        else:
            args = sysbench.argv(self.exp.script, self._endpoints(v), self.primary.user,
                                 self.database, threads, seconds, self._options(v, threads))
            res = sysbench.run(args, self.primary.password, timeout=seconds + 30)
        after = self._health()
        w.end = time.time()
        lua_counts = self.exp.kind in WRITTEN or self.exp.kind == "read_backup"
        w.reasons = window.judge(before, after, res, threads, lua_counts)
        w.valid = not w.reasons
        w.run = res
        w.throughput = res.tps * v.rows_per_event
        if res.wall_seconds > 0:
            w.cpu_cores = res.cpu_seconds / res.wall_seconds
        w.saturated = w.cpu_cores >= SATURATION * min(threads, os.cpu_count() or 1)
        self._book(v, res, threads)
        self_after = resource.getrusage(resource.RUSAGE_SELF)
        own = (self_after.ru_utime - self_before.ru_utime) + (self_after.ru_stime
                                                              - self_before.ru_stime)
        if self.metrics:
            m, e = self.metrics, {"experiment": self.exp.name}
            m.cpu.labels(**e).inc(own + res.cpu_seconds)
            m.cores.labels(**e).set(w.cpu_cores)
            m.saturated.labels(**e).set(1 if w.saturated else 0)
            if not warmup:
                m.window(self.labels(v.name), w)
        return w

    def _book(self, v: Variant, res: sysbench.Result, threads: int) -> None:
        book = self.books.get(v.table)
        if book is None:
            return
        if res.threads_reported == threads:
            book.low += res.committed
            # An error may hide a commit that landed (reply lost): at most one event each.
            book.high += res.committed + res.errors * v.rows_per_event
        elif res.exit_code != -1 or res.transactions:
            book.rebase = (f"a {v.name} window ended without its threads' commit counts"
                           f" ({res.fatal[0] if res.fatal else 'sysbench aborted'})")

    def _rebase(self) -> None:
        """Re-read the count of a table whose book broke, so later windows stay verifiable."""
        pending = [t for t, b in self.books.items() if b.rebase]
        if not pending:
            return
        try:
            with connection(self.primary, None, self.database) as conn, conn.cursor() as cur:
                for table in pending:
                    n = self._count(cur, table)
                    self.rebased.setdefault(table, []).append(self.books[table].rebase)
                    self.books[table] = RowBook(n, n)
        except pymysql.MySQLError:
            pass  # the target is down: try again before the next window

    def verify(self) -> list[dict]:
        """Compare every written table's row count with the book; re-read broken books."""
        if not self.books:
            return []
        out = []
        with self._connection(database=self.database) as conn, conn.cursor() as cur:
            for table, book in self.books.items():
                found = self._count(cur, table)
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
                out.append(rec)
        self.verifications.extend(out)
        if self.metrics:
            bad = [r for r in out if r["ok"] is False]
            self.metrics.verified.labels(experiment=self.exp.name).set(0 if bad else 1)
        return out

    def _maybe_truncate(self) -> None:
        if not self.books or max(b.high for b in self.books.values()) < self.exp.max_rows:
            return
        self.verify()
        with self._connection(database=self.database) as conn, conn.cursor() as cur:
            for table in self.books:
                cur.execute(f"TRUNCATE TABLE `{table}`")
                self.books[table] = RowBook(0, 0)

    # -- the run -----------------------------------------------------------------------
    def update_estimates(self) -> dict[str, dict]:
        out = {}
        for v in self.variants:
            if not v.baseline:
                continue
            plist = stats.pairs(self._stat_windows(), v.name, v.baseline)
            over, lat = stats.overhead(plist), stats.latency_ratio(plist)
            last = None
            if plist and plist[-1][0].throughput > 0:
                b, x = plist[-1]
                last = (x.throughput / b.throughput, x.seq)
            out[v.name] = {"baseline": v.baseline, "overhead": asdict(over),
                           "latency_ratio": asdict(lat)}
            if self.metrics:
                self.metrics.estimate({**self.labels(v.name), "baseline": v.baseline}, over,
                                      lat, last)
        return out

    def _stat_windows(self) -> list[stats.Window]:
        return [stats.Window(w.variant, w.seq, w.valid, w.throughput, w.p95)
                for w in self.windows if not w.warmup]

    def run(self, *, duration: float | None = None, rounds: int | None = None,
            forever: bool = False) -> dict:
        start = time.monotonic()
        if self.metrics:
            self.metrics.info.labels(**self.label_base, version=self.metrics.version).set(1)
        self.out(f"loadgen: {self.exp.name} on {self.engine} {self.primary.label}"
                 f" (db {self.database}): variants {', '.join(v.name for v in self.variants)},"
                 f" {self.threads} threads, {self.window_s:g} s windows")
        old = {s: signal.getsignal(s) for s in (signal.SIGTERM,)}

        def on_term(signum: int, frame: object) -> None:
            raise Stop()

        signal.signal(signal.SIGTERM, on_term)
        try:
            self.prepare()
            if self.warmup_s > 0:
                per = max(1.0, self.warmup_s / len(self.variants))
                for v in self.variants:
                    self.windows.append(self.run_window(v, 0, per, warmup=True))
            round_len = self.window_s * len(self.variants)
            seq = 0
            while True:
                seq += 1
                self._maybe_truncate()
                order = self.variants if seq % 2 else list(reversed(self.variants))
                for v in order:
                    w = self.run_window(v, seq, self.window_s)
                    self.windows.append(w)
                    flag = "" if w.valid else "  INVALID: " + "; ".join(w.reasons)
                    self.out(f"  round {seq} {v.name:<16} {w.throughput:10.1f}/s"
                             f"  p95 {w.p95 * 1000:8.2f} ms{flag}")
                self.update_estimates()
                if forever:
                    continue
                if rounds is not None:
                    if seq >= rounds:
                        break
                elif time.monotonic() - start + round_len > (duration or self.exp.duration):
                    break
        except (Stop, KeyboardInterrupt):
            self.stopped = True
            self.out("loadgen: stopping")
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        return self.finish()

    def finish(self) -> dict:
        estimates = self.update_estimates()
        try:
            verification = self.verify()
        except RunError as exc:
            verification = [{"ok": None, "note": f"not verified: {exc}"}]
        result = {"experiment": self.exp.name, "engine": self.engine,
                  "target": self.primary.label, "cluster": self.cluster,
                  "database": self.database, "threads": self.threads,
                  "window_seconds": self.window_s,
                  "windows": [w.as_dict() for w in self.windows],
                  "estimates": estimates, "verification": verification}
        self.out(summary(result))
        return result


def _fmt_pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:+.1f}%"


def summary(result: dict) -> str:
    ws = [w for w in result["windows"] if not w["warmup"]]
    lines = [f"experiment {result['experiment']} ({result['engine']}, {result['target']}):"]
    variants = list(dict.fromkeys(w["variant"] for w in ws))
    for name in variants:
        mine = [w for w in ws if w["variant"] == name]
        ok = [w for w in mine if w["valid"]]
        tp = sum(w["throughput"] for w in ok) / len(ok) if ok else math.nan
        p95 = sum(w["latency"].get("0.95", 0) for w in ok) / len(ok) if ok else math.nan
        sat = sum(1 for w in mine if w["saturated"])
        stale = sum(w["stale"] for w in ok)
        lines.append(f"  {name:<16} {tp:10.1f}/s  p95 {p95 * 1000:8.2f} ms  valid"
                     f" {len(ok)}/{len(mine)} windows"
                     + (f"  stale reads {stale / max(1, sum(w['transactions'] for w in ok)):.1%}"
                        if stale else "")
                     + (f"  (loadgen saturated in {sat})" if sat else ""))
    for name, est in result["estimates"].items():
        o, lr = est["overhead"], est["latency_ratio"]
        lines.append(f"  overhead {name} vs {est['baseline']}: {_fmt_pct(o['mean'])}"
                     f" [95% CI {_fmt_pct(o['low'])}, {_fmt_pct(o['high'])}] over {o['n']}"
                     f" pairs; detectable change {_fmt_pct(o['min_detectable'])};"
                     f" p95 latency x{lr['mean']:.2f}")
    for v in result["verification"]:
        if v.get("ok") is None:
            lines.append(f"  rows {v.get('table', '')}: {v['note']}")
            continue
        if v.get("note"):
            lines.append(f"  rows {v['table']}: {v['note']}")
        lines.append(f"  rows {v['table']}: found {v['found']}, expected"
                     f" {v['expected_low']}..{v['expected_high']}:"
                     f" {'OK' if v['ok'] else 'MISMATCH'}")
    return "\n".join(lines)


__all__ = ["Runner", "RunError", "TargetError", "WindowResult", "summary"]
