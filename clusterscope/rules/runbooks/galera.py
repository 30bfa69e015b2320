# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook text for the Galera and recovery-tracker alerts: Meaning, Impact, Diagnosis, Mitigation."""

from __future__ import annotations

FIRST_STEPS = """First, on any node that answers:

```sql
SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_cluster_size',
  'wsrep_local_state_comment', 'wsrep_ready', 'wsrep_local_recv_queue_avg',
  'wsrep_flow_control_sent', 'wsrep_flow_control_paused');
```

`wsrep_cluster_status` must be `Primary` before anything is restarted. Logs: each node's
error log (`log_error`; the Debian packages write to the journal / `/var/log/mysql/`, the
Percona Operator to `/var/lib/mysql/mysqld-error.log`), `WSREP:` / `[Galera]` lines."""

RUNBOOKS: dict[str, dict[str, str]] = {
    "GaleraNodeNotReady": {
        "meaning": "A Galera node does not answer (`mysql_up` 0, so its wsrep series are gone),"
                   " its exporter is down, or `wsrep_ready` is OFF.",
        "impact": "The node serves no queries; the cluster runs with one member less.",
        "diagnosis": "- The node's error log (`WSREP:` lines, crash, OOM).\n"
                     "- `SHOW GLOBAL STATUS LIKE 'wsrep_%';` on the node and on the others"
                     " (`wsrep_cluster_size`, `wsrep_cluster_status`).",
        "mitigation": "Restart the node; after a crash recover its position first"
                      " (`mariadbd --wsrep-recover`) so it rejoins by IST.",
    },
    "GaleraNodeOutOfSync": {
        "meaning": "A node has been Joining (1) or Joined (3) for the configured time."
                   " Donor/Desynced (2) is left out on purpose: a donor serving an SST is"
                   " healthy.",
        "impact": "The node does not take writes/reads as a full member; a long state"
                  " transfer is in progress or stuck.",
        "diagnosis": "- `SHOW GLOBAL STATUS LIKE 'wsrep_local_state%';`\n"
                     "- Error log: `Shifting PRIMARY -> JOINER`, SST/IST progress lines;"
                     " `galera_recovery_in_progress`.",
        "mitigation": "Let the transfer finish; if stuck, check the donor's SST script log and"
                      " network, then restart the joiner.",
    },
    "GaleraClusterSizeReduced": {
        "meaning": "`wsrep_cluster_size` is smaller than the number of nodes monitored.",
        "impact": "Less redundancy; with one more loss the cluster may lose quorum.",
        "diagnosis": "- `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size';` on every node\n"
                     "- Which node: GaleraNodeNotReady; error logs for `evicted`/`partitioned`.",
        "mitigation": "Bring the missing node back (IST preferred). Resolves by itself once it"
                      " rejoins.",
    },
    "GaleraFlowControlHigh": {
        "meaning": "Replication was paused by flow control more than the configured fraction"
                   " of the time (rate of `wsrep_flow_control_paused_ns`).",
        "impact": "The whole cluster writes only as fast as its slowest node applies.",
        "diagnosis": "- `wsrep_local_recv_queue`, `wsrep_flow_control_sent` per node: the one"
                     " sending pauses is slow.\n- That node's CPU/disk; `wsrep_slave_threads`.",
        "mitigation": "Fix or offload the slow node; raise `wsrep_slave_threads` or"
                      " `gcs.fc_limit`.",
    },
    "GaleraRecoveryUsedSST": {
        "meaning": "A node that had been a member before rejoined through a full SST where an"
                   " IST from the donor's gcache was expected.",
        "impact": "An SST copies the whole data set (minutes to hours) and may block the donor"
                  " (rsync).",
        "diagnosis": "- Error log: `Shifting PRIMARY -> JOINER`, `IST ... not possible`,"
                     " grastate seqno `-1`.\n- `gcache.size` versus the write volume while"
                     " the node was away.",
        "mitigation": "Recover the position after a crash (`--wsrep-recover`), size"
                      " `gcache.size` to cover the longest expected downtime.",
    },
    "GaleraRecoverySlow": {
        "meaning": "The last recovery of a node (IST or SST) took longer than its threshold.",
        "impact": "The node was out of the cluster longer than planned.",
        "diagnosis": "- `galera_recovery_last_duration_seconds` by kind, method and donor.\n"
                     "- Donor load, network throughput, SST method (rsync blocks the donor).",
        "mitigation": "Prefer mariabackup SST, faster network, bigger gcache (IST instead of"
                      " SST).",
    },
}
