"""Row locks in the simulated cluster: the per-fragment lock counters DBACC keeps
(`ndb$frag_locks`), and the TC records and lock queues a snapshot shows (`ndb$transactions`,
`ndb$acc_operations`), drawn from one model so the two agree (the mean number of requests
waiting in the snapshots is the counters' wait time per second: Little's law).

Everything here is SIMULATED; the shapes follow the kernel:
- a write locks its row exclusively on every replica (each replica's LDM keeps its own
  lock); a locked read (SELECT ... FOR UPDATE / LOCK IN SHARE MODE, the read of a
  read-modify-write) locks it shared where it runs, on the primary replica; committed reads
  lock nothing;
- per row, one operation owns the lock (OP_LOCK_OWNER, in the run queue); compatible
  holders sit in the owner's parallel queue (OP_RUN_QUEUE only); incompatible requests
  wait in the serial queue, neither owner nor running, their prev_serial_op_id the
  operation they queue behind (Dbacc::execDBINFO_SCANREQ, ACC_OPERATIONS, and
  Dbacc::getPrecedingOperation, mysql/mysql-server storage/ndb/src/kernel/blocks/dbacc/
  DbaccMain.cpp @54feb0c1cfe0); rowid is page_no << 32 | page_idx (same function);
- a wait ends granted or failed; a failed one ends at TransactionDeadlockDetectionTimeout
  (1200 ms by default, MySQL manual) with error 266 (ex_wait_fail, wait_fail_millis);
- TC records (Dbtc ApiConnectRecord, DbtcMain.cpp in AKJUS/mysql-server @1334cddbebd0):
  records that run a transaction (their timer reset by each signal), copy records in
  CS_COMPLETING for committed transactions (copyApi), and connections left in CS_STARTED
  with no operations after committed reads (DUMP 2514's "stateless"), whose timer runs on.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ndbinfo_exporter import schema

# open transactions: how long one stays with the TC (seconds), and in which state
TX_OPEN_SECONDS = 0.002
TX_STATES = ((2, 0.45), (3, 0.2), (14, 0.15), (12, 0.1), (13, 0.1))  # 13: no friendly name
COMPLETE_SECONDS = 0.0005  # a copy record's complete phase
STATELESS_PER_TC = 2  # connections last used for committed reads, per TC instance
STATELESS_REUSE_PER_SECOND = 0.01  # chance per second such a connection is used again
CS_STARTED, CS_RECEIVING, CS_COMPLETING = 2, 3, 9
# locks: which requests lock, how many find the row locked, how long they wait
LOCKED_READ_SHARE = 0.1  # of key reads
CONTENDED = 0.002  # share of exclusive requests that find the row locked (shared: half)
WAIT_MS = 4.0  # their mean wait
DEADLOCK_TIMEOUT_MS = 1200.0  # TransactionDeadlockDetectionTimeout's default
# the lock-contention fault: a hot row in the table's first fragment
HOT_CONTENDED, HOT_WAIT_MS, HOT_FAILED = 0.3, 250.0, 0.08
# frag_locks counters, in Fragmentrec::LockStats order (NdbinfoTables.cpp FRAG_LOCKS)
COUNTS = ("ex_req", "ex_imm_ok", "ex_wait_ok", "ex_wait_fail", "sh_req", "sh_imm_ok",
          "sh_wait_ok", "sh_wait_fail", "wait_ok_millis", "wait_fail_millis")
ROW_PAGES, ROWS_PER_PAGE = 4096, 64  # where a fragment's rows live (rowid = page, index)


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:  # normal approximation: the product method underflows
        return max(0, round(rng.gauss(lam, lam ** 0.5)))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


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
    inactive: float  # seconds the TC's timer has run for it


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
    prev_serial: int  # acc_op_id it waits behind (0: none)
    prev_parallel: int  # the owner it holds the lock alongside (0: none)
    millis: int


@dataclass(frozen=True)
class Replica:
    """A fragment replica a data node stores, as this tick sees it."""

    table: int
    fragment: int
    ldm: int  # LDM instance (block_instance)
    primary: bool  # the fragment's primary replica lives here (where reads run)


def rowid(fragment: int, n: int) -> int:
    page = (fragment * 131 + n * 7) % ROW_PAGES
    return page << 32 | (n * 13) % ROWS_PER_PAGE


class Contention:
    """Lock counters per fragment replica, and the snapshot of TC records and locks."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.transactions: list[Transaction] = []
        self.locks: list[Lock] = []
        self.long_tx: Transaction | None = None  # the long-transaction fault's
        self.long_tx_since = 0.0
        self.stateless: dict[tuple[int, int, int], float] = {}  # (node, tc, k) -> last use
        # (node, table, fragment) -> requests waiting on average right now
        self.waiting: dict[tuple[int, int, int], float] = {}
        self._next_op = 1

    def _op_id(self) -> int:
        self._next_op += 1
        return self._next_op

    # -- the counters --------------------------------------------------------------------
    def count(self, stats: dict[tuple[int, int, int], list[float]], node: int,
              replicas: list[Replica], weights: dict[int, float], dt: float,
              writes: float, reads: float, hot_table: int | None) -> None:
        """This tick's lock requests at one data node: `writes` and `reads` are its key
        operations, `weights` each table's share of them, `stats` its frag_locks counters
        ((ldm, table, fragment) -> COUNTS)."""
        by_table: dict[int, list[Replica]] = {}
        for r in replicas:
            by_table.setdefault(r.table, []).append(r)
        for table, reps in by_table.items():
            w = weights.get(table, 0.0)
            primaries = [r for r in reps if r.primary]
            for r in reps:
                ex = writes * w / len(reps)
                sh = reads * LOCKED_READ_SHARE * w / len(primaries) if r.primary else 0.0
                hot = table == hot_table and r.fragment == 0
                contended, wait_ms, failed = ((HOT_CONTENDED, HOT_WAIT_MS, HOT_FAILED) if hot
                                              else (CONTENDED, WAIT_MS, 0.0))
                s = stats.setdefault((r.ldm, r.table, r.fragment), [0.0] * len(COUNTS))
                waits = 0.0
                for base, n, c in ((0, ex, contended), (4, sh, contended / 2)):
                    ok, fail = n * c * (1 - failed), n * c * failed
                    s[base] += n
                    s[base + 1] += n - ok - fail
                    s[base + 2] += ok
                    s[base + 3] += fail
                    s[8] += ok * wait_ms
                    s[9] += fail * DEADLOCK_TIMEOUT_MS
                    waits += ok * wait_ms + fail * DEADLOCK_TIMEOUT_MS
                # Little's law: waiting requests = wait time accrued per second
                self.waiting[(node, r.table, r.fragment)] = waits / 1000.0 / max(dt, 1e-9)

    def count_long_tx_waits(self, stats: dict[tuple[int, int, int], list[float]],
                            replica: Replica, dt: float, waiters: int) -> None:
        """Requests queued behind the long-transaction fault's locks time out one after
        another (each waits TransactionDeadlockDetectionTimeout, then is retried)."""
        s = stats.setdefault((replica.ldm, replica.table, replica.fragment),
                             [0.0] * len(COUNTS))
        timeouts = waiters * dt / (DEADLOCK_TIMEOUT_MS / 1000.0)
        s[0] += timeouts
        s[3] += timeouts
        s[9] += timeouts * DEADLOCK_TIMEOUT_MS

    # -- the snapshot --------------------------------------------------------------------
    def snapshot(self, now: float, tps: dict[int, float], tcs: int, sql_nodes: list[int],
                 fragments: list[tuple[int, int, list[int]]], ldm: int,
                 long_tx_node: int | None) -> None:
        """TC records and the lock queues right now. `tps`: transactions per second each
        serving data node's TCs coordinate; `fragments`: (table, fragment, live replica
        nodes, the primary first)."""
        rng = self.rng
        txs: list[Transaction] = []
        queues: dict[tuple[int, int, int, int], list[Lock]] = {}
        for node, rate in sorted(tps.items()):
            for tc in range(1, tcs + 1):
                per_tc = rate / tcs
                for _ in range(poisson(rng, per_tc * TX_OPEN_SECONDS)):
                    state = _weighted(rng, TX_STATES)
                    ops = rng.randint(1, 8)
                    outstanding = rng.randint(0, min(ops, 2)) if state in (2, 3) else 0
                    # between two statements the TC's timer runs (whole seconds)
                    idle = rng.expovariate(4.0) if state == CS_STARTED else 0.0
                    tx = Transaction(node, tc, rng.randint(0, 4095), rng.choice(sql_nodes),
                                     rng.getrandbits(63), state, ops, outstanding, idle)
                    txs.append(tx)
                    if fragments:
                        self._lock_rows(tx, rng.choice(fragments), ldm, queues,
                                        exclusive=rng.random() < 0.4, millis=rng.randint(0, 3))
                for _ in range(poisson(rng, per_tc * COMPLETE_SECONDS)):
                    # copy record of a committed transaction, completing (ops assumed 0:
                    # copyApi carries lqhkeyconfrec, not the operation count)
                    txs.append(Transaction(node, tc, rng.randint(0, 4095),
                                           rng.choice(sql_nodes), rng.getrandbits(63),
                                           CS_COMPLETING, 0, rng.randint(1, 4), 0.0))
                for k in range(STATELESS_PER_TC):
                    txs.append(self._stateless(node, tc, k, now, sql_nodes))
        self._long_tx(now, tps, tcs, sql_nodes, fragments, ldm, long_tx_node, txs, queues)
        self._waiters(now, tcs, sql_nodes, fragments, ldm, txs, queues)
        self.transactions = txs
        self.locks = [lk for q in queues.values() for lk in q]

    def _stateless(self, node: int, tc: int, k: int, now: float,
                   sql_nodes: list[int]) -> Transaction:
        key = (node, tc, k)
        last = self.stateless.get(key)
        if last is None or self.rng.random() < STATELESS_REUSE_PER_SECOND:
            last = self.stateless[key] = now - self.rng.uniform(0, 120) * (last is None)
        return Transaction(node, tc, 3000 + k, sql_nodes[k % len(sql_nodes)],
                           (node << 40) | (tc << 8) | k, CS_STARTED, 0, 0, now - last)

    def _long_tx(self, now: float, tps: dict[int, float], tcs: int, sql_nodes: list[int],
                 fragments: list[tuple[int, int, list[int]]], ldm: int,
                 long_tx_node: int | None, txs: list[Transaction],
                 queues: dict[tuple[int, int, int, int], list[Lock]]) -> None:
        """The long-transaction fault: a client holds rows exclusively and went quiet; others
        queue behind them, time out and come back (a waiter is never older than the
        timeout)."""
        if long_tx_node is None or not fragments or long_tx_node not in tps:
            self.long_tx = None
            return
        if self.long_tx is None or self.long_tx.node != long_tx_node:
            self.long_tx = Transaction(long_tx_node, 1, 4095, sql_nodes[0],
                                       self.rng.getrandbits(63), CS_STARTED, 3, 0, 0.0)
            self.long_tx_since = now
        self.long_tx.inactive = now - self.long_tx_since
        txs.append(self.long_tx)
        held = self._lock_rows(self.long_tx, fragments[0], ldm, queues, exclusive=True,
                               millis=int(self.long_tx.inactive * 1000))
        for k in range(2):
            waiter = Transaction(long_tx_node, 1 + k % tcs, 4000 + k, sql_nodes[-1],
                                 self.rng.getrandbits(63), CS_RECEIVING, 1, 1, 0.0)
            txs.append(waiter)
            self._enqueue(waiter, held[0], queues, exclusive=True,
                          millis=self.rng.randint(50, int(DEADLOCK_TIMEOUT_MS) - 10))

    def _waiters(self, now: float, tcs: int, sql_nodes: list[int],
                 fragments: list[tuple[int, int, list[int]]], ldm: int,
                 txs: list[Transaction],
                 queues: dict[tuple[int, int, int, int], list[Lock]]) -> None:
        """Requests waiting for a contended row now, as many as the counters' wait time
        says there are on average (Poisson)."""
        by_key = {(t, f): reps for t, f, reps in fragments}
        for (node, table, fragment), mean in sorted(self.waiting.items()):
            reps = by_key.get((table, fragment))
            n = poisson(self.rng, mean)
            if not n or not reps or node not in reps:
                continue
            holder = Transaction(node, 1, 4080, sql_nodes[0], self.rng.getrandbits(63),
                                 CS_STARTED, 1, 0, 0.0)
            txs.append(holder)
            owner = self._lock_rows(holder, (table, fragment, [node]), ldm, queues,
                                    exclusive=True, millis=self.rng.randint(1, 50), rows=1)[0]
            for k in range(n):
                waiter = Transaction(node, 1 + k % tcs, 4100 + k, sql_nodes[-1],
                                     self.rng.getrandbits(63), CS_RECEIVING, 1, 1, 0.0)
                txs.append(waiter)
                self._enqueue(waiter, owner, queues, exclusive=self.rng.random() < 0.8,
                              millis=self.rng.randint(1, int(HOT_WAIT_MS)))

    def _lock_rows(self, tx: Transaction, frag: tuple[int, int, list[int]], ldm: int,
                   queues: dict[tuple[int, int, int, int], list[Lock]], exclusive: bool,
                   millis: int, rows: int = 3) -> list[Lock]:
        """The row locks an operation takes: on every live replica for a write, on the
        primary (the first replica) for a locked read. A row already locked queues the
        request (or shares the lock, both shared)."""
        table, fragment, replicas = frag
        out = []
        for r in range(min(tx.ops, rows)):
            rid = rowid(fragment, tx.objid + r)
            for node in (replicas if exclusive else replicas[:1]):
                key = (node, table, fragment, rid)
                if key in queues:
                    out.append(self._enqueue(tx, queues[key][0], queues, exclusive, millis))
                    continue
                flags = (schema.LOCK_OWNER | schema.LOCK_HOLDING
                         | (schema.LOCK_EXCLUSIVE | 1 if exclusive else 0))
                lock = Lock(node, fragment % ldm + 1, table, fragment, rid, tx.transid,
                            self._op_id(), flags, 0, 0, millis)
                queues[key] = [lock]
                out.append(lock)
        return out

    def _enqueue(self, tx: Transaction, owner: Lock,
                 queues: dict[tuple[int, int, int, int], list[Lock]], exclusive: bool,
                 millis: int) -> Lock:
        """A request for a row `owner` holds: in the owner's parallel queue when both are
        shared (holding, not the owner), else at the end of the serial queue (waiting)."""
        queue = queues[(owner.node, owner.table, owner.fragment, owner.rowid)]
        op = schema.LOCK_EXCLUSIVE | 1 if exclusive else 0
        shared_run = (not exclusive and not owner.flags & schema.LOCK_EXCLUSIVE
                      and all(lk.flags & schema.LOCK_HOLDING for lk in queue))
        if shared_run:
            lock = Lock(owner.node, owner.ldm, owner.table, owner.fragment, owner.rowid,
                        tx.transid, self._op_id(), schema.LOCK_HOLDING | op, 0, owner.op_id,
                        millis)
        else:
            lock = Lock(owner.node, owner.ldm, owner.table, owner.fragment, owner.rowid,
                        tx.transid, self._op_id(), op, queue[-1].op_id, 0, millis)
        queue.append(lock)
        return lock


def _weighted(rng: random.Random, choices: tuple[tuple[int, float], ...]) -> int:
    x, acc = rng.random(), 0.0
    for value, w in choices:
        acc += w
        if x < acc:
            return value
    return choices[-1][0]
