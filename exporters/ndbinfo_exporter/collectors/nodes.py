"""Data node state (`nodes`) and every node's type, version and host (`processes`)."""

from __future__ import annotations

from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.db import NdbinfoOffline, ViewUnavailable
from ndbinfo_exporter.families import Families, state_set

# the view's decode of nodes.status; all are exported so a status change flips values
# instead of creating and dropping series
NODE_STATUSES = tuple(text for _, text in schema.NODE_STATUS)

# {config_generation}: the column, or NULL where this version's view lacks it
SQL_NODES = ("SELECT node_id, status, start_phase, uptime, {config_generation}"
             " FROM ndbinfo.nodes")
# the configured data nodes, running or not
SQL_CONFIG_NODES = "SELECT DISTINCT node_id FROM ndbinfo.config_nodes WHERE node_type = 'NDB'"


def sql_processes(hostname: bool) -> str:
    """Every node; with its host from config_nodes where this version's view has
    node_hostname, else NULL."""
    if hostname:
        return ("SELECT p.node_id, p.node_type, p.node_version, c.node_hostname"
                " FROM ndbinfo.processes p"
                " LEFT JOIN ndbinfo.config_nodes c ON c.node_id = p.node_id")
    return "SELECT p.node_id, p.node_type, p.node_version, NULL FROM ndbinfo.processes p"


NODE_STATUS_SET = Desc("ndb_node_status", "Data node status from ndbinfo.nodes: 1 for the"
                       " current status, 0 for the others.", ("node_id", "status"))
NODE_START_PHASE = Desc("ndb_node_start_phase", "Start phase of the data node (meaningful"
                        " while STARTING).", ("node_id",))
NODE_UPTIME = Desc("ndb_node_uptime_seconds", "Seconds since the data node process started.",
                   ("node_id",))
NODE_CONFIG_GENERATION = Desc("ndb_node_config_generation", "Configuration generation the"
                              " data node runs with.", ("node_id",))
DATA_NODE_RUNNING = Desc("ndb_data_node_running", "1 for a configured data node that runs"
                         " (has a row in ndbinfo.nodes), 0 for one that is configured"
                         " (ndbinfo.config_nodes) but down.", ("node_id",))
NODE_INFO = Desc("ndb_node_info", "Every cluster node (data, API/SQL, management): type,"
                 " software version and host; value 1.",
                 ("node_id", "type", "version", "hostname"))


def collect_nodes(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_NODES.format(
        config_generation=ctx.col("nodes", "config_generation")))
    status, phase = NODE_STATUS_SET.of(fam), NODE_START_PHASE.of(fam)
    uptime, gen = NODE_UPTIME.of(fam), NODE_CONFIG_GENERATION.of(fam)
    running = DATA_NODE_RUNNING.of(fam)
    seen = {str(r[0]) for r in rows}
    # A data node that is down has no row in `nodes` (mysql/mysql-server manual, ndbinfo
    # nodes table: "a row for each data node that is running"); the configuration still
    # lists it, so "configured but not running" becomes a 0 instead of a vanished series.
    configured = set(seen)
    if ctx.db.has("config_nodes"):
        try:
            configured |= {str(r[0]) for r in ctx.query(SQL_CONFIG_NODES)}
        except (NdbinfoOffline, ViewUnavailable):
            pass  # not served: the running nodes are all we know, `nodes` itself is fine
    for node_id in sorted(configured, key=int):
        running.add((node_id,), 1 if node_id in seen else 0)
    for node_id, st, start_phase, up, config_generation in rows:
        current = (st or "").upper()
        for s, on in state_set(NODE_STATUSES, current):
            status.add((node_id, s), on)
        phase.add((node_id,), start_phase)
        uptime.add((node_id,), up)
        gen.add((node_id,), config_generation)


def collect_processes(ctx: Context, fam: Families) -> None:
    rows = ctx.query(sql_processes(ctx.db.has("config_nodes", "node_hostname")))
    info = NODE_INFO.of(fam)
    for node_id, node_type, version, host in rows:
        info.add((node_id, node_type, version, host), 1)


COLLECTORS = [
    Collector("nodes", "ndbinfo.nodes: status, start phase, uptime per data node",
              ("nodes",), collect_nodes),
    Collector("processes", "ndbinfo.processes (+ config_nodes): ndb_node_info",
              ("processes",), collect_processes),
]
