# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""Galera alerts on SST/IST recoveries, from the recovery tracker's series."""

from __future__ import annotations

from clusterscope.rules.rule_model import Alert, Runbook, seconds


def _recovery_used_sst(c: dict) -> Alert:
    g = c["galera"]
    t = c["selectors"]["galera_tracker"]
    return Alert(name="GaleraRecoveryUsedSST",
                 expr=f"(time() - max without (instance, job, method, donor)"
                      f" (galera_recovery_last_end_timestamp_seconds{{{t},kind=\"sst\"}}) < {seconds(g['sst_recent'])})"
                      # a node whose second recovery this is: a donor also returns to SYNCED,
                      # so its state transitions would count a donation as an earlier join
                      f" and on (cluster, node) (sum without (instance, job, kind, method)"
                      f" (galera_recoveries_total{{{t}}}) >= 2)",
                 severity="warning",
                 summary="Galera node {{ $labels.node }} rejoined by full SST",
                 description="Node {{ $labels.node }} had been Synced before and rejoined by a full state"
                             " transfer where an incremental one (IST from the donor's gcache) was expected.",
                 dashboard="galera",
                 runbook=Runbook(
                     meaning="A node that had been a member before rejoined through a full SST where an"
                             " IST from the donor's gcache was expected.",
                     impact="An SST copies the whole data set (minutes to hours) and may block the donor"
                            " (rsync).",
                     diagnosis="- Error log: `Shifting PRIMARY -> JOINER`, `IST ... not possible`,"
                               " grastate seqno `-1`.\n- `gcache.size` versus the write volume while"
                               " the node was away.",
                     mitigation="Recover the position after a crash (`--wsrep-recover`), size"
                                " `gcache.size` to cover the longest expected downtime."))


def _recovery_slow(c: dict) -> Alert:
    t = c["selectors"]["galera_tracker"]
    slow = c["galera"]["recovery_slow_seconds"]
    recent = c["galera"]["recovery_recent"]
    return Alert(name="GaleraRecoverySlow",
                 expr=f"(galera_recovery_last_duration_seconds{{{t},kind=\"ist\"}} > {slow['ist']}"
                      f" or galera_recovery_last_duration_seconds{{{t},kind=\"sst\"}} > {slow['sst']})"
                      f" and on (cluster, node, kind) (time() -"
                      f" galera_recovery_last_end_timestamp_seconds{{{t}}} < {seconds(recent)})",
                 severity="warning",
                 summary="Galera node {{ $labels.node }} {{ $labels.kind }} took"
                         " {{ $value | humanizeDuration }}",
                 description="The last {{ $labels.kind }} recovery of node {{ $labels.node }} (donor"
                             " {{ $labels.donor }}) took {{ $value | humanizeDuration }}, over the"
                             f" threshold (IST {slow['ist']} s, SST {slow['sst']} s).",
                 dashboard="galera",
                 runbook=Runbook(
                     meaning="The last recovery of a node (IST or SST) took longer than its threshold.",
                     impact="The node was out of the cluster longer than planned.",
                     diagnosis="- `galera_recovery_last_duration_seconds` by kind, method and donor.\n"
                               "- Donor load, network throughput, SST method (rsync blocks the donor).",
                     mitigation="Prefer mariabackup SST, faster network, bigger gcache (IST instead of"
                                " SST)."))


