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


class RestartLedger:
    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = Path(path) if path else None
        self.lock = threading.Lock()
        # node_id -> {"completed": int, "last_key": list|None, "in_progress": bool}
        self.nodes: dict[str, dict] = {}
        self._write_failed = False
        if self.path and self.path.exists():
            try:
                data = json.loads(self.path.read_text())
                self.nodes = {str(k): v for k, v in data.get("nodes", {}).items()}
            except (OSError, ValueError, AttributeError) as exc:
                raise ValueError(f"{self.path}: unreadable state file ({exc}); move it away"
                                 " to start counting from zero") from exc

    def observe(self, node_id: str, status_int: int | None, key: list) -> None:
        """One restart_info row; counts a restart the first time it is seen completed."""
        with self.lock:
            rec = self.nodes.setdefault(node_id, {"completed": 0, "last_key": None,
                                                  "in_progress": False})
            changed = False
            if status_int is None or status_int in NO_INFO:
                pass
            elif status_int in COMPLETED:
                if rec["in_progress"] or rec["last_key"] != key:
                    rec["completed"] += 1
                    rec["last_key"] = key
                    rec["in_progress"] = False
                    changed = True
                    log.info("node %s: restart completed (count %d)", node_id,
                             rec["completed"])
            elif not rec["in_progress"]:
                rec["in_progress"] = True
                changed = True
            if changed:
                self._save()

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
    """Times LCPs from what scrapes see (resolution = scrape interval)."""

    started_at: float | None = None
    started_seen: bool = False  # False: the LCP was already running when we first looked
    last_duration: float | None = None
    initialised: bool = False

    def observe(self, running: bool, now: float) -> None:
        if running and self.started_at is None:
            self.started_at = now
            self.started_seen = self.initialised
        elif not running and self.started_at is not None:
            if self.started_seen:
                self.last_duration = now - self.started_at
            self.started_at = None
        self.initialised = True


@dataclass
class ExporterState:
    ledger: RestartLedger
    lcp: LcpTracker = field(default_factory=LcpTracker)
