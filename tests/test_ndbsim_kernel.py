"""The NDB simulator keeps the kernel's invariants where a test could otherwise agree with a
simulator that is kinder than a real cluster (the sources are cited in the simulator's
modules). Fast: the model and its rows, no database.
"""

from __future__ import annotations

import dataclasses
import statistics

from ndbinfo_exporter import schema

from clusterscope.ndbsim import rows, scenario, view_ddl
from clusterscope.ndbsim.model import Model
from clusterscope.ndbsim.workload import TABLE_ID0

DEADLOCK_TIMEOUT_MS = 1200  # TransactionDeadlockDetectionTimeout's default (MySQL manual)


def model(version: str = "8.0", seconds: int = 30, **faults: object) -> Model:
    m = Model(scenario.load("default"), version, seed=7)
    for k, v in faults.items():
        setattr(m.faults, k, v)
    for _ in range(seconds):
        m.tick(1.0)
    return m


def table(m: Model, base: str, view: str) -> list[dict]:
    cols = [n for n, _ in view_ddl.base_table(schema.view(view)).columns]
    return [dict(zip(cols, r, strict=True)) for r in rows.tables(m)[base][1]]


def test_block_numbers_are_the_kernels_and_pgman_rows_carry_ndbfs() -> None:
    """BlockNumbers.h (@e45ae218c0dd): the numbers ndb$blocks names; the PGMAN histogram's
    block_number is NDBFS's (Pgman::execDBINFO_SCANREQ writes NDBFS)."""
    b = schema.BLOCK_NUMBER
    assert (b["NDBFS"], b["DBTUX"], b["LGMAN"], b["PGMAN"], b["RESTORE"], b["DBSPJ"],
            b["THRMAN"], b["TRPMAN"]) == (253, 258, 260, 261, 262, 264, 265, 266)
    assert len(set(b.values())) == len(b)
    pg = table(model(seconds=6), "ndb$pgman_time_track_stats", "pgman_time_track_stats")
    assert pg and {r["block_number"] for r in pg} == {b["NDBFS"]}


def test_ordered_indexes_are_in_memory_per_fragment_with_fixed_pages_only() -> None:
    """Every table's PRIMARY ordered index has fragment replicas where the table has them,
    fixed-size T-tree pages only (no var part, no hash index), its parent the table; a
    table's rows have one var part each."""
    m = model(seconds=3)
    mem = table(m, "ndb$frag_mem_use", "memory_per_fragment")
    objs = {o.id: o for o in m.work.objects}
    ordered = [r for r in mem if objs[r["table_id"]].type == 6]
    assert ordered, "no ordered index fragments"
    for r in ordered:
        assert r["var_elem_alloc_bytes"] == 0 == r["hash_index_alloc_bytes"]
        assert r["fixed_elem_alloc_bytes"] > 0 and r["fixed_elem_count"] > 0
    for node in (1, 2):
        base_frags = {(r["table_id"], r["fragment_num"]) for r in mem
                      if r["node_id"] == node and objs[r["table_id"]].type == 2
                      and objs[r["table_id"]].parent_id == 0}
        idx_frags = {(objs[r["table_id"]].parent_id, r["fragment_num"]) for r in ordered
                     if r["node_id"] == node}
        assert idx_frags == base_frags
    tables = [r for r in mem if objs[r["table_id"]].type == 2]
    assert all(r["var_elem_count"] == r["fixed_elem_count"] for r in tables)


def test_get_page_histogram_counts_only_requests_that_waited() -> None:
    """Pgman starts a request's clock when it queues it: get_page's count is the waits
    (wait_queue + wait_io), never the requests served at once."""
    m = model(seconds=40)
    dpb = table(m, "ndb$diskpagebuffer", "diskpagebuffer")
    pg = table(m, "ndb$pgman_time_track_stats", "pgman_time_track_stats")
    for node in (1, 2):
        waits = sum(r["page_requests_wait_queue"] + r["page_requests_wait_io"]
                    for r in dpb if r["node_id"] == node)
        direct = sum(r["page_requests_direct_return"] for r in dpb if r["node_id"] == node)
        timed = sum(r["get_page"] for r in pg if r["node_id"] == node)
        assert direct > 10 * waits > 0
        assert abs(timed - waits) <= 0.02 * waits + 40  # whole counts per range


