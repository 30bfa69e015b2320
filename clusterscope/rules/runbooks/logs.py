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
