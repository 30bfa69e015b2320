# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook text for the NDB alerts: Meaning, Impact, Diagnosis, Mitigation."""

from __future__ import annotations

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

RUNBOOKS: dict[str, dict[str, str]] = {
    "NdbRestartTimeRegressed": {
        "meaning": "The latest completed restart of a data node took longer than its baseline"
                   " (the median of its earlier completed restarts) by the configured factor"
                   " and by at least the configured number of seconds. The `phase` label names"
                   " the restart_info phase that grew most against its own median.",
        "impact": "While a data node restarts the cluster runs with reduced redundancy; a"
                  " slower restart widens that window (field facts: 6m49s on 7.6 vs 19m11s on"
                  " 7.5 for the same data, mostly the wait for a local checkpoint).",
        "diagnosis": f"- Phase durations of the last restart: `{RESTART_Q}`\n"
                     "- Compare with `cluster_node_phase:ndb_restart_phase_seconds:baseline_median`"
                     " on the NDB restarts dashboard.\n"
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
        "meaning": "A data node's restart state (`node_restart_status_int`) has not changed for"
                   " the configured time.",
        "impact": "The node is not serving and redundancy stays reduced until it finishes.",
        "diagnosis": f"- `{RESTART_Q}`\n- `SELECT * FROM ndbinfo.nodes;` (start_phase)\n"
                     "- The data node's out/error log and the cluster log for the last"
                     " `Start phase` line; status 10 (WAIT_LCP_FOR_RESTART) waits for an LCP:"
                     " check `ndbinfo.tab_lcp_status`.",
        "mitigation": "If an LCP is progressing, wait. If the node waits for the master or for"
                      " metadata copy, check the other nodes' health and the network. As a last"
                      " resort stop the node and start it with `--initial` (full copy).",
    },
    "NdbDataNodeDown": {
        "meaning": "A data node is not in status STARTED (ndbinfo.nodes).",
        "impact": "One replica of its node group is gone; another failure in the same node"
                  " group takes the cluster down.",
        "diagnosis": "- `SELECT node_id, status, start_phase FROM ndbinfo.nodes;`\n"
                     "- `ndb_mgm -e show`; the node's error log and trace files.",
        "mitigation": "Start the node (`ndbmtd`), or fix what stops it (disk, memory, config"
                      " mismatch). Watch NdbRestartStuck / NdbRestartTimeRegressed while it"
                      " restarts.",
    },
    "NdbLcpStalled": {
        "meaning": "The local checkpoint id has not advanced for the configured time while the"
                   " cluster keeps writing.",
        "impact": "The REDO log cannot be trimmed and fills up (then writes fail, error 410);"
                  " node restarts wait for an LCP and get slow.",
        "diagnosis": "- `SELECT * FROM ndbinfo.tab_lcp_status WHERE lcp_state != 'COMPLETED';`\n"
                     "- `ndbinfo.disk_write_speed_aggregate` (LCP write speed, slowdowns)\n"
                     "- Cluster log `LCP` lines; disk latency on the data nodes.",
        "mitigation": "Fix disk I/O problems; raise `MinDiskWriteSpeed`/`MaxDiskWriteSpeed`"
                      " if LCPs are throttled; reduce write load until LCPs complete.",
    },
    "NdbRedoLogFilling": {
        "meaning": "A REDO log part of a data node is more than the configured fraction used.",
        "impact": "At 100% the node rejects writes with temporary error 410 (REDO log files"
                  " overloaded).",
        "diagnosis": "- `SELECT * FROM ndbinfo.logspaces WHERE log_type = 'REDO';`\n"
                     "- LCP progress (NdbLcpStalled) and `ndb_lcp_last_duration_seconds`.",
        "mitigation": "Let LCPs catch up (disk speed), lower the write rate, or add REDO space"
                      " (`NoOfFragmentLogFiles`, `FragmentLogFileSize`; rolling --initial).",
    },
    "NdbLdmCpuSaturated": {
        "meaning": "The busiest LDM thread of a data node has been above the CPU threshold.",
        "impact": "LDM threads execute the data operations; a saturated one caps throughput"
                  " and raises latency for its partitions.",
        "diagnosis": "- `SELECT * FROM ndbinfo.cpustat c JOIN ndbinfo.threads t USING"
                     " (node_id, thr_no) WHERE t.thread_name = 'ldm';`\n"
                     "- Uneven load across LDM threads points at hot partitions.",
        "mitigation": "Spread load (more partitions, `PARTITION_BALANCE`), add LDM threads"
                      " (`ThreadConfig`/`AutomaticThreadConfig`), or add node groups.",
    },
    "NdbTransporterOverloaded": {
        "meaning": "A transporter between two nodes reports overload (send buffer full).",
        "impact": "Operations to that node are delayed or fail with temporary errors.",
        "diagnosis": "- `SELECT * FROM ndbinfo.transporters;` (overloaded, slowdown columns)\n"
                     "- `ndbinfo.transporter_details` send buffer use (8.0.37+); network"
                     " throughput and errors between the hosts.",
        "mitigation": "Raise `SendBufferMemory`/`TotalSendBufferMemory`, fix the network,"
                      " or reduce batch sizes.",
    },
    "NdbExporterDown": {
        "meaning": "ndbinfo_exporter does not answer scrapes (`up` 0), or it cannot query"
                   " ndbinfo through its SQL node (`ndb_up` 0).",
        "impact": "NDB monitoring is blind: no other NDB alert can fire.",
        "diagnosis": "- `curl http://<exporter>/metrics`; the exporter's log.\n"
                     "- Can the exporter's account connect: `mysql --defaults-file=<its cnf>"
                     " -e 'SELECT 1 FROM ndbinfo.nodes LIMIT 1'`; `ndb_ndbinfo_offline`.",
        "mitigation": "Restart the exporter; fix the SQL node, its credentials or"
                      " `ndbinfo_offline`.",
    },
    "NdbExporterCollectorFailing": {
        "meaning": "One collector of ndbinfo_exporter fails on every scrape although its view"
                   " exists in this NDB version.",
        "impact": "That collector's metrics (and the alerts built on them) are missing.",
        "diagnosis": "- The exporter log for the collector's error (timeout, privilege).\n"
                     "- `ndb_exporter_collector_timeouts_total`, `ndb_exporter_collector_duration_seconds`.",
        "mitigation": "Grant SELECT on the view, raise `--query.timeout`, or disable the"
                      " collector (`--no-collect.X`).",
    },
}
