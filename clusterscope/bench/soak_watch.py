"""The soak's own account of what the loadgen's Galera nodes went through, read apart from
the loadgen: the truth its windows are judged against (soak_judge.judge_windows)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from clusterscope.lab.core import Lab

LOADGEN_NODES = (1, 2)  # the soak's loadgen writes on node1 and reads on node2


class GaleraWatch(threading.Thread):
    """What the loadgen's nodes went through, seen every second on their own: each change of
    the membership (wsrep_cluster_conf_id) and each look that found a node not Synced, as
    (from, to) intervals the event surely lies in. The loadgen judges a window by snapshots
    before and after it and polls during it; this is the independent account its windows
    are checked against.

    A look is read at some instant between asking and the answer, which on a busy machine
    can come seconds later: a change seen by a look lies after the previous look was asked
    and before this one was answered, and a state read lies within its own look. A look
    that gets no answer knows nothing: it is kept apart (`unanswered`), the membership is
    compared across it, and it is never called a change."""

    def __init__(self, lab: Lab, nodes: tuple[int, ...] = LOADGEN_NODES,
                 read: Callable[[int], dict[str, str]] | None = None) -> None:
        super().__init__(daemon=True)
        self.lab, self.nodes = lab, nodes
        self.read = read or self._status
        self.events: list[tuple[float, float, str]] = []
        self.unanswered: list[tuple[float, float, str]] = []
        self.stop_event = threading.Event()

    def _status(self, n: int) -> dict[str, str]:
        from clusterscope.lab import galera_nodes as gn
        return gn.status_vars(self.lab, n)

    def look(self, n: int, last: dict[int, tuple[float, str | None]]) -> None:
        asked = time.time()
        try:
            v = self.read(n)
        except Exception as exc:  # noqa: BLE001 - no answer is no evidence either way
            self.unanswered.append((asked, time.time(), f"node{n} no answer"
                                                         f" ({type(exc).__name__})"))
            return
        answered = time.time()
        conf, state = v.get("wsrep_cluster_conf_id"), v.get("wsrep_local_state_comment")
        before = last.get(n)
        if before is not None and before[1] != conf:
            self.events.append((before[0], answered,
                                f"node{n} membership {before[1]} -> {conf}"))
        if state != "Synced":
            self.events.append((asked, answered, f"node{n} {state}"))
        last[n] = (asked, conf)

    def run(self) -> None:
        last: dict[int, tuple[float, str | None]] = {}
        while not self.stop_event.wait(1.0):
            for n in self.nodes:
                self.look(n, last)