def _recovery_stuck(c: dict) -> Alert:
    t = c["selectors"]["galera_tracker"]
    slow = c["galera"]["recovery_slow_seconds"]
    # A recovery that never ends (a hung donor, a transfer stalled on the network) is
    # judged while it runs: GaleraRecoverySlow only sees finished ones.
    # The in-progress series has no kind (IST or SST is known at its end), so the
    # slowest allowed recovery, an SST's, is the bound.
    return Alert(name="GaleraRecoveryStuck",
                 expr=f"time() - galera_recovery_started_timestamp_seconds{{{t}}} > {slow['sst']}"
                      f" and on (cluster, node) galera_recovery_in_progress{{{t}}} == 1",
                 severity="warning",
                 summary="Galera node {{ $labels.node }} has been recovering for"
                         " {{ $value | humanizeDuration }}",
                 description="Node {{ $labels.node }} has been between JOINER and SYNCED for"
                             " {{ $value | humanizeDuration }}, longer than an SST may take"
                             f" ({slow['sst']} s): the state transfer is stalled or far slower than"
                             " planned.",
                 dashboard="galera",
                 runbook=Runbook(
                     meaning="A node's recovery (IST or SST) began longer ago than the SST threshold"
                             " and has not reached SYNCED: the tracker reads JOINER without SYNCED in"
                             " its error log.",
                     impact="The node serves nothing while it recovers; the cluster runs a node short,"
                            " and with rsync or mysqldump its donor is blocked too.",
                     diagnosis="- Joiner's error log: the last `WSREP_SST:` lines and their times;"
                               " `Receiving IST` without `IST received`.\n- Donor's error log and"
                               " state (`SHOW STATUS LIKE 'wsrep_local_state_comment'`: Donor/Desynced"
                               " for as long).\n- Progress: the joiner's datadir growing"
                               " (`du -s`), network throughput between joiner and donor.\n"
                               "- `galera_recovery_started_timestamp_seconds` against the SST's start"
                               " in the log (a tracker restarted mid-recovery keeps the log time).",
                     mitigation="If the datadir still grows, let it finish and raise"
                                " `galera.recovery_slow_seconds.sst` if this size is normal. If it does"
                                " not: stop the joiner, check the donor's SST script and free disk on"
                                " the joiner, and restart the joiner (choose another donor with"
                                " `wsrep_sst_donor`)."))


def _tracker_down(c: dict) -> Alert:
    g = c["galera"]
    t = c["selectors"]["galera_tracker"]
    return Alert(name="GaleraTrackerDown",
                 expr=f"up{{{t}}} == 0 or galera_tracker_log_up{{{t}}} == 0",
                 severity="warning",
                 summary="Galera recovery tracker {{ $labels.instance }} is blind",
                 description="The recovery tracker does not answer scrapes (up 0) or cannot read a node's"
                             f" error log (galera_tracker_log_up 0) for {g['tracker_down_for']}: SST/IST"
                             " durations are not measured.",
                 dashboard="galera",
                 for_=g["tracker_down_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="The recovery tracker does not answer scrapes, or cannot read a node's error"
                             " log (`galera_tracker_log_up` 0), for 5 minutes.",
                     impact="SST/IST durations are not measured; GaleraRecoverySlow and"
                            " GaleraRecoveryUsedSST cannot fire.",
                     diagnosis="- The tracker's log and `/metrics`; the log path and its permissions"
                               " (the tracker's user must read the error log).",
                     mitigation="Fix the log path or permissions, restart the tracker."))


def _recovery_aborted(c: dict) -> Alert:
    t = c["selectors"]["galera_tracker"]
    return Alert(name="GaleraRecoveryAborted",
                 expr=f"increase(galera_recoveries_aborted_total{{{t}}}[1h]) > 0",
                 severity="info",
                 summary="Galera node {{ $labels.node }} had a recovery cut short",
                 description="A recovery of node {{ $labels.node }} ended without reaching SYNCED in the last"
                             " hour (a restart during the transfer, or a fall back to CLOSED/OPEN).",
                 dashboard="galera",
                 runbook=Runbook(
                     meaning="A recovery (SST/IST) of a node ended without reaching SYNCED in the last"
                             " hour.",
                     impact="The node restarted or fell back during the transfer; it may retry with an"
                            " SST.",
                     diagnosis="- The node's error log around the transfer (`SST failed`, `IST ... not"
                               " possible`, a restart).",
                     mitigation="Fix the transfer's cause (disk space, SST auth, network) and let the node"
                                " rejoin."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_recovery_used_sst, _recovery_slow, _recovery_stuck,
                                 _tracker_down, _recovery_aborted)]
