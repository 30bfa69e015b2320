"""The nodes' Galera state read every second while a window runs.

Snapshots before and after a window see a membership change (the conf id only grows) and a
restart (uptime falls), but not a state that comes and goes inside the window: a node that
donates a state transfer is Donor/Desynced for the transfer's length and Synced again at
both ends. So a thread polls each node on its own connection during the window; a poll
that reads a node not Synced, a membership other than the one before the window, or a
smaller uptime is evidence of a cluster event. A poll that fails or times out on a busy
machine is no evidence either way (a node that really went away shows in the snapshots
and in sysbench's errors); it is counted, not judged.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pymysql

from clusterscope_loadgen.sysbench import Endpoint
from clusterscope_loadgen.target import Target, connect

POLL_SECONDS = 1.0
STATUS_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('Uptime',"
              " 'wsrep_cluster_conf_id', 'wsrep_local_state_comment', 'wsrep_local_recv_queue')")


@dataclass(frozen=True)
class Look:
    """One poll of one node: read at some instant in [asked, answered]."""

    node: Endpoint
    asked: float  # wall-clock seconds
    answered: float
    uptime: int
    conf_id: str | None
    state: str | None
    recv_queue: float | None


@dataclass
class Seen:
    looks: list[Look] = field(default_factory=list)
    failed: int = 0  # polls that got no answer (no evidence)


def read(target: Target, node: Endpoint, conn: pymysql.connections.Connection | None
         ) -> tuple[pymysql.connections.Connection, Look]:
    """One poll; a new connection if `conn` is None. Raises pymysql.MySQLError."""
    asked = time.time()
    if conn is None:
        conn = connect(target, node, timeout=3.0, read_timeout=5.0)
    with conn.cursor() as cur:
        cur.execute(STATUS_SQL)
        st = {str(k).lower(): v for k, v in cur.fetchall()}
    queue = st.get("wsrep_local_recv_queue")
    return conn, Look(node, asked, time.time(), int(st.get("uptime", 0)),
                      st.get("wsrep_cluster_conf_id"), st.get("wsrep_local_state_comment"),
                      float(queue) if queue is not None else None)


class Watch(threading.Thread):
    """Polls `nodes` every POLL_SECONDS until `stop()`; `seen` holds what it read."""

    def __init__(self, target: Target, nodes: list[Endpoint],
                 every: float = POLL_SECONDS) -> None:
        super().__init__(daemon=True, name="loadgen-nodewatch")
        self.target, self.nodes, self.every = target, nodes, every
        self.seen = Seen()
        self._stop_event = threading.Event()

    def run(self) -> None:
        conns: dict[Endpoint, pymysql.connections.Connection | None] = dict.fromkeys(
            self.nodes)
        try:
            while not self._stop_event.wait(self.every):
                for node in self.nodes:
                    try:
                        conns[node], look = read(self.target, node, conns[node])
                        self.seen.looks.append(look)
                    except pymysql.MySQLError:
                        self.seen.failed += 1
                        _close(conns[node])
                        conns[node] = None
        finally:
            for conn in conns.values():
                _close(conn)

    def stop(self) -> Seen:
        self._stop_event.set()
        self.join(timeout=10.0)
        return self.seen


def _close(conn: pymysql.connections.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except pymysql.MySQLError:
            pass
