"""What the NDB runbooks share: the first commands to run and the ndbinfo queries they
quote."""

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
