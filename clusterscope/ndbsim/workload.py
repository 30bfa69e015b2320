"""What the simulated data nodes are doing beyond counters: open transactions and their row
locks, the TC and PGMAN latency histograms, memory per table fragment, the disk page buffer.

Everything here is SIMULATED. The shapes follow the kernel (which node records what, which
states and flags exist, how the histogram ranges are bounded: cited in
`ndbinfo_exporter.schema`); the numbers are plausible, not measured. `rows` renders these
as the `ndb$` tables.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ndbinfo_exporter import schema

PAGE = 32768  # bytes per DataMemory page
TABLE_ID0 = 10  # table ids below are system tables
DATABASE = "sim"
# fixed-size element per row of a table (bytes), by table index: rows of different widths
ELEMENT_BYTES = (96, 128, 64, 256, 80, 112)
# DataMemory of a node's tables (the rest: internal pools); shares of a table's memory
TABLE_SHARE_OF_DATA_MEMORY = 0.93
SPLIT = {"fixed": 0.62, "var": 0.24, "hash_index": 0.08}  # of the table's own object
UNIQUE_INDEX_SHARE, BLOB_SHARE = 0.04, 0.10
FREE_IN_PAGES = 0.04  # free bytes inside the allocated pages
# median latencies (microseconds) and the spread of their log-normal
LATENCY_US = {"transactions": 1500.0, "read_key_ops": 250.0, "write_key_ops": 400.0,
              "index_key_ops": 500.0, "scans": 4000.0, "scan_fragments": 900.0}
ERROR_LATENCY_US = 3000.0
TC_LATENCY_OF = {"transactions": "transactions", "read_key_ops": "read_key_ops",
                 "write_key_ops": "write_key_ops", "index_key_ops": "index_key_ops",
                 "scans": "scans", "scan_fragments": "scan_fragments"}
LATENCY_SIGMA = 0.6
PGMAN_LATENCY_US = {"page_reads": 180.0, "page_writes": 350.0, "log_waits": 600.0,
                    "get_page": 120.0}
# open transactions: how long one stays open at the TC (seconds), and what it is doing
TX_OPEN_SECONDS = 0.002
TX_STATES = ((2, 0.5), (3, 0.2), (14, 0.2), (9, 0.1))  # Started, Receiving, Committing, ..
API_BLOCK = 0x8000  # NDB API clients' block references start here (refToBlock >= 32768)
HOT_ROW_WAITS = 0.3  # chance per tick that a hot row has a waiter


def lognormal_cdf(x: float, median: float, sigma: float = LATENCY_SIGMA) -> float:
    if x <= 0:
        return 0.0
    return 0.5 * (1.0 + math.erf(math.log(x / median) / (sigma * math.sqrt(2.0))))


def bucket_shares(bounds: list[int], median: float) -> list[float]:
    """Share of latencies per range: range i holds (bound[i-1], bound[i]]; the last one
    everything above too (as the kernel counts them)."""
    out, prev = [], 0.0
    for i, b in enumerate(bounds):
        c = 1.0 if i == len(bounds) - 1 else lognormal_cdf(b, median)
        out.append(max(0.0, c - prev))
        prev = c
    return out


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    limit, k, p = math.exp(-min(lam, 30.0)), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


@dataclass
class DictObject:
    type: int
    id: int
    parent_type: int
    parent_id: int
    fq_name: str
    table_id: int  # the user table it belongs to (its own id for a table)
    share: float  # of that table's memory


@dataclass
class Transaction:
    node: int
    tc: int  # TC block instance
    objid: int
    api: int
    transid: int
    state: int
    ops: int
    outstanding: int
    started: float  # wall time the TC last saw it active
    idle: bool = False  # no activity since `started` (a client holding it open)


@dataclass
class Lock:
    node: int
    ldm: int
    table: int
    fragment: int
    rowid: int
    transid: int
    op_id: int
    flags: int
    waits_for: int  # acc_op_id of the lock it waits for (0: none)
    millis: int


@dataclass
class NodeWork:
    """Cumulative, per data node process (a restart starts them from 0). Histograms keep
    each activity's total: its ranges are the total spread by the activity's fixed latency
    distribution when the rows are written (monotonic per range, as counters must be)."""
    # (tc instance, comm node) -> tc_time_track_stats column -> completions
    tc_hist: dict[tuple[int, int], dict[str, float]] = field(default_factory=dict)
    # pgman instance -> pgman_time_track_stats column -> completions
    pgman_hist: dict[int, dict[str, float]] = field(default_factory=dict)
    # pgman instance -> diskpagebuffer column -> count
    dpb: dict[int, dict[str, float]] = field(default_factory=dict)


def dictionary(tables: int) -> list[DictObject]:
    """The dictionary the scenario's tables make: system tables, every user table with an
    ordered index (no TUP fragments: not in memory_per_fragment), every third with a unique
    hash index (a table of its own) and the first with a blob part table (a user table whose
    parent is the table)."""
    objs = [DictObject(1, i, 0, 0, name, -1, 0.0) for i, name in
            enumerate(("sys/def/SYSTAB_0", "sys/def/NDB$EVENTS_0"))]
    weights = [1.0 / (k + 1) ** 1.1 for k in range(tables)]
    total = sum(weights)
    next_id = TABLE_ID0 + tables
    for k in range(tables):
        tid = TABLE_ID0 + k
        share = weights[k] / total
        own = 1.0 - (UNIQUE_INDEX_SHARE if k % 3 == 0 else 0.0) - (BLOB_SHARE if k == 0 else 0.0)
        objs.append(DictObject(2, tid, 0, 0, f"{DATABASE}/def/t{k}", tid, share * own))
        objs.append(DictObject(6, next_id, 2, tid, f"sys/def/{tid}/PRIMARY", tid, 0.0))
        next_id += 1
        if k % 3 == 0:
            objs.append(DictObject(3, next_id, 2, tid, f"sys/def/{tid}/u{k}$unique", tid,
                                   share * UNIQUE_INDEX_SHARE))
            next_id += 1
        if k == 0:
            objs.append(DictObject(2, next_id, 2, tid, f"{DATABASE}/def/NDB$BLOB_{tid}_2",
                                   tid, share * BLOB_SHARE))
            next_id += 1
    return objs


class Workload:
    """The transactions, locks and histograms of the whole cluster, advanced each tick."""

    def __init__(self, rng: random.Random, tables: int) -> None:
        self.rng = rng
        self.objects = dictionary(tables)
        self.work: dict[int, NodeWork] = {}
        self.transactions: list[Transaction] = []
        self.locks: list[Lock] = []
        self.long_tx: Transaction | None = None  # the long-transaction fault's
        self._next_op = 1
        self._tc_shares = {k: bucket_shares(schema.tc_time_track_bounds(), v)
                           for k, v in LATENCY_US.items()}
        self._tc_error_shares = bucket_shares(schema.tc_time_track_bounds(), ERROR_LATENCY_US)
        self._pg_shares = {k: bucket_shares(schema.pgman_time_track_bounds(), v)
                           for k, v in PGMAN_LATENCY_US.items()}

    def reset(self, node: int) -> None:
        """A data node process (re)started: its statistics start from nothing."""
        self.work.pop(node, None)

    def node(self, node: int) -> NodeWork:
        return self.work.setdefault(node, NodeWork())

    def _op_id(self) -> int:
        self._next_op += 1
        return self._next_op

    # -- histograms ------------------------------------------------------------------
    def record_tc(self, node: int, tc: int, comm: int, activity: str, count: float) -> None:
        """`count` completions of `activity` (a tc_time_track_stats column) at this TC,
        tracked against node `comm`."""
        if count > 0:
            hist = self.node(node).tc_hist.setdefault((tc, comm), {})
            hist[activity] = hist.get(activity, 0.0) + count

    def record_pgman(self, node: int, instance: int, column: str, count: float) -> None:
        if count > 0:
            hist = self.node(node).pgman_hist.setdefault(instance, {})
            hist[column] = hist.get(column, 0.0) + count

    def record_dpb(self, node: int, instance: int, **counts: float) -> None:
        dpb = self.node(node).dpb.setdefault(instance, {})
        for k, v in counts.items():
            dpb[k] = dpb.get(k, 0.0) + max(0.0, v)

    def tc_ranges(self, activity: str, total: float) -> list[int]:
        shares = (self._tc_error_shares if activity.endswith("errors")
                  else self._tc_shares[TC_LATENCY_OF[activity]])
        return [int(total * s) for s in shares]

    def pgman_ranges(self, column: str, total: float) -> list[int]:
        return [int(total * s) for s in self._pg_shares[column]]

    # -- the snapshot of open transactions and locks -------------------------------------
    def snapshot(self, now: float, tps: dict[int, float], tcs: int, sql_nodes: list[int],
                 fragments: list[tuple[int, int, list[int]]], ldm: int,
                 long_tx_node: int | None) -> None:
        """Transactions the TCs have open right now and the row locks they hold or wait
        for. `tps`: transactions per second each serving data node's TCs coordinate;
        `fragments`: (table id, fragment id, live replica nodes)."""
        rng = self.rng
        txs: list[Transaction] = []
        locks: list[Lock] = []
        for node, rate in sorted(tps.items()):
            for tc in range(1, tcs + 1):
                for _ in range(poisson(rng, rate / tcs * TX_OPEN_SECONDS)):
                    state = _weighted(rng, TX_STATES)
                    ops = rng.randint(1, 8)
                    outstanding = rng.randint(0, min(ops, 2)) if state in (2, 3) else 0
                    tx = Transaction(node, tc, rng.randint(0, 4095), rng.choice(sql_nodes),
                                     rng.getrandbits(63), state, ops, outstanding, now)
                    txs.append(tx)
                    if fragments:
                        self._locks_of(tx, rng.choice(fragments), ldm, locks,
                                       exclusive=rng.random() < 0.4)
        if long_tx_node is not None and fragments and long_tx_node in tps:
            if self.long_tx is None or self.long_tx.node != long_tx_node:
                self.long_tx = Transaction(long_tx_node, 1, 4095, sql_nodes[0],
                                           rng.getrandbits(63), 2, 3, 0, now, idle=True)
            txs.append(self.long_tx)
            frag = fragments[0]
            held = self._locks_of(self.long_tx, frag, ldm, locks, exclusive=True,
                                  since=self.long_tx.started, now=now)
            # others queue behind its rows, time out (TransactionDeadlockDetectionTimeout,
            # 1.2 s by default) and come back: a waiter is never older than that
            for k in range(2):
                waiter = Transaction(long_tx_node, 1 + k % tcs, 4000 + k, sql_nodes[-1],
                                     rng.getrandbits(63), 3, 1, 1, now)
                txs.append(waiter)
                self._waiter(waiter, held, locks, rng.randint(50, 1190))
        else:
            self.long_tx = None
        if fragments and locks and rng.random() < HOT_ROW_WAITS:
            # a hot row: another transaction waits a few milliseconds for a holder
            holder = next((lk for lk in locks if lk.flags & schema.LOCK_HOLDING), None)
            if holder is not None:
                waiter = Transaction(holder.node, 1, 4090, sql_nodes[0], rng.getrandbits(63),
                                     3, 1, 1, now)
                txs.append(waiter)
                self._waiter(waiter, [holder], locks, rng.randint(1, 40))
        self.transactions, self.locks = txs, locks

    def _locks_of(self, tx: Transaction, frag: tuple[int, int, list[int]], ldm: int,
                  out: list[Lock], exclusive: bool, since: float | None = None,
                  now: float | None = None) -> list[Lock]:
        """The row locks a transaction holds: on every live replica of the row's fragment
        for a write (exclusive), on one for a locked read (shared)."""
        table, fragment, replicas = frag
        held = []
        millis = int(((now or 0.0) - since) * 1000) if since is not None else \
            self.rng.randint(0, 3)
        for r in range(min(tx.ops, 3)):
            rowid = (fragment << 20) + (tx.objid * 7 + r) % 1000
            nodes = replicas if exclusive else replicas[:1]
            for node in nodes:
                flags = (schema.LOCK_OWNER | schema.LOCK_HOLDING
                         | (schema.LOCK_EXCLUSIVE | 1 if exclusive else 0))
                lock = Lock(node, fragment % ldm + 1, table, fragment, rowid, tx.transid,
                            self._op_id(), flags, 0, millis)
                out.append(lock)
                held.append(lock)
        return held

    def _waiter(self, tx: Transaction, held: list[Lock], out: list[Lock], millis: int) -> None:
        for h in held[:1]:
            # waiting: neither holding nor owner; waiting_for = the lock it queues behind
            out.append(Lock(h.node, h.ldm, h.table, h.fragment, h.rowid, tx.transid,
                            self._op_id(), schema.LOCK_EXCLUSIVE | 1, h.op_id, millis))

    # -- memory per fragment -------------------------------------------------------------
    def fragment_memory(self, node: int, table_bytes: float,
                        fragments: list[tuple[int, int]], ldm: int) -> list[tuple]:
        """frag_mem_use rows of one node: `table_bytes` (what its tables use of DataMemory)
        spread over the objects by their share and over the node's fragment replicas of
        each table."""
        by_table: dict[int, list[int]] = {}
        for tid, f in fragments:
            by_table.setdefault(tid, []).append(f)
        rows = []
        for k, obj in enumerate(self.objects):
            frags = by_table.get(obj.table_id) if obj.type != 1 else [0]
            if not frags or obj.type == 6:
                continue
            own = table_bytes * obj.share / len(frags) if obj.type != 1 else 131072.0
            elem = ELEMENT_BYTES[k % len(ELEMENT_BYTES)]
            for f in frags:
                fixed = int(own * SPLIT["fixed"])
                var = int(own * SPLIT["var"])
                hidx = int(own * SPLIT["hash_index"])
                fixed_free = int(fixed * FREE_IN_PAGES)
                count = (fixed - fixed_free) // elem
                rows.append((node, f % ldm + 1, obj.id, f, count, fixed, fixed_free, count,
                             elem, var, int(var * FREE_IN_PAGES), count // 3,
                             int(own * 0.002), int(own * 0.0005), hidx))
        return rows

    def dict_rows(self) -> list[tuple]:
        return [(o.type, o.id, 1, 4, o.parent_type, o.parent_id, o.fq_name)
                for o in self.objects]


def _weighted(rng: random.Random, choices: tuple[tuple[int, float], ...]) -> int:
    x, acc = rng.random(), 0.0
    for value, w in choices:
        acc += w
        if x < acc:
            return value
    return choices[-1][0]
