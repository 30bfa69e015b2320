"""The simulated cluster: its state and one tick of time (`rows` renders it as `ndb$` rows).

Two clocks: load (counters, CPU, bytes, REDO) follows the wall clock, so rates look real;
LCPs and restarts follow cluster time, which runs `time_scale` times faster than the wall
clock while a restart with `--time-scale N` is under way (reported seconds stay in cluster
time). No database access here: `store` writes what `tables()` returns.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from ndbinfo_exporter import schema

from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim.cluster_config import Config
from clusterscope.ndbsim.scenario import Scenario
from clusterscope.ndbsim.workload import PAGE, TABLE_ID0, Workload

# cluster-log lines (ndb_mgmd wording) when the restarting node enters a status
PHASE_LOG = {5: ["Start phase 0 completed (node restart)",
                 "Start phase 1 completed (node restart)"],
             7: ["Start phase 2 completed (node restart)"],
             11: ["Start phase 3 completed (node restart)"],
             12: ["Start phase 4 completed (node restart)"],
             17: ["Start phase 5 completed (node restart)"],
             18: [f"Start phase {p} completed (node restart)" for p in (6, 7, 8, 9)]}
NODE_FAILED, NODE_FAILURE_COMPLETED, ALLOCATED_NODE_ID = 2, 3, 4
COPY_DICT, INCLUDE_NODE, LOCAL_RECOVERY = 10, 11, (12, 13, 14, 15)
COPY_FRAGMENTS, WAIT_LCP, WAIT_SUMA_HANDOVER = 16, 17, 18
LCP_GAP_SECS = 5.0  # cluster seconds between two LCPs


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
class RestartRun:
    id: int
    node: int
    profile: str
    initial: bool
    time_scale: float
    steps: list[rs.Step]
    step_start: float
    master: int  # the DIH master that reports this restart (restart_info comes from it)
    idx: int = 0
    ticks: int = 0
    done: dict[str, float] = field(default_factory=dict)  # phase -> raw cluster seconds
    stuck_since: float | None = None
    stopped: bool = False  # `stop-node`: held after failure handling until `start-node`

    @property
    def status(self) -> int:
        return self.steps[self.idx].status if self.idx < len(self.steps) else \
            rs.RESTART_COMPLETED

    def planned_total(self) -> int:
        return rs.planned_total(self.steps)


@dataclass
class RestartRow:
    """What the master keeps about a node's last restart (restart_info's row)."""

    status: int
    done: dict[str, float]
    master: int  # the master that saw the restart as master


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

    def as_dict(self) -> dict:
        return {"overload": sorted(self.overload), "slowdown": sorted(self.slowdown),
                "lcp_stall": self.lcp_stall, "restart_stuck": self.restart_stuck,
                "null_columns": self.null_columns, "view_error": sorted(self.view_error),
                "offline": self.offline, "arbitrator_lost": self.arbitrator_lost,
                "long_transaction": self.long_transaction}


class Model:
    def __init__(self, sc: Scenario, version: str, sql_port: int = 3306,
                 seed: int | None = None) -> None:
        self.sc = sc
        self.version = version
        self.sql_port = sql_port
        self.rng = random.Random(seed)
        self.work = Workload(self.rng, sc.tables)
        # (wall time, rows) of the histogram tables, rebuilt every few seconds (rows.py)
        self.histogram_rows: tuple[float, dict] | None = None
        self.ctime = 0.0
        self.wall_total = 0.0
        self.threads: list[tuple[int, str]] = []
        for kind in ("main", "rep", "ldm", "tc", "recv", "send"):
            for _ in range(sc.threads[kind]):
                self.threads.append((len(self.threads), kind))
        self.nodes: dict[int, Node] = {}
        for n in sc.data_nodes:
            node = Node(n, sc.group_of(n))
            # started together, lowest id first: node 1 is the oldest, so the DIH master
            self._fresh_process(node, -3 * 86400 - (len(sc.data_nodes) - n))
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
        self.restart_rows: dict[int, RestartRow] = {}
        self.next_restart_id = 1
        self.faults = Faults()
        self.log: list[tuple[str, str]] = []
        self.status_events: list[tuple[int, int, int, float]] = []  # id, node, status, ctime
        self.completed: list[tuple[int, int, int]] = []  # restart id, node, total secs
        self.membership_changed = True
        self.cluster_down = False  # stop_all(): every data node down, SQL nodes disconnected
        self.rates: dict[int, dict[str, float]] = {}
        for node in self.nodes.values():
            node.redo_used = sc.redo_log_parts * sc.redo_part_bytes * 0.05
        self.config = Config.initial(sc.data_nodes, {
            "NoOfReplicas": str(sc.replicas),
            "DataMemory": str(int(sc.data_memory_gb * 2**30))})

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
        self.work.reset(node.id)

    def _fresh_transporters(self, node: Node) -> None:
        node.trp = {r: Trp(status=self._link_status(r)) for r in self.remotes if r != node.id}

    def _link_status(self, remote: int) -> int:
        if remote in self.sc.free_api_slots:
            return 2
        other = self.nodes.get(remote)
        if other is None:
            return 0
        if other.state == "down":
            # failure handling done: the transporter waits for the node to come back
            return 1 if other.restart_status == NODE_FAILURE_COMPLETED else 2
        return 0

    def live(self) -> list[Node]:
        """Data nodes whose process runs (its peers are connected to it)."""
        return [n for n in self.nodes.values() if n.state != "down"]

    def visible(self) -> list[Node]:
        """Data nodes whose own rows an SQL node reads in ndbinfo: started ones, and a
        restarting one only once it passed start phase 9.

        An ndbinfo scan visits only the data nodes the SQL node is connected to and
        API_REGCONFed with (mysql/mysql-server storage/ndb/src/ndbapi/
        NdbInfoScanOperation.cpp, find_next_node -> SignalSender::find_confirmed_node), and
        each node reports its own rows (storage/ndb/src/kernel/blocks/cmvmi/Cmvmi.cpp,
        NODES_TABLEID writes getOwnNodeId()). A starting node opens itself to API nodes in
        start phase 9 (storage/ndb/src/kernel/blocks/qmgr/QmgrMain.cpp, execSTTOR case 9:
        "Enable communication to all API nodes"), after the local recovery, the fragment
        copy and the LCP wait of phases 4-5 (restart_info states 4-17) and before the
        subscription handover of phase 101 (state 18; NDB Internals Guide, "STTOR Phase
        101"). Until then it is as absent from ndbinfo as a dead node; only the master's
        restart_info row tells that it is restarting."""
        return [n for n in self.nodes.values() if n.state == "up" or (
            n.state == "starting" and (n.restart_status or 0) >= WAIT_SUMA_HANDOVER)]

    def serving(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.state == "up"]

    def master(self) -> Node | None:
        """The DIH master is the QMGR president: the oldest running node, not the lowest id
        (it moves when the master restarts and stays with its successor)."""
        up = self.serving()
        return min(up, key=lambda n: (n.start_ctime, n.id)) if up else None

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
                      time_scale: float = 1.0, stop: bool = False) -> RestartRun:
        if self.cluster_down:
            raise ValueError("every data node is stopped: start-all first")
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
        node.state = "down"  # before choosing the master: a failing master hands over
        master = self.master()
        run = RestartRun(self.next_restart_id, node_id, profile, initial, time_scale, steps,
                         step_start=self.ctime, master=master.id if master else node_id,
                         stopped=stop)
        self.next_restart_id += 1
        self.restarts[node_id] = run
        self.emit(node_id, "Node shutdown initiated")
        self.emit(node_id, "Node shutdown completed" + (
            "." if stop else ", " + ("Initial start" if initial else "restarting") + "."))
        self._enter(run)
        return run

    def stop_node(self, node_id: int) -> RestartRun:
        """`N STOP`: the node goes down and stays down (failure handling runs, then the
        master waits at NODE_FAILURE_COMPLETED) until start_node()."""
        return self.start_restart(node_id, time_scale=1.0, stop=True)

    def stop_all(self) -> None:
        """`ALL STOP`: every data node shuts down; the SQL nodes stay up but lose the
        cluster (the store answers their ndbinfo queries as a disconnected SQL node does).
        Restarts under way end with it."""
        if self.cluster_down:
            raise ValueError("the cluster is already stopped")
        self.restarts.clear()
        for node in self.nodes.values():
            node.state = "down"
            node.restart_status = None
            self.emit(node.id, "Node shutdown initiated")
            self.emit(node.id, "Node shutdown completed.")
        self.cluster_down = True
        self.membership_changed = True
        self.lcp_running = False

    def start_all(self) -> None:
        """Start every data node again (a system restart): the nodes come back started,
        with fresh processes, and the SQL nodes reconnect."""
        if not self.cluster_down:
            raise ValueError("the cluster is not stopped (stop-all first)")
        for node in self.nodes.values():
            self.emit(node.id, f"Start initiated (version {self.release()})")
            self._fresh_process(node, self.ctime)
            self.config.restarted(node.id)
            node.state = "up"
        for node in self.nodes.values():
            self._fresh_transporters(node)
            self.emit(node.id, "Start phase 101 completed (system restart)")
            self.emit(node.id, f"Started (version {self.release()})")
        self.cluster_down = False
        self.membership_changed = True
        self.lcp_next_start = self.ctime + LCP_GAP_SECS

    def start_node(self, node_id: int, time_scale: float = 1.0) -> RestartRun:
        run = self.restarts.get(node_id)
        if run is None or not run.stopped:
            raise ValueError(f"node {node_id} is not stopped")
        run.stopped = False
        run.time_scale = time_scale
        return run

    def _enter(self, run: RestartRun) -> None:
        node = self.nodes[run.node]
        st = run.status
        node.restart_status = st
        self.status_events.append((run.id, run.node, st, self.ctime))
        self.restart_rows[run.node] = RestartRow(st, dict(run.done), run.master)
        m = run.master
        if st == NODE_FAILED:
            node.state = "down"
            self.membership_changed = True
            for peer in self.live():
                peer.trp[run.node].status = 2
                self.emit(peer.id, f"Node {run.node} Disconnected", "ALERT")
                self.emit(peer.id, f"Communication to Node {run.node} closed")
            self.emit(m, "Arbitration check won - node group majority", "ALERT")
            for mgm in self.sc.mgm_nodes:
                self.emit(mgm, f"Node {run.node} Disconnected", "ALERT")
        elif st == NODE_FAILURE_COMPLETED:
            for peer in self.live():
                peer.trp[run.node].status = 1
            self.emit(m, f"All nodes completed failure of Node {run.node}")
        elif st == ALLOCATED_NODE_ID:
            node.state = "starting"
            self.membership_changed = True
            self._fresh_process(node, self.ctime)
            self._fresh_transporters(node)
            self.config.restarted(node.id)  # it starts with the current configuration
            for peer in self.live():
                if peer.id != run.node:
                    t = peer.trp[run.node]
                    t.status, t.connects = 0, t.connects + 1
                    t.overloaded = t.slowdown = 0
                    self.emit(peer.id, f"Communication to Node {run.node} opened")
            for mgm in self.sc.mgm_nodes:
                self.emit(mgm, f"Node {run.node} Connected")
            self.emit(run.node, f"Start initiated (version {self.release()})")
        elif st == WAIT_SUMA_HANDOVER:
            self.membership_changed = True  # past start phase 9: its rows appear (visible())
        elif st == INCLUDE_NODE:
            self.emit(m, "Node restart completed copy of dictionary information")
        elif st == WAIT_LCP:
            self.emit(m, f"Node restart completed copying the fragments to Node {run.node}")
        for line in PHASE_LOG.get(st, []):
            self.emit(run.node, line)

    def _finish(self, run: RestartRun) -> None:
        node = self.nodes[run.node]
        node.state = "up"
        node.restart_status = None
        self.membership_changed = True
        self.restart_rows[run.node] = RestartRow(rs.RESTART_COMPLETED, dict(run.done),
                                                 run.master)
        self.status_events.append((run.id, run.node, rs.RESTART_COMPLETED, self.ctime))
        self.completed.append((run.id, run.node, rs.total(run.done)))
        del self.restarts[run.node]
        self.emit(run.node, "Start phase 100 completed (node restart)")
        self.emit(run.node, "Start phase 101 completed (node restart)")
        self.emit(run.node, f"Started (version {self.release()})")

    def _advance_restarts(self) -> None:
        for run in list(self.restarts.values()):
            run.ticks += 1  # the current status has been published once
            step = run.steps[run.idx]
            held = (self.faults.restart_stuck == step.status
                    or (run.stopped and step.status == NODE_FAILURE_COMPLETED))
            if held:
                if run.stuck_since is None:
                    run.stuck_since = self.ctime
                continue
            secs = step.secs
            if run.stuck_since is not None:
                # the step lasted as long as it was held, plus its own work
                secs = max(secs, self.ctime - run.step_start) + (
                    step.secs if step.status == NODE_FAILURE_COMPLETED else 0.0)
                step.secs = secs
                run.stuck_since = None
            if run.ticks < 1 or self.ctime - run.step_start < secs:
                continue
            run.done[step.column] = secs
            run.step_start += secs
            run.idx += 1
            run.ticks = 0
            if run.idx >= len(run.steps):
                self._finish(run)
            else:
                self._enter(run)

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
            if up:
                self._workload(node, r_node, w_node, tx_node, ab_node)
        self._snapshot((reads + writes) / dt, serving)

    def _workload(self, node: Node, r: float, w: float, tx: float, ab: float) -> None:
        """What this tick's operations leave in the TC and PGMAN histograms and the disk
        page buffer. Who records what (Dbtc::time_track_complete_*, DbtcMain.cpp):
        transactions and scans on the requesting API node, key operations on both the API
        node and the data node that executes them, fragment scans on the data node."""
        sc, wk = self.sc, self.work
        tcs = max(1, sc.threads["tc"])
        apis = sc.sql_nodes or [0]
        dbs = [n.id for n in self.serving()] or [node.id]
        share = 1.0 / (tcs * len(apis))
        db_share = 1.0 / (tcs * len(dbs))
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
                for activity, n in (*keys.items(), *frags.items()):
                    wk.record_tc(node.id, tc, db, activity, n * db_share)
        # the disk page buffer: one PGMAN per LDM plus one more (manual, ndbinfo diskstat);
        # the extra one (numbered last here, not confirmed) sees little of the traffic
        disk_ops = (r + w) * sc.disk_data_share
        hit = sc.disk_page_buffer_hit_ratio
        for inst in range(1, sc.ldm + 2):
            part = disk_ops / sc.ldm if inst <= sc.ldm else disk_ops * 0.001
            queued = part * 0.004
            misses = max(0.0, part * (1.0 - hit) - queued)
            written = w * sc.disk_data_share / sc.ldm * 0.5 if inst <= sc.ldm else 0.0
            lcp = written * 0.3 if self.lcp_running else 0.0
            wk.record_dpb(node.id, inst, page_requests_direct_return=part - queued - misses,
                          page_requests_wait_queue=queued, page_requests_wait_io=misses,
                          pages_read=misses, pages_written=written + lcp,
                          pages_written_lcp=lcp, log_waits=written * 0.01)
            wk.record_pgman(node.id, inst, "page_reads", misses)
            wk.record_pgman(node.id, inst, "page_writes", written + lcp)
            wk.record_pgman(node.id, inst, "log_waits", written * 0.01)
            wk.record_pgman(node.id, inst, "get_page", part)

    def _snapshot(self, ops_per_sec: float, serving: list[Node]) -> None:
        """The transactions open right now and their locks (rows.tables renders them)."""
        sc = self.sc
        tps = {n.id: ops_per_sec / sc.ops_per_transaction / max(1, len(serving)) for n in serving}
        live = {n.id for n in serving}
        frags = [(tid, f, [x for x in sc.group_nodes(grp) if x in live])
                 for tid, f, grp, _ in self.fragments[:64]]
        frags = [f for f in frags if f[2]]
        self.work.snapshot(self.wall_total, tps, max(1, sc.threads["tc"]),
                           sc.sql_nodes or [0], frags, sc.ldm, self.faults.long_transaction)

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
                elif rst in (COPY_FRAGMENTS, WAIT_LCP):
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

    # -- status for `lab ndb status` --------------------------------------------------
    def status(self) -> dict:
        return {
            "version": self.version, "scenario": self.sc.name, "cluster_secs": round(self.ctime, 1),
            "time_scale": self.scale(),
            "nodes": {str(n.id): {"state": "stopped" if n.id in self.restarts
                                  and self.restarts[n.id].stopped else n.state,
                                  "group": n.group,
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
            "cluster_down": self.cluster_down,
        }
