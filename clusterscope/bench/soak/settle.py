"""Before a soak's snapshot: wait for a fresh lab to settle.

A lab brought up minutes ago raises alerts of its own start: GaleraNodeRestarted holds for
300 s of a node's uptime, exporters and scrapes warm up. Taken then, the snapshot of what
was active before the run misses what is only pending, and an alert that fires a minute
later reads as the run's (the 31-minute soak failed so). The soak waits until nothing but
the Watchdog, and what the soak's own load or a busy machine keeps true whatever the lab
does (expect.AMBIENT, judged apart), has been pending or firing for SETTLE_QUIET
seconds, and records how long.
"""

from __future__ import annotations

import time

from clusterscope.bench.soak import expect
from clusterscope.lab.core import Lab, LabError

# how long a fresh lab may take to settle: GaleraNodeRestarted holds 300 s after a start
SETTLE_TIMEOUT = 900.0
SETTLE_QUIET = 30.0  # nothing but the Watchdog (and ambient) active this long: settled


def _ambient(alert: dict) -> bool:
    name, labels = alert["alertname"], alert.get("labels") or {}
    if name in expect.ALWAYS:
        return True
    want = expect.AMBIENT.get(name)
    return want is not None and all(labels.get(k) == v for k, v in want[0].items())


def settle(lab: Lab, timeout: float = SETTLE_TIMEOUT) -> dict:
    """Wait until no alert but the Watchdog and the ambient ones is pending or firing for
    SETTLE_QUIET seconds (a fresh lab's own start raises some); what it waited and what
    was still active."""
    from clusterscope.lab import monitoring_part
    t0 = time.monotonic()
    quiet_since: float | None = None
    active: list[str] = []
    while time.monotonic() - t0 < timeout:
        try:
            active = sorted({f"{a['alertname']} {a['state']}"
                             for a in monitoring_part.firing_now(lab) if not _ambient(a)})
        except LabError as exc:
            active = [f"vmalert: {exc}"]
        now = time.monotonic()
        if active:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= SETTLE_QUIET:
            return {"settled": True, "waited_s": round(now - t0), "still_active": []}
        time.sleep(5)
    return {"settled": False, "waited_s": round(time.monotonic() - t0),
            "still_active": active}
