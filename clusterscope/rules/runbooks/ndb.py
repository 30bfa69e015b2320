# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook text for the NDB alerts: Meaning, Impact, Diagnosis, Mitigation."""

from __future__ import annotations

from ndbinfo_exporter.schema import RESTART_STATUS

RESTART_Q = ("SELECT node_id, node_restart_status, total_restart_secs, secs_restore_fragments,"
             " secs_exec_redo_log, secs_index_rebuild, secs_wait_lcp_for_restart"
             " FROM ndbinfo.restart_info;")

FIRST_STEPS = """First, on a management node:

```sh
ndb_mgm -e show               # which data nodes are connected, started, or "not connected"
ndb_mgm -e "ALL STATUS"       # start phase of each data node
ndb_mgm -e "ALL REPORT MEMORY"  # DataMemory / IndexMemory use per data node
```

Logs: the cluster log `ndb_<mgm node id>_cluster.log` in the management node's DataDir; on a
data node's host, in its DataDir, `ndb_<node id>_out.log`, `ndb_<node id>_error.log` and the
trace files `ndb_<node id>_trace.log.<n>` it names (`ndb_error_reporter` collects them all)."""

STATUS_TABLE = "\n".join(
    ["| state | restart_info.node_restart_status |", "|---|---|"]
    + [f"| {k} | {RESTART_STATUS[k]} |" for k in sorted(RESTART_STATUS)])
LCP_Q = ("SELECT node_id, tab_lcp_status, COUNT(*) FROM ndbinfo.table_distribution_status"
         " GROUP BY 1, 2; SELECT SUM(num_lcp_replicas), SUM(no_of_replicas) FROM"
         " ndbinfo.table_fragments;")

