"""What the detector remembers across restarts: every node's last reading, the open
rolling changes, the counters and the change lines not yet written.

Written atomically (a temporary file renamed over the old one) whenever a reading changed
or a line is queued, and at least every SAVE_EVERY seconds; an unreadable file stops the
detector at start with a message (it would otherwise report every setting as new, or miss
what changed while it was down).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SAVE_EVERY = 600.0
FORMAT = 1


@dataclass
class NodeState:
    values: dict = field(default_factory=dict)  # the last reading
    read_at: float = 0.0                         # when it was taken
    up: bool = False                             # the last reading worked
    error: str = ""                              # why not


class State:
    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = Path(path) if path else None
        self.lock = threading.RLock()
        self.nodes: dict[str, NodeState] = {}     # "cluster/node" (or "cluster/data/2")
        self.groups: list[dict] = []
        self.counts: dict[str, float] = {}        # "cluster\tnode\tkind" -> items changed
        self.last: dict[str, float] = {}          # "cluster\tnode\tkind\tname" -> time
        self.pending: list[dict] = []             # change lines not yet written
        self.saved_at = 0.0
        if self.path and self.path.exists():
            try:
                data = json.loads(self.path.read_text())
                if data.get("format") != FORMAT:
                    raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
                self.nodes = {k: NodeState(**v) for k, v in data["nodes"].items()}
                self.groups = list(data.get("groups", []))
                self.counts = {k: float(v) for k, v in data.get("counts", {}).items()}
                self.last = {k: float(v) for k, v in data.get("last", {}).items()}
                self.pending = list(data.get("pending", []))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ValueError(f"{self.path}: unreadable state file ({exc}); move it away to"
                                 " start over (changes made while the detector was down are"
                                 " then not seen)") from exc

    def node(self, key: str) -> NodeState:
        return self.nodes.setdefault(key, NodeState())

    def count(self, cluster: str, node: str, kind: str, name: str, now: float) -> None:
        k = f"{cluster}\t{node}\t{kind}"
        self.counts[k] = self.counts.get(k, 0.0) + 1
        self.last[f"{k}\t{name}"] = now

    def save(self, force: bool = False) -> None:
        if self.path is None:
            return
        now = time.time()
        if not force and now - self.saved_at < SAVE_EVERY:
            return
        with self.lock:
            data = {"format": FORMAT, "nodes": {k: vars(v) for k, v in self.nodes.items()},
                    "groups": self.groups, "counts": self.counts, "last": self.last,
                    "pending": self.pending}
            text = json.dumps(data, sort_keys=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(self.path)
        self.saved_at = now
