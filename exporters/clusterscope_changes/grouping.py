"""One change applied node by node is one change: rolling steps share a change id.

A rolling restart with a new version or configuration, or `SET GLOBAL` typed on each node
in turn, reaches the nodes of a cluster one after another. Each node's step joins the open
change of its cluster and node class (Galera nodes, SQL nodes, data nodes) that moved at
least one of the same things to the same value, if that change has not reached this node
yet and its last step is at most `window` seconds old; otherwise it opens a new change.
The groups are plain data, kept in the detector's state file.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field

from clusterscope_changes.diff import Item


@dataclass
class Group:
    change_id: str
    cluster: str
    role: str            # galera | sql | data: the node class a rolling change walks
    keys: list[list]     # [kind, name, new value] of every item it moved
    nodes: list[str] = field(default_factory=list)
    start: float = 0.0
    last: float = 0.0

    def key_set(self) -> set[tuple]:
        return {tuple(k) for k in self.keys}


def change_id(cluster: str, start: float, node: str, keys: list[tuple]) -> str:
    """Readable and stable: cluster, start time (UTC) and a digest of what moved."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(start))
    digest = hashlib.sha256(repr((node, sorted(map(str, keys)))).encode()).hexdigest()[:6]
    return f"{cluster}.{stamp}.{digest}"


class Grouper:
    def __init__(self, window: float, groups: list[dict] | None = None) -> None:
        self.window = window
        self.groups = [Group(**g) for g in groups or []]

    def assign(self, cluster: str, role: str, node: str, items: list[Item],
               now: float) -> tuple[Group, int]:
        """The change this node's items belong to, and which step (1 = first node)."""
        self.expire(now)
        keys = {i.key for i in items}
        open_ = [g for g in self.groups
                 if g.cluster == cluster and g.role == role and node not in g.nodes
                 and g.key_set() & keys]
        if open_:
            g = max(open_, key=lambda g: g.last)
            g.nodes.append(node)
            g.last = now
            g.keys += [list(k) for k in keys - g.key_set()]
        else:
            ordered = sorted(keys, key=str)
            g = Group(change_id(cluster, now, node, ordered), cluster, role,
                      [list(k) for k in ordered], [node], now, now)
            self.groups.append(g)
        return g, len(g.nodes)

    def expire(self, now: float) -> None:
        """Forget changes whose last step is older than the window (they stay in the log)."""
        self.groups = [g for g in self.groups if now - g.last <= self.window]

    def dump(self) -> list[dict]:
        return [asdict(g) for g in self.groups]
