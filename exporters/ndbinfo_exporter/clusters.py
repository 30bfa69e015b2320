"""The NDB clusters one exporter reads, from the description of what is monitored.

Every `kind: ndb` cluster of the description (clusterscope.yml) is one target, served on
`/probe?cluster=NAME` in the multi-target style of mysqld_exporter: one exporter process
for any number of clusters, each scrape its own request, so a slow or dead cluster never
delays another, and each cluster's `up` is its own. Each keeps its own restart ledger
(`<state dir>/ndbinfo_exporter.<cluster>.state.json`). The description is re-read when it
changes; a cluster whose definition changed is rebuilt (its ledger file carries over).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from clusterscope_inventory.description import Cluster, DescriptionError, load

from ndbinfo_exporter.scraper import Scraper

log = logging.getLogger("ndbinfo_exporter.clusters")


class ClusterSet:
    def __init__(self, path: str | os.PathLike, build: Callable[[Cluster], Scraper]) -> None:
        self.path = Path(path)
        self.build = build
        self.lock = threading.Lock()
        self.definitions: dict[str, Cluster] = {}
        self.scrapers: dict[str, Scraper] = {}
        self.problems: dict[str, str] = {}  # cluster -> why it cannot be scraped
        self._stamp: tuple[int, int, int] | None = None
        self._apply(load(self.path).of_kind("ndb"))  # the first read must succeed
        self._stamp = self._current_stamp()

    def _current_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def refresh(self) -> None:
        """Re-read the description if the file changed; a broken one changes nothing."""
        stamp = self._current_stamp()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            clusters = load(self.path).of_kind("ndb")
        except DescriptionError as exc:
            log.error("%s; still reading the clusters of the last good description", exc)
            return
        self._apply(clusters)

    def _apply(self, clusters: list[Cluster]) -> None:
        wanted = {c.name: c for c in clusters}
        for name in list(self.definitions):
            if wanted.get(name) != self.definitions[name]:
                self._drop(name)
        for name, c in wanted.items():
            if name in self.definitions:
                continue
            self.definitions[name] = c
            try:
                self.scrapers[name] = self.build(c)
                self.problems.pop(name, None)
            except ValueError as exc:  # ConfigError, or an unreadable state file
                self.problems[name] = str(exc)
                log.error("cluster %s: %s", name, exc)
        log.info("NDB clusters: %s", ", ".join(
            f"{c.name} (SQL nodes {', '.join(n.name for n in c.members('sql'))})"
            for c in clusters) or "none")

    def _drop(self, name: str) -> None:
        self.definitions.pop(name, None)
        self.problems.pop(name, None)
        scraper = self.scrapers.pop(name, None)
        if scraper is not None:
            with scraper.lock:
                scraper.close()

    def get(self, name: str) -> tuple[Scraper | None, str | None]:
        """The cluster's scraper, or why there is none."""
        with self.lock:
            self.refresh()
            if name in self.scrapers:
                return self.scrapers[name], None
            if name in self.problems:
                # the reason is in the log; an HTTP answer (shown by VictoriaMetrics on
                # its /targets) says only that there is one
                return None, (f"cluster {name}: cannot be scraped: its logins or state are"
                              " unusable (the exporter's log says why)")
            known = ", ".join(sorted(self.definitions)) or "none"
            return None, (f"no NDB cluster {name!r} in {self.path} (NDB clusters: {known})")

    def names(self) -> list[str]:
        with self.lock:
            return sorted(self.definitions)

    def close(self) -> None:
        with self.lock:
            for name in list(self.definitions):
                self._drop(name)
