"""A change as a structured log line: one JSON object per node step, appended to the
changes file that the log shipper sends to the log store (clusterscope_logs.change_lines).

Fields: `ts` (Unix seconds, when the change was seen), `since` (the previous reading
that still had the old values: the change happened in between), `cluster`, `node`
(`node_id` too for a data node), `role`, `kind` / `name` / `old` / `new` of the item that
names the change (diff.primary), `items` (how many things moved), `details` (every item as
a JSON list of [kind, name, old, new]), `change_id`, `step` (1 for the first node),
`nodes_total` (the nodes of its class), `simulated` when the cluster is, and `msg`, the
line a person reads. Values that look like secrets are never written (diff.shown).

A line that cannot be written (disk full, directory gone) stays queued, in memory and in
the state file, and is written at the next poll: nothing is lost.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from clusterscope_changes.diff import Item, primary, summary
from clusterscope_changes.grouping import Group

log = logging.getLogger("clusterscope_changes.events")

# the file is renamed to <file>.1 past this size (the shipper follows the rename)
ROTATE_BYTES = 16 * 2**20
MAX_DETAILS = 200  # items listed in one line (an upgrade adds a few dozen variables)


def event(*, cluster: str, node: str, role: str, items: list[Item], group: Group, step: int,
          nodes_total: int, since: float | None, now: float, simulated: bool,
          node_id: int | None = None) -> dict:
    first = primary(items)
    old, new = first.shown()
    where = f"node {node}" if node_id is None else f"data node {node}"
    partial = f"step {step} of {nodes_total} nodes" if nodes_total > 1 else "its only node"
    out = {
        "ts": f"{now:.6f}", "since": f"{since:.6f}" if since else "",
        "cluster": cluster, "node": node, "role": role,
        "kind": first.kind, "name": first.name, "old": old, "new": new,
        "items": str(len(items)),
        "details": json.dumps([[i.kind, i.name, *i.shown()]
                               for i in sorted(items, key=lambda i: (i.kind, i.name))
                               [:MAX_DETAILS]]),
        "change_id": group.change_id, "step": str(step), "nodes_total": str(nodes_total),
        "msg": f"{cluster} {where}: {summary(items)} ({partial}; change {group.change_id})",
    }
    if node_id is not None:
        out["node_id"] = str(node_id)
    if simulated:
        out["simulated"] = "true"
        out["msg"] += " SIMULATED"
    return out


class ChangesFile:
    """Appends events; each write is flushed and fsynced before the caller forgets it."""

    def __init__(self, path: str | os.PathLike, pending: list[dict] | None = None) -> None:
        self.path = Path(path)
        self.pending: list[dict] = list(pending or [])
        self.error: str | None = None

    def flush(self) -> None:
        if not self.pending:
            return
        try:
            self._rotate()
            with open(self.path, "a", encoding="utf-8") as f:
                for ev in self.pending:
                    f.write(json.dumps(ev, separators=(",", ":"), sort_keys=True) + "\n")
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            if self.error is None:
                log.error("cannot write the changes file %s (%s); %d change line(s) kept"
                          " and written when it works again", self.path, exc.strerror or exc,
                          len(self.pending))
            self.error = str(exc.strerror or exc)
            return
        if self.error is not None:
            log.warning("the changes file %s is written again (%d queued line(s))",
                        self.path, len(self.pending))
        self.error = None
        self.pending = []

    def _rotate(self) -> None:
        try:
            if self.path.stat().st_size < ROTATE_BYTES:
                return
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
