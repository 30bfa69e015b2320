"""The simulated cluster rendered as the rows of every `ndb$` table the SQL node serves.

Column lists come from the exporter's view catalogue (`view_ddl.base_table`), so a column added
there is a column the simulator must fill here; the values are the model's state.
"""

from __future__ import annotations

import statistics
from collections import deque
from typing import TYPE_CHECKING

from ndbinfo_exporter import schema

from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim import view_ddl, workload_rows
from clusterscope.ndbsim.workload import PAGE, TABLE_ID0

if TYPE_CHECKING:
    from clusterscope.ndbsim.cluster_state import Node
    from clusterscope.ndbsim.lifecycle import RestartRow
    from clusterscope.ndbsim.model import Model

Rows = tuple[list[str], list[tuple]]
INCLUDE_NODE_IN_LCP_AND_GCP = 11
THREAD_DESC = {
    "main": "main thread, schema and distribution handling",
    "rep": "rep thread, asynch replication and proxy block handling",
    "ldm": "ldm thread, handling a set of data partitions",
    "tc": "tc thread, transaction handling, unique index and pushed join handling",
    "recv": "receive thread, performing receive and polling for new receives",
    "send": "send thread, performing send handling",
}
# nodes.start_phase while a restart is in a given node_restart_status_int
# (only state 18 is ever shown: before start phase 9 the node has no row, model.visible();
# the subscription handover of state 18 is start phase 101, NDB Internals Guide "STTOR Phase
# 101")
START_PHASE = {4: 1, 5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 3, 11: 4, 12: 4, 13: 4, 14: 4, 15: 4,
               16: 5, 17: 5, 18: 101}


def _bcols(view: str) -> list[str]:
    return view_ddl.base_columns(view)


def mysql_version(version: str) -> str:
    v = schema.PROFILES.get(version, version)
    major = schema.version_tuple(v)
    mysql = "5.7.22" if major < (8,) else v
    return f"mysql-{mysql} ndb-{v}-sim"


