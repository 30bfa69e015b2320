"""Galera error-log lines -> state changes and completed recoveries.

Reads the error-log formats of MariaDB 10.x (`2026-11-22  3:59:35 0 [Note] WSREP: ...`,
older `190115 11:20:14 [Note] WSREP: ...`), Percona XtraDB Cluster 5.7
(`2019-01-15T11:20:14.575046Z 0 [Note] WSREP: ...`) and PXC / MySQL 8.0 wsrep
(`2023-03-12T12:48:43.82Z 0 [Note] [MY-000000] [Galera] ...`), plus the SST scripts'
`WSREP_SST: [INFO] ... (20261122 03:59:37.889)` lines.

A recovery runs from `Shifting PRIMARY -> JOINER` to `Shifting JOINED -> SYNCED` (the
field definition). Its kind is decided by evidence inside that window: a joiner that
had no usable state (IST prepared from seqno 0 / a zero UUID, "<method> SST completed on
joiner", "Switching to SST") did an SST, even though an IST catch-up follows it in the
same log; otherwise IST evidence ("<method> IST completed", "Running IST", IST prepared
from a real seqno) makes it an IST.

A server starting or stopping inside the window ends the recovery (Aborted), except the
temporary server PXC 8.0's xtrabackup SST runs on the joiner (see _SST_SERVER_ANNOUNCED).
On Kubernetes the lines arrive wrapped by a log collector or the kubelet; the tracker
unwraps them (galera_tracker.wrapped) before they get here.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

ZERO_UUID = "00000000-0000-0000-0000-000000000000"

_TS_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:?\d{2})?\s")
_TS_MARIA = re.compile(r"^(\d{4}-\d{2}-\d{2})\s+(\d{1,2}:\d{2}:\d{2})\s")
_TS_OLD = re.compile(r"^(\d{6})\s+(\d{1,2}:\d{2}:\d{2})\s")
_TS_SST = re.compile(r"\((\d{8}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)\)\s*$")

# The states gcs shifts between (codership/galera gcs/src/gcs.cpp, gcs_conn_state_str). Only
# these: a line naming any other is not Galera's, and would make a new label value.
GCS_STATES = ("SYNCED", "JOINED", "DONOR/DESYNCED", "JOINER", "PRIMARY", "OPEN", "CLOSED",
              "DESTROYED", "ERROR")
_STATE = "|".join(re.escape(s) for s in GCS_STATES)
# Hostile lines: every pattern below runs in time linear in the line. A leading `\d+` or
# `\w+` starts only where a run starts ((?<!...)), and a bracketed name is at most NAME
# characters, so a line of digits, of one long word or of "1.1 (" repeated cannot make the
# search quadratic (a 400 KB line took minutes).
NAME = 255
METHOD = 64
_NAME = rf"[^)]{{0,{NAME}}}"
_METHOD = rf"(?<![\w-])(\w[\w-]{{0,{METHOD - 1}}})"
_SHIFT = re.compile(rf"Shifting ({_STATE}) -> ({_STATE}) \(TO: -?\d+\)")
_SELECTED = re.compile(rf"Member (\d+)\.\d+ \(({_NAME})\) requested state transfer from"
                       rf" '[^']{{0,{NAME}}}'\. Selected (\d+)\.\d+ \(({_NAME})\)")
_REQUESTING = re.compile(r"Requesting state transfer: success, donor: (\d+)")
_TRANSFER_FROM = re.compile(rf"(?<![\d.])\d+\.\d+ \(({_NAME})\): State transfer from \d+\.\d+"
                            rf" \(({_NAME})\) complete")
_IST_UUID = re.compile(r"####### IST uuid:?\s*([0-9a-f-]{36}) f: (-?\d+)")
_IST_PREPARED = re.compile(r"Prepared IST receiver for (-?\d+)-(-?\d+)")
_SCRIPT_DONE = re.compile(rf"{_METHOD} (SST|IST) completed on joiner")
_SCRIPT_STARTED = re.compile(rf"{_METHOD} SST started on joiner")
_SST_REQUEST = re.compile(rf"Prepared SST request: (\w[\w-]{{0,{METHOD - 1}}})\|")
_RUNNING_JOINER = re.compile(rf"wsrep_sst_(\w[\w-]{{0,{METHOD - 1}}})\s+--role\s+'?joiner")
_SST_TO_SST = re.compile(r"(?:Switching to SST|can't be serviced using IST|"
                         r"Failed to prepare for incremental state transfer)")
_IST_EVIDENCE = re.compile(r"(?:Running IST|Skipping mysql_upgrade \(ist\)|"
                           r"State gap can be serviced using IST|IST received:)")
_OWN_NAME = re.compile(rf"\bServer (\S{{1,{NAME}}}) (?:connected to cluster at position|synced"
                       r" with group)")
# A server starts or stops. The MySQL/PXC/MariaDB server's own lines, not InnoDB's
# "Shutdown completed; log sequence number" (xtrabackup's prepare step logs that one
# inside the joiner's window, the server logs it before its own "Shutdown complete").
_SERVER_START = re.compile(r"(?:\] Starting MariaDB |\bstarting as process \d)")
_SERVER_STOP = re.compile(r": Shutdown complete\b")
# PXC 8.0's xtrabackup SST, joiner side, after the data arrived: the SST script runs a
# temporary mysqld (no wsrep provider, a socket under /tmp/upgrd.*, port 0) to upgrade the
# received data, then stops it, all inside the JOINER window. Real logs
# (percona/percona-toolkit src/go/pt-galera-log-explainer/tests/logs/operator_split/node2.log,
# PXC 8.0.32 under the Percona Operator), in this order:
#   [WSREP-SST] Running post-processing...........
#   [WSREP-SST] Waiting for server instance to start.....  This may take some time
#   ---- Starting the MySQL server used for post-processing ----
#   [Server] /usr/sbin/mysqld (mysqld 8.0.32-24.2) starting as process 1050
#   [Server] /usr/sbin/mysqld: ready for connections. ... socket: '/tmp/upgrd.RE5x/my.sock'
#   [Server] Received SHUTDOWN from user mysql.pxc.sst.user. Shutting down mysqld ...
#   [WSREP-SST] ...........post-processing done
#   [Server] /usr/sbin/mysqld: Shutdown complete (mysqld 8.0.32-24.2) ...
#   ---- Stopped the MySQL server used for post-processing ----
#   [Server] /usr/sbin/mysqld: ready for connections. ... socket: '/tmp/mysql.sock' port: 3306
#   [WSREP] SST completed ... Shifting JOINER -> JOINED ... Shifting JOINED -> SYNCED
# The temporary server writes to its own file (the collector's JSON names it
# /var/lib/mysql/mysqld.post.processing.log), which is why its lines reach a merged stream
# late and out of order: after "post-processing done", after SYNCED, or minutes later.
# A real restart of the joiner has no announcement: after a crash the next lines are the
# new server's "starting as process" and its "Shifting CLOSED -> OPEN (TO: 0)"; after a
# clean stop, "Shifting ... -> OPEN", "-> CLOSED" and "Shutdown complete" come first
# (operator_concurrent_ssts/node3.log of the same repository: 2023-05-25T04:34:30 to
# 04:35:02, the node stopped by the operator and started again as process 1).
_SST_SERVER_ANNOUNCED = re.compile(r"(?:Waiting for server instance to start|"
                                   r"---- Starting the MySQL server used for post-processing)")
_SST_SERVER_STOPPED = re.compile(r"---- Stopped the MySQL server used for post-processing")
# Lines worth a regex at all; everything else (most of a busy log) is skipped cheaply.
_KEYWORDS = ("WSREP", "Galera", "starting as process", "Starting MariaDB", "Shutdown complete",
             "used for post-processing")
# Past this, a line is matched on its first MAX_LINE characters only: a backstop for the
# patterns above. The longest line in the recorded logs is 8,165 characters (a PXC 8.0
# view under the Percona Operator, ../shared/fixtures/pxc-logs).
MAX_LINE = 1 << 16
log = logging.getLogger("galera_tracker")


def parse_timestamp(line: str) -> float | None:
    """Epoch seconds of a log line, or None for a line without its own (valid) time."""
    try:
        return _timestamp(line)
    except (ValueError, OverflowError):
        return None  # shaped like a time, but not one (month 13, an offset of 99 hours)


def _timestamp(line: str) -> float | None:
    m = _TS_ISO.match(line)
    if m:
        tz = m.group(3)
        stamp = f"{m.group(1)}T{m.group(2)}"
        if tz == "Z":
            return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()
        if tz:
            return datetime.fromisoformat(stamp + tz).timestamp()
        return datetime.fromisoformat(stamp).timestamp()  # local time
    m = _TS_MARIA.match(line)
    if m:
        return _local(f"{m.group(1)} {m.group(2)}", "%Y-%m-%d %H:%M:%S")
    m = _TS_OLD.match(line)
    if m:
        return _local(f"{m.group(1)} {m.group(2)}", "%y%m%d %H:%M:%S")
    m = _TS_SST.search(line)
    if m and "WSREP_SST" in line:
        return _local(f"{m.group(1)} {m.group(2)}", "%Y%m%d %H:%M:%S.%f"
                      if "." in m.group(2) else "%Y%m%d %H:%M:%S")
    return None


def _local(text: str, fmt: str) -> float | None:
    # MariaDB logs local time without a zone; the tracker runs on the node's host.
    try:
        return time.mktime(time.strptime(text.split(".")[0], fmt.split(".")[0])) + (
            float("0." + text.split(".")[1]) if "." in text else 0.0)
    except (ValueError, OverflowError):
        return None


@dataclass
class StateChange:
    ts: float
    from_state: str
    to_state: str


@dataclass
class Recovery:
    start: float
    end: float
    kind: str  # sst | ist | unknown
    method: str
    donor: str

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)


@dataclass
class Aborted:
    """A recovery in progress that will never reach SYNCED (restart, fall back to OPEN)."""

    ts: float
    reason: str


Event = StateChange | Recovery | Aborted


@dataclass
class _Window:
    start: float
    sst: bool = False
    ist: bool = False
    method: str = ""
    donor: str = ""
    # The SST's temporary server: "" (none announced), "announced", "up", "down".
    sst_server: str = ""


@dataclass
class NodeParser:
    """Feeds one node's log lines in order; keeps only what a recovery in flight needs."""

    node: str
    last_ts: float | None = None
    state: str | None = None
    window: _Window | None = None
    pending_method: str = ""  # an SST script started before the JOINER shift
    pending_sst: bool | None = None  # SST/IST evidence seen before the JOINER shift
    pending_donor: str = ""
    selections: dict[str, str] = field(default_factory=dict)  # donor index -> donor name
    # The node's wsrep_node_name as its own log states it. On Kubernetes it is the pod name
    # (cluster1-pxc-2), which the tracker's NODE label need not be.
    own_name: str = ""

    def to_dict(self) -> dict:
        w = self.window
        return {"state": self.state, "last_ts": self.last_ts,
                "window": None if w is None else vars(w).copy(),
                "pending_method": self.pending_method, "pending_sst": self.pending_sst,
                "pending_donor": self.pending_donor, "own_name": self.own_name,
                "selections": dict(self.selections)}

    @classmethod
    def from_dict(cls, node: str, d: object) -> NodeParser:
        """The saved state; a damaged one (a hand edit, an older or cut file) restores
        what is valid, logs what is not, and never stops the tracker from starting."""
        bad: list[str] = []
        d = _dict(d, "parser", bad)

        def text(key: str, src: dict = d, where: str = "") -> str:
            v = src.get(key, "")
            if isinstance(v, str):
                return v
            bad.append(where + key)
            return ""

        state = d.get("state")
        if state is not None and state not in GCS_STATES:
            bad.append("state")
            state = None
        pending_sst = d.get("pending_sst")
        if pending_sst is not None and not isinstance(pending_sst, bool):
            bad.append("pending_sst")
            pending_sst = None
        sel = _dict(d.get("selections") or {}, "selections", bad)
        p = cls(node=node, last_ts=_time(d.get("last_ts"), "last_ts", bad), state=state,
                pending_method=text("pending_method"), pending_sst=pending_sst,
                pending_donor=text("pending_donor"), own_name=text("own_name"),
                selections={k: v for k, v in sel.items() if isinstance(k, str)
                            and isinstance(v, str)})
        w = d.get("window")
        if w:
            w = _dict(w, "window", bad)
            start = _time(w.get("start"), "window.start", bad)
            server = w.get("sst_server", "")
            if server not in ("", "announced", "up", "down"):
                bad.append("window.sst_server")
                server = ""
            if start is not None:
                p.window = _Window(start=start, sst=w.get("sst") is True,
                                   ist=w.get("ist") is True,
                                   method=text("method", w, "window."),
                                   donor=text("donor", w, "window."), sst_server=server)
        if bad:
            log.warning("node %s: saved parser state has invalid %s; restored the rest",
                        node, ", ".join(bad))
        return p

    def feed(self, line: str) -> list[Event]:
        """Events of one line: a StateChange, a completed Recovery, or Aborted."""
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE]
        ts = parse_timestamp(line)
        if ts is not None:
            self.last_ts = ts
        now = self.last_ts
        if now is None or not any(k in line for k in _KEYWORDS):
            return []
        started = _SERVER_START.search(line) is not None
        if started or _SERVER_STOP.search(line):
            return self._server(now, ts, started)
        m = _SHIFT.search(line)
        if m:
            return self._shift(now, m.group(1), m.group(2))
        self._evidence(line)
        return []

    def is_me(self, name: str) -> bool:
        return name == self.node or (bool(self.own_name) and name == self.own_name)

    def _server(self, now: float, ts: float | None, started: bool) -> list[Event]:
        w = self.window
        if w is not None:
            if ts is not None and ts < w.start:
                # Stamped before the recovery began: a line another file (an earlier SST's
                # temporary server, a --wsrep-recover run) delivered late, not this server.
                return []
            if started and w.sst_server == "announced":
                w.sst_server = "up"
                return []
            if not started and w.sst_server == "up":
                w.sst_server = "down"
                return []
        self._reset_pending()
        if w is None:
            return []
        self.window = None
        return [Aborted(now, "server started" if started else "server stopped")]

    def _reset_pending(self) -> None:
        self.pending_method = ""
        self.pending_sst = None
        self.pending_donor = ""

    def _evidence(self, line: str) -> None:
        clue = _NOTHING
        for rx, handler in _EVIDENCE:
            m = rx.search(line)
            if m:
                clue = handler(self, m)
                break  # one line says one thing: the first pattern that matches decides
        w = self.window
        if w is None:
            if clue.method:
                self.pending_method = clue.method
            if clue.sst is not None:
                self.pending_sst = clue.sst if not self.pending_sst else True
            if clue.donor:
                self.pending_donor = clue.donor
            return
        if clue.method and not w.method:
            w.method = clue.method
        if clue.sst is True:
            w.sst = True
        elif clue.sst is False:
            w.ist = True
        if clue.donor:
            w.donor = clue.donor

    def _shift(self, now: float, frm: str, to: str) -> list[Event]:
        out: list[Event] = [StateChange(now, frm, to)]
        self.state = to
        if to == "JOINER":
            if self.window is not None:
                # A second JOINER without SYNCED, CLOSED or a restart between: the first
                # attempt is over and will never be exported.
                out.append(Aborted(now, f"{frm} -> {to} again"))
            w = _Window(start=now, method=self.pending_method, donor=self.pending_donor)
            if self.pending_sst is True:
                w.sst = True
            elif self.pending_sst is False:
                w.ist = True
            self.window = w
            self._reset_pending()
        elif to == "SYNCED" and self.window is not None:
            w = self.window
            self.window = None
            kind = "sst" if w.sst else "ist" if w.ist else "unknown"
            method = "ist" if kind == "ist" else (w.method or "unknown")
            out.append(Recovery(w.start, now, kind, method, w.donor or "unknown"))
        elif to in ("CLOSED", "OPEN") and self.window is not None:
            self.window = None
            out.append(Aborted(now, f"{frm} -> {to}"))
        return out


