# ruff: noqa: E501  (PromQL reads better unbroken)
"""The restart baseline by version: after an upgrade, the first restarts are judged against
the version before.

Each completion event also carries the version the data node runs then (`ndb_node_info`:
ndbinfo.processes.node_version, the exporter's `version` label). A restart is compared with
the median of the earlier restarts on the *same* version (the node's own when it has enough
of them, else the cluster's pooled); while there are too few of those (the first restarts
after an upgrade, node by node through a rolling upgrade), with the restarts on the version
the node ran *before* (again its own, else the cluster's). Once the new version has enough
restarts of its own, the baseline re-anchors to them: a version that restarts slower is
called out on its first restarts, not for ever after. A node whose version is not known
(an exporter without `processes`, before 7.5.7) keeps the version-blind baseline.

`cluster_node:ndb_restart_baseline_version:info{version, baseline_version}` says, per
verdict, which version the restart ran and which one it was judged against; its value is
the restart's completion time, so the newest verdict's is the topmost (the alert's
description reads it). A node's previous version is the newest other version it was seen
running (`cluster_node_version:ndb_node_info:seen_timestamp_seconds`, the time each
version was last seen, one series per node and version).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterscope.rules.rule_model import WITHOUT

SEEN = "cluster_node_version:ndb_node_info:seen_timestamp_seconds"
EV_TOTAL = "cluster_node_version:ndb_restart_total_seconds:completion"
EV_PHASE = "cluster_node_phase_version:ndb_restart_phase_seconds:completion"
EV_TIME = "cluster_node_version:ndb_restart_completed_timestamp_seconds:completion"
CL_TOTAL = "cluster_version:ndb_restart_total_seconds:completion"
CL_PHASE = "cluster_phase_version:ndb_restart_phase_seconds:completion"
INFO = "cluster_node:ndb_restart_baseline_version:info"


@dataclass(frozen=True)
class Inputs:
    """What the restart records are built from (rules/ndb_restarts.py)."""

    s: str           # the ndbinfo selector
    window: str      # restart_event_window
    history: str     # restart_history
    need: int        # restart_min_earlier
    total_done: str  # the completed restart's total, per node
    phase_done: str  # its phases, per node and phase
    recent: str      # inside the event window, per node


def current(i: Inputs) -> str:
    """The version each data node runs now: one series per node."""
    info = f'max without (instance, job, type, hostname) (ndb_node_info{{{i.s},type="NDB"}})'
    return f"topk by (cluster, node_id) (1, {info})"


def _versioned(i: Inputs, x: str, keys: str) -> str:
    """`x` with the node's version as a label (x unchanged where the version is unknown)."""
    return f"(({x}) * on (cluster, node_id) group_left (version) {current(i)}) or on ({keys}) ({x})"


def records(i: Inputs) -> list[tuple[str, str]]:
    ev_total = f"({i.total_done}) and on (cluster, node_id) {i.recent}"
    ev_phase = f"({i.phase_done}) and on (cluster, node_id) {i.recent}"
    ev_time = (f"max {WITHOUT} (ndb_restart_last_completed_timestamp_seconds{{{i.s}}})"
               f" and on (cluster, node_id) {i.recent}")
    return [
        # the evaluation time (timestamp() would be the sample's, which VictoriaMetrics
        # answers rounded in instant queries: two versions then look equally recent)
        (SEEN, f"0 * {current(i)} + time()"),
        (EV_TOTAL, _versioned(i, ev_total, "cluster, node_id")),
        (EV_PHASE, _versioned(i, ev_phase, "cluster, node_id, phase")),
        (EV_TIME, _versioned(i, ev_time, "cluster, node_id")),
        # every node's events pooled per version (a rolling restart: one node at a time)
        (CL_TOTAL, f"max without (node_id) ({_versioned(i, ev_total, 'cluster, node_id')})"),
        (CL_PHASE, f"max without (node_id) ({_versioned(i, ev_phase, 'cluster, node_id, phase')})"),
    ]


def _previous(i: Inputs) -> str:
    """The newest other version each node was seen running within the history."""
    return (f"topk by (cluster, node_id) (1, last_over_time({SEEN}[{i.history}])"
            f" unless on (cluster, node_id, version) {current(i)})")


def _base(i: Inputs, which: str, phase: bool) -> str:
    """The baseline for each completed restart from the restarts on version `which` (per
    node, labelled `version` = that version): the node's own median with enough earlier
    restarts on it, else the cluster's pooled median with enough."""
    h, w, need = i.history, i.window, i.need
    keys = "cluster, node_id, phase" if phase else "cluster, node_id"
    rows = (f"(0 * ({i.phase_done if phase else i.total_done})"
            f" + on (cluster, node_id) group_left (version) {which})")
    node_n = f"(changes({EV_TIME}[{h}] offset {w}) + 1)"
    cl_n = f"sum by (cluster, version) {node_n}"
    node_med = (f"(quantile_over_time(0.5, {EV_PHASE if phase else EV_TOTAL}[{h}] offset {w})"
                f" and on (cluster, node_id, version) ({node_n} >= {need}))")
    cl_med = (f"(quantile_over_time(0.5, {CL_PHASE if phase else CL_TOTAL}[{h}] offset {w})"
              f" and on (cluster, version) ({cl_n} >= {need}))")
    on_v = "cluster, version, phase" if phase else "cluster, version"
    return (f"({node_med} and on ({keys}, version) {rows})"
            f" or on ({keys}) ({rows} + on ({on_v}) group_left () {cl_med})")


def baseline(i: Inputs, blind: str, phase: bool = False) -> str:
    """The baseline per completed restart, labelled with the version it comes from: the
    same version's, else the version before's; `blind` (the version-blind baseline) for a
    node whose version is not known."""
    keys = "cluster, node_id, phase" if phase else "cluster, node_id"
    return (f"{_base(i, current(i), phase)} or on ({keys}) {_base(i, _previous(i), phase)}"
            f" or on ({keys}) (({blind}) unless on (cluster, node_id) {current(i)})")


def info(i: Inputs, base: str) -> str:
    """Per verdict: the version the restart ran and the one its baseline comes from; the
    value is its completion time."""
    judged = f'max without (version) (label_replace({base}, "baseline_version", "$1", "version", "(.*)"))'
    return (f"(0 * ({judged}) * on (cluster, node_id) group_left (version) {current(i)})"
            f" + on (cluster, node_id) group_left ()"
            f" max {WITHOUT} (ndb_restart_last_completed_timestamp_seconds{{{i.s}}})"
            f" and on (cluster, node_id) {i.recent}")
