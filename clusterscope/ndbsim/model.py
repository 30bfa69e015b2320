"""The simulated cluster: its state, one tick of time, and the rows every `ndb$` table holds.

Two clocks: load (counters, CPU, bytes, REDO) follows the wall clock, so rates look real;
LCPs and restarts follow cluster time, which runs `time_scale` times faster than the wall
clock while a restart with `--time-scale N` is under way (reported seconds stay in cluster
time). No database access here: `store` writes what `tables()` returns.
"""

from __future__ import annotations

import random
import statistics
from collections import deque
from dataclasses import dataclass, field

from ndbinfo_exporter import schema

from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim.scenario import Scenario

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
# cluster-log lines (ndb_mgmd wording) when the restarting node enters a status
PHASE_LOG = {1: ["Start phase 0 completed (node restart)",
                 "Start phase 1 completed (node restart)"],
             3: ["Start phase 2 completed (node restart)"],
             7: ["Start phase 3 completed (node restart)"],
             8: ["Start phase 4 completed (node restart)"],
             10: ["Start phase 5 completed (node restart)"],
             11: [f"Start phase {p} completed (node restart)" for p in (6, 7, 8, 9)]}
LCP_GAP_SECS = 5.0  # cluster seconds between two LCPs
PAGE = 32768
TABLE_ID0 = 10  # ids below are system tables


def _bcols(view: str) -> list[str]:
    return [n for n, _ in schema.view(view).base_table().columns]


def mysql_version(version: str) -> str:
    v = schema.PROFILES.get(version, version)
    major = schema.version_tuple(v)
    mysql = "5.7.22" if major < (8,) else v
    return f"mysql-{mysql} ndb-{v}-sim"


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
    restart_status: int | None = None  # while a restart runs


@dataclass
class RestartRun:
    id: int
    node: int
    profile: str
    initial: bool
    time_scale: float
    steps: list[rs.Step]
    step_start: float
    idx: int = 0
    ticks: int = 0
    done: dict[str, int] = field(default_factory=dict)
    stuck_since: float | None = None

    @property
    def status(self) -> int:
        return self.steps[self.idx].status if self.idx < len(self.steps) else 12

    def planned_total(self) -> int:
        return rs.total({s.column: s.secs for s in self.steps if s.column})


@dataclass
class Faults:
    overload: set[tuple[int, int]] = field(default_factory=set)  # (node, remote); 0 = all
    slowdown: set[tuple[int, int]] = field(default_factory=set)
    lcp_stall: bool = False
    restart_stuck: int | None = None
    null_columns: dict[str, list[str]] = field(default_factory=dict)  # view -> columns
    view_error: set[str] = field(default_factory=set)
    offline: bool = False

    def as_dict(self) -> dict:
        return {"overload": sorted(self.overload), "slowdown": sorted(self.slowdown),
                "lcp_stall": self.lcp_stall, "restart_stuck": self.restart_stuck,
                "null_columns": self.null_columns, "view_error": sorted(self.view_error),
                "offline": self.offline}


