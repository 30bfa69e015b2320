"""What the simulated data nodes are doing beyond counters: the TC and PGMAN latency
histograms, the disk page buffer, memory per table fragment, and (`contention`) TC records,
row locks and the lock counters.

Everything here is SIMULATED. The shapes follow the kernel (which node records what, which
states and flags exist, how the histogram ranges are bounded: cited in
`ndbinfo_exporter.schema`); the numbers are plausible, not measured. `workload_rows`
renders these as the `ndb$` tables.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ndbinfo_exporter import schema

from clusterscope.ndbsim.contention import Contention, Lock, Transaction

PAGE = 32768  # bytes per DataMemory page
TABLE_ID0 = 10  # table ids below are system tables
DATABASE = "sim"
# fixed-size element per row of a table (bytes), by table index: rows of different widths
ELEMENT_BYTES = (96, 128, 64, 256, 80, 112)
# DataMemory of a node's tables (the rest: internal pools); shares of a table's memory
TABLE_SHARE_OF_DATA_MEMORY = 0.93
# of an object's memory, by kind (the rest: the l2p maps), as the manual's memory_per_fragment
# example splits them (MySQL manual, "The ndbinfo memory_per_fragment Table": a table has
# fixed, var and hash index pages; its unique index table fixed and hash index pages only;
# an ordered index fixed-size T-tree pages only)
SPLIT = {2: {"fixed": 0.62, "var": 0.24, "hash_index": 0.08},
         3: {"fixed": 0.66, "var": 0.0, "hash_index": 0.28},
         6: {"fixed": 0.94, "var": 0.0, "hash_index": 0.0}}
# of a table's memory: its unique index, its blob parts, its PRIMARY ordered index (the
# manual's example: 1966080 bytes of T-tree for a 10928128-byte table, 18 %)
UNIQUE_INDEX_SHARE, BLOB_SHARE, ORDERED_INDEX_SHARE = 0.04, 0.10, 0.15
TTREE_NODE_BYTES = 256  # an ordered index's fixed-size element (assumed; not published)
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
API_BLOCK = 0x8000  # NDB API clients' block references start here (refToBlock >= 32768)
# the disk page buffer: requests that find their page in the buffer but queued behind other
# requests for it (hot pages), and, while an LCP writes pages out, requests that find theirs
# in PAGEOUT (Pgman::get_page_no_lirs counts both kinds of wait: wait_queue, wait_io)
HOT_PAGE_QUEUED, PAGEOUT_BLOCKED = 0.03, 0.005


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
    # (ldm instance, table, fragment) -> frag_locks counters (contention.COUNTS)
    frag_locks: dict[tuple[int, int, int], list[float]] = field(default_factory=dict)


def dictionary(tables: int) -> list[DictObject]:
    """The dictionary the scenario's tables make: system tables, every user table with its
    PRIMARY ordered index (fragmented like the table: in memory_per_fragment, fixed-size
    pages only), every third with a unique hash index (a table of its own) and the first
    with a blob part table (a user table whose parent is the table)."""
    objs = [DictObject(1, i, 0, 0, name, -1, 0.0) for i, name in
            enumerate(("sys/def/SYSTAB_0", "sys/def/NDB$EVENTS_0"))]
    weights = [1.0 / (k + 1) ** 1.1 for k in range(tables)]
    total = sum(weights)
    next_id = TABLE_ID0 + tables
    for k in range(tables):
        tid = TABLE_ID0 + k
        share = weights[k] / total
        own = (1.0 - ORDERED_INDEX_SHARE - (UNIQUE_INDEX_SHARE if k % 3 == 0 else 0.0)
               - (BLOB_SHARE if k == 0 else 0.0))
        objs.append(DictObject(2, tid, 0, 0, f"{DATABASE}/def/t{k}", tid, share * own))
        objs.append(DictObject(6, next_id, 2, tid, f"sys/def/{tid}/PRIMARY", tid,
                               share * ORDERED_INDEX_SHARE))
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
    """The histograms, disk page buffer and lock counters of the whole cluster (per data node
    process), and the snapshot of its TC records and locks (`contention`)."""

    def __init__(self, rng: random.Random, tables: int) -> None:
        self.rng = rng
        self.objects = dictionary(tables)
        # each user table's share of the key operations (its share of the memory)
        shares = {o.id: o.share for o in self.objects if o.type == 2 and o.parent_id == 0}
        total = sum(shares.values()) or 1.0
        self.table_weights = {t: v / total for t, v in shares.items()}
        self.work: dict[int, NodeWork] = {}
        self.contention = Contention(rng)
        self._tc_shares = {k: bucket_shares(schema.tc_time_track_bounds(), v)
                           for k, v in LATENCY_US.items()}
        self._tc_error_shares = bucket_shares(schema.tc_time_track_bounds(), ERROR_LATENCY_US)
        self._pg_shares = {k: bucket_shares(schema.pgman_time_track_bounds(), v)
                           for k, v in PGMAN_LATENCY_US.items()}

    @property
    def transactions(self) -> list[Transaction]:
        return self.contention.transactions

    @property
    def locks(self) -> list[Lock]:
        return self.contention.locks

    def reset(self, node: int) -> None:
        """A data node process (re)started: its statistics start from nothing."""
        self.work.pop(node, None)

    def node(self, node: int) -> NodeWork:
        return self.work.setdefault(node, NodeWork())

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

    # -- the disk page buffer ----------------------------------------------------------
    def page_requests(self, node: int, instance: int, requests: float, resident: float,
                      written: float, lcp_written: float, lcp_running: bool) -> None:
        """`requests` page requests at one PGMAN instance, of which the share `resident`
        (the instance's buffer pages over its working set, at most 1: uniform access under
        LRU-like replacement) finds its page in the buffer. A request waits in the queue
        behind others on a hot page (wait_queue), or for a page being read or written out
        (wait_io); only the waits are timed in the get_page histogram. pages_written counts
        the writes outside LCPs, pages_written_lcp the LCP's (disjoint, Pgman::fswriteconf),
        the page_writes histogram both."""
        queued = requests * HOT_PAGE_QUEUED
        pageout = requests * PAGEOUT_BLOCKED if lcp_running else 0.0
        misses = (requests - queued - pageout) * (1.0 - min(1.0, resident))
        wait_io = misses + pageout
        self.record_dpb(node, instance, page_requests_direct_return=requests - queued - wait_io,
                        page_requests_wait_queue=queued, page_requests_wait_io=wait_io,
                        pages_read=misses, pages_written=written,
                        pages_written_lcp=lcp_written, log_waits=written * 0.01)
        self.record_pgman(node, instance, "page_reads", misses)
        self.record_pgman(node, instance, "page_writes", written + lcp_written)
        self.record_pgman(node, instance, "log_waits", written * 0.01)
        self.record_pgman(node, instance, "get_page", queued + wait_io)

    # -- memory per fragment -------------------------------------------------------------
    def fragment_memory(self, node: int, table_bytes: float,
                        fragments: list[tuple[int, int]], ldm: int) -> list[tuple]:
        """frag_mem_use rows of one node: `table_bytes` (what its tables use of DataMemory)
        spread over the objects by their share and over the node's fragment replicas of
        each table (an ordered index is fragmented like its table). A row has one fixed
        part and, in a table with var-size columns, one var part (the manual's example:
        var_elem_count == fixed_elem_count); an ordered index's elements are T-tree nodes."""
        by_table: dict[int, list[int]] = {}
        for tid, f in fragments:
            by_table.setdefault(tid, []).append(f)
        rows = []
        for k, obj in enumerate(self.objects):
            frags = by_table.get(obj.table_id) if obj.type != 1 else [0]
            if not frags:
                continue
            own = table_bytes * obj.share / len(frags) if obj.type != 1 else 131072.0
            split = SPLIT.get(obj.type, SPLIT[2])
            elem = TTREE_NODE_BYTES if obj.type == 6 else ELEMENT_BYTES[k % len(ELEMENT_BYTES)]
            for f in frags:
                fixed = int(own * split["fixed"])
                var = int(own * split["var"])
                hidx = int(own * split["hash_index"])
                fixed_free = int(fixed * FREE_IN_PAGES)
                count = (fixed - fixed_free) // elem
                rows.append((node, f % ldm + 1, obj.id, f, 0 if obj.type == 6 else count,
                             fixed, fixed_free, count, elem, var, int(var * FREE_IN_PAGES),
                             count if var else 0, int(own * 0.002),
                             int(own * 0.0005) if hidx else 0, hidx))
        return rows

    def dict_rows(self) -> list[tuple]:
        return [(o.type, o.id, 1, 4, o.parent_type, o.parent_id, o.fq_name)
                for o in self.objects]
