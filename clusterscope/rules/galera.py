# ruff: noqa: E501  (PromQL reads better unbroken)
"""Galera rules: node down / not ready, Primary component, sync, cluster size, flow control,
queues, certification, connections, recoveries, the recovery tracker.

mysqld_exporter turns `wsrep_cluster_status` Primary into 1 and non-Primary/Disconnected
into 0, and ON/OFF variables (`wsrep_desync`) into 1/0 (prometheus/mysqld_exporter
collector/global_status.go, parseStatus). Its `up` is the exporter's own scrape: a dead
mysqld_exporter is GaleraExporterDown, not a node down (`mysql_up` is the node).
"""

from __future__ import annotations

from clusterscope.rules.model import WITHOUT, Alert, Group, Runbook, seconds

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
    g = c["galera"]
    s = c["selectors"]["galera"]
    t = c["selectors"]["galera_tracker"]
    st = "mysql_global_status"
    grp = Group("galera", "galera.yml", first_steps=FIRST_STEPS, records=[
        # the metric keeps its name (mixin convention): only the level and the operation
        ("cluster_node:mysql_global_status_wsrep_flow_control_paused_ns:ratio_rate1m",
         f"max {WITHOUT} (rate({st}_wsrep_flow_control_paused_ns{{{s}}}[1m]) / 1e9)"),
        ("cluster_node:mysql_global_status_wsrep_local_recv_queue:max1m",
         f"max {WITHOUT} (max_over_time({st}_wsrep_local_recv_queue{{{s}}}[1m]))"),
        ("cluster:mysql_global_status_wsrep_cluster_size:max",
         f"max by (cluster) ({st}_wsrep_cluster_size{{{s}}})"),
        ("cluster_node_kind_method:galera_recovery_duration_seconds:last",
         f"max without (instance, job, donor) (galera_recovery_last_duration_seconds{{{t}}})"),
        ("cluster_kind:galera_recovery_duration_seconds:p90_1d",
         f"histogram_quantile(0.9, sum by (cluster, kind, le) ("
         f"increase(galera_recovery_duration_seconds_bucket{{{t}}}[1d])))"),
    ])
    slow = g["recovery_slow_seconds"]
    recent = g["recovery_recent"]
    inv = c["selectors"]["inventory"]
    size = f"max by (cluster) ({st}_wsrep_cluster_size{{{s}}})"
    hold = c["blind_spell_hold"]
    # fewer members than the description lists (nodes and garbd: both count in
    # wsrep_cluster_size); a cluster the description does not list is compared with the
    # largest size it had lately (Netdata's check), a day by default, since a shorter
    # history forgets a member lost for good (review oncall-2 N11)
    smaller = [f"({size} < on (cluster) sum by (cluster) (clusterscope_cluster_members"
               f"{{{inv},kind=\"galera\"}}))",
               f"({size} < on (cluster) max_over_time(cluster:{st}_wsrep_cluster_size:max"
               f"[{g['cluster_size_history']}])"
               f" unless on (cluster) clusterscope_cluster_info{{{inv},kind=\"galera\"}})"]
    recv_queue = (f"avg_over_time({st}_wsrep_local_recv_queue{{{s}}}[{g['recv_queue_avg_over']}])"
                  f" > {g['recv_queue_max']}")
    # the cluster's flow-control sender, named in the annotation rather than a label: a
    # label that changes with the top sender would restart the alert's `for` (review
    # oncall-2 N6); no sender with a rate (garbd, a node whose exporter is down) says so
    # (a Go template raw string in backquotes holds the selector's quotes as they are)
    sender = ("{{ with printf `topk(1, max without (instance, job) (rate("
              f"{st}_wsrep_flow_control_sent{{{s},cluster=\"%s\"}}[5m])) > 0)` $labels.cluster"
              " | query }}{{ . | first | label \"node\" }}{{ else }}a member that is not"
              " monitored (garbd, or a node whose exporter is down){{ end }}")
    grp.alerts += [
        # mysql_up held over the blind-spell hold: the exporter restarting must not resolve
        # a node that is down (review oncall-2 N4)
        Alert(name="GaleraNodeNotReady",
              expr=f"last_over_time(mysql_up{{{s}}}[{hold}]) == 0 or {st}_wsrep_ready{{{s}}} == 0",
              severity="warning",
              summary="Galera node {{ $labels.node }} is down or not ready",
              description="mysqld_exporter cannot query node {{ $labels.node }} of {{ $labels.cluster }}"
                          " (mysql_up 0: the node is down) or the node refuses queries (wsrep_ready OFF),"
                          f" for {g['node_not_ready_for']}.",
              dashboard="galera",
              for_=g["node_not_ready_for"],
              runbook=Runbook(
                  meaning="For 1 minute a Galera node does not answer its mysqld_exporter (`mysql_up`"
                          " 0, so its wsrep series are gone) or answers with `wsrep_ready` OFF. A dead"
                          " mysqld_exporter is GaleraExporterDown, not this.",
                  impact="The node serves no queries; the cluster runs with one member less.",
                  diagnosis="- The node's error log (`WSREP:` lines, crash, OOM).\n"
                            "- `SHOW GLOBAL STATUS LIKE 'wsrep_%';` on the node and on the others"
                            " (`wsrep_cluster_size`, `wsrep_cluster_status`).",
                  mitigation="First check that the other nodes still form a Primary component"
                             " (`wsrep_cluster_status`); if not, see GaleraNonPrimary before restarting"
                             " anything. Then restart the node; after a crash recover its position"
                             " first (`mariadbd --wsrep-recover`) so it rejoins by IST.",
                  benign="a planned restart of the node (silence it for the window).")),
        # mysqld_exporter has no last_scrape_error since v0.15.0 (prometheus/mysqld_exporter
        # commit 6ad9f25); v0.19.0 reports each collector as mysql_exporter_collector_success
        # {collector="collect.global_status"} (collector/exporter.go). A failing
        # global_variables silences desync, connection and gcache checks (review oncall-2 N5)
        Alert(name="GaleraExporterDown",
              expr=f"up{{{s}}} == 0 or mysql_exporter_collector_success{{{s}}} == 0",
              severity="warning",
              summary="mysqld_exporter for {{ $labels.node }} is down or failing",
              description="The mysqld_exporter scraped for node {{ $labels.node }} ({{ $labels.instance }})"
                          " does not answer, or its collector {{ $labels.collector }} fails, for"
                          f" {g['exporter_down_for']}: that node's Galera alerts are blind. Not a node"
                          " failure by itself.",
              dashboard="galera",
              for_=g["exporter_down_for"],
              runbook=Runbook(
                  meaning="The mysqld_exporter that scrapes a Galera node does not answer (`up` 0), or"
                          " one of its collectors fails on the node"
                          " (`mysql_exporter_collector_success{collector=\"collect.global_variables\"}`"
                          " 0: the `collector` label names it), for 2 minutes.",
                  impact="That node's Galera alerts are blind. A failing `global_variables` silences"
                         " the desync exemption, GaleraConnectionsHigh and GaleraGcacheTooSmall. The"
                         " node itself may be fine.",
                  diagnosis="- `curl <exporter>/metrics` (or `/probe?target=...` in multi-target mode)"
                            " and the exporter's log (`Error from scraper`, login refused, TLS).\n"
                            "- The exporter account's privileges (global status and variables need"
                            " none; a collector you enabled may).",
                  mitigation="Restart the exporter, fix its credentials, or disable the collector"
                             " that cannot work (`--no-collect.X`).")),
        Alert(name="GaleraExporterAbsent",
              expr=f"max by (cluster, node) (clusterscope_node_info{{{inv},role=\"galera\"}})"
                   f" unless on (cluster, node) up{{{s}}}",
              severity="warning",
              summary="Galera node {{ $labels.node }} is described but not scraped",
              description="Node {{ $labels.node }} of {{ $labels.cluster }} is in the description"
                          " (clusterscope.yml) but no scrape of the galera job covers it, for"
                          f" {g['exporter_down_for']}: the scrape configuration does not take the"
                          " inventory's targets, so the node's alerts are blind.",
              dashboard="galera",
              for_=g["exporter_down_for"],
              runbook=Runbook(
                  meaning="A Galera node of the description (clusterscope.yml) has no `up` series in"
                          " the galera job: nothing scrapes it.",
                  impact="That node's alerts cannot fire; GaleraExporterDown cannot either (no `up`).",
                  diagnosis="- The inventory's targets: `curl <inventory>/sd/galera` lists the node?\n"
                            "- The collector's targets page (VictoriaMetrics `/targets`): is the"
                            " galera job there, with `http_sd_configs` pointing at the inventory?\n"
                            "- Your own Prometheus: the job must use the inventory's `/sd/galera` (or"
                            " the same targets) with the multi-target relabelling (docs/deploy.md, \"Bring your"
                            " own Prometheus\").",
                  mitigation="Fix the scrape configuration, or remove the node from clusterscope.yml"
                             " if it is gone for good.")),
        # the whole cluster: no node answers, or none of those that answer is in a Primary
        # component (mysqld-mixin alerts/general.yaml MySQLDown and PMM mysql_down.yml are
        # critical; review oncall-2 N3)
        Alert(name="GaleraClusterDown",
              expr=f"max by (cluster) (last_over_time(mysql_up{{{s}}}[{hold}])) == 0"
                   f" or (max by (cluster) ({st}_wsrep_cluster_status{{{s}}}) == 0"
                   f" and on (cluster) max by (cluster) (mysql_up{{{s}}}) == 1)",
              severity="critical",
              summary="Galera cluster {{ $labels.cluster }} is down",
              description="No node of {{ $labels.cluster }} answers (mysql_up 0 on every node), or none of"
                          " those that answer is in a Primary component, for"
                          f" {g['cluster_down_for']}: the cluster takes no reads or writes.",
              dashboard="galera",
              for_=g["cluster_down_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="For 1 minute no node of the cluster answers its mysqld_exporter (`mysql_up`"
                          " 0 on every node, held through exporter restarts of up to 10 minutes), or"
                          " every node that answers is outside a Primary component"
                          " (`wsrep_cluster_status` 0).",
                  impact="An outage: the cluster takes no reads or writes.",
                  diagnosis="- On each host: is mysqld running (`systemctl status mariadb`), its error"
                            " log (crash, OOM, `Aborting`).\n"
                            "- On the nodes that run: `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status';`"
                            " and `wsrep_last_committed`.\n"
                            "- `cat /var/lib/mysql/grastate.dat` on every node: `safe_to_bootstrap: 1`"
                            " marks the last one to leave a clean shutdown.",
                  mitigation="All nodes stopped: start the node with `safe_to_bootstrap: 1` (or, after"
                             " a crash, the highest `wsrep_last_committed` from `mariadbd"
                             " --wsrep-recover`) with `galera_new_cluster`, then the others. Nodes"
                             " running without quorum: see GaleraNonPrimary.")),
        Alert(name="GaleraNonPrimary",
              expr=f"{st}_wsrep_cluster_status{{{s}}} == 0",
              severity="critical",
              summary="Galera node {{ $labels.node }} is not in the Primary component",
              description="Node {{ $labels.node }} of {{ $labels.cluster }} is in a non-Primary component"
                          " (wsrep_cluster_status): it refuses writes and reads; the cluster lost quorum"
                          " or the node is partitioned off.",
              dashboard="galera",
              for_=g["non_primary_for"],
              runbook=Runbook(
                  meaning="A node answers but is not part of the Primary component"
                          " (`wsrep_cluster_status` non-Primary or Disconnected) for 30 s.",
                  impact="The node refuses queries. When every node is non-Primary the cluster lost"
                         " quorum: no writes anywhere (GaleraClusterDown then pages once for the"
                         " cluster).",
                  diagnosis="- `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status';` on every node, in"
                            " every site: is any Primary?\n- Error logs: `partitioned`, `evicted`,"
                            " `non-Primary` lines; the network between the nodes first.",
                  mitigation="Check the network first: a node cut off by a network fault rejoins by"
                             " itself when the network heals, and restarting it after a long split"
                             " forces an SST. Restart it only if it stays non-Primary after the"
                             " network is healthy. If no node is Primary: confirm on every node,"
                             " other sites included, that none is Primary (two Primary components"
                             " diverge for good), then bootstrap the node with the highest"
                             " `wsrep_last_committed` (`SET GLOBAL"
                             " wsrep_provider_options='pc.bootstrap=YES';`) and let the others rejoin.")),
        Alert(name="GaleraNodeOutOfSync",
              expr=f"{st}_wsrep_local_state{{{s}}} != 4 unless on (instance)"
                   f" mysql_global_variables_wsrep_desync{{{s}}} == 1",
              severity="warning",
              summary="Galera node {{ $labels.node }} not Synced (state {{ $value }})",
              description="Node {{ $labels.node }} has been in wsrep_local_state {{ $value }} (1 Joining,"
                          f" 2 Donor/Desynced, 3 Joined) for {g['out_of_sync_for']} without being desynced"
                          " on purpose (wsrep_desync OFF).",
              dashboard="galera",
              for_=g["out_of_sync_for"],
              runbook=Runbook(
                  meaning="A node has not been Synced (4) for 5 minutes although nobody desynced it on"
                          " purpose (`wsrep_desync` OFF): Joining (1), Joined (3), or a donor (2)"
                          " serving a transfer that long (the mysqld-mixin's rule).",
                  impact="The node does not take writes/reads as a full member; a long state"
                         " transfer is in progress or stuck.",
                  diagnosis="- `SHOW GLOBAL STATUS LIKE 'wsrep_local_state%';`\n"
                            "- Error log: `Shifting PRIMARY -> JOINER`, SST/IST progress lines;"
                            " `galera_recovery_in_progress`.",
                  mitigation="Let the transfer finish; if stuck, check the donor's SST script log and"
                             " network, then restart the joiner.",
                  benign="a long SST/IST to or from this node (GaleraRecoverySlow tells how long).")),
        Alert(name="GaleraDonorFallingBehind",
              expr=f"{st}_wsrep_local_state{{{s}}} == 2 and on (instance) {recv_queue}",
              severity="warning",
              summary="Galera donor {{ $labels.node }} falls behind",
              description="Node {{ $labels.node }} is a donor (state 2) and its receive queue has averaged"
                          f" more than {g['recv_queue_max']} write-sets over {g['recv_queue_avg_over']}, for"
                          f" {g['recv_queue_for']}: it will hold"
                          " the cluster back (flow control) once the transfer ends.",
              dashboard="galera",
              for_=g["recv_queue_for"],
              runbook=Runbook(
                  meaning="A donor (state 2) has held more than 100 write-sets in its receive queue for"
                          " 5 minutes (the mysqld-mixin's MySQLGaleraDonorFallingBehind).",
                  impact="After the transfer it must apply the backlog; meanwhile it may send flow"
                         " control and slow the cluster.",
                  diagnosis="- `wsrep_local_recv_queue`, `wsrep_local_state_comment` on the donor.\n"
                            "- The SST method (rsync blocks the donor; mariabackup does not).",
                  mitigation="Prefer mariabackup SST and a dedicated donor (`wsrep_sst_donor`); avoid"
                             " write peaks during SSTs.")),
        Alert(name="GaleraClusterSizeReduced",
              expr=" or ".join(smaller),
              severity="warning",
              summary="Galera cluster {{ $labels.cluster }} has only {{ $value }} members",
              description="The Primary component of {{ $labels.cluster }} has {{ $value }} members, fewer"
                          " than the description lists (nodes and garbd) or than it had in the last"
                          f" {g['cluster_size_history']}, for"
                          f" {g['cluster_size_reduced_for']}: a member (node or garbd) left.",
              dashboard="galera",
              for_=g["cluster_size_reduced_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="For 1 minute the Primary component has fewer members (`wsrep_cluster_size`,"
                          " garbd included) than the description lists for the cluster (its nodes"
                          " and garbd, in clusterscope.yml). A cluster the description does not list"
                          " is compared with the largest size it had in the last day.",
                  impact="Less redundancy; with one more loss the cluster may lose quorum.",
                  diagnosis="- `SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size';` on every node\n"
                            "- Which node: GaleraNodeNotReady; error logs for `evicted`/`partitioned`.",
                  mitigation="Bring the missing member back (IST preferred). Resolves by itself once"
                             " it rejoins; it does not resolve while the member is missing.",
                  benign="a member removed for good: remove it from clusterscope.yml too.")),
        Alert(name="GaleraFlowControlHigh",
              expr=f"max by (cluster) (rate({st}_wsrep_flow_control_paused_ns{{{s}}}[5m]) / 1e9)"
                   f" > {g['flow_control_paused_max']}",
              severity="warning",
              summary="Galera cluster {{ $labels.cluster }} paused by flow control"
           " {{ $value | humanizePercentage }} of the time",
              description="Replication in {{ $labels.cluster }} was paused more than"
                          f" {g['flow_control_paused_max']:.0%} of the time (every node pauses when one"
                          f" sends FC_PAUSE). The node that sent the most pauses lately: {sender}; it"
                          " cannot apply fast enough.",
              dashboard="galera",
              for_=g["flow_control_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="Replication in the cluster was paused by flow control more than 10 % of the"
                          " time over 5 minutes (rate of `wsrep_flow_control_paused_ns`; every node"
                          " pauses when any node sends FC_PAUSE), for 5 minutes. One alert per"
                          " cluster; its description names the node that sent the most pauses lately"
                          " (`wsrep_flow_control_sent`), or says it is a member that is not monitored"
                          " (garbd, or a node whose exporter is down) when no monitored node sent any.",
                  impact="The whole cluster writes only as fast as its slowest node applies.",
                  diagnosis="- `wsrep_local_recv_queue`, `wsrep_flow_control_sent` per node: the one"
                            " sending pauses is slow.\n- That node's CPU/disk; `wsrep_slave_threads`.",
                  mitigation="Fix or offload the slow node; raise `wsrep_slave_threads` or"
                             " `gcs.fc_limit`.")),
        # a gauge sampled once per scrape: averaged, so one dip does not restart `for`
        # (review oncall-2 N12)
        Alert(name="GaleraRecvQueueHigh",
              expr=f"{recv_queue} unless on (instance) {st}_wsrep_local_state{{{s}}} == 2",
              severity="warning",
              summary="Galera node {{ $labels.node }} receive queue averages"
           " {{ $value | printf \"%.0f\" }}",
              description="Node {{ $labels.node }} has averaged more than"
                          f" {g['recv_queue_max']} write-sets in its receive queue (over"
                          f" {g['recv_queue_avg_over']}) for {g['recv_queue_for']}: it applies slower than"
                          " the cluster writes and will"
                          " send flow control.",
              dashboard="galera",
              for_=g["recv_queue_for"],
              runbook=Runbook(
                  meaning="A node (not a donor) has averaged more than 100 write-sets in its receive"
                          " queue over 5 minutes, for 5 minutes (averaged: the queue is sampled once"
                          " per scrape, so a dip in one sample does not restart the wait).",
                  impact="It applies slower than the cluster writes; flow control will pause everyone.",
                  diagnosis="- `wsrep_local_recv_queue_avg`, `wsrep_flow_control_sent` on the node.\n"
                            "- Its CPU, disk and `wsrep_slave_threads`.",
                  mitigation="Raise `wsrep_slave_threads`, fix the node's I/O, or move load away.")),
        Alert(name="GaleraCertificationFailures",
              expr=f"max {WITHOUT} (rate({st}_wsrep_local_cert_failures{{{s}}}[5m])"
                   f" + rate({st}_wsrep_local_bf_aborts{{{s}}}[5m])) > {g['cert_failures_per_second_max']}",
              severity="warning",
              summary="Galera node {{ $labels.node }}: {{ $value | printf \"%.1f\" }}"
           " certification failures and BF aborts per second",
              description="Transactions on node {{ $labels.node }} fail certification or are aborted by"
                          f" replicated ones more than {g['cert_failures_per_second_max']} times per"
                          f" second, for {g['cert_failures_for']}: concurrent writes to the same rows on"
                          " several nodes.",
              dashboard="galera",
              for_=g["cert_failures_for"],
              runbook=Runbook(
                  meaning="Certification failures plus brute-force aborts on a node exceed 1 per second"
                          " for 10 minutes.",
                  impact="Clients see deadlock errors (1213) and retry: wasted work and latency.",
                  diagnosis="- `wsrep_local_cert_failures`, `wsrep_local_bf_aborts` per node.\n"
                            "- Which tables: the error log with `wsrep_log_conflicts=ON`.",
                  mitigation="Send writes for the same rows to one node (a single writer or affinity"
                             " per table), smaller transactions.")),
        Alert(name="GaleraConnectionsHigh",
              expr=f"max {WITHOUT} (max_over_time({st}_threads_connected{{{s}}}[{g['connections_max_over']}])"
                   f" / mysql_global_variables_max_connections{{{s}}}) > {g['connections_used_ratio_max']}",
              severity="warning",
              summary="Galera node {{ $labels.node }} uses {{ $value | humanizePercentage }}"
           " of max_connections",
              description=f"Node {{{{ $labels.node }}}} has had more than {g['connections_used_ratio_max']:.0%}"
                          f" of max_connections in use for {g['connections_for']}; at 100 % clients get"
                          " error 1040 (too many connections).",
              dashboard="galera",
              for_=g["connections_for"],
              runbook=Runbook(
                  meaning="The peak of `Threads_connected` in each 5-minute window has been above"
                          " 80 % of `max_connections` on a node for 5 minutes (PMM's"
                          " mysql_too_many_connections takes the maximum the same way).",
                  impact="At 100 % new clients get error 1040 (too many connections).",
                  diagnosis="- `SHOW PROCESSLIST;` (who holds them, sleeping connections).\n"
                            "- Connection pool sizes of the applications.",
                  mitigation="Fix leaking pools, lower idle timeouts, or raise `max_connections`.")),
        Alert(name="GaleraNodeRestarted",
              expr=f"{st}_uptime{{{s}}} < {seconds(g['restarted_within'])}",
              severity="info",
              summary="Galera node {{ $labels.node }} restarted",
              description="mysqld on node {{ $labels.node }} has been up for less than"
                          f" {g['restarted_within']}.",
              dashboard="galera",
              runbook=Runbook(
                  meaning="mysqld on the node has been up for less than 5 minutes.",
                  impact="Informational: caches are cold; check that the restart was planned.",
                  diagnosis="- The error log around the start (crash, OOM killer, `Shutdown`).",
                  mitigation="If unplanned, find the cause in the error log and the system journal.",
                  benign="any planned restart.")),
        Alert(name="GaleraGcacheTooSmall",
              expr=f"mysql_galera_gcache_size_bytes{{{s}}} / on (cluster) group_left ()"
                   f" (sum by (cluster) (rate({st}_wsrep_replicated_bytes{{{s}}}[1h])) > 0)"
                   f" < {seconds(g['ist_downtime_min'])}",
              severity="info",
              summary="Galera node {{ $labels.node }} can be down only"
              " {{ $value | humanizeDuration }} before it needs an SST",
              description="At the last hour's write rate, the gcache of node {{ $labels.node }} holds"
                          " {{ $value | humanizeDuration }} of write-sets, less than"
                          f" {g['ist_downtime_min']}: a restart that takes longer rejoins by a full SST.",
              dashboard="galera",
              for_=g["gcache_for"],
              runbook=Runbook(
                  meaning="At the last hour's write rate, the node's gcache holds less than 30 minutes"
                          " of write-sets, for an hour.",
                  impact="A node down longer than that cannot rejoin by IST and needs a full SST.",
                  diagnosis="- `mysql_galera_gcache_size_bytes` and the replicated bytes rate; the"
                            " \"Downtime before an SST is needed\" panel.",
                  mitigation="Raise `gcache.size` (wsrep_provider_options; a restart) to cover the"
                             " longest planned downtime.")),
        Alert(name="GaleraRecoveryUsedSST",
              expr=f"(time() - max without (instance, job, method, donor)"
                   f" (galera_recovery_last_end_timestamp_seconds{{{t},kind=\"sst\"}}) < {seconds(g['sst_recent'])})"
                   # a node whose second recovery this is: a donor also returns to SYNCED,
                   # so its state transitions would count a donation as an earlier join
                   f" and on (cluster, node) (sum without (instance, job, kind, method)"
                   f" (galera_recoveries_total{{{t}}}) >= 2)",
              severity="warning",
              summary="Galera node {{ $labels.node }} rejoined by full SST",
              description="Node {{ $labels.node }} had been Synced before and rejoined by a full state"
                          " transfer where an incremental one (IST from the donor's gcache) was expected.",
              dashboard="galera",
              runbook=Runbook(
                  meaning="A node that had been a member before rejoined through a full SST where an"
                          " IST from the donor's gcache was expected.",
                  impact="An SST copies the whole data set (minutes to hours) and may block the donor"
                         " (rsync).",
                  diagnosis="- Error log: `Shifting PRIMARY -> JOINER`, `IST ... not possible`,"
                            " grastate seqno `-1`.\n- `gcache.size` versus the write volume while"
                            " the node was away.",
                  mitigation="Recover the position after a crash (`--wsrep-recover`), size"
                             " `gcache.size` to cover the longest expected downtime.")),
        Alert(name="GaleraRecoverySlow",
              expr=f"(galera_recovery_last_duration_seconds{{{t},kind=\"ist\"}} > {slow['ist']}"
                   f" or galera_recovery_last_duration_seconds{{{t},kind=\"sst\"}} > {slow['sst']})"
                   f" and on (cluster, node, kind) (time() -"
                   f" galera_recovery_last_end_timestamp_seconds{{{t}}} < {seconds(recent)})",
              severity="warning",
              summary="Galera node {{ $labels.node }} {{ $labels.kind }} took"
           " {{ $value | humanizeDuration }}",
              description="The last {{ $labels.kind }} recovery of node {{ $labels.node }} (donor"
                          " {{ $labels.donor }}) took {{ $value | humanizeDuration }}, over the"
                          f" threshold (IST {slow['ist']} s, SST {slow['sst']} s).",
              dashboard="galera",
              runbook=Runbook(
                  meaning="The last recovery of a node (IST or SST) took longer than its threshold.",
                  impact="The node was out of the cluster longer than planned.",
                  diagnosis="- `galera_recovery_last_duration_seconds` by kind, method and donor.\n"
                            "- Donor load, network throughput, SST method (rsync blocks the donor).",
                  mitigation="Prefer mariabackup SST, faster network, bigger gcache (IST instead of"
                             " SST).")),
        # A recovery that never ends (a hung donor, a transfer stalled on the network) is
        # judged while it runs: GaleraRecoverySlow only sees finished ones (oncall-2 N10).
        # The in-progress series has no kind (IST or SST is known at its end), so the
        # slowest allowed recovery, an SST's, is the bound.
        Alert(name="GaleraRecoveryStuck",
              expr=f"time() - galera_recovery_started_timestamp_seconds{{{t}}} > {slow['sst']}"
                   f" and on (cluster, node) galera_recovery_in_progress{{{t}}} == 1",
              severity="warning",
              summary="Galera node {{ $labels.node }} has been recovering for"
           " {{ $value | humanizeDuration }}",
              description="Node {{ $labels.node }} has been between JOINER and SYNCED for"
                          " {{ $value | humanizeDuration }}, longer than an SST may take"
                          f" ({slow['sst']} s): the state transfer is stalled or far slower than"
                          " planned.",
              dashboard="galera",
              runbook=Runbook(
                  meaning="A node's recovery (IST or SST) began longer ago than the SST threshold"
                          " and has not reached SYNCED: the tracker reads JOINER without SYNCED in"
                          " its error log.",
                  impact="The node serves nothing while it recovers; the cluster runs a node short,"
                         " and with rsync or mysqldump its donor is blocked too.",
                  diagnosis="- Joiner's error log: the last `WSREP_SST:` lines and their times;"
                            " `Receiving IST` without `IST received`.\n- Donor's error log and"
                            " state (`SHOW STATUS LIKE 'wsrep_local_state_comment'`: Donor/Desynced"
                            " for as long).\n- Progress: the joiner's datadir growing"
                            " (`du -s`), network throughput between joiner and donor.\n"
                            "- `galera_recovery_started_timestamp_seconds` against the SST's start"
                            " in the log (a tracker restarted mid-recovery keeps the log time).",
                  mitigation="If the datadir still grows, let it finish and raise"
                             " `galera.recovery_slow_seconds.sst` if this size is normal. If it does"
                             " not: stop the joiner, check the donor's SST script and free disk on"
                             " the joiner, and restart the joiner (choose another donor with"
                             " `wsrep_sst_donor`).")),
        Alert(name="GaleraTrackerDown",
              expr=f"up{{{t}}} == 0 or galera_tracker_log_up{{{t}}} == 0",
              severity="warning",
              summary="Galera recovery tracker {{ $labels.instance }} is blind",
              description="The recovery tracker does not answer scrapes (up 0) or cannot read a node's"
                          f" error log (galera_tracker_log_up 0) for {g['tracker_down_for']}: SST/IST"
                          " durations are not measured.",
              dashboard="galera",
              for_=g["tracker_down_for"],
              per_node=False,
              runbook=Runbook(
                  meaning="The recovery tracker does not answer scrapes, or cannot read a node's error"
                          " log (`galera_tracker_log_up` 0), for 5 minutes.",
                  impact="SST/IST durations are not measured; GaleraRecoverySlow and"
                         " GaleraRecoveryUsedSST cannot fire.",
                  diagnosis="- The tracker's log and `/metrics`; the log path and its permissions"
                            " (the tracker's user must read the error log).",
                  mitigation="Fix the log path or permissions, restart the tracker.")),
        Alert(name="GaleraRecoveryAborted",
              expr=f"increase(galera_recoveries_aborted_total{{{t}}}[1h]) > 0",
              severity="info",
              summary="Galera node {{ $labels.node }} had a recovery cut short",
              description="A recovery of node {{ $labels.node }} ended without reaching SYNCED in the last"
                          " hour (a restart during the transfer, or a fall back to CLOSED/OPEN).",
              dashboard="galera",
              runbook=Runbook(
                  meaning="A recovery (SST/IST) of a node ended without reaching SYNCED in the last"
                          " hour.",
                  impact="The node restarted or fell back during the transfer; it may retry with an"
                         " SST.",
                  diagnosis="- The node's error log around the transfer (`SST failed`, `IST ... not"
                            " possible`, a restart).",
                  mitigation="Fix the transfer's cause (disk space, SST auth, network) and let the node"
                             " rejoin.")),
    ]
    return [grp]
