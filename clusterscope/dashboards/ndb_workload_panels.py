"""The NDB dashboards' workload panels: transaction records, lock contention, latency and
tables on the overview; tables, the disk page buffer, latency and locks on the data node
dashboard. Their thresholds are the alerts' (rules/config.yaml)."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit
from clusterscope.rules.rules_config import shared

CFG = shared()["ndb"]


def overview_rows(d: dash.Dashboard, c: str, n: str) -> None:
    """The overview's rows; c selects the cluster, n its data nodes."""
    d.with_row(dash.Row("Transactions, locks, latency, tables"))
    d.with_panel(kit.ts(
        "Transaction records", "The data nodes' TC records in use, by state"
        " (ndb_transactions, from ndbinfo.cluster_transactions every --scrape.slow-interval;"
        " Completing = completing transactions already committed, other = commit states"
        " without a friendly name).", "short",
        kit.q(f"sum by (state) (ndb_transactions{{{c}, {n}}})", "{{state}}"), w=6,
        stack=True))
    d.with_panel(kit.alert_threshold(kit.ts(
        "Longest inactive transaction", "Per TC node, the longest a transaction holding"
        " operations has done nothing (ndb_transaction_inactive_seconds_max; ndbinfo has no"
        " transaction age); red: NdbLongTransaction's threshold.", "s",
        kit.q(f"ndb_transaction_inactive_seconds_max{{{c}, {n}}}", "node {{node_id}}"), w=6,
        minimum=0), CFG["transaction_inactive_seconds_max"]))
    d.with_panel(kit.alert_threshold(kit.ts(
        "Lock waits", "Row lock requests waiting on average for another transaction's"
        " lock (the rate of the wait time ndbinfo.locks_per_fragment counts: every wait),"
        " the cluster's and the five tables waiting most; red: NdbLockWaits' threshold.",
        "short",
        kit.q(f"cluster:ndb_lock_waiters:mean_rate5m{{{c}}}", "waiting (cluster)"),
        kit.q(f"topk(5, cluster_table:ndb_lock_waiters:mean_rate5m{{{c}}})", "{{table}}"),
        w=6, minimum=0), CFG["lock_waits_max"]))
    d.with_panel(kit.alert_threshold(kit.ts(
        "Lock-wait timeouts", "Lock requests per minute that gave up waiting, per table"
        " (error 266; ndbinfo.locks_per_fragment ex_wait_fail + sh_wait_fail); red:"
        " NdbLockWaitTimeouts' threshold.", "short",
        kit.q(f"cluster_table:ndb_lock_wait_timeouts:rate5m{{{c}}} * 60", "{{table}}"),
        w=6, minimum=0), CFG["lock_wait_timeouts_per_minute_max"]))
    pct = int(CFG["key_operation_latency_quantile"] * 100)
    d.with_panel(kit.ts(
        "Key operation latency", f"p{pct} of key operation latency (reads with locks,"
        " writes, unique index operations: TC to LDM and back, no client time) at each"
        " node's TCs, from ndbinfo.tc_time_track_stats (recorded:"
        " cluster_node:ndb_key_operation_latency_seconds:quantile_rate5m), and its median"
        " over the last day: NdbKeyOperationLatencyRegressed compares the two (its baseline"
        f" leaves out the last {CFG['key_operation_latency_baseline_offset']}).", "s",
        kit.q(f"cluster_node:ndb_key_operation_latency_seconds:quantile_rate5m{{{c}, {n}}}",
              f"node {{{{node_id}}}} p{pct}"),
        kit.q(f"quantile_over_time(0.5, cluster_node:ndb_key_operation_latency_seconds:"
              f"quantile_rate5m{{{c}, {n}}}[1d])", "node {{node_id}} median (1 d)"),
        w=12, minimum=0))
    d.with_panel(kit.ts(
        "Transaction duration", f"p{pct} of transaction duration at each node's TCs: first"
        " operation to commit confirmation, the client's round trips and think time between"
        " statements included (committed-read-only transactions are not timed); it moves"
        " when the application shapes its transactions differently (recorded:"
        " cluster_node:ndb_transaction_duration_seconds:quantile_rate5m).", "s",
        kit.q(f"cluster_node:ndb_transaction_duration_seconds:quantile_rate5m{{{c}, {n}}}",
              f"node {{{{node_id}}}} p{pct}"), w=12, minimum=0))
    d.with_panel(kit.bars_panel(
        "Largest tables", "DataMemory a table (with its unique and ordered indexes and blob"
        " parts) has"
        " allocated, summed over the data nodes (ndb_table_memory_allocated_bytes, from"
        " ndbinfo.memory_per_fragment, every --scrape.slow-interval): the ten largest.",
        "bytes",
        kit.q(f"topk(10, sum by (table) (ndb_table_memory_allocated_bytes{{{c}, {n}}}))",
              "{{table}}", instant=True), w=12).color_scheme(kit.FIXED_BLUE)
        .thresholds(kit.NO_THRESHOLDS))


