"""What the tracker knows per node, kept as plain data so it survives a restart."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from galera_tracker.follower import LogFollower
from galera_tracker.log_lines import parse_timestamp
from galera_tracker.parser import (
    Aborted,
    Event,
    NodeParser,
    Recovery,
    StateChange,
)
from galera_tracker.wrapped import Unwrapper

BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600, 7200)
STATES = ("CLOSED", "OPEN", "PRIMARY", "JOINER", "JOINED", "SYNCED", "DONOR/DESYNCED")


@dataclass
class NodeStats:
    transitions: dict[str, int] = field(default_factory=dict)  # "FROM>TO" -> count
    state: str | None = None
    state_since: float | None = None
    recoveries: dict[str, int] = field(default_factory=dict)  # "kind|method" -> count
    aborted: int = 0
    last: dict | None = None  # the latest Recovery as a dict
    hist: dict[str, dict] = field(default_factory=dict)  # "kind|method" -> {buckets,sum,count}
    lines: int = 0

    def apply(self, event: Event) -> None:
        if isinstance(event, StateChange):
            key = f"{event.from_state}>{event.to_state}"
            self.transitions[key] = self.transitions.get(key, 0) + 1
            self.state = event.to_state
            self.state_since = event.ts
        elif isinstance(event, Recovery):
            key = f"{event.kind}|{event.method}"
            self.recoveries[key] = self.recoveries.get(key, 0) + 1
            self.last = {"start": event.start, "end": event.end, "kind": event.kind,
                         "method": event.method, "donor": event.donor,
                         "duration": event.duration}
            h = self.hist.setdefault(key, {"buckets": [0] * len(BUCKETS), "sum": 0.0,
                                           "count": 0})
            for i, bound in enumerate(BUCKETS):
                if event.duration <= bound:
                    h["buckets"][i] += 1
            h["sum"] += event.duration
            h["count"] += 1
        elif isinstance(event, Aborted):
            self.aborted += 1


class Node:
    """One node's error log. `cluster` and `name` are its labels.

    The log-time watermark: the time of the newest line read and how many lines carried
    that time. When the file starts over from its top (rotated, truncated, or replaced
    by a copy: rsync writes a new file and renames it, so the same content arrives under
    a new inode), lines up to the watermark were read already and are skipped, so a
    recovery is never counted twice; the first line past it ends the replay. Within one
    continuous read nothing is skipped, so a clock that steps back loses no line.
    """

    def __init__(self, name: str, path: str, cluster: str = "") -> None:
        self.name = name
        self.cluster = cluster
        self.follower = LogFollower(path)
        self.follower.on_reset = self._replay
        # Any file may hold JSON- or CRI-wrapped lines (a Kubernetes log collector's output):
        # the parser only ever sees the error-log lines inside.
        self.unwrapper = Unwrapper()
        self.parser = NodeParser(node=name)
        self.stats = NodeStats()
        self.watermark: list | None = None  # [log time, lines read at that time]
        self.skipping: list | None = None   # [log time, lines at it still to skip]
        self.skipped = 0
        self._line_ts: float | None = None  # lines without a time of their own inherit

    def _replay(self) -> None:
        self.skipping = list(self.watermark) if self.watermark else None
        self._line_ts = None

    def poll(self) -> int:
        n = 0
        for raw in self.follower.read_lines():
            n += 1
            for line in self.unwrapper.feed(raw):
                if self._seen_before(line):
                    self.skipped += 1
                    continue
                for event in self.parser.feed(line):
                    self.stats.apply(event)
        self.stats.lines += n
        return n

    def _seen_before(self, line: str) -> bool:
        ts = parse_timestamp(line)
        if ts is None:
            ts = self._line_ts
        else:
            self._line_ts = ts
        if ts is None:
            # no time yet (the top of a file before its first dated line): during a
            # replay it belongs to what was read; otherwise it is new
            return self.skipping is not None
        if self.skipping is not None:
            mark, left = self.skipping
            if ts < mark or (ts == mark and left > 0):
                if ts == mark:
                    self.skipping[1] -= 1
                return True
            self.skipping = None  # past the watermark: new lines from here on
        if self.watermark is None or ts > self.watermark[0]:
            self.watermark = [ts, 1]
        elif ts == self.watermark[0]:
            self.watermark[1] += 1
        return False

    def in_progress_since(self) -> float | None:
        w = self.parser.window
        return None if w is None else w.start

    def to_dict(self) -> dict:
        return {"path": self.follower.path, "position": self.follower.position(),
                "reopens": self.follower.reopens, "unwrapper": self.unwrapper.to_dict(),
                "parser": self.parser.to_dict(), "watermark": self.watermark,
                "skipping": self.skipping, "skipped": self.skipped,
                "stats": vars(self.stats)}

    def restore(self, d: dict) -> None:
        if d.get("path") != self.follower.path:
            return  # another file now: read it from the start
        self.follower.restore(d.get("position", {}))
        self.follower.reopens = d.get("reopens", 0)
        self.unwrapper = Unwrapper.from_dict(d.get("unwrapper") or {})
        self.parser = NodeParser.from_dict(self.name, d.get("parser", {}))
        self.stats = NodeStats(**d.get("stats", {}))
        self.watermark = d.get("watermark")
        self.skipping = d.get("skipping")
        self.skipped = int(d.get("skipped") or 0)


def _key(cluster: str, node: str) -> str:
    return f"{cluster}/{node}" if cluster else node


class Tracker:
    """All nodes; `poll()` reads new lines, `save()` persists positions and counts."""

    def __init__(self, logs: dict[tuple[str, str], str] | dict[str, str],
                 state_file: str | None = None) -> None:
        """`logs`: (cluster, node) -> path, or node -> path (one unnamed cluster)."""
        self.nodes: dict[str, Node] = {}
        self.state_file = Path(state_file) if state_file else None
        self.lock = threading.Lock()
        self.update(logs)

    def _saved(self) -> dict:
        if not (self.state_file and self.state_file.exists()):
            return {}
        try:
            saved = json.loads(self.state_file.read_text()).get("nodes", {})
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as exc:
            self._set_aside(f"unreadable ({exc})")
            return {}
        return saved if isinstance(saved, dict) else {}

    def _set_aside(self, why: str) -> None:
        """Keep a damaged state file for a person to look at, instead of overwriting it
        (the counts it holds are what the tracker would otherwise lose silently)."""
        assert self.state_file is not None
        aside = self.state_file.with_name(f"{self.state_file.name}.damaged-{int(time.time())}")
        try:
            os.replace(self.state_file, aside)
        except OSError:
            return
        print(f"galera_tracker: state file {self.state_file} {why}: kept as {aside}; the"
              " logs are read again from where it could not say", file=sys.stderr, flush=True)

    def update(self, logs: dict[tuple[str, str], str] | dict[str, str]) -> None:
        """Follow these logs from now on (the description changed): a node already followed
        keeps its state, a new one starts from what the state file knows of it."""
        with self.lock:
            wanted: dict[str, tuple[str, str, str]] = {}
            for key, path in logs.items():
                cluster, name = key if isinstance(key, tuple) else ("", key)
                wanted[_key(cluster, name)] = (cluster, name, path)
            if self.nodes:
                self._save()
            saved = self._saved()
            for key in list(self.nodes):
                if key not in wanted or self.nodes[key].follower.path != wanted[key][2]:
                    del self.nodes[key]
            for key, (cluster, name, path) in wanted.items():
                if key in self.nodes:
                    continue
                node = self.nodes[key] = Node(name, path, cluster)
                # a state file from before clusters keyed nodes by name alone
                d = saved.get(key) or saved.get(name)
                if isinstance(d, dict):
                    try:
                        node.restore(d)
                    except (TypeError, ValueError, KeyError, AttributeError) as exc:
                        self.nodes[key] = Node(name, path, cluster)
                        self._set_aside(f"has a damaged entry for {key} ({exc!r:.200})")

    def poll(self) -> int:
        with self.lock:
            n = sum(node.poll() for node in self.nodes.values())
            if n:
                self._save()
            return n

    def save(self) -> None:
        with self.lock:
            self._save()

    def _save(self) -> None:
        if not self.state_file:
            return
        # nodes no longer followed keep their saved state (they may come back)
        data = {"nodes": {**self._saved(),
                          **{name: node.to_dict() for name, node in self.nodes.items()}}}
        tmp = self.state_file.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps(data))
            f.flush()
            os.fsync(f.fileno())  # a crash leaves the old file or the new one, whole
        os.replace(tmp, self.state_file)
