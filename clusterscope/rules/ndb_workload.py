# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""The ndb-workload group: tables and nodes against DataMemory and the disk page buffer
here; transactions and locks in ndb_locks, key operation latency in ndb_latency."""

from __future__ import annotations

from clusterscope.rules import ndb_latency, ndb_locks
from clusterscope.rules.ndb_first_steps import FIRST_STEPS
from clusterscope.rules.rule_model import Alert, Group, Runbook, seconds

TABLE_SUM = "cluster_node_table:ndb_table_memory_allocated_bytes:sum"
TABLE_DATA_MEMORY = "cluster_node_table:ndb_table_data_memory_bytes:sum"
DATA_MEMORY = 'memory_type="Data memory"'


def data_memory_free(s: str) -> str:
    return (f"max without (instance, job, memory_type) (ndb_memory_total_bytes{{{s},{DATA_MEMORY}}}"
            f" - ndb_memory_used_bytes{{{s},{DATA_MEMORY}}})")


def table_data_memory(s: str) -> str:
    """What of a table's memory is DataMemory: all of it from NDB 7.6, without the hash index
    before. Before 7.6 the hash index pages are IndexMemory, a pool of their own; 7.6 folds
    IndexMemory into DataMemory (the current Dbacc accounts its "Index memory" pages to
    RG_DATAMEM, mysql/mysql-server storage/ndb/src/kernel/blocks/dbacc/DbaccMain.cpp
    @54feb0c1cfe0)."""
    index_memory_nodes = (f"max without (instance, job, type, version, hostname) (ndb_node_info"
                          f"{{{s},type=\"NDB\",version=~\".*ndb-7\\\\.[0-5]\\\\..*\"}})")
    alloc = f"ndb_table_memory_allocated_bytes{{{s}}}"
    return (f"sum without (instance, job, kind) (ndb_table_memory_allocated_bytes"
            f"{{{s},kind!=\"hash_index\"}}) and on (cluster, node_id) {index_memory_nodes}"
            f" or sum without (instance, job, kind) ({alloc})")


def disk_page_buffer_rate(s: str) -> str:
    return f"sum without (instance, job, outcome) (rate(ndb_disk_page_buffer_requests_total{{{s}}}[5m]))"


def disk_page_buffer_hit_ratio(s: str) -> str:
    """The manual's hit ratio: direct returns over direct returns and waits for a page not
    usable now (being read or written out); a request queued behind others for a page in the
    buffer is no miss (MySQL manual, "The ndbinfo diskpagebuffer Table")."""
    outcomes = "outcome=~\"direct_return|wait_io\""
    return (f"sum without (instance, job, outcome) (rate(ndb_disk_page_buffer_requests_total"
            f"{{{s},outcome=\"direct_return\"}}[5m])) / sum without (instance, job, outcome)"
            f" (rate(ndb_disk_page_buffer_requests_total{{{s},{outcomes}}}[5m]))")


def workload(c: dict) -> Group:
    """Tables and nodes against DataMemory, transactions held open, lock contention, the
    disk page buffer and key operation latency."""
    s = c["selectors"]["ndb"]
    g = Group("ndb-workload", "ndb.yml", first_steps=FIRST_STEPS, records=[
        # a table's memory on a node, its kinds (fixed, var, hash index) summed
        (TABLE_SUM, f"sum without (instance, job, kind) (ndb_table_memory_allocated_bytes{{{s}}})"),
        (TABLE_DATA_MEMORY, table_data_memory(s)),
        ("cluster_node:ndb_data_memory_free:bytes", data_memory_free(s)),
        *ndb_locks.records(c),
        ("cluster_node:ndb_disk_page_buffer_hit:ratio_rate5m", disk_page_buffer_hit_ratio(s)),
        ("cluster_node:ndb_disk_page_buffer_requests:rate5m", disk_page_buffer_rate(s)),
        *ndb_latency.records(c),
    ])
    g.alerts += [_table_filling_data_memory(c), _data_memory_filling(c), *ndb_locks.alerts(c),
                 _disk_page_buffer_hit_ratio_low(c), ndb_latency.key_operation_latency_regressed(c)]
    return g


def _table_filling_data_memory(c: dict) -> Alert:
    n = c["ndb"]
    table_dm = TABLE_DATA_MEMORY
    free = data_memory_free(c["selectors"]["ndb"])
    trend, horizon = n["table_memory_trend"], n["table_memory_horizon"]
    return Alert(name="NdbTableFillingDataMemory",
                 expr=f"(predict_linear({table_dm}[{trend}], {seconds(horizon)}) - {table_dm})"
                      f" > on (cluster, node_id) group_left () ({free})",
                 severity="warning",
                 summary="NDB table {{ $labels.table }} will fill node {{ $labels.node_id }}'s"
                         " DataMemory within " + horizon,
                 description="At its growth over the last " + trend + ", table {{ $labels.table }} (with its"
                             " unique and ordered indexes and blob parts, ndbinfo.memory_per_fragment; its"
                             " hash index only where it is DataMemory, NDB 7.6+) needs"
                             " {{ $value | humanize1024 }}B more on data node {{ $labels.node_id }} within "
                             + horizon + " than the node has free in DataMemory: inserts into any table"
                             " will then fail with error 827 (table is full).",
                 dashboard="ndb_node",
                 for_=n["table_memory_for"],
                 runbook=Runbook(
                     meaning="A table's DataMemory on a data node (its rows' fixed- and var-size parts"
                             " and hash index, with its unique indexes, ordered indexes (T-tree pages)"
                             " and blob part tables: `ndb_table_memory_allocated_bytes` from"
                             " ndbinfo.memory_per_fragment; before NDB 7.6 the hash index is"
                             " IndexMemory and left out) grew over the trend window at a pace that,"
                             " continued over the horizon, needs more than the node's free DataMemory."
                             " The alert names the table.",
                     impact="When DataMemory is full, inserts into every table of the node group fail"
                            " with error 827 (table is full), not only into this one.",
                     diagnosis="- The biggest tables: `SELECT COALESCE(parent_fq_name, fq_name) AS tbl,"
                               " node_id, SUM(fixed_elem_alloc_bytes + var_elem_alloc_bytes +"
                               " hash_index_alloc_bytes) AS bytes FROM ndbinfo.memory_per_fragment"
                               " GROUP BY tbl, node_id ORDER BY bytes DESC LIMIT 10;` (the NDB data node"
                               " dashboard's \"Memory per table\" shows the same).\n"
                               "- Which of its objects grows (the table, an index): the same query"
                               " grouped by fq_name.\n"
                               "- The node's DataMemory: `SELECT node_id, used, total FROM"
                               " ndbinfo.memoryusage WHERE memory_type = 'Data memory';`\n"
                               "- What writes the table (application, replication, a job), and whether"
                               " free space inside its pages (`ndb_table_memory_free_bytes`) is large:"
                               " var-size space freed by deletes is reused by the table only.",
                     mitigation="Delete or archive old rows; drop an ordered index no query needs;"
                                " move large non-indexed columns to disk data (`STORAGE DISK` in a"
                                " tablespace); `OPTIMIZE TABLE` to give var-size free space back; raise"
                                " `DataMemory` (a rolling restart) or add node groups and `ALTER TABLE"
                                " ... REORGANIZE PARTITION` the table.",
                     benign="a one-off bulk load that has finished (the trend flattens and the alert"
                            " resolves); a table that is purged on a schedule."))


def _data_memory_filling(c: dict) -> Alert:
    """Growth spread over many tables never fills one table's share: the node's own."""
    n, s = c["ndb"], c["selectors"]["ndb"]
    trend, horizon = n["data_memory_trend"], n["data_memory_horizon"]
    used = f"ndb_memory_used_bytes{{{s},{DATA_MEMORY}}}"
    total = f"ndb_memory_total_bytes{{{s},{DATA_MEMORY}}}"
    return Alert(name="NdbDataMemoryFilling",
                 expr=f"max without (instance, job, memory_type) (predict_linear({used}[{trend}],"
                      f" {seconds(horizon)}) - {total}) > 0",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} will fill its DataMemory within " + horizon,
                 description="At its growth over the last " + trend + ", data node {{ $labels.node_id }}"
                             " in cluster {{ $labels.cluster }} uses {{ $value | humanize1024 }}B more than"
                             " its DataMemory within " + horizon + " (ndbinfo.memoryusage, all tables"
                             " together): inserts will then fail with error 827 (table is full).",
                 dashboard="ndb_node",
                 for_=n["data_memory_filling_for"],
                 runbook=Runbook(
                     meaning="A data node's DataMemory use (`ndb_memory_used_bytes` of \"Data"
                             " memory\", ndbinfo.memoryusage) grew over the trend window at a pace"
                             " that, continued over the horizon, exceeds its DataMemory: the growth of"
                             " all its tables together, which NdbTableFillingDataMemory (one table at a"
                             " time) misses when it is spread over many.",
                     impact="When DataMemory is full, inserts into every table of the node group fail"
                            " with error 827 (table is full).",
                     diagnosis="- The node's DataMemory: `SELECT node_id, used, total FROM"
                               " ndbinfo.memoryusage WHERE memory_type = 'Data memory';`\n"
                               "- Which tables grow: the NDB data node dashboard's \"Table growth\""
                               " (deriv of each table's memory), or `ndb_table_memory_allocated_bytes`"
                               " a day apart.",
                     mitigation="As for NdbTableFillingDataMemory: delete or archive rows, move columns"
                                " to disk data, raise `DataMemory` (a rolling restart) or add node"
                                " groups.",
                     benign="a bulk load that has finished (the trend flattens and the alert resolves)."))


def _disk_page_buffer_hit_ratio_low(c: dict) -> Alert:
    n = c["ndb"]
    dpb_rate = disk_page_buffer_rate(c["selectors"]["ndb"])
    hit_ratio = disk_page_buffer_hit_ratio(c["selectors"]["ndb"])
    return Alert(name="NdbDiskPageBufferHitRatioLow",
                 expr=f"({hit_ratio}) < {n['disk_page_buffer_hit_ratio_min']}"
                      f" and on (cluster, node_id) ({dpb_rate})"
                      f" > {n['disk_page_buffer_min_requests_per_second']}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} disk page buffer hit ratio"
                         " {{ $value | humanizePercentage }}",
                 description="Only {{ $value | humanizePercentage }} of the disk data page requests of data"
                             " node {{ $labels.node_id }} that did not queue behind others for a page in the"
                             " buffer found their page usable at once (ndbinfo.diskpagebuffer, direct_return /"
                             " (direct_return + wait_io), the manual's ratio, over 5 minutes; below"
                             f" {n['disk_page_buffer_hit_ratio_min']:.0%}, the level the manual names for"
                             " growing DiskPageBufferMemory): the others wait for disk reads or writes, and"
                             " queries on disk data columns slow down.",
                 dashboard="ndb_node",
                 for_=n["disk_page_buffer_for"],
                 runbook=Runbook(
                     meaning="Of the data node's disk data page requests over 5 minutes that did not"
                             " queue behind other requests for a page already in the buffer, fewer"
                             " than the threshold (95 %, the level the manual names) found their page"
                             " usable at once: direct_return / (direct_return + wait_io) of"
                             " ndbinfo.diskpagebuffer, the manual's hit ratio, with enough requests to"
                             " matter. wait_io is a page being read from disk or being written out"
                             " (e.g. by a local checkpoint).",
                     impact="Requests that miss wait for a disk read (or for a write to finish):"
                            " queries on disk data columns get slower, and LDM threads wait for I/O.",
                     diagnosis="- Per node: `SELECT node_id, 100 * SUM(page_requests_direct_return) /"
                               " (SUM(page_requests_direct_return) + SUM(page_requests_wait_io)) AS"
                               " hit_ratio, SUM(page_requests_wait_queue) AS queued, SUM(pages_read)"
                               " FROM ndbinfo.diskpagebuffer GROUP BY node_id;` twice, a minute apart"
                               " (cumulative counters: compare the differences).\n"
                               "- Reads or writes: `pages_read` growing with wait_io is a buffer too"
                               " small for the working set; wait_io growing during an LCP with few"
                               " reads is pages being written out.\n"
                               "- The buffer's size: `DiskPageBufferMemory` (ndbinfo.config_values) and"
                               " `SELECT * FROM ndbinfo.resources WHERE resource_name ="
                               " 'DISK_PAGE_BUFFER';`\n"
                               "- Disk read latency (8.0.19+): the \"Disk data latency\" of"
                               " `ndb_disk_data_latency_seconds` (ndbinfo.pgman_time_track_stats).",
                     mitigation="Raise `DiskPageBufferMemory` (a rolling restart); keep hot, frequently"
                                " read columns in memory rather than on disk; avoid full scans of disk"
                                " data tables at peak times.",
                     benign="the first minutes after a node restart (the buffer is cold); a one-off"
                            " scan over a large disk data table; a long local checkpoint of much"
                            " disk data (pages being written out count as wait_io)."))
