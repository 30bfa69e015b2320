"""The simulated workload rendered as `ndb$` rows: the dictionary, memory per fragment, TC
records and lock queues, the lock counters per fragment, the disk page buffer and the
latency histograms (`workload` and `contention` hold the state; `rows` the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndbinfo_exporter import schema

from clusterscope.ndbsim import view_ddl
from clusterscope.ndbsim.workload import API_BLOCK, PAGE
from clusterscope.ndbsim.workload import TABLE_SHARE_OF_DATA_MEMORY as TABLE_SHARE

if TYPE_CHECKING:
    from clusterscope.ndbsim.cluster_state import Node
    from clusterscope.ndbsim.model import Model

Rows = tuple[list[str], list[tuple]]
HISTOGRAM_EVERY = 5.0  # wall seconds between two renderings of the histogram tables
DPB_COLUMNS = ("pages_written", "pages_written_lcp", "pages_read", "log_waits",
               "page_requests_direct_return", "page_requests_wait_queue",
               "page_requests_wait_io")
PGMAN_COLUMNS = ("page_reads", "page_writes", "log_waits", "get_page")


def tables(sim: Model, live: list[Node]) -> dict[str, Rows]:
    sc, wk = sim.sc, sim.work
    lookup = next(t for t in schema.LOOKUPS if t.name == "ndb$dbtc_apiconnect_state")
    out: dict[str, Rows] = {
        "ndb$dbtc_apiconnect_state": ([n for n, _ in lookup.columns],
                                      list(schema.DBTC_APICONNECT_STATE)),
        "ndb$dict_obj_types": (view_ddl.base_columns("dict_obj_types"), list(schema.DICT_OBJ_TYPE)),
        "ndb$dict_obj_info": (view_ddl.base_columns("dict_obj_info"), wk.dict_rows()),
    }
    mem = []
    for n in live:
        frags = [(tid, f) for tid, f, grp, _ in sim.fragments if n.id in sc.group_nodes(grp)]
        mem += wk.fragment_memory(n.id, min(n.data_pages, sc.data_memory_gb * 2**30 / PAGE)
                                  * PAGE * TABLE_SHARE, frags, sc.ldm)
    out["ndb$frag_mem_use"] = (view_ddl.base_columns("memory_per_fragment"), mem)
    live_ids = {n.id for n in live}
    out["ndb$transactions"] = (view_ddl.base_columns("cluster_transactions"), [
        (t.node, t.tc, t.objid, (API_BLOCK + t.tc) << 16 | t.api, t.transid & 0xFFFFFFFF,
         t.transid >> 32, t.state, 0, t.ops, t.outstanding, int(t.inactive))
        for t in wk.transactions if t.node in live_ids])
    out["ndb$acc_operations"] = (view_ddl.base_columns("cluster_locks"), [
        (lk.node, lk.ldm, lk.table, lk.fragment, lk.rowid, lk.transid & 0xFFFFFFFF,
         lk.transid >> 32, lk.op_id, lk.flags, lk.prev_serial, 0, lk.prev_parallel, 0,
         lk.millis, 0)
        for lk in wk.locks if lk.node in live_ids])
    out["ndb$frag_locks"] = (view_ddl.base_columns("locks_per_fragment"), [
        (n.id, ldm, table, fragment, *[int(v) for v in counts])
        for n in live for (ldm, table, fragment), counts
        in sorted(wk.node(n.id).frag_locks.items())])
    out["ndb$diskpagebuffer"] = (view_ddl.base_columns("diskpagebuffer"), [
        (n.id, inst, *[int(d.get(c, 0.0)) for c in DPB_COLUMNS])
        for n in live for inst, d in sorted(wk.node(n.id).dpb.items())])
    out.update(_histograms(sim, live))
    return out


def _histograms(sim: Model, live: list[Node]) -> dict[str, Rows]:
    """tc_time_track_stats and pgman_time_track_stats: 32 (20) rows per TC (PGMAN) instance
    and communicating node, rebuilt every HISTOGRAM_EVERY seconds (thousands of rows at
    the large scenario; a scrape every 5 s cannot tell the difference). The PGMAN rows
    carry NDBFS's block number, as Pgman::execDBINFO_SCANREQ writes them (schema.py)."""
    cache = sim.histogram_rows
    if cache is not None and sim.wall_total - cache[0] < HISTOGRAM_EVERY:
        return cache[1]
    wk = sim.work
    tc_bounds, pg_bounds = schema.tc_time_track_bounds(), schema.pgman_time_track_bounds()
    tc_cols = view_ddl.base_columns("tc_time_track_stats")[5:]
    tc_rows, pg_rows = [], []
    dbtc, ndbfs = schema.BLOCK_NUMBER["DBTC"], schema.BLOCK_NUMBER["NDBFS"]
    for n in live:
        work = wk.node(n.id)
        for (tc, comm), totals in sorted(work.tc_hist.items()):
            ranges = {c: wk.tc_ranges(c, totals.get(c, 0.0)) for c in tc_cols}
            for i, bound in enumerate(tc_bounds):
                tc_rows.append((n.id, dbtc, tc, comm, bound, *[ranges[c][i] for c in tc_cols]))
        for inst, totals in sorted(work.pgman_hist.items()):
            ranges = {c: wk.pgman_ranges(c, totals.get(c, 0.0)) for c in PGMAN_COLUMNS}
            for i, bound in enumerate(pg_bounds):
                pg_rows.append((n.id, ndbfs, inst, bound,
                                *[ranges[c][i] for c in PGMAN_COLUMNS]))
    rows = {"ndb$tc_time_track_stats": (view_ddl.base_columns("tc_time_track_stats"), tc_rows),
            "ndb$pgman_time_track_stats": (view_ddl.base_columns("pgman_time_track_stats"),
                                           pg_rows)}
    sim.histogram_rows = (sim.wall_total, rows)
    return rows
