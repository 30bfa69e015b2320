"""Before a soak's snapshot: wait for a fresh lab to settle.

A lab brought up minutes ago raises alerts of its own start: GaleraNodeRestarted holds for
300 s of a node's uptime, exporters and scrapes warm up. Taken then, the snapshot of what
was active before the run misses what is only pending, and an alert that fires a minute
later reads as the run's (the 31-minute soak failed so). A full-length soak waits until
nothing but the Watchdog, and what the soak's own load or a busy machine keeps true
whatever the lab does (expect.AMBIENT, judged apart), has been pending or firing for
SETTLE_QUIET seconds, and records how long.

A short soak (CI, minutes) cannot spend five of them waiting for a node's uptime to pass
300 s. It waits until the lab's start has played out instead: nothing pending (what is
about to fire), and the same alerts firing for SETTLE_QUIET seconds. Those go into the
snapshot whole, labels and all, and the judge reports one that fires again as carried
over, never as the run's; an alert that was not active at the snapshot is judged as
before. What was still firing is recorded (`still_active`).
"""

from __future__ import annotations

import time

from clusterscope.bench.soak import expect
from clusterscope.lab.core import Lab, LabError

# how long a fresh lab may take to settle: GaleraNodeRestarted holds 300 s after a start
SETTLE_TIMEOUT = 900.0
SETTLE_QUIET = 30.0  # nothing but the Watchdog (and ambient) active this long: settled
POLL = 5.0


def _ambient(alert: dict) -> bool:
    name, labels = alert["alertname"], alert.get("labels") or {}
    if name in expect.ALWAYS:
        return True
    want = expect.AMBIENT.get(name)
    return want is not None and all(labels.get(k) == v for k, v in want[0].items())


def settle(lab: Lab, timeout: float = SETTLE_TIMEOUT, steady: bool = False,
           quiet: float = SETTLE_QUIET, poll: float = POLL) -> dict:
    """Wait until no alert but the Watchdog and the ambient ones is pending or firing for
    `quiet` seconds (a fresh lab's own start raises some); `steady`: until none is pending
    and the same ones fire for `quiet` seconds. What it waited and what was active."""
    from clusterscope.lab import monitoring_part
    t0 = time.monotonic()
    since: float | None = None
    seen: frozenset | None = None
    active: list[str] = []
    while time.monotonic() - t0 < timeout:
        try:
            alerts = [a for a in monitoring_part.firing_now(lab) if not _ambient(a)]
            active = sorted({f"{a['alertname']} {a['state']}" for a in alerts})
            # an alert's identity: its name and labels (two nodes' alerts are two)
            now_seen = frozenset((a["alertname"], a["state"],
                                  tuple(sorted((a.get("labels") or {}).items())))
                                 for a in alerts)
            unsettled = (any(a["state"] != "firing" for a in alerts) if steady
                         else bool(alerts))
        except LabError as exc:
            active, now_seen, unsettled = [f"vmalert: {exc}"], frozenset(), True
        now = time.monotonic()
        if unsettled or now_seen != seen:
            since = None if unsettled else now
            seen = now_seen
        elif since is not None and now - since >= quiet:
            return {"settled": True, "waited_s": round(now - t0), "still_active": active}
        time.sleep(poll)
    return {"settled": False, "waited_s": round(time.monotonic() - t0),
            "still_active": active}
