"""What the exporter remembers: restarts already counted (persisted) and LCP timing.

`ndb_restarts_completed_total` must count each completed restart exactly once, also across
exporter restarts, so the ledger is written (atomically) before the new count is served.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ndbinfo_exporter import schema

log = logging.getLogger("ndbinfo_exporter.state")

COMPLETED = schema.RESTART_COMPLETED
NO_INFO = schema.RESTART_NO_INFO
TAKEOVER = 24  # NODE_ACTIVE: a completed row reported by a master that was not master then


class RestartLedger:
    """Counts each completed node restart once, from restart_info rows.

    A restart is completed at status 19 (RESTART_COMPLETED, the master watched it) or 24
    (NODE_ACTIVE: the reporting master was not master during it); any other reported state
    is a restart under way (see schema.RESTART_*). It is counted when a row that was seen
    under way turns completed, or when a completed row differs from the one counted last (a
    restart that ran while the exporter was down). A master takeover rewrites a completed
    19 row as 24 with fewer phases but the same total: not a new restart. Completions the
    exporter saw happen (or caught up on) get their time, which the rules key on; a row
    already completed when the exporter first met the node is counted without one (it
    may be weeks old and must not be judged as new).
    """

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = Path(path) if path else None
        self.lock = threading.Lock()
        # node_id -> {"completed": int, "last_key": list|None, "last_status": int|None,
        #             "in_progress": bool, "completed_at": float|None}
        self.nodes: dict[str, dict] = {}
        self._write_failed = False
        if self.path and self.path.exists():
            try:
                data = json.loads(self.path.read_text())
                self.nodes = {str(k): v for k, v in data.get("nodes", {}).items()}
            except (OSError, ValueError, AttributeError) as exc:
                raise ValueError(f"{self.path}: unreadable state file ({exc}); move it away"
                                 " to start counting from zero") from exc

    def observe(self, node_id: str, status_int: int | None, key: list,
                now: float | None = None) -> None:
        """One restart_info row (`key`: its secs_* values, total last)."""
        if status_int is None or status_int in NO_INFO:
            return
        with self.lock:
            known = node_id in self.nodes
            rec = self.nodes.setdefault(node_id, {"completed": 0, "last_key": None,
                                                  "in_progress": False})
            changed = not known
            if status_int in COMPLETED:
                if not known:
                    rec["completed"] += 1  # completed before we looked: counted, not timed
                elif rec["in_progress"] or self._different(rec, status_int, key):
                    rec["completed"] += 1
                    rec["completed_at"] = now
                    log.info("node %s: restart completed (count %d)", node_id,
                             rec["completed"])
                    changed = True
                if rec["in_progress"] or rec.get("last_key") != key:
                    changed = True
                rec["in_progress"] = False
                rec["last_key"], rec["last_status"] = key, status_int
            elif not rec["in_progress"]:
                rec["in_progress"] = True
                changed = True
            if changed:
                self._save()

    @staticmethod
    def _different(rec: dict, status_int: int, key: list) -> bool:
        last = rec.get("last_key")
        if last is None:
            return True
        if TAKEOVER in (status_int, rec.get("last_status")):
            return key[-1] != last[-1]  # only total_restart_secs survives a takeover
        return key != last

    def completed_at(self) -> dict[str, float]:
        with self.lock:
            return {k: v["completed_at"] for k, v in self.nodes.items()
                    if v.get("completed_at") is not None}

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {k: int(v["completed"]) for k, v in self.nodes.items()}

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            with open(tmp, "w") as f:
                json.dump({"version": 1, "nodes": self.nodes}, f)
                f.flush()
                os.fsync(f.fileno())
            tmp.replace(self.path)
            self._write_failed = False
        except OSError as exc:
            if not self._write_failed:
                log.error("cannot persist restart counts to %s (%s); counting in memory only",
                          self.path, exc)
            self._write_failed = True


@dataclass
class LcpTracker:
    """Times LCPs and measures the running one's progress from what scrapes see.

    ndbinfo has no LCP progress column. table_fragments.num_lcp_replicas counts the fragment
    replicas still to be checkpointed ("noLcpReplicas: No of replicas remaining to be
    LCP:ed", mysql/mysql-server storage/ndb/src/kernel/blocks/dbdih/Dbdih.hpp): only live
    replicas of logged tables get one, and a node that joins the running LCP while it
    restarts adds its replicas (Dbdih::updateLcpInfo, `noLcpReplicas++`). So the work of an
    LCP is what remained when it started plus what joined since, never the configured
    replica count (that would start at 25-50 % with a node down). Progress is the share of
    that work done, held monotone within an LCP: work joining mid-way is counted without
    moving the ratio back.
    """

    started_at: float | None = None
    started_seen: bool = False  # False: the LCP was already running when we first looked
    last_duration: float | None = None
    initialised: bool = False
    work: float = 0.0
    last_remaining: float = 0.0
    progress: float = 1.0

    def observe(self, running: bool, now: float, remaining: float = 0.0,
                alive: float = 0.0) -> None:
        if running and self.started_at is None:
            self.started_at = now
            self.started_seen = self.initialised
            # first look at an LCP already under way: the live replicas are the best bound
            self.work = remaining if self.started_seen else max(remaining, alive)
            self.last_remaining, self.progress = remaining, 0.0
        elif not running and self.started_at is not None:
            if self.started_seen:
                self.last_duration = now - self.started_at
            self.started_at = None
        if running:
            if remaining > self.last_remaining:
                self.work += remaining - self.last_remaining  # a starting node joined
            self.last_remaining = remaining
            done = 1.0 - remaining / self.work if self.work > 0 else 0.0
            self.progress = max(self.progress, min(1.0, max(0.0, done)))
        else:
            self.progress = 1.0
        self.initialised = True


@dataclass
class ExporterState:
    ledger: RestartLedger
    lcp: LcpTracker = field(default_factory=LcpTracker)
    # counters: counter_id -> (block_name, counter_name) as the view decodes them
    counter_names: dict[int, tuple[str, str]] = field(default_factory=dict)
