"""The simulated cluster: its state and one tick of time (`rows` renders it as `ndb$` rows);
restarts and membership changes are `lifecycle`'s, what load does in a tick `load`'s.

Two clocks: load (counters, CPU, bytes, REDO) follows the wall clock, so rates look real;
LCPs and restarts follow cluster time, which runs `time_scale` times faster than the wall
clock while a restart with `--time-scale N` is under way (reported seconds stay in cluster
time). No database access here: `store` writes what `tables()` returns.
"""

from __future__ import annotations

import random
from collections import deque

from ndbinfo_exporter import schema

from clusterscope.ndbsim.cluster_config import Config
from clusterscope.ndbsim.cluster_state import Faults, Node, Trp
from clusterscope.ndbsim.lifecycle import Lifecycle, RestartRow, RestartRun
from clusterscope.ndbsim.load import Load
from clusterscope.ndbsim.restart import NODE_FAILURE_COMPLETED, WAIT_SUMA_HANDOVER
from clusterscope.ndbsim.scenario import Scenario
from clusterscope.ndbsim.workload import PAGE, TABLE_ID0, Workload


class Model(Lifecycle, Load):
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

    # -- one tick ----------------------------------------------------------------------
    def tick(self, wall_dt: float) -> None:
        wall_dt = max(0.0, min(wall_dt, 5.0))
        self.wall_total += wall_dt
        cdt = wall_dt * self.scale()
        self.ctime += cdt
        self._advance_restarts()
        self._lcp(cdt)
        self._load(wall_dt, cdt)

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
