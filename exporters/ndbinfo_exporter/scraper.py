"""One scrape: connect (or reconnect), check ndbinfo is online, run the enabled collectors
within the budget, and report on each (success, duration, supported, timeouts).

Failures never escape a scrape: they become `ndb_up 0` / `collector_success 0` and one log
line when the situation changes (not one per scrape).

"Offline" is judged per table: only the probe (`nodes`) decides that ndbinfo as a whole is
offline. A table the SQL node lists but its data nodes do not serve (an SQL node newer than
the data nodes, during a rolling upgrade: 0 rows and a Note on 8.0+, "no such table" on
7.x) makes only its collector unsupported, rechecked every RETRY_UNSERVED seconds.

Collectors marked `slow` scan per-fragment views whose size grows with the schema; they run
every `slow_interval` seconds and the scrapes between re-serve their last result, with
`ndb_exporter_collector_data_age_seconds` saying how old it is.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ndbinfo_exporter.collectors import Collector, Context
from ndbinfo_exporter.collectors.restarts import ledger_families
from ndbinfo_exporter.db import (
    Database,
    NdbinfoOffline,
    QueryTimeout,
    SchemaChanged,
    Unavailable,
    ViewUnavailable,
)
from ndbinfo_exporter.families import Families, Family
from ndbinfo_exporter.state import ExporterState

log = logging.getLogger("ndbinfo_exporter.scrape")
RETRY_UNSERVED = 30.0
DEFAULT_SLOW_INTERVAL = 60.0


class Outcome(enum.Enum):
    """What a collector's failure means for the scrape (Scraper._collect acts on it)."""

    TIMEOUT = "timeout"  # counted in ndb_exporter_collector_timeouts_total, a failure
    NOT_SERVED = "not_served"  # listed by the SQL node, not served by the data nodes
    SCHEMA_CHANGED = "schema_changed"  # a column or view moved: re-read the schema
    NODE_LOST = "node_lost"  # the SQL node went away: fail over, or the scrape is down
    FAILED = "failed"  # anything else, a collector bug included: this collector fails


def outcome_of(exc: Exception) -> tuple[Outcome, str]:
    """The outcome of a collector's exception and the problem to log for it."""
    if isinstance(exc, QueryTimeout):
        return Outcome.TIMEOUT, f"timed out ({exc})"
    if isinstance(exc, (NdbinfoOffline, ViewUnavailable)):
        # ndbinfo as a whole answered the probe: this table alone is not served
        return Outcome.NOT_SERVED, str(exc)
    if isinstance(exc, SchemaChanged):
        return Outcome.SCHEMA_CHANGED, f"schema changed ({exc})"
    if isinstance(exc, Unavailable):
        return Outcome.NODE_LOST, str(exc)
    return Outcome.FAILED, f"{type(exc).__name__}: {exc}"


@dataclass
class _Flight:
    """One scrape in progress: probes that arrive meanwhile wait for it and share its
    result instead of queuing scrapes of their own."""
    done: threading.Event = field(default_factory=threading.Event)
    result: list = field(default_factory=list)


@dataclass
class SqlNode:
    """One SQL node of the cluster: `db` is the scrape's connection when it serves, `probe`
    a second one that only checks it answers while another node serves."""
    name: str
    db: Database
    probe: Database | None = None
    reachable: bool | None = None  # the latest check (None: not checked yet)
    checking: threading.Thread | None = None


@dataclass
class _Attempt:
    """One scrape through one SQL node."""
    up: int = 0
    offline: bool | None = None
    lost: bool = False  # the SQL node went away (or never answered): try the next one
    out: list = field(default_factory=list)
    success: dict[str, float] = field(default_factory=dict)
    duration: dict[str, float] = field(default_factory=dict)
    ages: dict[str, float] = field(default_factory=dict)