RUNBOOKS: dict[str, dict[str, str]] = {
    "NdbRestartTimeRegressed": {
        "meaning": "The latest completed restart of a data node took longer than its baseline"
                   " (the median of the node's earlier completed restarts, or of the whole"
                   " cluster's when the node has too few) by more than the factor and the"
                   " seconds in the description. The `phase` label names the restart_info"
                   " phase that grew most against its own median.",
        "benign": "an `--initial` restart (a full copy: `to_synchronize_starting_node` grew),"
                  " the first restart after a bulk data load.",
        "impact": "While a data node restarts the cluster runs with reduced redundancy; a"
                  " slower restart widens that window (field facts: 6m49s on 7.6 vs 19m11s on"
                  " 7.5 for the same data, mostly the wait for a local checkpoint).",
        "diagnosis": f"- Phase durations of the last restart: `{RESTART_Q}`\n"
                     "- The phases against their medians: \"Phase vs its median\" on the NDB"
                     " restarts dashboard (`cluster_node_phase:ndb_restart_phase_seconds:baseline_median`).\n"
                     "- `wait_lcp_for_restart` grew: check LCP speed (`ndbinfo.disk_write_speed_aggregate`,"
                     " `ndb_lcp_last_duration_seconds`), data size, `MaxDiskWriteSpeed*` settings,"
                     " and whether partial LCP (7.6 `EnablePartialLcp`) is on.\n"
                     "- `index_rebuild` grew: `BuildIndexThreads`, LDM count.\n"
                     "- Cluster log: `Node N: Start phase ...` and `LCP ... completed` lines.",
        "mitigation": "If a configuration or version change came before it, compare against the"
                      " baseline pinned before the change (`clusterscope baseline pin`) and roll"
                      " back or tune (disk write speed for LCPs, partial LCP, index build"
                      " threads). Plan further rolling restarts with the longer window in mind.",
    },
    "NdbRestartTimeAbovePinned": {
        "meaning": "The latest completed restart of a data node took longer than the restart"
                   " time pinned before a change (`clusterscope baseline pin --name NAME`,"
                   " series `clusterscope_pinned_restart_total_seconds`) by the configured"
                   " factor and seconds. Unlike NdbRestartTimeRegressed it keeps comparing with"
                   " the state before the change, also after the rolling median has adapted.",
        "impact": "As NdbRestartTimeRegressed: a longer window with reduced redundancy on every"
                  " restart since the change.",
        "diagnosis": f"- `{RESTART_Q}`\n- Compare with the pinned period: `clusterscope compare"
                     " --before-baseline NAME`.\n- What changed since the pin (version, data"
                     " size, `MaxDiskWriteSpeed*`, partial LCP).",
        "mitigation": "Revert or tune the change; if the new restart time is accepted, pin a new"
                      " baseline.",
    },
    "NdbRestartStuck": {
        "meaning": "A data node's restart state (`node_restart_status_int`, the data node"
                   " kernel's NodeRecoveryStatus) has not changed for 30 minutes, or for 2 hours"
                   " in a state whose length grows with the data (9, the wait for the running"
                   " LCP before the dictionary copy, and 12-17). A node in failure handling"
                   " (2-3) is down, not restarting: that is NdbDataNodeDown.\n\n"
                   + STATUS_TABLE,
        "benign": "a very large node restoring or rebuilding indexes for longer than 2 hours;"
                  " an `--initial` restart copying all data (state 16).",
        "impact": "The node is not serving and redundancy stays reduced until it finishes.",
        "diagnosis": f"- `{RESTART_Q}`\n- `ndb_mgm -e \"N STATUS\"` (start phase)\n"
                     "- The data node's out/error log and the cluster log for the last"
                     " `Start phase` line; states 9 and 17 wait for an LCP:"
                     f" `{LCP_Q}`",
        "mitigation": "If an LCP is progressing, wait. If the node waits for the master or for"
                      " metadata copy, check the other nodes' health and the network. As a last"
                      " resort stop the node and start it with `--initial`, and only if every"
                      " other node of its node group is STARTED (`ndb_mgm -e show`): `--initial`"
                      " discards the node's local data, which is then copied from its partner.",
    },
    "NdbDataNodeDown": {
        "meaning": "A configured data node (ndbinfo.config_nodes) has no row in ndbinfo.nodes,"
                   " and the master's restart_info shows no restart of it under way: it is"
                   " stopped or crashed, or it is waiting at node failure handling (states 2-3)."
                   " A restarting node has no `nodes` row either until its start phase 9 (the"
                   " SQL node reads ndbinfo only from data nodes it is connected to, and a"
                   " starting node accepts API connections in phase 9), so restart_info states"
                   " 4-18 and 20-23 mean \"restarting\", not down. A verdict survives a blind"
                   " spell of up to 10 minutes (the exporter or its SQL node restarting).",
        "benign": "a planned `N STOP` (start a maintenance window: `clusterscope maintenance"
                  " start --cluster C --node N`).",
        "impact": "One replica of its node group is gone; with two replicas per group the"
                  " group has a single node left, which NdbNodeGroupLastReplica pages.",
        "diagnosis": "- `ndb_mgm -e show`: `not connected` (down) or `starting` (a restart"
                     " restart_info does not show, e.g. a version without restart_info).\n"
                     "- On its host: is `ndbmtd` running, its `ndb_<id>_error.log` (the"
                     " error that stopped it) and the trace file it names.\n"
                     "- `SELECT * FROM ndbinfo.restart_info WHERE node_id = N;` on a live SQL"
                     " node (state 3: failure handling completed, waiting for the node).",
        "mitigation": "Start the node (`ndbmtd`), or fix what stops it (disk, memory, config"
                      " mismatch). Watch NdbRestartStuck / NdbRestartTimeRegressed while it"
                      " restarts.",
    },
    "NdbNodeGroupLastReplica": {
        "meaning": "Every data node of a node group but one is down (not running, and not in"
                   " a restart per restart_info). The node groups come from"
                   " `ndbinfo.membership.group_id` (remembered while a node is down by the"
                   " record `cluster_node:ndb_node_group:info`). A node in a planned restart"
                   " counts as live: a rolling restart does not page.",
        "benign": "none: a planned stop of one node of a two-replica group fires it; start a"
                  " maintenance window first (`clusterscope maintenance start`).",
        "impact": "The group's data lives on one node. When it fails, NDB shuts the whole"
                  " cluster down (a node group without a live node makes the data"
                  " incomplete), and a system restart follows.",
        "diagnosis": "- `ndb_mgm -e show`: which nodes of the group are `not connected`.\n"
                     "- `SELECT node_id, group_id FROM ndbinfo.membership;` (the live members).\n"
                     "- The down node's `ndb_<id>_error.log` and the cluster log.",
        "mitigation": "Start the down node(s) now. Until the group has two live nodes again,"
                      " postpone anything risky on the survivor (restarts, upgrades, heavy"
                      " DDL).",
    },
    "NdbClusterUnreachable": {
        "meaning": "The exporter answers but reads nothing of the cluster through any of its"
                   " SQL nodes (`ndb_up` 0 on every exporter, held through blind spells of up"
                   " to 10 minutes): every SQL node is down (`ndb_sql_node_up` 0), or the"
                   " SQL nodes answer but reach no data node (ndbinfo offline, or `Connection"
                   " to NDB failed` when the SQL node lost the cluster).",
        "impact": "An outage: applications going through these SQL nodes cannot use the"
                  " cluster; every other NDB alert is blind.",
        "diagnosis": "- `ndb_mgm -e show` on a management node: are the data nodes `not"
                     " connected` (the cluster is down) or the SQL nodes (API) not"
                     " connected?\n"
                     "- `ndb_sql_node_up` per SQL node; `mysql -h <sql node> -e"
                     " 'SELECT * FROM ndbinfo.nodes'` as the exporter's account.\n"
                     "- The cluster log for `Node N: Forced node shutdown` / `Arbitration`"
                     " lines, and each data node's error log.\n"
                     "- If the cluster and SQL nodes are fine: the exporter's login (`GRANT"
                     " SELECT ON ndbinfo.*`, its password in `secrets/exporters.my.cnf`).",
        "mitigation": "Data nodes down: start them (`ndbmtd` on each host; after a full"
                      " shutdown, all of them, for a system restart). SQL nodes down: start"
                      " mysqld. SQL nodes disconnected: check the network to the data nodes"
                      " and `ndb-connectstring`.",
    },
    "NdbLcpStalled": {
        "meaning": "No local checkpoint completed and no fragment replica was checkpointed"
                   " (`ndb_lcp_id` and `ndb_lcp_fragment_replicas_remaining` both flat) for 30"
                   " minutes, while an LCP runs or while the data nodes wrote more REDO than"
                   " starts one (64 MiB; the default TimeBetweenLocalCheckpoints starts an LCP"
                   " after 4 MB). When the last LCP took long, the window is 3 times its"
                   " duration (1 h, 2 h, up to 4 h), so a large node's healthy LCP, or one"
                   " large fragment being checkpointed, is not a stall.",
        "benign": "none with real write traffic: an idle cluster does not fire.",
        "impact": "The REDO log cannot be trimmed and fills up (then writes fail, error 410);"
                  " node restarts wait for an LCP and get slow.",
        "diagnosis": f"- Tables per LCP state and replicas still to checkpoint: `{LCP_Q}`\n"
                     "- `ndb_mgm -e \"ALL CLUSTERLOG CHECKPOINT=8\"` to log LCP start/complete"
                     " lines in the cluster log.\n"
                     "- `ndbinfo.disk_write_speed_aggregate` (LCP write speed, slowdowns);"
                     " disk latency on the data nodes.",
        "mitigation": "Fix disk I/O problems; raise `MinDiskWriteSpeed`/`MaxDiskWriteSpeed`"
                      " if LCPs are throttled; reduce write load until LCPs complete."
                      " `ndb_mgm -e \"ALL DUMP 7099\"` starts an LCP by hand (use with care).",
    },
    "NdbRedoLogFilling": {
        "meaning": "The fullest REDO log part of a data node has been more than 80 % used for"
                   " 5 minutes.",
        "impact": "At 100% the node rejects writes with temporary error 410 (REDO log files"
                  " overloaded).",
        "diagnosis": "- `SELECT * FROM ndbinfo.logspaces WHERE log_type = 'REDO';`\n"
                     "- LCP progress (NdbLcpStalled) and `ndb_lcp_last_duration_seconds`.",
        "mitigation": "Let LCPs catch up (disk speed), lower the write rate, or add REDO space"
                      " (`NoOfFragmentLogFiles`, `FragmentLogFileSize`; rolling --initial).",
    },
    "NdbLdmCpuSaturated": {
        "meaning": "The busiest LDM thread of a data node averaged more than 90 % CPU over 5"
                   " minutes, for 10 minutes (exec + send + buffer_full: its work, without"
                   " spinning).",
        "impact": "LDM threads execute the data operations; a saturated one caps throughput"
                  " and raises latency for its partitions.",
        "diagnosis": "- `SELECT * FROM ndbinfo.cpustat c JOIN ndbinfo.threads t USING"
                     " (node_id, thr_no) WHERE t.thread_name = 'ldm';`\n"
                     "- Uneven load across LDM threads points at hot partitions.",
        "mitigation": "Spread load (more partitions, `PARTITION_BALANCE`), add LDM threads"
                      " (`ThreadConfig`/`AutomaticThreadConfig`), or add node groups.",
    },
    "NdbTransporterOverloaded": {
        "meaning": "A transporter between two nodes reports overload (send buffer full) for 2"
                   " minutes, or went into overload more than 3 times in 10 minutes.",
        "impact": "Operations to that node are delayed or fail with temporary errors.",
        "diagnosis": "- `SELECT * FROM ndbinfo.transporters;` (overloaded, slowdown columns)\n"
                     "- `ndbinfo.transporter_details` send buffer use (8.0.37+); network"
                     " throughput and errors between the hosts.",
        "mitigation": "Raise `SendBufferMemory`/`TotalSendBufferMemory`, fix the network,"
                      " or reduce batch sizes.",
    },
    "NdbUndoLogFilling": {
        "meaning": "The disk data UNDO log (the logfile group's space, `log_type = 'DD-UNDO'`)"
                   " of a data node has been more than 80 % used for 5 minutes.",
        "impact": "When it is full, transactions on disk data tables abort until an LCP frees"
                  " UNDO space.",
        "diagnosis": "- `SELECT * FROM ndbinfo.logspaces WHERE log_type = 'DD-UNDO';`\n"
                     "- LCP progress (NdbLcpStalled): UNDO is freed by LCPs.",
        "mitigation": "Add an UNDO file (`ALTER LOGFILE GROUP ... ADD UNDOFILE`), let LCPs"
                      " catch up, lower the disk data write rate.",
    },
    "NdbDataMemoryHigh": {
        "meaning": "A data node has used more than 90 % of its DataMemory"
                   " (`ndbinfo.memoryusage`, `Data memory`) for 5 minutes.",
        "impact": "When DataMemory is full, inserts and updates that need memory fail with"
                  " error 827 (table is full).",
        "diagnosis": "- `ndb_mgm -e \"ALL REPORT MEMORY\"`\n"
                     "- `SELECT node_id, memory_type, used, total FROM ndbinfo.memoryusage;`\n"
                     "- The largest tables: `SELECT * FROM ndbinfo.memory_per_fragment ORDER"
                     " BY fixed_elem_alloc_bytes + var_elem_alloc_bytes DESC LIMIT 20;`",
        "mitigation": "Delete or archive data, move large columns to disk data, raise"
                      " `DataMemory` (rolling restart) or add node groups.",
    },
    "NdbTransactionMemoryHigh": {
        "meaning": "A data node has used more than 90 % of the pages its TRANSACTION_MEMORY"
                   " resource may take (`ndbinfo.resources`: used over max; a max of 0 means"
                   " no limit of its own and is left out) for 5 minutes.",
        "impact": "Operations and transactions need TransactionMemory; when it is exhausted"
                  " they fail with temporary errors (out of operation records / transaction"
                  " memory) and large transactions abort.",
        "diagnosis": "- `SELECT node_id, resource_name, reserved, used, max FROM"
                     " ndbinfo.resources WHERE resource_name = 'TRANSACTION_MEMORY';`\n"
                     "- Large or long transactions: `SELECT * FROM ndbinfo.cluster_transactions"
                     " ORDER BY outstanding_operations DESC LIMIT 20;`",
        "mitigation": "Split large transactions (batch deletes and updates), raise"
                      " `TransactionMemory` (rolling restart), or find the client that holds"
                      " transactions open.",
    },
    "NdbTransporterDisconnected": {
        "meaning": "A data node has had no connection to another data node that runs, for 2"
                   " minutes (`ndbinfo.transporters` status not CONNECTED).",
        "impact": "The two nodes cannot exchange signals: transactions between them fail,"
                  " and the cluster may soon shut one of them out (heartbeat failure).",
        "diagnosis": "- `SELECT node_id, remote_node_id, status, remote_address FROM"
                     " ndbinfo.transporters WHERE status != 'CONNECTED';`\n"
                     "- Network between the hosts (firewall, MTU, TLS certificates when"
                     " `encrypted`); both nodes' out logs.",
        "mitigation": "Fix the network path or the TLS configuration; if one node is cut off"
                      " for good, restart it.",
    },
    "NdbArbitratorLost": {
        "meaning": "A started data node has had no connected arbitrator for 2 minutes"
                   " (`ndbinfo.membership`: `arb_connected` No, or no arbitrator at all).",
        "benign": "a cluster configured with `Arbitration=Disabled` or `WaitExternal` never has"
                  " one: silence the alert for that cluster (`amtool silence add"
                  " alertname=NdbArbitratorLost cluster=<name>`). The arbitration mode is in"
                  " `ndbinfo.config_values`, which no collector reads yet.",
        "impact": "A node failure that needs arbitration shuts the survivors down too. With"
                  " one node group (two data nodes) that is every single node failure: the"
                  " survivor holds half the nodes and cannot win arbitration alone, so it"
                  " shuts down and the cluster is gone. With more node groups, a network"
                  " split that an arbitrator would have settled takes the whole cluster down.",
        "diagnosis": "- `SELECT node_id, president, arbitrator, arb_state, arb_connected,"
                     " connected_rank1_arbs, connected_rank2_arbs FROM ndbinfo.membership;`\n"
                     "- `ndb_mgm -e show`: are the management nodes (ArbitrationRank 1)"
                     " connected?\n"
                     "- The cluster log (`ndb_<mgm id>_cluster.log`): `Arbitration` lines say"
                     " which arbitrator was lost and whether a new one was chosen.",
        "mitigation": "Start or reconnect the management node (or an API node with"
                      " ArbitrationRank > 0) now, before a data node fails; check the network"
                      " between it and the data nodes. The alert resolves once every started"
                      " node reports a connected arbitrator.",
    },
    "NdbVersionMismatch": {
        "meaning": "The data nodes have run more than one software version, or more than one"
                   " configuration generation, for 2 hours.",
        "impact": "Usually a rolling upgrade or configuration change left half done: restart"
                  " behaviour and features differ by node, and the next change starts from"
                  " an unclear state.",
        "benign": "a rolling upgrade that takes longer than 2 hours.",
        "diagnosis": "- `SELECT node_id, node_type, node_version FROM ndbinfo.processes;`\n"
                     "- `SELECT node_id, config_generation FROM ndbinfo.nodes;`\n"
                     "- `ndb_mgm -e show` (versions per node).",
        "mitigation": "Finish the rolling restart (the nodes still on the old version or"
                      " configuration), or roll back.",
    },
    "NdbExporterAbsent": {
        "meaning": "An NDB cluster of the description (clusterscope.yml) has no `up` series in"
                   " the ndbinfo job: no scrape of `/probe?cluster=<name>` covers it.",
        "impact": "That cluster's NDB monitoring is blind, and NdbExporterDown cannot fire (no"
                  " `up` series).",
        "diagnosis": "- The inventory's targets: `curl <inventory>/sd/ndbinfo` lists the"
                     " cluster?\n- The scrape configuration (`compose/config/scrape.yml` or"
                     " your vmagent/Prometheus config) and the collector's targets page.",
        "mitigation": "Restore the scrape job (http_sd from the inventory, with the"
                      " multi-target relabelling), or remove the cluster from clusterscope.yml.",
    },
    "NdbSqlNodeDown": {
        "meaning": "An SQL node of the cluster has not answered the exporter (connection"
                   " refused, login failed, or lost) for 2 minutes (`ndb_sql_node_up` 0).",
        "impact": "Monitoring goes on through another SQL node when one answers"
                  " (`ndb_sql_node_serving`); applications that connect to this SQL node fail,"
                  " and with it down the cluster has one API node less.",
        "diagnosis": "- `mysqladmin -h <sql node> ping`; its error log.\n"
                     "- `ndb_mgm -e show`: is the SQL node (an API node id) connected?\n"
                     "- `mysql_up{job=\"ndb_sql\"}` and `mysql_global_status_ndb_api_*` of that"
                     " node (mysqld_exporter probes it too).",
        "mitigation": "Restart mysqld on that host; check the exporter account's password"
                      " there (each SQL node has its own user table).",
    },
    "NdbExporterSlow": {
        "meaning": "Scrapes of ndbinfo_exporter took more than 3 s (its budget is the scrape"
                   " timeout, 4 s, minus 0.5 s; VictoriaMetrics drops a scrape past its timeout,"
                   " so a longer one is never stored), or its queries hit `--query.timeout`,"
                   " for 10 minutes.",
        "impact": "Near the scrape timeout whole scrapes are lost; a collector cut at its"
                  " timeout drops its metrics (LCP progress, CPU, ...).",
        "diagnosis": "- `ndb_exporter_collector_duration_seconds` per collector;"
                     " `ndb_exporter_collector_timeouts_total`.\n"
                     "- Schema size (per-fragment views grow with tables x fragments); SQL"
                     " node load.",
        "mitigation": "Raise `--scrape.slow-interval` for the per-fragment collectors, raise"
                      " `--query.timeout`, or disable a collector (`--no-collect.X`).",
    },
    "NdbSqlNodeDisconnected": {
        "meaning": "An NDB SQL node answers (mysqld_exporter's `mysql_up` 1, job `ndb_sql`) but"
                   " is connected to no ready data node (`Ndb_number_of_ready_data_nodes` 0)"
                   " for a minute.",
        "impact": "Every query on NDB tables through this SQL node fails; applications"
                  " connected to it see errors while the other SQL nodes may work.",
        "diagnosis": "- `SHOW GLOBAL STATUS LIKE 'Ndb_%';` on it (`Ndb_cluster_node_id`,"
                     " `Ndb_config_from_host`).\n"
                     "- `ndb_mgm -e show`: is its API node id connected?\n"
                     "- Its error log: `NDB: ... connection` lines; the network to the data"
                     " nodes and to the management node.",
        "mitigation": "Fix the network or the `ndb-connectstring`; a free API slot in the"
                      " cluster configuration; restart the mysqld if it does not reconnect.",
    },
    "NdbExporterDown": {
        "meaning": "No scrape of ndbinfo_exporter for this cluster succeeds (`up` 0 on every"
                   " exporter that probes it). A cluster the exporter answers for but cannot"
                   " read is NdbClusterUnreachable, not this.",
        "impact": "NDB monitoring of the cluster is blind; its other NDB warnings are held"
                  " back (an inhibition), critical alerts never are.",
        "diagnosis": "- `curl http://<exporter>/metrics`; the exporter's log (`docker compose"
                     " logs ndbinfo-exporter`).\n"
                     "- VictoriaMetrics' `/targets`: the `ndbinfo` job's last error.",
        "mitigation": "Restart the exporter; fix what stops it (its option file, the"
                      " description it reads, memory).",
    },
    "NdbExporterCollectorFailing": {
        "meaning": "One collector of ndbinfo_exporter has failed on every scrape for 5 minutes"
                   " although the SQL node answers (`ndb_up` 1) and its view exists in this NDB"
                   " version.",
        "impact": "That collector's metrics (and the alerts built on them) are missing.",
        "diagnosis": "- The exporter log for the collector's error (timeout, privilege).\n"
                     "- `ndb_exporter_collector_timeouts_total`, `ndb_exporter_collector_duration_seconds`.",
        "mitigation": "Grant SELECT on the view, raise `--query.timeout`, or disable the"
                      " collector (`--no-collect.X`).",
    },
    "NdbTableFillingDataMemory": {
        "meaning": "A table's memory on a data node (its rows' fixed- and var-size parts and"
                   " hash index, with its unique indexes and blob part tables:"
                   " `ndb_table_memory_allocated_bytes` from ndbinfo.memory_per_fragment)"
                   " grew over the trend window at a pace that, continued over the horizon,"
                   " needs more than the node's free DataMemory. The alert names the table.",
        "benign": "a one-off bulk load that has finished (the trend flattens and the alert"
                  " resolves); a table that is purged on a schedule.",
        "impact": "When DataMemory is full, inserts into every table of the node group fail"
                  " with error 827 (table is full), not only into this one.",
        "diagnosis": "- The biggest tables: `SELECT COALESCE(parent_fq_name, fq_name) AS tbl,"
                     " node_id, SUM(fixed_elem_alloc_bytes + var_elem_alloc_bytes +"
                     " hash_index_alloc_bytes) AS bytes FROM ndbinfo.memory_per_fragment"
                     " GROUP BY tbl, node_id ORDER BY bytes DESC LIMIT 10;` (the NDB data node"
                     " dashboard's \"Memory per table\" shows the same).\n"
                     "- The node's DataMemory: `SELECT node_id, used, total FROM"
                     " ndbinfo.memoryusage WHERE memory_type = 'Data memory';`\n"
                     "- What writes the table (application, replication, a job), and whether"
                     " free space inside its pages (`ndb_table_memory_free_bytes`) is large:"
                     " var-size space freed by deletes is reused by the table only.",
        "mitigation": "Delete or archive old rows; move large non-indexed columns to disk data"
                      " (`STORAGE DISK` in a tablespace); `OPTIMIZE TABLE` to give var-size"
                      " free space back; raise `DataMemory` (a rolling restart) or add node"
                      " groups and `ALTER TABLE ... REORGANIZE PARTITION` the table.",
    },
    "NdbLongTransaction": {
        "meaning": "An open transaction coordinated by the data node's TC has done nothing"
                   " for longer than the threshold"
                   " (`ndb_transaction_inactive_seconds_max`, from"
                   " ndbinfo.cluster_transactions.inactive_seconds: seconds since the TC last"
                   " saw it active; ndbinfo has no transaction age). Its client opened it and"
                   " went quiet without committing or rolling back.",
        "benign": "an interactive session left in the middle of a transaction on purpose"
                  " (still holding locks: it is not harmless).",
        "impact": "The transaction keeps its row locks: every other transaction touching"
                  " those rows waits and aborts after TransactionDeadlockDetectionTimeout"
                  " (error 266); NdbLockWaits usually fires too. NDB does not end it by itself"
                  " (TransactionInactiveTimeout is off by default).",
        "diagnosis": "- Which one and whose: `SELECT node_id, transid, state, count_operations,"
                     " inactive_seconds, client_node_id FROM ndbinfo.cluster_transactions"
                     " ORDER BY inactive_seconds DESC LIMIT 5;`\n"
                     "- On each SQL node (client_node_id is its node id): `SELECT"
                     " mysql_connection_id, inactive_seconds FROM ndbinfo.server_transactions"
                     " ORDER BY inactive_seconds DESC;` then `SHOW PROCESSLIST` for that"
                     " connection's user, host and last statement.\n"
                     "- The rows it holds: `SELECT * FROM ndbinfo.cluster_locks WHERE transid ="
                     " <transid>;`",
        "mitigation": "`KILL <mysql_connection_id>` on that SQL node (the transaction rolls"
                      " back and its locks go); fix the application's transaction handling;"
                      " consider `TransactionInactiveTimeout` so NDB aborts idle transactions.",
    },
    "NdbLockWaits": {
        "meaning": "On average more row lock requests than the threshold were waiting for a"
                   " lock held by another transaction over the window (`ndb_locks` with"
                   " state waiting, from ndbinfo.cluster_locks).",
        "benign": "a short burst on a hot row during a batch job.",
        "impact": "Waiting transactions are slow, and those waiting longer than"
                  " TransactionDeadlockDetectionTimeout (1.2 s by default) abort with error"
                  " 266: the application sees timeouts and retries.",
        "diagnosis": "- Who waits for whom: `SELECT w.node_id, w.tableid, w.rowid,"
                     " w.duration_millis AS waited_ms, h.transid AS holder, h.duration_millis"
                     " AS held_ms FROM ndbinfo.cluster_locks w JOIN ndbinfo.cluster_locks h"
                     " ON h.node_id = w.node_id AND h.block_instance = w.block_instance AND"
                     " h.lock_num = w.waiting_for WHERE w.state = 'W';`\n"
                     "- The holder's session: ndbinfo.server_locks / server_transactions on"
                     " each SQL node (mysql_connection_id), then `SHOW PROCESSLIST`.\n"
                     "- Tables with the most waits since the nodes started: `SELECT fq_name,"
                     " SUM(ex_wait_ok + sh_wait_ok + ex_wait_fail + sh_wait_fail) AS waits FROM"
                     " ndbinfo.locks_per_fragment GROUP BY fq_name ORDER BY waits DESC LIMIT"
                     " 5;`\n- NdbLongTransaction: an idle transaction holding rows.",
        "mitigation": "Kill a holder that is idle (NdbLongTransaction's runbook); otherwise"
                      " shorten the application's transactions or spread writes away from hot"
                      " rows (counters, queues in one row).",
    },
    "NdbDiskPageBufferHitRatioLow": {
        "meaning": "Of the data node's disk data page requests over 5 minutes, fewer than the"
                   " threshold found their page in the disk page buffer (direct returns over"
                   " all requests, ndbinfo.diskpagebuffer), with enough requests to matter.",
        "benign": "the first minutes after a node restart (the buffer is cold); a one-off"
                  " scan over a large disk data table.",
        "impact": "Requests that miss wait for a disk read: queries on disk data columns get"
                  " slower, and LDM threads wait for I/O.",
        "diagnosis": "- Per node: `SELECT node_id, SUM(page_requests_direct_return) AS hits,"
                     " SUM(page_requests_wait_queue) AS queued, SUM(page_requests_wait_io) AS"
                     " misses, SUM(pages_read) FROM ndbinfo.diskpagebuffer GROUP BY node_id;`"
                     " twice, a minute apart.\n"
                     "- The buffer's size: `DiskPageBufferMemory` (ndbinfo.config_values) and"
                     " `SELECT * FROM ndbinfo.resources WHERE resource_name ="
                     " 'DISK_PAGE_BUFFER';`\n"
                     "- Disk read latency (8.0.19+): the \"Disk data latency\" of"
                     " `ndb_disk_data_latency_seconds` (ndbinfo.pgman_time_track_stats).",
        "mitigation": "Raise `DiskPageBufferMemory` (a rolling restart); keep hot, frequently"
                      " read columns in memory rather than on disk; avoid full scans of disk"
                      " data tables at peak times.",
    },
    "NdbCommitLatencyRegressed": {
        "meaning": "A percentile of transaction latency (begin to commit ACK, as the data"
                   " node's TCs measure it: `ndb_tc_latency_seconds{activity=\"transaction\"}`"
                   " from ndbinfo.tc_time_track_stats) is several times its own median over"
                   " the baseline window before, and grew by more than the minimum, with real"
                   " traffic.",
        "benign": "a deliberate change of workload (bigger transactions); a node restart or an"
                  " LCP at the start of a busy period.",
        "impact": "Every application transaction through that TC takes longer; client-side"
                  " timeouts and queueing follow.",
        "diagnosis": "- Which activity moved: the overview's \"Commit latency\" panel, and"
                     " `ndb_tc_latency_seconds` for read_key, write_key and scan (key"
                     " operations on the data node that executes them).\n"
                     "- Usual causes, each with its own panel or alert: LDM threads saturated"
                     " (NdbLdmCpuSaturated), lock waits (NdbLockWaits), REDO or LCP pressure"
                     " (NdbRedoLogFilling, disk write speed slowdowns), overloaded"
                     " transporters, a node restarting.\n"
                     "- Raw ranges: `SELECT node_id, upper_bound, SUM(transactions) FROM"
                     " ndbinfo.tc_time_track_stats GROUP BY node_id, upper_bound;` twice, a"
                     " minute apart (the counts are cumulative).",
        "mitigation": "Address the cause found (CPU, locks, disk, network); if the new latency"
                      " is the new normal, the baseline adapts within its window.",
    },
}
