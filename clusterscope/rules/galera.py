# ruff: noqa: E501  (PromQL reads better unbroken)
"""Galera rules: node down / not ready, Primary component, sync, cluster size, flow control,
queues, certification, connections, recoveries, the recovery tracker.

mysqld_exporter turns `wsrep_cluster_status` Primary into 1 and non-Primary/Disconnected
into 0, and ON/OFF variables (`wsrep_desync`) into 1/0 (prometheus/mysqld_exporter
collector/global_status.go, parseStatus). Its `up` is the exporter's own scrape: a dead
mysqld_exporter is GaleraExporterDown, not a node down (`mysql_up` is the node).

The rooms: galera_membership, galera_replication, galera_recovery; this module says which
records and alerts land in the galera group of rules/galera.yml.
"""

from __future__ import annotations

from clusterscope.rules import galera_membership, galera_recovery, galera_replication
from clusterscope.rules.galera_membership import ST
from clusterscope.rules.rule_model import WITHOUT, Group

FIRST_STEPS = """First, on any node that answers:

```sql
SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_cluster_size',
  'wsrep_local_state_comment', 'wsrep_ready', 'wsrep_local_recv_queue_avg',
  'wsrep_flow_control_sent', 'wsrep_flow_control_paused');
```

`wsrep_cluster_status` must be `Primary` before anything is restarted. Logs: each node's
error log (`log_error`; the Debian packages write to the journal / `/var/log/mysql/`, the
Percona Operator to `/var/lib/mysql/mysqld-error.log`), `WSREP:` / `[Galera]` lines."""


def groups(c: dict) -> list[Group]:
    s = c["selectors"]["galera"]
    t = c["selectors"]["galera_tracker"]
    grp = Group("galera", "galera.yml", first_steps=FIRST_STEPS, records=[
        # the metric keeps its name (mixin convention): only the level and the operation
        ("cluster_node:mysql_global_status_wsrep_flow_control_paused_ns:ratio_rate1m",
         f"max {WITHOUT} (rate({ST}_wsrep_flow_control_paused_ns{{{s}}}[1m]) / 1e9)"),
        ("cluster_node:mysql_global_status_wsrep_local_recv_queue:max1m",
         f"max {WITHOUT} (max_over_time({ST}_wsrep_local_recv_queue{{{s}}}[1m]))"),
        ("cluster:mysql_global_status_wsrep_cluster_size:max",
         f"max by (cluster) ({ST}_wsrep_cluster_size{{{s}}})"),
        ("cluster_node_kind_method:galera_recovery_duration_seconds:last",
         f"max without (instance, job, donor) (galera_recovery_last_duration_seconds{{{t}}})"),
        ("cluster_kind:galera_recovery_duration_seconds:p90_1d",
         f"histogram_quantile(0.9, sum by (cluster, kind, le) ("
         f"increase(galera_recovery_duration_seconds_bucket{{{t}}}[1d])))"),
    ])
    grp.alerts += [*galera_membership.alerts(c), *galera_replication.alerts(c),
                   *galera_recovery.alerts(c)]
    return [grp]
