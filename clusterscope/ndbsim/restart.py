"""Node restart profiles (NDB 7.5.10 vs 7.6.6) and the plan one simulated restart follows.

Durations come from the field facts (docs/lab.md, "Field facts": 7.5.10 vs 7.6.6, ~60 GB, 8 LDM)
and scale with the scenario's data size, LDM count and disk write speed. 7.5 waits for one
full LCP plus part of the one running when it starts (large variance, grows with data size
and falls with disk write speed); 7.6 waits for a partial local LCP of roughly constant
length (small variance).

The states and columns are the kernel's (mysql/mysql-server
storage/ndb/src/kernel/blocks/dbdih/DbdihMain.cpp, Dbdih::fill_row_with_node_restart_status):
while the master's status is S, the phases before it are filled and the rest are 0; each
column is the elapsed time between two state changes in ms, divided by 1000 on its own, so
the phases add up to a few seconds less than total_restart_secs (node failure to restart
completed), as on a real cluster. secs_for_local_recovery (restore .. index rebuild) is
filled from COPY_FRAGMENTS_STARTED on. Durations here are fractional cluster seconds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ndbinfo_exporter.schema import (
    LOCAL_RECOVERY_PARTS,
    RESTART_PHASES,
    version_tuple,
)

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
    return "7.5" if version_tuple(version) < (7, 6) else "7.6"


def full_lcp_secs(sc: Scenario) -> float:
    return sc.data_gb_per_node * 1e9 / (sc.disk_write_speed_per_ldm * sc.ldm)


@dataclass
class Step:
    status: int  # node_restart_status_int while this step runs (the state under way)
    column: str  # the secs_* phase it fills when done
    secs: float  # cluster seconds


# NodeRecoveryStatus values the simulator acts on (ndbinfo_exporter.schema
# RESTART_STATUS_NAME names them all)
NODE_FAILED, NODE_FAILURE_COMPLETED, ALLOCATED_NODE_ID = 2, 3, 4
COPY_DICT, INCLUDE_NODE, LOCAL_RECOVERY = 10, 11, (12, 13, 14, 15)
COPY_FRAGMENTS_STARTED, WAIT_LCP, WAIT_SUMA_HANDOVER = 16, 17, 18
RESTART_COMPLETED = 19


def plan(sc: Scenario, profile: str, *, initial: bool = False,
         lcp_remaining: float = 0.5, rng: random.Random | None = None) -> list[Step]:
    """The steps of one node restart as the master reports it: failure handling (2, 3), then
    4 .. 18; status 19 once the last step is done."""
    if profile not in PROFILES:
        raise ValueError(f"no restart profile {profile!r}; known: {', '.join(PROFILES)}")
    p = PROFILES[profile]
    r = rng or random.Random()
    size = sc.data_gb_per_node / REF_DATA_GB
    per_ldm = size * REF_LDM / sc.ldm

    def j(x: float) -> float:
        return max(0.0, x * (1 + r.uniform(-p.jitter, p.jitter)))

    def small(lo: float, hi: float) -> float:
        return r.uniform(lo, hi)

    if p.partial_lcp:
        wait_lcp = j(p.local_lcp_secs) + p.cluster_lcp_secs
    else:
        # the LCP that is running must finish, then one full LCP must run
        full = full_lcp_secs(sc)
        wait_lcp = j(full * (1.0 + 0.5 * min(max(lcp_remaining, 0.0), 1.0)))
    restore = 0.0 if initial else j(p.restore * per_ldm)
    redo = 0.0 if initial else j(p.exec_redo * size)
    sync = (j(sc.data_gb_per_node * 1e9 / COPY_FRAGMENT_BPS) if initial else small(0.1, 1.2))
    phases = [  # in the kernel's order: status S runs the phase RESTART_PHASES[S - 2]
        ("to_complete_node_failure", small(1.0, 2.5)),
        ("to_allocate_node_id", small(1.0, 2.5)),
        ("to_include_in_heartbeat_protocol", j(sc.data_memory_gb / TOUCH_MEMORY_GBPS)),
        ("until_wait_for_ndbcntr_master", small(0.1, 1.2)),
        ("wait_for_ndbcntr_master", small(0.1, 1.2)),
        ("to_get_start_permitted", small(0.1, 1.2)),
        ("to_wait_for_lcp_for_copy_meta_data", small(0.1, 1.2) if not p.partial_lcp else 0.0),
        ("to_copy_meta_data", small(1.0, 2.5)),
        ("to_include_node", small(0.1, 1.2)),
        ("starting_node_to_request_local_recovery", small(0.1, 1.2)),
        ("restore_fragments", restore),
        ("undo_disk_data", 0.0),  # no disk-data tables in the scenarios
        ("exec_redo_log", redo),
        ("index_rebuild", j(p.index_rebuild * per_ldm)),
        ("to_synchronize_starting_node", sync),
        ("wait_lcp_for_restart", wait_lcp),
        ("wait_subscription_handover", small(5.0, 6.5)),
    ]
    return [Step(status, column, secs) for status, (column, secs) in enumerate(phases, 2)]


def filled(done: dict[str, float], status: int) -> dict[str, int]:
    """The secs_* columns as the master writes them in `status`: phases done, each
    truncated to whole seconds on its own; for_local_recovery from COPY_FRAGMENTS_STARTED
    on; the rest 0 (Dbdih::fill_row_with_node_restart_status)."""
    out = {p: int(done[p]) for p in RESTART_PHASES if p in done}
    if status >= COPY_FRAGMENTS_STARTED:
        out["for_local_recovery"] = int(sum(done.get(p, 0.0) for p in LOCAL_RECOVERY_PARTS))
    return out


def total(done: dict[str, float]) -> int:
    """total_restart_secs: node failure to restart completed, truncated once (`done` holds
    each phase's raw seconds, never the for_local_recovery aggregate)."""
    return int(sum(done.values()))


def planned_total(steps: list[Step]) -> int:
    return total({s.column: s.secs for s in steps})