MAX_SELECTIONS = 64  # donor indexes remembered: a cluster's members, with room to spare


def _dict(v: object, what: str, bad: list[str]) -> dict:
    if isinstance(v, dict):
        return v
    bad.append(what)
    return {}


def _time(v: object, what: str, bad: list[str]) -> float | None:
    if v is None:
        return None
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    bad.append(what)
    return None


@dataclass(frozen=True)
class _Clue:
    """What one line says about the recovery: its kind, its SST method, its donor."""

    sst: bool | None = None
    method: str = ""
    donor: str = ""


_NOTHING = _Clue()


def _ist_from(p: NodeParser, m: re.Match[str]) -> _Clue:
    # A joiner without usable state asks for IST from seqno 0 (or a zero UUID): an SST.
    if m.group(1) == ZERO_UUID or _not_positive(m.group(2)):
        return _Clue(sst=True)
    return _NOTHING


def _not_positive(seqno: str) -> bool:
    """`-?\\d+` <= 0, without int(): Python refuses to convert more than 4,300 digits."""
    return seqno.startswith("-") or not seqno.strip("0")


def _ist_range(p: NodeParser, m: re.Match[str]) -> _Clue:
    return _Clue(sst=True) if _not_positive(m.group(1)) else _NOTHING


def _script_done(p: NodeParser, m: re.Match[str]) -> _Clue:
    return _Clue(sst=m.group(2) == "SST", method=m.group(1))


