"""PromQL fragments that rules, dashboards, `compare` and the report share.

A fact about NDB (which restart states mean "completed") comes from the exporter's view
catalogue; a choice (which CPU modes count as LDM load) comes from rules/config.yaml. Each
is spelled here once, so a dashboard cannot disagree with the alert it explains.
"""

from __future__ import annotations

from ndbinfo_exporter.schema import RESTART_COMPLETED, RESTART_FAILURE, RESTART_NO_INFO

from clusterscope.rules.rules_config import shared


def _sel(*matchers: str) -> str:
    inner = ", ".join(m for m in matchers if m)
    return f"{{{inner}}}" if inner else ""


def restart_completed(status: str) -> str:
    """`status` (an expression of restart_info.node_restart_status_int values) where the row
    holds a completed restart."""
    return " or ".join(f"{status} == {v}" for v in sorted(RESTART_COMPLETED))


def restart_in_progress(status: str, failure: bool = True) -> str:
    """`status` filtered to restarts under way (neither completed nor "no information");
    `failure=False` also leaves out node failure handling (2-3: the node is down, not
    restarting)."""
    out = RESTART_COMPLETED | RESTART_NO_INFO | (frozenset() if failure else RESTART_FAILURE)
    return status + "".join(f" != {v}" for v in sorted(out))


def restart_status_in(status: str, values: range | tuple[int, ...]) -> str:
    """`status` filtered to the given restart_info.node_restart_status_int values."""
    return " or ".join(f"{status} == {v}" for v in values)


# what the OS accounts to a thread (spinning included): per-thread CPU on the dashboards
OS_MODES = "os_user|os_system"


def thread_cpu_percent(*matchers: str, modes: str = OS_MODES,
                       avg_over: str | None = None) -> str:
    """CPU percent of each block thread, the given cpustat modes summed (each averaged over
    `avg_over` first, if given)."""
    series = "ndb_thread_cpu_percent" + _sel(*matchers, f'mode=~"{modes}"')
    if avg_over:
        series = f"avg_over_time({series}[{avg_over}])"
    return f"sum without (mode) ({series})"


def ldm_cpu_percent(*matchers: str, modes: str | None = None,
                    avg_over: str | None = None) -> str:
    """Load of each LDM thread: the modes the config counts as its work, summed."""
    return thread_cpu_percent(*matchers, 'thread_name="ldm"',
                              modes=modes or shared()["ndb"]["ldm_cpu_modes"],
                              avg_over=avg_over)
