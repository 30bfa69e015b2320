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

import logging
import threading
import time
from collections.abc import Sequence

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


class Scraper:
    def __init__(self, db: Database, collectors: Sequence[Collector], state: ExporterState,
                 scrape_timeout: float, slow_interval: float = DEFAULT_SLOW_INTERVAL) -> None:
        self.db = db
        self.collectors = list(collectors)
        self.state = state
        self.scrape_timeout = scrape_timeout
        self.slow_interval = slow_interval
        self.retry_unserved = RETRY_UNSERVED
        self.lock = threading.Lock()
        self.supported: dict[str, bool] = {}
        # collector -> monotonic time to try again: its views are listed but not served
        self.unserved: dict[str, float] = {}
        # slow collector -> (wall time of its last successful run, what it produced)
        self.cache: dict[str, tuple[float, list]] = {}
        self.timeouts: dict[str, int] = {c.name: 0 for c in self.collectors}
        self._last_problem: dict[str, str | None] = {}

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
        with self.lock:  # one scrape at a time shares the connection
            return self._scrape(min(budget or self.scrape_timeout, self.scrape_timeout))

    def _scrape(self, budget: float) -> list[Family | Metric]:
        t0 = time.monotonic()
        deadline = t0 + budget
        out: list[Family | Metric] = []
        success: dict[str, float] = {}
        duration: dict[str, float] = {}
        up, offline = 0, None
        try:
            self.db.ensure()
            self._note("connection", None)
            offline = self._probe(deadline)
            up = 0 if offline else 1
        except Unavailable as exc:
            self._note("connection", f"cannot query the SQL node at {self.db.cfg.target()}:"
                       f" {exc}", logging.ERROR)
        except Exception as exc:  # noqa: BLE001 - reported as ndb_up 0, never raised
            self._note("connection", f"probe failed: {exc}", logging.ERROR)
        if up:
            self._update_supported()
        ages: dict[str, float] = {}
        now = time.monotonic()
        for c in self.collectors:
            retry = c.name in self.unserved and self.unserved[c.name] <= now
            if up and not self.supported.get(c.name, False) and not retry:
                continue
            if not up:
                success[c.name] = 0
                continue
            cached = self.cache.get(c.name)
            if c.slow and cached and time.time() - cached[0] < self.slow_interval:
                out.extend(cached[1])
                success[c.name], ages[c.name] = 1, time.time() - cached[0]
                continue
            fam = Families()
            ctx = Context(self.db, deadline, self.state, time.time())
            t1 = time.monotonic()
            ok, problem = False, None
            try:
                c.collect(ctx, fam)
                ok = True
            except QueryTimeout as exc:
                self.timeouts[c.name] += 1
                problem = f"timed out ({exc})"
            except (NdbinfoOffline, ViewUnavailable) as exc:
                # ndbinfo as a whole answered the probe: this table alone is not served
                self._not_served(c, str(exc))
                continue
            except SchemaChanged as exc:
                problem = f"schema changed ({exc})"
                if self._reread_schema() and not self.supported.get(c.name, False):
                    continue  # the view went away: unsupported now, not a failure
            except Unavailable as exc:
                up, problem = 0, f"lost the SQL node ({exc})"
            except Exception as exc:  # noqa: BLE001 - a collector bug must not end the scrape
                problem = f"{type(exc).__name__}: {exc}"
            duration[c.name] = time.monotonic() - t1
            success[c.name] = 1 if ok else 0
            self._note(f"collector {c.name}", problem)
            if ok and c.name in self.unserved:
                del self.unserved[c.name]
                log.info("collector %s: the data nodes serve its tables again", c.name)
                self._update_supported()
            if ok:
                families = list(fam)
                out.extend(families)
                if c.slow:
                    self.cache[c.name] = (ctx.now, families)
                    ages[c.name] = 0.0
        if (any(c.name == "restart_info" for c in self.collectors)
                and success.get("restart_info") != 1):
            fam = Families()
            ledger_families(self.state, fam)
            out.extend(fam)
        self._note("ndbinfo", "ndbinfo is offline (queries return no rows with a warning)"
                   if offline else None)
        out.extend(self._health(up, offline, success, duration, ages,
                                time.monotonic() - t0))
        return out

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