def _method(p: NodeParser, m: re.Match[str]) -> _Clue:
    return _Clue(method=m.group(1))


def _selected(p: NodeParser, m: re.Match[str]) -> _Clue:
    # Every member logs every member's donor selection, so with concurrent joiners several
    # land in one window. Only this member's own selection names its donor; any of them
    # tells which name a member index has in the current view.
    requester, donor_idx, donor_name = m.group(2), m.group(3), m.group(4)
    p.selections.pop(donor_idx, None)
    p.selections[donor_idx] = donor_name
    while len(p.selections) > MAX_SELECTIONS:  # hostile lines cannot grow it (or the state)
        del p.selections[next(iter(p.selections))]
    return _Clue(donor=donor_name) if p.is_me(requester) else _NOTHING


def _requesting(p: NodeParser, m: re.Match[str]) -> _Clue:
    # Only the joiner itself logs this (its own request's result), with the donor's index.
    return _Clue(donor=p.selections.get(m.group(1), ""))


def _transfer_from(p: NodeParser, m: re.Match[str]) -> _Clue:
    # Without a known own name, the first completed transfer in the window is the best
    # guess; once the log has said which member we are, another joiner's never counts.
    if p.is_me(m.group(1)) or (p.window and not p.window.donor and not p.own_name):
        return _Clue(donor=m.group(2))
    return _NOTHING