def tables(sim: Model, full: bool = True) -> dict[str, Rows]:
    """Base-table name -> (columns, rows). `full=False`: only what a restart changes."""
    out: dict[str, tuple[list[str], list[tuple]]] = {}
    out["ndb$restart_info"] = _restart_info(sim)
    out["ndb$nodes"] = _nodes(sim)
    if not full:
        return out
    # the nodes whose own rows the SQL node reads (model.visible(): a restarting node only
    # from start phase 9 on)
    live = sorted(sim.visible(), key=lambda n: n.id)
    sc, v = sim.sc, sim.version
    out["ndb$blocks"] = ([n for n, _ in schema.LOOKUPS[0].columns],
                         [(num, name) for name, num in schema.BLOCK_NUMBER.items()])
    out["ndb$processes"] = _processes(sim, live)
    out["ndb$config_nodes"] = (
        _bcols("config_nodes"),
        [(rep.id, n, _node_type(sim, n), "" if n in sc.free_api_slots else "127.0.0.1")
         for rep in live for n in sim.remotes])
    out["ndb$membership"] = _membership(sim, live)
    out["ndb$threads"] = (_bcols("threads"),
                          [(n.id, t, k, THREAD_DESC[k]) for n in live
                           for t, k in sim.threads])
    out["ndb$threadstat"] = (
        _bcols("threadstat"),
        [(n.id, t, k, *[int(x) for x in n.tstat[t][:7]], n.pid + t,
          int((sim.wall_total + 1.7e9) * 1000), *[int(x) for x in n.tstat[t][9:]])
         for n in live for t, k in sim.threads if k != "send"])
    out["ndb$cpustat"] = (
        _bcols("cpustat"),
        [(n.id, t, *n.cpu[t], n.cpu_hist[t][0][-1]) for n in live for t, _ in sim.threads
         if t in n.cpu])
    out["ndb$cpustat_1sec"] = (
        _bcols("cpustat_1sec"),
        [(n.id, t, *h[:3], h[3], h[4], h[5], h[6], h[7], h[8]) for n in live
         for t, _ in sim.threads for h in _hist20(n.cpu_hist[t])])
    out["ndb$transporters"] = _transporter_rows(sim, live)
    if schema.version_tuple(v) >= (8, 0, 37):
        out["ndb$transporter_details"] = _transporter_details(sim, live)
    out["ndb$pools"] = _pools(sim, live)
    redo_parts = sc.redo_log_parts
    out["ndb$logspaces"] = (
        _bcols("logspaces"),
        [(n.id, 0, 0, p, sc.redo_part_bytes,
          int(min(sc.redo_part_bytes, n.redo_used / redo_parts * (1 + 0.02 * (p - 1)))),
          int(min(sc.redo_part_bytes, n.redo_high / redo_parts)))
         for n in live for p in range(redo_parts)])
    out["ndb$logbuffers"] = (
        _bcols("logbuffers"),
        [(n.id, 0, 0, p, sc.redo_buffer_bytes // redo_parts,
          int(n.dws[-1][1] * 0.01) if n.dws else 0, sc.redo_buffer_bytes // redo_parts // 4)
         for n in live for p in range(redo_parts)])
    out["ndb$counters"] = (
        _bcols("counters"),
        [(n.id, b, i, cid, int(val)) for n in live
         for (b, i, cid), val in sorted(n.counters.items())])
    out["ndb$resources"] = _resources(sim, live)
    out.update(_lcp_tables(sim, live))
    out.update(_disk_write_speed(sim, live))
    params, values = sim.config.rows([n.id for n in live])
    out["ndb$config_params"] = (_bcols("config_params"), params)
    out["ndb$config_values"] = (_bcols("config_values"), values)
    out.update(workload_rows.tables(sim, live))
    return out


def _membership(sim: Model, live: list[Node]) -> Rows:
    """One row per running data node. The ring is the data nodes in node id order ("left"
    the previous, "right" the next; manual, ndbinfo membership table); the president is
    the oldest node (the DIH master), the successor the next oldest, and the president
    sees itself first in the succession order. Every node reports the same arbitrator,
    ticket and state. The arbitrator is the first management node (ArbitrationRank 1).
    Assumed, not read from Qmgr: with the arbitrator lost, the nodes report it
    disconnected and the state ARBIT_FIND while the president looks for another."""
    if not live:
        return _bcols("membership"), []
    ring = [n.id for n in live]
    by_age = sorted(live, key=lambda n: (n.start_ctime, n.id))
    order = {n.id: i + 1 for i, n in enumerate(by_age)}
    president = by_age[0].id
    successor = by_age[1].id if len(by_age) > 1 else 0
    arbitrator = sim.sc.mgm_nodes[0] if sim.sc.mgm_nodes else 0
    lost = sim.faults.arbitrator_lost or not arbitrator
    ticket = f"{sim.gci_base:08x}{president:08x}"  # a new one per arbitration
    rank1 = "" if lost else f"[ {arbitrator} ]"
    rows = [(n.id, n.group, ring[i - 1], ring[(i + 1) % len(ring)], president, successor,
             (order[n.id] << 16) | order[n.id], arbitrator, ticket, 2 if lost else 6,
             0 if lost else 1, rank1, "")
            for i, n in enumerate(live)]
    return _bcols("membership"), rows


def _hist20(hist: deque) -> list[tuple]:
    rows = list(hist)
    if not rows:
        return []
    return rows + [rows[-1]] * (20 - len(rows))  # always 20 rows per thread

def _node_type(sim: Model, n: int) -> int:
    if n in sim.nodes:
        return 0
    return 2 if n in sim.sc.mgm_nodes else 1

def _restart_info(sim: Model) -> tuple[list[str], list[tuple]]:
    cols = _bcols("restart_info")
    master = sim.master()
    if master is None:
        return cols, []  # only a started DIH master reports restart_info
    rows = []
    for node_id, row in sorted(sim.restart_rows.items()):
        st, secs, total = _restart_row(row, master.id)
        rows.append((node_id, schema.RESTART_STATUS[st], st,
                     *[secs.get(p, 0) for p in schema.RESTART_PHASES], total))
    return cols, rows


def _restart_row(row: RestartRow, master: int) -> tuple[int, dict[str, int], int]:
    """(status, secs_* columns, total) as the current master reports the row.

    A master reports what it saw as master (Dbdih::fill_row_with_node_restart_status). A
    restart it watched as a non-master (the master changed since) is reported in the
    states non-masters keep, 20-24, and a completed one (24) with only the few phases a
    non-master timed (Dbdih::handle_before_master, DbdihMain.cpp)."""
    st, done = row.status, row.done
    if row.master == master or st in schema.RESTART_FAILURE:
        secs = rs.filled(done, st)
        return st, secs, rs.total(done) if st in schema.RESTART_COMPLETED else 0
    if st not in schema.RESTART_COMPLETED:
        before = 20 if st <= 8 else 21 if st <= 11 else 22 if st <= 16 else 23
        return before, {"to_complete_node_failure": int(done.get("to_complete_node_failure",
                                                                 0))}, 0

    def span(first: str, last: str) -> int:
        phases = schema.RESTART_PHASES
        names = [p for p in phases[phases.index(first):phases.index(last) + 1]
                 if p != "for_local_recovery"]
        return int(sum(done.get(p, 0.0) for p in names))

    secs = {"to_complete_node_failure": int(done.get("to_complete_node_failure", 0)),
            # failure -> start permitted, permitted -> included, included -> synched,
            # synched -> waiting for the LCP: the times a non-master records
            "to_get_start_permitted": span("to_complete_node_failure", "to_get_start_permitted"),
            "to_include_node": span("to_wait_for_lcp_for_copy_meta_data", "to_include_node"),
            "for_local_recovery": span("starting_node_to_request_local_recovery",
                                       "index_rebuild"),
            "to_synchronize_starting_node": int(done.get("to_synchronize_starting_node", 0))}
    return 24, secs, rs.total(done)

def _nodes(sim: Model) -> tuple[list[str], list[tuple]]:
    rows = []
    for n in sorted(sim.visible(), key=lambda n: n.id):
        generation = sim.config.of(n.id)[0]  # the configuration it started with
        if n.state == "up":
            rows.append((n.id, int(sim.ctime - n.start_ctime), 3, 0, generation))
        else:
            rows.append((n.id, int(sim.ctime - n.start_ctime), 2,
                         START_PHASE.get(n.restart_status or 0, 1), generation))
    return _bcols("nodes"), rows

def _processes(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    ver = mysql_version(sim.version)
    # angel_process_id 0 (the view shows NULL), as on the workshop's 7.6.9 cluster
    procs = [(n.id, 0, ver, n.pid, 0, "ndbmtd", "ndb://127.0.0.1") for n in live]
    procs += [(mgm, 2, ver, 1000 + mgm, 0, "ndb_mgmd", "ndb://127.0.0.1:1186")
              for mgm in sim.sc.mgm_nodes]
    for i, s in enumerate(sim.sc.sql_nodes):
        procs.append((s, 1, ver, 1500 + s, 0, "mysqld",
                      f"mysql://127.0.0.1:{sim.sql_port + i * 100 if i else sim.sql_port}"))
    return (_bcols("processes"),
            [(rep.id, *p) for rep in live for p in procs])

def _transporter_rows(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    cols = _bcols("transporters")
    # 7.x: a row for every node id including the reporting node itself (DISCONNECTED), and
    # "-" as the address of a link that is not connected (mysql/mysql-server
    # storage/ndb/src/kernel/blocks/trpman.cpp, 7.x TRANSPORTERS scan); 8.x skips itself
    seven = schema.version_tuple(sim.version) < (8, 0)
    none = "-" if seven else ""
    rows = [(n.id, r, t.status, "127.0.0.1" if t.status == 0 else none, int(t.sent),
             int(t.received), t.connects, t.overloaded, t.overloads, t.slowdown,
             t.slowdowns, 0) for n in live for r, t in sorted(n.trp.items())]
    if seven:
        rows += [(n.id, n.id, 2, "-", 0, 0, 0, 0, 0, 0, 0, 0) for n in live]
    return cols, sorted(rows)

def _transporter_details(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    cols = _bcols("transporter_details")
    rows = []
    recv = max(1, sim.sc.threads["recv"])
    for n in live:
        trp_id = 0
        for r, t in sorted(n.trp.items()):
            k = 2 if r in sim.nodes and sim.nodes[r].group == n.group else 1
            for _ in range(k):
                trp_id += 1
                used = sim.rng.randint(0, 65536) if t.status == 0 else 0
                rows.append((n.id, trp_id % recv, trp_id, r, t.status,
                             "127.0.0.1" if t.status == 0 else "", int(t.sent / k),
                             int(t.received / k), t.connects, t.overloaded, t.overloads,
                             t.slowdown, t.slowdowns, 0, used, 2 * 1048576, 2097152,
                             4194304, 1, 1500,
                             sim.rng.randint(100, 20000) if t.status == 0 else None))
    return cols, rows

def _pools(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    cols = _bcols("memoryusage")
    total = int(sim.sc.data_memory_gb * 2**30 / PAGE)
    rows = []
    for n in live:
        used = int(min(total, n.data_pages))
        rows.append((n.id, 254, 0, "Data memory", used, total, used, PAGE, 0, 0, 0, 0, 3, 1))
        lmb = sim.rng.randint(100, 600)
        rows.append((n.id, 254, 0, "Long message buffer", lmb, 16384, 2000, 256,
                     0, 0, 0, 0, 6, 1))
        # 7.x still reports DBACC's Index memory: a 7.6.9 cluster lists it
        # (wwwted/ndb-cluster-workshop labs/Lab_4_mon.md, Oracle's NDB workshop)
        if schema.version_tuple(sim.version) < (8, 0):
            rows.append((n.id, 248, 0, "Index memory", int(used * 0.12),
                         int(total * 0.15), int(used * 0.12), 8192, 0, 0, 0, 0, 3, 2))
    return cols, rows

def _resources(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    cols = _bcols("resources")
    total = int(sim.sc.data_memory_gb * 2**30 / PAGE)
    rows = []
    for n in live:
        dm = int(min(total, n.data_pages))
        # from TRANSACTION_MEMORY on: a real 7.6.9 `resources` has no RESERVED row
        # (labs/Lab_4_mon.md, as above)
        vals = {1: (2560, 300, 0), 2: (0, 0, 0), 3: (total, dm, total),
                4: (1024, 80, 0), 5: (2048, 300, 0), 6: (1024, 120, 2048),
                7: (1024, 64, 1024), 8: (0, 40, 0), 9: (64, 2, 256)}
        for rid, (res, used, mx) in vals.items():
            rows.append((n.id, rid, res, used, mx, used, 0))
    return cols, rows

def _lcp_tables(sim: Model, live: list[Node]) -> dict[str, tuple[list[str], list[tuple]]]:
    sc = sim.sc
    serving = {n.id for n in sim.serving()}
    # a restarting node joins the running LCP once it is included in the LCP and GCP
    # protocols: its replicas of the fragments not yet done count again (Dbdih::updateLcpInfo,
    # `noLcpReplicas++`), so the LCP's remaining work grows while a node restarts
    joined = {n.id for n in sim.nodes.values() if n.state == "starting"
              and (n.restart_status or 0) >= INCLUDE_NODE_IN_LCP_AND_GCP}
    nfrag = len(sim.fragments)
    done_upto = int(sim.lcp_progress * nfrag) if sim.lcp_running else nfrag
    g = sim.gci()
    frag_rows, rep_rows, tds_rows = [], [], []
    frags_done: dict[int, tuple[int, int]] = {}
    for k, (tid, f, grp, pref) in enumerate(sim.fragments):
        members = sc.group_nodes(grp)
        alive = [x for x in members if x in serving]
        primary = pref if pref in alive else (alive[0] if alive else 0)
        backups = [x for x in alive if x != primary] + [0, 0, 0]
        logged = tid - TABLE_ID0 >= sc.nologging_tables
        done = k < done_upto or not logged
        # only live replicas of logged tables are checkpointed (a dead node's replicas and
        # NOLOGGING tables never get num_lcp_replicas: DbdihMain.cpp, tabStorage checks)
        participants = [x for x in members if x in serving or x in joined]
        lcp_left = 0 if (done or not sim.lcp_running) else len(participants)
        frag_rows.append((tid, f, f, f // sc.node_groups, f % sc.redo_log_parts,
                          sc.replicas, primary, pref, backups[0], backups[1], backups[2],
                          len(alive), sc.replicas - len(alive), lcp_left))
        d, total_t = frags_done.get(tid, (0, 0))
        frags_done[tid] = (d + int(done), total_t + 1)
        for member in members:
            is_alive = member in serving
            last = sim.last_done_lcp.get(member, sim.lcp_id - (1 if sim.lcp_running else 0))
            if done and sim.lcp_running and is_alive:
                last = sim.lcp_id
            if not logged:
                last = 0  # never checkpointed
            ongoing = int(sim.lcp_running and is_alive and not done)
            rep_rows.append((tid, f, 1, member, ongoing, int(not is_alive), g - 2, g - 3, last,
                             max(0, last - 1), g - 200, g - 201, 1, g if is_alive else 0,
                             int(is_alive)))
    for tid, (d, tot) in sorted(frags_done.items()):
        if not sim.lcp_running or d == tot:
            lcp_st, upd = 3, 0
        elif d == 0:
            lcp_st, upd = 1, 2
        else:
            lcp_st, upd = 2, 1
        parts = sc.ldm * sc.node_groups
        storage = 1 if tid - TABLE_ID0 >= sc.nologging_tables else 0  # 1 NORMAL, 0 NOLOGGING
        tds_rows.append((tid, 0, upd, lcp_st, 1, storage, 2, parts, parts, 0, 0, 0))
    tf_cols = _bcols("table_fragments")
    tr_cols = _bcols("table_replicas")
    tds_cols = _bcols("table_distribution_status")
    out = {}
    master = sim.master()
    for base, cols, rows in (("ndb$table_fragments", tf_cols, frag_rows),
                             ("ndb$table_replicas", tr_cols, rep_rows),
                             ("ndb$table_distribution_status", tds_cols, tds_rows)):
        # the plain tables show the master's copy, the `_all` ones every live node's
        out[base] = (cols, [(master.id, *r) for r in rows] if master else [])
        out[base + "_all"] = (cols, [(n.id, *r) for n in live for r in rows])
    return out

def _disk_write_speed(sim: Model, live: list[Node]) -> dict[str, tuple[list[str], list[tuple]]]:
    sc = sim.sc
    agg_cols = _bcols("disk_write_speed_aggregate")
    base_cols = _bcols("disk_write_speed_base")
    agg, base = [], []
    target = int(sc.disk_write_speed_per_ldm)
    for n in live:
        hist = list(n.dws)[::-1]  # newest first
        for i in range(sc.ldm):
            share = 1.0 / sc.ldm

            def win(k: int, idx: int, hist: list = hist, share: float = share) -> tuple:
                xs = [h[idx] * share for h in hist[:k]] or [0.0]
                sd = statistics.pstdev(xs) if len(xs) > 1 else 0.0
                return int(sum(xs) / len(xs)), int(sd)

            last_l = int(hist[0][0] * share) if hist else 0
            last_r = int(hist[0][1] * share) if hist else 0
            l10, sl10 = win(10, 0)
            r10, sr10 = win(10, 1)
            l60, sl60 = win(60, 0)
            r60, sr60 = win(60, 1)
            s = n.slow[i]
            tgt = target if not sim.faults.lcp_stall else target // 10
            agg.append((n.id, i, last_l, last_r, l10, r10, sl10, sr10, l60, r60, sl60, sr60,
                        int(s[0]), int(s[1]), int(s[2]), tgt))
            for j, h in enumerate(hist[:61]):
                base.append((n.id, i, j * 1000, 1000, int(h[0] * share), int(h[1] * share),
                             tgt))
    return {"ndb$disk_write_speed_aggregate": (agg_cols, agg),
            "ndb$disk_write_speed_base": (base_cols, base)}
