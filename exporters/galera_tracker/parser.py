"""Galera error-log lines -> state changes and completed recoveries: one node's state
machine (what each line holds is read by log_lines.py).

A recovery runs from `Shifting PRIMARY -> JOINER` to `Shifting JOINED -> SYNCED` (the
field definition). Its kind is decided by evidence inside that window: a joiner that
had no usable state (IST prepared from seqno 0 / a zero UUID, "<method> SST completed on
joiner", "Switching to SST") did an SST, even though an IST catch-up follows it in the
same log; otherwise IST evidence ("<method> IST completed", "Running IST", IST prepared
from a real seqno) makes it an IST.

A server starting or stopping inside the window ends the recovery (Aborted), except the
temporary server PXC 8.0's xtrabackup SST runs on the joiner (see log_lines.SST_SERVER_ANNOUNCED).
On Kubernetes the lines arrive wrapped by a log collector or the kubelet; the tracker
unwraps them (galera_tracker.wrapped) before they get here.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from galera_tracker.log_lines import (
    GCS_STATES,
    IST_EVIDENCE,
    IST_PREPARED,
    IST_UUID,
    KEYWORDS,
    MAX_LINE,
    OWN_NAME,
    REQUESTING,
    RUNNING_JOINER,
    SCRIPT_DONE,
    SCRIPT_STARTED,
    SELECTED,
    SERVER_START,
    SERVER_STOP,
    SHIFT,
    SST_REQUEST,
    SST_SERVER_ANNOUNCED,
    SST_SERVER_STOPPED,
    SST_TO_SST,
    TRANSFER_FROM,
    ZERO_UUID,
    parse_timestamp,
)

log = logging.getLogger("galera_tracker")
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
        if now is None or not any(k in line for k in KEYWORDS):
            return []
        started = SERVER_START.search(line) is not None
        if started or SERVER_STOP.search(line):
            return self._server(now, ts, started)
        m = SHIFT.search(line)
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
    (IST_UUID, _ist_from),
    (IST_PREPARED, _ist_range),
    (SCRIPT_DONE, _script_done),
    (SCRIPT_STARTED, _method),
    (SST_REQUEST, _method),
    (RUNNING_JOINER, _method),
    (SST_TO_SST, lambda p, m: _Clue(sst=True)),
    (IST_EVIDENCE, lambda p, m: _Clue(sst=False)),
    (SELECTED, _selected),
    (REQUESTING, _requesting),
    (TRANSFER_FROM, _transfer_from),
    (OWN_NAME, _own_name),
    (SST_SERVER_ANNOUNCED, _sst_server_announced),
    (SST_SERVER_STOPPED, _sst_server_stopped),
]
