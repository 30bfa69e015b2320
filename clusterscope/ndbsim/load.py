"""What one tick of load does to the simulated cluster: LCPs, REDO, the counters, CPU per
thread, transporter bytes, and the workload the TCs, LDMs and PGMAN see (`workload` keeps
those). Load follows the wall clock, LCPs cluster time.

A mixin of `model.Model`; everything here is SIMULATED.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ndbinfo_exporter import schema

from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim.contention import Replica
from clusterscope.ndbsim.restart import (
    ALLOCATED_NODE_ID,
    COPY_DICT,
    COPY_FRAGMENTS_STARTED,
    LOCAL_RECOVERY,
    WAIT_LCP,
)
from clusterscope.ndbsim.workload import PAGE, Workload

if TYPE_CHECKING:
    from clusterscope.ndbsim.cluster_state import Faults, Node
    from clusterscope.ndbsim.scenario import Scenario

LCP_GAP_SECS = 5.0  # cluster seconds between two LCPs


class Load:
    """The per-tick load (methods of `Model`, whose __init__ sets the state below)."""

    sc: Scenario
    version: str
    rng: random.Random
    work: Workload
    ctime: float
    wall_total: float
    threads: list[tuple[int, str]]
    nodes: dict[int, Node]
    fragments: list[tuple[int, int, int, int]]
    faults: Faults
    lcp_id: int
    lcp_running: bool
    lcp_progress: float
    lcp_next_start: float
    last_done_lcp: dict[int, int]

    def full_lcp_secs(self) -> float:
        secs = rs.full_lcp_secs(self.sc)
        if schema.version_tuple(self.version) >= (7, 6):
            secs *= self.sc.partial_lcp_fraction
        return secs

    def _lcp(self, cdt: float) -> None:
        m = self.master()
        if m is None:
            return
        if not self.lcp_running:
            if self.ctime >= self.lcp_next_start:
                self.lcp_running, self.lcp_progress = True, 0.0
                self.lcp_id += 1
                g = self.gci()
                self.emit(m.id, f"Local checkpoint {self.lcp_id} started. Keep GCI = {g - 40}"
                                f" oldest restorable GCI = {g - 38}")
                for n in self.serving():
                    n.redo_since_lcp_start = 0.0
            return
        if not self.faults.lcp_stall:
            self.lcp_progress += cdt / self.full_lcp_secs()
        if self.lcp_progress >= 1.0:
            self.lcp_running = False
            self.lcp_next_start = self.ctime + LCP_GAP_SECS
            self.emit(m.id, f"Local checkpoint {self.lcp_id} completed")
            for n in self.serving():
                self.last_done_lcp[n.id] = self.lcp_id
                n.redo_used = n.redo_since_lcp_start  # REDO before the LCP's start is freed

    def _load(self, dt: float, cdt: float) -> None:
        sc, rng = self.sc, self.rng
        serving = self.serving()
        if dt <= 0:
            return
        ops = sc.ops_per_sec * dt * rng.uniform(0.93, 1.07)
        reads = ops * sc.read_ratio
        writes = ops - reads
        redo_total = sc.redo_log_parts * sc.redo_part_bytes
        full = any(n.redo_used >= 0.995 * redo_total for n in serving)
        aborted = 0.0
        if full:  # REDO full: NDB rejects writes (error 410) until an LCP frees space
            aborted, writes = writes, 0.0
        n_up = max(1, len(serving))
        lcp_rate = 0.0
        if self.lcp_running and not self.faults.lcp_stall:
            lcp_rate = sc.disk_write_speed_per_ldm * sc.ldm
            if schema.version_tuple(self.version) >= (7, 6):
                lcp_rate *= 1.0  # partial LCPs write less data, at the same speed
        for node in self.nodes.values():
            if node.state == "down":
                continue
            up = node.state == "up"
            r_node = reads / n_up if up else 0.0
            w_node = writes / sc.node_groups if up else 0.0
            tx_node = (reads + writes) / sc.ops_per_transaction / n_up if up else 0.0
            ab_node = aborted / sc.ops_per_transaction / n_up if up else 0.0
            redo_b = w_node * sc.row_bytes * 1.3
            node.redo_used = min(redo_total, node.redo_used + redo_b)
            node.redo_since_lcp_start += redo_b
            node.redo_high = max(node.redo_high, node.redo_used)
            node.data_pages += w_node * 0.05 * sc.row_bytes / PAGE
            self._counters(node, r_node, w_node, tx_node, ab_node)
            lcp_b = lcp_rate * rng.uniform(0.9, 1.1) if up and lcp_rate else 0.0
            node.dws.append((lcp_b, redo_b / dt))
            self._cpu(node, dt, (r_node + w_node) / dt, tx_node * sc.ops_per_transaction / dt)
            for i, s in enumerate(node.slow):
                if self.faults.lcp_stall and up:
                    s[0] += dt
                if node.cpu.get(self._ldm_thr(i), (0,) * 4)[3] > 90:
                    s[1] += dt
            self._transporters(node, dt, r_node, w_node, tx_node)
            if up:
                self._workload(node, r_node, w_node, tx_node, ab_node, dt)
        self._snapshot((reads + writes) / dt, serving)

    def _workload(self, node: Node, r: float, w: float, tx: float, ab: float,
                  dt: float) -> None:
        """What this tick's operations leave in the TC and PGMAN histograms, the disk page
        buffer and the lock counters. Who records what (Dbtc::time_track_complete_*,
        DbtcMain.cpp in AKJUS/mysql-server @1334cddbebd0): transactions and scans on the
        requesting API node, key operations on the API node and on the data node of the
        operation's primary replica (tcNodedata[0]), fragment scans on the data node that
        ran them."""
        sc, wk = self.sc, self.work
        tcs = max(1, sc.threads["tc"])
        apis = sc.sql_nodes or [0]
        share = 1.0 / (tcs * len(apis))
        serving = {n.id for n in self.serving()}
        primaries = self._primary_shares(serving)
        dbs = sorted(primaries) or [node.id]
        scans = tx * 0.06
        per_api = {"transactions": tx, "transaction_errors": ab, "scans": scans,
                   "scan_errors": scans * 0.001}
        keys = {"read_key_ops": r, "write_key_ops": w, "index_key_ops": r * 0.05,
                "key_op_errors": r * 0.001}
        frags = {"scan_fragments": scans * sc.ldm * sc.node_groups,
                 "scan_fragment_errors": scans * 0.001}
        for tc in range(1, tcs + 1):
            for api in apis:
                for activity, n in (*per_api.items(), *keys.items()):
                    wk.record_tc(node.id, tc, api, activity, n * share)
            for db in dbs:
                p = primaries.get(db, 1.0 / len(dbs)) / tcs
                for activity, n in keys.items():
                    wk.record_tc(node.id, tc, db, activity, n * p)
                for activity, n in frags.items():
                    wk.record_tc(node.id, tc, db, activity, n / (tcs * len(dbs)))
        self._disk_pages(node, r, w)
        self._locks(node, r, w, dt, serving)

    def _disk_pages(self, node: Node, r: float, w: float) -> None:
        """The disk page buffer: one PGMAN per LDM plus one more (manual, ndbinfo diskstat),
        the buffer split evenly between them (Pgman::execREAD_CONFIG_REQ: page_buffer /
        (getLqhWorkers() + 1), storage/ndb/src/kernel/blocks/pgman.cpp in
        logicalclocks/rondb @0a07ff7f6184); an LDM's PGMAN serves its share of the working
        set, the extra one (numbered last here, not confirmed) extent pages and little
        else. Hits follow the buffer against the working set, never a set ratio."""
        sc = self.sc
        disk_ops = (r + w) * sc.disk_data_share
        buffer_per = sc.disk_page_buffer_mb / (sc.ldm + 1)
        resident = buffer_per / max(1e-9, sc.disk_data_working_set_mb / sc.ldm)
        for inst in range(1, sc.ldm + 2):
            ldm_inst = inst <= sc.ldm
            part = disk_ops / sc.ldm if ldm_inst else disk_ops * 0.001
            written = w * sc.disk_data_share / sc.ldm * 0.5 if ldm_inst else 0.0
            lcp = written * 0.3 if self.lcp_running else 0.0
            self.work.page_requests(node.id, inst, part, resident if ldm_inst else 1.0,
                                    written, lcp, self.lcp_running)

    def _locks(self, node: Node, r: float, w: float, dt: float, serving: set[int]) -> None:
        """Lock requests on the fragment replicas this node stores: its writes lock each
        row here, its locked reads where it is the primary (contention.py)."""
        sc, wk = self.sc, self.work
        replicas = [Replica(tid, f, f % sc.ldm + 1,
                            self._primary(grp, pref, serving) == node.id)
                    for tid, f, grp, pref in self.fragments
                    if node.id in sc.group_nodes(grp)]
        stats = wk.node(node.id).frag_locks
        wk.contention.count(stats, node.id, replicas, wk.table_weights, dt, w, r,
                            self.faults.lock_contention)
        long_node = self.faults.long_transaction
        if long_node is not None and self.fragments:
            tid, f, grp, pref = self.fragments[0]
            if self._primary(grp, pref, serving) == node.id and long_node in serving:
                wk.contention.count_long_tx_waits(
                    stats, Replica(tid, f, f % sc.ldm + 1, True), dt, waiters=2)

    def _primary(self, group: int, preferred: int, serving: set[int]) -> int:
        """A fragment's primary replica: the preferred one while it serves, else the first
        serving node of its group (0: none)."""
        if preferred in serving:
            return preferred
        return next((x for x in self.sc.group_nodes(group) if x in serving), 0)

    def _primary_shares(self, serving: set[int]) -> dict[int, float]:
        """Each serving node's share of the fragments' primary replicas."""
        out: dict[int, float] = {}
        for _, _, grp, pref in self.fragments:
            p = self._primary(grp, pref, serving)
            if p:
                out[p] = out.get(p, 0.0) + 1.0
        total = sum(out.values())
        return {k: v / total for k, v in out.items()} if total else {}

    def _snapshot(self, ops_per_sec: float, serving: list[Node]) -> None:
        """The TC records open right now and their locks (rows.tables renders them); each
        fragment's live replicas with the primary first (where locked reads run)."""
        sc = self.sc
        tps = {n.id: ops_per_sec / sc.ops_per_transaction / max(1, len(serving)) for n in serving}
        live = {n.id for n in serving}
        frags = []
        for tid, f, grp, pref in self.fragments[:64]:
            p = self._primary(grp, pref, live)
            reps = [x for x in sc.group_nodes(grp) if x in live and x != p]
            if p:
                frags.append((tid, f, [p, *reps]))
        self.work.contention.snapshot(self.wall_total, tps, max(1, sc.threads["tc"]),
                                      sc.sql_nodes or [0], frags, sc.ldm,
                                      self.faults.long_transaction)

    def _ldm_thr(self, i: int) -> int:
        return [t for t, k in self.threads if k == "ldm"][i]

    def _counters(self, node: Node, r: float, w: float, tx: float, ab: float) -> None:
        sc = self.sc
        tcs, ldms = sc.threads["tc"] or 1, sc.ldm
        c = node.counters
        tc_b, lqh_b, spj_b = (schema.BLOCK_NUMBER[b] for b in ("DBTC", "DBLQH", "DBSPJ"))
        per = {1: (r + w) * 3, 2: tx, 3: tx - ab, 4: r, 5: r * 0.3, 6: w, 7: ab,
               8: tx * 0.01, 9: tx * 0.05, 24: r * 0.5, 25: w * 0.5}
        spj = {11: r * 0.01, 12: r * 0.008, 13: r * 0.002, 14: r * 0.001, 15: tx * 0.01,
               16: tx * 0.008, 17: tx * 0.05, 18: tx * 0.04, 19: tx * 0.01, 20: tx * 0.06,
               21: tx * 5, 22: tx * 0.02, 23: tx * 0.005}
        for i in range(tcs):
            for cid, v in per.items():
                c[(tc_b, i, cid)] += max(0.0, v) / tcs
            for cid, v in spj.items():
                c[(spj_b, i, cid)] += v / tcs
        overloaded = any(k[0] in (node.id, 0) for k in self.faults.overload)
        slowed = any(k[0] in (node.id, 0) for k in self.faults.slowdown)
        for i in range(ldms):
            c[(lqh_b, i, 10)] += (r + w) / ldms
            if overloaded:
                c[(lqh_b, i, 26)] += tx * 0.02 / ldms
                c[(lqh_b, i, 27)] += tx * 0.01 / ldms
                c[(lqh_b, i, 29)] += tx * 0.01 / ldms
            if slowed:
                c[(lqh_b, i, 31)] += tx * 0.01 / ldms

    def _cpu(self, node: Node, dt: float, ops_rate: float, tc_rate: float) -> None:
        sc, rng = self.sc, self.rng
        util_ldm = ops_rate / sc.ldm / sc.ldm_ops_capacity
        util_tc = tc_rate / max(1, sc.threads["tc"]) / sc.tc_ops_capacity
        rst = node.restart_status
        buffer_full = 5 if any(k[0] in (node.id, 0) for k in self.faults.overload) else 0
        for thr, kind in self.threads:
            if kind == "ldm":
                exec_ = 3 + 90 * util_ldm
                if rst in LOCAL_RECOVERY:
                    exec_ = 85  # restore, REDO execution and index rebuild are LDM-bound
                elif rst in (COPY_FRAGMENTS_STARTED, WAIT_LCP):
                    exec_ = 25
            elif kind == "tc":
                exec_ = 2 + 90 * util_tc
            elif kind == "recv":
                exec_ = 3 + 40 * util_tc
            elif kind == "send":
                exec_ = 2 + 25 * util_tc
            elif kind == "main":
                # touching memory, copying the dictionary
                exec_ = 95 if rst == ALLOCATED_NODE_ID else (30 if rst == COPY_DICT else 4)
            else:
                exec_ = 2
            exec_ = min(100.0, max(0.0, exec_ + rng.gauss(0, 1.0)))
            spin = exec_ * 0.05 if kind in ("ldm", "tc", "recv") else 0.0
            bf = buffer_full if kind in ("ldm", "tc") else 0
            if kind == "send":
                # a send thread's row repeats its exec share as thread_send and has no
                # buffer_full (mysql/mysql-server storage/ndb/src/kernel/blocks/thrman.cpp,
                # CPUSTAT rows of the send threads)
                send, busy = exec_, exec_
            else:
                send = exec_ * 0.1 if kind in ("ldm", "tc") else 0.0
                busy = exec_ + send + bf
            # OS user time includes spinning (thrman.cpp: thread_exec excludes spin, OS_user
            # does not)
            user = min(100.0, busy * 0.75 + spin)
            system = min(100.0 - user, busy * 0.25)
            idle = max(0.0, 100.0 - user - system)
            sleeping = max(0.0, 100.0 - busy - spin)
            elapsed = int(1_000_000 + rng.uniform(-300, 300))
            pct = (round(user), round(system), round(idle), round(exec_), round(sleeping),
                   round(spin), round(send), bf)
            node.cpu[thr] = pct
            node.cpu_hist[thr].appendleft(tuple(int(p * elapsed / 100) for p in pct)
                                          + (elapsed,))
            ts = node.tstat.get(thr)
            if ts is not None:
                sig = exec_ * dt * 4000
                ts[0] += dt * 20000 * (1 + exec_ / 50)  # c_loop
                ts[1] += sig  # c_exec
                ts[2] += dt * sleeping * 50  # c_wait
                ts[3] += sig * 0.02
                ts[4] += sig * 0.6
                ts[5] += sig * 0.01
                ts[6] += sig * 0.2
                ts[9] += dt * 1e6 * user / 100  # os_ru_utime (microseconds)
                ts[10] += dt * 1e6 * system / 100
                ts[11] += dt * 3
                ts[13] += dt * sleeping * 10
                ts[14] += dt * exec_ * 0.5

    def _transporters(self, node: Node, dt: float, r: float, w: float, tx: float) -> None:
        sc = self.sc
        n_sql = max(1, len(sc.sql_nodes))
        for remote, t in node.trp.items():
            t.status = self._link_status(remote)
            key_hit = {(node.id, remote), (node.id, 0), (0, 0)}
            ov = int(bool(key_hit & self.faults.overload)) if t.status == 0 else 0
            sd = int(bool(key_hit & self.faults.slowdown)) if t.status == 0 else 0
            t.overloads += int(ov and not t.overloaded)
            t.slowdowns += int(sd and not t.slowdown)
            t.overloaded, t.slowdown = ov, sd
            if t.status != 0:
                continue
            if remote in self.nodes:
                same = self.nodes[remote].group == node.group
                vol = w * sc.row_bytes * 1.2 if same else tx * 20
                t.sent += vol + 120 * dt
                t.received += vol * 0.98 + 120 * dt
            elif remote in sc.sql_nodes:
                t.sent += (r * sc.row_bytes + tx * 60) / n_sql
                t.received += (r + w) * 70 / n_sql + w * sc.row_bytes / n_sql
            else:
                t.sent += 200 * dt
                t.received += 150 * dt

