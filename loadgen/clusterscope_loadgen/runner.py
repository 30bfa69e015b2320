"""One experiment run: the window loop.

Each round runs every group's windows by the group's design (designs.py): by default each
group runs time-sliced in one sysbench window, every thread on one variant at a time.
A window is valid only if sysbench finished cleanly and neither the health snapshots
before and after it nor the polls while it ran show a cluster event (window.judge);
invalid windows are exported and listed but never enter a throughput figure or a unit.
Tables: loadgen_tables.py; estimates: estimates.py; the printed summary: summary.py.
"""

from __future__ import annotations

import os
import random
import re
import resource
import signal
import time
from collections.abc import Callable

import pymysql

from clusterscope_loadgen import designs, estimators, slots, sysbench, window
from clusterscope_loadgen.config import Experiment
from clusterscope_loadgen.estimates import Estimates
from clusterscope_loadgen.loadgen_tables import WRITTEN, TableError, Tables
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.nodewatch import Seen, Watch
from clusterscope_loadgen.results import WindowResult, variant_share
from clusterscope_loadgen.stats import SlotMeasure
from clusterscope_loadgen.summary import summary
from clusterscope_loadgen.sysbench import Endpoint
from clusterscope_loadgen.target import (
    Target,
    TargetError,
    check_ndb,
    connection,
    galera_peers,
    window_status,
)
from clusterscope_loadgen.target import health as node_health
from clusterscope_loadgen.target import identity as node_identity
from clusterscope_loadgen.variant import Variant

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
                 estimator: str | None = None, slot: float | None = None,
                 washout: float | None = None, estimate_window: float | None = None,
                 out: Callable[[str], None] = print) -> None:
        if not targets:
            raise RunError(f"experiment {exp.name}: no --target given")
        self.exp, self.engine, self.targets = exp, engine, targets
        self.primary = targets[0]
        self.threads = threads or exp.threads
        self.window_s = window or exp.window
        self.warmup_s = exp.warmup if warmup is None else warmup
        self.slot_s = slot or exp.slot
        self.washout_s = exp.washout if washout is None else washout
        if not 0 <= self.washout_s < self.slot_s:
            raise RunError(f"experiment {exp.name}: the washout ({self.washout_s:g} s) must be"
                           f" shorter than a slot ({self.slot_s:g} s)")
        self.metrics, self.out = metrics, out
        self.database = database or "cs_" + re.sub(r"[^a-z0-9_]", "_", exp.name.lower())
        self.windows: list[WindowResult] = []
        self.stopped = False
        self.term = False  # SIGTERM seen: stop after the current window
        self.galera = engine == "galera"
        try:
            exp.tables(engine)
        except Exception as exc:  # ddl.DDLError
            raise RunError(f"experiment {exp.name}: {exc}") from exc
        if engine == "ndb":
            for t in targets:  # every SQL node written to must have the NDB engine
                try:
                    check_ndb(t)
                except TargetError as exc:
                    raise RunError(f"experiment {exp.name}: {exc}") from exc
        self.variants = self._variants(exp.variants_for(engine, only))
        self.estimator = estimator or exp.estimator or estimators.DEFAULT
        if self.estimator not in estimators.ESTIMATORS:
            raise RunError(f"experiment {exp.name}: no estimator {self.estimator!r} (known:"
                           f" {', '.join(estimators.ESTIMATORS)})")
        try:
            self.plan = designs.choose(designs.groups(self.variants), design,
                                       exp.design, out)
        except ValueError as exc:
            raise RunError(f"experiment {exp.name}: {exc}") from exc
        self.nodes = [self.primary.endpoint] + (self.peers[:1] if any(
            v.needs_peer for v in self.variants) else [])
        self.cluster = cluster or self._cluster_name()
        self.label_base = {"experiment": exp.name, "cluster": self.cluster, "engine": engine,
                           "target": self.primary.label}
        self.ids: dict[Endpoint, str] = {}
        self.last_slots: tuple[slots.Plan, list[slots.Slot]] | None = None
        self.rng = random.Random()  # the slot plans' and abba blocks' orders
        self.tables = Tables(exp, engine, self.primary, self.database, self.variants,
                             self.nodes, out)
        self.estimates = Estimates(self, estimate_window or exp.estimate_window)

    def _variants(self, variants: list[Variant]) -> list[Variant]:
        exp = self.exp
        self.peers = [t.endpoint for t in self.targets[1:]]
        if any(v.needs_peer for v in variants) and not self.peers and self.galera:
            self.peers = galera_peers(self.primary)
        dropped = [v.name for v in variants if v.needs_peer and not self.peers]
        if dropped:
            if self.galera:
                raise RunError(f"experiment {exp.name}: variant(s) {', '.join(dropped)} need a"
                               " second Galera node; pass it with a second --target"
                               " (wsrep_incoming_addresses lists none: set"
                               " wsrep_node_incoming_address on the nodes)")
            self.out(f"loadgen: {exp.name}: skipping {', '.join(dropped)} (needs a second"
                     " node)")
            variants = [v for v in variants if v.name not in dropped
                        and v.baseline not in dropped]
        missing = {v.table for v in variants} - set(exp.tables(self.engine))
        if missing:
            raise RunError(f"experiment {exp.name}: variant table(s) {', '.join(missing)} have"
                           f" no DDL for engine {self.engine}")
        if not variants:
            raise RunError(f"experiment {exp.name}: nothing left to run on {self.engine}")
        return variants

    @property
    def design(self) -> str:
        """The run's design: one name, or the groups' names joined by '+'."""
        return "+".join(dict.fromkeys(d for _, d in self.plan))

    def design_of(self, variant: str) -> str:
        return next(d for g, d in self.plan if any(v.name == variant for v in g))

    @property
    def verifications(self) -> list[dict]:
        return self.tables.verifications

    def _cluster_name(self) -> str:
        if not self.galera:
            return "none"
        try:
            with connection(self.primary) as conn, conn.cursor() as cur:
                cur.execute("SELECT @@wsrep_cluster_name")
                return str(cur.fetchone()[0])
        except Exception as exc:  # pymysql.MySQLError
            raise RunError(f"experiment {self.exp.name}: cannot connect to"
                           f" {self.primary.label}: {exc}") from exc

    def labels(self, variant: str) -> dict[str, str]:
        return {**self.label_base, "variant": variant}

    def prepare(self) -> None:
        """Create the database and tables (idempotent), fill them, learn the nodes."""
        try:
            self.tables.prepare()
        except TableError as exc:
            raise RunError(str(exc)) from exc
        for node in self.nodes:
            try:
                self.ids[node] = node_identity(self.primary, node)
            except Exception as exc:  # pymysql.MySQLError
                raise RunError(f"experiment {self.exp.name}: cannot reach node "
                               f"{node.host}:{node.port}: {exc}") from exc

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
        return self.run_group([v], seq, seconds, warmup, design="windows")[0]

    def run_group(self, group: list[Variant], seq: int, seconds: float, warmup: bool = False,
                  interleaved: bool = False, design: str | None = None,
                  curve_ms: int = 0) -> list[WindowResult]:
        """One sysbench window running `group`: alone (one variant; throughput = sysbench's
        events per second), interleaved (every event runs each variant once; a variant's
        throughput = threads / its mean step latency) or time-sliced (slots of one variant
        on every thread; throughput per slot). One WindowResult per variant, all judged by
        the same health snapshots, polls and sysbench outcome."""
        design = design or ("interleaved" if interleaved else "windows")
        lead = group[0]
        threads = lead.threads or self.threads
        self.tables.rebase()
        rows = self.tables.row_counts()
        before = self._health()
        t0 = time.time()  # the verdict covers what happens after the snapshot was read
        down = [h for h in before if not h.reachable and h.node in self._endpoints(lead)]
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        plan = epoch = None
        seen = Seen()
        if down:
            # Nothing to measure; keep the rhythm short and let the next window try again.
            time.sleep(min(seconds, 2.0))
            res = sysbench.Result(exit_code=-1, fatal=[f"node {down[0].node.host}:"
                                                       f"{down[0].node.port} is down"])
        else:
            mix, flat = self._mix(group)
            opts: dict[str, object] = {**flat, "mix": mix}
            run_for = seconds
            if design == "timesliced":
                plan = slots.make_plan(len(group), seconds, self.slot_s,
                                       self.washout_s, self.rng)
                epoch = time.monotonic() + slots.LEAD
                opts.update(plan.options(epoch, curve_ms))
                run_for = slots.LEAD + plan.seconds + 2.0  # the plan ends the threads
            args = sysbench.argv(self.exp.script, self._endpoints(lead), self.primary.user,
                                 self.database, threads, run_for, opts)
            watch = Watch(self.primary, self.nodes) if self.galera else None
            if watch:
                watch.start()
            try:
                res = sysbench.run(args, self.primary.password, timeout=run_for + 30)
            except KeyboardInterrupt:
                # Ctrl-C reached sysbench too: its rows of this window are not counted.
                self.tables.interrupted(group)
                raise
            finally:
                if watch:
                    seen = watch.stop()
        end = time.time()  # taken before the snapshot after: see window.py
        after = self._health()
        lua_counts = self.exp.kind in WRITTEN or self.exp.kind == "read_backup"
        reasons = window.judge(before, after, res, threads, lua_counts,
                               [v.name for v in group], seen)
        cores = res.cpu_seconds / res.wall_seconds if res.wall_seconds > 0 else 0.0
        saturated = cores >= SATURATION * min(threads, os.cpu_count() or 1)
        measured = self._slots(group, res, plan, epoch) if plan else {}
        if plan and curve_ms:  # `loadgen relaxation` reads each slot's bins
            self.last_slots = (plan, slots.parse(res.slot_lines, plan, epoch or 0.0,
                                                 time.time() - time.monotonic()))
        status = window_status(before, after)
        out = []
        for v in group:
            mine = tuple(s for s in measured.values() if s.variant == v.name)
            done = [s for s in mine if s.complete]
            rate = None
            if plan is not None:  # events per second over the variant's counted slots
                rate = (sum(s.throughput for s in done) / len(done) / v.rows_per_event
                        if done else 0.0)
            run = (variant_share(res, v.name, threads, rate) if design in designs.SHARED
                   else res)
            w = WindowResult(self.exp.name, v.name, seq, t0, end, threads, run=run,
                             throughput=run.tps * v.rows_per_event, cpu_cores=cores,
                             saturated=saturated, valid=not reasons, reasons=list(reasons),
                             warmup=warmup, interleaved=design == "interleaved",
                             design=design, estimand=designs.ESTIMAND[design], rows=rows,
                             status=status, polls=len(seen.looks), polls_failed=seen.failed)
            vr = res.variants.get(v.name)
            if vr is not None and vr.steps:
                w.mean_latency, w.delay_seconds = vr.mean_latency, vr.delay_seconds / vr.steps
                w.client_cpu = vr.cpu_seconds / vr.steps
            if plan is not None:
                w.slots, w.k = mine, plan.k
                w.slot_seconds, w.washout_seconds = plan.slot, plan.washout
            self.tables.book(v, res, threads)
            out.append(w)
        res.slot_lines = []
        self._account(res, self_before, cores, saturated, out, warmup)
        return out

    def _slots(self, group: list[Variant], res: sysbench.Result, plan: slots.Plan,
               epoch: float | None) -> dict[int, SlotMeasure]:
        offset = time.time() - time.monotonic()
        return {m.index: m for m in slots.measures(
            res.slot_lines, plan, epoch or 0.0, offset, [v.name for v in group],
            [v.rows_per_event for v in group])}

    def _account(self, res: sysbench.Result, self_before: resource.struct_rusage,
                 cores: float, saturated: bool, out: list[WindowResult], warmup: bool) -> None:
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

    # -- the run -----------------------------------------------------------------------
    def update_estimates(self, every_estimator: bool = False) -> dict[str, dict]:
        return self.estimates.update(every_estimator)

    def _warm_up(self) -> None:
        per = max(1.0, self.warmup_s / len(self.plan))
        for group, design in self.plan:
            todo = [group] if design in designs.SHARED else [[v] for v in group]
            for g in todo:
                # a warm-up needs no slots: every variant interleaved (or alone) warms all
                shared = "interleaved" if len(g) > 1 else "windows"
                self.windows += self.run_group(g, 0, per, warmup=True, design=shared)

    def _forget_old(self) -> None:
        """An always-on run keeps the windows its sliding window still needs."""
        keep = time.time() - 2 * self.estimates.window - 600
        self.windows = [w for w in self.windows if w.end >= keep]

    def run(self, *, duration: float | None = None, rounds: int | None = None,
            forever: bool = False) -> dict:
        """Rounds of the run's designs until the duration, the rounds or a signal end it.
        Called again on the same runner, it goes on numbering rounds where it stopped and
        its estimates keep the units of earlier calls inside their sliding window."""
        start = time.monotonic()
        self.estimates.info()
        self.out(f"loadgen: {self.exp.name} on {self.engine} {self.primary.label}"
                 f" (db {self.database}): variants {', '.join(v.name for v in self.variants)},"
                 f" {self.threads} threads, {self.window_s:g} s windows, design {self.design}"
                 + (f" ({self.slot_s:g} s slots, {self.washout_s:g} s washout)"
                    if "timesliced" in self.design else "")
                 + f", estimator {self.estimator}")
        old = {s: signal.getsignal(s) for s in (signal.SIGTERM,)}

        def on_term(signum: int, frame: object) -> None:
            # Let the window running now finish (its sysbench books its rows), then stop:
            # killing sysbench mid-window would leave rows committed but not booked.
            self.term = True

        signal.signal(signal.SIGTERM, on_term)
        first = max((w.seq for w in self.windows), default=0)
        began = time.time()
        checks = len(self.verifications)  # this run's row checks start here
        try:
            self.prepare()
            if self.warmup_s > 0:
                self._warm_up()
            seq = first
            while True:
                seq += 1
                self._round(seq)
                self.update_estimates()
                self._forget_old()
                if self.term:
                    raise Stop()
                if forever:
                    continue
                if rounds is not None:
                    if seq - first >= rounds:
                        break
                elif time.monotonic() - start + self._round_seconds() > (
                        duration or self.exp.duration):
                    break
        except (Stop, KeyboardInterrupt):
            self.stopped = True
            self.out("loadgen: stopping")
        except TableError as exc:
            raise RunError(str(exc)) from exc
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        return self.finish(checks, began)

    def _round(self, seq: int) -> None:
        for group, design in designs.round_plan(self.plan, seq, self.rng):
            if self.term:
                raise Stop()
            # before every window, not once a round: a table overshoots max_rows by at
            # most one window's writes, however many groups a round holds
            self.tables.maybe_trim()
            seconds = designs.window_seconds(design, self.window_s)
            for w in self.run_group(group, seq, seconds, design=design):
                self.windows.append(w)
                flag = "" if w.valid else "  INVALID: " + "; ".join(w.reasons)
                self.out(f"  round {seq} {w.variant:<16} {w.throughput:10.1f}/s"
                         f"  p95 {w.p95 * 1000:8.2f} ms{flag}")

    def _round_seconds(self) -> float:
        total = 0.0
        for group, design in self.plan:
            n = 1 if design in designs.SHARED else len(group) * (2 if design == "abba" else 1)
            total += n * (designs.window_seconds(design, self.window_s) + 1.0)
        return total

    def finish(self, checks: int = 0, began: float = 0.0) -> dict:
        """Estimates by every estimator, the final row check and the result; `checks`: where
        this run's row checks start (those before trims count too), `began`: when this call
        started (an earlier call's windows are not its own)."""
        estimates = self.update_estimates(every_estimator=True)
        try:
            self.tables.verify()
            verification = self.verifications[checks:]
        except (TableError, pymysql.MySQLError) as exc:  # the cluster refused the count
            verification = [*self.verifications[checks:],
                            {"ok": None, "note": f"not verified: {exc}"}]
        if self.metrics and verification:
            bad = [r for r in verification if r.get("ok") is False]
            self.metrics.verified.labels(experiment=self.exp.name).set(0 if bad else 1)
        result = {"experiment": self.exp.name, "engine": self.engine,
                  "target": self.primary.label, "cluster": self.cluster,
                  "database": self.database, "threads": self.threads,
                  "window_seconds": self.window_s, "design": self.design,
                  "designs": {g[0].name: d for g, d in self.plan},
                  "estimands": sorted({designs.ESTIMAND[d] for _, d in self.plan}),
                  "slot_seconds": self.slot_s, "washout_seconds": self.washout_s,
                  "estimator": self.estimator,
                  "estimate_window_seconds": self.estimates.window,
                  "table_rows": self.exp.table_rows, "max_rows": self.exp.max_rows,
                  "trims": self.tables.trims,
                  "intervals": self.estimates.describe(),
                  "windows": [w.as_dict() for w in self.windows if w.start >= began],
                  "estimates": estimates, "verification": verification}
        self.out(summary(result))
        return result


__all__ = ["Runner", "RunError", "TargetError", "WindowResult", "summary"]