def node_rows(d: dash.Dashboard, c: str, n: str) -> None:
    """The data node dashboard's rows; c selects the cluster, n the data node."""
    d.with_row(dash.Row("Tables and the disk page buffer"))
    d.with_panel(kit.table_panel(
        "Memory per table", "This node's memory per table (with its unique and ordered"
        " indexes and blob parts; memory_per_fragment), by kind, largest first: the MEM"
        " memory report."
        " NdbTableFillingDataMemory names a table whose growth will fill the node.", "bytes",
        kit.table_q(f"topk(20, sum by (table, kind) (ndb_table_memory_allocated_bytes"
                    f"{{{c}, {n}}}))"),
        transformations=[kit.matrix("table", "kind")], w=12, h=9))
    d.with_panel(kit.ts(
        "Table growth", "Change of each table's memory on this node over the last hour"
        " (deriv of the recorded cluster_node_table:ndb_table_memory_allocated_bytes:sum),"
        " per day.", "bytes",
        kit.q(f"topk(5, deriv(cluster_node_table:ndb_table_memory_allocated_bytes:sum"
              f"{{{c}, {n}}}[1h]) * 86400)", "{{table}}"), w=12, h=9))
    d.with_panel(kit.share(
        "Disk page buffer hit ratio", "The manual's hit ratio over 5 minutes: direct"
        " returns / (direct returns + waits for a page being read or written out), from"
        " ndbinfo.diskpagebuffer (recorded: cluster_node:ndb_disk_page_buffer_hit:"
        "ratio_rate5m); requests queued behind others for a page in the buffer are no miss;"
        " red: NdbDiskPageBufferHitRatioLow's threshold (the manual's 95 %).",
        kit.q(f"cluster_node:ndb_disk_page_buffer_hit:ratio_rate5m{{{c}, {n}}}", "hit ratio"),
        threshold=CFG["disk_page_buffer_hit_ratio_min"], w=12))
    d.with_panel(kit.ts(
        "Disk page buffer requests", "Requests per second by outcome: direct_return (in the"
        " buffer, served at once), wait_queue (in the buffer, queued behind others for the"
        " page), wait_io (being read from disk or written out).",
        "reqps",
        kit.q(f"sum by (outcome) (rate(ndb_disk_page_buffer_requests_total{{{c}, {n}}}"
              f"[$__rate_interval]))", "{{outcome}}"), w=12, stack=True))
    d.with_panel(kit.ts(
        "Latency at this node's TCs", f"p{int(CFG['key_operation_latency_quantile'] * 100)}"
        " per activity (ndb_tc_latency_seconds, from ndbinfo.tc_time_track_stats):"
        " transaction duration (first operation to commit confirmation, client time"
        " included), key operations (no client time) and scans as the TC sees them.", "s",
        kit.q(f"histogram_quantile({CFG['key_operation_latency_quantile']}, sum by (activity, le)"
              f" (rate(ndb_tc_latency_seconds_bucket{{{c}, {n},"
              f' activity=~"transaction|read_key|write_key|index_key|scan"}}[5m])))',
              "{{activity}}"),
        w=8, minimum=0))
    d.with_panel(kit.ts(
        "Transaction records and locks", "This node's TC records in use"
        " (cluster_transactions) and the row locks on its LDM instances (cluster_locks), by"
        " state, as a scan every --scrape.slow-interval sees them.", "short",
        kit.q(f"sum(ndb_transactions{{{c}, {n}}})", "TC records"),
        kit.q(f"sum by (state) (ndb_locks{{{c}, {n}}})", "locks {{state}}"), w=8))
    d.with_panel(kit.ts(
        "Lock waits per table", "On this node's LDM instances, per table (with its unique"
        " indexes): requests waiting on average (the rate of the wait time"
        " ndbinfo.locks_per_fragment counts, every wait) and waits that gave up per minute"
        " (error 266), the five tables waiting most.", "short",
        kit.q(f"topk(5, sum by (table) (rate(ndb_table_lock_wait_seconds_total{{{c}, {n}}}"
              f"[5m])))", "{{table}} waiting"),
        kit.q(f"topk(5, sum by (table) (rate(ndb_table_lock_waits_total{{{c}, {n},"
              f' outcome="failed"}}[5m]))) * 60', "{{table}} timeouts/min"), w=8, minimum=0))
