# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook text for the alerts on log lines (clusterscope/rules/logs.py): Meaning, Impact,
Diagnosis, Mitigation."""

from __future__ import annotations

from clusterscope.rules.runbooks import galera, ndb

LOGS_FIRST = """The lines that fired it, in Grafana's Explore (VictoriaLogs datasource) or from the
toolkit, with the alert's query without its `| stats` part, for example:

```sh
clusterscope logs query '_time:30m {{cluster="<cluster>", component="{component}"}} ~"{pattern}"'
```"""


def first_steps(name: str) -> str:
    rb = RUNBOOKS[name]
    logs = LOGS_FIRST.format(component=rb["component"], pattern=rb["pattern"])
    product = ndb if name.startswith("Ndb") else galera
    return f"{logs}\n\n{product.FIRST_STEPS}"


RUNBOOKS: dict[str, dict[str, str]] = {
    "NdbGcpStop": {
        "component": "ndb_mgmd", "pattern": "GCP Monitor",
        "meaning": "The NDB cluster log reported a global checkpoint (GCP) that is not"
                   " progressing: the GCP monitor warns when a GCP_SAVE (the REDO log written"
                   " to disk) takes more than a minute or a GCP_COMMIT more than 10 seconds"
                   " (`GCP Monitor: GCP_SAVE lag 60 seconds (no max lag)`). This is the GCP"
                   " stop condition; with TimeBetweenEpochsTimeout /"
                   " TimeBetweenGlobalCheckpointsTimeout set, the data nodes holding it back"
                   " are killed once the lag exceeds them.",
        "impact": "Committed transactions are not made durable while the GCP is stuck: a"
                  " cluster crash now loses them. Epochs stall, so NDB replication and event"
                  " subscribers fall behind. If a node is killed, its node group runs on one"
                  " replica.",
        "diagnosis": "- The cluster log around the warning: which node reports the lag, and"
                     " whether a node was then killed (`Forced node shutdown`).\n"
                     "- Disk latency on the data nodes' REDO log directories (a slow or"
                     " full disk is the usual cause: GCP_SAVE waits for the REDO fsync);"
                     " `SELECT * FROM ndbinfo.disk_write_speed_aggregate_node;`.\n"
                     "- Overload: the data nodes' CPU (`ndbinfo.cpustat`) and send buffers"
                     " (`ndbinfo.transporters`), a very large transaction in progress.",
        "mitigation": "Relieve the disk (move REDO to faster storage, stop competing I/O),"
                      " reduce the write load. A node killed by the GCP stop restarts on its"
                      " own (StopOnError=0) or needs `ndbmtd`; watch NdbRestartStuck.",
    },
    "NdbNodeShutdownForced": {
        "component": "ndb_mgmd", "pattern": "Forced node shutdown completed",
        "meaning": "The NDB cluster log reported `Node N: Forced node shutdown completed`:"
                   " data node N stopped on an error (`Caused by error E: '...'`) or a signal"
                   " (`Initiated by signal S`), not because someone asked it to stop (that"
                   " is `Node shutdown completed`).",
        "benign": "a `kill -9` of a data node on purpose (`Initiated by signal 9`).",
        "impact": "The node's node group runs on fewer replicas until it restarts"
                  " (NdbNodeGroupLastReplica pages when one is left). With StopOnError=1"
                  " (the default) the node stays down until started again.",
        "diagnosis": "- The line's error code and text: `ndb_perror E` explains it; 2303/2315"
                     " (killed by other nodes, declared dead) point at heartbeats and the"
                     " network, 2341/2355 at memory, 2806/2807/2808 at the file system.\n"
                     "- The node's own `ndb_N_out.log` and `ndb_N_error.log`, and its trace"
                     " files.\n- The cluster log before it: missed heartbeats, GCP Monitor"
                     " warnings, `Arbitration` lines.",
        "mitigation": "Fix the cause the error names (disk, memory, network), then start the"
                      " node (`ndbmtd`, or `N START` if it runs with `-n`); it restarts"
                      " through its phases (NdbRestartStuck watches them).",
    },
    "NdbArbitrationLost": {
        "component": "ndb_mgmd", "pattern": "Arbitration check lost|Arbitration lost|Network partitioning - no arbitrator",
        "meaning": "The NDB cluster log reported lost arbitration: after node failures or a"
                   " network partition, a set of data nodes could not show that it was the"
                   " surviving part (`Arbitration check lost - less than 1/2 nodes left`,"
                   " `... missing node group`, `Arbitration lost - negative reply from node"
                   " N`, `Network partitioning - no arbitrator available/configured`) and"
                   " shut itself down to avoid a split brain.",
        "impact": "Those data nodes are down. If no part won, the whole cluster is down"
                  " (NdbClusterUnreachable pages); if one won, it runs with fewer replicas.",
        "diagnosis": "- The cluster log around it: which nodes missed heartbeats, which node"
                     " was arbitrator (`Started arbitrator node`, `Lost arbitrator node`).\n"
                     "- The network between the data nodes and to the arbitrator (the"
                     " management node or an SQL node with ArbitrationRank > 0).\n"
                     "- `SELECT * FROM ndbinfo.membership` on a surviving SQL node: the"
                     " president and the arbitrator now.",
        "mitigation": "Restore the network, then start the stopped data nodes. Make sure an"
                      " arbitrator runs on a host apart from the data nodes, so one host's"
                      " loss cannot take both halves' chances away.",
    },
    "GaleraServerAborted": {
        "component": "mariadb", "pattern": "Aborting",
        "meaning": "A node's error log has `[ERROR] Aborting` (MySQL 8 / PXC: `[ERROR]"
                   " [MY-010119] [Server] Aborting`): the server gave up a start or a run on"
                   " an error; the lines just before it name the error.",
        "impact": "The node is down: one member fewer in its Galera cluster. A supervisor that restarts it may loop into the same"
                  " failure, each time with a state transfer.",
        "diagnosis": "- The error log's lines before `Aborting`: a failed SST, a wrong option"
                     " after an upgrade (`unknown variable`), a port in use, InnoDB refusing"
                     " to start, a full disk.\n- `systemctl status` / the container's restart"
                     " count: is it looping?",
        "mitigation": "Fix the error the log names and start the node again; if it fails on"
                      " a state transfer, see GaleraSstFailed.",
    },
    "GaleraSstFailed": {
        "component": "mariadb", "pattern": "State transfer .* failed|WSREP_SST: \\\\[ERROR\\\\]",
        "meaning": "A Galera node's error log has lines of a state transfer that failed or"
                   " was aborted: `State transfer to <joiner> failed` (logged by every"
                   " member), the SST script exiting with an error (`Process completed with"
                   " error: wsrep_sst_...`, `WSREP_SST: [ERROR] ...`) or the joiner giving up"
                   " (`Requesting state transfer failed`, `Failed to receive state"
                   " transfer`).",
        "benign": "a node stopped on purpose while it was receiving an SST.",
        "impact": "The joiner is not in the cluster: one node fewer (GaleraClusterSizeReduced"
                  " follows). A donor that ran out of time or space may also have been"
                  " desynced for the whole attempt. mariadbd aborts after a failed SST and a"
                  " supervisor restarts it into another full SST, so this repeats until the"
                  " cause is fixed.",
        "diagnosis": "- The joiner's and the donor's error logs around the failure: the SST"
                     " method (`wsrep_sst_method`), the donor named, the script's own"
                     " `WSREP_SST: [ERROR]` lines.\n"
                     "- On the joiner: free space in the datadir (an SST needs the whole"
                     " dataset), the SST port (4444) reachable from the donor, the"
                     " `wsrep_sst_auth` / mariabackup account on the donor.\n"
                     "- GaleraRecoveryAborted from the recovery tracker names the same"
                     " attempt.",
        "mitigation": "Fix the cause (space, port, credentials, a donor that is itself"
                      " overloaded: pick another with `wsrep_sst_donor`), then start the"
                      " node again; make sure only one SST runs at a time.",
    },
    "GaleraDiskFull": {
        "component": "mariadb", "pattern": "(?i)no space left on device",
        "meaning": "A Galera node's log reported `No space left on device` (ENOSPC, errno"
                   " 28): a write of the datadir, binary log, gcache or temporary directory"
                   " failed.",
        "impact": "Transactions that need the disk fail or wait (MariaDB waits for space on a"
                  " full disk and keeps retrying); a node that cannot write its gcache or"
                  " InnoDB files leaves the cluster, and an SST to it fails.",
        "diagnosis": "- `df -h` of the node's datadir, `tmpdir`, binary-log and gcache"
                     " directories; the log line names the file.\n"
                     "- What grew: binary logs (`SHOW BINARY LOGS`; `expire_logs_days`),"
                     " gcache pages (`gcache.keep_pages_size`), temporary tables, an SST's"
                     " leftovers.",
        "mitigation": "Free space (purge binary logs with `PURGE BINARY LOGS`, remove stale"
                      " SST/backup directories) or grow the volume; then check the node is"
                      " `Synced` again.",
    },
    "NdbDiskFull": {
        "component": "ndb_mgmd", "pattern": "(?i)no space left on device",
        "meaning": "An NDB node's log (the cluster log, a data node's out log or an SQL"
                   " node's error log) reported `No space left on device` (ENOSPC, errno 28):"
                   " a write of the REDO log, an LCP, a backup or the SQL node's files failed.",
        "impact": "A data node that cannot write its file system shuts down (`The file system"
                  " is full`); LCPs and backups stop; an SQL node cannot write its binary log.",
        "diagnosis": "- `df -h` of the data nodes' DataDir, FileSystemPath, BackupDataDir and"
                     " the SQL nodes' datadir; the line names the file.\n"
                     "- `SELECT * FROM ndbinfo.logspaces;` (REDO) and old backups under"
                     " BackupDataDir.",
        "mitigation": "Free space (old backups, core and trace files) or grow the volume;"
                      " restart a data node that shut down (`ndbmtd`) and watch"
                      " NdbRestartStuck.",
    },
}
