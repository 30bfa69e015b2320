"""Every collector, one module per ndbinfo area."""

from __future__ import annotations

from ndbinfo_exporter.collectors import (
    counters,
    diskpagebuffer,
    fragment_locks,
    histograms,
    lcp,
    logspaces,
    membership,
    memory,
    nodes,
    restarts,
    tables,
    threads,
    transactions,
    transporters,
)
from ndbinfo_exporter.collectors.base import Collector, Context

ALL: list[Collector] = [c for m in (nodes, membership, restarts, lcp, logspaces, threads,
                                    transporters, memory, counters, transactions, fragment_locks,
                                    diskpagebuffer, histograms, tables)
                        for c in m.COLLECTORS]
BY_NAME: dict[str, Collector] = {c.name: c for c in ALL}

__all__ = ["ALL", "BY_NAME", "Collector", "Context"]
