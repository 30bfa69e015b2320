"""The simulated cluster's membership: node restarts as the master's state machine walks
them (restart_info's NodeRecoveryStatus), stopping and starting single nodes or the whole
cluster, and which cluster-log lines each step writes.

A mixin of `model.Model`, whose state (nodes, transporters, restarts) it changes; the
durations a restart plans come from `restart`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim.cluster_config import Config
from clusterscope.ndbsim.load import LCP_GAP_SECS
from clusterscope.ndbsim.restart import (
    ALLOCATED_NODE_ID,
    INCLUDE_NODE,
    NODE_FAILED,
    NODE_FAILURE_COMPLETED,
    WAIT_LCP,
    WAIT_SUMA_HANDOVER,
)

if TYPE_CHECKING:
    from clusterscope.ndbsim.cluster_state import Faults, Node
    from clusterscope.ndbsim.scenario import Scenario

# cluster-log lines (ndb_mgmd wording) when the restarting node enters a status
PHASE_LOG = {5: ["Start phase 0 completed (node restart)",
                 "Start phase 1 completed (node restart)"],
             7: ["Start phase 2 completed (node restart)"],
             11: ["Start phase 3 completed (node restart)"],
             12: ["Start phase 4 completed (node restart)"],
             17: ["Start phase 5 completed (node restart)"],
             18: [f"Start phase {p} completed (node restart)" for p in (6, 7, 8, 9)]}


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


class Lifecycle:
    """Restarts, stops and starts of data nodes (methods of `Model`, whose __init__ sets
    the state below)."""

    sc: Scenario
    version: str
    ctime: float
    nodes: dict[int, Node]
    restarts: dict[int, RestartRun]
    restart_rows: dict[int, RestartRow]
    next_restart_id: int
    faults: Faults
    status_events: list[tuple[int, int, int, float]]
    completed: list[tuple[int, int, int]]
    membership_changed: bool
    cluster_down: bool
    lcp_running: bool
    lcp_progress: float
    lcp_next_start: float
    config: Config  # the cluster's configuration and each node's generation of it

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