class Model:
    def __init__(self, sc: Scenario, version: str, sql_port: int = 3306,
                 seed: int | None = None) -> None:
        self.sc = sc
        self.version = version
        self.sql_port = sql_port
        self.rng = random.Random(seed)
        self.ctime = 0.0
        self.wall_total = 0.0
        self.threads: list[tuple[int, str]] = []
        for kind in ("main", "rep", "ldm", "tc", "recv", "send"):
            for _ in range(sc.threads[kind]):
                self.threads.append((len(self.threads), kind))
        self.nodes: dict[int, Node] = {}
        for n in sc.data_nodes:
            node = Node(n, sc.group_of(n))
            self._fresh_process(node, -self.rng.uniform(2, 4) * 86400)
            self.nodes[n] = node
        self.remotes = [*sc.data_nodes, *sc.mgm_nodes, *sc.sql_nodes, *sc.free_api_slots]
        for node in self.nodes.values():
            self._fresh_transporters(node)
        # fragments: (table_id, fragment_id, group, preferred primary)
        parts = sc.ldm * sc.node_groups
        self.fragments = []
        for t in range(sc.tables):
            for f in range(parts):
                g = f % sc.node_groups
                members = sc.group_nodes(g)
                self.fragments.append((TABLE_ID0 + t, f, g,
                                       members[(f // sc.node_groups) % len(members)]))
        self.lcp_id = self.rng.randint(200, 400)
        self.lcp_running = False
        self.lcp_progress = 0.0
        self.lcp_next_start = 0.0
        self.gci_base = self.rng.randint(100000, 200000)
        self.last_done_lcp: dict[int, int] = {}  # replica node -> id of its last LCP
        self.restarts: dict[int, RestartRun] = {}
        self.restart_rows: dict[int, tuple[int, dict[str, int], int]] = {}
        self.next_restart_id = 1
        self.faults = Faults()
        self.log: list[tuple[str, str]] = []
        self.status_events: list[tuple[int, int, int, float]] = []  # id, node, status, ctime
        self.completed: list[tuple[int, int, int]] = []  # restart id, node, total secs
        self.membership_changed = True
        self.rates: dict[int, dict[str, float]] = {}
        for node in self.nodes.values():
            node.redo_used = sc.redo_log_parts * sc.redo_part_bytes * 0.05

    # -- helpers -----------------------------------------------------------------------
    def _fresh_process(self, node: Node, start_ctime: float) -> None:
        sc = self.sc
        node.start_ctime = start_ctime
        node.pid = self.rng.randint(2000, 60000)
        node.counters = {}
        for i in range(sc.threads["tc"] or 1):
            for cid, block in schema.COUNTER_BLOCK.items():
                if block in ("DBTC", "DBSPJ"):
                    node.counters[(schema.BLOCK_NUMBER[block], i, cid)] = 0.0
        for i in range(sc.ldm):
            for cid, block in schema.COUNTER_BLOCK.items():
                if block == "DBLQH":
                    node.counters[(schema.BLOCK_NUMBER[block], i, cid)] = 0.0
        node.tstat = {t: [0.0] * 15 for t, kind in self.threads if kind != "send"}
        node.cpu = {}
        node.cpu_hist = {t: deque(maxlen=20) for t, _ in self.threads}
        node.slow = [[0.0, 0.0, 0.0] for _ in range(sc.ldm)]
        node.dws.clear()
        node.data_pages = sc.data_gb_per_node * 1e9 / PAGE

    def _fresh_transporters(self, node: Node) -> None:
        node.trp = {r: Trp(status=self._link_status(r)) for r in self.remotes if r != node.id}

    def _link_status(self, remote: int) -> int:
        if remote in self.sc.free_api_slots:
            return 2
        other = self.nodes.get(remote)
        if other is None:
            return 0
        if other.state == "down":
            return 1 if other.restart_status == 14 else 2
        return 0

    def live(self) -> list[Node]:
        """Data nodes whose process runs (they appear in ndbinfo)."""
        return [n for n in self.nodes.values() if n.state != "down"]

    def serving(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.state == "up"]

    def master(self) -> Node | None:
        up = self.serving()
        return min(up, key=lambda n: n.id) if up else None

    def gci(self) -> int:
        return self.gci_base + int(self.ctime / 2)

    def release(self) -> str:
        return schema.PROFILES.get(self.version, self.version)

    def emit(self, node: int, text: str, level: str = "INFO") -> None:
        self.log.append((level, f"Node {node}: {text}"))

    def full_lcp_secs(self) -> float:
        secs = rs.full_lcp_secs(self.sc)
        if schema.version_tuple(self.version) >= (7, 6):
            secs *= self.sc.partial_lcp_fraction
        return secs

    # -- control -----------------------------------------------------------------------
    def start_restart(self, node_id: int, profile: str | None = None, initial: bool = False,
                      time_scale: float = 1.0) -> RestartRun:
        if node_id not in self.nodes:
            raise ValueError(f"node {node_id} is not a data node of this cluster"
                             f" (data nodes: {', '.join(map(str, self.nodes))})")
        if node_id in self.restarts:
            raise ValueError(f"node {node_id} is already restarting"
                             f" (status {self.restarts[node_id].status})")
        node = self.nodes[node_id]
        peers = [n for n in self.nodes.values() if n.group == node.group and n.id != node_id]
        if not any(p.state == "up" for p in peers):
            raise ValueError(f"node {node_id} is the last live node of node group {node.group};"
                             " restarting it would shut the cluster down")
        if time_scale <= 0:
            raise ValueError("--time-scale must be > 0")
        profile = profile or rs.profile_for(self.version)
        remaining = 1.0 - self.lcp_progress if self.lcp_running else 0.0
        steps = rs.plan(self.sc, profile, initial=initial, lcp_remaining=remaining, rng=self.rng)
        run = RestartRun(self.next_restart_id, node_id, profile, initial, time_scale, steps,
                         step_start=self.ctime)
        self.next_restart_id += 1
        self.restarts[node_id] = run
        self.emit(node_id, "Node shutdown initiated")
        self.emit(node_id, "Node shutdown completed, " + ("Initial start" if initial
                                                          else "restarting") + ".")
        self._enter(run)
        return run

    def _enter(self, run: RestartRun) -> None:
        node = self.nodes[run.node]
        st = run.status
        node.restart_status = st
        self.status_events.append((run.id, run.node, st, self.ctime))
        self.restart_rows[run.node] = (st, dict(rs.filled(run.done)), 0)
        master = self.master()
        m = master.id if master else run.node
        if st == 13:
            node.state = "down"
            self.membership_changed = True
            for peer in self.live():
                peer.trp[run.node].status = 2
                self.emit(peer.id, f"Node {run.node} Disconnected", "ALERT")
                self.emit(peer.id, f"Communication to Node {run.node} closed")
            self.emit(m, "Arbitration check won - node group majority", "ALERT")
            for mgm in self.sc.mgm_nodes:
                self.emit(mgm, f"Node {run.node} Disconnected", "ALERT")
        elif st == 14:
            for peer in self.live():
                peer.trp[run.node].status = 1
            self.emit(m, f"All nodes completed failure of Node {run.node}")
        elif st == 0:
            node.state = "starting"
            self.membership_changed = True
            self._fresh_process(node, self.ctime)
            self._fresh_transporters(node)
            for peer in self.live():
                if peer.id != run.node:
                    t = peer.trp[run.node]
                    t.status, t.connects = 0, t.connects + 1
                    t.overloaded = t.slowdown = 0
                    self.emit(peer.id, f"Communication to Node {run.node} opened")
            for mgm in self.sc.mgm_nodes:
                self.emit(mgm, f"Node {run.node} Connected")
            self.emit(run.node, f"Start initiated (version {self.release()})")
        elif st == 7:
            self.emit(m, "Node restart completed copy of dictionary information")
        elif st == 10:
            self.emit(m, f"Node restart completed copying the fragments to Node {run.node}")
        for line in PHASE_LOG.get(st, []):
            self.emit(run.node, line)

    def _finish(self, run: RestartRun) -> None:
        node = self.nodes[run.node]
        node.state = "up"
        node.restart_status = None
        self.membership_changed = True
        secs = rs.filled(run.done)
        total = rs.total(run.done)
        self.restart_rows[run.node] = (12, secs, total)
        self.status_events.append((run.id, run.node, 12, self.ctime))
        self.completed.append((run.id, run.node, total))
        del self.restarts[run.node]
        self.emit(run.node, "Start phase 100 completed (node restart)")
        self.emit(run.node, "Start phase 101 completed (node restart)")
        self.emit(run.node, f"Started (version {self.release()})")

    def _advance_restarts(self) -> None:
        for run in list(self.restarts.values()):
            run.ticks += 1  # the current status has been published once
            step = run.steps[run.idx]
            if self.faults.restart_stuck == step.status:
                if run.stuck_since is None:
                    run.stuck_since = self.ctime
                continue
            secs = step.secs
            if run.stuck_since is not None:
                # the step lasted as long as it was stuck: report that, in cluster seconds
                secs = max(secs, round(self.ctime - run.step_start))
                step.secs = secs
                run.stuck_since = None
            if run.ticks < 1 or self.ctime - run.step_start < secs:
                continue
            if step.column:
                run.done[step.column] = secs
            run.step_start += secs
            run.idx += 1
            run.ticks = 0
            if run.idx >= len(run.steps):
                self._finish(run)
            else:
                prev = step.status
                if run.steps[run.idx].status != prev:
                    self._enter(run)
                else:
                    self.restart_rows[run.node] = (prev, dict(rs.filled(run.done)), 0)

    def scale(self) -> float:
        if self.restarts:
            return max(r.time_scale for r in self.restarts.values())
        return self.sc.time_scale

    # -- one tick ----------------------------------------------------------------------
    def tick(self, wall_dt: float) -> None:
        wall_dt = max(0.0, min(wall_dt, 5.0))
        self.wall_total += wall_dt
        cdt = wall_dt * self.scale()
        self.ctime += cdt
        self._advance_restarts()
        self._lcp(cdt)
        self._load(wall_dt, cdt)

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
                if rst == 8:
                    exec_ = 85  # restore, REDO execution and index rebuild are LDM-bound
                elif rst in (9, 10):
                    exec_ = 25
            elif kind == "tc":
                exec_ = 2 + 90 * util_tc
            elif kind == "recv":
                exec_ = 3 + 40 * util_tc
            elif kind == "send":
                exec_ = 2 + 25 * util_tc
            elif kind == "main":
                exec_ = 95 if rst == 0 else (30 if rst == 6 else 4)  # touch memory, copy dict
            else:
                exec_ = 2
            exec_ = min(100.0, max(0.0, exec_ + rng.gauss(0, 1.0)))
            spin = exec_ * 0.05 if kind in ("ldm", "tc", "recv") else 0.0
            send = exec_ * 0.1 if kind in ("ldm", "tc") else (exec_ * 0.6 if kind == "send" else 0)
            bf = buffer_full if kind in ("ldm", "tc") else 0
            user = min(100.0, exec_ * 0.75 + spin)
            system = min(100.0 - user, exec_ * 0.2 + send * 0.3)
            idle = max(0.0, 100.0 - user - system)
            sleeping = max(0.0, 100.0 - exec_ - spin - send - bf)
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

    # -- rows --------------------------------------------------------------------------
    def tables(self, full: bool = True) -> dict[str, tuple[list[str], list[tuple]]]:
        """Base-table name -> (columns, rows). `full=False`: only what a restart changes."""
        out: dict[str, tuple[list[str], list[tuple]]] = {}
        out["ndb$restart_info"] = self._restart_info()
        out["ndb$nodes"] = self._nodes()
        if not full:
            return out
        self.membership_changed = False
        live = sorted(self.live(), key=lambda n: n.id)
        sc, v = self.sc, self.version
        out["ndb$blocks"] = (["block_number", "block_name"],
                             [(num, name) for name, num in schema.BLOCK_NUMBER.items()])
        out["ndb$processes"] = self._processes(live)
        out["ndb$config_nodes"] = (
            ["reporting_node_id", "node_id", "node_type", "node_hostname"],
            [(rep.id, n, self._node_type(n), "" if n in sc.free_api_slots else "127.0.0.1")
             for rep in live for n in self.remotes])
        out["ndb$threads"] = (["node_id", "thr_no", "thread_name", "thread_description"],
                              [(n.id, t, k, THREAD_DESC[k]) for n in live
                               for t, k in self.threads])
        out["ndb$threadstat"] = (
            ["node_id", "thr_no", "thr_nm", "c_loop", "c_exec", "c_wait", "c_l_sent_prioa",
             "c_l_sent_priob", "c_r_sent_prioa", "c_r_sent_priob", "os_tid", "os_now",
             "os_ru_utime", "os_ru_stime", "os_ru_minflt", "os_ru_majflt", "os_ru_nvcsw",
             "os_ru_nivcsw"],
            [(n.id, t, k, *[int(x) for x in n.tstat[t][:7]], n.pid + t,
              int((self.wall_total + 1.7e9) * 1000), *[int(x) for x in n.tstat[t][9:]])
             for n in live for t, k in self.threads if k != "send"])
        out["ndb$cpustat"] = (
            ["node_id", "thr_no", "OS_user", "OS_system", "OS_idle", "thread_exec",
             "thread_sleeping", "thread_spinning", "thread_send", "thread_buffer_full",
             "elapsed_time"],
            [(n.id, t, *n.cpu[t], n.cpu_hist[t][0][-1]) for n in live for t, _ in self.threads
             if t in n.cpu])
        out["ndb$cpustat_1sec"] = (
            ["node_id", "thr_no", "OS_user_time", "OS_system_time", "OS_idle_time",
             "exec_time", "sleep_time", "spin_time", "send_time", "buffer_full_time",
             "elapsed_time"],
            [(n.id, t, *h[:3], h[3], h[4], h[5], h[6], h[7], h[8]) for n in live
             for t, _ in self.threads for h in self._hist20(n.cpu_hist[t])])
        out["ndb$transporters"] = self._transporter_rows(live)
        if schema.version_tuple(v) >= (8, 0, 37):
            out["ndb$transporter_details"] = self._transporter_details(live)
        out["ndb$pools"] = self._pools(live)
        redo_parts = sc.redo_log_parts
        out["ndb$logspaces"] = (
            ["node_id", "log_type", "log_id", "log_part", "total", "used", "high"],
            [(n.id, 0, 0, p, sc.redo_part_bytes,
              int(min(sc.redo_part_bytes, n.redo_used / redo_parts * (1 + 0.02 * (p - 1)))),
              int(min(sc.redo_part_bytes, n.redo_high / redo_parts)))
             for n in live for p in range(redo_parts)])
        out["ndb$logbuffers"] = (
            ["node_id", "log_type", "log_id", "log_part", "total", "used", "high"],
            [(n.id, 0, 0, p, sc.redo_buffer_bytes // redo_parts,
              int(n.dws[-1][1] * 0.01) if n.dws else 0, sc.redo_buffer_bytes // redo_parts // 4)
             for n in live for p in range(redo_parts)])
        out["ndb$counters"] = (
            ["node_id", "block_number", "block_instance", "counter_id", "val"],
            [(n.id, b, i, cid, int(val)) for n in live
             for (b, i, cid), val in sorted(n.counters.items())])
        out["ndb$resources"] = self._resources(live)
        out.update(self._lcp_tables(live))
        out.update(self._disk_write_speed(live))
        params = [(101, "NoOfReplicas", "Number of copies of all data in the database",
                   "unsigned", "2", "1", "4", 0, "used", str(sc.replicas)),
                  (106, "MaxNoOfConcurrentTransactions", "Max number of transaction executing"
                   " concurrently on the DB node", "unsigned", "4096", "32", "4294967039", 0,
                   "used", "4096"),
                  (112, "DataMemory", "Number bytes on each DB node allocated for storing"
                   " data", "unsigned", "102760448", "1048576", "1099511627776", 0, "used",
                   str(int(sc.data_memory_gb * 2**30)))]
        out["ndb$config_params"] = (
            ["param_number", "param_name", "param_description", "param_type", "param_default",
             "param_min", "param_max", "param_mandatory", "param_status"],
            [p[:9] for p in params])
        out["ndb$config_values"] = (["node_id", "config_param", "config_value"],
                                    [(n.id, p[0], p[9]) for n in live for p in params])
        return out

    @staticmethod
    def _hist20(hist: deque) -> list[tuple]:
        rows = list(hist)
        if not rows:
            return []
        return rows + [rows[-1]] * (20 - len(rows))  # always 20 rows per thread

    def _node_type(self, n: int) -> int:
        if n in self.nodes:
            return 0
        return 2 if n in self.sc.mgm_nodes else 1

    def _restart_info(self) -> tuple[list[str], list[tuple]]:
        cols = [c.name for c in schema.view("restart_info").columns]
        rows = []
        for node_id, (st, secs, total) in sorted(self.restart_rows.items()):
            rows.append((node_id, schema.RESTART_STATUS[st], st,
                         *[secs.get(p, 0) for p in schema.RESTART_PHASES], total))
        return cols, rows

    def _nodes(self) -> tuple[list[str], list[tuple]]:
        rows = []
        for n in sorted(self.live(), key=lambda n: n.id):
            if n.state == "up":
                rows.append((n.id, int(self.ctime - n.start_ctime), 3, 0, 1))
            else:
                rows.append((n.id, int(self.ctime - n.start_ctime), 2,
                             START_PHASE.get(n.restart_status or 0, 1), 1))
        return ["node_id", "uptime", "status", "start_phase", "config_generation"], rows

    def _processes(self, live: list[Node]) -> tuple[list[str], list[tuple]]:
        ver = mysql_version(self.version)
        procs = [(n.id, 0, ver, n.pid, n.pid - 1, "ndbmtd", "ndb://127.0.0.1") for n in live]
        procs += [(m, 2, ver, 1000 + m, 0, "ndb_mgmd", "ndb://127.0.0.1:1186")
                  for m in self.sc.mgm_nodes]
        for i, s in enumerate(self.sc.sql_nodes):
            procs.append((s, 1, ver, 1500 + s, 0, "mysqld",
                          f"mysql://127.0.0.1:{self.sql_port + i * 100 if i else self.sql_port}"))
        return (["reporting_node_id", "node_id", "node_type", "node_version", "process_id",
                 "angel_process_id", "process_name", "service_URI"],
                [(rep.id, *p) for rep in live for p in procs])

    def _transporter_rows(self, live: list[Node]) -> tuple[list[str], list[tuple]]:
        cols = ["node_id", "remote_node_id", "connection_status", "remote_address",
                "bytes_sent", "bytes_received", "connect_count", "overloaded",
                "overload_count", "slowdown", "slowdown_count", "encrypted"]
        rows = [(n.id, r, t.status, "127.0.0.1" if t.status == 0 else "", int(t.sent),
                 int(t.received), t.connects, t.overloaded, t.overloads, t.slowdown,
                 t.slowdowns, 0) for n in live for r, t in sorted(n.trp.items())]
        return cols, rows

    def _transporter_details(self, live: list[Node]) -> tuple[list[str], list[tuple]]:
        cols = _bcols("transporter_details")
        rows = []
        recv = max(1, self.sc.threads["recv"])
        for n in live:
            trp_id = 0
            for r, t in sorted(n.trp.items()):
                k = 2 if r in self.nodes and self.nodes[r].group == n.group else 1
                for _ in range(k):
                    trp_id += 1
                    used = self.rng.randint(0, 65536) if t.status == 0 else 0
                    rows.append((n.id, trp_id % recv, trp_id, r, t.status,
                                 "127.0.0.1" if t.status == 0 else "", int(t.sent / k),
                                 int(t.received / k), t.connects, t.overloaded, t.overloads,
                                 t.slowdown, t.slowdowns, 0, used, 2 * 1048576, 2097152,
                                 4194304, 1, 1500,
                                 self.rng.randint(100, 20000) if t.status == 0 else None))
        return cols, rows

    def _pools(self, live: list[Node]) -> tuple[list[str], list[tuple]]:
        cols = _bcols("memoryusage")
        total = int(self.sc.data_memory_gb * 2**30 / PAGE)
        rows = []
        for n in live:
            used = int(min(total, n.data_pages))
            rows.append((n.id, 254, 0, "Data memory", used, total, used, PAGE, 0, 0, 0, 0, 3, 1))
            lmb = self.rng.randint(100, 600)
            rows.append((n.id, 254, 0, "Long message buffer", lmb, 16384, 2000, 256,
                         0, 0, 0, 0, 6, 1))
            if schema.version_tuple(self.version) < (7, 6):
                rows.append((n.id, 248, 0, "Index memory", int(used * 0.12),
                             int(total * 0.15), int(used * 0.12), 8192, 0, 0, 0, 0, 3, 2))
        return cols, rows

    def _resources(self, live: list[Node]) -> tuple[list[str], list[tuple]]:
        cols = ["node_id", "resource_id", "reserved", "used", "max", "high", "spare"]
        total = int(self.sc.data_memory_gb * 2**30 / PAGE)
        rows = []
        for n in live:
            dm = int(min(total, n.data_pages))
            vals = {0: (0, 0, 0), 1: (2560, 300, 0), 2: (0, 0, 0), 3: (total, dm, total),
                    4: (1024, 80, 0), 5: (2048, 300, 0), 6: (1024, 120, 2048),
                    7: (1024, 64, 1024), 8: (0, 40, 0), 9: (64, 2, 256)}
            for rid, (res, used, mx) in vals.items():
                rows.append((n.id, rid, res, used, mx, used, 0))
        return cols, rows

    def _lcp_tables(self, live: list[Node]) -> dict[str, tuple[list[str], list[tuple]]]:
        sc = self.sc
        serving = {n.id for n in self.serving()}
        nfrag = len(self.fragments)
        done_upto = int(self.lcp_progress * nfrag) if self.lcp_running else nfrag
        g = self.gci()
        frag_rows, rep_rows, tds_rows = [], [], []
        frags_done: dict[int, tuple[int, int]] = {}
        for k, (tid, f, grp, pref) in enumerate(self.fragments):
            members = sc.group_nodes(grp)
            alive = [m for m in members if m in serving]
            primary = pref if pref in alive else (alive[0] if alive else 0)
            backups = [m for m in alive if m != primary] + [0, 0, 0]
            done = k < done_upto
            lcp_left = 0 if (done or not self.lcp_running) else len(alive)
            frag_rows.append((tid, f, f, f // sc.node_groups, f % sc.redo_log_parts,
                              sc.replicas, primary, pref, backups[0], backups[1], backups[2],
                              len(alive), sc.replicas - len(alive), lcp_left))
            d, total_t = frags_done.get(tid, (0, 0))
            frags_done[tid] = (d + int(done), total_t + 1)
            for m in members:
                is_alive = m in serving
                last = self.last_done_lcp.get(m, self.lcp_id - (1 if self.lcp_running else 0))
                if done and self.lcp_running and is_alive:
                    last = self.lcp_id
                ongoing = int(self.lcp_running and is_alive and not done)
                rep_rows.append((tid, f, 1, m, ongoing, int(not is_alive), g - 2, g - 3, last,
                                 max(0, last - 1), g - 200, g - 201, 1, g if is_alive else 0,
                                 int(is_alive)))
        for tid, (d, tot) in sorted(frags_done.items()):
            if not self.lcp_running or d == tot:
                lcp_st, upd = 3, 0
            elif d == 0:
                lcp_st, upd = 1, 2
            else:
                lcp_st, upd = 2, 1
            parts = sc.ldm * sc.node_groups
            tds_rows.append((tid, 0, upd, lcp_st, 1, 1, 2, parts, parts, 0, 0, 0))
        tf_cols = [c.name for c in schema.view("table_fragments").columns]
        tr_cols = [c.name for c in schema.view("table_replicas").columns]
        tds_cols = _bcols("table_distribution_status")
        out = {}
        m = self.master()
        for base, cols, rows in (("ndb$table_fragments", tf_cols, frag_rows),
                                 ("ndb$table_replicas", tr_cols, rep_rows),
                                 ("ndb$table_distribution_status", tds_cols, tds_rows)):
            # the plain tables show the master's copy, the `_all` ones every live node's
            out[base] = (cols, [(m.id, *r) for r in rows] if m else [])
            out[base + "_all"] = (cols, [(n.id, *r) for n in live for r in rows])
        return out

    def _disk_write_speed(self, live: list[Node]) -> dict[str, tuple[list[str], list[tuple]]]:
        sc = self.sc
        agg_cols = _bcols("disk_write_speed_aggregate")
        base_cols = [c.name for c in schema.view("disk_write_speed_base").columns]
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
                tgt = target if not self.faults.lcp_stall else target // 10
                agg.append((n.id, i, last_l, last_r, l10, r10, sl10, sr10, l60, r60, sl60, sr60,
                            int(s[0]), int(s[1]), int(s[2]), tgt))
                for j, h in enumerate(hist[:61]):
                    base.append((n.id, i, j * 1000, 1000, int(h[0] * share), int(h[1] * share),
                                 tgt))
        return {"ndb$disk_write_speed_aggregate": (agg_cols, agg),
                "ndb$disk_write_speed_base": (base_cols, base)}

    # -- status for `lab ndb status` --------------------------------------------------
    def status(self) -> dict:
        return {
            "version": self.version, "scenario": self.sc.name, "cluster_secs": round(self.ctime, 1),
            "time_scale": self.scale(),
            "nodes": {str(n.id): {"state": n.state, "group": n.group,
                                  "uptime": int(self.ctime - n.start_ctime),
                                  "restart_status": n.restart_status,
                                  "redo_used_ratio": round(n.redo_used / (
                                      self.sc.redo_log_parts * self.sc.redo_part_bytes), 4)}
                      for n in self.nodes.values()},
            "lcp": {"id": self.lcp_id, "running": self.lcp_running,
                    "progress": round(self.lcp_progress, 4),
                    "full_lcp_secs": round(self.full_lcp_secs(), 1)},
            "restarts": [{"id": r.id, "node": r.node, "profile": r.profile,
                          "status": r.status, "time_scale": r.time_scale,
                          "planned_total_secs": r.planned_total()}
                         for r in self.restarts.values()],
            "faults": self.faults.as_dict(),
        }
