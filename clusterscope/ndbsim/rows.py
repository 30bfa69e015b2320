"""The simulated cluster rendered as the rows of every `ndb$` table the SQL node serves.

Column lists come from the exporter's view catalogue (`ddl.base_table`), so a column added
there is a column the simulator must fill here; the values are the model's state.
"""

from __future__ import annotations

import statistics
from collections import deque
from typing import TYPE_CHECKING

from ndbinfo_exporter import schema

from clusterscope.ndbsim import ddl

if TYPE_CHECKING:
    from clusterscope.ndbsim.model import Model, Node

Rows = tuple[list[str], list[tuple]]
PAGE = 32768
THREAD_DESC = {
    "main": "main thread, schema and distribution handling",
    "rep": "rep thread, asynch replication and proxy block handling",
    "ldm": "ldm thread, handling a set of data partitions",
    "tc": "tc thread, transaction handling, unique index and pushed join handling",
    "recv": "receive thread, performing receive and polling for new receives",
    "send": "send thread, performing send handling",
}
# nodes.start_phase while a restart is in a given node_restart_status_int
START_PHASE = {0: 1, 1: 2, 2: 2, 3: 3, 4: 3, 5: 3, 6: 3, 7: 4, 8: 4, 9: 5, 10: 5, 11: 9}


def _bcols(view: str) -> list[str]:
    return [n for n, _ in ddl.base_table(schema.view(view)).columns]


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
    live = sorted(sim.live(), key=lambda n: n.id)
    sc, v = sim.sc, sim.version
    out["ndb$blocks"] = ([n for n, _ in schema.LOOKUPS[0].columns],
                         [(num, name) for name, num in schema.BLOCK_NUMBER.items()])
    out["ndb$processes"] = _processes(sim, live)
    out["ndb$config_nodes"] = (
        _bcols("config_nodes"),
        [(rep.id, n, _node_type(sim, n), "" if n in sc.free_api_slots else "127.0.0.1")
         for rep in live for n in sim.remotes])
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
    params = [(101, "NoOfReplicas", "Number of copies of all data in the database",
               "unsigned", "2", "1", "4", 0, "used", str(sc.replicas)),
              (106, "MaxNoOfConcurrentTransactions", "Max number of transaction executing"
               " concurrently on the DB node", "unsigned", "4096", "32", "4294967039", 0,
               "used", "4096"),
              (112, "DataMemory", "Number bytes on each DB node allocated for storing"
               " data", "unsigned", "102760448", "1048576", "1099511627776", 0, "used",
               str(int(sc.data_memory_gb * 2**30)))]
    out["ndb$config_params"] = (
        _bcols("config_params"),
        [p[:9] for p in params])
    out["ndb$config_values"] = (_bcols("config_values"),
                                [(n.id, p[0], p[9]) for n in live for p in params])
    return out

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
    rows = []
    for node_id, (st, secs, total) in sorted(sim.restart_rows.items()):
        rows.append((node_id, schema.RESTART_STATUS[st], st,
                     *[secs.get(p, 0) for p in schema.RESTART_PHASES], total))
    return cols, rows

def _nodes(sim: Model) -> tuple[list[str], list[tuple]]:
    rows = []
    for n in sorted(sim.live(), key=lambda n: n.id):
        if n.state == "up":
            rows.append((n.id, int(sim.ctime - n.start_ctime), 3, 0, 1))
        else:
            rows.append((n.id, int(sim.ctime - n.start_ctime), 2,
                         START_PHASE.get(n.restart_status or 0, 1), 1))
    return _bcols("nodes"), rows

def _processes(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    ver = mysql_version(sim.version)
    procs = [(n.id, 0, ver, n.pid, n.pid - 1, "ndbmtd", "ndb://127.0.0.1") for n in live]
    procs += [(mgm, 2, ver, 1000 + mgm, 0, "ndb_mgmd", "ndb://127.0.0.1:1186")
              for mgm in sim.sc.mgm_nodes]
    for i, s in enumerate(sim.sc.sql_nodes):
        procs.append((s, 1, ver, 1500 + s, 0, "mysqld",
                      f"mysql://127.0.0.1:{sim.sql_port + i * 100 if i else sim.sql_port}"))
    return (_bcols("processes"),
            [(rep.id, *p) for rep in live for p in procs])

def _transporter_rows(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    cols = _bcols("transporters")
    rows = [(n.id, r, t.status, "127.0.0.1" if t.status == 0 else "", int(t.sent),
             int(t.received), t.connects, t.overloaded, t.overloads, t.slowdown,
             t.slowdowns, 0) for n in live for r, t in sorted(n.trp.items())]
    return cols, rows

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
        if schema.version_tuple(sim.version) < (7, 6):
            rows.append((n.id, 248, 0, "Index memory", int(used * 0.12),
                         int(total * 0.15), int(used * 0.12), 8192, 0, 0, 0, 0, 3, 2))
    return cols, rows

def _resources(sim: Model, live: list[Node]) -> tuple[list[str], list[tuple]]:
    cols = _bcols("resources")
    total = int(sim.sc.data_memory_gb * 2**30 / PAGE)
    rows = []
    for n in live:
        dm = int(min(total, n.data_pages))
        vals = {0: (0, 0, 0), 1: (2560, 300, 0), 2: (0, 0, 0), 3: (total, dm, total),
                4: (1024, 80, 0), 5: (2048, 300, 0), 6: (1024, 120, 2048),
                7: (1024, 64, 1024), 8: (0, 40, 0), 9: (64, 2, 256)}
        for rid, (res, used, mx) in vals.items():
            rows.append((n.id, rid, res, used, mx, used, 0))
    return cols, rows

def _lcp_tables(sim: Model, live: list[Node]) -> dict[str, tuple[list[str], list[tuple]]]:
    sc = sim.sc
    serving = {n.id for n in sim.serving()}
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
        done = k < done_upto
        lcp_left = 0 if (done or not sim.lcp_running) else len(alive)
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
        tds_rows.append((tid, 0, upd, lcp_st, 1, 1, 2, parts, parts, 0, 0, 0))
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
