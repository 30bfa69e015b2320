"""What a simulated data node is (its process, threads, links, logs) and the faults the
cluster is under: the state `model.Model` holds and its `lifecycle` and `load` change. A
module of its own so those two can name these types without importing the model that is
built from them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Trp:
    status: int = 0
    sent: float = 0.0
    received: float = 0.0
    connects: int = 1
    overloaded: int = 0
    overloads: int = 0
    slowdown: int = 0
    slowdowns: int = 0


@dataclass
class Node:
    id: int
    group: int
    state: str = "up"  # up | down | starting
    start_ctime: float = 0.0
    pid: int = 0
    counters: dict[tuple[int, int, int], float] = field(default_factory=dict)
    tstat: dict[int, list[float]] = field(default_factory=dict)
    cpu: dict[int, tuple[int, ...]] = field(default_factory=dict)
    cpu_hist: dict[int, deque] = field(default_factory=dict)
    trp: dict[int, Trp] = field(default_factory=dict)
    redo_used: float = 0.0
    redo_high: float = 0.0
    redo_since_lcp_start: float = 0.0
    dws: deque = field(default_factory=lambda: deque(maxlen=61))  # (lcp B/s, redo B/s)
    slow: list[list[float]] = field(default_factory=list)  # per LDM [io_lag, cpu, min]
    data_pages: float = 0.0
    restart_status: int | None = None  # while a restart runs (or the node is stopped)


@dataclass
class Faults:
    overload: set[tuple[int, int]] = field(default_factory=set)  # (node, remote); 0 = all
    slowdown: set[tuple[int, int]] = field(default_factory=set)
    lcp_stall: bool = False
    restart_stuck: int | None = None
    null_columns: dict[str, list[str]] = field(default_factory=dict)  # view -> columns
    view_error: set[str] = field(default_factory=set)
    offline: bool = False
    arbitrator_lost: bool = False  # the management node (arbitrator) unreachable
    # a client keeps a transaction open (idle) on this data node's TC, holding its row locks,
    # while others queue behind them
    long_transaction: int | None = None
    # a hot row in this table's first fragment: many requests queue for it, some time out
    lock_contention: int | None = None

    def as_dict(self) -> dict:
        return {"overload": sorted(self.overload), "slowdown": sorted(self.slowdown),
                "lcp_stall": self.lcp_stall, "restart_stuck": self.restart_stuck,
                "null_columns": self.null_columns, "view_error": sorted(self.view_error),
                "offline": self.offline, "arbitrator_lost": self.arbitrator_lost,
                "long_transaction": self.long_transaction,
                "lock_contention": self.lock_contention}