def _own_name(p: NodeParser, m: re.Match[str]) -> _Clue:
    p.own_name = m.group(1)
    return _NOTHING


def _sst_server_announced(p: NodeParser, m: re.Match[str]) -> _Clue:
    if p.window is not None and p.window.sst_server != "up":
        p.window.sst_server = "announced"
    return _NOTHING


def _sst_server_stopped(p: NodeParser, m: re.Match[str]) -> _Clue:
    if p.window is not None:
        p.window.sst_server = "down"
    return _NOTHING


# Order matters where one line could match two patterns: the first one decides.
_EVIDENCE: list[tuple[re.Pattern[str], Callable[[NodeParser, re.Match[str]], _Clue]]] = [
    (_IST_UUID, _ist_from),
    (_IST_PREPARED, _ist_range),
    (_SCRIPT_DONE, _script_done),
    (_SCRIPT_STARTED, _method),
    (_SST_REQUEST, _method),
    (_RUNNING_JOINER, _method),
    (_SST_TO_SST, lambda p, m: _Clue(sst=True)),
    (_IST_EVIDENCE, lambda p, m: _Clue(sst=False)),
    (_SELECTED, _selected),
    (_REQUESTING, _requesting),
    (_TRANSFER_FROM, _transfer_from),
    (_OWN_NAME, _own_name),
    (_SST_SERVER_ANNOUNCED, _sst_server_announced),
    (_SST_SERVER_STOPPED, _sst_server_stopped),
]
