"""One experiment run: prepare the tables, warm up, run the design's rounds, pair, verify.

The design (designs.py) decides what a round's windows run: by default each window runs a
baseline and its variants interleaved step by step, so drift hits them alike; `windows`
and `abba` run one variant per window. A window is valid only if sysbench finished cleanly
and the health snapshots before and after it show no cluster event (window.judge); invalid
windows are exported and listed but never enter a throughput figure or a pair.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import re
import resource
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict

import pymysql

from clusterscope_loadgen import ddl, designs, estimators, inject, stats, sysbench, window
from clusterscope_loadgen.config import Experiment
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
from clusterscope_loadgen.variant import Variant

WRITTEN = {"fk": ("users_posts", "users_posts_fk1", "users_posts_fk"),
           "batching_pk": ("bp_pk", "bp_nopk")}
QUIESCE_SECONDS = 30.0  # longest wait for a dead sysbench's statements before a re-read
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
                 database: str | None = None, design: str | None = None,
                 estimator: str | None = None, out: Callable[[str], None] = print) -> None:
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
        self.term = False  # SIGTERM seen: stop after the current window
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
        self.design, self.estimator = self._choose(design, estimator)
        self.nodes = [self.primary.endpoint] + (self.peers[:1] if any(
            v.needs_peer for v in variants) else [])
        self.cluster = cluster or self._cluster_name()
        self.label_base = {"experiment": exp.name, "cluster": self.cluster, "engine": engine,
                           "target": self.primary.label}
        self.ids: dict[Endpoint, str] = {}
        self.rng = random.Random()  # the abba design's block orders

    def _choose(self, design: str | None, estimator: str | None) -> tuple[str, str]:
        """--design/--estimator, else the experiment's, else the defaults. The default
        design falls back to `windows` (said so) for variants that cannot share a window;
        a design asked for by name does not."""
        name = self.exp.name
        est = estimator or self.exp.estimator or estimators.DEFAULT
        if est not in estimators.ESTIMATORS:
            raise RunError(f"experiment {name}: no estimator {est!r} (known:"
                           f" {', '.join(estimators.ESTIMATORS)})")
        chosen = design or self.exp.design
        d = chosen or designs.DEFAULT
        if d not in designs.DESIGNS:
            raise RunError(f"experiment {name}: no design {d!r} (known:"
                           f" {', '.join(designs.DESIGNS)})")
        if d == "interleaved":
            why = next(filter(None, map(designs.not_interleavable,
                                        designs.groups(self.variants))), None)
            if why and chosen:
                raise RunError(f"experiment {name}: design interleaved needs a baseline and"
                               f" its variants to share a window, but {why}; use --design"
                               " windows or abba")
            if why:
                self.out(f"loadgen: {name}: {why}, so they cannot be interleaved: design"
                         " windows")
                d = "windows"
        return d, est

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
        elif self.exp.kind == "inject":
            try:
                inject.fill(cur, self.variants, self.exp.options)
            except ValueError as exc:
                raise RunError(f"experiment {self.exp.name}: {exc}") from exc
            return
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

    def _mix(self, group: list[Variant]) -> tuple[str, dict[str, object]]:
        """The --mix of a window's variants (their own options) and the shared flat ones."""
        items = []
        for v in group:
            own = {k: val for k, val in self._options(v, 0).items()
                   if k in v.options or k in ("table", "writer", "reader")}
            items.append(";".join([v.name, *(f"{k}={val}" for k, val in own.items())]))
        flat = {k: val for k, val in self._options(group[0], 0).items()
                if k in self.exp.options or k == "start_id"}
        return "|".join(items), flat

    def run_window(self, v: Variant, seq: int, seconds: float, warmup: bool = False
                   ) -> WindowResult:
        """One variant alone in a window (the windows and abba designs)."""
        return self.run_group([v], seq, seconds, warmup)[0]

    def run_group(self, group: list[Variant], seq: int, seconds: float, warmup: bool = False,
                  interleaved: bool = False) -> list[WindowResult]:
        """One sysbench window running `group`: alone (one variant; throughput = sysbench's
        events per second) or interleaved (every event runs each variant once; a variant's
        throughput = threads / its mean step latency). One WindowResult per variant, all
        judged by the same health snapshots and sysbench outcome."""
        lead = group[0]
        threads = lead.threads or self.threads
        t0 = time.time()
        self._rebase()
        before = self._health()
        down = [h for h in before if not h.reachable and h.node in self._endpoints(lead)]
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        if down:
            # Nothing to measure; keep the rhythm short and let the next window try again.
            time.sleep(min(seconds, 2.0))
            res = sysbench.Result(exit_code=-1, fatal=[f"node {down[0].node.host}:"
                                                       f"{down[0].node.port} is down"])
        else:
            mix, flat = self._mix(group)
            args = sysbench.argv(self.exp.script, self._endpoints(lead), self.primary.user,
                                 self.database, threads, seconds, {**flat, "mix": mix})
            try:
                res = sysbench.run(args, self.primary.password, timeout=seconds + 30)
            except KeyboardInterrupt:
                # Ctrl-C reached sysbench too: its rows of this window are not counted.
                for v in group:
                    if v.table in self.books:
                        self.books[v.table].rebase = f"a {v.name} window was interrupted"
                raise
        after = self._health()
        end = time.time()
        lua_counts = self.exp.kind in WRITTEN or self.exp.kind == "read_backup"
        reasons = window.judge(before, after, res, threads, lua_counts,
                               [v.name for v in group])
        cores = res.cpu_seconds / res.wall_seconds if res.wall_seconds > 0 else 0.0
        saturated = cores >= SATURATION * min(threads, os.cpu_count() or 1)
        out = []
        for v in group:
            run = _variant_result(res, v.name, threads) if interleaved else res
            w = WindowResult(self.exp.name, v.name, seq, t0, end, threads, run=run,
                             throughput=run.tps * v.rows_per_event, cpu_cores=cores,
                             saturated=saturated, valid=not reasons, reasons=list(reasons),
                             warmup=warmup, interleaved=interleaved)
            vr = res.variants.get(v.name)
            if vr is not None:
                w.mean_latency, w.delay_seconds = vr.mean_latency, (
                    vr.delay_seconds / vr.steps if vr.steps else 0.0)
            self._book(v, res, threads)
            out.append(w)
        self_after = resource.getrusage(resource.RUSAGE_SELF)
        own = (self_after.ru_utime - self_before.ru_utime) + (self_after.ru_stime
                                                              - self_before.ru_stime)
        if self.metrics:
            m, e = self.metrics, {"experiment": self.exp.name}
            m.cpu.labels(**e).inc(own + res.cpu_seconds)
            m.cores.labels(**e).set(cores)
            m.saturated.labels(**e).set(1 if saturated else 0)
            if not warmup:
                for w in out:
                    m.window(self.labels(w.variant), w)
        return out

    def _book(self, v: Variant, res: sysbench.Result, threads: int) -> None:
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

    def _rebase(self) -> None:
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
                    n = self._count(cur, table)
                    self.rebased.setdefault(table, []).append(self.books[table].rebase)
                    self.books[table] = RowBook(n, n)
        except pymysql.MySQLError:
            pass  # the target is down: try again before the next window

    def verify(self, before_truncate: bool = False) -> list[dict]:
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
                if before_truncate:
                    rec["before_truncate"] = True
                out.append(rec)
        self.verifications.extend(out)
        if self.metrics:
            bad = [r for r in out if r["ok"] is False]
            self.metrics.verified.labels(experiment=self.exp.name).set(0 if bad else 1)
        return out

    def _maybe_truncate(self) -> None:
        if not self.books or max(b.high for b in self.books.values()) < self.exp.max_rows:
            return
        self.verify(before_truncate=True)
        with self._connection(database=self.database) as conn, conn.cursor() as cur:
            for table in self.books:
                cur.execute(f"TRUNCATE TABLE `{table}`")
                self.books[table] = RowBook(0, 0)

    # -- the run -----------------------------------------------------------------------
    def update_estimates(self, every_estimator: bool = False) -> dict[str, dict]:
        """Each variant's overhead against its baseline by the run's estimator (and, with
        `every_estimator`, by all of them, for the JSON and the summary)."""
        out = {}
        wins = self._stat_windows()
        for v in self.variants:
            if not v.baseline:
                continue
            us = designs.units(wins, v.name, v.baseline)
            over = estimators.ESTIMATORS[self.estimator](us)
            lat = estimators.latency_ratio(us)
            last = None
            if us and us[-1].baseline > 0:
                last = (us[-1].variant / us[-1].baseline, us[-1].seq)
            out[v.name] = {"baseline": v.baseline, "estimator": self.estimator,
                           "overhead": asdict(over), "latency_ratio": asdict(lat)}
            if every_estimator:
                out[v.name]["estimators"] = {
                    name: (asdict(over) if name == self.estimator else asdict(fn(us)))
                    for name, fn in estimators.ESTIMATORS.items()}
            if self.metrics:
                pair = {**self.labels(v.name), "baseline": v.baseline}
                self.metrics.estimate(pair, over, lat, last)
                self.metrics.units.publish(self, v.name, pair, us)
        return out

    def _stat_windows(self) -> list[stats.Window]:
        return [stats.Window(w.variant, w.seq, w.valid, w.throughput, w.p95)
                for w in self.windows if not w.warmup]

    def _warm_up(self) -> None:
        plan = (designs.groups(self.variants) if self.design == "interleaved"
                else [[v] for v in self.variants])
        per = max(1.0, self.warmup_s / len(plan))
        for group in plan:
            self.windows += self.run_group(group, 0, per, warmup=True,
                                           interleaved=self.design == "interleaved")

    def run(self, *, duration: float | None = None, rounds: int | None = None,
            forever: bool = False) -> dict:
        """Rounds of the run's design until the duration, the rounds or a signal end it.
        Called again on the same runner, it goes on numbering rounds where it stopped."""
        start = time.monotonic()
        if self.metrics:
            self.metrics.info.labels(**self.label_base, version=self.metrics.version,
                                     design=self.design, estimator=self.estimator).set(1)
        self.out(f"loadgen: {self.exp.name} on {self.engine} {self.primary.label}"
                 f" (db {self.database}): variants {', '.join(v.name for v in self.variants)},"
                 f" {self.threads} threads, {self.window_s:g} s windows, design {self.design},"
                 f" estimator {self.estimator}")
        old = {s: signal.getsignal(s) for s in (signal.SIGTERM,)}

        def on_term(signum: int, frame: object) -> None:
            # Let the window running now finish (its sysbench books its rows), then stop:
            # killing sysbench mid-window would leave rows committed but not booked.
            self.term = True

        signal.signal(signal.SIGTERM, on_term)
        interleaved = self.design == "interleaved"
        seconds = designs.window_seconds(self.design, self.window_s)
        first = max((w.seq for w in self.windows), default=0)
        checks = len(self.verifications)  # this run's row checks start here
        try:
            self.prepare()
            if self.warmup_s > 0 and not first:
                self._warm_up()
            seq = first
            round_len = 0.0
            while True:
                seq += 1
                self._maybe_truncate()
                plan = designs.round_plan(self.design, self.variants, seq, self.rng)
                round_len = seconds * len(plan)
                for group in plan:
                    if self.term:
                        raise Stop()
                    for w in self.run_group(group, seq, seconds, interleaved=interleaved):
                        self.windows.append(w)
                        flag = "" if w.valid else "  INVALID: " + "; ".join(w.reasons)
                        self.out(f"  round {seq} {w.variant:<16} {w.throughput:10.1f}/s"
                                 f"  p95 {w.p95 * 1000:8.2f} ms{flag}")
                self.update_estimates()
                if self.term:
                    raise Stop()
                if forever:
                    continue
                if rounds is not None:
                    if seq - first >= rounds:
                        break
                elif time.monotonic() - start + round_len > (duration or self.exp.duration):
                    break
        except (Stop, KeyboardInterrupt):
            self.stopped = True
            self.out("loadgen: stopping")
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        return self.finish(checks)

    def finish(self, checks: int = 0) -> dict:
        """Estimates by every estimator, the final row check and the result; `checks`: where
        this run's row checks start (those before truncations count too)."""
        estimates = self.update_estimates(every_estimator=True)
        try:
            self.verify()
            verification = self.verifications[checks:]
        except RunError as exc:
            verification = [*self.verifications[checks:],
                            {"ok": None, "note": f"not verified: {exc}"}]
        result = {"experiment": self.exp.name, "engine": self.engine,
                  "target": self.primary.label, "cluster": self.cluster,
                  "database": self.database, "threads": self.threads,
                  "window_seconds": self.window_s, "design": self.design,
                  "estimator": self.estimator,
                  "windows": [w.as_dict() for w in self.windows],
                  "estimates": estimates, "verification": verification}
        self.out(summary(result))
        return result