class Scraper:
    """Scrapes one NDB cluster through the first of its SQL nodes that answers.

    Any SQL node sees the whole cluster through ndbinfo, so when the one serving goes away
    (refused, lost mid-scrape, or its ndbinfo offline) the same scrape goes on through the
    next one in the listed order, within the scrape's budget. The others are checked in the
    background on every scrape (their own connections, a `SELECT 1`), so each one's
    reachability is exported without slowing the scrape down.
    """

    def __init__(self, db: Database | Sequence[SqlNode], collectors: Sequence[Collector],
                 state: ExporterState, scrape_timeout: float,
                 slow_interval: float = DEFAULT_SLOW_INTERVAL) -> None:
        self.nodes: list[SqlNode] = ([SqlNode(db.cfg.target(), db)]
                                     if isinstance(db, Database) else list(db))
        if not self.nodes:
            raise ValueError("a cluster needs at least one SQL node")
        self.serving = 0  # index into nodes of the SQL node read through last
        self.failovers = 0
        self.collectors = list(collectors)
        self.state = state
        self.scrape_timeout = scrape_timeout
        self.slow_interval = slow_interval
        self.retry_unserved = RETRY_UNSERVED
        self.lock = threading.Lock()
        self._gate = threading.Lock()  # guards _flight and _last
        self._flight: _Flight | None = None
        self.supported: dict[str, bool] = {}
        # collector -> monotonic time to try again: its views are listed but not served
        self.unserved: dict[str, float] = {}
        # slow collector -> (wall time of its last successful run, what it produced)
        self.cache: dict[str, tuple[float, list]] = {}
        self.timeouts: dict[str, int] = {c.name: 0 for c in self.collectors}
        self._last_problem: dict[str, str | None] = {}

    @property
    def db(self) -> Database:
        return self.nodes[self.serving].db

    def close(self) -> None:
        for n in self.nodes:
            n.db.close()
            if n.probe is not None:
                n.probe.close()

    def _note(self, key: str, problem: str | None, level: int = logging.WARNING) -> None:
        """Log a problem when it starts or changes, and once when it clears."""
        before = self._last_problem.get(key)
        if problem == before:
            return
        self._last_problem[key] = problem
        if problem is not None:
            log.log(level, "%s: %s", key, problem)
        elif before is not None:
            log.info("%s: ok again", key)

    def scrape(self, budget: float | None = None) -> list[Family | Metric]:
        """One scrape at a time per cluster (they share the connection); a request that
        comes while one runs waits for it and gets its result, instead of queuing a scrape
        of its own: a burst of probes costs the SQL nodes one scrape."""
        budget = min(budget or self.scrape_timeout, self.scrape_timeout)
        with self._gate:
            flight = self._flight
            mine = flight is None
            if mine:
                flight = self._flight = _Flight()
        assert flight is not None
        if not mine:
            flight.done.wait(budget + 1.0)
            return flight.result
        try:
            with self.lock:
                flight.result = self._scrape(budget)
        finally:
            with self._gate:
                self._flight = None
            flight.done.set()
        return flight.result

    def _scrape(self, budget: float) -> list[Family | Metric]:
        t0 = time.monotonic()
        deadline = t0 + budget
        first = self.serving
        self._check_others(deadline)
        order = [first] + [i for i in range(len(self.nodes)) if i != first]
        attempt = _Attempt()
        for n, i in enumerate(order):
            if n and time.monotonic() >= deadline:
                break
            self.serving = i
            attempt = self._attempt(deadline)
            if not attempt.lost:
                break
        if attempt.lost:
            self.serving = first  # nobody answered: keep the preferred node for next time
            attempt.up = 0
        elif self.serving != first:
            self.failovers += 1
            log.warning("SQL node %s did not answer; reading through %s now",
                        self.nodes[first].name, self.nodes[self.serving].name)
        if not attempt.up:
            attempt.success = {c.name: 0 for c in self.collectors}
        out = attempt.out
        if (any(c.name == "restart_info" for c in self.collectors)
                and attempt.success.get("restart_info") != 1):
            fam = Families()
            ledger_families(self.state, fam)
            out.extend(fam)
        self._note("ndbinfo", "ndbinfo is offline (queries return no rows with a warning)"
                   if attempt.offline else None)
        out.extend(self._health(attempt.up, attempt.offline, attempt.success,
                                attempt.duration, attempt.ages, time.monotonic() - t0))
        out.extend(self._sql_nodes(served=not attempt.lost))
        return out

    def _attempt(self, deadline: float) -> _Attempt:
        a = _Attempt()
        node = self.nodes[self.serving]
        key = f"SQL node {node.name}" if len(self.nodes) > 1 else "connection"
        try:
            self.db.ensure()
            node.reachable = True
            self._note(key, None)
            offline = self._probe(deadline)
        except Unavailable as exc:
            node.reachable = False
            self._note(key, f"cannot query the SQL node at {self.db.cfg.target()}: {exc}",
                       logging.ERROR)
            a.lost = True
            return a
        except Exception as exc:  # noqa: BLE001 - reported as ndb_up 0, never raised
            self._note(key, f"probe failed: {exc}", logging.ERROR)
            # another SQL node may serve (this one may have lost the data nodes)
            a.lost = len(self.nodes) > 1
            return a
        if offline and len(self.nodes) > 1:
            self._note(key, "its ndbinfo is offline", logging.WARNING)
            a.lost, a.offline = True, True
            return a
        a.offline, a.up = offline, 0 if offline else 1
        if a.up:
            self._update_supported()
        self._collect(a, deadline)
        return a

    def _collect(self, a: _Attempt, deadline: float) -> None:
        now = time.monotonic()
        for c in self.collectors:
            retry = c.name in self.unserved and self.unserved[c.name] <= now
            if a.up and not self.supported.get(c.name, False) and not retry:
                continue
            if not a.up:
                a.success[c.name] = 0
                continue
            cached = self.cache.get(c.name)
            if c.slow and cached and time.time() - cached[0] < self.slow_interval:
                a.out.extend(cached[1])
                a.success[c.name], a.ages[c.name] = 1, time.time() - cached[0]
                continue
            fam = Families()
            ctx = Context(self.db, deadline, self.state, time.time())
            t1 = time.monotonic()
            ok, problem = False, None
            try:
                c.collect(ctx, fam)
                ok = True
            except Exception as exc:  # noqa: BLE001 - a collector bug must not end the scrape
                outcome, problem = outcome_of(exc)
                if outcome is Outcome.TIMEOUT:
                    self.timeouts[c.name] += 1
                elif outcome is Outcome.NOT_SERVED:
                    self._not_served(c, problem)
                    continue
                elif outcome is Outcome.SCHEMA_CHANGED:
                    if self._reread_schema() and not self.supported.get(c.name, False):
                        continue  # the view went away: unsupported now, not a failure
                elif outcome is Outcome.NODE_LOST:
                    self.nodes[self.serving].reachable = False
                    if len(self.nodes) > 1:
                        # killed mid-scrape: start over through the next SQL node
                        self._note(f"SQL node {self.nodes[self.serving].name}",
                                   f"lost during the scrape ({problem})", logging.ERROR)
                        a.lost, a.up = True, 0
                        a.out.clear()
                        return
                    a.up, problem = 0, f"lost the SQL node ({problem})"
            a.duration[c.name] = time.monotonic() - t1
            a.success[c.name] = 1 if ok else 0
            self._note(f"collector {c.name}", problem)
            if ok and c.name in self.unserved:
                del self.unserved[c.name]
                log.info("collector %s: the data nodes serve its tables again", c.name)
                self._update_supported()
            if ok:
                families = list(fam)
                a.out.extend(families)
                if c.slow:
                    self.cache[c.name] = (ctx.now, families)
                    a.ages[c.name] = 0.0

    def _check_others(self, deadline: float) -> None:
        """Start a reachability check of every SQL node that is not serving, unless its
        last one is still running (a node that hangs is not asked twice at once)."""
        for i, node in enumerate(self.nodes):
            if i == self.serving or node.probe is None:
                continue
            if node.checking is not None and node.checking.is_alive():
                continue
            timeout = max(0.5, min(node.probe.query_timeout, deadline - time.monotonic()))

            def check(n: SqlNode = node, t: float = timeout) -> None:
                n.reachable = n.probe.ping(t) is None  # type: ignore[union-attr]

            node.checking = threading.Thread(target=check, daemon=True,
                                             name=f"check-{node.name}")
            node.checking.start()

    def _sql_nodes(self, served: bool) -> list[Metric]:
        up = GaugeMetricFamily("ndb_sql_node_up", "1 when the SQL node answered (through"
                               " the scrape when it served, else through a check in the"
                               " background).", labels=["sql_node"])
        serving = GaugeMetricFamily("ndb_sql_node_serving", "1 for the SQL node this scrape"
                                    " read ndbinfo through.", labels=["sql_node"])
        for i, n in enumerate(self.nodes):
            if n.reachable is not None:
                up.add_metric([n.name], 1 if n.reachable else 0)
            serving.add_metric([n.name], 1 if served and i == self.serving else 0)
        failovers = CounterMetricFamily("ndb_exporter_sql_node_failovers", "Scrapes that read"
                                        " through another SQL node than the one before,"
                                        " because that one did not answer.",
                                        value=self.failovers)
        return [up, serving, failovers]

    def _probe(self, deadline: float) -> bool:
        """True when ndbinfo is offline. The SQL node answered if we get here."""
        if not self.db.views:
            raise SchemaChanged("the SQL node has no ndbinfo schema (is it an NDB SQL node,"
                                " and may this user read ndbinfo?)")
        view = "nodes" if self.db.has("nodes") else next(iter(self.db.views))
        try:
            self.db.query(f"SELECT 1 FROM ndbinfo.{view} LIMIT 1",
                          min(self.db.query_timeout, deadline - time.monotonic()))
        except NdbinfoOffline:
            return True
        return False

    def _reread_schema(self) -> bool:
        """Re-read the view list, at most once per SCHEMA_REFRESH_SECONDS (a column that
        stays missing must not cost an information_schema read per scrape)."""
        if not self.db.schema_stale():
            return False
        try:
            self.db.read_schema()
        except Exception:  # noqa: BLE001 - the next scrape reconnects and retries
            return False
        self._update_supported()
        return True

    def _not_served(self, c: Collector, reason: str) -> None:
        if c.name in self.unserved:  # a retry that failed again: said already
            self.unserved[c.name] = time.monotonic() + self.retry_unserved
            return
        self._reread_schema()
        if all(self.db.has(v) for v in c.views):
            log.info("collector %s unsupported for now: the SQL node lists ndbinfo.%s but"
                     " the data nodes do not serve it (%s; data nodes older than the SQL"
                     " node?); retrying every %.0f s", c.name, ", ndbinfo.".join(c.views),
                     reason, self.retry_unserved)
            self.unserved[c.name] = time.monotonic() + self.retry_unserved
        self._update_supported()

    def _update_supported(self) -> None:
        """Supported = every view listed and served. A collector whose views are listed but
        not served is tried again when its retry time comes (the scrape loop does that),
        silently until they are served."""
        for c in self.collectors:
            listed = all(self.db.has(v) for v in c.views)
            if c.name in self.unserved and not listed:
                del self.unserved[c.name]
            ok = listed and c.name not in self.unserved
            if self.supported.get(c.name) != ok:
                if not listed:
                    missing = [v for v in c.views if not self.db.has(v)]
                    log.info("collector %s unsupported: this SQL node has no ndbinfo.%s",
                             c.name, ", ndbinfo.".join(missing))
                elif ok and c.name in self.supported:
                    log.info("collector %s supported again", c.name)
                self.supported[c.name] = ok
                if not ok:
                    self.cache.pop(c.name, None)

    def _health(self, up: int, offline: bool | None, success: dict[str, float],
                duration: dict[str, float], ages: dict[str, float],
                total: float) -> list[Metric]:
        up_m = GaugeMetricFamily("ndb_up", "1 when the SQL node answered and ndbinfo is"
                                 " online.", value=up)
        out: list[Metric] = [up_m]
        if offline is not None:
            out.append(GaugeMetricFamily("ndb_ndbinfo_offline", "1 when ndbinfo answers with"
                                         " no rows and a warning (ndbinfo offline).",
                                         value=1 if offline else 0))
        s = GaugeMetricFamily("ndb_exporter_collector_success", "1 when the collector ran"
                              " without error in this scrape.", labels=["collector"])
        for name, v in success.items():
            s.add_metric([name], v)
        d = GaugeMetricFamily("ndb_exporter_collector_duration_seconds", "Wall time of the"
                              " collector in this scrape.", labels=["collector"])
        for name, v in duration.items():
            d.add_metric([name], v)
        sup = GaugeMetricFamily("ndb_exporter_collector_supported", "1 when this SQL node"
                                " serves every view the collector reads, 0 when a view is"
                                " missing in this version.", labels=["collector"])
        for name, v in self.supported.items():
            sup.add_metric([name], 1 if v else 0)
        to = CounterMetricFamily("ndb_exporter_collector_timeouts", "Collector runs cut at"
                                 " the query timeout or the scrape budget.",
                                 labels=["collector"])
        for name, v in self.timeouts.items():
            to.add_metric([name], v)
        age = GaugeMetricFamily("ndb_exporter_collector_data_age_seconds", "Age of what a slow"
                                " collector (per-fragment views, run every"
                                " --scrape.slow-interval) served in this scrape.",
                                labels=["collector"])
        for name, v in ages.items():
            age.add_metric([name], v)
        out += [s, d, sup, to, age,
                GaugeMetricFamily("ndb_exporter_scrape_duration_seconds",
                                  "Wall time of the whole scrape.", value=total)]
        return out
