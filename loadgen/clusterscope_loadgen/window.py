"""Is a window a clean measurement? The A/B method's one judgement, as a pure function.

A window counts only if sysbench finished cleanly (exit 0, transactions done, no SQL error,
no reconnect, every thread's commit count reported), the health snapshots of the nodes it
used, taken before and after, show no cluster event (a node unreachable or restarted, a
Galera membership change, a node not Synced) and neither do the polls made while it ran
(nodewatch.py: a state that comes and goes inside the window, such as a state-transfer
donor's Donor/Desynced). Anything else would mix a cluster event into a throughput figure;
such a window is exported and listed with its reasons instead.

What the verdict covers is the time between the snapshots: the window's recorded start is
taken once the snapshot before it has been read and its end before the snapshot after it
is taken (runner.py), so a change the snapshots cannot have seen never lies inside it.
"""

from __future__ import annotations

from clusterscope_loadgen.nodewatch import Seen
from clusterscope_loadgen.sysbench import Result
from clusterscope_loadgen.target import Health


def cluster_events(before: list[Health], after: list[Health]) -> list[str]:
    """What happened to the nodes between two snapshots (empty: nothing)."""
    reasons = []
    for b, a in zip(before, after, strict=True):
        name = f"{b.node.host}:{b.node.port}"
        if not b.reachable or not a.reachable:
            reasons.append(f"node {name} unreachable")
            continue
        if a.uptime < b.uptime:
            reasons.append(f"node {name} restarted")
        if b.conf_id != a.conf_id:
            reasons.append(f"cluster membership changed (seen from {name})")
        for h in (b, a):
            if h.state is not None and h.state != "Synced":
                reasons.append(f"node {name} not Synced ({h.state})")
                break
    return reasons


def seen_events(before: list[Health], seen: Seen) -> list[str]:
    """What the polls inside the window read that the snapshots may have missed."""
    reasons: list[str] = []
    start = {b.node: b for b in before if b.reachable}
    for look in seen.looks:
        b = start.get(look.node)
        name = f"{look.node.host}:{look.node.port}"
        why = None
        if look.state is not None and look.state != "Synced":
            why = f"node {name} not Synced ({look.state}) during the window"
        elif b is not None and b.conf_id is not None and look.conf_id != b.conf_id:
            why = f"cluster membership changed during the window (seen from {name})"
        elif b is not None and look.uptime < b.uptime:
            why = f"node {name} restarted during the window"
        if why and why not in reasons:
            reasons.append(why)
    return reasons


def judge(before: list[Health], after: list[Health], run: Result, threads: int,
          lua_counts: bool, variants: list[str] | tuple[str, ...] = (),
          seen: Seen | None = None) -> list[str]:
    """Why the window is not a clean measurement; empty when it is.

    `lua_counts`: the experiment's Lua scripts report each thread's commits (CSSTAT lines),
    so a thread that did not report means the window's row accounting is incomplete.
    `variants`: the mix the window ran; each must have completed steps (CSVAR lines), or
    its throughput would be no measurement. `seen`: the polls made while it ran.
    """
    reasons = cluster_events(before, after)
    if seen is not None:
        reasons += [r for r in seen_events(before, seen) if r not in reasons]
    if run.exit_code != 0:
        reasons.append("sysbench failed: " + (run.fatal[0] if run.fatal else "?"))
    if run.exit_code == 0 and run.transactions == 0:
        reasons.append("no transaction completed in the window")
    if run.errors:
        reasons.append(f"{run.errors} SQL errors")
    if run.reconnects:
        reasons.append(f"{run.reconnects} reconnects")
    if run.exit_code == 0 and lua_counts and run.threads_reported < threads:
        reasons.append(f"only {run.threads_reported}/{threads} threads reported")
    if run.exit_code == 0 and run.transactions:
        for name in variants:
            if not run.variants.get(name) or not run.variants[name].steps:
                reasons.append(f"variant {name} completed no step")
    return reasons
