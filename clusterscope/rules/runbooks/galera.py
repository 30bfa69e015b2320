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
    "GaleraExporterDown": {
        "meaning": "The mysqld_exporter that scrapes a Galera node does not answer (`up` 0), or"
                   " one of its collectors fails on the node"
                   " (`mysql_exporter_collector_success{collector=\"collect.global_variables\"}`"
                   " 0: the `collector` label names it), for 2 minutes.",
        "impact": "That node's Galera alerts are blind. A failing `global_variables` silences"
                  " the desync exemption, GaleraConnectionsHigh and GaleraGcacheTooSmall. The"
                  " node itself may be fine.",
        "diagnosis": "- `curl <exporter>/metrics` (or `/probe?target=...` in multi-target mode)"
                     " and the exporter's log (`Error from scraper`, login refused, TLS).\n"
                     "- The exporter account's privileges (global status and variables need"
                     " none; a collector you enabled may).",
        "mitigation": "Restart the exporter, fix its credentials, or disable the collector"
                      " that cannot work (`--no-collect.X`).",
    },
    "GaleraExporterAbsent": {
        "meaning": "A Galera node of the description (clusterscope.yml) has no `up` series in"
                   " the galera job: nothing scrapes it.",
        "impact": "That node's alerts cannot fire; GaleraExporterDown cannot either (no `up`).",
        "diagnosis": "- The inventory's targets: `curl <inventory>/sd/galera` lists the node?\n"
                     "- The collector's targets page (VictoriaMetrics `/targets`): is the"
                     " galera job there, with `http_sd_configs` pointing at the inventory?\n"
                     "- Your own Prometheus: the job must use the inventory's `/sd/galera` (or"
                     " the same targets) with the multi-target relabelling (docs/deploy.md, \"Bring your"
                     " own Prometheus\").",
        "mitigation": "Fix the scrape configuration, or remove the node from clusterscope.yml"
                      " if it is gone for good.",
    },
    "GaleraClusterDown": {
        "meaning": "For 1 minute no node of the cluster answers its mysqld_exporter (`mysql_up`"
                   " 0 on every node, held through exporter restarts of up to 10 minutes), or"
                   " every node that answers is outside a Primary component"
                   " (`wsrep_cluster_status` 0).",
        "impact": "An outage: the cluster takes no reads or writes.",
        "diagnosis": "- On each host: is mysqld running (`systemctl status mariadb`), its error"
                     " log (crash, OOM, `Aborting`).\n"
                     "- On the nodes that run: `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status';`"
                     " and `wsrep_last_committed`.\n"
                     "- `cat /var/lib/mysql/grastate.dat` on every node: `safe_to_bootstrap: 1`"
                     " marks the last one to leave a clean shutdown.",
        "mitigation": "All nodes stopped: start the node with `safe_to_bootstrap: 1` (or, after"
                      " a crash, the highest `wsrep_last_committed` from `mariadbd"
                      " --wsrep-recover`) with `galera_new_cluster`, then the others. Nodes"
                      " running without quorum: see GaleraNonPrimary.",
    },
    "GaleraNonPrimary": {
        "meaning": "A node answers but is not part of the Primary component"
                   " (`wsrep_cluster_status` non-Primary or Disconnected) for 30 s.",
        "impact": "The node refuses queries. When every node is non-Primary the cluster lost"
                  " quorum: no writes anywhere (GaleraClusterDown then pages once for the"
                  " cluster).",
        "diagnosis": "- `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status';` on every node, in"
                     " every site: is any Primary?\n- Error logs: `partitioned`, `evicted`,"
                     " `non-Primary` lines; the network between the nodes first.",
        "mitigation": "Check the network first: a node cut off by a network fault rejoins by"
                      " itself when the network heals, and restarting it after a long split"
                      " forces an SST. Restart it only if it stays non-Primary after the"
                      " network is healthy. If no node is Primary: confirm on every node,"
                      " other sites included, that none is Primary (two Primary components"
                      " diverge for good), then bootstrap the node with the highest"
                      " `wsrep_last_committed` (`SET GLOBAL"
                      " wsrep_provider_options='pc.bootstrap=YES';`) and let the others rejoin.",
    },
    "GaleraDonorFallingBehind": {
        "meaning": "A donor (state 2) has held more than 100 write-sets in its receive queue for"
                   " 5 minutes (the mysqld-mixin's MySQLGaleraDonorFallingBehind).",
        "impact": "After the transfer it must apply the backlog; meanwhile it may send flow"
                  " control and slow the cluster.",
        "diagnosis": "- `wsrep_local_recv_queue`, `wsrep_local_state_comment` on the donor.\n"
                     "- The SST method (rsync blocks the donor; mariabackup does not).",
        "mitigation": "Prefer mariabackup SST and a dedicated donor (`wsrep_sst_donor`); avoid"
                      " write peaks during SSTs.",
    },
    "GaleraRecvQueueHigh": {
        "meaning": "A node (not a donor) has averaged more than 100 write-sets in its receive"
                   " queue over 5 minutes, for 5 minutes (averaged: the queue is sampled once"
                   " per scrape, so a dip in one sample does not restart the wait).",
        "impact": "It applies slower than the cluster writes; flow control will pause everyone.",
        "diagnosis": "- `wsrep_local_recv_queue_avg`, `wsrep_flow_control_sent` on the node.\n"
                     "- Its CPU, disk and `wsrep_slave_threads`.",
        "mitigation": "Raise `wsrep_slave_threads`, fix the node's I/O, or move load away.",
    },
    "GaleraCertificationFailures": {
        "meaning": "Certification failures plus brute-force aborts on a node exceed 1 per second"
                   " for 10 minutes.",
        "impact": "Clients see deadlock errors (1213) and retry: wasted work and latency.",
        "diagnosis": "- `wsrep_local_cert_failures`, `wsrep_local_bf_aborts` per node.\n"
                     "- Which tables: the error log with `wsrep_log_conflicts=ON`.",
        "mitigation": "Send writes for the same rows to one node (a single writer or affinity"
                      " per table), smaller transactions.",
    },
    "GaleraConnectionsHigh": {
        "meaning": "The peak of `Threads_connected` in each 5-minute window has been above"
                   " 80 % of `max_connections` on a node for 5 minutes (PMM's"
                   " mysql_too_many_connections takes the maximum the same way).",
        "impact": "At 100 % new clients get error 1040 (too many connections).",
        "diagnosis": "- `SHOW PROCESSLIST;` (who holds them, sleeping connections).\n"
                     "- Connection pool sizes of the applications.",
        "mitigation": "Fix leaking pools, lower idle timeouts, or raise `max_connections`.",
    },
    "GaleraNodeRestarted": {
        "meaning": "mysqld on the node has been up for less than 5 minutes.",
        "impact": "Informational: caches are cold; check that the restart was planned.",
        "benign": "any planned restart.",
        "diagnosis": "- The error log around the start (crash, OOM killer, `Shutdown`).",
        "mitigation": "If unplanned, find the cause in the error log and the system journal.",
    },
    "GaleraGcacheTooSmall": {
        "meaning": "At the last hour's write rate, the node's gcache holds less than 30 minutes"
                   " of write-sets, for an hour.",
        "impact": "A node down longer than that cannot rejoin by IST and needs a full SST.",
        "diagnosis": "- `mysql_galera_gcache_size_bytes` and the replicated bytes rate; the"
                     " \"Downtime before an SST is needed\" panel.",
        "mitigation": "Raise `gcache.size` (wsrep_provider_options; a restart) to cover the"
                      " longest planned downtime.",
    },
    "GaleraTrackerDown": {
        "meaning": "The recovery tracker does not answer scrapes, or cannot read a node's error"
                   " log (`galera_tracker_log_up` 0), for 5 minutes.",
        "impact": "SST/IST durations are not measured; GaleraRecoverySlow and"
                  " GaleraRecoveryUsedSST cannot fire.",
        "diagnosis": "- The tracker's log and `/metrics`; the log path and its permissions"
                     " (the tracker's user must read the error log).",
        "mitigation": "Fix the log path or permissions, restart the tracker.",
    },
    "GaleraRecoveryAborted": {
        "meaning": "A recovery (SST/IST) of a node ended without reaching SYNCED in the last"
                   " hour.",
        "impact": "The node restarted or fell back during the transfer; it may retry with an"
                  " SST.",
        "diagnosis": "- The node's error log around the transfer (`SST failed`, `IST ... not"
                     " possible`, a restart).",
        "mitigation": "Fix the transfer's cause (disk space, SST auth, network) and let the node"
                      " rejoin.",
    },
    "GaleraNodeNotReady": {
        "meaning": "For 1 minute a Galera node does not answer its mysqld_exporter (`mysql_up`"
                   " 0, so its wsrep series are gone) or answers with `wsrep_ready` OFF. A dead"
                   " mysqld_exporter is GaleraExporterDown, not this.",
        "benign": "a planned restart of the node (silence it for the window).",
        "impact": "The node serves no queries; the cluster runs with one member less.",
        "diagnosis": "- The node's error log (`WSREP:` lines, crash, OOM).\n"
                     "- `SHOW GLOBAL STATUS LIKE 'wsrep_%';` on the node and on the others"
                     " (`wsrep_cluster_size`, `wsrep_cluster_status`).",
        "mitigation": "First check that the other nodes still form a Primary component"
                      " (`wsrep_cluster_status`); if not, see GaleraNonPrimary before restarting"
                      " anything. Then restart the node; after a crash recover its position"
                      " first (`mariadbd --wsrep-recover`) so it rejoins by IST.",
    },
    "GaleraNodeOutOfSync": {
        "meaning": "A node has not been Synced (4) for 5 minutes although nobody desynced it on"
                   " purpose (`wsrep_desync` OFF): Joining (1), Joined (3), or a donor (2)"
                   " serving a transfer that long (the mysqld-mixin's rule).",
        "benign": "a long SST/IST to or from this node (GaleraRecoverySlow tells how long).",
        "impact": "The node does not take writes/reads as a full member; a long state"
                  " transfer is in progress or stuck.",
        "diagnosis": "- `SHOW GLOBAL STATUS LIKE 'wsrep_local_state%';`\n"
                     "- Error log: `Shifting PRIMARY -> JOINER`, SST/IST progress lines;"
                     " `galera_recovery_in_progress`.",
        "mitigation": "Let the transfer finish; if stuck, check the donor's SST script log and"
                      " network, then restart the joiner.",
    },
    "GaleraClusterSizeReduced": {
        "meaning": "For 1 minute the Primary component has fewer members (`wsrep_cluster_size`,"
                   " garbd included) than the description lists for the cluster (its nodes"
                   " and garbd, in clusterscope.yml). A cluster the description does not list"
                   " is compared with the largest size it had in the last day.",
        "benign": "a member removed for good: remove it from clusterscope.yml too.",
        "impact": "Less redundancy; with one more loss the cluster may lose quorum.",
        "diagnosis": "- `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size';` on every node\n"
                     "- Which node: GaleraNodeNotReady; error logs for `evicted`/`partitioned`.",
        "mitigation": "Bring the missing member back (IST preferred). Resolves by itself once"
                      " it rejoins; it does not resolve while the member is missing.",
    },
    "GaleraFlowControlHigh": {
        "meaning": "Replication in the cluster was paused by flow control more than 10 % of the"
                   " time over 5 minutes (rate of `wsrep_flow_control_paused_ns`; every node"
                   " pauses when any node sends FC_PAUSE), for 5 minutes. One alert per"
                   " cluster; its description names the node that sent the most pauses lately"
                   " (`wsrep_flow_control_sent`), or says it is a member that is not monitored"
                   " (garbd, or a node whose exporter is down) when no monitored node sent any.",
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
    "GaleraRecoveryStuck": {
        "meaning": "A node's recovery (IST or SST) began longer ago than the SST threshold"
                   " and has not reached SYNCED: the tracker reads JOINER without SYNCED in"
                   " its error log.",
        "impact": "The node serves nothing while it recovers; the cluster runs a node short,"
                  " and with rsync or mysqldump its donor is blocked too.",
        "diagnosis": "- Joiner's error log: the last `WSREP_SST:` lines and their times;"
                     " `Receiving IST` without `IST received`.\n- Donor's error log and"
                     " state (`SHOW STATUS LIKE 'wsrep_local_state_comment'`: Donor/Desynced"
                     " for as long).\n- Progress: the joiner's datadir growing"
                     " (`du -s`), network throughput between joiner and donor.\n"
                     "- `galera_recovery_started_timestamp_seconds` against the SST's start"
                     " in the log (a tracker restarted mid-recovery keeps the log time).",
        "mitigation": "If the datadir still grows, let it finish and raise"
                      " `galera.recovery_slow_seconds.sst` if this size is normal. If it does"
                      " not: stop the joiner, check the donor's SST script and free disk on"
                      " the joiner, and restart the joiner (choose another donor with"
                      " `wsrep_sst_donor`).",
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