def test_pages_written_excludes_checkpoint_writes() -> None:
    """Pgman::fswriteconf counts an LCP page in pages_written_lcp and any other page in
    pages_written: disjoint, their sum is every write the page_writes histogram times."""
    m = model(seconds=5)
    while not m.lcp_running:
        m.tick(1.0)
    for _ in range(30):
        m.tick(1.0)
    dpb = table(m, "ndb$diskpagebuffer", "diskpagebuffer")
    pg = table(m, "ndb$pgman_time_track_stats", "pgman_time_track_stats")
    written = sum(r["pages_written"] for r in dpb)
    lcp = sum(r["pages_written_lcp"] for r in dpb)
    timed = sum(r["page_writes"] for r in pg)
    assert lcp > 0 and written > 0
    assert abs(timed - (written + lcp)) <= 0.02 * (written + lcp) + 40


def _hit_ratio(buffer_mb: float, working_set_mb: float) -> float:
    sc = dataclasses.replace(scenario.load("default"), disk_page_buffer_mb=buffer_mb,
                             disk_data_working_set_mb=working_set_mb)
    m = Model(sc, "8.0", seed=3)
    for _ in range(20):
        m.tick(1.0)
    dpb = [r for r in table(m, "ndb$diskpagebuffer", "diskpagebuffer")]
    direct = sum(r["page_requests_direct_return"] for r in dpb)
    return direct / (direct + sum(r["page_requests_wait_io"] for r in dpb))


def test_disk_page_buffer_hits_follow_the_working_set_against_the_buffer() -> None:
    """The manual's hit ratio is what the buffer can hold of the pages in use: about 1 when
    the working set fits, falling with it (half the set resident: about half), never a
    configured ratio."""
    fits = _hit_ratio(1024, 800)
    half = _hit_ratio(1024 * 9 / 8 / 2, 1024)  # the LDMs' share of the buffer: half the set
    tenth = _hit_ratio(1024 * 9 / 8 / 10, 1024)
    assert fits > 0.99
    assert 0.45 < half < 0.55
    assert 0.05 < tenth < 0.15


def test_one_owner_per_row_lock_queue() -> None:
    """Per row and replica one operation owns the lock (OP_LOCK_OWNER, running); shared
    holders beside it run without owning; waiters neither own nor run and name the
    operation they queue behind; rowid is page_no << 32 | page_idx."""
    m = model(seconds=20, lock_contention=TABLE_ID0, long_transaction=2)
    locks = table(m, "ndb$acc_operations", "cluster_locks")
    by_row: dict[tuple, list[dict]] = {}
    for lk in locks:
        by_row.setdefault((lk["node_id"], lk["tableid"], lk["fragmentid"], lk["rowid"]),
                          []).append(lk)
    waiting = 0
    for queue in by_row.values():
        owners = [lk for lk in queue if lk["op_flags"] & schema.LOCK_OWNER]
        assert len(owners) == 1, queue
        assert owners[0]["op_flags"] & schema.LOCK_HOLDING
        ids = {lk["acc_op_id"] for lk in queue}
        for lk in queue:
            if lk is owners[0]:
                continue
            if lk["op_flags"] & schema.LOCK_HOLDING:  # a shared holder beside the owner
                assert not lk["op_flags"] & schema.LOCK_EXCLUSIVE
                assert lk["prev_parallel_op_id"] == owners[0]["acc_op_id"]
            else:
                waiting += 1
                assert lk["prev_serial_op_id"] in ids
    assert waiting > 0
    for lk in locks:
        assert lk["rowid"] >> 32 < 4096 and lk["rowid"] & 0xFFFFFFFF < 64


