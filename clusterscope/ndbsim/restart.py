"""Node restart profiles (NDB 7.5.10 vs 7.6.6) and the plan one simulated restart follows.

Durations come from the field facts (README, "Field facts": 7.5.10 vs 7.6.6, ~60 GB, 8 LDM)
and scale with the scenario's data size, LDM count and disk write speed. 7.5 waits for one
full LCP plus part of the one running when it starts (large variance, grows with data size
and falls with disk write speed); 7.6 waits for a partial local LCP of roughly constant
length (small variance). Every duration is a whole number of cluster seconds, so
secs_for_local_recovery is exactly the sum of its parts and total_restart_secs exactly the
sum of the top-level phases.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ndbinfo_exporter.schema import LOCAL_RECOVERY_PARTS, TOP_LEVEL_PHASES

from clusterscope.ndbsim.scenario import Scenario

REF_DATA_GB = 60.0
REF_LDM = 8
TOUCH_MEMORY_GBPS = 2.7
COPY_FRAGMENT_BPS = 150e6  # initial node restart: rows copied from the live node


@dataclass(frozen=True)
class Profile:
    name: str
    jitter: float  # +- share applied to the data-dependent phases
    restore: float  # seconds at the reference size
    exec_redo: float
    index_rebuild: float
    partial_lcp: bool  # 7.6: wait for a local partial LCP instead of full ones
    local_lcp_secs: float = 124.0
    cluster_lcp_secs: float = 4.0


PROFILES: dict[str, Profile] = {
    "7.5": Profile("7.5", 0.10, restore=111, exec_redo=51, index_rebuild=124, partial_lcp=False),
    "7.6": Profile("7.6", 0.03, restore=135, exec_redo=35, index_rebuild=77, partial_lcp=True),
}

# field-facts totals with the default scenario: what a test or an alert may expect
EXPECTED_TOTAL_RANGE = {"7.5": (900, 1450), "7.6": (385, 440)}


def profile_for(version: str) -> str:
    from ndbinfo_exporter.schema import version_tuple
    return "7.5" if version_tuple(version) < (7, 6) else "7.6"


def full_lcp_secs(sc: Scenario) -> float:
    return sc.data_gb_per_node * 1e9 / (sc.disk_write_speed_per_ldm * sc.ldm)


@dataclass
class Step:
    status: int  # node_restart_status_int while this step runs
    column: str | None  # secs_* suffix it fills when done
    secs: int


def plan(sc: Scenario, profile: str, *, initial: bool = False,
         lcp_remaining: float = 0.5, rng: random.Random | None = None) -> list[Step]:
    """The steps of one node restart as the master reports it (13, 14, 0 .. 11, then 12)."""
    if profile not in PROFILES:
        raise ValueError(f"no restart profile {profile!r}; known: {', '.join(PROFILES)}")
    p = PROFILES[profile]
    r = rng or random.Random()
    size = sc.data_gb_per_node / REF_DATA_GB
    per_ldm = size * REF_LDM / sc.ldm

    def j(x: float) -> int:
        return max(0, round(x * (1 + r.uniform(-p.jitter, p.jitter))))

    def small(lo: float, hi: float) -> int:
        return round(r.uniform(lo, hi))

    if p.partial_lcp:
        wait_lcp = j(p.local_lcp_secs) + round(p.cluster_lcp_secs)
    else:
        # the LCP that is running must finish, then one full LCP must run
        full = full_lcp_secs(sc)
        wait_lcp = j(full * (1.0 + 0.5 * min(max(lcp_remaining, 0.0), 1.0)))
    restore = 0 if initial else j(p.restore * per_ldm)
    redo = 0 if initial else j(p.exec_redo * size)
    sync = (j(sc.data_gb_per_node * 1e9 / COPY_FRAGMENT_BPS) if initial else small(0, 1))
    steps = [
        Step(13, "to_complete_node_failure", small(1, 2)),
        Step(14, "to_allocate_node_id", small(1, 2)),
        Step(0, "to_include_in_heartbeat_protocol", j(sc.data_memory_gb / TOUCH_MEMORY_GBPS)),
        Step(1, "until_wait_for_ndbcntr_master", small(0, 1)),
        Step(2, "wait_for_ndbcntr_master", small(0, 1)),
        Step(3, "to_get_start_permitted", small(0, 1)),
        Step(4, None, 0),
        Step(5, "to_wait_for_lcp_for_copy_meta_data", small(0, 1) if not p.partial_lcp else 0),
        Step(6, "to_copy_meta_data", small(1, 2)),
        Step(7, "to_include_node", small(0, 1)),
        Step(7, "starting_node_to_request_local_recovery", small(0, 1)),
        Step(8, "restore_fragments", restore),
        Step(8, "undo_disk_data", 0),  # no disk-data tables in the scenarios
        Step(8, "exec_redo_log", redo),
        Step(8, "index_rebuild", j(p.index_rebuild * per_ldm)),
        Step(9, "to_synchronize_starting_node", sync),
        Step(10, "wait_lcp_for_restart", wait_lcp),
        Step(11, "wait_subscription_handover", small(5, 6)),
    ]
    return steps


def filled(done: dict[str, int]) -> dict[str, int]:
    """secs_* values for the phases done so far, with the derived sums once known."""
    out = dict(done)
    if all(p in done for p in LOCAL_RECOVERY_PARTS):
        out["for_local_recovery"] = sum(done[p] for p in LOCAL_RECOVERY_PARTS)
    return out


def total(done: dict[str, int]) -> int:
    d = filled(done)
    return sum(d.get(p, 0) for p in TOP_LEVEL_PHASES)