def _variant_result(res: sysbench.Result, name: str, threads: int) -> sysbench.Result:
    """A variant's share of an interleaved window as a sysbench result of its own: its
    steps, rows, stale reads and latencies; rates at threads / mean step latency (what the
    threads would reach on this variant alone); errors and exit status of the window."""
    vr = res.variants.get(name, sysbench.VariantRun())
    per_s = threads / vr.seconds if vr.seconds > 0 else 0.0
    return sysbench.Result(
        transactions=vr.steps, tps=vr.steps * per_s, queries=vr.queries,
        qps=vr.queries * per_s, writes=res.writes, errors=res.errors,
        reconnects=res.reconnects, total_time=res.total_time, latency=vr.latency,
        committed=vr.rows, stale=vr.stale, threads_reported=res.threads_reported,
        fatal=res.fatal, exit_code=res.exit_code, cpu_seconds=res.cpu_seconds,
        wall_seconds=res.wall_seconds, variants={name: vr})


def _fmt_pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:+.1f}%"


def summary(result: dict) -> str:
    ws = [w for w in result["windows"] if not w["warmup"]]
    how = (f", design {result['design']}, estimator {result['estimator']}"
           if "design" in result else "")
    lines = [f"experiment {result['experiment']} ({result['engine']}, {result['target']}"
             f"{how}):"]
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
        others = [f"{name} {_fmt_pct(e['mean'])} [{_fmt_pct(e['low'])},"
                  f" {_fmt_pct(e['high'])}] (detectable {_fmt_pct(e['min_detectable'])})"
                  for name, e in est.get("estimators", {}).items()
                  if name != est.get("estimator") and not math.isnan(e["low"])]
        if others:
            lines.append("    by other estimators: " + "; ".join(others))
    earlier = [v for v in result["verification"] if v.get("before_truncate")]
    if earlier and all(v["ok"] for v in earlier):
        tables = len({v["table"] for v in earlier})
        lines.append(f"  rows: checked before each of {len(earlier) // tables} truncations at"
                     " max_rows: all OK")
    for v in result["verification"]:
        if v.get("before_truncate") and v["ok"]:
            continue
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
