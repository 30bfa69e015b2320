# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""Galera alerts on membership: a node down or not ready, its exporter, the whole cluster,
the Primary component, sync state, cluster size and restarts."""

from __future__ import annotations

from clusterscope.rules.rule_model import Alert, Runbook, seconds

ST = "mysql_global_status"  # mysqld_exporter's prefix for SHOW GLOBAL STATUS


def _smaller(c: dict) -> list[str]:
    """Fewer members than the description lists (nodes and garbd: both count in
    wsrep_cluster_size); a cluster the description does not list is compared with the
    largest size it had lately (Netdata's check), a day by default, since a shorter history
    forgets a member lost for good."""
    g, s, inv = c["galera"], c["selectors"]["galera"], c["selectors"]["inventory"]
    size = f"max by (cluster) ({ST}_wsrep_cluster_size{{{s}}})"
    return [f"({size} < on (cluster) sum by (cluster) (clusterscope_cluster_members"
            f"{{{inv},kind=\"galera\"}}))",
            f"({size} < on (cluster) max_over_time(cluster:{ST}_wsrep_cluster_size:max"
            f"[{g['cluster_size_history']}])"
            f" unless on (cluster) clusterscope_cluster_info{{{inv},kind=\"galera\"}})"]


def _node_not_ready(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    hold = c["blind_spell_hold"]
    # mysql_up held over the blind-spell hold: the exporter restarting must not resolve
    # a node that is down
    return Alert(name="GaleraNodeNotReady",
                 expr=f"last_over_time(mysql_up{{{s}}}[{hold}]) == 0 or {ST}_wsrep_ready{{{s}}} == 0",
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
                     benign="a planned restart of the node (silence it for the window)."))


def _exporter_down(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    # mysqld_exporter has no last_scrape_error since v0.15.0 (prometheus/mysqld_exporter
    # commit 6ad9f25); v0.19.0 reports each collector as mysql_exporter_collector_success
    # {collector="collect.global_status"} (collector/exporter.go). A failing
    # global_variables silences desync, connection and gcache checks
    return Alert(name="GaleraExporterDown",
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
                                " that cannot work (`--no-collect.X`)."))


def _exporter_absent(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    inv = c["selectors"]["inventory"]
    return Alert(name="GaleraExporterAbsent",
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
                                " if it is gone for good."))


def _cluster_down(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    hold = c["blind_spell_hold"]
    # the whole cluster: no node answers, or none of those that answer is in a Primary
    # component (mysqld-mixin alerts/general.yaml MySQLDown and PMM mysql_down.yml are
    # critical)
    return Alert(name="GaleraClusterDown",
                 expr=f"max by (cluster) (last_over_time(mysql_up{{{s}}}[{hold}])) == 0"
                      f" or (max by (cluster) ({ST}_wsrep_cluster_status{{{s}}}) == 0"
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
                                " running without quorum: see GaleraNonPrimary."))


def _non_primary(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    return Alert(name="GaleraNonPrimary",
                 expr=f"{ST}_wsrep_cluster_status{{{s}}} == 0",
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
                                " wsrep_provider_options='pc.bootstrap=YES';`) and let the others rejoin."))


def _node_out_of_sync(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    return Alert(name="GaleraNodeOutOfSync",
                 expr=f"{ST}_wsrep_local_state{{{s}}} != 4 unless on (instance)"
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
                     benign="a long SST/IST to or from this node (GaleraRecoverySlow tells how long)."))


def _cluster_size_reduced(c: dict) -> Alert:
    g = c["galera"]
    smaller = _smaller(c)
    return Alert(name="GaleraClusterSizeReduced",
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
                     benign="a member removed for good: remove it from clusterscope.yml too."))


def _node_restarted(c: dict) -> Alert:
    g = c["galera"]
    s = c["selectors"]["galera"]
    return Alert(name="GaleraNodeRestarted",
                 expr=f"{ST}_uptime{{{s}}} < {seconds(g['restarted_within'])}",
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
                     benign="any planned restart."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_node_not_ready, _exporter_down, _exporter_absent, _cluster_down,
                                 _non_primary, _node_out_of_sync, _cluster_size_reduced,
                                 _node_restarted)]