def test_locked_reads_lock_only_the_primary_replica() -> None:
    """A shared lock is taken where the read runs: the primary replica, never both."""
    m = model(seconds=10)
    prim = {(tid, f): pref for tid, f, _, pref in m.fragments}  # both nodes serve
    shared = [lk for lk in table(m, "ndb$acc_operations", "cluster_locks")
              if lk["op_flags"] & schema.LOCK_OWNER
              and not lk["op_flags"] & schema.LOCK_EXCLUSIVE]
    assert shared
    assert all(lk["node_id"] == prim[(lk["tableid"], lk["fragmentid"])] for lk in shared)


def test_key_operations_are_tracked_on_the_primary_replicas_node() -> None:
    """Dbtc tracks a key operation against the API node and the primary replica's data
    node: with node 2 the primary of no fragment, it has no key operations of its own."""
    sc = scenario.load("default")
    m = Model(sc, "8.0", seed=5)
    m.fragments = [(tid, f, grp, 1) for tid, f, grp, _ in m.fragments]  # node 1 primary
    for _ in range(6):
        m.tick(1.0)
    tc = table(m, "ndb$tc_time_track_stats", "tc_time_track_stats")
    reads = {n: sum(r["read_key_ops"] for r in tc if r["comm_node_id"] == n) for n in (1, 2)}
    assert reads[1] > 0 and reads[2] == 0


def test_lock_counters_and_snapshot_agree_and_timeouts_count() -> None:
    """The mean number of requests waiting in snapshots is the counters' wait time per
    second (Little's law); a hot row's failed waits each waited the deadlock timeout."""
    m = model(seconds=5, lock_contention=TABLE_ID0)
    before = table(m, "ndb$frag_locks", "locks_per_fragment")
    seen = []
    for _ in range(40):
        m.tick(1.0)
        seen.append(sum(1 for lk in m.work.locks if lk.table == TABLE_ID0
                        and not lk.flags & (schema.LOCK_HOLDING | schema.LOCK_OWNER)))
    after = table(m, "ndb$frag_locks", "locks_per_fragment")

    def total(rs: list[dict], col: str) -> float:
        return sum(r[col] for r in rs if r["table_id"] == TABLE_ID0)

    millis = (total(after, "wait_ok_millis") + total(after, "wait_fail_millis")
              - total(before, "wait_ok_millis") - total(before, "wait_fail_millis"))
    mean_waiting = millis / 1000 / 40
    assert mean_waiting > 5
    assert abs(statistics.mean(seen) - mean_waiting) < 0.25 * mean_waiting
    fails = sum(total(after, c) - total(before, c) for c in ("ex_wait_fail", "sh_wait_fail"))
    assert fails > 0
    fail_ms = total(after, "wait_fail_millis") - total(before, "wait_fail_millis")
    assert abs(fail_ms / fails - DEADLOCK_TIMEOUT_MS) < 0.05 * DEADLOCK_TIMEOUT_MS
    for r in after:
        assert r["ex_req"] >= r["ex_imm_ok"] + r["ex_wait_ok"] + r["ex_wait_fail"] - 2


def test_tc_records_as_the_tc_keeps_them() -> None:
    """Copy records complete committed transactions (Completing, no operations); records
    in a commit state without a friendly name appear; connections idle after committed
    reads hold no operations and their timer runs; a transaction waiting for its client
    shows a running timer too."""
    m = model(seconds=30)
    states: set[int] = set()
    for _ in range(30):
        m.tick(1.0)
        txs = table(m, "ndb$transactions", "cluster_transactions")
        states |= {r["state"] for r in txs}
    assert {2, 9, 13} <= states
    stateless = [r for r in txs if r["state"] == 2 and r["c_ops"] == 0]
    assert stateless and max(r["timer"] for r in stateless) > 10
    assert all(r["c_ops"] == 0 for r in txs if r["state"] == 9)
